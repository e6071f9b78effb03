package shard

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"basalt/internal/raftlog"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// The Raft side of a shard. One goroutine (node.run) owns the RawNode:
//
//	rd := rn.Ready()
//	log.SaveReady(rd)          // entries and hard state, one batch, one sync
//	transport.Send(rd.Messages)
//	events <- rd.CommittedEntries // the apply loop applies them, in order
//	rn.Advance(rd)
//
// Raft orders the shard's log: an entry is one group of records (see
// shard.go for who proposes them and how they are applied). A lone node is
// a group of one voter, so a single server and a cluster run the same path.

// NotLeaderError is returned for writes on a node that does not lead its
// group: the server forwards them to Leader (0 if unknown).
type NotLeaderError struct{ Leader uint64 }

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return "no leader is known for the shard; try again shortly"
	}
	return "this node is not the leader; the leader is node " + strconv.FormatUint(e.Leader, 10)
}

// ErrUnknownOutcome is returned for a write proposed by a leader that lost
// its leadership before the write committed: a new leader may still commit
// it, or not.
var ErrUnknownOutcome = errors.New("leadership changed; the write may or may not have been applied")

// event is what the Raft loop hands the apply loop, in log order.
type event struct {
	snap     *raftpb.Snapshot // a snapshot to install before any later entry
	ents     []raftpb.Entry   // committed entries
	snapshot bool             // pin and record a snapshot of the store (raft needs one, or a member was added)
	lost     bool             // this node stopped leading
	dropped  uint64           // raft refused the proposal with this id
}

type readReq struct {
	done chan uint64 // receives the read index; closed without one on failure
}

type confReq struct {
	cc   raftpb.ConfChange
	done chan error
}

// snapReport is the outcome of a snapshot sent to a member.
type snapReport struct {
	to uint64
	ok bool
}

// node runs the RawNode.
type node struct {
	s    *Shard
	rn   *raft.RawNode
	log  *raftlog.Storage
	tr   *transport.Transport // nil for a lone node without peers
	host *Host                // the transport's owner, if shared (cluster mode)

	propc   chan []byte
	recvc   chan raftpb.Message
	readc   chan readReq
	confc   chan confReq
	fnc     chan func()
	unreach chan uint64
	snapc   chan snapReport
	stopc   chan struct{}
	done    chan struct{}

	// loneFast mirrors lone() for other goroutines.
	loneFast atomic.Bool
	// members are the group's voters and learners, for the transport,
	// which accepts no one else (see member).
	members atomic.Pointer[map[uint64]bool]

	reads     map[string][]readReq // ReadIndex requests in flight, by context
	readSeq   uint64
	queued    []readReq // waiting for the next ReadIndex call
	confs     []confReq // conf changes waiting for their entry to apply
	leaderSet bool

	// The clock check's state (clock.go).
	ticks       uint64
	clockSince  time.Time // when the current refusal began
	clockLogged bool      // whether it was logged
	clockTried  uint64    // the follower the last handover went to
}

// Status is a node's view of its group, for INFO and RAFT STATUS.
type Status struct {
	ID, Leader, Term, Commit, Applied, FirstIndex, LastIndex uint64
	Role                                                     string
	Voters, Learners                                         []uint64
	Progress                                                 map[uint64]tracker.Progress
	Peers                                                    map[uint64]string // transport address
	Advertised                                               map[uint64]string // client address to forward to
}

// openLog opens the group's log: in the node's engine if it has one,
// unless RaftDir holds a log of its own, which a node written before the
// engine was shared keeps using.
func openLog(cfg Config) (*raftlog.Storage, error) {
	if cfg.RaftLog == nil || raftlog.HasOwnLog(cfg.RaftDir) {
		return raftlog.Open(cfg.RaftDir)
	}
	if err := os.MkdirAll(cfg.RaftDir, 0o755); err != nil {
		return nil, err
	}
	return cfg.RaftLog.Open(uint64(transport.GroupOf(cfg.ID)))
}

func openNode(s *Shard, cfg Config) (*node, error) {
	lg, err := openLog(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.finishInstall(lg); err != nil {
		lg.Close()
		return nil, err
	}
	last, _ := lg.LastIndex()
	clusterID, err := checkIdentity(cfg, last == 0)
	if err != nil {
		lg.Close()
		return nil, err
	}
	if last == 0 && !cfg.Join {
		voters := []uint64{cfg.ID}
		for id := range cfg.Peers {
			if id != cfg.ID {
				voters = append(voters, id)
			}
		}
		sort.Slice(voters, func(i, j int) bool { return voters[i] < voters[j] })
		if err := lg.Bootstrap(voters); err != nil {
			lg.Close()
			return nil, err
		}
	}
	hs, cs, err := lg.InitialState()
	if err != nil {
		lg.Close()
		return nil, err
	}
	if last, _ := lg.LastIndex(); last < s.applied.Load() {
		// The store has entries the log lost: its unsynced tail went in a
		// crash (appendfsync everysec or no). A lone node's store is the
		// whole truth, so its log restarts after the store's last entry; a
		// member of a group cannot know what it lost.
		if len(cs.Voters) != 1 || cs.Voters[0] != cfg.ID || len(cs.Learners) > 0 {
			lg.Close()
			return nil, fmt.Errorf("the raft log ends at %d but the store has applied %d: this node lost acknowledged log entries and must be removed and re-added", last, s.applied.Load())
		}
		applied := s.applied.Load()
		snap := raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{Index: applied, Term: max(hs.Term, 1), ConfState: cs}}
		hs = raftpb.HardState{Term: max(hs.Term, 1), Vote: hs.Vote, Commit: applied}
		if err := lg.Save(snap, hs, nil, true); err != nil {
			lg.Close()
			return nil, err
		}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	}
	// The hard state's commit index is not synced on its own, so the store
	// may have applied past it after an OS crash; raft refuses an applied
	// index beyond commit. Start from the lower one: the apply loop skips
	// what the store has already.
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              cfg.ID,
		ElectionTick:    cfg.ElectionTicks,
		HeartbeatTick:   heartbeatTicks,
		Storage:         snapStorage{lg, s},
		Applied:         min(s.applied.Load(), hs.Commit),
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		ReadOnlyOption:  raft.ReadOnlySafe,
		// Proposals come only from this node's apply loop while it leads.
		DisableProposalForwarding: true,
		Logger:                    logger,
	})
	if err != nil {
		lg.Close()
		return nil, err
	}
	n := &node{
		s: s, rn: rn, log: lg,
		propc:   make(chan []byte, 1024), // never full: at most maxInflight groups are proposed at a time
		recvc:   make(chan raftpb.Message, 4096),
		readc:   make(chan readReq, 1024),
		confc:   make(chan confReq, 16),
		fnc:     make(chan func()),
		unreach: make(chan uint64, 64),
		snapc:   make(chan snapReport, 16),
		stopc:   make(chan struct{}),
		done:    make(chan struct{}),
		reads:   map[string][]readReq{},
	}
	n.setMembers(cs)
	switch {
	case cfg.Host != nil:
		n.tr, n.host = cfg.Host.tr, cfg.Host
		cfg.Host.add(n)
		for id, addr := range cfg.Peers {
			if id != cfg.ID && addr != "" {
				n.tr.AddPeer(transport.NodeOf(id), addr)
			}
		}
		n.restorePeers()
	case cfg.RaftAddr != "":
		n.tr = &transport.Transport{ID: cfg.ID, Addr: cfg.RaftAddr, Advertise: cfg.Advertise,
			Secret: cfg.Secret, Cluster: clusterID, Member: n.member,
			ServerTLS: cfg.ServerTLS, ClientTLS: cfg.ClientTLS,
			Logf: func(format string, args ...any) { slog.Warn(fmt.Sprintf(format, args...)) },
			LearnCluster: func(id uint64) {
				slog.Info("raft: joined the cluster", "cluster_id", fmt.Sprintf("%016x", id))
				if err := writeIdentity(cfg.RaftDir, identity{cfg.ID, id}); err != nil {
					slog.Error("raft: recording the cluster ID", "err", err)
				}
			},
			Unreachable:    n.reportUnreachable,
			SnapshotSource: s.streamSnapshot,
			SnapshotSink:   s.receiveSnapshot,
			SnapshotDone:   n.snapshotDone,
		}
		if err := n.tr.Start(n.receive); err != nil {
			lg.Close()
			return nil, err
		}
		for id, addr := range cfg.Peers {
			if id != cfg.ID && addr != "" {
				n.tr.AddPeer(id, addr)
			}
		}
		n.restorePeers()
	}
	return n, nil
}

// receive hands a message from the transport to the Raft loop.
func (n *node) receive(m raftpb.Message) {
	select {
	case n.recvc <- m:
	case <-n.stopc:
	}
}

// reportUnreachable tells raft, soon, that a member could not be reached.
func (n *node) reportUnreachable(id uint64) {
	select {
	case n.unreach <- id:
	default: // a hint; one pending is enough
	}
}

// snapshotDone hands the outcome of a snapshot sent to a member to raft.
func (n *node) snapshotDone(to uint64, ok bool) {
	select {
	case n.snapc <- snapReport{to, ok}:
	case <-n.stopc:
	}
}

// setMembers records the group's configuration for member.
func (n *node) setMembers(cs raftpb.ConfState) {
	m := map[uint64]bool{}
	for _, ids := range [][]uint64{cs.Voters, cs.Learners, cs.VotersOutgoing, cs.LearnersNext} {
		for _, id := range ids {
			m[id] = true
		}
	}
	n.members.Store(&m)
}

// member reports whether node id may send this node Raft messages: a
// member of its group, or anyone authenticated while this node knows no
// group yet (it joins, and waits for a member to send it the log).
func (n *node) member(id uint64) bool {
	m := *n.members.Load()
	return len(m) == 0 || m[id]
}

// restorePeers gives the transport the addresses of members added at run
// time, which conf change entries carry and the log keeps.
func (n *node) restorePeers() {
	for id, addr := range n.log.Peers() {
		if id != n.s.cfg.ID {
			n.tr.AddPeer(transport.NodeOf(id), addr)
		}
	}
}

func (n *node) run() {
	defer close(n.done)
	tick := time.NewTicker(n.s.cfg.TickInterval)
	defer tick.Stop()
	n.loneFast.Store(n.lone())
	if n.loneFast.Load() {
		n.rn.Campaign() // no one to wait for
	}
	for {
		select {
		case <-n.stopc:
			n.failReads()
			return
		case <-tick.C:
			n.rn.Tick()
			if n.ticks++; n.ticks%clockCheckTicks == 0 {
				n.checkClock()
			}
		case m := <-n.recvc:
			n.step(m)
		case id := <-n.unreach:
			n.rn.ReportUnreachable(id)
		case r := <-n.snapc:
			// Stored: the leader probes the follower, which now has the
			// snapshot's index. Failed: it probes too, and sends a
			// snapshot again if the follower still needs one.
			st := raft.SnapshotFinish
			if !r.ok {
				st = raft.SnapshotFailure
			}
			n.rn.ReportSnapshot(r.to, st)
		case f := <-n.fnc:
			f()
		case data := <-n.propc:
			n.propose(data)
		case r := <-n.readc:
			n.queued = append(n.queued, r)
		case c := <-n.confc:
			n.proposeConf(c)
		}
		n.drain()
		n.startRead()
		for n.rn.HasReady() {
			if err := n.handleReady(n.rn.Ready()); err != nil {
				slog.Error("raft: stopping the shard", "err", err)
				n.s.fail(err)
				n.failReads()
				<-n.stopc
				return
			}
		}
	}
}

// lone reports whether this node is the group's only voter.
func (n *node) lone() bool {
	cfg := n.rn.Status().Config
	voters := cfg.Voters.IDs()
	_, self := voters[n.s.cfg.ID]
	return len(voters) == 1 && self && len(cfg.Learners) == 0
}

// drain steps the messages already received and takes the requests already
// queued, so one Ready carries many of them (one sync for all).
func (n *node) drain() {
	for i := 0; i < 4096; i++ {
		select {
		case m := <-n.recvc:
			n.step(m)
		case data := <-n.propc:
			n.propose(data)
		case r := <-n.readc:
			n.queued = append(n.queued, r)
		default:
			return
		}
	}
}

func (n *node) propose(data []byte) {
	if err := n.rn.Propose(data); err != nil {
		n.s.events <- event{dropped: entryID(data)}
	}
}

// proposeConf proposes a membership change; its done channel is answered
// when the entry is applied (or at once if raft refuses it).
func (n *node) proposeConf(c confReq) {
	if err := n.rn.ProposeConfChange(c.cc); err != nil {
		c.done <- fmt.Errorf("membership change refused: %w", err)
		return
	}
	n.confs = append(n.confs, c)
}

// startRead asks raft for a read index covering every read queued since
// the last one: many concurrent reads share one round of heartbeats.
func (n *node) startRead() {
	if len(n.queued) == 0 {
		return
	}
	if n.rn.BasicStatus().Lead == raft.None {
		// Raft would drop the request (mid-election, or just after a
		// leadership transfer): the reads fail now, not at their timeout.
		n.failQueued()
		return
	}
	n.readSeq++
	ctx := binary.BigEndian.AppendUint64(nil, n.readSeq)
	n.reads[string(ctx)] = n.queued
	n.queued = nil
	n.rn.ReadIndex(ctx)
}

func (n *node) failReads() {
	for k, rs := range n.reads {
		for _, r := range rs {
			close(r.done)
		}
		delete(n.reads, k)
	}
	n.failQueued()
}

func (n *node) failQueued() {
	for _, r := range n.queued {
		close(r.done)
	}
	n.queued = nil
}

func (n *node) handleReady(rd raft.Ready) error {
	// A snapshot is always synced: the store's install of it is, and the
	// log must not end before the store after a crash.
	sync := rd.MustSync && n.s.FsyncPolicy() == FsyncAlways || !raft.IsEmptySnap(rd.Snapshot)
	start := time.Now()
	if err := n.log.Save(rd.Snapshot, rd.HardState, rd.Entries, sync); err != nil {
		return fmt.Errorf("saving raft state: %w", err)
	}
	n.s.syncMark.logSaved(&rd, sync)
	if took := time.Since(start); sync {
		n.s.synced(took)
	} else if took > slowSave {
		n.s.heldUp(took)
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		snap := rd.Snapshot
		n.setMembers(snap.Metadata.ConfState)
		n.s.events <- event{snap: &snap}
	}
	if n.tr != nil {
		n.tr.Send(n.withoutCampaign(rd.Messages)) // a MsgSnap's outcome comes back on snapc
	}
	for _, rs := range rd.ReadStates {
		for _, r := range n.reads[string(rs.RequestCtx)] {
			r.done <- rs.Index
		}
		delete(n.reads, string(rs.RequestCtx))
	}
	added := n.applyConf(rd.CommittedEntries)
	if k := len(rd.CommittedEntries); k > 0 {
		n.s.events <- event{ents: rd.CommittedEntries}
		n.log.Committed(rd.CommittedEntries[k-1].Index)
	}
	if added {
		n.s.events <- event{snapshot: true}
	}
	if rd.SoftState != nil {
		n.logLeader(rd.SoftState)
		n.s.leader.Store(rd.SoftState.Lead)
		if rd.SoftState.RaftState == raft.StateLeader {
			n.s.leadTerm.Store(n.rn.BasicStatus().Term)
			n.leaderSet = true
		} else if n.leaderSet {
			n.leaderSet = false
			n.s.leadTerm.Store(0)
			n.failReads()
			n.s.events <- event{lost: true}
		}
	}
	n.rn.Advance(rd)
	return nil
}

// logLeader logs a change of leader at notice level (a group without one
// at warning): an operator follows elections in the log.
func (n *node) logLeader(ss *raft.SoftState) {
	prev := n.s.leader.Load()
	if ss.Lead == prev {
		return
	}
	term := n.rn.BasicStatus().Term
	switch {
	case ss.Lead == 0:
		slog.Warn("raft: no leader", "node", n.s.cfg.ID, "previous", prev, "term", term, "role", ss.RaftState.String())
	case ss.Lead == n.s.cfg.ID:
		n.s.Stats.LeaderChanges.Add(1)
		slog.Info("raft: elected leader", "node", n.s.cfg.ID, "term", term, "previous", prev)
	default:
		n.s.Stats.LeaderChanges.Add(1)
		slog.Info("raft: leader changed", "node", n.s.cfg.ID, "leader", ss.Lead, "term", term, "previous", prev)
	}
}

// applyConf applies committed membership changes to raft and to the
// transport, and reports whether a member was added. Data entries are left
// to the apply loop.
func (n *node) applyConf(ents []raftpb.Entry) (added bool) {
	for i := range ents {
		e := &ents[i]
		if e.Type != raftpb.EntryConfChange {
			continue
		}
		var cc raftpb.ConfChange
		if err := cc.Unmarshal(e.Data); err != nil {
			slog.Error("raft: bad conf change entry", "index", e.Index, "err", err)
			continue
		}
		cs := n.rn.ApplyConfChange(cc)
		n.setMembers(*cs)
		addr := string(cc.Context)
		if err := n.log.ApplyConfChange(*cs, cc.NodeID, addr, cc.Type == raftpb.ConfChangeRemoveNode); err != nil {
			slog.Error("raft: saving the configuration", "err", err)
		}
		if n.tr != nil && cc.NodeID != n.s.cfg.ID {
			switch cc.Type {
			case raftpb.ConfChangeAddNode, raftpb.ConfChangeAddLearnerNode:
				added = true
				if addr != "" {
					n.tr.AddPeer(transport.NodeOf(cc.NodeID), addr)
				}
			case raftpb.ConfChangeRemoveNode:
				if n.host == nil { // a shared transport's peer may serve other groups
					n.tr.RemovePeer(cc.NodeID)
				}
			}
		}
		n.loneFast.Store(n.lone())
		slog.Info("raft: membership changed", "change", cc.Type.String(), "member", cc.NodeID, "addr", addr, "index", e.Index, "voters", len(cs.Voters), "learners", len(cs.Learners))
		if len(n.confs) > 0 {
			n.confs[0].done <- nil
			n.confs = n.confs[1:]
		}
	}
	return added
}

// do runs f in the Raft loop, where the RawNode may be used.
func (n *node) do(f func()) error {
	ran := make(chan struct{})
	select {
	case n.fnc <- func() { f(); close(ran) }:
	case <-n.done:
		return ErrClosed
	}
	<-ran
	return nil
}

func (n *node) status() Status {
	var st Status
	n.do(func() {
		rs := n.rn.Status()
		st = Status{ID: rs.ID, Leader: rs.Lead, Term: rs.Term, Commit: rs.Commit,
			Role: roleName(rs.RaftState), Progress: rs.Progress}
		st.Voters = sortedIDs(rs.Config.Voters.IDs())
		st.Learners = sortedIDs(rs.Config.Learners)
	})
	st.Applied = n.s.applied.Load()
	st.FirstIndex, _ = n.log.FirstIndex()
	st.LastIndex, _ = n.log.LastIndex()
	st.Peers, st.Advertised = map[uint64]string{}, map[uint64]string{}
	for id, addr := range n.s.cfg.Peers {
		st.Peers[id] = addr
	}
	for id, addr := range n.log.Peers() {
		st.Peers[id] = addr
	}
	if n.tr != nil {
		st.Peers[n.s.cfg.ID] = n.tr.ListenAddr()
		for id := range st.Peers {
			if a := forwardAddr(n.tr.Advertised(transport.NodeOf(id))); a != "" {
				st.Advertised[id] = a
			}
		}
	}
	st.Advertised[n.s.cfg.ID] = forwardAddr(n.s.cfg.Advertise)
	return st
}

func roleName(s raft.StateType) string {
	switch s {
	case raft.StateLeader:
		return "leader"
	case raft.StateCandidate, raft.StatePreCandidate:
		return "candidate"
	}
	return "follower"
}

func sortedIDs[V any](m map[uint64]V) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// transferLeadership hands leadership to the most up-to-date follower (to,
// if not 0) that raft heard from lately and that is caught up, and waits
// (up to timeout) for it to take over: a graceful shutdown then costs
// clients a moment instead of an election timeout. Raft forgets whom it
// heard from at each quorum check, every election timeout, and hears a
// live follower again within a heartbeat, so while this node leads a
// follower not heard from is looked at again for a few heartbeats (one
// catching up, until the deadline): a caller that tries once every
// election timeout (balanceLeaders) could otherwise look just after each
// check. A target that does not take over is given up for another.
//
// As Redis's manual failover pauses writes until the replica has them,
// the shard takes no new write once a target is found, until the writes
// in flight have committed; then raft hands over, and the writes that
// waited are refused with the new leader's name (a client is redirected
// there: MOVED, or the proxy), not dropped by raft mid-transfer with an
// unknown outcome.
func (n *node) transferLeadership(to uint64, timeout time.Duration) {
	start := time.Now()
	deadline := start.Add(timeout)
	// A live follower is heard again within a heartbeat of the quorum
	// check, and a caught-up one takes over within a round trip or two:
	// one still silent after a few heartbeats is gone (stopped, or cut
	// off), as are all a cluster's last node's when it stops, and one that
	// has not taken over by then died since raft last heard from it.
	patience := 4 * heartbeatTicks * n.s.cfg.TickInterval
	held := false
	defer func() {
		if held {
			n.s.holdWrites(false)
		}
	}()
	tried := map[uint64]bool{}
	for n.s.leadTerm.Load() != 0 && time.Now().Before(deadline) {
		target, quiet, behind := n.transferTarget(to, tried)
		if target == 0 {
			if !behind && !(quiet && time.Since(start) < patience) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !held {
			n.s.holdWrites(true)
			held = true
			for !n.s.drained.Load() {
				if n.s.leadTerm.Load() == 0 || time.Now().After(deadline) {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		n.do(func() {
			if n.rn.BasicStatus().RaftState == raft.StateLeader {
				n.rn.TransferLeader(target)
			}
		})
		for until := time.Now().Add(patience / 2); n.s.leadTerm.Load() != 0 && time.Now().Before(until) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if n.s.leadTerm.Load() == 0 {
			return
		}
		// Give it up (a transfer to oneself aborts raft's), so that raft
		// takes writes again, and try another.
		n.do(func() { n.rn.TransferLeader(n.s.cfg.ID) })
		tried[target] = true
	}
}

// heartbeatTicks is how often a leader sends heartbeats, in ticks.
const heartbeatTicks = 2

// transferLag is how many entries a follower may miss and still be handed
// leadership at once: raft hands over once it has them all, and holds
// writes meanwhile.
const transferLag = 64

// transferTarget, if this node leads, picks the most up-to-date voter (to,
// if not 0; none tried) that raft heard from lately and that is caught up,
// and returns it; else 0, and whether a voter would do once heard from
// (quiet) or caught up (behind).
func (n *node) transferTarget(to uint64, tried map[uint64]bool) (target uint64, quiet, behind bool) {
	n.do(func() {
		rs := n.rn.Status()
		if rs.RaftState != raft.StateLeader {
			return
		}
		last := rs.Progress[rs.ID].Match
		best := uint64(0)
		for id, pr := range rs.Progress {
			switch {
			case id == rs.ID || pr.IsLearner || to != 0 && id != to || tried[id]:
			case !pr.RecentActive || pr.State == tracker.StateProbe: // Probe: also after the transport failed to reach it
				quiet = true
			case pr.State != tracker.StateReplicate || pr.Match+transferLag < last:
				behind = true
			case pr.Match >= best:
				target, best = id, pr.Match
			}
		}
	})
	return target, quiet, behind
}

// transferring reports whether raft is handing leadership over.
func (n *node) transferring() (yes bool) {
	n.do(func() { yes = n.rn.BasicStatus().LeadTransferee != 0 })
	return yes
}

func (n *node) stop() {
	close(n.stopc)
	<-n.done
	switch {
	case n.host != nil:
		n.host.remove(n) // the host's transport outlives its shards
	case n.tr != nil:
		n.tr.Stop()
	}
}

// identityFile, in the Raft directory, records which node of which cluster
// the directory belongs to, so that it is never started as another node
// (it would join with another's log) or used by another cluster.
const identityFile = "identity"

type identity struct{ node, cluster uint64 }

// checkIdentity compares the directory's identity with cfg, records it if
// the directory has none yet, and returns the cluster ID to use: the
// recorded one, else cfg's, else (a new group with a Raft address
// bootstrapped without an initial cluster) a random one; a lone node
// without one has none until it is started with an --initial-cluster.
// fresh says the log is empty.
func checkIdentity(cfg Config, fresh bool) (uint64, error) {
	var id identity
	b, err := os.ReadFile(filepath.Join(cfg.RaftDir, identityFile))
	switch {
	case err == nil:
		if _, err := fmt.Sscanf(string(b), "node-id %d\ncluster-id %x\n", &id.node, &id.cluster); err != nil {
			return 0, fmt.Errorf("%s: %q is not a node identity: %v", filepath.Join(cfg.RaftDir, identityFile), b, err)
		}
	case !os.IsNotExist(err):
		return 0, err
	}
	dir := filepath.Dir(cfg.RaftDir)
	switch {
	case id.node != 0 && id.node != transport.NodeOf(cfg.ID):
		return 0, fmt.Errorf("the data directory %s belongs to node %d of cluster %016x, not node %d: start it with --node-id %d, or give node %d an empty directory", dir, id.node, id.cluster, transport.NodeOf(cfg.ID), id.node, transport.NodeOf(cfg.ID))
	case id.cluster != 0 && cfg.ClusterID != 0 && id.cluster != cfg.ClusterID:
		return 0, fmt.Errorf("the data directory %s belongs to node %d of cluster %016x, but --initial-cluster names cluster %016x: start it with the --initial-cluster it was bootstrapped with, or give it an empty directory", dir, id.node, id.cluster, cfg.ClusterID)
	}
	want := identity{transport.NodeOf(cfg.ID), cmp.Or(id.cluster, cfg.ClusterID)}
	if want.cluster == 0 && fresh && !cfg.Join && cfg.RaftAddr != "" {
		want.cluster = rand.Uint64() | 1
	}
	if want == id {
		return id.cluster, nil
	}
	return want.cluster, writeIdentity(cfg.RaftDir, want)
}

// writeIdentity replaces the directory's identity, durably.
func writeIdentity(dir string, id identity) error {
	path := filepath.Join(dir, identityFile)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		_, err = fmt.Fprintf(f, "node-id %d\ncluster-id %016x\n", id.node, id.cluster)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("recording the node's identity: %w", err)
	}
	return nil
}
