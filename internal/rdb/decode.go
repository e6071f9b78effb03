package rdb

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// reader reads RDB's encodings from b (rdb.c rdbLoad*). Every read is
// checked against what is left, so a lying length is an error.
//
// A reader of a whole file (see FileReader) has a src: b then holds only
// what was read of the current record, and grows from src as reads need
// more, so a file larger than memory is read one key at a time. unread
// bounds what src can still give (the file's size, when known), so that a
// claimed count is checked as for a payload; and bytes are read from src
// in chunks as they are needed, so a lying length costs no more memory
// than the bytes that are really there.
type reader struct {
	b   []byte
	pos int

	src    io.Reader
	unread int    // bytes src may still give
	crc    uint64 // running CRC-64 of the bytes read from src
	read   int64  // bytes read from src, for error messages
}

func (r *reader) left() int { return len(r.b) - r.pos + r.unread }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		if err := r.fill(1); err != nil {
			return 0, err
		}
	}
	r.pos++
	return r.b[r.pos-1], nil
}

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(r.left()) {
		return nil, ErrFormat
	}
	if have := len(r.b) - r.pos; int(n) > have {
		if err := r.fill(int(n) - have); err != nil {
			return nil, err
		}
	}
	p := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return p, nil
}

// fillChunk is the most fill reads from src at once.
const fillChunk = 1 << 20

// fill appends n more bytes from src to b. Earlier slices of b stay
// valid: a grown b is a new array, and the old one is never written again.
func (r *reader) fill(n int) error {
	if r.src == nil {
		return ErrFormat
	}
	if n > r.unread {
		return ErrTruncated
	}
	for n > 0 {
		k := min(n, fillChunk)
		start := len(r.b)
		r.b = slices.Grow(r.b, k)[:start+k]
		if _, err := io.ReadFull(r.src, r.b[start:]); err != nil {
			r.b, r.unread = r.b[:start], 0
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return ErrTruncated
			}
			return err
		}
		r.crc = crc64Update(r.crc, r.b[start:])
		r.unread -= k
		r.read += int64(k)
		n -= k
	}
	return nil
}

// Length encodings (rdbLoadLenByRef): the top two bits of the first byte.
const (
	len6     = 0
	len14    = 1
	len32    = 0x80
	len64    = 0x81
	lenEnc   = 3 // the low 6 bits name a string encoding below
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// length reads a length; encoded reports a special string encoding, whose
// number is then n.
func (r *reader) length() (n uint64, encoded bool, err error) {
	b, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case len6:
		return uint64(b & 0x3f), false, nil
	case len14:
		c, err := r.byte()
		return uint64(b&0x3f)<<8 | uint64(c), false, err
	case lenEnc:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case len32:
		p, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, ErrFormat
}

// plainLen reads a length that may not be a string encoding.
func (r *reader) plainLen() (uint64, error) {
	n, enc, err := r.length()
	if err == nil && enc {
		err = ErrFormat
	}
	return n, err
}

// count reads the element count of a collection, each of whose elements
// takes at least size bytes: a count the rest of the payload cannot hold
// is an error. An empty collection is an error too, as Redis refuses empty
// keys.
func (r *reader) count(size int) (int, error) {
	n, err := r.plainLen()
	if err != nil {
		return 0, err
	}
	if n == 0 || n > uint64(r.left()/size) {
		return 0, ErrFormat
	}
	return int(n), nil
}

// prealloc is how many elements a slice for n claimed elements starts
// with: a claim is only trusted as far as it is read.
func prealloc(n int) int { return min(n, 1024) }

// maxLZFRatio bounds how much LZF expands: at best a 3-byte back reference
// stands for 264 bytes.
const maxLZFRatio = 88

// str reads a string: plain, an integer, or LZF-compressed
// (rdbGenericLoadStringObject). The result may alias the payload.
func (r *reader) str() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		return r.take(n)
	}
	switch n {
	case encInt8:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(b[0])), 10), nil
	case encInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case encInt32:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case encLZF:
		clen, err := r.plainLen()
		if err != nil {
			return nil, err
		}
		ulen, err := r.plainLen()
		if err != nil {
			return nil, err
		}
		c, err := r.take(clen)
		if err != nil {
			return nil, err
		}
		if ulen > uint64(len(c))*maxLZFRatio {
			return nil, ErrFormat
		}
		out, err := lzfDecompress(c, int(ulen))
		if err != nil {
			return nil, ErrFormat
		}
		return out, nil
	}
	return nil, ErrFormat
}

// binaryDouble reads ZSET_2's little-endian IEEE double.
func (r *reader) binaryDouble() (float64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// textDouble reads the old ZSET's double: a length byte (253 NaN, 254
// +inf, 255 -inf) and that many characters.
func (r *reader) textDouble() (float64, error) {
	n, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.take(uint64(n))
	if err != nil {
		return 0, err
	}
	return parseScore(b)
}

// parseScore reads a score written as text (strtod's forms).
func parseScore(b []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, ErrFormat
		}
	}
	return f, nil
}

// valueOf decodes a value of RDB type t in a payload or file of RDB
// version v: the types versions after Redis 7.0's add, then value's.
func (r *reader) valueOf(t byte, v int) (*Value, error) {
	if v <= Version {
		return r.value(t)
	}
	switch {
	case t == typeSetListpack:
		b, err := r.str()
		if err != nil {
			return nil, err
		}
		items, err := listpackEntries(b)
		if err != nil {
			return nil, err
		}
		return newSet(items)
	case t == typeStreamListpack3:
		return r.stream(true, true)
	case t >= typeHashFirstFieldTTL && t <= typeHashLastFieldTTL:
		return nil, fmt.Errorf("a hash with field expiries (RDB type %d, Redis 7.4) can't be loaded", t)
	}
	return r.value(t)
}

// value decodes a value of RDB type t (rdbLoadObject).
func (r *reader) value(t byte) (*Value, error) {
	switch t {
	case typeString:
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: KindString, Str: s}, nil
	case typeList, typeSet:
		n, err := r.count(1)
		if err != nil {
			return nil, err
		}
		items := make([][]byte, 0, prealloc(n))
		for range n {
			s, err := r.str()
			if err != nil {
				return nil, err
			}
			items = append(items, s)
		}
		if t == typeList {
			return &Value{Kind: KindList, Members: items}, nil
		}
		return newSet(items)
	case typeZSet, typeZSet2:
		n, err := r.count(2)
		if err != nil {
			return nil, err
		}
		v := &Value{Kind: KindZSet, Members: make([][]byte, 0, prealloc(n)), Scores: make([]float64, 0, prealloc(n))}
		for range n {
			m, err := r.str()
			if err != nil {
				return nil, err
			}
			var s float64
			if t == typeZSet2 {
				s, err = r.binaryDouble()
			} else {
				s, err = r.textDouble()
			}
			if err != nil {
				return nil, err
			}
			v.Members, v.Scores = append(v.Members, m), append(v.Scores, s)
		}
		return v, v.checkZSet()
	case typeHash:
		n, err := r.count(2)
		if err != nil {
			return nil, err
		}
		pairs := make([][]byte, 0, prealloc(2*n))
		for range 2 * n {
			s, err := r.str()
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, s)
		}
		return newHash(pairs)
	case typeSetIntset:
		b, err := r.str()
		if err != nil {
			return nil, err
		}
		items, err := intsetMembers(b)
		if err != nil {
			return nil, err
		}
		return newSet(items)
	case typeHashListpack, typeZSetListpack, typeListZiplist, typeHashZiplist, typeZSetZiplist:
		b, err := r.str()
		if err != nil {
			return nil, err
		}
		var items [][]byte
		switch t {
		case typeListZiplist, typeHashZiplist, typeZSetZiplist:
			items, err = ziplistEntries(b)
		default:
			items, err = listpackEntries(b)
		}
		if err != nil {
			return nil, err
		}
		switch t {
		case typeHashListpack, typeHashZiplist:
			return newHash(items)
		case typeZSetListpack, typeZSetZiplist:
			return newZSetPairs(items)
		}
		if len(items) == 0 {
			return nil, ErrFormat
		}
		return &Value{Kind: KindList, Members: items}, nil
	case typeListQuicklist, typeListQuicklist2:
		return r.quicklist(t == typeListQuicklist2)
	case typeStreamListpack, typeStreamListpack2:
		return r.stream(t == typeStreamListpack2, false)
	case typeModule2:
		return r.moduleJSON()
	}
	// Modules other than RedisJSON's JSON documents, zipmaps (Redis 2.4 and
	// older) and unknown types.
	return nil, ErrFormat
}

// Quicklist node containers (QUICKLIST_2).
const (
	containerPlain  = 1
	containerPacked = 2
)

// quicklist decodes a list of nodes: ziplists (QUICKLIST), or listpacks
// and plain elements (QUICKLIST_2). Empty nodes are skipped, as Redis
// skips them.
func (r *reader) quicklist(v2 bool) (*Value, error) {
	n, err := r.count(1)
	if err != nil {
		return nil, err
	}
	var items [][]byte
	for range n {
		container := uint64(containerPacked)
		if v2 {
			if container, err = r.plainLen(); err != nil {
				return nil, err
			}
			if container != containerPlain && container != containerPacked {
				return nil, ErrFormat
			}
		}
		b, err := r.str()
		if err != nil {
			return nil, err
		}
		if container == containerPlain {
			items = append(items, b)
			continue
		}
		var node [][]byte
		if v2 {
			node, err = listpackEntries(b)
		} else {
			node, err = ziplistEntries(b)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, node...)
	}
	if len(items) == 0 {
		return nil, ErrFormat
	}
	return &Value{Kind: KindList, Members: items}, nil
}

// newSet makes a set of members, which must be distinct.
func newSet(items [][]byte) (*Value, error) {
	if len(items) == 0 || hasDup(items, 1) {
		return nil, ErrFormat
	}
	return &Value{Kind: KindSet, Members: items}, nil
}

// newHash makes a hash of field, value pairs; the fields must be distinct.
func newHash(pairs [][]byte) (*Value, error) {
	if len(pairs) == 0 || len(pairs)%2 != 0 || hasDup(pairs, 2) {
		return nil, ErrFormat
	}
	v := &Value{Kind: KindHash, Members: make([][]byte, 0, len(pairs)/2), Values: make([][]byte, 0, len(pairs)/2)}
	for i := 0; i < len(pairs); i += 2 {
		v.Members, v.Values = append(v.Members, pairs[i]), append(v.Values, pairs[i+1])
	}
	return v, nil
}

// newZSetPairs makes a sorted set of member, score pairs, scores as text
// or integers (a listpack's or a ziplist's entries).
func newZSetPairs(pairs [][]byte) (*Value, error) {
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return nil, ErrFormat
	}
	v := &Value{Kind: KindZSet, Members: make([][]byte, 0, len(pairs)/2), Scores: make([]float64, 0, len(pairs)/2)}
	for i := 0; i < len(pairs); i += 2 {
		s, err := parseScore(pairs[i+1])
		if err != nil {
			return nil, err
		}
		v.Members, v.Scores = append(v.Members, pairs[i]), append(v.Scores, s)
	}
	return v, v.checkZSet()
}

// checkZSet refuses duplicate members and NaN scores, as Redis does.
func (v *Value) checkZSet() error {
	for _, s := range v.Scores {
		if math.IsNaN(s) {
			return ErrFormat
		}
	}
	if hasDup(v.Members, 1) {
		return ErrFormat
	}
	return nil
}

// hasDup reports whether items[0], items[step], ... has a repeat.
func hasDup(items [][]byte, step int) bool {
	seen := make(map[string]struct{}, len(items)/step)
	for i := 0; i < len(items); i += step {
		if _, ok := seen[string(items[i])]; ok {
			return true
		}
		seen[string(items[i])] = struct{}{}
	}
	return false
}
