package server

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"basalt/internal/clock"
	"basalt/internal/shard"
)

// applyClock applies cluster-max-clock-offset and debug-clock-offset-ms.
func applyClock(c Config) {
	shard.SetMaxClockOffset(time.Duration(c.MaxClockOffset) * time.Millisecond)
	clock.SetOffset(time.Duration(c.DebugClockOffset) * time.Millisecond)
}

// clockInfo is INFO's clock lines (replication section): the bound, the
// largest offset measured from a peer and each peer's, and whether the
// clock lets this node lead (see internal/shard/clock.go).
func (s *Server) clockInfo(add func(k string, v any)) {
	sh := s.group()
	offsets := sh.ClockOffsets()
	var largest time.Duration
	for _, o := range offsets {
		if o.Offset.Abs() > largest.Abs() {
			largest = o.Offset
		}
	}
	add("raft_clock_max_offset_ms", s.config().MaxClockOffset)
	add("raft_clock_offset_ms", ms(largest))
	why := sh.ClockRefusal()
	add("raft_clock_may_lead", b2i(why == ""))
	if why != "" {
		add("raft_clock_refusal", why)
	}
	for _, id := range slices.Sorted(maps.Keys(offsets)) {
		o := offsets[id]
		add(fmt.Sprintf("raft_clock_peer%d", id), fmt.Sprintf("offset_ms=%s,rtt_ms=%s", ms(o.Offset), ms(o.RTT)))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()*1000) }
