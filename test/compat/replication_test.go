package compat

import (
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestWait: WAIT's arguments and errors as Redis checks them; on a lone
// node, which has no replicas, its answers and its wait as Redis's without
// replicas. (What it counts in a cluster is test/cluster's TestWait.)
func TestWait(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		WAIT x 0
		WAIT 0 x
		WAIT 0 -1
		WAIT 99999999999999999999 0
		WAIT 0 1.5
		WAIT 0
		WAIT 0 0 0
		EVAL "return redis.call('wait','0','0')" 0
	`)
	want, got := d.DoBoth("COMMAND", "INFO", "wait")
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
	if testutil.ClusterMode() > 0 {
		return // basalt's followers are replicas: WAIT counts them
	}
	d.Run(`
		WAIT 0 0
		WAIT -1 0
		WAIT 0 9223372036854775807
		SET k v
		WAIT 0 0
		MULTI
		WAIT 1 0
		EXEC
	`)
	// Redis without replicas waits the whole timeout for one.
	for _, addr := range []string{p.redis.Addr, p.basalt.Addr} {
		c := testutil.Dial(t, addr)
		start := time.Now()
		if r := c.Do("WAIT", "1", "200"); r.String() != ":0" {
			t.Errorf("%s WAIT 1 200: %v", addr, r)
		}
		if took := time.Since(start); took < 190*time.Millisecond || took > 2*time.Second {
			t.Errorf("%s WAIT 1 200 took %v", addr, took)
		}
	}
}

// TestRole: ROLE of a lone node is Redis's of a master without replicas.
// (A cluster's roles are test/cluster's TestWait.)
func TestRole(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	want, got := d.DoBoth("COMMAND", "INFO", "role")
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
	d.Run(`
		ROLE x
		EVAL "return redis.call('role')" 0
	`)
	if testutil.ClusterMode() > 0 {
		return
	}
	d.Run(`
		ROLE
		SET k v
		ROLE
	`)
	d.Proto(3)
	d.Do("ROLE")
}
