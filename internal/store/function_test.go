package store

import "testing"

// TestFunctionLibraries checks the function space: FLUSHDB leaves it, a
// snapshot carries it, and deleting a library removes its functions.
func TestFunctionLibraries(t *testing.T) {
	src, dst := openStore(t), openStore(t)
	commitAt(t, src, 5, func(tx *Tx) {
		tx.PutFunctionLibrary([]byte("lib"), []byte("code1"), [][]byte{[]byte("f"), []byte("g")})
		tx.PutFunctionLibrary([]byte("other"), []byte("code2"), [][]byte{[]byte("h")})
		tx.DeleteFunctionLibrary([]byte("other"), [][]byte{[]byte("h")})
		tx.Put([]byte("k"), Meta{Type: TypeString, Body: []byte("v")})
		tx.Flush(0)
	})
	commitAt(t, dst, 3, func(tx *Tx) {
		tx.PutFunctionLibrary([]byte("dst"), []byte("code3"), [][]byte{[]byte("d")})
	})
	if err := dst.InstallSnapshot(snapshotTables(t, src, dst), 5); err != nil {
		t.Fatal(err)
	}
	tx := dst.ReadTx(0, 1000, true)
	defer tx.Close()
	names, codes := tx.FunctionLibraries()
	if len(names) != 1 || string(names[0]) != "lib" || string(codes[0]) != "code1" {
		t.Errorf("libraries after install: %q %q", names, codes)
	}
	for fn, want := range map[string]string{"f": "lib", "g": "lib", "h": "", "d": ""} {
		if owner, _ := tx.FunctionOwner([]byte(fn)); string(owner) != want {
			t.Errorf("owner of %s: %q, want %q", fn, owner, want)
		}
	}
}

// TestFunctionCache checks that FCALL's lookups (Tx.Function) answer what
// the Tx's own view holds while the cache serves committed state: a
// chain's uncommitted library changes are seen by its Txs and by nobody
// else, a dropped chain leaves nothing behind, and a commit or a snapshot
// install replaces what the cache held.
func TestFunctionCache(t *testing.T) {
	st := openStore(t)
	lookup := func(tx *Tx, fn string) string {
		t.Helper()
		owner, code, ok := tx.Function([]byte(fn))
		if !ok {
			return ""
		}
		return string(owner) + ":" + string(code)
	}
	live := func(fn string) string {
		tx := st.ReadTx(0, 1000, false)
		defer tx.Close()
		return lookup(tx, fn)
	}
	commitAt(t, st, 1, func(tx *Tx) {
		tx.PutFunctionLibrary([]byte("lib"), []byte("v1"), [][]byte{[]byte("f")})
	})
	for range 2 { // a miss fills the cache, a hit reads it
		if got := live("f"); got != "lib:v1" {
			t.Fatalf("f: %q", got)
		}
	}

	// A chain replaces the library, then is dropped.
	a := st.WriteTx()
	a.DeleteFunctionLibrary([]byte("lib"), [][]byte{[]byte("f")})
	a.PutFunctionLibrary([]byte("lib"), []byte("v2"), [][]byte{[]byte("f"), []byte("g")})
	b := st.WriteTxAfter(a, 0)
	if got := lookup(b, "g"); got != "lib:v2" {
		t.Errorf("g after the chain's load: %q", got)
	}
	if got := live("f"); got != "lib:v1" {
		t.Errorf("f while the chain is uncommitted: %q", got)
	}
	b.Close()
	a.Close()
	if got, got2 := live("f"), live("g"); got != "lib:v1" || got2 != "" {
		t.Errorf("after the chain was dropped: f %q, g %q", got, got2)
	}

	// A committed load replaces it for everyone, also the write Tx after.
	a = st.WriteTx()
	a.DeleteFunctionLibrary([]byte("lib"), [][]byte{[]byte("f")})
	a.PutFunctionLibrary([]byte("lib"), []byte("v3"), [][]byte{[]byte("g")})
	a.SetApplied(2)
	b = st.WriteTxAfter(a, 0)
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got, got2 := lookup(b, "f"), lookup(b, "g"); got != "" || got2 != "lib:v3" {
		t.Errorf("in the next Tx: f %q, g %q", got, got2)
	}
	b.Close()
	if got, got2 := live("f"), live("g"); got != "" || got2 != "lib:v3" {
		t.Errorf("after the commit: f %q, g %q", got, got2)
	}

	// An install brings another function space.
	src := openStore(t)
	commitAt(t, src, 5, func(tx *Tx) {
		tx.PutFunctionLibrary([]byte("other"), []byte("v4"), [][]byte{[]byte("g")})
	})
	if err := st.InstallSnapshot(snapshotTables(t, src, st), 5); err != nil {
		t.Fatal(err)
	}
	if got := live("g"); got != "other:v4" {
		t.Errorf("after the install: g %q", got)
	}
}
