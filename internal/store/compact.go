package store

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Deleted members, fields and keys stay in Pebble as deletions until a
// compaction takes them to the bottom level, and Pebble compacts only as
// writes fill its levels: a hash that lost most of its fields and is no
// longer written keeps them for good, and every HSCAN, HRANDFIELD or
// HGETALL of it steps over all of them (HSCAN 0 after deleting 150,000
// of 200,000 fields: 200 a second). A read that steps over many
// deletions asks for its range to be compacted, in the background, so
// that the reads after it don't.
//
// (Pebble's own answers do not reach this case: tombstone-dense
// compactions are off, see Open, and they would not see deletions still
// in the memtable; its read-triggered compactions are about read
// amplification across levels, not deletions.)

// compactAfterSkipped is how many deleted or overwritten entries one read
// steps over before its range is compacted: about 50-100 us of the read.
const compactAfterSkipped = 1024

// A compaction of even a small range rewrites every table that overlaps
// it, on every level, and each flush overlaps most of the data: it costs
// about a full compaction. So a range is compacted only once a second
// read within compactConfirm steps over it (a scan that catches up once,
// such as a consumer group's first pending entry moving past the
// acknowledged ones, does not ask again), compactions are compactPause
// apart, and a range is not compacted again within compactAgainAfter.
// Asking on the first read cost XREADGROUP+XACK 15% of its CPU.
const (
	compactConfirm    = time.Minute
	compactAgainAfter = time.Minute
	compactPause      = 5 * time.Second
)

// compactor runs the compactions reads ask for, one at a time.
type compactor struct {
	hints  chan keyRange
	cancel context.CancelFunc
	done   chan struct{}

	// Owned by the compactor's goroutine.
	asked  []compacted // ranges one read asked for, in the last compactConfirm
	recent []compacted // ranges compacted in the last compactAgainAfter

	runs atomic.Int64 // compactions run, for INFO
}

type keyRange struct{ lo, hi []byte }

type compacted struct {
	keyRange
	at time.Time
}

func (s *Store) startCompactor() {
	ctx, cancel := context.WithCancel(context.Background())
	c := &compactor{hints: make(chan keyRange, 16), cancel: cancel, done: make(chan struct{})}
	s.compactor = c
	go func() {
		defer close(c.done)
		for {
			select {
			case r := <-c.hints:
				if !c.due(r) {
					continue
				}
				if err := s.pdb.Compact(ctx, r.lo, r.hi, false); err != nil && ctx.Err() == nil {
					slog.Warn("compacting a range reads found full of deletions", "err", err)
				}
				c.recent = append(c.recent, compacted{r, time.Now()})
				c.runs.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()
}

// stop ends the compaction running, if any, and the compactor.
func (c *compactor) stop() {
	c.cancel()
	<-c.done
}

// due reports whether r is to be compacted now: a read asked for a range
// overlapping it before, and it was not compacted recently. Only the
// compactor's goroutine calls it.
func (c *compactor) due(r keyRange) bool {
	confirmed := false
	keep := c.asked[:0]
	for _, a := range c.asked {
		switch {
		case time.Since(a.at) >= compactConfirm:
		case bytes.Compare(a.lo, r.hi) < 0 && bytes.Compare(r.lo, a.hi) < 0:
			confirmed = true
		default:
			keep = append(keep, a)
		}
	}
	c.asked = keep
	if !confirmed {
		c.asked = append(c.asked, compacted{r, time.Now()})
		return false
	}
	keep = c.recent[:0]
	for _, done := range c.recent {
		if time.Since(done.at) < compactAgainAfter {
			keep = append(keep, done)
		}
	}
	c.recent = keep
	for _, done := range c.recent {
		if time.Since(done.at) < compactPause ||
			bytes.Compare(done.lo, r.lo) <= 0 && bytes.Compare(r.hi, done.hi) <= 0 {
			return false
		}
	}
	return true
}

// Compactions is how many ranges reads had compacted.
func (s *Store) Compactions() int64 { return s.compactor.runs.Load() }

// CacheSize reports, roughly, what the metadata cache's entries and its
// member memos take in memory (INFO memory).
func (s *Store) CacheSize() (entries, memos int64) { return s.cache.size() }

// noteSkipped asks for the part of [lower, upper) that it iterated over
// to be compacted if it stepped over many entries it did not return:
// deletions, and older versions of entries.
func (s *Store) noteSkipped(it *pebble.Iterator, lower, upper []byte) {
	st := it.Stats()
	forward := st.ForwardStepCount[pebble.InterfaceCall] + st.ForwardSeekCount[pebble.InterfaceCall]
	reverse := st.ReverseStepCount[pebble.InterfaceCall] + st.ReverseSeekCount[pebble.InterfaceCall]
	if st.InternalStats.PointCount < uint64(forward+reverse)+compactAfterSkipped || upper == nil {
		return
	}
	r := keyRange{append([]byte(nil), lower...), append([]byte(nil), upper...)}
	if it.Valid() { // stopped early: what it read is on one side
		if reverse == 0 {
			r.hi = append(append(r.hi[:0], it.Key()...), 0)
		} else if forward == 0 {
			r.lo = append(r.lo[:0], it.Key()...)
		}
	}
	select {
	case s.compactor.hints <- r:
	default: // busy: the next read that steps over them asks again
	}
}
