package compat

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// chunk is basalt's string chunk size (store.ChunkSize): the large-value
// tests write across its multiples.
const chunk = 4096

func TestBitmaps(t *testing.T) {
	p := newPair(t)

	t.Run("SetGetBit", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETBIT bm 7 1
			GET bm
			SETBIT bm 7 1
			SETBIT bm 7 0
			SETBIT bm 0 1
			GET bm
			SETBIT bm 100 1
			STRLEN bm
			GET bm
			GETBIT bm 0
			GETBIT bm 1
			GETBIT bm 100
			GETBIT bm 101
			GETBIT bm 100000
			GETBIT missing 5
			SETBIT bm -1 1
			SETBIT bm 1.5 1
			SETBIT bm abc 1
			SETBIT bm 01 1
			SETBIT bm +1 1
			SETBIT bm 4294967296 1
			SETBIT bm 4294967295 2
			SETBIT bm 1 2
			SETBIT bm 1 -1
			SETBIT bm 1 a
			SETBIT bm 1 01
			GETBIT bm -1
			GETBIT bm 4294967296
			GETBIT bm x
			GETBIT bm #1
			RPUSH l a
			GETBIT l 0
			GETBIT l x
			SET s "foo"
			SETBIT s 3 1
			GET s
			GETBIT s 1
			SET n 12
			GETBIT n 2
			GETBIT n 3
			SETBIT n 15 1
			GET n
			SET e ""
			GETBIT e 0
			SETBIT e 0 0
			GET e
			SETBIT new 0 0
			EXISTS new
			GET new
			SETBIT
			SETBIT bm 1
			GETBIT bm
		`)
		makeNonString(t, d, "coll")
		d.Run(`
			SETBIT coll 1 1
			GETBIT coll 1
			SETBIT coll -1 1
			GETBIT coll x
		`)
	})

	t.Run("SetBitKeepsTTL", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET k abc EX 100
			SETBIT k 1 1
			TTL k
			SETBIT k 1000 1
			TTL k
		`)
	})

	t.Run("BitCount", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			BITCOUNT missing
			BITCOUNT missing 0 -1
			BITCOUNT missing a b
			BITCOUNT missing 0
			SET s "foobar"
			BITCOUNT s
			BITCOUNT s 0 0
			BITCOUNT s 1 1
			BITCOUNT s 1 -1
			BITCOUNT s -2 -1
			BITCOUNT s -1 -2
			BITCOUNT s -100 -1
			BITCOUNT s -100 -50
			BITCOUNT s -5 -10
			BITCOUNT s 0 100
			BITCOUNT s 5 2
			BITCOUNT s 100 200
			BITCOUNT s 0 -1 BYTE
			BITCOUNT s 0 -1 byte
			BITCOUNT s 0 -1 BIT
			BITCOUNT s 5 30 BIT
			BITCOUNT s 5 5 BIT
			BITCOUNT s 1 6 bit
			BITCOUNT s 7 8 BIT
			BITCOUNT s -3 -1 BIT
			BITCOUNT s -1 -3 BIT
			BITCOUNT s -100 3 BIT
			BITCOUNT s 40 1000 BIT
			BITCOUNT s 47 47 BIT
			BITCOUNT s 0
			BITCOUNT s 0 1 BITS
			BITCOUNT s 0 1 BIT extra
			BITCOUNT s a 1
			BITCOUNT s 1 b
			BITCOUNT s a 1 BIT
			BITCOUNT s 1 2 x
			# end is read before the unit, and two negative indexes in the
			# wrong order answer 0 before it is looked at
			BITCOUNT s 1 b x
			BITCOUNT s -1 -5 x
			BITCOUNT s -1 -9223372036854775808 x
			BITCOUNT s -5 -1 x
			BITPOS s 1 1 b x
			BITPOS s 1 -1 -5 x
			BITCOUNT s 9223372036854775807 9223372036854775807
			BITCOUNT s -9223372036854775808 9223372036854775807 BIT
			SET e ""
			BITCOUNT e
			BITCOUNT e 0 -1
			BITCOUNT e 0 -1 BIT
			SET n 255
			BITCOUNT n
			BITCOUNT n 1 1 BIT
			BITCOUNT
		`)
		makeNonString(t, d, "coll")
		d.Run(`
			BITCOUNT coll
			BITCOUNT coll a b
		`)
	})

	t.Run("BitPos", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			BITPOS missing 0
			BITPOS missing 1
			BITPOS missing 1 a b c d
			BITPOS missing 2
			BITPOS missing x
			SET s "\xff\xf0\x00"
			BITPOS s 0
			BITPOS s 1
			BITPOS s 0 1
			BITPOS s 1 2
			BITPOS s 0 2
			BITPOS s 0 0 0
			BITPOS s 0 0 -1
			BITPOS s 1 -1
			BITPOS s 1 -1 -1
			BITPOS s 0 -2 -1
			BITPOS s 0 -1 -2
			BITPOS s 1 -10 -5
			BITPOS s 1 5 2
			BITPOS s 0 100
			BITPOS s 0 0 -1 BYTE
			BITPOS s 0 0 -1 BIT
			BITPOS s 0 3 11 BIT
			BITPOS s 0 3 12 BIT
			BITPOS s 1 3 7 BIT
			BITPOS s 1 12 20 BIT
			BITPOS s 0 9 9 BIT
			BITPOS s 0 12 12 BIT
			BITPOS s 1 -5 -1 BIT
			BITPOS s 0 -100 -1 BIT
			BITPOS s 1 7 6 BIT
			BITPOS s 0 0 1 bit
			BITPOS s 0 0 1 BITS
			BITPOS s 0 0 1 BIT x
			BITPOS s 0 a
			BITPOS s 0 0 b
			BITPOS s 0 a 1 BIT
			BITPOS s 0 0 1 x
			BITPOS s 2
			BITPOS s -1
			SET ones "\xff\xff"
			BITPOS ones 0
			BITPOS ones 0 0
			BITPOS ones 0 1
			BITPOS ones 0 0 -1
			BITPOS ones 0 0 15 BIT
			BITPOS ones 0 3 5 BIT
			BITPOS ones 1 0 -1
			SET zeros "\x00\x00"
			BITPOS zeros 1
			BITPOS zeros 1 0 -1 BIT
			BITPOS zeros 0 3 -1 BIT
			BITPOS zeros 0 1
			SET e ""
			BITPOS e 0
			BITPOS e 1
			BITPOS e 0 0
			BITPOS e 0 0 -1
			BITPOS e 0 0 -1 BIT
			SET n 7
			BITPOS n 1
			BITPOS n 0
			BITPOS
			BITPOS s
		`)
		makeNonString(t, d, "coll")
		d.Run(`
			BITPOS coll 1
			BITPOS coll 2
			BITPOS coll 1 x
		`)
	})

	t.Run("BitOp", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a "\xff\x0f\xf0"
			SET b "\x01\x02"
			SET c "abcdef"
			BITOP AND dst a b
			GET dst
			BITOP OR dst a b c
			GET dst
			BITOP XOR dst a b c
			GET dst
			BITOP NOT dst a
			GET dst
			BITOP and dst a missing
			GET dst
			STRLEN dst
			BITOP or dst missing a
			GET dst
			BITOP xor dst a missing b
			GET dst
			BITOP not dst missing
			EXISTS dst
			SET dst x EX 100
			BITOP AND dst missing1 missing2
			EXISTS dst
			SET dst x EX 100
			BITOP OR dst a
			TTL dst
			GET dst
			BITOP AND a a b
			GET a
			BITOP NOT b b
			GET b
			BITOP OR c c c
			GET c
			BITOP NOT dst a b
			BITOP NOT dst
			BITOP NAND dst a b
			BITOP AND dst
			BITOP AND
			SET n 123
			BITOP NOT dst n
			GET dst
			SET e ""
			BITOP AND dst e
			EXISTS dst
			BITOP OR dst e a
			GET dst
		`)
		makeNonString(t, d, "coll")
		d.Run(`
			BITOP AND dst a coll
			BITOP OR dst coll
			GET dst
			BITOP OR coll a
			TYPE coll
			GET coll
		`)
	})

	t.Run("BitField", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			BITFIELD bf
			BITFIELD bf GET u8 0
			EXISTS bf
			BITFIELD bf SET u8 0 255
			GET bf
			BITFIELD bf GET u8 0 GET i8 0 GET u4 0 GET i4 4 GET u1 7 GET i1 7
			BITFIELD bf SET i8 8 -1 GET u8 8 GET i8 8
			BITFIELD bf INCRBY u2 100 1 INCRBY u2 100 1 INCRBY u2 100 1 INCRBY u2 100 1
			BITFIELD bf OVERFLOW SAT INCRBY u2 102 1 INCRBY u2 102 1 INCRBY u2 102 1 INCRBY u2 102 -10
			BITFIELD bf OVERFLOW FAIL INCRBY u2 104 1 INCRBY u2 104 1 INCRBY u2 104 1 INCRBY u2 104 1 GET u2 104
			BITFIELD bf OVERFLOW WRAP INCRBY i8 200 127 INCRBY i8 200 1 INCRBY i8 200 -1
			BITFIELD bf OVERFLOW SAT INCRBY i8 208 127 INCRBY i8 208 100 INCRBY i8 208 -300 INCRBY i8 208 -1
			BITFIELD bf OVERFLOW FAIL INCRBY i8 216 127 INCRBY i8 216 1 INCRBY i8 216 -255 INCRBY i8 216 -1
			BITFIELD bf SET u8 #3 200 GET u8 #3 GET u8 24 SET i16 #10 -2 GET i16 #10 GET u16 160
			BITFIELD bf SET i64 300 -9223372036854775808 GET i64 300 INCRBY i64 300 -1 GET i64 300
			BITFIELD bf OVERFLOW SAT SET i64 300 9223372036854775807 INCRBY i64 300 1 INCRBY i64 300 -9223372036854775807 INCRBY i64 300 -9223372036854775807
			BITFIELD bf OVERFLOW FAIL INCRBY i64 300 9223372036854775807 INCRBY i64 300 1 GET i64 300
			BITFIELD bf SET u63 400 9223372036854775807 GET u63 400 INCRBY u63 400 1 GET u63 400
			BITFIELD bf OVERFLOW SAT SET u63 400 -1 GET u63 400 INCRBY u63 400 -9223372036854775807 INCRBY u63 400 -1
			BITFIELD bf OVERFLOW FAIL SET u63 400 -1 SET u8 400 256 SET u8 400 255 SET i8 400 128 SET i8 400 -129 SET i8 400 -128
			BITFIELD bf OVERFLOW WRAP SET u8 500 300 GET u8 500 SET i8 500 200 GET i8 500 SET i4 500 -9 GET i4 500
			BITFIELD bf OVERFLOW SAT SET u8 500 300 GET u8 500 SET i8 500 200 GET i8 500 SET i4 500 -9 GET i4 500 SET u4 500 -1 GET u4 500
			BITFIELD bf INCRBY u63 600 -1 INCRBY i1 700 1 INCRBY i1 700 1 INCRBY u1 701 3
			BITFIELD bf OVERFLOW SAT INCRBY i1 710 1 INCRBY i1 710 -5 INCRBY i64 720 -9223372036854775808 INCRBY i64 720 -1
			BITFIELD q OVERFLOW SAT SET i25 0 -9223372036851617744 GET i25 0 SET i8 8 -9223372036854775000 SET u8 8 -1 GET u8 8
			BITFIELD bf GET u1 3 OVERFLOW FAIL SET u8 0 1 OVERFLOW WRAP INCRBY u8 0 255 overflow sat incrby U8 0 10
			bitfield bf get i64 5 Get u63 3 SET i32 13 -12345 get i32 13
			GET bf
			STRLEN bf
			BITFIELD bf GET u64 0
			BITFIELD bf GET i65 0
			BITFIELD bf GET u0 0
			BITFIELD bf GET i0 0
			BITFIELD bf GET x8 0
			BITFIELD bf GET U8 0
			BITFIELD bf GET I8 0
			BITFIELD bf GET u 0
			BITFIELD bf GET "" 0
			BITFIELD bf GET u08 0
			BITFIELD bf GET u-8 0
			BITFIELD bf GET u8 -1
			BITFIELD bf GET u8 #-1
			BITFIELD bf GET u8 #
			BITFIELD bf GET u8 ##1
			BITFIELD bf GET u8 4294967296
			BITFIELD bf GET u8 4294967295
			BITFIELD bf GET u8 #536870911
			BITFIELD bf GET u8 #536870912
			BITFIELD bf GET i64 #67108863
			BITFIELD bf GET i64 #67108864
			BITFIELD bf GET u8 #1152921504606846976
			BITFIELD bf GET u8 #2305843009213693952
			BITFIELD bf GET u8 x
			BITFIELD bf SET u8 0 x
			BITFIELD bf SET u8 0 1.5
			BITFIELD bf INCRBY u8 0 9223372036854775808
			BITFIELD bf GET u8
			BITFIELD bf GET
			BITFIELD bf SET u8 0
			BITFIELD bf INCRBY u8 0
			BITFIELD bf OVERFLOW
			BITFIELD bf OVERFLOW BAD GET u8 0
			BITFIELD bf OVERFLOW sat
			BITFIELD bf FOO u8 0
			BITFIELD bf GET u8 0 BAR
			BITFIELD bf SET u8 0 1 GET u8 0 SET u8 x 1
			GET bf
			BITFIELD
		`)
		// The string grows to the highest bit written, even when every
		// write fails.
		d.Run(`
			BITFIELD g OVERFLOW FAIL SET u2 10 7
			EXISTS g
			GET g
			BITFIELD g OVERFLOW FAIL INCRBY u8 100 300
			GET g
			SET ttl abc EX 100
			BITFIELD ttl SET u8 100 1
			TTL ttl
		`)
		makeNonString(t, d, "coll")
		d.Run(`
			BITFIELD coll GET u8 0
			BITFIELD coll SET u8 0 1
			BITFIELD coll
			BITFIELD coll GET x8 0
			BITFIELD_RO coll GET u8 0
		`)
	})

	t.Run("BitFieldRO", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			BITFIELD_RO missing GET u8 0
			SET s "\x01\x02\x03"
			BITFIELD_RO s GET u8 0 GET u16 8 GET i4 20 GET u8 #2 GET u8 #3
			BITFIELD_RO s
			BITFIELD_RO s SET u8 0 1
			BITFIELD_RO s INCRBY u8 0 1
			BITFIELD_RO s OVERFLOW SAT GET u8 0
			BITFIELD_RO s OVERFLOW FAIL
			BITFIELD_RO s GET u64 0
			BITFIELD_RO s GET u8 -1
			BITFIELD_RO s FOO
			BITFIELD_RO
			GET s
		`)
	})

	t.Run("StringsOnBitmaps", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETBIT k 6 1
			SETBIT k 14 1
			GET k
			GETRANGE k 0 0
			APPEND k c
			GET k
			SETRANGE k 1 a
			GET k
			STRLEN k
			INCR k
			BITCOUNT k
			SET k 10
			BITCOUNT k
			SETBIT k 7 0
			GET k
			INCR k
			GETBIT k 6
		`)
	})

	t.Run("ObjectEncoding", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETBIT a 1 1
			OBJECT ENCODING a
			SET b abc
			OBJECT ENCODING b
			SETBIT b 1 1
			OBJECT ENCODING b
			SET c abc
			SETBIT c 2 1
			OBJECT ENCODING c
			SET d 123
			BITFIELD d GET u8 0
			OBJECT ENCODING d
			BITFIELD d SET u8 0 49
			OBJECT ENCODING d
			GET d
			SET e 1
			BITFIELD e OVERFLOW FAIL SET u1 0 5
			OBJECT ENCODING e
			BITOP NOT f b
			OBJECT ENCODING f
			APPEND g 12
			OBJECT ENCODING g
			APPEND g 3
			OBJECT ENCODING g
			SETRANGE h 0 5
			OBJECT ENCODING h
			SET i 5
			SETRANGE i 0 6
			OBJECT ENCODING i
			INCR i
			OBJECT ENCODING i
			SET j x EX 100
			APPEND j y
			EXPIRE j 200
			OBJECT ENCODING j
			COPY j j2
			OBJECT ENCODING j2
			INCRBYFLOAT k 1.5
			OBJECT ENCODING k
		`)
	})

	t.Run("WatchMultiResp3", func(t *testing.T) {
		d := p.diff(t)
		other := p.conn(t)
		watchThen := func(cmd ...string) {
			t.Helper()
			d.Do("WATCH", "w")
			other.Do(cmd...)
			d.Do("MULTI")
			d.Do("GETBIT", "w", "0")
			d.Do("EXEC")
		}
		d.Do("SET", "w", "abc")
		d.Do("SETBIT", "w", "0", "0")                                         // no change, but the value is now raw
		watchThen("SETBIT", "w", "0", "0")                                    // nothing changes: EXEC runs
		watchThen("SETBIT", "w", "0", "1")                                    // aborts
		watchThen("BITFIELD", "w", "GET", "u8", "0")                          // a read: runs
		watchThen("BITFIELD", "w", "OVERFLOW", "FAIL", "SET", "u1", "0", "5") // fails, still a modification: aborts
		watchThen("BITCOUNT", "w")
		watchThen("BITOP", "NOT", "w", "w")
		d.Run(`
			MULTI
			SETBIT m 3 1
			BITFIELD m INCRBY u4 0 1 GET u8 0
			BITCOUNT m
			BITPOS m 1
			BITOP OR m2 m missing
			EXEC
			GET m2
		`)
		d.Proto(3)
		d.Run(`
			BITFIELD r OVERFLOW FAIL SET u2 0 9 GET u2 0 INCRBY i3 0 100
			BITFIELD_RO r GET u8 0
			SETBIT r 1 1
			BITPOS r 1
			BITCOUNT r
		`)
	})

	t.Run("BitmapCommandInfo", func(t *testing.T) {
		d := p.diff(t)
		for _, name := range []string{"setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"} {
			commandInfoSame(t, d, name)
			w, g := d.DoBoth("COMMAND", "DOCS", name)
			if len(w.Elems) != 2 || len(g.Elems) != 2 {
				t.Errorf("COMMAND DOCS %s: redis %v, basalt %v", name, w, g)
				continue
			}
			for _, f := range []string{"summary", "since", "group"} {
				if wf, gf := docsField(w.Elems[1], f), docsField(g.Elems[1], f); wf != gf {
					t.Errorf("COMMAND DOCS %s %s: redis %s, basalt %s", name, f, wf, gf)
				}
			}
		}
		d.Run(`
			COMMAND GETKEYS BITOP AND d a b c
			COMMAND GETKEYS BITFIELD k GET u8 0
			COMMAND GETKEYS SETBIT k 1 1
		`)
	})
}

// bigValue is n pseudo-random bytes with runs of zeros and of 0xff, so
// BITPOS and BITCOUNT have something to find.
func bigValue(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := 0; i < n; {
		run := 1 + rng.Intn(3000)
		kind := rng.Intn(3)
		for j := 0; j < run && i < n; j, i = j+1, i+1 {
			switch kind {
			case 0:
				b[i] = 0
			case 1:
				b[i] = 0xff
			default:
				b[i] = byte(rng.Intn(256))
			}
		}
	}
	return string(b)
}

// TestChunkedStrings compares strings long enough for basalt to store them
// in chunks: writes and reads across chunk boundaries, bit commands over
// many chunks, sparse bitmaps, and RENAME/COPY/MOVE/expiry/DEL of them.
func TestChunkedStrings(t *testing.T) {
	p := newPair(t)
	rng := rand.New(rand.NewSource(5))
	n := strconv.Itoa

	t.Run("RangesAcrossChunks", func(t *testing.T) {
		d := p.diff(t)
		v := bigValue(rng, 3*chunk+100)
		d.Do("SET", "big", v)
		d.Do("STRLEN", "big")
		d.Do("GET", "big")
		for _, r := range [][2]int{{0, 10}, {chunk - 5, chunk + 5}, {chunk - 1, chunk}, {chunk, chunk}, {0, -1}, {-5000, -1}, {2*chunk - 1, 3*chunk + 1}, {3 * chunk, 1 << 40}, {-1, -1}, {5, 2}} {
			d.Do("GETRANGE", "big", n(r[0]), n(r[1]))
		}
		for _, off := range []int{0, chunk - 3, chunk, 2*chunk - 1, 3*chunk + 98, 3*chunk + 100, 5 * chunk, 20*chunk + 7} {
			d.Do("SETRANGE", "big", n(off), "hello-world")
			d.Do("STRLEN", "big")
			d.Do("GETRANGE", "big", n(max(off-3, 0)), n(off+14))
		}
		d.Do("GET", "big")
		for range 20 {
			d.Do("APPEND", "big", bigValue(rng, rng.Intn(2*chunk)))
		}
		d.Do("STRLEN", "big")
		d.Do("GET", "big")
		d.Do("SETRANGE", "big", "0", "")
		d.Do("SETRANGE", "big", "536870911", "x")
		d.Do("SETRANGE", "big", "536870912", "x")
		d.Do("APPEND", "big", "tail")
		d.Do("STRLEN", "big")
		d.Do("GETRANGE", "big", "-10", "-1")
		d.Do("GETRANGE", "big", "268435456", "268435500")
	})

	t.Run("GrowFromInline", func(t *testing.T) {
		d := p.diff(t)
		// Across the inline limit by APPEND, SETRANGE and SETBIT.
		d.Do("SET", "a", strings.Repeat("x", chunk-2))
		d.Do("APPEND", "a", "12345")
		d.Do("GET", "a")
		d.Do("SET", "s", strings.Repeat("y", 100))
		d.Do("SETRANGE", "s", n(chunk-1), "abc")
		d.Do("GET", "s")
		d.Do("SET", "b", strings.Repeat("z", chunk))
		d.Do("SETBIT", "b", n(chunk*8), "1")
		d.Do("GET", "b")
		d.Do("SET", "b", "small again")
		d.Do("GET", "b")
		d.Do("SETBIT", "b", n(3*chunk*8), "1")
		d.Do("GETRANGE", "b", "0", "20")
		d.Do("BITCOUNT", "b")
		d.Do("SET", "b", strings.Repeat("w", 2*chunk+1))
		d.Do("GET", "b")
		d.Do("BITCOUNT", "b")
		d.Do("GETSET", "b", strings.Repeat("v", 3*chunk))
		d.Do("SET", "b", strings.Repeat("u", chunk+1), "GET")
		d.Do("GETDEL", "b")
		d.Do("EXISTS", "b")
		d.Do("MSET", "m1", strings.Repeat("1", chunk+10), "m2", "x")
		d.Do("MGET", "m1", "m2", "missing")
		d.Do("INCR", "m1")
		d.Do("INCRBYFLOAT", "m1", "1")
		d.Do("LCS", "m1", "a", "LEN")
		d.Do("OBJECT", "ENCODING", "m1")
		d.Do("SET", "num", "10")
		d.Do("SETRANGE", "num", n(chunk+5), "1")
		d.Do("INCR", "num")
		d.Do("OBJECT", "ENCODING", "num")
		d.Do("OBJECT", "REFCOUNT", "num")
	})

	t.Run("BitsOverManyChunks", func(t *testing.T) {
		d := p.diff(t)
		d.Do("SET", "v", bigValue(rng, 10*chunk+123))
		d.Do("SET", "z", strings.Repeat("\x00", 6*chunk)+"\x10")
		d.Do("SET", "o", strings.Repeat("\xff", 6*chunk)+"\xef")
		for _, k := range []string{"v", "z", "o"} {
			d.Do("BITCOUNT", k)
			d.Do("BITPOS", k, "0")
			d.Do("BITPOS", k, "1")
			for range 15 {
				a := rng.Intn(12*chunk) - 2*chunk
				b := a + rng.Intn(5*chunk)
				d.Do("BITCOUNT", k, n(a), n(b))
				d.Do("BITCOUNT", k, n(a*8+rng.Intn(8)), n(b*8+rng.Intn(8)), "BIT")
				d.Do("BITPOS", k, "1", n(a), n(b))
				d.Do("BITPOS", k, "0", n(a), n(b))
				d.Do("BITPOS", k, "0", n(a))
				d.Do("BITPOS", k, "1", n(a*8+rng.Intn(8)), n(b*8+rng.Intn(8)), "BIT")
				d.Do("BITPOS", k, "0", n(a*8+rng.Intn(8)), n(b*8+rng.Intn(8)), "BIT")
				off := rng.Intn(11 * chunk * 8)
				d.Do("GETBIT", k, n(off))
				d.Do("SETBIT", k, n(off), n(rng.Intn(2)))
				d.Do("BITFIELD", k, "GET", "i64", n(off), "INCRBY", "u7", n(off+3), "100", "GET", "u32", n(chunk*8-rng.Intn(40)))
			}
			d.Do("GET", k)
		}
		for _, op := range []string{"AND", "OR", "XOR"} {
			d.Do("BITOP", op, "r", "v", "z", "o", "missing")
			d.Do("GET", "r")
			d.Do("BITOP", op, "v", "v", "z")
			d.Do("GET", "v")
		}
		d.Do("BITOP", "NOT", "o", "o")
		d.Do("GET", "o")
		d.Do("BITOP", "AND", "z", "short", "z")
		d.Do("GET", "z")
		d.Do("SET", "short", "ab")
		d.Do("BITOP", "OR", "v", "short")
		d.Do("GET", "v")
	})

	t.Run("SparseBitmap", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETBIT sp 4294967295 1
			STRLEN sp
			GETBIT sp 4294967295
			GETBIT sp 4294967294
			GETBIT sp 12345
			BITCOUNT sp
			BITCOUNT sp 0 -1 BIT
			BITCOUNT sp -1 -1
			BITPOS sp 1
			BITPOS sp 0
			BITPOS sp 0 536870911
			BITPOS sp 1 -1000000 -1
			BITPOS sp 1 4000000000 -1 BIT
			SETBIT sp 100000000 1
			BITPOS sp 1
			BITCOUNT sp 12500000 12500000
			BITFIELD sp GET u8 4294967288 SET u8 #200000000 7 GET u8 #200000000
			BITFIELD sp INCRBY u63 4294967295 1
			STRLEN sp
			GETRANGE sp 536870900 536870920
			SETBIT sp 4294967295 0
			SETBIT sp 100000000 0
			BITFIELD sp SET u8 #200000000 0 INCRBY u63 4294967295 -1
			BITCOUNT sp
			BITPOS sp 1
			SETRANGE sp 536870911 z
			STRLEN sp
			BITCOUNT sp
			DEL sp
			EXISTS sp
			BITCOUNT sp
			SETBIT sp2 4294967295 0
			STRLEN sp2
			BITPOS sp2 0
			BITPOS sp2 1
		`)
	})

	t.Run("KeyspaceOps", func(t *testing.T) {
		d := p.diff(t)
		v := bigValue(rng, 5*chunk+7)
		d.Do("SET", "src", v)
		d.Do("SETBIT", "src", n(20*chunk*8), "1")
		d.Do("RENAME", "src", "dst")
		d.Do("EXISTS", "src")
		d.Do("GET", "dst")
		d.Do("COPY", "dst", "copy")
		d.Do("SETRANGE", "copy", "10", "changed")
		d.Do("GETRANGE", "dst", "0", "30")
		d.Do("GETRANGE", "copy", "0", "30")
		d.Do("GET", "copy")
		// COPY and RENAME over an existing chunked value and a collection.
		d.Do("SET", "other", bigValue(rng, 30*chunk))
		d.Do("COPY", "dst", "other", "REPLACE")
		d.Do("GET", "other")
		d.Do("STRLEN", "other")
		d.Do("BITCOUNT", "other")
		makeNonString(t, d, "coll")
		d.Do("RENAME", "copy", "coll")
		d.Do("TYPE", "coll")
		d.Do("GET", "coll")
		d.Do("MOVE", "coll", "1")
		d.Do("SELECT", "1")
		d.Do("GET", "coll")
		d.Do("STRLEN", "coll")
		d.Do("DEL", "coll")
		d.Do("SELECT", "0")
		// Types replaced by strings and the other way round.
		d.Do("SET", "dst", "tiny")
		d.Do("APPEND", "dst", bigValue(rng, chunk))
		d.Do("GET", "dst")
		d.Do("DEL", "dst")
		d.Do("RPUSH", "dst", "a")
		d.Do("LRANGE", "dst", "0", "-1")
		d.Do("DBSIZE")
		d.Do("FLUSHALL")
		d.Do("DBSIZE")
	})

	t.Run("Expiry", func(t *testing.T) {
		d := p.diff(t)
		d.Do("SET", "e", bigValue(rng, 4*chunk), "PX", "150")
		d.Do("SETBIT", "e", n(10*chunk*8), "1")
		if w, g := d.DoBoth("PTTL", "e"); w.Int <= 0 || g.Int <= 0 || g.Int > 150 {
			t.Errorf("PTTL: redis %v, basalt %v", w, g)
		}
		d.Do("EXPIRE", "e", "1000")
		d.Do("TTL", "e")
		d.Do("PERSIST", "e")
		d.Do("TTL", "e")
		d.Do("PEXPIRE", "e", "100")
		d.Do("GETEX", "e", "PX", "100")
		d.Do("STRLEN", "e")
		time.Sleep(300 * time.Millisecond)
		d.Run(`
			EXISTS e
			GET e
			STRLEN e
			BITCOUNT e
			SETBIT e 5 1
			GET e
		`)
		// A chunked string that expires must not leave chunks behind: a
		// new big value under the same name reads only its own bytes.
		d.Do("SET", "f", strings.Repeat("\xff", 8*chunk), "PX", "50")
		time.Sleep(150 * time.Millisecond)
		d.Do("SETRANGE", "f", n(6*chunk), "x")
		d.Do("BITCOUNT", "f")
		d.Do("GET", "f")
	})
}

// TestBitfieldRandom sends random BITFIELD calls, valid and not, to both
// servers on keys of a few lengths (one of them chunked in basalt).
func TestBitfieldRandom(t *testing.T) {
	d := testutil.NewPairDiff(t)
	rng := rand.New(rand.NewSource(9))
	types := []string{"u1", "i1", "u3", "i5", "u8", "i8", "u13", "i16", "u31", "i32", "u33", "i47", "u63", "i64", "u64", "i0", "x8"}
	vals := []string{"0", "1", "-1", "127", "-128", "255", "256", "9223372036854775807", "-9223372036854775808", "4294967296", "-70000", "x"}
	owTypes := []string{"WRAP", "SAT", "FAIL", "sat", "bad"}
	d.Do("SET", "k2", strings.Repeat("\xa5", chunk+50))
	for range 400 {
		key := []string{"k0", "k1", "k2"}[rng.Intn(3)]
		args := []string{"BITFIELD", key}
		if rng.Intn(10) == 0 {
			args[0] = "BITFIELD_RO"
		}
		for range 1 + rng.Intn(4) {
			typ := types[rng.Intn(len(types))]
			off := strconv.Itoa(rng.Intn(200))
			if key == "k2" {
				off = strconv.Itoa(chunk*8 - 100 + rng.Intn(200))
			}
			if rng.Intn(4) == 0 {
				off = "#" + strconv.Itoa(rng.Intn(20))
			}
			switch rng.Intn(7) {
			case 0, 1:
				args = append(args, "GET", typ, off)
			case 2, 3:
				args = append(args, "SET", typ, off, vals[rng.Intn(len(vals))])
			case 4, 5:
				args = append(args, "INCRBY", typ, off, vals[rng.Intn(len(vals))])
			default:
				args = append(args, "OVERFLOW", owTypes[rng.Intn(len(owTypes))])
			}
		}
		if !d.Do(args...) {
			break
		}
	}
	for _, k := range []string{"k0", "k1", "k2"} {
		d.Do("GET", k)
	}
}
