package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// ErrReadOnly is what a write on a read view panics with: a command that
// writes must be flagged as a write in the command table.
var ErrReadOnly = errors.New("store: write on a read view")

// Tx is one view of the store as commands see it. A read Tx reads applied
// state (the live engine or a snapshot). A write Tx is the batch of one
// group of records: each record sees the writes of those before it.
//
// Write Txs can be chained (WriteTxAfter): the leader applies the next
// group while the previous one waits for Raft, so the next one must see
// writes that are not in Pebble yet. A chain shares one indexed batch, the
// view, that every Tx of the chain writes to and reads from; each Tx also
// writes its own plain batch, which is what it commits. Committing Tx k
// puts exactly its own writes in Pebble; the view still holds them, with
// the same values, so later Txs read the same either way. Txs of a chain
// commit in order; dropping one drops the ones after it.
type Tx struct {
	st    *Store
	r     pebble.Reader
	b     *pebble.Batch // what a write Tx commits; nil for a read Tx
	snap  *pebble.Snapshot
	dbMap []int

	chain     *chain
	prev      *Tx // the Tx before this one in its chain, if not committed yet
	committed bool

	// DB is the logical database commands address; Now is the clock they
	// see (the record's time in a write Tx).
	DB  int
	Now int64

	countDelta   []int64
	expiresDelta []int64
	dueWritten   map[int]int64 // the earliest expiry index entry written, by physical db (see Due)
	dbMapDirty   bool
	// Touched receives every user key the Tx modifies (its logical db and
	// key), for WATCH and blocked clients. TouchedDBs is called before
	// FLUSHDB (a == b) or SWAPDB changes whole databases. Either may be nil.
	Touched      func(db int, key []byte)
	TouchedDBs   func(a, b int)
	scratch      []byte
	scratchBuf   [48]byte // scratch's first buffer: a read's lookup allocates no key
	chunkKey     []byte   // the metadata key viewChunk looks up
	memberKeyBuf []byte   // memberKey's
	posKey       []byte   // keyPos's last key and its Pos
	pos          uint64
	posValid     bool

	// written holds the metadata entries this batch wrote, by Pebble key;
	// they go to the batches when the Tx is sealed (see pendingMeta) and
	// to the store's cache once committed. flushed says a range deletion
	// (FLUSHDB) made the cache stale for this batch.
	written  map[string]pendingMeta
	unsaved  bool     // written holds entries saveMeta has not written
	saveKeys []string // saveMeta's scratch
	flushed  bool

	iter     *pebble.Iterator // a write Tx's iterator on its view, reused (openIter)
	iterBusy bool
	ahead    *readAhead // members read ahead (ahead.go)

	held           map[string]*heldMember // by Pebble key (held.go)
	heldUnsaved    bool
	heldLo, heldHi []byte // the least and greatest held keys

	writes int // changes made so far (see Writes)

	functionsWritten bool // the function space changed (see functionCache)
	aclWritten       bool // the ACL users changed (acl.go)

	// last is the metadata rawMeta found last in a write Tx, until the Tx
	// writes anything: a command that looks a key up and then writes it
	// (SET, INCR, PutQuiet's own lookup) finds it once, not twice.
	last lastMeta
	// wrote is the entry the Tx wrote last (see lastWrite).
	wrote lastWrite

	// Keyspace notifications (notify.go): the classes wanted when the Tx
	// started, and the events raised so far.
	notify      NotifyFlags
	events      []Event
	overwriting []byte // the key Overwrite emptied, while overwrite is set
	overwrite   bool
	keyMiss     bool // a Lookup that finds no key raises "keymiss" (see KeyMiss)
	// Touching makes a read Tx's Lookup count as a use of the key it
	// finds, for OBJECT IDLETIME (see Store.Touch): the server sets it for
	// the reads it runs instead of touching their keys up front.
	Touching    bool
	slotStale   bool   // the last cached lookup found the key's access slot not yet set this second
	shared      bool   // LookupShared: a read's metadata may alias the cache
	reading     bool   // a read Tx not closed yet: it holds st.installing
	commitsSeen uint64 // st.commits before a live read's first metadata lookup
	metaRead    bool   // commitsSeen is set
	published   int    // messages in events (see Publish)

	// Client-side caching (tracking.go): Writer is the client whose record
	// the apply loop applies now (0: none known); the keys modified, if
	// some client tracks keys.
	Writer  uint64
	invalid []Invalidation

	local    map[string]any // Local, by member prefix
	localKey []byte         // Local's scratch

	// Member writes, for the member memos (member_memo.go): in order, their
	// bytes, the last one of each member (by Pebble key: its index in
	// memberOps), the member prefixes of the keys written (with their
	// dirty flags; all keys, if memberDirtyAll), and a scratch metadata
	// key.
	memberOps      []memberOp
	memberBuf      []byte
	memberAt       map[string]int32
	memberDirty    map[string]uint8
	memberDirtyAll bool
	memoKey        []byte
}

// chain is the view shared by chained write Txs.
type chain struct {
	view *pebble.Batch // indexed: Pebble plus every write of the chain
	open int           // Txs of the chain not committed or closed yet
}

func (c *chain) release() {
	if c.open--; c.open == 0 {
		c.view.Close()
	}
}

// BatchSize is how many bytes the Tx's own batch holds.
func (t *Tx) BatchSize() int { return t.b.Len() }

// ViewSize is how many bytes the chain's view holds: a long chain's view
// only shrinks once every Tx of it is committed.
func (t *Tx) ViewSize() int { return t.chain.view.Len() }

// ReadTx returns a read view of applied state in logical database db at now.
// A snapshot makes multi-key reads see one instant; single-key reads don't
// need it.
//
// The Tx holds the store against a snapshot install until Close, so reads
// must not open a second Tx while one is open (the install, waiting for
// the first, would hold up the second).
func (s *Store) ReadTx(db int, now int64, snapshot bool) *Tx {
	s.installing.RLock()
	t := readTxs.Get().(*Tx)
	chunkKey, posKey, memoKey, memberKeyBuf := t.chunkKey, t.posKey, t.memoKey, t.memberKeyBuf
	*t = Tx{st: s, r: s.pdb, dbMap: *s.dbMap.Load(), DB: db, Now: now, notify: NotifyFlags(s.notify.Load()), keyMiss: true, reading: true}
	t.scratch, t.chunkKey, t.posKey, t.memoKey, t.memberKeyBuf = t.scratchBuf[:0], chunkKey[:0], posKey[:0], memoKey[:0], memberKeyBuf[:0]
	if snapshot {
		t.snap = s.pdb.NewSnapshot()
		t.r = t.snap
	}
	return t
}

// readTxs are read Txs closed, for the next reads: a read is often a few
// hundred nanoseconds of work, and a Tx is a few hundred bytes.
var readTxs = sync.Pool{New: func() any { return new(Tx) }}

// WriteTx starts the batch of one group, on committed state.
func (s *Store) WriteTx() *Tx { return s.WriteTxAfter(nil, 0) }

// bigWrite is the size hint from which a write Tx's batches are allocated
// at that size up front: a batch grows by doubling, which for a value of
// hundreds of MB leaves as much again in garbage, twice (batch and view).
const bigWrite = 1 << 20

// WriteTxAfter starts the batch of one group that sees the writes of prev
// (and of prev's predecessors) as if they were committed. prev must commit
// before the new Tx, or be dropped with it. nil or a finished prev starts
// a new chain. size is about how many bytes the group will write (its
// records' size will do).
func (s *Store) WriteTxAfter(prev *Tx, size int) *Tx {
	n := len(s.counts)
	b := s.pdb.NewBatch()
	if size >= bigWrite {
		b = s.pdb.NewBatchWithSize(size)
	}
	t := &Tx{st: s, b: b, countDelta: make([]int64, n), expiresDelta: make([]int64, n),
		written: writtenMaps.Get().(map[string]pendingMeta), notify: NotifyFlags(s.notify.Load())}
	if prev != nil && !prev.committed && prev.b != nil {
		prev.save() // the view holds all of prev for t's iterations
		t.prev, t.chain = prev, prev.chain
		t.dbMap = append([]int(nil), prev.dbMap...)
	} else {
		view := s.pdb.NewIndexedBatch()
		if size >= bigWrite {
			view = s.pdb.NewIndexedBatchWithSize(size)
		}
		t.chain = &chain{view: view}
		t.dbMap = append([]int(nil), *s.dbMap.Load()...) // Swap edits the copy
	}
	t.chain.open++
	t.r = t.chain.view
	return t
}

// Close releases a read Tx's snapshot or a write Tx's uncommitted batch,
// whose events are dropped. The events of a Tx that wrote and published
// nothing (a read's, or a group of reads in the apply loop) can only be
// keymiss: they go out now. A read Tx is reused after Close.
func (t *Tx) Close() {
	if t.writes == 0 && t.published == 0 {
		t.deliverEvents()
	}
	if t.snap != nil {
		t.snap.Close()
		t.snap = nil
	}
	if t.b != nil {
		t.dropIter()
		t.b.Close()
		t.b = nil
		t.chain.release()
	}
	if t.reading {
		t.reading = false
		t.st.installing.RUnlock()
		*t = Tx{chunkKey: t.chunkKey, posKey: t.posKey, memoKey: t.memoKey, memberKeyBuf: t.memberKeyBuf} // their buffers, for the next read
		readTxs.Put(t)
	}
}

// Writes counts the changes the Tx made so far: a command that leaves it
// unchanged changed nothing.
func (t *Tx) Writes() int { return t.writes }

// lastMeta remembers one rawMeta result (see Tx.last).
type lastMeta struct {
	mk       []byte
	m        Meta
	found    bool
	valid    bool
	bodyless bool        // m.Body was too big to keep (lastBodyMax)
	ref      *cacheEntry // the cache entry it came from, or nil
}

// pendingMeta is a metadata entry a write Tx wrote, for the cache once
// committed: ref is the key's cache entry the Tx read, updated in place
// if it is still cached.
//
// It goes to the batches only when the Tx is sealed (saveMeta), so a key
// written many times in one group (a counter, a list's head, a bitmap) is
// written once to Pebble, not once per command. Until then the Tx and its
// successors find it here (pendingWritten); what else reads metadata from
// the batches (Scan) or deletes it by range (Flush: other range deletions
// cover members only) saves first.
type pendingMeta struct {
	value []byte
	found bool
	saved bool // in the batch and the view
	ref   *cacheEntry
}

// putMeta records a metadata write (found false: a deletion) for saveMeta.
func (t *Tx) putMeta(mk, value []byte, found bool, ref *cacheEntry) {
	t.writes++
	t.last.valid = false
	t.written[string(mk)] = pendingMeta{value: value, found: found, ref: ref}
	t.unsaved = true
}

// saveMeta writes the metadata entries not written yet to the batch and
// the view.
func (t *Tx) saveMeta() {
	if !t.unsaved {
		return
	}
	t.unsaved = false
	// In key order: Pebble inserts a batch into the memtable's skiplist
	// entry by entry, and an insert that follows a nearby key starts from
	// the previous insert's position instead of the skiplist's top.
	keys := slices.Grow(t.saveKeys[:0], len(t.written)) // one allocation, not a doubling per group
	for mk, e := range t.written {
		if !e.saved {
			keys = append(keys, mk)
		}
	}
	slices.Sort(keys)
	for _, mk := range keys {
		e := t.written[mk]
		if e.found {
			t.setBoth([]byte(mk), e.value)
		} else {
			t.delBoth([]byte(mk))
		}
		e.saved = true
		t.written[mk] = e
	}
	clear(keys)
	t.saveKeys = keys[:0]
}

// save writes what the Tx keeps until sealed: metadata and held members.
func (t *Tx) save() {
	t.saveMeta()
	t.saveHeld(nil, nil)
}

// set and del write to the Tx's own batch and to its chain's view (or to
// the key's held entry).
func (t *Tx) set(k, v []byte) {
	if t.heldWrite(k, v, true) {
		return
	}
	t.writes++
	t.last.valid = false
	t.setBoth(k, v)
}

func (t *Tx) del(k []byte) {
	if t.heldWrite(k, nil, false) {
		return
	}
	t.writes++
	t.last.valid = false
	t.delBoth(k)
}

func (t *Tx) setBoth(k, v []byte) {
	t.wrote.note(k, v, true)
	t.aheadWrite(k, v, true)
	t.logMember(memberSet, k, v)
	if err := t.b.Set(k, v, nil); err != nil {
		panic(err)
	}
	if err := t.chain.view.Set(k, v, nil); err != nil {
		panic(err)
	}
}

func (t *Tx) delBoth(k []byte) {
	t.wrote.note(k, nil, false)
	t.aheadWrite(k, nil, false)
	t.logMember(memberDel, k, nil)
	if err := t.b.Delete(k, nil); err != nil {
		panic(err)
	}
	if err := t.chain.view.Delete(k, nil); err != nil {
		panic(err)
	}
}

func (t *Tx) delRange(lo, hi []byte) {
	clear(t.local) // it may have removed a key's members wholesale
	t.wrote.valid = false
	t.forgetHeld(lo, hi)
	t.dropAhead(lo, hi)
	t.logMember(memberRange, lo, hi)
	t.writes++
	t.last.valid = false
	if err := t.b.DeleteRange(lo, hi, nil); err != nil {
		panic(err)
	}
	if err := t.chain.view.DeleteRange(lo, hi, nil); err != nil {
		panic(err)
	}
}

// pendingWritten finds mk among the metadata written by this Tx and its
// uncommitted predecessors.
func (t *Tx) pendingWritten(mk []byte) (pendingMeta, bool) {
	for x := t; x != nil && !x.committed; x = x.prev {
		if e, hit := x.written[string(mk)]; hit {
			return e, true
		}
		if x.flushed {
			return pendingMeta{}, false
		}
	}
	return pendingMeta{}, false
}

// cacheStale reports whether an uncommitted FLUSHDB in the chain makes
// the cache unusable for this Tx.
func (t *Tx) cacheStale() bool {
	for x := t; x != nil && !x.committed; x = x.prev {
		if x.flushed {
			return true
		}
	}
	return false
}

// pendingDelta sums the key (or expiry) count changes of this Tx's
// uncommitted predecessors for physical database phys.
func (t *Tx) pendingDelta(phys int, expires bool) int64 {
	var d int64
	for x := t.prev; x != nil && !x.committed; x = x.prev {
		if expires {
			d += x.expiresDelta[phys]
		} else {
			d += x.countDelta[phys]
		}
	}
	return d
}

// Writable reports whether this is the apply loop's write Tx.
func (t *Tx) Writable() bool { return t.b != nil }

// Commit makes the batch durable (when sync) and visible, then publishes the
// key counts and database mapping it changed.
func (t *Tx) Commit(sync bool) error {
	wait, err := t.CommitVisible(sync)
	if err != nil {
		return err
	}
	return wait()
}

// CommitVisible applies the batch and returns once it is visible to reads
// (and in the metadata cache); wait then returns once it is on disk (with
// sync) and must be called exactly once. This lets the apply loop go on
// with the next group while the disk syncs this one: Pebble makes a batch
// visible before its WAL sync anyway, so readers see nothing they would not
// see with a plain Commit. It uses Pebble's ApplyNoSyncWait, which Pebble
// marks experimental; it is the call built for exactly this pipelining.
func (t *Tx) CommitVisible(sync bool) (wait func() error, err error) {
	if t.prev != nil && !t.prev.committed {
		panic("store: a chained Tx committed before its predecessor")
	}
	t.save()
	for phys := range t.countDelta {
		if d := t.countDelta[phys]; d != 0 {
			n := t.st.counts[phys].Load() + d
			t.b.Set(countKey(phys), binary.BigEndian.AppendUint64(nil, uint64(n)), nil)
		}
		if d := t.expiresDelta[phys]; d != 0 {
			n := t.st.expires[phys].Load() + d
			t.b.Set(expiresKey(phys), binary.BigEndian.AppendUint64(nil, uint64(n)), nil)
		}
	}
	if t.dbMapDirty {
		for logical, phys := range t.dbMap {
			t.b.Set(dbMapKey(logical), binary.BigEndian.AppendUint16(nil, uint16(phys)), nil)
		}
	}
	b := t.b
	t.st.commits.Add(1) // odd: reads may find members newer than the cache
	if sync {
		err = t.st.pdb.ApplyNoSyncWait(b, pebble.Sync)
	} else {
		err = b.Commit(pebble.NoSync)
	}
	if err != nil {
		t.st.commits.Add(1)
		return nil, err
	}
	for phys, d := range t.countDelta {
		t.st.counts[phys].Add(d)
		t.st.expires[phys].Add(t.expiresDelta[phys])
	}
	for phys, at := range t.dueWritten {
		t.st.due.lower(phys, at)
	}
	if t.dbMapDirty {
		m := append([]int(nil), t.dbMap...)
		t.st.dbMap.Store(&m)
	}
	if t.flushed {
		t.st.cache.clear(t.st.empty())
	}
	if t.functionsWritten {
		t.st.funcs.reset()
	}
	if t.aclWritten {
		t.st.aclGen.Add(1)
	}
	for mk, e := range t.written {
		t.st.cache.set([]byte(mk), e.value, e.found, e.ref)
	}
	t.st.cache.applyMemberOps(t)
	t.st.commits.Add(1) // even: the cache agrees with Pebble again
	t.b = nil
	t.committed = true
	t.prev = nil
	t.recycleMaps()
	t.dropIter()
	t.chain.release()
	t.deliverCommitted()
	return func() error {
		var err error
		if sync {
			err = b.SyncWait()
		}
		b.Close()
		return err
	}, nil
}

// A write Tx's maps grow with its group, rehashing several times on the
// way to hundreds of entries: about 3% of the CPU of EVALSHA -P 16 when each
// group started with new ones. A committed Tx's maps are emptied for the
// next Tx instead (its successors stop at it: see pendingWritten), unless
// a big group grew them so much that emptying them costs more than new ones.
var (
	writtenMaps     = sync.Pool{New: func() any { return map[string]pendingMeta{} }}
	memberDirtyMaps = sync.Pool{New: func() any { return map[string]uint8{} }}
	memberAtMaps    = sync.Pool{New: func() any { return map[string]int32{} }}
)

const recycledMapMax = 16384 // entries; a full group of small writes stays below it

func (t *Tx) recycleMaps() {
	if len(t.written) <= recycledMapMax {
		clear(t.written)
		writtenMaps.Put(t.written)
	}
	if t.memberDirty != nil && len(t.memberDirty) <= recycledMapMax {
		clear(t.memberDirty)
		memberDirtyMaps.Put(t.memberDirty)
	}
	if t.memberAt != nil && len(t.memberAt) <= recycledMapMax {
		clear(t.memberAt)
		memberAtMaps.Put(t.memberAt)
	}
	t.written, t.memberDirty, t.memberAt = nil, nil, nil
}

// SetApplied records the index of the last record this batch applies.
func (t *Tx) SetApplied(index uint64) {
	t.mustWrite()
	t.set(stateKey("applied"), binary.BigEndian.AppendUint64(nil, index))
}

func (t *Tx) mustWrite() {
	if t.b == nil {
		panic(ErrReadOnly)
	}
}

func (t *Tx) phys() int { return t.dbMap[t.DB] }

func (t *Tx) get(k []byte) (out []byte, found bool) {
	found = t.view(k, func(v []byte) { out = append([]byte(nil), v...) })
	return out, found
}

// view calls fn with k's value, which is Pebble's and only valid during
// the call, if k exists.
func (t *Tx) view(k []byte, fn func(v []byte)) bool {
	if held, found := t.heldView(k, fn); held {
		return found
	}
	if w := &t.wrote; w.valid && bytes.Equal(w.k, k) {
		if w.found {
			fn(w.v)
		}
		return w.found
	}
	v, closer, err := t.r.Get(k)
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return false
		}
		panic(err) // an engine failure is not a client error: fail loudly
	}
	defer closer.Close()
	fn(v)
	return true
}

// rawMeta returns a key's stored metadata whether or not it has expired.
// It looks in this batch's writes, then the cache, then Pebble. A snapshot
// read skips the cache, which may be newer than the snapshot.
func (t *Tx) rawMeta(key []byte) (Meta, bool) {
	t.scratch = t.metaKey(t.scratch[:0], key)
	mk := t.scratch
	if t.b != nil && t.last.valid && !t.last.bodyless && bytes.Equal(t.last.mk, mk) {
		m := t.last.m
		m.Body = append([]byte(nil), m.Body...) // callers may edit the body
		return m, t.last.found
	}
	m, ok, ref := t.readMeta(mk)
	if t.b != nil {
		body := t.last.m.Body[:0] // never handed out: reused
		t.last = lastMeta{mk: append(t.last.mk[:0], mk...), m: m, found: ok, valid: true, ref: ref}
		// A big body (a bitmap that BITFIELD edits) is not copied: the
		// write that follows the lookup needs only the header.
		t.last.bodyless = len(m.Body) > lastBodyMax
		t.last.m.Body = nil
		if !t.last.bodyless {
			t.last.m.Body = append(body, m.Body...)
		}
	}
	return m, ok
}

// lastBodyMax is the largest body Tx.last keeps.
const lastBodyMax = 256

// lastWrite is the last entry a write Tx wrote to its batches (found
// false: deleted), for a read of it that follows within the group: HGET
// after HINCRBY in one script, ZSCORE after ZADD, a member a command
// writes and reads back. Such a read would otherwise be a Get through the
// view, which searches the batch, the memtables and the levels; the
// member memos serve the members the group wrote only from its log of
// member writes, and not those of lists, streams or strings. Every later write of
// the Tx goes through setBoth or delBoth (which replace it), delRange
// (which drops it) or a held member (which view finds first).
type lastWrite struct {
	k, v         []byte
	found, valid bool
}

func (w *lastWrite) note(k, v []byte, found bool) {
	if w.valid = len(v) <= lastBodyMax; w.valid {
		w.k, w.v, w.found = append(w.k[:0], k...), append(w.v[:0], v...), found
	}
}

// headerMeta is rawMeta for a caller that does not look at the body.
func (t *Tx) headerMeta(key []byte) (Meta, bool) {
	if t.b != nil && t.last.valid {
		if t.scratch = t.metaKey(t.scratch[:0], key); bytes.Equal(t.last.mk, t.scratch) {
			return t.last.m, t.last.found
		}
	}
	return t.rawMeta(key)
}

// touchSecond is the second a Touching read uses the keys it finds, or 0.
func (t *Tx) touchSecond() uint32 {
	if !t.Touching {
		return 0
	}
	return uint32(t.Now / 1000)
}

// ErrStaleRead is what a live read panics with when the members it read
// may be newer than the metadata it found: a commit came in between. The
// caller runs the read again on a snapshot (a new Tx).
var ErrStaleRead = errors.New("store: a commit came between a read's metadata and members")

// straddled reports, after a live read Tx read members, whether a commit
// may have been applied since its first metadata lookup: if not, its
// metadata (from the cache or Pebble) and its members are of one state.
// Reads of metadata only, like GET, never ask.
func (t *Tx) straddled() bool {
	if t.b != nil || t.snap != nil || !t.metaRead {
		return false
	}
	n := t.st.commits.Load()
	return n != t.commitsSeen || n&1 != 0
}

// readMeta looks metadata key mk up in this batch's writes, then the
// cache, then Pebble. ref is mk's cache entry, if a write Tx found one.
func (t *Tx) readMeta(mk []byte) (m Meta, ok bool, ref *cacheEntry) {
	if t.b == nil && t.snap == nil && !t.metaRead {
		t.commitsSeen, t.metaRead = t.st.commits.Load(), true
	}
	var v []byte
	if e, hit := t.pendingWritten(mk); hit {
		v, ok, ref = e.value, e.found, e.ref // never changed in place: putMeta replaces it
		if !t.shared {
			v = append([]byte(nil), v...) // callers may edit the body
		}
	} else if t.snap != nil || t.b != nil && t.cacheStale() {
		v, ok = t.get(mk)
	} else if e, cached, version, complete, slotStale := t.st.cache.getTouching(mk, t.touchSecond()); cached != nil {
		t.slotStale = slotStale
		if t.b != nil {
			ref = cached
		}
		switch {
		case e.big: // the cache knows the key, not its value
			v, ok = t.get(mk)
		case !t.shared:
			v, ok = append([]byte(nil), e.value...), e.found
		default:
			v, ok = e.value, e.found
		}
	} else if !complete {
		v, ok = t.get(mk)
		t.st.cache.fill(mk, v, ok, version)
	}
	if !ok {
		return Meta{}, false, ref
	}
	m, err := decodeMeta(v)
	if err != nil {
		panic(err)
	}
	return m, true, ref
}

// Lookup returns a live key's metadata. An expired key does not exist; in
// a write Tx it is deleted on the way (lazy expiry, deterministic because
// Now is the record's time).
func (t *Tx) Lookup(key []byte) (Meta, bool) {
	// A chunked string is its metadata and its chunks, like a collection:
	// a live read that finds a commit came between them runs again on a
	// snapshot (straddled), so a write cannot tear the value.
	t.slotStale = true
	m, ok := t.rawMeta(key)
	if !ok || m.Expired(t.Now) {
		if ok && t.b != nil {
			t.remove(key, m)
		}
		if t.keyMiss {
			t.Notify(NotifyKeyMiss, "keymiss", key)
		}
		if t.b == nil {
			t.st.Misses.Add(1)
		}
		return Meta{}, false
	}
	if t.b == nil {
		t.st.Hits.Add(1)
	}
	if t.Touching && t.slotStale {
		t.st.Touch(t.DB, key, t.Now)
	}
	return m, true
}

// LookupShared is Lookup for a caller that does not modify the body: the
// Body it returns may be the cache's own bytes (never modified once
// cached) or, in a write Tx, the metadata the Tx wrote (replaced, never
// modified, by the next write). A GETBIT on a 1 KB bitmap then copies
// nothing, and a SETBIT copies it once, into the new value
// (WriteStringRange).
func (t *Tx) LookupShared(key []byte) (Meta, bool) {
	t.shared = true
	m, ok := t.Lookup(key)
	t.shared = false
	return m, ok
}

// Alive reports whether key is live in logical database db without
// touching it: no lazy expiry. Checks made for WATCH use it, because what
// they find must not change the data (WATCH state is not in the log).
func (t *Tx) Alive(db int, key []byte) bool {
	saved := t.DB
	t.DB = db
	defer func() { t.DB = saved }()
	m, ok := t.rawMeta(key)
	return ok && !m.Expired(t.Now)
}

// ExpiredIn reports whether key is in logical database db past its expiry,
// not removed yet; like Alive, it removes nothing.
func (t *Tx) ExpiredIn(db int, key []byte) bool {
	saved := t.DB
	t.DB = db
	defer func() { t.DB = saved }()
	m, ok := t.rawMeta(key)
	return ok && m.Expired(t.Now)
}

// ExistsIn reports whether key is live in logical database db.
func (t *Tx) ExistsIn(db int, key []byte) bool {
	saved := t.DB
	t.DB = db
	defer func() { t.DB = saved }()
	return t.Exists(key)
}

// Exists reports whether key is live.
func (t *Tx) Exists(key []byte) bool {
	_, ok := t.Lookup(key)
	return ok
}

// Put writes key's metadata, creating the key if needed. Members of an
// existing collection are kept when the type stays the same; a key whose
// type changes loses its old members, and so does a chunked string that
// becomes an inline one (WriteString drops the chunks of a chunked string
// it replaces with another).
func (t *Tx) Put(key []byte, m Meta) {
	t.PutQuiet(key, m)
	t.touch(t.DB, key)
}

// PutQuiet is Put for a change Redis does not count as a modification of
// the key (XSETID): WATCH and blocked clients don't see it.
func (t *Tx) PutQuiet(key []byte, m Meta) { t.putEncoded(key, m, nil) }

// putEncoded is PutQuiet with m's stored form already built (enc; nil:
// build it).
func (t *Tx) putEncoded(key []byte, m Meta, enc []byte) {
	t.mustWrite()
	phys := t.phys()
	old, existed := t.headerMeta(key)
	ref := t.last.ref
	t.noteCreated(key, existed, existed && old.Expired(t.Now))
	// The expiry index is a set of hints (see ExpireDue): a key's entry
	// may come before its expiry, never after it. An expiry that moves
	// later (a TTL refreshed on every access) keeps the entry it has.
	later := existed && old.ExpireAt != 0 && m.ExpireAt > old.ExpireAt
	if existed {
		if old.ExpireAt != 0 && old.ExpireAt != m.ExpireAt && !later {
			t.del(expiryKey(nil, phys, old.ExpireAt, key))
		}
		if old.HasMembers() && (old.Type != m.Type || old.Chunked != m.Chunked) {
			t.deleteMembers(phys, key)
		}
		if old.ExpireAt != 0 {
			t.expiresDelta[phys]--
		}
	} else {
		t.countDelta[phys]++
	}
	if m.ExpireAt != 0 {
		t.expiresDelta[phys]++
	}
	if m.ExpireAt != 0 && (!existed || old.ExpireAt != m.ExpireAt) && !later {
		t.setDue(phys, m.ExpireAt, key)
	}
	mk := t.metaKey(nil, key)
	if enc == nil {
		enc = m.encode(make([]byte, 0, metaHeader+len(m.Body)))
	}
	t.putMeta(mk, enc, true, ref)
}

// Delete removes a live key and its members; it reports whether there was one.
func (t *Tx) Delete(key []byte) bool {
	t.mustWrite()
	m, ok := t.rawMeta(key)
	if !ok {
		return false
	}
	t.remove(key, m)
	return !m.Expired(t.Now)
}

func (t *Tx) remove(key []byte, m Meta) {
	if m.Expired(t.Now) {
		t.Notify(NotifyExpired, "expired", key)
	}
	phys := t.phys()
	mk := t.metaKey(nil, key)
	var ref *cacheEntry
	if t.last.valid && bytes.Equal(t.last.mk, mk) {
		ref = t.last.ref
	}
	t.putMeta(mk, nil, false, ref)
	if m.ExpireAt != 0 {
		t.del(expiryKey(nil, phys, m.ExpireAt, key))
		t.expiresDelta[phys]--
	}
	if m.HasMembers() {
		t.deleteMembers(phys, key)
	}
	t.countDelta[phys]--
	t.touch(t.DB, key)
}

func (t *Tx) deleteMembers(phys int, key []byte) {
	p := t.memberPrefix(nil, key)
	t.delRange(p, PrefixEnd(p))
}

func (t *Tx) touch(db int, key []byte) {
	if t.Touched != nil {
		t.Touched(db, key)
	}
	t.noteInvalid(key)
}

// Count is the number of keys in the database, expired ones not yet removed
// included, as Redis's DBSIZE.
func (t *Tx) Count() int64 {
	phys := t.phys()
	n := t.st.counts[phys].Load()
	if t.countDelta != nil {
		n += t.countDelta[phys] + t.pendingDelta(phys, false)
	}
	return n
}

// Expires is the number of keys with an expiry in the database (INFO
// keyspace).
func (t *Tx) Expires() int64 {
	phys := t.phys()
	n := t.st.expires[phys].Load()
	if t.expiresDelta != nil {
		n += t.expiresDelta[phys] + t.pendingDelta(phys, true)
	}
	return n
}

// Member returns a collection member's value.
func (t *Tx) Member(key, sub []byte) ([]byte, bool) {
	k := t.memberKey(key, sub)
	if v, found, hit := t.memberFromMemo(k); hit {
		return v, found
	}
	v, ok := t.get(k)
	if t.straddled() {
		panic(ErrStaleRead)
	}
	t.keepMember(k, v, ok)
	return v, ok
}

// viewMember calls fn with a member's value, valid only during the call,
// if the member exists: a read of a few bytes of a 4 KB chunk copies none.
func (t *Tx) viewMember(key, sub []byte, fn func(v []byte)) bool {
	found := t.view(t.memberKey(key, sub), func(v []byte) {
		if t.straddled() {
			panic(ErrStaleRead)
		}
		fn(v)
	})
	if !found && t.straddled() {
		panic(ErrStaleRead)
	}
	return found
}

// SetMember writes a collection member.
func (t *Tx) SetMember(key, sub, value []byte) {
	t.mustWrite()
	t.set(t.memberKey(key, sub), value)
}

// DeleteMember removes a collection member.
func (t *Tx) DeleteMember(key, sub []byte) {
	t.mustWrite()
	t.del(t.memberKey(key, sub))
}

// Members iterates a collection's members with sub in [from, to) (nil: no
// bound), ascending or descending; fn returns false to stop. The slices
// passed to fn are valid only during the call.
func (t *Tx) Members(key, from, to []byte, reverse bool, fn func(sub, value []byte) bool) {
	// The bounds share one allocation (Pebble holds them while it iterates).
	np := metaKeyPrefix + 4 + len(key)
	lower := t.memberPrefix(make([]byte, 0, 2*np+len(from)+len(to)), key)
	p := lower[:np:np]
	lower = append(lower, from...)
	upper := append(lower[len(lower):], p...)
	if to != nil {
		upper = append(upper, to...)
	} else {
		upper = prefixEnd(upper)
	}
	it := t.openIter(lower, upper)
	defer t.closeIter(it, lower, upper)
	if t.straddled() { // the iterator reads the state it was opened on
		panic(ErrStaleRead)
	}
	valid := it.First
	next := it.Next
	if reverse {
		valid, next = it.Last, it.Prev
	}
	for ok := valid(); ok; ok = next() {
		if !fn(it.Key()[len(p):], it.Value()) {
			return
		}
	}
}

// Scan visits live keys in SCAN order from cursor on, at least count of them
// (all keys at one position together) and returns the cursor to continue
// from, 0 when done. fn sees each key with its metadata.
func (t *Tx) Scan(cursor uint64, count int, fn func(key []byte, m Meta)) uint64 {
	phys := t.phys()
	t.saveMeta() // the iteration reads the view
	lower := binary.BigEndian.AppendUint64(appendDB(nil, prefixMeta, phys), cursor)
	_, upper := dbSpan(prefixMeta, phys)
	it, err := t.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		panic(err)
	}
	defer func() {
		t.st.noteSkipped(it, lower, upper)
		it.Close()
	}()
	seen := 0
	var lastPos uint64
	for ok := it.First(); ok; ok = it.Next() {
		pos := posOfMeta(it.Key())
		if seen >= count && pos != lastPos {
			return pos
		}
		seen++
		lastPos = pos
		m, err := decodeMeta(it.Value())
		if err != nil {
			panic(err)
		}
		if !m.Expired(t.Now) {
			fn(userKeyOfMeta(it.Key()), m)
		}
	}
	if err := it.Error(); err != nil {
		panic(err)
	}
	return 0
}

// Due lists up to limit entries of physical database phys's expiry index
// that are due at now (each a time and a key; see ExpireDue), for the
// active expiry cycle.
func (s *Store) Due(phys int, now int64, limit int) [][]byte {
	from := s.due.from(phys, now)
	lower := binary.BigEndian.AppendUint64(appendDB(nil, prefixExpiry, phys), uint64(from))
	upper := binary.BigEndian.AppendUint64(appendDB(nil, prefixExpiry, phys), uint64(now)+1)
	it, err := s.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer func() {
		s.noteSkipped(it, lower, upper)
		it.Close()
	}()
	var due [][]byte
	for ok := it.First(); ok && len(due) < limit; ok = it.Next() {
		due = append(due, append([]byte(nil), it.Key()[1+dbBytes:]...))
	}
	next := now - dueSlack
	if len(due) > 0 {
		next = min(next, int64(binary.BigEndian.Uint64(due[0])))
	}
	s.due.set(phys, max(next, from))
	return due
}

// NoteDue writes an expiry index entry for key, of logical database db,
// at at: part of the key (a hash field) may expire then. The entry is a
// hint like the others; ExpireDue drops it, and the caller that applies
// active expiry settles the key's part (command.expireHashFields).
func (t *Tx) NoteDue(db int, at int64, key []byte) {
	t.mustWrite()
	t.setDue(t.dbMap[db], at, key)
}

// setDue writes an expiry index entry, noting the earliest for Due.
func (t *Tx) setDue(phys int, at int64, key []byte) {
	t.set(expiryKey(nil, phys, at, key), nil)
	if first, ok := t.dueWritten[phys]; !ok || at < first {
		if t.dueWritten == nil {
			t.dueWritten = map[int]int64{}
		}
		t.dueWritten[phys] = at
	}
}

// The entries Due lists are deleted (or moved later) once the active
// expiry's record applies, and stay in Pebble as deletions until
// compacted: a scan of the index from its start stepped over all of
// them, every 100 ms, and keys with short TTLs (SET ... PX 200 at 50k/s)
// expired more slowly than they were written. Due starts where the
// previous one found its first entry instead. A commit that writes an
// entry before that moves the start back (SET ... PXAT in the past does),
// also while a scan runs (dueHints.low). dueSlack is a margin on top, and
// a scan from the start every dueFullScan finds anything else.
const (
	dueSlack    = 200       // ms
	dueFullScan = 10 * 1000 // ms
)

// dueHints is, per physical database, where Due starts, when it last
// started from the beginning, and the earliest entry committed since the
// scan running started.
type dueHints struct {
	mu              sync.Mutex
	start, all, low map[int]int64
}

func (h *dueHints) from(phys int, now int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.start == nil {
		h.start, h.all, h.low = map[int]int64{}, map[int]int64{}, map[int]int64{}
	}
	if now-h.all[phys] >= dueFullScan || now < h.all[phys] {
		h.all[phys], h.start[phys] = now, 0
	}
	h.low[phys] = math.MaxInt64
	return h.start[phys]
}

// set makes from the next scan's start, unless a commit since the scan
// started wrote an earlier entry.
func (h *dueHints) set(phys int, from int64) {
	h.mu.Lock()
	h.start[phys] = min(from, h.low[phys])
	h.mu.Unlock()
}

// lower makes the next scan start at at or before it.
func (h *dueHints) lower(phys int, at int64) {
	h.mu.Lock()
	if h.start != nil {
		h.start[phys] = min(h.start[phys], at)
		h.low[phys] = min(h.low[phys], at)
	}
	h.mu.Unlock()
}

// reset starts every next scan from the beginning (a snapshot replaced
// the data).
func (h *dueHints) reset() {
	h.mu.Lock()
	h.start, h.all, h.low = nil, nil, nil
	h.mu.Unlock()
}

// ExpireDue settles an entry of the expiry index that Due listed: it
// deletes the key if it is past its expiry, and otherwise moves the entry
// to the key's expiry, or drops it if the key has none or is gone. An
// entry is a hint that the key may expire from that time on, so that a
// TTL that only grows costs no index write (PutQuiet). It reports whether
// the key expired.
func (t *Tx) ExpireDue(entry []byte) bool {
	if len(entry) < 8 {
		return false
	}
	at, key := int64(binary.BigEndian.Uint64(entry)), entry[8:]
	m, exists := t.rawMeta(key)
	expired := exists && m.Expired(t.Now)
	if expired {
		t.remove(key, m)
	}
	if !exists || m.ExpireAt != at { // remove dropped the entry at m.ExpireAt
		t.del(expiryKey(nil, t.phys(), at, key))
	}
	if exists && !expired && m.ExpireAt != 0 && m.ExpireAt != at {
		t.setDue(t.phys(), m.ExpireAt, key)
	}
	return expired
}

// Phys returns the physical database behind logical database db.
func (t *Tx) Phys(db int) int { return t.dbMap[db] }

// Flush empties logical database db (FLUSHDB): range deletions, so it costs
// the same whatever the size.
func (t *Tx) Flush(db int) {
	t.mustWrite()
	if t.TouchedDBs != nil {
		t.TouchedDBs(db, db)
	}
	t.noteInvalid(nil)
	phys := t.dbMap[db]
	t.saveMeta() // before it forgets them
	t.flushed = true
	clear(t.written) // the range deletion below covers them
	for _, p := range []byte{prefixMeta, prefixMember, prefixExpiry} {
		lo, hi := dbSpan(p, phys)
		t.delRange(lo, hi)
	}
	t.countDelta[phys] = -t.st.counts[phys].Load() - t.pendingDelta(phys, false)
	t.expiresDelta[phys] = -t.st.expires[phys].Load() - t.pendingDelta(phys, true)
}

// Swap exchanges logical databases a and b (SWAPDB).
func (t *Tx) Swap(a, b int) {
	t.mustWrite()
	if t.TouchedDBs != nil {
		t.TouchedDBs(a, b)
	}
	t.noteInvalid(nil)
	t.dbMap[a], t.dbMap[b] = t.dbMap[b], t.dbMap[a]
	t.dbMapDirty = true
	t.writes++
}
