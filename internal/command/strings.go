package command

import (
	"fmt"
	"math"
	"strings"

	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/store"
)

// String commands (t_string.c in Redis). Values are read and written through
// the store's string accessors (store/strval.go): a small string is the
// body of its metadata entry, so GET is one Pebble read; a big one is
// stored in chunks.
func init() {
	stringCat := []string{"string"}
	one := singleKey("string")
	notes := func(c *Command, n string) *Command {
		c.KeySpecs[0].Notes = n
		return c
	}
	rwAccessUpdate := []string{"RW", "access", "update"}
	multi := func(c *Command, flags ...string) *Command {
		c.KeySpecs = []KeySpec{{Flags: flags, Index: 1, LastKey: -1, KeyStep: c.Step}}
		return c
	}
	register(
		one(&Command{Name: "get", Arity: 2, Flags: ReadOnly | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Get the value of a key", Run: cmdGet}),
		notes(one(&Command{Name: "set", Arity: -3, Flags: Write | DenyOOM, Categories: stringCat, Since: "1.0.0", Summary: "Set the string value of a key", Run: cmdSet}, "RW", "access", "update", "variable_flags"), "RW and ACCESS due to the optional `GET` argument"),
		one(&Command{Name: "setnx", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Set the value of a key, only if the key does not exist", Run: cmdSetNX}, "OW", "insert"),
		one(&Command{Name: "setex", Arity: 4, Flags: Write | DenyOOM, Categories: stringCat, Since: "2.0.0", Summary: "Set the value and expiration of a key", Run: cmdSetEX}, "OW", "update"),
		one(&Command{Name: "psetex", Arity: 4, Flags: Write | DenyOOM, Categories: stringCat, Since: "2.6.0", Summary: "Set the value and expiration in milliseconds of a key", Run: cmdPSetEX}, "OW", "update"),
		one(&Command{Name: "getset", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Set the string value of a key and return its old value", Run: cmdGetSet}, rwAccessUpdate...),
		one(&Command{Name: "getdel", Arity: 2, Flags: Write | Fast, Categories: stringCat, Since: "6.2.0", Summary: "Get the value of a key and delete the key", Run: cmdGetDel}, "RW", "access", "delete"),
		notes(one(&Command{Name: "getex", Arity: -2, Flags: Write | Fast, Categories: stringCat, Since: "6.2.0", Summary: "Get the value of a key and optionally set its expiration", Run: cmdGetEX}, rwAccessUpdate...), "RW and UPDATE because it changes the TTL"),
		multi(&Command{Name: "mget", Arity: -2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: -1, Step: 1, Categories: stringCat, Group: "string", Since: "1.0.0", Summary: "Get the values of all the given keys",
			Tips: []string{"request_policy:multi_shard"}, Run: cmdMGet}, "RO", "access"),
		multi(&Command{Name: "mset", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Categories: stringCat, Group: "string", Since: "1.0.1", Summary: "Set multiple keys to multiple values",
			Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"}, Run: cmdMSet}, "OW", "update"),
		multi(&Command{Name: "msetnx", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Categories: stringCat, Group: "string", Since: "1.0.1", Summary: "Set multiple keys to multiple values, only if none of the keys exist",
			Tips: []string{"request_policy:multi_shard", "response_policy:agg_min"}, Run: cmdMSetNX}, "OW", "insert"),
		one(&Command{Name: "append", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "2.0.0", Summary: "Append a value to a key", Run: cmdAppend}, "RW", "insert"),
		one(&Command{Name: "strlen", Arity: 2, Flags: ReadOnly | Fast, Categories: stringCat, Since: "2.2.0", Summary: "Get the length of the value stored in a key", Run: cmdStrlen}, "RO"),
		one(&Command{Name: "getrange", Arity: 4, Flags: ReadOnly, Categories: stringCat, Since: "2.4.0", Summary: "Get a substring of the string stored at a key", Run: cmdGetRange}),
		one(&Command{Name: "substr", Arity: 4, Flags: ReadOnly, Categories: stringCat, Since: "1.0.0", Summary: "Get a substring of the string stored at a key", Run: cmdGetRange}),
		one(&Command{Name: "setrange", Arity: 4, Flags: Write | DenyOOM, Categories: stringCat, Since: "2.2.0", Summary: "Overwrite part of a string at key starting at the specified offset", Run: cmdSetRange}),
		one(&Command{Name: "incr", Arity: 2, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Increment the integer value of a key by one", Run: cmdIncr}, rwAccessUpdate...),
		one(&Command{Name: "decr", Arity: 2, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Decrement the integer value of a key by one", Run: cmdDecr}, rwAccessUpdate...),
		one(&Command{Name: "incrby", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Increment the integer value of a key by the given amount", Run: cmdIncrBy}, rwAccessUpdate...),
		one(&Command{Name: "decrby", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "1.0.0", Summary: "Decrement the integer value of a key by the given number", Run: cmdDecrBy}, rwAccessUpdate...),
		one(&Command{Name: "incrbyfloat", Arity: 3, Flags: Write | DenyOOM | Fast, Categories: stringCat, Since: "2.6.0", Summary: "Increment the float value of a key by the given amount", Run: cmdIncrByFloat}, rwAccessUpdate...),
		&Command{Name: "lcs", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 2, Step: 1, Categories: stringCat, Group: "string", Since: "7.0.0", Summary: "Find longest common substring", Run: cmdLCS},
	)
}

// maxStringLen is proto-max-bulk-len at its default, the largest string
// APPEND and SETRANGE may build. It is a constant rather than the live
// setting so that applying a record never depends on configuration.
const maxStringLen = resp.DefaultMaxBulk

// checkStringLength answers ErrStringLimit when a string of size+add bytes
// would be too long (Redis checkStringLength, overflow included).
func checkStringLength(c *Ctx, size, add int64) bool {
	if size > maxStringLen-add {
		c.W.Error(ErrStringLimit)
		return false
	}
	return true
}

func cmdGet(c *Ctx) {
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeString)
	switch {
	case wrong:
	case !ok:
		c.W.Null()
	case m.Chunked:
		// Read straight into the reply: a value of hundreds of MB is
		// not assembled and then copied.
		c.W.BulkFill(int(m.StringLen()), func(dst []byte) {
			c.Tx.VisitString(c.Args[1], m, 0, m.StringLen(), func(off, _ int64, data []byte) bool {
				copy(dst[off:], data)
				return true
			})
		})
	default:
		c.W.Bulk(c.Tx.ReadString(c.Args[1], m))
	}
}

// Options of SET and GETEX (Redis's OBJ_* flags).
const (
	optNX = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT
)

const optExpire = optEX | optPX | optEXAT | optPXAT

// strOpts lists the options with the ones each may not be combined with.
// Repeating an option is allowed, as in Redis (the last expire wins).
var strOpts = []struct {
	name     string
	flag     int
	conflict int
	forSet   bool // SET only; otherwise GETEX only unless both
	both     bool
	arg      bool
}{
	{"nx", optNX, optXX, true, false, false},
	{"xx", optXX, optNX, true, false, false},
	{"get", optGet, 0, true, false, false},
	{"keepttl", optKeepTTL, optPersist | optExpire, true, false, false},
	{"persist", optPersist, optKeepTTL | optExpire, false, false, false},
	{"ex", optEX, optKeepTTL | optPersist | optExpire&^optEX, false, true, true},
	{"px", optPX, optKeepTTL | optPersist | optExpire&^optPX, false, true, true},
	{"exat", optEXAT, optKeepTTL | optPersist | optExpire&^optEXAT, false, true, true},
	{"pxat", optPXAT, optKeepTTL | optPersist | optExpire&^optPXAT, false, true, true},
}

// parseStrOpts parses the options of SET (isSet, from argument 3) or GETEX
// (from argument 2), answering "syntax error" as Redis does for an unknown,
// misplaced or conflicting option. It returns the flags and the expire
// argument.
func parseStrOpts(c *Ctx, from int, isSet bool) (flags int, expire []byte, ok bool) {
	for j := from; j < len(c.Args); j++ {
		known := false
		for _, o := range strOpts {
			if !strings.EqualFold(string(c.Args[j]), o.name) {
				continue
			}
			if flags&o.conflict != 0 || (!o.both && o.forSet != isSet) || (o.arg && j == len(c.Args)-1) {
				break
			}
			flags |= o.flag
			if o.arg {
				j++
				expire = c.Args[j]
			}
			known = true
			break
		}
		if !known {
			c.W.Error(ErrSyntax)
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireAt turns an expire argument into an absolute unix time in ms
// (Redis getExpireMillisecondsOrReply): positive, no overflow when scaled
// to ms or made absolute, else "invalid expire time".
func expireAt(c *Ctx, arg []byte, flags int) (int64, bool) {
	ms, ok := num.ParseInt(arg)
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, false
	}
	seconds := flags&(optEX|optEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		c.W.Error(fmt.Sprintf(ErrExpireTime, strings.ToLower(c.Arg(0))))
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(optEX|optPX) != 0 {
		ms += c.Tx.Now // wraps on overflow like Redis, caught below
	}
	if ms <= 0 {
		c.W.Error(fmt.Sprintf(ErrExpireTime, strings.ToLower(c.Arg(0))))
		return 0, false
	}
	return ms, true
}

// setGeneric is SET and its variants (Redis setGenericCommand). okReply and
// abortReply write the answers for a done and a skipped (NX/XX) write; with
// GET the old value is the answer either way.
func setGeneric(c *Ctx, key, val []byte, flags int, expire []byte, okReply, abortReply func()) {
	var at int64
	if expire != nil {
		var ok bool
		if at, ok = expireAt(c, expire, flags); !ok {
			return
		}
	}
	prev := c.Tx.KeyMiss(flags&optGet != 0) // GET reads the key (keymiss events)
	old, found := c.Tx.Lookup(key)
	c.Tx.KeyMiss(prev)
	if flags&optGet != 0 {
		switch {
		case found && old.Type != store.TypeString:
			c.W.Error(ErrWrongType)
			return
		case found:
			c.W.Bulk(c.Tx.ReadString(key, old))
		default:
			c.W.Null()
		}
	}
	if (flags&optNX != 0 && found) || (flags&optXX != 0 && !found) {
		if flags&optGet == 0 {
			abortReply()
		}
		return
	}
	var ttl int64
	if flags&optKeepTTL != 0 && found {
		ttl = old.ExpireAt
	}
	if expire != nil {
		ttl = at
	}
	c.Tx.WriteString(key, val, ttl)
	c.Tx.Notify(store.NotifyString, "set", key)
	if expire != nil {
		c.Tx.Notify(store.NotifyGeneric, "expire", key)
	}
	if flags&optGet == 0 {
		okReply()
	}
}

func cmdSet(c *Ctx) {
	flags, expire, ok := parseStrOpts(c, 3, true)
	if !ok {
		return
	}
	setGeneric(c, c.Args[1], c.Args[2], flags, expire, c.W.OK, c.W.Null)
}

func cmdSetNX(c *Ctx) {
	setGeneric(c, c.Args[1], c.Args[2], optNX, nil, func() { c.W.Int(1) }, func() { c.W.Int(0) })
}

func cmdSetEX(c *Ctx) {
	setGeneric(c, c.Args[1], c.Args[3], optEX, c.Args[2], c.W.OK, nil)
}

func cmdPSetEX(c *Ctx) {
	setGeneric(c, c.Args[1], c.Args[3], optPX, c.Args[2], c.W.OK, nil)
}

func cmdGetSet(c *Ctx) {
	setGeneric(c, c.Args[1], c.Args[2], optGet, nil, nil, nil)
}

func cmdGetDel(c *Ctx) {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // a read lookup (keymiss events)
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeString)
	switch {
	case wrong:
	case !ok:
		c.W.Null()
	default:
		c.W.Bulk(c.Tx.ReadString(c.Args[1], m))
		c.Tx.Delete(c.Args[1])
		c.Tx.Notify(store.NotifyGeneric, "del", c.Args[1])
	}
}

// cmdGetEX is GET that may also change the TTL. The key is checked before
// the expire argument, so a missing key answers nil whatever the argument.
func cmdGetEX(c *Ctx) {
	flags, expire, ok := parseStrOpts(c, 2, false)
	if !ok {
		return
	}
	key := c.Args[1]
	prev := c.Tx.KeyMiss(true) // a read lookup (keymiss events)
	m, ok, wrong := c.Lookup(key, store.TypeString)
	c.Tx.KeyMiss(prev)
	if wrong {
		return
	}
	if !ok {
		c.W.Null()
		return
	}
	var at int64
	if expire != nil {
		if at, ok = expireAt(c, expire, flags); !ok {
			return
		}
	}
	c.W.Bulk(c.Tx.ReadString(key, m))
	switch {
	case flags&(optEXAT|optPXAT) != 0 && at <= c.Tx.Now:
		// An absolute time already past deletes the key.
		c.Tx.Delete(key)
		c.Tx.Notify(store.NotifyGeneric, "del", key)
	case expire != nil:
		m.ExpireAt = at
		c.Tx.Put(key, m)
		c.Tx.Notify(store.NotifyGeneric, "expire", key)
	case flags&optPersist != 0 && m.ExpireAt != 0:
		m.ExpireAt = 0
		c.Tx.Put(key, m)
		c.Tx.Notify(store.NotifyGeneric, "persist", key)
	}
}

// cmdMGet answers nil for a missing key and for a key of another type.
func cmdMGet(c *Ctx) {
	c.W.ArrayLen(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		m, ok := c.Tx.Lookup(key)
		if ok && m.Type == store.TypeString {
			c.W.Bulk(c.Tx.ReadString(key, m))
		} else {
			c.W.Null()
		}
	}
}

func cmdMSet(c *Ctx) {
	if msetPairs(c) {
		c.W.OK()
	}
}

func cmdMSetNX(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.W.Error(WrongArity(strings.ToLower(c.Arg(0))))
		return
	}
	for j := 1; j < len(c.Args); j += 2 {
		if c.Tx.Exists(c.Args[j]) {
			c.W.Int(0)
			return
		}
	}
	msetPairs(c)
	c.W.Int(1)
}

// msetPairs sets every key/value pair, dropping any TTL, after checking
// that the arguments come in pairs.
func msetPairs(c *Ctx) bool {
	if len(c.Args)%2 == 0 {
		c.W.Error(WrongArity(strings.ToLower(c.Arg(0))))
		return false
	}
	for j := 1; j < len(c.Args); j += 2 {
		c.Tx.WriteString(c.Args[j], c.Args[j+1], 0)
		c.Tx.Notify(store.NotifyString, "set", c.Args[j])
	}
	return true
}

// cmdAppend keeps the key's TTL: it modifies the value in place.
func cmdAppend(c *Ctx) {
	key, add := c.Args[1], c.Args[2]
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	if !ok {
		c.Tx.WriteString(key, add, 0)
		c.Tx.Notify(store.NotifyString, "append", key)
		c.W.Int(int64(len(add)))
		return
	}
	n := m.StringLen()
	if !checkStringLength(c, n, int64(len(add))) {
		return
	}
	m = c.Tx.WriteStringRange(key, m, n, add)
	c.Tx.Notify(store.NotifyString, "append", key)
	c.W.Int(m.StringLen())
}

func cmdStrlen(c *Ctx) {
	m, _, wrong := c.Lookup(c.Args[1], store.TypeString)
	if !wrong {
		c.W.Int(m.StringLen())
	}
}

// cmdGetRange is GETRANGE and SUBSTR: inclusive range, negative indexes
// count from the end, clamped to the string.
func cmdGetRange(c *Ctx) {
	start, ok1 := num.ParseInt(c.Args[2])
	end, ok2 := num.ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Error(ErrNotInt)
		return
	}
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeString)
	if wrong {
		return
	}
	if !ok || (start < 0 && end < 0 && start > end) {
		c.W.Bulk(nil)
		return
	}
	n := m.StringLen()
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.Bulk(nil)
		return
	}
	c.W.Bulk(c.Tx.ReadStringRange(c.Args[1], m, start, end+1))
}

// cmdSetRange overwrites part of a string, padding with zero bytes. An
// empty value changes nothing and creates no key.
func cmdSetRange(c *Ctx) {
	key, val := c.Args[1], c.Args[3]
	offset, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if offset < 0 {
		c.W.Error("ERR offset is out of range")
		return
	}
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	if len(val) == 0 {
		c.W.Int(m.StringLen())
		return
	}
	if !checkStringLength(c, offset, int64(len(val))) {
		return
	}
	if !ok {
		m = store.Meta{Type: store.TypeString}
	}
	m = c.Tx.WriteStringRange(key, m, offset, val)
	c.Tx.Notify(store.NotifyString, "setrange", key)
	c.W.Int(m.StringLen())
}

func cmdIncr(c *Ctx) { incrDecr(c, 1) }
func cmdDecr(c *Ctx) { incrDecr(c, -1) }

func cmdIncrBy(c *Ctx) {
	if n, ok := num.ParseInt(c.Args[2]); !ok {
		c.W.Error(ErrNotInt)
	} else {
		incrDecr(c, n)
	}
}

func cmdDecrBy(c *Ctx) {
	n, ok := num.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error(ErrNotInt)
	case n == math.MinInt64:
		c.W.Error("ERR decrement would overflow")
	default:
		incrDecr(c, -n)
	}
}

// incrDecr adds by to the integer stored at the key (0 if missing),
// keeping its TTL.
func incrDecr(c *Ctx, by int64) {
	key := c.Args[1]
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	var v int64
	if ok {
		// No integer is longer than 20 bytes: don't read a big value.
		if m.StringLen() > 20 {
			ok = false
		} else {
			v, ok = num.ParseInt(c.Tx.ReadString(key, m))
		}
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
	}
	if (by < 0 && v < 0 && by < math.MinInt64-v) || (by > 0 && v > 0 && by > math.MaxInt64-v) {
		c.W.Error(ErrOverflow)
		return
	}
	v += by
	c.Tx.WriteString(key, num.FormatInt(v), m.ExpireAt)
	c.Tx.Notify(store.NotifyString, "incrby", key)
	c.W.Int(v)
}

// cmdIncrByFloat works in long double like Redis, stores the result in
// Redis's human form and keeps the TTL.
func cmdIncrByFloat(c *Ctx) {
	key := c.Args[1]
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	var cur []byte
	if ok {
		cur = c.Tx.ReadString(key, m)
		if cur == nil {
			cur = []byte{} // an empty string is not a number, unlike a missing key
		}
	}
	v, err := num.IncrByFloat(cur, c.Args[2])
	if err != nil {
		c.W.Error(err.Error())
		return
	}
	c.Tx.WriteString(key, v, m.ExpireAt)
	c.Tx.Notify(store.NotifyString, "incrbyfloat", key)
	c.W.Bulk(v)
}

// lcsMaxCells bounds the LCS table as Redis does: it allocates 4 bytes a
// cell and refuses a table larger than proto-max-bulk-len (here at its
// default, as for APPEND), so two strings of some 11.6 KB are already too
// big. We keep one bit a cell, but answer the same.
const lcsMaxCells = maxStringLen / 4

// cmdLCS is Redis 7.0's LCS: the longest common subsequence of two string
// keys (missing keys are empty), its length (LEN) or the matching ranges
// (IDX, with MINMATCHLEN and WITHMATCHLEN).
func cmdLCS(c *Ctx) {
	var ab [2][]byte
	for i, key := range c.Args[1:3] {
		m, ok := c.Tx.Lookup(key)
		if ok && m.Type != store.TypeString {
			c.W.Error("ERR The specified keys must contain string values")
			return
		}
		ab[i] = c.Tx.ReadString(key, m)
	}
	a, b := ab[0], ab[1]
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(c.Args); j++ {
		switch opt := strings.ToLower(c.Arg(j)); {
		case opt == "idx":
			getIdx = true
		case opt == "len":
			getLen = true
		case opt == "withmatchlen":
			withMatchLen = true
		case opt == "minmatchlen" && j < len(c.Args)-1:
			n, ok := num.ParseInt(c.Args[j+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	if int64(alen+1)*int64(blen+1) > lcsMaxCells {
		c.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}

	// Dynamic programming row by row. Where the last bytes differ, the
	// backtrack needs only whether LCS(i-1,j) > LCS(i,j-1): one bit.
	width := blen + 1
	var up []byte // LEN alone needs no backtrack
	if !getLen {
		up = make([]byte, (int64(alen+1)*int64(width)+7)/8)
	}
	prev, cur := make([]uint32, width), make([]uint32, width)
	for i := 1; i <= alen; i++ {
		cur[0] = 0
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				continue
			}
			l1, l2 := prev[j], cur[j-1]
			if l1 > l2 {
				cur[j] = l1
				if up != nil {
					bit := i*width + j
					up[bit>>3] |= 1 << (bit & 7)
				}
			} else {
				cur[j] = l2
			}
		}
		prev, cur = cur, prev
	}
	total := prev[blen] // prev holds the last row computed
	if getLen {
		c.W.Int(int64(total))
		return
	}

	// Walk back from the end, as Redis does, collecting the string and the
	// ranges (found from the end of the strings towards the start).
	type match struct{ a0, a1, b0, b1 int }
	var matches []match
	result := make([]byte, total)
	idx := int(total)
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			bit := i*width + j
			if up[bit>>3]&(1<<(bit&7)) != 0 {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if n := aEnd - aStart + 1; minMatchLen == 0 || int64(n) >= minMatchLen {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	if !getIdx {
		c.W.Bulk(result)
		return
	}
	c.W.MapLen(2)
	c.W.BulkString("matches")
	c.W.ArrayLen(len(matches))
	for _, m := range matches {
		if withMatchLen {
			c.W.ArrayLen(3)
		} else {
			c.W.ArrayLen(2)
		}
		c.W.ArrayLen(2)
		c.W.Int(int64(m.a0))
		c.W.Int(int64(m.a1))
		c.W.ArrayLen(2)
		c.W.Int(int64(m.b0))
		c.W.Int(int64(m.b1))
		if withMatchLen {
			c.W.Int(int64(m.a1 - m.a0 + 1))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
