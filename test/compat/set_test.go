package compat

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// setScanAll runs SSCAN key from cursor 0 to the end on one server and
// returns every member it saw (repeats included) and the number of calls.
func setScanAll(t *testing.T, c *testutil.Conn, key string, opts ...string) (members []string, calls int) {
	t.Helper()
	cursor := "0"
	for {
		r := c.Do(append([]string{"SSCAN", key, cursor}, opts...)...)
		if r.IsError() || len(r.Elems) != 2 {
			t.Fatalf("SSCAN %s %s: %v", key, cursor, r)
		}
		calls++
		for _, e := range r.Elems[1].Elems {
			members = append(members, e.Str)
		}
		cursor = r.Elems[0].Str
		if cursor == "0" {
			return members, calls
		}
		if calls > 1_000_000 {
			t.Fatalf("SSCAN %s does not end", key)
		}
	}
}

// setSameScan compares one SSCAN call on both servers as a cursor and an
// unordered list of members.
func setSameScan(t *testing.T, d *testutil.Diff, args ...string) {
	t.Helper()
	w, g := d.DoBoth(args...)
	if w.IsError() || g.IsError() || len(w.Elems) != 2 || len(g.Elems) != 2 {
		if err := testutil.Compare(args, w, g); err != nil {
			t.Error(err)
		}
		return
	}
	w.Elems[1], g.Elems[1] = w.Elems[1].Sorted(), g.Elems[1].Sorted()
	if err := testutil.Compare(args, w, g); err != nil {
		t.Error(err)
	}
}

// members returns the elements of an array or set reply as strings.
func setElems(r testutil.Reply) []string {
	var out []string
	for _, e := range r.Elems {
		out = append(out, e.Str)
	}
	return out
}

// setCheckRandom checks a random multi-member reply of basalt against what
// Redis answers for the same command: same reply type, same length, members
// of the set, distinct when asked.
func setCheckRandom(t *testing.T, d *testutil.Diff, set []string, distinct bool, args ...string) []string {
	t.Helper()
	w, g := d.DoBoth(args...)
	what := strings.Join(args, " ")
	if w.Kind != g.Kind || len(w.Elems) != len(g.Elems) || w.IsError() != g.IsError() {
		t.Errorf("%s: redis %v, basalt %v", what, w, g)
		return nil
	}
	for _, r := range []testutil.Reply{w, g} {
		seen := map[string]bool{}
		for _, m := range setElems(r) {
			if !slices.Contains(set, m) {
				t.Errorf("%s: %q is not a member (%v)", what, m, r)
			}
			if distinct && seen[m] {
				t.Errorf("%s: %q twice (%v)", what, m, r)
			}
			seen[m] = true
		}
	}
	return setElems(g)
}

// setFill fills key with members prefix0..prefix(n-1) on both servers,
// pipelining SADDs of 1000 members.
func setFill(t *testing.T, d *testutil.Diff, key, prefix string, n int) {
	t.Helper()
	for _, c := range []*testutil.Conn{d.Want, d.Got} {
		sent := 0
		for i := 0; i < n; i += 1000 {
			args := []string{"SADD", key}
			for j := i; j < min(i+1000, n); j++ {
				args = append(args, prefix+strconv.Itoa(j))
			}
			c.Send(testutil.Command(args...))
			sent++
		}
		for range sent {
			if r := c.Read(); r.IsError() {
				t.Fatalf("SADD on %s: %v", c.Addr, r)
			}
		}
	}
}

func TestSets(t *testing.T) {
	p := newPair(t)

	t.Run("TableEntries", func(t *testing.T) {
		d := p.conn(t)
		for _, name := range []string{"sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop",
			"srandmember", "smove", "sinter", "sintercard", "sunion", "sdiff", "sinterstore", "sunionstore",
			"sdiffstore", "sscan"} {
			d.Do("COMMAND", "INFO", name)
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
		d.Run(`
			COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1
			COMMAND GETKEYS SMOVE a b m
			COMMAND GETKEYS SINTERSTORE d a b
			COMMAND GETKEYSANDFLAGS SDIFFSTORE d a b
		`)
	})

	t.Run("AddRemMembers", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD s a b c
			SADD s a d a
			SCARD s
			@unordered SMEMBERS s
			SISMEMBER s a
			SISMEMBER s z
			SISMEMBER nokey a
			SMISMEMBER s a z b a
			SMISMEMBER nokey a b
			SREM s z
			SREM s a a z
			SCARD s
			SREM nokey a
			SREM s b c d
			EXISTS s
			SCARD s
			SMEMBERS s
			SADD s ""
			SISMEMBER s ""
			SMEMBERS s
			SREM s "" x
			EXISTS s
			SADD bin "a\x00b" "\xff\xfe" "a\x00b"
			@unordered SMEMBERS bin
			SISMEMBER bin "a\x00b"
			SET str v
			SADD str a
			SREM str a
			SMEMBERS str
			SISMEMBER str a
			SMISMEMBER str a
			SCARD str
			SADD s
			SADD
			SREM s
			SMEMBERS
			SMEMBERS a b
			SISMEMBER s
			SISMEMBER s a b
			SMISMEMBER s
			SCARD
			SCARD a b
		`)
	})

	t.Run("Encoding", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD i 1 2 3 -5 9223372036854775807 -9223372036854775808
			OBJECT ENCODING i
			SMEMBERS i
			SADD i 9223372036854775808
			OBJECT ENCODING i
			SREM i 9223372036854775808
			OBJECT ENCODING i
			SADD z -0
			OBJECT ENCODING z
			SADD y 01
			OBJECT ENCODING y
			SADD x "+1"
			OBJECT ENCODING x
			SADD w " 1"
			OBJECT ENCODING w
			SADD v 7 a
			OBJECT ENCODING v
			SADD u a 7
			OBJECT ENCODING u
			SADD n 5 -3 10 0
			SSCAN n 0
			SSCAN n 12345 COUNT 1
			SSCAN n 0 MATCH 1*
		`)
		setSameScan(t, d, "SSCAN", "i", "0")
		// The intset limit: 512 integers, the 513th converts for good.
		args := []string{"SADD", "big"}
		for i := range 512 {
			args = append(args, strconv.Itoa(i*3))
		}
		d.Do(args...)
		d.Do("OBJECT", "ENCODING", "big")
		d.Do("SCARD", "big")
		d.Do("SSCAN", "big", "0", "COUNT", "2") // an intset comes whole, in order
		d.Do("SMEMBERS", "big")
		d.Do("SADD", "big", "5000")
		d.Do("OBJECT", "ENCODING", "big")
		d.Do("SREM", "big", "5000", "0", "3")
		d.Do("OBJECT", "ENCODING", "big")
	})

	t.Run("RESP3", func(t *testing.T) {
		d := p.diff(t)
		d.Proto(3)
		defer d.Proto(2)
		d.Run(`
			SADD s a b c
			SADD t b c d
			SADD i 3 1 2
			@unordered SMEMBERS s
			SMEMBERS i
			SMEMBERS nokey
			SISMEMBER s a
			SMISMEMBER s a x
			SCARD s
			@unordered SINTER s t
			SINTER s nokey
			@unordered SUNION s t
			SUNION nokey
			@unordered SDIFF s t
			SDIFF nokey s
			SINTERCARD 2 s t
			SINTERSTORE d s t
			SPOP nokey
			SPOP nokey 3
			SPOP s 0
			SRANDMEMBER nokey
			SRANDMEMBER nokey 3
			SRANDMEMBER nokey -3
			SRANDMEMBER s 0
			@unordered SRANDMEMBER s 10
			SRANDMEMBER i 10
			@unordered SPOP s 10
			SSCAN nokey 0
			SSCAN i 0
			OBJECT ENCODING i
		`)
		setSameScan(t, d, "SSCAN", "t", "0")
		setCheckRandom(t, d, []string{"1", "2", "3"}, true, "SRANDMEMBER", "i", "2")
		setCheckRandom(t, d, []string{"1", "2", "3"}, false, "SRANDMEMBER", "i", "-7")
		setCheckRandom(t, d, []string{"1", "2", "3"}, true, "SPOP", "i", "2")
	})

	t.Run("SMove", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD a 1 2 x
			SADD b 3
			SET str v
			SMOVE a b 1
			@unordered SMEMBERS a
			@unordered SMEMBERS b
			SMOVE a b 1
			SMOVE a b 3
			SMOVE a b nope
			SMOVE nokey b 1
			SMOVE nokey str 1
			SMOVE a str 2
			SMOVE a str nope
			SMOVE str a 2
			SMOVE str nokey 2
			SMOVE a a 2
			SMOVE a a nope
			SMOVE a new 2
			OBJECT ENCODING new
			SMOVE a new2 x
			OBJECT ENCODING new2
			EXISTS a
			SMOVE b b 1
			EXPIRE b 100
			SMOVE b c 1
			TTL b
			SMOVE b c 3
			EXISTS b
			@unordered SMEMBERS c
			SMOVE a b
			SMOVE a b c d
		`)
	})

	t.Run("Algebra", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD a 1 2 3 4 x y
			SADD b 2 3 x z
			SADD c 3 x w
			SET str v
			@unordered SINTER a b
			@unordered SINTER a b c
			@unordered SINTER c b a
			@unordered SINTER a
			@unordered SINTER a a b
			SINTER a nokey
			SINTER nokey a
			SINTER nokey
			SINTER a str
			SINTER str a
			SINTER nokey str
			SINTER a nokey str
			@unordered SUNION a b c
			@unordered SUNION a nokey
			@unordered SUNION a a
			SUNION nokey nokey2
			SUNION a str
			SUNION nokey str
			SUNION str nokey
			@unordered SDIFF a b
			@unordered SDIFF a b c
			@unordered SDIFF a nokey
			SDIFF a a
			SDIFF a b a
			SDIFF nokey a
			@unordered SDIFF a
			SDIFF a str
			SDIFF nokey str
			SDIFF str nokey
			SINTER
			SUNION
			SDIFF
		`)
		// SDIFF against a big set takes the other path (load the others).
		setFill(t, d, "many", "m", 3000)
		d.Do("SADD", "few", "m1", "m2", "q")
		d.DoUnordered("SDIFF", "few", "many")
		d.Do("SDIFF", "few", "many", "few")
		d.DoUnordered("SDIFF", "many", "few")
		d.Do("SCARD", "many")
		d.DoUnordered("SINTER", "many", "few")
		d.DoUnordered("SINTER", "few", "many", "many")
	})

	t.Run("SInterCard", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD a 1 2 3 4 x y
			SADD b 2 3 x z y
			SET str v
			SINTERCARD 1 a
			SINTERCARD 2 a b
			SINTERCARD 2 a b LIMIT 0
			SINTERCARD 2 a b LIMIT 1
			SINTERCARD 2 a b LIMIT 3
			SINTERCARD 2 a b LIMIT 4
			SINTERCARD 2 a b LIMIT 100
			SINTERCARD 2 a b limit 2 LIMIT 1
			SINTERCARD 2 a nokey
			SINTERCARD 2 nokey str
			SINTERCARD 2 str nokey
			SINTERCARD 2 a str
			SINTERCARD 0 a
			SINTERCARD -1 a
			SINTERCARD abc a
			SINTERCARD 9223372036854775808 a
			SINTERCARD 3 a b
			SINTERCARD 2 a b LIMIT -1
			SINTERCARD 2 a b LIMIT abc
			SINTERCARD 2 a b LIMIT
			SINTERCARD 2 a b FOO 1
			SINTERCARD 1 nokey str
			SINTERCARD 1 a LIMIT -1 FOO
			SINTERCARD 2 str nokey LIMIT -1
			SINTERCARD 1
			SINTERCARD
		`)
	})

	t.Run("Store", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD a 1 2 3 x
			SADD b 2 3 4
			SADD i 1 2
			SET str v
			SINTERSTORE d a b
			@unordered SMEMBERS d
			OBJECT ENCODING d
			SUNIONSTORE d a b
			@unordered SMEMBERS d
			OBJECT ENCODING d
			SDIFFSTORE d a b
			@unordered SMEMBERS d
			OBJECT ENCODING d
			SDIFFSTORE d i a
			EXISTS d
			SUNIONSTORE str i
			TYPE str
			SMEMBERS str
			SET str v
			SINTERSTORE str nokey
			EXISTS str
			SET str v
			SDIFFSTORE str a str
			GET str
			SINTERSTORE str a str
			SUNIONSTORE str str a
			GET str
			SADD e 9
			EXPIRE e 100
			SUNIONSTORE e i
			TTL e
			@unordered SMEMBERS e
			EXPIRE e 100
			SINTERSTORE e nokey i
			EXISTS e
			SUNIONSTORE a a b
			@unordered SMEMBERS a
			SDIFFSTORE a a b
			@unordered SMEMBERS a
			SINTERSTORE a a i
			SMEMBERS a
			SUNIONSTORE nothing nokey nokey2
			EXISTS nothing
			SINTERSTORE d
			SUNIONSTORE d
			SDIFFSTORE d
		`)
	})

	t.Run("SPop", func(t *testing.T) {
		d := p.diff(t)
		set := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
		d.Do(append([]string{"SADD", "s"}, set...)...)
		d.Run(`
			SPOP nokey
			SPOP nokey 0
			SPOP nokey 5
			SPOP s 0
			SPOP s -1
			SPOP s abc
			SPOP s 1.5
			SPOP s 1 2
			SPOP s 9223372036854775808
			SET str v
			SPOP str
			SPOP str 2
			SPOP str -1
			SPOP nokey -1
			SPOP
		`)
		popped := map[string]bool{}
		pop := func(args ...string) {
			for _, m := range setCheckRandom(t, d, set, true, args...) {
				if popped[m] {
					t.Errorf("%v: %q was popped before", args, m)
				}
				popped[m] = true
			}
		}
		w, g := d.DoBoth("SPOP", "s")
		if w.Kind != '$' || g.Kind != '$' || !slices.Contains(set, g.Str) {
			t.Errorf("SPOP s: redis %v, basalt %v", w, g)
		}
		popped[g.Str] = true
		d.Do("SCARD", "s")
		pop("SPOP", "s", "2")
		d.Do("SCARD", "s")
		pop("SPOP", "s", "6") // most of what is left (Redis's case 3)
		d.Do("SCARD", "s")
		pop("SPOP", "s", "5") // more than what is left: the whole set
		d.Do("EXISTS", "s")
		if len(popped) != len(set) {
			t.Errorf("popped %d distinct members, want %d", len(popped), len(set))
		}
		// The last member deletes the key; the expiry stays while members remain.
		d.Run(`
			SADD one x y
			EXPIRE one 100
		`)
		setCheckRandom(t, d, []string{"x", "y"}, true, "SPOP", "one", "1")
		d.Do("TTL", "one")
		if w, g := d.DoBoth("SPOP", "one"); w.Kind != g.Kind || (g.Str != "x" && g.Str != "y") {
			t.Errorf("SPOP one: redis %v, basalt %v", w, g)
		}
		d.Do("EXISTS", "one")
		// Popping most of a hash table of integers leaves an intset, as
		// Redis builds the remaining set anew.
		args := []string{"SADD", "ints"}
		for i := range 600 {
			args = append(args, strconv.Itoa(i))
		}
		d.Do(args...)
		d.Do("OBJECT", "ENCODING", "ints")
		d.DoBoth("SPOP", "ints", "590")
		d.Do("SCARD", "ints")
		d.Do("OBJECT", "ENCODING", "ints")
		d.DoBoth("SPOP", "ints", "1")
		d.Do("OBJECT", "ENCODING", "ints")
	})

	t.Run("SRandMember", func(t *testing.T) {
		d := p.diff(t)
		set := []string{"a", "b", "c", "d", "e"}
		d.Do(append([]string{"SADD", "s"}, set...)...)
		d.Run(`
			SRANDMEMBER nokey
			SRANDMEMBER nokey 0
			SRANDMEMBER nokey 3
			SRANDMEMBER nokey -3
			SRANDMEMBER s 0
			SRANDMEMBER s abc
			SRANDMEMBER s 1.5
			SRANDMEMBER s 1 2
			SRANDMEMBER s -9223372036854775808
			SRANDMEMBER s 9223372036854775808
			SET str v
			SRANDMEMBER str
			SRANDMEMBER str 3
			SRANDMEMBER str abc
			SRANDMEMBER str -9223372036854775808
			@unordered SRANDMEMBER s 5
			@unordered SRANDMEMBER s 6
			@unordered SRANDMEMBER s 9223372036854775807
			SCARD s
			SRANDMEMBER
		`)
		w, g := d.DoBoth("SRANDMEMBER", "s")
		if w.Kind != '$' || g.Kind != '$' || !slices.Contains(set, g.Str) {
			t.Errorf("SRANDMEMBER s: redis %v, basalt %v", w, g)
		}
		for _, n := range []string{"1", "2", "4"} {
			setCheckRandom(t, d, set, true, "SRANDMEMBER", "s", n)
		}
		for _, n := range []string{"-1", "-5", "-20"} {
			setCheckRandom(t, d, set, false, "SRANDMEMBER", "s", n)
		}
		// Over many draws every member comes up.
		seen := map[string]bool{}
		for _, m := range setCheckRandom(t, d, set, false, "SRANDMEMBER", "s", "-500") {
			seen[m] = true
		}
		if len(seen) != len(set) {
			t.Errorf("SRANDMEMBER s -500 drew only %v", seen)
		}
		d.Do("SCARD", "s")
	})

	t.Run("SScan", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD s a b c d
			SET str v
			SSCAN nokey 0
			SSCAN nokey 0 COUNT 0
			SSCAN nokey 0 FOO
			SSCAN str 0
			SSCAN str 0 COUNT 0
			SSCAN str abc
			SSCAN s abc
			SSCAN s -1x
			SSCAN s 18446744073709551616
			SSCAN s 0 COUNT 0
			SSCAN s 0 COUNT -1
			SSCAN s 0 COUNT abc
			SSCAN s 0 COUNT
			SSCAN s 0 MATCH
			SSCAN s 0 TYPE string
			SSCAN s 0 FOO bar
			SSCAN s 0 MATCH a COUNT 0
			SSCAN s
			SSCAN
		`)
		setSameScan(t, d, "SSCAN", "s", "0")
		setSameScan(t, d, "SSCAN", "s", "0", "MATCH", "[ab]")
		setSameScan(t, d, "SSCAN", "s", "0", "match", "*", "count", "100")
		setSameScan(t, d, "SSCAN", "s", "0", "MATCH", "x*")
		setSameScan(t, d, "SSCAN", "s", "0", "COUNT", "100", "MATCH", "nothing", "MATCH", "c")

		// A hash table scanned in pages: every member exactly once (basalt)
		// or at least once (Redis), in a few calls.
		setFill(t, d, "h", "member:", 1000)
		for _, opts := range [][]string{nil, {"COUNT", "7"}, {"COUNT", "100"}, {"MATCH", "member:1*", "COUNT", "50"}} {
			want := map[string]bool{}
			for i := range 1000 {
				m := "member:" + strconv.Itoa(i)
				if len(opts) < 3 || strings.HasPrefix(m, "member:1") {
					want[m] = true
				}
			}
			for _, c := range []*testutil.Conn{d.Want, d.Got} {
				got, calls := setScanAll(t, c, "h", opts...)
				seen := map[string]bool{}
				for _, m := range got {
					if !want[m] {
						t.Errorf("SSCAN h %v on %s: unexpected %q", opts, c.Addr, m)
					}
					if c == d.Got && seen[m] {
						t.Errorf("SSCAN h %v: %q twice", opts, m)
					}
					seen[m] = true
				}
				if len(seen) != len(want) {
					t.Errorf("SSCAN h %v on %s: %d members, want %d", opts, c.Addr, len(seen), len(want))
				}
				if c == d.Got && len(opts) == 2 {
					if n, _ := strconv.Atoi(opts[1]); calls > 1000/n+2 || calls < 1000/n {
						t.Errorf("SSCAN h %v took %d calls", opts, calls)
					}
				}
			}
		}
		// A member that stays is returned even if others come and go.
		r := d.Got.Do("SSCAN", "h", "0", "COUNT", "300")
		for i := range 200 {
			d.Got.Do("SREM", "h", "member:"+strconv.Itoa(i*5))
			d.Got.Do("SADD", "h", "new:"+strconv.Itoa(i))
		}
		got := map[string]bool{}
		for _, m := range setElems(r.Elems[1]) {
			got[m] = true
		}
		cursor := r.Elems[0].Str
		for cursor != "0" {
			r = d.Got.Do("SSCAN", "h", cursor, "COUNT", "300")
			for _, m := range setElems(r.Elems[1]) {
				got[m] = true
			}
			cursor = r.Elems[0].Str
		}
		for i := range 1000 {
			if m := "member:" + strconv.Itoa(i); i%5 != 0 && !got[m] {
				t.Errorf("SSCAN under churn missed %q", m)
			}
		}
	})

	// Reads have no snapshot: random reads racing with writes that empty
	// and refill the set must stay well formed (basalt only).
	t.Run("ConcurrentReads", func(t *testing.T) {
		d := p.diff(t)
		w := testutil.Dial(t, p.basalt.Addr)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 200 {
				args := []string{"SADD", "r"}
				for j := range 1 + i%1500 {
					args = append(args, "m"+strconv.Itoa(j))
				}
				for _, cmd := range [][]string{args, {"SPOP", "r", "5"}, {"DEL", "r"}} {
					if _, err := w.DoErr(cmd...); err != nil {
						t.Errorf("%v: %v", cmd[0], err)
						return
					}
				}
			}
		}()
		counts := []string{"", "1", "3", "200", "-1", "-7", "-400", "2000", "-3000"}
	loop:
		for i := 0; ; i++ {
			select {
			case <-done:
				break loop
			default:
			}
			args := []string{"SRANDMEMBER", "r"}
			if n := counts[i%len(counts)]; n != "" {
				args = append(args, n)
			}
			r := d.Got.Do(args...)
			switch {
			case r.IsError():
				t.Fatalf("%v: %v", args, r)
			case len(args) == 2 && r.Kind != '$':
				t.Fatalf("%v: %v", args, r)
			case len(args) == 3 && r.Kind != '*':
				t.Fatalf("%v: %v", args, r)
			}
		}
		d.Do("PING")
	})

	t.Run("Generic", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD s a b 1
			TYPE s
			EXPIRE s 100
			TTL s
			RENAME s s2
			TTL s2
			@unordered SMEMBERS s2
			EXISTS s
			COPY s2 s3
			@unordered SMEMBERS s3
			TTL s3
			SADD s3 z
			SCARD s2
			SCARD s3
			COPY s2 s3
			COPY s2 s3 REPLACE
			SCARD s3
			SADD i 1 2
			COPY i i2
			OBJECT ENCODING i2
			MOVE s3 1
			EXISTS s3
			SELECT 1
			@unordered SMEMBERS s3
			SADD s3 q
			SELECT 0
			SWAPDB 0 1
			@unordered SMEMBERS s3
			SCARD s2
			SWAPDB 0 1
			SET str v
			RENAME str s2
			TYPE s2
			SADD s2 a
			SADD str2 a
			RENAME str2 s2
			TYPE s2
			@unordered SMEMBERS s2
			DEL s2 i
			EXISTS s2 i
			SADD gone x
			PEXPIRE gone 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			SCARD gone
			SMEMBERS gone
			SISMEMBER gone x
			SADD gone y
			SMEMBERS gone
			TTL gone
			FLUSHDB
			SELECT 1
			FLUSHDB
			SELECT 0
		`)
		// SCAN TYPE: only the sets (order differs between servers).
		d.Run(`
			SADD s1 a
			SADD s2 b
			SET str v
		`)
		w, g := d.DoBoth("SCAN", "0", "TYPE", "set", "COUNT", "100")
		if len(w.Elems) != 2 || len(g.Elems) != 2 {
			t.Fatalf("SCAN TYPE set: redis %v, basalt %v", w, g)
		}
		if ws, gs := w.Elems[1].Sorted().String(), g.Elems[1].Sorted().String(); ws != gs {
			t.Errorf("SCAN TYPE set: redis %s, basalt %s", ws, gs)
		}
	})

	t.Run("Transactions", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SADD s a b c
			MULTI
			SADD s d
			SREM s a
			SCARD s
			SISMEMBER s d
			SINTERSTORE t s s
			SMOVE t u b
			SPOP nokey
			SRANDMEMBER nokey
			EXEC
			@unordered SMEMBERS t
			SMEMBERS u
		`)
		// SPOP and SRANDMEMBER inside MULTI run in the apply loop.
		d.Run(`
			MULTI
			SPOP u
			SPOP s 0
			SRANDMEMBER s 0
			EXEC
			EXISTS u
		`)
		d.DoBoth("MULTI")
		d.DoBoth("SRANDMEMBER", "s")
		d.DoBoth("SRANDMEMBER", "s", "-3")
		d.DoBoth("SPOP", "s", "2")
		d.DoBoth("SPOP", "s")
		w, g := d.DoBoth("EXEC")
		if len(w.Elems) != 4 || len(g.Elems) != 4 || g.Elems[0].Kind != '$' || len(g.Elems[1].Elems) != 3 || len(g.Elems[2].Elems) != 2 || g.Elems[3].Kind != '$' {
			t.Errorf("EXEC: redis %v, basalt %v", w, g)
		}
		d.Do("SCARD", "s")

		// WATCH sees a set change.
		d.Do("SADD", "w", "a")
		d.Do("WATCH", "w")
		other := p.conn(t)
		other.Do("SADD", "w", "b")
		d.Run(`
			MULTI
			SCARD w
			EXEC
		`)
		d.Do("WATCH", "w")
		other.Do("SADD", "w", "b") // no change: the transaction goes on
		d.Run(`
			MULTI
			SCARD w
			EXEC
		`)
		d.Do("WATCH", "w")
		other.Do("SREM", "w", "a", "b")
		d.Run(`
			MULTI
			SCARD w
			EXEC
		`)
		// SMOVE of a member dst already has leaves dst unmodified for WATCH.
		d.Do("SADD", "w3", "x")
		d.Do("WATCH", "w3")
		other.Do("SADD", "w4", "x")
		other.Do("SMOVE", "w4", "w3", "x")
		d.Run(`
			MULTI
			SCARD w3
			EXEC
		`)
		d.Do("WATCH", "w2")
		other.Do("SUNIONSTORE", "w2", "nokey")
		d.Run(`
			MULTI
			SCARD w2
			EXEC
		`)
	})

	t.Run("Big", func(t *testing.T) {
		d := p.diff(t)
		const n = 100_000
		start := time.Now()
		setFill(t, d, "big", "e", n)
		t.Logf("SADD of %d members on both: %v", n, time.Since(start))
		d.Do("SADD", "small", "e1", "e99999", "e5000", "nope", "e100000")
		start = time.Now()
		d.Run(`
			SCARD big
			OBJECT ENCODING big
			SISMEMBER big e77777
			SISMEMBER big e100000
			SMISMEMBER big e0 e99999 x
			SADD big e100000 e5
			SREM big e100000 e6 nope
			SCARD big
			SMOVE big small e7
			SMOVE small big e7
			@unordered SINTER small big
			@unordered SINTER big small big
			SINTERCARD 2 big small
			SINTERCARD 2 big big LIMIT 10
			@unordered SDIFF small big
			SINTERSTORE dst big small
			@unordered SMEMBERS dst
		`)
		// Commands over the whole set.
		d.DoUnordered("SMEMBERS", "big")
		d.Do("SUNIONSTORE", "copy", "big", "small")
		d.Do("SDIFFSTORE", "copy", "copy", "small")
		d.Do("SCARD", "copy")
		w, g := d.DoBoth("SPOP", "big")
		if !strings.HasPrefix(g.Str, "e") || w.Kind != g.Kind {
			t.Errorf("SPOP big: redis %v, basalt %v", w, g)
		}
		d.Do("SCARD", "big")
		w, g = d.DoBoth("SRANDMEMBER", "big", "10")
		if len(g.Elems) != 10 || len(w.Elems) != 10 {
			t.Errorf("SRANDMEMBER big 10: redis %v, basalt %v", w, g)
		}
		w, g = d.DoBoth("SPOP", "big", "10")
		if len(g.Elems) != 10 || len(w.Elems) != 10 {
			t.Errorf("SPOP big 10: redis %v, basalt %v", w, g)
		}
		d.Do("SCARD", "big")
		r := d.Got.Do("SSCAN", "big", "0", "COUNT", "20")
		if len(r.Elems) != 2 || r.Elems[0].Str == "0" || len(r.Elems[1].Elems) < 20 || len(r.Elems[1].Elems) > 25 {
			t.Errorf("SSCAN big 0 COUNT 20: %v", r)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("single-member commands on a big set took %v", el)
		}
		w, g = d.DoBoth("SPOP", "copy", "90000")
		if len(g.Elems) != 90000 || w.Kind != g.Kind {
			t.Errorf("SPOP copy 90000: %d members, kind %c/%c", len(g.Elems), w.Kind, g.Kind)
		}
		d.Do("SCARD", "copy")
		d.Do("DEL", "big", "copy")
		d.Do("EXISTS", "big")
	})
}
