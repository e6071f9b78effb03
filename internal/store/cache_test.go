package store

import (
	"fmt"
	"testing"
)

// A complete cache answers misses itself, so it must never miss a key that
// exists: after a reopen (preload), with a cache too small to preload,
// after FLUSHDB of one database (the others keep keys) and FLUSHALL.
func TestCompleteCache(t *testing.T) {
	dir := t.TempDir()
	open := func(size int64) *Store {
		st, err := Open(dir, Options{Databases: 2, MetaCacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	complete := func(st *Store) (n int) {
		for i := range st.cache.shards {
			if st.cache.shards[i].complete {
				n++
			}
		}
		return n
	}
	write := func(st *Store, db int, keys ...string) {
		tx := st.WriteTx()
		tx.DB = db
		for _, k := range keys {
			tx.WriteString([]byte(k), []byte("v-"+k), 0)
		}
		if err := tx.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	check := func(st *Store, what string, db int, keys ...string) {
		t.Helper()
		r := st.ReadTx(db, 0, false)
		defer r.Close()
		for _, k := range keys {
			m, ok := r.Lookup([]byte(k))
			if !ok || string(m.Body) != "v-"+k {
				t.Fatalf("%s: db %d key %s reads %q, %v", what, db, k, m.Body, ok)
			}
		}
		if _, ok := r.Lookup([]byte("missing")); ok {
			t.Fatalf("%s: a missing key exists", what)
		}
	}
	var keys []string
	for i := range 200 {
		keys = append(keys, fmt.Sprint("k", i))
	}

	st := open(0)
	if n := complete(st); n != cacheShards {
		t.Fatalf("an empty store's cache has %d complete shards of %d", n, cacheShards)
	}
	write(st, 0, keys...)
	write(st, 1, "other")
	check(st, "written", 0, keys...)
	st.Close()

	st = open(0)
	if n := complete(st); n != cacheShards {
		t.Fatalf("after preload %d complete shards of %d", n, cacheShards)
	}
	check(st, "preloaded", 0, keys...)
	check(st, "preloaded", 1, "other")
	st.Close()

	st = open(cacheShards * 300) // about two entries a shard
	if n := complete(st); n != 0 {
		t.Fatalf("a cache too small to preload has %d complete shards", n)
	}
	check(st, "small cache", 0, keys...)
	st.Close()

	// A complete shard that evicts is complete no more.
	small, err := Open(t.TempDir(), Options{Databases: 1, MetaCacheSize: cacheShards * 300})
	if err != nil {
		t.Fatal(err)
	}
	write(small, 0, keys...)
	check(small, "evicted", 0, keys...)
	small.Close()

	st = open(0)
	defer st.Close()
	tx := st.WriteTx()
	tx.Flush(0)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	check(st, "FLUSHDB 0", 1, "other")
	tx = st.WriteTx()
	tx.Flush(1)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	if n := complete(st); n != cacheShards {
		t.Fatalf("an emptied store's cache has %d complete shards", n)
	}
	write(st, 0, "new")
	check(st, "after FLUSHALL", 0, "new")
}

// An entry too big to keep stays as a marker: a complete shard still
// knows the key exists.
func TestCacheBigMarker(t *testing.T) {
	c := newMetaCache(cacheShards * 100000)
	c.clear(true)
	big := make([]byte, cacheValueLimit+1)
	c.set([]byte("big"), big, true, nil)
	e, ref, _, complete := c.get([]byte("big"))
	if ref == nil || !e.big || !e.found || len(e.value) != 0 || !complete {
		t.Fatalf("big entry: %+v, cached %v, complete %v", e, ref != nil, complete)
	}
	c.set([]byte("big"), []byte("small"), true, ref)
	if e, _, _, _ := c.get([]byte("big")); e.big || string(e.value) != "small" {
		t.Fatalf("after a small write: %+v", e)
	}
}

// Live reads of a small chunked string keep its chunks in the cache and
// read them from there, until a write of the string drops them.
func TestChunkMemo(t *testing.T) {
	st := openStore(t)
	key := []byte("s")
	value := make([]byte, 3*ChunkSize-100)
	for i := range value {
		value[i] = byte(i)
	}
	value[ChunkSize] = 0 // chunk 1 stays stored: only all-zero chunks are not
	clear(value[2*ChunkSize:])
	tx := st.WriteTx()
	tx.WriteString(key, value, 0)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	read := func() []byte {
		r := st.ReadTx(0, 0, false)
		defer r.Close()
		m, ok := r.Lookup(key)
		if !ok {
			t.Fatal("the key is gone")
		}
		return r.ReadString(key, m)
	}
	if got := read(); string(got) != string(value) {
		t.Fatal("first read differs")
	}
	// Chunk 0 disappears from Pebble behind the store's back: a read that
	// still finds it reads the kept copy.
	if err := st.pdb.Delete(append(MemberPrefix(nil, 0, key), chunkSub(0)...), nil); err != nil {
		t.Fatal(err)
	}
	if got := read(); string(got) != string(value) {
		t.Fatal("the second read does not come from the kept chunks")
	}
	tx = st.WriteTx()
	m, _ := tx.Lookup(key)
	tx.WriteStringRange(key, m, 10, []byte("new"))
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	want := append(make([]byte, ChunkSize), value[ChunkSize:]...) // chunk 0 was deleted
	copy(want[10:], "new")
	if got := read(); string(got) != string(want) {
		t.Fatalf("after a write the read finds %q..., want %q...", got[:16], want[:16])
	}
}
