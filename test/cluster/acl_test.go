package cluster

import (
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestACLOnFollower: ACL users are per node. A follower checks its
// clients' commands with its own users before forwarding them; the
// leader, which runs their scripts, must have the same user (else the
// client gets NOPERM, not the leader's default user), and checks each
// redis.call of those scripts.
func TestACLOnFollower(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	leader := c.WaitLeader(t, 10*time.Second)
	follower := c.Follower(t)
	rules := []string{"ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+@read", "+@write", "+eval"}
	f := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, f.Do(rules...), "+OK")

	app := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, app.Do("AUTH", "app", "pw"), "+OK")
	if r := app.Do("SET", "other", "x"); !strings.HasPrefix(r.Str, "NOPERM this user has no permissions to access one of the keys") {
		t.Errorf("SET other on the follower: %v", r)
	}
	// The leader does not know app: nothing is forwarded as someone else.
	if r := app.Do("SET", "app:1", "x"); !strings.HasPrefix(r.Str, "NOPERM this user cannot authenticate on the leader") {
		t.Errorf("SET app:1 with app unknown to the leader: %v", r)
	}

	l := testutil.Dial(t, c.Nodes[leader].Addr)
	expect(t, l.Do(rules...), "+OK")
	app2 := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, app2.Do("AUTH", "app", "pw"), "+OK")
	expect(t, app2.Do("SET", "app:1", "x"), "+OK")
	if r := app2.Do("EVAL", "return redis.call('set', 'other', 'y')", "0"); !strings.Contains(r.Str, "The user executing the script can't access at least one of the keys") {
		t.Errorf("a forwarded script writing a key its user may not: %v", r)
	}
	if r := l.Do("EXISTS", "other"); r.Int != 0 {
		t.Errorf("the refused call wrote: EXISTS other = %v", r)
	}
}
