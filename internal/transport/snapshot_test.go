package transport

import (
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// TestSnapshotStream sends a MsgSnap whose data is many chunks: the sink
// gets exactly the bytes the source wrote, the handler gets the MsgSnap only
// after the sink stored them, and the sender learns the outcome. A sink that
// fails, a partition and a peer with no address are reported as failures,
// and the MsgSnap is then not handed to raft.
func TestSnapshotStream(t *testing.T) {
	checkGoroutines(t)
	const size = 5*SnapshotChunk + 12345
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	var in inbox
	done := make(chan bool, 4)
	sinkErr := make(chan error, 1)
	var got [32]byte
	a := start(t, &Transport{ID: 1,
		SnapshotSource: func(m raftpb.Message, w io.Writer) error {
			for p := data; len(p) > 0; { // uneven writes
				k := min(len(p), 1+rng.IntN(300_000))
				if _, err := w.Write(p[:k]); err != nil {
					return err
				}
				p = p[k:]
			}
			return nil
		},
		SnapshotDone: func(to uint64, ok bool) { done <- ok },
	}, func(raftpb.Message) {})
	b := start(t, &Transport{ID: 2,
		SnapshotSink: func(m raftpb.Message, r io.Reader) error {
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				return err
			}
			h.Sum(got[:0])
			if in.len() != 0 {
				return errors.New("the handler got the message before the data was stored")
			}
			select {
			case err := <-sinkErr:
				return err
			default:
				return nil
			}
		},
	}, in.add)
	a.AddPeer(2, b.ListenAddr())
	snap := func() raftpb.Message {
		return raftpb.Message{Type: raftpb.MsgSnap, From: 1, To: 2, Term: 2,
			Snapshot: &raftpb.Snapshot{Data: []byte("descriptor"), Metadata: raftpb.SnapshotMetadata{Index: 77, Term: 2}}}
	}
	wait := func(want bool) {
		t.Helper()
		select {
		case ok := <-done:
			if ok != want {
				t.Fatalf("SnapshotDone(%v), want %v", ok, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no SnapshotDone")
		}
	}

	a.Send([]raftpb.Message{snap()})
	wait(true)
	in.wait(t, 1)
	if got != sha256.Sum256(data) {
		t.Fatal("the sink read other bytes than the source wrote")
	}
	if m := in.msgs[0]; m.Type != raftpb.MsgSnap || m.Snapshot.Metadata.Index != 77 || string(m.Snapshot.Data) != "descriptor" {
		t.Fatalf("handler got %+v", m)
	}

	sinkErr <- errors.New("disk full")
	a.Send([]raftpb.Message{snap()})
	wait(false)

	a.Partition(2)
	a.Send([]raftpb.Message{snap()})
	wait(false)
	a.Heal(2)

	a.Send([]raftpb.Message{{Type: raftpb.MsgSnap, From: 1, To: 9, Snapshot: &raftpb.Snapshot{}}})
	wait(false)

	time.Sleep(100 * time.Millisecond)
	if in.len() != 1 {
		t.Fatalf("the handler got %d messages, want 1", in.len())
	}
}

// TestSnapshotsOfTwoGroups: two groups that share a peer snapshot to it at
// once (a node in cluster mode catching up several shards): each gets its
// SnapshotDone. Without one, raft would wait for the report for ever.
func TestSnapshotsOfTwoGroups(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	done := make(chan uint64, 2)
	a := start(t, &Transport{ID: 1,
		SnapshotSource: func(m raftpb.Message, w io.Writer) error {
			<-release // both are in flight before either ends
			_, err := w.Write([]byte("data"))
			return err
		},
		SnapshotDone: func(to uint64, ok bool) {
			if ok {
				done <- to
			}
		},
	}, func(raftpb.Message) {})
	b := start(t, &Transport{ID: 2, SnapshotSink: func(m raftpb.Message, r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	}}, func(raftpb.Message) {})
	a.AddPeer(2, b.ListenAddr())
	for _, g := range []uint32{1, 2} {
		a.Send([]raftpb.Message{{Type: raftpb.MsgSnap, From: ReplicaID(g, 1), To: ReplicaID(g, 2), Term: 2,
			Snapshot: &raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{Index: 10, Term: 2}}}})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	got := map[uint64]bool{}
	for range 2 {
		select {
		case to := <-done:
			got[to] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("SnapshotDone for %v only", got)
		}
	}
	if !got[ReplicaID(1, 2)] || !got[ReplicaID(2, 2)] {
		t.Fatalf("SnapshotDone for %v", got)
	}
}
