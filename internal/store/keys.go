package store

import (
	"encoding/binary"
	"slices"

	"basalt/internal/cluster"

	"github.com/cespare/xxhash/v2"
)

// Key layout in Pebble. Every user key lives under its database (a physical
// id, so SWAPDB only swaps a mapping), its hash slot (so a slot can move as
// one key range when sharding comes) and 48 bits of its hash (so SCAN's
// cursor is a plain integer that stays valid while keys come and go).
//
//	m | db u16 | pos u64 | key                    metadata: type, expiry, header or string value
//	v | db u16 | pos u64 | keylen u32 | key | sub  members of a collection
//	x | db u16 | expireAt u64 | key               expiry index
//	c | db u16                                    key count of a database
//	c | db u16 | 'e'                              count of its keys with an expiry
//	d | logical db u16                            logical -> physical database mapping
//	s | name                                      shard state (applied index, ...)
//	f | 'l' or 'f' | name                         function libraries (function.go)
//
// pos is slot<<48 | hash48: its order is SCAN's order.
const (
	prefixMeta    = 'm'
	prefixMember  = 'v'
	prefixExpiry  = 'x'
	prefixCount   = 'c'
	prefixDBMap   = 'd'
	prefixState   = 's'
	dbBytes       = 2
	posBytes      = 8
	metaKeyPrefix = 1 + dbBytes + posBytes
)

// Pos is a key's place in SCAN order: its slot in the top bits and a hash of
// the key below. It is never 0 for SCAN's purposes because cursor 0 means
// "start" and "done"; a key whose Pos is 0 is found when starting from 0.
func Pos(key []byte) uint64 {
	return uint64(cluster.KeySlot(key))<<48 | xxhash.Sum64(key)&(1<<48-1)
}

func appendDB(b []byte, prefix byte, db int) []byte {
	return append(b, prefix, byte(db>>8), byte(db))
}

// MetaKey is the Pebble key of a user key's metadata.
func MetaKey(buf []byte, db int, key []byte) []byte { return metaKeyAt(buf, db, Pos(key), key) }

func metaKeyAt(buf []byte, db int, pos uint64, key []byte) []byte {
	buf = slices.Grow(buf, 1+dbBytes+8+len(key)) // one allocation, not three
	buf = appendDB(buf, prefixMeta, db)
	buf = binary.BigEndian.AppendUint64(buf, pos)
	return append(buf, key...)
}

// userKeyOfMeta returns the user key part of a metadata key.
func userKeyOfMeta(mk []byte) []byte { return mk[metaKeyPrefix:] }

// posOfMeta returns the SCAN position of a metadata key.
func posOfMeta(mk []byte) uint64 { return binary.BigEndian.Uint64(mk[1+dbBytes:]) }

// MemberPrefix is the prefix under which a collection's members are stored.
func MemberPrefix(buf []byte, db int, key []byte) []byte {
	return memberPrefixAt(buf, db, Pos(key), key)
}

func memberPrefixAt(buf []byte, db int, pos uint64, key []byte) []byte {
	buf = slices.Grow(buf, metaKeyPrefix+4+len(key))
	buf = appendDB(buf, prefixMember, db)
	buf = binary.BigEndian.AppendUint64(buf, pos)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(key)))
	return append(buf, key...)
}

func expiryKey(buf []byte, db int, at int64, key []byte) []byte {
	buf = appendDB(buf, prefixExpiry, db)
	buf = binary.BigEndian.AppendUint64(buf, uint64(at))
	return append(buf, key...)
}

func countKey(db int) []byte { return appendDB(nil, prefixCount, db) }

func expiresKey(db int) []byte { return append(countKey(db), 'e') }

func dbMapKey(logical int) []byte { return appendDB(nil, prefixDBMap, logical) }

func stateKey(name string) []byte { return append([]byte{prefixState}, name...) }

// dbSpan returns [lower, upper) covering every key with prefix and db.
func dbSpan(prefix byte, db int) (lower, upper []byte) {
	return appendDB(nil, prefix, db), appendDB(nil, prefix, db+1)
}

// keyPos is Pos(key), remembered for the Tx's last key: a command reaches
// the metadata and members of one key many times, and Pos hashes it twice.
func (t *Tx) keyPos(key []byte) uint64 {
	if !t.posValid || string(t.posKey) != string(key) {
		t.posKey, t.pos, t.posValid = append(t.posKey[:0], key...), Pos(key), true
	}
	return t.pos
}

// metaKey and memberPrefix are MetaKey and MemberPrefix in the Tx's
// database.
func (t *Tx) metaKey(buf, key []byte) []byte {
	return metaKeyAt(buf, t.phys(), t.keyPos(key), key)
}

func (t *Tx) memberPrefix(buf, key []byte) []byte {
	return memberPrefixAt(buf, t.phys(), t.keyPos(key), key)
}

// memberKey is the Pebble key of a collection member in the Tx's
// database, in a buffer of the Tx that the next call reuses: every use
// (a lookup, the batches, the memos, a held member) copies what it keeps.
func (t *Tx) memberKey(key, sub []byte) []byte {
	t.memberKeyBuf = append(t.memberPrefix(t.memberKeyBuf[:0], key), sub...)
	return t.memberKeyBuf
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte { return prefixEnd(append([]byte(nil), p...)) }

// prefixEnd is PrefixEnd in place: it changes and returns end.
func prefixEnd(end []byte) []byte {
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}
