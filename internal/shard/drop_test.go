package shard

import (
	"strings"
	"testing"

	"basalt/internal/store"
)

// When Raft refuses a group the leader proposed (it just stopped leading,
// or is handing leadership over), the groups proposed before it are in
// Raft's log and may still commit: only the refused group's clients may be
// told that their writes were not applied.
func TestDroppedProposalReplies(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &Shard{st: st, Watches: newWatches()}
	var props []*Proposal
	var prev *store.Tx
	for id := uint64(1); id <= 3; id++ {
		p := NewProposal(Record{}, 2)
		props = append(props, p)
		tx := st.WriteTxAfter(prev, 0)
		prev = tx
		s.pending = append(s.pending, &inflight{id: id, tx: tx, done: []*Proposal{p}})
	}
	s.handle(event{dropped: 2})
	want := []string{
		"-ERR " + ErrUnknownOutcome.Error(),        // in the log, may commit
		"-TRYAGAIN " + (&NotLeaderError{}).Error(), // refused: not applied
		"-ERR " + ErrUnknownOutcome.Error(),        // may have been taken after
	}
	for i, p := range props {
		select {
		case <-p.Done:
		default:
			t.Fatalf("group %d: no reply", i+1)
		}
		if got := strings.TrimSuffix(string(p.W.Bytes()), "\r\n"); got != want[i] {
			t.Errorf("group %d: reply %q, want %q", i+1, got, want[i])
		}
	}
	if len(s.pending) != 0 {
		t.Errorf("%d groups still pending", len(s.pending))
	}
}
