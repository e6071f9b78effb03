package command

import "sync/atomic"

// CallStats counts a command's calls and their durations for LATENCY
// HISTOGRAM, in the buckets Redis 7.0 reports: its per-command histogram
// (hdr_histogram, 2 significant digits, 1024 ns to 1 s) read with a log
// iterator from 1024 ns in powers of 2. Bucket i covers the durations that
// iterator counts at its level 2^(10+i) ns: those below 2^(10+i) plus the
// width of the histogram's bucket at that level (2^(10+i)/128).
type CallStats struct {
	calls   atomic.Int64
	buckets [HistogramBuckets]atomic.Int64
}

// HistogramBuckets is the number of power-of-2 levels from 2^10 to 2^30 ns.
const HistogramBuckets = 21

// Histogram's clamps, as Redis records a duration (ns).
const (
	histMinNs = 1024
	histMaxNs = 1_000_000_000
)

// Record counts one call of ns nanoseconds: two atomic adds.
func (s *CallStats) Record(ns int64) {
	s.calls.Add(1)
	s.buckets[histogramBucket(ns)].Add(1)
}

// CallTally counts one connection's calls of one command at a time, for
// CallStats: every connection adding to the same counters on every call
// cost a GET -P 16 about 5% of its CPU, so a connection adds its tally
// once it has run what it had read (or runs another command).
type CallTally struct {
	cmd     *Command
	calls   int64
	buckets [HistogramBuckets]int64
}

// Add counts one call of cmd of ns nanoseconds.
func (t *CallTally) Add(cmd *Command, ns int64) {
	if t.cmd != cmd {
		t.Flush()
		t.cmd = cmd
	}
	t.calls++
	t.buckets[histogramBucket(ns)]++
}

// Flush adds the tally to its command's CallStats.
func (t *CallTally) Flush() {
	if t.cmd == nil {
		return
	}
	s := &t.cmd.Stats
	s.calls.Add(t.calls)
	for i, n := range t.buckets {
		if n != 0 {
			s.buckets[i].Add(n)
		}
	}
	*t = CallTally{}
}

// histogramBucket is the first level whose count includes ns.
func histogramBucket(ns int64) int {
	ns = min(max(ns, histMinNs), histMaxNs)
	for i := range HistogramBuckets - 1 {
		level := int64(1) << (10 + i)
		if ns < level+level/128 {
			return i
		}
	}
	return HistogramBuckets - 1
}

// HistogramLabel is Redis's label of bucket i in µs: the highest value
// equivalent to the level in the histogram, or, for the last level, the
// histogram's end (2^30-1 ns), where the iterator stops.
func HistogramLabel(i int) int64 {
	level := int64(1) << (10 + i)
	if i == HistogramBuckets-1 {
		return (level - 1) / 1000
	}
	return (level + level/128 - 1) / 1000
}

// Snapshot returns the calls and each bucket's own count.
func (s *CallStats) Snapshot() (calls int64, buckets [HistogramBuckets]int64) {
	for i := range buckets {
		buckets[i] = s.buckets[i].Load()
	}
	return s.calls.Load(), buckets
}

// Reset forgets the calls (CONFIG RESETSTAT).
func (s *CallStats) Reset() {
	s.calls.Store(0)
	for i := range s.buckets {
		s.buckets[i].Store(0)
	}
}

// ScriptCallHook, when set, is told of every command a script that a
// client runs now (not a replayed one) calls with redis.call, after it
// ran: MONITOR shows it as "lua" and the slowlog logs it.
var ScriptCallHook func(db int, cmd *Command, argv [][]byte, ns int64)
