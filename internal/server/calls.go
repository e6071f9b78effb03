package server

import (
	"bytes"
	"strings"
	_ "unsafe" // for go:linkname

	"basalt/internal/command"
	"basalt/internal/resp"
)

// What happens around each command a client runs: MONITOR sees it, and
// once it is done its duration goes to LATENCY HISTOGRAM, the slowlog and
// the latency monitor.
//
// A command's duration is from its dispatch until its reply is ready: for
// a write, until its record is committed and applied (fsync included) and
// this connection has its reply. A pipelined write's reply is taken when
// the connection collects the replies of its pipeline, so it may count
// part of the time the rest of the pipeline took to dispatch.

// nanotime is the runtime's monotonic clock: one vDSO call, where
// time.Now reads the wall clock too.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// pendingCall is a dispatched write waiting for its reply, beside
// Client.pending.
type pendingCall struct {
	cmd   *command.Command // nil: no call to account (a PUBLISH's record...)
	argv  [][]byte
	start int64
}

// ran is called by dispatch once a command passed its checks and runs:
// monitors see it now, so before what a script it runs calls. Redis shows
// a command after it ran, in the database it left selected: SELECT and
// RESET are shown then (callDone), and EXEC once it ran, after its
// commands.
func (c *Client) ran(cmd, kind *command.Command, argv [][]byte) {
	c.call = kind
	if c.srv.monitors.active() && kind.Flags&command.Admin == 0 && !feedAfter(cmd) {
		c.srv.feedMonitors(c.db, c.nc.RemoteAddr().String(), redactArgs(kind, argv))
	}
}

func feedAfter(cmd *command.Command) bool {
	return cmd.Name == "exec" || cmd.Name == "select" || cmd.Name == "reset"
}

// callDone accounts for the command dispatch ran, unless it went to the
// write path (see propose and waitLocal).
func (c *Client) callDone(argv [][]byte, start int64) {
	cmd := c.call
	c.call = nil
	mark := c.replyMark
	failed := c.replyFailed()
	if c.rejected != nil {
		c.rejected.Stats.Reject()
		c.rejected = nil
	}
	if cmd == nil || c.callAsync {
		c.callAsync = false
		return
	}
	end := nanotime()
	c.clockNext = end
	ns := end - start
	if cmd.Name == "exec" {
		c.execDone(argv, ns, mark)
	} else if feedAfter(cmd) && c.srv.monitors.active() {
		c.srv.feedMonitors(c.db, c.nc.RemoteAddr().String(), argv)
	}
	if c.callBlocked {
		// Redis does not count the time a command waits blocked, and
		// logs no blocking call that timed out: only its stats.
		c.callBlocked = false
		c.tally.Add(cmd, ns, failed, c.srv.latencyTracking.Load())
		return
	}
	c.srv.observe(cmd, argv, ns, c, failed)
}

// Where a reply starts in out (Client.replyMark), or why there is none.
const (
	markUnset = -1 // nothing written yet
	markNone  = -2 // checked, or not this node's reply (forwarded)
)

// replyFailed reports whether the command being dispatched answered an
// error in out, counting it for INFO errorstats the first time (its
// reply may be dropped before callDone: CLIENT REPLY OFF).
func (c *Client) replyFailed() bool {
	m := c.replyMark
	if m < 0 {
		return c.replyErr
	}
	c.replyMark = markNone
	if b := c.out.Buf; m < len(b) && isErrorReply(b[m:]) {
		c.replyErr = true
		if c.out.ErrorsCounted == 0 {
			c.srv.errors.note(b[m:])
		}
	}
	c.out.ErrorsCounted = 0
	return c.replyErr
}

// execDone shows an applied transaction's commands to monitors, and then
// EXEC, and accounts each command with the whole transaction's duration:
// it is applied as one record, so they have no durations of their own.
func (c *Client) execDone(argv [][]byte, ns int64, mark int) {
	queued, db := c.execApplied, c.execDB
	c.execApplied = nil
	feed := c.srv.monitors.active()
	// EXEC's reply: an array of its commands' replies, each error counted
	// (and its command's failed_calls), EXEC itself not failing.
	var replies []byte
	if b := c.out.Buf; mark >= 0 && mark < len(b) && b[mark] == '*' {
		if n := resp.ReplyLen(b[mark:]); n > 0 {
			replies = b[mark : mark+n]
			replies = replies[bytes.IndexByte(replies, '\n')+1:]
		}
	}
	for _, q := range queued {
		failed := false
		if n := resp.ReplyLen(replies); n > 0 {
			if failed = isErrorReply(replies); failed {
				c.srv.errors.note(replies[:n])
			}
			replies = replies[n:]
		}
		kind := kindOf(q)
		if kind == nil {
			continue
		}
		if feed && kind.Flags&command.Admin == 0 {
			c.srv.feedMonitors(db, c.nc.RemoteAddr().String(), redactArgs(kind, q))
		}
		if kind.Name == "select" {
			if n, ok := c.parseDB(q[1]); ok {
				db = n
			}
		}
		c.srv.observe(kind, q, ns, c, failed)
	}
	if feed {
		c.srv.feedMonitors(c.db, c.nc.RemoteAddr().String(), argv)
	}
}

// observe accounts one call of ns nanoseconds; c is the client that ran
// it, nil for a script's redis.call.
func (s *Server) observe(cmd *command.Command, argv [][]byte, ns int64, c *Client, failed bool) {
	if c != nil {
		c.tally.Add(cmd, ns, failed, s.latencyTracking.Load())
	} else {
		cmd.Stats.Record(ns, failed, s.latencyTracking.Load())
	}
	us := ns / 1000
	if s.slowlog.logs(us) && cmd.Flags&command.SkipSlowlog == 0 {
		addr, name := "?:0", "" // a script's client has no address
		if c != nil {
			addr, name = c.nc.RemoteAddr().String(), *c.name.Load()
		}
		s.slowlog.add(redactArgs(cmd, argv), us, addr, name)
	}
	if ms := us / 1000; ms > 0 {
		event := "command"
		if cmd.Flags&command.Fast != 0 {
			event = "fast-command"
		}
		s.latency.sample(event, ms)
	}
}

// ScriptCalled is command.Host's: a script's redis.call, shown as "lua"
// and accounted as Redis accounts its script client's calls.
func (s *Server) ScriptCalled(db int, cmd *command.Command, argv [][]byte, ns int64, reply []byte) {
	kind := kindOf(argv)
	if kind == nil {
		kind = cmd
	}
	if s.monitors.active() && kind.Flags&command.Admin == 0 {
		s.feedMonitors(db, "lua", argv)
	}
	failed := isErrorReply(reply)
	if failed {
		s.errors.note(reply)
	}
	s.observe(kind, argv, ns, nil, failed)
}

// ScriptRefused is command.Host's: a script's redis.call that did not run
// is a rejected call of its command, and an error reply.
func (s *Server) ScriptRefused(cmd *command.Command, msg string) {
	if cmd != nil {
		cmd.Stats.Reject()
	}
	s.errors.noteText(msg)
}

// kindOf is the command or subcommand argv calls, nil if none.
func kindOf(argv [][]byte) *command.Command {
	cmd := command.Lookup(argv[0])
	if cmd == nil || len(cmd.Subcommands) == 0 || len(argv) < 2 {
		return cmd
	}
	return cmd.Subcommand(argv[1])
}

// redactArgs hides what Redis hides from MONITOR and the slowlog:
// passwords of AUTH, HELLO's AUTH option and CONFIG SET of a secret.
// argv is copied only when something is hidden.
func redactArgs(kind *command.Command, argv [][]byte) [][]byte {
	redacted := []byte("(redacted)")
	hide := func(i int) {
		if i < len(argv) {
			argv[i] = redacted
		}
	}
	switch kind.Name {
	case "auth", "acl|setuser": // the user's name and rules too
		argv = append([][]byte(nil), argv...)
		for i := 1 + strings.Count(kind.Name, "|"); i < len(argv); i++ {
			hide(i)
		}
	case "hello":
		for i := 2; i < len(argv); i++ {
			if strings.EqualFold(string(argv[i]), "auth") && i+2 < len(argv) {
				argv = append([][]byte(nil), argv...)
				hide(i + 1)
				hide(i + 2)
				break
			}
		}
	case "migrate": // AUTH password, AUTH2 username password
		for i := 6; i < len(argv); i++ {
			switch strings.ToLower(string(argv[i])) {
			case "auth":
				argv = append([][]byte(nil), argv...)
				hide(i + 1)
				i++
			case "auth2":
				argv = append([][]byte(nil), argv...)
				hide(i + 1)
				hide(i + 2)
				i += 2
			case "keys":
				i = len(argv)
			}
		}
	case "config|set":
		copied := false
		for i := 2; i+1 < len(argv); i += 2 {
			if sensitiveConfig[strings.ToLower(string(argv[i]))] {
				if !copied {
					argv, copied = append([][]byte(nil), argv...), true
				}
				hide(i + 1)
			}
		}
	}
	return argv
}

// sensitiveConfig are the settings Redis 7.0 never shows set.
var sensitiveConfig = map[string]bool{"requirepass": true, "masterauth": true, "masteruser": true}

// applyOpsConfig hands the slowlog, latency and tracking settings to the
// atomics the dispatch path reads.
func (s *Server) applyOpsConfig(cfg Config) {
	s.slowlog.slowerThan.Store(cfg.SlowlogSlowerThan)
	s.slowlog.maxLen.Store(cfg.SlowlogMaxLen)
	s.latency.threshold.Store(cfg.LatencyMonitorThreshold)
	s.latencyTracking.Store(cfg.LatencyTracking)
}

// PublishReceivers is command.Host's: the subscribers of this node that a
// script's PUBLISH reaches now.
func (s *Server) PublishReceivers(channel []byte) int { return s.hub.receivers(channel) }
