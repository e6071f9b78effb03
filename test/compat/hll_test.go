package compat

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// hllSame compares the raw bytes of key on both servers (GET), reporting
// where they first differ rather than two 12 KB renderings.
func hllSame(t *testing.T, d *testutil.Diff, key string) bool {
	t.Helper()
	w, g := d.DoBoth("GET", key)
	if w.Kind == g.Kind && w.Null == g.Null && w.Str == g.Str {
		return true
	}
	at := 0
	for at < len(w.Str) && at < len(g.Str) && w.Str[at] == g.Str[at] {
		at++
	}
	t.Errorf("GET %s: redis %d bytes, basalt %d bytes, first difference at byte %d", key, len(w.Str), len(g.Str), at)
	return false
}

// hllAddBatches sends PFADD key with elements prefix+i, i in [from, to),
// batch elements per command, pipelined, to both servers and compares the
// replies one by one.
func hllAddBatches(t *testing.T, d *testutil.Diff, key, prefix string, from, to, batch int) {
	t.Helper()
	var cmds [][]string
	for i := from; i < to; i += batch {
		args := []string{"PFADD", key}
		for j := i; j < min(i+batch, to); j++ {
			args = append(args, prefix+strconv.Itoa(j))
		}
		cmds = append(cmds, args)
	}
	hllPipeline(t, d, cmds)
}

// hllPipeline sends cmds pipelined to both servers and compares the
// replies one by one, stopping at the first difference.
func hllPipeline(t *testing.T, d *testutil.Diff, cmds [][]string) {
	t.Helper()
	var buf []byte
	for _, args := range cmds {
		buf = append(buf, testutil.Command(args...)...)
	}
	d.Want.Send(buf)
	d.Got.Send(buf)
	for _, args := range cmds {
		w, g := d.Want.Read(), d.Got.Read()
		if err := testutil.Compare(args[:min(len(args), 3)], w, g); err != nil {
			t.Fatal(err)
		}
	}
}

// hllRaw builds an HLL value by hand: the header with encoding enc and
// cached count card, then body.
func hllRaw(enc byte, card uint64, body ...byte) string {
	v := append([]byte("HYLL"), enc, 0, 0, 0)
	v = binary.LittleEndian.AppendUint64(v, card)
	return string(append(v, body...))
}

// xzero is the sparse opcode for n zero registers (1..16384).
func xzero(n int) []byte { return []byte{0x40 | byte((n-1)>>8), byte(n - 1)} }

func TestHyperLogLog(t *testing.T) {
	p := newPair(t)
	const stale = 1 << 63 // the cached count's "invalid" bit

	t.Run("TableEntries", func(t *testing.T) {
		d := p.conn(t)
		for _, name := range []string{"pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"} {
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
			COMMAND GETKEYS PFMERGE d a b
			COMMAND GETKEYS PFCOUNT a b c
			COMMAND GETKEYS PFDEBUG GETREG k
		`)
	})

	t.Run("Basics", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			PFADD h
			GET h
			PFCOUNT h
			PFADD h a b c d
			PFADD h a
			GET h
			PFCOUNT h
			GET h
			PFADD h a
			GET h
			PFADD h e
			GET h
			PFADD empty
			PFADD empty
			PFCOUNT empty
			PFCOUNT nokey
			PFCOUNT nokey h empty
			PFCOUNT h h
			GET h
			PFDEBUG ENCODING h
			PFDEBUG DECODE h
			PFDEBUG DECODE nokey
			PFDEBUG NOSUCH h
			PFDEBUG NOSUCH nokey
			PFDEBUG GETREG
			PFADD
			PFCOUNT
			PFMERGE
			PFSELFTEST x
			TYPE h
			STRLEN h
			EXISTS h
			OBJECT ENCODING h
			OBJECT ENCODING empty
			PFADD g x y z
			PFDEBUG GETREG g
			GET g
			PFDEBUG ENCODING g
			PFDEBUG GETREG g
			pfdebug todense g
			PFDEBUG TODENSE h
			PFDEBUG TODENSE h
			GET h
			PFCOUNT h
			PFADD h f
			GET h
			PFCOUNT h
		`)
	})

	t.Run("WrongType", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s hello
			SET n 12345
			SET short HYLL
			RPUSH l a
			HSET hs f v
			PFADD ok x
			PFADD s a
			PFADD n a
			PFADD short a
			PFADD l a
			PFADD hs a
			PFCOUNT s
			PFCOUNT n
			PFCOUNT l
			PFCOUNT ok s
			PFCOUNT ok l
			PFCOUNT nokey ok
			PFMERGE s ok
			PFMERGE ok s
			PFMERGE ok l
			PFMERGE l ok
			PFMERGE new ok s
			EXISTS new
			PFDEBUG GETREG s
			PFDEBUG ENCODING l
			GET s
		`)
	})

	t.Run("Promotion", func(t *testing.T) {
		// 0..20000 elements in batches: the sparse form grows past 3000
		// bytes (or gets a register above 32) and turns dense; every step
		// must leave the same bytes as Redis, before and after PFCOUNT
		// stores its count.
		d := p.diff(t)
		sizes := []int{1, 2, 5, 10, 50, 100, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 8000, 12000, 20000}
		prev := 0
		for _, n := range sizes {
			hllAddBatches(t, d, "big", "e", prev, n, 250)
			prev = n
			hllSame(t, d, "big")
			d.Do("PFDEBUG", "ENCODING", "big")
			d.Do("PFCOUNT", "big")
			hllSame(t, d, "big")
			d.Do("PFCOUNT", "big")
		}
		// Elements added one by one build a sparse value step by step.
		for i := range 600 {
			d.Do("PFADD", "one", "m"+strconv.Itoa(i))
			if i%37 == 0 {
				d.Do("PFCOUNT", "one")
				if !hllSame(t, d, "one") {
					break
				}
			}
		}
		hllSame(t, d, "one")
		d.Do("PFDEBUG", "DECODE", "one")
		// Then one by one up to past the 3000-byte limit, with the size
		// after every step.
		var cmds [][]string
		for i := 600; i < 2600; i++ {
			cmds = append(cmds, []string{"PFADD", "one", "m" + strconv.Itoa(i)}, []string{"STRLEN", "one"})
		}
		hllPipeline(t, d, cmds)
		d.Do("PFDEBUG", "ENCODING", "one")
		hllSame(t, d, "one")
		// Many keys of different sizes, elements of all lengths (the hash
		// reads 8 bytes at a time, then a tail).
		for k := range 40 {
			key := "k" + strconv.Itoa(k)
			hllAddBatches(t, d, key, fmt.Sprintf("%0*d-", k%17, k), 0, k*k*3, 7+k)
			d.Do("PFCOUNT", key)
			hllSame(t, d, key)
		}
		d.Do("PFCOUNT", "big", "one", "k3", "k39")
		d.Do("PFCOUNT", "k1", "k2", "k3")
	})

	t.Run("AddsThatChangeNothing", func(t *testing.T) {
		// PFADD of elements seen before is answered without a write when
		// no register rises: sparse and dense values, one to six elements
		// per call, old and new ones mixed, every reply compared, and the
		// bytes after each round.
		d := p.diff(t)
		r := rand.New(rand.NewPCG(1, 2))
		for _, c := range []struct {
			key  string
			seen int // elements added first
		}{{"sparse", 300}, {"dense", 12000}} {
			hllAddBatches(t, d, c.key, "e", 0, c.seen, 500)
			d.Do("PFCOUNT", c.key)
			for range 4 {
				var cmds [][]string
				for range 300 {
					args := []string{"PFADD", c.key}
					for range 1 + r.IntN(6) {
						n := r.IntN(c.seen)
						if r.IntN(20) == 0 {
							n = c.seen + r.IntN(1000000) // new: may raise a register
						}
						args = append(args, "e"+strconv.Itoa(n))
					}
					cmds = append(cmds, args)
				}
				hllPipeline(t, d, cmds)
				hllSame(t, d, c.key)
				d.Do("PFCOUNT", c.key)
			}
			d.Do("PFDEBUG", "ENCODING", c.key)
		}
		// Known elements behind a client's own writes in flight: basalt
		// answers them on applied state only behind PFADDs.
		hllPipeline(t, d, [][]string{
			{"PFADD", "fresh", "x"}, {"PFADD", "fresh", "x"}, {"PFADD", "fresh", "y", "x"},
			{"PFADD", "dense", "e1"}, {"DEL", "fresh"}, {"PFADD", "fresh", "x"}, {"PFADD", "fresh", "x"},
			{"SET", "fresh", "s"}, {"PFADD", "fresh", "x"}, {"DEL", "fresh"}, {"PFADD", "dense", "e2"},
		})
		d.Run(`
			SET str abc
			PFADD str e1
			LPUSH list a
			PFADD list e1
			PFADD list
		`)
	})

	t.Run("Merge", func(t *testing.T) {
		d := p.diff(t)
		hllAddBatches(t, d, "s1", "a", 0, 40, 40)
		hllAddBatches(t, d, "s2", "b", 0, 300, 100)
		hllAddBatches(t, d, "d1", "c", 0, 15000, 500)
		d.Run(`
			PFDEBUG ENCODING s1
			PFDEBUG ENCODING s2
			PFDEBUG ENCODING d1
			PFMERGE m1 s1
			PFMERGE m2 s1 s2
			PFMERGE m3 s1 s2 d1
			PFMERGE m4 nokey
			PFMERGE m5
			PFCOUNT m1
			PFCOUNT m2
			PFCOUNT m3
			PFCOUNT m4
			PFCOUNT m5
			PFCOUNT s1 s2 d1
			PFDEBUG ENCODING m2
			PFDEBUG ENCODING m3
			PFMERGE s1 s2
			PFMERGE s2 s1 d1
			PFMERGE d1 s1
			PFDEBUG ENCODING s2
			PFCOUNT s1
			PFCOUNT s2
			PFCOUNT d1
		`)
		for _, k := range []string{"m1", "m2", "m3", "m4", "m5", "s1", "s2", "d1"} {
			hllSame(t, d, k)
		}
		// A destination that already holds registers, sparse.
		hllAddBatches(t, d, "x", "x", 0, 120, 30)
		hllAddBatches(t, d, "y", "y", 0, 400, 50)
		d.Do("PFMERGE", "x", "y")
		hllSame(t, d, "x")
		d.Do("PFCOUNT", "x")
		// A merge whose result outgrows the sparse limit.
		hllAddBatches(t, d, "z", "z", 0, 1500, 500)
		d.Do("PFMERGE", "x", "z")
		d.Do("PFDEBUG", "ENCODING", "x")
		hllSame(t, d, "x")
	})

	t.Run("Exchange", func(t *testing.T) {
		// A value built by one server, SET into the other, is an HLL
		// there: counts, adds and merges give the same bytes.
		d := p.diff(t)
		for _, n := range []int{3, 200, 5000} {
			key := "src" + strconv.Itoa(n)
			hllAddBatches(t, d, key, "q", 0, n, 500)
			fromRedis := d.Want.Do("GET", key).Str
			fromBasalt := d.Got.Do("GET", key).Str
			if fromRedis != fromBasalt {
				t.Errorf("GET %s differs", key)
			}
			d.Do("SET", "r"+key, fromBasalt)
			d.Got.Do("SET", "r"+key, fromRedis)
			d.Want.Do("SET", "b"+key, fromBasalt)
			d.Got.Do("SET", "b"+key, fromBasalt)
			for _, k := range []string{"r" + key, "b" + key} {
				d.Do("PFCOUNT", k)
				hllSame(t, d, k)
				hllAddBatches(t, d, k, "w", 0, 300, 100)
				d.Do("PFCOUNT", k)
				hllSame(t, d, k)
			}
		}
		d.Do("PFMERGE", "all", "rsrc3", "bsrc200", "rsrc5000")
		hllSame(t, d, "all")
		d.Do("PFCOUNT", "all")
	})

	t.Run("Corrupt", func(t *testing.T) {
		d := p.diff(t)
		full := xzero(16384)
		dense := make([]byte, 12288)
		for i := range dense {
			dense[i] = 0xff // every register 63: past what hashes give
		}
		values := map[string]string{
			"hdr":         hllRaw(1, 0),                                                          // no opcodes, cached 0
			"hdrstale":    hllRaw(1, stale),                                                      // no opcodes, count stale
			"short":       hllRaw(1, stale, xzero(16000)...),                                     // too few registers
			"long":        hllRaw(1, stale, append(xzero(16384), 0x00)...),                       // one register too many
			"valover":     hllRaw(1, stale, append(xzero(16383), 0x83)...),                       // VAL run past the end
			"truncated":   hllRaw(1, stale, append(xzero(16384-257), 0x41)...),                   // XZERO cut short
			"enc2":        hllRaw(2, 0, full...),                                                 // unknown encoding
			"dense1":      hllRaw(0, stale, full...),                                             // dense, wrong size
			"densebig":    hllRaw(0, stale, dense...),                                            // registers of 63
			"cached":      hllRaw(1, 123456789, full...),                                         // a count cached by hand
			"cachedmax":   hllRaw(1, 1<<63-1, full...),                                           // the largest valid count
			"notused":     hllRaw(1, stale, full...)[:5] + "abc" + hllRaw(1, stale, full...)[8:], // odd unused bytes
			"densecached": hllRaw(0, 42, dense...),
		}
		for k, v := range values {
			d.Do("SET", k, v)
		}
		for _, k := range []string{"hdr", "hdrstale", "short", "long", "valover", "truncated", "enc2", "dense1",
			"densebig", "cached", "cachedmax", "notused", "densecached"} {
			d.Do("PFCOUNT", k)
			d.Do("PFCOUNT", k, "nokey")
			d.Do("PFDEBUG", "ENCODING", k)
			d.Do("PFDEBUG", "DECODE", k)
			hllSame(t, d, k)
			d.Do("PFADD", k, "a", "b", "c", "foo", "bar", "1", "2", "3", "4", "5", "6", "7", "8")
			hllSame(t, d, k)
			d.Do("PFCOUNT", k)
			d.Do("PFMERGE", "into"+k, k)
			d.Do("PFMERGE", k, "cached")
			hllSame(t, d, k)
			d.Do("PFCOUNT", k)
			d.Do("PFDEBUG", "TODENSE", k)
			hllSame(t, d, k)
		}
		// A value whose sparse opcodes are corrupt past the registers the
		// first elements touch: Redis keeps the changes it made before
		// meeting the corruption.
		d.Do("SET", "partial", hllRaw(1, stale, append(xzero(8000), 0x00)...))
		for i := range 20 {
			d.Do("PFADD", "partial", "p"+strconv.Itoa(i), "p"+strconv.Itoa(i+100))
		}
		hllSame(t, d, "partial")
	})

	t.Run("CountAfterWrites", func(t *testing.T) {
		// A count answered without a write is remembered with the key's
		// metadata (store/memo.go): every kind of write to the key, from
		// this connection or another, must show in the next PFCOUNT.
		d := p.diff(t)
		other := p.conn(t)
		hllAddBatches(t, d, "dense", "d", 0, 5000, 500)
		hllAddBatches(t, d, "sparse", "s", 0, 50, 50)
		for _, k := range []string{"dense", "sparse"} {
			count := func() {
				t.Helper()
				d.Do("PFCOUNT", k) // may store the count
				d.Do("PFCOUNT", k) // read, remembered
				d.Do("PFCOUNT", k) // from the memo
			}
			count()
			other.Do("PFADD", k, "new1", "new2")
			count()
			other.Do("SETRANGE", k, "8", "\x05\x00") // a cached count of 5, valid
			count()
			other.Do("SETRANGE", k, "15", "\x80") // stale
			count()
			other.Do("SETRANGE", k, "9000", "\xff") // registers past the header (dense)
			count()
			other.Do("PEXPIRE", k, "100000")
			count()
			other.Do("PERSIST", k)
			count()
			other.Do("COPY", k, k+"copy")
			other.Do("PFADD", k+"copy", "more1", "more2", "more3")
			other.Do("RENAME", k+"copy", k)
			count()
			other.Do("APPEND", k, "x") // no longer an HLL (dense: wrong size)
			count()
			other.Do("SET", k, "not an hll")
			count()
			other.Do("DEL", k)
			count()
			other.Do("PFADD", k, "a", "b")
			count()
			other.Do("FLUSHDB")
			count()
		}
		// An expired HLL counts as missing.
		d.Do("PFADD", "short", "a", "b", "c")
		d.Do("PFCOUNT", "short")
		d.Do("PFCOUNT", "short")
		d.Do("PEXPIRE", "short", "50")
		time.Sleep(100 * time.Millisecond)
		d.Do("PFCOUNT", "short")
		d.Do("EXISTS", "short")
	})

	t.Run("TTLAndTransactions", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			PFADD t a b c
			EXPIRE t 1000
			PFADD t d
			TTL t
			PFCOUNT t
			TTL t
			PFMERGE t x
			TTL t
			MULTI
			PFADD m a b
			PFCOUNT m
			GET m
			PFCOUNT m
			PFCOUNT m t
			PFMERGE m t
			GET m
			EXEC
		`)
		// Storing a stale count is a change WATCH sees, as in Redis; a
		// count answered from the cache is not.
		other := p.conn(t)
		d.Run(`
			PFADD w a b c
			WATCH w
		`)
		other.Do("PFCOUNT", "w")
		d.Run(`
			MULTI
			PING
			EXEC
			WATCH w
		`)
		other.Do("PFCOUNT", "w")
		d.Run(`
			MULTI
			PING
			EXEC
		`)
	})
}

// A READONLY client on a follower reads locally, but a PFCOUNT that must
// store a stale count goes to the leader, so every node keeps the same bytes.
func TestHyperLogLogReadOnlyFollower(t *testing.T) {
	if testutil.ClusterMode() > 0 {
		t.Skip("starts its own cluster")
	}
	c := testutil.StartCluster(t, 3)
	leader := testutil.Dial(t, c.Nodes[c.WaitLeader(t, 15*time.Second)].Addr)
	follower := testutil.Dial(t, c.Nodes[c.Follower(t)].Addr)
	if r := leader.Do("PFADD", "h", "a", "b", "c"); r.Int != 1 {
		t.Fatalf("PFADD: %v", r)
	}
	if r := follower.Do("READONLY"); r.String() != "+OK" {
		t.Fatalf("READONLY: %v", r)
	}
	for range 2 { // the first stores the count, the second reads it
		if r := follower.Do("PFCOUNT", "h"); r.Kind != ':' || r.Int != 3 {
			t.Fatalf("PFCOUNT on the follower: %v", r)
		}
	}
	if v := leader.Do("GET", "h").Str; len(v) < 16 || v[15]&0x80 != 0 || v[8] != 3 {
		t.Errorf("GET after PFCOUNT: cached count not stored: %q", v)
	}
	c.WaitConverged(t, 15*time.Second)
}
