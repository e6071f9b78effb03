package compat

import (
	"testing"

	"basalt/internal/testutil"
)

// FAILOVER's checks and errors on a lone node, as on a Redis without
// replicas (on a cluster it is a leadership transfer: test/cluster).
func TestFailoverLone(t *testing.T) {
	if testutil.ClusterMode() > 1 {
		t.Skip("a follower answers FAILOVER as a replica: test/cluster covers it")
	}
	d := testutil.NewPairDiff(t)
	d.Run(`
		FAILOVER
		FAILOVER ABORT
		FAILOVER ABORT x
		FAILOVER TIMEOUT 0
		FAILOVER TIMEOUT -5
		FAILOVER TIMEOUT x
		FAILOVER TIMEOUT 10 TIMEOUT 10
		FAILOVER TIMEOUT
		FAILOVER TO h
		FAILOVER TO h x
		FAILOVER TO h 1 TO h 2
		FAILOVER TO h 1 FORCE
		FAILOVER FORCE
		FAILOVER FORCE FORCE
		FAILOVER foo
	`)
	want, got := d.DoBoth("COMMAND", "INFO", "failover")
	if len(got.Elems) != 1 || len(want.Elems) != 1 {
		t.Fatalf("COMMAND INFO failover: want %v, got %v", want, got)
	}
	sameInfoEntry(t, want.Elems[0], got.Elems[0])
}
