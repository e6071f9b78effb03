package compat

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/resp"
	"basalt/internal/testutil"
)

// MIGRATE with basalt as the source: redis-server (the oracle) and basalt
// send the same MIGRATEs to a third redis-server, Redis into database 1
// and basalt into database 2, and the replies, the sources' keys and what
// landed in the target are compared.
type migrateDiff struct {
	t          *testing.T
	d          *testutil.Diff
	tgt        *testutil.Conn
	host, port string
}

// newMigrateDiff starts the sources and the target, which asks for
// password if it is not empty.
func newMigrateDiff(t *testing.T, password string) *migrateDiff {
	d := testutil.NewPairDiff(t)
	target := testutil.StartRedis(t)
	host, port, _ := strings.Cut(target.Addr, ":")
	m := &migrateDiff{t: t, d: d, tgt: testutil.Dial(t, target.Addr), host: host, port: port}
	if password != "" { // set now: the start waits for a PING to answer
		m.tgt.Do("CONFIG", "SET", "requirepass", password)
		m.tgt.Do("AUTH", password)
	}
	return m
}

// migrate sends MIGRATE host port key db timeout opts... to both sources,
// each with its destination database, and compares the replies.
func (m *migrateDiff) migrate(key string, opts ...string) string {
	m.t.Helper()
	return m.migrateTo(m.port, key, opts...)
}

func (m *migrateDiff) migrateTo(port, key string, opts ...string) string {
	m.t.Helper()
	args := func(db string) []string {
		return append([]string{"MIGRATE", m.host, port, key, db, "2000"}, opts...)
	}
	want, got := m.d.Want.Do(args("1")...).String(), m.d.Got.Do(args("2")...).String()
	if want != got {
		m.t.Errorf("MIGRATE %q %q: redis %s, basalt %s", key, opts, want, got)
	}
	return got
}

// both runs a command on both sources, expecting the same reply.
func (m *migrateDiff) both(args ...string) {
	m.t.Helper()
	m.d.Do(args...)
}

// sameTarget compares what each source left in the target under keys.
func (m *migrateDiff) sameTarget(keys ...string) {
	m.t.Helper()
	for _, k := range keys {
		want, wantTTL := m.targetKey("1", k)
		got, gotTTL := m.targetKey("2", k)
		if want != got {
			m.t.Errorf("target key %q: from redis %s, from basalt %s", k, want, got)
		}
		if (wantTTL < 0) != (gotTTL < 0) || wantTTL-gotTTL > 1500 || gotTTL-wantTTL > 1500 {
			m.t.Errorf("target key %q: PTTL from redis %d, from basalt %d", k, wantTTL, gotTTL)
		}
	}
	m.tgt.Do("SELECT", "0")
}

// targetKey reads key's value in db of the target in a form that does not
// depend on the encoding the payload chose.
func (m *migrateDiff) targetKey(db, key string) (string, int64) {
	m.tgt.Do("SELECT", db)
	typ := m.tgt.Do("TYPE", key).String()
	var v []string
	switch typ {
	case "+string":
		v = []string{m.tgt.Do("GET", key).String()}
	case "+list":
		v = []string{m.tgt.Do("LRANGE", key, "0", "-1").String()}
	case "+hash", "+set":
		r := m.tgt.Do("SORT", key, "ALPHA")
		if typ == "+hash" {
			r = m.tgt.Do("HGETALL", key)
		}
		for _, e := range r.Elems {
			v = append(v, e.String())
		}
		if typ == "+hash" { // pairs, in any order
			var pairs []string
			for i := 0; i+1 < len(v); i += 2 {
				pairs = append(pairs, v[i]+"="+v[i+1])
			}
			v = pairs
		}
		slices.Sort(v)
	case "+zset":
		v = []string{m.tgt.Do("ZRANGE", key, "0", "-1", "WITHSCORES").String()}
	case "+stream":
		v = []string{m.tgt.Do("XRANGE", key, "-", "+").String(), m.tgt.Do("XINFO", "GROUPS", key).String()}
	}
	return typ + " " + strings.Join(v, ","), m.tgt.Do("PTTL", key).Int
}

func TestMigrateSourceArgs(t *testing.T) {
	m := newMigrateDiff(t, "")
	m.both("SET", "k", "v")
	for _, opts := range [][]string{
		{"foo"}, {"AUTH"}, {"AUTH2", "user"}, {"COPY", "KEYS", "k"}, {"copy", "replace", "bogus"},
	} {
		m.migrate("k", opts...)
	}
	m.migrate("", "KEYS") // no keys: NOKEY
	m.migrate("", "COPY", "KEYS", "nokey")
	m.migrate("nokey")
	m.d.Do("MIGRATE", m.host, m.port, "k", "0")                   // arity
	m.d.Do("MIGRATE", m.host, m.port, "k", "0", "x")              // timeout
	m.d.Do("MIGRATE", m.host, m.port, "k", "x", "100")            // db
	m.d.Do("MIGRATE", m.host, m.port, "k", "x", "y", "bad")       // options come first
	m.d.Do("MIGRATE", m.host, m.port, "k", "x", "y", "AUTH", "p") // then timeout, then db
	m.both("EXISTS", "k")
	// A database the target does not have: SELECT's error, relayed.
	m.d.Do("MIGRATE", m.host, m.port, "k", "99", "1000")
	m.both("EXISTS", "k")
}

func TestMigrateSourceKeys(t *testing.T) {
	m := newMigrateDiff(t, "")
	m.both("SET", "one", "1")
	m.migrate("one")
	m.both("EXISTS", "one")
	m.sameTarget("one")

	// KEYS, some missing: those found move.
	m.both("MSET", "a", "1", "b", "2")
	m.migrate("", "KEYS", "a", "missing", "b")
	m.both("EXISTS", "a", "b")
	m.sameTarget("a", "b")

	// COPY keeps the source's key; then BUSYKEY, then REPLACE.
	m.both("SET", "c", "first")
	m.migrate("c", "COPY")
	m.both("GET", "c")
	m.both("SET", "c", "second")
	m.migrate("c", "COPY")
	m.migrate("c")
	m.both("GET", "c")
	m.migrate("c", "REPLACE")
	m.both("EXISTS", "c")
	m.sameTarget("c")

	// A target's error on one key: the keys it accepted, before and
	// after, leave the source anyway.
	m.both("MSET", "x1", "1", "busy", "2", "x3", "3")
	m.tgt.Do("SELECT", "1")
	m.tgt.Do("SET", "busy", "target")
	m.tgt.Do("SELECT", "2")
	m.tgt.Do("SET", "busy", "target")
	m.tgt.Do("SELECT", "0")
	m.migrate("", "KEYS", "x1", "busy", "x3")
	m.both("EXISTS", "x1")
	m.both("EXISTS", "busy")
	m.both("EXISTS", "x3")
	m.sameTarget("x1", "busy", "x3")

	// TTLs: the time left travels; an expired key is not there.
	m.both("SET", "ttl", "v", "PX", "100000")
	m.both("SET", "gone", "v", "PX", "1")
	time.Sleep(20 * time.Millisecond)
	m.migrate("gone")
	m.migrate("", "KEYS", "ttl", "gone")
	m.sameTarget("ttl", "gone")
}

func TestMigrateSourceTypes(t *testing.T) {
	m := newMigrateDiff(t, "")
	var keys []string
	for _, c := range [][]string{
		{"SET", "str", "hello"},
		{"SET", "int", "12345"},
		{"RPUSH", "list", "a", "b", "c", "1", "2"},
		{"HSET", "hash", "f1", "v1", "f2", "v2"},
		{"SADD", "set", "m1", "m2", "m3"},
		{"SADD", "intset", "1", "2", "3"},
		{"ZADD", "zset", "1", "a", "2.5", "b", "-3", "c"},
		{"XADD", "stream", "1-1", "f", "v"},
		{"XADD", "stream", "2-1", "g", "w"},
		{"XGROUP", "CREATE", "stream", "grp", "1-1"},
	} {
		m.both(c...)
		if !slices.Contains(keys, c[1]) && c[0] != "XGROUP" {
			keys = append(keys, c[1])
		}
	}
	big := []string{"RPUSH", "biglist"}
	for i := range 300 {
		big = append(big, strings.Repeat("x", i%40)+strconv.Itoa(i))
	}
	m.both(big...)
	keys = append(keys, "biglist")
	m.both("PEXPIRE", "hash", "60000")
	m.migrate("", append([]string{"REPLACE", "KEYS"}, keys...)...)
	m.both("DBSIZE")
	m.sameTarget(keys...)
}

func TestMigrateSourceFailures(t *testing.T) {
	m := newMigrateDiff(t, "secret")
	m.both("SET", "k", "v")
	m.migrate("k")                  // NOAUTH relayed
	m.migrate("k", "AUTH", "wrong") // WRONGPASS relayed
	m.migrate("k", "AUTH2", "default", "wrong")
	m.both("EXISTS", "k")
	m.migrate("k", "COPY", "AUTH", "secret")
	m.migrate("k", "REPLACE", "AUTH2", "default", "secret")
	m.both("EXISTS", "k")
	m.sameTarget("k")

	// Nothing listens: Redis's error for a refused connection.
	m.both("SET", "k", "v")
	closed := strconv.Itoa(testutil.FreePort(t))
	m.migrateTo(closed, "k")
	m.migrateTo("abc", "k") // the port is read as atoi does: 0
	m.both("EXISTS", "k")
}

// A key that changes between its copy to the target and its deletion is
// kept, and MIGRATE says so. A fake target changes the key in basalt
// before it answers the RESTORE, so the timing is certain.
func TestMigrateKeepsChangedKey(t *testing.T) {
	_, basalt := testutil.StartPair(t)
	src := testutil.Dial(t, basalt.Addr)
	changer := testutil.Dial(t, basalt.Addr)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	change := make(chan string, 1) // the key to change before answering, "" for none
	go fakeTarget(ln, change, changer)
	host, port, _ := strings.Cut(ln.Addr().String(), ":")

	src.Do("MSET", "a", "1", "b", "2")
	change <- ""
	expectReply(t, src.Do("MIGRATE", host, port, "", "0", "2000", "KEYS", "a"), "+OK")
	expectReply(t, src.Do("EXISTS", "a"), ":0")
	change <- "b"
	expectReply(t, src.Do("MIGRATE", host, port, "", "0", "2000", "KEYS", "b"),
		"-ERR Target instance accepted the keys but they were not deleted here: a key changed during MIGRATE")
	expectReply(t, src.Do("GET", "b"), `"changed"`)
}

// fakeTarget answers SELECT and RESTORE with +OK, one connection per value
// received on change, after setting the key named there in basalt.
func fakeTarget(ln net.Listener, change chan string, changer *testutil.Conn) {
	for key := range change {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		rd := resp.NewReader(nc)
		for {
			argv, err := rd.ReadCommand()
			if err != nil {
				break
			}
			if strings.EqualFold(string(argv[0]), "restore") {
				if key != "" {
					changer.Do("SET", key, "changed")
				}
				nc.Write([]byte("+OK\r\n"))
				break
			}
			nc.Write([]byte("+OK\r\n"))
		}
		nc.Close()
	}
}
