package store

import (
	"errors"
	"runtime"
	"time"
)

// A whole-store view for SAVE: one instant of every database. A snapshot
// read Tx (ReadTx) is one instant of Pebble, but its database map and the
// key counts are loaded beside it, and SWAPDB or any commit may land in
// between. Commits are counted as a seqlock (Store.commits, odd while a
// commit is applied to Pebble, the counts and the database map): a
// snapshot taken with the count even, and the count unchanged after the
// map and the counts were read, is of the same state as they are.

// View is a snapshot read Tx over every logical database, with each
// database's key and expiry counts at that instant (indexed by logical
// database). Set Tx.DB to read a database. Close the Tx when done: until
// then a snapshot install waits (the view holds Store.installing).
type View struct {
	Tx      *Tx
	Keys    []int64
	Expires []int64
}

// errViewBusy says commits never left a gap for the view: the store was
// written without a pause for the whole wait.
var errViewBusy = errors.New("store: no instant between commits for a snapshot")

// View opens a whole-store view at clock now (expired keys are missing
// from it, as from any read).
func (s *Store) View(now int64) (*View, error) {
	t := s.ReadTx(0, now, false)
	deadline := time.Now().Add(5 * time.Second)
	for tries := 0; ; tries++ {
		if c := s.commits.Load(); c&1 == 0 {
			snap := s.pdb.NewSnapshot()
			dbMap := *s.dbMap.Load()
			v := &View{Tx: t, Keys: make([]int64, len(dbMap)), Expires: make([]int64, len(dbMap))}
			for logical, phys := range dbMap {
				v.Keys[logical] = s.counts[phys].Load()
				v.Expires[logical] = s.expires[phys].Load()
			}
			if s.commits.Load() == c {
				t.snap, t.r, t.dbMap = snap, snap, dbMap
				return v, nil
			}
			snap.Close()
		}
		if tries > 100 && time.Now().After(deadline) {
			t.Close()
			return nil, errViewBusy
		}
		runtime.Gosched()
	}
}
