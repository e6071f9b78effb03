package raftlog

import "go.etcd.io/raft/v3/raftpb"

// recentBytes is about how much of the newest log the Storage keeps in
// memory as well as in Pebble (a variable for tests).
var recentBytes uint64 = 8 << 20

// recent is the newest entries of the log, as appended, so that Entries
// need not read Pebble for them: raft reads every entry back once it is
// committed (Ready.CommittedEntries), and a leader reads the entries it
// sends its followers, nearly always from the tail of the log.
type recent struct {
	ents  []raftpb.Entry // contiguous, ending at the log's last entry
	bytes uint64
	big   uint64 // the newest entry of bigBatch or more appended (0: none), for releaseBig
}

// append records ents (contiguous) as the log's newest entries, replacing
// any from the first of them on; those before first (the log's first
// index) are left out.
func (r *recent) append(ents []raftpb.Entry, first uint64) {
	for len(ents) > 0 && ents[0].Index < first {
		ents = ents[1:]
	}
	if len(ents) == 0 {
		return
	}
	at := ents[0].Index
	if n := len(r.ents); n == 0 || at < r.ents[0].Index || at > r.ents[n-1].Index+1 {
		r.reset()
	} else {
		for _, e := range r.ents[at-r.ents[0].Index:] {
			r.bytes -= uint64(e.Size())
		}
		r.ents = r.ents[:at-r.ents[0].Index]
	}
	for i := range ents {
		r.ents = append(r.ents, ents[i])
		size := uint64(ents[i].Size())
		r.bytes += size
		if size >= bigBatch {
			r.big = ents[i].Index
		}
	}
	k := 0
	for r.bytes > recentBytes && k < len(r.ents)-1 {
		r.bytes -= uint64(r.ents[k].Size())
		k++
	}
	r.drop(k)
}

// compact forgets the entries up to index i.
func (r *recent) compact(i uint64) {
	k := 0
	for k < len(r.ents) && r.ents[k].Index <= i {
		r.bytes -= uint64(r.ents[k].Size())
		k++
	}
	r.drop(k)
}

// drop forgets the first k entries; the array is copied once half of it is
// dropped, so that the entries dropped can be collected.
func (r *recent) drop(k int) {
	if k == 0 {
		return
	}
	r.ents = r.ents[k:]
	if cap(r.ents) < len(r.ents)*2 {
		return
	}
	r.ents = append([]raftpb.Entry(nil), r.ents...)
}

// releaseBig forgets the entries up to the last one at or below index i
// that weighs bigBatch or more, and copies the rest out of the array, which
// would otherwise keep that entry's data alive.
func (r *recent) releaseBig(i uint64) {
	if r.big == 0 { // the common case: no scan
		return
	}
	k := -1
	for j := range r.ents {
		if r.ents[j].Index > i {
			break
		}
		if r.ents[j].Size() >= bigBatch {
			k = j
		}
	}
	if k >= 0 {
		for _, e := range r.ents[:k+1] {
			r.bytes -= uint64(e.Size())
		}
		r.ents = append([]raftpb.Entry(nil), r.ents[k+1:]...)
	}
	if r.big <= i { // none left (or it was dropped some other way)
		r.big = 0
	}
}

func (r *recent) reset() { *r = recent{} }

// get returns the entries in [lo, hi), at least one and then as many as
// fit in maxSize bytes, if it holds them all.
func (r *recent) get(lo, hi, maxSize uint64) ([]raftpb.Entry, bool) {
	n := len(r.ents)
	if n == 0 || lo < r.ents[0].Index || hi > r.ents[n-1].Index+1 || lo >= hi {
		return nil, false
	}
	ents := r.ents[lo-r.ents[0].Index : hi-r.ents[0].Index]
	var size uint64
	for i := range ents {
		if size += uint64(ents[i].Size()); i > 0 && size > maxSize {
			ents = ents[:i]
			break
		}
	}
	return ents[:len(ents):len(ents)], true // raft may append to it: not into ours
}
