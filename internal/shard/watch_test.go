package shard

import (
	"testing"
	"time"

	"basalt/internal/store"
)

func newWatchShard(t *testing.T) *Shard {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &Shard{st: st, Watches: newWatches()}
	appliedC := make(chan struct{})
	s.appliedC.Store(&appliedC)
	return s
}

// untrackedGroup starts a group in flight that wrote key while no key was
// watched.
func untrackedGroup(s *Shard, key string) {
	tx := s.st.WriteTx()
	touched := s.track(tx)
	s.group = nil
	tx.Touched(0, []byte(key))
	s.pending = append(s.pending, &inflight{id: 1, tx: tx, touched: touched})
}

// watchAsync runs WATCH of key in another goroutine: it may wait for a
// group in flight.
func watchAsync(s *Shard, key string) <-chan WatchKey {
	c := make(chan WatchKey, 1)
	go func() {
		k := WatchKey{DB: 0, Key: []byte(key)}
		k.Index = s.Watch(0, k.Key)
		c <- k
	}()
	return c
}

// A write applied while nobody watches anything, then a WATCH before the
// write commits: the WATCH waits for the commit, so the write comes before
// it, whichever key it wrote. (Without the wait, the untracked group's
// commit marked every watched key as modified, and an EXEC watching an
// unrelated key aborted: TestSort/ExpiredAndWatched through a follower
// failed so when an active expiry was in flight.)
func TestWatchAfterUntrackedWrite(t *testing.T) {
	for _, key := range []string{"seat", "other"} {
		s := newWatchShard(t)
		untrackedGroup(s, "seat")
		watched := watchAsync(s, key)
		select {
		case <-watched:
			t.Fatalf("%s: the WATCH did not wait for the untracked write in flight", key)
		case <-time.After(50 * time.Millisecond):
		}
		s.commitPending(1, 1)
		k := <-watched
		if k.Index != 1 {
			t.Fatalf("%s: WATCH at index %d, want 1 (after the write)", key, k.Index)
		}
		if s.WatchDirty(k) {
			t.Fatalf("%s: an EXEC after the WATCH aborts for a write before it", key)
		}
	}
}

// A write applied after the WATCH, committed or not, aborts the EXEC.
func TestWatchThenWrite(t *testing.T) {
	s := newWatchShard(t)
	k := <-watchAsync(s, "seat")
	tx := s.st.WriteTx()
	touched := s.track(tx)
	tx.Touched(0, []byte("seat"))
	s.group = nil
	s.pending = append(s.pending, &inflight{id: 1, tx: tx, touched: touched})
	if !s.WatchDirty(k) {
		t.Fatal("in flight: the EXEC missed the write")
	}
	s.commitPending(1, 1)
	if !s.WatchDirty(k) {
		t.Fatal("committed: the EXEC missed the write")
	}
	other := <-watchAsync(s, "other")
	if s.WatchDirty(other) {
		t.Fatal("a WATCH after the commit is dirty")
	}
}

// A group dropped (leadership lost) releases the WATCHes waiting for it.
func TestWatchAfterDroppedGroup(t *testing.T) {
	s := newWatchShard(t)
	untrackedGroup(s, "seat")
	watched := watchAsync(s, "seat")
	s.drop(ErrUnknownOutcome)
	select {
	case <-watched:
	case <-time.After(untrackedWait / 2):
		t.Fatal("the WATCH waited on a dropped group")
	}
}
