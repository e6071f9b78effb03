package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Listpacks (listpack.c), ziplists (ziplist.c) and intsets (intset.c): the
// compact encodings Redis stores small collections in, and which a DUMP
// carries as one string each. Integers come out as their decimal text, as
// Redis's commands show them.

// listpackEntries returns the entries of listpack lp: a header of total
// bytes (u32) and entry count (u16, 65535 when unknown), the entries, each
// an encoding, its data and its length backwards, and a 0xff terminator.
func listpackEntries(lp []byte) ([][]byte, error) {
	if len(lp) < 7 || binary.LittleEndian.Uint32(lp) != uint32(len(lp)) || lp[len(lp)-1] != 0xff {
		return nil, ErrFormat
	}
	want := int(binary.LittleEndian.Uint16(lp[4:]))
	var out [][]byte
	p := lp[6 : len(lp)-1]
	for len(p) > 0 {
		e, size, err := listpackEntry(p)
		if err != nil {
			return nil, err
		}
		size += backlenSize(size)
		if size > len(p) {
			return nil, ErrFormat
		}
		out = append(out, e)
		p = p[size:]
	}
	if want != 65535 && want != len(out) {
		return nil, ErrFormat
	}
	return out, nil
}

// listpackEntry decodes the entry at the start of p and returns it and the
// size of its encoding and data.
func listpackEntry(p []byte) (e []byte, size int, err error) {
	b := p[0]
	var n, hdr int // string length and header size
	switch {
	case b&0x80 == 0: // 7-bit unsigned integer
		return strconv.AppendInt(nil, int64(b&0x7f), 10), 1, nil
	case b&0xc0 == 0x80: // string of up to 63 bytes
		n, hdr = int(b&0x3f), 1
	case b&0xe0 == 0xc0: // 13-bit signed integer
		if len(p) < 2 {
			return nil, 0, ErrFormat
		}
		return strconv.AppendInt(nil, signExtend(uint64(b&0x1f)<<8|uint64(p[1]), 13), 10), 2, nil
	case b&0xf0 == 0xe0: // string of up to 4095 bytes
		if len(p) < 2 {
			return nil, 0, ErrFormat
		}
		n, hdr = int(b&0x0f)<<8|int(p[1]), 2
	case b == 0xf0: // string with a 32-bit length
		if len(p) < 5 {
			return nil, 0, ErrFormat
		}
		l := binary.LittleEndian.Uint32(p[1:])
		if uint64(l) > uint64(len(p)) {
			return nil, 0, ErrFormat
		}
		n, hdr = int(l), 5
	case b >= 0xf1 && b <= 0xf4: // 16, 24, 32 and 64-bit integers
		w := [...]int{2, 3, 4, 8}[b-0xf1]
		if len(p) < 1+w {
			return nil, 0, ErrFormat
		}
		var u uint64
		for i := w; i >= 1; i-- {
			u = u<<8 | uint64(p[i])
		}
		return strconv.AppendInt(nil, signExtend(u, 8*w), 10), 1 + w, nil
	default: // 0xf5-0xfe are unused, 0xff ends the listpack
		return nil, 0, ErrFormat
	}
	if hdr+n > len(p) {
		return nil, 0, ErrFormat
	}
	return p[hdr : hdr+n], hdr + n, nil
}

// signExtend reads the low bits of u as a two's complement integer.
func signExtend(u uint64, bits int) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// backlenSize is how many bytes an entry's backward length takes: 7 bits
// per byte.
func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// appendBacklen writes an entry's backward length (lpEncodeBacklen): its
// 7-bit groups, most significant first, all but the first with the top
// bit set.
func appendBacklen(b []byte, l int) []byte {
	for i := backlenSize(l) - 1; i >= 0; i-- {
		g := byte(l>>(7*i)) & 0x7f
		if i < backlenSize(l)-1 {
			g |= 0x80
		}
		b = append(b, g)
	}
	return b
}

// listpack builds a listpack, entry by entry.
type listpack struct {
	b []byte
	n int
}

func newListpack() *listpack { return &listpack{b: make([]byte, 6, 64)} }

// str appends s, as an integer when it is one in canonical form (as
// lpAppend stores it).
func (lp *listpack) str(s []byte) {
	if len(s) <= 20 {
		if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(s) {
			lp.int(v)
			return
		}
	}
	start := len(lp.b)
	switch n := len(s); {
	case n < 64:
		lp.b = append(lp.b, 0x80|byte(n))
	case n < 4096:
		lp.b = append(lp.b, 0xe0|byte(n>>8), byte(n))
	default:
		lp.b = binary.LittleEndian.AppendUint32(append(lp.b, 0xf0), uint32(n))
	}
	lp.b = append(lp.b, s...)
	lp.end(start)
}

// int appends v in the smallest integer encoding.
func (lp *listpack) int(v int64) {
	start := len(lp.b)
	switch {
	case v >= 0 && v <= 127:
		lp.b = append(lp.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & 0x1fff
		lp.b = append(lp.b, 0xc0|byte(u>>8), byte(u))
	default:
		w, enc := 8, byte(0xf4)
		switch {
		case v >= math.MinInt16 && v <= math.MaxInt16:
			w, enc = 2, 0xf1
		case v >= -1<<23 && v < 1<<23:
			w, enc = 3, 0xf2
		case v >= math.MinInt32 && v <= math.MaxInt32:
			w, enc = 4, 0xf3
		}
		lp.b = append(lp.b, enc)
		for i := range w {
			lp.b = append(lp.b, byte(uint64(v)>>(8*i)))
		}
	}
	lp.end(start)
}

// end finishes the entry that starts at start with its backward length.
func (lp *listpack) end(start int) {
	lp.b = appendBacklen(lp.b, len(lp.b)-start)
	lp.n++
}

// bytes terminates the listpack and fills in its header.
func (lp *listpack) bytes() []byte {
	b := append(lp.b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint16(b[4:], uint16(min(lp.n, 65535)))
	return b
}

// ziplistEntries returns the entries of ziplist zl: a header of total bytes
// (u32), offset of the last entry (u32) and entry count (u16, 65535 when
// unknown), the entries, each the previous entry's length (1 byte, or
// 0xfe and 4 bytes), an encoding and data, and a 0xff terminator.
func ziplistEntries(zl []byte) ([][]byte, error) {
	if len(zl) < 11 || binary.LittleEndian.Uint32(zl) != uint32(len(zl)) || zl[len(zl)-1] != 0xff {
		return nil, ErrFormat
	}
	want := int(binary.LittleEndian.Uint16(zl[8:]))
	var out [][]byte
	p := zl[10 : len(zl)-1]
	for len(p) > 0 {
		skip := 1
		if p[0] == 0xfe {
			skip = 5
		} else if p[0] == 0xff {
			return nil, ErrFormat
		}
		if len(p) <= skip {
			return nil, ErrFormat
		}
		p = p[skip:]
		e, size, err := ziplistEntry(p)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		p = p[size:]
	}
	if want != 65535 && want != len(out) {
		return nil, ErrFormat
	}
	return out, nil
}

// ziplistEntry decodes the encoding and data at the start of p.
func ziplistEntry(p []byte) (e []byte, size int, err error) {
	b := p[0]
	var n, hdr int
	switch b >> 6 {
	case 0:
		n, hdr = int(b&0x3f), 1
	case 1:
		if len(p) < 2 {
			return nil, 0, ErrFormat
		}
		n, hdr = int(b&0x3f)<<8|int(p[1]), 2
	case 2:
		if b != 0x80 || len(p) < 5 {
			return nil, 0, ErrFormat
		}
		l := binary.BigEndian.Uint32(p[1:])
		if uint64(l) > uint64(len(p)) {
			return nil, 0, ErrFormat
		}
		n, hdr = int(l), 5
	default:
		var w int
		switch b {
		case 0xc0:
			w = 2
		case 0xd0:
			w = 4
		case 0xe0:
			w = 8
		case 0xf0:
			w = 3
		case 0xfe:
			w = 1
		default:
			if b >= 0xf1 && b <= 0xfd { // 4-bit immediate, 0 to 12
				return strconv.AppendInt(nil, int64(b&0x0f)-1, 10), 1, nil
			}
			return nil, 0, ErrFormat
		}
		if len(p) < 1+w {
			return nil, 0, ErrFormat
		}
		var u uint64
		for i := w; i >= 1; i-- {
			u = u<<8 | uint64(p[i])
		}
		return strconv.AppendInt(nil, signExtend(u, 8*w), 10), 1 + w, nil
	}
	if hdr+n > len(p) {
		return nil, 0, ErrFormat
	}
	return p[hdr : hdr+n], hdr + n, nil
}

// intsetMembers returns the members of intset is: its integer width (u32:
// 2, 4 or 8), its length (u32) and the integers, little endian.
func intsetMembers(is []byte) ([][]byte, error) {
	if len(is) < 8 {
		return nil, ErrFormat
	}
	w := binary.LittleEndian.Uint32(is)
	n := uint64(binary.LittleEndian.Uint32(is[4:]))
	if w != 2 && w != 4 && w != 8 || n*uint64(w) != uint64(len(is)-8) {
		return nil, ErrFormat
	}
	out := make([][]byte, 0, n)
	for p := is[8:]; len(p) > 0; p = p[w:] {
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		out = append(out, strconv.AppendInt(nil, v, 10))
	}
	return out, nil
}
