package shard

import (
	"math"
	"sync/atomic"
)

// Histogram counts observations in fixed buckets, lock-free, for
// /metrics: the log's sync latency and the group-commit sizes.
type Histogram struct {
	Bounds  []float64 // upper bounds, ascending; a last bucket takes the rest
	buckets []atomic.Int64
	count   atomic.Int64
	sum     atomic.Uint64 // float64 bits
}

func newHistogram(bounds ...float64) *Histogram {
	return &Histogram{Bounds: bounds, buckets: make([]atomic.Int64, len(bounds)+1)}
}

// Observe adds one value; a nil Histogram (a shard built for a test or a
// replay) ignores it.
func (h *Histogram) Observe(v float64) {
	if h == nil {
		return
	}
	i := 0
	for i < len(h.Bounds) && v > h.Bounds[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.count.Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, f64bits(f64frombits(old)+v)) {
			return
		}
	}
}

// Read returns the cumulative count at each bound, the count and the sum,
// as Prometheus's histograms give them.
func (h *Histogram) Read() (cumulative map[float64]uint64, count uint64, sum float64) {
	cumulative = make(map[float64]uint64, len(h.Bounds))
	var n int64
	for i, b := range h.Bounds {
		n += h.buckets[i].Load()
		cumulative[b] = uint64(n)
	}
	return cumulative, uint64(h.count.Load()), f64frombits(h.sum.Load())
}

// syncBounds are the sync latency buckets, in seconds: 100 µs to 1 s.
var syncBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// groupBounds are the group-commit size buckets, in records.
var groupBounds = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}

var f64bits, f64frombits = math.Float64bits, math.Float64frombits
