package store

import "bytes"

// Held members: a member that most commands of a group rewrite (a
// stream's tail node, a consumer group's record and its consumers) is kept
// in the write Tx and reaches the batches once, when the Tx is sealed, as
// pendingMeta does for metadata. Each rewrite would otherwise be a batch
// insert, a view insert, a memtable insert and a version for the flush to
// drop, and each read of it a Get through the view.
//
// Point reads (view) find a held member first. A range read or deletion
// over it must not miss it, so iterators save the held members in their
// range before they open, and a range deletion forgets those it covers.

type heldMember struct {
	value []byte
	found bool // false: deleted
	saved bool // in the batch and the view
}

// HoldMember writes a collection member that the group is likely to write
// again; readers of the Tx see it at once.
func (t *Tx) HoldMember(key, sub, value []byte) {
	t.mustWrite()
	t.hold(t.memberKey(key, sub), value, true)
}

func (t *Tx) hold(k, value []byte, found bool) {
	t.aheadWrite(k, value, found)
	t.markMemberDirty(k)
	t.writes++
	t.last.valid = false
	if t.held == nil {
		t.held = map[string]*heldMember{}
	}
	e := t.held[string(k)]
	if e == nil {
		e = &heldMember{}
		t.held[string(k)] = e
	}
	e.value, e.found, e.saved = append(e.value[:0], value...), found, false
	t.heldUnsaved = true
	if t.heldLo == nil || bytes.Compare(k, t.heldLo) < 0 {
		t.heldLo = append(t.heldLo[:0], k...)
	}
	if bytes.Compare(k, t.heldHi) > 0 {
		t.heldHi = append(t.heldHi[:0], k...)
	}
}

// heldOutside reports whether every held member is outside [lo, hi): an
// iteration over the score index of a sorted set whose rank counts are
// held looks at none of them.
func (t *Tx) heldOutside(lo, hi []byte) bool {
	return len(t.held) == 0 || hi != nil && bytes.Compare(t.heldLo, hi) >= 0 || bytes.Compare(t.heldHi, lo) < 0
}

// heldWrite makes a plain write of k update its held entry, if k is held
// (the entry would otherwise overwrite it when saved), and reports whether
// it did.
func (t *Tx) heldWrite(k, value []byte, found bool) bool {
	if len(t.held) == 0 || t.held[string(k)] == nil {
		return false
	}
	t.hold(k, value, found)
	return true
}

// heldView calls fn with k's held value and reports whether k is held
// (found says whether it exists).
func (t *Tx) heldView(k []byte, fn func(v []byte)) (held, found bool) {
	if len(t.held) == 0 {
		return false, false
	}
	e := t.held[string(k)]
	if e == nil {
		return false, false
	}
	if e.found {
		fn(e.value)
	}
	return true, e.found
}

// saveHeld writes the unsaved held members with keys in [lo, hi) (nil
// bounds: all of them) to the batch and the view.
func (t *Tx) saveHeld(lo, hi []byte) {
	all := lo == nil && hi == nil
	if !t.heldUnsaved || !all && t.heldOutside(lo, hi) {
		return
	}
	for k, e := range t.held {
		if e.saved || !all && !inSpan(k, lo, hi) {
			continue
		}
		e.saved = true
		if e.found {
			t.setBoth([]byte(k), e.value)
		} else {
			t.delBoth([]byte(k))
		}
	}
	if all {
		t.heldUnsaved = false
	}
}

// forgetHeld drops the held members a range deletion of [lo, hi) covers.
func (t *Tx) forgetHeld(lo, hi []byte) {
	if t.heldOutside(lo, hi) {
		return
	}
	for k := range t.held {
		if inSpan(k, lo, hi) {
			delete(t.held, k)
		}
	}
}

// inSpan reports whether k is in [lo, hi) (hi nil: no end); the
// conversions in the comparisons allocate nothing.
func inSpan(k string, lo, hi []byte) bool {
	return k >= string(lo) && (hi == nil || k < string(hi))
}
