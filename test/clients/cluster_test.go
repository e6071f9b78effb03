package clients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Cluster-mode clients against a node in cluster mode with 4 shards: each
// client discovers the topology (CLUSTER SLOTS/SHARDS/NODES), routes by
// slot, and runs strings, hashes, a transaction and a script on hash-tagged
// keys, pub/sub and a stream consumer group.

const testShards = "4"

func startShardedNode(t *testing.T) *testutil.Proc {
	t.Helper()
	return testutil.StartBasalt(t, "", "--cluster-enabled", "yes", "--cluster-shards", testShards)
}

func TestGoRedisClusterClient(t *testing.T) {
	p := startShardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, MaxRedirects: 0})
	defer rdb.Close()

	// Keys over every shard.
	for i := range 200 {
		if err := rdb.Set(ctx, "key:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET key:%d: %v", i, err)
		}
	}
	for i := range 200 {
		v, err := rdb.Get(ctx, "key:"+strconv.Itoa(i)).Int()
		if err != nil || v != i {
			t.Fatalf("GET key:%d = %d, %v", i, v, err)
		}
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 200 {
		t.Fatalf("DBSIZE = %d, %v; want 200", n, err)
	}
	var scanned []string
	iter := rdb.Scan(ctx, 0, "key:*", 17).Iterator()
	for iter.Next(ctx) {
		scanned = append(scanned, iter.Val())
	}
	if iter.Err() != nil || len(scanned) != 200 {
		t.Fatalf("SCAN found %d keys (%v), want 200", len(scanned), iter.Err())
	}

	// Hashes, a transaction, a WATCH and a script, on one slot.
	if err := rdb.HSet(ctx, "{user:1}:profile", "name", "ada", "visits", 1).Err(); err != nil {
		t.Fatal(err)
	}
	cmds, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HIncrBy(ctx, "{user:1}:profile", "visits", 1)
		pipe.Incr(ctx, "{user:1}:logins")
		return nil
	})
	if err != nil || cmds[0].(*redis.IntCmd).Val() != 2 || cmds[1].(*redis.IntCmd).Val() != 1 {
		t.Fatalf("MULTI/EXEC: %v %v", cmds, err)
	}
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, "{user:1}:logins").Int()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "{user:1}:logins", n+10, 0)
			return nil
		})
		return err
	}, "{user:1}:logins")
	if err != nil {
		t.Fatalf("WATCH transaction: %v", err)
	}
	sum := redis.NewScript(`return redis.call('incrby', KEYS[1], ARGV[1]) + redis.call('hget', KEYS[2], 'visits')`)
	if n, err := sum.Run(ctx, rdb, []string{"{user:1}:logins", "{user:1}:profile"}, 5).Int(); err != nil || n != 16+2 {
		t.Fatalf("script = %d, %v; want 18", n, err)
	}

	// Redis Cluster's errors.
	if err := rdb.MSet(ctx, "a", 1, "b", 2).Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Fatalf("MSET a b = %v, want CROSSSLOT", err)
	}
	if err := rdb.Do(ctx, "SELECT", 1).Err(); err == nil || err.Error() != "ERR SELECT is not allowed in cluster mode" {
		t.Fatalf("SELECT 1 = %v", err)
	}

	// Pub/sub and a stream consumer group.
	sub := rdb.Subscribe(ctx, "news")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Publish(ctx, "news", "hello").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH = %d, %v", n, err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "hello" {
		t.Fatalf("message = %v, %v", msg, err)
	}
	if err := rdb.XGroupCreateMkStream(ctx, "jobs", "workers", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"n", strconv.Itoa(i)}})
	}
	streams, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{"jobs", ">"}, Count: 10}).Result()
	if err != nil || len(streams) != 1 || len(streams[0].Messages) != 3 {
		t.Fatalf("XREADGROUP = %v, %v", streams, err)
	}
	if n, err := rdb.XAck(ctx, "jobs", "workers", streams[0].Messages[0].ID).Result(); err != nil || n != 1 {
		t.Fatalf("XACK = %d, %v", n, err)
	}

	// Every node's FLUSHALL empties all its shards.
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return c.FlushAll(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("DBSIZE after FLUSHALL = %d, %v", n, err)
	}
}

func TestRueidisCluster(t *testing.T) {
	p := startShardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 100 {
		if err := c.Do(ctx, c.B().Set().Key("r:"+strconv.Itoa(i)).Value(strconv.Itoa(i)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		// Cached reads (client-side caching is rueidis's default).
		v, err := c.DoCache(ctx, c.B().Get().Key("r:"+strconv.Itoa(i)).Cache(), time.Minute).ToString()
		if err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET r:%d = %q, %v", i, v, err)
		}
	}
	resps := c.DoMulti(ctx, c.B().Multi().Build(), c.B().Incr().Key("{t}a").Build(), c.B().Incr().Key("{t}b").Build(), c.B().Exec().Build())
	if vals, err := resps[3].ToArray(); err != nil || len(vals) != 2 {
		t.Fatalf("EXEC = %v, %v", vals, err)
	}
	if err := c.Do(ctx, c.B().Arbitrary("MSET").Args("x", "1", "y", "2").Build()).Error(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("MSET x y = %v, want CROSSSLOT", err)
	}
}

// TestRedisCLICluster runs redis-cli -c, redis-cli --cluster check and
// redis-benchmark against the node.
func TestRedisCLICluster(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not installed (scripts/test.sh installs redis-tools)")
	}
	p := startShardedNode(t)
	port := strconv.Itoa(p.Port)
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for i := range 20 {
		if out := run(cli, "-c", "-p", port, "SET", "cli:"+strconv.Itoa(i), "v"); out != "OK" {
			t.Fatalf("redis-cli -c SET = %q", out)
		}
	}
	if out := run(cli, "-c", "-p", port, "GET", "cli:7"); out != "v" {
		t.Fatalf("redis-cli -c GET = %q", out)
	}
	check := run(cli, "--cluster", "check", "127.0.0.1:"+port)
	for _, want := range []string{"[OK] All nodes agree about slots configuration.", "[OK] All 16384 slots covered.", "20 keys"} {
		if !strings.Contains(check, want) {
			t.Fatalf("redis-cli --cluster check lacks %q:\n%s", want, check)
		}
	}
	// redis-benchmark --cluster refuses a cluster of one node ("Invalid
	// cluster"); plain redis-benchmark works, as every slot is served here.
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark is not installed")
	}
	out := run(bench, "-p", port, "-t", "set,get,incr,hset", "-r", "1000", "-n", "2000", "-c", "10", "-q")
	for _, test := range []string{"SET", "GET", "INCR", "HSET"} {
		if !strings.Contains(out, test+": ") {
			t.Fatalf("redis-benchmark did not run %s:\n%s", test, out)
		}
	}
	if dbsize := run(cli, "-p", port, "DBSIZE"); dbsize == "0" {
		t.Fatalf("redis-benchmark wrote nothing")
	}
}

// TestRedisPyCluster runs Debian's python3-redis RedisCluster.
func TestRedisPyCluster(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import redis.cluster").Run(); err != nil {
		t.Skip("python3-redis is not installed (scripts/test.sh installs it)")
	}
	p := startShardedNode(t)
	script := `
import sys
from redis.cluster import RedisCluster
from redis.exceptions import ResponseError
rc = RedisCluster(host='127.0.0.1', port=int(sys.argv[1]))
for i in range(100):
    rc.set('py:%d' % i, i)
assert [int(rc.get('py:%d' % i)) for i in range(100)] == list(range(100))
rc.hset('{h}:1', mapping={'a': 1, 'b': 2})
assert rc.hgetall('{h}:1') == {b'a': b'1', b'b': b'2'}
pipe = rc.pipeline()
pipe.incr('{h}:n'); pipe.incr('{h}:n')
assert pipe.execute() == [1, 2]
assert rc.eval("return redis.call('incr', KEYS[1])", 1, '{h}:n') == 3
import redis
assert redis.Redis(port=int(sys.argv[1])).dbsize() == 102
rc.xgroup_create('jobs', 'g', id='0', mkstream=True)
rc.xadd('jobs', {'n': '1'})
got = rc.xreadgroup('g', 'c', {'jobs': '>'})
assert len(got[0][1]) == 1, got
try:
    rc.execute_command('SELECT', '1', target_nodes=RedisCluster.PRIMARIES)
    raise SystemExit('SELECT 1 succeeded')
except ResponseError as e:
    assert 'not allowed in cluster mode' in str(e), e
print('ok')
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script, strconv.Itoa(p.Port)).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "\nok") && strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py RedisCluster: %v\n%s", err, out)
	}
}

// TestIORedisCluster runs node/cluster.js: ioredis's Cluster class.
func TestIORedisCluster(t *testing.T) {
	runNodeClusterScript(t, "cluster.js")
}

// TestNodeRedisCluster runs node/cluster-node-redis.js: node-redis's
// createCluster (the redis package pinned in node/package-lock.json).
func TestNodeRedisCluster(t *testing.T) {
	runNodeClusterScript(t, "cluster-node-redis.js")
}

// runNodeClusterScript runs a script of node/ against a node in cluster
// mode, with its port in BASALT_PORT, for at most 60s.
func runNodeClusterScript(t *testing.T, script string) {
	node := nodeReady(t)
	p := startShardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "BASALT_PORT="+strconv.Itoa(p.Port))
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
