package command

import (
	"bytes"
	"encoding/binary"
	"strings"

	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/store"
)

// List commands (t_list.c in Redis). A list's metadata body is its header:
// element count, head index and tail index. Each element is a member entry
// under SortableInt(index), with every index from head to tail present, so
// element i (from the head) is at head+i: LINDEX, LSET and pushes and pops
// at either end touch one entry, and LRANGE is one seek. LINSERT and LREM
// in the middle shift the shorter side of the list by rewriting it.
func init() {
	one := singleKey("list")
	two := func(c *Command) *Command {
		c.FirstKey, c.LastKey, c.Step = 1, 2, 1
		c.Group = "list"
		c.KeySpecs = []KeySpec{
			{Flags: []string{"RW", "access", "delete"}, Index: 1, KeyStep: 1},
			{Flags: []string{"RW", "insert"}, Index: 2, KeyStep: 1},
		}
		return c
	}
	listCat := []string{"list"}
	register(
		one(&Command{Name: "lpush", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: listCat, Since: "1.0.0", Summary: "Prepend one or multiple elements to a list",
			Run: func(c *Ctx) { cmdListPush(c, true, false) }}, "RW", "insert"),
		one(&Command{Name: "rpush", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: listCat, Since: "1.0.0", Summary: "Append one or multiple elements to a list",
			Run: func(c *Ctx) { cmdListPush(c, false, false) }}, "RW", "insert"),
		one(&Command{Name: "lpushx", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: listCat, Since: "2.2.0", Summary: "Prepend an element to a list, only if the list exists",
			Run: func(c *Ctx) { cmdListPush(c, true, true) }}, "RW", "insert"),
		one(&Command{Name: "rpushx", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: listCat, Since: "2.2.0", Summary: "Append an element to a list, only if the list exists",
			Run: func(c *Ctx) { cmdListPush(c, false, true) }}, "RW", "insert"),
		one(&Command{Name: "lpop", Arity: -2, Flags: Write | Fast, Categories: listCat, Since: "1.0.0", Summary: "Remove and get the first elements in a list",
			Run: func(c *Ctx) { cmdListPop(c, true) }}, "RW", "access", "delete"),
		one(&Command{Name: "rpop", Arity: -2, Flags: Write | Fast, Categories: listCat, Since: "1.0.0", Summary: "Remove and get the last elements in a list",
			Run: func(c *Ctx) { cmdListPop(c, false) }}, "RW", "access", "delete"),
		one(&Command{Name: "llen", Arity: 2, Flags: ReadOnly | Fast, Categories: listCat, Since: "1.0.0", Summary: "Get the length of a list", Run: cmdLLen}, "RO"),
		one(&Command{Name: "lindex", Arity: 3, Flags: ReadOnly, Categories: listCat, Since: "1.0.0", Summary: "Get an element from a list by its index", Run: cmdLIndex}, "RO", "access"),
		one(&Command{Name: "lrange", Arity: 4, Flags: ReadOnly, Categories: listCat, Since: "1.0.0", Summary: "Get a range of elements from a list", Run: cmdLRange}, "RO", "access"),
		one(&Command{Name: "lset", Arity: 4, Flags: Write | DenyOOM, Categories: listCat, Since: "1.0.0", Summary: "Set the value of an element in a list by its index", Run: cmdLSet}, "RW", "update"),
		one(&Command{Name: "linsert", Arity: 5, Flags: Write | DenyOOM, Categories: listCat, Since: "2.2.0", Summary: "Insert an element before or after another element in a list", Run: cmdLInsert}, "RW", "insert"),
		one(&Command{Name: "lrem", Arity: 4, Flags: Write, Categories: listCat, Since: "1.0.0", Summary: "Remove elements from a list", Run: cmdLRem}, "RW", "delete"),
		one(&Command{Name: "ltrim", Arity: 4, Flags: Write, Categories: listCat, Since: "1.0.0", Summary: "Trim a list to the specified range", Run: cmdLTrim}, "RW", "delete"),
		one(&Command{Name: "lpos", Arity: -3, Flags: ReadOnly, Categories: listCat, Since: "6.0.6", Summary: "Return the index of matching elements on a list", Run: cmdLPos}, "RO", "access"),
		two(&Command{Name: "lmove", Arity: 5, Flags: Write | DenyOOM, Categories: listCat, Since: "6.2.0", Summary: "Pop an element from a list, push it to another list and return it", Run: cmdLMove}),
		two(&Command{Name: "rpoplpush", Arity: 3, Flags: Write | DenyOOM, Categories: listCat, Since: "1.2.0", Summary: "Remove the last element in a list, prepend it to another list and return it", Run: cmdRPopLPush}),
		&Command{Name: "lmpop", Arity: -4, Flags: Write, Categories: listCat, Group: "list", Since: "7.0.0", Summary: "Pop elements from a list",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}},
			Run:      cmdLMPop},
	)
}

// Redis's list error replies.
const (
	errListIndex     = "ERR index out of range"
	errListPopCount  = "ERR value is out of range, must be positive"
	errListRank      = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errListPosCount  = "ERR COUNT can't be negative"
	errListMaxlen    = "ERR MAXLEN can't be negative"
	errListNumkeys   = "ERR numkeys should be greater than 0"
	errListMPopCount = "ERR count should be greater than 0"
)

// listHeader is a list's metadata body: the element count and the indexes
// of the first and last elements (head > tail when empty).
type listHeader struct{ count, head, tail int64 }

func (h listHeader) encode() []byte {
	b := make([]byte, 0, 24)
	b = binary.BigEndian.AppendUint64(b, uint64(h.count))
	b = binary.BigEndian.AppendUint64(b, uint64(h.head))
	return binary.BigEndian.AppendUint64(b, uint64(h.tail))
}

func decodeListHeader(b []byte) listHeader {
	if len(b) < 24 {
		panic("list: corrupt header")
	}
	return listHeader{
		count: int64(binary.BigEndian.Uint64(b)),
		head:  int64(binary.BigEndian.Uint64(b[8:])),
		tail:  int64(binary.BigEndian.Uint64(b[16:])),
	}
}

// list is a list key as a command works on it: header changes are kept
// here and written by save.
type listObj struct {
	tx     *store.Tx
	key    []byte
	expire int64
	h      listHeader
}

// openList returns key's list; ok is false when the key is missing, and
// wrong when it holds another type (WRONGTYPE has been answered).
func openList(c *Ctx, key []byte) (l *listObj, ok, wrong bool) {
	m, ok, wrong := c.Lookup(key, store.TypeList)
	if !ok {
		return nil, false, wrong
	}
	return &listObj{tx: c.Tx, key: key, expire: m.ExpireAt, h: decodeListHeader(m.Body)}, true, false
}

// newList is an empty list for key, created by save once it has elements.
func newList(tx *store.Tx, key []byte) *listObj {
	return &listObj{tx: tx, key: key, h: listHeader{head: 0, tail: -1}}
}

// save writes the header (which also marks the key modified for WATCH), or
// deletes the key, members included, once the list is empty: Redis never
// keeps an empty list.
func (l *listObj) save() {
	if l.h.count == 0 {
		l.tx.Delete(l.key)
		return
	}
	l.tx.Put(l.key, store.Meta{Type: store.TypeList, ExpireAt: l.expire, Body: l.h.encode()})
}

// notify raises a command's keyspace event on the list, then "del" if the
// command emptied it (so save deleted it), as Redis does.
func (l *listObj) notify(event string) {
	l.tx.Notify(store.NotifyList, event, l.key)
	if l.h.count == 0 {
		l.tx.Notify(store.NotifyGeneric, "del", l.key)
	}
}

// pushEvent and popEvent name the events of a push and a pop at one end.
func pushEvent(left bool) string {
	if left {
		return "lpush"
	}
	return "rpush"
}

func popEvent(left bool) string {
	if left {
		return "lpop"
	}
	return "rpop"
}

func listSub(idx int64) []byte { return store.SortableInt(nil, idx) }

// index turns a command's index (negative from the tail) into an offset
// from the head, or false when it is out of the list.
func (l *listObj) index(i int64) (int64, bool) {
	if i < 0 {
		i += l.h.count
	}
	return i, i >= 0 && i < l.h.count
}

// get returns the element at offset i (0 <= i < count) from the head.
func (l *listObj) get(i int64) []byte {
	v, _ := l.tx.Member(l.key, listSub(l.h.head+i))
	return v
}

// end returns the element at the head (left) or the tail. Pops from one
// end follow each other within a group: a write reads ahead
// (store.MembersAhead), so the next pop in the group seeks nothing.
func (l *listObj) end(left bool) []byte {
	i := l.h.tail
	if left {
		i = l.h.head
	}
	var v []byte
	l.tx.MembersAhead(l.key, listSub(l.h.head), listSub(l.h.tail+1), !left, 16, func(sub, value []byte) bool {
		if store.IntFromSortable(sub) == i {
			v = bytes.Clone(value)
		}
		return false
	})
	return v
}

func (l *listObj) push(left bool, v []byte) {
	if left {
		l.h.head--
		l.tx.SetMember(l.key, listSub(l.h.head), v)
	} else {
		l.h.tail++
		l.tx.SetMember(l.key, listSub(l.h.tail), v)
	}
	l.h.count++
}

// pop removes up to n elements from one end and returns them in pop order.
func (l *listObj) pop(left bool, n int64) [][]byte {
	n = min(n, l.h.count)
	var out [][]byte
	switch {
	case n == 1:
		out = append(out, l.end(left))
	case left:
		l.each(0, n, false, func(_ int64, v []byte) bool { out = append(out, v); return true })
	default:
		l.each(l.h.count-n, n, true, func(_ int64, v []byte) bool { out = append(out, v); return true })
	}
	// Delete even when the list empties: LMOVE on one key pushes back
	// onto the same list, which must not keep a stale entry.
	for i := range n {
		if left {
			l.tx.DeleteMember(l.key, listSub(l.h.head+i))
		} else {
			l.tx.DeleteMember(l.key, listSub(l.h.tail-i))
		}
	}
	if left {
		l.h.head += n
	} else {
		l.h.tail -= n
	}
	l.h.count -= n
	return out
}

// each calls fn with the n elements from offset start (0 <= start, start+n
// <= count), from the tail end of the range when reverse; fn gets each
// element's physical index and a copy of its value, and returns false to
// stop.
func (l *listObj) each(start, n int64, reverse bool, fn func(idx int64, v []byte) bool) {
	if n <= 0 {
		return
	}
	from, to := listSub(l.h.head+start), listSub(l.h.head+start+n)
	l.tx.Members(l.key, from, to, reverse, func(s, v []byte) bool {
		return fn(store.IntFromSortable(s), bytes.Clone(v))
	})
}

// entries reads the elements at physical indexes [lo, hi].
func (l *listObj) entries(lo, hi int64) [][]byte {
	var out [][]byte
	l.each(lo-l.h.head, hi-lo+1, false, func(_ int64, v []byte) bool { out = append(out, v); return true })
	return out
}

// insertAfter inserts v after physical index g (head-1 <= g <= tail),
// moving the shorter side of the list by one.
func (l *listObj) insertAfter(g int64, v []byte) {
	if g-l.h.head+1 <= l.h.tail-g {
		moved := l.entries(l.h.head, g)
		for i, e := range moved {
			l.tx.SetMember(l.key, listSub(l.h.head-1+int64(i)), e)
		}
		l.tx.SetMember(l.key, listSub(g), v)
		l.h.head--
	} else {
		moved := l.entries(g+1, l.h.tail)
		for i, e := range moved {
			l.tx.SetMember(l.key, listSub(g+2+int64(i)), e)
		}
		l.tx.SetMember(l.key, listSub(g+1), v)
		l.h.tail++
	}
	l.h.count++
}

// remove deletes the elements at the given physical indexes (ascending),
// closing the gaps from the shorter side.
func (l *listObj) remove(rm []int64) {
	n := int64(len(rm))
	if n == 0 {
		return
	}
	l.h.count -= n
	if l.h.count == 0 {
		return // save deletes the key and its members
	}
	lo, hi := rm[0], rm[len(rm)-1]
	gone := make(map[int64]bool, len(rm))
	for _, i := range rm {
		gone[i] = true
	}
	keep := func(from, to int64) [][]byte {
		var out [][]byte
		for i, e := range l.entries(from, to) {
			if !gone[from+int64(i)] {
				out = append(out, e)
			}
		}
		return out
	}
	if l.h.tail-lo <= hi-l.h.head {
		// Pack [lo, tail] towards the head; the tail shrinks.
		kept := keep(lo, l.h.tail)
		for i, e := range kept {
			l.tx.SetMember(l.key, listSub(lo+int64(i)), e)
		}
		for i := lo + int64(len(kept)); i <= l.h.tail; i++ {
			l.tx.DeleteMember(l.key, listSub(i))
		}
		l.h.tail -= n
	} else {
		// Pack [head, hi] towards the tail; the head grows.
		kept := keep(l.h.head, hi)
		base := hi - int64(len(kept)) + 1
		for i, e := range kept {
			l.tx.SetMember(l.key, listSub(base+int64(i)), e)
		}
		for i := l.h.head; i < base; i++ {
			l.tx.DeleteMember(l.key, listSub(i))
		}
		l.h.head += n
	}
}

// listRange clamps [start, end] (negative from the tail) as LRANGE and LTRIM
// do; n is 0 for an empty range.
func listRange(start, end, count int64) (from, n int64) {
	if start < 0 {
		start += count
	}
	if end < 0 {
		end += count
	}
	start = max(start, 0)
	if start > end || start >= count {
		return 0, 0
	}
	end = min(end, count-1)
	return start, end - start + 1
}

func cmdListPush(c *Ctx, left, onlyExisting bool) {
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		if onlyExisting {
			c.W.Int(0)
			return
		}
		l = newList(c.Tx, c.Args[1])
	}
	for _, v := range c.Args[2:] {
		l.push(left, v)
	}
	l.save()
	l.notify(pushEvent(left))
	c.W.Int(l.h.count)
}

// cmdListPop is LPOP and RPOP: one element, or with a count an array (even of
// one); a missing key is a null, or a null array with a count.
func cmdListPop(c *Ctx, left bool) {
	if len(c.Args) > 3 {
		c.W.Error(WrongArity(strings.ToLower(c.Arg(0))))
		return
	}
	withCount := len(c.Args) == 3
	var count int64
	if withCount {
		n, ok := num.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error(errListPopCount)
			return
		}
		count = n
	}
	l, ok, wrong := openList(c, c.Args[1])
	switch {
	case wrong:
	case !ok && withCount:
		c.W.NullArray()
	case !ok:
		c.W.Null()
	case !withCount:
		v := l.pop(left, 1)
		l.save()
		l.notify(popEvent(left))
		c.W.Bulk(v[0])
	case count == 0:
		c.W.ArrayLen(0)
	default:
		vals := l.pop(left, count)
		l.save()
		l.notify(popEvent(left))
		c.W.ArrayLen(len(vals))
		for _, v := range vals {
			c.W.Bulk(v)
		}
	}
}

func cmdLLen(c *Ctx) {
	l, ok, wrong := openList(c, c.Args[1])
	switch {
	case wrong:
	case !ok:
		c.W.Int(0)
	default:
		c.W.Int(l.h.count)
	}
}

// cmdLIndex looks the key up before parsing the index, as Redis does: a
// missing key is a null whatever the index.
func cmdLIndex(c *Ctx) {
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.Null()
		return
	}
	n, isInt := num.ParseInt(c.Args[2])
	if !isInt {
		c.W.Error(ErrNotInt)
		return
	}
	if i, in := l.index(n); in {
		c.W.Bulk(l.get(i))
	} else {
		c.W.Null()
	}
}

func cmdLSet(c *Ctx) {
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.Error(ErrNoSuchKey)
		return
	}
	n, isInt := num.ParseInt(c.Args[2])
	if !isInt {
		c.W.Error(ErrNotInt)
		return
	}
	i, in := l.index(n)
	if !in {
		c.W.Error(errListIndex)
		return
	}
	c.Tx.SetMember(l.key, listSub(l.h.head+i), c.Args[3])
	l.save()
	l.notify("lset")
	c.W.OK()
}

// parseListRange parses LRANGE's and LTRIM's indexes, before the key is
// looked up.
func parseListRange(c *Ctx) (start, end int64, ok bool) {
	start, ok1 := num.ParseInt(c.Args[2])
	end, ok2 := num.ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Error(ErrNotInt)
		return 0, 0, false
	}
	return start, end, true
}

func cmdLRange(c *Ctx) {
	start, end, ok := parseListRange(c)
	if !ok {
		return
	}
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.ArrayLen(0)
		return
	}
	from, n := listRange(start, end, l.h.count)
	c.W.ArrayLen(int(n))
	l.each(from, n, false, func(_ int64, v []byte) bool {
		c.W.Bulk(v)
		return true
	})
}

func cmdLTrim(c *Ctx) {
	start, end, ok := parseListRange(c)
	if !ok {
		return
	}
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.OK()
		return
	}
	from, n := listRange(start, end, l.h.count)
	if n == 0 {
		l.h.count = 0
	} else {
		for i := l.h.head; i < l.h.head+from; i++ {
			l.tx.DeleteMember(l.key, listSub(i))
		}
		for i := l.h.head + from + n; i <= l.h.tail; i++ {
			l.tx.DeleteMember(l.key, listSub(i))
		}
		l.h.head += from
		l.h.tail = l.h.head + n - 1
		l.h.count = n
	}
	l.save() // a write even when nothing was trimmed: Redis signals it too
	l.notify("ltrim")
	c.W.OK()
}

func cmdLInsert(c *Ctx) {
	var after bool
	switch strings.ToLower(c.Arg(2)) {
	case "after":
		after = true
	case "before":
	default:
		c.W.Error(ErrSyntax)
		return
	}
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.Int(0)
		return
	}
	pivot, found := int64(0), false
	l.each(0, l.h.count, false, func(idx int64, v []byte) bool {
		if bytes.Equal(v, c.Args[3]) {
			pivot, found = idx, true
			return false
		}
		return true
	})
	if !found {
		c.W.Int(-1)
		return
	}
	if !after {
		pivot--
	}
	l.insertAfter(pivot, c.Args[4])
	l.save()
	l.notify("linsert")
	c.W.Int(l.h.count)
}

// cmdLRem removes the first count matches from the head (count > 0), from
// the tail (count < 0) or all of them (0).
func cmdLRem(c *Ctx) {
	count, isInt := num.ParseInt(c.Args[2])
	if !isInt {
		c.W.Error(ErrNotInt)
		return
	}
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		c.W.Int(0)
		return
	}
	reverse := count < 0
	limit := count
	if reverse {
		limit = -count // MinInt64 stays negative: no limit, as Redis
	}
	var rm []int64
	l.each(0, l.h.count, reverse, func(idx int64, v []byte) bool {
		if bytes.Equal(v, c.Args[3]) {
			rm = append(rm, idx)
			return limit <= 0 || int64(len(rm)) < limit
		}
		return true
	})
	if reverse {
		for i, j := 0, len(rm)-1; i < j; i, j = i+1, j-1 {
			rm[i], rm[j] = rm[j], rm[i]
		}
	}
	if len(rm) > 0 {
		l.remove(rm)
		l.save()
		l.notify("lrem")
	}
	c.W.Int(int64(len(rm)))
}

// cmdLPos finds the offsets of an element: RANK picks the first match to
// report (negative: searching from the tail), COUNT how many (0: all; the
// reply is then an array), MAXLEN how many elements to compare (0: all).
func cmdLPos(c *Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Args); j++ {
		opt := strings.ToLower(c.Arg(j))
		more := j+1 < len(c.Args)
		switch {
		case opt == "rank" && more:
			j++
			n, ok := num.ParseInt(c.Args[j])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if n == 0 {
				c.W.Error(errListRank)
				return
			}
			rank = n
		case opt == "count" && more:
			j++
			n, ok := num.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.W.Error(errListPosCount)
				return
			}
			count = n
		case opt == "maxlen" && more:
			j++
			n, ok := num.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.W.Error(errListMaxlen)
				return
			}
			maxlen = n
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	reverse := rank < 0
	if reverse {
		rank = -rank // MinInt64 stays negative, and then every match ranks, as in Redis
	}
	l, ok, wrong := openList(c, c.Args[1])
	if wrong {
		return
	}
	if !ok {
		if count != -1 {
			c.W.ArrayLen(0)
		} else {
			c.W.Null()
		}
		return
	}
	var found []int64
	matches, seen := int64(0), int64(0)
	l.each(0, l.h.count, reverse, func(idx int64, v []byte) bool {
		if maxlen != 0 && seen >= maxlen {
			return false
		}
		seen++
		if !bytes.Equal(v, c.Args[2]) {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		found = append(found, idx-l.h.head)
		// The wrapping arithmetic matches Redis's for the MinInt64 rank.
		return count != -1 && (count == 0 || matches-rank+1 < count)
	})
	switch {
	case count != -1:
		c.W.ArrayLen(len(found))
		for _, i := range found {
			c.W.Int(i)
		}
	case len(found) > 0:
		c.W.Int(found[0])
	default:
		c.W.Null()
	}
}

// parseListEnd parses LEFT or RIGHT (true for LEFT).
func parseListEnd(arg []byte) (left, ok bool) {
	switch strings.ToLower(string(arg)) {
	case "left":
		return true, true
	case "right":
		return false, true
	}
	return false, false
}

func cmdLMove(c *Ctx) {
	from, ok1 := parseListEnd(c.Args[3])
	to, ok2 := parseListEnd(c.Args[4])
	if !ok1 || !ok2 {
		c.W.Error(ErrSyntax)
		return
	}
	if !listMove(c.Tx, c.Args[1], c.Args[2], from, to, c.W) {
		c.W.Null()
	}
}

func cmdRPopLPush(c *Ctx) {
	if !listMove(c.Tx, c.Args[1], c.Args[2], false, true, c.W) {
		c.W.Null()
	}
}

// listMove pops an element from src (at the head when fromLeft) and
// pushes it onto dst (at the head when toLeft), replying with the element:
// the core of LMOVE and RPOPLPUSH, and of BLMOVE and BRPOPLPUSH. When src
// does not exist it writes nothing and returns false, so a blocking caller
// can wait and the others answer a null. A key of another type is answered
// with WRONGTYPE (returning true) before anything moves. src and dst may
// be the same list: it then rotates.
func listMove(tx *store.Tx, src, dst []byte, fromLeft, toLeft bool, w *resp.Writer) bool {
	c := &Ctx{Tx: tx, W: w}
	sl, ok, wrong := openList(c, src)
	if wrong {
		return true
	}
	if !ok {
		return false
	}
	dl := sl
	if !bytes.Equal(src, dst) {
		var found bool
		dl, found, wrong = openList(c, dst)
		if wrong {
			return true
		}
		if !found {
			dl = newList(tx, dst)
		}
	}
	v := sl.pop(fromLeft, 1)[0]
	if dl != sl {
		sl.save()
	}
	dl.push(toLeft, v)
	dl.save()
	dl.notify(pushEvent(toLeft))
	sl.notify(popEvent(fromLeft))
	w.Bulk(v)
	return true
}

// cmdLMPop is LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
func cmdLMPop(c *Ctx) {
	keys, left, count, ok := parseMPop(c, 1, "left", "right")
	if ok && !listPopFirst(c.Tx, keys, left, count, c.W) {
		c.W.NullArray()
	}
}

// parseMPop reads "numkeys key... LEFT|RIGHT [COUNT n]" (or MIN|MAX: the
// names of the two ends) starting at argument at, for LMPOP, BLMPOP, ZMPOP
// and BZMPOP; it answers the errors itself. left is true for the first end.
func parseMPop(c *Ctx, at int, first, second string) (keys [][]byte, left bool, count int64, ok bool) {
	numkeys, ok := num.ParseInt(c.Args[at])
	if !ok || numkeys <= 0 {
		c.W.Error(errListNumkeys)
		return nil, false, 0, false
	}
	if numkeys > int64(len(c.Args)-at-2) {
		c.W.Error(ErrSyntax)
		return nil, false, 0, false
	}
	where := at + 1 + int(numkeys)
	switch strings.ToLower(c.Arg(where)) {
	case first:
		left = true
	case second:
	default:
		c.W.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := where + 1; j < len(c.Args); j++ {
		if !strings.EqualFold(c.Arg(j), "count") || j+1 == len(c.Args) || count != -1 {
			c.W.Error(ErrSyntax)
			return nil, false, 0, false
		}
		j++
		n, ok := num.ParseInt(c.Args[j])
		if !ok || n <= 0 {
			c.W.Error(errListMPopCount)
			return nil, false, 0, false
		}
		count = n
	}
	return c.Args[at+1 : where], left, max(count, 1), true
}

// listPopFirst pops from the first of keys that holds a list, at the head when
// left: the core of LMPOP, and of BLPOP, BRPOP and BLMPOP. With count 0 it
// pops one element and replies [key, element] (BLPOP's reply); with count
// > 0 it pops up to count and replies [key, [elements...]] (LMPOP's). A key
// of another type met before a list is answered with WRONGTYPE. It returns
// false, having written nothing, when none of the keys exists, so a
// blocking caller can wait and LMPOP answers a null array.
func listPopFirst(tx *store.Tx, keys [][]byte, left bool, count int64, w *resp.Writer) bool {
	c := &Ctx{Tx: tx, W: w}
	for _, key := range keys {
		l, ok, wrong := openList(c, key)
		if wrong {
			return true
		}
		if !ok {
			continue
		}
		vals := l.pop(left, max(count, 1))
		l.save()
		l.notify(popEvent(left))
		w.ArrayLen(2)
		w.Bulk(key)
		if count == 0 {
			w.Bulk(vals[0])
			return true
		}
		w.ArrayLen(len(vals))
		for _, v := range vals {
			w.Bulk(v)
		}
		return true
	}
	return false
}
