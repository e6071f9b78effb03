package cluster

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// eventually retries a command on conn until its reply renders as want,
// for at most 10 s (a follower applies the leader's records shortly after).
func eventually(t *testing.T, conn *testutil.Conn, want string, args ...string) {
	t.Helper()
	var r testutil.Reply
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r = conn.Do(args...); r.String() == want {
			return
		}
	}
	t.Errorf("%v: %v, want %s", args, r, want)
}

// TestACLReplicated: ACL changes go through the log. A user created on a
// follower works on every node and after a restart; the leader checks
// each redis.call of a follower's client's script against the user's
// rules; a deleted user can no longer authenticate anywhere.
func TestACLReplicated(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	follower := c.Follower(t)
	f := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, f.Do("ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+@read", "+@write", "+eval"), "+OK")
	for i, n := range c.Nodes {
		conn := testutil.Dial(t, n.Addr)
		eventually(t, conn, "+OK", "AUTH", "app", "pw")
		if t.Failed() {
			t.Fatalf("node %d does not know the user", i)
		}
	}

	app := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, app.Do("AUTH", "app", "pw"), "+OK")
	if r := app.Do("SET", "other", "x"); !strings.HasPrefix(r.Str, "NOPERM this user has no permissions to access one of the keys") {
		t.Errorf("SET other on the follower: %v", r)
	}
	expect(t, app.Do("SET", "app:1", "x"), "+OK")
	if r := app.Do("EVAL", "return redis.call('set', 'other', 'y')", "0"); !strings.Contains(r.Str, "The user executing the script can't access at least one of the keys") {
		t.Errorf("a forwarded script writing a key its user may not: %v", r)
	}
	if r := f.Do("EXISTS", "other"); r.Int != 0 {
		t.Errorf("the refused call wrote: EXISTS other = %v", r)
	}

	// A restart finds the users in the log's state.
	if err := c.Nodes[follower].Stop(); err != nil {
		t.Fatal(err)
	}
	c.Nodes[follower].Restart(t)
	again := testutil.Dial(t, c.Nodes[follower].Addr)
	eventually(t, again, "+OK", "AUTH", "app", "pw")

	l := testutil.Dial(t, c.Nodes[c.WaitLeader(t, 10*time.Second)].Addr)
	idle := testutil.Dial(t, c.Nodes[follower].Addr)
	expect(t, idle.Do("AUTH", "app", "pw"), "+OK")
	expect(t, l.Do("ACL", "DELUSER", "app"), ":1")
	// The follower closes the deleted user's connection by itself.
	if _, err := idle.ReadErr(); err == nil || os.IsTimeout(err) {
		t.Errorf("a deleted user's idle connection on a follower stays open (%v)", err)
	}
	// The default user's password set by ACL, not requirepass: a
	// follower's client that gave it reaches the leader with it.
	expect(t, l.Do("ACL", "SETUSER", "default", "resetpass", ">dpw"), "+OK")
	d := testutil.Dial(t, c.Nodes[follower].Addr)
	eventually(t, d, "+OK", "AUTH", "dpw")
	expect(t, d.Do("SET", "k", "v"), "+OK")

	authRefused(t, c, "app", "pw")
}

// authRefused checks that every node of c soon refuses user's password:
// a node refuses it once it has applied the change that deleted the user.
// A connection that authenticated before that is closed then, so each
// try dials anew.
func authRefused(t *testing.T, c *testutil.Cluster, user, pass string) {
	t.Helper()
	for _, n := range c.Nodes {
		var r testutil.Reply
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			conn := testutil.Dial(t, n.Addr)
			r = conn.Do("AUTH", user, pass)
			conn.Close()
			if r.IsError() {
				break
			}
		}
		if r.String() != "-WRONGPASS invalid username-password pair or user is disabled." {
			t.Errorf("AUTH %s on %s after DELUSER: %v", user, n.Addr, r)
		}
	}
}

// TestProtectedModeACLUser: as in Redis 7.0, protected mode holds while
// the default user has nopass, whatever other users have; ACL SETUSER
// default resetpass (no password, none accepted) lifts it too.
func TestProtectedModeACLUser(t *testing.T) {
	n := newNetns(t)
	basalt := testutil.StartBasalt(t, "", "--bind", "0.0.0.0")
	at := net.JoinHostPort(n.hostIP, strconv.Itoa(basalt.Port))
	denied := func(when string) {
		t.Helper()
		if got := n.send(t, at, ""); !strings.HasPrefix(got, "-DENIED") {
			t.Errorf("%s: %q", when, got)
		}
	}
	denied("without a password")
	local := testutil.Dial(t, basalt.Addr)
	expect(t, local.Do("ACL", "SETUSER", "ops", "on", ">pw", "+@all", "~*"), "+OK")
	denied("with a password for another user")
	expect(t, local.Do("ACL", "SETUSER", "default", "resetpass"), "+OK")
	if got := n.send(t, at, "PING\r\n"); got != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("once the default user is not nopass: %q", got)
	}
}

// TestMetadataGroup: in cluster mode the users and the topology live in
// the metadata group, which every node holds (the shards need not be on
// every node). A user created on a node that does not lead that group
// works on every node and after a restart, and its deletion on another
// node reaches all. The group commits the topology, the same on every
// node, and a node whose topology.json says otherwise takes the cluster's.
func TestMetadataGroup(t *testing.T) {
	c := testutil.StartNodes(t, 4, "--cluster-enabled", "yes", "--cluster-shards", "4", "--cluster-replicas", "2")
	c.WaitBalanced(t, 20*time.Second, 1)
	metaLeader := -1
	for i, n := range c.Nodes {
		conn := testutil.Dial(t, n.Addr)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			info := conn.Do("INFO", "cluster").Str
			if strings.Contains(info, "topology_epoch=1\r\n") {
				if strings.Contains(info, "basalt_meta:role=leader,") {
					metaLeader = i
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: no committed topology: %s", i+1, info)
			}
		}
		conn.Close()
	}
	if metaLeader < 0 {
		t.Fatal("no node leads the metadata group")
	}
	other := (metaLeader + 1) % len(c.Nodes)
	third := (metaLeader + 2) % len(c.Nodes)
	o := testutil.Dial(t, c.Nodes[other].Addr)
	expect(t, o.Do("ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+@all"), "+OK")
	for i, n := range c.Nodes {
		conn := testutil.Dial(t, n.Addr)
		expect(t, conn.Do("AUTH", "app", "pw"), "+OK")
		if r := conn.Do("GET", "other"); !strings.HasPrefix(r.Str, "NOPERM") {
			t.Errorf("node %d: GET other as app: %v", i+1, r)
		}
		conn.Close()
	}

	// A restart finds the users in the metadata group's store, and the
	// cluster's topology over a changed file: the shards' preferred
	// leaders reversed.
	preferred := func() string {
		var out []string
		for _, l := range strings.Split(testutil.Dial(t, c.Nodes[other].Addr).Do("INFO", "cluster").Str, "\r\n") {
			if slots, rest, ok := strings.Cut(l, ",preferred="); ok && strings.HasPrefix(l, "basalt_shard") {
				out = append(out, slots+" "+strings.Split(rest, ",")[0])
			}
		}
		return strings.Join(out, "; ")
	}
	before := preferred()
	if err := c.Nodes[other].Stop(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(c.Nodes[other].Dir, "topology.json")
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var topo map[string]any
	if err := json.Unmarshal(original, &topo); err != nil {
		t.Fatal(err)
	}
	for _, sh := range topo["shards"].([]any) {
		slices.Reverse(sh.(map[string]any)["replicas"].([]any))
	}
	changed, _ := json.Marshal(topo)
	if err := os.WriteFile(file, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	c.Nodes[other].Restart(t)
	eventually(t, testutil.Dial(t, c.Nodes[other].Addr), "+OK", "AUTH", "app", "pw")
	if after := preferred(); after != before {
		t.Errorf("after a restart with a changed topology.json, the shards' preferred leaders are %s, want the cluster's %s", after, before)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
		t.Errorf("topology.json was not written back to the cluster's:\n%s\nwant\n%s", now, original)
	}

	idle := testutil.Dial(t, c.Nodes[metaLeader].Addr)
	expect(t, idle.Do("AUTH", "app", "pw"), "+OK")
	expect(t, testutil.Dial(t, c.Nodes[third].Addr).Do("ACL", "DELUSER", "app"), ":1")
	if _, err := idle.ReadErr(); err == nil || os.IsTimeout(err) {
		t.Errorf("a deleted user's idle connection stays open (%v)", err)
	}
	authRefused(t, c, "app", "pw")
}
