package compat

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// has reports whether basalt knows cmd (an unknown command is an error
// naming it); used for checks that need commands other files implement.
func has(d *testutil.Diff, args ...string) bool {
	r := d.Got.Do(args...)
	return !(r.IsError() && strings.HasPrefix(r.Str, "ERR unknown command"))
}

// makeNonString creates key as a collection on both servers with whatever
// collection command basalt has, or skips the test.
func makeNonString(t *testing.T, d *testutil.Diff, key string) {
	t.Helper()
	for _, args := range [][]string{
		{"RPUSH", key, "a"}, {"SADD", key, "a"}, {"HSET", key, "f", "v"}, {"ZADD", key, "1", "a"},
	} {
		if has(d, args[0]) {
			d.Do(args...)
			return
		}
	}
	t.Skip("basalt has no collection type yet")
}

func TestStrings(t *testing.T) {
	p := newPair(t)

	t.Run("GetSet", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			GET missing
			SET k v
			GET k
			SET k ""
			GET k
			SET k "a\x00b\r\nc\xff"
			GET k
			SET "key\x00\xfe" "\x00"
			GET "key\x00\xfe"
			SET k 12345
			GET k
			SET k -0
			GET k
			set k lower
			GeT k
		`)
	})

	t.Run("SetOptions", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET k v NX
			SET k w NX
			GET k
			SET k w XX
			GET k
			SET nx v XX
			GET nx
			SET k v nx xx
			SET k v XX NX
			SET k v NX NX
			SET k v XX XX
			SET k v GET
			SET k v2 get
			SET new v GET
			SET k v3 NX GET
			GET k
			SET k2 v NX GET
			GET k2
			SET k4 v XX GET
			GET k4
			SET k2 x XX GET
			SET k2 x GET GET
			SET k v KEEPTTL KEEPTTL
			SET k v KEEPTTL EX 10
			SET k v EX 10 KEEPTTL
			SET k v PX 10 KEEPTTL
			SET k v KEEPTTL PXAT 1
			SET k v KEEPTTL EXAT 1
			SET k v EX 10 PX 10
			SET k v EX 10 EXAT 10
			SET k v PX 10 PXAT 10
			SET k v EXAT 10 PXAT 10
			SET k v EX 100 EX 200
			SET k v PX 100000 PX 200000
			SET k v EX
			SET k v PX
			SET k v EXAT
			SET k v PXAT
			SET k v PERSIST
			SET k v foo
			SET k v NX foo
			SET k v EX 10 foo
			SET k v EX abc
			SET k v EX 1.5
			SET k v EX " 1"
			SET k v EX 0
			SET k v EX -1
			SET k v PX 0
			SET k v PX -100
			SET k v EXAT 0
			SET k v EXAT -1
			SET k v PXAT 0
			SET k v PXAT -5
			SET k v EX 9223372036854775
			SET k v EX 9223372036854776
			SET k v EX 9223372036854775807
			SET k v EX 9223372036854775808
			SET k v EX -9223372036854775808
			SET k v PX 9223372036854775807
			SET k v PX 9223372036854775000
			SET k v EXAT 9223372036854775
			SET k v EXAT 9223372036854776
			SET k v PXAT 9223372036854775807
			GET k
			SET k v EX 10 EX abc
			SET k v ex 1000 nx
			SET k v Px 1000000 xX
			SET k v PxAt 99999999999999 gEt
			SET k v eXaT 99999999999 KeepTtl
			GET k
			# an absolute time in the past: set, then gone
			SET past v EXAT 1
			GET past
			SET past v PXAT 1000
			GET past
			SET past v PXAT 1 GET
			SET past v NX PXAT 1
			GET past
		`)
	})

	t.Run("SetVariants", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETNX k v
			SETNX k w
			GET k
			SETNX k2 ""
			GET k2
			SETEX k 100 x
			GET k
			SETEX k 0 x
			SETEX k -1 x
			SETEX k abc x
			SETEX k 9223372036854775 x
			SETEX k 9223372036854776 x
			SETEX k 9223372036854775807 x
			SETEX missing 0 x
			GET missing
			PSETEX k 100000 y
			GET k
			PSETEX k 0 y
			PSETEX k -1 y
			PSETEX k 1.5 y
			PSETEX k 9223372036854775807 y
			GETSET k z
			GETSET missing2 z
			GET missing2
			GETSET k "\x00bin"
			GET k
			GETDEL k
			GETDEL k
			GET k
			GETDEL nothing
		`)
	})

	t.Run("GetEx", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET k v
			GETEX k
			GETEX missing
			GETEX missing EX -1
			GETEX missing EX abc
			GETEX missing foo
			GETEX k EX 100
			GETEX k PX 100000
			GETEX k EXAT 99999999999
			GETEX k PXAT 99999999999999
			GETEX k PERSIST
			GETEX k persist PERSIST
			GETEX k EX 100 EX 200
			GETEX k EX 0
			GETEX k EX -1
			GETEX k PX 0
			GETEX k EXAT 0
			GETEX k PXAT -1
			GETEX k EX abc
			GETEX k EX 9223372036854775
			GETEX k EX 9223372036854776
			GETEX k PX 9223372036854775807
			GETEX k EXAT 9223372036854776
			GETEX k PXAT 9223372036854775807
			GETEX k EX
			GETEX k PERSIST EX 10
			GETEX k EX 10 PERSIST
			GETEX k EX 10 PX 10
			GETEX k PXAT 10 EXAT 10
			GETEX k NX
			GETEX k XX
			GETEX k GET
			GETEX k KEEPTTL
			GETEX k foo
			GET k
			# a past absolute time deletes the key after answering
			GETEX k EXAT 1
			GET k
			SET k2 v2
			GETEX k2 PXAT 1
			GETEX k2
			SET k3 v3
			GETEX k3 pxat 1000 
			MGET k k2 k3
		`)
	})

	t.Run("MGetMSet", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MGET a b c
			MSET a 1 b 2 c 3
			MGET a b c d
			MSET a
			MSET a 1 b
			MSET a x a y a z
			GET a
			MSETNX a 1 new 2
			GET new
			MSETNX n1 1 n2 2
			MGET n1 n2
			MSETNX n3 1 n3 2
			GET n3
			MSETNX n4
			MSETNX n4 1 n5
			MGET n4 n5
			MSET "\x00" "\x01\x02" "" empty
			MGET "\x00" ""
			MGET a a a
		`)
	})

	t.Run("AppendStrlen", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			STRLEN k
			APPEND k hello
			APPEND k " world"
			GET k
			STRLEN k
			APPEND k ""
			APPEND e ""
			GET e
			STRLEN e
			APPEND k "\x00\xff"
			STRLEN k
			GET k
			SET n 12
			APPEND n 3
			INCR n
			STRLEN n
			SET f 1.5
			STRLEN f
		`)
	})

	t.Run("GetRange", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s "Hello World"
			SET empty ""
			SET num 1234567890
			SET bin "\x00\x01\x02\xff"
			GETRANGE s abc 1
			GETRANGE s 1 abc
			GETRANGE s 1.5 2
			GETRANGE s 9223372036854775808 1
			GETRANGE missing 0 -1
			GETRANGE missing abc 1
			SUBSTR s 0 4
			SUBSTR missing 0 4
			SUBSTR s x 4
		`)
		idx := []string{"-9223372036854775808", "-100", "-12", "-11", "-10", "-5", "-1", "0", "1", "5", "10", "11", "12", "100", "9223372036854775807"}
		for _, key := range []string{"s", "empty", "num", "bin"} {
			for _, a := range idx {
				for _, b := range idx {
					d.Do("GETRANGE", key, a, b)
				}
			}
		}
		d.Do("SUBSTR", "s", "-5", "-1")
		d.Do("SUBSTR", "num", "-3", "100")
	})

	t.Run("SetRange", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SETRANGE k 0 hello
			GET k
			SETRANGE k 6 world
			GET k
			STRLEN k
			SETRANGE k 1 EL
			GET k
			SETRANGE k 0 ""
			SETRANGE k 1000 ""
			SETRANGE k 9223372036854775807 ""
			GET k
			SETRANGE pad 5 x
			GET pad
			SETRANGE pad 2 "\x00\xffz"
			GET pad
			SETRANGE k -1 x
			SETRANGE k -1 ""
			SETRANGE missing -1 ""
			SETRANGE k abc x
			SETRANGE k 1.0 x
			SETRANGE k 9223372036854775808 x
			SETRANGE k 536870912 x
			SETRANGE k 536870911 xy
			SETRANGE k 9223372036854775807 x
			SETRANGE k 9223372036854775807 ""
			# an empty value on a missing key neither writes nor creates it
			SETRANGE none 0 ""
			SETRANGE none 536870912 ""
			SETRANGE none 9223372036854775807 ""
			GET none
			MSETNX none 1
			SETRANGE none2 536870912 x
			SETRANGE none2 536870911 xy
			GET none2
			SET num 12345
			SETRANGE num 2 9
			INCR num
		`)
	})

	t.Run("IncrDecr", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			INCR n
			INCR n
			DECR n
			DECR n
			DECR n
			INCRBY n 100
			INCRBY n -200
			DECRBY n 50
			DECRBY n -50
			INCRBY n abc
			INCRBY n 1.5
			INCRBY n 9223372036854775808
			DECRBY n abc
			INCRBY new 0
			GET new
			DECRBY new2 5
			SET max 9223372036854775806
			INCR max
			INCR max
			GET max
			INCRBY max -1
			SET min -9223372036854775807
			DECR min
			DECR min
			GET min
			DECRBY min 1
			DECRBY min -1
			SET m 5
			DECRBY m -9223372036854775808
			INCRBY m -9223372036854775808
			INCRBY m 9223372036854775807
			SET m -5
			INCRBY m -9223372036854775803
			INCRBY m -1
			DECRBY m 9223372036854775807
			SET z 0
			INCRBY z 9223372036854775807
			INCRBY z -9223372036854775807
			INCRBY z -9223372036854775807
			INCRBY z -1
			INCRBY z -1
			DECRBY z 0
			DECRBY m -9223372036854775808
		`)
		for _, v := range []string{"", " 1", "1 ", "+1", "01", "-0", "00", "1.0", "1e3", "abc", "0x10",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
			"99999999999999999999", "1\x00", "\x001", strings.Repeat("1", 30), "-", "1-"} {
			d.Do("SET", "v", v)
			d.Do("INCR", "v")
			d.Do("SET", "v", v)
			d.Do("DECRBY", "v", "1")
			d.Do("GET", "v")
		}
	})

	t.Run("IncrByFloat", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			INCRBYFLOAT f 1.5
			INCRBYFLOAT f 0.1
			GET f
			SET f 10.50
			INCRBYFLOAT f 0.1
			SET f 5.0e3
			INCRBYFLOAT f 2.0e2
			GET f
			INCRBYFLOAT f -5200
			GET f
			SET f 3
			INCRBYFLOAT f 0
			INCRBYFLOAT f 1e308
			INCRBYFLOAT f 1e308
			GET f
			INCRBYFLOAT f 1e4932
			INCRBYFLOAT f 1e4933
			GET f
			INCRBYFLOAT f abc
			INCRBYFLOAT f ""
			INCRBYFLOAT f inf
			INCRBYFLOAT f -inf
			INCRBYFLOAT f nan
			INCRBYFLOAT f " 1"
			INCRBYFLOAT f 0x10
			INCRBYFLOAT g 1.0000000000000000001
			INCRBYFLOAT g 0.3333333333333333333333
			INCRBYFLOAT h -0
			INCRBYFLOAT h 1e-4950
			SET bad abc
			INCRBYFLOAT bad 1
			SET empty ""
			INCRBYFLOAT empty 1
			SET i 9223372036854775807
			INCRBYFLOAT i 1
			GET i
			INCR i
		`)
		d.Proto(3)
		d.Run(`
			INCRBYFLOAT r3 2.5
			INCRBYFLOAT r3 abc
		`)
	})

	t.Run("LCS", func(t *testing.T) {
		d := p.diff(t)
		script := `
			MSET key1 ohmytext key2 mynewtext
			LCS key1 key2
			LCS key1 key2 LEN
			LCS key1 key2 IDX
			LCS key1 key2 IDX MINMATCHLEN 4
			LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN
			LCS key1 key2 idx withmatchlen
			LCS key1 key2 WITHMATCHLEN
			LCS key1 key2 LEN WITHMATCHLEN MINMATCHLEN 3
			LCS key1 key2 MINMATCHLEN -5 IDX
			LCS key1 key2 IDX MINMATCHLEN 9223372036854775807
			LCS key1 key2 IDX IDX LEN
			LCS key1 key2 LEN IDX
			LCS key1 key2 MINMATCHLEN
			LCS key1 key2 MINMATCHLEN abc
			LCS key1 key2 foo
			LCS key1 key2 LEN foo
			LCS key1 missing
			LCS missing key1 IDX
			LCS missing missing2 IDX WITHMATCHLEN
			LCS missing missing2 LEN
			LCS key1 key1 IDX WITHMATCHLEN
			SET e ""
			LCS e key1 IDX
			MSET b1 "a\x00b\xffc" b2 "\xff\x00c"
			LCS b1 b2
			LCS b1 b2 IDX WITHMATCHLEN
			MSET x1 aaaa x2 aa
			LCS x1 x2 IDX WITHMATCHLEN
			LCS x2 x1 IDX WITHMATCHLEN
		`
		d.Run(script)
		// Redis refuses a table of 4-byte cells beyond proto-max-bulk-len:
		// strings of 11,584 and 11,585 bytes are too big, two of 11,584
		// are not (a dense HyperLogLog, 12,304 bytes, is too big for LCS
		// with itself).
		d.Do("SET", "big1", strings.Repeat("ab", 5792))
		d.Do("SET", "big2", strings.Repeat("ba", 5792))
		d.Do("LCS", "big1", "big2", "LEN")
		d.Do("APPEND", "big2", "b")
		d.Do("LCS", "big1", "big2", "LEN")
		d.Do("LCS", "big1", "big2", "IDX")
		// Random strings over a small alphabet exercise the tie-breaking of
		// the backtrack, which decides the string and the ranges.
		rng := rand.New(rand.NewSource(7))
		randStr := func(n int, alpha string) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = alpha[rng.Intn(len(alpha))]
			}
			return string(b)
		}
		for i := 0; i < 60; i++ {
			alpha := []string{"ab", "abc", "acgt", "abcdefghij"}[i%4]
			d.Do("MSET", "r1", randStr(rng.Intn(40), alpha), "r2", randStr(rng.Intn(40), alpha))
			d.Do("LCS", "r1", "r2")
			d.Do("LCS", "r1", "r2", "LEN")
			d.Do("LCS", "r1", "r2", "IDX", "WITHMATCHLEN")
			d.Do("LCS", "r1", "r2", "IDX", "MINMATCHLEN", strconv.Itoa(rng.Intn(4)))
		}
		d.Do("MSET", "big1", randStr(2000, "acgt"), "big2", randStr(1500, "acgt"))
		d.Do("LCS", "big1", "big2")
		d.Do("LCS", "big1", "big2", "IDX", "MINMATCHLEN", "5", "WITHMATCHLEN")
		d.Proto(3)
		d.Run(script)
	})

	t.Run("BigValues", func(t *testing.T) {
		d := p.diff(t)
		rng := rand.New(rand.NewSource(1))
		mb := make([]byte, 1<<20)
		rng.Read(mb)
		big := string(mb)
		d.Do("SET", "big", big)
		d.Do("GET", "big")
		d.Do("STRLEN", "big")
		d.Do("APPEND", "big", big)
		d.Do("STRLEN", "big")
		d.Do("GETRANGE", "big", "1048570", "1048590")
		d.Do("GETRANGE", "big", "-10", "-1")
		d.Do("SETRANGE", "big", "3000000", "tail")
		d.Do("STRLEN", "big")
		d.Do("GETRANGE", "big", "2097140", "2097160")
		d.Do("GETSET", "big", "small")
		d.Do("SETRANGE", "pad", "1048576", "x")
		d.Do("GET", "pad")
		d.Do("MSET", "m1", big, "m2", big[:1000])
		d.Do("MGET", "m1", "m2")
		d.Do("GETDEL", "m1")
		d.Do("GETEX", "m2", "PX", "100000")
		d.Do("SET", "m3", big, "GET")
		d.Do("SET", "m3", big[1:], "GET")
	})

	t.Run("Expiry", func(t *testing.T) {
		d := p.diff(t)
		start := time.Now()
		d.Run(`
			SET ex v PX 700
			SET keep v PX 700
			SET keep v2 KEEPTTL
			SET clear v PX 700
			SET clear v2
			SET nxkeep v PX 700
			SET nxkeep v2 NX
			SETEX setex 1 v
			PSETEX psetex 700 v
			SET getex v
			GETEX getex PX 700
			SET persist v PX 700
			GETEX persist PERSIST
			SET incr 1 PX 700
			INCR incr
			SET incrby 1 PX 700
			DECRBY incrby 5
			SET float 1 PX 700
			INCRBYFLOAT float 1.5
			SET app a PX 700
			APPEND app b
			SET range abc PX 700
			SETRANGE range 5 x
			SET getset v PX 700
			GETSET getset v2
			SET mset v PX 700
			MSET mset v2
			SET setget v PX 700
			SET setget v2 GET
			SET setex2 v PX 700
			SETEX setex2 100 v2
			SET xx v PX 700
			SET xx v2 XX
		`)
		keys := []string{"ex", "keep", "clear", "nxkeep", "setex", "psetex", "getex", "persist", "incr",
			"incrby", "float", "app", "range", "getset", "mset", "setget", "setex2", "xx"}
		if has(d, "PTTL", "x") {
			for _, k := range keys {
				w, g := d.DoBoth("PTTL", k)
				if w.Kind != ':' || g.Kind != ':' || (w.Int < 0) != (g.Int < 0) || w.Int-g.Int > 300 || g.Int-w.Int > 300 {
					t.Errorf("PTTL %s: redis %v, basalt %v", k, w, g)
				}
			}
		}
		if el := time.Since(start); el > 600*time.Millisecond {
			t.Skipf("setting up took %v: too slow to check expiry", el)
		}
		d.Do(append([]string{"MGET"}, keys...)...)
		time.Sleep(time.Until(start.Add(1200 * time.Millisecond)))
		d.Do(append([]string{"MGET"}, keys...)...)
		d.Do("SETRANGE", "ex", "0", "")
		d.Do("STRLEN", "ex")
		d.Do("INCR", "incr")
		d.Do("APPEND", "app", "z")
	})

	t.Run("WrongType", func(t *testing.T) {
		d := p.diff(t)
		makeNonString(t, d, "c")
		d.Run(`
			SET s str
			GET c
			GETSET c v
			GETDEL c
			GETEX c
			GETEX c EX 10
			GETEX c EX -1
			GETEX c foo
			APPEND c x
			STRLEN c
			GETRANGE c 0 -1
			GETRANGE c x 1
			SUBSTR c 0 -1
			SETRANGE c 0 x
			SETRANGE c 0 ""
			SETRANGE c -1 x
			INCR c
			DECR c
			INCRBY c 5
			INCRBY c x
			DECRBY c 5
			INCRBYFLOAT c 1.5
			INCRBYFLOAT c x
			SETNX c v
			MSETNX c v other v
			GET other
			MGET s c missing
			LCS c s
			LCS s c
			LCS s c foo
			SET c v GET
			SET c v GET EX 0
			SET c v GET foo
			SET c v NX
			SET c v XX GET
			SET c v NX GET
			SET c v XX
			GET c
		`)
		makeNonString(t, d, "c2")
		d.Do("SETEX", "c2", "100", "v")
		d.Do("GET", "c2")
		makeNonString(t, d, "c3")
		d.Do("MSET", "c3", "v")
		d.Do("GET", "c3")
		makeNonString(t, d, "c4")
		d.Do("SET", "c4", "v", "KEEPTTL")
		d.Do("GET", "c4")
	})

	t.Run("RESP3", func(t *testing.T) {
		d := p.diff(t)
		d.Proto(3)
		d.Run(`
			GET missing
			SET k v
			GET k
			SET k v NX
			SET x v XX
			SET x v XX GET
			SET k w GET
			MGET k missing k
			GETEX missing
			GETDEL missing
			GETSET missing v
			GETRANGE nothing 0 -1
			INCRBYFLOAT f 0.1
			INCRBYFLOAT f 0.2
			INCR n
			SETNX k v
			MSETNX k v
			LCS k missing IDX
		`)
	})

	t.Run("Arity", func(t *testing.T) {
		d := p.conn(t)
		for _, args := range [][]string{
			{"GET"}, {"GET", "a", "b"}, {"SET", "a"}, {"SETNX", "a"}, {"SETNX", "a", "b", "c"},
			{"SETEX", "a", "1"}, {"PSETEX", "a", "1"}, {"SETEX", "a", "1", "v", "x"}, {"GETSET", "a"},
			{"GETDEL"}, {"GETDEL", "a", "b"}, {"GETEX"}, {"MGET"}, {"MSET"}, {"MSET", "a"}, {"MSETNX", "a"},
			{"APPEND", "a"}, {"STRLEN"}, {"GETRANGE", "a", "0"}, {"SUBSTR", "a"}, {"SETRANGE", "a", "0"},
			{"INCR"}, {"DECR", "a", "b"}, {"INCRBY", "a"}, {"DECRBY", "a", "1", "2"}, {"INCRBYFLOAT", "a"},
			{"LCS", "a"},
		} {
			d.Do(args...)
		}
	})

	t.Run("Transaction", func(t *testing.T) {
		d := p.conn(t)
		d.Run(`
			MULTI
			SET tx:k 10
			INCRBY tx:k 5
			APPEND tx:k x
			INCR tx:k
			GETRANGE tx:k 0 -1
			SET tx:k2 v EX 0
			MGET tx:k tx:k2
			EXEC
		`)
	})

	t.Run("TableEntries", func(t *testing.T) {
		d := p.conn(t)
		if !has(d, "COMMAND", "INFO", "get") {
			t.Skip("basalt has no COMMAND yet")
		}
		for _, name := range []string{"get", "set", "setnx", "setex", "psetex", "getset", "getdel", "getex",
			"mget", "mset", "msetnx", "append", "strlen", "getrange", "substr", "setrange", "incr", "decr",
			"incrby", "decrby", "incrbyfloat", "lcs"} {
			d.Do("COMMAND", "INFO", name)
			// COMMAND DOCS: basalt gives summary, since and group; compare those.
			w, g := d.DoBoth("COMMAND", "DOCS", name)
			if len(w.Elems) != 2 || len(g.Elems) != 2 {
				t.Errorf("COMMAND DOCS %s: redis %v, basalt %v", name, w, g)
				continue
			}
			field := func(r testutil.Reply, f string) string {
				for i := 0; i+1 < len(r.Elems); i += 2 {
					if r.Elems[i].Str == f {
						return r.Elems[i+1].String()
					}
				}
				return ""
			}
			for _, f := range []string{"summary", "since", "group"} {
				if wf, gf := field(w.Elems[1], f), field(g.Elems[1], f); wf != gf {
					t.Errorf("COMMAND DOCS %s %s: redis %s, basalt %s", name, f, wf, gf)
				}
			}
		}
	})
}
