// Package pebblelog is the logger basalt gives its Pebble stores.
package pebblelog

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Logger keeps Pebble's routine messages out of the server log, reports
// errors at most once per errorEvery for each kind (a full disk fails every
// flush and compaction retry, hundreds a second), and turns a fatal error
// into a logged exit with status 1: Pebble's Fatalf must not return, and a
// panic there ran deferred unlocks and panicked again.
type Logger struct {
	Name string // which store, in each line

	mu     sync.Mutex
	last   map[string]time.Time // by format: when it was last logged
	missed map[string]int       // and how many were left out since
}

// errorEvery is how often one kind of Pebble error is logged.
const errorEvery = 10 * time.Second

func (l *Logger) Infof(string, ...any) {}

func (l *Logger) Errorf(format string, args ...any) {
	l.mu.Lock()
	if l.last == nil {
		l.last, l.missed = map[string]time.Time{}, map[string]int{}
	}
	if time.Since(l.last[format]) < errorEvery {
		l.missed[format]++
		l.mu.Unlock()
		return
	}
	missed := l.missed[format]
	l.last[format], l.missed[format] = time.Now(), 0
	l.mu.Unlock()
	slog.Error(l.Name+": "+fmt.Sprintf(format, args...), "like_it_since_last", missed)
}

func (l *Logger) Fatalf(format string, args ...any) {
	slog.Error(l.Name + ": " + fmt.Sprintf(format, args...) + "; stopping: the data directory can't be written (acknowledged writes are on disk)")
	os.Exit(1)
}
