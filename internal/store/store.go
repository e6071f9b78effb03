// Package store keeps basalt's data in Pebble: one metadata entry per user
// key, collection members under the key's prefix, an expiry index, exact key
// counts and the record log. Commands see it through a Tx: a read view of
// applied state in connection goroutines, or the apply loop's write batch.
package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/cluster"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"basalt/internal/pebblelog"
)

// Store is an open data directory.
type Store struct {
	pdb *pebble.DB
	// dbMap maps a logical database (SELECT n) to its physical id; SWAPDB
	// swaps two entries. Replaced whole, never mutated, so readers may load it.
	dbMap     atomic.Pointer[[]int]
	counts    []atomic.Int64 // keys per physical database
	expires   []atomic.Int64 // keys with an expiry per physical database
	access    accessClock
	cache     *metaCache
	compactor *compactor // compactions reads ask for (compact.go)
	// Hits and Misses count a read Tx's lookups that found their key and
	// that did not (INFO's keyspace_hits and keyspace_misses).
	Hits, Misses atomic.Int64
	due          dueHints        // where Due starts (Due)
	funcs        functionCache   // the function space FCALL reads (function.go)
	aclGen       atomic.Uint64   // moves when the ACL users stored change (acl.go)
	opts         *pebble.Options // with Pebble's defaults filled in: snapshots write sstables with them
	slots        cluster.Slots   // Options.Slots
	stalls       *stalls         // Pebble's write stalls (stall.go)

	// installing orders reads against InstallSnapshot, which replaces the
	// whole store (Pebble's data, the cache, the database map, the
	// counts): a read Tx holds it for reading from start to Close, and the
	// install holds it for writing, so a read sees the old store or the
	// new one, never a mix. Snapshot reads need this too: the excise takes
	// the old data out of Pebble snapshots that are open.
	installing sync.RWMutex
	// commits is odd while a commit is being applied and its cache entries
	// updated, and grows by two with each: a live read whose metadata and
	// members straddle a commit can tell (Tx.membersRead).
	commits atomic.Uint64

	// Keyspace notifications (notify.go): the flags new write Txs take
	// and the listener of committed events.
	notify   atomic.Uint32
	notifyMu sync.Mutex
	notifyFn NotifyListener
	// invalidateFn hears the keys committed batches modified, while
	// invalidating is set (tracking.go).
	invalidateFn InvalidationListener
	invalidating atomic.Bool
}

// Options configure Open.
type Options struct {
	Databases int
	// CacheSize is Pebble's block cache size in bytes; 0 means
	// DefaultCacheSize. Memory is taken as blocks are read, not up front.
	CacheSize int64
	// MetaCacheSize bounds the in-memory cache of metadata entries, in
	// bytes; 0 means DefaultMetaCacheSize, negative turns it off.
	MetaCacheSize int64
	// Slots are the hash slots the store's shard serves in cluster mode
	// (nil: not in cluster mode, every key belongs here).
	Slots cluster.Slots
	// MaxOpenFiles bounds the table files Pebble keeps open; 0 means
	// Pebble's default (1000). The server fits it to RLIMIT_NOFILE.
	MaxOpenFiles int
	// AccessSlots is the size of the table of last uses (access.go), a
	// power of two; 0 means DefaultAccessSlots.
	AccessSlots int
}

// DefaultMetaCacheSize is the metadata cache basalt uses unless told
// otherwise.
const DefaultMetaCacheSize = 256 << 20

// DefaultCacheSize is the block cache basalt uses unless told otherwise.
const DefaultCacheSize = 1 << 30

// MemTableSize is the size of the store's memtables; Pebble takes a batch
// over half of it as a memtable of its own (see raftlog.Releaser).
const MemTableSize = 8 << 20

// Open opens or creates the store in dir.
func Open(dir string, o Options) (*Store, error) {
	if o.Databases <= 0 {
		o.Databases = 16
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.MetaCacheSize == 0 {
		o.MetaCacheSize = DefaultMetaCacheSize
	}
	popts := &pebble.Options{
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             &pebblelog.Logger{Name: "pebble"},
		// Every write inserts into the memtable's skiplist, and an insert
		// walks it: a memtable that stays within the CPU caches is cheaper
		// per write than fewer, larger flushes. SET -P 16 ran 1.15-1.3x
		// faster with 8 MB than with 64 MB (docs/benchmarks.md, run F).
		MemTableSize: MemTableSize,
		MaxOpenFiles: o.MaxOpenFiles,
		// Every flush holds the group's metadata and state entries ('m',
		// 's') and its members ('v'), so it overlaps all the members
		// written before it: while the data fits in Lbase, each L0
		// compaction rewrites all of it (XADD to one stream spent a fifth
		// of its CPU there). A small Lbase opens the lower levels early,
		// and a compaction into Lbase rewrites at most this much. XADD
		// 1.2x, SET on a million keys 0.85x the CPU per request of the
		// 64 MB default.
		LBaseMaxBytes: 8 << 20,
		// Flushes of overwritten keys (counters, hashes, a queue's pending
		// entries) hold mostly the same keys: a compaction of eight of
		// them into Lbase writes each key once where two of four wrote it
		// twice. With the bloom filters, point reads check the extra L0
		// tables cheaply. SET -P 16 0.94x, EVALSHA 0.94x and
		// XREADGROUP+XACK 0.88x the CPU per request of the default 4;
		// GET, ZRANGEBYSCORE and HGETALL unchanged. Writes stall at twice
		// the threshold, not Pebble's 12.
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 16,
	}
	// Pebble compacts a table whose blocks are mostly tombstones early, to
	// keep scans over them fast. Here such tables are routine: a queue's
	// pending entries and a list's popped members are written and deleted
	// within seconds. Every flush of them overlaps the data written before
	// (see LBaseMaxBytes), so each early compaction rewrote it: with
	// XREADGROUP+XACK on a stream, 8 of 9 compactions were these. The
	// tables still go down once L0 holds enough of them.
	popts.Experimental.TombstoneDenseCompactionThreshold = -1
	// Most reads are point lookups of one metadata entry, and every write
	// of a new key looks for an old one first: bloom filters keep the
	// misses from touching every level.
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	st := &stalls{limit: LogLimit{Period: stallLogEvery}}
	listener := st.listener()
	popts.EventListener = &listener
	c := pebble.NewCache(o.CacheSize)
	defer c.Unref()
	popts.Cache = c
	popts.EnsureDefaults()
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, err
	}
	s := &Store{pdb: pdb, counts: make([]atomic.Int64, o.Databases), expires: make([]atomic.Int64, o.Databases), cache: newMetaCache(max(o.MetaCacheSize, 0)), opts: popts, slots: o.Slots, stalls: st}
	if err := s.load(); err != nil {
		pdb.Close()
		return nil, err
	}
	s.access.slots = make([]atomic.Uint32, cmp.Or(o.AccessSlots, DefaultAccessSlots))
	s.access.start = time.Now().UnixMilli()
	s.startCompactor()
	return s, nil
}

// load reads the database map and the key counts into memory.
func (s *Store) load() error {
	m := make([]int, len(s.counts))
	for i := range m {
		m[i] = i
		if v, ok, err := s.getRaw(s.pdb, dbMapKey(i)); err != nil {
			return err
		} else if ok && len(v) == 2 {
			m[i] = int(binary.BigEndian.Uint16(v))
		}
		for _, c := range []struct {
			key []byte
			n   *atomic.Int64
		}{{countKey(i), &s.counts[i]}, {expiresKey(i), &s.expires[i]}} {
			c.n.Store(0)
			if v, ok, err := s.getRaw(s.pdb, c.key); err != nil {
				return err
			} else if ok && len(v) == 8 {
				c.n.Store(int64(binary.BigEndian.Uint64(v)))
			}
		}
	}
	s.dbMap.Store(&m)
	var keys int64
	for i := range s.counts {
		keys += s.counts[i].Load()
	}
	return s.cache.preload(s.pdb, keys)
}

// empty reports whether no database holds a key.
func (s *Store) empty() bool {
	for i := range s.counts {
		if s.counts[i].Load() != 0 {
			return false
		}
	}
	return true
}

// Close closes the store. Writes must have stopped.
func (s *Store) Close() error {
	s.compactor.stop()
	return s.pdb.Close()
}

// Databases is the number of logical databases.
func (s *Store) Databases() int { return len(s.counts) }

// Slots are the hash slots the store serves in cluster mode; nil outside
// cluster mode.
func (s *Store) Slots() cluster.Slots { return s.slots }

// Pebble exposes the engine for metrics and maintenance.
func (s *Store) Pebble() *pebble.DB { return s.pdb }

// SyncWAL forces everything committed so far to disk (appendfsync everysec).
func (s *Store) SyncWAL() error { return s.pdb.LogData(nil, pebble.Sync) }

func (s *Store) getRaw(r pebble.Reader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true, nil
}

// AppliedIndex returns the index of the last record applied to the store.
func (s *Store) AppliedIndex() (uint64, error) {
	v, ok, err := s.getRaw(s.pdb, stateKey("applied"))
	if err != nil || !ok || len(v) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(v), nil
}
