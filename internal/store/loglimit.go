package store

import (
	"sync"
	"time"
)

// LogLimit lets a log line that can come many times a second (a write
// stall, a slow fsync, a refused client) be written at most once per
// Period, and counts the ones left out meanwhile for the next line. The
// shard and the server use it too.
type LogLimit struct {
	Period time.Duration

	mu     sync.Mutex
	last   time.Time
	missed int
}

// Allow reports whether to log now, and how many lines it left out since
// the last one it allowed.
func (l *LogLimit) Allow() (missed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now(); l.last.IsZero() || now.Sub(l.last) >= l.Period {
		missed, l.missed, l.last = l.missed, 0, now
		return missed, true
	}
	l.missed++
	return 0, false
}
