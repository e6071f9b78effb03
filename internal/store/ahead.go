package store

import "sort"

// Read-ahead. The consumers of a stream's group take the next entry in
// turn (XREADGROUP ... COUNT 1 >): dozens of range reads in one group,
// each starting just after the one before, and each a seek through the
// batch, the memtables and every level. A write Tx keeps the members its
// last such read fetched past what it asked for, with the span they cover,
// so that the next read in that span costs no seek. Any write in the span
// drops them: every write of the Tx goes through setBoth, delBoth,
// delRange or hold.

// readAhead holds every member of the Tx's view in [lo, hi), in order.
type readAhead struct {
	lo, hi     []byte
	keys, vals [][]byte
}

func (a *readAhead) covers(k []byte) bool {
	return string(k) >= string(a.lo) && string(k) < string(a.hi)
}

// dropAhead forgets the read-ahead if [lo, hi) (hi nil: the key lo alone)
// meets its span.
func (t *Tx) dropAhead(lo, hi []byte) {
	a := t.ahead
	if a == nil {
		return
	}
	if hi == nil && a.covers(lo) || hi != nil && string(lo) < string(a.hi) && string(a.lo) < string(hi) {
		t.ahead = nil
	}
}

// MembersAhead is Members in ascending order for a read that is likely to
// be followed by one starting where it stopped: a write Tx reads up to
// ahead more members past where fn stopped, and serves the next such read
// in their span from memory. A read Tx reads as Members does.
func (t *Tx) MembersAhead(key, from, to []byte, ahead int, fn func(sub, value []byte) bool) {
	if t.b == nil {
		t.Members(key, from, to, false, fn)
		return
	}
	p := t.memberPrefix(nil, key)
	lower := append(p[:len(p):len(p)], from...)
	upper := append(p[:len(p):len(p)], to...)
	if to == nil {
		upper = PrefixEnd(p)
	}
	if a := t.ahead; a != nil && a.covers(lower) {
		i := sort.Search(len(a.keys), func(i int) bool { return string(a.keys[i]) >= string(lower) })
		for ; i < len(a.keys) && string(a.keys[i]) < string(upper); i++ {
			if !fn(a.keys[i][len(p):], a.vals[i]) {
				return
			}
		}
		if string(a.hi) >= string(upper) {
			return
		}
		lower = a.hi // the members from here on were not read ahead
	}
	it := t.openIter(lower, upper)
	defer t.closeIter(it)
	ok := it.First()
	for ; ok; ok = it.Next() {
		if !fn(it.Key()[len(p):], it.Value()) {
			break
		}
	}
	if !ok {
		return // all read: no next read to serve
	}
	// The member fn stopped at and up to ahead more, copied.
	a := &readAhead{lo: append([]byte(nil), it.Key()...)}
	for n := 0; ok && n <= ahead; ok, n = it.Next(), n+1 {
		a.keys = append(a.keys, append([]byte(nil), it.Key()...))
		a.vals = append(a.vals, append([]byte(nil), it.Value()...))
	}
	if ok {
		a.hi = a.keys[len(a.keys)-1]
		a.hi = append(a.hi[:len(a.hi):len(a.hi)], 0) // just after the last one kept
	} else {
		a.hi = upper
	}
	t.ahead = a
}
