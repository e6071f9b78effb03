package compat

import (
	"strconv"
	"strings"
	"testing"

	"basalt/internal/cluster"
	"basalt/internal/testutil"
)

// A basalt node in cluster mode (4 shards) against a redis-server in
// cluster mode holding every slot: the CLUSTER commands, Redis Cluster's
// errors (CROSSSLOT, SELECT and the database commands), transactions and
// scripts whose keys span slots, and the keyless commands that cover the
// node's shards.
func startClusterPair(t *testing.T) (d *testutil.Diff, redisPort, basaltPort int) {
	t.Helper()
	if testutil.ClusterMode() > 1 || testutil.ShardMode() > 0 {
		t.Skip("starts its own cluster-mode servers; run once")
	}
	redis := testutil.StartRedisCluster(t)
	basalt := testutil.StartBasalt(t, "", "--cluster-enabled", "yes", "--cluster-shards", "4")
	return testutil.NewDiff(t, redis.Addr, basalt.Addr), redis.Port, basalt.Port
}

func TestClusterMode(t *testing.T) {
	d, redisPort, basaltPort := startClusterPair(t)
	// Two keys of different slots served by one shard (12288-16383 of 4).
	var sameShard []string
	for i := 0; len(sameShard) < 2; i++ {
		k := "k" + strconv.Itoa(i)
		if s := cluster.KeySlotString(k); s >= 12288 && (len(sameShard) == 0 || s != cluster.KeySlotString(sameShard[0])) {
			sameShard = append(sameShard, k)
		}
	}
	d.Run(`
CLUSTER KEYSLOT foo
CLUSTER KEYSLOT {user1000}.following
CLUSTER KEYSLOT ""
SET foo 1
SET {foo}a 2
CLUSTER COUNTKEYSINSLOT 12182
CLUSTER GETKEYSINSLOT 12182 0
@unordered CLUSTER GETKEYSINSLOT 12182 10
CLUSTER COUNTKEYSINSLOT 16384
CLUSTER COUNTKEYSINSLOT -1
CLUSTER COUNTKEYSINSLOT x
CLUSTER GETKEYSINSLOT 1 -1
CLUSTER GETKEYSINSLOT x 1
CLUSTER GETKEYSINSLOT 16384 1
CLUSTER NOSUCH
CLUSTER
CLUSTER KEYSLOT
CLUSTER HELP
CLUSTER LINKS
CLUSTER REPLICAS nosuchnode
CLUSTER COUNT-FAILURE-REPORTS nosuchnode
SELECT 0
SELECT 1
SELECT x
SELECT 99999999999
MOVE foo 1
SWAPDB 0 1
COPY foo bar DB 1
COPY foo {foo}b DB 0
COPY foo bar DB x
MSET a 1 b 2
MSET {a}1 1 {a}2 2
MGET {a}1 {a}2
DEL a b
EXISTS {a}1 foo
BLPOP a b 0.01
SINTERCARD 2 a b
ZUNION 2 {z}a {z}b
MULTI
SET a 1
SET b 1
EXEC
MULTI
MSET a 1 b 1
EXEC
MULTI
SET {x}1 1
INCR {x}2
GET {x}1
EXEC
WATCH a b
EVAL "return 1" 2 a b
EVAL "return redis.call('get', KEYS[1])" 1 foo
EVAL "redis.call('set', KEYS[1], 1) return redis.call('set', ARGV[1], 1)" 1 ` + sameShard[0] + " " + sameShard[1] + `
EVAL "#!lua flags=no-cluster\nreturn 1" 0
EVAL "#!lua flags=no-writes\nreturn 1" 0
FUNCTION LOAD "#!lua name=nc\nredis.register_function{function_name='nc', callback=function() return 1 end, flags={'no-cluster'}}"
FCALL nc 0
DBSIZE
@unordered KEYS *
ASKING
READONLY
READWRITE
FLUSHALL
DBSIZE
KEYS *
RANDOMKEY
SCAN 0
`)
	// The node's identity and slots, with its ID, address and offsets
	// set aside.
	norm := func(c *testutil.Conn, r testutil.Reply) string {
		id := c.Do("CLUSTER", "MYID").Str
		s := strings.ReplaceAll(r.String(), id, "ID")
		for _, f := range strings.Fields(`"" "127.0.0.1"`) {
			s = strings.ReplaceAll(s, f, "IP")
		}
		return s
	}
	for _, args := range [][]string{{"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"}, {"CLUSTER", "MYID"}} {
		want, got := d.DoBoth(args...)
		w, g := norm(d.Want, want), norm(d.Got, got)
		w = strings.ReplaceAll(w, strconv.Itoa(redisPort), "PORT")
		g = strings.ReplaceAll(g, strconv.Itoa(basaltPort), "PORT")
		if w != g {
			t.Errorf("%v\n  want: %s\n  got:  %s", args, w, g)
		}
	}
	want, got := d.DoBoth("CLUSTER", "INFO")
	for _, field := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384", "cluster_known_nodes:1", "cluster_size:1"} {
		if !strings.Contains(want.Str, field) || !strings.Contains(got.Str, field) {
			t.Errorf("CLUSTER INFO lacks %s\n  want: %s\n  got:  %s", field, want, got)
		}
	}
	want, got = d.DoBoth("CLUSTER", "NODES")
	wf, gf := strings.Fields(want.Str), strings.Fields(got.Str)
	if len(wf) != len(gf) || gf[2] != "myself,master" || gf[len(gf)-1] != "0-16383" || gf[7] != "connected" {
		t.Errorf("CLUSTER NODES\n  want: %s\n  got:  %s", want.Str, got.Str)
	}
}
