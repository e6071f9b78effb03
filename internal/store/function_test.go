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
