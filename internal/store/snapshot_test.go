package store

import (
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// openStore opens a store of four databases in a temporary directory.
func openStore(t *testing.T) *Store {
	st, err := Open(t.TempDir(), Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// commitAt commits what fn writes as the state up to index applied.
func commitAt(t *testing.T, st *Store, applied uint64, fn func(tx *Tx)) {
	t.Helper()
	tx := st.WriteTx()
	tx.Now = 1000
	fn(tx)
	tx.SetApplied(applied)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
}

// snapshotTables writes a dump of src as sstables for dst and returns
// their directory.
func snapshotTables(t *testing.T, src, dst *Store) string {
	t.Helper()
	snap := src.Snapshot()
	d, err := snap.Dump()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := d.WriteTo(pw)
		d.Close()
		snap.Close()
		pw.CloseWithError(err)
	}()
	dir := t.TempDir()
	if _, err := dst.WriteSnapshotTables(pr, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSnapshotInstall dumps a store through a pipe into sstables and
// installs them over another store with other data: the second store then
// digests the same, holds nothing of its own, and has the snapshot's
// applied index. A dump opened before the install still reads the old data.
func TestSnapshotInstall(t *testing.T) {
	open := func() *Store { return openStore(t) }
	write := func(st *Store, applied uint64, fn func(tx *Tx)) {
		t.Helper()
		commitAt(t, st, applied, fn)
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
	var heard []Invalidation // a tracking client's cache must drop everything
	dst.SetInvalidation(func(keys []Invalidation) { heard = append(heard, keys...) })
	if err := dst.InstallSnapshot(dir, 42); err != nil {
		t.Fatal(err)
	}
	dst.SetInvalidation(nil)
	if len(heard) != 1 || !heard[0].All {
		t.Errorf("the install invalidated %v, want every key", heard)
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

// TestSnapshotInstallReaders: a read open while a snapshot is installed
// sees the old store to its end (the install waits for it), and a read
// that starts during the install sees the new store. Without that, a
// snapshot read lost the old data to the excise (keys missing), and a
// direct read went on with the old SWAPDB mapping over the new data: the
// new store's database 1 under the name of database 0.
func TestSnapshotInstallReaders(t *testing.T) {
	src, dst := openStore(t), openStore(t)
	const keys = 200
	commitAt(t, dst, 7, func(tx *Tx) {
		for db := range 2 {
			tx.DB = db
			tx.Put([]byte("k"), Meta{Type: TypeString, Body: []byte(fmt.Sprint("old", db))})
		}
		tx.DB = 0
		for i := range keys {
			tx.Put([]byte(fmt.Sprint("x", i)), Meta{Type: TypeString, Body: []byte("old")})
		}
	})
	if err := dst.pdb.Flush(); err != nil { // the old data in sstables, which the excise removes
		t.Fatal(err)
	}
	commitAt(t, src, 41, func(tx *Tx) {
		tx.DB = 0
		tx.Put([]byte("k"), Meta{Type: TypeString, Body: []byte("new1")})
		tx.DB = 1
		tx.Put([]byte("k"), Meta{Type: TypeString, Body: []byte("new0")})
		for i := range keys {
			tx.Put([]byte(fmt.Sprint("x", i)), Meta{Type: TypeString, Body: []byte("new")})
		}
	})
	commitAt(t, src, 42, func(tx *Tx) { tx.Swap(0, 1) }) // the new store's db 0 is physically 1
	dir := snapshotTables(t, src, dst)

	get := func(tx *Tx, key string) string {
		m, ok := tx.Lookup([]byte(key))
		if !ok {
			return "(none)"
		}
		return string(tx.ReadString([]byte(key), m))
	}
	snapRead := dst.ReadTx(0, 1000, true)
	direct := dst.ReadTx(0, 1000, false)
	if got := get(direct, "k"); got != "old0" {
		t.Fatalf("before the install: k = %q", got)
	}
	installed := make(chan error, 1)
	go func() { installed <- dst.InstallSnapshot(dir, 42) }()
	select {
	case err := <-installed:
		t.Errorf("the install did not wait for the reads open (err %v)", err)
		installed <- err
	case <-time.After(300 * time.Millisecond):
	}
	// A read that starts now waits for the install and sees the new store.
	late := make(chan string, 1)
	go func() {
		tx := dst.ReadTx(0, 1000, false)
		defer tx.Close()
		late <- get(tx, "k") + " " + get(tx, "x0")
	}()

	missing := 0
	for i := range keys {
		if got := get(snapRead, fmt.Sprint("x", i)); got != "old" {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("a snapshot read open across the install lost %d of its %d keys", missing, keys)
	}
	if got := get(direct, "k"); got != "old0" {
		t.Errorf("a read open across the install found k = %q in db 0: neither the old store's \"old0\" nor the new one's \"new0\"", got)
	}
	snapRead.Close()
	direct.Close()
	select {
	case err := <-installed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the install did not finish once the reads closed")
	}
	select {
	case got := <-late:
		if got != "new0 new" {
			t.Errorf("a read started during the install saw %q, want the new store", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read started during the install never ran")
	}
	for db, want := range []string{"new0", "new1"} {
		tx := dst.ReadTx(db, 1000, false)
		if got := get(tx, "k"); got != want {
			t.Errorf("after the install: db %d k = %q, want %q", db, got, want)
		}
		tx.Close()
	}
}
