package compat

import (
	"slices"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// pair is one redis-server and one basalt shared by the subtests of a test,
// because starting servers costs more than most subtests.
type pair struct{ redis, basalt *testutil.Proc }

func newPair(t *testing.T) *pair {
	r, b := testutil.StartPair(t)
	return &pair{r, b}
}

// diff connects a Diff for subtest t (database 0, RESP2) on an empty key
// space.
func (p *pair) diff(t *testing.T) *testutil.Diff {
	t.Helper()
	d := p.conn(t)
	d.Do("FLUSHALL")
	return d
}

// both runs script on an empty key space in RESP2, then again in RESP3.
func (p *pair) both(t *testing.T, script string) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		d := p.diff(t)
		if proto == 3 {
			d.Proto(3)
		}
		d.Run(script)
	}
}

// conn connects a Diff for subtest t without emptying the key space.
func (p *pair) conn(t *testing.T) *testutil.Diff {
	return testutil.NewDiff(t, p.redis.Addr, p.basalt.Addr)
}

// sameMessagesBefore publishes marker on channel through pub on each
// server (redis's, basalt's) and fails t, saying what differed after line
// where, unless sub got the same messages on both before the marker came.
// In a cluster PUBLISH goes through the log, so whatever the writes before
// it made the follower send comes first there too.
func sameMessagesBefore(t *testing.T, where, what string, pub, sub [2]*testutil.Conn, channel, marker string) {
	t.Helper()
	var got [2][]string
	for i := range pub {
		pub[i].Do("PUBLISH", channel, marker)
		for {
			r := sub[i].Read()
			if len(r.Elems) == 3 && r.Elems[1].Str == channel && r.Elems[2].Str == marker {
				break
			}
			got[i] = append(got[i], r.String())
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("%s: %s differ\n  want: %s\n  got:  %s", where, what,
			strings.Join(got[0], "\n        "), strings.Join(got[1], "\n        "))
	}
}
