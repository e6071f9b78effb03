package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Reading a whole RDB file (file.go has its layout), as redis-server
// loads one at startup (rdb.c rdbLoadRio), one record at a time, for
// basalt load-rdb. Each key's value is decoded with the DUMP decoder, so a
// corrupt or hostile file is an error, never a panic, and memory holds one
// key at a time, however large the file.
//
// Versions 1 to 10 are Redis 7.0's. 11 (Redis 7.2) and 12 (7.4) are read
// too, since what they add is known: listpack sets, streams with
// consumers' active times and the slot info opcode are read; hashes with
// field expiries (7.4) are refused, naming the key, as basalt has no such
// hashes. Later versions are refused whole, naming the version.

// opSlotInfo (Redis 7.4) is a cluster slot's sizes, three lengths.
const opSlotInfo = 244

// RecordKind says what a Record holds.
type RecordKind byte

const (
	// RecordKey is a key and its value.
	RecordKey RecordKind = iota + 1
	// RecordFunction is a function library's code (FUNCTION2).
	RecordFunction
	// RecordModuleAux is a module's auxiliary data, skipped: Module names
	// the module.
	RecordModuleAux
)

// Record is one item of a file. Key, Value and Code may alias the
// reader's buffer: they are valid until the next call of Next. A JSON
// document (RedisJSON's module value) is a Value of KindJSON.
type Record struct {
	Kind     RecordKind
	DB       int
	Key      []byte
	Value    *Value
	ExpireMs int64  // absolute Unix time in ms; 0: no expiry
	Code     []byte // a library's code
	Module   string // the module of module data
}

// FileReader reads an RDB file's records in order.
type FileReader struct {
	Version int
	r       reader
	db      int
	done    bool
}

// FileError is an error at a place in the file, with the key being read
// if there is one.
type FileError struct {
	Offset int64 // bytes from the start of the file to the record
	DB     int
	Key    []byte // nil when not inside a key
	Err    error
}

func (e *FileError) Error() string {
	if e.Key != nil {
		return fmt.Sprintf("at byte %d, key %q of db %d: %v", e.Offset, e.Key, e.DB, e.Err)
	}
	return fmt.Sprintf("at byte %d: %v", e.Offset, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Errors of reading a file, besides ErrFormat and ErrTruncated.
var (
	ErrMagic    = errors.New("not an RDB file: it does not start with REDIS and a version")
	ErrChecksum = errors.New("the file's CRC-64 checksum is wrong")
)

// NewFileReader reads src's header. size is how many bytes src holds, or
// -1 if unknown (a pipe): it bounds the counts a corrupt file may claim.
func NewFileReader(src io.Reader, size int64) (*FileReader, error) {
	f := &FileReader{}
	f.r.src = src
	f.r.unread = math.MaxInt >> 1
	if size >= 0 && size < int64(f.r.unread) {
		f.r.unread = int(size)
	}
	hdr, err := f.r.take(9)
	if err != nil || string(hdr[:5]) != fileMagic {
		return nil, ErrMagic
	}
	v, err := strconv.Atoi(string(hdr[5:]))
	if err != nil || v < 1 || !allDigits(hdr[5:]) {
		return nil, ErrMagic
	}
	if v > MaxFileVersion {
		return nil, fmt.Errorf("RDB file version %d is not supported (the newest read is %d, Redis 7.4's)", v, MaxFileVersion)
	}
	f.Version = v
	return f, nil
}

// Next returns the next record, or io.EOF after the end of the file
// whose checksum is right (or zero: not computed, rdbchecksum no).
func (f *FileReader) Next() (*Record, error) {
	if f.done {
		return nil, io.EOF
	}
	var expire int64
	for {
		f.reset()
		start := f.r.read
		fail := func(key []byte, err error) (*Record, error) {
			f.done = true
			return nil, &FileError{Offset: start, DB: f.db, Key: key, Err: err}
		}
		t, err := f.r.byte()
		if err != nil {
			return fail(nil, err)
		}
		switch t {
		case opEOF:
			f.done = true
			if err := f.checksum(); err != nil {
				return fail(nil, err)
			}
			return nil, io.EOF
		case opSelectDB:
			n, err := f.r.plainLen()
			if err != nil || n > math.MaxInt32 {
				return fail(nil, ErrFormat)
			}
			f.db = int(n)
		case opResizeDB:
			if err := f.lengths(2); err != nil {
				return fail(nil, err)
			}
		case opSlotInfo:
			if err := f.lengths(3); err != nil {
				return fail(nil, err)
			}
		case opAux:
			if _, err := f.r.str(); err != nil {
				return fail(nil, err)
			}
			if _, err := f.r.str(); err != nil {
				return fail(nil, err)
			}
		case opExpireTimeMs:
			b, err := f.r.take(8)
			if err != nil {
				return fail(nil, err)
			}
			expire = int64(binary.LittleEndian.Uint64(b))
		case opExpireTime:
			b, err := f.r.take(4)
			if err != nil {
				return fail(nil, err)
			}
			expire = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		case opIdle:
			if _, err := f.r.plainLen(); err != nil {
				return fail(nil, err)
			}
		case opFreq:
			if _, err := f.r.byte(); err != nil {
				return fail(nil, err)
			}
		case opFunction:
			return fail(nil, errors.New("Pre-GA function format not supported"))
		case opFunction2:
			code, err := f.r.str()
			if err != nil {
				return fail(nil, err)
			}
			return &Record{Kind: RecordFunction, DB: f.db, Code: code}, nil
		case opModuleAux:
			name, err := f.moduleAux()
			if err != nil {
				return fail(nil, err)
			}
			return &Record{Kind: RecordModuleAux, Module: name}, nil
		default:
			key, err := f.r.str()
			if err != nil {
				return fail(nil, err)
			}
			v, err := f.value(t)
			if err != nil {
				return fail(key, err)
			}
			return &Record{Kind: RecordKey, DB: f.db, Key: key, Value: v, ExpireMs: expire}, nil
		}
	}
}

// keepBuffer is the largest buffer kept from one record to the next: a
// big key's is dropped once done with.
const keepBuffer = 1 << 20

// reset starts a record: what was read before is no longer needed.
func (f *FileReader) reset() {
	if cap(f.r.b) > keepBuffer {
		f.r.b = nil
	}
	f.r.b, f.r.pos = f.r.b[:0], 0
}

// lengths reads and drops n lengths.
func (f *FileReader) lengths(n int) error {
	for range n {
		if _, err := f.r.plainLen(); err != nil {
			return err
		}
	}
	return nil
}

// value decodes a key's value of type t, naming what can't be loaded.
func (f *FileReader) value(t byte) (*Value, error) {
	switch {
	case t == typeModulePreGA:
		return nil, errors.New("a module value can't be loaded")
	case t > typeHashLastFieldTTL || t > typeStreamListpack2 && f.Version <= Version:
		return nil, fmt.Errorf("unknown RDB type %d", t)
	}
	return f.r.valueOf(t, f.Version)
}

// moduleAux skips a MODULE_AUX record and returns its module's name: the
// module ID, when it is loaded (an opcode and a length), then the data.
func (f *FileReader) moduleAux() (string, error) {
	id, err := f.r.plainLen()
	if err != nil {
		return "", err
	}
	if op, err := f.r.plainLen(); err != nil || op != moduleOpUInt {
		return "", ErrFormat
	}
	if _, err := f.r.plainLen(); err != nil {
		return "", err
	}
	for {
		op, err := f.r.plainLen()
		if err != nil {
			return "", err
		}
		switch op {
		case moduleOpEOF:
			return moduleName(id), nil
		case moduleOpSInt, moduleOpUInt:
			_, err = f.r.plainLen()
		case moduleOpFloat:
			_, err = f.r.take(4)
		case moduleOpDouble:
			_, err = f.r.take(8)
		case moduleOpString:
			_, err = f.r.str()
		default:
			err = ErrFormat
		}
		if err != nil {
			return "", err
		}
	}
}

// checksum reads the CRC-64 after EOF (files of version 5 and up have
// one) and checks it unless it is zero.
func (f *FileReader) checksum() error {
	if f.Version < 5 {
		return nil
	}
	want := f.r.crc
	var b [8]byte
	if _, err := io.ReadFull(f.r.src, b[:]); err != nil {
		return ErrTruncated
	}
	if got := binary.LittleEndian.Uint64(b[:]); got != 0 && got != want {
		return ErrChecksum
	}
	return nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
