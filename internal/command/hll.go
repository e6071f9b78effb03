package command

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"basalt/internal/store"
)

// HyperLogLog commands (hyperloglog.c in Redis). An HLL is a plain string
// whose bytes are Redis's own representation, so GET and SET carry an HLL
// from basalt to Redis and back:
//
//	"HYLL" | encoding (0 dense, 1 sparse) | 3 unused bytes | cached count (8 bytes, LE)
//
// followed by 16384 6-bit registers: packed little-endian (dense, always
// 12304 bytes in all) or run-length opcodes (sparse). The top bit of the
// cached count's last byte marks it stale. Every step below (where a sparse
// opcode is split, when adjacent values merge, when the value turns dense)
// follows Redis's algorithm exactly, because the stored bytes must be the
// same as Redis's after the same commands, not merely the estimates.
func init() {
	hll := func(c *Command) *Command {
		c.Group = "hyperloglog"
		return c
	}
	register(
		hll(&Command{Name: "pfadd", Arity: -2, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1,
			Categories: []string{"hyperloglog"}, Since: "2.8.9", Summary: "Adds the specified elements to the specified HyperLogLog.",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "insert"}, Index: 1, KeyStep: 1}}, Run: cmdPFAdd, ReadFirst: pfAddRead, ReadFirstAfterSame: true}),
		// PFCOUNT is read-only for Redis, yet counting one key stores the
		// count in the value's header when it was stale. So it goes through
		// the write path, except when ReadFirst can answer without changing
		// anything (several keys, or a count still cached).
		hll(&Command{Name: "pfcount", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: -1, Step: 1,
			Categories: []string{"hyperloglog"}, Since: "2.8.9", Summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access"}, Index: 1, LastKey: -1, KeyStep: 1,
				Notes: "RW because it may change the internal representation of the key, and propagate to replicas"}},
			Run: cmdPFCount, ReadFirst: pfCountRead}),
		hll(&Command{Name: "pfmerge", Arity: -2, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 1,
			Categories: []string{"hyperloglog"}, Since: "2.8.9", Summary: "Merge N different HyperLogLogs into a single one.",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access", "insert"}, Index: 1, KeyStep: 1}, {Flags: []string{"RO", "access"}, Index: 2, LastKey: -1, KeyStep: 1}},
			Run:      cmdPFMerge}),
		hll(&Command{Name: "pfdebug", Arity: 3, Flags: Write | DenyOOM | Admin, FirstKey: 2, LastKey: 2, Step: 1,
			Categories: []string{"hyperloglog", "admin", "dangerous"}, Since: "2.8.9", Summary: "Internal commands for debugging HyperLogLog values",
			KeySpecs: []KeySpec{{Flags: []string{"RW", "access"}, Index: 2, KeyStep: 1}}, Run: cmdPFDebug}),
		hll(&Command{Name: "pfselftest", Arity: 1, Flags: Admin,
			Categories: []string{"hyperloglog", "admin", "dangerous"}, Since: "2.8.9", Summary: "An internal command for testing HyperLogLog values",
			Run: cmdPFSelfTest}),
	)
}

const (
	hllP         = 14 // register index bits
	hllQ         = 64 - hllP
	hllRegisters = 1 << hllP
	hllBits      = 6
	hllRegMax    = 1<<hllBits - 1
	hllHdrSize   = 16
	hllDenseSize = hllHdrSize + (hllRegisters*hllBits+7)/8

	hllDense  = 0
	hllSparse = 1

	// hllSparseMaxBytes is hll-sparse-max-bytes at its default: a sparse
	// HLL that would grow past it turns dense. A constant, so that applying
	// a record never depends on configuration.
	hllSparseMaxBytes = 3000

	// Sparse opcodes: ZERO 00xxxxxx (1-64 zero registers), XZERO 01xxxxxx
	// yyyyyyyy (1-16384 zero registers), VAL 1vvvvvxx (1-4 registers of
	// value 1-32).
	hllZeroMaxLen  = 64
	hllXZeroMaxLen = 16384
	hllValMaxValue = 32
	hllValMaxLen   = 4

	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLInvalid   = "INVALIDOBJ Corrupted HLL object detected"
)

// murmurHash64A is Austin Appleby's MurmurHash64A as Redis uses it for HLLs
// (little-endian reads, as on the machines Redis runs on). It is written
// here rather than taken from a library because the registers an element
// lands in must be exactly Redis's, and hash libraries implement other
// variants (MurmurHash3, 64B) or other seeding.
func murmurHash64A(data []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(data))*m
	for len(data) >= 8 {
		k := uint64(data[0]) | uint64(data[1])<<8 | uint64(data[2])<<16 | uint64(data[3])<<24 |
			uint64(data[4])<<32 | uint64(data[5])<<40 | uint64(data[6])<<48 | uint64(data[7])<<56
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		data = data[8:]
	}
	if len(data) > 0 {
		for i := len(data) - 1; i >= 0; i-- {
			h ^= uint64(data[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element falls in and the length of
// the run of zeros (plus one) in the rest of its hash: the value that
// register must at least hold.
func hllPatLen(ele []byte) (index, count int) {
	h := murmurHash64A(ele, 0xadc83b19)
	index = int(h & (hllRegisters - 1))
	h >>= hllP
	h |= 1 << hllQ // makes sure the count is at most hllQ+1
	return index, bits.TrailingZeros64(h) + 1
}

// hllValid is Redis's check that a string holds an HLL: a header with the
// magic and a known encoding, and the exact size if dense.
func hllValid(v []byte) bool { return hllValidHeader(v, int64(len(v))) }

// hllValidHeader is hllValid from the first bytes of a value of n bytes.
func hllValidHeader(hdr []byte, n int64) bool {
	if len(hdr) < hllHdrSize || string(hdr[:4]) != "HYLL" || hdr[4] > hllSparse {
		return false
	}
	return hdr[4] != hllDense || n == hllDenseSize
}

// hllNew is a new, empty HLL: sparse, all registers in XZERO opcodes, with
// a valid cached count of zero.
func hllNew() []byte {
	v := make([]byte, hllHdrSize, hllHdrSize+2)
	copy(v, "HYLL")
	v[4] = hllSparse
	for n := hllRegisters; n > 0; n -= hllXZeroMaxLen {
		v = append(v, xzeroOp(min(n, hllXZeroMaxLen))...)
	}
	return v
}

func hllCacheValid(v []byte) bool { return v[15]&0x80 == 0 }
func hllInvalidate(v []byte)      { v[15] |= 0x80 }

func hllCached(v []byte) uint64 {
	var n uint64
	for i := 15; i >= 8; i-- {
		n = n<<8 | uint64(v[i])
	}
	return n
}

func hllSetCache(v []byte, n uint64) {
	for i := 8; i < 16; i++ {
		v[i] = byte(n)
		n >>= 8
	}
}

// Dense registers: register i is the 6 bits starting at bit 6*i, low bits
// first. The last register ends exactly at the last byte; Redis reads (and
// leaves unchanged) the string's terminating zero after it, hence the
// bounds checks.
func denseGet(regs []byte, i int) int {
	return registerAt(regs[i*hllBits/8:], i*hllBits&7)
}

// registerAt reads the register starting at bit shift of p[0], from p's
// first one or two bytes.
func registerAt(p []byte, shift int) int {
	v := uint(p[0]) >> uint(shift)
	if len(p) > 1 {
		v |= uint(p[1]) << (8 - uint(shift))
	}
	return int(v & hllRegMax)
}

func denseSet(regs []byte, i, val int) {
	b, fb := i*hllBits/8, uint(i*hllBits&7)
	regs[b] = regs[b]&^byte(hllRegMax<<fb) | byte(val<<fb)
	if b+1 < len(regs) {
		regs[b+1] = regs[b+1]&^byte(hllRegMax>>(8-fb)) | byte(val>>(8-fb))
	}
}

// denseSetMax raises register i to count; it reports whether it changed.
func denseSetMax(regs []byte, i, count int) bool {
	if denseGet(regs, i) >= count {
		return false
	}
	denseSet(regs, i, count)
	return true
}

// Sparse opcodes.
func isZeroOp(b byte) bool  { return b&0xc0 == 0 }
func isXZeroOp(b byte) bool { return b&0xc0 == 0x40 }
func zeroLen(b byte) int    { return int(b&0x3f) + 1 }
func valValue(b byte) int   { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int     { return int(b&3) + 1 }
func zeroOp(n int) byte     { return byte(n - 1) }
func valOp(v, n int) byte   { return 0x80 | byte(v-1)<<2 | byte(n-1) }
func xzeroOp(n int) []byte  { return []byte{0x40 | byte((n-1)>>8), byte(n - 1)} }

// xzeroLen reads the XZERO opcode at p. A truncated one reads a zero second
// byte, as Redis reads the string's terminator.
func xzeroLen(v []byte, p int) int {
	n := int(v[p]&0x3f) << 8
	if p+1 < len(v) {
		n |= int(v[p+1])
	}
	return n + 1
}

// hllZeros is the opcode for a run of n zero registers.
func hllZeros(n int) []byte {
	if n > hllZeroMaxLen {
		return xzeroOp(n)
	}
	return []byte{zeroOp(n)}
}

// hllAdd adds an element. It returns the value (which may have grown or
// turned dense) and 1 if a register changed, 0 if not, -1 if v is corrupt.
func hllAdd(v, ele []byte) ([]byte, int) {
	index, count := hllPatLen(ele)
	if v[4] == hllDense {
		if denseSetMax(v[hllHdrSize:], index, count) {
			return v, 1
		}
		return v, 0
	}
	return hllSparseSet(v, index, count)
}

// hllSparseSet raises register index of a sparse HLL to count, as Redis's
// hllSparseSet: it edits the one opcode covering the register in place,
// splitting it into at most three, then merges equal neighbouring values.
// A count too big for a VAL opcode, or an HLL about to outgrow
// hllSparseMaxBytes, turns the HLL dense.
func hllSparseSet(v []byte, index, count int) ([]byte, int) {
	if count > hllValMaxValue {
		return hllPromoteSet(v, index, count)
	}
	// Find the opcode covering index: p, its first register and span, and
	// the opcode before it.
	p, end := hllHdrSize, len(v)
	first, span, prev := 0, 0, -1
	for p < end {
		oplen := 1
		switch {
		case isZeroOp(v[p]):
			span = zeroLen(v[p])
		case !isXZeroOp(v[p]):
			span = valLen(v[p])
		default:
			span = xzeroLen(v, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return v, -1
	}
	op := v[p]
	isVal := !isZeroOp(op) && !isXZeroOp(op)
	switch {
	case isVal && valValue(op) >= count:
		return v, 0
	case isVal && valLen(op) == 1, isZeroOp(op) && zeroLen(op) == 1:
		v[p] = valOp(count, 1)
	default:
		// Replace the opcode by the registers before index, index itself,
		// and those after it.
		last := first + span - 1
		var seq []byte
		if isVal {
			cur := valValue(op)
			if index != first {
				seq = append(seq, valOp(cur, index-first))
			}
			seq = append(seq, valOp(count, 1))
			if index != last {
				seq = append(seq, valOp(cur, last-index))
			}
		} else {
			if index != first {
				seq = append(seq, hllZeros(index-first)...)
			}
			seq = append(seq, valOp(count, 1))
			if index != last {
				seq = append(seq, hllZeros(last-index)...)
			}
		}
		oldlen := 1
		if isXZeroOp(op) {
			oldlen = 2
		}
		newLen := len(v) + len(seq) - oldlen
		if len(seq) > oldlen && newLen > hllSparseMaxBytes {
			return hllPromoteSet(v, index, count)
		}
		out := make([]byte, 0, len(v)+len(seq))
		out = append(out, v[:p]...)
		out = append(out, seq...)
		if p+oldlen < len(v) {
			out = append(out, v[p+oldlen:]...)
		}
		// A truncated XZERO at the very end (a corrupt value) leaves Redis
		// one byte shorter than what was written.
		v = out[:newLen]
	}
	// Merge adjacent VAL opcodes of the same value, scanning up to five
	// opcodes from the one before the change.
	p = hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(v) && scan > 0; scan-- {
		if isXZeroOp(v[p]) {
			p += 2
			continue
		}
		if isZeroOp(v[p]) {
			p++
			continue
		}
		if p+1 < len(v) && !isZeroOp(v[p+1]) && !isXZeroOp(v[p+1]) && valValue(v[p]) == valValue(v[p+1]) {
			if n := valLen(v[p]) + valLen(v[p+1]); n <= hllValMaxLen {
				v[p+1] = valOp(valValue(v[p]), n)
				v = append(v[:p], v[p+1:]...)
				continue // try to merge the result with its right neighbour
			}
		}
		p++
	}
	hllInvalidate(v)
	return v, 1
}

// hllPromoteSet turns a sparse HLL dense and then sets the register (which
// always changes it: the caller only gets here for a register that grows).
func hllPromoteSet(v []byte, index, count int) ([]byte, int) {
	d, ok := hllToDense(v)
	if !ok {
		return v, -1
	}
	denseSetMax(d[hllHdrSize:], index, count)
	return d, 1
}

// hllToDense returns the dense form of a sparse HLL, header (cached count
// included) copied; ok is false if the opcodes don't cover exactly all
// registers.
func hllToDense(v []byte) ([]byte, bool) {
	d := make([]byte, hllDenseSize)
	copy(d, v[:hllHdrSize])
	d[4] = hllDense
	regs := d[hllHdrSize:]
	idx, p := 0, hllHdrSize
	for p < len(v) {
		switch op := v[p]; {
		case isZeroOp(op):
			idx += zeroLen(op)
			p++
		case isXZeroOp(op):
			idx += xzeroLen(v, p)
			p += 2
		default:
			n, val := valLen(op), valValue(op)
			if idx+n > hllRegisters {
				return nil, false
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, val)
				idx++
			}
			p++
		}
	}
	return d, idx == hllRegisters
}

// hllMerge raises out[i] to register i of v for every register; it reports
// false if v is a corrupt sparse HLL.
func hllMerge(out []byte, v []byte) bool {
	if v[4] == hllDense {
		regs := v[hllHdrSize:]
		for i := range hllRegisters {
			if r := byte(denseGet(regs, i)); r > out[i] {
				out[i] = r
			}
		}
		return true
	}
	i, p := 0, hllHdrSize
	for p < len(v) {
		switch op := v[p]; {
		case isZeroOp(op):
			i += zeroLen(op)
			p++
		case isXZeroOp(op):
			i += xzeroLen(v, p)
			p += 2
		default:
			n, val := valLen(op), byte(valValue(op))
			if i+n > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				if val > out[i] {
					out[i] = val
				}
				i++
			}
			p++
		}
	}
	return i == hllRegisters
}

// hllHisto counts the registers of each value in an HLL value; ok is false
// for a sparse HLL whose opcodes don't cover exactly all registers.
func hllHisto(v []byte) (h [64]int, ok bool) {
	if v[4] == hllDense {
		regs := v[hllHdrSize:]
		for i := range hllRegisters {
			h[denseGet(regs, i)]++
		}
		return h, true
	}
	idx, p := 0, hllHdrSize
	for p < len(v) {
		switch op := v[p]; {
		case isZeroOp(op):
			idx += zeroLen(op)
			h[0] += zeroLen(op)
			p++
		case isXZeroOp(op):
			n := xzeroLen(v, p)
			idx += n
			h[0] += n
			p += 2
		default:
			idx += valLen(op)
			h[valValue(op)] += valLen(op)
			p++
		}
	}
	return h, idx == hllRegisters
}

// rawHisto counts the registers of each value in a byte-per-register array.
func rawHisto(regs []byte) (h [64]int) {
	for _, r := range regs {
		h[r]++
	}
	return h
}

// hllEstimate is Redis's estimate from the register histogram: Otmar Ertl's
// improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284). The explicit float64
// conversions forbid fused multiply-adds, which would change the last bit
// of some estimates on some CPUs; Redis's build doesn't fuse either.
func hllEstimate(h *[64]int) uint64 {
	m := float64(hllRegisters)
	z := float64(m * hllTau((m-float64(h[hllQ+1]))/m))
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(h[0])/m))
	const alphaInf = 0.721347520444481703680 // 0.5/ln(2)
	return uint64(math.Round(float64(alphaInf*m) * m / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if z == prev {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := float64((1 - x) * (1 - x))
		z -= float64(d * y)
		if z == prev {
			return z / 3
		}
	}
}

// hllLoad returns key's value if it is an HLL (missing: ok false). It
// answers WRONGTYPE, and returns wrong, for another type or a string that
// is not an HLL. HLL values are read and written only through hllLoad,
// hllHeader and hllStore, the places to change if string storage changes.
func hllLoad(c *Ctx, key []byte) (m store.Meta, v []byte, ok, wrong bool) {
	m, ok, wrong = c.Lookup(key, store.TypeString)
	if !ok {
		return m, nil, false, wrong
	}
	v = c.Tx.ReadString(key, m)
	if !hllValid(v) {
		c.W.Error(errHLLWrongType)
		return m, nil, false, true
	}
	return m, v, true, false
}

// hllHeader is hllLoad for a read that needs only the header: it reads
// the first 16 bytes (one chunk of a dense HLL's four) and checks them as
// hllValid does, with the length from the metadata.
func hllHeader(c *Ctx, key []byte) (hdr []byte, ok, wrong bool) {
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if !ok {
		return nil, false, wrong
	}
	hdr = c.Tx.ReadStringRange(key, m, 0, hllHdrSize)
	if !hllValidHeader(hdr, m.StringLen()) {
		c.W.Error(errHLLWrongType)
		return nil, false, true
	}
	return hdr, true, false
}

// hllStore writes an HLL value with the metadata m (its expiry kept).
func hllStore(c *Ctx, key []byte, m store.Meta, v []byte) {
	c.Tx.WriteString(key, v, m.ExpireAt)
}

// hllUpdate stores v over old, the stored value of key (metadata m) it was
// made from. A dense HLL is a chunked string: only its chunks that changed
// are rewritten (a PFADD raises a register or two and marks the count
// stale, a PFCOUNT stores the count), not all 12 KB.
func hllUpdate(c *Ctx, key []byte, m store.Meta, old, v []byte) {
	if !m.Chunked || len(old) != len(v) {
		hllStore(c, key, m, v)
		return
	}
	for off := 0; off < len(v); off += store.ChunkSize {
		end := min(off+store.ChunkSize, len(v))
		if !bytes.Equal(old[off:end], v[off:end]) {
			m = c.Tx.WriteStringRange(key, m, int64(off), v[off:end])
		}
	}
}

func cmdPFAdd(c *Ctx) {
	key := c.Args[1]
	m, v, ok, wrong := hllLoad(c, key)
	if wrong {
		return
	}
	updated := !ok
	var old []byte // the stored value, if chunked (hllUpdate)
	if !ok {
		v = hllNew()
	} else if m.Chunked {
		old = bytes.Clone(v)
	}
	for _, ele := range c.Args[2:] {
		var r int
		v, r = hllAdd(v, ele)
		if r < 0 {
			// Redis edits the value in place: what the elements before
			// this one changed stays, with the cached count as it was.
			if updated {
				hllUpdate(c, key, m, old, v)
			}
			c.W.Error(errHLLInvalid)
			return
		}
		updated = updated || r == 1
	}
	if !updated {
		c.W.Int(0)
		return
	}
	hllInvalidate(v)
	hllUpdate(c, key, m, old, v)
	c.Tx.Notify(store.NotifyString, "pfadd", key)
	c.W.Int(1)
}

// pfAddRead answers PFADD on applied state when it changes nothing: the
// HLL exists and every element's register already holds at least the
// element's count, so Redis answers 0 and writes, logs and signals
// nothing. (A register that must rise, a new key or a corrupt value go
// through the write path.) Most PFADDs of a counter in use are such: an
// element seen before, or one that does not beat its register.
func pfAddRead(c *Ctx) bool {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(false)) // a write's lookup: no keymiss
	key, elements := c.Args[1], c.Args[2:]
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong || !ok {
		return wrong // WRONGTYPE is answered; a new key is a write
	}
	// A dense HLL is chunked: a read of its chunks that straddles a commit
	// runs again on a snapshot, so the registers below are of one state. A
	// few elements read only the bytes of their registers.
	var register func(index int) (int, bool)
	if len(elements) <= 4 && m.StringLen() == hllDenseSize {
		hdr := c.Tx.ReadStringRange(key, m, 0, hllHdrSize)
		if !hllValidHeader(hdr, m.StringLen()) || hdr[4] != hllDense {
			return false
		}
		register = func(index int) (int, bool) {
			bit := index * hllBits
			at := int64(hllHdrSize + bit/8)
			return registerAt(c.Tx.ReadStringRange(key, m, at, at+2), bit&7), true
		}
	} else {
		v := c.Tx.ReadString(key, m)
		if !hllValid(v) {
			return false
		}
		register = func(index int) (int, bool) { return hllRegister(v, index) }
	}
	for _, ele := range elements {
		index, count := hllPatLen(ele)
		if r, ok := register(index); !ok || r < count {
			return false
		}
	}
	c.W.Int(0)
	return true
}

// hllRegister returns register index of a valid HLL, dense or sparse; ok
// is false if sparse opcodes end before it (a corrupt value).
func hllRegister(v []byte, index int) (r int, ok bool) {
	if v[4] == hllDense {
		return denseGet(v[hllHdrSize:], index), true
	}
	first := 0
	for p := hllHdrSize; p < len(v); {
		op, span, oplen := v[p], 0, 1
		switch {
		case isZeroOp(op):
			span = zeroLen(op)
		case isXZeroOp(op):
			span, oplen = xzeroLen(v, p), 2
		default:
			span = valLen(op)
		}
		if index < first+span {
			if isZeroOp(op) || isXZeroOp(op) {
				return 0, true
			}
			return valValue(op), true
		}
		first += span
		p += oplen
	}
	return 0, false
}

// cmdPFCount answers PFCOUNT in the apply loop. Counting one key whose
// cached count is stale stores the new count, as Redis does.
func cmdPFCount(c *Ctx) {
	if len(c.Args) > 2 {
		pfCountUnion(c)
		return
	}
	key := c.Args[1]
	m, v, ok, wrong := hllLoad(c, key)
	switch {
	case wrong:
	case !ok:
		c.W.Int(0)
	case hllCacheValid(v):
		c.W.Int(int64(hllCached(v)))
	default:
		h, valid := hllHisto(v)
		if !valid {
			c.W.Error(errHLLInvalid)
			break
		}
		n := hllEstimate(&h)
		old := bytes.Clone(v)
		hllSetCache(v, n)
		hllUpdate(c, key, m, old, v)
		c.W.Int(int64(n))
	}
}

// hllCount is the memo PFCOUNT keeps with an HLL's cached metadata
// (store/memo.go): the count its header holds.
type hllCount uint64

// pfCountRead answers PFCOUNT on a read view when that changes nothing:
// several keys, or one whose header holds a valid count; it returns false,
// answering nothing, when the count is stale (cmdPFCount will store it).
// The header's count is kept as a memo, so counting the unchanged HLL
// again reads only its cached metadata, as Redis reads its header.
func pfCountRead(c *Ctx) bool {
	if len(c.Args) > 2 {
		pfCountUnion(c)
		return true
	}
	key := c.Args[1]
	memo, found, tok := c.Tx.Memo(key)
	if n, isCount := memo.(hllCount); found && isCount {
		c.W.Int(int64(n))
		return true
	}
	hdr, ok, wrong := hllHeader(c, key)
	switch {
	case wrong:
	case !ok:
		c.W.Int(0)
	case hllCacheValid(hdr):
		n := hllCached(hdr)
		c.Tx.Remember(key, hllCount(n), tok)
		c.W.Int(int64(n))
	default:
		return false
	}
	return true
}

// pfCountUnion counts the union of several HLLs, changing none.
func pfCountUnion(c *Ctx) {
	regs := make([]byte, hllRegisters)
	if _, ok := hllMergeKeys(c, regs, c.Args[1:]); !ok {
		return
	}
	h := rawHisto(regs)
	c.W.Int(int64(hllEstimate(&h)))
}

// hllMergeKeys merges the HLLs at keys into regs (missing keys count as
// empty); on a wrong or corrupt value it answers the error and returns
// false. dense reports whether one of them was dense.
func hllMergeKeys(c *Ctx, regs []byte, keys [][]byte) (dense, ok bool) {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // reads, PFMERGE's destination too (keymiss events)
	for _, key := range keys {
		_, v, found, wrong := hllLoad(c, key)
		if wrong {
			return false, false
		}
		if !found {
			continue
		}
		dense = dense || v[4] == hllDense
		if !hllMerge(regs, v) {
			c.W.Error(errHLLInvalid)
			return false, false
		}
	}
	return dense, true
}

func cmdPFMerge(c *Ctx) {
	regs := make([]byte, hllRegisters)
	dense, ok := hllMergeKeys(c, regs, c.Args[1:])
	if !ok {
		return
	}
	key := c.Args[1]
	m, v, found, _ := hllLoad(c, key) // checked by hllMergeKeys
	if !found {
		v = hllNew()
	}
	if dense && v[4] == hllSparse {
		if v, ok = hllToDense(v); !ok {
			c.W.Error(errHLLInvalid)
			return
		}
	}
	// Raise the destination's registers one by one, in order, as Redis
	// does: a sparse destination's opcodes depend on that order.
	for i, r := range regs {
		if r == 0 {
			continue
		}
		if v[4] == hllDense {
			denseSetMax(v[hllHdrSize:], i, int(r))
		} else {
			v, _ = hllSparseSet(v, i, int(r))
		}
	}
	hllInvalidate(v)
	hllStore(c, key, m, v)
	c.Tx.Notify(store.NotifyString, "pfadd", key)
	c.W.OK()
}

// cmdPFDebug is PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
func cmdPFDebug(c *Ctx) {
	sub, key := c.Arg(1), c.Args[2]
	m, v, ok, wrong := hllLoad(c, key)
	if wrong {
		return
	}
	if !ok {
		c.W.Error("ERR The specified key does not exist")
		return
	}
	switch strings.ToLower(sub) {
	case "getreg", "todense":
		converted := v[4] == hllSparse
		if converted {
			if v, ok = hllToDense(v); !ok {
				c.W.Error(errHLLInvalid)
				return
			}
			hllStore(c, key, m, v)
		}
		if strings.EqualFold(sub, "todense") {
			n := int64(0)
			if converted {
				n = 1
			}
			c.W.Int(n)
			return
		}
		c.W.ArrayLen(hllRegisters)
		for i := range hllRegisters {
			c.W.Int(int64(denseGet(v[hllHdrSize:], i)))
		}
	case "decode":
		if v[4] != hllSparse {
			c.W.Error("ERR HLL encoding is not sparse")
			return
		}
		var b strings.Builder
		for p := hllHdrSize; p < len(v); {
			switch op := v[p]; {
			case isZeroOp(op):
				b.WriteString("z:" + strconv.Itoa(zeroLen(op)) + " ")
				p++
			case isXZeroOp(op):
				b.WriteString("Z:" + strconv.Itoa(xzeroLen(v, p)) + " ")
				p += 2
			default:
				b.WriteString("v:" + strconv.Itoa(valValue(op)) + "," + strconv.Itoa(valLen(op)) + " ")
				p++
			}
		}
		c.W.BulkString(strings.TrimRight(b.String(), " "))
	case "encoding":
		c.W.Simple([]string{"dense", "sparse"}[v[4]])
	default:
		c.W.Error("ERR Unknown PFDEBUG subcommand '" + sub + "'")
	}
}

// cmdPFSelfTest checks the register packing and that sparse and dense
// HLLs fed the same elements agree, bit for bit once both are dense.
func cmdPFSelfTest(c *Ctx) {
	regs := make([]byte, hllDenseSize-hllHdrSize)
	want := make([]int, hllRegisters)
	x := uint64(0x9e3779b97f4a7c15)
	for range 100 {
		for i := range want {
			x = x*6364136223846793005 + 1442695040888963407
			want[i] = int(x>>58) & hllRegMax
			denseSet(regs, i, want[i])
		}
		for i := range want {
			if denseGet(regs, i) != want[i] {
				c.W.Error("ERR TESTFAILED Register error at " + strconv.Itoa(i))
				return
			}
		}
	}
	sparse := hllNew()
	dense, _ := hllToDense(hllNew())
	for i := range 5000 {
		ele := []byte(strconv.Itoa(i))
		sparse, _ = hllAdd(sparse, ele)
		dense, _ = hllAdd(dense, ele)
	}
	if sparse[4] == hllSparse {
		sparse, _ = hllToDense(sparse)
	}
	if string(sparse[hllHdrSize:]) != string(dense[hllHdrSize:]) {
		c.W.Error("ERR TESTFAILED sparse and dense representations differ")
		return
	}
	c.W.OK()
}
