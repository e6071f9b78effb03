package store

import (
	"hash/maphash"
	"sync"
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
type metaCache struct {
	shards [cacheShards]cacheShard
	seed   maphash.Seed
}

const (
	cacheShards     = 64
	cacheValueLimit = metaHeader + InlineMax // an inline string; larger entries are left to the block cache
	cacheEntryCost  = 64                     // map and slice headers, beyond key and value bytes
)

type cacheShard struct {
	mu      sync.Mutex
	m       map[string]cacheEntry
	version uint64
	bytes   int64 // what the entries cost, roughly
	limit   int64
}

type cacheEntry struct {
	value []byte // the stored metadata value
	found bool   // false: the key does not exist
	memo  any    // what a read derived from the key's value (memo.go), or nil
}

// newMetaCache returns a cache that holds about size bytes (0: nothing).
func newMetaCache(size int64) *metaCache {
	c := &metaCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = map[string]cacheEntry{}
		c.shards[i].limit = size / cacheShards
	}
	return c
}

func (c *metaCache) shard(mk []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, mk)%cacheShards]
}

// get returns the cached entry for a metadata key and its shard's version
// (for fill after a miss).
func (c *metaCache) get(mk []byte) (e cacheEntry, hit bool, version uint64) {
	s := c.shard(mk)
	s.mu.Lock()
	e, hit = s.m[string(mk)]
	version = s.version
	s.mu.Unlock()
	return e, hit, version
}

// fill caches what a reader found in Pebble if nothing changed since it
// looked (version).
func (c *metaCache) fill(mk, value []byte, found bool, version uint64) {
	if len(value) > cacheValueLimit {
		return
	}
	s := c.shard(mk)
	s.mu.Lock()
	if s.version == version {
		s.put(mk, value, found)
	}
	s.mu.Unlock()
}

// remember keeps memo with mk's entry if that is still the entry seen (by
// identity: put stores a new copy each time, and seen, kept by the caller,
// keeps its bytes from being reused).
func (c *metaCache) remember(mk []byte, memo any, seen []byte) {
	s := c.shard(mk)
	s.mu.Lock()
	if e, ok := s.m[string(mk)]; ok && len(e.value) > 0 && &e.value[0] == &seen[0] {
		e.memo = memo
		s.m[string(mk)] = e
	}
	s.mu.Unlock()
}

// set records a committed write (found false: a deletion).
func (c *metaCache) set(mk, value []byte, found bool) {
	s := c.shard(mk)
	s.mu.Lock()
	s.version++
	if len(value) > cacheValueLimit {
		if old, ok := s.m[string(mk)]; ok {
			s.bytes -= entryCost(mk, old.value)
			delete(s.m, string(mk))
		}
	} else {
		s.put(mk, value, found)
	}
	s.mu.Unlock()
}

func (s *cacheShard) put(mk, value []byte, found bool) {
	cost := entryCost(mk, value)
	if old, ok := s.m[string(mk)]; ok {
		// Replaced, not deleted and added again: one map search. The old
		// value's bytes stay as they are: a reader may be copying them.
		s.bytes += cost - entryCost(mk, old.value)
		s.m[string(mk)] = cacheEntry{value: append([]byte(nil), value...), found: found}
		return
	}
	if s.bytes+cost > s.limit {
		// Map iteration starts at a random place: random eviction. (Only
		// when needed: starting an iteration is not free.)
		for k, e := range s.m {
			if s.bytes+cost <= s.limit {
				break
			}
			s.bytes -= entryCost([]byte(k), e.value)
			delete(s.m, k)
		}
	}
	if s.bytes+cost > s.limit {
		return
	}
	s.m[string(mk)] = cacheEntry{value: append([]byte(nil), value...), found: found}
	s.bytes += cost
}

func entryCost(mk, value []byte) int64 { return int64(len(mk) + len(value) + cacheEntryCost) }

// clear empties the cache (after FLUSHDB and FLUSHALL).
func (c *metaCache) clear() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.version++
		clear(s.m)
		s.bytes = 0
		s.mu.Unlock()
	}
}
