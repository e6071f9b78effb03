// Package rdb reads and writes the payload of Redis's DUMP command: one
// value in RDB's encoding (a type byte, then the value), the RDB version
// as two little-endian bytes and a CRC-64 of all that before it, little
// endian too (cluster.c createDumpPayload in Redis 7.0).
//
// Decoding takes every encoding Redis 7.0 writes, and the older ones an
// RDB of version up to 10 may hold (ziplists, quicklists of ziplists, plain
// lists); encoding writes the simplest forms every Redis since 7.0 loads.
// The decoder is for untrusted bytes: whatever the payload, it returns an
// error rather than panic, and it never allocates from a claimed length
// more than the payload could hold.
package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the RDB version Redis 7.0 writes, and basalt writes.
const Version = 10

// MaxFileVersion is the newest RDB version read, in files and in DUMP
// payloads: Redis 7.4's. What versions 11 (Redis 7.2) and 12 (7.4) add is
// known (reader.valueOf). Redis 7.0 refuses their payloads; basalt takes
// them, so that keys a newer Redis DUMPs (migration tools, MIGRATE) can be
// RESTOREd.
const MaxFileVersion = 12

// Errors of Decode. ErrVersion and ErrFormat stand for Redis's "DUMP
// payload version or checksum are wrong" and "Bad data format".
var (
	ErrVersion = errors.New("rdb: DUMP payload version or checksum are wrong")
	ErrFormat  = errors.New("rdb: bad data format")
	// ErrTruncated is a file that ends in the middle of a record.
	ErrTruncated = fmt.Errorf("%w: the file ends early", ErrFormat)
)

// RDB object types (rdb.h). Module values (7) are read when they are
// RedisJSON's JSON documents, the one module basalt implements; other
// modules, pre-GA module values (6), zipmaps (9, Redis 2.4 and older) and
// the types of later versions (listpack sets, 20, are Redis 7.2's) are
// refused, as Redis 7.0 refuses them.
const (
	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3
	typeHash            = 4
	typeZSet2           = 5
	typeModulePreGA     = 6
	typeModule2         = 7
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpack  = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStreamListpack2 = 19

	// Versions 11 and 12 only.
	typeSetListpack       = 20 // 7.2: a small set as a listpack
	typeStreamListpack3   = 21 // 7.2: consumers' active times
	typeHashFirstFieldTTL = 22 // 7.4: hashes with field expiries, 22 to 25
	typeHashLastFieldTTL  = 25
)

// Kind is the data type of a decoded value.
type Kind byte

const (
	KindString Kind = iota + 1
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
	// KindJSON is a JSON document of RedisJSON (module.go): Str holds its
	// JSON text.
	KindJSON
)

// Value is a decoded DUMP payload. Members holds a list's elements in
// order, a set's members, a hash's fields (Values holds their values) or a
// sorted set's members (Scores holds their scores); Stream holds a
// stream. No member appears twice, and a collection other than a stream
// is never empty.
type Value struct {
	Kind    Kind
	Str     []byte
	Members [][]byte
	Values  [][]byte
	Scores  []float64
	Stream  *Stream
}

// footer is the version and checksum after the value.
const footer = 2 + 8

// Verify checks a payload's version and checksum as Redis's
// verifyDumpPayload does.
func Verify(p []byte) error {
	if len(p) < footer {
		return ErrVersion
	}
	f := p[len(p)-footer:]
	if binary.LittleEndian.Uint16(f) > MaxFileVersion {
		return ErrVersion
	}
	if binary.LittleEndian.Uint64(f[2:]) != CRC64(p[:len(p)-8]) {
		return ErrVersion
	}
	return nil
}

// Decode verifies payload and decodes its value. As in Redis, the value is
// read from the whole payload: bytes after it are ignored, and a value
// that runs into the footer is read with the footer's bytes.
func Decode(p []byte) (*Value, error) {
	if err := Verify(p); err != nil {
		return nil, err
	}
	r := &reader{b: p}
	t, err := r.byte()
	if err != nil {
		return nil, err
	}
	return r.valueOf(t, int(binary.LittleEndian.Uint16(p[len(p)-footer:])))
}

// seal appends the footer to a value's encoding.
func seal(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(b))
}
