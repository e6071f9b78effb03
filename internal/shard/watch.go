package shard

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/store"
)

// Watches tracks the keys clients WATCH and the log index at which each was
// last modified. Only watched keys are tracked, so the cost is nil when no
// client watches anything.
//
// The ordering argument: WATCH registers its key and reads the applied index
// under mu; the apply loop records modifications and advances the applied
// index under mu after each commit. So a write either is included in the
// index WATCH saw, or is recorded with a greater index.
//
// A group that wrote while nobody watched anything is untracked: its
// commit marks every key watched by then as modified. A WATCH registered
// while such a group is in flight therefore waits for the group to commit
// (or be dropped) before it reads the applied index, so that the group's
// writes come before the WATCH instead of aborting an EXEC whose keys they
// did not touch (another client's write, an active expiry).
type Watches struct {
	mu   sync.Mutex
	keys map[string]*watched
	n    atomic.Int64 // registered watches, for the fast path

	// Groups are numbered as they start (seq, by the apply loop). Under
	// mu: the latest group marked untracked, and the latest group
	// committed or dropped; done is closed and replaced when it advances.
	seq       atomic.Uint64
	untracked uint64
	finished  uint64
	done      chan struct{}
}

type watched struct {
	db      int
	key     []byte
	refs    int
	lastMod uint64
}

func newWatches() *Watches { return &Watches{keys: map[string]*watched{}, done: make(chan struct{})} }

// untrackedWait bounds a WATCH's wait for an untracked group: past it the
// WATCH reads the applied index anyway, and its EXEC may abort.
const untrackedWait = time.Second

func watchID(db int, key []byte) string { return strconv.Itoa(db) + ":" + string(key) }

// Watch registers (db, key) and returns the applied index to compare against.
func (w *Watches) Watch(db int, key []byte, applied *atomic.Uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := watchID(db, key)
	e := w.keys[id]
	if e == nil {
		e = &watched{db: db, key: append([]byte(nil), key...)}
		w.keys[id] = e
	}
	e.refs++
	w.n.Add(1)
	var timeout <-chan time.Time
	for w.finished < w.untracked {
		if timeout == nil {
			timeout = time.After(untrackedWait)
		}
		done := w.done
		w.mu.Unlock()
		select {
		case <-done:
		case <-timeout:
			w.mu.Lock()
			return applied.Load()
		}
		w.mu.Lock()
	}
	return applied.Load()
}

// finish notes that the groups up to seq committed or were dropped.
// Called with mu held.
func (w *Watches) finish(seq uint64) {
	if seq > w.finished {
		w.finished = seq
		close(w.done)
		w.done = make(chan struct{})
	}
}

// dropped is for groups abandoned before they committed: the WATCHes
// waiting for them go on.
func (w *Watches) dropped() {
	w.mu.Lock()
	w.finish(w.seq.Load())
	w.mu.Unlock()
}

// markUntracked marks g untracked if still nobody watches anything, and
// reports whether it did; under mu, so that a WATCH registered from now on
// waits for g.
func (w *Watches) markUntracked(g *groupTouches) bool {
	if g.untracked {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n.Load() != 0 {
		return false
	}
	g.untracked = true
	w.untracked = max(w.untracked, g.seq)
	return true
}

// Unwatch drops one registration of (db, key).
func (w *Watches) Unwatch(db int, key []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := watchID(db, key)
	if e := w.keys[id]; e != nil {
		e.refs--
		w.n.Add(-1)
		if e.refs == 0 {
			delete(w.keys, id)
		}
	}
}

// groupTouches collects what one group commit modified among watched keys.
//
// Writes made while nobody watches anything are not noted, to keep their
// cost nil; the group is then marked untracked. A WATCH registered after
// such a write but before the group commits must still see it (the client
// reads the committed state, which lacks it), so an untracked group counts
// as touching every key watched by the time it commits.
type groupTouches struct {
	w         *Watches
	seq       uint64
	keys      map[string]bool
	untracked bool
}

// track hooks tx so that modifications of watched keys are noted.
func (w *Watches) track(tx *store.Tx) *groupTouches {
	g := &groupTouches{w: w, seq: w.seq.Add(1)}
	tx.Touched = func(db int, key []byte) {
		if w.n.Load() == 0 && w.markUntracked(g) {
			return
		}
		if g.keys == nil {
			g.keys = map[string]bool{}
		}
		g.keys[watchID(db, key)] = true
	}
	tx.TouchedDBs = func(a, b int) {
		if w.n.Load() == 0 && w.markUntracked(g) {
			return
		}
		w.mu.Lock()
		var hit []*watched
		for _, e := range w.keys {
			if (e.db == a || e.db == b) && (tx.Alive(a, e.key) || tx.Alive(b, e.key)) {
				hit = append(hit, e)
			}
		}
		w.mu.Unlock()
		for _, e := range hit {
			tx.Touched(e.db, e.key)
		}
	}
	return g
}

// publish records the group's modifications at index last and makes last the
// applied index, atomically with respect to Watch.
func (w *Watches) publish(g *groupTouches, last uint64, applied *atomic.Uint64) {
	w.mu.Lock()
	if g.untracked {
		for _, e := range w.keys {
			e.lastMod = last
		}
	}
	for id := range g.keys {
		if e := w.keys[id]; e != nil {
			e.lastMod = last
		}
	}
	applied.Store(last)
	w.finish(g.seq)
	w.mu.Unlock()
}

// Dirty reports whether k was modified after its WATCH, counting writes
// earlier in the group being applied now.
func (w *Watches) Dirty(g *groupTouches, k WatchKey) bool {
	id := watchID(k.DB, k.Key)
	if g != nil && g.touches(id) {
		return true
	}
	w.mu.Lock()
	e := w.keys[id]
	dirty := e != nil && e.lastMod > k.Index
	w.mu.Unlock()
	return dirty
}

// touches reports whether the group may have modified the watched key id.
func (g *groupTouches) touches(id string) bool { return g.untracked || g.keys[id] }
