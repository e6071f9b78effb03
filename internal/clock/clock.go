// Package clock is a node's wall clock: what record times, expiry checks,
// TIME and the clock probes between nodes read. A test may shift it
// (debug-clock-offset-ms) to play a node whose clock is wrong.
package clock

import (
	"sync/atomic"
	"time"
)

var offset atomic.Int64 // nanoseconds added to the system clock

// Now is the system clock plus the test offset.
func Now() time.Time {
	if o := offset.Load(); o != 0 {
		return time.Now().Add(time.Duration(o))
	}
	return time.Now()
}

// UnixMilli is Now in Unix milliseconds.
func UnixMilli() int64 { return Now().UnixMilli() }

// SetOffset shifts this process's clock by d. For tests.
func SetOffset(d time.Duration) { offset.Store(int64(d)) }

// Offset is the shift SetOffset set.
func Offset() time.Duration { return time.Duration(offset.Load()) }
