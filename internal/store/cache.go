package store

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// metaCache keeps recently used metadata entries (for strings: the value)
// in memory, so that the common GET and SET don't search Pebble's memtables
// and levels. Pebble stays the truth: the cache only holds what was
// committed, and the apply loop, the only writer, updates it after each
// commit.
//
// A reader that misses reads Pebble and then fills the cache, unless the
// apply loop changed that part of the cache meanwhile (its version moved):
// otherwise the reader could put back a value older than a commit.
//
// A shard that holds every metadata entry of its part of the key space
// (complete) answers a miss itself: the key does not exist. Every write of
// a new key looks for an old one first, and this spares it a search of
// Pebble's memtables and levels. A shard is complete from when the store
// is opened (preload) or emptied until it first evicts an entry (or a
// FLUSHDB empties the cache while other databases keep keys); entries too
// big to keep stay as markers that send readers to Pebble.
type metaCache struct {
	shards [cacheShards]cacheShard
	seed   maphash.Seed
	// The member memos' budget (member_memo.go), what they take, and
	// whether one did not fit since the last eviction.
	memoLimit int64
	memoBytes atomic.Int64
	memoFull  atomic.Bool
}

const (
	cacheShards     = 64
	cacheValueLimit = metaHeader + InlineMax // an inline string; larger entries are left to the block cache
	cacheEntryCost  = 96                     // map slot, entry and slice headers, beyond key and value bytes
)

type cacheShard struct {
	mu      sync.Mutex
	m       map[string]*cacheEntry
	version uint64
	bytes   int64 // what the entries cost, roughly
	// memoBytes is what the member memos cost (member_memo.go), also
	// counted in memoTotal, the cache's: they have a budget of their own,
	// so that they never evict metadata.
	memoBytes int64
	memoTotal *atomic.Int64
	limit     int64
	complete  bool // every metadata entry of the shard is in m
}

// A cacheEntry stays the map's entry for its key until it is removed
// (dead), and is updated in place: the apply loop, which saw it when its
// write Tx read the key, commits the new value into it without searching
// the map again (set). Its fields are read and written under the shard's
// lock; get hands out copies.
type cacheEntry struct {
	value []byte // the stored metadata value
	found bool   // false: the key does not exist
	big   bool   // the key exists, its value is too big to keep: read Pebble
	// chunks are the chunks of a chunked string that live reads fetched
	// (chunks.go), by index: nil not fetched, noChunk none stored.
	chunks [][]byte
	memo   any // what a read derived from the key's value (memo.go), or nil
	// members are the member memos (member_memo.go), indexed by sub key
	// in memberIdx when there are many, and memberBytes what they cost.
	members     []memberMemo
	memberIdx   map[string]int32
	memberBytes int64
	dead        bool // no longer in the map
	// touched is the second (unix) a read last set the key's access slot
	// (access.go) through this entry: later reads in that second need not
	// look at the slot, a cache miss of its own. A commit to the key
	// clears it (RESTORE ... IDLETIME sets the slot back).
	touched uint32
}

// newMetaCache returns a cache that holds about size bytes (0: nothing).
func newMetaCache(size int64) *metaCache {
	c := &metaCache{seed: maphash.MakeSeed(), memoLimit: size / memoShare}
	for i := range c.shards {
		c.shards[i].m = map[string]*cacheEntry{}
		c.shards[i].limit = size / cacheShards
		c.shards[i].memoTotal = &c.memoBytes
	}
	return c
}

func (c *metaCache) shard(mk []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, mk)%cacheShards]
}

// get returns a copy of the cached entry for a metadata key, the entry
// itself (for set) and its shard's version (for fill after a miss).
// complete says that a miss means the key does not exist.
func (c *metaCache) get(mk []byte) (e cacheEntry, ref *cacheEntry, version uint64, complete bool) {
	e, ref, version, complete, _ = c.getTouching(mk, 0)
	return e, ref, version, complete
}

// getTouching is get for a read that uses the key at second touch (unix;
// 0: none): it records that in the entry, and slotStale says whether the
// key's access slot (access.go) may still need setting: not if a read
// through the entry set it in that second.
func (c *metaCache) getTouching(mk []byte, touch uint32) (e cacheEntry, ref *cacheEntry, version uint64, complete, slotStale bool) {
	s := c.shard(mk)
	s.mu.Lock()
	if ref = s.m[string(mk)]; ref != nil {
		if slotStale = ref.touched != touch; touch != 0 && slotStale {
			ref.touched = touch
		}
		e = *ref
	}
	version, complete = s.version, s.complete
	s.mu.Unlock()
	return e, ref, version, complete, slotStale
}

// fill caches what a reader found in Pebble if nothing changed since it
// looked (version).
func (c *metaCache) fill(mk, value []byte, found bool, version uint64) {
	s := c.shard(mk)
	s.mu.Lock()
	if s.version == version {
		s.put(mk, s.m[string(mk)], value, found)
	}
	s.mu.Unlock()
}

// remember keeps memo with mk's entry if that is still the entry seen (by
// identity: an update stores a new copy of the value each time, and seen,
// kept by the caller, keeps its bytes from being reused).
func (c *metaCache) remember(mk []byte, memo any, seen []byte) {
	s := c.shard(mk)
	s.mu.Lock()
	if e := s.m[string(mk)]; e != nil && len(e.value) > 0 && &e.value[0] == &seen[0] {
		e.memo = memo
	}
	s.mu.Unlock()
}

// set records a committed write (found false: a deletion). ref is mk's
// entry as the writer saw it, or nil: if it is still in the map, it is
// updated without a search.
func (c *metaCache) set(mk, value []byte, found bool, ref *cacheEntry) {
	s := c.shard(mk)
	s.mu.Lock()
	s.version++
	if ref == nil || ref.dead {
		ref = s.m[string(mk)]
	}
	s.put(mk, ref, value, found)
	s.mu.Unlock()
}

// put stores value as mk's entry (a marker if it is too big); old is that
// entry or nil.
func (s *cacheShard) put(mk []byte, old *cacheEntry, value []byte, found bool) {
	big := len(value) > cacheValueLimit
	if big {
		value = nil
	}
	cost := entryCost(mk, value)
	if old != nil {
		// The old value's bytes stay as they are: a reader may be copying
		// them. A key that still exists keeps its member memos: the
		// commit brings them up to date (applyMemberOps).
		if !found {
			s.dropMembers(old)
		}
		s.bytes += cost - old.cost(mk)
		old.value, old.found, old.big, old.memo, old.chunks = append([]byte(nil), value...), found, big, nil, nil
		old.touched = 0
		return
	}
	if s.bytes+cost > s.limit {
		// Map iteration starts at a random place: random eviction. (Only
		// when needed: starting an iteration is not free.)
		for k, e := range s.m {
			if s.bytes+cost <= s.limit {
				break
			}
			s.remove(k, e)
		}
	}
	if s.bytes+cost > s.limit {
		s.complete = false
		return
	}
	s.m[string(mk)] = &cacheEntry{value: append([]byte(nil), value...), found: found, big: big}
	s.bytes += cost
}

func (s *cacheShard) remove(k string, e *cacheEntry) {
	s.bytes -= e.cost([]byte(k))
	s.addMemoBytes(-e.memberBytes)
	e.dead = true
	delete(s.m, k)
	s.complete = false
}

func entryCost(mk, value []byte) int64 { return int64(len(mk) + len(value) + cacheEntryCost) }

// cost is what e costs, its chunks included (its member memos count
// apart).
func (e *cacheEntry) cost(mk []byte) int64 {
	n := entryCost(mk, e.value)
	for _, c := range e.chunks {
		n += int64(len(c))
	}
	return n
}

// clear empties the cache (after FLUSHDB and FLUSHALL); complete says
// whether the store is empty now.
func (c *metaCache) clear(complete bool) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.version++
		for _, e := range s.m {
			e.dead = true
		}
		clear(s.m)
		s.addMemoBytes(-s.memoBytes)
		s.bytes = 0
		s.complete = complete && s.limit > 0
		s.mu.Unlock()
	}
}

// preloadEntryCost is about what an entry of a small key costs: the store
// does not preload a key space that would not fit.
const preloadEntryCost = cacheEntryCost + 48

// preload fills an empty cache with every metadata entry of the store,
// which holds about keys keys, if they fit, and makes it complete: done
// when the store opens, before any reader or writer uses it.
func (c *metaCache) preload(r pebble.Reader, keys int64) error {
	c.clear(keys == 0)
	if keys == 0 || keys*preloadEntryCost > c.shards[0].limit*cacheShards {
		return nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixMeta}, UpperBound: []byte{prefixMeta + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for i := range c.shards {
		c.shards[i].complete = true // until an entry does not fit
	}
	for ok := it.First(); ok; ok = it.Next() {
		mk := it.Key()
		s := c.shard(mk)
		s.mu.Lock()
		s.put(mk, nil, it.Value(), true)
		s.mu.Unlock()
	}
	if err := it.Error(); err != nil {
		c.clear(false)
		return err
	}
	return nil
}

// size returns what the cache's entries and its member memos cost, roughly.
func (c *metaCache) size() (entries, memos int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		entries, memos = entries+s.bytes, memos+s.memoBytes
		s.mu.Unlock()
	}
	return entries, memos
}
