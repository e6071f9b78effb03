package command

import (
	"bytes"
	"sync"
)

// docCache keeps the parsed tree of the documents JSON writes stored last,
// so that the next write to the same document (a hot counter) skips the
// parse. It is safe and deterministic because a tree is used only when the
// body the store holds now is byte for byte the body the tree was
// serialized to, and Marshal/ParseStored round-trip exactly: the command
// sees the same tree either way, so state and replies do not depend on the
// cache. A write takes its tree out (it changes it in place) and puts it
// back only when it stores the new body, so a command that fails half way
// leaves nothing stale. Reads never use it. It is bounded and simply
// emptied when full.
var docCache = struct {
	sync.Mutex
	m     map[docCacheKey]docCacheEntry
	bytes int // sum of the cached bodies' sizes
}{m: make(map[docCacheKey]docCacheEntry)}

// Bounds of docCache. A tree takes several times its text in memory, so
// the bodies' total is kept small.
const (
	docCacheEntries = 1024
	docCacheBytes   = 4 << 20
	docCacheMaxBody = 64 << 10 // bigger documents are parsed every time
)

type docCacheKey struct {
	db  int
	key string
}

type docCacheEntry struct {
	body []byte
	doc  any
}

// takeDoc returns the cached tree of key if body is what it encodes,
// removing it from the cache.
func takeDoc(db int, key, body []byte) (any, bool) {
	docCache.Lock()
	defer docCache.Unlock()
	k := docCacheKey{db, string(key)}
	e, ok := docCache.m[k]
	if !ok {
		return nil, false
	}
	delete(docCache.m, k)
	docCache.bytes -= len(e.body)
	if !bytes.Equal(e.body, body) {
		return nil, false
	}
	return e.doc, true
}

// putDoc caches doc as the tree of key's new body.
func putDoc(db int, key, body []byte, doc any) {
	if len(body) > docCacheMaxBody {
		return
	}
	docCache.Lock()
	defer docCache.Unlock()
	k := docCacheKey{db, string(key)}
	if old, ok := docCache.m[k]; ok {
		docCache.bytes -= len(old.body)
	}
	if len(docCache.m) >= docCacheEntries || docCache.bytes+len(body) > docCacheBytes {
		clear(docCache.m)
		docCache.bytes = 0
	}
	docCache.m[k] = docCacheEntry{body: body, doc: doc}
	docCache.bytes += len(body)
}
