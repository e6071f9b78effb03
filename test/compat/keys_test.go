package compat

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// intNear checks that both servers answer an integer and that the two are
// within tol of each other (TTLs, which move with the clock).
func intNear(t *testing.T, d *testutil.Diff, tol int64, args ...string) {
	t.Helper()
	w, g := d.DoBoth(args...)
	if w.Kind != ':' || g.Kind != ':' || w.Int-g.Int > tol || g.Int-w.Int > tol {
		t.Errorf("%s: want %v, got %v (tolerance %d)", strings.Join(args, " "), w, g, tol)
	}
}

// keysCollection makes key a collection on both servers with the first
// collection command basalt knows; it reports false when it knows none.
func keysCollection(d *testutil.Diff, key string, members ...string) bool {
	for _, cmd := range []string{"RPUSH", "SADD"} {
		args := append([]string{cmd, key}, members...)
		if r := d.Got.Do(args...); r.IsError() && strings.HasPrefix(r.Str, "ERR unknown command") {
			continue
		}
		d.Got.Do("DEL", key)
		d.Do(args...)
		return true
	}
	return false
}

// mset writes n keys name+i (value i) on both servers with a few MSETs.
func mset(t *testing.T, d *testutil.Diff, name string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i += 500 {
		args := []string{"MSET"}
		for j := i; j < min(i+500, from+n); j++ {
			args = append(args, name+strconv.Itoa(j), strconv.Itoa(j))
		}
		d.Do(args...)
	}
}

func TestKeys(t *testing.T) {
	p := newPair(t)

	t.Run("DelUnlinkExistsTouch", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MSET a 1 b 2 c 3 d 4
			EXISTS a
			EXISTS a a a nokey b
			EXISTS nokey
			TOUCH a a nokey c
			DEL a a nokey
			DEL a
			EXISTS a
			UNLINK b c c nokey
			UNLINK b
			DEL nokey1 nokey2
			DBSIZE
			DEL
			UNLINK
			EXISTS
			TOUCH
		`)
	})

	t.Run("Type", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s v
			TYPE s
			TYPE nokey
			SET n 12
			TYPE n
			TYPE
			TYPE a b
		`)
		if keysCollection(d, "coll", "x", "y") {
			d.Do("TYPE", "coll")
		}
	})

	t.Run("Rename", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a 1
			RENAME a b
			GET a
			GET b
			RENAME a b
			RENAME nokey nokey
			RENAME b b
			GET b
			SET c 3
			RENAME b c
			GET c
			EXISTS b
			DBSIZE
			RENAMENX c c
			RENAMENX nokey x
			SET d 4
			RENAMENX c d
			GET c
			RENAMENX c e
			GET e
			EXISTS c
			RENAME
			RENAME a
			RENAME a b c
			RENAMENX a
		`)
		// The TTL goes with the value; the destination's own TTL does not
		// survive, and a value without TTL clears it.
		d.Run(`
			SET src v EXAT 4000000000
			SET dst w
			RENAME src dst
			EXPIRETIME dst
			SET src2 v
			SET dst2 w EX 1000
			RENAME src2 dst2
			TTL dst2
			PEXPIREAT src3 4000000000123
			SET src3 v
			PEXPIREAT src3 4000000000123
			RENAMENX src3 dst3
			PEXPIRETIME dst3
			TTL src3
		`)
		intNear(t, d, 1, "TTL", "dst")
	})

	t.Run("Copy", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a 1
			COPY a b
			GET b
			COPY a b
			COPY a b REPLACE
			SET a 2
			COPY a b replace REPLACE
			GET b
			COPY nokey b
			COPY nokey b REPLACE
			COPY a a
			COPY nokey nokey
			COPY a a DB 0
			COPY a a DB 1
			SELECT 1
			GET a
			SELECT 0
			COPY a x DB 16
			COPY a x DB -1
			COPY a x DB x
			COPY a x DB 99999999999
			COPY a x DB 2147483648
			COPY a x DB
			COPY a x foo
			COPY a x REPLACE foo
			COPY a x foo DB 16
			COPY a x DB 16 foo
			COPY a x DB 1 DB 16
			COPY a x REPLACE DB 1 DB 2
			SELECT 2
			GET x
			SELECT 1
			GET x
			SELECT 0
			COPY
			COPY a
		`)
		d.Run(`
			SET t v PXAT 4000000000123
			COPY t t2
			PEXPIRETIME t2
			COPY t t3 DB 5
			SELECT 5
			PEXPIRETIME t3
			SELECT 0
		`)
		intNear(t, d, 1, "TTL", "t2")
		// Collections past Redis's small encodings (Redis's suite copies a
		// skiplist sorted set and a hashtable hash): the copy is whole and
		// outlives the original.
		for i := range 300 {
			d.Do("ZADD", "bigz", strconv.Itoa(i%50), "m"+strconv.Itoa(i))
			d.Do("HSET", "bigh", "f"+strconv.Itoa(i), strings.Repeat("v", i%100))
		}
		d.Run(`
			COPY bigz bigz2
			COPY bigh bigh2 DB 3
			DEL bigz bigh
			ZCARD bigz2
			ZRANGE bigz2 0 -1 WITHSCORES
			ZSCORE bigz2 m7
			ZRANK bigz2 m299
			SELECT 3
			HLEN bigh2
			HGET bigh2 f199
			@unordered HGETALL bigh2
			SELECT 0
		`)
		w, g := d.DoBoth("PEXPIRETIME", "t")
		if w2, g2 := d.DoBoth("PEXPIRETIME", "t2"); w.Int != w2.Int || g.Int != g2.Int {
			t.Errorf("COPY changed the expiry time: redis %v -> %v, basalt %v -> %v", w, w2, g, g2)
		}
	})

	t.Run("Move", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a 1
			MOVE a 0
			MOVE nokey 0
			MOVE a 16
			MOVE a -1
			MOVE a x
			MOVE a " 1"
			MOVE a 99999999999
			MOVE a -2147483649
			MOVE nokey 1
			MOVE a 1
			EXISTS a
			SELECT 1
			GET a
			MOVE a 1
			SET b 2
			SELECT 0
			SET b 3
			MOVE b 1
			GET b
			SELECT 1
			GET b
			MOVE a 0
			SELECT 0
			GET a
			MOVE
			MOVE a
			MOVE a 1 2
		`)
		d.Run(`
			SET t v PX 4000000
			MOVE t 3
			EXISTS t
			SELECT 3
			TTL t
			DBSIZE
			SELECT 0
			DBSIZE
		`)
	})

	t.Run("Collections", func(t *testing.T) {
		d := p.diff(t)
		if !keysCollection(d, "c", "x", "y", "z") {
			t.Skip("no collection type in basalt yet")
		}
		// RENAME, COPY and MOVE must carry the members along; the reply of
		// the type's own read command shows them.
		read := []string{"LRANGE", "c2", "0", "-1"}
		if w := d.Want.Do("TYPE", "c"); w.Str == "set" {
			read = []string{"SMEMBERS", "c2"}
		}
		check := func() {
			t.Helper()
			d.DoUnordered(read...)
		}
		d.Do("SET", "c2", "string")
		d.Do("RENAME", "c", "c2")
		check()
		d.Do("COPY", "c2", "c3")
		d.Do("RENAME", "c3", "c2")
		check()
		d.Do("COPY", "c2", "c2", "DB", "4")
		d.Do("MOVE", "c2", "5")
		d.Do("SELECT", "5")
		check()
		d.Do("SELECT", "4")
		check()
		d.Do("DEL", "c2")
		check()
		d.Do("OBJECT", "REFCOUNT", "c2")
	})

	t.Run("Expire", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET k v
			EXPIRE nokey 10
			PEXPIRE nokey 10
			EXPIREAT nokey 4000000000
			PEXPIREAT nokey 4000000000000
			TTL nokey
			PTTL nokey
			EXPIRETIME nokey
			PEXPIRETIME nokey
			PERSIST nokey
			TTL k
			PTTL k
			EXPIRETIME k
			PEXPIRETIME k
			PERSIST k
			EXPIREAT k 4000000000
			EXPIRETIME k
			PEXPIRETIME k
			PEXPIREAT k 4000000000499
			EXPIRETIME k
			PEXPIREAT k 4000000000500
			EXPIRETIME k
			PEXPIREAT k 9223372036854775807
			EXPIRETIME k
			PEXPIRETIME k
			TTL k
			PEXPIREAT k 9223372036854775308
			EXPIRETIME k
			EXPIREAT k 9223372036854775
			PEXPIRETIME k
			PERSIST k
			PERSIST k
			TTL k
		`)
		// Errors: options are checked before the time, and overflow of the
		// unit conversion or of now+time is an error.
		d.Run(`
			EXPIRE k abc
			EXPIRE k 1.5
			EXPIRE k ""
			EXPIRE k abc NX XX
			EXPIRE k 10 foo
			EXPIRE k abc foo
			EXPIRE k 10 NX XX
			EXPIRE k 10 NX GT
			EXPIRE k 10 lt nx
			EXPIRE k 10 GT LT
			EXPIRE k 10 gt gt lt
			PEXPIRE nokey 10 XX NX
			EXPIRE k 9223372036854775807
			EXPIRE k 9223372036854775
			EXPIRE k -9223372036854775808
			EXPIRE k -9223372036854776
			PEXPIRE k 9223372036854775807
			PEXPIRE k 9223372036854775000
			EXPIREAT k 9223372036854776
			EXPIREAT k -9223372036854776
			PEXPIREAT k 99999999999999999999
			EXPIRE
			EXPIRE k
			TTL
			TTL a b
			PERSIST
			EXPIRETIME
			PEXPIRETIME a b
		`)
		// NX / XX / GT / LT, on a key without and with a TTL.
		d.Run(`
			SET k v
			EXPIREAT k 4000000000 XX
			EXPIREAT k 4000000000 GT
			TTL k
			EXPIREAT k 4000000000 LT
			EXPIRETIME k
			PERSIST k
			EXPIREAT k 4000000000 NX
			EXPIRETIME k
			EXPIREAT k 4000000100 NX
			EXPIREAT k 4000000100 XX
			EXPIRETIME k
			EXPIREAT k 4000000100 GT
			EXPIREAT k 4000000101 gt
			EXPIRETIME k
			EXPIREAT k 4000000101 LT
			EXPIREAT k 4000000050 lt
			EXPIRETIME k
			EXPIREAT k 4000000050 xx gt
			EXPIREAT k 4000000060 XX GT
			EXPIREAT k 4000000040 XX LT
			EXPIRETIME k
			PEXPIREAT k 4000000040001 GT
			PEXPIRETIME k
		`)
		// Times in the past, zero and negative delete the key (reply 1).
		d.Run(`
			MSET a 1 b 2 c 3 d 4 e 5 f 6
			EXPIRE a -1
			EXISTS a
			PEXPIRE b 0
			EXISTS b
			EXPIREAT c 1
			EXISTS c
			PEXPIREAT d -5
			EXISTS d
			EXPIRE e -9223372036854775
			EXISTS e
			SET f 6 EX 100
			EXPIRE f -10 LT
			EXISTS f
			SET g 7
			EXPIRE g -10 GT
			EXPIRE g -10 LT
			EXISTS g
			DBSIZE
		`)
		// Relative times: the TTL read back agrees within the clock skew.
		d.Run(`
			SET r v
			EXPIRE r 100
			PEXPIRE r2 100
			SET r2 v
			PEXPIRE r2 100000
			SET r3 v
			EXPIRE r3 100 GT
			EXPIRE r3 100 LT
		`)
		intNear(t, d, 1, "TTL", "r")
		intNear(t, d, 200, "PTTL", "r")
		intNear(t, d, 200, "PTTL", "r2")
		intNear(t, d, 1, "TTL", "r3")
		nowMs := time.Now().UnixMilli()
		intNear(t, d, 1, "EXPIRETIME", "r")
		intNear(t, d, 200, "PEXPIRETIME", "r2")
		w, g := d.DoBoth("PEXPIRETIME", "r2")
		if g.Int < nowMs+99_000 || g.Int > nowMs+101_000 {
			t.Errorf("PEXPIRETIME after PEXPIRE 100000 = %v (now %d, redis %v)", g, nowMs, w)
		}
		// SET without KEEPTTL clears a TTL.
		d.Run(`
			SET r v
			TTL r
		`)
	})

	t.Run("SelectDatabases", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET k db0
			SELECT 1
			EXISTS k
			SET k db1
			SET only1 x
			DBSIZE
			@unordered KEYS *
			SELECT 0
			GET k
			DBSIZE
			DEL only1
			SELECT 15
			SET k db15
			EXPIRE k 100
			SELECT 0
			TTL k
			SELECT 15
			TTL k
			SELECT 16
			SELECT -1
			SELECT x
			SELECT 2147483648
			SELECT 99999999999
			GET k
		`)
	})

	t.Run("Keys", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MSET hello 1 hallo 2 hxllo 3 hllo 4 heeeello 5 "h*llo" 6 "h?llo" 7 "h[a]llo" 8 "h\\llo" 9
			MSET "" empty foo:1 a foo:2 b foo:10 c bar:1 d "Foo:3" e "\xff\x00k" f x y
			@unordered KEYS *
			@unordered KEYS **
			@unordered KEYS h?llo
			@unordered KEYS h*llo
			@unordered KEYS h[ae]llo
			@unordered KEYS h[^e]llo
			@unordered KEYS h[a-b]llo
			@unordered KEYS "h\\*llo"
			@unordered KEYS "h\\?llo"
			@unordered KEYS "h\\[a\\]llo"
			@unordered KEYS "h\\\\llo"
			@unordered KEYS foo:*
			@unordered KEYS foo:?
			@unordered KEYS foo:[0-9]*
			@unordered KEYS *:1
			@unordered KEYS [fb]*
			@unordered KEYS "[\xff]*"
			@unordered KEYS "*[^a-z0-9:]*"
			@unordered KEYS [
			@unordered KEYS [^
			KEYS ""
			KEYS hello
			KEYS x
			KEYS nokey
			KEYS "h\\ello"
			KEYS "Foo:3"
			KEYS foo:3
			@unordered KEYS "fo\\o*"
			KEYS
			KEYS a b
		`)
		// Expired keys are not listed, literal lookups included.
		d.Run(`
			SET gone v PX 1
			SET gone2 v PX 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			KEYS gone
			@unordered KEYS gone*
			@unordered KEYS *
		`)
	})

	t.Run("ScanOptions", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SCAN 0
			SCAN ""
			SCAN +0
			SCAN -0
			SCAN x
			SCAN " 0"
			SCAN "0 "
			SCAN 0x1
			SCAN 1.5
			SCAN -
			SCAN +
			SCAN 18446744073709551616
			SCAN -18446744073709551616
			SCAN 0 COUNT 0
			SCAN 0 COUNT -1
			SCAN 0 COUNT x
			SCAN 0 COUNT
			SCAN 0 MATCH
			SCAN 0 TYPE
			SCAN 0 FOO bar
			SCAN 0 COUNT 10 FOO
			SCAN x COUNT 0
			SCAN 0 COUNT 0 MATCH
			SCAN
		`)
		// On a small key space one large COUNT returns everything at once.
		d.Do("MSET", "a", "1", "b", "2", "c", "3", "ab", "4", "", "5", "foo:1", "6", "foo:2", "7")
		for _, opts := range []string{
			"COUNT 1000",
			"COUNT 1000 MATCH *",
			"COUNT 1000 MATCH a*",
			"COUNT 1000 MATCH foo:?",
			"COUNT 1000 MATCH nomatch",
			"COUNT 1000 TYPE string",
			"COUNT 1000 TYPE STRING",
			"COUNT 1000 TYPE list",
			"COUNT 1000 TYPE none",
			"COUNT 1000 TYPE foo",
			"count 1000 match x match a* type list type string",
			"COUNT 9223372036854775807",
		} {
			scanSame(t, d, append([]string{"SCAN", "0"}, strings.Fields(opts)...)...)
		}
		if keysCollection(d, "coll", "x") {
			scanSame(t, d, "SCAN", "0", "COUNT", "1000", "TYPE", d.Want.Do("TYPE", "coll").Str)
			scanSame(t, d, "SCAN", "0", "COUNT", "1000", "TYPE", "string")
		}
	})

	t.Run("ScanFull", func(t *testing.T) {
		d := p.diff(t)
		mset(t, d, "key:", 0, 3000)
		mset(t, d, "other:", 0, 200)
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			for _, opts := range [][]string{
				nil,
				{"COUNT", "1"},
				{"COUNT", "97"},
				{"MATCH", "other:*"},
				{"MATCH", "key:1??", "COUNT", "50"},
				{"TYPE", "string", "COUNT", "500"},
			} {
				seen, calls := scanAll(t, c, opts...)
				want := 3200
				switch {
				case len(opts) >= 2 && opts[1] == "other:*":
					want = 200
				case len(opts) >= 2 && opts[1] == "key:1??":
					want = 100
				}
				if len(seen) != want {
					t.Errorf("%s SCAN %v: %d distinct keys, want %d", c.Addr, opts, len(seen), want)
				}
				if len(opts) == 2 && opts[1] == "1" && calls < 3200 && c == d.Got {
					t.Errorf("SCAN COUNT 1 finished in %d calls for 3200 keys", calls)
				}
			}
		}
	})

	t.Run("ScanConcurrent", func(t *testing.T) {
		// Every key present for the whole scan is returned, whatever is
		// inserted and deleted meanwhile.
		d := p.diff(t)
		const stable = 3000
		mset(t, d, "stable:", 0, stable)
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			churn := testutil.Dial(t, c.Addr)
			var stop atomic.Bool
			var wg sync.WaitGroup
			var ops atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Pipelined batches, so that writes keep coming while the
				// scan runs (each batch shares one fsync).
				for i := 0; !stop.Load() && i < 200_000; {
					var buf []byte
					n := 0
					for ; n < 50; n++ {
						k := "churn:" + strconv.Itoa(i%1000)
						if i%3 == 0 {
							buf = append(buf, testutil.Command("DEL", "churn:"+strconv.Itoa((i*7)%1000))...)
						} else {
							buf = append(buf, testutil.Command("SET", k, "x")...)
						}
						i++
					}
					if churn.SendErr(buf) != nil {
						return
					}
					for range n {
						if _, err := churn.ReadErr(); err != nil {
							return
						}
					}
					ops.Add(int64(n))
				}
			}()
			// Let the churn start, then scan slowly enough to overlap it.
			for ops.Load() < 50 {
				time.Sleep(time.Millisecond)
			}
			// Each SCAN call waits for a new batch of writes, so that the
			// writes land between the calls.
			last := ops.Load()
			seen, _ := scanAllHook(t, c, func() {
				for deadline := time.Now().Add(200 * time.Millisecond); ops.Load() == last && time.Now().Before(deadline); {
					time.Sleep(100 * time.Microsecond)
				}
				last = ops.Load()
			}, "COUNT", "20")
			stop.Store(true)
			wg.Wait()
			missing := 0
			for i := range stable {
				if !seen["stable:"+strconv.Itoa(i)] {
					missing++
				}
			}
			if missing > 0 {
				t.Errorf("%s: %d of %d stable keys missing from a SCAN with concurrent writes (%d writes)", c.Addr, missing, stable, ops.Load())
			}
			t.Logf("%s: %d concurrent writes during the scan", c.Addr, ops.Load())
		}
	})

	t.Run("RandomKey", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RANDOMKEY
			SET only v
			RANDOMKEY
			RANDOMKEY x
			DEL only
			RANDOMKEY
		`)
		mset(t, d, "r", 0, 50)
		seen := map[string]bool{}
		for range 200 {
			r := d.Got.Do("RANDOMKEY")
			n, err := strconv.Atoi(strings.TrimPrefix(r.Str, "r"))
			if r.Kind != '$' || err != nil || n < 0 || n >= 50 {
				t.Fatalf("RANDOMKEY = %v", r)
			}
			seen[r.Str] = true
		}
		if len(seen) < 20 {
			t.Errorf("RANDOMKEY returned only %d distinct keys of 50 in 200 calls", len(seen))
		}
		// Inside MULTI it runs in the apply loop: still a live key.
		d.Got.Do("MULTI")
		d.Got.Do("RANDOMKEY")
		if r := d.Got.Do("EXEC"); len(r.Elems) != 1 || !strings.HasPrefix(r.Elems[0].Str, "r") {
			t.Errorf("MULTI RANDOMKEY EXEC = %v", r)
		}
		// Only expired keys: nothing to return.
		d.Do("FLUSHDB")
		d.Do("SET", "gone", "v", "PX", "1")
		time.Sleep(20 * time.Millisecond)
		d.Do("RANDOMKEY")
		d.Proto(3)
		d.Do("RANDOMKEY")
	})

	t.Run("DBSizeFlush", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			DBSIZE
			MSET a 1 b 2 c 3
			DBSIZE
			SELECT 1
			MSET a 1 b 2
			DBSIZE
			FLUSHDB
			DBSIZE
			SELECT 0
			DBSIZE
			FLUSHDB foo
			FLUSHDB SYNC ASYNC
			FLUSHDB ASYNC
			DBSIZE
			SET a 1
			FLUSHDB sync
			DBSIZE
			SET a 1
			SELECT 3
			SET b 1
			FLUSHALL x
			FLUSHALL ASYNC ASYNC
			FLUSHALL
			DBSIZE
			SELECT 0
			DBSIZE
			SET a 1
			FLUSHALL SYNC
			SET a 1
			FLUSHALL async
			DBSIZE
			DBSIZE x
		`)
	})

	t.Run("SwapDB", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a db0
			SET ttl v EX 1000
			SELECT 1
			SET b db1
			SWAPDB 0 1
			GET a
			GET b
			TTL ttl
			DBSIZE
			SELECT 0
			GET b
			DBSIZE
			SWAPDB 1 0
			GET a
			SWAPDB 0 0
			GET a
			SWAPDB 0 x
			SWAPDB x 0
			SWAPDB x y
			SWAPDB 0 16
			SWAPDB -1 0
			SWAPDB 0 2147483648
			SWAPDB 99999999999 0
			SWAPDB 0 " 1"
			SWAPDB 0 15
			DBSIZE
			SELECT 15
			GET a
			SWAPDB
			SWAPDB 0
		`)
		// A swap is seen by other connections at once, and inside MULTI.
		d.Run(`
			SELECT 0
			FLUSHALL
			SET k zero
			SELECT 2
			SET k two
			MULTI
			SWAPDB 0 2
			GET k
			SELECT 0
			GET k
			EXEC
			GET k
		`)
	})

	t.Run("Object", func(t *testing.T) {
		d := p.diff(t)
		values := []string{
			"0", "1", "9999", "10000", "-1", "-0", "01", "+1", " 1", "1 ", "1.5",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
			"12345678901234567890", "", "abc",
			strings.Repeat("x", 44), strings.Repeat("x", 45), strings.Repeat("y", 1000),
		}
		for i, v := range values {
			k := "v" + strconv.Itoa(i)
			d.Do("SET", k, v)
			d.Do("OBJECT", "ENCODING", k)
			d.Do("OBJECT", "REFCOUNT", k)
			d.Do("OBJECT", "FREQ", k)
		}
		d.Run(`
			OBJECT ENCODING nokey
			OBJECT REFCOUNT nokey
			OBJECT IDLETIME nokey
			OBJECT FREQ nokey
			OBJECT HELP
			object help
			OBJECT
			OBJECT foo
			OBJECT foo bar
			OBJECT ENCODING
			OBJECT ENCODING a b
			OBJECT HELP x
			OBJECT IDLETIME
		`)
		// Idle time: seconds since the last use. OBJECT, TYPE, EXISTS
		// and TTL don't count as a use; GET and SET do.
		// A read counts in the second after one before it (basalt skips
		// the access table for a key read again within a second); so
		// does a PFCOUNT answered from the HLL's cached count.
		d.Do("SET", "idle", "x")
		d.Do("SET", "busy", "x")
		d.Do("GET", "busy")
		d.Do("PFADD", "hll", "a")
		d.Do("PFCOUNT", "hll")
		d.Do("PFCOUNT", "hll")
		time.Sleep(2100 * time.Millisecond)
		d.Do("GET", "busy")
		d.Do("PFCOUNT", "hll")
		d.Do("TYPE", "idle")
		d.Do("EXISTS", "idle")
		d.Do("TTL", "idle")
		intNear(t, d, 1, "OBJECT", "IDLETIME", "busy") // both clocks tick in whole seconds
		intNear(t, d, 1, "OBJECT", "IDLETIME", "hll")
		if w, g := d.DoBoth("OBJECT", "IDLETIME", "idle"); w.Int < 2 || g.Int < 2 || w.Int-g.Int > 1 || g.Int-w.Int > 1 {
			t.Errorf("OBJECT IDLETIME idle: redis %v, basalt %v", w, g)
		}
		d.Proto(3)
		d.Run(`
			OBJECT ENCODING nokey
			OBJECT ENCODING v0
			OBJECT HELP
		`)
	})

	t.Run("TableEntries", func(t *testing.T) {
		d := p.diff(t)
		for _, name := range []string{"del", "unlink", "exists", "type", "rename", "renamenx", "copy", "move",
			"touch", "expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl", "expiretime", "pexpiretime",
			"persist", "keys", "scan", "randomkey", "dbsize", "flushdb", "flushall", "swapdb", "object"} {
			commandInfoSame(t, d, name)
			// COMMAND DOCS: basalt gives summary, since and group.
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
		for _, sub := range []string{"encoding", "refcount", "idletime", "freq", "help"} {
			d.Do("COMMAND", "INFO", "object|"+sub)
		}
		d.Run(`
			COMMAND GETKEYS DEL a b c
			COMMAND GETKEYS RENAME a b
			COMMAND GETKEYS COPY a b DB 1 REPLACE
			COMMAND GETKEYS OBJECT ENCODING k
			COMMAND GETKEYS EXPIRE k 10 NX
		`)
	})

	t.Run("Multi", func(t *testing.T) {
		// The write commands inside one EXEC record, where Now is the
		// record's time.
		d := p.diff(t)
		d.Run(`
			MULTI
			SET a 1
			EXPIRE a 100
			TTL a
			RENAME a b
			COPY b c DB 1
			MOVE b 2
			EXISTS a b c
			PERSIST c
			DEL c
			KEYS *
			DBSIZE
			TYPE b
			OBJECT ENCODING c
			EXEC
			SELECT 2
			TTL b
			SELECT 1
			TTL c
		`)
	})
}

// scanAll runs a full SCAN with opts on c and returns the distinct keys and
// the number of calls.
func scanAll(t *testing.T, c *testutil.Conn, opts ...string) (map[string]bool, int) {
	t.Helper()
	return scanAllHook(t, c, func() {}, opts...)
}

// scanAllHook is scanAll calling between after each SCAN call.
func scanAllHook(t *testing.T, c *testutil.Conn, between func(), opts ...string) (map[string]bool, int) {
	t.Helper()
	seen := map[string]bool{}
	cursor, calls := "0", 0
	for {
		r := c.Do(append([]string{"SCAN", cursor}, opts...)...)
		calls++
		if r.Kind != '*' || len(r.Elems) != 2 || r.Elems[0].Kind != '$' || r.Elems[1].Kind != '*' {
			t.Fatalf("%s SCAN %s %v = %v", c.Addr, cursor, opts, r)
		}
		for _, k := range r.Elems[1].Elems {
			seen[k.Str] = true
		}
		cursor = r.Elems[0].Str
		between()
		if cursor == "0" {
			return seen, calls
		}
		if calls > 100_000 {
			t.Fatalf("%s SCAN %v does not end", c.Addr, opts)
		}
	}
}

// docsField returns a COMMAND DOCS field, rendered.
func docsField(r testutil.Reply, f string) string {
	for i := 0; i+1 < len(r.Elems); i += 2 {
		if r.Elems[i].Str == f {
			return r.Elems[i+1].String()
		}
	}
	return ""
}

// scanSame compares a SCAN reply whose keys may come in any order: the
// cursor exactly, the keys sorted.
func scanSame(t *testing.T, d *testutil.Diff, args ...string) {
	t.Helper()
	w, g := d.DoBoth(args...)
	if len(w.Elems) == 2 && len(g.Elems) == 2 {
		w.Elems = []testutil.Reply{w.Elems[0], w.Elems[1].Sorted()}
		g.Elems = []testutil.Reply{g.Elems[0], g.Elems[1].Sorted()}
	}
	if err := testutil.Compare(args, w, g); err != nil {
		t.Error(err)
	}
}

// commandInfoSame compares COMMAND INFO name, with the subcommands (which
// Redis lists in hash order) sorted.
func commandInfoSame(t *testing.T, d *testutil.Diff, name string) {
	t.Helper()
	args := []string{"COMMAND", "INFO", name}
	w, g := d.DoBoth(args...)
	for _, r := range []*testutil.Reply{&w, &g} {
		if len(r.Elems) == 1 && len(r.Elems[0].Elems) == 10 {
			info := append([]testutil.Reply(nil), r.Elems[0].Elems...)
			info[9] = info[9].Sorted()
			r.Elems = []testutil.Reply{{Kind: '*', Elems: info}}
		}
	}
	if err := testutil.Compare(args, w, g); err != nil {
		t.Error(err)
	}
}
