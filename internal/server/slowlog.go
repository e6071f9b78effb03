package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
)

// SLOWLOG: the commands that took at least slowlog-log-slower-than µs, as
// Redis 7.0 keeps them. Every connection's goroutine checks the threshold
// after each command, so the check is one atomic load; the lock and the
// copy of the arguments come only with an entry.

// Redis's limits on what an entry keeps of a command (slowlog.h).
const (
	slowlogMaxArgc = 32
	slowlogMaxArg  = 128
)

type slowEntry struct {
	id, at, micros int64
	argv           [][]byte
	addr, name     string
}

type slowlog struct {
	slowerThan atomic.Int64 // µs; negative: off
	maxLen     atomic.Int64

	mu sync.Mutex
	// entries holds the log, oldest first, in its last kept entries; the
	// ones before are trimmed only once they are as many again, so that
	// adding to a full log of slowlog-max-len entries costs no copy of it.
	entries []slowEntry
	kept    int
	nextID  int64
}

// logs reports whether a command of micros µs is to be logged.
func (l *slowlog) logs(micros int64) bool {
	t := l.slowerThan.Load()
	return t >= 0 && micros >= t
}

// add logs a command, trimming the log to slowlog-max-len (as Redis, only
// when something is added).
func (l *slowlog) add(argv [][]byte, micros int64, addr, name string) {
	e := slowEntry{at: time.Now().Unix(), micros: micros, argv: slowlogArgs(argv), addr: addr, name: name}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.kept = int(min(int64(l.kept+1), max(l.maxLen.Load(), 0)))
	if len(l.entries) >= 2*l.kept+64 {
		l.entries = append(l.entries[:0:0], l.entries[len(l.entries)-l.kept:]...)
	}
}

// slowlogArgs copies what an entry keeps of argv: at most 32 arguments,
// the last saying how many more there were, each cut at 128 bytes.
func slowlogArgs(argv [][]byte) [][]byte {
	n := min(len(argv), slowlogMaxArgc)
	out := make([][]byte, n)
	for i := range n {
		if n != len(argv) && i == n-1 {
			out[i] = []byte("... (" + strconv.Itoa(len(argv)-n+1) + " more arguments)")
			continue
		}
		a := argv[i]
		if len(a) > slowlogMaxArg {
			out[i] = append(append([]byte(nil), a[:slowlogMaxArg]...), "... ("+strconv.Itoa(len(a)-slowlogMaxArg)+" more bytes)"...)
			continue
		}
		out[i] = append([]byte(nil), a...)
	}
	return out
}

func (l *slowlog) reset() {
	l.mu.Lock()
	l.entries, l.kept = nil, 0
	l.mu.Unlock()
}

// newest returns up to n entries, newest first.
func (l *slowlog) newest(n int64) []slowEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, int64(l.kept))
	out := make([]slowEntry, 0, n)
	for i := len(l.entries) - 1; int64(len(out)) < n; i-- {
		out = append(out, l.entries[i])
	}
	return out
}

func (l *slowlog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

func cmdSlowlog(c *Client, argv [][]byte) {
	l := &c.srv.slowlog
	switch sub := strings.ToLower(string(argv[1])); {
	case sub == "help" && len(argv) == 2:
		command.HelpReply(c.reply(), slowlogHelp)
	case sub == "reset" && len(argv) == 2:
		l.reset()
		c.reply().OK()
	case sub == "len" && len(argv) == 2:
		c.reply().Int(int64(l.len()))
	case sub == "get" && len(argv) <= 3:
		count := int64(10)
		if len(argv) == 3 {
			n, ok := num.ParseInt(argv[2])
			if !ok || n < -1 { // Redis says so for a non-number too
				c.reply().Error("ERR count should be greater than or equal to -1")
				return
			}
			count = n
			if n == -1 {
				count = int64(l.len())
			}
		}
		entries := l.newest(count)
		w := c.reply()
		w.ArrayLen(len(entries))
		for _, e := range entries {
			w.ArrayLen(6)
			w.Int(e.id)
			w.Int(e.at)
			w.Int(e.micros)
			w.ArrayLen(len(e.argv))
			for _, a := range e.argv {
				w.Bulk(a)
			}
			w.BulkString(e.addr)
			w.BulkString(e.name)
		}
	default:
		c.reply().Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try SLOWLOG HELP.")
	}
}
