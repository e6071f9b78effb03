package compat

import (
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

// conn connects a Diff for subtest t without emptying the key space.
func (p *pair) conn(t *testing.T) *testutil.Diff {
	return testutil.NewDiff(t, p.redis.Addr, p.basalt.Addr)
}
