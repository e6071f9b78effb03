package cluster

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// A sharded cluster of 3 nodes (6 shards, each replicated on every node,
// one authenticated connection between two nodes for all of them):
// leaders spread evenly, go-redis's ClusterClient follows MOVED, a node's
// SIGKILL moves its shards' leadership without losing an acknowledged
// write, the node rejoins and takes its shards back, and with a majority
// gone the shards answer CLUSTERDOWN until it returns.
func TestShardedCluster(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "6", "--cluster-secret", "a-secret-for-the-sharded-test")
	c.WaitBalanced(t, 30*time.Second, 2)
	checkLinks(t, c)

	addrs := []string{c.Nodes[0].Addr, c.Nodes[1].Addr, c.Nodes[2].Addr}
	rdb := newClusterClient(addrs)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	acked := ackedWrites{}
	write := func(round int) { acked.write(t, ctx, rdb, round, 300) }
	check := func(what string) { acked.check(t, ctx, rdb, what) }
	write(1)
	check("after the first writes")
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		// A node serves the keys of the shards it leads, and MOVEs the rest.
		r := conn.Do("GET", "k1")
		if !r.IsError() && r.Str != "1" || r.IsError() && !strings.HasPrefix(r.Str, "MOVED ") {
			t.Errorf("node %d: GET k1 = %v", i+1, r)
		}
		conn.Close()
	}
	// WAIT and WAITAOF count the replicas of the shard the client last wrote to: each
	// node, after a write to a shard it leads, sees both other replicas.
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		for j := 0; ; j++ {
			if j == 100 {
				t.Fatalf("node %d leads none of 100 keys", i+1)
			}
			if r := conn.Do("SET", "w"+strconv.Itoa(i)+"-"+strconv.Itoa(j), "1"); !r.IsError() {
				break
			}
		}
		if r := conn.Do("WAIT", "2", "5000"); r.String() != ":2" {
			t.Errorf("node %d: WAIT 2 after a write = %v", i+1, r)
		}
		if r := conn.Do("WAITAOF", "1", "2", "5000"); r.String() != "[:1, :2]" {
			t.Errorf("node %d: WAITAOF 1 2 after a write = %v", i+1, r)
		}
		conn.Close()
	}
	if n, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "{acct}:a")
		p.IncrBy(ctx, "{acct}:b", 2)
		return nil
	}); err != nil || len(n) != 2 {
		t.Fatalf("MULTI/EXEC: %v %v", n, err)
	}

	// SIGKILL a node: its shards elect leaders on the others.
	c.Nodes[1].Kill()
	write(2)
	check("with node 2 down")
	c.Nodes[1].Restart(t)
	c.WaitBalanced(t, 20*time.Second, 2)
	check("after node 2 came back")
	c.WaitConverged(t, 20*time.Second)

	// Two of three down: no shard has a majority, and none takes a write.
	c.Nodes[1].Kill()
	c.Nodes[2].Kill()
	conn := testutil.Dial(t, c.Nodes[0].Addr)
	awaitClusterDown(t, conn, "k1", 15*time.Second, "with a majority down")
	conn.Close()
	c.Nodes[1].Restart(t)
	c.Nodes[2].Restart(t)
	c.WaitBalanced(t, 20*time.Second, 2)
	write(3)
	check("after the majority came back")
	c.WaitConverged(t, 20*time.Second)
}

// TestShardedProxy: with cluster-proxy, a client that knows nothing of
// the cluster (a plain connection, redis-cli without -c) works against any
// node: the commands of slots another node leads run there, and the
// replies of a pipeline mixing them come back in order. CLIENT PROXY OFF
// gives MOVED again. redis-benchmark --cluster runs against the cluster too.
func TestShardedProxy(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "6", "--cluster-proxy", "yes")
	c.WaitBalanced(t, 30*time.Second, 2)
	conn := testutil.Dial(t, c.Nodes[0].Addr)
	defer conn.Close()
	// A pipeline of writes and reads over every shard, most of them led
	// by the other nodes.
	var raw []byte
	for i := range 200 {
		k := "p" + strconv.Itoa(i)
		raw = append(raw, testutil.Command("SET", k, strconv.Itoa(i))...)
		raw = append(raw, testutil.Command("GET", k)...)
	}
	conn.Send(raw)
	for i := range 200 {
		if r := conn.Read(); r.String() != "+OK" {
			t.Fatalf("SET p%d = %v", i, r)
		}
		if r := conn.Read(); r.Str != strconv.Itoa(i) {
			t.Fatalf("GET p%d = %v, want %d", i, r, i)
		}
	}
	// A blocking pop served on another node.
	other := testutil.Dial(t, c.Nodes[1].Addr)
	defer other.Close()
	conn.Send(testutil.Command("BLPOP", "queue", "5"))
	time.Sleep(100 * time.Millisecond)
	other.Do("RPUSH", "queue", "job")
	if r := conn.Read(); r.String() != `["queue", "job"]` {
		t.Fatalf("BLPOP = %v", r)
	}
	// redis-cli without -c.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		for i := range 20 {
			out, err := exec.Command(cli, "-p", strconv.Itoa(c.Nodes[2].Port), "GET", "p"+strconv.Itoa(i)).Output()
			if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(i) {
				t.Fatalf("redis-cli GET p%d = %q, %v", i, out, err)
			}
		}
	}
	// redis-benchmark --cluster (it needs more than one node) spreads its
	// keys over the masters CLUSTER NODES shows.
	if bench, err := exec.LookPath("redis-benchmark"); err == nil {
		out, err := exec.Command(bench, "--cluster", "-p", strconv.Itoa(c.Nodes[0].Port), "-t", "set,get", "-n", "2000", "-c", "10", "-r", "1000", "-q").CombinedOutput()
		text := strings.ReplaceAll(string(out), "\r", "\n")
		if err != nil || !strings.Contains(text, "SET: ") || !strings.Contains(text, "GET: ") {
			t.Fatalf("redis-benchmark --cluster: %v\n%s", err, text)
		}
	}
	// Without the proxy, a key another node leads is MOVED.
	if r := conn.Do("CLIENT", "PROXY", "OFF"); r.String() != "+OK" {
		t.Fatalf("CLIENT PROXY OFF = %v", r)
	}
	moved := 0
	for i := range 50 {
		r := conn.Do("GET", "p"+strconv.Itoa(i))
		if r.IsError() && strings.HasPrefix(r.Str, "MOVED ") {
			moved++
		} else if r.Str != strconv.Itoa(i) {
			t.Fatalf("GET p%d without the proxy = %v", i, r)
		}
	}
	if moved == 0 {
		t.Fatal("no key was MOVED with CLIENT PROXY OFF")
	}
}

// newClusterClient is go-redis's ClusterClient for a cluster's tests: it
// follows MOVED and retries through a failover.
func newClusterClient(addrs []string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16,
		MinRetryBackoff: 20 * time.Millisecond, MaxRetryBackoff: 200 * time.Millisecond, MaxRetries: 20})
}

// ackedWrites are the values last acknowledged for each key.
type ackedWrites map[string]int

// write SETs keys k0..k(n-1) to round, each acknowledged. A SET whose
// outcome is unknown is sent again, as a client would: its leader lost
// leadership before the reply (with a node down, a loaded follower's slow
// disk can make it miss raft's quorum check), and either way the key ends
// at round.
func (a ackedWrites) write(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, round, n int) {
	t.Helper()
	for i := range n {
		k := "k" + strconv.Itoa(i)
		err := rdb.Set(ctx, k, round, 0).Err()
		for retries := 0; err != nil && strings.HasSuffix(err.Error(), "the write may or may not have been applied") && retries < 5; retries++ {
			err = rdb.Set(ctx, k, round, 0).Err()
		}
		if err != nil {
			t.Fatalf("round %d: SET %s: %v", round, k, err)
		}
		a[k] = round
	}
}

// check reads every key back: each has its acknowledged value.
func (a ackedWrites) check(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, what string) {
	t.Helper()
	for k, v := range a {
		if got, err := rdb.Get(ctx, k).Int(); err != nil || got != v {
			t.Fatalf("%s: GET %s = %d, %v; want %d", what, k, got, err, v)
		}
	}
}

// TestShardedProxyFailover: a plain client of a node that proxies sees the
// SIGKILL of the node leading its keys' shards as a pause, on the same
// connection, as a follower's clients do outside cluster mode
// (TestFailoverUnnoticed). A read in flight runs again on the shard's new
// leader (another node, or this one); a write in flight fails saying its
// outcome is unknown; the commands sent during the election wait for its
// outcome instead of failing or getting MOVED.
func TestShardedProxyFailover(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "6", "--cluster-proxy", "yes")
	c.WaitBalanced(t, 30*time.Second, 2)
	// Keys of both shards that node 2 leads (most likely: 8 random keys).
	var keys []string
	for i := 0; len(keys) < 8; i++ {
		if k := "f" + strconv.Itoa(i); c.SlotLeader(t, k) == 1 {
			keys = append(keys, k)
		}
	}
	loops := startUnnoticedLoops(t, c.Nodes[0].Addr, keys)
	time.Sleep(300 * time.Millisecond)
	c.Nodes[1].Kill()
	time.Sleep(4 * time.Second) // an election and some
	// Node 2 comes back, and its shards' leadership moves back to it: a
	// command proxied to their leader of the moment meanwhile is answered
	// MOVED there, and goes to the new one.
	c.Nodes[1].Restart(t)
	c.WaitBalanced(t, 30*time.Second, 2)
	time.Sleep(500 * time.Millisecond)
	loops.check(t, "a client of node 1")
}

// TestShardedTopologyMismatch: a node started with other cluster flags than
// the cluster's (--cluster-shards 3 where the others run 6) computes
// another topology. It must serve no key under it, or two nodes would take
// writes for one slot in two shards; restarted, it takes the cluster's
// topology from the metadata group and serves.
func TestShardedTopologyMismatch(t *testing.T) {
	var raftAddrs, members []string
	for i := 1; i <= 3; i++ {
		raftAddrs = append(raftAddrs, "127.0.0.1:"+strconv.Itoa(testutil.FreePort(t)))
		members = append(members, strconv.Itoa(i)+"="+raftAddrs[i-1])
	}
	start := func(i int, shards string) *testutil.Proc {
		return testutil.StartBasalt(t, "", "--node-id", strconv.Itoa(i), "--raft-addr", raftAddrs[i-1],
			"--initial-cluster", strings.Join(members, ","), "--cluster-enabled", "yes", "--cluster-shards", shards)
	}
	// Nodes 1 and 2 commit their topology (6 shards) before node 3 starts.
	n1, n2 := start(1, "6"), start(2, "6")
	waitState := func(p *testutil.Proc, state string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			conn := testutil.Dial(t, p.Addr)
			info := conn.Do("CLUSTER", "INFO").Str
			conn.Close()
			if strings.Contains(info, "cluster_state:"+state) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: cluster_state is not %s:\n%s", p.Addr, state, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitState(n1, "ok")
	n3 := start(3, "3")
	conn := testutil.Dial(t, n3.Addr)
	defer conn.Close()
	awaitClusterDown(t, conn, "k", 10*time.Second, "node 3, with another topology")
	if log, _ := os.ReadFile(n3.Log); !strings.Contains(string(log), "topology differs from the cluster's") {
		t.Errorf("node 3 does not log why it serves nothing")
	}
	waitState(n3, "fail")
	conn.Close()

	n3.Kill()
	n3.Restart(t)
	waitState(n3, "ok")
	// Its view is the cluster's, and one slot has one shard: a key written
	// through any node reads back the same through every node.
	var views []string
	for _, p := range []*testutil.Proc{n1, n2, n3} {
		c := testutil.Dial(t, p.Addr)
		views = append(views, c.Do("CLUSTER", "SHARDS").String())
		c.Close()
	}
	for i, v := range views[1:] {
		// The leaders may still move (node 3 takes its shards back):
		// compare the slot ranges only.
		if slotsOf(v) != slotsOf(views[0]) {
			t.Errorf("node %d's shards differ from node 1's:\n%s\n%s", i+2, v, views[0])
		}
	}
	rdb := newClusterClient([]string{n1.Addr, n2.Addr, n3.Addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acked := ackedWrites{}
	acked.write(t, ctx, rdb, 1, 50)
	acked.check(t, ctx, rdb, "after node 3 took the cluster's topology")
}

// slotsOf is the sorted slot ranges a CLUSTER SHARDS reply shows.
func slotsOf(shards string) string {
	var ranges []string
	for _, f := range strings.Split(shards, "\"slots\", [")[1:] {
		ranges = append(ranges, f[:strings.Index(f, "]")])
	}
	slices.Sort(ranges)
	return strings.Join(ranges, " ")
}

// TestShardedProxyTransactions: through the proxy, a plain client's
// transaction on keys another node leads runs there (MULTI, the commands
// and EXEC sent at EXEC), with its WATCHes, as on one node; WATCHes here
// and commands there get CROSSSLOT. go-redis's plain Client (not the
// cluster one) runs its optimistic-locking loop against any node.
func TestShardedProxyTransactions(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "3", "--cluster-proxy", "yes")
	c.WaitBalanced(t, 30*time.Second, 1)
	// A hash tag node 2 leads, and one node 1 leads.
	tagOf := func(node int) string {
		for i := 0; ; i++ {
			if tag := "{t" + strconv.Itoa(i) + "}"; c.SlotLeader(t, tag) == node {
				return tag
			}
		}
	}
	remote, local := tagOf(1), tagOf(0)
	conn := testutil.Dial(t, c.Nodes[0].Addr)
	defer conn.Close()
	other := testutil.Dial(t, c.Nodes[2].Addr) // proxies too
	defer other.Close()
	do := func(want string, args ...string) {
		t.Helper()
		if r := conn.Do(args...); r.String() != want {
			t.Errorf("%v = %v, want %s", args, r, want)
		}
	}
	a, b, x := remote+"a", remote+"b", local+"x"

	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "1")
	do("+QUEUED", "INCR", b)
	do("[+OK, :1]", "EXEC")

	// WATCH there: a change by another client aborts the EXEC.
	do("+OK", "WATCH", a)
	do(`"1"`, "GET", a)
	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "2")
	do("[+OK]", "EXEC")
	do("+OK", "WATCH", a)
	other.Do("SET", a, "changed")
	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "3")
	do("(nil-array)", "EXEC")
	do(`"changed"`, "GET", a)

	// UNWATCH and DISCARD forget the WATCHes there.
	do("+OK", "WATCH", a)
	do("+OK", "UNWATCH")
	other.Do("SET", a, "again")
	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "4")
	do("[+OK]", "EXEC")
	do("+OK", "WATCH", a)
	do("+OK", "MULTI")
	do("+OK", "DISCARD")
	other.Do("SET", a, "again")
	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "5")
	do("[+OK]", "EXEC")

	// One node's transaction: keys here and there, or WATCHes here and
	// commands there, are CROSSSLOT.
	do("+OK", "MULTI")
	do("+QUEUED", "SET", a, "6")
	do("+QUEUED", "SET", x, "6")
	do("-CROSSSLOT Keys in request don't hash to the same slot", "EXEC")
	do("+OK", "WATCH", a)
	do("+OK", "MULTI")
	do("+QUEUED", "SET", x, "7")
	do("-CROSSSLOT Keys in request don't hash to the same slot", "EXEC")
	do("+OK", "WATCH", x)
	do("-CROSSSLOT Keys in request don't hash to the same slot", "WATCH", a)
	do("+OK", "UNWATCH")
	// A command refused when queued aborts the transaction, as on one node.
	do("+OK", "MULTI")
	do("-ERR wrong number of arguments for 'set' command", "SET", a)
	do("-EXECABORT Transaction discarded because of previous errors.", "EXEC")
	do(`"5"`, "GET", a)

	// go-redis's plain client: WATCH, GET, MULTI/EXEC, retried on a
	// conflict, from two nodes at once.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	counter := remote + "counter"
	var wg sync.WaitGroup
	for _, n := range []int{0, 2} {
		rdb := redis.NewClient(&redis.Options{Addr: c.Nodes[n].Addr})
		defer rdb.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						v, err := tx.Get(ctx, counter).Int()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, counter, v+1, 0)
							return nil
						})
						return err
					}, counter)
					if err == nil {
						break
					}
					if err != redis.TxFailedErr {
						t.Errorf("node %d: %v", n+1, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	do(`"100"`, "GET", counter)
}

// checkLinks: CLUSTER LINKS on each node shows, for each other node (by
// its CLUSTER NODES name), the link it dials and at least one the other
// dials, in Redis's fields.
func checkLinks(t *testing.T, c *testutil.Cluster) {
	t.Helper()
	names := map[int]string{}
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		names[i] = conn.Do("CLUSTER", "MYID").Str
		conn.Close()
	}
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		reply := conn.Do("CLUSTER", "LINKS")
		conn.Close()
		seen := map[string]int{}
		for _, l := range reply.Elems {
			f := map[string]testutil.Reply{}
			for k := 0; k+1 < len(l.Elems); k += 2 {
				f[l.Elems[k].Str] = l.Elems[k+1]
			}
			if len(f) != 6 || f["create-time"].Int <= 0 || f["send-buffer-used"].Int < 0 {
				t.Errorf("node %d: CLUSTER LINKS entry %v", i+1, l)
			}
			seen[f["direction"].Str+" "+f["node"].Str]++
		}
		for j, name := range names {
			if j != i && (seen["to "+name] != 1 || seen["from "+name] < 1) {
				t.Errorf("node %d: CLUSTER LINKS = %v; want one link to node %d (%s) and one from it", i+1, reply, j+1, name)
			}
		}
	}
}

// awaitClusterDown SETs key through conn until the node answers
// CLUSTERDOWN, failing the test after timeout.
func awaitClusterDown(t *testing.T, conn *testutil.Conn, key string, timeout time.Duration, why string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		r := conn.Do("SET", key, "refused")
		if r.IsError() && r.Str == "CLUSTERDOWN The cluster is down" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: SET %s = %v; want CLUSTERDOWN", why, key, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
