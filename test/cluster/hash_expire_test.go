package cluster

import (
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClusterHashFieldExpiry: hash fields expire through the log, so
// every node removes the same fields at the same point: after the leader's
// active expiry, a follower answers HLEN exactly, a hash whose last field
// expired is gone everywhere, and the nodes' digests are equal.
func TestClusterHashFieldExpiry(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader, follower := testutil.Dial(t, c.Nodes[l].Addr), testutil.Dial(t, c.Nodes[f].Addr)

	expect(t, leader.Do("HSET", "h", "a", "1", "b", "2", "c", "3"), ":3")
	expect(t, follower.Do("HPEXPIRE", "h", "150", "FIELDS", "2", "a", "b"), "[:1, :1]")
	expect(t, leader.Do("HEXPIRE", "h", "100", "FIELDS", "1", "c"), "[:1]")
	expect(t, follower.Do("HPERSIST", "h", "FIELDS", "1", "c"), "[:1]")
	expect(t, leader.Do("HSET", "gone", "x", "1"), ":1")
	expect(t, leader.Do("HPEXPIRE", "gone", "150", "FIELDS", "1", "x"), "[:1]")
	expect(t, follower.Do("HTTL", "h", "FIELDS", "1", "c"), "[:-1]")

	deadline := time.Now().Add(5 * time.Second)
	for follower.Do("DBSIZE").Int != 1 { // active expiry removed "gone"
		if time.Now().After(deadline) {
			t.Fatalf("the follower still has %s keys after 5 s", follower.Do("DBSIZE"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	expect(t, follower.Do("HLEN", "h"), ":1")
	expect(t, follower.Do("HGETALL", "h"), `["c", "3"]`)
	c.WaitConverged(t, 10*time.Second)
}
