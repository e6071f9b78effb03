package compat

import (
	"os"
	"strings"
	"testing"

	"basalt/internal/command"
	"basalt/internal/testutil"
)

// TestMain: in the pass under Redis Cluster's rules (BASALT_SHARDS), every
// key the tests send gets the hash tag {t} (testutil.KeyTag), so a
// scenario's keys share one slot on both servers, and the tests that
// cannot run so are skipped (shardSkips).
func TestMain(m *testing.M) {
	if testutil.ShardMode() > 0 {
		testutil.KeyTag = tagKeys
		testutil.SkipTest = skipInShards
	}
	os.Exit(m.Run())
}

// skipInShards skips t if shardSkips names it (in the cluster-mode pass),
// or nodeSkips in the pass through a cluster: testutil.Dial asks, and a
// test that dials nothing of its own calls it.
func skipInShards(t testing.TB) {
	if testutil.ShardMode() == 0 {
		return
	}
	if why, ok := shardSkips[t.Name()]; ok {
		t.Skip("under Redis Cluster's rules: " + why)
	}
	if why, ok := nodeSkips[t.Name()]; ok && testutil.NodesMode() > 1 {
		t.Skip("through a cluster: " + why)
	}
}

// shardSkips are the tests (and subtests) the cluster-mode pass skips, and
// why.
var shardSkips = map[string]string{
	"TestJSONKeyspace":                                 "compares key names with literals (the tag changes them)",
	"TestRestoreJSONNotify":                            "compares key names with literals",
	"TestMonitorRedisCli":                              "compares key names with literals",
	"TestKeys/ScanFull":                                "compares key names with literals",
	"TestKeys/ScanConcurrent":                          "compares key names with literals",
	"TestKeys/RandomKey":                               "compares key names with literals",
	"TestLoadRDBBusyKey":                               "the RDB file's keys have no tag",
	"TestMigrateFromRedis":                             "uses other databases",
	"TestNothingWritesOutsideDir":                      "runs its own server",
	"TestHashFieldExpire":                              "runs its own server and compares key names with literals",
	"TestPubSub/Scripts":                               "scripts name keys in their bodies",
	"TestScripting/Cache":                              "scripts name keys in their bodies",
	"TestScripting/Errors":                             "scripts name keys in their bodies",
	"TestScripting/RESP3":                              "scripts name keys in their bodies",
	"TestScripting/ReadOnly":                           "scripts name keys in their bodies",
	"TestScripting/RefusedCommands":                    "scripts name keys in their bodies",
	"TestScripting/ReplyToLua":                         "scripts name keys in their bodies",
	"TestScripting/Shebang":                            "scripts name keys in their bodies",
	"TestPubSub/SubscribeUnsubscribeCounts":            "shard channels of several slots",
	"TestPubSub/Introspection":                         "shard channels of several slots",
	"TestStreamBlocking/XReadGroupUnblockedByDeletion": "SWAPDB",
	"TestScriptBusy/Kill":                              "a busy script holds its shard; writes to other shards go on (docs/cluster.md)",
	"TestScriptBusy/Unkillable":                        "a busy script holds its shard; writes to other shards go on (docs/cluster.md)",
	"TestTracking/Default":                             "FLUSHALL invalidates once per shard",
	"TestTracking/RedirectRESP2":                       "FLUSHALL invalidates once per shard",
	"TestMemory/Stats":                                 "MEMORY STATS lists each shard's database",
	"TestMemory/RedisCliMemkeys":                       "redis-cli --memkeys's SCAN differs",
	"TestServer/Client":                                "CLIENT INFO differs in cluster mode",
}

// nodeSkips are the tests the pass through a cluster (BASALT_NODES) skips
// besides shardSkips, and why. Its connections start on a node that does
// not lead the keys' slot and follow MOVED (testutil's redirect.go); what
// is each node's own (as in Redis Cluster) is then on two nodes.
var nodeSkips = map[string]string{
	"TestRole":                       "the oracle has no replicas; basalt's shards have two",
	"TestWait":                       "the oracle has no replicas; basalt's shards have two",
	"TestWaitaof":                    "the oracle has no replicas; basalt's shards have two",
	"TestInfoStats":                  "INFO commandstats is the node's; the test's commands ran on two",
	"TestClientPause":                "CLIENT PAUSE is the node's; the paused commands were redirected to another",
	"TestClientUnblock":              "unblocks a client by the ID it had on the node it dialed; its blocking command moved it",
	"TestQueryBuffer":                "looks its client up in CLIENT LIST of the node it dialed; its commands moved it",
	"TestACLPermissionsDiff":         "ACL LOG is the node's: NOPERM comes before MOVED, so the user's denials are logged on the node it dialed, read on the one the admin was redirected to",
	"TestServer/Config":              "CONFIG SET maxclients is the node's; the next connection dials another",
	"TestServer/RequirePass":         "CONFIG SET requirepass is the node's; the next connection dials another",
	"TestServer/ClientReply":         "CLIENT REPLY OFF and SKIP: replies no longer answer one command each, so the connection stops following MOVED",
	"TestPubSub/SubscribedModeRESP2": "a subscribed connection's replies do not answer one command each, so it stops following MOVED",
	"TestPubSub/MessagesRESP2":       "a subscribed connection's replies do not answer one command each, so it stops following MOVED",
	"TestPubSub/Transactions":        "subscribes in RESP2 (inside EXEC), so the connection stops following MOVED",
	"TestPubSub/MessagesRESP3":       "PUBLISH counts the subscribers of the node it runs on (as Redis Cluster's does); the publisher stayed on the node it dialed, the subscriber was redirected",
	"TestKeyspaceNotifications":      "keyspace notifications are the node's: the subscriber stays on the node it dialed, a follower of the keys' shard, which sends them when it applies the write, unordered with the marker PUBLISH",
	"TestGeo/Store":                  "keyspace notifications are the node's (see TestKeyspaceNotifications)",
	"TestSort/Notify":                "keyspace notifications are the node's (see TestKeyspaceNotifications)",
	"TestDumpRestoreNotify":          "keyspace notifications are the node's (see TestKeyspaceNotifications)",
	"TestTracking/Info":              "INFO's tracking figures are the node's; the tracked reads ran on the node the connection was redirected to",
	"TestScriptBusy/InMulti":         "the busy script runs on the keys' node; the connection that waits for BUSY is on the node it dialed",
}

// tagKeys prefixes {t} to each key argument of a command (as COMMAND
// GETKEYS finds them) that has no hash tag of its own.
func tagKeys(args []string) []string {
	if len(args) == 0 {
		return args
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	cmd := command.Lookup(argv[0])
	if cmd == nil {
		return args
	}
	kind := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if sub := cmd.Subcommand(argv[1]); sub != nil {
			kind = sub
		}
	}
	var out []string
	for _, k := range kind.SlotKeys(argv) {
		for i, a := range argv {
			// The keys are argv's own elements: find each by its bytes' address.
			if len(k) == 0 || len(a) != len(k) || &a[0] != &k[0] || hasTag(args[i]) {
				continue
			}
			if out == nil {
				out = append([]string(nil), args...)
			}
			out[i] = "{t}" + args[i]
		}
	}
	if out == nil {
		return args
	}
	return out
}

// hasTag reports whether key has a hash tag: a non-empty {...}.
func hasTag(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}

// TestClusterRedirect proves that the pass through a cluster (BASALT_NODES)
// goes through redirects, keeping each connection's state: the tests' node
// does not lead the keys' slot, so each connection's first keyed command is
// answered MOVED and sent again to the slot's leader.
func TestClusterRedirect(t *testing.T) {
	if testutil.ShardMode() == 0 || testutil.NodesMode() < 2 {
		t.Skip("the pass through a cluster (BASALT_NODES) only")
	}
	p := newPair(t)
	redirected := func(d *testutil.Diff, want int) {
		t.Helper()
		if d.Got.Redirects != want {
			t.Errorf("%d redirects, want %d", d.Got.Redirects, want)
		}
	}

	t.Run("State", func(t *testing.T) {
		d := p.diff(t)
		d.Proto(3)
		d.Run(`
			CLIENT SETNAME probe
			HSET h f v
			HGETALL h
			CLIENT GETNAME
			GET h
		`)
		redirected(d, 1)
	})

	t.Run("Transaction", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			MULTI
			SET k 1
			INCR k
			EXEC
			GET k
		`)
		redirected(d, 1)
	})

	t.Run("Pipeline", func(t *testing.T) {
		d := p.diff(t)
		cmds := [][]string{{"SET", "a", "1"}, {"PING"}, {"INCR", "a"}, {"ECHO", "x"}, {"GET", "a"}}
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			for _, cmd := range cmds {
				c.Send(testutil.Command(cmd...))
			}
		}
		for _, cmd := range cmds {
			if err := testutil.Compare(cmd, d.Want.Read(), d.Got.Read()); err != nil {
				t.Error(err)
			}
		}
		redirected(d, 1)
	})

	t.Run("Blocking", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		b.send("BLPOP", "l", "0")
		settle()
		d.Run(`
			RPUSH l a
			LLEN l
		`)
		b.expect(t, "BLPOP")
		if b.got.Redirects != 1 {
			t.Errorf("the blocked client: %d redirects, want 1", b.got.Redirects)
		}
	})
}
