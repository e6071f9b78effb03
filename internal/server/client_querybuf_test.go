package server

import (
	"testing"
	"time"
)

// The figures Redis 7.0.15 (Debian's, jemalloc) shows for the same steps;
// test/compat's TestQueryBuffer compares them with a live redis-server.
func TestQueryBufModel(t *testing.T) {
	for n, want := range map[int64]int64{1: 8, 8: 8, 9: 16, 128: 128, 129: 160, 16390: 20480, 400012: 458752} {
		if got := jemallocSize(n); got != want {
			t.Errorf("jemallocSize(%d) = %d, want %d", n, got, want)
		}
	}
	ms := int64(time.Millisecond)
	q := newQueryBuf(0)
	check := func(at int64, wantUsed, wantFree int64) {
		t.Helper()
		if used, free := q.figures(at); used != wantUsed || free != wantFree {
			t.Errorf("at %d ms: qbuf=%d qbuf-free=%d, want %d and %d", at/ms, used, free, wantUsed, wantFree)
		}
	}
	q.read(10*ms, 26, 0, 0) // CLIENT INFO, while it runs
	check(10*ms, 26, 20448)
	q.consumed(0)
	check(20*ms, 0, 20474)
	q.read(30*ms, 400033, 400000, 0) // SET x <400000 bytes>
	check(40*ms, 0, 458742)
	// The pass at 100 ms still sees the argument's peak; the one at 200
	// ms shrinks the buffer to the peak since, nothing.
	check(150*ms, 0, 458742)
	check(250*ms, 0, 0)
	if m := q.recentMax(250 * ms); m != 458752 {
		t.Errorf("recent max input %d, want 458752", m)
	}
	q.read(300*ms, 33, 0, 0)
	q.consumed(0)
	check(400*ms, 0, 20474)
	// Idle for more than 2 s (whole seconds, as server.unixtime counts).
	check(2900*ms, 0, 20474)
	check(3100*ms, 0, 0)
	if m := q.recentMax(20_000 * ms); m != 8 {
		t.Errorf("recent max input after a long idle %d, want 8", m)
	}
}
