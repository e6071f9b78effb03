package cluster

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// A cluster of 5 nodes with 5 shards of 3 replicas (the default
// cluster-replicas): each node holds 3 shards and leads one, and learns
// the leaders of the 2 it does not hold from the others' leadership news.
// Every node describes the same cluster; a node sends a command for a
// shard it does not hold to that shard's leader (MOVED, or the proxy);
// PUBLISH reaches every node's subscribers; a killed node's shards elect leaders among their other replicas, which the
// nodes that hold none of them learn too; and each shard's replicas agree.
func TestShardedPlacement(t *testing.T) {
	c := testutil.StartNodes(t, 5, "--cluster-enabled", "yes", "--cluster-shards", "5")
	c.WaitBalanced(t, 30*time.Second, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	shards := clusterShards(t, ctx, c.Nodes[0].Addr)
	if len(shards) != 5 {
		t.Fatalf("CLUSTER SHARDS: %d shards, want 5: %+v", len(shards), shards)
	}
	held := map[string]int{}
	for _, sh := range shards {
		if len(sh.Nodes) != 3 || sh.Nodes[0].Role != "master" {
			t.Fatalf("a shard of %d nodes, the first a %s; want 3, a master first: %+v", len(sh.Nodes), sh.Nodes[0].Role, sh)
		}
		for _, n := range sh.Nodes {
			held[n.Endpoint+":"+strconv.FormatInt(n.Port, 10)]++
		}
	}
	for _, p := range c.Nodes {
		if held[p.Addr] != 3 {
			t.Fatalf("node %s holds %d shards, want 3 (%v)", p.Addr, held[p.Addr], held)
		}
	}

	addrs := make([]string, len(c.Nodes))
	for i, p := range c.Nodes {
		addrs[i] = p.Addr
	}
	rdb := newClusterClient(addrs)
	defer rdb.Close()
	acked := ackedWrites{}
	write := func(round int) { acked.write(t, ctx, rdb, round, 200) }
	check := func(what string) { acked.check(t, ctx, rdb, what) }
	write(1)
	check("after the first writes")

	// Each node answers a key of a shard it leads, and MOVEs every other
	// to its leader, whether or not it holds a replica; with the proxy on,
	// it runs it there.
	leaderOf := slotLeaders(t, ctx, c.Nodes[0].Addr)
	for _, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		for i := range 20 {
			k := "k" + strconv.Itoa(i)
			r := conn.Do("GET", k)
			leader := leaderOf[cluster.KeySlot([]byte(k))]
			want := "MOVED " + strconv.Itoa(int(cluster.KeySlot([]byte(k)))) + " " + leader
			if leader == p.Addr && r.Str != "1" || leader != p.Addr && r.Str != want {
				t.Fatalf("node %s: GET %s = %v; want 1 or %q", p.Addr, k, r, want)
			}
		}
		if r := conn.Do("CLIENT", "PROXY", "ON"); r.String() != "+OK" {
			t.Fatalf("CLIENT PROXY ON: %v", r)
		}
		for i := range 20 {
			if r := conn.Do("GET", "k"+strconv.Itoa(i)); r.Str != "1" {
				t.Fatalf("node %s, proxied: GET k%d = %v", p.Addr, i, r)
			}
		}
		conn.Close()
	}

	// PUBLISH on any node reaches the subscribers of every node, those
	// that hold no replica of the shard it went through too.
	var subs []*redis.PubSub
	for _, p := range c.Nodes {
		conn := redis.NewClient(&redis.Options{Addr: p.Addr})
		defer conn.Close()
		sub := conn.Subscribe(ctx, "news")
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		if r := conn.Do("PUBLISH", "news", "from "+strconv.Itoa(i)); r.String() != ":1" {
			t.Errorf("PUBLISH on node %d = %v; want :1 (its own subscriber)", i+1, r)
		}
		conn.Close()
		for j, sub := range subs {
			msg, err := sub.ReceiveTimeout(ctx, 5*time.Second)
			if m, ok := msg.(*redis.Message); err != nil || !ok || m.Payload != "from "+strconv.Itoa(i) {
				t.Fatalf("node %d's subscriber, PUBLISH on node %d: %v %v", j+1, i+1, msg, err)
			}
		}
	}

	// SIGKILL a node: the shards it held elect leaders among their other
	// replicas, and every node learns them.
	c.Nodes[0].Kill()
	write(2)
	check("with node 1 down")
	c.Nodes[0].Restart(t)
	c.WaitBalanced(t, 30*time.Second, 1)
	check("after node 1 came back")
	replicasAgree(t, ctx, c, acked)
}

func clusterShards(t *testing.T, ctx context.Context, addr string) []redis.ClusterShard {
	t.Helper()
	conn := redis.NewClient(&redis.Options{Addr: addr})
	defer conn.Close()
	shards, err := conn.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return shards
}

// slotLeaders maps each slot to its leader's address, by CLUSTER SLOTS.
func slotLeaders(t *testing.T, ctx context.Context, addr string) map[uint16]string {
	t.Helper()
	conn := redis.NewClient(&redis.Options{Addr: addr})
	defer conn.Close()
	slots, err := conn.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint16]string{}
	for _, s := range slots {
		for slot := s.Start; slot <= s.End; slot++ {
			out[uint16(slot)] = s.Nodes[0].Addr
		}
	}
	return out
}

// replicasAgree waits until every replica of each key's shard, read with
// READONLY, has the value last acknowledged.
func replicasAgree(t *testing.T, ctx context.Context, c *testutil.Cluster, acked ackedWrites) {
	t.Helper()
	holders := map[uint16][]string{} // slot -> its shard's nodes
	for _, sh := range clusterShards(t, ctx, c.Nodes[0].Addr) {
		for _, r := range sh.Slots {
			for slot := r.Start; slot <= r.End; slot++ {
				for _, n := range sh.Nodes {
					holders[uint16(slot)] = append(holders[uint16(slot)], net.JoinHostPort(n.Endpoint, strconv.FormatInt(n.Port, 10)))
				}
			}
		}
	}
	conns := map[string]*testutil.Conn{}
	for _, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		defer conn.Close()
		if r := conn.Do("READONLY"); r.String() != "+OK" {
			t.Fatalf("READONLY: %v", r)
		}
		conns[p.Addr] = conn
	}
	deadline := time.Now().Add(20 * time.Second)
	for k, v := range acked {
		for _, addr := range holders[cluster.KeySlot([]byte(k))] {
			for {
				r := conns[addr].Do("GET", k)
				if r.Str == strconv.Itoa(v) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("replica %s: GET %s = %v; want %d", addr, k, r, v)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}
