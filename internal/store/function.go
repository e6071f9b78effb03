package store

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
	t.set(functionKey(functionLib, name), code)
	for _, fn := range funcs {
		t.set(functionKey(functionName, fn), name)
	}
}

// DeleteFunctionLibrary removes library name and the functions it
// registers.
func (t *Tx) DeleteFunctionLibrary(name []byte, funcs [][]byte) {
	t.mustWrite()
	t.del(functionKey(functionLib, name))
	for _, fn := range funcs {
		t.del(functionKey(functionName, fn))
	}
}

// FlushFunctions removes every library.
func (t *Tx) FlushFunctions() {
	t.mustWrite()
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
