package store

import (
	"encoding/binary"
	"math"

	"github.com/cespare/xxhash/v2"
)

// Sub keys of collection members (the part after MemberPrefix).
//
// Hash fields and set members are stored as hash64(member) | member. The
// hash orders them for HSCAN/SSCAN, so a cursor is an integer that stays
// valid while members come and go (as with SCAN over keys), and a random
// position is a uniform random member for SPOP/SRANDMEMBER/HRANDFIELD.
//
// Sorted sets keep two entries per member, told apart by a tag byte:
//
//	'm' | hash64(member) | member -> score (8 bytes, SortableFloat)
//	's' | SortableFloat(score) | member -> empty
//
// Lists store each element under SortableInt(index) between a head and a
// tail kept in the list's metadata.

// HashedSub appends the sub key of member to buf.
func HashedSub(buf, member []byte) []byte {
	buf = binary.BigEndian.AppendUint64(buf, xxhash.Sum64(member))
	return append(buf, member...)
}

// HashedMember returns the member of a HashedSub key.
func HashedMember(sub []byte) []byte { return sub[8:] }

// HashedPos returns the scan position of a HashedSub key.
func HashedPos(sub []byte) uint64 { return binary.BigEndian.Uint64(sub) }

// PosBytes is the lower bound of the sub keys at or after scan position pos.
func PosBytes(pos uint64) []byte { return binary.BigEndian.AppendUint64(nil, pos) }

// SortableFloat encodes f so that byte order is numeric order (-inf first,
// +inf last). -0 and 0 are distinct encodings; callers store 0 for both,
// as Redis compares them equal.
func SortableFloat(buf []byte, f float64) []byte {
	u := math.Float64bits(f)
	if u>>63 == 1 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(buf, u)
}

// FloatFromSortable decodes SortableFloat.
func FloatFromSortable(b []byte) float64 {
	u := binary.BigEndian.Uint64(b)
	if u>>63 == 1 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

// SortableInt encodes n so that byte order is numeric order.
func SortableInt(buf []byte, n int64) []byte {
	return binary.BigEndian.AppendUint64(buf, uint64(n)^(1<<63))
}

// IntFromSortable decodes SortableInt.
func IntFromSortable(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}
