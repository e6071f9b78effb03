package compat

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// hashPairs turns a flat [f1 v1 f2 v2 ...] array or a RESP3 map into sorted
// "field=value" strings, so that replies in hash order can be compared with
// their pairing kept.
func hashPairs(r testutil.Reply) []string {
	var out []string
	for i := 0; i+1 < len(r.Elems); i += 2 {
		out = append(out, r.Elems[i].String()+"="+r.Elems[i+1].String())
	}
	slices.Sort(out)
	return out
}

// hashListpack reports whether redis-server keeps key as a listpack, which
// lists its fields in insertion order: basalt must list them in that
// order too. A hash table's order is Redis's own.
func hashListpack(d *testutil.Diff, key string) bool {
	return d.Want.Do("OBJECT", "ENCODING", key).Str == "listpack"
}

// hashDoAll sends a command whose reply is a flat field/value array or a
// map of a whole hash key (args[1]): compared exactly when Redis keeps the
// hash as a listpack, else the type and the sorted pairs.
func hashDoAll(t *testing.T, d *testutil.Diff, args ...string) {
	t.Helper()
	if hashListpack(d, args[1]) {
		d.Do(args...)
		return
	}
	w, g := d.DoBoth(args...)
	if w.Kind != g.Kind || w.IsError() || g.IsError() || w.Kind != '*' && w.Kind != '%' {
		if err := testutil.Compare(args, w, g); err != nil {
			t.Error(err)
		}
		return
	}
	if wp, gp := hashPairs(w), hashPairs(g); !slices.Equal(wp, gp) {
		t.Errorf("%s\n  want: %v\n  got:  %v", strings.Join(args, " "), wp, gp)
	}
}

// hashFill writes n fields prefix+i -> "v"+i into key on both servers with
// pipelined HSETs of 500 fields each.
func hashFill(t *testing.T, d *testutil.Diff, key, prefix string, n int) {
	t.Helper()
	for _, c := range []*testutil.Conn{d.Want, d.Got} {
		var buf []byte
		cmds := 0
		for i := 0; i < n; i += 500 {
			args := []string{"HSET", key}
			for j := i; j < min(i+500, n); j++ {
				args = append(args, prefix+strconv.Itoa(j), "v"+strconv.Itoa(j))
			}
			buf = append(buf, testutil.Command(args...)...)
			cmds++
		}
		c.Send(buf)
		for range cmds {
			if r := c.Read(); r.Kind != ':' {
				t.Fatalf("%s: HSET fill: %v", c.Addr, r)
			}
		}
	}
}

// hashScanAll walks HSCAN key from cursor 0 to the end on c and returns the
// fields with their values (a field seen twice must have the same value)
// and the number of calls.
func hashScanAll(t *testing.T, c *testutil.Conn, key string, opts ...string) (map[string]string, int) {
	t.Helper()
	seen := map[string]string{}
	cursor, calls := "0", 0
	for {
		r := c.Do(append([]string{"HSCAN", key, cursor}, opts...)...)
		calls++
		if r.Kind != '*' || len(r.Elems) != 2 || len(r.Elems[1].Elems)%2 != 0 {
			t.Fatalf("%s HSCAN %s %s: %v", c.Addr, key, cursor, r)
		}
		for i := 0; i < len(r.Elems[1].Elems); i += 2 {
			f, v := r.Elems[1].Elems[i].Str, r.Elems[1].Elems[i+1].Str
			if old, dup := seen[f]; dup && old != v {
				t.Errorf("%s HSCAN: field %q with values %q and %q", c.Addr, f, old, v)
			}
			seen[f] = v
		}
		cursor = r.Elems[0].Str
		if cursor == "0" {
			return seen, calls
		}
		if calls > 1_000_000 {
			t.Fatalf("%s HSCAN does not end", c.Addr)
		}
	}
}

// hashRandCheck checks an HRANDFIELD reply from basalt against the hash's
// content: the number of entries, that each names a field with its value,
// distinctness when asked, and the RESP3 shape of pairs.
func hashRandCheck(t *testing.T, r testutil.Reply, content map[string]string, want int, withValues, distinct bool, proto int) {
	t.Helper()
	if r.Kind != '*' {
		t.Fatalf("HRANDFIELD reply %v", r)
	}
	type entry struct{ f, v string }
	var entries []entry
	switch {
	case !withValues:
		for _, e := range r.Elems {
			entries = append(entries, entry{f: e.Str})
		}
	case proto == 3:
		for _, e := range r.Elems {
			if e.Kind != '*' || len(e.Elems) != 2 {
				t.Fatalf("RESP3 HRANDFIELD WITHVALUES element %v, want a pair", e)
			}
			entries = append(entries, entry{e.Elems[0].Str, e.Elems[1].Str})
		}
	default:
		if len(r.Elems)%2 != 0 {
			t.Fatalf("HRANDFIELD WITHVALUES: odd reply %v", r)
		}
		for i := 0; i < len(r.Elems); i += 2 {
			entries = append(entries, entry{r.Elems[i].Str, r.Elems[i+1].Str})
		}
	}
	if len(entries) != want {
		t.Errorf("HRANDFIELD: %d entries, want %d", len(entries), want)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		v, ok := content[e.f]
		if !ok {
			t.Errorf("HRANDFIELD returned %q, not a field", e.f)
		}
		if withValues && v != e.v {
			t.Errorf("HRANDFIELD: field %q with value %q, want %q", e.f, e.v, v)
		}
		if distinct && seen[e.f] {
			t.Errorf("HRANDFIELD with a positive count repeated %q", e.f)
		}
		seen[e.f] = true
	}
}

func TestHash(t *testing.T) {
	p := newPair(t)

	t.Run("SetGet", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			d.Do("FLUSHALL")
			d.Run(`
				HSET h f v
				HGET h f
				HGET h nofield
				HGET nokey f
				HSET h f v2 g w
				HSET h f v2 f v3 f v4
				HGET h f
				HSET h "" ""
				HGET h ""
				HSTRLEN h ""
				HSET h "bin\x00\xff" "a\r\nb"
				HGET h "bin\x00\xff"
				HSET h n 12345 neg -17 big 123456789012345678901234567890
				HGET h n
				HGET h big
				HSTRLEN h n
				HSTRLEN h big
				HSTRLEN h nofield
				HSTRLEN nokey f
				HLEN h
				HLEN nokey
				HEXISTS h f
				HEXISTS h nofield
				HEXISTS nokey f
				HMSET h a 1 b 2
				HMSET m a 1
				HMGET h a b nofield f a
				HMGET nokey a b
				HMGET h a
				HSETNX h a x
				HGET h a
				HSETNX h new x
				HGET h new
				HSETNX created f v
				HGETALL created
				HLEN h
				HKEYS h
				HVALS h
				HGETALL nokey
				HKEYS nokey
				HVALS nokey
				TYPE h
				HSET h a 1 b
				HSET h a
				HMSET h a 1 b
				HMSET h
				HSETNX h a
				HGET h
				HMGET h
				HGETALL
				HGETALL h x
				HKEYS h x
				HVALS
				HLEN h x
				HEXISTS h
				HSTRLEN h
				hset h UPPER case
				hget h UPPER
				HGET h upper
			`)
			d.Do("HGETALL", "h")
			d.Do("HGETALL", "m")
		}
		d.Proto(2)
	})

	t.Run("WrongType", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			d.Run(`
				SET s v
				HSET s f v
				HMSET s f v
				HSETNX s f v
				HGET s f
				HMGET s f g
				HGETALL s
				HKEYS s
				HVALS s
				HDEL s f
				HEXISTS s f
				HLEN s
				HSTRLEN s f
				HINCRBY s f 1
				HINCRBYFLOAT s f 1
				HRANDFIELD s
				HRANDFIELD s 2
				HRANDFIELD s -2 WITHVALUES
				HSCAN s 0
				HSCAN s 0 COUNT x
				HSCAN s 0 NOVALUES
				GET s
				HSET h f v
				GET h
				APPEND h x
				INCR h
			`)
		}
		d.Proto(2)
	})

	t.Run("HDel", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			HDEL nokey f
			HSET h a 1 b 2 c 3 d 4
			HDEL h a
			HDEL h a
			HDEL h b b nofield
			HLEN h
			HDEL h nofield
			HLEN h
			HDEL h c d
			EXISTS h
			TYPE h
			HLEN h
			HGETALL h
			HSET h a 1
			HDEL h a a a
			EXISTS h
			HDEL h
			HSET h x 1
			EXPIRE h 100
			HDEL h y
			TTL h
			HSET h y 2
			TTL h
			HDEL h x
			TTL h
		`)
	})

	t.Run("HIncrBy", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			HINCRBY h f 1
			HINCRBY h f 41
			HINCRBY h f -100
			HGET h f
			HINCRBY h g -9223372036854775808
			HINCRBY h g -1
			HINCRBY h g 9223372036854775807
			HINCRBY h g 9223372036854775807
			HSET h max 9223372036854775807 min -9223372036854775808
			HINCRBY h max 1
			HINCRBY h max 0
			HINCRBY h min -1
			HINCRBY h min 1
			HINCRBY h f 9223372036854775808
			HINCRBY h f x
			HINCRBY h f 1.5
			HINCRBY h f ""
			HINCRBY h f " 1"
			HINCRBY h f +1
			HINCRBY h f 007
			HINCRBY nokey2 f x
			EXISTS nokey2
			HSET h s abc sp " 1" fl 1.5 e "" plus +1 zero 0 lead 01 neg0 -0
			HINCRBY h s 1
			HINCRBY h sp 1
			HINCRBY h fl 1
			HINCRBY h e 1
			HINCRBY h plus 1
			HINCRBY h zero 1
			HINCRBY h lead 1
			HINCRBY h neg0 1
			HGET h s
			HINCRBY h f
			HINCRBY h
			HLEN h
		`)
	})

	t.Run("HIncrByFloat", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			d.Do("FLUSHALL")
			d.Run(`
				HINCRBYFLOAT h f 1.5
				HINCRBYFLOAT h f 0.1
				HINCRBYFLOAT h f -1.6
				HINCRBYFLOAT h f 10.50
				HINCRBYFLOAT h f 5.0e3
				HINCRBYFLOAT h f 2.0e2
				HINCRBYFLOAT h g 3
				HINCRBYFLOAT h g 0x10
				HINCRBYFLOAT h g 1e-20
				HINCRBYFLOAT h g -3.0000000000000000001
				HINCRBYFLOAT h n 17179869184
				HINCRBYFLOAT h n 1.23e30
				HINCRBYFLOAT h f x
				HINCRBYFLOAT h f ""
				HINCRBYFLOAT h f "1 "
				HINCRBYFLOAT h f inf
				HINCRBYFLOAT h f -inf
				HINCRBYFLOAT h f nan
				HINCRBYFLOAT h f +inf
				HINCRBYFLOAT nokey f inf
				EXISTS nokey
				HSET h s abc e "" int 10 hugeexp 1e4932 over 1e4933
				HINCRBYFLOAT h s 1
				HINCRBYFLOAT h e 1
				HINCRBYFLOAT h int 0.5
				HINCRBYFLOAT h hugeexp 1e4932
				HINCRBYFLOAT h hugeexp 1
				HINCRBYFLOAT h over 1
				HINCRBYFLOAT h big 1e4932
				HINCRBYFLOAT h big 1e4932
				HGET h big
				HINCRBYFLOAT h z -0
				HINCRBYFLOAT h z -0.0
				HSET h w -0
				HINCRBYFLOAT h w 0
				HINCRBYFLOAT h q 1e-5000
				HINCRBYFLOAT h q "  1"
				HINCRBYFLOAT h q 1e
				HINCRBY h t -0
				HINCRBYFLOAT h f 1 x
				HINCRBYFLOAT h f
				HINCRBY h int 1
				HINCRBY h f 1
			`)
			hashDoAll(t, d, "HGETALL", "h")
		}
		d.Proto(2)
	})

	t.Run("Encoding", func(t *testing.T) {
		d := p.diff(t)
		v64, v65 := strings.Repeat("x", 64), strings.Repeat("x", 65)
		d.Run(fmt.Sprintf(`
			HSET small a 1
			OBJECT ENCODING small
			HSET v64 f %[1]s %[1]s v
			OBJECT ENCODING v64
			HSET v65 f %[2]s
			OBJECT ENCODING v65
			HSET f65 %[2]s v
			OBJECT ENCODING f65
			HDEL f65 %[2]s
			HSET f65 a 1
			OBJECT ENCODING f65
			HSET sticky a 1 b %[2]s
			HDEL sticky b
			OBJECT ENCODING sticky
			HLEN sticky
			HSETNX nx a 1
			HSETNX nx a %[2]s
			OBJECT ENCODING nx
			HSETNX nx b %[2]s
			OBJECT ENCODING nx
			HINCRBY i %[1]s 1
			OBJECT ENCODING i
			HINCRBY i %[2]s 1
			OBJECT ENCODING i
			HINCRBYFLOAT fl %[1]s 1
			OBJECT ENCODING fl
			HINCRBYFLOAT fl x 1e300
			OBJECT ENCODING fl
			HINCRBYFLOAT fl x 1e300
			OBJECT ENCODING fl
			HINCRBYFLOAT fl2 x 0.1
			HINCRBYFLOAT fl2 x 1e40
			OBJECT ENCODING fl2
			HGET fl2 x
			HMSET hm a %[2]s
			OBJECT ENCODING hm
		`, v64, v65))
		// 512 fields is a listpack (hash-max-listpack-entries), the 513th
		// converts, for good.
		args := []string{"HSET", "n"}
		for i := range 512 {
			args = append(args, "f"+strconv.Itoa(i), "v")
		}
		d.Do(args...)
		d.Do("OBJECT", "ENCODING", "n")
		d.Do("HSET", "n", "f0", "again")
		d.Do("OBJECT", "ENCODING", "n")
		d.Do("HSET", "n", "one-more", "v")
		d.Do("OBJECT", "ENCODING", "n")
		d.Do("HDEL", "n", "one-more", "f1", "f2")
		d.Do("OBJECT", "ENCODING", "n")
		d.Do("HLEN", "n")
		// More than 512 in one HSET.
		args = []string{"HSET", "n2"}
		for i := range 600 {
			args = append(args, "f"+strconv.Itoa(i), "v")
		}
		d.Do(args...)
		d.Do("OBJECT", "ENCODING", "n2")
		// Encoding survives RENAME and COPY.
		d.Run(`
			RENAME sticky sticky2
			OBJECT ENCODING sticky2
			COPY small small2
			OBJECT ENCODING small2
			COPY n2 n3
			OBJECT ENCODING n3
			HLEN n3
		`)
	})

	t.Run("Order", func(t *testing.T) {
		// A listpack lists its fields in insertion order: a field set
		// again keeps its place, a deleted one leaves the others in
		// theirs, and the order survives COPY, RENAME, MULTI, scripts and
		// DUMP/RESTORE between the servers.
		p.both(t, `
			HSET h z 1 a 2 m 3
			HSET h a 9 q 4
			HGETALL h
			HDEL h z
			HSET h z 5
			HSETNX h a x
			HSETNX h b 6
			HINCRBY h n 3
			HINCRBY h a 1
			HINCRBYFLOAT h f 1.5
			HMSET h c 7 m 8
			HGETALL h
			HKEYS h
			HVALS h
			HSCAN h 0
			HSCAN h 0 MATCH [a-m]
			HSCAN h 0 NOVALUES
			HRANDFIELD h 100 WITHVALUES
			COPY h h2
			HGETALL h2
			RENAME h2 h3
			HGETALL h3
			MULTI
			HSET h y 1
			HDEL h a
			HGETALL h
			EXEC
			EVAL 'redis.call("hset", KEYS[1], "e", "1"); return redis.call("hgetall", KEYS[1])' 1 h
			HDEL h z m q b n c f y e
			HGETALL h
			HSET h new 1
			HGETALL h
		`)
		d := p.diff(t)
		// DUMP of either server restored on both.
		d.Do("HSET", "d", "k3", "1", "k1", "2", "k2", "3", "k0", "")
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			payload := c.Do("DUMP", "d").Str
			d.Do("RESTORE", "r", "0", payload, "REPLACE")
			d.Do("HGETALL", "r")
			d.Do("HSET", "r", "k9", "9", "k1", "x")
			d.Do("HGETALL", "r")
		}
		// Up to 512 fields keep their order; the 513th converts, and so
		// does a value of 65 bytes: then only the pairs are compared.
		hashFill(t, d, "n", "f", 512)
		d.Do("HDEL", "n", "f7")
		d.Do("HSET", "n", "f7", "back", "f8", "again")
		d.Do("HGETALL", "n")
		d.Do("HKEYS", "n")
		d.Do("HSET", "n", "one-more", "v")
		d.Do("OBJECT", "ENCODING", "n")
		hashDoAll(t, d, "HGETALL", "n")
		d.Do("HSET", "long", "a", "1", "b", "2")
		d.Do("HGETALL", "long")
		d.Do("HSET", "long", "c", strings.Repeat("v", 65))
		d.Do("OBJECT", "ENCODING", "long")
		hashDoAll(t, d, "HGETALL", "long")
		d.Do("HGET", "long", "a")
		d.Do("HSTRLEN", "long", "c")
	})

	t.Run("HRandField", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			d.Do("FLUSHALL")
			// Replies that do not depend on chance.
			d.Run(`
				HRANDFIELD nokey
				HRANDFIELD nokey 5
				HRANDFIELD nokey -5 WITHVALUES
				HRANDFIELD nokey 0
				HRANDFIELD nokey x
				HRANDFIELD nokey 1 withvalues x
				HRANDFIELD nokey 1 foo
				HSET one f v
				HRANDFIELD one
				HRANDFIELD one 1
				HRANDFIELD one 1 WITHVALUES
				HRANDFIELD one 5
				HRANDFIELD one 5 withvalues
				HRANDFIELD one -3
				HRANDFIELD one -3 WITHVALUES
				HRANDFIELD one 0
				HRANDFIELD one 0 WITHVALUES
				HRANDFIELD one -0
				HRANDFIELD one x
				HRANDFIELD one 1.5
				HRANDFIELD one "" 
				HRANDFIELD one 1 WITHVALUES extra
				HRANDFIELD one 1 WITHSCORES
				HRANDFIELD one -9223372036854775808
				HRANDFIELD one -9223372036854775807 WITHVALUES
				HRANDFIELD one 9223372036854775807 WITHVALUES
				HRANDFIELD one 4611686018427387904 WITHVALUES
				HRANDFIELD one -4611686018427387904 WITHVALUES
				HRANDFIELD one 4611686018427387903 WITHVALUES
				HRANDFIELD one 9223372036854775807
				HRANDFIELD one 9223372036854775808
			`)
			hashFill(t, d, "h", "f", 20)
			content := hashContent20()
			// A count at or above the size returns the whole hash, in
			// its order.
			d.Run(`
				HRANDFIELD h 20
				HRANDFIELD h 100
				HRANDFIELD h 20 WITHVALUES
				HRANDFIELD h 21 WITHVALUES
				HRANDFIELD h 1000 WITHVALUES
			`)
			// Random replies: check the properties, on both servers (the
			// checks themselves are verified against Redis).
			for _, c := range []*testutil.Conn{d.Want, d.Got} {
				for _, tc := range []struct {
					count      int
					withValues bool
				}{{1, false}, {1, true}, {5, false}, {5, true}, {10, true}, {19, false}, {-1, true}, {-5, false}, {-50, true}, {-200, false}} {
					args := []string{"HRANDFIELD", "h", strconv.Itoa(tc.count)}
					if tc.withValues {
						args = append(args, "WITHVALUES")
					}
					want := max(tc.count, -tc.count)
					hashRandCheck(t, c.Do(args...), content, want, tc.withValues, tc.count > 0, proto)
				}
				r := c.Do("HRANDFIELD", "h")
				if _, ok := content[r.Str]; r.Kind != '$' || !ok {
					t.Errorf("%s HRANDFIELD h = %v", c.Addr, r)
				}
			}
		}
		d.Proto(2)
		// Every field comes up, and a negative count repeats fields.
		seen := map[string]int{}
		for range 200 {
			seen[d.Got.Do("HRANDFIELD", "h").Str]++
		}
		if len(seen) < 15 {
			t.Errorf("HRANDFIELD returned %d distinct fields of 20 in 200 calls: %v", len(seen), seen)
		}
		r := d.Got.Do("HRANDFIELD", "h", "-100")
		distinct := map[string]bool{}
		for _, e := range r.Elems {
			distinct[e.Str] = true
		}
		if len(distinct) < 10 || len(distinct) == 100 {
			t.Errorf("HRANDFIELD h -100: %d distinct fields", len(distinct))
		}
		// Inside MULTI it runs in the apply loop, from the record's seed.
		d.Got.Do("MULTI")
		d.Got.Do("HRANDFIELD", "h")
		d.Got.Do("HRANDFIELD", "h", "3", "WITHVALUES")
		d.Got.Do("HRANDFIELD", "h", "-30")
		d.Got.Do("HRANDFIELD", "h", "15")
		if r := d.Got.Do("EXEC"); len(r.Elems) != 4 || !strings.HasPrefix(r.Elems[0].Str, "f") {
			t.Errorf("MULTI HRANDFIELD EXEC = %v", r)
		} else {
			hashRandCheck(t, r.Elems[1], hashContent20(), 3, true, true, 2)
			hashRandCheck(t, r.Elems[2], hashContent20(), 30, false, false, 2)
			hashRandCheck(t, r.Elems[3], hashContent20(), 15, false, true, 2)
		}
	})

	t.Run("HScan", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			d.Do("FLUSHALL")
			d.Do("HSET", "h", "a", "1", "b", "2", "foo", "3", "foobar", "4", "bar", "5", "", "6")
			for _, args := range [][]string{
				{"HSCAN", "nokey", "0"},
				{"HSCAN", "nokey", "0", "COUNT", "x"},
				{"HSCAN", "nokey", "0", "BOGUS"},
				{"HSCAN", "nokey", "x"},
				{"HSCAN", "h", "0"},
				{"HSCAN", "h", "12345"},
				{"HSCAN", "h", "-1"},
				{"HSCAN", "h", ""},
				{"HSCAN", "h", "x"},
				{"HSCAN", "h", " 0"},
				{"HSCAN", "h", "18446744073709551615"},
				{"HSCAN", "h", "18446744073709551616"},
				{"HSCAN", "h", "0", "COUNT", "1"},
				{"HSCAN", "h", "0", "count", "2", "match", "foo*"},
				{"HSCAN", "h", "0", "MATCH", "*"},
				{"HSCAN", "h", "0", "MATCH", "*bar"},
				{"HSCAN", "h", "0", "MATCH", "nothing"},
				{"HSCAN", "h", "0", "MATCH", ""},
				{"HSCAN", "h", "0", "MATCH", "[ab]"},
				{"HSCAN", "h", "0", "MATCH", "FOO*"},
				{"HSCAN", "h", "0", "MATCH", "a", "MATCH", "b"},
				{"HSCAN", "h", "0", "COUNT", "0"},
				{"HSCAN", "h", "0", "COUNT", "-1"},
				{"HSCAN", "h", "0", "COUNT", "x"},
				{"HSCAN", "h", "0", "COUNT", "9223372036854775808"},
				{"HSCAN", "h", "0", "COUNT"},
				{"HSCAN", "h", "0", "MATCH"},
				{"HSCAN", "h", "0", "TYPE", "string"},
				{"HSCAN", "h", "0", "NOVALUES"},
				{"HSCAN", "h", "0", "COUNT", "5", "NOVALUES"},
				{"HSCAN", "h", "x", "COUNT", "0"},
				{"HSCAN", "h"},
			} {
				d.Do(args...) // a listpack: whole, in insertion order
			}
		}
		d.Proto(2)

		// A hash Redis keeps as a hash table is walked with a cursor:
		// compare the fields a full walk returns (Redis may repeat some).
		d.Do("FLUSHALL")
		hashFill(t, d, "big", "f", 3000)
		d.Do("HSET", "big", "other", "x")
		for _, opts := range [][]string{
			nil,
			{"COUNT", "1"},
			{"COUNT", "97"},
			{"COUNT", "5000"},
			{"MATCH", "f1??"},
			{"MATCH", "other", "COUNT", "50"},
		} {
			want, _ := hashScanAll(t, d.Want, "big", opts...)
			got, calls := hashScanAll(t, d.Got, "big", opts...)
			if !maps.Equal(want, got) {
				t.Errorf("HSCAN big %v: %d fields, want %d", opts, len(got), len(want))
			}
			if len(opts) == 2 && opts[1] == "1" && calls < 3001 {
				t.Errorf("HSCAN COUNT 1 finished in %d calls for 3001 fields", calls)
			}
			if len(opts) == 0 && calls < 100 {
				t.Errorf("HSCAN default COUNT finished in %d calls for 3001 fields", calls)
			}
		}
		// A cursor stays valid while fields come and go: every field
		// present for the whole walk is returned.
		seen := map[string]bool{}
		cursor := "0"
		for i := 0; ; i++ {
			r := d.Got.Do("HSCAN", "big", cursor, "COUNT", "50")
			for j := 0; j < len(r.Elems[1].Elems); j += 2 {
				seen[r.Elems[1].Elems[j].Str] = true
			}
			d.Got.Do("HSET", "big", "churn"+strconv.Itoa(i), "x")
			d.Got.Do("HDEL", "big", "churn"+strconv.Itoa(i/2))
			if cursor = r.Elems[0].Str; cursor == "0" {
				break
			}
		}
		for i := range 3000 {
			if !seen["f"+strconv.Itoa(i)] {
				t.Errorf("HSCAN with concurrent writes missed f%d", i)
				break
			}
		}
	})

	t.Run("Keyspace", func(t *testing.T) {
		// Generic commands on hashes.
		d := p.diff(t)
		d.Run(`
			HSET h a 1 b 2
			TYPE h
			EXISTS h
			EXPIRE h 100
			TTL h
			HSET h c 3
			TTL h
			HINCRBY h n 1
			HINCRBYFLOAT h x 1
			HDEL h x
			TTL h
			PERSIST h
			TTL h
			RENAME h h2
			EXISTS h
			HGET h2 a
			HLEN h2
			COPY h2 h3
			HSET h3 a changed
			HGET h2 a
			HGET h3 a
			COPY h2 h3
			COPY h2 h3 REPLACE
			HGET h3 a
			MOVE h3 1
			SELECT 1
			HGET h3 a
			HLEN h3
			SELECT 0
			EXISTS h3
			SWAPDB 0 1
			HLEN h3
			HLEN h2
			SWAPDB 0 1
			SET s v
			RENAME s h2
			TYPE h2
			HSET h2 f v
			DEL h2 nokey
			HSET h4 a 1
			DEL h4
			HGETALL h4
			HLEN h4
			HSET h4 b 2
			HGETALL h4
			HSET h5 a 1
			SET h5 str
			TYPE h5
			HSET h5 x 1
			DEL h5
			HSET h5 y 1
			HGETALL h5
			HSET e a 1
			PEXPIRE e 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			HGET e a
			HLEN e
			EXISTS e
			HSET e b 2
			HGETALL e
			TTL e
		`)
		// SCAN TYPE finds hashes.
		d.Do("FLUSHALL")
		d.Do("HSET", "ha", "f", "v")
		d.Do("HSET", "hb", "f", "v")
		d.Do("SET", "s", "v")
		d.DoUnordered("KEYS", "*")
		w, g := d.DoBoth("SCAN", "0", "TYPE", "hash", "COUNT", "100")
		if len(w.Elems) != 2 || len(g.Elems) != 2 || w.Elems[0].String() != g.Elems[0].String() {
			t.Errorf("SCAN TYPE hash: want %v, got %v", w, g)
		} else if ws, gs := w.Elems[1].Sorted(), g.Elems[1].Sorted(); ws.String() != gs.String() {
			t.Errorf("SCAN TYPE hash: want %v, got %v", ws, gs)
		}
	})

	t.Run("Transactions", func(t *testing.T) {
		d := p.diff(t)
		other := p.conn(t)
		d.Run(`
			HSET h a 1
			WATCH h
			MULTI
			HSET h b 2
			HINCRBY h a 10
			HGET h a
			HLEN h
			EXEC
			WATCH h
		`)
		other.Do("HSET", "h", "c", "3")
		d.Run(`
			MULTI
			HSET h d 4
			EXEC
			HEXISTS h d
			WATCH h
		`)
		other.Do("HDEL", "h", "nofield")
		d.Run(`
			MULTI
			HSET h e 5
			EXEC
			HEXISTS h e
			WATCH h
		`)
		other.Do("HINCRBY", "h", "a", "0")
		d.Run(`
			MULTI
			HSET h f 6
			EXEC
			HEXISTS h f
			MULTI
			HSET h x 1 y
			HSET h x 1
			EXEC
			MULTI
			HSET h z 1
			HINCRBY h z notanumber
			HINCRBY h a 1
			HINCRBYFLOAT h a inf
			HDEL h a b c d e f z
			EXEC
			EXISTS h
			HGETALL h
		`)
	})

	t.Run("ConcurrentReads", func(t *testing.T) {
		// Reads run without a snapshot while writes apply: replies built
		// from the header and the members must stay well formed when the
		// hash changes or vanishes in between.
		d := p.diff(t)
		churn := testutil.Dial(t, d.Got.Addr)
		fill := []string{"HSET", "k"}
		for i := range 1500 {
			fill = append(fill, "f"+strconv.Itoa(i), "v")
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			deadline := time.Now().Add(time.Second)
			for i := 0; time.Now().Before(deadline); i++ {
				buf := testutil.Command(fill...)
				buf = append(buf, testutil.Command("HDEL", "k", "f"+strconv.Itoa(i%1500), "f"+strconv.Itoa(i*7%1500))...)
				buf = append(buf, testutil.Command("DEL", "k")...)
				if churn.SendErr(buf) != nil {
					return
				}
				for range 3 {
					if _, err := churn.ReadErr(); err != nil {
						return
					}
				}
			}
		}()
		c := d.Got
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			for _, args := range [][]string{
				{"HGETALL", "k"}, {"HKEYS", "k"}, {"HVALS", "k"}, {"HRANDFIELD", "k"},
				{"HRANDFIELD", "k", "5"}, {"HRANDFIELD", "k", "-5", "WITHVALUES"}, {"HRANDFIELD", "k", "600"},
				{"HRANDFIELD", "k", "1400", "WITHVALUES"}, {"HSCAN", "k", "0", "COUNT", "100"},
			} {
				r, err := c.DoErr(args...)
				if err != nil || r.IsError() {
					t.Fatalf("%v under concurrent writes: %v %v", args, r, err)
				}
				if args[0] == "HGETALL" && len(r.Elems)%2 != 0 {
					t.Fatalf("HGETALL: odd reply %v", r)
				}
				// Every string is a field or the value, never a stray empty one.
				elems := r.Elems
				if r.Kind == '$' {
					elems = []testutil.Reply{r}
				} else if args[0] == "HSCAN" {
					elems = r.Elems[1].Elems
				}
				for _, e := range elems {
					if e.Kind == '$' && !e.Null && e.Str != "v" && !strings.HasPrefix(e.Str, "f") {
						t.Fatalf("%v under concurrent writes: element %v in %v", args, e, r)
					}
				}
			}
		}
		<-done
	})

	t.Run("Big", func(t *testing.T) {
		// 100,000 fields, pipelined: commands on one field stay fast.
		d := p.diff(t)
		const n = 100_000
		start := time.Now()
		hashFill(t, d, "big", "field:", n)
		t.Logf("filled %d fields on both servers in %v", n, time.Since(start))
		start = time.Now()
		d.Run(`
			HLEN big
			HGET big field:0
			HGET big field:99999
			HGET big field:100000
			HEXISTS big field:5000
			HSTRLEN big field:12345
			HMGET big field:1 field:2 nofield field:99998
			HSET big field:0 new extra x
			HSETNX big field:1 y
			HSETNX big fresh y
			HINCRBY big counter 5
			HINCRBYFLOAT big fcounter 2.5
			HDEL big field:7 field:8 nofield
			HLEN big
			OBJECT ENCODING big
			HRANDFIELD big 0
			HRANDFIELD nokey 3
		`)
		for i := range 200 {
			f := "field:" + strconv.Itoa(i*499%n)
			d.Do("HGET", "big", f)
			d.Do("HINCRBY", "big", "c"+strconv.Itoa(i%7), "1")
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("single-field commands on a %d-field hash took %v", n, el)
		}
		content := func(f string) bool {
			i, err := strconv.Atoi(strings.TrimPrefix(f, "field:"))
			return strings.HasPrefix(f, "field:") && err == nil && i >= 0 && i < n || f == "extra" || f == "fresh" ||
				f == "counter" || f == "fcounter" || strings.HasPrefix(f, "c")
		}
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			for _, args := range [][]string{{"HRANDFIELD", "big", "5"}, {"HRANDFIELD", "big", "-5"}, {"HRANDFIELD", "big", "1000"}} {
				r := c.Do(args...)
				want, _ := strconv.Atoi(args[2])
				if len(r.Elems) != max(want, -want) {
					t.Errorf("%s %v: %d fields", c.Addr, args, len(r.Elems))
				}
				distinct := map[string]bool{}
				for _, e := range r.Elems {
					if !content(e.Str) {
						t.Errorf("%s %v: unknown field %q", c.Addr, args, e.Str)
					}
					distinct[e.Str] = true
				}
				if want > 0 && len(distinct) != want {
					t.Errorf("%s %v: %d distinct fields", c.Addr, args, len(distinct))
				}
			}
		}
		start = time.Now()
		got, calls := hashScanAll(t, d.Got, "big", "COUNT", "1000")
		if hl := d.Got.Do("HLEN", "big"); int64(len(got)) != hl.Int {
			t.Errorf("HSCAN big returned %d fields, HLEN is %d", len(got), hl.Int)
		}
		t.Logf("HSCAN of %d fields: %d calls, %v", len(got), calls, time.Since(start))
		hashDoAll(t, d, "HGETALL", "big")
		d.Do("DEL", "big")
		d.Do("EXISTS", "big")
		d.Do("HLEN", "big")
	})
}

// hashContent20 is what hashFill(..., "f", 20) writes.
func hashContent20() map[string]string {
	m := map[string]string{}
	for i := range 20 {
		m["f"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
	}
	return m
}
