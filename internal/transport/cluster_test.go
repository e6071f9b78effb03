package transport

import (
	"fmt"
	"io"
	"log"
	"sync"
	"testing"
	"time"

	"basalt/internal/raftlog"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// node is a minimal Ready loop of the kind a shard will run: a RawNode on
// a raftlog.Storage, talking through a Transport.
type node struct {
	id      uint64
	rn      *raft.RawNode
	st      *raftlog.Storage
	tr      *Transport
	recvc   chan raftpb.Message
	unreach chan uint64
	fnc     chan func()
	stopc   chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	applied []string // data of committed normal entries, in log order
	err     error
}

// newNode opens the log in dir (bootstrapping it for voters if empty) and
// listens on addr.
func newNode(t *testing.T, id uint64, voters []uint64, dir, addr string) *node {
	st, err := raftlog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if last, _ := st.LastIndex(); last == 0 {
		if err := st.Bootstrap(voters); err != nil {
			t.Fatal(err)
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID: id, ElectionTick: 10, HeartbeatTick: 1, Storage: st,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		CheckQuorum: true, PreVote: true,
		Logger: &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{id: id, rn: rn, st: st,
		recvc: make(chan raftpb.Message, 4096), unreach: make(chan uint64, 64),
		fnc: make(chan func()), stopc: make(chan struct{}), done: make(chan struct{})}
	n.tr = &Transport{ID: id, Addr: addr, Unreachable: func(id uint64) {
		select {
		case n.unreach <- id:
		default: // a report is already pending
		}
	}}
	if err := n.tr.Start(func(m raftpb.Message) {
		select {
		case n.recvc <- m:
		case <-n.stopc:
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *node) run() {
	defer close(n.done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-tick.C:
			n.rn.Tick()
		case m := <-n.recvc:
			n.rn.Step(m)
		case id := <-n.unreach:
			n.rn.ReportUnreachable(id)
		case f := <-n.fnc:
			f()
		}
		for n.rn.HasReady() {
			rd := n.rn.Ready()
			if err := n.st.SaveReady(rd); err != nil {
				n.mu.Lock()
				n.err = err
				n.mu.Unlock()
				return
			}
			n.tr.Send(rd.Messages)
			n.mu.Lock()
			for _, e := range rd.CommittedEntries {
				switch e.Type {
				case raftpb.EntryNormal:
					if len(e.Data) > 0 {
						n.applied = append(n.applied, string(e.Data))
					}
				case raftpb.EntryConfChange:
					var cc raftpb.ConfChange
					cc.Unmarshal(e.Data)
					n.st.SetConfState(*n.rn.ApplyConfChange(cc))
				}
			}
			n.mu.Unlock()
			n.rn.Advance(rd)
		}
	}
}

// do runs f in the node's loop, where the RawNode may be used.
func (n *node) do(f func()) {
	done := make(chan struct{})
	n.fnc <- func() { f(); close(done) }
	<-done
}

func (n *node) status() raft.BasicStatus {
	var s raft.BasicStatus
	n.do(func() { s = n.rn.BasicStatus() })
	return s
}

func (n *node) propose(data string) {
	n.do(func() { n.rn.Propose([]byte(data)) })
}

func (n *node) log() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		panic(n.err)
	}
	return append([]string(nil), n.applied...)
}

func (n *node) stop() {
	close(n.stopc)
	<-n.done
	n.tr.Stop()
	n.st.Close()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leaderAmong returns the node all of nodes agree leads, if any.
func leaderAmong(nodes []*node) *node {
	var lead uint64
	for _, n := range nodes {
		s := n.status()
		if s.Lead == 0 || (lead != 0 && s.Lead != lead) {
			return nil
		}
		lead = s.Lead
	}
	for _, n := range nodes {
		if n.id == lead && n.status().RaftState == raft.StateLeader {
			return n
		}
	}
	return nil
}

// proposeAll proposes each payload through the leader of nodes until every
// one of nodes has applied all of them (proposals can be dropped during a
// leader change, so missing ones are proposed again).
func proposeAll(t *testing.T, nodes []*node, payloads []string) {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second)
	for {
		var lead *node
		waitFor(t, time.Until(deadline), "a leader", func() bool { lead = leaderAmong(nodes); return lead != nil })
		for _, p := range payloads {
			if !contains(lead.log(), p) {
				lead.propose(p)
			}
		}
		for time.Now().Before(deadline) {
			all := true
			for _, n := range nodes {
				for _, p := range payloads {
					all = all && contains(n.log(), p)
				}
			}
			if all {
				return
			}
			time.Sleep(10 * time.Millisecond)
			if leaderAmong(nodes) != lead {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("payloads not applied everywhere in time")
		}
	}
}

func contains(log []string, s string) bool {
	for _, x := range log {
		if x == s {
			return true
		}
	}
	return false
}

func sameLogs(t *testing.T, nodes []*node) {
	t.Helper()
	want := nodes[0].log()
	for _, n := range nodes[1:] {
		got := n.log()
		if len(got) != len(want) {
			t.Fatalf("node %d applied %d entries, node %d %d", n.id, len(got), nodes[0].id, len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("entry %d: node %d has %q, node %d %q", i, n.id, got[i], nodes[0].id, want[i])
			}
		}
	}
}

// TestCluster runs three RawNodes on raftlog storage and this transport
// over loopback: election, 100 proposals committed in the same order
// everywhere, the leader cut off and replaced, then healed and caught up.
func TestCluster(t *testing.T) {
	checkGoroutines(t)
	began := time.Now()
	voters := []uint64{1, 2, 3}
	var nodes []*node
	dirs := map[uint64]string{}
	for _, id := range voters {
		dirs[id] = t.TempDir()
		nodes = append(nodes, newNode(t, id, voters, dirs[id], "127.0.0.1:0"))
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				a.tr.AddPeer(b.id, b.tr.ListenAddr())
			}
		}
		go a.run()
	}
	defer func() {
		for _, n := range nodes {
			n.stop()
		}
	}()

	var payloads []string
	for i := range 100 {
		payloads = append(payloads, fmt.Sprint("entry-", i))
	}
	proposeAll(t, nodes, payloads)
	sameLogs(t, nodes)
	for _, p := range payloads {
		if !contains(nodes[0].log(), p) {
			t.Fatalf("%q not applied", p)
		}
	}
	old := leaderAmong(nodes)
	if old == nil {
		t.Fatal("no leader")
	}
	t.Logf("leader %d, %d entries applied after %v", old.id, len(nodes[0].log()), time.Since(began))

	// Cut the leader off from both peers.
	var rest []*node
	for _, n := range nodes {
		if n != old {
			rest = append(rest, n)
			old.tr.Partition(n.id)
		}
	}
	var lead *node
	waitFor(t, 5*time.Second, "a new leader", func() bool { lead = leaderAmong(rest); return lead != nil })
	oldTerm := old.status().Term
	if s := lead.status(); s.Term <= oldTerm && lead.id == old.id {
		t.Fatalf("new leader %+v", s)
	}
	var more []string
	for i := range 20 {
		more = append(more, fmt.Sprint("after-partition-", i))
	}
	proposeAll(t, rest, more)
	sameLogs(t, rest)
	// The old leader, alone, steps down (CheckQuorum) and applies nothing new.
	waitFor(t, 3*time.Second, "the old leader to step down", func() bool { return old.status().RaftState != raft.StateLeader })
	if contains(old.log(), more[0]) {
		t.Fatal("the partitioned node applied a new entry")
	}
	t.Logf("new leader %d after %v", lead.id, time.Since(began))

	// Heal: the old leader catches up with the same log.
	for _, n := range rest {
		old.tr.Heal(n.id)
	}
	waitFor(t, 5*time.Second, "the old leader to catch up", func() bool { return len(old.log()) == len(lead.log()) })
	sameLogs(t, nodes)
	if l := leaderAmong(nodes); l == nil {
		t.Fatal("no agreed leader after healing")
	}
	t.Logf("healed after %v", time.Since(began))

	// Restart a follower from its log on disk, at the same address: raft
	// hands it back every committed entry, and it follows new ones.
	var f *node
	for i, n := range nodes {
		if n.status().RaftState == raft.StateFollower {
			addr := n.tr.ListenAddr()
			n.stop()
			f = newNode(t, n.id, voters, dirs[n.id], addr)
			for _, p := range nodes {
				if p != n {
					f.tr.AddPeer(p.id, p.tr.ListenAddr())
				}
			}
			go f.run()
			nodes[i] = f
			break
		}
	}
	if hs, _, _ := f.st.InitialState(); hs.Commit < 121 {
		t.Fatalf("restarted node's commit index %d", hs.Commit)
	}
	var last []string
	for i := range 10 {
		last = append(last, fmt.Sprint("after-restart-", i))
	}
	proposeAll(t, nodes, last)
	waitFor(t, 5*time.Second, "all nodes to apply the same", func() bool {
		return len(nodes[0].log()) == len(nodes[1].log()) && len(nodes[1].log()) == len(nodes[2].log())
	})
	sameLogs(t, nodes)
	if n := len(f.log()); n < 130 {
		t.Fatalf("restarted node applied %d entries, want at least 130", n)
	}
	t.Logf("restarted node %d caught up after %v", f.id, time.Since(began))
	if d := time.Since(began); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}
