package command

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// bfModel is a reference BITFIELD: plain bit-by-bit access on a byte
// slice and exact (big.Int) arithmetic, with Redis's overflow rules
// written as rules rather than as its C expressions.
type bfModel struct{ v []byte }

func (m *bfModel) grow(bits int64) {
	if need := int(bits>>3) + 1; need > len(m.v) {
		m.v = append(m.v, make([]byte, need-len(m.v))...)
	}
}

func (m *bfModel) get(off int64, width uint, signed bool) *big.Int {
	x := new(big.Int)
	for j := int64(0); j < int64(width); j++ {
		p := off + j
		bit := uint(0)
		if p>>3 < int64(len(m.v)) && m.v[p>>3]&(1<<(7-p&7)) != 0 {
			bit = 1
		}
		x.Lsh(x, 1).Or(x, big.NewInt(int64(bit)))
	}
	if signed && x.Bit(int(width)-1) == 1 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), width))
	}
	return x
}

func (m *bfModel) set(off int64, width uint, x *big.Int) {
	u := new(big.Int).Mod(x, new(big.Int).Lsh(big.NewInt(1), width)) // two's complement bits
	for j := int64(0); j < int64(width); j++ {
		p := off + j
		if u.Bit(int(width)-1-int(j)) == 1 {
			m.v[p>>3] |= 1 << (7 - p&7)
		} else {
			m.v[p>>3] &^= 1 << (7 - p&7)
		}
	}
}

// fit applies an overflow mode to x for a width-bit field: the value to
// store, or ok false for FAIL on overflow.
func fit(x *big.Int, width uint, signed bool, ow int) (*big.Int, bool) {
	lo, hi := big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), width)
	if signed {
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), width-1))
		hi = new(big.Int).Lsh(big.NewInt(1), width-1)
	}
	hi.Sub(hi, big.NewInt(1))
	switch {
	case x.Cmp(lo) >= 0 && x.Cmp(hi) <= 0:
		return x, true
	case ow == owFail:
		return nil, false
	case ow == owSat && x.Cmp(hi) > 0:
		return hi, true
	case ow == owSat:
		return lo, true
	}
	u := new(big.Int).Mod(x, new(big.Int).Lsh(big.NewInt(1), width))
	if signed && u.Cmp(hi) > 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), width))
	}
	return u, true
}

// bfGen turns fuzz bytes into BITFIELD arguments and the model's ops. It
// reports whether it produced an invalid argument (then the command must
// answer an error and change nothing).
func bfGen(spec []byte) (args []string, ops []bitfieldOp, invalid bool) {
	next := func() byte {
		if len(spec) == 0 {
			return 0
		}
		b := spec[0]
		spec = spec[1:]
		return b
	}
	ow := owWrap
	n := int(next() % 6)
	for range n {
		kind := next() % 4
		if kind == 3 {
			mode := next()
			names := []string{"WRAP", "sat", "Fail"}
			if mode == 255 {
				args = append(args, "OVERFLOW", "nope")
				invalid = true
				continue
			}
			ow = int(mode % 3)
			args = append(args, "OVERFLOW", names[ow])
			continue
		}
		t := next()
		signed := t&1 == 1
		width := uint(1 + (t>>1)%64)
		typ := "u"
		if signed {
			typ = "i"
		}
		typ += strconv.Itoa(int(width))
		if !signed && width == 64 {
			invalid = true
		}
		off := int64(next()) | int64(next())<<8
		offArg := strconv.FormatInt(off, 10)
		if h := next(); h&1 == 1 {
			off = int64(h>>1) * int64(width)
			offArg = "#" + strconv.Itoa(int(h>>1))
		}
		var vb [8]byte
		for i := range vb {
			vb[i] = next()
		}
		val := int64(binary.LittleEndian.Uint64(vb[:]))
		if vb[7]&1 == 1 {
			val = int64(int8(vb[0])) // small values, near the limits of small fields
		}
		o := bitfieldOp{offset: off, value: val, ow: ow, bits: width, signed: signed}
		switch kind {
		case 0:
			o.op = bfGet
			args = append(args, "GET", typ, offArg)
		case 1:
			o.op = bfSet
			args = append(args, "SET", typ, offArg, strconv.FormatInt(val, 10))
		default:
			o.op = bfIncrBy
			args = append(args, "INCRBY", typ, offArg, strconv.FormatInt(val, 10))
		}
		ops = append(ops, o)
	}
	return args, ops, invalid
}

// run is the model's BITFIELD: the reply and the value after it.
func (m *bfModel) run(ops []bitfieldOp, exists bool) ([]byte, []byte, bool) {
	w := resp.NewWriter(2)
	writes := false
	var highest int64
	for _, o := range ops {
		if o.op != bfGet {
			writes = true
			highest = max(highest, o.offset+int64(o.bits)-1)
		}
	}
	if writes {
		m.grow(highest)
		exists = true
	}
	w.ArrayLen(len(ops))
	for _, o := range ops {
		old := m.get(o.offset, o.bits, o.signed)
		switch o.op {
		case bfGet:
			w.Int(old.Int64())
			continue
		case bfSet:
			x := big.NewInt(o.value)
			if !o.signed { // Redis reads the SET value as unsigned 64 bits
				x.SetUint64(uint64(o.value))
			}
			nv, ok := fit(x, o.bits, o.signed, o.ow)
			if o.signed && o.ow == owSat && o.bits < 64 && o.value <= math.MaxInt64>>(64-o.bits)-math.MaxInt64-1 {
				// Redis quirk: its max-value overflows for a value this
				// far below the field, which then saturates to the top.
				nv = new(big.Int).SetInt64(math.MaxInt64 >> (64 - o.bits))
			}
			if !ok {
				w.Null()
				continue
			}
			w.Int(old.Int64())
			m.set(o.offset, o.bits, nv)
		case bfIncrBy:
			nv, ok := fit(new(big.Int).Add(old, big.NewInt(o.value)), o.bits, o.signed, o.ow)
			if !ok {
				w.Null()
				continue
			}
			w.Int(nv.Int64())
			m.set(o.offset, o.bits, nv)
		}
	}
	return w.Buf, m.v, exists
}

// FuzzBitfield runs BITFIELD, built from fuzz bytes, on a string that may
// be inline or chunked, and compares the reply and the resulting value with
// bfModel. Seeds are in testdata/fuzz/FuzzBitfield.
func FuzzBitfield(f *testing.F) {
	f.Add([]byte("abc"), false, []byte{3, 1, 15, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 127, 2, 15, 8, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{}, true, []byte{5, 3, 1, 1, 127, 0, 128, 0, 0, 0, 0, 0, 0, 0, 1, 3, 2, 2, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128})
	st, err := store.Open(f.TempDir(), store.Options{Databases: 1})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	key := []byte("bf")
	f.Fuzz(func(t *testing.T, init []byte, big bool, spec []byte) {
		if big { // past the inline limit: the value is chunked
			init = append(bytes.Repeat([]byte{0x5a}, store.InlineMax), init...)
		}
		args, ops, invalid := bfGen(spec)
		tx := st.WriteTx()
		defer tx.Close() // never committed
		exists := len(init) > 0 || big
		if exists {
			tx.WriteString(key, init, 0)
		}
		w := resp.NewWriter(2)
		Exec(tx, &shard.Record{}, setArgv(append([]string{"bitfield", "bf"}, args...)), 0, w)
		m, found := tx.Lookup(key)
		got := tx.ReadString(key, m)
		if invalid {
			if len(w.Buf) == 0 || w.Buf[0] != '-' || found != exists || !bytes.Equal(got, init) {
				t.Fatalf("%q: reply %q, value changed %v", args, w.Buf, !bytes.Equal(got, init))
			}
			return
		}
		model := &bfModel{v: append([]byte(nil), init...)}
		wantReply, wantVal, wantExists := model.run(ops, exists)
		if !bytes.Equal(w.Buf, wantReply) {
			t.Fatalf("%q on %d bytes: reply\n%q, want\n%q", args, len(init), w.Buf, wantReply)
		}
		if found != wantExists || !bytes.Equal(got, wantVal) {
			i := 0
			for i < min(len(got), len(wantVal)) && got[i] == wantVal[i] {
				i++
			}
			t.Fatalf("%q on %d bytes: value differs from byte %d (length %d, exists %v), want length %d (%v)",
				args, len(init), i, len(got), found, len(wantVal), wantExists)
		}
	})
}
