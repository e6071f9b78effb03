package shard

import (
	"testing"
	"time"

	"basalt/internal/clock"
)

// A clock that jumps ahead after the last check moves record time no
// further than the bound past what the monotonic clock carried forward;
// one that goes back leaves it where it was.
func TestRecordTimeAfterAJump(t *testing.T) {
	s := &Shard{}
	now := clock.UnixMilli()
	s.clockAnchor.Store(&clockAnchor{wall: now, mono: time.Now()})
	t.Cleanup(func() { clock.SetOffset(0) })

	clock.SetOffset(time.Hour)
	if got, bound := s.clock(), now+500+100; got > bound {
		t.Fatalf("an hour's jump ahead: record time %d, bound %d", got-now, bound-now)
	}
	clock.SetOffset(-time.Hour)
	before := s.lastTime
	if got := s.clock(); got != before {
		t.Fatalf("an hour's jump back: record time went from %d to %d", before, got)
	}
	SetMaxClockOffset(0) // the check off: the clock as it is
	t.Cleanup(func() { SetMaxClockOffset(500 * time.Millisecond) })
	clock.SetOffset(time.Hour)
	if got := s.clock(); got < now+time.Hour.Milliseconds() {
		t.Fatalf("without a bound, record time %d ms after the anchor, want an hour", got-now)
	}
}
