package shard

import (
	"testing"

	"basalt/internal/raftlog"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3/raftpb"
)

// TestOpenLog checks where a group's log lives in cluster mode: in the
// node's engine under its group, unless the group's directory holds a log
// of its own from before the engine was shared, which is kept.
func TestOpenLog(t *testing.T) {
	eng, err := raftlog.OpenEngine(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	// An older node's group: its directory holds its log.
	oldDir := t.TempDir()
	own, err := raftlog.Open(oldDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Bootstrap([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	if err := own.Save(raftpb.Snapshot{}, raftpb.HardState{Term: 1, Commit: 1}, []raftpb.Entry{{Index: 2, Term: 1, Data: []byte("kept")}}, true); err != nil {
		t.Fatal(err)
	}
	own.Close()
	lg, err := openLog(Config{ID: transport.ReplicaID(3, 1), RaftDir: oldDir, RaftLog: eng})
	if err != nil {
		t.Fatal(err)
	}
	if last, _ := lg.LastIndex(); last != 2 {
		t.Fatalf("the older log's last index is %d, want 2: it was not the log opened", last)
	}
	lg.Close()

	// A new group's log goes to the engine, apart from the others there.
	for _, group := range []uint32{3, 4} {
		dir := t.TempDir()
		lg, err := openLog(Config{ID: transport.ReplicaID(group, 1), RaftDir: dir, RaftLog: eng})
		if err != nil {
			t.Fatal(err)
		}
		if last, _ := lg.LastIndex(); last != 0 {
			t.Fatalf("group %d: a new log's last index is %d", group, last)
		}
		if err := lg.Bootstrap([]uint64{1}); err != nil {
			t.Fatal(err)
		}
		if group == 3 {
			if err := lg.Save(raftpb.Snapshot{}, raftpb.HardState{Term: 1, Commit: 1}, []raftpb.Entry{{Index: 2, Term: 1}, {Index: 3, Term: 1}}, true); err != nil {
				t.Fatal(err)
			}
		}
		lg.Close()
		if raftlog.HasOwnLog(dir) {
			t.Fatalf("group %d: its directory holds a log of its own", group)
		}
	}
	for group, want := range map[uint32]uint64{3: 3, 4: 1} {
		lg, err := eng.Open(uint64(group))
		if err != nil {
			t.Fatal(err)
		}
		if last, _ := lg.LastIndex(); last != want {
			t.Fatalf("group %d: last index %d in the engine, want %d", group, last, want)
		}
		lg.Close()
	}
}
