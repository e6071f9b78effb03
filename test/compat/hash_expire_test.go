package compat

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Hash field expiration (Redis 7.4's HEXPIRE family). redis-server 7.0
// has none of it, so these tests check basalt alone against the replies
// and errors of Redis's docs and tests/unit/type/hash-field-expire.tcl.

// is fails the test unless r renders as want.
func is(t *testing.T, r testutil.Reply, want string) {
	t.Helper()
	if r.String() != want {
		t.Errorf("got %s, want %s", r, want)
	}
}

// within fails the test unless r is an integer in [lo, hi].
func within(t *testing.T, r testutil.Reply, lo, hi int64) {
	t.Helper()
	if r.Kind != ':' || r.Int < lo || r.Int > hi {
		t.Errorf("got %s, want an integer in [%d, %d]", r, lo, hi)
	}
}

// ttls fails the test unless r is HTTL's reply want: -1 and -2 exactly, a
// TTL of want seconds as want or, a second later, want-1 (a slow machine).
func ttls(t *testing.T, r testutil.Reply, want ...int64) {
	t.Helper()
	ok := r.Kind == '*' && len(r.Elems) == len(want)
	for i := 0; ok && i < len(want); i++ {
		got := r.Elems[i].Int
		ok = r.Elems[i].Kind == ':' && (got == want[i] || want[i] > 0 && got == want[i]-1)
	}
	if !ok {
		t.Errorf("got %s, want TTLs %v", r, want)
	}
}

// waitFor polls a command until its reply renders as want, for at most 3 s.
func waitFor(t *testing.T, c *testutil.Conn, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		r := c.Do(args...)
		if r.String() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: still %s after 3 s, want %s", args, r, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHashFieldExpire(t *testing.T) {
	skipInShards(t) // before starting a server
	b := testutil.StartBasalt(t, "", "--notify-keyspace-events", "Ehg")
	c := testutil.Dial(t, b.Addr)

	t.Run("Replies", func(t *testing.T) {
		c.Do("FLUSHALL")
		is(t, c.Do("HSET", "h", "a", "1", "b", "2", "c", "3"), ":3")
		is(t, c.Do("OBJECT", "ENCODING", "h"), `"listpack"`)
		is(t, c.Do("HEXPIRE", "h", "100", "FIELDS", "2", "a", "nosuch"), "[:1, :-2]")
		is(t, c.Do("OBJECT", "ENCODING", "h"), `"listpackex"`)
		ttls(t, c.Do("HTTL", "h", "FIELDS", "3", "a", "b", "nosuch"), 100, -1, -2)
		r := c.Do("HPTTL", "h", "FIELDS", "1", "a")
		within(t, r.Elems[0], 90000, 100000)
		now := time.Now().Unix()
		within(t, c.Do("HEXPIRETIME", "h", "FIELDS", "1", "a").Elems[0], now+99, now+101)
		within(t, c.Do("HPEXPIRETIME", "h", "FIELDS", "1", "a").Elems[0], now*1000+98000, now*1000+102000)

		// NX, XX, GT, LT: a field without a TTL counts as never expiring.
		is(t, c.Do("HEXPIRE", "h", "200", "NX", "FIELDS", "2", "a", "b"), "[:0, :1]")
		is(t, c.Do("HEXPIRE", "h", "300", "XX", "FIELDS", "2", "a", "c"), "[:1, :0]")
		is(t, c.Do("HEXPIRE", "h", "250", "GT", "FIELDS", "3", "a", "b", "c"), "[:0, :1, :0]")
		is(t, c.Do("HEXPIRE", "h", "100", "LT", "FIELDS", "3", "a", "b", "c"), "[:1, :1, :1]")
		ttls(t, c.Do("HTTL", "h", "FIELDS", "3", "a", "b", "c"), 100, 100, 100)
		is(t, c.Do("HPEXPIREAT", "h", strconv.FormatInt(time.Now().UnixMilli()+50000, 10), "FIELDS", "1", "c"), "[:1]")
		within(t, c.Do("HTTL", "h", "FIELDS", "1", "c").Elems[0], 49, 50)

		is(t, c.Do("HPERSIST", "h", "FIELDS", "3", "a", "nosuch", "a"), "[:1, :-2, :-1]")
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "a"), "[:-1]")

		// HSET drops a field's TTL; HINCRBY and HINCRBYFLOAT keep it.
		is(t, c.Do("HSET", "h", "b", "x"), ":0")
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "b"), "[:-1]")
		is(t, c.Do("HINCRBY", "h", "c", "5"), ":8")
		within(t, c.Do("HTTL", "h", "FIELDS", "1", "c").Elems[0], 49, 50)
		is(t, c.Do("HGETALL", "h"), `["a", "1", "b", "x", "c", "8"]`) // insertion order kept

		// A missing key is an empty hash.
		is(t, c.Do("HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b"), "[:-2, :-2]")
		is(t, c.Do("HTTL", "nokey", "FIELDS", "1", "a"), "[:-2]")
		is(t, c.Do("HPERSIST", "nokey", "FIELDS", "1", "a"), "[:-2]")
		is(t, c.Do("EXISTS", "nokey"), ":0")

		// A time in the past deletes the field, and the hash with its last.
		is(t, c.Do("HSET", "p", "a", "1", "b", "2"), ":2")
		is(t, c.Do("HEXPIRE", "p", "0", "FIELDS", "1", "a"), "[:2]")
		is(t, c.Do("HPEXPIREAT", "p", "1", "FIELDS", "2", "b", "a"), "[:2, :-2]")
		is(t, c.Do("EXISTS", "p"), ":0")
	})

	t.Run("Errors", func(t *testing.T) {
		c.Do("FLUSHALL")
		c.Do("HSET", "h", "a", "1")
		c.Do("SET", "s", "v")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"HEXPIRE", "s", "10", "FIELDS", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value"},
			{[]string{"HTTL", "s", "FIELDS", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value"},
			{[]string{"HEXPIRE", "h", "x", "FIELDS", "1", "a"}, "-ERR value is not an integer or out of range"},
			{[]string{"HEXPIRE", "h", "-1", "FIELDS", "1", "a"}, "-ERR invalid expire time, must be >= 0"},
			{[]string{"HEXPIRE", "h", "70368744178", "FIELDS", "1", "a"}, "-ERR invalid expire time in 'hexpire' command"},
			{[]string{"HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a"}, "-ERR invalid expire time in 'hpexpire' command"},
			{[]string{"HEXPIRE", "h", "10", "FIELDS", "0", "a"}, "-ERR Parameter `numFields` should be greater than 0"},
			{[]string{"HEXPIRE", "h", "10", "FIELDS", "x", "a"}, "-ERR Parameter `numFields` should be greater than 0"},
			{[]string{"HEXPIRE", "h", "10", "FIELDS", "2", "a"}, "-ERR The `numfields` parameter must match the number of arguments"},
			{[]string{"HEXPIRE", "h", "10", "NX", "1", "a"}, "-ERR Mandatory argument FIELDS is missing or not at the right position"},
			{[]string{"HEXPIRE", "h", "10", "XY", "FIELDS", "1", "a"}, "-ERR Mandatory argument FIELDS is missing or not at the right position"},
			{[]string{"HTTL", "h", "FIELDS", "0", "a"}, "-ERR Number of fields must be a positive integer"},
			{[]string{"HPERSIST", "h", "FIELD", "1", "a"}, "-ERR Mandatory argument FIELDS is missing or not at the right position"},
			{[]string{"HPERSIST", "h", "FIELDS", "3", "a"}, "-ERR The `numfields` parameter must match the number of arguments"},
			{[]string{"HEXPIRE", "h", "10", "FIELDS", "1"}, "-ERR wrong number of arguments for 'hexpire' command"},
			{[]string{"HTTL", "h", "FIELDS", "1"}, "-ERR wrong number of arguments for 'httl' command"},
		} {
			is(t, c.Do(tc.args...), tc.want)
		}
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "a"), "[:-1]") // nothing changed
	})

	t.Run("Expiry", func(t *testing.T) {
		c.Do("FLUSHALL")
		sub := testutil.Dial(t, b.Addr)
		sub.Send(testutil.Command("PSUBSCRIBE", "__keyevent@0__:*"))
		sub.Read()
		c.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
		is(t, c.Do("HPEXPIRE", "h", "100", "FIELDS", "2", "a", "b"), "[:1, :1]")
		time.Sleep(150 * time.Millisecond)
		// Expired fields are gone for every read, removed or not yet.
		is(t, c.Do("HLEN", "h"), ":1")
		is(t, c.Do("HGET", "h", "a"), "(nil)")
		is(t, c.Do("HMGET", "h", "a", "c"), `[(nil), "3"]`)
		is(t, c.Do("HEXISTS", "h", "b"), ":0")
		is(t, c.Do("HGETALL", "h"), `["c", "3"]`)
		is(t, c.Do("HRANDFIELD", "h", "-5"), `["c", "c", "c", "c", "c"]`)
		is(t, c.Do("HSCAN", "h", "0"), `["0", ["c", "3"]]`)
		is(t, c.Do("HTTL", "h", "FIELDS", "2", "a", "c"), "[:-2, :-1]")
		// The last field expires: active expiry removes the hash.
		is(t, c.Do("HPEXPIRE", "h", "100", "FIELDS", "1", "c"), "[:1]")
		waitFor(t, c, ":0", "DBSIZE")
		is(t, c.Do("HPERSIST", "h", "FIELDS", "1", "c"), "[:-2]")
		c.Do("HSET", "g", "a", "1")
		is(t, c.Do("HPEXPIRE", "g", "10000", "FIELDS", "1", "a"), "[:1]")
		is(t, c.Do("HPERSIST", "g", "FIELDS", "1", "a"), "[:1]")
		c.Do("HSET", "__end", "a", "1") // its "hset" event ends the list
		var got []string
		for range 20 {
			r := sub.Read()
			if r.Elems[3].Str == "__end" {
				break
			}
			got = append(got, r.Elems[2].Str[len("__keyevent@0__:"):]+" "+r.Elems[3].Str)
		}
		want := []string{"hset h", "hexpire h", "hexpired h", "hexpire h", "hexpired h", "del h", "hset g", "hexpire g", "hpersist g"}
		if !slices.Equal(got, want) {
			t.Errorf("events: got %q, want %q", got, want)
		}
	})

	t.Run("GetDelGetExSetEx", func(t *testing.T) {
		c.Do("FLUSHALL")
		sub := testutil.Dial(t, b.Addr)
		sub.Send(testutil.Command("PSUBSCRIBE", "__keyevent@0__:*"))
		sub.Read()
		is(t, c.Do("HSET", "h", "a", "1", "b", "2", "c", "3"), ":3")
		is(t, c.Do("HGETDEL", "h", "FIELDS", "2", "a", "x"), `["1", (nil)]`)
		is(t, c.Do("HGETEX", "h", "EX", "100", "FIELDS", "2", "b", "x"), `["2", (nil)]`)
		ttls(t, c.Do("HTTL", "h", "FIELDS", "2", "b", "c"), 100, -1)
		is(t, c.Do("HGETEX", "h", "PERSIST", "FIELDS", "1", "b"), `["2"]`)
		is(t, c.Do("HGETEX", "h", "FIELDS", "1", "b"), `["2"]`)
		is(t, c.Do("HGETEX", "h", "PERSIST", "FIELDS", "1", "c"), `["3"]`) // no TTL: still "hpersist", as Redis
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "b"), "[:-1]")
		is(t, c.Do("HGETEX", "h", "PXAT", "1", "FIELDS", "1", "b"), `["2"]`) // past: deleted
		is(t, c.Do("HGETALL", "h"), `["c", "3"]`)

		is(t, c.Do("HSETEX", "h", "FNX", "EX", "50", "FIELDS", "2", "c", "9", "d", "4"), ":0")
		is(t, c.Do("HSETEX", "h", "FNX", "EX", "50", "FIELDS", "1", "d", "4"), ":1")
		ttls(t, c.Do("HTTL", "h", "FIELDS", "2", "c", "d"), -1, 50)
		is(t, c.Do("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "1", "d", "5"), ":1")
		ttls(t, c.Do("HTTL", "h", "FIELDS", "1", "d"), 50)
		is(t, c.Do("HSETEX", "h", "FXX", "FIELDS", "2", "d", "6", "e", "1"), ":0")
		is(t, c.Do("HSETEX", "h", "FXX", "FIELDS", "1", "d", "6"), ":1")
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "d"), "[:-1]")
		is(t, c.Do("HGETDEL", "h", "FIELDS", "2", "c", "d"), `["3", "6"]`)
		is(t, c.Do("EXISTS", "h"), ":0")

		is(t, c.Do("HGETDEL", "nokey", "FIELDS", "1", "a"), "[(nil)]")
		is(t, c.Do("HGETEX", "nokey", "EX", "10", "FIELDS", "2", "a", "b"), "[(nil), (nil)]")
		is(t, c.Do("HSETEX", "nokey", "FXX", "FIELDS", "1", "a", "1"), ":0")
		is(t, c.Do("HSETEX", "n", "PXAT", "1", "FIELDS", "1", "a", "1"), ":1")
		is(t, c.Do("EXISTS", "n", "nokey"), ":0")
		is(t, c.Do("HSETEX", "n", "PX", "100", "FIELDS", "1", "a", "1"), ":1")
		waitFor(t, c, ":0", "EXISTS", "n")

		c.Do("SET", "s", "v")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"HGETDEL", "s", "FIELDS", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value"},
			{[]string{"HGETDEL", "h", "FIELD", "1", "a"}, "-ERR Mandatory argument FIELDS is missing or not at the right position"},
			{[]string{"HGETDEL", "h", "FIELDS", "0", "a"}, "-ERR Number of fields must be a positive integer"},
			{[]string{"HGETDEL", "h", "FIELDS", "2", "a"}, "-ERR The `numfields` parameter must match the number of arguments"},
			{[]string{"HGETEX", "h", "EX", "-1", "FIELDS", "1", "a"}, "-ERR invalid expire time, must be >= 0"},
			{[]string{"HGETEX", "h", "EXAT", "70368744178", "FIELDS", "1", "a"}, "-ERR invalid expire time in 'hgetex' command"},
			{[]string{"HGETEX", "h", "EX", "10", "FIELDS", "2", "a"}, "-ERR The `numfields` parameter must match the number of arguments"},
			{[]string{"HGETEX", "h", "KEEPTTL", "FIELDS", "1", "a"}, "-ERR Mandatory argument FIELDS is missing or not at the right position"},
			{[]string{"HSETEX", "h", "EX", "10", "KEEPTTL", "FIELDS", "1", "a", "1"}, "-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"},
			{[]string{"HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"}, "-ERR Only one of FXX or FNX arguments can be specified"},
			{[]string{"HSETEX", "h", "FIELDS", "0", "a", "1"}, "-ERR invalid number of fields"},
			{[]string{"HSETEX", "h", "FIELDS", "2", "a", "1"}, "-ERR wrong number of arguments for 'hsetex' command"},
			{[]string{"HSETEX", "h", "FOO", "FIELDS", "1", "a", "1"}, "-ERR unknown argument: FOO"},
			{[]string{"HSETEX", "h", "FXX", "FIELDS", "1", "a", "1", "PX"}, "-ERR wrong number of arguments for 'hsetex' command"},
			{[]string{"HSETEX", "h", "FXX", "FNX", "PX", "1"}, "-ERR Only one of FXX or FNX arguments can be specified"},
			{[]string{"HSETEX", "h", "FXX", "PX", "1", "EX"}, "-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"},
			{[]string{"HSETEX", "s", "FIELDS", "1", "a", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value"},
		} {
			is(t, c.Do(tc.args...), tc.want)
		}

		c.Do("HSET", "__end", "a", "1")
		var got []string
		for range 40 {
			r := sub.Read()
			if r.Elems[3].Str == "__end" {
				break
			}
			got = append(got, r.Elems[2].Str[len("__keyevent@0__:"):]+" "+r.Elems[3].Str)
		}
		want := []string{"hset h", "hdel h", "hexpire h", "hpersist h", "hpersist h", "hdel h",
			"hset h", "hexpire h", "hset h", "hset h", "hdel h", "del h",
			"hset n", "hdel n", "del n", "hset n", "hexpire n", "hexpired n", "del n"}
		if !slices.Equal(got, want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	})

	t.Run("BigHash", func(t *testing.T) {
		c.Do("FLUSHALL")
		args := []string{"HSET", "big"}
		for i := range 600 {
			args = append(args, "f"+strconv.Itoa(i), "v")
		}
		c.Do(args...)
		is(t, c.Do("OBJECT", "ENCODING", "big"), `"hashtable"`)
		is(t, c.Do("HPEXPIRE", "big", "100", "FIELDS", "2", "f1", "f2"), "[:1, :1]")
		is(t, c.Do("HEXPIRE", "big", "100", "FIELDS", "1", "f3"), "[:1]")
		time.Sleep(150 * time.Millisecond)
		is(t, c.Do("HLEN", "big"), ":598")
		is(t, c.Do("HGET", "big", "f1"), "(nil)")
		is(t, c.Do("HGET", "big", "f3"), `"v"`)
		if r := c.Do("HSCAN", "big", "0", "COUNT", "1000"); len(r.Elems) != 2 || len(r.Elems[1].Elems) != 2*598 {
			t.Errorf("HSCAN big 0 COUNT 1000: %d elements, want %d", len(r.Elems[1].Elems), 2*598)
		}
		waitFor(t, c, ":598", "HLEN", "big")

		// A small hash with field TTLs keeps them when it grows past
		// the listpack's limits.
		is(t, c.Do("HSET", "grow", "a", "1", "b", "2"), ":2")
		is(t, c.Do("HEXPIRE", "grow", "100", "FIELDS", "1", "a"), "[:1]")
		args[1] = "grow"
		c.Do(args...)
		is(t, c.Do("OBJECT", "ENCODING", "grow"), `"hashtable"`)
		ttls(t, c.Do("HTTL", "grow", "FIELDS", "2", "a", "b"), 100, -1)
		is(t, c.Do("HLEN", "grow"), ":602")
	})

	t.Run("RenameAndRestart", func(t *testing.T) {
		c.Do("FLUSHALL")
		c.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
		is(t, c.Do("HEXPIRE", "h", "1000", "FIELDS", "1", "a"), "[:1]")
		is(t, c.Do("HPEXPIRE", "h", "200", "FIELDS", "1", "b"), "[:1]")
		is(t, c.Do("RENAME", "h", "r"), "+OK")
		ttls(t, c.Do("HTTL", "r", "FIELDS", "2", "a", "c"), 1000, -1)
		is(t, c.Do("COPY", "r", "r2"), ":1")
		// Active expiry finds the fields under the new names.
		waitFor(t, c, "[:2, :2]", "EVAL", "return {redis.call('HLEN', 'r'), redis.call('HLEN', 'r2')}", "0")

		c.Do("HSET", "h", "x", "1", "y", "2")
		is(t, c.Do("HPEXPIRE", "h", "1500", "FIELDS", "1", "y"), "[:1]")
		if err := b.Stop(); err != nil {
			t.Fatal(err)
		}
		b.Restart(t)
		c = testutil.Dial(t, b.Addr)
		within(t, c.Do("HTTL", "r", "FIELDS", "1", "a").Elems[0], 990, 1000)
		is(t, c.Do("HTTL", "h", "FIELDS", "1", "x"), "[:-1]")
		waitFor(t, c, ":1", "HLEN", "h") // y expires after the restart
		is(t, c.Do("HGETALL", "h"), `["x", "1"]`)
	})
}
