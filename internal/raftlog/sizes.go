package raftlog

import (
	"sort"

	"go.etcd.io/raft/v3/raftpb"
)

// sizes keeps running totals of the log's entry sizes, so that a shard can
// bound its log by bytes (RetainFrom) without reading entries back: with
// big values, a bound by entry count alone could keep gigabytes.
type sizes struct {
	first  uint64   // the index of the first entry in the log
	base   uint64   // the running total before first
	totals []uint64 // totals[k]: the running total up to entry first+k
}

// reset empties the record for a log whose next entry is first.
func (z *sizes) reset(first uint64) { *z = sizes{first: first} }

// total is the running total up to entry i (first-1 <= i <= last).
func (z *sizes) total(i uint64) uint64 {
	if i < z.first {
		return z.base
	}
	return z.totals[i-z.first]
}

// append records ents (contiguous), replacing any entries from the first
// of them on; entries before the log's first index are ignored.
func (z *sizes) append(ents []raftpb.Entry) {
	for len(ents) > 0 && ents[0].Index < z.first {
		ents = ents[1:]
	}
	if len(ents) == 0 {
		return
	}
	z.totals = z.totals[:min(uint64(len(z.totals)), ents[0].Index-z.first)]
	total := z.total(z.first + uint64(len(z.totals)) - 1)
	for i := range ents {
		total += uint64(ents[i].Size())
		z.totals = append(z.totals, total)
	}
}

// compact forgets the entries up to index i.
func (z *sizes) compact(i uint64) {
	if i < z.first {
		return
	}
	k := min(i-z.first+1, uint64(len(z.totals)))
	if k > 0 {
		z.base = z.totals[k-1]
	}
	// The dropped prefix's memory goes at the next growth of the slice.
	z.totals, z.first = z.totals[k:], i+1
}

// retainFrom returns the lowest index c <= last such that the entries after
// c hold at most keep bytes: compacting to c keeps the newest entries that
// fit. It returns first-1 if they all fit.
func (z *sizes) retainFrom(last, keep uint64) uint64 {
	end := z.total(last)
	if end-z.base <= keep {
		return z.first - 1
	}
	n := int(last - z.first + 1)
	j := sort.Search(n, func(j int) bool { return end-z.totals[j] <= keep })
	return z.first + uint64(j)
}
