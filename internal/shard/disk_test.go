package shard

import (
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// A sync of the log over slowSync is logged at notice with its duration,
// once per slowLogEvery; one over slowSave at warning; fast ones not at
// all. Every one is counted.
func TestSlowSyncLog(t *testing.T) {
	buf := testutil.CaptureLog(t)

	s := &Shard{}
	s.Stats.SyncSeconds = newHistogram(syncBounds...)
	s.slowSyncs.Period, s.stalledLog.Period = slowLogEvery, slowLogEvery
	for _, took := range []time.Duration{time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 700 * time.Millisecond} {
		s.synced(took)
	}
	if n := s.Stats.Syncs.Load(); n != 4 {
		t.Errorf("%d syncs counted, want 4", n)
	}
	text := buf.String()
	if strings.Count(text, "raft: slow fsync of the log") != 1 || !strings.Contains(text, "level=INFO msg=\"raft: slow fsync of the log\" took=150ms") ||
		strings.Count(text, "raft: a slow disk held up the log") != 1 || !strings.Contains(text, "level=WARN msg=\"raft: a slow disk held up the log\" took=700ms") {
		t.Errorf("want one notice line of 150ms and one warning of 700ms:\n%s", text)
	}
}
