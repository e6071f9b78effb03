package acl

import (
	"sync"
	"time"
)

// Context says where a denial happened, as ACL LOG shows it.
type Context string

const (
	TopLevel Context = "toplevel"
	Multi    Context = "multi"
	Lua      Context = "lua"
)

// Entry is one ACL LOG entry.
type Entry struct {
	Count      int
	Reason     Reason
	Context    Context
	Object     string // the command, key, channel or (auth) AUTH
	Username   string
	Created    time.Time // the last denial it counts
	ClientInfo string    // CLIENT LIST's line of the last client denied
}

// groupWithin: a denial like one of the last entries within this time
// adds to its count (Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA).
const groupWithin = 60 * time.Second

// Log is the ACL LOG: the newest entry first, at most max entries.
type Log struct {
	mu      sync.Mutex
	entries []*Entry
}

// Add records a denial; max is acllog-max-len.
func (l *Log) Add(e Entry, max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, old := range l.entries[:min(10, len(l.entries))] {
		if old.Reason == e.Reason && old.Context == e.Context && old.Object == e.Object &&
			old.Username == e.Username && e.Created.Sub(old.Created).Abs() <= groupWithin {
			old.Count++
			old.Created, old.ClientInfo = e.Created, e.ClientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = old
			return
		}
	}
	e.Count = 1
	l.entries = append([]*Entry{&e}, l.entries...)
	if len(l.entries) > max {
		l.entries = l.entries[:max]
	}
}

// Entries returns copies of the newest n entries.
func (l *Log) Entries(n int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, 0, min(n, len(l.entries)))
	for _, e := range l.entries[:min(n, len(l.entries))] {
		out = append(out, *e)
	}
	return out
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// Trim applies a lowered acllog-max-len.
func (l *Log) Trim(max int) {
	l.mu.Lock()
	if len(l.entries) > max {
		l.entries = l.entries[:max]
	}
	l.mu.Unlock()
}
