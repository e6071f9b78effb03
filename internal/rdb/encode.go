package rdb

import (
	"encoding/binary"
	"math"
)

// Encode returns the DUMP payload of v (a string, list, set, hash, sorted
// set, stream or JSON document). It writes the simplest encodings, which every Redis since 7.0
// loads: strings as plain bytes (no integer or LZF forms), a list as the
// plain RDB list, sets and hashes as their plain forms and a sorted set as
// ZSET_2 with binary scores, a JSON document as RedisJSON writes it
// (module.go). Redis converts them to its compact encodings
// as it loads them, by the same size rules as for values built by
// commands.
func Encode(v *Value) []byte { return seal(appendValue(nil, v)) }

// appendValue writes v's type byte and encoding, as both a DUMP payload
// and an RDB file hold it.
func appendValue(b []byte, v *Value) []byte {
	switch v.Kind {
	case KindString:
		b = appendString(append(b, typeString), v.Str)
	case KindList, KindSet:
		t := byte(typeList)
		if v.Kind == KindSet {
			t = typeSet
		}
		b = appendLen(append(b, t), uint64(len(v.Members)))
		for _, m := range v.Members {
			b = appendString(b, m)
		}
	case KindHash:
		b = appendLen(append(b, typeHash), uint64(len(v.Members)))
		for i, f := range v.Members {
			b = appendString(appendString(b, f), v.Values[i])
		}
	case KindZSet:
		b = appendLen(append(b, typeZSet2), uint64(len(v.Members)))
		for i, m := range v.Members {
			b = binary.LittleEndian.AppendUint64(appendString(b, m), math.Float64bits(v.Scores[i]))
		}
	case KindStream:
		b = appendStream(b, v.Stream)
	case KindJSON:
		b = appendJSON(b, v.Str)
	default:
		panic("rdb: Encode of an unknown kind")
	}
	return b
}

// appendLen writes a length (rdbSaveLen).
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|len14<<6, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, len32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, len64), n)
}

// appendString writes a string as its length and its bytes.
func appendString(b, s []byte) []byte {
	return append(appendLen(b, uint64(len(s))), s...)
}
