package store

import (
	"encoding/binary"
	"math/rand/v2"
)

// Member memos. A point read of a collection member (a hash field, a set
// member, a sorted set member's score, a rank count) searches Pebble's
// memtables and levels: about 2 us, the largest cost of HINCRBY, ZINCRBY or
// HGET on a key that the last few memtables no longer hold, and of HSET,
// SADD or ZADD, which look a member up before they write it. Member reads
// keep what they find with the key's metadata cache entry, and the commits
// keep it current, so the next read of the member finds it in memory, as a
// Redis user expects of a hot object.
//
// What keeps a memo true:
//   - Every write Tx logs its member writes (memberOps) in order, and its
//     commit applies them to the memos of their keys while the store's
//     commit counter is odd: a point write updates its member's memo (and
//     adds one, for a hash or a set), a range deletion drops all of its
//     key's memos, and a key whose writes were not logged loses its memos.
//     A key that is deleted or changes type loses its members by a range
//     deletion, and its entry drops its memos when the key no longer
//     exists (cacheShard.put).
//   - Some members never have memos (memoType: a stream's entries, say),
//     so their point writes need not be logged. A memo is kept only if
//     both the committed type (its cache entry's) and the type the Tx's
//     last lookup of the key found, if it was the last lookup, allow it.
//     A key's type changes without a deletion of its members only from
//     an inline string, which has no memos.
//   - A write Tx reads member k of a key from its chain's writes first:
//     the last logged write of k by it or an uncommitted Tx before it
//     (memberAt), or its own held member. Only if none of them wrote k may
//     it use or fill k's memo, and only if none of them wrote members of
//     the key that were not logged, deleted a range of the key's members
//     or of several keys, or flushed (memberDirty): then what the view
//     holds for k is committed state, which is what the memos hold. Only
//     the apply loop commits, so nothing commits while one of its Txs
//     reads.
//   - A live read Tx uses and fills memos only while no commit came since
//     its metadata lookup (as chunk memos: chunks.go), checked under the
//     entry's shard lock, which a commit takes to change the memos.
//   - Snapshot reads never use them: a memo may be newer than the snapshot.
//
// Memos are a cache: dropping any of them at any time is safe. They have a
// budget of their own (memoShare of the metadata cache) across all keys,
// so that a big hot collection can keep most of its members; one key takes
// at most half of it, and when it is full the next commit drops whole
// keys' memos, from a random shard on, to make room. A collection that
// does not fit is read from Pebble as before.

const (
	memberMemoValueMax = 512 // larger members are left to Pebble's block cache
	memberIndexFrom    = 32  // memos from which a key's memos are indexed by a map
	memberMemoCost     = 128 // slice slot (as it grows), index slot and headers, beyond sub and value bytes
	memberLogMax       = 1 << 20
	memoShare          = 4 // the memos may take a quarter of what the cache holds, beyond it
)

// memberMemo is a member's value (found) or its absence. A key's memos are
// a slice, searched in order while it is short (a few compares cost less
// than a map's hashing and its cache misses), through an index by sub
// (memberIdx) from memberIndexFrom memos on.
type memberMemo struct {
	sub   string
	value []byte
	found bool
}

// member returns the index of sub's memo in e, or -1.
func (e *cacheEntry) member(sub []byte) int {
	if e.memberIdx != nil {
		if i, ok := e.memberIdx[string(sub)]; ok {
			return int(i)
		}
		return -1
	}
	for i := range e.members {
		if e.members[i].sub == string(sub) {
			return i
		}
	}
	return -1
}

// appendMember adds m to e's memos, indexing them once there are many.
func (e *cacheEntry) appendMember(m memberMemo) {
	e.members = append(e.members, m)
	switch n := len(e.members); {
	case e.memberIdx != nil:
		e.memberIdx[m.sub] = int32(n - 1)
	case n >= memberIndexFrom:
		e.memberIdx = make(map[string]int32, 2*n)
		for i := range e.members {
			e.memberIdx[e.members[i].sub] = int32(i)
		}
	}
}

// deleteMember removes e's memo i: the last one takes its place.
func (e *cacheEntry) deleteMember(i int) {
	last := len(e.members) - 1
	if e.memberIdx != nil {
		delete(e.memberIdx, e.members[i].sub)
		if i != last {
			e.memberIdx[e.members[last].sub] = int32(i)
		}
	}
	e.members[i] = e.members[last]
	e.members[last] = memberMemo{}
	e.members = e.members[:last]
}

// Member write kinds, in memberOp.
const (
	memberSet    = iota
	memberDel    // the member was deleted
	memberForget // the member was set to a value too big to keep
	memberRange  // members from k on were deleted: the key's memos go
)

// memberOp is a member write of a Tx: k and v are offsets in the Tx's
// memberBuf, so logging a write allocates nothing.
type memberOp struct {
	kind      uint8
	k, v      [2]int32
	ownerSize int32       // the length of k's key prefix (ownerLen); 0: no single key
	ref       *cacheEntry // the key's cache entry, if the Tx had it at hand
}

// ownerLen returns the length of the member prefix of key k (the member's
// key without its sub key), or 0 if k is not within one key's members.
func ownerLen(k []byte) int {
	if len(k) < metaKeyPrefix+4 || k[0] != prefixMember {
		return 0
	}
	n := metaKeyPrefix + 4 + int(binary.BigEndian.Uint32(k[metaKeyPrefix:]))
	if n > len(k) {
		return 0
	}
	return n
}

// ownerMetaKey writes the metadata key of the key whose member prefix is p.
func ownerMetaKey(buf, p []byte) []byte {
	buf = append(buf[:0], prefixMeta)
	buf = append(buf, p[1:metaKeyPrefix]...)
	return append(buf, p[metaKeyPrefix+4:]...)
}

// logMember records a member write for the memos (for memberRange, k and
// v are the range's bounds) and marks its key as written by this Tx. The
// writes of a list, which point reads seldom look up again, are not
// logged: the commit drops their key's memos instead (as it does for a Tx
// that writes too much to log, such as a RESTORE of a big collection).
// The writes of a stream's entries, trims included, are not logged
// either, and cost nothing: they never have memos (memoType).
func (t *Tx) logMember(kind uint8, k, v []byte) {
	if k[0] != prefixMember {
		return
	}
	n := t.markMemberDirty(k)
	if n == 0 {
		return
	}
	owner := k[:n]
	ok, known := t.memoKind(owner, k[n:])
	if !ok && known && t.last.m.Type == TypeStream && (kind != memberRange || streamRangeUnmemoed(k[n:], v, owner)) {
		return // members that never have memos (memoType)
	}
	if kind == memberRange {
		v = nil
	}
	if !ok || len(t.memberBuf) > memberLogMax {
		t.memberDirty[string(owner)] |= dirtyUnlogged
		return
	}
	if kind == memberSet && len(v) > memberMemoValueMax {
		kind, v = memberForget, nil
	}
	op := memberOp{kind: kind, ownerSize: int32(n), ref: t.ownerRef(owner)}
	op.k = t.memberBufAdd(k)
	op.v = t.memberBufAdd(v)
	if kind == memberRange {
		t.memberDirty[string(owner)] |= dirtyRange
	} else {
		if t.memberAt == nil {
			t.memberAt = memberAtMaps.Get().(map[string]int32)
		}
		t.memberAt[string(k)] = int32(len(t.memberOps))
	}
	t.memberOps = append(t.memberOps, op)
}

// streamRangeUnmemoed reports whether a deletion of a stream's members
// from sub key lo to member key hi (an XTRIM of its entries) covers only
// members that never have memos: those whose sub keys start with a byte
// from lo's first to hi's, none of them a tag MemoStreamMembers named.
func streamRangeUnmemoed(lo, hi, owner []byte) bool {
	if len(lo) == 0 || len(hi) <= len(owner) || string(hi[:len(owner)]) != string(owner) {
		return false
	}
	for b := int(lo[0]); b <= int(hi[len(owner)]); b++ {
		if streamMemoTags[b] {
			return false
		}
	}
	return true
}

// memberDirty flags, by key: what the Tx wrote of its members beyond
// logged point writes.
const (
	dirtyUnlogged = 1 << iota // writes not logged: the commit drops the key's memos
	dirtyRange                // a range deletion: the chain's reads of the key skip its memos
)

// markMemberDirty marks the key of member k as written by this Tx (all
// keys, if k is not within one key's members) and returns the length of
// its member prefix. A held member is marked when it is held, before its
// write reaches the batch.
func (t *Tx) markMemberDirty(k []byte) int {
	n := ownerLen(k)
	if n == 0 {
		t.memberDirtyAll = true
		return 0
	}
	if t.memberDirty == nil {
		t.memberDirty = memberDirtyMaps.Get().(map[string]uint8)
	}
	if _, ok := t.memberDirty[string(k[:n])]; !ok {
		t.memberDirty[string(k[:n])] = 0
	}
	return n
}

func (t *Tx) memberBufAdd(b []byte) [2]int32 {
	from := int32(len(t.memberBuf))
	t.memberBuf = append(t.memberBuf, b...)
	return [2]int32{from, int32(len(t.memberBuf))}
}

func (t *Tx) memberBufAt(s [2]int32) []byte { return t.memberBuf[s[0]:s[1]:s[1]] }

// chainMember finds member k (of the key whose member prefix is k[:n]) in
// the writes of this Tx and of the uncommitted ones before it in its
// chain: written says one of them wrote it (op, from x's log, is its last
// write, or nil if the write was not logged or is held), and usable,
// when nothing did, whether k's memo holds what the view holds (see the
// conditions above).
func (t *Tx) chainMember(k []byte, n int) (op *memberOp, x *Tx, written, usable bool) {
	if len(t.held) > 0 && t.held[string(k)] != nil {
		return nil, nil, true, false
	}
	for x = t; x != nil && !x.committed; x = x.prev {
		if x.memberDirtyAll || x.flushed || x.memberDirty[string(k[:n])] != 0 {
			return nil, nil, false, false
		}
		if i, ok := x.memberAt[string(k)]; ok {
			return &x.memberOps[i], x, true, false
		}
	}
	return nil, nil, false, true
}

// memoKind reports whether member sub of the key whose member prefix is
// owner may have a memo (ok), as far as the Tx's last metadata lookup
// tells (known: the lookup was of this key).
func (t *Tx) memoKind(owner, sub []byte) (ok, known bool) {
	if !t.isLastKey(owner) {
		return true, false
	}
	return memoType(t.last.m.Type, sub), true
}

// memoType reports whether member sub of a key of type typ may have a
// memo: not a list's members or a string's chunks, which are read by
// iterations or right after a write, so memos would only cost; of a
// stream, only the members that point reads look up again (the members
// MemoStreamMembers names), never its entries.
func memoType(typ Type, sub []byte) bool {
	switch typ {
	case TypeList, TypeString:
		return false
	case TypeStream:
		return len(sub) > 0 && streamMemoTags[sub[0]]
	}
	return true
}

// streamMemoTags are the first bytes of the stream members that may have
// memos.
var streamMemoTags [256]bool

// MemoStreamMembers names, by the first byte of their sub keys, the
// members of a stream that point reads look up again soon after they are
// written (a consumer group's record, its consumers and its pending
// entries, which XACK reads): only they may have memos. No memo of a
// stream's other members ever exists, so their writes need not be logged
// for the memos, and do not cost the stream its memos. Call it before the
// store is used.
func MemoStreamMembers(tags string) {
	for i := range len(tags) {
		streamMemoTags[tags[i]] = true
	}
}

// isLastKey reports whether owner is the member prefix of the key of the
// Tx's last metadata lookup.
func (t *Tx) isLastKey(owner []byte) bool {
	mk := t.last.mk
	return len(owner) > 0 && len(mk) == len(owner)-4 &&
		string(mk[1:metaKeyPrefix]) == string(owner[1:metaKeyPrefix]) &&
		string(mk[metaKeyPrefix:]) == string(owner[metaKeyPrefix+4:])
}

// ownerRef returns the cache entry of the key whose member prefix is
// owner if the Tx's last metadata lookup found it (nil: search the cache):
// a command reads a key's metadata before its members, so the entry is at
// hand without a search of the cache's map.
func (t *Tx) ownerRef(owner []byte) *cacheEntry {
	if !t.isLastKey(owner) {
		return nil
	}
	return t.last.ref
}

// entryFor returns, under s's lock, the cache entry for mk: ref if it is
// still in the map, or what the map holds.
func (s *cacheShard) entryFor(mk []byte, ref *cacheEntry) *cacheEntry {
	if ref != nil && !ref.dead {
		return ref
	}
	return s.m[string(mk)]
}

// memoUsable reports whether a read Tx may use and fill the memos of the
// key whose member prefix is owner (see the conditions above); a write
// Tx asks chainMember.
func (t *Tx) memoUsable() bool {
	return t.snap == nil && t.b == nil && t.metaRead
}

// memberFromMemo returns member k's value from the chain's writes or from
// its memo, if this Tx may use it and there is one (hit).
func (t *Tx) memberFromMemo(k []byte) (v []byte, found, hit bool) {
	n := ownerLen(k)
	if n == 0 {
		return nil, false, false
	}
	if t.b != nil {
		if ok, _ := t.memoKind(k[:n], k[n:]); t.snap != nil || !ok {
			return nil, false, false
		}
		op, x, written, usable := t.chainMember(k, n)
		switch {
		case written && op != nil && op.kind == memberSet:
			return append([]byte(nil), x.memberBufAt(op.v)...), true, true
		case written && op != nil && op.kind == memberDel:
			return nil, false, true
		case !usable:
			return nil, false, false // held, too big to log, or a key the memos do not follow now
		}
	} else if !t.memoUsable() {
		return nil, false, false
	}
	t.memoKey = ownerMetaKey(t.memoKey, k[:n])
	s := t.st.cache.shard(t.memoKey)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.b == nil && !t.noCommitSince() {
		return nil, false, false
	}
	e := s.entryFor(t.memoKey, t.ownerRef(k[:n]))
	if e == nil || !e.found {
		return nil, false, false
	}
	i := e.member(k[n:])
	if i < 0 {
		return nil, false, false
	}
	m := &e.members[i]
	if m.found {
		v = append([]byte(nil), m.value...)
	}
	return v, m.found, true
}

// keepMember keeps what a read of member k found (value v, found) as its
// memo, if this Tx may and there is room.
func (t *Tx) keepMember(k, v []byte, found bool) {
	n := ownerLen(k)
	if n == 0 || len(v) > memberMemoValueMax {
		return
	}
	if t.b != nil {
		if ok, _ := t.memoKind(k[:n], k[n:]); t.snap != nil || !ok {
			return
		}
		if _, _, _, usable := t.chainMember(k, n); !usable {
			return
		}
	} else if !t.memoUsable() {
		return
	}
	t.memoKey = ownerMetaKey(t.memoKey, k[:n])
	c := t.st.cache
	s := c.shard(t.memoKey)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.b == nil && !t.noCommitSince() {
		return
	}
	e := s.entryFor(t.memoKey, t.ownerRef(k[:n]))
	if e == nil || !e.found || e.member(k[n:]) >= 0 {
		return
	}
	if typ, ok := e.typ(); !ok || !memoType(typ, k[n:]) {
		// The committed type: a live read knows no other, and a write
		// Tx's chain may have made an inline string (no members to
		// delete) a stream without a lookup since.
		return
	}
	if !found {
		v = nil
	}
	c.addMember(s, e, k[n:], v, found)
}

// addMember adds a memo to e, in shard s, if the budget has room for it.
func (c *metaCache) addMember(s *cacheShard, e *cacheEntry, sub, v []byte, found bool) {
	cost := int64(len(sub) + len(v) + memberMemoCost)
	if e.memberBytes+cost > c.memoLimit/2 {
		return
	}
	if c.memoBytes.Load()+cost > c.memoLimit {
		c.memoFull.Store(true)
		return
	}
	var value []byte
	if found {
		value = append(make([]byte, 0, len(v)), v...)
	}
	e.appendMember(memberMemo{sub: string(sub), value: value, found: found})
	e.memberBytes += cost
	s.addMemoBytes(cost)
}

// addMemoBytes counts d more bytes of memos in s and in the whole cache.
func (s *cacheShard) addMemoBytes(d int64) {
	s.memoBytes += d
	s.memoTotal.Add(d)
}

// evictMemos drops whole keys' memos, from a random shard on, until they
// take at most 7/8 of their budget: room for the keys read now.
func (c *metaCache) evictMemos() {
	target := c.memoLimit / 8 * 7
	start := rand.IntN(cacheShards)
	for i := 0; i < cacheShards && c.memoBytes.Load() > target; i++ {
		s := &c.shards[(start+i)%cacheShards]
		s.mu.Lock()
		for _, e := range s.m {
			if c.memoBytes.Load() <= target {
				break
			}
			s.dropMembers(e)
		}
		s.mu.Unlock()
	}
}

// noCommitSince reports, for a live read, whether no commit came since
// its first metadata lookup.
func (t *Tx) noCommitSince() bool {
	n := t.st.commits.Load()
	return n == t.commitsSeen && n&1 == 0
}

// applyMemberOps brings the memos up to date with a committed Tx's member
// writes, in their order, then drops the memos of the keys whose writes
// were not logged. The caller holds the commit counter odd, so no reader
// adds a memo meanwhile.
func (c *metaCache) applyMemberOps(t *Tx) {
	if t.memberDirtyAll {
		c.dropMemberMemos()
		return
	}
	var mk []byte
	ops := t.memberOps
	for len(ops) > 0 {
		// The run of ops on one key, under one lock.
		k := t.memberBufAt(ops[0].k)
		owner := k[:ops[0].ownerSize]
		run := 1
		for run < len(ops) && string(t.memberBufAt(ops[run].k)[:ops[run].ownerSize]) == string(owner) {
			run++
		}
		mk = ownerMetaKey(mk, owner)
		s := c.shard(mk)
		s.mu.Lock()
		if e := s.entryFor(mk, ops[0].ref); e != nil && (e.members != nil || e.keepsSomeWrites()) {
			for i := range run {
				op := &ops[i]
				c.applyMemberOp(s, e, op, t.memberBufAt(op.k)[op.ownerSize:], t.memberBufAt(op.v))
			}
		}
		s.mu.Unlock()
		ops = ops[run:]
	}
	for owner, dirty := range t.memberDirty {
		if dirty&dirtyUnlogged == 0 {
			continue
		}
		mk = ownerMetaKey(mk, []byte(owner))
		s := c.shard(mk)
		s.mu.Lock()
		if e := s.m[string(mk)]; e != nil {
			s.dropMembers(e)
		}
		s.mu.Unlock()
	}
	if c.memoFull.Swap(false) {
		c.evictMemos()
	}
}

// applyMemberOp applies op, a write of e's member sub (value v), to e's
// memos.
func (c *metaCache) applyMemberOp(s *cacheShard, e *cacheEntry, op *memberOp, sub, v []byte) {
	kind := op.kind
	switch typ, _ := e.typ(); {
	case kind == memberRange:
		s.dropMembers(e)
		return
	case kind == memberDel && typ == TypeStream:
		// A stream's deleted members (acknowledged pending entries) are
		// not looked up again, where a hash's absent field is (HSET
		// looks before it adds): no memo of their absence.
		kind = memberForget
	}
	i := e.member(sub)
	if i < 0 {
		if kind != memberForget && e.keepsWrites(sub) {
			c.addMember(s, e, sub, v, kind == memberSet)
		}
		return
	}
	m := &e.members[i]
	var d int64
	switch kind {
	case memberSet:
		// In place: readers copy a memo only under the shard's lock.
		d = int64(len(v) - len(m.value))
		m.value, m.found = append(m.value[:0], v...), true
	case memberDel:
		d = -int64(len(m.value))
		m.value, m.found = m.value[:0], false
	case memberForget:
		d = -int64(len(m.sub) + len(m.value) + memberMemoCost)
		e.deleteMember(i)
	}
	e.memberBytes += d
	s.addMemoBytes(d)
}

// keepsWrites reports whether the commits add a memo of e's member sub,
// not only update one that a read kept: a hash's fields and a set's
// members, which are read back soon after they are written (HINCRBY,
// HGET, SISMEMBER) more often than a sorted set's index, and the stream
// members that may have memos (XACK reads the pending entry that
// XREADGROUP wrote).
func (e *cacheEntry) keepsWrites(sub []byte) bool {
	typ, _ := e.typ()
	return typ == TypeHash || typ == TypeSet || typ == TypeStream && memoType(typ, sub)
}

// keepsSomeWrites reports whether the commits add memos of some of e's
// members (keepsWrites): if not, and e has none, its writes are skipped.
func (e *cacheEntry) keepsSomeWrites() bool {
	typ, _ := e.typ()
	return typ == TypeHash || typ == TypeSet || typ == TypeStream
}

// typ returns the type of the key e is the entry of, if it exists and its
// value is kept.
func (e *cacheEntry) typ() (Type, bool) {
	if !e.found || e.big {
		return 0, false
	}
	return valueType(e.value)
}

// valueType returns the type a stored metadata value holds.
func valueType(v []byte) (Type, bool) {
	if len(v) == 0 {
		return 0, false
	}
	return Type(v[0] &^ (chunkedFlag | rawFlag)), true
}

// dropMemberMemos drops every member memo: a range deletion across keys.
func (c *metaCache) dropMemberMemos() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			s.dropMembers(e)
		}
		s.mu.Unlock()
	}
}

// dropMembers drops e's member memos.
func (s *cacheShard) dropMembers(e *cacheEntry) {
	s.addMemoBytes(-e.memberBytes)
	e.members, e.memberIdx, e.memberBytes = nil, nil, 0
}
