package command

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"basalt/internal/glob"
	"basalt/internal/num"
	"basalt/internal/store"
)

// Sorted sets (t_zset.c in Redis). A sorted set is a metadata entry whose
// body is a header (member count, encoding and the levels of its rank
// index) and two entries per member:
//
//	'm' | hash64(member) | member          -> SortableFloat(score)
//	's' | SortableFloat(score) | member    -> "" (or "-" when the score is -0)
//
// The 'm' index answers ZSCORE and ZSCAN (hash order, stable cursors); the
// 's' index is in Redis's order (score, then member bytes), so ranges by
// score seek and ranges by rank walk from the nearer end. The 's' key holds
// 0 for -0 (Redis compares them equal) and its value remembers the sign,
// which Redis keeps in a skiplist but not in a listpack.
//
// A big set also has a rank index (zset_rank.go), so ranks cost about
// log(n), not the rank. Range commands and the set operations (ZUNION...)
// are in zset_range.go.
func init() {
	zsetCat := []string{"sortedset"}
	one := singleKey("sorted-set")
	// numKeys are the commands whose keys are counted by argument 1 (or 2
	// after a destination).
	numKeys := func(c *Command, dst bool) *Command {
		c.Group = "sorted-set"
		src := KeySpec{Flags: []string{"RO", "access"}, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}
		if dst {
			c.FirstKey, c.LastKey, c.Step = 1, 1, 1
			src.Index = 2
			c.KeySpecs = []KeySpec{{Flags: []string{"OW", "update"}, Index: 1, KeyStep: 1}, src}
		} else {
			c.KeySpecs = []KeySpec{src}
		}
		return c
	}
	ro := []string{"RO", "access"}
	nondet := []string{"nondeterministic_output"}
	register(
		one(&Command{Name: "zadd", Arity: -4, Flags: Write | DenyOOM | Fast, Categories: zsetCat, Since: "1.2.0", Summary: "Add one or more members to a sorted set, or update its score if it already exists", Run: func(c *Ctx) { zaddGeneric(c, false) }}, "RW", "update"),
		one(&Command{Name: "zincrby", Arity: 4, Flags: Write | DenyOOM | Fast, Categories: zsetCat, Since: "1.2.0", Summary: "Increment the score of a member in a sorted set", Run: func(c *Ctx) { zaddGeneric(c, true) }}, "RW", "access", "update"),
		one(&Command{Name: "zrem", Arity: -3, Flags: Write | Fast, Categories: zsetCat, Since: "1.2.0", Summary: "Remove one or more members from a sorted set", Run: cmdZRem}, "RW", "delete"),
		one(&Command{Name: "zcard", Arity: 2, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "1.2.0", Summary: "Get the number of members in a sorted set", Run: cmdZCard}, "RO"),
		one(&Command{Name: "zscore", Arity: 3, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "1.2.0", Summary: "Get the score associated with the given member in a sorted set", Run: cmdZScore}, ro...),
		one(&Command{Name: "zmscore", Arity: -3, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "6.2.0", Summary: "Get the score associated with the given members in a sorted set", Run: cmdZMScore}, ro...),
		one(&Command{Name: "zrank", Arity: 3, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "2.0.0", Summary: "Determine the index of a member in a sorted set", Run: func(c *Ctx) { zrankGeneric(c, false) }}, ro...),
		one(&Command{Name: "zrevrank", Arity: 3, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "2.0.0", Summary: "Determine the index of a member in a sorted set, with scores ordered from high to low", Run: func(c *Ctx) { zrankGeneric(c, true) }}, ro...),
		one(&Command{Name: "zcount", Arity: 4, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "2.0.0", Summary: "Count the members in a sorted set with scores within the given values", Run: cmdZCount}, ro...),
		one(&Command{Name: "zlexcount", Arity: 4, Flags: ReadOnly | Fast, Categories: zsetCat, Since: "2.8.9", Summary: "Count the number of members in a sorted set between a given lexicographical range", Run: cmdZLexCount}, ro...),
		one(&Command{Name: "zrange", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "1.2.0", Summary: "Return a range of members in a sorted set", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrAuto, dirAuto) }}, ro...),
		&Command{Name: "zrangestore", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Categories: zsetCat, Group: "sorted-set", Since: "6.2.0", Summary: "Store a range of members from sorted set into another key",
			KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, Index: 1, KeyStep: 1}, {Flags: ro, Index: 2, KeyStep: 1}},
			Run:      func(c *Ctx) { zrangeGeneric(c, 2, true, zrAuto, dirAuto) }},
		one(&Command{Name: "zrangebyscore", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "1.0.5", Summary: "Return a range of members in a sorted set, by score", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrScore, dirForward) }}, ro...),
		one(&Command{Name: "zrevrangebyscore", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "2.2.0", Summary: "Return a range of members in a sorted set, by score, with scores ordered from high to low", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrScore, dirReverse) }}, ro...),
		one(&Command{Name: "zrangebylex", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "2.8.9", Summary: "Return a range of members in a sorted set, by lexicographical range", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrLex, dirForward) }}, ro...),
		one(&Command{Name: "zrevrangebylex", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "2.8.9", Summary: "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrLex, dirReverse) }}, ro...),
		one(&Command{Name: "zrevrange", Arity: -4, Flags: ReadOnly, Categories: zsetCat, Since: "1.2.0", Summary: "Return a range of members in a sorted set, by index, with scores ordered from high to low", Run: func(c *Ctx) { zrangeGeneric(c, 1, false, zrRank, dirReverse) }}, ro...),
		one(&Command{Name: "zremrangebyrank", Arity: 4, Flags: Write, Categories: zsetCat, Since: "2.0.0", Summary: "Remove all members in a sorted set within the given indexes", Run: func(c *Ctx) { zremrangeGeneric(c, zrRank) }}, "RW", "delete"),
		one(&Command{Name: "zremrangebyscore", Arity: 4, Flags: Write, Categories: zsetCat, Since: "1.2.0", Summary: "Remove all members in a sorted set within the given scores", Run: func(c *Ctx) { zremrangeGeneric(c, zrScore) }}, "RW", "delete"),
		one(&Command{Name: "zremrangebylex", Arity: 4, Flags: Write, Categories: zsetCat, Since: "2.8.9", Summary: "Remove all members in a sorted set between the given lexicographical range", Run: func(c *Ctx) { zremrangeGeneric(c, zrLex) }}, "RW", "delete"),
		one(&Command{Name: "zpopmin", Arity: -2, Flags: Write | Fast, Categories: zsetCat, Since: "5.0.0", Summary: "Remove and return members with the lowest scores in a sorted set", Run: func(c *Ctx) { zpopMinMax(c, false) }}, "RW", "access", "delete"),
		one(&Command{Name: "zpopmax", Arity: -2, Flags: Write | Fast, Categories: zsetCat, Since: "5.0.0", Summary: "Remove and return members with the highest scores in a sorted set", Run: func(c *Ctx) { zpopMinMax(c, true) }}, "RW", "access", "delete"),
		&Command{Name: "zmpop", Arity: -4, Flags: Write, Categories: zsetCat, Group: "sorted-set", Since: "7.0.0", Summary: "Remove and return members with scores in a sorted set",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "delete"}, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, Run: cmdZMPop},
		one(&Command{Name: "zrandmember", Arity: -2, Flags: ReadOnly, Categories: zsetCat, Since: "6.2.0", Summary: "Get one or multiple random elements from a sorted set", Tips: nondet, Run: cmdZRandMember}, ro...),
		numKeys(&Command{Name: "zunion", Arity: -3, Flags: ReadOnly, Categories: zsetCat, Since: "6.2.0", Summary: "Add multiple sorted sets", Run: func(c *Ctx) { zsetOpGeneric(c, nil, 1, opUnion, false) }}, false),
		numKeys(&Command{Name: "zinter", Arity: -3, Flags: ReadOnly, Categories: zsetCat, Since: "6.2.0", Summary: "Intersect multiple sorted sets", Run: func(c *Ctx) { zsetOpGeneric(c, nil, 1, opInter, false) }}, false),
		numKeys(&Command{Name: "zdiff", Arity: -3, Flags: ReadOnly, Categories: zsetCat, Since: "6.2.0", Summary: "Subtract multiple sorted sets", Run: func(c *Ctx) { zsetOpGeneric(c, nil, 1, opDiff, false) }}, false),
		numKeys(&Command{Name: "zunionstore", Arity: -4, Flags: Write | DenyOOM, Categories: zsetCat, Since: "2.0.0", Summary: "Add multiple sorted sets and store the resulting sorted set in a new key", Run: func(c *Ctx) { zsetOpGeneric(c, c.Args[1], 2, opUnion, false) }}, true),
		numKeys(&Command{Name: "zinterstore", Arity: -4, Flags: Write | DenyOOM, Categories: zsetCat, Since: "2.0.0", Summary: "Intersect multiple sorted sets and store the resulting sorted set in a new key", Run: func(c *Ctx) { zsetOpGeneric(c, c.Args[1], 2, opInter, false) }}, true),
		numKeys(&Command{Name: "zdiffstore", Arity: -4, Flags: Write | DenyOOM, Categories: zsetCat, Since: "6.2.0", Summary: "Subtract multiple sorted sets and store the resulting sorted set in a new key", Run: func(c *Ctx) { zsetOpGeneric(c, c.Args[1], 2, opDiff, false) }}, true),
		numKeys(&Command{Name: "zintercard", Arity: -3, Flags: ReadOnly, Categories: zsetCat, Since: "7.0.0", Summary: "Intersect multiple sorted sets and return the cardinality of the result", Run: func(c *Ctx) { zsetOpGeneric(c, nil, 1, opInter, true) }}, false),
		one(&Command{Name: "zscan", Arity: -3, Flags: ReadOnly, Categories: zsetCat, Since: "2.8.0", Summary: "Incrementally iterate sorted sets elements and associated scores", Tips: nondet, Run: cmdZScan}, ro...),
	)
}

// Redis's listpack limits (zset-max-listpack-entries / -value at their
// defaults): a sorted set within both is reported as "listpack", and
// Redis converts it to a skiplist for good when it outgrows them.
const (
	zsetMaxListpackEntries = 128
	zsetMaxListpackValue   = 64
)

const (
	errZNaN          = "ERR resulting score is not a number (NaN)"
	errZMinMaxFloat  = "ERR min or max is not a float"
	errZMinMaxLex    = "ERR min or max not valid string range item"
	errZPositive     = "ERR value is out of range, must be positive"
	errZCountPos     = "ERR count should be greater than 0"
	errZNumKeysPos   = "ERR numkeys should be greater than 0"
	errZWeightFloat  = "ERR weight value is not a float"
	errZLimitNeg     = "ERR LIMIT can't be negative"
	errZRandRange    = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errZRandOutRange = "ERR value is out of range"
)

// zsetEncoding is OBJECT ENCODING for a sorted set.
func zsetEncoding(m store.Meta) string {
	if decodeSizeHeader(m.Body).big {
		return "skiplist"
	}
	return "listpack"
}

// Sub keys of the two indexes.
const (
	zTagMember = 'm'
	zTagScore  = 's'
)

func zMemberSub(member []byte) []byte {
	return store.HashedSub(zSub(zTagMember, len(member)), member)
}

// zSub starts a sub key with tag, with room for 8 bytes and n more: one
// allocation per key, not one per part.
func zSub(tag byte, n int) []byte { return append(make([]byte, 0, 9+n), tag) }

// zScoreSub is the score index key of member; -0 sorts as 0.
func zScoreSub(score float64, member []byte) []byte {
	if score == 0 {
		score = 0
	}
	return append(store.SortableFloat(zSub(zTagScore, len(member)), score), member...)
}

var negZero = math.Copysign(0, -1)

// zEntryOf decodes a score index entry.
func zEntryOf(sub, value []byte) (member []byte, score float64) {
	score = store.FloatFromSortable(sub[1:9])
	if len(value) > 0 {
		score = negZero
	}
	return sub[9:], score
}

// zScoreBound is the first score index key with a score of f or more
// (f is never NaN).
func zScoreBound(f float64) []byte {
	if f == 0 {
		f = 0
	}
	return store.SortableFloat(zSub(zTagScore, 0), f)
}

// zAfterScore is the first score index key with a score above f.
func zAfterScore(f float64) []byte {
	b := zScoreBound(f)
	binary.BigEndian.PutUint64(b[1:], binary.BigEndian.Uint64(b[1:])+1)
	return b
}

var (
	zScoreFirst = []byte{zTagScore}
	zScoreEnd   = []byte{zTagScore + 1}
)

// zset is an open sorted set of the current command.
type zset struct {
	c      *Ctx
	key    []byte
	meta   store.Meta
	h      sizeHeader
	levels int // of the rank index; 0 when the set has none
	exists bool
	// lo and hi bound the score index's live entries (nil: its ends). Pops
	// leave deletions at an end of the index that a read from the end
	// would step over one by one until they are compacted away, each pop
	// over all the ones before: ZPOPMIN starts at lo and ZPOPMAX ends at
	// hi instead. A pop moves its bound past what it popped, a write below
	// lo (above hi) moves it back. Every read of the index (z.each) keeps
	// within them too.
	lo, hi []byte
}

// zsetLocal is what the write Tx remembers of a sorted set between the
// commands of its group (store.Tx.Local): where rankAdd last found its
// blocks, and the first live entry of the score index as a read from lo
// last found it, while no write came before it. A script that takes the
// first due entry and removes it (ZRANGEBYSCORE ... LIMIT 0 1, then ZREM:
// a delayed job queue) then moves lo past it, as a pop does, instead of
// leaving it for the next read to step over.
type zsetLocal struct {
	path   *rankPath
	first  []byte
	bounds *rankBounds // see findPath
	seeks  int64       // findPath's seeks of Pebble in this Tx
}

// local returns the set's memo in a write Tx, made if create and there
// is none; nil otherwise. Only what fills it creates it: a write to a set
// the Tx remembers nothing of has nothing to forget.
func (z *zset) local(create bool) *zsetLocal {
	if !z.c.Tx.Writable() {
		return nil
	}
	l, _ := z.c.Tx.Local(z.key).(*zsetLocal)
	if l == nil && create {
		l = &zsetLocal{}
		z.c.Tx.SetLocal(z.key, l)
	}
	return l
}

// zScoreMin is at or before every score index key.
var zScoreMin = zScoreSub(math.Inf(-1), nil)

// removedAt notes that the score index entry ssub is gone: if it was the
// first live one, nothing live is left before ssub+"\0".
func (z *zset) removedAt(ssub []byte) {
	if l := z.local(false); l != nil && l.first != nil && bytes.Equal(l.first, ssub) {
		z.lo, l.first = append(ssub[:len(ssub):len(ssub)], 0), nil
	}
}

// cmpOr returns bound, or end if there is none.
func cmpOr(bound, end []byte) []byte {
	if bound != nil {
		return bound
	}
	return end
}

// zsetOf opens the existing sorted set key whose metadata is m. Its header
// is a sizeHeader followed, when the set has a rank index or pop bounds,
// by one byte: the index's levels (maybe 0); then, with pop bounds, lo and
// hi, each after its length (2 bytes, 0: none).
func zsetOf(c *Ctx, key []byte, m store.Meta) *zset {
	z := &zset{c: c, key: key, meta: m, h: decodeSizeHeader(m.Body), exists: true}
	if len(m.Body) > 9 {
		z.levels = int(m.Body[9])
	}
	if b := m.Body; len(b) > 10 {
		b = b[10:]
		for _, bound := range []*[]byte{&z.lo, &z.hi} {
			n := int(binary.BigEndian.Uint16(b))
			if n > 0 {
				*bound = append([]byte(nil), b[2:2+n]...)
			}
			b = b[2+n:]
		}
	}
	return z
}

// zsetLookup opens key as a sorted set; wrong reports (and answers)
// WRONGTYPE. A missing key gives an empty, not existing zset.
func zsetLookup(c *Ctx, key []byte) (z *zset, wrong bool) {
	m, ok, wrong := c.LookupShared(key, store.TypeZSet) // save builds a new body
	if wrong {
		return nil, true
	}
	if !ok {
		return &zset{c: c, key: key}, false
	}
	return zsetOf(c, key, m), false
}

// zsetLookupRanked is zsetLookup for a read that uses the rank index: a
// read on live state reads an indexed set again from a snapshot, so that
// the index and the members it counts agree.
func zsetLookupRanked(c *Ctx, key []byte) (z *zset, wrong bool) {
	z, wrong = zsetLookup(c, key)
	if !wrong && z.levels > 0 && c.Tx.Pin() {
		return zsetLookup(c, key)
	}
	return z, wrong
}

// score returns member's score.
func (z *zset) score(member []byte) (float64, bool) {
	if z.h.n == 0 { // missing, or new and still empty
		return 0, false
	}
	v, ok := z.c.Tx.Member(z.key, zMemberSub(member))
	if !ok {
		return 0, false
	}
	return store.FloatFromSortable(v), true
}

// write stores member with score (a listpack has no -0).
func (z *zset) write(member []byte, score float64) {
	if !z.h.big && score == 0 {
		score = 0
	}
	z.c.Tx.SetMember(z.key, zMemberSub(member), store.SortableFloat(nil, score))
	var v []byte
	if math.Signbit(score) && score == 0 {
		v = []byte{'-'}
	}
	ssub := zScoreSub(score, member)
	z.c.Tx.SetMember(z.key, ssub, v)
	if z.lo != nil && string(ssub) < string(z.lo) {
		z.lo = ssub
	}
	if l := z.local(false); l != nil && l.first != nil && string(ssub) <= string(l.first) {
		l.first = nil // an entry before it, or itself again
	}
	if z.hi != nil && string(ssub) >= string(z.hi) {
		z.hi = append(ssub[:len(ssub):len(ssub)], 0)
	}
}

// insert adds a new member, converting to a skiplist as Redis does before
// the insertion that would outgrow the listpack.
func (z *zset) insert(member []byte, score float64) {
	if !z.h.big && (z.h.n+1 > zsetMaxListpackEntries || len(member) > zsetMaxListpackValue) {
		z.h.big = true
	}
	z.h.n++
	z.write(member, score)
	if z.levels > 0 {
		z.rankAdd(zScoreSub(score, member), 1)
	}
}

// update changes an existing member's score.
func (z *zset) update(member []byte, old, score float64) {
	z.c.Tx.DeleteMember(z.key, zScoreSub(old, member))
	z.removedAt(zScoreSub(old, member))
	if z.levels > 0 {
		z.rankAdd(zScoreSub(old, member), -1)
	}
	z.write(member, score)
	if z.levels > 0 {
		z.rankAdd(zScoreSub(score, member), 1)
	}
}

// remove deletes an existing member.
func (z *zset) remove(member []byte, score float64) {
	z.c.Tx.DeleteMember(z.key, zMemberSub(member))
	z.c.Tx.DeleteMember(z.key, zScoreSub(score, member))
	z.removedAt(zScoreSub(score, member))
	z.h.n--
	if z.levels > 0 && z.h.n > 0 {
		z.rankAdd(zScoreSub(score, member), -1)
	}
}

// save writes the header back and raises the command's keyspace event, or
// deletes the key once it is empty (Redis never keeps an empty sorted set),
// raising "del" too. The expiry is kept. The rank index is built or dropped
// here when the set crossed its thresholds.
func (z *zset) save(event string) {
	if z.h.n == 0 {
		if z.exists {
			z.c.Tx.Delete(z.key)
			z.c.Tx.Notify(store.NotifyZSet, event, z.key)
			z.c.Tx.Notify(store.NotifyGeneric, "del", z.key)
		}
		z.levels = 0
		return
	}
	z.store()
	z.c.Tx.Notify(store.NotifyZSet, event, z.key)
}

// store writes the header of a set that is not empty, building or
// dropping the rank index when the set crossed its thresholds.
func (z *zset) store() {
	switch {
	case z.levels == 0 && z.h.n >= zrankBuildAt:
		z.rankBuild()
	case z.levels > 0 && z.h.n < zrankDropAt:
		z.rankDrop()
	}
	body := z.h.encode()
	if z.levels > 0 || z.lo != nil || z.hi != nil {
		body = append(body, byte(z.levels))
	}
	if z.lo != nil || z.hi != nil {
		for _, bound := range [][]byte{z.lo, z.hi} {
			body = append(binary.BigEndian.AppendUint16(body, uint16(len(bound))), bound...)
		}
	}
	z.c.Tx.Put(z.key, store.Meta{Type: store.TypeZSet, ExpireAt: z.meta.ExpireAt, Body: body})
	z.exists = true
}

// zentry is a member with its score.
type zentry struct {
	member []byte
	score  float64
}

// each walks the score index within [from, to) (nil: unbounded), forward
// or backward, until fn returns false.
func (z *zset) each(from, to []byte, reverse bool, fn func(member []byte, score float64) bool) {
	if z.h.n == 0 {
		return
	}
	if from == nil || z.lo != nil && string(from) < string(z.lo) {
		from = cmpOr(z.lo, zScoreFirst)
	}
	if to == nil || z.hi != nil && string(to) > string(z.hi) {
		to = cmpOr(z.hi, zScoreEnd)
	}
	if bytes.Compare(from, to) >= 0 {
		return
	}
	// A forward read from the first possible entry sees the first live one
	// first.
	var l *zsetLocal
	if !reverse && (z.lo != nil && bytes.Equal(from, z.lo) || z.lo == nil && string(from) <= string(zScoreMin)) {
		l = z.local(true)
	}
	z.c.Tx.Members(z.key, from, to, reverse, func(sub, value []byte) bool {
		if l != nil {
			l.first, l = append(l.first[:0], sub...), nil
		}
		m, s := zEntryOf(sub, value)
		return fn(m, s)
	})
}

// trimmedBounds moves the pop bounds past a run of entries just removed,
// first to last in score order, when nothing is left before it (or after
// it): a sliding window (ZADD now, ZREMRANGEBYSCORE of what is older)
// would otherwise leave every entry it removed for the next removal to
// step over. Each check walks from the bound to the run and stops at the
// first live entry, so it steps over the deletions left since the bound
// last moved, once.
func (z *zset) trimmedBounds(first, last zentry) {
	lo, hi := zScoreSub(first.score, first.member), zScoreSub(last.score, last.member)
	live := false
	z.each(nil, lo, false, func([]byte, float64) bool { live = true; return false })
	if !live {
		z.lo = append(hi, 0)
	}
	live = false
	z.each(append(hi[:len(hi):len(hi)], 0), nil, false, func([]byte, float64) bool { live = true; return false })
	if !live {
		z.hi = lo
	}
}

// ends returns the first and last entries (the set must not be empty).
func (z *zset) ends() (first, last zentry) {
	z.each(nil, nil, false, func(m []byte, s float64) bool {
		first = zentry{append([]byte(nil), m...), s}
		return false
	})
	z.each(nil, nil, true, func(m []byte, s float64) bool {
		last = zentry{append([]byte(nil), m...), s}
		return false
	})
	return first, last
}

// byRank returns the entries of ranks start..end (0-based, inclusive, within
// bounds), in reverse order of score when rev. It walks from the nearer end,
// or from where the rank index puts the start when both ends are far.
func (z *zset) byRank(start, end int64, rev bool) []zentry {
	n := end - start + 1
	out := make([]zentry, 0, min(n, 1<<16))
	// Ranks of the forward order.
	fs, fe := start, end
	if rev {
		fs, fe = z.h.n-1-end, z.h.n-1-start
	}
	backward := fs > z.h.n-1-fe
	skip := fs
	if backward {
		skip = z.h.n - 1 - fe
	}
	var from []byte
	if z.levels > 0 && skip > 2*zrankLeaf {
		// Far from both ends: the rank index finds the start.
		from, skip = z.seekRank(fs)
		backward = false
	}
	z.each(from, nil, backward, func(m []byte, s float64) bool {
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, zentry{append([]byte(nil), m...), s})
		return int64(len(out)) < n
	})
	if backward != rev {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// replyEntries writes entries as ZRANGE does: members, with their scores
// after each (RESP2) or as [member, score] pairs (RESP3) when withScores.
func replyEntries(c *Ctx, out []zentry, withScores bool) {
	r := newEntryReply(c, withScores)
	for _, e := range out {
		r.add(e.member, e.score)
	}
	r.done()
}

// entryReply streams a reply of sorted set entries as a walk finds them;
// done puts the count in front.
type entryReply struct {
	c          *Ctx
	withScores bool
	mark, n    int
}

func newEntryReply(c *Ctx, withScores bool) *entryReply {
	return &entryReply{c: c, withScores: withScores, mark: c.W.Len()}
}

func (r *entryReply) add(member []byte, score float64) {
	w := r.c.W
	if r.withScores && w.Proto > 2 {
		w.ArrayLen(2)
	}
	w.Bulk(member)
	if r.withScores {
		w.Double(score)
	}
	r.n++
}

func (r *entryReply) done() {
	w := r.c.W
	w.LenBefore(r.mark, func() {
		if r.withScores && w.Proto == 2 {
			w.ArrayLen(2 * r.n)
		} else {
			w.ArrayLen(r.n)
		}
	})
}

// ZADD/ZINCRBY flags (Redis's ZADD_IN_*).
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddCH
	zaddIncr
)

// zaddGeneric is ZADD and ZINCRBY (which is ZADD INCR, options included:
// "ZINCRBY k nx m" is a syntax error because the pairs are then odd).
func zaddGeneric(c *Ctx, incrCmd bool) {
	flags := 0
	if incrCmd {
		flags = zaddIncr
	}
	idx := 2
	for ; idx < len(c.Args); idx++ {
		switch strings.ToLower(c.Arg(idx)) {
		case "nx":
			flags |= zaddNX
		case "xx":
			flags |= zaddXX
		case "ch":
			flags |= zaddCH
		case "incr":
			flags |= zaddIncr
		case "gt":
			flags |= zaddGT
		case "lt":
			flags |= zaddLT
		default:
			goto parsed
		}
	}
parsed:
	elements := len(c.Args) - idx
	if elements%2 != 0 || elements == 0 {
		c.W.Error(ErrSyntax)
		return
	}
	elements /= 2
	nx, xx, gt, lt := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0
	if nx && xx {
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		c.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	incr := flags&zaddIncr != 0
	if incr && elements > 1 {
		c.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, elements)
	for j := range scores {
		f, ok := num.ParseFloat(c.Args[idx+2*j])
		if !ok {
			c.W.Error(ErrNotFloat)
			return
		}
		scores[j] = f
	}
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	var added, updated, processed int64
	var score float64
	event := "zadd"
	if incr {
		event = "zincr"
	}
	if z.exists || !xx {
		for j := range scores {
			member := c.Args[idx+2*j+1]
			res, newScore := z.add(member, scores[j], flags)
			if res == zaddNaN {
				if added+updated > 0 {
					z.save(event) // the members added before the error stay
				}
				c.W.Error(errZNaN)
				return
			}
			switch res {
			case zaddAdded:
				added++
			case zaddUpdated:
				updated++
			}
			if res != zaddNop {
				processed++
				score = newScore
			}
		}
		// Only a change touches the key (WATCH), as in Redis.
		if added+updated > 0 {
			z.save(event)
		}
	}
	switch {
	case incr && processed > 0:
		c.W.Double(score)
	case incr:
		c.W.Null()
	case flags&zaddCH != 0:
		c.W.Int(added + updated)
	default:
		c.W.Int(added)
	}
}

// Outcomes of zset.add.
const (
	zaddNop = iota
	zaddAdded
	zaddUpdated
	zaddSame // processed, score unchanged
	zaddNaN
)

// add is Redis's zsetAdd: it adds or updates member under the ZADD flags
// and returns what happened and the member's new score.
func (z *zset) add(member []byte, score float64, flags int) (int, float64) {
	cur, found := z.score(member)
	if found {
		if flags&zaddNX != 0 {
			return zaddNop, 0
		}
		if flags&zaddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return zaddNaN, 0
			}
		}
		if (flags&zaddLT != 0 && score >= cur) || (flags&zaddGT != 0 && score <= cur) {
			return zaddNop, 0
		}
		if score != cur {
			z.update(member, cur, score)
			return zaddUpdated, score
		}
		return zaddSame, score
	}
	if flags&zaddXX != 0 {
		return zaddNop, 0
	}
	z.insert(member, score)
	return zaddAdded, score
}

func cmdZRem(c *Ctx) {
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	if !z.exists {
		c.W.Int(0)
		return
	}
	var n int64
	for _, member := range c.Args[2:] {
		if s, ok := z.score(member); ok {
			z.remove(member, s)
			n++
			if z.h.n == 0 {
				break
			}
		}
	}
	if n > 0 {
		z.save("zrem")
	}
	c.W.Int(n)
}

func cmdZCard(c *Ctx) {
	if z, wrong := zsetLookup(c, c.Args[1]); !wrong {
		c.W.Int(z.h.n)
	}
}

func cmdZScore(c *Ctx) {
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	if s, ok := z.score(c.Args[2]); ok {
		c.W.Double(s)
	} else {
		c.W.Null()
	}
}

func cmdZMScore(c *Ctx) {
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, member := range c.Args[2:] {
		if s, ok := z.score(member); ok {
			c.W.Double(s)
		} else {
			c.W.Null()
		}
	}
}

// zrankGeneric is ZRANK and ZREVRANK: the number of members before member
// in the score index (after it for ZREVRANK), from the rank index or
// counted from that end.
func zrankGeneric(c *Ctx, rev bool) {
	z, wrong := zsetLookupRanked(c, c.Args[1])
	if wrong {
		return
	}
	s, ok := z.score(c.Args[2])
	if !ok {
		c.W.Null()
		return
	}
	self := zScoreSub(s, c.Args[2])
	if z.levels > 0 {
		rank := z.rankBefore(self[1:])
		if rev {
			rank = z.h.n - 1 - rank
		}
		c.W.Int(rank)
		return
	}
	var rank int64
	count := func([]byte, float64) bool { rank++; return true }
	if rev {
		z.each(append(self, 0), nil, false, count)
	} else {
		z.each(nil, self, false, count)
	}
	c.W.Int(rank)
}

// ZPOPMIN/ZPOPMAX key [count].
func zpopMinMax(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := num.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error(errZPositive)
			return
		}
		count = n
	}
	// RESP3 nests [member, score] pairs only when a count was given.
	ZPop(c, c.Args[1:2], max, count, false, c.W.Proto > 2 && count != -1, false)
}

// ZPop pops up to count (-1: one, unnested) members with the lowest (or
// highest) scores from the first existing key of keys and replies as Redis's
// genericZpopCommand: emitKey prefixes the key (BZPOPMIN, ZMPOP), nested
// gives [member, score] pairs, nilWhenEmpty answers a null array rather than
// an empty one when no key exists. It returns false, having written
// nothing, when no key exists and nilWhenEmpty is false and emitKey is set:
// that is the case where a blocking wrapper (BZPOPMIN, BZMPOP) waits.
// A key of another type answers WRONGTYPE (and returns true).
func ZPop(c *Ctx, keys [][]byte, max bool, count int64, emitKey, nested, nilWhenEmpty bool) bool {
	var z *zset
	for _, k := range keys {
		var wrong bool
		z, wrong = zsetLookup(c, k)
		if wrong {
			return true
		}
		if z.exists {
			break
		}
	}
	if z == nil || !z.exists {
		switch {
		case emitKey && !nilWhenEmpty:
			return false
		case nilWhenEmpty:
			c.W.NullArray()
		default:
			c.W.ArrayLen(0)
		}
		return true
	}
	if count == 0 {
		c.W.ArrayLen(0)
		return true
	}
	if count == -1 {
		count = 1
	}
	n := min(count, z.h.n)
	switch {
	case !nested && !emitKey:
		c.W.ArrayLen(int(2 * n))
	case nested && !emitKey:
		c.W.ArrayLen(int(n))
	case !nested && emitKey:
		c.W.ArrayLen(int(2*n + 1))
		c.W.Bulk(z.key)
	default:
		c.W.ArrayLen(2)
		c.W.Bulk(z.key)
		c.W.ArrayLen(int(n))
	}
	var out []zentry
	z.each(nil, nil, max, func(m []byte, s float64) bool {
		out = append(out, zentry{append([]byte(nil), m...), s})
		return int64(len(out)) < n
	})
	if len(out) > 0 { // the next pops start past these
		last := zScoreSub(out[len(out)-1].score, out[len(out)-1].member)
		if max {
			z.hi = last
		} else {
			z.lo = append(last, 0)
		}
	}
	for _, e := range out {
		if nested {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(e.member)
		c.W.Double(e.score)
		z.remove(e.member, e.score)
	}
	if max {
		z.save("zpopmax")
	} else {
		z.save("zpopmin")
	}
	return true
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func cmdZMPop(c *Ctx) {
	keys, min, count, ok := parseMPop(c, 1, "min", "max")
	if ok {
		ZPop(c, keys, !min, count, true, true, true)
	}
}

func zrand(c *Ctx) *rand.Rand { return commandRand(c, 0x7a736574) }

// randomEntry returns a random member.
func (z *zset) randomEntry(rng *rand.Rand) zentry {
	sub, v := randomMember(z.c, z.key, []byte{zTagMember}, z.h.n, rng, nil)
	if sub == nil {
		return zentry{}
	}
	return zentry{store.HashedMember(sub[1:]), store.FloatFromSortable(v)}
}

// ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(c *Ctx) {
	if len(c.Args) == 2 {
		z, wrong := zsetLookup(c, c.Args[1])
		switch {
		case wrong:
		case !z.exists:
			c.W.Null()
		default:
			c.W.Bulk(z.randomEntry(zrand(c)).member)
		}
		return
	}
	count, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if count == math.MinInt64 {
		c.W.Error(errZRandRange)
		return
	}
	withScores := false
	if len(c.Args) > 4 || (len(c.Args) == 4 && !strings.EqualFold(c.Arg(3), "withscores")) {
		c.W.Error(ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withScores = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			c.W.Error(errZRandOutRange)
			return
		}
	}
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	if !z.exists || count == 0 {
		c.W.ArrayLen(0)
		return
	}
	rng := zrand(c)
	if count < 0 || count == 1 {
		zrandRepeats(c, z, rng, max(count, -count), withScores)
		return
	}
	var out []zentry
	switch {
	case count >= z.h.n:
		// The whole set, as Redis: in reverse rank order.
		out = z.byRank(0, z.h.n-1, true)
	case count*3 > z.h.n:
		// Many of them: drop random members from the whole set.
		out = z.byRank(0, z.h.n-1, false)
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		out = out[:count]
	default:
		seen := make(map[string]bool, count)
		for int64(len(out)) < count {
			e := z.randomEntry(rng)
			if !seen[string(e.member)] {
				seen[string(e.member)] = true
				out = append(out, e)
			}
		}
	}
	replyEntries(c, out, withScores)
}

// zrandRepeats answers ZRANDMEMBER with a negative count: n picks that may
// repeat, written as they are drawn.
func zrandRepeats(c *Ctx, z *zset, rng *rand.Rand, n int64, withScores bool) {
	guard, ok := startRepeatReply(c, n, withScores)
	if !ok {
		return
	}
	r := newEntryReply(c, withScores)
	for range n {
		e := z.randomEntry(rng)
		r.add(e.member, e.score)
		if guard.over() {
			return
		}
	}
	r.done()
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]. A listpack-sized set is
// returned whole with cursor 0, in score order, as Redis does; a larger one
// is walked in member-index hash order, the cursor being a hash position.
func cmdZScan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[2])
	if !ok {
		c.W.Error(errCursor)
		return
	}
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	if !z.exists {
		emptyScan(c)
		return
	}
	o, ok := parseScanOptions(c, 3, false)
	if !ok {
		return
	}
	count, pat := o.count, o.pat
	var out []zentry
	keep := func(m []byte, s float64) {
		if pat == nil || glob.Match(pat, m, false) {
			out = append(out, zentry{append([]byte(nil), m...), s})
		}
	}
	var next uint64
	if !z.h.big {
		z.each(nil, nil, false, func(m []byte, s float64) bool { keep(m, s); return true })
	} else {
		seen := int64(0)
		var last uint64
		from := append([]byte{zTagMember}, store.PosBytes(cursor)...)
		c.Tx.Members(z.key, from, []byte{zTagMember + 1}, false, func(sub, v []byte) bool {
			pos := store.HashedPos(sub[1:])
			if seen >= count && pos != last {
				next = pos
				return false
			}
			seen++
			last = pos
			keep(store.HashedMember(sub[1:]), store.FloatFromSortable(v))
			return true
		})
	}
	c.W.ArrayLen(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.ArrayLen(2 * len(out))
	for _, e := range out {
		c.W.Bulk(e.member)
		c.W.Bulk(zscanScore(e.score, z.h.big))
	}
}

// zscanScore is a score as ZSCAN shows it: the text a listpack holds
// (integral scores within ±2^62 are stored as integers) or %.17g.
func zscanScore(f float64, big bool) []byte {
	if !big && f == math.Trunc(f) && f >= -(1<<62) && f <= 1<<62 {
		return num.AppendInt(nil, int64(f))
	}
	return num.FormatDouble(f)
}
