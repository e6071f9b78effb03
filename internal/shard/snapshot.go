package shard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"basalt/internal/raftlog"
	"basalt/internal/store"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Raft snapshots, for members that need entries the log no longer has (a
// new member needs all of them: the log starts after the bootstrap
// snapshot, which does not name it).
//
// Leader. When raft asks for a snapshot (snapStorage), the apply loop pins
// a Pebble snapshot of the store at its applied index and records a Raft
// snapshot at that index whose Data is only a descriptor. When raft sends
// it, the transport streams a dump of the pinned store after the MsgSnap,
// in chunks (transport/snapshot.go); raft learns the outcome from
// ReportSnapshot and sends it again if it failed. A pinned snapshot nobody
// streamed for snapIdle is released, and raft asks for a new one when it
// needs one.
//
// Follower. The stream goes to sstables in a temporary directory under
// DIR/raft/snapshots, synced, then renamed to the snapshot's index; only
// then is the MsgSnap handed to raft, which records it in the log. The
// apply loop then replaces the store with the tables in one atomic Pebble
// step (ingest and excise), applied index included, and removes the
// directory. If the process stops after raft recorded the snapshot and
// before the store has it, the log starts after the store's applied index:
// the next start installs the snapshot from its directory before raft
// runs (finishInstall).

// snapFormat is the first byte of a snapshot descriptor: the data is a
// store dump streamed after the MsgSnap.
const snapFormat = 1

// snapIdle is how long a pinned store snapshot is kept without a stream.
const snapIdle = time.Minute

// descriptor is the Data of a Raft snapshot at index.
func descriptor(index uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{snapFormat}, index)
}

// streamed reports whether snap's Data is a descriptor of its own index.
func streamed(snap *raftpb.Snapshot) bool {
	d := snap.Data
	return len(d) == 9 && d[0] == snapFormat && binary.BigEndian.Uint64(d[1:]) == snap.Metadata.Index
}

// snapSource is the store snapshot the leader's Raft snapshot streams from.
type snapSource struct {
	mu    sync.Mutex
	index uint64
	snap  *store.Snapshot // nil: none
	used  time.Time       // when it was pinned or last streamed
}

// pin makes snap, taken at index, the one to stream, releasing the last.
func (ss *snapSource) pin(index uint64, snap *store.Snapshot) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.releaseLocked()
	ss.index, ss.snap, ss.used = index, snap, time.Now()
}

// has reports whether the snapshot at index is pinned.
func (ss *snapSource) has(index uint64) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.snap != nil && ss.index == index
}

// dump opens a dump of the snapshot at index. The dump reads what it read
// when opened even if the snapshot is released, or the store replaced, in
// the meantime (see store.Dump): opening it under the lock that release
// takes keeps an install from slipping in between.
func (ss *snapSource) dump(index uint64) (*store.Dump, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.snap == nil || ss.index != index {
		return nil, fmt.Errorf("snapshot %d is no longer pinned", index)
	}
	ss.used = time.Now()
	return ss.snap.Dump()
}

// release drops the pinned snapshot.
func (ss *snapSource) release() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.releaseLocked()
}

func (ss *snapSource) releaseLocked() {
	if ss.snap != nil {
		ss.snap.Close()
		ss.snap = nil
	}
}

// expire drops the pinned snapshot if nothing streamed it for idle.
func (ss *snapSource) expire(idle time.Duration) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.snap != nil && time.Since(ss.used) > idle {
		ss.releaseLocked()
	}
}

// snapStorage is the Raft log as raft sees it: when raft needs a snapshot
// and the one recorded is not pinned (or the log has moved past it), the
// apply loop is asked to take one, and raft tries again later.
type snapStorage struct {
	*raftlog.Storage
	s *Shard
}

func (st snapStorage) Snapshot() (raftpb.Snapshot, error) {
	snap, err := st.Storage.Snapshot()
	if err != nil {
		return snap, err
	}
	first, _ := st.FirstIndex()
	if snap.Metadata.Index+1 >= first && streamed(&snap) && st.s.snaps.has(snap.Metadata.Index) {
		return snap, nil
	}
	if st.s.snapWanted.CompareAndSwap(false, true) {
		select {
		case st.s.events <- event{snapshot: true}:
		default:
			st.s.snapWanted.Store(false) // asked again next time
		}
	}
	return raftpb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
}

// snapshot pins the store at the applied index and records it as the
// Raft snapshot (in the apply loop, where the store holds exactly the
// entries up to the applied index).
func (s *Shard) snapshot() {
	defer s.snapWanted.Store(false)
	idx := s.applied.Load()
	snap := s.st.Snapshot()
	// The log is safe for concurrent use; raft reads the snapshot from it.
	if _, err := s.node.log.CreateSnapshot(idx, nil, descriptor(idx)); err != nil {
		rec, _ := s.node.log.Snapshot()
		if !errors.Is(err, raft.ErrSnapOutOfDate) || rec.Metadata.Index != idx || !streamed(&rec) {
			if !errors.Is(err, raft.ErrSnapOutOfDate) {
				slog.Error("snapshot: recording it", "index", idx, "err", err)
			}
			snap.Close()
			return
		}
		// Recorded before a restart, with nothing applied since: the
		// store is still that snapshot.
	}
	s.snaps.pin(idx, snap)
}

// streamSnapshot writes the data of the snapshot m sends (the transport's
// SnapshotSource).
func (s *Shard) streamSnapshot(m raftpb.Message, w io.Writer) error {
	d, err := s.snaps.dump(m.Snapshot.Metadata.Index)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	n, err := d.WriteTo(w)
	if err != nil {
		slog.Warn("sending a raft snapshot", "to", m.To, "index", m.Snapshot.Metadata.Index, "bytes", n, "err", err)
		return err
	}
	s.Stats.SnapshotsSent.Add(1)
	slog.Info("streamed a raft snapshot", "to", m.To, "index", m.Snapshot.Metadata.Index, "bytes", n, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// snapRoot is where received snapshots are kept.
func (s *Shard) snapRoot() string { return filepath.Join(s.cfg.RaftDir, "snapshots") }

// snapDir is the directory of the received snapshot at index.
func (s *Shard) snapDir(index uint64) string {
	return filepath.Join(s.snapRoot(), fmt.Sprintf("%016x", index))
}

// receiveSnapshot stores the data of the snapshot m carries, read from r,
// as sstables in its directory (the transport's SnapshotSink). It returns
// once they are durable; the transport then hands m to raft.
func (s *Shard) receiveSnapshot(m raftpb.Message, r io.Reader) error {
	if !streamed(m.Snapshot) {
		return errors.New("unknown snapshot format")
	}
	idx := m.Snapshot.Metadata.Index
	final := s.snapDir(idx)
	if _, err := os.Stat(final); err == nil || idx <= s.applied.Load() {
		// Held already (a copy sent again): raft answers the MsgSnap
		// from what it has.
		_, err := io.Copy(io.Discard, r)
		return err
	}
	start := time.Now()
	tmp, err := os.MkdirTemp(s.snapRoot(), fmt.Sprintf("%016x.tmp-", idx))
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	n, err := s.st.WriteSnapshotTables(r, tmp)
	if err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr == nil {
			return nil // another copy got there first
		}
		return err
	}
	if err := syncDir(s.snapRoot()); err != nil {
		return err
	}
	s.Stats.SnapshotsReceived.Add(1)
	slog.Info("received a raft snapshot", "index", idx, "entries", n, "took", time.Since(start).Round(time.Millisecond))
	crashPoint("snapshot-received")
	return nil
}

// installSnapshot replaces the store with a snapshot raft took (in the
// apply loop, after the log recorded it).
func (s *Shard) installSnapshot(snap *raftpb.Snapshot) {
	m := snap.Metadata
	if m.Index <= s.applied.Load() {
		s.removeSnapshots(s.applied.Load())
		return
	}
	s.drop(ErrUnknownOutcome)
	if err := s.install(snap); err != nil {
		s.storeFailed(fmt.Errorf("installing snapshot %d: %w", m.Index, err))
		return
	}
	s.setApplied(m.Index, m.Term)
}

// install loads a received snapshot into the store and removes its files.
func (s *Shard) install(snap *raftpb.Snapshot) error {
	if !streamed(snap) {
		return errors.New("unknown snapshot format")
	}
	idx := snap.Metadata.Index
	// This node's own pinned snapshot would lose its data to the install
	// (dumps already open keep theirs).
	s.snaps.release()
	crashPoint("snapshot-install")
	start := time.Now()
	if err := s.st.InstallSnapshot(s.snapDir(idx), idx); err != nil {
		return err
	}
	crashPoint("snapshot-installed")
	s.removeSnapshots(idx)
	slog.Info("installed a raft snapshot", "index", idx, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// finishInstall runs before raft starts: if the log starts after the
// store's applied index, the process stopped after raft recorded a
// snapshot and before the store had it, and the snapshot is installed now
// from its directory. Leftovers of earlier transfers are removed.
func (s *Shard) finishInstall(lg *raftlog.Storage) error {
	if err := os.MkdirAll(s.snapRoot(), 0o755); err != nil {
		return err
	}
	snap, err := lg.Snapshot()
	if err != nil {
		return err
	}
	first, _ := lg.FirstIndex()
	idx := snap.Metadata.Index
	// A snapshot without data (the bootstrap's) only carries the
	// configuration: there is nothing to install.
	if applied := s.applied.Load(); idx+1 == first && idx > applied && len(snap.Data) > 0 {
		slog.Info("finishing the install of a raft snapshot", "index", idx, "store_applied", applied)
		if err := s.install(&snap); err != nil {
			return fmt.Errorf("the raft log starts after snapshot %d, which the store (at %d) does not hold, and installing it failed: %w", idx, applied, err)
		}
		s.applied.Store(idx)
		s.compacted = idx
	}
	ents, err := os.ReadDir(s.snapRoot())
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			os.RemoveAll(filepath.Join(s.snapRoot(), e.Name())) // a transfer cut short
		}
	}
	s.removeSnapshots(s.applied.Load())
	return nil
}

// removeSnapshots removes the received snapshots at or below index: the
// store holds them (or newer state).
func (s *Shard) removeSnapshots(index uint64) {
	ents, _ := os.ReadDir(s.snapRoot())
	for _, e := range ents {
		if i, err := strconv.ParseUint(e.Name(), 16, 64); err == nil && i <= index {
			if err := os.RemoveAll(filepath.Join(s.snapRoot(), e.Name())); err != nil {
				slog.Error("removing an installed snapshot", "dir", e.Name(), "err", err)
			}
		}
	}
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// crashAt, from the environment variable BASALT_CRASH_AT, names a point
// of a snapshot's transfer or install where the process kills itself: the
// crash tests' hook ("snapshot-received", "snapshot-install",
// "snapshot-installed"). It is never set in production.
var crashAt = os.Getenv("BASALT_CRASH_AT")

func crashPoint(name string) {
	if crashAt != name {
		return
	}
	slog.Warn("BASALT_CRASH_AT: killing the process", "at", name)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	time.Sleep(time.Minute) // the signal is on its way
}
