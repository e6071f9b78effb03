package cluster

import (
	"slices"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClusterKeyspaceNotifications: every node publishes the keyspace
// notifications of the records it applies, so a subscriber on a follower
// hears of writes made through the leader (and through another follower),
// in log order with the messages PUBLISHed after them, and an expiry the
// leader proposes reaches every node's subscribers too.
func TestClusterKeyspaceNotifications(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--notify-keyspace-events", "Kx$lg")
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader, follower := testutil.Dial(t, c.Nodes[l].Addr), testutil.Dial(t, c.Nodes[f].Addr)

	subs := make([]*testutil.Conn, len(c.Nodes))
	for i, p := range c.Nodes {
		s := testutil.Dial(t, p.Addr)
		s.Send(testutil.Command("PSUBSCRIBE", "__keyspace@*__:*"))
		s.Read()
		s.Send(testutil.Command("SUBSCRIBE", "done"))
		s.Read()
		subs[i] = s
	}
	// events reads what subscriber i got until the message on "done".
	events := func(i int) []string {
		var got []string
		for {
			r := subs[i].Read()
			if r.Elems[0].Str == "message" {
				return got
			}
			got = append(got, r.Elems[2].Str+" "+r.Elems[3].Str)
		}
	}
	check := func(what string, want []string) {
		t.Helper()
		for i := range c.Nodes {
			if got := events(i); !slices.Equal(got, want) {
				t.Errorf("%s: node %d (leader %d) got %q, want %q", what, i+1, l+1, got, want)
			}
		}
	}

	expect(t, leader.Do("SET", "k", "v"), "+OK")
	expect(t, leader.Do("LPUSH", "l", "a", "b"), ":2")
	expect(t, leader.Do("RPOPLPUSH", "l", "l2"), `"a"`)
	expect(t, leader.Do("LPOP", "l"), `"b"`)
	expect(t, leader.Do("SADD", "s", "x"), ":1") // class s is off
	expect(t, leader.Do("DEL", "k", "nosuch", "s"), ":2")
	expect(t, leader.Do("SET", "k", "v", "NX"), "+OK")
	expect(t, leader.Do("SET", "k", "v", "NX"), "(nil)") // changes nothing: no event
	leader.Do("PUBLISH", "done", "1")
	check("writes through the leader", []string{
		"__keyspace@0__:k set", "__keyspace@0__:l lpush", "__keyspace@0__:l2 lpush",
		"__keyspace@0__:l rpop", "__keyspace@0__:l lpop", "__keyspace@0__:l del",
		"__keyspace@0__:k del", "__keyspace@0__:s del", "__keyspace@0__:k set",
	})

	expect(t, follower.Do("SELECT", "3"), "+OK")
	expect(t, follower.Do("INCR", "n"), ":1")
	expect(t, follower.Do("SET", "e", "v", "PX", "100"), "+OK")
	time.Sleep(500 * time.Millisecond) // the leader's active expiry runs
	follower.Do("PUBLISH", "done", "2")
	check("writes through a follower and an expiry", []string{
		"__keyspace@3__:n incrby", "__keyspace@3__:e set", "__keyspace@3__:e expire", "__keyspace@3__:e expired",
	})

	// Each node has its own setting.
	other := 3 - l - f // the third node
	o := testutil.Dial(t, c.Nodes[other].Addr)
	expect(t, o.Do("CONFIG", "SET", "notify-keyspace-events", ""), "+OK")
	expect(t, leader.Do("SET", "k", "w"), "+OK")
	leader.Do("PUBLISH", "done", "3")
	for i := range c.Nodes {
		want := []string{"__keyspace@0__:k set"}
		if i == other {
			want = nil
		}
		if got := events(i); !slices.Equal(got, want) {
			t.Errorf("after CONFIG SET on node %d: node %d got %q, want %q", other+1, i+1, got, want)
		}
	}
}
