package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// errorStats counts the error replies sent (total_error_replies) and, by
// their first word, INFO errorstats. Errors are rare, so a mutex is fine.
// Like Redis 7.2 (7.0 has no bound), it keeps at most
// maxErrorPrefixes prefixes: one more and it keeps only
// ERRORSTATS_DISABLED until CONFIG RESETSTAT.
type errorStats struct {
	total    atomic.Int64
	mu       sync.Mutex
	prefixes map[string]int64
	disabled bool
}

const (
	maxErrorPrefixes   = 128
	errorStatsDisabled = "ERRORSTATS_DISABLED"
)

// isErrorReply reports whether a reply (RESP2 or RESP3) is an error.
func isErrorReply(reply []byte) bool {
	return len(reply) > 0 && (reply[0] == '-' || reply[0] == '!')
}

// note counts one error reply, given from its first byte.
func (e *errorStats) note(reply []byte) {
	if reply[0] == '!' { // a blob error: its text follows the length line
		if _, text, ok := bytes.Cut(reply, []byte("\r\n")); ok {
			reply = append([]byte{'-'}, text...)
		}
	}
	e.noteMessage(reply)
}

// noteMessage counts an error given as "-PREFIX message...": the prefix
// is the word before the first space within 32 bytes, ERR if none.
func (e *errorStats) noteMessage(msg []byte) {
	e.total.Add(1)
	prefix := "ERR"
	if len(msg) > 0 && msg[0] == '-' {
		if sp := bytes.IndexByte(msg[:min(len(msg), 32)], ' '); sp > 0 {
			prefix = string(msg[1:sp])
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.disabled {
		return
	}
	if e.prefixes == nil {
		e.prefixes = map[string]int64{}
	}
	if _, ok := e.prefixes[prefix]; !ok && len(e.prefixes) >= maxErrorPrefixes {
		e.prefixes = map[string]int64{errorStatsDisabled: 1}
		e.disabled = true
		return
	}
	e.prefixes[prefix]++
}

// noteText counts an error written without its '-' (a script's refused
// redis.call): "ERR" unless it carries one.
func (e *errorStats) noteText(msg string) {
	if !strings.HasPrefix(msg, "-") {
		msg = "-ERR " + msg
	}
	e.noteMessage([]byte(msg))
}

func (e *errorStats) reset() {
	e.total.Store(0)
	e.mu.Lock()
	e.prefixes, e.disabled = nil, false
	e.mu.Unlock()
}

// lines are INFO errorstats's, in prefix order.
func (e *errorStats) lines() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, 0, len(e.prefixes))
	for p := range e.prefixes {
		names = append(names, p)
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, p := range names {
		out[i] = fmt.Sprintf("errorstat_%s:count=%d", infoSafe(p), e.prefixes[p])
	}
	return out
}

// infoSafe replaces what INFO's "name:value" lines cannot carry.
func infoSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ':', '#', '\r', '\n', ' ':
			return '_'
		}
		return r
	}, s)
}
