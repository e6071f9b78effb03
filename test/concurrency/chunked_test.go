package concurrency

import (
	"strings"
	"testing"

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

	readWhileFlipping(t, srv.Addr, reads, want, func(i int) bool {
		if _, err := c.DoErr("SET", "k", values[i%2]); err != nil {
			t.Error(err)
			return false
		}
		return true
	})
}
