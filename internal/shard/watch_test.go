package shard

import (
	"testing"

	"basalt/internal/store"
)

// A write applied while nobody watches anything, then a WATCH of its key
// before the write commits: the watching client read the committed state,
// which lacks the write, so its EXEC must fail whether it runs while the
// write is in flight or after it committed.
func TestWatchAfterUntrackedWrite(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &Shard{st: st, Watches: newWatches()}
	appliedC := make(chan struct{})
	s.appliedC.Store(&appliedC)

	tx := st.WriteTx()
	touched := s.track(tx)
	s.group = nil
	tx.Touched(0, []byte("seat")) // applied while no key is watched
	s.pending = append(s.pending, &inflight{id: 1, tx: tx, touched: touched})

	k := WatchKey{DB: 0, Key: []byte("seat")}
	k.Index = s.Watch(0, k.Key)
	if !s.WatchDirty(k) {
		t.Fatal("in flight: the WATCH missed the write")
	}
	s.commitPending(1, 1)
	if !s.WatchDirty(k) {
		t.Fatal("committed: the WATCH missed the write")
	}

	// A WATCH registered after the commit saw the write.
	later := WatchKey{DB: 0, Key: []byte("seat")}
	later.Index = s.Watch(0, later.Key)
	if s.WatchDirty(later) {
		t.Fatal("a WATCH after the commit is dirty")
	}
}
