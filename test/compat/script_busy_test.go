package compat

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Long scripts: lua-time-limit, BUSY, SCRIPT KILL, UNKILLABLE, NOTBUSY and
// SHUTDOWN NOSAVE while busy, against Redis 7.0 with a 100 ms limit.

const (
	busyReply = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	// A script that runs for many seconds on both servers: the tests kill it.
	runawayScript = `local i = 0 while i < 1e9 do i = i + 1 end return i`
	// A script that writes and then runs for about a second: ARGV[1] is
	// its number of rounds, tuned per server (gopher-lua is slower).
	dirtyScript = `redis.call('set', 'x', 'written') local i = 0 while i < tonumber(ARGV[1]) do i = i + 1 end return i`
)

// dirtyRounds makes dirtyScript run for about a second on each server.
var dirtyRounds = [2]string{"6000000", "2500000"} // redis, basalt

// conns dials one extra connection to each server of the pair.
func (p *pair) conns(t *testing.T) [2]*testutil.Conn {
	return [2]*testutil.Conn{testutil.Dial(t, p.redis.Addr), testutil.Dial(t, p.basalt.Addr)}
}

// waitBusy waits until conn's server answers BUSY: a script ran past the
// limit. Redis reads the PING only then; basalt answers PONG until then.
func waitBusy(t *testing.T, addr string) {
	t.Helper()
	c := testutil.Dial(t, addr)
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if r := c.Do("PING"); r.String() == busyReply {
			return
		} else if r.IsError() {
			t.Fatalf("%s: PING: %v", addr, r)
		}
	}
	t.Fatalf("%s never got busy", addr)
}

func TestScriptBusy(t *testing.T) {
	if testutil.ClusterMode() > 1 {
		t.Skip("a follower runs its local commands while the leader is busy; TestScriptBusyCluster covers forwarding")
	}
	p := newPair(t)
	p.conn(t).Do("CONFIG", "SET", "lua-time-limit", "100")
	addrs := [2]string{p.redis.Addr, p.basalt.Addr}

	t.Run("Config", func(t *testing.T) {
		d := p.conn(t)
		d.Run(`
			CONFIG GET lua-time-limit
			CONFIG GET busy-reply-threshold
			CONFIG GET lua*
			CONFIG SET busy-reply-threshold 200
			CONFIG GET lua-time-limit
			CONFIG SET lua-time-limit -1
			CONFIG SET lua-time-limit abc
			CONFIG SET lua-time-limit 100
			CONFIG GET busy-reply-threshold
			SCRIPT KILL
		`)
	})

	t.Run("Kill", func(t *testing.T) {
		d := p.diff(t)
		d.Do("SET", "x", "1")
		script, writer := p.conns(t), p.conns(t)
		for i := range script {
			script[i].Send(testutil.Command("EVAL", runawayScript, "0"))
		}
		time.Sleep(20 * time.Millisecond)
		for i := range writer { // queued behind the script in basalt
			writer[i].Send(testutil.Command("SET", "y", "1"))
		}
		for _, a := range addrs {
			waitBusy(t, a)
		}
		if w, g := writer[0].Read(), writer[1].Read(); w.String() != busyReply || g.String() != busyReply {
			t.Errorf("a write sent before the limit: redis %v, basalt %v", w, g)
		}
		d.Run(`
			PING
			ECHO hi
			GET x
			SET x 2
			DEL x
			EVAL 'return 1' 0
			SCRIPT EXISTS abc
			SCRIPT LOAD 'return 1'
			SCRIPT FLUSH
			CONFIG GET lua-time-limit
			INFO server
			CLIENT ID
			SELECT 1
			SUBSCRIBE ch
			WATCH x
			UNWATCH
			MULTI
			GET x
			SET x 3
			EXEC
			EXEC
			DISCARD
			MULTI
			DISCARD
			SHUTDOWN
			SHUTDOWN SAVE
			SHUTDOWN NOW
			SCRIPT KILL
		`)
		want, got := script[0].Read(), script[1].Read()
		if err := testutil.Compare([]string{"EVAL", "<runaway>"}, want, got); err != nil {
			t.Error(err)
		}
		if !strings.HasPrefix(got.Str, "ERR Script killed by user with SCRIPT KILL...") {
			t.Errorf("killed script's reply: %v", got)
		}
		d.Run(`
			SCRIPT KILL
			PING
			GET x
			GET y
			SET y 2
			GET y
		`)
		// Every BUSY above, the queued write's too, counts under BUSY.
		if w, g := d.DoBoth("INFO", "errorstats"); w.Str != g.Str {
			t.Errorf("INFO errorstats:\nredis:  %q\nbasalt: %q", w.Str, g.Str)
		}
	})

	t.Run("Unkillable", func(t *testing.T) {
		d := p.diff(t)
		d.Do("SET", "x", "1")
		script := p.conns(t)
		for i := range script {
			script[i].Send(testutil.Command("EVAL", dirtyScript, "0", dirtyRounds[i]))
		}
		for _, a := range addrs {
			waitBusy(t, a)
		}
		d.Run(`
			SCRIPT KILL
			GET x
			SHUTDOWN
		`)
		for i := range script {
			if r := script[i].Read(); r.String() != ":"+dirtyRounds[i] {
				t.Errorf("%s: the unkillable script answered %v", addrs[i], r)
			}
		}
		d.Run(`
			SCRIPT KILL
			GET x
		`)
	})

	t.Run("PcallCannotCatchKill", func(t *testing.T) {
		d := p.diff(t)
		script := p.conns(t)
		body := "local ok, err = pcall(function() " + runawayScript + " end)\nredis.call('set', 'caught', tostring(err))\nreturn 1"
		for i := range script {
			script[i].Send(testutil.Command("EVAL", body, "0"))
		}
		for _, a := range addrs {
			waitBusy(t, a)
		}
		d.Do("SCRIPT", "KILL")
		want, got := script[0].Read(), script[1].Read()
		if err := testutil.Compare([]string{"EVAL", "<pcall>"}, want, got); err != nil {
			t.Error(err)
		}
		d.Do("EXISTS", "caught")
	})

	t.Run("InMulti", func(t *testing.T) {
		d := p.diff(t)
		script := p.conns(t)
		for i := range script {
			for _, cmd := range [][]string{{"MULTI"}, {"SET", "a", "1"}, {"EVAL", runawayScript, "0"}, {"SET", "b", "2"}} {
				if r := script[i].Do(cmd...); r.IsError() {
					t.Fatalf("%s: %v: %v", addrs[i], cmd, r)
				}
			}
			script[i].Send(testutil.Command("EXEC"))
		}
		for _, a := range addrs {
			waitBusy(t, a)
		}
		d.Do("SCRIPT", "KILL")
		want, got := script[0].Read(), script[1].Read()
		if err := testutil.Compare([]string{"EXEC"}, want, got); err != nil {
			t.Error(err)
		}
		d.Run(`
			MGET a b
			SCRIPT KILL
		`)
	})

	t.Run("ReadOnly", func(t *testing.T) {
		// basalt runs EVAL_RO beside the apply loop: nothing else is held
		// up (Redis answers BUSY meanwhile), but SCRIPT KILL waits for the
		// limit and stops it, as Redis does.
		d := p.diff(t)
		script := p.conns(t)
		for i := range script {
			script[i].Send(testutil.Command("EVAL_RO", runawayScript, "0"))
		}
		time.Sleep(20 * time.Millisecond)
		d.Do("SCRIPT", "KILL")
		want, got := script[0].Read(), script[1].Read()
		if err := testutil.Compare([]string{"EVAL_RO", "<runaway>"}, want, got); err != nil {
			t.Error(err)
		}
		d.Do("SCRIPT", "KILL")
	})
}

// TestScriptBusyShutdown stops basalt with SHUTDOWN NOSAVE while a script
// that wrote is busy: the process exits, and the script's write is gone
// after a restart, as it would be after a crash.
func TestScriptBusyShutdown(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--lua-time-limit", "100")
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "x", "1")
	script := testutil.Dial(t, b.Addr)
	script.Send(testutil.Command("EVAL", dirtyScript, "0", "1000000000"))
	waitBusy(t, b.Addr)
	if r := c.Do("SCRIPT", "KILL"); !strings.HasPrefix(r.Str, "UNKILLABLE ") {
		t.Fatalf("SCRIPT KILL: %v", r)
	}
	if r := c.Do("SHUTDOWN"); r.String() != busyReply {
		t.Fatalf("SHUTDOWN: %v", r)
	}
	if r, err := c.DoErr("SHUTDOWN", "NOSAVE"); err == nil {
		t.Fatalf("SHUTDOWN NOSAVE answered %v", r)
	}
	if r, err := script.ReadErr(); err == nil && !r.IsError() {
		t.Fatalf("the script answered %v", r)
	}
	for deadline := time.Now().Add(10 * time.Second); b.Running(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("basalt still runs after SHUTDOWN NOSAVE")
		}
	}
	b.Restart(t)
	c = testutil.Dial(t, b.Addr)
	if r := c.Do("GET", "x"); r.String() != `"1"` {
		t.Fatalf("GET x after restart: %v (the stopped script's write must be gone)", r)
	}
	if r := c.Do("EVAL", "return redis.call('incr', 'n')", "0"); r.String() != ":1" {
		t.Fatalf("EVAL after restart: %v", r)
	}
}

// TestScriptBusyCluster runs a script through a follower, which forwards it
// to the leader: the follower's clients get the leader's BUSY and their
// SCRIPT KILL reaches the leader's script, which is never logged, so every
// node converges without it.
func TestScriptBusyCluster(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--lua-time-limit", "100")
	f := c.Nodes[c.Follower(t)]
	other := testutil.Dial(t, f.Addr)
	other.Do("SET", "x", "1")
	script := testutil.Dial(t, f.Addr)
	script.Send(testutil.Command("EVAL", "redis.call('get', 'x') "+runawayScript, "0"))
	deadline := time.Now().Add(10 * time.Second)
	for r := other.Do("GET", "x"); r.String() != busyReply; r = other.Do("GET", "x") {
		if time.Now().After(deadline) {
			t.Fatalf("the follower's client never got BUSY: %v", r)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if r := other.Do("SCRIPT", "KILL"); r.String() != "+OK" {
		t.Fatalf("SCRIPT KILL through the follower: %v", r)
	}
	if r := script.Read(); !strings.HasPrefix(r.Str, "ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("the killed script answered %v", r)
	}
	if r := other.Do("SCRIPT", "KILL"); !strings.HasPrefix(r.Str, "NOTBUSY ") {
		t.Fatalf("second SCRIPT KILL: %v", r)
	}
	for i := range 3 {
		if r := script.Do("INCR", "n"); r.String() != ":"+strconv.Itoa(i+1) {
			t.Fatalf("INCR after the kill: %v", r)
		}
	}
	c.WaitConverged(t, 10*time.Second)
}
