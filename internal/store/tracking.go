package store

import "bytes"

// Client-side caching (CLIENT TRACKING). While some client tracks keys, a
// write Tx notes every key it modifies, with the client whose record
// modified it (Tx.Writer, for NOLOOP), and hands them to the store's
// invalidation listener once it commits, in the same place as keyspace
// events: before the group's replies, never for a dropped batch. A
// FLUSHDB, FLUSHALL or SWAPDB, or a snapshot installed in place of the
// data, invalidates every key. Every node applies the same records, so
// every node invalidates for its own clients. With no client tracking, a
// Tx notes nothing.

// Invalidation is a key a committed batch modified, and the client whose
// record did (0: unknown, as for records applied from the log); or, with
// All, a change of a whole database (every key is invalid).
type Invalidation struct {
	Key    []byte
	Writer uint64
	All    bool
	at     int // how many of the Tx's events came before it
}

// InvalidationListener receives modified keys of a committed batch.
type InvalidationListener func(keys []Invalidation)

// SetInvalidation turns the noting of modified keys on (l non-nil) or off.
func (s *Store) SetInvalidation(l InvalidationListener) {
	s.notifyMu.Lock()
	s.invalidateFn = l
	s.notifyMu.Unlock()
	s.invalidating.Store(l != nil)
}

// noteInvalid notes a modified key (nil: all of them) for the
// invalidation listener.
func (t *Tx) noteInvalid(key []byte) {
	if n := len(t.invalid); key == nil && n > 0 && t.invalid[n-1].All && t.invalid[n-1].at == len(t.events) {
		return // FLUSHALL empties every database: one message, as in Redis
	}
	// Read at each write, not when the Tx began: a client that turns
	// tracking on while a group is applied then hears of the keys the
	// group modifies from then on. (A key the group modified before that
	// and commits after the client read it is invalidated only by its next
	// write: the first tracking client's first reads may miss one write.)
	if t.st.invalidating.Load() {
		t.invalid = append(t.invalid, Invalidation{Key: bytes.Clone(key), Writer: t.Writer, All: key == nil, at: len(t.events)})
	}
}

// deliverCommitted hands a committed batch's events and modified keys to
// their listeners in the order the records raised them: a message
// published after a write reaches a tracking client after the write's
// invalidation.
func (t *Tx) deliverCommitted() {
	if len(t.invalid) == 0 {
		t.deliverEvents()
		return
	}
	t.st.notifyMu.Lock()
	fn := t.st.invalidateFn
	t.st.notifyMu.Unlock()
	events, from := t.events, 0
	for i := 0; i < len(t.invalid); {
		at, j := t.invalid[i].at, i
		for j < len(t.invalid) && t.invalid[j].at == at {
			j++
		}
		t.events = events[from:at]
		t.deliverEvents()
		if fn != nil {
			fn(t.invalid[i:j])
		}
		from, i = at, j
	}
	t.events = events[from:]
	t.deliverEvents()
	t.invalid = nil
}

// invalidateAll tells the listener that every key may have changed, as a
// snapshot installed in place of the data does.
func (s *Store) invalidateAll() {
	s.notifyMu.Lock()
	fn := s.invalidateFn
	s.notifyMu.Unlock()
	if fn != nil {
		fn([]Invalidation{{All: true}})
	}
}
