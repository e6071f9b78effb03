package command

import (
	"bytes"
	"math"
	"slices"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// SORT and SORT_RO (sort.c in Redis 7.0): the elements of a list, set or
// sorted set, sorted by their own value or by other keys' (BY), replied as
// they are or as other keys' values (GET), or stored as a list (STORE).
func init() {
	cats := func(rw string) []string { return []string{rw, "set", "sortedset", "list", "slow", "dangerous"} }
	src := KeySpec{Flags: []string{"RO", "access"}, Index: 1, KeyStep: 1}
	patterns := KeySpec{Flags: []string{"RO", "access"}, Unknown: true,
		Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"}
	dst := KeySpec{Flags: []string{"OW", "update"}, Unknown: true,
		Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"}
	register(
		&Command{Name: "sort", Arity: -2, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Categories: cats("write"), Group: "generic", Since: "1.0.0",
			Summary: "Sort the elements in a list, set or sorted set", KeySpecs: []KeySpec{src, patterns, dst}, GetKeys: sortKeys,
			Run: func(c *Ctx) { sortGeneric(c, false) }, ReadFirst: sortRead},
		// SORT_RO's keys are its source only: its unknown spec names none.
		&Command{Name: "sort_ro", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Categories: cats("read"), Group: "generic", Since: "7.0.0",
			Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", KeySpecs: []KeySpec{src, patterns},
			Run: func(c *Ctx) { sortGeneric(c, true) }},
	)
}

const errSortScore = "ERR One or more scores can't be converted into double"

// sortKeys finds SORT's keys as Redis's sortGetKeys does: the source, and
// the argument after the last STORE met while skipping the arguments of
// LIMIT, GET and BY. That is not quite the parser's view: in "SORT k STORE
// LIMIT 1 2" the destination is "limit".
func sortKeys(argv [][]byte) []FoundKey {
	if len(argv) < 2 {
		return nil
	}
	keys := []FoundKey{{argv[1], []string{"RO", "access"}}}
	var dst []byte
	found := false
	for i := 2; i < len(argv); i++ {
		switch arg := string(argv[i]); {
		case strings.EqualFold(arg, "limit"):
			i += 2
		case strings.EqualFold(arg, "get"), strings.EqualFold(arg, "by"):
			i++
		case strings.EqualFold(arg, "store") && i+1 < len(argv):
			dst, found = argv[i+1], true
		}
	}
	if found {
		keys = append(keys, FoundKey{dst, []string{"OW", "update"}})
	}
	return keys
}

// sortOpts are SORT's options.
type sortOpts struct {
	desc, alpha   bool
	dontsort      bool  // a BY pattern without '*' (sticky, as in Redis)
	offset, count int64 // LIMIT; count < 0: all
	by            []byte
	gets          [][]byte
	store         []byte
	hasStore      bool
}

// parseSort parses the options from argument 2, or returns Redis's error.
// SORT_RO (readonly) knows no STORE. In cluster mode BY with a pattern and
// GET are refused, as they read keys of any slot.
func parseSort(args [][]byte, readonly, clustered bool) (o sortOpts, errMsg string) {
	o.count = -1
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "asc":
			o.desc = false
		case opt == "desc":
			o.desc = true
		case opt == "alpha":
			o.alpha = true
		case opt == "limit" && left >= 2:
			var ok bool
			if o.offset, ok = num.ParseInt(args[j+1]); ok {
				o.count, ok = num.ParseInt(args[j+2])
			}
			if !ok {
				return o, ErrNotInt
			}
			j += 2
		case !readonly && opt == "store" && left >= 1:
			o.store, o.hasStore = args[j+1], true
			j++
		case opt == "by" && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte(cString(o.by), '*') < 0 {
				o.dontsort = true
			} else if clustered {
				return o, "ERR BY option of SORT denied in Cluster mode."
			}
			j++
		case opt == "get" && left >= 1:
			if clustered {
				return o, "ERR GET option of SORT denied in Cluster mode."
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return o, ErrSyntax
		}
	}
	return o, ""
}

// cString is b up to its first NUL byte: what the C functions Redis applies
// to patterns and sort keys (strchr, strstr, strcoll) see.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sortRange is LIMIT offset count applied to n elements: the range
// [start, end), clamped as Redis 7.0 does (a negative offset is 0, a
// negative count means all).
func sortRange(o *sortOpts, n int64) (start, end int64) {
	start = min(max(o.offset, 0), n)
	if o.count < 0 || o.count > n-start {
		return start, n
	}
	return start, start + o.count
}

// sortRead answers SORT without STORE on a read view; with STORE it leaves
// the command to the write path.
func sortRead(c *Ctx) bool {
	if o, msg := parseSort(c.Args, false, c.Tx.Clustered()); msg == "" && o.hasStore {
		return false
	}
	sortGeneric(c, false)
	return true
}

// sortItem is an element with what it is sorted by.
type sortItem struct {
	elem  []byte
	score float64 // numeric sort
	by    []byte  // ALPHA with BY: the BY value
	hasBy bool    // ... which exists
}

func sortGeneric(c *Ctx, readonly bool) {
	o, msg := parseSort(c.Args, readonly, c.Tx.Clustered())
	if msg != "" {
		c.W.Error(msg)
		return
	}
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // SORT's lookups are reads (keymiss events)
	if o.by != nil && !o.dontsort || len(o.gets) > 0 {
		// Other keys are read: all from one state.
		c.Tx.Pin()
	}
	key := c.Args[1]
	m, ok := c.Tx.Lookup(key)
	if ok && m.Type != store.TypeList && m.Type != store.TypeSet && m.Type != store.TypeZSet {
		c.W.Error(ErrWrongType)
		return
	}
	// Lists and sorted sets keep their order when not sorted; Redis then
	// reads only the range LIMIT asks for, reversed by DESC.
	var elems [][]byte
	ranged := false
	collect := func(_ int64, v []byte) bool { elems = append(elems, v); return true }
	switch {
	case !ok:
	case m.Type == store.TypeList:
		l := &listObj{tx: c.Tx, key: key, expire: m.ExpireAt, h: decodeListHeader(m.Body)}
		n := l.h.count
		if !o.dontsort {
			l.each(0, n, false, collect)
			break
		}
		start, end := sortRange(&o, n)
		if o.desc {
			l.each(n-end, end-start, true, collect)
		} else {
			l.each(start, end-start, false, collect)
		}
		ranged = true
	case m.Type == store.TypeSet:
		elems = setMembersOf(c, key, decodeSizeHeader(m.Body))
		if o.dontsort && (o.hasStore || c.script) {
			// A set's order is its hash order: what is stored or given to
			// a script is sorted, so that it is the same everywhere.
			o.dontsort, o.alpha, o.by = false, true, nil
		}
	default:
		z, _ := zsetLookupRanked(c, key)
		if !o.dontsort {
			z.each(nil, nil, false, func(m []byte, _ float64) bool {
				elems = append(elems, bytes.Clone(m))
				return true
			})
			break
		}
		if start, end := sortRange(&o, z.h.n); start < end {
			for _, e := range z.byRank(start, end-1, o.desc) {
				elems = append(elems, e.member)
			}
		}
		ranged = true
	}

	items := make([]sortItem, len(elems))
	badScore := false
	for i, e := range elems {
		items[i].elem = e
		if o.dontsort {
			continue
		}
		v, found := e, true
		if o.by != nil {
			v, found = sortLookup(c, o.by, e)
		}
		switch {
		case !found: // a missing BY key scores 0, or sorts first with ALPHA
		case o.alpha:
			if o.by != nil {
				items[i].by, items[i].hasBy = v, true
			}
		default:
			f, n, erange := num.StrtodERange(v)
			// Redis: strtod must reach the end of the C string, and
			// refuses NaN and what sets ERANGE.
			if n < len(v) && v[n] != 0 || erange || math.IsNaN(f) {
				badScore = true
			}
			items[i].score = f
		}
	}
	if badScore {
		c.W.Error(errSortScore)
		return
	}
	if !o.dontsort {
		slices.SortStableFunc(items, func(a, b sortItem) int {
			r := sortCompare(&o, &a, &b)
			if o.desc {
				return -r
			}
			return r
		})
	}
	if !ranged {
		start, end := sortRange(&o, int64(len(items)))
		items = items[start:end]
	}

	if !o.hasStore {
		c.W.ArrayLen(len(items) * max(len(o.gets), 1))
		for _, it := range items {
			if len(o.gets) == 0 {
				c.W.Bulk(it.elem)
			}
			for _, g := range o.gets {
				if v, ok := sortLookup(c, g, it.elem); ok {
					c.W.Bulk(v)
				} else {
					c.W.Null()
				}
			}
		}
		return
	}
	var out [][]byte
	for _, it := range items {
		if len(o.gets) == 0 {
			out = append(out, it.elem)
		}
		for _, g := range o.gets {
			v, _ := sortLookup(c, g, it.elem) // nil is stored as ""
			out = append(out, v)
		}
	}
	c.W.Int(sortStore(c, o.store, out))
}

// sortCompare orders two elements ascending as Redis's sortCompare: by
// score, equal scores by the elements' bytes; with ALPHA by the BY values
// (missing ones first, and no further order) or the elements, compared as
// strcoll does in the C locale, or byte for byte with STORE.
func sortCompare(o *sortOpts, a, b *sortItem) int {
	collate := func(x, y []byte) int {
		if o.hasStore {
			return bytes.Compare(x, y)
		}
		return bytes.Compare(cString(x), cString(y))
	}
	switch {
	case !o.alpha:
		if a.score != b.score {
			if a.score < b.score {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.elem, b.elem)
	case o.by == nil:
		return collate(a.elem, b.elem)
	case !a.hasBy || !b.hasBy:
		switch {
		case a.hasBy == b.hasBy:
			return 0
		case !a.hasBy:
			return -1
		}
		return 1
	}
	return collate(a.by, b.by)
}

// sortLookup is Redis's lookupKeyByPattern: "#" is the element itself;
// otherwise the first '*' of the pattern is replaced by the element and the
// key found is read as a string, or as a hash when "->field" follows the
// '*'. A pattern without '*', a missing key, field or a key of another
// type give nothing.
func sortLookup(c *Ctx, pattern, elem []byte) ([]byte, bool) {
	cpat := cString(pattern)
	if string(cpat) == "#" {
		return elem, true
	}
	star := bytes.IndexByte(cpat, '*')
	if star < 0 {
		return nil, false
	}
	keyEnd := len(pattern)
	var field []byte
	if f := bytes.Index(cpat[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cpat) {
		keyEnd = star + 1 + f
		field = pattern[keyEnd+2:]
	}
	key := make([]byte, 0, star+len(elem)+keyEnd-star-1)
	key = append(append(append(key, pattern[:star]...), elem...), pattern[star+1:keyEnd]...)
	m, ok := c.Tx.Lookup(key)
	switch {
	case !ok:
		return nil, false
	case field != nil:
		if m.Type != store.TypeHash {
			return nil, false
		}
		v, ok := hashGet(c, key, decodeHashHeader(m.Body), field)
		if !ok {
			return nil, false
		}
		return append([]byte{}, v...), true
	case m.Type != store.TypeString:
		return nil, false
	}
	return c.Tx.ReadString(key, m), true
}

// sortStore makes dst a list of values, whatever it held, raising
// "sortstore"; an empty result deletes dst ("del"). It returns the length.
func sortStore(c *Ctx, dst []byte, values [][]byte) int64 {
	if len(values) == 0 {
		if c.Tx.Delete(dst) {
			c.Tx.Notify(store.NotifyGeneric, "del", dst)
		}
		return 0
	}
	c.Tx.Overwrite(dst)
	l := newList(c.Tx, dst)
	for _, v := range values {
		l.push(false, v)
	}
	l.save()
	c.Tx.Notify(store.NotifyList, "sortstore", dst)
	return l.h.count
}
