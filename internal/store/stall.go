package store

import (
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// stallLogEvery is how often a write stall is logged: under a write load
// that outruns compactions Pebble stalls and releases writes many times a
// second.
const stallLogEvery = 10 * time.Second

// stalls counts and logs Pebble's write stalls: while one lasts, every
// write to the store (and so every client's write) waits for a flush or
// a compaction.
type stalls struct {
	limit LogLimit

	mu     sync.Mutex
	count  int64
	began  time.Time
	logged bool // the stall under way was logged: log its end too
}

// WriteStalls counts the times Pebble has stalled writes since the start.
func (s *Store) WriteStalls() int64 {
	s.stalls.mu.Lock()
	defer s.stalls.mu.Unlock()
	return s.stalls.count
}

func (st *stalls) listener() pebble.EventListener {
	return pebble.EventListener{
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			missed, ok := st.limit.Allow()
			st.mu.Lock()
			st.count++
			st.began, st.logged = time.Now(), ok
			st.mu.Unlock()
			if ok {
				slog.Info("pebble: writes stalled", "reason", info.Reason, "stalls_since_last_line", missed)
			}
		},
		WriteStallEnd: func() {
			st.mu.Lock()
			took, logged := time.Since(st.began), st.logged
			st.logged = false
			st.mu.Unlock()
			if logged {
				slog.Info("pebble: writes resumed", "stalled_for", took.Round(time.Millisecond))
			}
		},
	}
}
