package command

import (
	"bytes"
	"math"
	"math/bits"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// Bitmap commands (bitops.c in Redis). A bitmap is a string: bit 0 is the
// most significant bit of byte 0. They read and write through the store's
// string accessors, so on a big (chunked) string they touch only the
// chunks of the bits they use, and the holes of a sparse bitmap read as
// zeros without being allocated.
func init() {
	one := singleKey("bitmap")
	register(
		one(&Command{Name: "setbit", Arity: 4, Flags: Write | DenyOOM, Categories: []string{"bitmap"}, Since: "2.2.0",
			Summary: "Sets or clears the bit at offset in the string value stored at key", Run: cmdSetBit, ReadFirst: setBitRead}, "RW", "access", "update"),
		one(&Command{Name: "getbit", Arity: 3, Flags: ReadOnly | Fast, Categories: []string{"bitmap"}, Since: "2.2.0",
			Summary: "Returns the bit value at offset in the string value stored at key", Run: cmdGetBit}, "RO", "access"),
		one(&Command{Name: "bitcount", Arity: -2, Flags: ReadOnly, Categories: []string{"bitmap"}, Since: "2.6.0",
			Summary: "Count set bits in a string", Run: cmdBitCount}, "RO", "access"),
		one(&Command{Name: "bitpos", Arity: -3, Flags: ReadOnly, Categories: []string{"bitmap"}, Since: "2.8.7",
			Summary: "Find first bit set or clear in a string", Run: cmdBitPos}, "RO", "access"),
		&Command{Name: "bitop", Arity: -4, Flags: Write | DenyOOM, FirstKey: 2, LastKey: -1, Step: 1, Categories: []string{"bitmap"},
			Group: "bitmap", Since: "2.6.0", Summary: "Perform bitwise operations between strings",
			KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, Index: 2, KeyStep: 1}, {Flags: []string{"RO", "access"}, Index: 3, LastKey: -1, KeyStep: 1}},
			Run:      cmdBitOp},
		one(&Command{Name: "bitfield", Arity: -2, Flags: Write | DenyOOM, Categories: []string{"bitmap"}, Since: "3.2.0",
			Summary: "Perform arbitrary bitfield integer operations on strings", Run: cmdBitField}, "RW", "access", "update", "variable_flags"),
		one(&Command{Name: "bitfield_ro", Arity: -2, Flags: ReadOnly | Fast, Categories: []string{"bitmap"}, Since: "6.0.0",
			Summary: "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", Run: cmdBitFieldRO}, "RO", "access"),
	)
	table["bitfield"].KeySpecs[0].Notes = "This command allows both access and modification of the key"
}

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
	errBitArg    = "ERR The bit argument must be 1 or 0."
	errBitType   = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)

// bitOffset parses a bit offset (Redis getBitOffsetFromArgument). With
// hash, "#N" means N*bits (BITFIELD). The offset's byte must be below
// proto-max-bulk-len: bits up to 2^32-1 with the default 512 MB.
func bitOffset(c *Ctx, arg []byte, hash bool, width int) (int64, bool) {
	usehash := hash && len(arg) > 1 && arg[0] == '#'
	if usehash {
		arg = arg[1:]
	}
	n, ok := num.ParseInt(arg)
	if usehash {
		n *= int64(width) // wraps on overflow as in Redis, caught below
	}
	if !ok || n < 0 || n>>3 >= maxStringLen {
		c.W.Error(errBitOffset)
		return 0, false
	}
	return n, true
}

// bitmapFor looks up key for a write and makes sure it has at least n
// bytes, growing it with zeros (creating it if missing): Redis's
// lookupStringForBitCommand. It also marks the value raw, as Redis's lookup
// does. dirty reports that the key was created or grown.
func bitmapFor(c *Ctx, key []byte, n int64) (m store.Meta, dirty, ok bool) {
	m, found, wrong := c.LookupShared(key, store.TypeString) // WriteStringRange copies
	if wrong {
		return m, false, false
	}
	if !found {
		m = store.Meta{Type: store.TypeString}
	}
	dirty = !found || m.StringLen() < n
	if dirty || !m.Raw {
		return c.Tx.WriteStringRange(key, m, n, nil), dirty, true
	}
	return m, false, true
}

func cmdSetBit(c *Ctx) {
	key := c.Args[1]
	off, ok := bitOffset(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	on, ok := num.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return
	}
	byteOff := off >> 3
	m, found, wrong := c.LookupShared(key, store.TypeString) // WriteStringRange copies
	if wrong {
		return
	}
	if !found {
		m = store.Meta{Type: store.TypeString}
	}
	var b byte
	if v := c.Tx.ReadStringRange(key, m, byteOff, byteOff+1); len(v) == 1 {
		b = v[0]
	}
	mask := byte(1) << (7 - off&7)
	old := b&mask != 0
	// Write only if the key is created, grows or the bit changes (Redis
	// signals no modification otherwise), or to mark the value raw as
	// Redis's lookup for a bit write does.
	changed := !found || m.StringLen() <= byteOff || old != (on == 1)
	if changed || !m.Raw {
		if on == 1 {
			b |= mask
		} else {
			b &^= mask
		}
		c.Tx.WriteStringRange(key, m, byteOff, []byte{b})
	}
	if changed {
		c.Tx.Notify(store.NotifyString, "setbit", key)
	}
	c.W.Int(boolInt(old))
}

// setBitRead answers a SETBIT that would change nothing (the bit already
// has the value, in a raw string long enough) on applied state, without a
// record: cmdSetBit would write nothing either. Errors are answered here
// too, in cmdSetBit's order.
func setBitRead(c *Ctx) bool {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(false)) // a write's lookup: no keymiss
	key := c.Args[1]
	off, ok := bitOffset(c, c.Args[2], false, 0)
	if !ok {
		return true
	}
	on, ok := num.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return true
	}
	m, found, wrong := c.Lookup(key, store.TypeString)
	if wrong || !found {
		return wrong
	}
	byteOff := off >> 3
	if !m.Raw || m.StringLen() <= byteOff {
		return false
	}
	old := c.Tx.ReadStringRange(key, m, byteOff, byteOff+1)[0]&(1<<(7-off&7)) != 0
	if old != (on == 1) {
		return false
	}
	c.W.Int(boolInt(old))
	return true
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmdGetBit(c *Ctx) {
	off, ok := bitOffset(c, c.Args[2], false, 0)
	if !ok {
		return
	}
	m, ok := c.Tx.LookupShared(c.Args[1]) // reads one byte: no copy of the value
	switch {
	case ok && m.Type != store.TypeString:
		c.W.Error(ErrWrongType)
		return
	case !ok:
		c.W.Int(0)
		return
	}
	v := c.Tx.ReadStringRange(c.Args[1], m, off>>3, off>>3+1)
	c.W.Int(boolInt(len(v) == 1 && v[0]&(1<<(7-off&7)) != 0))
}

// rangeArgs parses the range arguments of BITCOUNT and BITPOS, args being
// start [end [BYTE|BIT]], in Redis's order, and converts them to an
// inclusive range of bits over a string of strlen bytes: negative indexes
// count from the end, the range is clamped to the string, and first > last
// means empty. Without end (BITPOS only) the range runs to the end of the
// string. BITPOS reads start, then the unit, then end; BITCOUNT
// (bitcount) reads start and end, answers two negative indexes in the
// wrong order as empty, and only then reads the unit.
func rangeArgs(c *Ctx, args [][]byte, strlen int64, bitcount bool) (first, last int64, ok bool) {
	start, ok := num.ParseInt(args[0])
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, 0, false
	}
	var end int64
	parseEnd := func() bool {
		if end, ok = num.ParseInt(args[1]); !ok {
			c.W.Error(ErrNotInt)
		}
		return ok
	}
	if bitcount {
		if !parseEnd() {
			return 0, 0, false
		}
		if start < 0 && end < 0 && start > end {
			return 1, 0, true // empty
		}
	}
	isBit := false
	if len(args) == 3 {
		switch strings.ToLower(string(args[2])) {
		case "bit":
			isBit = true
		case "byte":
		default:
			c.W.Error(ErrSyntax)
			return 0, 0, false
		}
	}
	total := strlen
	if isBit {
		total <<= 3
	}
	if len(args) < 2 {
		end = total - 1
	} else if !bitcount && !parseEnd() {
		return 0, 0, false
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if start > end {
		return 1, 0, true // empty (and start may be too big to scale)
	}
	if !isBit {
		start, end = start<<3, end<<3|7
	}
	return start, end, true
}

func cmdBitCount(c *Ctx) {
	key := c.Args[1]
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	if !ok {
		c.W.Int(0)
		return
	}
	n := m.StringLen()
	first, last := int64(0), n<<3-1
	switch len(c.Args) {
	case 2:
	case 4, 5:
		if first, last, ok = rangeArgs(c, c.Args[2:], n, true); !ok {
			return
		}
	default:
		c.W.Error(ErrSyntax)
		return
	}
	if first > last {
		c.W.Int(0)
		return
	}
	var count int64
	c.Tx.VisitString(key, m, first>>3, last>>3+1, func(off, n int64, data []byte) bool {
		count += popcount(data)
		return true
	})
	// Take out the bits of the edge bytes that are outside the range.
	if first&7 != 0 {
		b := c.Tx.ReadStringRange(key, m, first>>3, first>>3+1)
		count -= int64(bits.OnesCount8(b[0] >> (8 - first&7)))
	}
	if last&7 != 7 {
		b := c.Tx.ReadStringRange(key, m, last>>3, last>>3+1)
		count -= int64(bits.OnesCount8(b[0] & (0xff >> (last&7 + 1))))
	}
	c.W.Int(count)
}

func popcount(data []byte) int64 {
	var n int
	for len(data) >= 8 {
		n += bits.OnesCount64(wordAt(data))
		data = data[8:]
	}
	for _, b := range data {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

func cmdBitPos(c *Ctx) {
	key := c.Args[1]
	bit, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error(errBitArg)
		return
	}
	m, ok, wrong := c.Lookup(key, store.TypeString)
	if wrong {
		return
	}
	if !ok {
		// A missing key is an endless run of zeros.
		c.W.Int(-bit) // 0 for a clear bit, -1 for a set one
		return
	}
	n := m.StringLen()
	first, last := int64(0), n<<3-1
	endGiven := false
	switch len(c.Args) {
	case 3:
	case 4, 5, 6:
		if first, last, ok = rangeArgs(c, c.Args[3:], n, false); !ok {
			return
		}
		endGiven = len(c.Args) >= 5
	default:
		c.W.Error(ErrSyntax)
		return
	}
	if first > last {
		c.W.Int(-1)
		return
	}
	pos := findBit(c.Tx, key, m, first, last, bit == 1)
	if pos < 0 && bit == 0 && !endGiven {
		// Without an explicit end the string counts as padded with zeros
		// on the right: the first clear bit is just past it.
		pos = last + 1
	}
	c.W.Int(pos)
}

// findBit returns the position of the first bit equal to one in bits
// [first, last] of string key, or -1.
func findBit(tx *store.Tx, key []byte, m store.Meta, first, last int64, one bool) int64 {
	pos := int64(-1)
	skip := byte(0xff) // a byte with no bit we look for
	if one {
		skip = 0
	}
	skipWord := uint64(skip) * 0x0101010101010101
	tx.VisitString(key, m, first>>3, last>>3+1, func(off, n int64, data []byte) bool {
		if data == nil { // zeros
			if !one {
				pos = max(off<<3, first)
				return false
			}
			return true
		}
		for i := 0; i < len(data); i++ {
			// Whole words without a match, then byte by byte; edge bytes
			// are masked, which only removes matches, so skipping is safe.
			for i+8 <= len(data) && wordAt(data[i:]) == skipWord {
				i += 8
			}
			if i == len(data) {
				break
			}
			v := data[i]
			if !one {
				v = ^v
			}
			p := off + int64(i)
			if p == first>>3 {
				v &= 0xff >> (first & 7)
			}
			if p == last>>3 {
				v &= 0xff << (7 - last&7)
			}
			if v != 0 {
				pos = p<<3 + int64(bits.LeadingZeros8(v))
				return false
			}
		}
		return true
	})
	return pos
}

func wordAt(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// cmdBitOp computes the result piece by piece (store.WriteStringFunc), so
// big operands are never in memory whole. The destination may be one of
// the sources: each piece is read from the sources before it is written.
func cmdBitOp(c *Ctx) {
	op := strings.ToLower(c.Arg(1))
	switch op {
	case "and", "or", "xor", "not":
	default:
		c.W.Error(ErrSyntax)
		return
	}
	if op == "not" && len(c.Args) != 4 {
		c.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	dst, keys := c.Args[2], c.Args[3:]
	metas := make([]store.Meta, len(keys))
	prev := c.Tx.KeyMiss(true) // the sources are reads (keymiss events)
	var maxLen int64
	for j, k := range keys {
		m, ok, wrong := c.Lookup(k, store.TypeString)
		if wrong {
			return
		}
		if ok {
			metas[j] = m // a missing key stays an empty string
			maxLen = max(maxLen, m.StringLen())
		}
	}
	c.Tx.KeyMiss(prev)
	if maxLen == 0 {
		if c.Tx.Delete(dst) {
			c.Tx.Notify(store.NotifyGeneric, "del", dst)
		}
		c.W.Int(0)
		return
	}
	c.Tx.WriteStringFunc(dst, maxLen, 0, func(off int64, buf []byte) {
		end := off + int64(len(buf))
		for j, k := range keys {
			v := c.Tx.ReadStringRange(k, metas[j], off, end) // short: zeros follow
			switch {
			case op == "not":
				for i := range buf {
					buf[i] = ^byteAt(v, i)
				}
			case op == "and" && j == 0:
				copy(buf, v)
			case op == "and":
				for i := range buf {
					buf[i] &= byteAt(v, i)
				}
			case op == "or":
				for i, b := range v {
					buf[i] |= b
				}
			case op == "xor":
				for i, b := range v {
					buf[i] ^= b
				}
			}
		}
	})
	c.Tx.Notify(store.NotifyString, "set", dst)
	c.W.Int(maxLen)
}

func byteAt(v []byte, i int) byte {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// BITFIELD operations and overflow modes.
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	owWrap = iota
	owSat
	owFail
)

type bitfieldOp struct {
	offset int64
	value  int64 // SET value or INCRBY increment
	op     int
	ow     int
	bits   uint
	signed bool
}

func cmdBitField(c *Ctx)   { bitfieldGeneric(c, false) }
func cmdBitFieldRO(c *Ctx) { bitfieldGeneric(c, true) }

// bitfieldType parses i1..i64 or u1..u63 (Redis getBitfieldTypeFromArgument,
// which reads the argument as a C string: it ends at a zero byte).
func bitfieldType(c *Ctx, arg []byte) (width uint, signed, ok bool) {
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i]
	}
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		c.W.Error(errBitType)
		return 0, false, false
	}
	signed = arg[0] == 'i'
	n, ok := num.ParseInt(arg[1:])
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		c.W.Error(errBitType)
		return 0, false, false
	}
	return uint(n), signed, true
}

// parseBitfield parses BITFIELD's operations; it answers the first error.
func parseBitfield(c *Ctx) (ops []bitfieldOp, readonly bool, highest int64, ok bool) {
	ow, readonly := owWrap, true
	for j := 2; j < len(c.Args); j++ {
		rem := len(c.Args) - j - 1
		var op int
		switch sub := strings.ToLower(c.Arg(j)); {
		case sub == "get" && rem >= 2:
			op = bfGet
		case sub == "set" && rem >= 3:
			op = bfSet
		case sub == "incrby" && rem >= 3:
			op = bfIncrBy
		case sub == "overflow" && rem >= 1:
			j++
			switch strings.ToLower(c.Arg(j)) {
			case "wrap":
				ow = owWrap
			case "sat":
				ow = owSat
			case "fail":
				ow = owFail
			default:
				c.W.Error("ERR Invalid OVERFLOW type specified")
				return nil, false, 0, false
			}
			continue
		default:
			c.W.Error(ErrSyntax)
			return nil, false, 0, false
		}
		width, signed, ok := bitfieldType(c, c.Args[j+1])
		if !ok {
			return nil, false, 0, false
		}
		off, ok := bitOffset(c, c.Args[j+2], true, int(width))
		if !ok {
			return nil, false, 0, false
		}
		o := bitfieldOp{offset: off, op: op, ow: ow, bits: width, signed: signed}
		if op != bfGet {
			readonly = false
			highest = max(highest, off+int64(width)-1)
			if o.value, ok = num.ParseInt(c.Args[j+3]); !ok {
				c.W.Error(ErrNotInt)
				return nil, false, 0, false
			}
			j++
		}
		ops = append(ops, o)
		j += 2
	}
	return ops, readonly, highest, true
}

func bitfieldGeneric(c *Ctx, ro bool) {
	key := c.Args[1]
	ops, readonly, highest, ok := parseBitfield(c)
	if !ok {
		return
	}
	var m store.Meta
	var dirty bool // created or grown: every write counts as a change
	changes := 0
	if readonly {
		var wrong bool
		prev := c.Tx.KeyMiss(true) // only GETs: a read lookup (keymiss events)
		m, _, wrong = c.Lookup(key, store.TypeString)
		c.Tx.KeyMiss(prev)
		if wrong {
			return
		}
	} else {
		if ro {
			c.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		// The string grows to the highest bit written, even when every
		// write fails (OVERFLOW FAIL), as in Redis.
		if m, dirty, ok = bitmapFor(c, key, highest>>3+1); !ok {
			return
		}
	}
	c.W.ArrayLen(len(ops))
	for _, o := range ops {
		at := o.offset >> 3
		var buf [9]byte // the field is within 9 bytes; zeros past the end
		copy(buf[:], c.Tx.ReadStringRange(key, m, at, at+9))
		bo := uint(o.offset - at<<3)
		if o.op == bfGet {
			if o.signed {
				c.W.Int(getSigned(buf[:], bo, o.bits))
			} else {
				c.W.Int(int64(getUnsigned(buf[:], bo, o.bits)))
			}
			continue
		}
		var stored uint64
		var reply int64
		var overflow int
		if o.signed {
			old := getSigned(buf[:], bo, o.bits)
			if o.op == bfIncrBy {
				var limit int64
				overflow, limit = signedOverflow(old, o.value, o.bits, o.ow)
				nv := old + o.value
				if overflow != 0 {
					nv = limit
				}
				stored, reply = uint64(nv), nv
			} else {
				nv := o.value
				if ov, limit := signedOverflow(nv, 0, o.bits, o.ow); ov != 0 {
					overflow, nv = ov, limit
				}
				stored, reply = uint64(nv), old
			}
		} else {
			old := getUnsigned(buf[:], bo, o.bits)
			if o.op == bfIncrBy {
				var limit uint64
				overflow, limit = unsignedOverflow(old, o.value, o.bits, o.ow)
				nv := old + uint64(o.value)
				if overflow != 0 {
					nv = limit
				}
				stored, reply = nv, int64(nv)
			} else {
				nv := uint64(o.value)
				if ov, limit := unsignedOverflow(nv, 0, o.bits, o.ow); ov != 0 {
					overflow, nv = ov, limit
				}
				stored, reply = nv, int64(old)
			}
		}
		if overflow != 0 && o.ow == owFail {
			c.W.Null()
			continue
		}
		c.W.Int(reply)
		// Write only a change: Redis signals no modification for a field
		// set to the value it had.
		field := buf[:(bo+o.bits-1)/8+1]
		before := string(field)
		setBits(buf[:], bo, o.bits, stored)
		if string(field) != before {
			m = c.Tx.WriteStringRange(key, m, at, field)
		}
		if dirty || string(field) != before {
			changes++
		}
	}
	if changes > 0 { // Redis's "setbit" event, once, if a write changed something
		c.Tx.Notify(store.NotifyString, "setbit", key)
	}
}

// getUnsigned reads width bits at bit offset bo of buf, most significant
// bit first.
func getUnsigned(buf []byte, bo, width uint) uint64 {
	var v uint64
	for j := uint(0); j < width; j++ {
		p := bo + j
		v = v<<1 | uint64(buf[p>>3]>>(7-p&7)&1)
	}
	return v
}

func getSigned(buf []byte, bo, width uint) int64 {
	v := getUnsigned(buf, bo, width)
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= math.MaxUint64 << width // sign extension
	}
	return int64(v)
}

// setBits writes the low width bits of v at bit offset bo of buf.
func setBits(buf []byte, bo, width uint, v uint64) {
	for j := uint(0); j < width; j++ {
		p := bo + j
		mask := byte(1) << (7 - p&7)
		if v>>(width-1-j)&1 != 0 {
			buf[p>>3] |= mask
		} else {
			buf[p>>3] &^= mask
		}
	}
}

// unsignedOverflow tells whether value+incr leaves the range of a width-bit
// unsigned field (1 above, -1 below, 0 not) and what to store instead
// under WRAP or SAT (Redis checkUnsignedBitfieldOverflow).
func unsignedOverflow(value uint64, incr int64, width uint, ow int) (int, uint64) {
	maxv := uint64(1)<<width - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	wrap := (value + uint64(incr)) & maxv
	switch {
	case value > maxv || (incr > 0 && incr > maxIncr):
		if ow == owSat {
			return 1, maxv
		}
		return 1, wrap
	case incr < 0 && incr < minIncr:
		if ow == owSat {
			return -1, 0
		}
		return -1, wrap
	}
	return 0, 0
}

// signedOverflow is unsignedOverflow for a width-bit signed field (Redis
// checkSignedBitfieldOverflow, whose arithmetic wraps like Go's).
func signedOverflow(value, incr int64, width uint, ow int) (int, int64) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxIncr := int64(uint64(maxv) - uint64(value))
	minIncr := minv - value
	wrap := uint64(value) + uint64(incr)
	if width < 64 {
		if wrap&(1<<(width-1)) != 0 {
			wrap |= math.MaxUint64 << width
		} else {
			wrap &^= math.MaxUint64 << width
		}
	}
	switch {
	case value > maxv || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if ow == owSat {
			return 1, maxv
		}
		return 1, int64(wrap)
	case value < minv || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if ow == owSat {
			return -1, minv
		}
		return -1, int64(wrap)
	}
	return 0, 0
}
