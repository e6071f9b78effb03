package compat

import (
	"fmt"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClientPause: CLIENT PAUSE holds back every command (ALL) or the
// commands that may write (WRITE) for its timeout, and CLIENT UNPAUSE ends
// it; the same commands wait, or not, on both servers.
func TestClientPause(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		CLIENT PAUSE
		CLIENT PAUSE x
		CLIENT PAUSE -1
		CLIENT PAUSE 10 foo
		CLIENT PAUSE 10 all extra
		CLIENT UNPAUSE x
	`)
	for _, sub := range []string{"pause", "unpause"} {
		want, got := d.DoBoth("COMMAND", "INFO", "client|"+sub)
		sameInfoEntry(t, want.Elems[0], got.Elems[0])
	}
	d.Do("CLIENT", "HELP")

	const pauseMs = 400
	steps := []struct {
		mode string   // the pause, started by another client
		cmd  []string // then this command
	}{
		{"WRITE", []string{"GET", "x"}},
		{"WRITE", []string{"SET", "x", "1"}},
		{"WRITE", []string{"INCR", "n"}},
		{"WRITE", []string{"EVAL_RO", "return 1", "0"}},
		{"WRITE", []string{"EVAL", "return 1", "0"}},
		{"WRITE", []string{"PUBLISH", "ch", "m"}},
		{"WRITE", []string{"PFCOUNT", "h"}},
		{"WRITE", []string{"CLIENT", "UNPAUSE"}},
		{"ALL", []string{"PING"}},
		{"ALL", []string{"GET", "x"}},
		{"ALL", []string{"CLIENT", "UNPAUSE"}}, // Redis holds this one back too
	}
	for _, s := range steps {
		var seen [2]string
		for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
			a, b := testutil.Dial(t, addr), testutil.Dial(t, addr)
			if r := a.Do("CLIENT", "PAUSE", fmt.Sprint(pauseMs), s.mode); r.String() != "+OK" {
				t.Fatalf("%s CLIENT PAUSE: %v", addr, r)
			}
			start := time.Now()
			r := b.Do(s.cmd...)
			waited := time.Since(start) >= pauseMs*time.Millisecond*3/4
			seen[i] = fmt.Sprintf("%v waited=%v", r, waited)
			time.Sleep(time.Until(start.Add(pauseMs * time.Millisecond))) // the pause is over
		}
		if seen[0] != seen[1] {
			t.Errorf("CLIENT PAUSE %s, then %v: want %s, got %s", s.mode, s.cmd, seen[0], seen[1])
		}
	}
	// UNPAUSE ends a WRITE pause: the write waiting runs at once.
	for _, addr := range []string{p.redis.Addr, p.basalt.Addr} {
		a, b := testutil.Dial(t, addr), testutil.Dial(t, addr)
		a.Do("CLIENT", "PAUSE", "5000", "WRITE")
		go func() { time.Sleep(100 * time.Millisecond); a.DoErr("CLIENT", "UNPAUSE") }()
		start := time.Now()
		if r := b.Do("SET", "x", "2"); r.String() != "+OK" || time.Since(start) > 2*time.Second {
			t.Errorf("%s: SET during a paused WRITE, UNPAUSE after 100 ms: %v after %v", addr, r, time.Since(start))
		}
	}
}
