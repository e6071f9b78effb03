package shard

import (
	"errors"
	"log/slog"
	"time"
)

// A full disk. Pebble does not fail a write when the disk fills up: its
// flushes fail and are retried, the memtables fill, and every write then
// stalls until space returns, silently. So the shard watches the free space
// of the log's file system itself and, below diskReserve, refuses new
// writes at once with ErrDiskFull (Redis's MISCONF) while reads go on. The
// reserve leaves Pebble room to flush and compact what is already
// acknowledged. Writes resume by themselves once the space is back; writes
// already in flight when the disk filled wait and complete then, so
// nothing acknowledged is lost.
const (
	// diskReserve is the free space below which writes are refused: room
	// for the memtables of the store and the log to be flushed (8 MB each,
	// two of them) and the compactions after.
	diskReserve = 64 << 20
	// diskResume is the free space at which they are taken again: above
	// the reserve, so that a compaction's temporary files don't make
	// writes come and go.
	diskResume = diskReserve + diskReserve/4
	// diskCheckEvery is how often the free space is looked at.
	diskCheckEvery = 100 * time.Millisecond
	// diskLogEvery is how often a disk that stays full is logged again.
	diskLogEvery = time.Minute
)

// ErrDiskFull refuses a write while the disk is full, in Redis's words for
// a failed AOF write.
var ErrDiskFull = errors.New("MISCONF Errors writing to the data directory: No space left on device. Writes are refused until space is freed; reads go on")

// DiskFull reports whether writes are refused for want of disk space.
func (s *Shard) DiskFull() bool { return s.diskFull.Load() }

// watchDisk checks the free space until the shard closes.
func (s *Shard) watchDisk() {
	t := time.NewTicker(diskCheckEvery)
	defer t.Stop()
	var logged time.Time
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		free, ok := freeSpace(s.cfg.RaftDir)
		if !ok {
			continue
		}
		wasFull := s.diskFull.Load()
		switch {
		case !wasFull && free < diskReserve:
			s.diskFull.Store(true)
			slog.Error("disk full: refusing writes until space is freed (reads go on)", "dir", s.cfg.RaftDir, "free_bytes", free, "reserve_bytes", diskReserve)
			logged = time.Now()
		case wasFull && free >= diskResume:
			s.diskFull.Store(false)
			slog.Info("disk space is back: accepting writes", "dir", s.cfg.RaftDir, "free_bytes", free)
		case wasFull && time.Since(logged) >= diskLogEvery:
			slog.Error("disk still full: refusing writes", "dir", s.cfg.RaftDir, "free_bytes", free, "resume_at_bytes", diskResume)
			logged = time.Now()
		}
	}
}

// A slow disk. With appendfsync always every write's reply waits for a
// sync of the log, so a slow one is worth a line; one that holds up the
// log past slowSave also holds up Raft's heartbeats (nothing else runs on
// the goroutine that saves), and past the election timeout followers
// elect a new leader.
const (
	slowSync     = 100 * time.Millisecond
	slowSave     = 500 * time.Millisecond
	slowLogEvery = 10 * time.Second // a disk that stays slow, once per this
)

// synced records a sync of the log that took took: its latency for INFO
// and /metrics, and a line when the disk was slow.
func (s *Shard) synced(took time.Duration) {
	s.Stats.Syncs.Add(1)
	s.Stats.SyncSeconds.Observe(took.Seconds())
	switch {
	case took > slowSave:
		s.heldUp(took)
	case took > slowSync:
		if missed, ok := s.slowSyncs.Allow(); ok {
			slog.Info("raft: slow fsync of the log", "took", took.Round(time.Millisecond), "slow_since_last_line", missed)
		}
	}
}

// heldUp logs a save of the log that took past slowSave.
func (s *Shard) heldUp(took time.Duration) {
	if missed, ok := s.stalledLog.Allow(); ok {
		slog.Warn("raft: a slow disk held up the log", "took", took.Round(time.Millisecond), "slow_since_last_line", missed)
	}
}
