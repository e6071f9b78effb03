package store

import "sync"

// Function libraries (FUNCTION LOAD, functions.c in Redis 7.0) are data of
// the whole server, outside every database, so FLUSHDB and FLUSHALL leave
// them, and they reach a snapshot with the rest of the store:
//
//	f | 'l' | library name     the library's code
//	f | 'f' | function name    the name of the library that registers it
//
// The code is the truth: what a library registers (names, flags,
// descriptions) is what running its code registers, which the command
// layer derives (and caches) from it.
const (
	prefixFunction = 'f'
	functionLib    = 'l'
	functionName   = 'f'
)

func functionKey(kind byte, name []byte) []byte {
	return append([]byte{prefixFunction, kind}, name...)
}

// functionCache keeps what the committed function space answers for the
// functions FCALL finds: the library that registers each, and its code.
// Without it every FCALL read both from Pebble, a fifth of its CPU.
//
// A Tx that wrote function keys, or follows an uncommitted one that did
// in its chain, reads Pebble instead (functionsDirty), and so does a
// snapshot read; the commit of such a Tx empties the cache and moves its
// generation, as a snapshot install does, so that a read that looked at
// Pebble before the commit does not fill it with what it found.
type functionCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]functionEntry // by function name
}

type functionEntry struct{ owner, code []byte }

// functionCacheMax bounds the cache; it is emptied when full.
const functionCacheMax = 4096

func (c *functionCache) get(fn []byte) (e functionEntry, hit bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, hit = c.m[string(fn)]
	return e, hit, c.gen
}

func (c *functionCache) fill(gen uint64, fn []byte, e functionEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= functionCacheMax {
		c.m = map[string]functionEntry{}
	}
	c.m[string(fn)] = e
}

func (c *functionCache) reset() {
	c.mu.Lock()
	c.gen++
	c.m = nil
	c.mu.Unlock()
}

// functionsDirty reports whether this Tx or an uncommitted one before it
// in its chain wrote function keys.
func (t *Tx) functionsDirty() bool {
	for x := t; x != nil && !x.committed; x = x.prev {
		if x.functionsWritten {
			return true
		}
	}
	return false
}

// Function returns the library that registers function fn and the
// library's code; the slices may be the cache's and must not be changed.
func (t *Tx) Function(fn []byte) (owner, code []byte, ok bool) {
	usable := t.snap == nil && !t.functionsDirty()
	var gen uint64
	if usable {
		var e functionEntry
		if e, ok, gen = t.st.funcs.get(fn); ok {
			return e.owner, e.code, true
		}
	}
	if owner, ok = t.FunctionOwner(fn); ok {
		code, ok = t.FunctionLibrary(owner)
	}
	if ok && usable {
		t.st.funcs.fill(gen, fn, functionEntry{owner: owner, code: code})
	}
	return owner, code, ok
}

// FunctionLibrary returns the code of library name.
func (t *Tx) FunctionLibrary(name []byte) ([]byte, bool) {
	return t.get(functionKey(functionLib, name))
}

// FunctionOwner returns the name of the library that registers function fn.
func (t *Tx) FunctionOwner(fn []byte) ([]byte, bool) {
	return t.get(functionKey(functionName, fn))
}

// PutFunctionLibrary stores library name with its code and the functions it
// registers. A library of that name must have been deleted first.
func (t *Tx) PutFunctionLibrary(name, code []byte, funcs [][]byte) {
	t.mustWrite()
	t.functionsWritten = true
	t.set(functionKey(functionLib, name), code)
	for _, fn := range funcs {
		t.set(functionKey(functionName, fn), name)
	}
}

// DeleteFunctionLibrary removes library name and the functions it
// registers.
func (t *Tx) DeleteFunctionLibrary(name []byte, funcs [][]byte) {
	t.mustWrite()
	t.functionsWritten = true
	t.del(functionKey(functionLib, name))
	for _, fn := range funcs {
		t.del(functionKey(functionName, fn))
	}
}

// FlushFunctions removes every library.
func (t *Tx) FlushFunctions() {
	t.mustWrite()
	t.functionsWritten = true
	lo := []byte{prefixFunction}
	t.delRange(lo, PrefixEnd(lo))
}

// FunctionLibraries returns every library's name and code, in name order.
func (t *Tx) FunctionLibraries() (names, codes [][]byte) {
	lower := []byte{prefixFunction, functionLib}
	upper := PrefixEnd(lower)
	it := t.openIter(lower, upper)
	for ok := it.First(); ok; ok = it.Next() {
		names = append(names, append([]byte(nil), it.Key()[len(lower):]...))
		codes = append(codes, append([]byte(nil), it.Value()...))
	}
	t.closeIter(it, lower, upper)
	return names, codes
}
