// Package raftlog is the durable Raft log of one shard: an implementation of
// go.etcd.io/raft/v3's Storage interface kept in a Pebble instance apart
// from the data store, so that log appends, truncations and compactions
// never touch the data's LSM.
//
// The raft library keeps unstable entries in memory and asks the application
// to persist them; raftlog is where they go. A shard's Ready loop will use it
// like this:
//
//	rd := rawNode.Ready()
//	st.SaveReady(rd)            // snapshot, entries, hard state: one batch, one fsync
//	transport.Send(rd.Messages) // only after the save, as raft requires
//	apply(rd.CommittedEntries)  // the unchanged apply loop
//	rawNode.Advance(rd)
//
// and, once the data store has durably applied up to some index, it calls
// CreateSnapshot and Compact to drop the log prefix. Queries (Entries, Term,
// LastIndex, FirstIndex) answer exactly as raft.MemoryStorage does, including
// its ErrCompacted and ErrUnavailable cases; a differential test holds the
// two implementations to the same answers.
//
// A lone group's log has a Pebble instance of its own (Open). The groups
// of a cluster node share one (OpenEngine): their appends then share the
// syncs of one WAL, where logs of their own synced each group's appends
// apart, and with several shards those syncs were most of a write's CPU.
// Each key of a shared log starts with its group's prefix ('g' and the
// group, 8 bytes big endian); a log of its own has none.
//
// Layout (all keys are short so the fixed keys sort apart from the entries):
//
//	'e' | index (8 bytes, big endian)  -> raftpb.Entry
//	"h"                                 -> raftpb.HardState
//	"c"                                 -> raftpb.ConfState (the current one)
//	"s"                                 -> raftpb.Snapshot (the latest one)
//	"t"                                 -> index, term of the last compacted entry
//	'p' | node ID (8 bytes)             -> a member's transport address
//
// The index and term of the newest entry, the compaction point and the terms
// of the whole log (as runs of equal terms, which are few) are kept in
// memory, so Term, FirstIndex and LastIndex never read Pebble.
package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"basalt/internal/pebblelog"
)

var (
	keyHardState = []byte("h")
	keyConfState = []byte("c")
	keySnapshot  = []byte("s")
	keyTruncated = []byte("t")
)

const (
	entryPrefix = 'e'
	peerPrefix  = 'p'
)

// keys is a log's key prefix: its keys are the layout's behind it.
type keys []byte

func (k keys) key(name []byte) []byte { return append(k[:len(k):len(k)], name...) }

func (k keys) peer(id uint64) []byte {
	return binary.BigEndian.AppendUint64(append(k[:len(k):len(k)], peerPrefix), id)
}

func (k keys) entry(i uint64) []byte {
	return binary.BigEndian.AppendUint64(append(k[:len(k):len(k)], entryPrefix), i)
}

// entriesEnd is past every entry's key.
func (k keys) entriesEnd() []byte { return append(k[:len(k):len(k)], entryPrefix+1) }

// index is the index of entry key ek.
func (k keys) index(ek []byte) uint64 { return binary.BigEndian.Uint64(ek[len(k)+1:]) }

// groupKeys is the prefix of group's log in a shared engine.
func groupKeys(group uint64) keys { return binary.BigEndian.AppendUint64([]byte{'g'}, group) }

// termRun says that entries from index start on have the given term, up to
// the start of the next run.
type termRun struct{ start, term uint64 }

// logState is the in-memory summary of the log. It is replaced as a whole
// after a batch commits, so a failed write leaves it untouched.
type logState struct {
	// offset is the index of the last compacted entry (or of the snapshot
	// the log was reset to): the "dummy" entry whose term is still known.
	offset uint64
	last   uint64
	// runs covers [offset, last]; runs[0].start == offset.
	runs []termRun
}

func (s logState) term(i uint64) uint64 {
	// The last run whose start is <= i.
	k := sort.Search(len(s.runs), func(k int) bool { return s.runs[k].start > i }) - 1
	return s.runs[k].term
}

// Storage is a durable raft.Storage. It is safe for concurrent use, though
// raft calls it from one goroutine.
type Storage struct {
	eng *Engine
	k   keys
	own bool // eng is this log's alone: Close closes it

	mu     sync.Mutex
	log    logState
	hs     raftpb.HardState
	cs     raftpb.ConfState
	snap   raftpb.Snapshot
	peers  map[uint64]string
	sizes  sizes  // of the entries in the log
	recent recent // the newest entries
}

var _ raft.Storage = (*Storage)(nil)

// MaxOpenFiles bounds the table files the log's Pebble keeps open. The log
// is truncated behind the applied index, so it has few tables; the server
// counts these descriptors against RLIMIT_NOFILE.
const MaxOpenFiles = 64

// Engine is a Pebble instance that holds Raft logs: a lone group's, or
// those of every group a cluster node hosts.
type Engine struct {
	db       *pebble.DB
	released *Releaser // of the big batches Pebble keeps (release.go)
}

// OpenEngine opens or creates the engine in dir.
func OpenEngine(dir string) (*Engine, error) {
	opts := &pebble.Options{
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             &pebblelog.Logger{Name: "raftlog pebble"},
		MaxOpenFiles:       MaxOpenFiles,
	}
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &Engine{db: db, released: NewReleaser(db, int(opts.MemTableSize))}, nil
}

// Close closes the engine, after every log in it is closed.
func (e *Engine) Close() error {
	e.released.Close()
	return e.db.Close()
}

// Open opens or creates the log of group in the engine.
func (e *Engine) Open(group uint64) (*Storage, error) { return e.open(groupKeys(group)) }

func (e *Engine) open(k keys) (*Storage, error) {
	s := &Storage{eng: e, k: k, peers: map[uint64]string{}}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// HasOwnLog reports whether dir holds a log with an engine of its own (a
// Pebble manifest).
func HasOwnLog(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	return len(m) > 0
}

// Open opens or creates a log with an engine of its own in dir.
func Open(dir string) (*Storage, error) {
	e, err := OpenEngine(dir)
	if err != nil {
		return nil, err
	}
	s, err := e.open(nil)
	if err != nil {
		e.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// Close closes the log, and its engine if the engine is its own. No call
// may follow.
func (s *Storage) Close() error {
	if s.own {
		return s.eng.Close()
	}
	return nil
}

func (s *Storage) get(name []byte, f func([]byte) error) error {
	v, c, err := s.eng.db.Get(s.k.key(name))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.Close()
	return f(v)
}

// load reads the fixed keys and scans the entries to rebuild the in-memory
// summary.
func (s *Storage) load() error {
	if err := s.get(keyHardState, s.hs.Unmarshal); err != nil {
		return fmt.Errorf("raftlog: hard state: %w", err)
	}
	if err := s.get(keyConfState, s.cs.Unmarshal); err != nil {
		return fmt.Errorf("raftlog: conf state: %w", err)
	}
	if err := s.get(keySnapshot, s.snap.Unmarshal); err != nil {
		return fmt.Errorf("raftlog: snapshot: %w", err)
	}
	var offset, offTerm uint64
	if err := s.get(keyTruncated, func(v []byte) error {
		if len(v) != 16 {
			return errors.New("bad length")
		}
		offset, offTerm = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
		return nil
	}); err != nil {
		return fmt.Errorf("raftlog: truncated state: %w", err)
	}
	pit, err := s.eng.db.NewIter(&pebble.IterOptions{LowerBound: s.k.key([]byte{peerPrefix}), UpperBound: s.k.key([]byte{peerPrefix + 1})})
	if err != nil {
		return err
	}
	for pit.First(); pit.Valid(); pit.Next() {
		s.peers[binary.BigEndian.Uint64(pit.Key()[len(s.k)+1:])] = string(pit.Value())
	}
	if err := pit.Close(); err != nil {
		return err
	}
	ls := logState{offset: offset, last: offset, runs: []termRun{{offset, offTerm}}}
	s.sizes.reset(offset + 1)
	var total uint64
	it, err := s.eng.db.NewIter(&pebble.IterOptions{LowerBound: s.k.entry(offset + 1), UpperBound: s.k.entriesEnd()})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var e raftpb.Entry
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := e.Unmarshal(v); err != nil {
			return fmt.Errorf("raftlog: entry: %w", err)
		}
		if e.Index != ls.last+1 || s.k.index(it.Key()) != e.Index {
			return fmt.Errorf("raftlog: log has a gap: entry %d follows %d", e.Index, ls.last)
		}
		ls.push(e.Index, e.Term)
		total += uint64(len(v))
		s.sizes.totals = append(s.sizes.totals, total)
	}
	if err := it.Error(); err != nil {
		return err
	}
	s.log = ls
	return nil
}

// push records that entry i, which follows the current last one, has term t.
func (ls *logState) push(i, t uint64) {
	if ls.runs[len(ls.runs)-1].term != t {
		ls.runs = append(ls.runs, termRun{i, t})
	}
	ls.last = i
}

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (raftpb.HardState, raftpb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs, s.cs, nil
}

// Entries implements raft.Storage: the entries in [lo, hi), at least one and
// then as many as fit in maxSize bytes.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lo <= s.log.offset {
		return nil, raft.ErrCompacted
	}
	if hi > s.log.last+1 {
		panic(fmt.Sprintf("raftlog: entries' hi(%d) is out of bound lastindex(%d)", hi, s.log.last))
	}
	if s.log.last == s.log.offset {
		return nil, raft.ErrUnavailable
	}
	if lo >= hi {
		return []raftpb.Entry{}, nil
	}
	if ents, ok := s.recent.get(lo, hi, maxSize); ok {
		return ents, nil
	}
	it, err := s.eng.db.NewIter(&pebble.IterOptions{LowerBound: s.k.entry(lo), UpperBound: s.k.entry(hi)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	n := hi - lo
	if n > 64 {
		n = 64
	}
	ents := make([]raftpb.Entry, 0, n)
	var size uint64
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		var e raftpb.Entry
		if err := e.Unmarshal(v); err != nil {
			return nil, fmt.Errorf("raftlog: entry: %w", err)
		}
		if e.Index != lo+uint64(len(ents)) {
			return nil, raft.ErrUnavailable
		}
		size += uint64(e.Size())
		if len(ents) > 0 && size > maxSize {
			break
		}
		ents = append(ents, e)
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, raft.ErrUnavailable
	}
	return ents, nil
}

// Term implements raft.Storage. It never reads Pebble.
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < s.log.offset {
		return 0, raft.ErrCompacted
	}
	if i > s.log.last {
		return 0, raft.ErrUnavailable
	}
	return s.log.term(i), nil
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.last, nil
}

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.offset + 1, nil
}

// Snapshot implements raft.Storage: the latest snapshot saved or created.
func (s *Storage) Snapshot() (raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, nil
}

// write commits b, then installs the new in-memory state via commit.
func (s *Storage) write(b *pebble.Batch, sync bool, commit func()) error {
	defer b.Close()
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
	}
	if err := b.Commit(opt); err != nil {
		return err
	}
	commit()
	return nil
}

// bigBatch is the size of entries from which their batch is sized for them.
const bigBatch = 1 << 20

// entriesSize is what ents weigh marshalled.
func entriesSize(ents []raftpb.Entry) int {
	n := 0
	for i := range ents {
		n += ents[i].Size()
	}
	return n
}

// marshalTo sets key to m, marshalled straight into the batch: an entry
// of hundreds of MB is not copied once more on its way.
func marshalTo(b *pebble.Batch, key []byte, m interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}) error {
	op := b.SetDeferred(len(key), m.Size())
	copy(op.Key, key)
	if _, err := m.MarshalToSizedBuffer(op.Value); err != nil {
		return err
	}
	return op.Finish()
}

// appendBatch adds ents to b with MemoryStorage.Append's rules (entries at
// or below the compaction point are ignored; a suffix that conflicts with
// them is discarded) and returns the resulting log summary.
func (s *Storage) appendBatch(b *pebble.Batch, ls logState, ents []raftpb.Entry) (logState, error) {
	if len(ents) == 0 {
		return ls, nil
	}
	first := ls.offset + 1
	if ents[0].Index+uint64(len(ents))-1 < first {
		return ls, nil
	}
	if ents[0].Index < first {
		ents = ents[first-ents[0].Index:]
	}
	at := ents[0].Index
	if at > ls.last+1 {
		panic(fmt.Sprintf("raftlog: missing log entry [last: %d, append at: %d]", ls.last, at))
	}
	for k := range ents {
		if ents[k].Index != at+uint64(k) {
			panic(fmt.Sprintf("raftlog: entries not contiguous: %d after %d", ents[k].Index, at+uint64(k)-1))
		}
		if err := marshalTo(b, s.k.entry(ents[k].Index), &ents[k]); err != nil {
			return ls, err
		}
	}
	newLast := at + uint64(len(ents)) - 1
	if newLast < ls.last {
		// The new entries replace a longer suffix: drop what is left of it.
		if err := b.DeleteRange(s.k.entry(newLast+1), s.k.entry(ls.last+1), nil); err != nil {
			return ls, err
		}
	}
	// Truncate the term runs at the first new entry, then extend them.
	k := sort.Search(len(ls.runs), func(k int) bool { return ls.runs[k].start >= at })
	if k == 0 {
		k = 1 // runs[0] is the compaction point, which at > offset keeps
	}
	// The full slice expression makes push copy rather than write into the
	// array the installed state still uses.
	ls.runs = ls.runs[:k:k]
	ls.last = at - 1
	for _, e := range ents {
		ls.push(e.Index, e.Term)
	}
	return ls, nil
}

// Append adds entries to the log, replacing any conflicting suffix, as
// raft.MemoryStorage.Append does. It does not sync; Save does.
func (s *Storage) Append(ents []raftpb.Entry) error {
	return s.Save(raftpb.Snapshot{}, raftpb.HardState{}, ents, false)
}

// SetHardState saves the hard state (without syncing).
func (s *Storage) SetHardState(hs raftpb.HardState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.eng.db.NewBatch()
	if err := marshalTo(b, s.k.key(keyHardState), &hs); err != nil {
		b.Close()
		return err
	}
	return s.write(b, false, func() { s.hs = hs })
}

// SetConfState records the configuration in effect once a conf change has
// been applied, so InitialState reports it after a restart.
func (s *Storage) SetConfState(cs raftpb.ConfState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.eng.db.NewBatch()
	if err := marshalTo(b, s.k.key(keyConfState), &cs); err != nil {
		b.Close()
		return err
	}
	return s.write(b, false, func() { s.cs = cs })
}

// ApplyConfChange records the configuration in effect after a membership
// change, and the transport address of the member it added (addr) or
// removed, in one batch.
func (s *Storage) ApplyConfChange(cs raftpb.ConfState, id uint64, addr string, removed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.eng.db.NewBatch()
	if err := marshalTo(b, s.k.key(keyConfState), &cs); err != nil {
		b.Close()
		return err
	}
	if removed {
		b.Delete(s.k.peer(id), nil)
	} else if addr != "" {
		b.Set(s.k.peer(id), []byte(addr), nil)
	}
	return s.write(b, false, func() {
		s.cs = cs
		if removed {
			delete(s.peers, id)
		} else if addr != "" {
			s.peers[id] = addr
		}
	})
}

// Peers returns the transport addresses of the members added at run time.
func (s *Storage) Peers() map[uint64]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[uint64]string, len(s.peers))
	for id, a := range s.peers {
		m[id] = a
	}
	return m
}

// Save persists what one Ready asks for: its snapshot (if any), its entries
// and its hard state (if not empty), in one Pebble batch with at most one
// sync. Writing the snapshot and the hard state together matters: after a
// crash between the two, the hard state's commit index would lag the
// snapshot and raft would refuse to start.
func (s *Storage) Save(snap raftpb.Snapshot, hs raftpb.HardState, ents []raftpb.Entry, sync bool) error {
	return s.save(snap, hs, ents, sync)
}

// Sync makes everything saved so far durable (appendfsync everysec).
func (s *Storage) Sync() error { return s.eng.db.LogData(nil, pebble.Sync) }

// SaveReady saves rd's snapshot, entries and hard state, synced if
// rd.MustSync.
func (s *Storage) SaveReady(rd raft.Ready) error {
	return s.save(rd.Snapshot, rd.HardState, rd.Entries, rd.MustSync)
}

func (s *Storage) save(snap raftpb.Snapshot, hs raftpb.HardState, ents []raftpb.Entry, sync bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Big entries get a batch sized for them: a batch grows by doubling, so
	// an entry of 520 MB would take a 1 GB batch.
	var b *pebble.Batch
	if size := entriesSize(ents); size >= bigBatch {
		b = s.eng.db.NewBatchWithSize(size + size/64 + 4096)
	} else {
		b = s.eng.db.NewBatch()
	}
	ls, cs, newSnap := s.log, s.cs, s.snap
	var err error
	if !raft.IsEmptySnap(snap) {
		if snap.Metadata.Index <= s.snap.Metadata.Index {
			b.Close()
			return raft.ErrSnapOutOfDate
		}
		if ls, err = s.snapshotBatch(b, snap); err != nil {
			b.Close()
			return err
		}
		cs, newSnap = snap.Metadata.ConfState, snap
	}
	if ls, err = s.appendBatch(b, ls, ents); err != nil {
		b.Close()
		return err
	}
	if !raft.IsEmptyHardState(hs) {
		if err := marshalTo(b, s.k.key(keyHardState), &hs); err != nil {
			b.Close()
			return err
		}
	}
	if b.Empty() {
		b.Close()
		return nil
	}
	defer s.eng.released.Committed(b.Len())
	return s.write(b, sync, func() {
		if !raft.IsEmptySnap(snap) {
			s.sizes.reset(ls.offset + 1) // the snapshot emptied the log
			s.recent.reset()
		}
		s.sizes.append(ents)
		s.recent.append(ents, ls.offset+1)
		s.log, s.cs, s.snap = ls, cs, newSnap
		if !raft.IsEmptyHardState(hs) {
			s.hs = hs
		}
	})
}

// snapshotBatch adds to b what resets the log to snap: every entry goes, and
// the snapshot's index and term become the compaction point.
func (s *Storage) snapshotBatch(b *pebble.Batch, snap raftpb.Snapshot) (logState, error) {
	m := snap.Metadata
	if err := b.DeleteRange(s.k.entry(0), s.k.entriesEnd(), nil); err != nil {
		return logState{}, err
	}
	if err := marshalTo(b, s.k.key(keySnapshot), &snap); err != nil {
		return logState{}, err
	}
	if err := marshalTo(b, s.k.key(keyConfState), &m.ConfState); err != nil {
		return logState{}, err
	}
	if err := b.Set(s.k.key(keyTruncated), truncated(m.Index, m.Term), nil); err != nil {
		return logState{}, err
	}
	return logState{offset: m.Index, last: m.Index, runs: []termRun{{m.Index, m.Term}}}, nil
}

func truncated(i, t uint64) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, i)
	binary.BigEndian.PutUint64(v[8:], t)
	return v
}

// ApplySnapshot replaces the log with snap (a snapshot received from the
// leader), as raft.MemoryStorage.ApplySnapshot does. It syncs. A Ready loop
// should prefer SaveReady, which also writes the hard state.
func (s *Storage) ApplySnapshot(snap raftpb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap.Metadata.Index <= s.snap.Metadata.Index {
		return raft.ErrSnapOutOfDate
	}
	b := s.eng.db.NewBatch()
	ls, err := s.snapshotBatch(b, snap)
	if err != nil {
		b.Close()
		return err
	}
	return s.write(b, true, func() {
		s.log, s.cs, s.snap = ls, snap.Metadata.ConfState, snap
		s.sizes.reset(ls.offset + 1)
		s.recent.reset()
	})
}

// CreateSnapshot records a snapshot of the applied state at index i (whose
// entry must still be in the log), to be sent to followers that fall behind
// the compaction point. cs, if not nil, becomes the current ConfState; data
// is opaque to raft (for basalt, a description of a data store checkpoint).
func (s *Storage) CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i <= s.snap.Metadata.Index {
		return raftpb.Snapshot{}, raft.ErrSnapOutOfDate
	}
	if i > s.log.last {
		panic(fmt.Sprintf("raftlog: snapshot %d is out of bound lastindex(%d)", i, s.log.last))
	}
	if i < s.log.offset {
		return raftpb.Snapshot{}, raft.ErrCompacted
	}
	snap := raftpb.Snapshot{Data: data}
	snap.Metadata.Index, snap.Metadata.Term = i, s.log.term(i)
	snap.Metadata.ConfState = s.cs
	if cs != nil {
		snap.Metadata.ConfState = *cs
	}
	b := s.eng.db.NewBatch()
	if err := marshalTo(b, s.k.key(keySnapshot), &snap); err != nil {
		b.Close()
		return raftpb.Snapshot{}, err
	}
	if err := marshalTo(b, s.k.key(keyConfState), &snap.Metadata.ConfState); err != nil {
		b.Close()
		return raftpb.Snapshot{}, err
	}
	err := s.write(b, true, func() { s.snap, s.cs = snap, snap.Metadata.ConfState })
	return snap, err
}

// Committed says raft has handed the entries up to index i to be applied:
// a big one among them (1 MB or more) need not stay in memory as one of
// the newest, where it would live until later writes push it out (a
// follower that still lacks it gets it from Pebble).
func (s *Storage) Committed(i uint64) {
	s.mu.Lock()
	s.recent.releaseBig(i)
	s.mu.Unlock()
}

// Compact discards the entries before index i; entry i's term is kept so
// raft can still match it. i must not exceed the applied index.
func (s *Storage) Compact(i uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i <= s.log.offset {
		return raft.ErrCompacted
	}
	if i > s.log.last {
		panic(fmt.Sprintf("raftlog: compact %d is out of bound lastindex(%d)", i, s.log.last))
	}
	t := s.log.term(i)
	b := s.eng.db.NewBatch()
	if err := b.DeleteRange(s.k.entry(0), s.k.entry(i+1), nil); err != nil {
		b.Close()
		return err
	}
	if err := b.Set(s.k.key(keyTruncated), truncated(i, t), nil); err != nil {
		b.Close()
		return err
	}
	ls := s.log
	k := sort.Search(len(ls.runs), func(k int) bool { return ls.runs[k].start > i })
	runs := append([]termRun{{i, t}}, ls.runs[k:]...)
	ls.offset, ls.runs = i, runs
	// Losing a compaction in a crash is harmless: the entries come back.
	return s.write(b, false, func() {
		s.log = ls
		s.sizes.compact(i)
		s.recent.compact(i)
	})
}

// RetainFrom is where to compact the log to keep at most keep bytes of
// entries up to last (an applied index): the lowest index whose following
// entries fit. It is FirstIndex()-1 if they all do.
func (s *Storage) RetainFrom(last, keep uint64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	last = min(last, s.log.last)
	if last < s.sizes.first {
		return s.log.offset
	}
	return s.sizes.retainFrom(last, keep)
}

// Bootstrap initialises an empty log for a new group whose voters are
// given: the log starts after a snapshot at index 1, term 1 holding that
// configuration, as the raft documentation recommends over
// RawNode.Bootstrap. Every member of a new group bootstraps the same way.
func (s *Storage) Bootstrap(voters []uint64) error {
	s.mu.Lock()
	empty := s.log.last == 0 && s.snap.Metadata.Index == 0 && raft.IsEmptyHardState(s.hs)
	s.mu.Unlock()
	if !empty {
		return errors.New("raftlog: cannot bootstrap a non-empty log")
	}
	snap := raftpb.Snapshot{Metadata: raftpb.SnapshotMetadata{
		Index: 1, Term: 1, ConfState: raftpb.ConfState{Voters: voters},
	}}
	return s.save(snap, raftpb.HardState{Term: 1, Commit: 1}, nil, true)
}
