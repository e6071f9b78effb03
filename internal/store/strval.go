package store

import (
	"bytes"
	"encoding/binary"
)

// String values. A string of at most InlineMax bytes is the body of its
// metadata entry, so GET and SET are one Pebble entry. A longer string is
// chunked: its metadata body is its length (8 bytes) and its bytes are
// member entries of ChunkSize bytes under sub key chunk index (u32 big
// endian). A chunk that was never written, or whose stored bytes stop short,
// reads as zero bytes, so SETBIT far past the end writes one chunk, not the
// 512 MB before it; a chunk that becomes all zeros is deleted.
//
// 4 KB: below it, rewriting the whole value on a change costs about what
// rewriting one chunk does (a Pebble entry of a few KB, the size of a data
// block), so small strings keep their one-entry GET; above it, SETBIT,
// SETRANGE and APPEND rewrite at most the chunks they change (4 KB each),
// and a 512 MB string is 131,072 entries that GET reads in one iteration.
//
// Strings only grow in place (SETRANGE, APPEND, SETBIT, BITFIELD); a value
// is replaced whole by WriteString, which picks the form from its size. So
// a chunked string is always longer than InlineMax. A value written in
// place or piece by piece is marked Raw, as Redis encodes such strings.
//
// The functions of this file are the whole API for string values: commands
// never read a string's Body themselves.
const (
	InlineMax = 4096
	ChunkSize = 4096
)

var zeroChunk [ChunkSize]byte

func chunkSub(i int64) []byte { return binary.BigEndian.AppendUint32(nil, uint32(i)) }

// StringLen returns the length of the string value whose metadata is m.
func (m *Meta) StringLen() int64 {
	if m.Chunked {
		return int64(binary.BigEndian.Uint64(m.Body))
	}
	return int64(len(m.Body))
}

// ReadString returns the whole value of string key, whose metadata is m.
// The caller may modify it.
func (t *Tx) ReadString(key []byte, m Meta) []byte {
	return t.ReadStringRange(key, m, 0, m.StringLen())
}

// ReadStringRange returns bytes [start, end) of string key's value, the
// range clamped to the value. It reads only the chunks in the range.
func (t *Tx) ReadStringRange(key []byte, m Meta, start, end int64) []byte {
	start, end = max(start, 0), min(end, m.StringLen())
	if start >= end {
		return nil
	}
	if !m.Chunked {
		return m.Body[start:end]
	}
	out := make([]byte, end-start) // zeros where no chunk is stored
	t.VisitString(key, m, start, end, func(off, n int64, data []byte) bool {
		copy(out[off-start:], data)
		return true
	})
	return out
}

// VisitString calls fn, in order, for pieces covering bytes [start, end)
// of string key's value (clamped to the value): each piece is n bytes at
// offset off, data holds them, or is nil when they are all zero (chunks
// never written). data is valid only during the call; fn returns false to
// stop. Commands that scan a range (BITCOUNT, BITPOS) use it to skip the
// holes of a sparse bitmap without allocating them.
func (t *Tx) VisitString(key []byte, m Meta, start, end int64, fn func(off, n int64, data []byte) bool) {
	start, end = max(start, 0), min(end, m.StringLen())
	if start >= end {
		return
	}
	if !m.Chunked {
		fn(start, end-start, m.Body[start:end])
		return
	}
	pos, stopped := start, false
	zeros := func(to int64) bool {
		if to <= pos {
			return true
		}
		ok := fn(pos, to-pos, nil)
		pos = to
		return ok
	}
	first, last := start/ChunkSize, (end-1)/ChunkSize
	if last-first < pointReads {
		// A few chunks: point reads find each one's newest version at
		// once, where an iterator steps over every older version of a hot
		// key (an HLL or a bitmap rewritten thousands of times).
		for ci := first; ci <= last && !stopped; ci++ {
			t.viewChunk(key, m, ci, func(v []byte) {
				cs := ci * ChunkSize
				lo, hi := max(cs, start), min(cs+int64(len(v)), end)
				if lo < hi {
					stopped = !zeros(lo) || !fn(lo, hi-lo, v[lo-cs:hi-cs])
					pos = hi
				}
			})
		}
		if !stopped {
			zeros(end)
		}
		return
	}
	from, to := chunkSub(first), chunkSub(last+1)
	t.Members(key, from, to, false, func(sub, v []byte) bool {
		cs := int64(binary.BigEndian.Uint32(sub)) * ChunkSize
		lo, hi := max(cs, start), min(cs+int64(len(v)), end)
		if lo >= hi {
			return true
		}
		if !zeros(lo) || !fn(lo, hi-lo, v[lo-cs:hi-cs]) {
			stopped = true
			return false
		}
		pos = hi
		return true
	})
	if !stopped {
		zeros(end)
	}
}

// pointReads is how many chunks a read fetches one by one rather than with
// an iterator.
const pointReads = 64

// WriteString replaces whatever key holds with the string value, with the
// given expiry (0: none), and returns its metadata.
func (t *Tx) WriteString(key, value []byte, expireAt int64) Meta {
	if len(value) <= InlineMax {
		m := Meta{Type: TypeString, ExpireAt: expireAt, Body: value}
		t.Put(key, m) // drops the members of a collection or chunked string
		return m
	}
	return t.WriteStringFunc(key, int64(len(value)), expireAt, func(off int64, buf []byte) {
		copy(buf, value[off:])
	})
}

// WriteStringFunc replaces whatever key holds with a string of n bytes and
// the given expiry, and returns its metadata. fill writes the value piece
// by piece, in order: it gets each piece's offset and a zeroed buffer of
// at most ChunkSize bytes, so a big value is never in memory whole. Until
// fill returns, the pieces of key's old value at and after off are still
// there, so the new value may be computed from the old one (BITOP with the
// destination among its sources).
func (t *Tx) WriteStringFunc(key []byte, n, expireAt int64, fill func(off int64, buf []byte)) Meta {
	if n <= InlineMax {
		buf := make([]byte, n)
		fill(0, buf)
		m := Meta{Type: TypeString, ExpireAt: expireAt, Body: buf, Raw: true}
		t.Put(key, m)
		return m
	}
	// Put keeps the chunks of a chunked string that stays chunked: each
	// one is overwritten (or deleted) below, and those past the new end
	// are dropped.
	m := Meta{Type: TypeString, ExpireAt: expireAt, Chunked: true, Raw: true,
		Body: binary.BigEndian.AppendUint64(nil, uint64(n))}
	old, existed := t.rawMeta(key)
	t.Put(key, m)
	buf := make([]byte, ChunkSize)
	var i int64
	for ; i*ChunkSize < n; i++ {
		piece := buf[:min(ChunkSize, n-i*ChunkSize)]
		clear(piece)
		fill(i*ChunkSize, piece)
		t.putChunk(key, i, piece)
	}
	// Chunks past the new end go, if there can be any: a range deletion
	// for every rewrite would pile up tombstones that every later read of
	// the key has to step through.
	if existed && old.Type == TypeString && old.Chunked && old.StringLen() > i*ChunkSize {
		p := t.memberPrefix(nil, key)
		t.delRange(append(p, chunkSub(i)...), PrefixEnd(p))
	}
	return m
}

// WriteStringRange writes data at offset off of string key, whose metadata
// is m (Meta{Type: TypeString} for a new key), padding with zero bytes up
// to off, and returns the new metadata. The expiry is kept. With empty data
// it only grows the value to off bytes. It rewrites only the chunks the
// range covers (and, once, the whole value when it outgrows InlineMax).
// The caller checks the size limit.
func (t *Tx) WriteStringRange(key []byte, m Meta, off int64, data []byte) Meta {
	end := off + int64(len(data))
	n := max(m.StringLen(), end)
	m.Raw = true
	if !m.Chunked && n <= InlineMax {
		// Built in its stored form, one copy; m.Body is left as it was,
		// so it may be shared (LookupShared).
		enc := m.encode(make([]byte, 0, metaHeader+n))
		enc = enc[:metaHeader+n] // zeros past the old end
		copy(enc[metaHeader+off:], data)
		m.Body = enc[metaHeader:]
		t.putEncoded(key, m, enc)
		t.touch(t.DB, key)
		return m
	}
	old := m.Body
	wasInline := !m.Chunked
	m.Chunked = true
	m.Body = binary.BigEndian.AppendUint64(nil, uint64(n))
	t.Put(key, m)
	if wasInline { // it outgrows InlineMax: its bytes become chunks
		for i := int64(0); i*ChunkSize < int64(len(old)); i++ {
			t.putChunk(key, i, old[i*ChunkSize:min((i+1)*ChunkSize, int64(len(old)))])
		}
	}
	// A write of a chunk or two (SETBIT, BITFIELD, a PFADD that raises a
	// register) is held in the Tx: the next commands of the group that
	// change the same string find it there and write it once.
	hold := (end-1)/ChunkSize-off/ChunkSize < 2
	for ci := off / ChunkSize; ci*ChunkSize < end; ci++ {
		cs := ci * ChunkSize
		buf := make([]byte, min(ChunkSize, n-cs))
		if cur, ok := t.Member(key, chunkSub(ci)); ok {
			copy(buf, cur)
		}
		lo := max(off, cs)
		copy(buf[lo-cs:], data[lo-off:])
		if hold && !bytes.Equal(buf, zeroChunk[:len(buf)]) {
			t.HoldMember(key, chunkSub(ci), buf)
		} else {
			t.putChunk(key, ci, buf)
		}
	}
	return m
}

// putChunk stores chunk i of key, or deletes it when it is all zeros.
func (t *Tx) putChunk(key []byte, i int64, data []byte) {
	if bytes.Equal(data, zeroChunk[:len(data)]) {
		t.DeleteMember(key, chunkSub(i))
		return
	}
	t.SetMember(key, chunkSub(i), data)
}
