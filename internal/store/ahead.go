package store

import "sort"

// Read-ahead. Some commands read a collection in small steps that follow
// each other within one group: the consumers of a stream's group each take
// the next entry (XREADGROUP ... COUNT 1 >), RPOP and LPOP take the next
// element from one end. Each such read is a seek through the batch, the
// memtables and every level. A write Tx keeps the members its last such
// read fetched past what it asked for, with the span they cover, so that
// the next read in that span costs no seek. Every write of the Tx keeps it
// in step: a point write or deletion in the span (setBoth, delBoth, hold)
// updates it, a range deletion that meets it drops it.

// readAhead holds every member of the Tx's view in [lo, hi), in order.
type readAhead struct {
	lo, hi     []byte
	keys, vals [][]byte
}

func (a *readAhead) covers(k []byte) bool {
	return string(k) >= string(a.lo) && string(k) < string(a.hi)
}

// search returns the index of the first key at or after k.
func (a *readAhead) search(k []byte) int {
	return sort.Search(len(a.keys), func(i int) bool { return string(a.keys[i]) >= string(k) })
}

// aheadWrite keeps the read-ahead in step with a write of k (found false:
// a deletion).
func (t *Tx) aheadWrite(k, v []byte, found bool) {
	a := t.ahead
	if a == nil || !a.covers(k) {
		return
	}
	i := a.search(k)
	present := i < len(a.keys) && string(a.keys[i]) == string(k)
	switch {
	case found && present:
		a.vals[i] = append([]byte(nil), v...)
	case found:
		a.keys = append(a.keys[:i], append([][]byte{append([]byte(nil), k...)}, a.keys[i:]...)...)
		a.vals = append(a.vals[:i], append([][]byte{append([]byte(nil), v...)}, a.vals[i:]...)...)
	case present:
		a.keys = append(a.keys[:i], a.keys[i+1:]...)
		a.vals = append(a.vals[:i], a.vals[i+1:]...)
	}
}

// dropAhead forgets the read-ahead if [lo, hi) meets its span.
func (t *Tx) dropAhead(lo, hi []byte) {
	if a := t.ahead; a != nil && string(lo) < string(a.hi) && string(a.lo) < string(hi) {
		t.ahead = nil
	}
}

// aheadBytes bounds what a read-ahead copies: members may be big.
const aheadBytes = 64 << 10

// MembersAhead is Members for a read that is likely to be followed by one
// starting where it stopped: a write Tx reads up to ahead more members
// past where fn stopped, and serves the next such read in their span from
// memory. A read Tx reads as Members does.
func (t *Tx) MembersAhead(key, from, to []byte, reverse bool, ahead int, fn func(sub, value []byte) bool) {
	if t.b == nil {
		t.Members(key, from, to, reverse, fn)
		return
	}
	p := t.memberPrefix(nil, key)
	lower := append(p[:len(p):len(p)], from...)
	upper := append(p[:len(p):len(p)], to...)
	if to == nil {
		upper = PrefixEnd(p)
	}
	// From memory what the read-ahead has at the read's start, then from
	// Pebble the rest of the range, if fn wants more.
	if a := t.ahead; a != nil && !reverse && a.covers(lower) {
		for i := a.search(lower); i < len(a.keys) && string(a.keys[i]) < string(upper); i++ {
			if !fn(a.keys[i][len(p):], a.vals[i]) {
				return
			}
		}
		if string(a.hi) >= string(upper) {
			return
		}
		lower = a.hi
	} else if a != nil && reverse && string(upper) > string(a.lo) && string(upper) <= string(a.hi) {
		for i := a.search(upper) - 1; i >= 0 && string(a.keys[i]) >= string(lower); i-- {
			if !fn(a.keys[i][len(p):], a.vals[i]) {
				return
			}
		}
		if string(a.lo) <= string(lower) {
			return
		}
		upper = a.lo
	}
	it := t.openIter(lower, upper)
	defer t.closeIter(it, lower, upper)
	first, next := it.First, it.Next
	if reverse {
		first, next = it.Last, it.Prev
	}
	ok := first()
	for ; ok; ok = next() {
		if !fn(it.Key()[len(p):], it.Value()) {
			break
		}
	}
	if !ok {
		return // all read: no next read to serve
	}
	// The member fn stopped at and up to ahead more (and aheadBytes),
	// copied, in order.
	a := &readAhead{}
	for n, size := 0, 0; ok && n <= ahead && size <= aheadBytes; ok, n = next(), n+1 {
		size += len(it.Key()) + len(it.Value())
		a.keys = append(a.keys, append([]byte(nil), it.Key()...))
		a.vals = append(a.vals, append([]byte(nil), it.Value()...))
	}
	stop, end := a.keys[0], a.keys[len(a.keys)-1] // in the read's order
	if reverse {
		for i, j := 0, len(a.keys)-1; i < j; i, j = i+1, j-1 {
			a.keys[i], a.keys[j] = a.keys[j], a.keys[i]
			a.vals[i], a.vals[j] = a.vals[j], a.vals[i]
		}
		a.lo, a.hi = end, append(stop[:len(stop):len(stop)], 0)
		if !ok {
			a.lo = lower // nothing below the last one kept
		}
	} else {
		a.lo, a.hi = stop, append(end[:len(end):len(end)], 0)
		if !ok {
			a.hi = upper // nothing after the last one kept
		}
	}
	t.ahead = a
}
