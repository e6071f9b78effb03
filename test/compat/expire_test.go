package compat

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// waitInt polls a command on one server until it answers want, and reports
// how long that took; it fails the test after limit.
func waitInt(t *testing.T, c *testutil.Conn, want int64, limit time.Duration, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		r := c.Do(args...)
		if r.Kind == ':' && r.Int == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Errorf("%s %v: still %v after %v, want %d", c.Addr, args, r, limit, want)
			return limit
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExpire(t *testing.T) {
	p := newPair(t)

	t.Run("ActiveExpiry", func(t *testing.T) {
		// Keys with short TTLs leave the database without being touched:
		// DBSIZE counts expired keys until they are removed, so only active
		// expiry brings it down.
		d := p.diff(t)
		const n = 300
		for _, db := range []string{"0", "7"} {
			d.Do("SELECT", db)
			mset(t, d, "short:", 0, n)
			mset(t, d, "long:", 0, 50)
			for i := range n {
				d.Want.Send(testutil.Command("PEXPIRE", "short:"+strconv.Itoa(i), strconv.Itoa(100+i%50)))
				d.Got.Send(testutil.Command("PEXPIRE", "short:"+strconv.Itoa(i), strconv.Itoa(100+i%50)))
			}
			for range n {
				if w, g := d.Want.Read(), d.Got.Read(); w.Int != 1 || g.Int != 1 {
					t.Fatalf("PEXPIRE: redis %v, basalt %v", w, g)
				}
			}
			d.Do("EXPIRE", "long:0", "1000")
			d.Do("DBSIZE")
		}
		// Both databases expire on their own; db 7 is never read until
		// its DBSIZE drops.
		for _, db := range []string{"0", "7"} {
			d.Do("SELECT", db)
			took := waitInt(t, d.Got, 50, 15*time.Second, "DBSIZE") // generous: a loaded machine stalls syncs for seconds
			waitInt(t, d.Want, 50, 15*time.Second, "DBSIZE")
			t.Logf("basalt db %s: short keys gone from DBSIZE after %v", db, took)
			d.Run(`
				DBSIZE
				EXISTS short:0 short:1 short:299
				@unordered KEYS short:*
				EXISTS long:0 long:49
			`)
			intNear(t, d, 1, "TTL", "long:0")
		}
		d.Do("SELECT", "0")
	})

	t.Run("ActiveExpiryMoved", func(t *testing.T) {
		// A TTL that grows keeps the key's old entry in basalt's expiry
		// index; when that entry comes due the key must stay, and go only
		// at its own expiry. A TTL that shrinks must be found sooner.
		d := p.diff(t)
		d.Do("SELECT", "3")
		mset(t, d, "grown:", 0, 100)
		mset(t, d, "shrunk:", 0, 100)
		// One transaction, pipelined, so that the TTLs start together
		// however slow the round trips are (a cluster on a loaded machine
		// took longer than the 3 s TTL to run these one by one).
		cmds := [][]string{{"MULTI"}}
		for i := range 100 {
			n := strconv.Itoa(i)
			cmds = append(cmds,
				[]string{"PEXPIRE", "grown:" + n, "50"},
				[]string{"PEXPIRE", "grown:" + n, "2000"},
				[]string{"SET", "grown:" + n, "again", "PX", "3000", "XX"},
				[]string{"PEXPIRE", "shrunk:" + n, "60000"},
				[]string{"PEXPIRE", "shrunk:" + n, "50"})
		}
		cmds = append(cmds, []string{"EXEC"})
		for _, c := range cmds {
			d.Want.Send(testutil.Command(c...))
			d.Got.Send(testutil.Command(c...))
		}
		for _, c := range cmds {
			if w, g := d.Want.Read(), d.Got.Read(); w.String() != g.String() {
				t.Fatalf("%v: redis %v, basalt %v", c, w, g)
			}
		}
		waitInt(t, d.Got, 100, 5*time.Second, "DBSIZE")
		waitInt(t, d.Want, 100, 5*time.Second, "DBSIZE")
		d.Run(`
			DBSIZE
			EXISTS grown:0 grown:99
			EXISTS shrunk:0 shrunk:99
		`)
		waitInt(t, d.Got, 0, 8*time.Second, "DBSIZE")
		waitInt(t, d.Want, 0, 8*time.Second, "DBSIZE")
		d.Do("SELECT", "0")
	})

	t.Run("Lazy", func(t *testing.T) {
		// An expired key is gone for every command even before active
		// expiry removes it.
		d := p.diff(t)
		d.Run(`
			SET k v PX 30
			SET k2 v PX 30
			SET k3 v PX 30
			SET k4 v PX 30
			SET k5 v PX 30
			SET dst old
		`)
		time.Sleep(60 * time.Millisecond)
		d.Run(`
			EXISTS k
			TTL k2
			PTTL k2
			TYPE k3
			GET k4
			RENAME k5 dst
			GET dst
			EXPIRE k5 100
			PERSIST k5
			OBJECT ENCODING k5
			COPY k5 z
			MOVE k5 1
			DEL k k2 k3 k4 k5
			DBSIZE
		`)
	})

	t.Run("TTLValues", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a v EX 100
			SET b v PX 100500
			SET c v
			EXPIRE c 3600
			SET d v
			PEXPIRE d 2500
			SET e v
			EXPIREAT e 4000000000
			SET f v
			PEXPIREAT f 4000000000777
		`)
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			intNear(t, d, 1, "TTL", k)
			intNear(t, d, 150, "PTTL", k)
			intNear(t, d, 1, "EXPIRETIME", k)
			intNear(t, d, 150, "PEXPIRETIME", k)
		}
		d.Run(`
			EXPIRETIME e
			PEXPIRETIME f
			EXPIRETIME f
		`)
		// The TTL counts down.
		time.Sleep(1100 * time.Millisecond)
		intNear(t, d, 150, "PTTL", "d")
		if r := d.Got.Do("PTTL", "d"); r.Int > 1400 || r.Int < 1000 {
			t.Errorf("PTTL d after 1.1s of 2.5s = %v", r)
		}
	})

	t.Run("RenameKeepsTTL", func(t *testing.T) {
		// A renamed, copied or moved key expires on the original schedule.
		d := p.diff(t)
		d.Run(`
			SET a v PX 150
			RENAME a b
			SET c v PX 150
			COPY c c2
			SET m v PX 150
			MOVE m 1
			DBSIZE
		`)
		waitInt(t, d.Got, 0, 3*time.Second, "DBSIZE")
		waitInt(t, d.Want, 0, 3*time.Second, "DBSIZE")
		d.Do("SELECT", "1")
		waitInt(t, d.Got, 0, 3*time.Second, "DBSIZE")
		waitInt(t, d.Want, 0, 3*time.Second, "DBSIZE")
	})
}
