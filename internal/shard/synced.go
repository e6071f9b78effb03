package shard

import (
	"sync"

	"go.etcd.io/raft/v3"
)

// What of the log is on disk: WAITAOF's numlocal. With appendfsync always
// every save of the log is synced before the entries it holds can commit,
// so everything applied is synced; under everysec the syncer's sync
// covers what was saved before it began; under no, nothing is known to
// be on disk (the OS writes it when it likes), as in Redis.
type syncMark struct {
	mu     sync.Mutex
	saved  uint64 // the last index saved to the log
	synced uint64 // the last index known on disk
	gen    uint64 // changes when saved entries are replaced (a new leader's)
}

// logSaved records a save of rd's snapshot and entries, synced or not.
// Entries replacing others from an index on (a follower's uncommitted
// suffix a new leader overwrote) bring the synced mark back below them.
func (m *syncMark) logSaved(rd *raft.Ready, synced bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !raft.IsEmptySnap(rd.Snapshot) {
		m.gen++
		m.saved = rd.Snapshot.Metadata.Index
		m.synced = min(m.synced, m.saved)
	}
	if k := len(rd.Entries); k > 0 {
		if first := rd.Entries[0].Index; first <= m.saved {
			m.gen++
			m.synced = min(m.synced, first-1)
		}
		m.saved = rd.Entries[k-1].Index
	}
	if synced {
		m.synced = m.saved
	}
}

// beforeSync returns what a sync starting now covers, for afterSync.
func (m *syncMark) beforeSync() (saved, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saved, m.gen
}

// afterSync records a sync that began when beforeSync answered saved and
// gen, unless saved entries were replaced since.
func (m *syncMark) afterSync(saved, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen == m.gen && saved > m.synced {
		m.synced = saved
	}
}

func (m *syncMark) get() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.synced
}

// Synced reports whether this node's log holds entry index on disk (a
// sync of the log covered it): WAITAOF's local fsync. Index 0 (a client
// that wrote nothing) always is.
func (s *Shard) Synced(index uint64) bool { return s.syncMark.get() >= index }
