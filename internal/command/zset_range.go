package command

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// Sorted set ranges (by rank, score and lex), range removal and the set
// operations ZUNION, ZINTER, ZDIFF and their STORE forms. See zset.go for
// the storage.

// Range kinds and directions of zrangeGeneric (Redis's zrange_type and
// zrange_direction; "auto" means not fixed by the command name).
const (
	zrAuto = iota
	zrRank
	zrScore
	zrLex
)

const (
	dirAuto = iota
	dirForward
	dirReverse
)

// scoreRange is Redis's zrangespec.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseScoreBound parses one end of a score range as zslParseRange: an
// optional "(" for an open end, then C strtod (leading spaces, "inf",
// hexadecimal... accepted, "" is 0) up to the end of the string or a NUL
// byte; NaN is refused.
func parseScoreBound(b []byte) (f float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		b, ex = b[1:], true
	}
	f, n := num.Strtod(b)
	if (n < len(b) && b[n] != 0) || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

func parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	if r.min, r.minex, ok = parseScoreBound(min); !ok {
		return r, false
	}
	r.max, r.maxex, ok = parseScoreBound(max)
	return r, ok
}

// bounds returns the score index span [from, to) of the range.
func (r scoreRange) bounds() (from, to []byte) {
	if r.minex {
		from = zAfterScore(r.min)
	} else {
		from = zScoreBound(r.min)
	}
	if r.maxex {
		to = zScoreBound(r.max)
	} else {
		to = zAfterScore(r.max)
	}
	return from, to
}

// lexBound is one end of a lex range: "-" (the smallest string), "+" (the
// greatest), or a string, inclusive ("[") or exclusive ("(").
type lexBound struct {
	inf int // -1 for "-", +1 for "+", 0 for a string
	s   []byte
	ex  bool
}

type lexRange struct{ min, max lexBound }

// parseLexBound is zslParseLexRangeItem (a C string check: "+" may be
// followed by a NUL and anything).
func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1, ex: true}, true
		}
		return lexBound{inf: -1, ex: true}, true
	case '(':
		return lexBound{s: b[1:], ex: true}, true
	case '[':
		return lexBound{s: b[1:]}, true
	}
	return lexBound{}, false
}

func parseLexRange(min, max []byte) (r lexRange, ok bool) {
	if r.min, ok = parseLexBound(min); !ok {
		return r, false
	}
	r.max, ok = parseLexBound(max)
	return r, ok
}

// cmpLex compares a string (inf 0) or a bound as Redis's sdscmplex.
func cmpLex(a, b lexBound) int {
	switch {
	case a.inf == b.inf && a.inf != 0:
		return 0
	case a.inf == -1 || b.inf == 1:
		return -1
	case a.inf == 1 || b.inf == -1:
		return 1
	}
	return bytes.Compare(a.s, b.s)
}

func (r lexRange) gteMin(v []byte) bool {
	c := cmpLex(lexBound{s: v}, r.min)
	return c > 0 || (c == 0 && !r.min.ex)
}

func (r lexRange) lteMax(v []byte) bool {
	c := cmpLex(lexBound{s: v}, r.max)
	return c < 0 || (c == 0 && !r.max.ex)
}

// empty reports a range that can hold nothing (zslIsInLexRange's first test).
func (r lexRange) empty() bool {
	c := cmpLex(r.min, r.max)
	return c > 0 || (c == 0 && (r.min.ex || r.max.ex))
}

// keys returns the span [from, to) of the score index that a non-empty
// lex range covers among members of the given score.
func (r lexRange) keys(score float64) (from, to []byte) {
	from = zScoreSub(score, r.min.s) // "-" too: nil s
	if r.min.ex && r.min.inf == 0 {
		from = append(from, 0) // the first key after min
	}
	switch {
	case r.max.inf == 1:
		to = store.PrefixEnd(zScoreSub(score, nil))
	case r.max.ex:
		to = zScoreSub(score, r.max.s)
	default:
		to = append(zScoreSub(score, r.max.s), 0)
	}
	return from, to
}

// walkScore visits the members of a score range in order (reverse: from
// the highest), skipping offset of them (a negative offset skips all, as
// Redis's loop does) and visiting at most limit (negative: no limit).
func (z *zset) walkScore(r scoreRange, reverse bool, offset, limit int64, fn func(m []byte, s float64)) {
	if offset < 0 || (offset > 0 && offset >= z.h.n) {
		return
	}
	from, to := r.bounds()
	z.each(from, to, reverse, func(m []byte, s float64) bool {
		if offset > 0 {
			offset--
			return true
		}
		if limit == 0 {
			return false
		}
		limit--
		fn(m, s)
		return true
	})
}

// walkLex visits the members of a lex range like walkScore. Lex ranges
// assume equal scores; when the set has them (first and last scores are
// equal) the walk seeks, otherwise it scans as Redis's listpack code does.
func (z *zset) walkLex(r lexRange, reverse bool, offset, limit int64, fn func(m []byte, s float64)) {
	if !z.exists || r.empty() || offset < 0 || (offset > 0 && offset >= z.h.n) {
		return
	}
	first, last := z.ends()
	if !r.gteMin(last.member) || !r.lteMax(first.member) {
		return
	}
	var from, to []byte
	if first.score == last.score {
		if !reverse && r.min.inf == 0 {
			from = zScoreSub(first.score, r.min.s)
		}
		if reverse && r.max.inf == 0 {
			to = append(zScoreSub(first.score, r.max.s), 0)
		}
	}
	started := false
	z.each(from, to, reverse, func(m []byte, s float64) bool {
		if !started {
			if reverse && !r.lteMax(m) || !reverse && !r.gteMin(m) {
				return true
			}
			started = true
		}
		if reverse && !r.gteMin(m) || !reverse && !r.lteMax(m) {
			return false
		}
		if offset > 0 {
			offset--
			return true
		}
		if limit == 0 {
			return false
		}
		limit--
		fn(m, s)
		return true
	})
}

// zrangeGeneric is ZRANGE, ZRANGESTORE and the older range commands
// (Redis's zrangeGenericCommand): the source key is at argument argStart,
// followed by min and max and the options the command allows.
func zrangeGeneric(c *Ctx, argStart int, store bool, kind, dir int) {
	key := c.Args[argStart]
	minIdx, maxIdx := argStart+1, argStart+2
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := argStart + 3; j < len(c.Args); j++ {
		left := len(c.Args) - j - 1
		opt := strings.ToLower(c.Arg(j))
		switch {
		case !store && opt == "withscores":
			withScores = true
		case opt == "limit" && left >= 2:
			var ok bool
			if offset, ok = num.ParseInt(c.Args[j+1]); ok {
				limit, ok = num.ParseInt(c.Args[j+2])
			}
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			j += 2
		case dir == dirAuto && opt == "rev":
			dir = dirReverse
		case kind == zrAuto && opt == "bylex":
			kind = zrLex
		case kind == zrAuto && opt == "byscore":
			kind = zrScore
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if dir == dirAuto {
		dir = dirForward
	}
	if kind == zrAuto {
		kind = zrRank
	}
	if limit != -1 && kind == zrRank {
		c.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == zrLex {
		c.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	rev := dir == dirReverse
	if rev && kind != zrRank {
		minIdx, maxIdx = maxIdx, minIdx // given as max, min
	}
	var start, end int64
	var sr scoreRange
	var lr lexRange
	ok := true
	switch kind {
	case zrRank:
		if start, ok = num.ParseInt(c.Args[minIdx]); ok {
			end, ok = num.ParseInt(c.Args[maxIdx])
		}
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
	case zrScore:
		if sr, ok = parseScoreRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.W.Error(errZMinMaxFloat)
			return
		}
	case zrLex:
		if lr, ok = parseLexRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.W.Error(errZMinMaxLex)
			return
		}
	}
	if store {
		defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // the source is a read (keymiss events)
	}
	var z *zset
	var wrong bool
	if kind == zrRank {
		z, wrong = zsetLookupRanked(c, key)
	} else {
		z, wrong = zsetLookup(c, key)
	}
	if wrong {
		return
	}
	var out []zentry
	collect := func(m []byte, s float64) { out = append(out, zentry{append([]byte(nil), m...), s}) }
	var reply *entryReply
	if !store { // a reply streams what the walk finds
		reply = newEntryReply(c, withScores)
		collect = reply.add
	}
	bigStart := false // Redis sizes ZRANGESTORE's result when it knows it
	switch kind {
	case zrRank:
		if start, end, ok = rankRange(start, end, z.h.n); ok {
			out = z.byRank(start, end, rev)
			bigStart = end-start+1 > zsetMaxListpackEntries
		}
	case zrScore:
		z.walkScore(sr, rev, offset, limit, collect)
	case zrLex:
		z.walkLex(lr, rev, offset, limit, collect)
	}
	if store {
		c.W.Int(zsetStore(c, c.Args[1], out, bigStart, false, "zrangestore"))
		return
	}
	for _, e := range out {
		reply.add(e.member, e.score)
	}
	reply.done()
}

// rankRange turns start and end (negative: from the end) into a valid
// inclusive range of a set of n, or reports it empty.
func rankRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = max(start, 0)
	if start > end || start >= n {
		return 0, 0, false
	}
	return start, min(end, n-1), true
}

// zsetStore replaces dst with a sorted set of entries (sorted, distinct),
// raising event, and returns its size; an empty result deletes dst ("del"). ZRANGESTORE builds its
// result member by member from a listpack (unless bigStart), so a -0 score
// becomes 0 until it outgrows one; the set operations build a skiplist and
// convert it at the end (final).
func zsetStore(c *Ctx, dst []byte, entries []zentry, bigStart, final bool, event string) int64 {
	if len(entries) == 0 {
		if c.Tx.Delete(dst) {
			c.Tx.Notify(store.NotifyGeneric, "del", dst)
		}
		return 0
	}
	c.Tx.Overwrite(dst)
	z := &zset{c: c, key: dst, h: sizeHeader{big: bigStart}}
	if final {
		big := len(entries) > zsetMaxListpackEntries
		for _, e := range entries {
			big = big || len(e.member) > zsetMaxListpackValue
		}
		z.h = sizeHeader{n: int64(len(entries)), big: big}
		for _, e := range entries {
			z.write(e.member, e.score)
		}
	} else {
		for _, e := range entries {
			z.insert(e.member, e.score)
		}
	}
	z.save(event)
	return z.h.n
}

// ZCOUNT key min max.
func cmdZCount(c *Ctx) {
	r, ok := parseScoreRange(c.Args[2], c.Args[3])
	if !ok {
		c.W.Error(errZMinMaxFloat)
		return
	}
	z, wrong := zsetLookupRanked(c, c.Args[1])
	if wrong {
		return
	}
	n := z.h.n // everything: the header knows
	if r.min > math.Inf(-1) || r.max < math.Inf(1) || r.minex || r.maxex {
		n = z.countBetween(r.bounds())
	}
	c.W.Int(n)
}

// countBetween counts the members whose score index keys are in [from,
// to): it walks a short range, and takes a long one as a difference of
// ranks when the set is indexed.
func (z *zset) countBetween(from, to []byte) int64 {
	if bytes.Compare(from, to) >= 0 {
		return 0
	}
	var n int64
	long := false
	z.each(from, to, false, func([]byte, float64) bool {
		n++
		long = z.levels > 0 && n > 4*zrankLeaf
		return !long
	})
	if long {
		n = z.rankBefore(to[1:]) - z.rankBefore(from[1:])
	}
	return n
}

// ZLEXCOUNT key min max.
func cmdZLexCount(c *Ctx) {
	r, ok := parseLexRange(c.Args[2], c.Args[3])
	if !ok {
		c.W.Error(errZMinMaxLex)
		return
	}
	z, wrong := zsetLookupRanked(c, c.Args[1])
	if wrong {
		return
	}
	var n int64
	if z.exists && !r.empty() {
		if first, last := z.ends(); first.score == last.score {
			// Equal scores, the case lex ranges are meant for: the range
			// is one span of the score index.
			n = z.countBetween(r.keys(first.score))
		} else {
			z.walkLex(r, false, 0, -1, func([]byte, float64) { n++ })
		}
	}
	c.W.Int(n)
}

// zremrangeGeneric is ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX.
func zremrangeGeneric(c *Ctx, kind int) {
	var start, end int64
	var sr scoreRange
	var lr lexRange
	ok := true
	switch kind {
	case zrRank:
		if start, ok = num.ParseInt(c.Args[2]); ok {
			end, ok = num.ParseInt(c.Args[3])
		}
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
	case zrScore:
		if sr, ok = parseScoreRange(c.Args[2], c.Args[3]); !ok {
			c.W.Error(errZMinMaxFloat)
			return
		}
	case zrLex:
		if lr, ok = parseLexRange(c.Args[2], c.Args[3]); !ok {
			c.W.Error(errZMinMaxLex)
			return
		}
	}
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	if !z.exists {
		c.W.Int(0)
		return
	}
	var out []zentry
	collect := func(m []byte, s float64) { out = append(out, zentry{append([]byte(nil), m...), s}) }
	switch kind {
	case zrRank:
		if start, end, ok = rankRange(start, end, z.h.n); ok {
			out = z.byRank(start, end, false)
		}
	case zrScore:
		z.walkScore(sr, false, 0, -1, collect)
	case zrLex:
		z.walkLex(lr, false, 0, -1, collect)
	}
	for _, e := range out {
		z.remove(e.member, e.score)
	}
	if len(out) > 0 {
		z.trimmedBounds(out[0], out[len(out)-1])
		z.save([...]string{zrRank: "zremrangebyrank", zrScore: "zremrangebyscore", zrLex: "zremrangebylex"}[kind])
	}
	c.W.Int(int64(len(out)))
}

// Set operations.
const (
	opUnion = iota
	opInter
	opDiff
)

// zsrc is one input of a set operation: a sorted set, a set (every member
// scores 1) or a missing key (empty).
type zsrc struct {
	key    []byte
	typ    store.Type
	z      *zset
	n      int64
	weight float64
}

func (s *zsrc) find(c *Ctx, member []byte) (float64, bool) {
	switch s.typ {
	case store.TypeZSet:
		return s.z.score(member)
	case store.TypeSet:
		_, ok := c.Tx.Member(s.key, store.HashedSub(nil, member))
		return 1, ok
	}
	return 0, false
}

// each visits every member (a sorted set in score order).
func (s *zsrc) each(c *Ctx, fn func(m []byte, score float64) bool) {
	switch s.typ {
	case store.TypeZSet:
		s.z.each(nil, nil, false, fn)
	case store.TypeSet:
		c.Tx.Members(s.key, nil, nil, false, func(sub, _ []byte) bool {
			return fn(store.HashedMember(sub), 1)
		})
	}
}

// aggregate is zunionInterAggregate.
func aggregate(target *float64, v float64, agg string) {
	switch agg {
	case "sum":
		*target += v
		if math.IsNaN(*target) { // inf + -inf
			*target = 0
		}
	case "min":
		if v < *target {
			*target = v
		}
	case "max":
		if v > *target {
			*target = v
		}
	}
}

// zsetOpGeneric is ZUNION, ZINTER, ZDIFF, their STORE forms (dst) and
// ZINTERCARD (cardOnly), as Redis's zunionInterDiffGenericCommand: the
// keys are looked up (and type checked) before the options are parsed.
func zsetOpGeneric(c *Ctx, dst []byte, numIdx int, op int, cardOnly bool) {
	setNum, ok := num.ParseInt(c.Args[numIdx])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if setNum < 1 {
		c.W.Error(fmt.Sprintf("ERR at least 1 input key is needed for '%s' command", strings.ToLower(c.Arg(0))))
		return
	}
	if setNum > int64(len(c.Args)-numIdx-1) {
		c.W.Error(ErrSyntax)
		return
	}
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // the sources are reads (keymiss events)
	srcs := make([]*zsrc, setNum)
	j := numIdx + 1
	for i := range srcs {
		s := &zsrc{key: c.Args[j], weight: 1}
		if m, found := c.Tx.Lookup(s.key); found {
			switch m.Type {
			case store.TypeZSet:
				s.typ, s.z = store.TypeZSet, zsetOf(c, s.key, m)
				s.n = s.z.h.n
			case store.TypeSet:
				s.typ, s.n = store.TypeSet, decodeSizeHeader(m.Body).n
			default:
				c.W.Error(ErrWrongType)
				return
			}
		}
		srcs[i] = s
		j++
	}
	agg := "sum"
	withScores := false
	limit := int64(0)
	for j < len(c.Args) {
		left := len(c.Args) - j
		opt := strings.ToLower(c.Arg(j))
		switch {
		case op != opDiff && !cardOnly && left >= int(setNum)+1 && opt == "weights":
			j++
			for _, s := range srcs {
				w, ok := num.ParseFloat(c.Args[j])
				if !ok {
					c.W.Error(errZWeightFloat)
					return
				}
				s.weight = w
				j++
			}
		case op != opDiff && !cardOnly && left >= 2 && opt == "aggregate":
			agg = strings.ToLower(c.Arg(j + 1))
			if agg != "sum" && agg != "min" && agg != "max" {
				c.W.Error(ErrSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && opt == "withscores":
			withScores = true
			j++
		case cardOnly && left >= 2 && opt == "limit":
			n, ok := num.ParseInt(c.Args[j+1])
			if !ok || n < 0 {
				c.W.Error(errZLimitNeg)
				return
			}
			limit = n
			j += 2
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}

	var out []zentry
	switch op {
	case opInter:
		// From the smallest input, looking each member up in the others;
		// the order of the inputs is the order of the aggregation.
		slices.SortStableFunc(srcs, func(a, b *zsrc) int { return cmpInt64(a.n, b.n) })
		var card int64
		if srcs[0].n > 0 {
			srcs[0].each(c, func(m []byte, score float64) bool {
				acc := srcs[0].weight * score
				if math.IsNaN(acc) {
					acc = 0
				}
				for _, s := range srcs[1:] {
					v, ok := s.find(c, m)
					if !ok {
						return true
					}
					aggregate(&acc, v*s.weight, agg)
				}
				if cardOnly {
					card++
					return limit == 0 || card < limit
				}
				out = append(out, zentry{append([]byte(nil), m...), acc})
				return true
			})
		}
		if cardOnly {
			c.W.Int(card)
			return
		}
	case opUnion:
		slices.SortStableFunc(srcs, func(a, b *zsrc) int { return cmpInt64(a.n, b.n) })
		acc := map[string]float64{}
		for _, s := range srcs {
			s.each(c, func(m []byte, score float64) bool {
				v := s.weight * score
				if math.IsNaN(v) {
					v = 0
				}
				if cur, ok := acc[string(m)]; ok {
					aggregate(&cur, v, agg)
					acc[string(m)] = cur
				} else {
					acc[string(m)] = v
				}
				return true
			})
		}
		out = make([]zentry, 0, len(acc))
		for m, s := range acc {
			out = append(out, zentry{[]byte(m), s})
		}
	case opDiff:
		// The first input's members that no other input has, with their
		// scores; the other inputs are only looked up.
		first, others := srcs[0], srcs[1:]
		first.each(c, func(m []byte, score float64) bool {
			for _, s := range others {
				if s.n > 0 {
					if _, ok := s.find(c, m); ok {
						return true
					}
				}
			}
			out = append(out, zentry{append([]byte(nil), m...), score})
			return true
		})
	}
	// Redis's order: score, then member bytes.
	slices.SortFunc(out, func(a, b zentry) int {
		if a.score != b.score {
			if a.score < b.score {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.member, b.member)
	})
	if dst != nil {
		c.W.Int(zsetStore(c, dst, out, false, true, [...]string{"zunionstore", "zinterstore", "zdiffstore"}[op]))
		return
	}
	replyEntries(c, out, withScores)
}
