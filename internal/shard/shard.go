package shard

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/resp"
	"basalt/internal/store"
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
// state and the record.
type Applier func(tx *store.Tx, rec *Record, s *Shard, w *resp.Writer)

// Proposal is a write waiting for its turn: the record, where its reply goes
// and a channel that receives one value when the reply is ready (after the
// sync, with appendfsync always). Done must be buffered so that the apply
// loop never waits for a client; NewProposal makes one, and a pooled
// proposal can be reused once its value was received.
type Proposal struct {
	Rec  Record
	W    *resp.Writer
	Done chan struct{}

	// cancelled is set (under the shard's blockMu) when a blocking
	// proposal is withdrawn before the apply loop got to block it.
	cancelled bool
}

// Recycle makes a completed proposal ready for another record.
func (p *Proposal) Recycle() {
	p.Rec = Record{}
	p.W.Reset()
	p.cancelled = false
}

// NewProposal returns a proposal for rec with its own reply writer.
func NewProposal(rec Record, proto int) *Proposal {
	return &Proposal{Rec: rec, W: resp.NewWriter(proto), Done: make(chan struct{}, 1)}
}

// ErrClosed is returned for writes proposed after Close.
var ErrClosed = errors.New("shard closed")

// ErrFailed is returned for writes after a failed sync.
var ErrFailed = errors.New("a sync of the log failed; writes are refused")

// Shard owns the single ordered write path of a key space.
type Shard struct {
	st    *store.Store
	apply Applier
	props chan *Proposal
	fsync atomic.Int32

	applied  atomic.Uint64
	next     uint64 // index of the next record
	lastTime int64
	rng      *rand.PCG

	// LogRetain is how many applied records the log keeps (0: all).
	LogRetain uint64
	truncated uint64 // records below this index are gone

	Watches *Watches
	group   *groupTouches // watched keys modified by the group being applied

	blocked blocked
	blockMu sync.Mutex
	waiters map[*Proposal]*waiter
	wake    []string // keys with waiters touched by the record just applied

	closeOnce   sync.Once
	closing     chan struct{}
	done        chan struct{}
	completions chan completion // groups visible, waiting for their sync
	completed   chan struct{}
	failed      atomic.Bool // a sync failed: writes are refused

	Stats Stats
}

// Stats are counters for INFO.
type Stats struct {
	Records atomic.Int64
	Groups  atomic.Int64
	Syncs   atomic.Int64
	LastErr atomic.Pointer[error]
}

// maxGroup bounds how many records share one batch and one sync.
const maxGroup = 4096

// New starts the apply loop over st.
func New(st *store.Store, apply Applier, fsync Fsync) (*Shard, error) {
	applied, err := st.AppliedIndex()
	if err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	s := &Shard{
		st:          st,
		apply:       apply,
		props:       make(chan *Proposal, maxGroup),
		next:        applied + 1,
		rng:         rand.NewPCG(seed, seed>>1|1),
		LogRetain:   100000,
		Watches:     newWatches(),
		waiters:     map[*Proposal]*waiter{},
		closing:     make(chan struct{}),
		done:        make(chan struct{}),
		completions: make(chan completion, 2),
		completed:   make(chan struct{}),
	}
	s.applied.Store(applied)
	s.fsync.Store(int32(fsync))
	go s.loop()
	go s.complete()
	go s.syncer()
	return s, nil
}

// Store returns the store the shard applies to.
func (s *Shard) Store() *store.Store { return s.st }

// Applied is the index of the last record applied and visible to reads.
func (s *Shard) Applied() uint64 { return s.applied.Load() }

// SetFsync changes the appendfsync policy at run time (CONFIG SET).
func (s *Shard) SetFsync(f Fsync) { s.fsync.Store(int32(f)) }

// FsyncPolicy returns the appendfsync policy.
func (s *Shard) FsyncPolicy() Fsync { return Fsync(s.fsync.Load()) }

// Propose queues p. The caller waits on p.Done.
func (s *Shard) Propose(p *Proposal) error {
	if s.failed.Load() {
		return ErrFailed
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

// Close stops the loop after the writes already queued.
func (s *Shard) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	<-s.done
}

func (s *Shard) loop() {
	defer func() {
		close(s.completions)
		<-s.completed
		close(s.done)
	}()
	group := make([]*Proposal, 0, maxGroup)
	for {
		var p *Proposal
		select {
		case p = <-s.props:
		case <-s.closing:
			// Apply what was queued before the close, then stop.
			select {
			case p = <-s.props:
			default:
				return
			}
		}
		group = append(group[:0], p)
	drain:
		for len(group) < maxGroup {
			select {
			case p := <-s.props:
				group = append(group, p)
			default:
				break drain
			}
		}
		s.commit(group)
	}
}

// commit applies a group of proposals in one batch and one sync.
func (s *Shard) commit(group []*Proposal) {
	tx := s.st.WriteTx()
	touched := s.Watches.track(tx)
	s.group = touched
	watchTouched := tx.Touched
	tx.Touched = func(db int, key []byte) {
		watchTouched(db, key)
		if s.blocked.n.Load() > 0 {
			if id := watchID(db, key); s.blocked.has(id) {
				s.wake = append(s.wake, id)
			}
		}
	}
	first := s.next
	var logBuf, buf []byte
	// apply applies one proposal's record as the next log entry; it
	// reports false if the record blocked.
	apply := func(p *Proposal) bool {
		rec := &p.Rec
		rec.Index = s.next
		s.next++
		if rec.Time == 0 {
			rec.Time = s.clock()
		}
		rec.Seed = s.rng.Uint64()
		s.applyOne(tx, rec, p.W)
		// Logged after applying: an EXEC whose WATCH failed is logged as
		// aborted, so replaying the log needs no watch state.
		buf = rec.Marshal(buf[:0])
		logBuf = binary.AppendUvarint(logBuf, uint64(len(buf)))
		logBuf = append(logBuf, buf...)
		return !(rec.Block && rec.BlockedOn != nil)
	}
	var done []*Proposal
	for _, p := range group {
		if apply(p) || !s.block(p) {
			done = append(done, p)
		}
		if len(s.wake) > 0 {
			done = append(done, s.serveBlocked(apply)...)
		}
	}
	last := s.next - 1
	tx.AppendLog(first, logBuf)
	tx.SetApplied(last)
	if s.LogRetain > 0 && last > s.LogRetain+s.truncated+1024 {
		s.truncated = last - s.LogRetain
		tx.TruncateLog(s.truncated)
	}
	sync := Fsync(s.fsync.Load()) == FsyncAlways
	wait, err := tx.CommitVisible(sync)
	if err != nil {
		// The batch is lost: no reply may claim it was written.
		slog.Error("commit failed", "err", err)
		s.Stats.LastErr.Store(&err)
		tx.Close()
		s.next = s.applied.Load() + 1
		for _, p := range done {
			if p.W != nil {
				p.W.Reset()
				p.W.Error("ERR write failed: " + err.Error())
			}
			p.Done <- struct{}{}
		}
		return
	}
	s.Watches.publish(touched, last, &s.applied)
	s.Stats.Records.Add(int64(len(group)))
	s.Stats.Groups.Add(1)
	if sync {
		s.Stats.Syncs.Add(1)
	}
	// The next group is applied while this one syncs; its replies go out
	// once it is on disk.
	s.completions <- completion{wait: wait, done: done}
}

// completion is a group that is visible and waits for its sync.
type completion struct {
	wait func() error
	done []*Proposal
}

// complete answers each group's proposals once the group is on disk, in
// commit order. A failed sync leaves visible data that may not be on disk:
// the shard then refuses every write, as Redis stops on a failed fsync.
func (s *Shard) complete() {
	defer close(s.completed)
	for c := range s.completions {
		if err := c.wait(); err != nil {
			slog.Error("sync failed: refusing writes from now on", "err", err)
			s.Stats.LastErr.Store(&err)
			s.failed.Store(true)
			for _, p := range c.done {
				if p.W != nil {
					p.W.Reset()
					p.W.Error("ERR write failed: " + err.Error())
				}
			}
		}
		for _, p := range c.done {
			p.Done <- struct{}{}
		}
	}
}

// applyOne applies one record; a panic in a command becomes an error reply
// instead of taking the server down.
func (s *Shard) applyOne(tx *store.Tx, rec *Record, w *resp.Writer) {
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
	s.apply(tx, rec, s, w)
}

// WatchDirty reports whether a watched key changed since its WATCH. Only
// the applier calls it, from the apply loop.
func (s *Shard) WatchDirty(k WatchKey) bool { return s.Watches.Dirty(s.group, k) }

// clock is the record time: wall clock, never going backwards.
func (s *Shard) clock() int64 {
	now := time.Now().UnixMilli()
	if now < s.lastTime {
		now = s.lastTime
	}
	s.lastTime = now
	return now
}

// syncer syncs the log once a second under appendfsync everysec.
func (s *Shard) syncer() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			if Fsync(s.fsync.Load()) == FsyncEverySec {
				if err := s.st.SyncWAL(); err == nil {
					s.Stats.Syncs.Add(1)
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
		s.applyOne(tx, rec, nil)
	}
	return tx.Commit(true)
}

// Watch registers a WATCH on (db, key) and returns the applied index it is
// relative to.
func (s *Shard) Watch(db int, key []byte) uint64 { return s.Watches.Watch(db, key, &s.applied) }
