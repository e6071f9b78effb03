package concurrency

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestReadsWhileTypeFlips reads a key while another client replaces it,
// again and again, by a hash and by a sorted set (one EXEC each, so the key
// is always one or the other). A read takes the key's metadata and then
// its members; a commit in between must not make it read the members of
// the other type as its own (a hash field "s" sits where a sorted set's
// score entries are). Every reply must be exactly one of the two values.
func TestReadsWhileTypeFlips(t *testing.T) {
	srv := testutil.StartBasalt(t, "")
	reads := [][]string{
		{"ZRANGE", "k", "0", "-1", "WITHSCORES"},
		{"HGETALL", "k"},
		{"ZCARD", "k"},
		{"HGET", "k", "s"},
	}
	// The replies in each state, taken while nothing else runs.
	want := make([][2]string, len(reads))
	c := testutil.Dial(t, srv.Addr)
	for state := range 2 {
		flip(t, c, state)
		for i, a := range reads {
			want[i][state] = c.Do(a...).String()
		}
	}

	readWhileFlipping(t, srv.Addr, reads, want, func(i int) bool { return flip(t, c, i) })
}

// readWhileFlipping runs flip(0), flip(1), ... (until it returns false or
// 3 s pass) while 4 clients send reads, in turns: each reply must be one of
// want's two, the replies of that read in the two states flip alternates
// between; and each read must have seen both states, or the test proved
// nothing.
func readWhileFlipping(t *testing.T, addr string, reads [][]string, want [][2]string, flip func(i int) bool) {
	t.Helper()
	const readers = 4
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1 + readers)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load() && flip(i); i++ {
		}
	}()
	seen := make([][2]int, len(reads)) // replies per read and state
	var mu sync.Mutex
	for r := range readers {
		go func() {
			defer wg.Done()
			rc, err := testutil.DialErr(addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer rc.Close()
			for i := r; !stop.Load(); i++ {
				n := i % len(reads)
				reply, err := rc.DoErr(reads[n]...)
				if err != nil {
					t.Error(err)
					return
				}
				got := reply.String()
				state := slices.Index(want[n][:], got)
				if state < 0 {
					if len(got) > 200 {
						got = got[:200] + "..."
					}
					t.Errorf("%v answered %s, want one of the two states' replies", reads[n], got)
					stop.Store(true)
					return
				}
				mu.Lock()
				seen[n][state]++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()
	for n, s := range seen {
		if s[0] == 0 || s[1] == 0 {
			t.Errorf("%v saw the states %v times", reads[n], s)
		}
	}
}

// flip replaces k by a hash (i even) or a sorted set, in one EXEC.
func flip(t *testing.T, c *testutil.Conn, i int) bool {
	var cmds []byte
	cmds = append(cmds, testutil.Command("MULTI")...)
	cmds = append(cmds, testutil.Command("DEL", "k")...)
	if i%2 == 0 {
		cmds = append(cmds, testutil.Command("HSET", "k", "s", "1", "sx", "2", "m", "3")...)
	} else {
		cmds = append(cmds, testutil.Command("ZADD", "k", "1", "a", "2", "b")...)
	}
	cmds = append(cmds, testutil.Command("EXEC")...)
	if err := c.SendErr(cmds); err != nil {
		t.Error(err)
		return false
	}
	for range 4 {
		if _, err := c.ReadErr(); err != nil {
			t.Error(err)
			return false
		}
	}
	return true
}
