package server

import "testing"

// A full log keeps its last slowlog-max-len entries without copying itself
// on every add, and a lowered max-len takes effect at the next add, as in
// Redis.
func TestSlowlogTrims(t *testing.T) {
	var l slowlog
	l.maxLen.Store(128)
	for range 10000 {
		l.add([][]byte{[]byte("get"), []byte("k")}, 1, "a:1", "")
		if len(l.entries) > 2*128+64 {
			t.Fatalf("%d entries held for a log of 128", len(l.entries))
		}
	}
	if n := l.len(); n != 128 {
		t.Fatalf("len %d, want 128", n)
	}
	got := l.newest(200)
	if len(got) != 128 || got[0].id != 9999 || got[127].id != 9999-127 {
		t.Fatalf("newest: %d entries, ids %d..%d", len(got), got[0].id, got[len(got)-1].id)
	}
	l.maxLen.Store(5)
	if n := l.len(); n != 128 {
		t.Fatalf("len %d before the next add, want 128", n)
	}
	l.add([][]byte{[]byte("get")}, 1, "a:1", "")
	if got := l.newest(10); len(got) != 5 || got[0].id != 10000 || got[4].id != 9996 {
		t.Fatalf("after lowering max-len: %d entries, ids %d..%d", len(got), got[0].id, got[len(got)-1].id)
	}
	l.maxLen.Store(50)
	l.add([][]byte{[]byte("get")}, 1, "a:1", "")
	if got := l.newest(100); len(got) != 6 || got[5].id != 9996 {
		t.Fatalf("after raising max-len: %d entries, want the 5 kept and the new one", len(got))
	}
}
