package store

import "sync/atomic"

// Chunk memos. Live reads of a small chunked string (a dense HyperLogLog's
// 12 KB of registers, a bitmap or a value of a few KB) keep the chunks they
// fetch with the key's cache entry, so the next reads of the unchanged key
// (PFADD of elements already counted, GETBIT, GETRANGE) find them in
// memory instead of searching Pebble. Every write of a string rewrites its
// metadata entry (strval.go), and replacing the entry drops its chunks.
//
// A chunk is kept, and found, only if no commit came since the reader read
// the metadata (the store's commit counter is where the reader saw it, and
// even). The check is made under the entry's shard lock, which a commit
// takes to replace the entry: so the entry is the one the reader's
// metadata came from, and the chunk is of that same state.

// chunkMemoMax bounds the strings whose chunks are kept.
const chunkMemoMax = 16 * ChunkSize

// noChunk marks a chunk known not to be stored (all zeros).
var noChunk = []byte{}

// chunk returns chunk i of mk's value if a reader kept it (nil, true: the
// chunk is not stored) and no commit came since commits read seen.
func (c *metaCache) chunk(mk []byte, i int64, commits *atomic.Uint64, seen uint64) (v []byte, known bool) {
	s := c.shard(mk)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[string(mk)]
	if e == nil || i >= int64(len(e.chunks)) || e.chunks[i] == nil || commits.Load() != seen || seen&1 != 0 {
		return nil, false
	}
	if v = e.chunks[i]; len(v) == 0 {
		return nil, true
	}
	return v, true
}

// keepChunk keeps v (nil: not stored) as chunk i of n of mk's value if no
// commit came since commits read seen and the shard has room.
func (c *metaCache) keepChunk(mk []byte, i, n int64, v []byte, commits *atomic.Uint64, seen uint64) {
	if v == nil {
		v = noChunk
	}
	s := c.shard(mk)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[string(mk)]
	if e == nil || !e.found || commits.Load() != seen || seen&1 != 0 || s.bytes+int64(len(v)) > s.limit {
		return
	}
	if len(e.chunks) != int(n) {
		s.bytes -= e.cost(mk) - entryCost(mk, e.value)
		e.chunks = make([][]byte, n)
	}
	if e.chunks[i] == nil {
		e.chunks[i] = v
		s.bytes += int64(len(v))
	}
}

// viewChunk calls fn with chunk ci of string key, whose metadata is m, if
// it is stored, as viewMember does; a live read of a small string finds it
// kept in the cache, or keeps it there.
func (t *Tx) viewChunk(key []byte, m Meta, ci int64, fn func(v []byte)) {
	n := m.StringLen()
	if t.b != nil || t.snap != nil || !t.metaRead || n > chunkMemoMax {
		t.viewMember(key, chunkSub(ci), fn)
		return
	}
	t.chunkKey = t.metaKey(t.chunkKey[:0], key)
	if v, known := t.st.cache.chunk(t.chunkKey, ci, &t.st.commits, t.commitsSeen); known {
		if v != nil {
			fn(v)
		}
		return
	}
	var kept []byte
	t.viewMember(key, chunkSub(ci), func(v []byte) {
		kept = append([]byte(nil), v...)
		fn(v)
	})
	t.st.cache.keepChunk(t.chunkKey, ci, (n+ChunkSize-1)/ChunkSize, kept, &t.st.commits, t.commitsSeen)
}
