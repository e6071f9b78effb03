// Package replica is a replicated shard: the records of internal/shard,
// ordered by a Raft group (go.etcd.io/raft/v3) instead of a local log, and
// applied to a store.Store by the same applier (command.Apply).
//
// A Node owns four things: a raft.RawNode, its durable log
// (raftlog.Storage, in its own Pebble directory), a transport.Transport to
// its peers, and the data store (another Pebble directory). One goroutine,
// the Ready loop, is the only user of the RawNode:
//
//	rd := rn.Ready()
//	raftlog.SaveReady(rd)    // entries + hard state, one batch, one sync
//	transport.Send(rd.Messages)
//	apply(rd.CommittedEntries) // one store.WriteTx, one Pebble commit, SetApplied
//	rn.Advance(rd)
//
// Writes. A client calls Propose on the leader. The loop gives the record
// the leader's clock reading (never going backwards, and never behind the
// last record applied) and a random seed, so that every replica applies the
// same record, and proposes it to raft with a request id. When the entry is
// committed every node applies it; the node that proposed it finds its
// waiter by the request id and hands the client the reply the applier wrote.
// Other nodes apply with a nil writer. A follower refuses proposals with a
// NotLeaderError naming the leader (forwarding comes later).
//
// Entry format: a version byte, the 8-byte request id (big endian), then
// the record (shard.Record.Marshal). Request ids start at a random value on
// each Node, so an entry proposed by an earlier incarnation of a node, or by
// another node, does not wake an unrelated waiter.
//
// A proposal whose outcome cannot be known (the node stepped down before
// applying it, or closed) fails with ErrUnknownOutcome / ErrClosed: the write
// may or may not take effect, as with any replicated store.
//
// Durability: an entry is applied only after raft says it is committed,
// which means it is synced on a majority of logs. The store commit itself
// is not synced: after a crash, the node replays the committed entries
// after the store's applied index (the store's applied index and its data
// are in one Pebble batch, so they agree). Entries at or below the applied
// index are skipped, so a replay never applies an entry twice.
//
// Not done yet (next steps):
//   - Snapshots: the log is never compacted, and a follower that falls
//     behind a compaction point could not catch up. Plan: CreateSnapshot +
//     Compact once the store is durably applied past an index; send a Pebble
//     checkpoint or span iterator in chunks; ingest it on the follower.
//   - Membership changes (conf change entries are applied to raft's config
//     and saved, but nothing proposes them; the ConfState is saved apart
//     from the store's applied index, which must become one batch or an
//     idempotent re-apply before conf changes are used), leadership
//     transfer on close.
//   - Reads: linearizable reads (ReadIndex or lease) are not offered here;
//     Store() exposes applied state as is.
//   - WATCH state and blocking commands: the applier runs with a nil
//     *shard.Shard, so an EXEC's WATCH only checks that live keys still
//     exist; blocked records are not supported.
//   - Record times: a new leader whose clock lags keeps times monotonic only
//     relative to what it has applied, not to entries still in flight.
//   - Forwarding proposals from followers, wiring into the server.
package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/raftlog"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Config describes one node of a group.
type Config struct {
	ID uint64
	// Addr is the Raft transport's listen address (port 0 picks one; see
	// Node.Addr).
	Addr string
	// Peers are the other voters of the group, by ID, with their transport
	// address; an empty address can be given later with AddPeer. The voters
	// are used only when the log is new (bootstrap).
	Peers map[uint64]string

	RaftDir string // the Raft log's Pebble directory
	DataDir string // the data store's Pebble directory
	// Store configures the data store.
	Store store.Options

	// Apply applies a record (command.Apply). It is called with a nil
	// *shard.Shard.
	Apply shard.Applier

	// TickInterval is raft's tick (default 10ms); an election takes
	// ElectionTicks (default 10) to 2x that without a heartbeat.
	TickInterval  time.Duration
	ElectionTicks int

	// Logger receives raft's messages; nil discards them.
	Logger raft.Logger
}

// NotLeaderError is returned by Propose on a node that is not the leader.
type NotLeaderError struct {
	Leader uint64 // 0 if no leader is known
}

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return "replica: not the leader, and no leader is known"
	}
	return fmt.Sprintf("replica: not the leader; the leader is node %d", e.Leader)
}

var (
	// ErrClosed is returned by Propose after Close, or for proposals
	// pending when the node closed.
	ErrClosed = errors.New("replica: node closed")
	// ErrUnknownOutcome is returned when the node stopped leading before
	// the proposal was applied: the write may still take effect.
	ErrUnknownOutcome = errors.New("replica: leadership lost; the write may or may not have been applied")
)

const entryVersion = 1

// waiter is a client waiting for its entry to be applied on this node.
type waiter struct {
	w    *resp.Writer
	done chan error // buffered: the loop never waits for a client
}

// proposal is what Propose hands to the Ready loop.
type proposal struct {
	id  uint64
	rec shard.Record
}

// Node is one replica of a shard.
type Node struct {
	cfg Config
	rn  *raft.RawNode
	log *raftlog.Storage
	st  *store.Store
	tr  *transport.Transport

	propc   chan proposal
	recvc   chan raftpb.Message
	unreach chan uint64
	fnc     chan func()
	stopc   chan struct{}
	done    chan struct{}
	once    sync.Once

	nextID  atomic.Uint64
	mu      sync.Mutex
	waiters map[uint64]*waiter
	closed  bool

	leader   atomic.Uint64
	isLeader atomic.Bool
	applied  atomic.Uint64
	err      atomic.Pointer[error] // why the loop stopped, if it failed

	// Stats are cumulative counters.
	Stats Stats

	// Owned by the loop.
	lastTime  int64 // greatest record time proposed or applied
	rng       *rand.PCG
	skipBelow uint64 // entries at or below this index are in the store already
}

// Stats count what the node did; all fields are cumulative.
type Stats struct {
	Proposed atomic.Int64 // entries this node proposed to raft
	Applied  atomic.Int64 // normal entries applied to the store
	Batches  atomic.Int64 // store commits (one per Ready with committed entries)
}

// maxBatch bounds how many proposals one pass of the loop takes.
const maxBatch = 4096

// Open opens (or bootstraps) the node's log and store, starts its
// transport and its Ready loop.
func Open(cfg Config) (*Node, error) {
	if cfg.Apply == nil {
		return nil, errors.New("replica: Config.Apply is required")
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 10 * time.Millisecond
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	}
	lg, err := raftlog.Open(cfg.RaftDir)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(cfg.DataDir, cfg.Store)
	if err != nil {
		lg.Close()
		return nil, err
	}
	n, err := open(cfg, lg, st)
	if err != nil {
		st.Close()
		lg.Close()
		return nil, err
	}
	return n, nil
}

func open(cfg Config, lg *raftlog.Storage, st *store.Store) (*Node, error) {
	if last, _ := lg.LastIndex(); last == 0 {
		voters := []uint64{cfg.ID}
		for id := range cfg.Peers {
			voters = append(voters, id)
		}
		if err := lg.Bootstrap(voters); err != nil {
			return nil, err
		}
	}
	applied, err := st.AppliedIndex()
	if err != nil {
		return nil, err
	}
	hs, _, err := lg.InitialState()
	if err != nil {
		return nil, err
	}
	// The hard state's commit index is not synced on its own (raft asks
	// for a sync only with new entries or a new term or vote), so after an
	// OS crash the store may have applied past it. Raft refuses an applied
	// index beyond commit; start from the lower one and skip what the
	// store has already.
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              cfg.ID,
		ElectionTick:    cfg.ElectionTicks,
		HeartbeatTick:   1,
		Storage:         lg,
		Applied:         min(applied, hs.Commit),
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		// Followers refuse proposals themselves; raft must not forward
		// one that slipped through a leadership change.
		DisableProposalForwarding: true,
		Logger:                    cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	n := &Node{
		cfg: cfg, rn: rn, log: lg, st: st,
		propc:     make(chan proposal, maxBatch),
		recvc:     make(chan raftpb.Message, 4096),
		unreach:   make(chan uint64, 64),
		fnc:       make(chan func()),
		stopc:     make(chan struct{}),
		done:      make(chan struct{}),
		waiters:   map[uint64]*waiter{},
		rng:       rand.NewPCG(seed, seed>>1|1),
		skipBelow: applied,
	}
	n.nextID.Store(rand.Uint64())
	n.applied.Store(applied)
	n.tr = &transport.Transport{ID: cfg.ID, Addr: cfg.Addr, Unreachable: func(id uint64) {
		select {
		case n.unreach <- id:
		default: // reports are hints; one pending is enough
		}
	}}
	if err := n.tr.Start(func(m raftpb.Message) {
		select {
		case n.recvc <- m:
		case <-n.stopc:
		}
	}); err != nil {
		return nil, err
	}
	for id, addr := range cfg.Peers {
		if addr != "" {
			n.tr.AddPeer(id, addr)
		}
	}
	go n.run()
	return n, nil
}

// Addr is the transport's listen address.
func (n *Node) Addr() string { return n.tr.ListenAddr() }

// AddPeer sets (or changes) the transport address of peer id.
func (n *Node) AddPeer(id uint64, addr string) { n.tr.AddPeer(id, addr) }

// Transport exposes the transport, for fault injection in tests.
func (n *Node) Transport() *transport.Transport { return n.tr }

// Store is the data store: applied state.
func (n *Node) Store() *store.Store { return n.st }

// ID is the node's ID.
func (n *Node) ID() uint64 { return n.cfg.ID }

// IsLeader reports whether the node led the group at its last Ready.
func (n *Node) IsLeader() bool { return n.isLeader.Load() }

// Leader is the leader as this node last knew it (0: none).
func (n *Node) Leader() uint64 { return n.leader.Load() }

// Applied is the index of the last entry applied to the store.
func (n *Node) Applied() uint64 { return n.applied.Load() }

// Err is the error that stopped the loop, if any.
func (n *Node) Err() error {
	if p := n.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Status returns raft's view of the node (from the loop).
func (n *Node) Status() (raft.BasicStatus, error) {
	var s raft.BasicStatus
	err := n.do(func() { s = n.rn.BasicStatus() })
	return s, err
}

// do runs f in the loop, where the RawNode may be used.
func (n *Node) do(f func()) error {
	ran := make(chan struct{})
	select {
	case n.fnc <- func() { f(); close(ran) }:
	case <-n.done:
		return ErrClosed
	}
	<-ran
	return nil
}

// Propose replicates rec and waits until this node has applied it, then
// returns the reply the applier wrote, in RESP protocol proto. The leader
// fills in rec's Time and Seed; the caller must not change rec's slices
// until Propose returns. Cancelling ctx gives up waiting, not the write.
func (n *Node) Propose(ctx context.Context, rec *shard.Record, proto int) ([]byte, error) {
	if !n.isLeader.Load() {
		return nil, &NotLeaderError{Leader: n.leader.Load()}
	}
	id := n.nextID.Add(1)
	wt := &waiter{w: resp.NewWriter(proto), done: make(chan error, 1)}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	n.waiters[id] = wt
	n.mu.Unlock()
	p := proposal{id: id, rec: *rec}
	p.rec.Time, p.rec.Seed = 0, 0
	select {
	case n.propc <- p:
	case <-ctx.Done():
		n.forget(id)
		return nil, ctx.Err()
	case <-n.stopc:
		n.forget(id)
		return nil, ErrClosed
	}
	select {
	case err := <-wt.done:
		if err != nil {
			return nil, err
		}
		return wt.w.Buf, nil
	case <-ctx.Done():
		if n.forget(id) == nil {
			// The loop took the waiter already: its answer is coming.
			if err := <-wt.done; err != nil {
				return nil, err
			}
			return wt.w.Buf, nil
		}
		return nil, ctx.Err()
	}
}

// forget removes waiter id and returns it, or nil if the loop took it.
func (n *Node) forget(id uint64) *waiter {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.waiters[id]
	delete(n.waiters, id)
	return w
}

// failAll completes every pending waiter with err.
func (n *Node) failAll(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, w := range n.waiters {
		w.done <- err
		delete(n.waiters, id)
	}
}

// Close stops the loop and the transport, fails pending proposals and
// closes the log and the store. The node's directories can be opened again.
func (n *Node) Close() error {
	var err error
	n.once.Do(func() {
		close(n.stopc)
		<-n.done
		n.tr.Stop()
		n.mu.Lock()
		n.closed = true
		n.mu.Unlock()
		n.failAll(ErrClosed)
		err = errors.Join(n.log.Close(), n.st.Close())
	})
	return err
}

func (n *Node) run() {
	defer close(n.done)
	tick := time.NewTicker(n.cfg.TickInterval)
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
		case p := <-n.propc:
			n.propose(p)
		}
		n.drain()
		for n.rn.HasReady() {
			if err := n.handleReady(n.rn.Ready()); err != nil {
				slog.Error("replica: stopping", "node", n.cfg.ID, "err", err)
				n.err.Store(&err)
				n.isLeader.Store(false)
				n.failAll(err)
				return
			}
		}
	}
}

// drain steps the messages already received and proposes the proposals
// already queued, so that one Ready (one sync, one apply batch) carries
// many of them: acknowledgements from followers advance the commit index
// together, and concurrent clients share a sync.
func (n *Node) drain() {
	for i := 0; i < maxBatch; i++ {
		select {
		case m := <-n.recvc:
			n.rn.Step(m)
		case p := <-n.propc:
			n.propose(p)
		default:
			return
		}
	}
}

// propose stamps the record with the leader's time and seed and hands it
// to raft, or fails its waiter if this node cannot propose.
func (n *Node) propose(p proposal) {
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		n.complete(p.id, &NotLeaderError{Leader: st.Lead})
		return
	}
	p.rec.Time = n.clock()
	p.rec.Seed = n.rng.Uint64()
	data := make([]byte, 9, 64)
	data[0] = entryVersion
	binary.BigEndian.PutUint64(data[1:], p.id)
	data = p.rec.Marshal(data)
	if err := n.rn.Propose(data); err != nil {
		n.complete(p.id, fmt.Errorf("replica: proposal dropped: %w", err))
		return
	}
	n.Stats.Proposed.Add(1)
}

// complete ends waiter id (if it still waits) with err.
func (n *Node) complete(id uint64, err error) {
	if w := n.forget(id); w != nil {
		w.done <- err
	}
}

// clock is the record time: the wall clock, never behind a record this
// node proposed or applied.
func (n *Node) clock() int64 {
	now := time.Now().UnixMilli()
	if now < n.lastTime {
		now = n.lastTime
	}
	n.lastTime = now
	return now
}

func (n *Node) handleReady(rd raft.Ready) error {
	if err := n.log.SaveReady(rd); err != nil {
		return fmt.Errorf("saving raft state: %w", err)
	}
	n.tr.Send(rd.Messages)
	if err := n.apply(rd.CommittedEntries); err != nil {
		return err
	}
	if rd.SoftState != nil {
		n.leader.Store(rd.SoftState.Lead)
		leading := rd.SoftState.RaftState == raft.StateLeader
		if n.isLeader.Swap(leading) && !leading {
			// Entries applied above answered their clients; the rest may
			// be committed by the next leader or lost.
			n.failAll(ErrUnknownOutcome)
		}
	}
	n.rn.Advance(rd)
	return nil
}

// apply applies committed entries in order in one write batch and one
// commit, then answers the clients waiting on this node.
func (n *Node) apply(ents []raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	tx := n.st.WriteTx()
	var woken []*waiter
	last := uint64(0)
	for i := range ents {
		e := &ents[i]
		if e.Index <= n.skipBelow {
			continue
		}
		last = e.Index
		switch e.Type {
		case raftpb.EntryNormal:
			if len(e.Data) == 0 {
				continue // a new leader's empty entry
			}
			if len(e.Data) < 9 || e.Data[0] != entryVersion {
				tx.Close()
				return fmt.Errorf("entry %d: unknown format", e.Index)
			}
			rec, err := shard.Unmarshal(e.Data[9:])
			if err != nil {
				tx.Close()
				return fmt.Errorf("entry %d: %w", e.Index, err)
			}
			rec.Index = e.Index
			if w := n.forget(binary.BigEndian.Uint64(e.Data[1:9])); w != nil {
				n.applyOne(tx, rec, w.w)
				woken = append(woken, w)
			} else {
				n.applyOne(tx, rec, nil)
			}
			n.Stats.Applied.Add(1)
			if rec.Time > n.lastTime {
				n.lastTime = rec.Time
			}
		case raftpb.EntryConfChange:
			var cc raftpb.ConfChange
			if err := cc.Unmarshal(e.Data); err != nil {
				tx.Close()
				return fmt.Errorf("entry %d: %w", e.Index, err)
			}
			if err := n.log.SetConfState(*n.rn.ApplyConfChange(cc)); err != nil {
				tx.Close()
				return err
			}
		case raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeV2
			if err := cc.Unmarshal(e.Data); err != nil {
				tx.Close()
				return fmt.Errorf("entry %d: %w", e.Index, err)
			}
			if err := n.log.SetConfState(*n.rn.ApplyConfChange(cc)); err != nil {
				tx.Close()
				return err
			}
		}
	}
	if last == 0 {
		tx.Close()
		return nil
	}
	tx.SetApplied(last)
	// Not synced: the entries are durable in the raft log, and a crash
	// replays them after the applied index stored with the data.
	if err := tx.Commit(false); err != nil {
		tx.Close()
		for _, w := range woken {
			w.done <- fmt.Errorf("replica: applying: %w", err)
		}
		return fmt.Errorf("committing applied entries: %w", err)
	}
	n.skipBelow = last
	n.applied.Store(last)
	n.Stats.Batches.Add(1)
	for _, w := range woken {
		w.done <- nil
	}
	return nil
}

// applyOne applies one record; a panic in a command becomes an error reply,
// as in internal/shard.
func (n *Node) applyOne(tx *store.Tx, rec *shard.Record, w *resp.Writer) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("replica: apply panicked", "index", rec.Index, "panic", r)
			if w != nil {
				w.Error("ERR internal error while applying the command")
			}
		}
	}()
	tx.DB = rec.DB
	tx.Now = rec.Time
	n.cfg.Apply(tx, rec, nil, w)
}
