package command

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"basalt/internal/glob"
	"basalt/internal/num"
	"basalt/internal/store"
)

// Set commands (t_set.c in Redis). A set is a metadata entry whose body is
// sizeHeader, and one member entry per element: store.HashedSub(member) ->
// empty. SISMEMBER is one Pebble read, SCARD reads only the header, and the
// hash order gives SSCAN a stable cursor and SPOP/SRANDMEMBER a random
// position to start from.
func init() {
	setCat := []string{"set"}
	nondetOrder := []string{"nondeterministic_output_order"}
	nondet := []string{"nondeterministic_output"}
	// one: the key at argument 1 with one key spec of the given flags.
	one := singleKey("set")
	// all: every argument from 1 on is a key (SINTER, SUNION, SDIFF).
	all := func(c *Command) *Command {
		c.FirstKey, c.LastKey, c.Step = 1, -1, 1
		c.Group = "set"
		c.KeySpecs = []KeySpec{{Flags: []string{"RO", "access"}, Index: 1, LastKey: -1, KeyStep: 1}}
		return c
	}
	// stored: a destination at 1, then source keys (S*STORE).
	stored := func(c *Command, dst ...string) *Command {
		c.FirstKey, c.LastKey, c.Step = 1, -1, 1
		c.Group = "set"
		c.KeySpecs = []KeySpec{{Flags: dst, Index: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, Index: 2, LastKey: -1, KeyStep: 1}}
		return c
	}
	register(
		one(&Command{Name: "sadd", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: setCat, Since: "1.0.0", Summary: "Add one or more members to a set", Run: cmdSAdd}, "RW", "insert"),
		one(&Command{Name: "srem", Arity: -3, Flags: Write | Fast, Categories: setCat, Since: "1.0.0", Summary: "Remove one or more members from a set", Run: cmdSRem}, "RW", "delete"),
		one(&Command{Name: "smembers", Arity: 2, Flags: ReadOnly, Categories: setCat, Since: "1.0.0", Summary: "Get all the members in a set", Tips: nondetOrder, Run: cmdSMembers}, "RO", "access"),
		one(&Command{Name: "sismember", Arity: 3, Flags: ReadOnly | Fast, Categories: setCat, Since: "1.0.0", Summary: "Determine if a given value is a member of a set", Run: cmdSIsMember}, "RO"),
		one(&Command{Name: "smismember", Arity: -3, Flags: ReadOnly | Fast, Categories: setCat, Since: "6.2.0", Summary: "Returns the membership associated with the given elements for a set", Run: cmdSMIsMember}, "RO", "access"),
		one(&Command{Name: "scard", Arity: 2, Flags: ReadOnly | Fast, Categories: setCat, Since: "1.0.0", Summary: "Get the number of members in a set", Run: cmdSCard}, "RO"),
		one(&Command{Name: "spop", Arity: -2, Flags: Write | Fast, Categories: setCat, Since: "1.0.0", Summary: "Remove and return one or multiple random members from a set", Tips: nondet, Run: cmdSPop}, "RW", "access", "delete"),
		one(&Command{Name: "srandmember", Arity: -2, Flags: ReadOnly, Categories: setCat, Since: "1.0.0", Summary: "Get one or multiple random members from a set", Tips: nondet, Run: cmdSRandMember}, "RO", "access"),
		&Command{Name: "smove", Arity: 4, Flags: Write | Fast, FirstKey: 1, LastKey: 2, Step: 1, Categories: setCat, Group: "set", Since: "1.0.0", Summary: "Move a member from one set to another", Run: cmdSMove,
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, Index: 1, KeyStep: 1}, {Flags: []string{"RW", "insert"}, Index: 2, KeyStep: 1}}},
		all(&Command{Name: "sinter", Arity: -2, Flags: ReadOnly, Categories: setCat, Since: "1.0.0", Summary: "Intersect multiple sets", Tips: nondetOrder, Run: cmdSInter}),
		&Command{Name: "sintercard", Arity: -3, Flags: ReadOnly, Categories: setCat, Group: "set", Since: "7.0.0", Summary: "Intersect multiple sets and return the cardinality of the result", Run: cmdSInterCard,
			KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}},
		all(&Command{Name: "sunion", Arity: -2, Flags: ReadOnly, Categories: setCat, Since: "1.0.0", Summary: "Add multiple sets", Tips: nondetOrder, Run: func(c *Ctx) { setUnionDiff(c, false, nil, c.Args[1:]) }}),
		all(&Command{Name: "sdiff", Arity: -2, Flags: ReadOnly, Categories: setCat, Since: "1.0.0", Summary: "Subtract multiple sets", Tips: nondetOrder, Run: func(c *Ctx) { setUnionDiff(c, true, nil, c.Args[1:]) }}),
		stored(&Command{Name: "sinterstore", Arity: -3, Flags: Write | DenyOOM, Categories: setCat, Since: "1.0.0", Summary: "Intersect multiple sets and store the resulting set in a key", Run: cmdSInterStore}, "RW", "update"),
		stored(&Command{Name: "sunionstore", Arity: -3, Flags: Write | DenyOOM, Categories: setCat, Since: "1.0.0", Summary: "Add multiple sets and store the resulting set in a key", Run: func(c *Ctx) { setUnionDiff(c, false, c.Args[1], c.Args[2:]) }}, "OW", "update"),
		stored(&Command{Name: "sdiffstore", Arity: -3, Flags: Write | DenyOOM, Categories: setCat, Since: "1.0.0", Summary: "Subtract multiple sets and store the resulting set in a key", Run: func(c *Ctx) { setUnionDiff(c, true, c.Args[1], c.Args[2:]) }}, "OW", "update"),
		one(&Command{Name: "sscan", Arity: -3, Flags: ReadOnly, Categories: setCat, Since: "2.8.0", Summary: "Incrementally iterate Set elements", Tips: nondet, Run: cmdSScan}, "RO", "access"),
	)
}

// setMaxIntsetEntries is set-max-intset-entries at its default. It is a
// constant so that applying a record never depends on configuration.
const setMaxIntsetEntries = 512

const (
	errSetPositive   = "ERR value is out of range, must be positive"
	errSetRandRange  = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errSetNumKeys    = "ERR numkeys should be greater than 0"
	errSetTooMany    = "ERR Number of keys can't be greater than number of args"
	errSetNegLimit   = "ERR LIMIT can't be negative"
	setLoadAllFactor = 4 // pick random members from a full load when count*4 >= size
)

// setAdded accounts for a new member, converting to a hash table (big) as
// Redis's setTypeAdd does: a member that is not a canonical integer, or more
// than setMaxIntsetEntries members, leaves the intset for good.
func setAdded(h *sizeHeader, member []byte) {
	h.n++
	if !h.big && (!setIsInt(member) || h.n > setMaxIntsetEntries) {
		h.big = true
	}
}

// setIsInt reports whether an intset could hold member
// (isSdsRepresentableAsLongLong).
func setIsInt(member []byte) bool {
	_, ok := num.ParseInt(member)
	return ok
}

// setEncoding is OBJECT ENCODING for a set.
func setEncoding(m store.Meta) string {
	if decodeSizeHeader(m.Body).big {
		return "hashtable"
	}
	return "intset"
}

// setLookup returns key's set and header; a key of another type is answered
// with WRONGTYPE.
func setLookup(c *Ctx, key []byte) (m store.Meta, h sizeHeader, ok, wrong bool) {
	m, ok, wrong = c.Lookup(key, store.TypeSet)
	if ok {
		h = decodeSizeHeader(m.Body)
	}
	return m, h, ok, wrong
}

// setSave writes the header back after members changed and raises the
// command's keyspace event, deleting the key (and raising "del") when the
// set is empty (Redis keeps no empty collection). The expiry stays.
func setSave(c *Ctx, key []byte, m store.Meta, h sizeHeader, event string) {
	if h.n == 0 {
		c.Tx.Delete(key)
		c.Tx.Notify(store.NotifySet, event, key)
		c.Tx.Notify(store.NotifyGeneric, "del", key)
		return
	}
	c.Tx.Put(key, store.Meta{Type: store.TypeSet, ExpireAt: m.ExpireAt, Body: h.encode()})
	c.Tx.Notify(store.NotifySet, event, key)
}

// setAdd adds member and reports whether it was new.
func setAdd(c *Ctx, key, member []byte, h *sizeHeader) bool {
	sub := store.HashedSub(nil, member)
	if h.n > 0 { // a new set has no members to look for
		if _, ok := c.Tx.Member(key, sub); ok {
			return false
		}
	}
	c.Tx.SetMember(key, sub, nil)
	setAdded(h, member)
	return true
}

// setRemove removes member and reports whether it was there.
func setRemove(c *Ctx, key, member []byte, h *sizeHeader) bool {
	sub := store.HashedSub(nil, member)
	if _, ok := c.Tx.Member(key, sub); !ok {
		return false
	}
	c.Tx.DeleteMember(key, sub)
	h.n--
	return true
}

func setHas(c *Ctx, key, member []byte) bool {
	_, ok := c.Tx.Member(key, store.HashedSub(nil, member))
	return ok
}

// setSubs returns the sub keys of all members, in hash order.
func setSubs(c *Ctx, key []byte) [][]byte {
	var out [][]byte
	c.Tx.Members(key, nil, nil, false, func(sub, _ []byte) bool {
		out = append(out, append([]byte(nil), sub...))
		return true
	})
	return out
}

// setMembersOf returns all members; an intset's in numeric order, as Redis
// lists them.
func setMembersOf(c *Ctx, key []byte, h sizeHeader) [][]byte {
	subs := setSubs(c, key)
	out := make([][]byte, len(subs))
	for i, s := range subs {
		out[i] = store.HashedMember(s)
	}
	if !h.big {
		slices.SortFunc(out, func(a, b []byte) int {
			x, _ := num.ParseInt(a)
			y, _ := num.ParseInt(b)
			return cmpInt64(x, y)
		})
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// setReply writes members as a set (an array in RESP2).
func setReply(c *Ctx, members [][]byte) {
	c.W.SetLen(len(members))
	for _, m := range members {
		c.W.Bulk(m)
	}
}

func setRand(c *Ctx) *rand.Rand { return commandRand(c, 0x73657473) }

// setRandomSub returns the sub key of a random member of a set of about n
// members, leaving out those in taken; nil if there is none.
func setRandomSub(c *Ctx, key []byte, n int64, rng *rand.Rand, taken map[string]bool) []byte {
	var skip func([]byte) bool
	if len(taken) > 0 {
		skip = func(sub []byte) bool { return taken[string(sub)] }
	}
	sub, _ := randomMember(c, key, nil, n, rng, skip)
	return sub
}

// setPickDistinct picks count distinct random members' sub keys of a set of
// n > count members. When it loaded the whole set, rest holds the members
// not picked. A read view is no snapshot, so the set may have shrunk since
// n was read: then it returns fewer.
func setPickDistinct(c *Ctx, key []byte, n, count int64, rng *rand.Rand) (picked, rest [][]byte) {
	if count >= n/setLoadAllFactor || n <= 256 {
		all := setSubs(c, key)
		count = min(count, int64(len(all)))
		for i := range int(count) { // partial Fisher-Yates
			j := i + rng.IntN(len(all)-i)
			all[i], all[j] = all[j], all[i]
		}
		return all[:count], all[count:]
	}
	// A small share of a big set: probe random positions.
	taken := make(map[string]bool, count)
	for int64(len(picked)) < count {
		sub := setRandomSub(c, key, n, rng, taken)
		if sub == nil {
			break
		}
		taken[string(sub)] = true
		picked = append(picked, sub)
	}
	return picked, nil
}

// SADD key member [member ...]
func cmdSAdd(c *Ctx) {
	key := c.Args[1]
	m, h, ok, wrong := setLookup(c, key)
	if wrong {
		return
	}
	if !ok {
		// Redis creates an intset when the first member is an integer.
		h = sizeHeader{big: !setIsInt(c.Args[2])}
	}
	added := int64(0)
	for _, member := range c.Args[2:] {
		if setAdd(c, key, member, &h) {
			added++
		}
	}
	if added > 0 {
		setSave(c, key, m, h, "sadd")
	}
	c.W.Int(added)
}

// SREM key member [member ...]
func cmdSRem(c *Ctx) {
	key := c.Args[1]
	m, h, ok, wrong := setLookup(c, key)
	if wrong {
		return
	}
	if !ok {
		c.W.Int(0)
		return
	}
	removed := int64(0)
	for _, member := range c.Args[2:] {
		if setRemove(c, key, member, &h) {
			removed++
			if h.n == 0 {
				break
			}
		}
	}
	if removed > 0 {
		setSave(c, key, m, h, "srem")
	}
	c.W.Int(removed)
}

// SMEMBERS key
func cmdSMembers(c *Ctx) {
	_, h, ok, wrong := setLookup(c, c.Args[1])
	switch {
	case wrong:
	case !ok:
		c.W.SetLen(0)
	default:
		setReply(c, setMembersOf(c, c.Args[1], h))
	}
}

// SISMEMBER key member
func cmdSIsMember(c *Ctx) {
	_, _, ok, wrong := setLookup(c, c.Args[1])
	switch {
	case wrong:
	case !ok:
		c.W.Int(0)
	case setHas(c, c.Args[1], c.Args[2]):
		c.W.Int(1)
	default:
		c.W.Int(0)
	}
}

// SMISMEMBER key member [member ...]
func cmdSMIsMember(c *Ctx) {
	_, _, ok, wrong := setLookup(c, c.Args[1])
	if wrong {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, member := range c.Args[2:] {
		if ok && setHas(c, c.Args[1], member) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

// SCARD key
func cmdSCard(c *Ctx) {
	_, h, ok, wrong := setLookup(c, c.Args[1])
	switch {
	case wrong:
	case !ok:
		c.W.Int(0)
	default:
		c.W.Int(h.n)
	}
}

// SPOP key [count]
func cmdSPop(c *Ctx) {
	switch {
	case len(c.Args) == 3:
		spopCount(c)
		return
	case len(c.Args) > 3:
		c.W.Error(ErrSyntax)
		return
	}
	key := c.Args[1]
	m, h, ok, wrong := setLookup(c, key)
	switch {
	case wrong:
		return
	case !ok:
		c.W.Null()
		return
	}
	sub := setRandomSub(c, key, h.n, setRand(c), nil)
	c.Tx.DeleteMember(key, sub)
	h.n--
	setSave(c, key, m, h, "spop")
	c.W.Bulk(store.HashedMember(sub))
}

// spopCount is SPOP key count: count distinct random members, the whole
// set (and the key) when count reaches its size.
func spopCount(c *Ctx) {
	count, ok := num.ParseInt(c.Args[2])
	if !ok || count < 0 {
		c.W.Error(errSetPositive)
		return
	}
	key := c.Args[1]
	m, h, ok, wrong := setLookup(c, key)
	switch {
	case wrong:
		return
	case !ok || count == 0:
		c.W.SetLen(0)
		return
	case count >= h.n:
		members := setMembersOf(c, key, h)
		c.Tx.Delete(key)
		c.Tx.Notify(store.NotifySet, "spop", key)
		c.Tx.Notify(store.NotifyGeneric, "del", key)
		setReply(c, members)
		return
	}
	picked, rest := setPickDistinct(c, key, h.n, count, setRand(c))
	for _, sub := range picked {
		c.Tx.DeleteMember(key, sub)
	}
	h.n -= count
	// When few members remain Redis builds a new set of them (its "case
	// 3"), which is an intset again if they fit one. That path always
	// loaded the whole set here, so rest is known.
	if h.n*5 <= count && rest != nil {
		h.big = h.n > setMaxIntsetEntries
		for _, sub := range rest {
			if !setIsInt(store.HashedMember(sub)) {
				h.big = true
				break
			}
		}
	}
	setSave(c, key, m, h, "spop")
	c.W.SetLen(len(picked))
	for _, sub := range picked {
		c.W.Bulk(store.HashedMember(sub))
	}
}

// SRANDMEMBER key [count]: a positive count asks for distinct members, a
// negative one for that many picks that may repeat.
func cmdSRandMember(c *Ctx) {
	switch {
	case len(c.Args) == 3:
		srandmemberCount(c)
		return
	case len(c.Args) > 3:
		c.W.Error(ErrSyntax)
		return
	}
	key := c.Args[1]
	_, h, ok, wrong := setLookup(c, key)
	switch {
	case wrong:
	case !ok:
		c.W.Null()
	default:
		if sub := setRandomSub(c, key, h.n, setRand(c), nil); sub != nil {
			c.W.Bulk(store.HashedMember(sub))
		} else {
			c.W.Null() // emptied since the lookup (reads have no snapshot)
		}
	}
}

func srandmemberCount(c *Ctx) {
	count, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if count == math.MinInt64 {
		c.W.Error(errSetRandRange)
		return
	}
	key := c.Args[1]
	_, h, ok, wrong := setLookup(c, key)
	switch {
	case wrong:
		return
	case !ok || count == 0:
		c.W.ArrayLen(0)
		return
	case count >= h.n:
		members := setMembersOf(c, key, h)
		c.W.ArrayLen(len(members))
		for _, m := range members {
			c.W.Bulk(m)
		}
		return
	}
	rng := setRand(c)
	if count > 0 {
		picked, _ := setPickDistinct(c, key, h.n, count, rng)
		c.W.ArrayLen(len(picked))
		for _, sub := range picked {
			c.W.Bulk(store.HashedMember(sub))
		}
		return
	}
	// Picks that may repeat, as many as the client asks for.
	count = -count
	if h.n <= 1024 || count >= h.n/setLoadAllFactor {
		guard, ok := startRepeatReply(c, count, false)
		if !ok {
			return
		}
		all := setSubs(c, key) // the set may be gone since h was read
		if len(all) == 0 {
			c.W.ArrayLen(0)
			return
		}
		c.W.ArrayLen(int(count))
		for range count {
			c.W.Bulk(store.HashedMember(all[rng.IntN(len(all))]))
			if guard.over() {
				return
			}
		}
		return
	}
	// Fewer picks than members: collected first, as the set may change
	// under a read and the array length must be what follows.
	var out [][]byte
	for range count {
		sub := setRandomSub(c, key, h.n, rng, nil)
		if sub == nil {
			break
		}
		out = append(out, sub)
	}
	c.W.ArrayLen(len(out))
	for _, sub := range out {
		c.W.Bulk(store.HashedMember(sub))
	}
}

// SMOVE source destination member. The checks come in Redis's order: a
// missing source answers 0 before the destination's type is looked at.
func cmdSMove(c *Ctx) {
	src, dst, member := c.Args[1], c.Args[2], c.Args[3]
	sm, sok := c.Tx.Lookup(src)
	dm, dok := c.Tx.Lookup(dst)
	switch {
	case !sok:
		c.W.Int(0)
		return
	case sm.Type != store.TypeSet || (dok && dm.Type != store.TypeSet):
		c.W.Error(ErrWrongType)
		return
	case bytes.Equal(src, dst):
		if setHas(c, src, member) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	sh := decodeSizeHeader(sm.Body)
	if !setRemove(c, src, member, &sh) {
		c.W.Int(0)
		return
	}
	setSave(c, src, sm, sh, "srem")
	dh := sizeHeader{big: !setIsInt(member)}
	if dok {
		dh = decodeSizeHeader(dm.Body)
	}
	if setAdd(c, dst, member, &dh) {
		setSave(c, dst, dm, dh, "sadd")
	}
	c.W.Int(1)
}

// setRef is one operand of SINTER, SUNION, SDIFF and their variants.
type setRef struct {
	key []byte
	n   int64 // 0 when missing
	ok  bool
}

// setLoad looks up the operands. A missing key is an empty set; a key of
// another type answers WRONGTYPE, whatever comes before it (Redis 7 checks
// every key before using any).
func setLoad(c *Ctx, keys [][]byte) ([]setRef, bool) {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // reads even for a *STORE (keymiss events)
	refs := make([]setRef, len(keys))
	for i, k := range keys {
		_, h, ok, wrong := setLookup(c, k)
		if wrong {
			return nil, false
		}
		refs[i] = setRef{key: k, n: h.n, ok: ok}
	}
	return refs, true
}

// setInter calls fn with each member of the intersection until it returns
// false. It iterates the smallest set and probes the others by sub key.
func setInter(c *Ctx, refs []setRef, fn func(member []byte) bool) {
	for _, r := range refs {
		if !r.ok {
			return
		}
	}
	sorted := slices.Clone(refs)
	slices.SortStableFunc(sorted, func(a, b setRef) int { return cmpInt64(a.n, b.n) })
	first, others := sorted[0], sorted[1:]
	c.Tx.Members(first.key, nil, nil, false, func(sub, _ []byte) bool {
		for _, o := range others {
			if bytes.Equal(o.key, first.key) {
				continue
			}
			if _, ok := c.Tx.Member(o.key, sub); !ok {
				return true
			}
		}
		return fn(append([]byte(nil), store.HashedMember(sub)...))
	})
}

// setInterMembers collects the intersection of keys; ok is false after a
// WRONGTYPE reply.
func setInterMembers(c *Ctx, keys [][]byte) (out [][]byte, ok bool) {
	refs, ok := setLoad(c, keys)
	if !ok {
		return nil, false
	}
	setInter(c, refs, func(m []byte) bool {
		out = append(out, m)
		return true
	})
	return out, true
}

// SINTER key [key ...]
func cmdSInter(c *Ctx) {
	if out, ok := setInterMembers(c, c.Args[1:]); ok {
		setReply(c, out)
	}
}

// SINTERSTORE destination key [key ...]
func cmdSInterStore(c *Ctx) {
	if out, ok := setInterMembers(c, c.Args[2:]); ok {
		c.W.Int(setStore(c, c.Args[1], out, "sinterstore"))
	}
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdSInterCard(c *Ctx) {
	numkeys, ok := num.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.W.Error(errSetNumKeys)
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.W.Error(errSetTooMany)
		return
	}
	limit := int64(0) // no limit
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if !strings.EqualFold(c.Arg(j), "limit") || j+1 == len(c.Args) {
			c.W.Error(ErrSyntax)
			return
		}
		j++
		if limit, ok = num.ParseInt(c.Args[j]); !ok || limit < 0 {
			c.W.Error(errSetNegLimit)
			return
		}
	}
	refs, ok := setLoad(c, c.Args[2:2+numkeys])
	if !ok {
		return
	}
	n := int64(0)
	setInter(c, refs, func([]byte) bool {
		n++
		return limit == 0 || n < limit
	})
	c.W.Int(n)
}

// setUnionDiff is SUNION and SDIFF, and with a destination SUNIONSTORE and
// SDIFFSTORE.
func setUnionDiff(c *Ctx, diff bool, dst []byte, keys [][]byte) {
	refs, ok := setLoad(c, keys)
	if !ok {
		return
	}
	var out [][]byte
	if diff {
		out = setDiff(c, refs)
	} else {
		seen := map[string]bool{}
		for _, r := range refs {
			if !r.ok {
				continue
			}
			c.Tx.Members(r.key, nil, nil, false, func(sub, _ []byte) bool {
				if !seen[string(sub)] {
					seen[string(sub)] = true
					out = append(out, append([]byte(nil), store.HashedMember(sub)...))
				}
				return true
			})
		}
	}
	if dst != nil {
		event := "sunionstore"
		if diff {
			event = "sdiffstore"
		}
		c.W.Int(setStore(c, dst, out, event))
		return
	}
	setReply(c, out)
}

// setDiff returns the members of the first set in none of the others. It
// probes the others for each member of the first, or loads the others when
// that reads less.
func setDiff(c *Ctx, refs []setRef) [][]byte {
	first := refs[0]
	if !first.ok {
		return nil
	}
	var others []setRef
	total := int64(0)
	for _, r := range refs[1:] {
		if !r.ok {
			continue
		}
		if bytes.Equal(r.key, first.key) {
			return nil // A - A - ... is empty
		}
		others = append(others, r)
		total += r.n
	}
	var out [][]byte
	keep := func(sub []byte) {
		out = append(out, append([]byte(nil), store.HashedMember(sub)...))
	}
	if first.n*int64(len(others)) <= total {
		c.Tx.Members(first.key, nil, nil, false, func(sub, _ []byte) bool {
			for _, o := range others {
				if _, ok := c.Tx.Member(o.key, sub); ok {
					return true
				}
			}
			keep(sub)
			return true
		})
		return out
	}
	drop := map[string]bool{}
	for _, o := range others {
		c.Tx.Members(o.key, nil, nil, false, func(sub, _ []byte) bool {
			drop[string(sub)] = true
			return true
		})
	}
	c.Tx.Members(first.key, nil, nil, false, func(sub, _ []byte) bool {
		if !drop[string(sub)] {
			keep(sub)
		}
		return true
	})
	return out
}

// setStore makes dst a set of members (computed before, so dst may have
// been a source), replacing whatever dst held, expiry included, and raises
// event; an empty result deletes dst ("del"). It returns the size.
func setStore(c *Ctx, dst []byte, members [][]byte, event string) int64 {
	if len(members) == 0 {
		if c.Tx.Delete(dst) {
			c.Tx.Notify(store.NotifyGeneric, "del", dst)
		}
		return 0
	}
	c.Tx.Overwrite(dst)
	h := sizeHeader{n: int64(len(members)), big: len(members) > setMaxIntsetEntries}
	for _, m := range members {
		if !h.big && !setIsInt(m) {
			h.big = true
		}
	}
	c.Tx.Put(dst, store.Meta{Type: store.TypeSet, Body: h.encode()})
	for _, m := range members {
		c.Tx.SetMember(dst, store.HashedSub(nil, m), nil)
	}
	c.Tx.Notify(store.NotifySet, event, dst)
	return h.n
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. The cursor is a position
// in the members' hash order, so it stays valid while members come and go.
// An intset is returned whole with cursor 0, as Redis does.
func cmdSScan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[2])
	if !ok {
		c.W.Error(errCursor)
		return
	}
	key := c.Args[1]
	_, h, ok, wrong := setLookup(c, key)
	switch {
	case wrong:
		return
	case !ok:
		emptyScan(c)
		return
	}
	o, ok := parseScanOptions(c, 3, false)
	if !ok {
		return
	}
	count, pat := o.count, o.pat
	var out [][]byte
	add := func(member []byte) {
		if pat == nil || glob.Match(pat, member, false) {
			out = append(out, append([]byte(nil), member...))
		}
	}
	next := uint64(0)
	if !h.big {
		for _, m := range setMembersOf(c, key, h) {
			add(m)
		}
	} else {
		seen := int64(0)
		var lastPos uint64
		c.Tx.Members(key, store.PosBytes(cursor), nil, false, func(sub, _ []byte) bool {
			pos := store.HashedPos(sub)
			if seen >= count && pos != lastPos {
				next = pos
				return false
			}
			seen++
			lastPos = pos
			add(store.HashedMember(sub))
			return true
		})
	}
	c.W.ArrayLen(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.ArrayLen(len(out))
	for _, m := range out {
		c.W.Bulk(m)
	}
}
