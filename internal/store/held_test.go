package store

import (
	"fmt"
	"testing"
)

// TestHeldMember checks that a held member is what every read of the Tx
// and of its successors finds (point reads, both iterators, a copy), that
// a plain write or a deletion of it wins over the held value, that a
// deletion of its key forgets it, and that it reaches the batch once.
func TestHeldMember(t *testing.T) {
	st := openStore(t)
	k, gone := []byte("k"), []byte("gone")
	member := func(tx *Tx, key []byte, sub string) string {
		v, ok := tx.Member(key, []byte(sub))
		if !ok {
			return "<none>"
		}
		return string(v)
	}
	members := func(tx *Tx, key []byte) (out string) {
		tx.Members(key, nil, nil, false, func(sub, v []byte) bool {
			out += fmt.Sprintf("%s=%s ", sub, v)
			return true
		})
		return out
	}

	tx := st.WriteTx()
	tx.Put(k, Meta{Type: TypeHash})
	tx.saveMeta()
	before := tx.b.Count()
	tx.HoldMember(k, []byte("h"), []byte("1"))
	tx.HoldMember(k, []byte("h"), []byte("2"))
	if got := member(tx, k, "h"); got != "2" {
		t.Fatalf("held member reads %q, want 2", got)
	}
	tx.SetMember(k, []byte("h"), []byte("3")) // a plain write of a held member
	if n := tx.b.Count() - before; n != 0 {
		t.Fatalf("%d batch entries for a held member before any range read", n)
	}
	tx.SetMember(k, []byte("p"), []byte("x"))
	if got := members(tx, k); got != "h=3 p=x " {
		t.Fatalf("Members sees %q", got)
	}
	it := tx.MemberIter(k, []byte("a"), []byte("z"))
	tx.HoldMember(k, []byte("h"), []byte("4")) // after the iterator opened: not seen by it
	if !it.SeekGE([]byte("h")) || string(it.Sub()) != "h" || string(it.Value()) != "3" {
		t.Fatalf("MemberIter does not see the held member as it was")
	}
	it.Close()
	tx.DeleteMember(k, []byte("h"))
	if got := member(tx, k, "h"); got != "<none>" {
		t.Fatalf("deleted held member reads %q", got)
	}
	tx.HoldMember(k, []byte("n"), []byte("w"))

	tx.Put(gone, Meta{Type: TypeHash})
	tx.HoldMember(gone, []byte("h"), []byte("1"))
	tx.Delete(gone)
	if got := member(tx, gone, "h"); got != "<none>" {
		t.Fatalf("a deleted key's held member reads %q", got)
	}

	next := st.WriteTxAfter(tx, 0)
	if got := member(next, k, "n"); got != "w" {
		t.Fatalf("the chained Tx reads %q, want w", got)
	}
	next.HoldMember(k, []byte("n"), []byte("w2"))
	next.CopyTo(k, Meta{Type: TypeHash}, 0, []byte("copy"))
	if got := members(next, []byte("copy")); got != "n=w2 p=x " {
		t.Fatalf("the copy has %q", got)
	}
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := next.Commit(true); err != nil {
		t.Fatal(err)
	}
	r := st.ReadTx(0, 0, true)
	defer r.Close()
	for _, key := range [][]byte{k, []byte("copy")} {
		if got := members(r, key); got != "n=w2 p=x " {
			t.Errorf("%s after commit: %q", key, got)
		}
	}
	if got := members(r, gone); got != "" {
		t.Errorf("deleted key after commit: %q", got)
	}
}

// A write Tx reuses one iterator for its range reads: each read sees the
// writes made before it, range deletions included, and a read nested in
// another gets an iterator of its own.
func TestIterReuse(t *testing.T) {
	st := openStore(t)
	k := []byte("k")
	tx := st.WriteTx()
	defer tx.Close()
	members := func() (out string) {
		tx.Members(k, nil, nil, false, func(sub, v []byte) bool {
			out += string(sub) + " "
			return true
		})
		return out
	}
	tx.Put(k, Meta{Type: TypeSet})
	tx.SetMember(k, []byte("a"), nil)
	if got := members(); got != "a " {
		t.Fatalf("first read: %q", got)
	}
	tx.SetMember(k, []byte("b"), nil)
	tx.DeleteMember(k, []byte("a"))
	if got := members(); got != "b " {
		t.Fatalf("after writes: %q", got)
	}
	var nested string
	tx.Members(k, nil, nil, false, func(sub, v []byte) bool {
		nested += string(sub) + ":" + members()
		return true
	})
	if nested != "b:b " {
		t.Fatalf("nested reads: %q", nested)
	}
	it := tx.MemberIter(k, []byte("a"), []byte("z"))
	if got := members(); got != "b " || !it.SeekGE([]byte("a")) || string(it.Sub()) != "b" {
		t.Fatalf("a read while a MemberIter is open: %q", got)
	}
	it.Close()
	tx.DeleteMemberRange(k, []byte("a"), []byte("z"))
	if got := members(); got != "" {
		t.Fatalf("after a range deletion: %q", got)
	}
}
