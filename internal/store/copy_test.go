package store

import (
	"fmt"
	"testing"
)

func members(t *testing.T, tx *Tx, key string) map[string]string {
	t.Helper()
	out := map[string]string{}
	tx.Members([]byte(key), nil, nil, false, func(sub, value []byte) bool {
		out[string(sub)] = string(value)
		return true
	})
	return out
}

// fakeCollection writes a hash-typed key with n members directly.
func fakeCollection(tx *Tx, key string, n int, tag string, expireAt int64) {
	tx.Put([]byte(key), Meta{Type: TypeHash, ExpireAt: expireAt, Body: []byte("hdr-" + tag)})
	for i := range n {
		tx.SetMember([]byte(key), fmt.Appendf(nil, "f%03d", i), []byte(tag+fmt.Sprint(i)))
	}
}

func TestCopyTo(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ReadTx(0, 0, false).Databases() != 4 {
		t.Fatalf("Databases() != 4")
	}

	const now = 1_000_000
	tx := s.WriteTx()
	tx.Now = now
	fakeCollection(tx, "src", 50, "a", now+5000)
	// dst already holds a collection of the same type with other members:
	// none of them may survive the copy.
	fakeCollection(tx, "dst", 80, "b", 0)
	// A string destination in another database, expired already.
	tx.DB = 2
	tx.Put([]byte("other"), Meta{Type: TypeString, ExpireAt: now - 1, Body: []byte("x")})
	tx.DB = 0

	m, ok := tx.Lookup([]byte("src"))
	if !ok {
		t.Fatal("src missing")
	}
	tx.CopyTo([]byte("src"), m, 0, []byte("dst"))   // COPY ... REPLACE
	tx.CopyTo([]byte("src"), m, 2, []byte("other")) // COPY ... DB 2 REPLACE
	tx.CopyTo([]byte("src"), m, 3, []byte("src"))   // MOVE src 3 ...
	tx.Delete([]byte("src"))                        // ... deletes the source
	if tx.DB != 0 {
		t.Fatalf("CopyTo left DB at %d", tx.DB)
	}
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	for i := range 50 {
		want[fmt.Sprintf("f%03d", i)] = "a" + fmt.Sprint(i)
	}
	check := func(db int, key string) {
		t.Helper()
		r := s.ReadTx(db, now, true)
		defer r.Close()
		m, ok := r.Lookup([]byte(key))
		if !ok {
			t.Fatalf("db %d %s missing", db, key)
		}
		if m.Type != TypeHash || m.ExpireAt != now+5000 || string(m.Body) != "hdr-a" {
			t.Errorf("db %d %s meta = %+v", db, key, m)
		}
		got := members(t, r, key)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("db %d %s members = %v, want %v", db, key, got, want)
		}
	}
	check(0, "dst")
	check(2, "other")
	check(3, "src")

	r := s.ReadTx(0, now, true)
	defer r.Close()
	if r.Exists([]byte("src")) || len(members(t, r, "src")) != 0 {
		t.Errorf("moved source still present")
	}
	for db, n := range []int64{1, 0, 1, 1} {
		r.DB = db
		if r.Count() != n {
			t.Errorf("db %d count = %d, want %d", db, r.Count(), n)
		}
	}
	// The expiry index must list the copies, so active expiry finds them.
	for _, db := range []int{0, 2, 3} {
		if got := s.Due(r.Phys(db), now+5000, 10); len(got) != 1 {
			t.Errorf("db %d expiry index = %q", db, got)
		}
	}
}
