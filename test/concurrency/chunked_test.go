package concurrency

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestChunkedReadsWhileRewritten reads a string stored in 4 KB chunks while
// another client replaces it, again and again, by one of two values of
// different lengths. A read takes the key's metadata and then its chunks;
// a commit in between must not make it answer a mix of the two. Every
// reply must be exactly one of the two values' replies.
func TestChunkedReadsWhileRewritten(t *testing.T) {
	srv := testutil.StartBasalt(t, "")
	values := []string{strings.Repeat("a", 10_000), strings.Repeat("b", 3_000) + strings.Repeat("c", 11_000)}
	reads := [][]string{
		{"GET", "k"},
		{"GETRANGE", "k", "3000", "9000"},
		{"STRLEN", "k"},
		{"BITCOUNT", "k"},
		{"GETBIT", "k", "80001"},
	}
	c := testutil.Dial(t, srv.Addr)
	want := make([][2]string, len(reads))
	for state, v := range values {
		c.Do("SET", "k", v)
		for i, a := range reads {
			want[i][state] = c.Do(a...).String()
		}
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	const readers = 4
	wg.Add(1 + readers)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, err := c.DoErr("SET", "k", values[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	seen := make([][2]int, len(reads))
	var mu sync.Mutex
	for r := range readers {
		go func() {
			defer wg.Done()
			rc, err := testutil.DialErr(srv.Addr)
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
				state := slices.Index(want[n][:], reply.String())
				if state < 0 {
					t.Errorf("%v answered a value that was never stored (%d bytes)", reads[n], len(reply.String()))
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
		// STRLEN and GETBIT 80001 differ between the values too; every
		// read must have seen both, or the test proved nothing.
		if s[0] == 0 || s[1] == 0 {
			t.Errorf("%v saw the values %v times", reads[n], s)
		}
	}
}
