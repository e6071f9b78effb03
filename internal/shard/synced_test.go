package shard

import (
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// TestSyncMark: what WAITAOF's local count rests on. A synced save covers
// everything saved; an unsynced one nothing more; a sync covers what was
// saved before it began; entries that replace saved ones (a new leader's)
// bring the mark below them, and a sync that began before they were
// replaced does not count.
func TestSyncMark(t *testing.T) {
	ents := func(lo, hi uint64) *raft.Ready {
		rd := &raft.Ready{}
		for i := lo; i <= hi; i++ {
			rd.Entries = append(rd.Entries, raftpb.Entry{Index: i})
		}
		return rd
	}
	var m syncMark
	check := func(what string, want uint64) {
		t.Helper()
		if got := m.get(); got != want {
			t.Errorf("%s: synced %d, want %d", what, got, want)
		}
	}
	m.logSaved(ents(1, 3), true)
	check("a synced save", 3)
	m.logSaved(ents(4, 6), false)
	check("an unsynced save", 3)
	saved, gen := m.beforeSync()
	m.logSaved(ents(7, 7), false)
	m.afterSync(saved, gen)
	check("a sync begun before entry 7 was saved", 6)
	m.logSaved(ents(5, 5), false) // replaces 5..7
	check("entries 5 on replaced", 4)
	saved, gen = m.beforeSync()
	m.logSaved(ents(6, 8), false)
	m.afterSync(saved, gen)
	check("a sync of 5 after the replacement", 5)
	saved, gen = m.beforeSync()
	m.logSaved(ents(4, 4), false) // replaced while the sync ran
	m.afterSync(saved, gen)
	check("a sync begun before entries 4 on were replaced", 3)
	m.logSaved(&raft.Ready{Snapshot: raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{Index: 20, Term: 2}}}, true)
	check("a snapshot", 20)
}
