package shard

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/clock"
	"basalt/internal/raftlog"
	"basalt/internal/resp"
	"basalt/internal/store"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// Fsync is the appendfsync policy.
type Fsync int

const (
	FsyncAlways   Fsync = iota // a reply means the write is on disk
	FsyncEverySec              // sync in the background once a second
	FsyncNo                    // let the OS decide
)

// ParseFsync reads an appendfsync value.
func ParseFsync(s string) (Fsync, bool) {
	switch s {
	case "always":
		return FsyncAlways, true
	case "everysec":
		return FsyncEverySec, true
	case "no":
		return FsyncNo, true
	}
	return 0, false
}

func (f Fsync) String() string { return [...]string{"always", "everysec", "no"}[f] }

// Applier applies one record to the write Tx and writes the client's reply
// to w (which may be nil when replaying). It must be a pure function of the
// state and the record; env is what it may ask of the shard besides.
// run is the leader's Run for its client's record, nil otherwise.
type Applier func(tx *store.Tx, rec *Record, run *Run, env Env, w *resp.Writer)

// Env is what applying a record may ask of its shard: whether a key an EXEC
// watched was modified since (the leader's registry), and, for a PUBLISH
// inside EXEC in a group of several nodes, to deliver it through the log.
// A Shard is one; the determinism test applies records without.
type Env interface {
	WatchDirty(k WatchKey) bool
	Lone() bool
	Publish(tx *store.Tx, rec *Record, channel, message, origin []byte, receivers func(n int))
}

// Proposal is a write waiting for its turn: the record, where its reply goes
// and a channel that receives one value when the reply is ready (after the
// sync, with appendfsync always). Done must be buffered so that the apply
// loop never waits for a client; NewProposal makes one, and a pooled
// proposal can be reused once its value was received.
type Proposal struct {
	Rec  Record
	Run  Run // what applying Rec asks and leaves, beside its reply
	W    *resp.Writer
	Done chan struct{}
	// Client is the ID of the client that proposed it, for the keys its
	// record modifies (store.Tx.Writer: CLIENT TRACKING's NOLOOP); 0 if
	// none.
	Client uint64
	// Err is why the shard did not apply it, or lost its outcome (W holds
	// the error reply); nil once applied.
	Err error

	// cancelled is set (under the shard's blockMu) when a blocking
	// proposal is withdrawn before the apply loop got to block it.
	cancelled bool

	// state says whether the apply loop took the proposal or its client
	// withdrew it first (Withdraw).
	state atomic.Int32
}

// Proposal states.
const (
	propQueued int32 = iota
	propTaken
	propWithdrawn
)

// Recycle makes a completed proposal ready for another record.
func (p *Proposal) Recycle() {
	p.Rec, p.Run = Record{}, Run{}
	p.Client, p.Err = 0, nil
	p.W.Reset()
	p.cancelled = false
	p.state.Store(propQueued)
}

// Withdraw takes back a proposal the apply loop has not started on: it
// will never be applied nor answered. A client whose write waits behind a
// script past its time limit withdraws it and answers BUSY instead. It
// reports false if the loop has the proposal already: its reply comes as
// usual. A withdrawn proposal may still sit in the loop's queue, so it
// must not be reused.
func (p *Proposal) Withdraw() bool { return p.state.CompareAndSwap(propQueued, propWithdrawn) }

// NewProposal returns a proposal for rec with its own reply writer.
func NewProposal(rec Record, proto int) *Proposal {
	return &Proposal{Rec: rec, W: resp.NewWriter(proto), Done: make(chan struct{}, 1)}
}

// ErrClosed is returned for writes proposed after Close.
var ErrClosed = errors.New("shard closed")

// ErrFailed is returned for writes after the log or the store failed.
var ErrFailed = errors.New("a write to the log or the store failed; writes are refused")

// Config describes a shard's node in its Raft group. The zero value but
// RaftDir is a lone node: a group of one voter with no transport.
type Config struct {
	ID       uint64            // this node's ID (default 1)
	Peers    map[uint64]string // the other voters' Raft addresses, used when the log is new
	Join     bool              // start empty and wait to be added (RAFT ADD) instead of bootstrapping
	RaftAddr string            // the Raft transport's listen address; "" for a lone node
	// Advertise is the node's client address for its peers, as
	// ClientAddr.String writes it.
	Advertise string
	// Secret authenticates the Raft connections (see transport); ClusterID
	// names the cluster (0: a node that joins learns it; see identity).
	Secret    []byte
	ClusterID uint64
	// ServerTLS and ClientTLS, if set, run the Raft connections over
	// mutual TLS (see transport.MutualTLS).
	ServerTLS, ClientTLS *tls.Config
	// Host, in cluster mode, is the node's transport that the shard shares
	// with the node's other shards (ID is then a transport.ReplicaID, and
	// RaftAddr, Secret and TLS are the host's).
	Host *Host
	// RaftDir is the group's directory: its snapshots, its identity and,
	// unless RaftLog is set, its log.
	RaftDir string
	// RaftLog, in cluster mode, is the engine that holds the logs of the
	// node's groups, this one's too (under its group, transport.GroupOf(ID)).
	RaftLog *raftlog.Engine
	Fsync   Fsync
	// LogRetain is how many applied entries the log keeps (0: no limit),
	// and LogRetainBytes how many bytes of them at most (0: no limit); a
	// follower further behind catches up from a snapshot.
	LogRetain      uint64
	LogRetainBytes uint64
	// TickInterval is Raft's tick (default 50ms); a leader sends heartbeats
	// every two ticks, and a follower that hears none for ElectionTicks
	// (default 20: one to two seconds with the randomisation) starts an
	// election. Shorter timeouts fail over faster but make a loaded
	// machine's slow fsyncs look like a dead leader.
	TickInterval  time.Duration
	ElectionTicks int
	Logger        raft.Logger
	// Published hears, for every PUBLISH applied with an origin (a client
	// of that node published through the leader, see Shard.Publish), how
	// many of this node's subscribers got the message.
	Published func(origin []byte, receivers int)
}

// Shard owns the single ordered write path of a key space.
//
// Writes. The apply loop of the leader takes every proposal waiting (a
// group), gives each record its time and seed and applies the group to a
// write batch that is not committed yet: the records are final once
// applied (an EXEC whose WATCH failed becomes an aborted record, a blocked
// client served after a push becomes a record of its own), so what goes to
// the log is exactly what the leader applied. The group is proposed to Raft
// as one entry. When Raft commits it (on a majority of synced logs), the
// batch is committed to the store, without a sync of its own, and the
// clients get their replies. If instead another entry commits first, or
// leadership is lost, the batch is dropped and its clients get an error:
// the store only ever holds committed entries, so reads never see a write
// that may be lost. Followers, and a leader catching up, apply committed
// entries from the log with the same applier. Up to maxInflight groups are
// in flight at once, each applied on top of the ones before it (see
// store.WriteTxAfter), so applying the next group overlaps the sync and the
// replication of the previous ones.
//
// After a crash the store may lag the log (its commits are not synced); the
// entries after the store's applied index are applied again from the log.
type Shard struct {
	st    *store.Store
	apply Applier
	cfg   Config
	node  *node
	props chan *Proposal
	fsync atomic.Int32
	// syncMark is how much of the log is on disk (synced.go).
	syncMark syncMark
	// slowSyncs and stalledLog limit the lines of a slow disk (disk.go).
	slowSyncs, stalledLog store.LogLimit

	events   chan event
	applied  atomic.Uint64 // the last entry in the store, visible to reads
	appliedC atomic.Pointer[chan struct{}]
	leader   atomic.Uint64 // the leader as this node knows it
	leadTerm atomic.Uint64 // the term this node leads in; 0 if it does not

	appliedTermAtomic atomic.Uint64 // appliedTerm, for other goroutines
	lastTimeSeen      atomic.Int64  // lastTime, for the clock check (clock.go)
	clockRefusal      atomic.Pointer[string]
	clockAnchor       atomic.Pointer[clockAnchor]
	clockLog          store.LogLimit
	snapWanted        atomic.Bool       // raft asked for a snapshot the loop has not taken yet
	snaps             snapSource        // the store snapshot a leader streams to members (snapshot.go)
	storeRelease      *raftlog.Releaser // of the store's big batches Pebble keeps

	// Owned by the apply loop.
	appliedTerm uint64      // the term of the last entry applied
	pending     []*inflight // groups proposed, oldest first
	nextID      uint64
	lastTime    int64 // the last record time applied (see clock.go)
	rng         *rand.PCG
	compacted   uint64

	Watches *Watches
	group   *groupTouches // watched keys modified by the group being applied

	blocked blocked
	blockMu sync.Mutex
	waiters map[*Proposal]*waiter
	wake    []string // keys with waiters touched by the records applied

	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}
	failed    atomic.Bool
	halted    atomic.Bool // Halt: nothing more is logged
	diskFull  atomic.Bool // writes refused for want of space (disk.go)

	// handover is set while the leader hands its leadership over
	// (transferLeadership): the apply loop takes no new write, so that
	// the writes in flight commit first and the ones that wait go to the
	// new leader, instead of raft refusing them. drained says the loop
	// has seen it with nothing in flight; nudge wakes the loop to look.
	handover, drained atomic.Bool
	nudge             chan struct{}

	Stats Stats
}

// inflight is the group the leader applied and proposed, waiting for Raft.
type inflight struct {
	id      uint64
	tx      *store.Tx
	touched *groupTouches
	done    []*Proposal
	records int
	wake    []string
}

// Stats are counters for INFO.
type Stats struct {
	Records atomic.Int64
	Groups  atomic.Int64
	Syncs   atomic.Int64
	LastErr atomic.Pointer[error]
	// Raft's events, for /metrics: leaders this node has seen elected,
	// snapshots it streamed to followers and installed from a leader.
	LeaderChanges, SnapshotsSent, SnapshotsReceived atomic.Int64
	// SyncSeconds is the log's sync latency; GroupRecords the records
	// each group commit carried.
	SyncSeconds, GroupRecords *Histogram
}

// maxGroup bounds how many records share one entry.
const maxGroup = 4096

// maxInflight bounds the groups proposed and not yet committed; maxView
// bounds the bytes their shared view may hold before the loop lets them
// drain (a view is freed only once every group on it is committed). Two
// groups are enough to apply one while the other syncs; more only split
// the writes waiting into smaller groups, each with its entry, batch and
// commit: with four, SET -P 1 (50 clients) cost 6-10% more CPU per request
// and a 3-node cluster served 10-15% fewer of them.
//
// The second group goes in flight only once minSecond writes wait for it.
// The log syncs one Ready after another, so a write proposed while a group
// syncs waits for that sync anyway; proposing it at once only applies it
// earlier, and takes the first few writes that arrive as a group of their
// own, with its own sync. With 50 clients at -P 1 a sync carried about 13
// writes that way; waiting for the group in flight, 16: 1.27x the SETs a
// second at 0.83x the CPU per SET in an A/B, and in bench/run.sh -P 1
// 8-15% less CPU per write on SET, INCR, LPUSH, HSET and EVALSHA.
const (
	maxInflight = 2
	minSecond   = 16
	maxView     = 16 << 20
)

const entryVersion = 1

// New opens the shard's Raft log and starts its loops over st.
func New(st *store.Store, apply Applier, cfg Config) (*Shard, error) {
	if cfg.ID == 0 {
		cfg.ID = 1
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 50 * time.Millisecond
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 20
	}
	applied, err := st.AppliedIndex()
	if err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	s := &Shard{
		st:        st,
		apply:     apply,
		cfg:       cfg,
		props:     make(chan *Proposal, maxGroup),
		events:    make(chan event, 256),
		nextID:    rand.Uint64(),
		rng:       rand.NewPCG(seed, seed>>1|1),
		Watches:   newWatches(),
		waiters:   map[*Proposal]*waiter{},
		closing:   make(chan struct{}),
		done:      make(chan struct{}),
		nudge:     make(chan struct{}, 1),
		compacted: applied,
	}
	s.Stats.SyncSeconds, s.Stats.GroupRecords = newHistogram(syncBounds...), newHistogram(groupBounds...)
	s.slowSyncs.Period, s.stalledLog.Period, s.clockLog.Period = slowLogEvery, slowLogEvery, slowLogEvery
	s.applied.Store(applied)
	ch := make(chan struct{})
	s.appliedC.Store(&ch)
	s.fsync.Store(int32(cfg.Fsync))
	n, err := openNode(s, cfg)
	if err != nil {
		return nil, err
	}
	s.node = n
	s.storeRelease = raftlog.NewReleaser(st.Pebble(), store.MemTableSize)
	go n.run()
	go s.loop()
	go s.syncer()
	go s.watchDisk()
	return s, nil
}

// Store returns the store the shard applies to.
func (s *Shard) Store() *store.Store { return s.st }

// Applied is the index of the last entry applied and visible to reads.
func (s *Shard) Applied() uint64 { return s.applied.Load() }

// SetFsync changes the appendfsync policy at run time (CONFIG SET).
func (s *Shard) SetFsync(f Fsync) { s.fsync.Store(int32(f)) }

// FsyncPolicy returns the appendfsync policy.
func (s *Shard) FsyncPolicy() Fsync { return Fsync(s.fsync.Load()) }

// Lone reports whether this node is its group's only voter.
func (s *Shard) Lone() bool { return s.node.loneFast.Load() }

// publish applies a KindPublish record: Cmds[0] is {channel, message}, or
// {channel, message, origin} for a PUBLISH a client sent through another
// node (see Publish). The leader's client gets this node's count.
func (s *Shard) publish(tx *store.Tx, rec *Record, w *resp.Writer) {
	var reply func(int)
	if w != nil {
		reply = func(n int) { w.Int(int64(n)) }
	}
	if len(rec.Cmds) != 1 || len(rec.Cmds[0]) < 2 || len(rec.Cmds[0]) > 3 {
		if reply != nil {
			reply(0)
		}
		return
	}
	argv := rec.Cmds[0]
	var origin []byte
	if len(argv) == 3 {
		origin = argv[2]
	}
	s.Publish(tx, rec, argv[0], argv[1], origin, reply)
}

// Publish queues a message of a PUBLISH in a cluster (a KindPublish record,
// or a PUBLISH inside an EXEC) for this node's subscribers: it goes out
// when the batch commits, in log order with the keyspace notifications of
// the records around it. receivers, if not nil, hears how many of this
// node's subscribers got it, as it goes out. origin, if not nil, names the
// node (and its request) whose client published through the leader:
// Config.Published hears the count too, so that node's client gets its own
// node's count. A message older than a few seconds is a node catching up
// after a restart: its subscribers were not there to get it then, so it is
// not delivered, and counts 0.
func (s *Shard) Publish(tx *store.Tx, rec *Record, channel, message, origin []byte, receivers func(n int)) {
	if origin != nil && s.cfg.Published != nil {
		origin := bytes.Clone(origin)
		own := receivers
		receivers = func(n int) {
			if own != nil {
				own(n)
			}
			s.cfg.Published(origin, n)
		}
	}
	if clock.UnixMilli()-rec.Time >= 5000 {
		if receivers != nil {
			receivers(0)
		}
		return
	}
	tx.Publish(channel, message, receivers)
}

// IsLeader reports whether this node leads its group: writes go here.
func (s *Shard) IsLeader() bool { return s.leadTerm.Load() != 0 }

// Leader is the leader's ID as this node knows it (0: none).
func (s *Shard) Leader() uint64 { return s.leader.Load() }

// ID is this node's ID.
func (s *Shard) ID() uint64 { return s.cfg.ID }

// LeaderAddr is the client address to forward to that the leader
// advertised ("" if unknown).
func (s *Shard) LeaderAddr() string {
	id := s.leader.Load()
	switch {
	case id == 0:
		return ""
	case id == s.cfg.ID:
		return forwardAddr(s.cfg.Advertise)
	case s.node.tr == nil:
		return ""
	}
	return forwardAddr(s.node.tr.Advertised(transport.NodeOf(id)))
}

// Status returns this node's view of the group.
func (s *Shard) Status() Status { return s.node.status() }

// Replicas counts the other members whose log holds entry index, as the
// leader last heard from them: what WAIT answers. A node that does not
// lead knows no one's progress and answers 0, as does a lone node.
func (s *Shard) Replicas(index uint64) int {
	if !s.IsLeader() {
		return 0
	}
	n := 0
	s.node.do(func() {
		s.node.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			if id != s.cfg.ID && pr.Match >= index {
				n++
			}
		})
	})
	return n
}

// WaitLeader waits until some node leads the group and, if it is this one,
// until it can take writes. It reports whether that happened in time.
func (s *Shard) WaitLeader(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s.Leader() != 0 && (s.Leader() != s.cfg.ID || s.IsLeader() && s.ready()) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// ready reports whether the leader applied an entry of its own term, so
// every entry committed before its term is in the store.
func (s *Shard) ready() bool {
	t := s.leadTerm.Load()
	return t != 0 && s.appliedTermAtomic.Load() == t
}

// ReadIndex waits until this node's store holds every write committed
// before the call, after confirming with a majority that the node still
// leads (Raft's ReadIndex): a read that follows sees the latest committed
// state. A lone node is trivially up to date: its store has every
// committed entry once the write's reply went out.
func (s *Shard) ReadIndex(timeout time.Duration) error {
	if s.node.loneFast.Load() {
		return nil
	}
	r := readReq{done: make(chan uint64, 1)}
	select {
	case s.node.readc <- r:
	case <-s.closing:
		return ErrClosed
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var idx uint64
	select {
	case i, ok := <-r.done:
		if !ok {
			return &NotLeaderError{Leader: s.Leader()}
		}
		idx = i
	case <-t.C:
		return errors.New("timed out confirming leadership")
	}
	return s.WaitApplied(idx, t.C)
}

// WaitApplied waits until the store holds entry idx (or timeout fires).
func (s *Shard) WaitApplied(idx uint64, timeout <-chan time.Time) error {
	for {
		ch := s.appliedC.Load()
		if s.applied.Load() >= idx {
			return nil
		}
		select {
		case <-*ch:
		case <-timeout:
			return errors.New("timed out waiting for the store to catch up")
		case <-s.closing:
			return ErrClosed
		}
	}
}

// setApplied publishes a new applied index and wakes its waiters.
func (s *Shard) setApplied(idx, term uint64) {
	s.appliedTerm = term
	s.appliedTermAtomic.Store(term)
	s.applied.Store(idx)
	ch := make(chan struct{})
	close(*s.appliedC.Swap(&ch))
}

// AddMember adds a voter (or a learner) with its Raft address; RemoveMember
// removes one. Both wait until the change is applied on this node.
func (s *Shard) AddMember(id uint64, addr string, learner bool) error {
	t := raftpb.ConfChangeAddNode
	if learner {
		t = raftpb.ConfChangeAddLearnerNode
	}
	return s.changeMembers(raftpb.ConfChange{Type: t, NodeID: id, Context: []byte(addr)})
}

// RemoveMember removes node id from the group.
func (s *Shard) RemoveMember(id uint64) error {
	return s.changeMembers(raftpb.ConfChange{Type: raftpb.ConfChangeRemoveNode, NodeID: id})
}

func (s *Shard) changeMembers(cc raftpb.ConfChange) error {
	if !s.IsLeader() {
		return &NotLeaderError{Leader: s.Leader()}
	}
	c := confReq{cc: cc, done: make(chan error, 1)}
	select {
	case s.node.confc <- c:
	case <-s.closing:
		return ErrClosed
	}
	select {
	case err := <-c.done:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("timed out waiting for the membership change to apply")
	}
}

// TransferLeadership hands leadership to another voter, if this node
// leads, and waits up to timeout for it to happen.
func (s *Shard) TransferLeadership(timeout time.Duration) { s.node.transferLeadership(0, timeout) }

// holdWrites makes the apply loop take no new write while on (see
// handover).
func (s *Shard) holdWrites(on bool) {
	s.drained.Store(false)
	s.handover.Store(on)
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// TransferLeadershipTo is TransferLeadership to the voter id, if it is
// active.
func (s *Shard) TransferLeadershipTo(id uint64, timeout time.Duration) {
	s.node.transferLeadership(id, timeout)
}

// Transport returns the Raft transport (nil for a lone node), for fault
// injection.
func (s *Shard) Transport() *transport.Transport { return s.node.tr }

// Propose queues p. The caller waits on p.Done.
func (s *Shard) Propose(p *Proposal) error {
	if s.failed.Load() {
		if cause := s.Stats.LastErr.Load(); cause != nil {
			return fmt.Errorf("%w: %v", ErrFailed, *cause)
		}
		return ErrFailed
	}
	if s.halted.Load() {
		return ErrClosed
	}
	if s.diskFull.Load() {
		return ErrDiskFull
	}
	if !s.IsLeader() {
		return &NotLeaderError{Leader: s.Leader()}
	}
	if !s.mayLead() {
		return ErrClockOffset
	}
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	select {
	case s.props <- p:
		return nil
	case <-s.closing:
		return ErrClosed
	}
}

// Close stops the shard: a leader hands over its leadership first; writes
// still queued are answered, then the loops stop and the log closes.
func (s *Shard) Close() {
	s.closeOnce.Do(func() {
		s.node.transferLeadership(0, 2*time.Second)
		close(s.closing)
		<-s.done
		s.node.stop()
		s.storeRelease.Close() // before the store closes
		s.node.log.Close()
		s.snaps.release()
	})
}

// Halt stops logging writes at once, for a shutdown that cannot wait for
// the script being applied (SHUTDOWN NOSAVE while a script is busy): the
// group being applied is dropped, not logged, even if a script in it
// wrote before it was stopped, and every write after it is refused. Groups
// already proposed may still commit. Only Close may follow.
func (s *Shard) Halt() { s.halted.Store(true) }

// fail stops writes for good after the log or the store failed.
func (s *Shard) fail(err error) {
	s.Stats.LastErr.Store(&err)
	s.failed.Store(true)
	s.leadTerm.Store(0)
}

func (s *Shard) loop() {
	defer close(s.done)
	group := make([]*Proposal, 0, maxGroup)
	for {
		var props chan *Proposal
		leading := s.ready()
		if s.handover.Load() {
			s.drained.Store(len(s.pending) == 0)
			leading = false // the writes wait (unless this node no longer leads: refused below)
		}
		if leading && s.roomInFlight() || !s.IsLeader() && len(s.pending) == 0 {
			props = s.props // a follower takes them only to refuse them
		}
		if leading && s.roomInFlight() && len(s.wake) > 0 {
			s.propose(nil) // serve clients blocked on keys the log touched
			continue
		}
		select {
		case ev := <-s.events:
			s.handle(ev)
			continue
		case p := <-props:
			group = s.queued(append(group[:0], p))
		case <-s.nudge:
			continue
		case <-s.closing:
			s.finish()
			return
		}
		if !leading {
			s.refuse(group, &NotLeaderError{Leader: s.Leader()})
			continue
		}
		s.propose(group)
	}
}

// finish applies what is queued at Close, giving it a few seconds to
// commit; what is left after that is refused.
func (s *Shard) finish() {
	deadline := time.After(5 * time.Second)
	for {
		if len(s.pending) == 0 || s.roomInFlight() && len(s.props) > 0 {
			group := s.queued(nil)
			if len(group) == 0 {
				return
			}
			if !s.ready() {
				s.refuse(group, ErrClosed)
				continue
			}
			s.propose(group)
			continue
		}
		select {
		case ev := <-s.events:
			s.handle(ev)
		case <-deadline:
			s.drop(ErrUnknownOutcome)
			s.refuse(s.queued(nil), ErrClosed)
			return
		}
	}
}

// queued appends the proposals waiting to group, up to a group's size.
func (s *Shard) queued(group []*Proposal) []*Proposal {
	for len(group) < maxGroup {
		select {
		case p := <-s.props:
			group = append(group, p)
		default:
			return group
		}
	}
	return group
}

// roomInFlight reports whether another group may be proposed now.
func (s *Shard) roomInFlight() bool {
	n := len(s.pending)
	return n == 0 || n < maxInflight && s.pending[n-1].tx.ViewSize() < maxView && len(s.props) >= minSecond
}

// refuse completes proposals that were not applied with err.
func (s *Shard) refuse(group []*Proposal, err error) {
	for _, p := range group {
		reply(p, err)
	}
}

// reply completes p with an error reply for err.
func reply(p *Proposal, err error) {
	p.Err = err
	if p.W != nil {
		p.W.Reset()
		p.W.Error(ErrorReply(err))
	}
	p.Done <- struct{}{}
}

// ErrorReply is the Redis error line for a write the shard did not apply.
func ErrorReply(err error) string {
	var nl *NotLeaderError
	switch {
	case errors.As(err, &nl):
		return "TRYAGAIN " + err.Error()
	case errors.Is(err, ErrUnknownOutcome):
		// Not TRYAGAIN: clients retry that on their own (go-redis does),
		// which is safe only for a write that was certainly not applied.
		return "ERR " + err.Error()
	case errors.Is(err, ErrClosed):
		return "ERR server is shutting down"
	case errors.Is(err, ErrDiskFull):
		return err.Error() // MISCONF
	case errors.Is(err, ErrClockOffset):
		return err.Error() // TRYAGAIN
	case errors.Is(err, ErrFailed):
		// Redis's reply after a failed AOF write, with the cause.
		return "MISCONF " + err.Error()
	}
	return "ERR " + err.Error()
}

// propose applies a group to a new write batch, as the leader, and proposes
// its records to Raft as one entry (see Shard).
func (s *Shard) propose(group []*Proposal) {
	var prev *store.Tx
	if n := len(s.pending); n > 0 {
		prev = s.pending[n-1].tx
	}
	size, args := 0, 0 // what the group's arguments weigh: about what it writes and logs
	for _, p := range group {
		for _, argv := range p.Rec.Cmds {
			args += len(argv)
			for _, a := range argv {
				size += len(a)
			}
		}
	}
	// The batches take the group's keys and values and the store's own keys
	// (a big string goes in 4 KB chunks, each under a key of its own):
	// sized short, a batch of hundreds of MB would double, twice over.
	tx := s.st.WriteTxAfter(prev, size+size/16)
	touched := s.track(tx)
	s.nextID++
	id := s.nextID
	// A record adds its header (recordHeaderMax) and a length or two per
	// argument: sized short, the entry of a group of small SETs doubled
	// several times over.
	data := append(make([]byte, 0, 9+size+len(group)*recordHeaderMax+2*args), entryVersion)
	data = binary.BigEndian.AppendUint64(data, id)
	records := 0
	// apply applies one proposal's record; it reports false if the record
	// blocked.
	apply := func(p *Proposal) bool {
		rec := &p.Rec
		rec.Index = s.applied.Load() + 1
		if rec.Time == 0 {
			rec.Time = s.clock()
		}
		rec.Seed = s.rng.Uint64()
		before, published := tx.Writes(), tx.Published()
		tx.Writer = p.Client
		s.applyOne(tx, rec, &p.Run, p.W)
		tx.Writer = 0
		// Logged after applying, and only if it changed something (or
		// published a message, which every node must deliver): a PFADD of
		// known elements, a SET NX on a taken key or an EXEC whose WATCH
		// failed leaves nothing for a replica to apply.
		if tx.Writes() != before || tx.Published() != published {
			// Marshalled in place after room for its length, then moved
			// down to the length's size: a big record is not copied whole.
			at := len(data)
			data = rec.Marshal(append(data, make([]byte, binary.MaxVarintLen64)...))
			n := binary.PutUvarint(data[at:], uint64(len(data)-at-binary.MaxVarintLen64))
			data = append(data[:at+n], data[at+binary.MaxVarintLen64:]...)
			records++
		}
		return !(p.Run.Block && p.Run.BlockedOn != nil)
	}
	done := make([]*Proposal, 0, len(group))
	if len(s.wake) > 0 {
		done = append(done, s.serveBlocked(apply)...)
	}
	for i, p := range group {
		if s.halted.Load() {
			s.refuse(group[i:], ErrClosed)
			break
		}
		if !p.state.CompareAndSwap(propQueued, propTaken) {
			continue // withdrawn by its client (BUSY)
		}
		if apply(p) || !s.block(p) {
			done = append(done, p)
		}
		if len(s.wake) > 0 {
			done = append(done, s.serveBlocked(apply)...)
		}
	}
	if s.halted.Load() {
		tx.Close()
		s.group = nil
		s.refuse(done, ErrClosed)
		return
	}
	if records == 0 && (len(done) == 0 || len(s.pending) > 0 || s.Lone()) {
		// Nothing to log. The replies stand on the state the group saw:
		// they go out with the group before it, or at once if that state
		// is committed and no other leader can exist. (A member of a
		// larger group still proposes the empty entry: its commit shows
		// the node still leads, as a read's ReadIndex would.)
		tx.Close()
		s.group = nil
		if n := len(s.pending); n > 0 {
			s.pending[n-1].done = append(s.pending[n-1].done, done...)
			return
		}
		for _, p := range done {
			p.Done <- struct{}{}
		}
		return
	}
	s.pending = append(s.pending, &inflight{id: id, tx: tx, touched: touched, done: done, records: records})
	s.group = nil
	s.node.propc <- data
}

// track hooks a write batch so that modified watched keys and keys with
// blocked clients are noted.
func (s *Shard) track(tx *store.Tx) *groupTouches {
	touched := s.Watches.track(tx)
	s.group = touched
	watchTouched, watchTouchedDBs := tx.Touched, tx.TouchedDBs
	tx.Touched = func(db int, key []byte) {
		watchTouched(db, key)
		if s.blocked.n.Load() > 0 {
			if id := watchID(db, key); s.blocked.has(id) {
				s.wake = append(s.wake, id)
			}
		}
	}
	// FLUSHDB, FLUSHALL and SWAPDB retry every call blocked in the
	// databases, as Redis does: an XREADGROUP whose stream is gone answers
	// UNBLOCKED, a BLPOP finds the list SWAPDB brought in or waits on.
	tx.TouchedDBs = func(a, b int) {
		watchTouchedDBs(a, b)
		if s.blocked.n.Load() > 0 {
			s.wake = s.blocked.inDBs(s.wake, a, b)
		}
	}
	return touched
}

// drop abandons the groups in flight: their batches are discarded and
// their clients get err. Blocked clients they registered keep waiting.
func (s *Shard) drop(err error) {
	for i := len(s.pending) - 1; i >= 0; i-- {
		s.pending[i].tx.Close() // newest first
	}
	for _, p := range s.pending {
		for _, pr := range p.done {
			reply(pr, err)
		}
	}
	s.pending = s.pending[:0]
	s.group = nil
	s.Watches.dropped()
}

// dropRefused abandons the groups in flight after Raft refused to take
// group id (this node stopped leading, or is handing leadership over).
// Only that group's clients learn that their writes were not applied: the
// groups proposed before it are in Raft's log and may still commit (they
// are then applied from the log), and those after it may have been taken,
// so their outcome is unknown.
func (s *Shard) dropRefused(id uint64) {
	for _, p := range s.pending {
		if p.id == id {
			for _, pr := range p.done {
				reply(pr, &NotLeaderError{Leader: s.Leader()})
			}
			p.done = nil
		}
	}
	s.drop(ErrUnknownOutcome)
}

// handle takes one event of the Raft loop.
func (s *Shard) handle(ev event) {
	switch {
	case ev.lost:
		s.drop(ErrUnknownOutcome)
		s.releaseBlocked(ErrUnknownOutcome)
	case ev.snap != nil:
		s.installSnapshot(ev.snap)
	case ev.snapshot:
		s.snapshot()
	case ev.dropped != 0:
		for _, p := range s.pending {
			if p.id == ev.dropped {
				s.dropRefused(ev.dropped)
				break
			}
		}
	default:
		s.applyEntries(ev.ents)
	}
}

// applyEntries applies committed entries: the leader's own group in flight
// is committed as applied; any other entry is applied from its records.
func (s *Shard) applyEntries(ents []raftpb.Entry) {
	var tx *store.Tx // for entries applied from the log
	var touched *groupTouches
	last, lastTerm := uint64(0), uint64(0)
	flush := func() {
		if tx == nil && last == 0 {
			return
		}
		if tx == nil {
			tx = s.st.WriteTx()
			touched = s.track(tx)
		}
		s.commitApplied(tx, touched, last, lastTerm)
		tx, touched, last = nil, nil, 0
	}
	for i := range ents {
		e := &ents[i]
		if e.Index <= s.applied.Load() && (last == 0 || e.Index <= last) {
			continue // in the store already (a restart replays the log)
		}
		if e.Type != raftpb.EntryNormal || len(e.Data) == 0 {
			last, lastTerm = e.Index, e.Term // nothing to apply
			continue
		}
		if len(s.pending) > 0 && entryID(e.Data) == s.pending[0].id && tx == nil {
			// Ours, and nothing was applied before it: the batch is exactly
			// this entry's effect.
			flush()
			s.commitPending(e.Index, e.Term)
			continue
		}
		// Another node's entry (or ours after something else came first:
		// the batch we proposed it from is stale and is redone from the log).
		s.drop(ErrUnknownOutcome)
		if tx == nil {
			tx = s.st.WriteTxAfter(nil, len(e.Data)) // about what the entry writes
			touched = s.track(tx)
		}
		if err := s.applyEntry(tx, e); err != nil {
			s.badEntry(e, err)
			tx.Close()
			return
		}
		last, lastTerm = e.Index, e.Term
	}
	flush()
	s.maybeCompact()
}

// commitPending commits the group in flight, which Raft committed at index.
func (s *Shard) commitPending(index, term uint64) {
	p := s.pending[0]
	s.pending = s.pending[1:]
	if err := s.commitApplied(p.tx, p.touched, index, term); err != nil {
		for _, pr := range p.done {
			reply(pr, err)
		}
		return
	}
	s.Stats.Records.Add(int64(p.records))
	s.Stats.GroupRecords.Observe(float64(p.records))
	for _, pr := range p.done {
		pr.Done <- struct{}{}
	}
}

// commitApplied commits tx as the store's state up to entry index (of
// term) and makes it visible to reads and WATCH. A failed commit stops the
// shard's writes.
func (s *Shard) commitApplied(tx *store.Tx, touched *groupTouches, index, term uint64) error {
	tx.SetApplied(index)
	size := tx.BatchSize()
	if err := tx.Commit(false); err != nil {
		s.storeFailed(err)
		tx.Close()
		return err
	}
	s.storeRelease.Committed(size)
	s.Watches.publish(touched, index, &s.applied)
	s.setApplied(index, term)
	s.Stats.Groups.Add(1)
	return nil
}

// applyEntry applies the records of one entry to tx.
func (s *Shard) applyEntry(tx *store.Tx, e *raftpb.Entry) error {
	if len(e.Data) < 9 || e.Data[0] != entryVersion {
		return errors.New("unknown entry format")
	}
	return eachRecord(e.Data[9:], func(rec *Record) {
		rec.Index = e.Index
		s.applyOne(tx, rec, nil, nil)
		s.Stats.Records.Add(1)
		if rec.Time > s.lastTime {
			s.lastTime = rec.Time
			s.lastTimeSeen.Store(rec.Time)
		}
	})
}

// eachRecord decodes the records of an entry's payload.
func eachRecord(data []byte, fn func(*Record)) error {
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return errBadRecord
		}
		rec, err := Unmarshal(data[k : k+int(n)])
		if err != nil {
			return err
		}
		fn(rec)
		data = data[k+int(n):]
	}
	return nil
}

// entryID is the proposal id an entry's payload starts with.
func entryID(data []byte) uint64 {
	if len(data) < 9 {
		return 0
	}
	return binary.BigEndian.Uint64(data[1:9])
}

// badEntry stops the shard's writes at a committed entry it cannot decode.
// Only an authenticated member can have put it in the log (a bug, or a
// node of another version): applying past it would make this replica
// differ from those that can, so it stops, and says what to do.
func (s *Shard) badEntry(e *raftpb.Entry, err error) {
	err = fmt.Errorf("raft entry %d (term %d) is not a basalt record (%v): this node stopped applying its log and refuses writes. An operator must replace it: RAFT REMOVE it on the leader, then start it with an empty directory and --join yes, and RAFT ADD it", e.Index, e.Term, err)
	slog.Error(err.Error())
	s.fail(err)
	s.drop(err)
}

// storeFailed stops the shard's writes after the store refused a commit:
// what is in the log can no longer be applied in order.
func (s *Shard) storeFailed(err error) {
	slog.Error("store commit failed: refusing writes from now on", "err", err)
	s.fail(err)
	s.drop(err)
}

// maybeCompact drops old entries from the log once the store has them on
// disk, keeping the last LogRetain entries and at most LogRetainBytes of
// them: a follower further behind catches up from a snapshot (see
// snapStorage). A lone voter keeps none, having no follower: its log's
// Pebble then drops the entries before they reach a table, where it spent
// 2-3% of the CPU of EVALSHA -P 16 flushing and compacting them. Each step
// syncs the store's WAL, so it waits for 1024 entries or an eighth of the
// byte budget to drop.
func (s *Shard) maybeCompact() {
	applied := s.applied.Load()
	var to uint64
	retain := s.cfg.LogRetain
	if retain > 0 && s.Lone() {
		retain = 1
	}
	if retain > 0 && applied >= s.compacted+retain+1024 {
		to = applied - retain
	}
	if keep := s.cfg.LogRetainBytes; keep > 0 && s.node.log.RetainFrom(applied, keep+keep/8) > s.compacted {
		to = max(to, s.node.log.RetainFrom(applied, keep))
	}
	if to <= s.compacted {
		return
	}
	if err := s.st.SyncWAL(); err != nil {
		return
	}
	s.compacted = to
	if err := s.node.log.Compact(to); err != nil && !errors.Is(err, raft.ErrCompacted) {
		slog.Error("compacting the raft log", "err", err)
	}
}

// applyOne applies one record; a panic in a command becomes an error reply
// instead of taking the server down.
func (s *Shard) applyOne(tx *store.Tx, rec *Record, run *Run, w *resp.Writer) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("apply panicked", "index", rec.Index, "panic", r)
			if w != nil {
				w.Error("ERR internal error while applying the command")
			}
		}
	}()
	tx.DB = rec.DB
	tx.Now = rec.Time
	if rec.Kind == KindPublish {
		s.publish(tx, rec, w)
		return
	}
	s.apply(tx, rec, run, s, w)
}

// WatchDirty reports whether a watched key changed since its WATCH. Only
// the applier calls it, from the apply loop.
func (s *Shard) WatchDirty(k WatchKey) bool {
	for _, p := range s.pending { // groups applied but not committed yet
		if p.touched.touches(watchID(k.DB, k.Key)) {
			return true
		}
	}
	return s.Watches.Dirty(s.group, k)
}

// clock is the record time: wall clock, never going backwards (clock.go
// keeps it near real time).
func (s *Shard) clock() int64 {
	now := s.recordTime()
	if now < s.lastTime {
		now = s.lastTime
	}
	s.lastTime = now
	s.lastTimeSeen.Store(now)
	return now
}

// syncer syncs the log once a second under appendfsync everysec, and
// releases a pinned store snapshot that nobody streams any more.
func (s *Shard) syncer() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			s.snaps.expire(snapIdle)
			if Fsync(s.fsync.Load()) == FsyncEverySec {
				start := time.Now()
				saved, gen := s.syncMark.beforeSync()
				if err := s.node.log.Sync(); err == nil {
					s.syncMark.afterSync(saved, gen)
					s.synced(time.Since(start))
				}
			}
		}
	}
}

// Replay applies records to a store without a running loop: the
// determinism test and log-based recovery tools use it.
func Replay(st *store.Store, apply Applier, recs []*Record) error {
	s := &Shard{st: st, apply: apply, Watches: newWatches()}
	tx := st.WriteTx()
	for _, rec := range recs {
		s.applyOne(tx, rec, nil, nil)
	}
	return tx.Commit(true)
}

// Watch registers a WATCH on (db, key) and returns the applied index it is
// relative to.
func (s *Shard) Watch(db int, key []byte) uint64 { return s.Watches.Watch(db, key, &s.applied) }

// ReadLog calls fn for every record in the Raft log in dir (of a closed
// shard), in log order; Index is the entry's index. Tools and tests use it
// to replay a log.
func ReadLog(dir string, fn func(*Record) error) error {
	lg, err := raftlog.Open(dir)
	if err != nil {
		return err
	}
	defer lg.Close()
	first, _ := lg.FirstIndex()
	last, _ := lg.LastIndex()
	for lo := first; lo <= last; {
		ents, err := lg.Entries(lo, last+1, 64<<20)
		if err != nil {
			return err
		}
		for i := range ents {
			e := &ents[i]
			lo = e.Index + 1
			if e.Type != raftpb.EntryNormal || len(e.Data) == 0 {
				continue
			}
			if len(e.Data) < 9 || e.Data[0] != entryVersion {
				return fmt.Errorf("entry %d: unknown format", e.Index)
			}
			var ferr error
			if err := eachRecord(e.Data[9:], func(rec *Record) {
				rec.Index = e.Index
				if ferr == nil {
					ferr = fn(rec)
				}
			}); err != nil {
				return fmt.Errorf("entry %d: %w", e.Index, err)
			}
			if ferr != nil {
				return ferr
			}
		}
	}
	return nil
}
