package store

import (
	"encoding/binary"
	"errors"
)

// Type is a key's data type, as TYPE names it.
type Type byte

const (
	TypeNone Type = iota
	TypeString
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
	TypeJSON
)

var typeNames = [...]string{"none", "string", "list", "set", "zset", "hash", "stream", "ReJSON-RL"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// TypeByName returns the type TYPE calls name, for SCAN ... TYPE.
func TypeByName(name string) (Type, bool) {
	for i, n := range typeNames {
		if n == name && i > 0 {
			return Type(i), true
		}
	}
	return TypeNone, false
}

// Meta is a key's metadata entry: its type, its expiry and a type-specific
// body. A string's body is its value; a collection's body is its header
// (count, list head and tail, ...) and its members are separate entries.
type Meta struct {
	Type     Type
	ExpireAt int64 // unix milliseconds; 0 means no expiry
	Body     []byte
	// Chunked marks a string stored in chunks (strval.go): its Body is
	// its length and its value is in member entries. Raw marks a string
	// modified in place (APPEND, SETRANGE, SETBIT...), which Redis keeps
	// in its "raw" encoding whatever its size (OBJECT ENCODING). They are
	// stored as the top bits of the type byte.
	Chunked, Raw bool
}

const (
	metaHeader  = 1 + 8
	chunkedFlag = 0x80
	rawFlag     = 0x40
)

// HasMembers reports whether the key has member entries: collections do,
// and so do chunked strings.
func (m *Meta) HasMembers() bool { return m.Type != TypeString || m.Chunked }

// encode appends the metadata's stored form to buf.
func (m *Meta) encode(buf []byte) []byte {
	t := byte(m.Type)
	if m.Chunked {
		t |= chunkedFlag
	}
	if m.Raw {
		t |= rawFlag
	}
	buf = append(buf, t)
	buf = binary.BigEndian.AppendUint64(buf, uint64(m.ExpireAt))
	return append(buf, m.Body...)
}

var errCorrupt = errors.New("store: corrupt metadata entry")

// decodeMeta parses a stored metadata value. The body aliases v.
func decodeMeta(v []byte) (Meta, error) {
	if len(v) < metaHeader {
		return Meta{}, errCorrupt
	}
	return Meta{
		Type:     Type(v[0] &^ (chunkedFlag | rawFlag)),
		ExpireAt: int64(binary.BigEndian.Uint64(v[1:])),
		Body:     v[metaHeader:],
		Chunked:  v[0]&chunkedFlag != 0,
		Raw:      v[0]&rawFlag != 0,
	}, nil
}

// Expired reports whether the key is past its expiry at now (unix ms).
func (m *Meta) Expired(now int64) bool { return m.ExpireAt != 0 && m.ExpireAt <= now }
