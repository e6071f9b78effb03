package clients

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// The cluster clients run against one cluster of 3 nodes with 6 shards,
// each node leading 2 (TestClusterClients): each client discovers the
// topology (CLUSTER SLOTS/SHARDS/NODES), routes every key to the node that
// leads its slot (following MOVED where it must), and runs strings, hashes,
// a transaction and a script on hash-tagged keys, pub/sub and a stream
// consumer group. Each client has its own key prefix and hash tag, so its
// subtest runs alone too (-run TestClusterClients/redis-py).

// clusterClientTests are TestClusterClients's subtests, in order: keyspace,
// which flushes every node, goes last.
var clusterClientTests = []struct {
	name string
	run  func(t *testing.T, c *testutil.Cluster)
}{
	{"go-redis", testGoRedisCluster},
	{"rueidis", testRueidisCluster},
	{"redis-py", testRedisPyCluster},
	{"ioredis", func(t *testing.T, c *testutil.Cluster) { runNodeClusterScript(t, c, "cluster.js", "io") }},
	{"node-redis", func(t *testing.T, c *testutil.Cluster) { runNodeClusterScript(t, c, "cluster-node-redis.js", "nr") }},
	{"redis-cli", testRedisCLICluster},
	{"redis-benchmark", testRedisBenchmarkCluster},
	{"keyspace", testClusterKeySpace},
}

func TestClusterClients(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-enabled", "yes", "--cluster-shards", "6")
	c.WaitBalanced(t, 30*time.Second, 2)
	for _, tc := range clusterClientTests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// addrs lists the nodes' client addresses, the seeds the clients get.
func addrs(c *testutil.Cluster) []string {
	var a []string
	for _, p := range c.Nodes {
		a = append(a, p.Addr)
	}
	return a
}

// ports lists the nodes' client ports, comma-separated, for the scripts.
func ports(c *testutil.Cluster) string {
	var a []string
	for _, p := range c.Nodes {
		a = append(a, strconv.Itoa(p.Port))
	}
	return strings.Join(a, ",")
}

// subscribeEveryNode subscribes to channel on every node with a plain
// connection, and returns a check that each of them got message: a
// message PUBLISHed through any node reaches subscribers on all of them.
func subscribeEveryNode(t *testing.T, c *testutil.Cluster, channel string) (received func(message string)) {
	t.Helper()
	var subs []*testutil.Conn
	for _, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		if r := conn.Do("SUBSCRIBE", channel); !isPush(r, "subscribe", channel) {
			t.Fatalf("SUBSCRIBE %s on %s = %v", channel, p.Addr, r)
		}
		subs = append(subs, conn)
	}
	return func(message string) {
		t.Helper()
		for _, conn := range subs {
			if r := conn.Read(); !isPush(r, "message", channel, message) {
				t.Errorf("the subscriber on %s got %v, want %s on %s", conn.Addr, r, message, channel)
			}
		}
	}
}

// isPush reports whether r is a pub/sub reply of kind with the strings
// want after it (the rest not checked).
func isPush(r testutil.Reply, kind string, want ...string) bool {
	if len(r.Elems) < 1+len(want) || r.Elems[0].Str != kind {
		return false
	}
	for i, w := range want {
		if r.Elems[1+i].Str != w {
			return false
		}
	}
	return true
}

func testGoRedisCluster(t *testing.T, c *testutil.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(c)})
	defer rdb.Close()

	// Keys over every shard.
	for i := range 200 {
		if err := rdb.Set(ctx, "gr:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET gr:%d: %v", i, err)
		}
	}
	for i := range 200 {
		v, err := rdb.Get(ctx, "gr:"+strconv.Itoa(i)).Int()
		if err != nil || v != i {
			t.Fatalf("GET gr:%d = %d, %v", i, v, err)
		}
	}

	// Hashes, a transaction, a WATCH and a script, on one slot.
	if err := rdb.HSet(ctx, "{gr}:profile", "name", "ada", "visits", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.HGetAll(ctx, "{gr}:profile").Result(); err != nil || got["name"] != "ada" || got["visits"] != "1" {
		t.Fatalf("HGETALL = %v, %v", got, err)
	}
	cmds, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HIncrBy(ctx, "{gr}:profile", "visits", 1)
		pipe.Incr(ctx, "{gr}:logins")
		return nil
	})
	if err != nil || cmds[0].(*redis.IntCmd).Val() != 2 || cmds[1].(*redis.IntCmd).Val() != 1 {
		t.Fatalf("MULTI/EXEC: %v %v", cmds, err)
	}
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, "{gr}:logins").Int()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "{gr}:logins", n+10, 0)
			return nil
		})
		return err
	}, "{gr}:logins")
	if err != nil {
		t.Fatalf("WATCH transaction: %v", err)
	}
	sum := redis.NewScript(`return redis.call('incrby', KEYS[1], ARGV[1]) + redis.call('hget', KEYS[2], 'visits')`)
	if n, err := sum.Run(ctx, rdb, []string{"{gr}:logins", "{gr}:profile"}, 5).Int(); err != nil || n != 16+2 {
		t.Fatalf("script = %d, %v; want 18", n, err)
	}

	// Redis Cluster's errors.
	if err := rdb.MSet(ctx, "a", 1, "b", 2).Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Fatalf("MSET a b = %v, want CROSSSLOT", err)
	}
	if err := rdb.Do(ctx, "SELECT", 1).Err(); err == nil || err.Error() != "ERR SELECT is not allowed in cluster mode" {
		t.Fatalf("SELECT 1 = %v", err)
	}

	// Pub/sub: the client's own subscriber, and one on every node.
	received := subscribeEveryNode(t, c, "gr:news")
	sub := rdb.Subscribe(ctx, "gr:news")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, "gr:news", "hello").Err(); err != nil {
		t.Fatalf("PUBLISH: %v", err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "hello" {
		t.Fatalf("message = %v, %v", msg, err)
	}
	received("hello")

	// A stream consumer group.
	if err := rdb.XGroupCreateMkStream(ctx, "gr:jobs", "workers", "0").Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "gr:jobs", Values: []string{"n", strconv.Itoa(i)}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	streams, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{"gr:jobs", ">"}, Count: 10}).Result()
	if err != nil || len(streams) != 1 || len(streams[0].Messages) != 3 || streams[0].Messages[2].ID != ids[2] {
		t.Fatalf("XREADGROUP = %v, %v; want %v", streams, err, ids)
	}
	if n, err := rdb.XAck(ctx, "gr:jobs", "workers", ids[0]).Result(); err != nil || n != 1 {
		t.Fatalf("XACK = %d, %v", n, err)
	}
}

func testRueidisCluster(t *testing.T, c *testutil.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A client given one seed detects the cluster (CLUSTER SLOTS).
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{c.Nodes[1].Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if client.Mode() != rueidis.ClientModeCluster {
		t.Fatalf("rueidis took the node for a %s", client.Mode())
	}
	do := func(cmd rueidis.Completed) rueidis.RedisResult { return client.Do(ctx, cmd) }
	b := client.B()
	for i := range 100 {
		if err := do(b.Set().Key("ru:" + strconv.Itoa(i)).Value(strconv.Itoa(i)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		// Cached reads (client-side caching is rueidis's default).
		v, err := client.DoCache(ctx, b.Get().Key("ru:"+strconv.Itoa(i)).Cache(), time.Minute).ToString()
		if err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET ru:%d = %q, %v", i, v, err)
		}
	}

	// Hashes, a transaction and a script, on one slot.
	if err := do(b.Hset().Key("{ru}:h").FieldValue().FieldValue("a", "1").FieldValue("b", "2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if h, err := client.DoCache(ctx, b.Hgetall().Key("{ru}:h").Cache(), time.Minute).AsStrMap(); err != nil || h["a"] != "1" || h["b"] != "2" {
		t.Fatalf("HGETALL = %v, %v", h, err)
	}
	resps := client.DoMulti(ctx, b.Multi().Build(), b.Incr().Key("{ru}:n").Build(), b.Hincrby().Key("{ru}:h").Field("a").Increment(10).Build(), b.Exec().Build())
	if vals, err := resps[3].AsIntSlice(); err != nil || len(vals) != 2 || vals[0] != 1 || vals[1] != 11 {
		t.Fatalf("EXEC = %v, %v", vals, err)
	}
	sum := rueidis.NewLuaScript(`return redis.call('incr', KEYS[1]) + redis.call('hget', KEYS[2], 'a')`)
	if n, err := sum.Exec(ctx, client, []string{"{ru}:n", "{ru}:h"}, nil).AsInt64(); err != nil || n != 2+11 {
		t.Fatalf("script = %d, %v; want 13", n, err)
	}
	if err := do(b.Arbitrary("MSET").Args("x", "1", "y", "2").Build()).Error(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("MSET x y = %v, want CROSSSLOT", err)
	}

	// Pub/sub: the client's own subscriber, and one on every node.
	received := subscribeEveryNode(t, c, "ru:news")
	subscribed := make(chan struct{}, 1)
	messages := make(chan string, 1)
	subCtx := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" {
			select { // a resubscription must not block rueidis
			case subscribed <- struct{}{}:
			default:
			}
		}
	})
	receiving := make(chan error, 1)
	go func() {
		receiving <- client.Receive(subCtx, b.Subscribe().Channel("ru:news").Build(), func(m rueidis.PubSubMessage) { messages <- m.Message })
	}()
	select {
	case <-subscribed:
	case err := <-receiving:
		t.Fatalf("SUBSCRIBE: %v", err)
	case <-ctx.Done():
		t.Fatal("SUBSCRIBE was not confirmed")
	}
	if err := do(b.Publish().Channel("ru:news").Message("hello").Build()).Error(); err != nil {
		t.Fatalf("PUBLISH: %v", err)
	}
	select {
	case m := <-messages:
		if m != "hello" {
			t.Fatalf("message = %q", m)
		}
	case <-ctx.Done():
		t.Fatal("the client's subscriber got no message")
	}
	received("hello")
	if err := do(b.Unsubscribe().Channel("ru:news").Build()).Error(); err != nil {
		t.Fatal(err)
	}

	// A stream consumer group.
	if err := do(b.XgroupCreate().Key("ru:q").Group("g").Id("0").Mkstream().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		id, err := do(b.Xadd().Key("ru:q").Id("*").FieldValue().FieldValue("n", strconv.Itoa(i)).Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	read, err := do(b.Xreadgroup().Group("g", "c").Count(10).Streams().Key("ru:q").Id(">").Build()).AsXRead()
	if err != nil || len(read["ru:q"]) != 3 || read["ru:q"][2].ID != ids[2] || read["ru:q"][0].FieldValues["n"] != "0" {
		t.Fatalf("XREADGROUP = %v, %v; want %v", read, err, ids)
	}
	if n, err := do(b.Xack().Key("ru:q").Group("g").Id(ids[0]).Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("XACK = %d, %v", n, err)
	}
}

// testRedisCLICluster runs redis-cli -c, which follows MOVED from its seed
// node, and redis-cli --cluster check.
func testRedisCLICluster(t *testing.T, c *testutil.Cluster) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not installed (scripts/test.sh installs redis-tools)")
	}
	seed := strconv.Itoa(c.Nodes[0].Port)
	// redisCLI runs redis-cli -c against the seed and checks its output.
	redisCLI := func(want string, args ...string) {
		t.Helper()
		if out := runTool(t, "", cli, append([]string{"-c", "-p", seed}, args...)...); out != want {
			t.Fatalf("redis-cli -c %v = %q, want %q", args, out, want)
		}
	}
	for i := range 20 {
		redisCLI("OK", "SET", "cli:"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	for i := range 20 {
		redisCLI("v"+strconv.Itoa(i), "GET", "cli:"+strconv.Itoa(i))
	}
	redisCLI("2", "HSET", "{cli}:h", "a", "1", "b", "2")
	redisCLI("a\n1\nb\n2", "HGETALL", "{cli}:h")
	redisCLI("12", "EVAL", "return redis.call('hincrby', KEYS[1], 'a', 10) + redis.call('incr', KEYS[2])", "2", "{cli}:h", "{cli}:n")

	// A transaction is one connection's commands: redis-cli reads them
	// from stdin, on the node that leads the slot (a MOVED inside MULTI
	// would send the rest elsewhere).
	owner := strconv.Itoa(c.Nodes[c.SlotLeader(t, "{cli}:n")].Port)
	tx := runTool(t, "MULTI\nINCR {cli}:n\nHINCRBY {cli}:h b 5\nEXEC\n", cli, "-c", "-p", owner)
	if tx != "OK\nQUEUED\nQUEUED\n2\n7" {
		t.Fatalf("redis-cli -c MULTI/EXEC = %q", tx)
	}

	// redis-cli as a subscriber on the last node, and as the publisher.
	received := subscribeEveryNode(t, c, "cli:news")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	subscriber := exec.CommandContext(ctx, cli, "-p", strconv.Itoa(c.Nodes[2].Port), "SUBSCRIBE", "cli:news")
	stdout, err := subscriber.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := subscriber.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = subscriber.Process.Kill(); _ = subscriber.Wait() }()
	lines := bufio.NewScanner(stdout)
	readLines := func(n int) string {
		var got []string
		for len(got) < n && lines.Scan() {
			got = append(got, lines.Text())
		}
		return strings.Join(got, " ")
	}
	if got := readLines(3); got != "subscribe cli:news 1" {
		t.Fatalf("redis-cli SUBSCRIBE printed %q", got)
	}
	runTool(t, "", cli, "-c", "-p", seed, "PUBLISH", "cli:news", "hello")
	if got := readLines(3); got != "message cli:news hello" {
		t.Fatalf("redis-cli SUBSCRIBE printed %q, want the message", got)
	}
	received("hello")

	redisCLI("OK", "XGROUP", "CREATE", "cli:q", "g", "0", "MKSTREAM")
	id := runTool(t, "", cli, "-c", "-p", seed, "XADD", "cli:q", "*", "n", "1")
	redisCLI("cli:q\n"+id+"\nn\n1", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "cli:q", ">")
	redisCLI("1", "XACK", "cli:q", "g", id)

	check := runTool(t, "", cli, "--cluster", "check", c.Nodes[0].Addr)
	for _, want := range []string{"keys in 3 masters.", "[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered."} {
		if !strings.Contains(check, want) {
			t.Fatalf("redis-cli --cluster check lacks %q:\n%s", want, check)
		}
	}
}

// testRedisBenchmarkCluster runs redis-benchmark --cluster, which reads
// the masters from CLUSTER NODES and sends each key to its slot's node.
func testRedisBenchmarkCluster(t *testing.T, c *testutil.Cluster) {
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark is not installed")
	}
	out := runTool(t, "", bench, "--cluster", "-p", strconv.Itoa(c.Nodes[0].Port), "-t", "set,get", "-r", "1000", "-n", "2000", "-c", "10", "-q")
	if !strings.Contains(out, "Cluster has 3 master nodes") {
		t.Fatalf("redis-benchmark --cluster did not find 3 masters:\n%s", out)
	}
	for _, test := range []string{"SET", "GET"} {
		if !strings.Contains(out, test+": ") {
			t.Fatalf("redis-benchmark did not run %s:\n%s", test, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "error") {
		t.Fatalf("redis-benchmark --cluster got errors:\n%s", out)
	}
}

// runTool runs a command-line tool with stdin for at most 60s and returns
// its trimmed output, failing the test if it fails.
func runTool(t *testing.T, stdin, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// testRedisPyCluster runs redis_py_cluster.py with Debian's python3-redis.
func testRedisPyCluster(t *testing.T, c *testutil.Cluster) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import redis.cluster").Run(); err != nil {
		t.Skip("python3-redis is not installed (scripts/test.sh installs it)")
	}
	received := subscribeEveryNode(t, c, "py:news")
	if out := runTool(t, "", py, "redis_py_cluster.py", ports(c)); !strings.HasSuffix(out, "ok") {
		t.Fatalf("redis_py_cluster.py did not print ok:\n%s", out)
	}
	received("hello")
}

// runNodeClusterScript runs a script of node/ against the cluster, with
// the nodes' ports in BASALT_PORTS, for at most 60s. The script publishes
// "hello" on prefix:news.
func runNodeClusterScript(t *testing.T, c *testutil.Cluster, script, prefix string) {
	node := nodeReady(t)
	received := subscribeEveryNode(t, c, prefix+":news")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "BASALT_PORTS="+ports(c))
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("node %s did not finish within 60s:\n%s", script, out)
	}
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("node %s did not print ok:\n%s", script, out)
	}
	received("hello")
}

// testClusterKeySpace checks the commands over the whole key space on 3
// nodes: through go-redis's ClusterClient, which sums DBSIZE over the
// masters and reaches each master for the others (ForEachMaster), and on
// each node with a plain connection, where they cover the shards that node
// leads.
func testClusterKeySpace(t *testing.T, c *testutil.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(c)})
	defer rdb.Close()
	forEachMaster := func(fn func(m *redis.Client) error) {
		t.Helper()
		if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return fn(m) }); err != nil {
			t.Fatal(err)
		}
	}
	flushAll := func() {
		t.Helper()
		forEachMaster(func(m *redis.Client) error { return m.FlushAll(ctx).Err() })
		if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
			t.Fatalf("DBSIZE after FLUSHALL on every master = %d, %v", n, err)
		}
	}
	flushAll()

	// The keys each node should hold: those of the slots it leads.
	const keys = 150
	written := map[string]bool{}
	perNode := make([]map[string]bool, len(c.Nodes))
	for i := range perNode {
		perNode[i] = map[string]bool{}
	}
	for i := range keys {
		k := "ks:" + strconv.Itoa(i)
		if err := rdb.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		written[k] = true
		perNode[c.SlotLeader(t, k)][k] = true
	}
	for i, want := range perNode {
		if len(want) == 0 {
			t.Fatalf("node %d leads none of %d keys' slots", i+1, keys)
		}
	}

	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != keys {
		t.Fatalf("DBSIZE over the masters = %d, %v; want %d", n, err, keys)
	}
	var mu sync.Mutex
	scanned, listed := map[string]bool{}, map[string]bool{}
	masters := 0
	forEachMaster(func(m *redis.Client) error {
		var scan, all []string
		iter := m.Scan(ctx, 0, "*", 17).Iterator()
		for iter.Next(ctx) {
			scan = append(scan, iter.Val())
		}
		if iter.Err() != nil {
			return iter.Err()
		}
		all, err := m.Keys(ctx, "*").Result()
		if err != nil {
			return err
		}
		random, err := m.RandomKey(ctx).Result()
		if err != nil || !written[random] {
			return fmt.Errorf("RANDOMKEY on %s = %q, %v", m.Options().Addr, random, err)
		}
		mu.Lock()
		defer mu.Unlock()
		masters++
		for _, k := range scan {
			if scanned[k] {
				return fmt.Errorf("SCAN returned %s twice", k)
			}
			scanned[k] = true
		}
		for _, k := range all {
			listed[k] = true
		}
		return nil
	})
	if masters != 3 || !maps.Equal(scanned, written) || !maps.Equal(listed, written) {
		t.Fatalf("over %d masters SCAN found %d keys and KEYS %d; want %d", masters, len(scanned), len(listed), keys)
	}

	// Each node covers the shards it leads; the sum is the total.
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		if r := conn.Do("DBSIZE"); r.String() != ":"+strconv.Itoa(len(perNode[i])) {
			t.Errorf("node %d: DBSIZE = %v, want %d", i+1, r, len(perNode[i]))
		}
		got := map[string]bool{}
		for _, e := range conn.Do("KEYS", "*").Elems {
			got[e.Str] = true
		}
		if !maps.Equal(got, perNode[i]) {
			t.Errorf("node %d: KEYS * = %v, want %v", i+1, got, perNode[i])
		}
		if r := conn.Do("RANDOMKEY"); !perNode[i][r.Str] {
			t.Errorf("node %d: RANDOMKEY = %v, a key of another node", i+1, r)
		}
	}

	flushAll()
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		if r := conn.Do("DBSIZE"); r.String() != ":0" {
			t.Errorf("node %d: DBSIZE after FLUSHALL = %v", i+1, r)
		}
		if r := conn.Do("RANDOMKEY"); !r.IsNil() {
			t.Errorf("node %d: RANDOMKEY after FLUSHALL = %v", i+1, r)
		}
	}
}

// TestClusterRestart checks that a node keeps its shards' data and its
// topology across a restart, whatever cluster-shards says then.
func TestClusterRestart(t *testing.T) {
	dir := t.TempDir()
	p := testutil.StartBasalt(t, dir, "--cluster-enabled", "yes", "--cluster-shards", "3")
	c := testutil.Dial(t, p.Addr)
	id := c.Do("CLUSTER", "MYID").String()
	for i := range 50 {
		c.Do("SET", fmt.Sprintf("k%d", i), strconv.Itoa(i))
	}
	c.Close()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	p2 := testutil.StartBasalt(t, dir, "--cluster-enabled", "yes", "--cluster-shards", "5")
	c = testutil.Dial(t, p2.Addr)
	defer c.Close()
	if got := c.Do("CLUSTER", "MYID").String(); got != id {
		t.Fatalf("MYID after restart = %s, want %s", got, id)
	}
	if got := c.Do("DBSIZE").String(); got != ":50" {
		t.Fatalf("DBSIZE after restart = %s", got)
	}
	info := c.Do("INFO", "cluster").String()
	if strings.Count(info, "basalt_shard") != 3 {
		t.Fatalf("INFO cluster after restart shows other than 3 shards:\n%s", info)
	}
	if err := p2.Stop(); err != nil {
		t.Fatal(err)
	}
	// The same directory without cluster mode is refused.
	_, err := startErr(t, dir)
	if err == nil || !strings.Contains(err.Error(), "--cluster-enabled yes") {
		t.Fatalf("starting a cluster node's directory without cluster mode: %v", err)
	}
}

// startErr runs basalt on dir without cluster mode and returns its output
// as an error if it exits.
func startErr(t *testing.T, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	port := testutil.FreePort(t)
	out, err := exec.CommandContext(ctx, testutil.BasaltBinary(t), "--port", strconv.Itoa(port), "--dir", dir).CombinedOutput()
	if ctx.Err() != nil {
		return "", errors.New("basalt kept running")
	}
	if err != nil {
		return "", errors.New(string(out))
	}
	return string(out), nil
}

// TestClusterMetrics: /metrics of a node in cluster mode has each shard's
// figures under a shard label, and they move with writes to that shard.
func TestClusterMetrics(t *testing.T) {
	port := testutil.FreePort(t)
	p := testutil.StartBasalt(t, "", "--cluster-enabled", "yes", "--cluster-shards", "2", "--metrics-addr", "127.0.0.1:"+strconv.Itoa(port))
	scrape := func() string { return testutil.Metrics(t, port) }
	applied := func(text, shard string) int {
		prefix := `basalt_shard_applied_index{shard="` + shard + `"} `
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("/metrics lacks %s", prefix)
		return 0
	}
	before := scrape()
	for _, want := range []string{`basalt_shard_leader{shard="0"} 1`, `basalt_shard_leader{shard="1"} 1`, `basalt_shard_raft_term{shard="1"} `,
		`basalt_shard_apply_lag{shard="0"} 0`, `basalt_log_sync_seconds_count{shard="1"} `, `basalt_pebble_l0_files{shard="0"} `} {
		if !strings.Contains(before, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// "a" is in slot 15495, shard 1 of 2: only that shard's log moves.
	c := testutil.Dial(t, p.Addr)
	defer c.Close()
	for i := range 20 {
		c.Do("SET", "{a}"+strconv.Itoa(i), "v")
	}
	after := scrape()
	if d := applied(after, "1") - applied(before, "1"); d < 1 {
		t.Errorf("shard 1 applied %d entries over 20 writes to its slot", d)
	}
	if d := applied(after, "0") - applied(before, "0"); d != 0 {
		t.Errorf("shard 0 applied %d entries over writes to shard 1's slot", d)
	}
}
