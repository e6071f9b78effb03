package compat

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Redis cuts a stream into nodes by stream-node-max-entries and
// stream-node-max-bytes as they are when each entry is added, and '~'
// trims whole nodes only, so XADD and XTRIM with '~' (and LIMIT) trim what
// Redis trims only if basalt's nodes end where Redis's do. The cases are
// those of Redis's tests/unit/type/stream.tcl, with explicit IDs.
//
// Through a follower (BASALT_CLUSTER=3) the limits are set on the leader
// only: the leader logs them with each record, so every node cuts the same
// nodes whatever its own configuration (checked at the end).
func TestStreamNodeSizes(t *testing.T) {
	redis := testutil.StartRedis(t)
	var basalt, leader *testutil.Proc
	var cluster *testutil.Cluster
	if n := testutil.ClusterMode(); n > 1 {
		cluster = testutil.StartCluster(t, n)
		basalt, leader = cluster.Nodes[cluster.Follower(t)], cluster.Nodes[cluster.WaitLeader(t, 15*time.Second)]
	} else {
		basalt = testutil.StartBasalt(t, "")
		leader = basalt
	}
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	conf := [2]*testutil.Conn{testutil.Dial(t, redis.Addr), testutil.Dial(t, leader.Addr)}
	set := func(name string, v int) {
		t.Helper()
		for _, c := range conf {
			if r := c.Do("CONFIG", "SET", name, strconv.Itoa(v)); r.String() != "+OK" {
				t.Fatalf("CONFIG SET %s %d: %v", name, v, r)
			}
		}
	}
	defer set("stream-node-max-entries", 100)
	defer set("stream-node-max-bytes", 4096)
	add := func(key string, from, to int, args ...string) {
		t.Helper()
		for i := from; i <= to; i++ {
			d.Do(append([]string{"XADD", key}, append(args, strconv.Itoa(i)+"-1", "xitem", "v")...)...)
		}
	}
	// nodes compares the number of nodes (XINFO STREAM's radix-tree-keys).
	nodeCount := func(key string) {
		t.Helper()
		w, g := d.DoBoth("XINFO", "STREAM", key)
		if len(w.Elems) < 4 || len(g.Elems) < 4 || w.Elems[3].Int != g.Elems[3].Int {
			t.Errorf("%s: radix-tree-keys %v, basalt %v", key, w, g)
		}
	}

	// XADD with LIMIT consecutive calls.
	set("stream-node-max-entries", 10)
	add("consecutive", 1, 100)
	add("consecutive", 101, 102, "MAXLEN", "~", "55", "LIMIT", "30")
	d.Do("XLEN", "consecutive")
	add("consecutive", 103, 103, "MAXLEN", "~", "55", "LIMIT", "30")
	d.Do("XLEN", "consecutive")
	nodeCount("consecutive")

	// XTRIM with ~ is limited (to 100 nodes' entries), without ~ it is not.
	set("stream-node-max-entries", 1)
	add("limited", 1, 102)
	add("unlimited", 1, 102)
	d.Run(`
		XTRIM limited MAXLEN ~ 1
		XLEN limited
		XTRIM unlimited MAXLEN 1 LIMIT 30
		XTRIM unlimited MAXLEN 1
		XLEN unlimited
	`)

	// XTRIM with LIMIT deletes no more entries than the limit.
	set("stream-node-max-entries", 2)
	add("few", 1, 3)
	d.Run(`
		XTRIM few MAXLEN ~ 0 LIMIT 1
		XTRIM few MAXLEN ~ 0 LIMIT 2
		XLEN few
	`)

	// Nodes keep the limits of when they were filled: changing the
	// setting does not change the nodes already there.
	set("stream-node-max-entries", 7)
	add("mixed", 1, 30)
	set("stream-node-max-entries", 3)
	add("mixed", 31, 50)
	set("stream-node-max-entries", 100)
	add("mixed", 51, 70)
	nodeCount("mixed")
	d.Run(`
		XDEL mixed 8-1 9-1 30-1
		XTRIM mixed MINID ~ 10
		XLEN mixed
		XTRIM mixed MINID ~ 33 LIMIT 4
		XTRIM mixed MAXLEN ~ 30 LIMIT 10
		XTRIM mixed MAXLEN ~ 25
		XTRIM mixed MAXLEN ~ 1
		XRANGE mixed - + COUNT 3
	`)
	nodeCount("mixed")

	// Nodes cut by size alone (no entry limit), and one node without any
	// limit (0 bytes means Redis's 1 GB cap).
	set("stream-node-max-entries", 0)
	set("stream-node-max-bytes", 120)
	add("bytes", 1, 40)
	nodeCount("bytes")
	d.Do("XTRIM", "bytes", "MAXLEN", "~", "5")
	set("stream-node-max-bytes", 0)
	add("one", 1, 300)
	nodeCount("one")
	d.Do("XTRIM", "one", "MAXLEN", "~", "5")
	set("stream-node-max-bytes", 4096)

	// The limits hold for writes in MULTI and in scripts too.
	set("stream-node-max-entries", 4)
	d.Run(`
		MULTI
		XADD tx 1-1 a b
		XADD tx 2-1 a b
		XADD tx 3-1 a b
		XADD tx 4-1 a b
		XADD tx 5-1 a b
		XADD tx 6-1 a b
		EXEC
		EVAL "for i = 7, 15 do redis.call('XADD', KEYS[1], i .. '-1', 'a', 'b') end return redis.call('XTRIM', KEYS[1], 'MAXLEN', '~', 5)" 1 tx
		XLEN tx
	`)
	nodeCount("tx")

	// Every node of a cluster holds the leader's nodes.
	if cluster != nil {
		cluster.WaitConverged(t, 15*time.Second)
		for _, key := range []string{"consecutive", "mixed", "bytes", "one", "tx"} {
			want := int64(-1)
			for _, p := range cluster.Nodes {
				c := testutil.Dial(t, p.Addr)
				c.Do("READONLY")
				r := c.Do("XINFO", "STREAM", key)
				c.Close()
				if len(r.Elems) < 4 {
					t.Fatalf("XINFO STREAM %s on %s: %v", key, p.Addr, r)
				}
				if want < 0 {
					want = r.Elems[3].Int
				} else if r.Elems[3].Int != want {
					t.Errorf("%s: %d nodes on one node, %d on another", key, want, r.Elems[3].Int)
				}
			}
		}
	}
}
