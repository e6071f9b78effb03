package store

import "github.com/cockroachdb/pebble/v2"

// MemberIter walks a collection's member entries with sub keys in [from,
// to), seeking in both directions: for structures kept in members that
// need more than one pass (a sorted set's rank index). On a write Tx it
// sees the writes made before it was opened, not those made after.
type MemberIter struct {
	it           *pebble.Iterator
	p            []byte // the key's member prefix
	buf          []byte
	tx           *Tx
	lower, upper []byte
}

// MemberIter opens an iterator over key's members with sub in [from, to);
// the caller closes it.
func (t *Tx) MemberIter(key, from, to []byte) *MemberIter {
	p := t.memberPrefix(nil, key)
	lower := append(append([]byte(nil), p...), from...)
	upper := append(append([]byte(nil), p...), to...)
	it := t.openIter(lower, upper)
	if t.straddled() { // the iterator reads the state it was opened on
		t.closeIter(it, lower, upper)
		panic(ErrStaleRead)
	}
	return &MemberIter{it: it, p: p, tx: t, lower: lower, upper: upper}
}

// openIter opens an iterator over [lower, upper), which must not change
// until closeIter. A write Tx reuses one iterator on its view, moved to
// the new bounds: opening an iterator on the view builds a stack over the
// batch, the memtables and every level, which cost an XREADGROUP or a ZADD
// on a big set more than the reads it made with it.
func (t *Tx) openIter(lower, upper []byte) *pebble.Iterator {
	t.saveHeld(lower, upper)
	o := &pebble.IterOptions{LowerBound: lower, UpperBound: upper}
	if t.b != nil && !t.iterBusy {
		if t.iter == nil {
			it, err := t.r.NewIter(o)
			if err != nil {
				panic(err)
			}
			t.iter = it
		} else {
			t.iter.SetOptions(o) // also brings in the view's newer writes
			t.iter.ResetStats()
		}
		t.iterBusy = true
		return t.iter
	}
	it, err := t.r.NewIter(o)
	if err != nil {
		panic(err)
	}
	return it
}

// closeIter closes an iterator openIter returned over [lower, upper), or
// keeps it for reuse; an engine failure met on the way panics, as every
// other read does.
func (t *Tx) closeIter(it *pebble.Iterator, lower, upper []byte) {
	t.st.noteSkipped(it, lower, upper)
	err := it.Error()
	if it == t.iter {
		t.iterBusy = false
	} else if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		panic(err)
	}
}

// dropIter closes the reused iterator, before the view goes.
func (t *Tx) dropIter() {
	if t.iter != nil {
		t.iter.Close()
		t.iter, t.iterBusy = nil, false
	}
}

func (m *MemberIter) abs(sub []byte) []byte {
	m.buf = append(append(m.buf[:0], m.p...), sub...)
	return m.buf
}

// SeekGE moves to the first entry at or after sub.
func (m *MemberIter) SeekGE(sub []byte) bool { return m.it.SeekGE(m.abs(sub)) }

// SeekLT moves to the last entry before sub.
func (m *MemberIter) SeekLT(sub []byte) bool { return m.it.SeekLT(m.abs(sub)) }

// Next moves to the next entry.
func (m *MemberIter) Next() bool { return m.it.Next() }

// Sub is the current entry's sub key, valid until the iterator moves.
func (m *MemberIter) Sub() []byte { return m.it.Key()[len(m.p):] }

// Value is the current entry's value, valid until the iterator moves.
func (m *MemberIter) Value() []byte { return m.it.Value() }

// Close releases the iterator; an engine failure met on the way panics,
// as every other read does.
func (m *MemberIter) Close() { m.tx.closeIter(m.it, m.lower, m.upper) }

// Pin makes a read Tx on live state read from one snapshot from now on,
// for a read spanning many entries that must not see a write half done.
// It reports whether it took the snapshot: what was read before may be
// older than the snapshot and must be read again.
func (t *Tx) Pin() bool {
	if t.b != nil || t.snap != nil {
		return false
	}
	t.snap = t.st.pdb.NewSnapshot()
	t.r = t.snap
	return true
}
