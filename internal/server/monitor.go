package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/command"
)

// MONITOR: every command this node runs, as a line to each monitoring
// client, in Redis 7.0's form:
//
//	+1700000000.123456 [0 127.0.0.1:51234] "SET" "k" "v"
//
// Lines go through the client's output queue (the subscribers' queue,
// pubsub.go), written by its own goroutine, so a slow monitor never holds
// up the command that feeds it; one that falls further behind than the
// pubsub class of client-output-buffer-limit is disconnected. With no
// monitor, a command pays one atomic load.

type monitors struct {
	n    atomic.Int32 // len(list), read without the lock
	mu   sync.Mutex
	list []*Client
}

func (m *monitors) add(c *Client) {
	m.mu.Lock()
	m.list = append(m.list, c)
	m.n.Store(int32(len(m.list)))
	m.mu.Unlock()
}

func (m *monitors) remove(c *Client) {
	m.mu.Lock()
	for i, o := range m.list {
		if o == c {
			m.list = append(m.list[:i], m.list[i+1:]...)
			break
		}
	}
	m.n.Store(int32(len(m.list)))
	m.mu.Unlock()
}

// active is the dispatch path's check.
func (m *monitors) active() bool { return m.n.Load() > 0 }

// feed sends a command run in db by from (a client's address, or "lua")
// to every monitor.
func (s *Server) feedMonitors(db int, from string, argv [][]byte) {
	line := monitorLine(time.Now(), db, from, argv)
	limit := s.hub.outputLimit()
	s.monitors.mu.Lock()
	defer s.monitors.mu.Unlock()
	for _, m := range s.monitors.list {
		m.sub.enqueue(line, limit)
	}
}

// monitorLine formats one line, arguments quoted as Redis's sdscatrepr.
func monitorLine(at time.Time, db int, from string, argv [][]byte) []byte {
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, at.Unix(), 10)
	b = append(b, '.')
	us := strconv.AppendInt(nil, int64(at.Nanosecond()/1000), 10)
	for range 6 - len(us) {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, from...)
	b = append(b, "] "...)
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendRepr(b, a)
	}
	return append(b, "\r\n"...)
}

// appendRepr quotes s as sdscatrepr does: escapes for \ " \n \r \t \a \b,
// \xHH for other bytes that are not printable ASCII.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= ' ' && ch <= '~' {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}

// cmdMonitor makes the client a monitor. As in Redis, inside EXEC it is
// refused, and a second MONITOR answers nothing.
func cmdMonitor(c *Client, argv [][]byte) {
	if c.execing {
		c.reply().Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.monitoring {
		return
	}
	c.reply().OK()
	c.ensureSub().commit(c.out) // the OK goes before the first line
	c.monitoring = true
	c.srv.monitors.add(c)
}

// stopMonitoring ends MONITOR (RESET, the connection closing).
func (c *Client) stopMonitoring() {
	if c.monitoring {
		c.monitoring = false
		c.srv.monitors.remove(c)
	}
}

// monitorRefuses reports whether a monitoring client may not run kind:
// Redis counts monitors as replicas, which may not touch the key space.
func monitorRefuses(kind *command.Command) bool {
	return kind.Flags&(command.Write|command.ReadOnly|command.MayReplicate) != 0
}
