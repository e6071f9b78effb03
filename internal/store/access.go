package store

import (
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// accessClock remembers when keys were last used, for OBJECT IDLETIME. It
// lives in memory, like Redis's LRU clock, so a read stays a read: a fixed
// table of seconds indexed by a hash of the key. Keys that share a slot
// share a time, so a key may look more recently used than it was, never
// less. After a restart every key counts as used at startup, as Redis's
// keys do after loading.
type accessClock struct {
	slots []atomic.Uint32 // unix seconds; 0 = not since start; a power of two
	start int64           // unix ms
}

// DefaultAccessSlots is the size of a store's table of last uses: 4 MB.
// A node's shards divide it, as they divide the caches: every Touch is a
// cache miss in it, and 8 tables of 4 MB missed the CPU caches more often
// than one.
const DefaultAccessSlots = 1 << 20

func (a *accessClock) slot(phys int, key []byte) *atomic.Uint32 {
	h := xxhash.Sum64(key) ^ uint64(phys)*0x9e3779b97f4a7c15
	return &a.slots[h&(uint64(len(a.slots))-1)]
}

// Touch records that key was used at now (unix ms).
func (s *Store) Touch(db int, key []byte, now int64) {
	a := &s.access
	slot, sec := a.slot((*s.dbMap.Load())[db], key), uint32(now/1000)
	// Stored only when the second changes: a hot key read from several
	// cores would otherwise move the slot's cache line at every command.
	if slot.Load() != sec {
		slot.Store(sec)
	}
}

// IdleSeconds is the time since key was last used, for OBJECT IDLETIME.
func (t *Tx) IdleSeconds(key []byte) int64 {
	a := &t.st.access
	used := a.start / 1000
	if v := a.slot(t.phys(), key).Load(); v > 0 {
		used = int64(v)
	}
	// Whole seconds of the clock, as Redis's LRU clock counts them.
	return max(t.Now/1000-used, 0)
}

// SetIdle makes key look last used idle seconds before the Tx's time, for
// RESTORE ... IDLETIME (as Redis sets the key's LRU clock).
func (t *Tx) SetIdle(key []byte, idle int64) {
	used := max(t.Now/1000-idle, 1) // 0 would mean "not used since start"
	t.st.access.slot(t.phys(), key).Store(uint32(min(used, int64(^uint32(0)))))
}
