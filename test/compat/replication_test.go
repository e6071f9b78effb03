package compat

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestWait: WAIT's arguments and errors as Redis checks them; on a lone
// node, which has no replicas, its answers and its wait as Redis's without
// replicas. (What it counts in a cluster is test/cluster's TestWait.)
func TestWait(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		WAIT x 0
		WAIT 0 x
		WAIT 0 -1
		WAIT 99999999999999999999 0
		WAIT 0 1.5
		WAIT 0
		WAIT 0 0 0
		EVAL "return redis.call('wait','0','0')" 0
	`)
	want, got := d.DoBoth("COMMAND", "INFO", "wait")
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
	if testutil.ClusterMode() > 0 {
		return // basalt's followers are replicas: WAIT counts them
	}
	d.Run(`
		WAIT 0 0
		WAIT -1 0
		WAIT 0 9223372036854775807
		SET k v
		WAIT 0 0
		MULTI
		WAIT 1 0
		EXEC
	`)
	// Redis without replicas waits the whole timeout for one.
	for _, addr := range []string{p.redis.Addr, p.basalt.Addr} {
		c := testutil.Dial(t, addr)
		start := time.Now()
		if r := c.Do("WAIT", "1", "200"); r.String() != ":0" {
			t.Errorf("%s WAIT 1 200: %v", addr, r)
		}
		if took := time.Since(start); took < 190*time.Millisecond || took > 2*time.Second {
			t.Errorf("%s WAIT 1 200 took %v", addr, took)
		}
	}
}

// TestRole: ROLE of a lone node is Redis's of a master without replicas.
// (A cluster's roles are test/cluster's TestWait.)
func TestRole(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	want, got := d.DoBoth("COMMAND", "INFO", "role")
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
	d.Run(`
		ROLE x
		EVAL "return redis.call('role')" 0
	`)
	if testutil.ClusterMode() > 0 {
		return
	}
	d.Run(`
		ROLE
		SET k v
		ROLE
	`)
	d.Proto(3)
	d.Do("ROLE")
}

// TestWaitaof: WAITAOF (Redis 7.2, which the oracle lacks, so basalt's
// replies are checked as they must be): its argument errors in Redis's
// words and order, its table entry (WAIT's flags, categories and tips),
// refused in scripts, and what it counts. basalt's log is its append-only
// file, always on, so numlocal 1 is allowed; on a lone node, which has no
// replicas, WAITAOF 1 0 answers [1 0] at once under appendfsync always,
// after the next sync under everysec, and never under no (its timeout),
// as Redis's AOF; asking for a replica waits the whole timeout. Through a
// follower the leader answers, counting the other members.
func TestWaitaof(t *testing.T) {
	p := newPair(t)
	c := testutil.Dial(t, p.basalt.Addr)
	c.Timeout = 20 * time.Second
	for _, tc := range [][2]string{
		{"WAITAOF 0 0", "-ERR wrong number of arguments for 'waitaof' command"},
		{"WAITAOF 0 0 0 0", "-ERR wrong number of arguments for 'waitaof' command"},
		{"WAITAOF x 0 0", "-ERR value is not an integer or out of range"},
		{"WAITAOF 2 0 0", "-ERR value is out of range, value must between 0 and 1"},
		{"WAITAOF -1 x x", "-ERR value is out of range, value must between 0 and 1"},
		{"WAITAOF 1 x 0", "-ERR value is not an integer or out of range"},
		{"WAITAOF 1 -1 x", "-ERR value is out of range, must be positive"},
		{"WAITAOF 1 99999999999999999999 0", "-ERR value is not an integer or out of range"},
		{"WAITAOF 1 0 x", "-ERR timeout is not an integer or out of range"},
		{"WAITAOF 1 0 1.5", "-ERR timeout is not an integer or out of range"},
		{"WAITAOF 1 0 -1", "-ERR timeout is negative"},
		{"WAITAOF 1 0 9223372036854775807", "-ERR timeout is out of range"},
		{`EVAL "return redis.call('waitaof','0','0','0')" 0`, "-ERR This Redis command is not allowed from script script: "},
	} {
		if r := c.Do(splitArgs(t, tc[0])...); r.String() != tc[1] && !(strings.HasSuffix(tc[1], ": ") && strings.HasPrefix(r.String(), tc[1])) {
			t.Errorf("%s: got %v, want %s", tc[0], r, tc[1])
		}
	}
	// Its COMMAND INFO is Redis 7.2's, which is WAIT's but for name and
	// arity.
	want := testutil.Dial(t, p.redis.Addr).Do("COMMAND", "INFO", "wait").Elems[0]
	got := c.Do("COMMAND", "INFO", "waitaof").Elems[0]
	if len(got.Elems) != 10 || got.Elems[0].Str != "waitaof" || got.Elems[1].Int != 4 {
		t.Fatalf("COMMAND INFO waitaof: %v", got)
	}
	got.Elems[0], got.Elems[1] = want.Elems[0], want.Elems[1]
	sameInfoEntry(t, want, got)
	if r := c.Do("COMMAND", "DOCS", "waitaof"); !strings.Contains(r.String(), `"since", "7.2.0", "group", "generic"`) {
		t.Errorf("COMMAND DOCS waitaof: %v", r)
	}

	if n := testutil.ClusterMode(); n > 0 {
		// Through a follower: the leader holds the client's writes, synced
		// under appendfsync always, and counts the other members.
		expect := func(cmd, want string) {
			t.Helper()
			if r := c.Do(splitArgs(t, cmd)...); r.String() != want {
				t.Errorf("%s: got %v, want %s", cmd, r, want)
			}
		}
		expect("SET k v", "+OK")
		all := "[:1, :" + strconv.Itoa(n-1) + "]"
		expect("WAITAOF 1 "+strconv.Itoa(n-1)+" 10000", all)
		expect("WAITAOF 0 0 0", "[:1, :"+strconv.Itoa(n-1)+"]")
		expect("MULTI", "+OK")
		expect("SET k w", "+QUEUED")
		expect("WAITAOF 1 "+strconv.Itoa(n)+" 0", "+QUEUED")
		if r := c.Do("EXEC"); len(r.Elems) != 2 || r.Elems[1].String() != "[:1, :"+strconv.Itoa(n-1)+"]" && r.Elems[1].String() != "[:1, :"+strconv.Itoa(n-2)+"]" {
			t.Errorf("EXEC of SET and WAITAOF (never waits): %v", r)
		}
		return
	}
	timed := func(cmd, want string, least, most time.Duration) {
		t.Helper()
		start := time.Now()
		r := c.Do(splitArgs(t, cmd)...)
		took := time.Since(start)
		if r.String() != want || took < least || took > most {
			t.Errorf("%s: got %v after %v, want %s after %v to %v", cmd, r, took, want, least, most)
		}
	}
	// A client that wrote nothing has nothing to wait for.
	timed("WAITAOF 1 0 0", "[:1, :0]", 0, time.Second)
	timed("SET k v", "+OK", 0, 5*time.Second)
	timed("WAITAOF 1 0 0", "[:1, :0]", 0, time.Second)
	timed("WAITAOF 0 0 0", "[:1, :0]", 0, time.Second)
	timed("WAITAOF 1 1 200", "[:1, :0]", 190*time.Millisecond, 5*time.Second)
	timed("MULTI", "+OK", 0, time.Second)
	timed("SET k w", "+QUEUED", 0, time.Second)
	timed("WAITAOF 1 1 0", "+QUEUED", 0, time.Second)
	timed("EXEC", "[+OK, [:1, :0]]", 0, 5*time.Second) // inside EXEC it never waits

	t.Cleanup(func() { c.Do("CONFIG", "SET", "appendfsync", "always") })
	timed("CONFIG SET appendfsync no", "+OK", 0, time.Second)
	timed("SET k v", "+OK", 0, 5*time.Second)
	timed("WAITAOF 1 0 100", "[:0, :0]", 95*time.Millisecond, 5*time.Second)
	timed("WAITAOF 0 0 0", "[:0, :0]", 0, time.Second)
	timed("CONFIG SET appendfsync everysec", "+OK", 0, time.Second)
	timed("WAITAOF 1 0 0", "[:1, :0]", 0, 3*time.Second) // the next sync, within a second
	timed("SET k v", "+OK", 0, 5*time.Second)
	timed("WAITAOF 1 0 5000", "[:1, :0]", 0, 3*time.Second)
	timed("CONFIG SET appendfsync always", "+OK", 0, time.Second)
	timed("SET k v", "+OK", 0, 5*time.Second)
	timed("WAITAOF 1 0 0", "[:1, :0]", 0, time.Second)

	// A WAITAOF waiting for a replica (a lone node has none) blocks its
	// client only; CLIENT UNBLOCK ends it as its timeout would, or with
	// Redis's error, and a client that hangs up ends it too.
	for _, mode := range []string{"TIMEOUT", "ERROR"} {
		b := testutil.Dial(t, p.basalt.Addr)
		id := b.Do("CLIENT", "ID").Int
		b.Do("SET", "k", "v")
		b.Send(testutil.Command("WAITAOF", "1", "1", "0"))
		deadline := time.Now().Add(5 * time.Second)
		r := c.Do("CLIENT", "UNBLOCK", strconv.FormatInt(id, 10), mode)
		for r.Int == 0 && time.Now().Before(deadline) {
			if r := c.Do("PING"); r.String() != "+PONG" {
				t.Errorf("PING while another client waits in WAITAOF: %v", r)
			}
			time.Sleep(5 * time.Millisecond)
			r = c.Do("CLIENT", "UNBLOCK", strconv.FormatInt(id, 10), mode)
		}
		want := map[string]string{"TIMEOUT": "[:1, :0]", "ERROR": "-UNBLOCKED client unblocked via CLIENT UNBLOCK"}[mode]
		if got := b.Read(); r.String() != ":1" || got.String() != want {
			t.Errorf("CLIENT UNBLOCK %s of a WAITAOF: %v, then %v; want :1, then %s", mode, r, got, want)
		}
		b.Close()
	}
	b := testutil.Dial(t, p.basalt.Addr)
	b.Send(testutil.Command("WAITAOF", "0", "1", "0"))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(c.Do("INFO", "clients").Str, "blocked_clients:1") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if info := c.Do("INFO", "clients").Str; !strings.Contains(info, "blocked_clients:1") {
		t.Errorf("a client waiting in WAITAOF does not count as blocked (Redis counts it):\n%s", info)
	}
	if r := c.Do("CLIENT", "LIST"); !strings.Contains(r.Str, " flags=b ") || !strings.Contains(r.Str, " cmd=waitaof ") {
		t.Errorf("CLIENT LIST does not show the client blocked in WAITAOF:\n%s", r.Str)
	}
	b.Close()
	for !strings.Contains(c.Do("INFO", "clients").Str, "blocked_clients:0") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if info := c.Do("INFO", "clients").Str; !strings.Contains(info, "blocked_clients:0") {
		t.Errorf("a client that hung up in WAITAOF still counts as blocked:\n%s", info)
	}
}

// splitArgs splits a command line as redis-cli does.
func splitArgs(t *testing.T, line string) []string {
	t.Helper()
	args, err := testutil.SplitArgs(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return args
}
