package store

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// TestSnapshotInstall dumps a store through a pipe into sstables and
// installs them over another store with other data: the second store then
// digests the same, holds nothing of its own, and has the snapshot's
// applied index. A dump opened before the install still reads the old data.
func TestSnapshotInstall(t *testing.T) {
	open := func() *Store {
		st, err := Open(t.TempDir(), Options{Databases: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	write := func(st *Store, applied uint64, fn func(tx *Tx)) {
		t.Helper()
		tx := st.WriteTx()
		tx.Now = 1000
		fn(tx)
		tx.SetApplied(applied)
		if err := tx.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	src, dst := open(), open()
	big := make([]byte, 300_000) // a chunked string
	for i := range big {
		big[i] = byte(i)
	}
	write(src, 42, func(tx *Tx) {
		for i := 0; i < 5000; i++ {
			tx.Put([]byte(fmt.Sprint("k", i)), Meta{Type: TypeString, Body: []byte(fmt.Sprint(i))})
		}
		tx.WriteString([]byte("big"), big, 0)
		tx.DB = 2
		tx.Put([]byte("in-db-2"), Meta{Type: TypeString, ExpireAt: 5000, Body: []byte("x")})
	})
	write(dst, 7, func(tx *Tx) {
		tx.Put([]byte("only-in-dst"), Meta{Type: TypeString, Body: []byte("x")})
		tx.DB = 3
		tx.Put([]byte("also"), Meta{Type: TypeString, Body: []byte("y")})
	})
	// dst's own dump, opened before the install, keeps what it read.
	dstSnap := dst.Snapshot()
	before, err := dstSnap.Dump()
	if err != nil {
		t.Fatal(err)
	}
	dstSnap.Close()

	snap := src.Snapshot()
	d, err := snap.Dump()
	if err != nil {
		t.Fatal(err)
	}
	write(src, 43, func(tx *Tx) { tx.Delete([]byte("k1")) }) // after the snapshot: not in it
	pr, pw := io.Pipe()
	go func() {
		_, err := d.WriteTo(pw)
		d.Close()
		snap.Close()
		pw.CloseWithError(err)
	}()
	dir := t.TempDir()
	n, err := dst.WriteSnapshotTables(pr, dir)
	if err != nil || n < 5000 {
		t.Fatalf("WriteSnapshotTables: %d entries, %v", n, err)
	}
	if err := dst.InstallSnapshot(dir, 42); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the ingested tables are still in the snapshot's directory: %v", ents)
	}

	write(src, 44, func(tx *Tx) { tx.Put([]byte("k1"), Meta{Type: TypeString, Body: []byte("1")}) })
	write(dst, 44, func(tx *Tx) {}) // the same state again, in both
	for _, st := range []*Store{src, dst} {
		if applied, _ := st.AppliedIndex(); applied != 44 {
			t.Fatalf("applied %d", applied)
		}
	}
	a, _ := src.Digest()
	b, _ := dst.Digest()
	if a != b {
		t.Fatal("digests differ after the install")
	}
	tx := dst.ReadTx(0, 1000, false)
	if tx.Exists([]byte("only-in-dst")) || tx.Count() != 5001 {
		t.Fatalf("after the install: count %d", tx.Count())
	}
	m, _ := tx.Lookup([]byte("big"))
	if got := tx.ReadString([]byte("big"), m); string(got) != string(big) {
		t.Fatal("the chunked string differs")
	}
	tx.Close()
	tx = dst.ReadTx(2, 1000, false)
	if tx.Count() != 1 || tx.Expires() != 1 {
		t.Fatalf("db 2 after the install: count %d expires %d", tx.Count(), tx.Expires())
	}
	tx.Close()

	// The dump opened before the install reads the old store.
	out := t.TempDir()
	pr, pw = io.Pipe()
	go func() {
		_, err := before.WriteTo(pw)
		before.Close()
		pw.CloseWithError(err)
	}()
	third := open()
	if _, err := third.WriteSnapshotTables(pr, out); err != nil {
		t.Fatal(err)
	}
	if err := third.InstallSnapshot(out, 7); err != nil {
		t.Fatal(err)
	}
	tx = third.ReadTx(0, 1000, false)
	defer tx.Close()
	if !tx.Exists([]byte("only-in-dst")) || tx.Count() != 1 {
		t.Fatalf("the dump opened before the install: count %d", tx.Count())
	}
}
