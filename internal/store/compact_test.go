package store

import (
	"fmt"
	"testing"
	"time"
)

// A read that steps over many deleted members has their range compacted
// in the background: the same read afterwards meets only the live ones.
func TestReadsCompactDeletions(t *testing.T) {
	st := openStore(t)
	key := []byte("h")
	sub := func(i int) []byte { return []byte(fmt.Sprintf("f%05d", i)) }
	tx := st.WriteTx()
	tx.Put(key, Meta{Type: TypeHash})
	for i := range 5000 {
		tx.SetMember(key, sub(i), []byte("v"))
	}
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}
	tx = st.WriteTx()
	for i := range 4000 {
		tx.DeleteMember(key, sub(i))
	}
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}
	// points counts what one read of the first live member iterates over.
	points := func() uint64 {
		r := st.ReadTx(0, 0, false)
		defer r.Close()
		m := r.MemberIter(key, nil, []byte{0xff})
		defer m.Close()
		if !m.SeekGE(nil) || string(m.it.Key()[len(m.p):]) != string(sub(4000)) {
			t.Fatalf("first member not %s", sub(4000))
		}
		return m.it.Stats().InternalStats.PointCount
	}
	if n := points(); n < 4000 {
		t.Fatalf("the first read stepped over %d entries, not the 4000 deleted", n)
	}
	// Pebble may move the flushed table down whole and drop the deletions
	// in an elision-only compaction of its own right after, which a loaded
	// machine may delay (this failed once at 20 s).
	deadline := time.Now().Add(60 * time.Second)
	for points() > 10 {
		if time.Now().After(deadline) {
			t.Fatalf("reads still step over the deletions; %d compactions", st.Compactions())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := st.Compactions(); n != 1 {
		t.Fatalf("%d compactions, want 1", n)
	}
	// A read that skips little asks for nothing.
	r := st.ReadTx(0, 0, false)
	r.Members(key, nil, nil, false, func(_, _ []byte) bool { return true })
	r.Close()
	time.Sleep(50 * time.Millisecond)
	if n := st.Compactions(); n != 1 {
		t.Fatalf("%d compactions, want 1", n)
	}
}
