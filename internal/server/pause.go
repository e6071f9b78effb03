package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
)

// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as in Redis 7.0: for
// the timeout, this node's clients' commands wait before they run (ALL), or
// only those that may write (WRITE: writes, PUBLISH, EVAL, FCALL...); reads
// go on. A new pause never shortens nor weakens one in force. Active expiry
// waits too, so no key changes while writes are paused. Errors are
// answered at once, as in Redis, which checks a command before pausing it.
type pause struct {
	// on is set while a pause may be in force: every command looks at it,
	// and at nothing else unless it is set.
	on      atomic.Bool
	mu      sync.Mutex
	end     time.Time
	all     bool
	changed chan struct{} // closed when the pause is extended or ended
}

// state returns the pause in force at now: its end (zero if none), its
// mode and a channel closed when it changes.
func (p *pause) state(now time.Time) (end time.Time, all bool, changed <-chan struct{}) {
	if !p.on.Load() {
		return time.Time{}, false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !now.Before(p.end) {
		p.on.Store(false)
		return time.Time{}, false, nil
	}
	return p.end, p.all, p.changed
}

// set starts a pause, or extends or strengthens the one in force; a zero
// end ends it.
func (p *pause) set(end time.Time, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	switch {
	case end.IsZero():
		p.end, p.all = time.Time{}, false
	case now.Before(p.end):
		p.end, p.all = maxTime(p.end, end), p.all || all
	default:
		p.end, p.all = end, all
	}
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
	p.on.Store(!p.end.IsZero())
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// active reports whether a pause is in force (active expiry waits).
func (p *pause) active() bool {
	end, _, _ := p.state(time.Now())
	return !end.IsZero()
}

func clientPause(c *Client, argv [][]byte) {
	w := c.reply()
	all := true
	if len(argv) == 4 {
		switch strings.ToLower(string(argv[3])) {
		case "write":
			all = false
		case "all":
		default:
			w.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(argv) > 4 {
		w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try CLIENT HELP.")
		return
	}
	ms, ok := num.ParseInt(argv[2])
	switch {
	case !ok:
		w.Error("ERR timeout is not an integer or out of range")
		return
	case ms < 0:
		w.Error("ERR timeout is negative")
		return
	}
	c.srv.pause.set(time.Now().Add(time.Duration(min(ms, int64(100*365*24*time.Hour/time.Millisecond)))*time.Millisecond), all)
	w.OK()
}

func clientUnpause(c *Client) {
	c.srv.pause.set(time.Time{}, false)
	c.reply().OK()
}

// mayWrite reports whether CLIENT PAUSE WRITE holds back a command: what
// Redis flags write or may-replicate.
func mayWrite(cmd, kind *command.Command) bool {
	switch {
	case kind.IsWrite():
		return true
	case cmd.Flags&command.Script != 0:
		return cmd.Flags&command.ReadOnly == 0 // EVAL, FCALL; not EVAL_RO
	}
	return cmd.Name == "publish" || cmd.Name == "spublish"
}

// waitPause holds a command of c while a pause applies to it. The replies
// to the commands before it go out first.
func (c *Client) waitPause(cmd *command.Command, argv [][]byte) {
	if !c.srv.pause.on.Load() {
		return
	}
	kind := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if kind = cmd.Subcommand(argv[1]); kind == nil {
			return
		}
	}
	end, all, changed := c.srv.pause.state(time.Now())
	if end.IsZero() || !all && !mayWrite(cmd, kind) {
		return
	}
	c.waitPending()
	c.flush()
	for !end.IsZero() && (all || mayWrite(cmd, kind)) {
		t := time.NewTimer(time.Until(end))
		select {
		case <-t.C:
		case <-changed:
		case <-c.srv.closed:
			t.Stop()
			return
		}
		t.Stop()
		end, all, changed = c.srv.pause.state(time.Now())
	}
}
