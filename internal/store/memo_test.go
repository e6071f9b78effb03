package store

import (
	"bytes"
	"testing"
)

// TestMemo checks that a memo is found until the next committed write of
// its key (chunked or inline string, deletion, FLUSHDB), is not found once
// the key expires, and is not attached when the key's cache entry changed
// between Memo and Remember.
func TestMemo(t *testing.T) {
	st := openStore(t)
	const now = 1_000_000
	key := []byte("k")
	write := func(fn func(tx *Tx)) {
		t.Helper()
		tx := st.WriteTx()
		tx.Now = now
		fn(tx)
		if err := tx.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	// remember does what PFCOUNT does: Memo, read the value, Remember.
	remember := func(memo any) {
		tx := st.ReadTx(0, now, false)
		defer tx.Close()
		_, found, tok := tx.Memo(key)
		if found {
			t.Fatal("a memo before Remember")
		}
		if m, ok := tx.Lookup(key); ok {
			tx.ReadString(key, m)
		}
		tx.Remember(key, memo, tok)
	}
	memo := func(at int64) any {
		tx := st.ReadTx(0, at, false)
		defer tx.Close()
		v, found, _ := tx.Memo(key)
		if !found {
			return nil
		}
		return v
	}
	big := bytes.Repeat([]byte("x"), 3*ChunkSize)

	for _, value := range [][]byte{[]byte("small"), big} {
		write(func(tx *Tx) { tx.WriteString(key, value, 0) })
		// The first read after the write caches the entry (the apply
		// loop already did), the memo goes with it.
		remember(1)
		if got := memo(now); got != 1 {
			t.Fatalf("memo %v, want 1", got)
		}
		// A write of the same bytes is a write: the memo goes.
		write(func(tx *Tx) { tx.WriteString(key, value, 0) })
		if got := memo(now); got != nil {
			t.Fatalf("memo %v after a write, want none", got)
		}
		// A write of one chunk (SETRANGE, SETBIT) too.
		remember(2)
		write(func(tx *Tx) {
			m, _ := tx.Lookup(key)
			tx.WriteStringRange(key, m, 1, []byte("y"))
		})
		if got := memo(now); got != nil {
			t.Fatalf("memo %v after a range write, want none", got)
		}
	}

	// The entry changes between Memo and Remember: nothing is attached.
	tx := st.ReadTx(0, now, false)
	_, _, tok := tx.Memo(key)
	write(func(tx *Tx) { tx.WriteString(key, big, 0) })
	tx.Remember(key, 3, tok)
	tx.Close()
	if got := memo(now); got != nil {
		t.Fatalf("memo %v attached to a newer entry, want none", got)
	}

	// Expiry, deletion and FLUSHDB.
	write(func(tx *Tx) { tx.WriteString(key, big, now+1000) })
	remember(4)
	if got := memo(now); got != 4 {
		t.Fatalf("memo %v, want 4", got)
	}
	if got := memo(now + 1000); got != nil {
		t.Fatalf("memo %v of an expired key, want none", got)
	}
	write(func(tx *Tx) { tx.Delete(key) })
	if got := memo(now); got != nil {
		t.Fatalf("memo %v of a deleted key, want none", got)
	}
	write(func(tx *Tx) { tx.WriteString(key, big, 0) })
	remember(5)
	write(func(tx *Tx) { tx.Flush(0) })
	if got := memo(now); got != nil {
		t.Fatalf("memo %v after FLUSHDB, want none", got)
	}

	// A write Tx or a snapshot has no memos.
	write(func(tx *Tx) { tx.WriteString(key, big, 0) })
	remember(6)
	snap := st.ReadTx(0, now, true)
	defer snap.Close()
	if _, found, _ := snap.Memo(key); found {
		t.Fatal("a snapshot read found a memo")
	}
}

// TestLookupShared checks that LookupShared returns the cached bytes
// without copying them, and Lookup a copy.
func TestLookupShared(t *testing.T) {
	st := openStore(t)
	tx := st.WriteTx()
	tx.WriteString([]byte("k"), []byte("value"), 0)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	r := st.ReadTx(0, 0, false)
	defer r.Close()
	a, _ := r.LookupShared([]byte("k"))
	b, _ := r.LookupShared([]byte("k"))
	c, _ := r.Lookup([]byte("k"))
	if string(a.Body) != "value" || &a.Body[0] != &b.Body[0] || &c.Body[0] == &a.Body[0] {
		t.Fatalf("shared %q, copies: %v %v", a.Body, &a.Body[0] != &b.Body[0], &c.Body[0] == &a.Body[0])
	}
}
