package command

import (
	"math/bits"
	"sync/atomic"
)

// CallStats is a command's INFO commandstats counters and its latency
// histogram (INFO latencystats, LATENCY HISTOGRAM). The histogram has the
// layout of Redis 7.0's per-command hdr_histogram (1 ns to 1 s, 2
// significant digits): 256 exact values, then 128 sub-buckets per power of
// 2, so percentiles come out as Redis prints them. It is allocated on the
// first call measured: most commands are never called.
type CallStats struct {
	calls, ns, failed, rejected atomic.Int64
	hist                        atomic.Pointer[latencyHist]
}

type latencyHist struct {
	counts [histLen]atomic.Int64
}

// The hdr_histogram layout for lowest value 1, highest 1e9, 2 significant
// digits: sub-buckets of 256 (half 128), 23 buckets.
const (
	histSubHalfBits = 7
	histSubHalf     = 1 << histSubHalfBits // 128
	histSubMask     = 2*histSubHalf - 1    // 255
	histBuckets     = 23                   // 256<<22 > 1e9
	histLen         = (histBuckets + 1) * histSubHalf
	histMaxNs       = 1_000_000_000
)

// histIndex is the histogram slot of a duration, clamped to 1 ns..1 s.
// Like Redis, it records whole µs (0 as 1 ns): that also keeps the slots
// a connection's pipeline touches few, so its flush makes few atomic
// adds on counters other connections add to as well.
func histIndex(ns int64) int {
	return histSlot(min(max(ns/1000*1000, 1), histMaxNs))
}

// histSlot is the slot of a value from 1 to histMaxNs.
func histSlot(ns int64) int {
	v := uint64(ns)
	bucket := bits.Len64(v|histSubMask) - (histSubHalfBits + 1)
	sub := int(v >> bucket)
	return (bucket+1)<<histSubHalfBits + sub - histSubHalf
}

// histLowest is the lowest duration slot i holds, histWidth how many.
func histLowest(i int) int64 {
	bucket, sub := i>>histSubHalfBits-1, i&(histSubHalf-1)+histSubHalf
	if bucket < 0 {
		bucket, sub = 0, sub-histSubHalf
	}
	return int64(sub) << bucket
}

func histWidth(i int) int64 {
	return int64(1) << max(i>>histSubHalfBits-1, 0)
}

// HistogramBuckets is the number of power-of-2 levels from 2^10 to 2^30 ns
// that LATENCY HISTOGRAM reports.
const HistogramBuckets = 21

// histogramBucket is the first LATENCY HISTOGRAM level whose count
// includes ns: Redis reads its histogram with a log iterator from 1024 ns
// in powers of 2, and the count at level L = 2^(10+i) takes the slots
// below L plus the slot at L (L/128 wide), a slot boundary.
func histogramBucket(ns int64) int {
	for i := range HistogramBuckets - 1 {
		level := int64(1) << (10 + i)
		if ns < level+level/128 {
			return i
		}
	}
	return HistogramBuckets - 1
}

// HistogramLabel is Redis's label of level i in µs: the highest value
// equivalent to the level in the histogram, or, for the last level, the
// histogram's end (2^30-1 ns), where the iterator stops.
func HistogramLabel(i int) int64 {
	level := int64(1) << (10 + i)
	if i == HistogramBuckets-1 {
		return (level - 1) / 1000
	}
	return (level + level/128 - 1) / 1000
}

// Record counts one call of ns nanoseconds directly in the shared
// counters (a script's redis.call), in the histogram if track.
func (s *CallStats) Record(ns int64, failed, track bool) {
	s.calls.Add(1)
	s.ns.Add(ns)
	if failed {
		s.failed.Add(1)
	}
	if track {
		s.histogram().counts[histIndex(ns)].Add(1)
	}
}

// Reject counts a call refused before it ran (rejected_calls).
func (s *CallStats) Reject() { s.rejected.Add(1) }

func (s *CallStats) histogram() *latencyHist {
	if h := s.hist.Load(); h != nil {
		return h
	}
	s.hist.CompareAndSwap(nil, new(latencyHist))
	return s.hist.Load()
}

// Counters are a command's INFO commandstats fields.
type Counters struct {
	Calls, Ns, Failed, Rejected int64
}

// Counters reads the commandstats counters.
func (s *CallStats) Counters() Counters {
	return Counters{s.calls.Load(), s.ns.Load(), s.failed.Load(), s.rejected.Load()}
}

// Histogram is a copy of a command's latency histogram.
type Histogram struct {
	Total  int64
	counts [histLen]int64
}

// Histogram copies the histogram; nil if no call was measured.
func (s *CallStats) Histogram() *Histogram {
	h := s.hist.Load()
	if h == nil {
		return nil
	}
	out := &Histogram{}
	for i := range out.counts {
		n := h.counts[i].Load()
		out.counts[i] = n
		out.Total += n
	}
	if out.Total == 0 {
		return nil
	}
	return out
}

// Levels is the histogram as LATENCY HISTOGRAM reports it: the count of
// each power-of-2 level (not cumulative).
func (h *Histogram) Levels() (levels [HistogramBuckets]int64) {
	for i, n := range h.counts {
		if n != 0 {
			levels[histogramBucket(histLowest(i))] += n
		}
	}
	return levels
}

// Percentile is hdr_value_at_percentile: the highest duration (ns)
// equivalent to the slot where the count reaches p% of the total (the
// lowest, for p 0).
func (h *Histogram) Percentile(p float64) int64 {
	p = min(p, 100)
	want := max(int64(p/100*float64(h.Total)+0.5), 1)
	seen := int64(0)
	for i, n := range h.counts {
		seen += n
		if n != 0 && seen >= want {
			if p == 0 {
				return histLowest(i)
			}
			return histLowest(i) + histWidth(i) - 1
		}
	}
	return 0
}

// Reset forgets everything (CONFIG RESETSTAT).
func (s *CallStats) Reset() {
	s.calls.Store(0)
	s.ns.Store(0)
	s.failed.Store(0)
	s.rejected.Store(0)
	s.hist.Store(nil)
}

// CallTally counts one connection's calls of one command at a time, for
// CallStats: every connection adding to the same counters on every call
// cost a GET -P 16 about 5% of its CPU, so a connection adds its tally
// once it has run what it had read (or runs another command). Its
// histogram slots are its own (allocated on its first measured call);
// touched lists those in use, so a flush visits only them.
type CallTally struct {
	cmd               *Command
	calls, ns, failed int64
	slots             *[histLen]uint32
	touched           [tallyTouched]uint16
	nTouched          int
}

// tallyTouched bounds the distinct histogram slots a tally holds before
// it adds them.
const tallyTouched = 64

// Add counts one call of cmd of ns nanoseconds, failed or not, in the
// histogram if track.
func (t *CallTally) Add(cmd *Command, ns int64, failed, track bool) {
	if t.cmd != cmd {
		t.Flush()
		t.cmd = cmd
	}
	t.calls++
	t.ns += ns
	if failed {
		t.failed++
	}
	if !track {
		return
	}
	if t.slots == nil {
		t.slots = new([histLen]uint32)
	}
	i := histIndex(ns)
	if t.slots[i] == 0 {
		if t.nTouched == tallyTouched {
			t.flushHist()
		}
		t.touched[t.nTouched] = uint16(i)
		t.nTouched++
	}
	t.slots[i]++
}

// Flush adds the tally to its command's CallStats.
func (t *CallTally) Flush() {
	if t.cmd == nil {
		return
	}
	s := &t.cmd.Stats
	s.calls.Add(t.calls)
	s.ns.Add(t.ns)
	if t.failed != 0 {
		s.failed.Add(t.failed)
	}
	t.flushHist()
	t.cmd, t.calls, t.ns, t.failed = nil, 0, 0, 0
}

func (t *CallTally) flushHist() {
	if t.nTouched == 0 {
		return
	}
	h := t.cmd.Stats.histogram()
	for _, i := range t.touched[:t.nTouched] {
		h.counts[i].Add(int64(t.slots[i]))
		t.slots[i] = 0
	}
	t.nTouched = 0
}

// Drop forgets the tally (CONFIG RESETSTAT).
func (t *CallTally) Drop() {
	for _, i := range t.touched[:t.nTouched] {
		t.slots[i] = 0
	}
	t.cmd, t.calls, t.ns, t.failed, t.nTouched = nil, 0, 0, 0, 0
}
