package command

import "testing"

// Redis 7.0.15's LATENCY HISTOGRAM labels (1 to 16, 33... 2113, 8454, 16908,
// 67633, 541065 and 1073741 read from redis-server; the others computed
// alike), and
// where durations land.
func TestHistogramBuckets(t *testing.T) {
	want := []int64{1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266, 270532, 541065, 1073741}
	for i, w := range want {
		if got := HistogramLabel(i); got != w {
			t.Errorf("label %d: %d, want %d", i, got, w)
		}
	}
	for _, c := range []struct {
		ns     int64
		bucket int
	}{
		{0, 0}, {1031, 0}, {1032, 1}, {2063, 1}, {2064, 2}, // 1024 + 1024/128: the level's own hdr bucket
		{50_000, 6}, {2_000_000, 11}, {5_000_000_000, 20}, {600_000_000, 20},
	} {
		if got := histogramBucket(c.ns); got != c.bucket {
			t.Errorf("%d ns: bucket %d, want %d", c.ns, got, c.bucket)
		}
	}
	var s CallStats
	s.Record(1500)
	s.Record(1500)
	if calls, b := s.Snapshot(); calls != 2 || b[1] != 2 {
		t.Errorf("after two calls of 1.5 µs: %d calls, buckets %v", calls, b)
	}
}
