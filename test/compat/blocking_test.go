package compat

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// blocker is one client per server that sends a blocking command and reads
// its reply later.
type blocker struct{ want, got *testutil.Conn }

func newBlocker(t *testing.T, p *pair) *blocker {
	return &blocker{testutil.Dial(t, p.redis.Addr), testutil.Dial(t, p.basalt.Addr)}
}

func (b *blocker) send(args ...string) {
	b.want.Send(testutil.Command(args...))
	b.got.Send(testutil.Command(args...))
}

// expect reads the reply of the blocked command on both servers and checks
// they agree.
func (b *blocker) expect(t *testing.T, what string) {
	t.Helper()
	w, g := b.want.Read(), b.got.Read()
	if w.String() != g.String() {
		t.Errorf("%s: redis %v, basalt %v", what, w, g)
	}
}

// settle gives blocked commands time to reach both servers and block.
func settle() { time.Sleep(100 * time.Millisecond) }

func TestBlocking(t *testing.T) {
	p := newPair(t)

	t.Run("Immediate", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RPUSH l a b c
			BLPOP l 0
			BRPOP l 0
			BLPOP missing l 1
			BLPOP missing 0.05
			BRPOPLPUSH missing dst 0.05
			BLMOVE missing dst LEFT RIGHT 0.05
			BLMPOP 0.05 1 missing LEFT
			RPUSH l w x y z
			BLMPOP 0 2 missing l RIGHT COUNT 2
			BLMOVE l dst LEFT RIGHT 0
			BRPOPLPUSH l dst 0
			LRANGE dst 0 -1
			SET s str
			BLPOP s 0
			BLPOP missing s 0
			BLPOP l -1
			BLPOP l abc
			BLPOP l 1e30
			BLMOVE l dst UP RIGHT -1
			BLMPOP 0 0 l LEFT
			BLMPOP x 1 l LEFT
			BLMPOP -1 1 l MIDDLE
			BLMPOP 0 1 l LEFT COUNT 0
		`)
		d.Proto(3)
		d.Run(`
			BLPOP missing 0.05
			BLMOVE missing dst LEFT RIGHT 0.05
			RPUSH l a
			BLPOP l 0
		`)
	})

	t.Run("SortedSets", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			ZADD z 1 a 2 b 3 c
			BZPOPMIN z 0
			BZPOPMAX missing z 0
			BZMPOP 0 1 z MIN COUNT 5
			BZPOPMIN z 0.05
			BZMPOP 0.05 2 z y MAX
			BZPOPMIN z -1
			BZMPOP 0 1 z LEFT
			SET s x
			BZPOPMIN s 0
			MULTI
			BZPOPMIN z 0
			BZMPOP 0 1 z MIN
			EXEC
		`)
		d.Proto(3)
		d.Run(`
			ZADD z 1 a
			BZPOPMIN z 0
			BZPOPMIN z 0.05
		`)
		d.Proto(2)
		b := newBlocker(t, p)
		b.send("BZPOPMAX", "z1", "z2", "0")
		settle()
		d.Do("ZADD", "z2", "5", "five", "6", "six")
		b.expect(t, "BZPOPMAX woken by ZADD")
		b.send("BZMPOP", "0", "1", "z3", "MIN", "COUNT", "2")
		settle()
		d.Do("ZADD", "z3", "1", "one", "2", "two", "3", "three")
		b.expect(t, "BZMPOP woken by ZADD")
		d.Do("ZRANGE", "z3", "0", "-1", "WITHSCORES")
	})

	t.Run("InsideMulti", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			BLPOP missing 0
			BLMOVE missing dst LEFT LEFT 0
			BLMPOP 0 1 missing LEFT
			RPUSH l v
			BLPOP l 0
			BLPOP l -1
			EXEC
		`)
	})

	t.Run("WokenByPush", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		b.send("BLPOP", "k1", "k2", "0")
		settle()
		d.Do("RPUSH", "k2", "v")
		b.expect(t, "BLPOP woken by RPUSH")
		d.Do("EXISTS", "k2")

		b.send("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
		settle()
		d.Do("LPUSH", "src", "a", "b")
		b.expect(t, "BLMOVE woken by LPUSH")
		d.Do("LRANGE", "src", "0", "-1")
		d.Do("LRANGE", "dst", "0", "-1")

		b.send("BLMPOP", "0", "1", "m", "LEFT", "COUNT", "5")
		settle()
		d.Do("RPUSH", "m", "1", "2", "3")
		b.expect(t, "BLMPOP woken by RPUSH")
	})

	// The first client blocked is the first served, one element each.
	t.Run("FirstBlockedFirstServed", func(t *testing.T) {
		d := p.diff(t)
		var bs []*blocker
		for range 3 {
			b := newBlocker(t, p)
			b.send("BLPOP", "q", "0")
			settle()
			bs = append(bs, b)
		}
		d.Do("RPUSH", "q", "1", "2", "3", "4")
		for i, b := range bs {
			b.expect(t, "waiter "+string(rune('A'+i)))
		}
		d.Do("LRANGE", "q", "0", "-1")
	})

	t.Run("ServedByMultiExec", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		b.send("BRPOP", "q", "0")
		settle()
		d.Run(`
			MULTI
			RPUSH q a
			RPUSH q b
			EXEC
		`)
		b.expect(t, "BRPOP woken by EXEC")
		d.Do("LRANGE", "q", "0", "-1")
	})

	t.Run("Timeout", func(t *testing.T) {
		b := newBlocker(t, p)
		start := time.Now()
		b.send("BLPOP", "never", "0.2")
		b.expect(t, "BLPOP timeout")
		if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
			t.Errorf("BLPOP 0.2 took %v", el)
		}
		b.send("BRPOPLPUSH", "never", "dst", "0.1")
		b.expect(t, "BRPOPLPUSH timeout")
	})

	// A call that finds data is served, however short its timeout, even
	// when it waits behind a slow script for its turn.
	t.Run("DataBehindSlowScript", func(t *testing.T) {
		d := p.diff(t)
		d.Do("RPUSH", "ready", "a")
		slow := newBlocker(t, p)
		slow.send("EVAL", "local i = 0 while i < 3000000 do i = i + 1 end return i", "0")
		time.Sleep(20 * time.Millisecond)
		b := newBlocker(t, p)
		b.send("BLPOP", "ready", "0.001")
		b.expect(t, "BLPOP behind a script")
		slow.expect(t, "the slow script")
		d.Do("LLEN", "ready")
	})

	// A client that hangs up while blocked takes nothing.
	t.Run("DisconnectWhileBlocked", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		b.send("BLPOP", "gone", "0")
		settle()
		b.want.Close()
		b.got.Close()
		settle()
		d.Do("RPUSH", "gone", "v")
		d.Do("LRANGE", "gone", "0", "-1")
	})

	// A write that doesn't bring data (DEL, a string) doesn't serve.
	t.Run("WrongWakeups", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		b.send("BLPOP", "w", "0")
		settle()
		d.Do("DEL", "w")
		d.Do("LPUSH", "other", "x")
		settle()
		d.Do("RPUSH", "w", "finally")
		b.expect(t, "BLPOP after unrelated writes")
	})

	// A key that holds another type when a write wakes the call does not
	// serve it: it waits on, and another key of its type can serve it.
	t.Run("WokenByAnotherType", func(t *testing.T) {
		d := p.diff(t)
		for _, c := range []struct {
			call     []string
			push     string
			pushArgs []string
		}{
			{[]string{"BLPOP", "w", "0"}, "LPUSH", []string{"b"}},
			{[]string{"BLMPOP", "0", "1", "w", "LEFT"}, "LPUSH", []string{"b"}},
			{[]string{"BZPOPMIN", "w", "0"}, "ZADD", []string{"1", "b"}},
			{[]string{"BZMPOP", "0", "1", "w", "MIN"}, "ZADD", []string{"1", "b"}},
			{[]string{"BRPOPLPUSH", "w", "dst", "0"}, "LPUSH", []string{"b"}},
		} {
			b := newBlocker(t, p)
			d.Do("DEL", "w", "dst")
			b.send(c.call...)
			settle()
			push := append([]string{c.push, "w"}, c.pushArgs...)
			d.Do("MULTI")
			d.Do(push...)
			d.Run(`
				DEL w
				SET w foo
				EXEC
				DEL w
			`)
			d.Do(push...)
			b.expect(t, c.call[0]+" woken by a string")
		}
		b := newBlocker(t, p)
		d.Do("DEL", "w", "x")
		b.send("BLPOP", "w", "x", "0")
		settle()
		d.Do("SET", "w", "str")
		d.Do("RPUSH", "x", "served")
		b.expect(t, "BLPOP from its second key")
		d.Run(`
			GET w
			LLEN x
		`)
	})
}

// TestClientUnblock: CLIENT UNBLOCK ends another client's blocking call as
// its timeout would, or with an error, for each blocking command and WAIT.
func TestClientUnblock(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		CLIENT UNBLOCK 999999
		CLIENT UNBLOCK x
		CLIENT UNBLOCK 1 foo
		CLIENT UNBLOCK x foo
		CLIENT UNBLOCK 1 timeout extra
	`)
	want, got := d.DoBoth("COMMAND", "INFO", "client|unblock")
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
	if testutil.ClusterMode() > 0 {
		return // a follower's client blocks on the leader's connection, not here
	}
	for _, call := range [][]string{
		{"BLPOP", "q", "0"}, {"BRPOPLPUSH", "q", "d", "0"}, {"BLMOVE", "q", "d", "LEFT", "LEFT", "0"},
		{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, {"BZPOPMIN", "z", "0"}, {"BLMPOP", "0", "1", "q", "LEFT"},
		{"WAIT", "1", "0"},
	} {
		for _, mode := range []string{"TIMEOUT", "ERROR"} {
			var replies [2][2]string
			for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
				b, w := testutil.Dial(t, addr), testutil.Dial(t, addr)
				id := b.Do("CLIENT", "ID").Int
				b.Send(testutil.Command(call...))
				// Until it waits: CLIENT UNBLOCK answers 0 before.
				deadline := time.Now().Add(5 * time.Second)
				r := w.Do("CLIENT", "UNBLOCK", strconv.FormatInt(id, 10), mode)
				for r.Int == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
					r = w.Do("CLIENT", "UNBLOCK", strconv.FormatInt(id, 10), mode)
				}
				replies[i] = [2]string{r.String(), b.Read().String()}
			}
			if replies[0] != replies[1] {
				t.Errorf("%v, CLIENT UNBLOCK %s: want %v, got %v", call, mode, replies[0], replies[1])
			}
		}
	}
}
