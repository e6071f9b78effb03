package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClusterPubSubCounts: a message published on any node reaches the
// subscribers of every node, and PUBLISH answers, as in Redis Cluster, how
// many subscribers of the node the client is connected to got it, outside
// and inside MULTI, on the leader and on followers; a message to oneself
// comes before the reply; a RESP2 subscriber on a follower is in
// subscribed mode even after its commands went to the leader; a node cut
// off from the leader answers PUBLISH after a bounded wait.
func TestClusterPubSubCounts(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	o := 3 - l - f // the other follower
	dial := func(node int) *testutil.Conn { return testutil.Dial(t, c.Nodes[node].Addr) }

	// Two subscribers on the leader, a channel and a pattern subscriber on
	// f, none on o.
	var subs []*testutil.Conn
	for _, s := range []struct {
		node int
		cmd  []string
	}{{l, []string{"SUBSCRIBE", "ch"}}, {l, []string{"SUBSCRIBE", "ch"}}, {f, []string{"SUBSCRIBE", "ch"}}, {f, []string{"PSUBSCRIBE", "c*"}}} {
		conn := dial(s.node)
		if r := conn.Do(s.cmd...); r.IsError() {
			t.Fatalf("%v: %v", s.cmd, r)
		}
		subs = append(subs, conn)
	}
	received := func(msg string) {
		t.Helper()
		for i, s := range subs {
			if r := s.Read(); len(r.Elems) < 3 || r.Elems[len(r.Elems)-1].Str != msg {
				t.Errorf("subscriber %d got %v, want message %q", i, r, msg)
			}
		}
	}
	pubs := map[int]*testutil.Conn{l: dial(l), f: dial(f), o: dial(o)}
	count := map[int]string{l: ":2", f: ":2", o: ":0"} // f: the channel and the pattern
	numsub := map[int]string{l: `["ch", :2]`, f: `["ch", :1]`, o: `["ch", :0]`}
	for i, node := range []int{l, f, o} {
		msg := fmt.Sprint("m", i)
		expect(t, pubs[node].Do("PUBLISH", "ch", msg), count[node])
		received(msg)
	}

	// Inside MULTI the message goes out with the transaction; PUBSUB is
	// about the client's node, as outside.
	for i, node := range []int{f, l, o} {
		p := pubs[node]
		msg := fmt.Sprint("x", i)
		expect(t, p.Do("MULTI"), "+OK")
		for _, cmd := range [][]string{{"PUBLISH", "ch", msg}, {"SET", "k", msg}, {"PUBLISH", "nobody", "y"}, {"PUBSUB", "NUMSUB", "ch"}} {
			expect(t, p.Do(cmd...), "+QUEUED")
		}
		expect(t, p.Do("EXEC"), "["+count[node]+", +OK, :0, "+numsub[node]+"]")
		received(msg)
	}

	// A RESP3 subscriber's message to itself comes before PUBLISH's reply.
	self := dial(o)
	self.Do("HELLO", "3")
	expect(t, self.Do("SUBSCRIBE", "self"), `>["subscribe", "self", :1]`)
	self.Send(testutil.Command("PUBLISH", "self", "hi"))
	expect(t, self.Read(), `>["message", "self", "hi"]`)
	expect(t, self.Read(), ":1")

	// A RESP2 client of a follower whose commands went to the leader is
	// in subscribed mode once it subscribes.
	sm := dial(f)
	expect(t, sm.Do("SET", "a", "1"), "+OK")
	expect(t, sm.Do("SUBSCRIBE", "z"), `["subscribe", "z", :1]`)
	expect(t, sm.Do("GET", "a"), "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	expect(t, sm.Do("PING"), `["pong", ""]`)

	// A follower cut off from the others: the leader commits its client's
	// PUBLISH with the other follower, and the follower, which cannot
	// apply it, answers 0 after its bounded wait.
	expect(t, dial(f).Do("RAFT", "ISOLATE", "on"), "+OK")
	defer dial(f).Do("RAFT", "ISOLATE", "off")
	start := time.Now()
	expect(t, pubs[f].Do("PUBLISH", "ch", "cut"), ":0")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("PUBLISH through a cut-off follower took %v", d)
	}
	for _, s := range subs[:2] { // the leader's subscribers got it
		if r := s.Read(); len(r.Elems) != 3 || r.Elems[2].Str != "cut" {
			t.Errorf("a subscriber on the leader got %v", r)
		}
	}
}

// TestShardChannelsFollowLeadership: a shard channel's subscribers are on
// the leader of its slot's shard, where SPUBLISH delivers. When that
// leadership moves away (here: back to the preferred node once it
// returns), the node unsubscribes them with an sunsubscribe message, as
// Redis does when a node loses a slot, and the client subscribes again at
// the new leader.
func TestShardChannelsFollowLeadership(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "3")
	c.WaitBalanced(t, 30*time.Second, 1)
	preferred := c.SlotLeader(t, "schan")
	c.Nodes[preferred].Kill()

	// The shard elects another leader: subscribe there.
	var sub *testutil.Conn
	var at int
	for deadline := time.Now().Add(20 * time.Second); sub == nil; {
		for i, p := range c.Nodes {
			if i == preferred {
				continue
			}
			conn := testutil.Dial(t, p.Addr)
			if r := conn.Do("SSUBSCRIBE", "schan"); r.String() == `["ssubscribe", "schan", :1]` {
				sub, at = conn, i
				break
			}
			conn.Close()
		}
		if sub == nil && time.Now().After(deadline) {
			t.Fatal("no node took the subscription after the shard's leader died")
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer sub.Close()
	pub := testutil.Dial(t, c.Nodes[at].Addr)
	expect(t, pub.Do("SPUBLISH", "schan", "one"), ":1")
	expect(t, sub.Read(), `["smessage", "schan", "one"]`)
	pub.Close()

	// The preferred node returns and takes the shard back: the subscriber
	// is told, and is no longer subscribed.
	c.Nodes[preferred].Restart(t)
	c.WaitBalanced(t, 30*time.Second, 1)
	expect(t, sub.Read(), `["sunsubscribe", "schan", :0]`)
	if r := sub.Do("SSUBSCRIBE", "schan"); !strings.HasPrefix(r.Str, "MOVED ") {
		t.Errorf("SSUBSCRIBE where the slot's shard is no longer led = %v, want MOVED", r)
	}
	if r := sub.Do("PING"); r.String() != "+PONG" {
		t.Errorf("PING after the lost subscription = %v: the client is still in subscribed mode", r)
	}
	again := testutil.Dial(t, c.Nodes[preferred].Addr)
	defer again.Close()
	expect(t, again.Do("SSUBSCRIBE", "schan"), `["ssubscribe", "schan", :1]`)
	pub = testutil.Dial(t, c.Nodes[preferred].Addr)
	defer pub.Close()
	expect(t, pub.Do("SPUBLISH", "schan", "two"), ":1")
	expect(t, again.Read(), `["smessage", "schan", "two"]`)
}
