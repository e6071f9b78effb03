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
	s.Record(2500, false, true) // recorded as 2 µs, as Redis does
	s.Record(2500, true, true)
	h := s.Histogram()
	if n := s.Counters(); n.Calls != 2 || n.Failed != 1 || n.Ns != 5000 || h.Total != 2 || h.Levels()[1] != 2 {
		t.Errorf("after two calls of 2.5 µs: %+v, levels %v", n, h.Levels())
	}
}

// The histogram's slots are hdr_histogram's (1 ns to 1 s, 2 significant
// digits), and percentiles are its highest equivalent values: the values
// Redis 7.0.15 printed for calls of 7, 27 and 79 µs.
func TestHistogramPercentiles(t *testing.T) {
	for _, c := range []struct{ ns, lowest, width int64 }{
		{1, 1, 1}, {255, 255, 1}, {256, 256, 2}, {257, 256, 2}, {7000, 6976, 32},
		{27000, 26880, 128}, {79000, 78848, 512}, {2_000_000_000, 998244352, 1 << 22},
	} {
		i := histSlot(min(c.ns, histMaxNs))
		if histLowest(i) != c.lowest || histWidth(i) != c.width {
			t.Errorf("%d ns: slot from %d, %d wide; want from %d, %d wide", c.ns, histLowest(i), histWidth(i), c.lowest, c.width)
		}
	}
	if histIndex(5e9) >= histLen || histIndex(0) != 1 || histIndex(1999) != histSlot(1000) {
		t.Fatalf("5 s is slot %d of %d; 0 ns slot %d; 1999 ns slot %d", histIndex(5e9), histLen, histIndex(0), histIndex(1999))
	}
	for i := 1; i < histLen; i++ { // slots tile the range
		if histLowest(i) != histLowest(i-1)+histWidth(i-1) {
			t.Fatalf("slot %d starts at %d, after %d+%d", i, histLowest(i), histLowest(i-1), histWidth(i-1))
		}
	}
	var tally CallTally
	cmd := &Command{Name: "x"}
	for range 98 {
		tally.Add(cmd, 7000, false, true)
	}
	tally.Add(cmd, 27000, false, true)
	tally.Add(cmd, 79000, false, true)
	tally.Flush()
	s := &cmd.Stats
	h := s.Histogram()
	for _, c := range []struct {
		p    float64
		want int64
	}{{0, 6976}, {50, 7007}, {98, 7007}, {99, 27007}, {99.9, 79359}, {100, 79359}} {
		if got := h.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	if n := s.Counters(); n.Calls != 100 || n.Ns != 98*7000+27000+79000 {
		t.Errorf("counters %+v", n)
	}
}

// A tally adds its slots when it holds too many distinct ones, and a
// flush leaves none behind.
func TestTallyManySlots(t *testing.T) {
	cmd := &Command{Name: "x"}
	var tally CallTally
	for i := range int64(200) {
		tally.Add(cmd, 1000+i*100, i%2 == 0, true)
	}
	tally.Flush()
	n, h := cmd.Stats.Counters(), cmd.Stats.Histogram()
	if n.Calls != 200 || n.Failed != 100 || h.Total != 200 {
		t.Errorf("counters %+v, histogram total %d", n, h.Total)
	}
	for i, c := range tally.slots {
		if c != 0 {
			t.Fatalf("slot %d left with %d", i, c)
		}
	}
	tally.Add(cmd, 5000, false, false) // not tracked: counted, no slot
	tally.Flush()
	if n := cmd.Stats.Counters(); n.Calls != 201 || cmd.Stats.Histogram().Total != 200 {
		t.Errorf("untracked call: %+v", n)
	}
}
