package compat

import (
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestTransactions compares MULTI/EXEC/DISCARD/WATCH with Redis: queuing,
// EXECABORT after queue-time errors, runtime errors that don't stop the
// rest, and every way a watched key can change before EXEC.
func TestTransactions(t *testing.T) {
	p := newPair(t)

	t.Run("Basics", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SET a 1
			INCR a
			GET a
			EXEC
			MULTI
			EXEC
			EXEC
			DISCARD
			MULTI
			SET b 1
			DISCARD
			GET b
			MULTI
			MULTI
			SET c 1
			EXEC
			GET c
		`)
	})

	t.Run("QueueTimeErrorsAbort", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SET a
			SET b 2
			EXEC
			GET b
			MULTI
			NOSUCHCOMMAND x y
			SET b 2
			EXEC
			MULTI
			WATCH a
			SET b 3
			EXEC
			GET b
			MULTI
			SHUTDOWN
			SET b 4
			EXEC
			GET b
			MULTI
			CLIENT NOSUCHSUB
			EXEC
		`)
	})

	// EXEC with arguments discards the transaction, inside MULTI or not.
	t.Run("ExecWithArgumentsAborts", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SET a 1
			EXEC extra
			EXEC
			GET a
			EXEC extra
		`)
	})

	t.Run("RuntimeErrorsDontStopTheRest", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s notanumber
			MULTI
			INCR s
			SET t 1
			SET u 1 BADOPTION
			INCR t
			EXEC
			MGET s t u
		`)
	})

	t.Run("SelectInside", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SELECT 99
			SELECT x
			SELECT 1
			SET k one
			EXEC
			GET k
			SELECT 0
			GET k
		`)
	})

	t.Run("ConnectionCommandsInside", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SET a 1
			CLIENT SETNAME txname
			PING
			CLIENT GETNAME
			ECHO hi
			EXEC
			CLIENT GETNAME
		`)
	})

	t.Run("WatchUntouched", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET w 1
			WATCH w nosuch
			GET w
			MULTI
			INCR w
			EXEC
			GET w
			WATCH w
			UNWATCH
			SET w 5
			MULTI
			INCR w
			EXEC
		`)
	})

	// Changes made by another client: each must abort the EXEC.
	t.Run("WatchTouchedByOthers", func(t *testing.T) {
		d := p.diff(t)
		other := testutil.NewDiff(t, p.redis.Addr, p.basalt.Addr)
		touches := [][]string{
			{"SET", "w", "2"},
			{"DEL", "w"},
			{"EXPIRE", "w", "100"},
			{"RENAME", "w", "w2"},
			{"FLUSHDB"},
			{"FLUSHALL"},
			{"SWAPDB", "0", "1"},
			{"APPEND", "w", "x"},
		}
		for _, touch := range touches {
			d.Do("FLUSHALL")
			d.Do("SET", "w", "1")
			d.Do("WATCH", "w")
			other.Do(touch...)
			d.Do("MULTI")
			d.Do("SET", "result", "committed")
			if !d.Do("EXEC") {
				t.Errorf("after %v", touch)
			}
			d.Do("GET", "result")
		}
	})

	t.Run("WatchNotTouched", func(t *testing.T) {
		d := p.diff(t)
		other := testutil.NewDiff(t, p.redis.Addr, p.basalt.Addr)
		d.Do("SET", "w", "1")
		d.Do("WATCH", "w", "missing")
		other.Do("SET", "unrelated", "1")
		other.Do("FLUSHDB") // in another database below
		d.Do("MULTI")
		d.Do("GET", "w")
		d.Do("EXEC")

		// FLUSHDB of a database where the watched key doesn't exist
		// leaves the watch intact in Redis.
		other.Do("SELECT", "3")
		d.Do("WATCH", "w")
		other.Do("FLUSHDB")
		d.Do("MULTI")
		d.Do("GET", "w")
		d.Do("EXEC")

		// A watched key that didn't exist and still doesn't.
		d.Do("WATCH", "ghost")
		other.Do("SELECT", "0")
		other.Do("DEL", "ghost")
		d.Do("MULTI")
		d.Do("PING")
		d.Do("EXEC")
	})

	t.Run("WatchedKeyExpires", func(t *testing.T) {
		d := p.diff(t)
		d.Do("SET", "w", "1", "PX", "50")
		d.Do("WATCH", "w")
		time.Sleep(150 * time.Millisecond)
		d.Do("MULTI")
		d.Do("SET", "x", "1")
		d.Do("EXEC")
		d.Do("GET", "x")

		// Expired already when watched: its deletion by active expiry
		// is no change (Redis's watchedKey.expired).
		d.Do("SET", "w", "1", "PX", "10")
		time.Sleep(50 * time.Millisecond)
		d.Do("WATCH", "w")
		time.Sleep(250 * time.Millisecond)
		d.Do("MULTI")
		d.Do("SET", "y", "1")
		d.Do("EXEC")
		d.Do("GET", "y")
	})

	t.Run("RESP3", func(t *testing.T) {
		d := p.diff(t)
		d.Proto(3)
		d.Run(`
			MULTI
			SET a 1
			GET a
			GET missing
			EXEC
		`)
		d.Do("SET", "w", "1")
		d.Do("WATCH", "w")
		testutil.NewDiff(t, p.redis.Addr, p.basalt.Addr).Do("SET", "w", "2")
		d.Do("MULTI")
		d.Do("GET", "w")
		d.Do("EXEC")
	})
}
