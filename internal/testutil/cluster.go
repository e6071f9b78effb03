package testutil

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a group of basalt nodes replicating one shard with Raft, all
// on loopback.
type Cluster struct {
	Nodes   []*Proc // Nodes[i] has node ID i+1
	RaftAdr []string
}

// StartCluster starts n basalt nodes (IDs 1..n) that form one Raft group,
// each with its own directory, free client and Raft ports and args, and
// waits until they agree on a leader.
func StartCluster(t testing.TB, n int, args ...string) *Cluster {
	t.Helper()
	c := StartNodes(t, n, args...)
	c.WaitLeader(t, 15*time.Second)
	return c
}

// StartNodes starts the n nodes of a new cluster as StartCluster does,
// without waiting for a leader: in cluster mode a node's groups are its
// shards, which need not be the same on every node.
func StartNodes(t testing.TB, n int, args ...string) *Cluster {
	t.Helper()
	return startNodes(t, n, func(int) []string { return args })
}

// StartClusterEach is StartCluster with the args of each node: Nodes[i]
// gets args(i).
func StartClusterEach(t testing.TB, n int, args func(i int) []string) *Cluster {
	t.Helper()
	c := startNodes(t, n, args)
	c.WaitLeader(t, 15*time.Second)
	return c
}

func startNodes(t testing.TB, n int, args func(i int) []string) *Cluster {
	t.Helper()
	c := &Cluster{}
	var members []string
	for i := 1; i <= n; i++ {
		addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
		c.RaftAdr = append(c.RaftAdr, addr)
		members = append(members, strconv.Itoa(i)+"="+addr)
	}
	for i := 1; i <= n; i++ {
		a := append([]string{"--node-id", strconv.Itoa(i), "--raft-addr", c.RaftAdr[i-1],
			"--initial-cluster", strings.Join(members, ",")}, args(i-1)...)
		c.Nodes = append(c.Nodes, StartBasalt(t, "", a...))
	}
	return c
}

// Join starts node id as a new, empty member (--join yes) with its Raft
// address; the caller adds it with RAFT ADD.
func (c *Cluster) Join(t testing.TB, id int, args ...string) (*Proc, string) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	p := StartBasalt(t, "", append([]string{"--node-id", strconv.Itoa(id), "--raft-addr", addr, "--join", "yes"}, args...)...)
	return p, addr
}

// Status returns a node's RAFT STATUS as a map, or nil if it does not answer.
func Status(addr string) map[string]string {
	c, err := DialErr(addr)
	if err != nil {
		return nil
	}
	defer c.Close()
	r, err := c.DoErr("RAFT", "STATUS")
	if err != nil || r.IsError() {
		return nil
	}
	m := map[string]string{}
	for _, e := range r.Elems {
		k, v, _ := strings.Cut(e.Str, ":")
		m[k] = v
	}
	return m
}

// Leader returns the index in Nodes of the node every running node names
// as leader, and whether they agree on one.
func (c *Cluster) Leader() (int, bool) {
	leader := ""
	for _, p := range c.Nodes {
		if !p.Running() {
			continue
		}
		st := Status(p.Addr)
		if st == nil || st["leader_id"] == "0" || leader != "" && st["leader_id"] != leader {
			return -1, false
		}
		leader = st["leader_id"]
	}
	id, err := strconv.Atoi(leader)
	if err != nil || id < 1 || id > len(c.Nodes) || !c.Nodes[id-1].Running() {
		return -1, false
	}
	if st := Status(c.Nodes[id-1].Addr); st == nil || st["role"] != "leader" {
		return -1, false
	}
	return id - 1, true
}

// WaitLeader waits until the running nodes agree on a leader and returns
// its index in Nodes.
func (c *Cluster) WaitLeader(t testing.TB, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if i, ok := c.Leader(); ok {
			return i
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no leader agreed on within %v", timeout)
	return -1
}

// Follower returns the index of a running node that is not the leader.
func (c *Cluster) Follower(t testing.TB) int {
	t.Helper()
	l := c.WaitLeader(t, 15*time.Second)
	for i, p := range c.Nodes {
		if i != l && p.Running() {
			return i
		}
	}
	t.Fatal("no follower is running")
	return -1
}

// WaitConverged waits until every running node reports the same DEBUG
// DIGEST and applied index, and returns the digest.
func (c *Cluster) WaitConverged(t testing.TB, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []string
	for time.Now().Before(deadline) {
		last = last[:0]
		same := true
		for _, p := range c.Nodes {
			if !p.Running() {
				continue
			}
			conn, err := DialErr(p.Addr)
			if err != nil {
				same = false
				break
			}
			r, err := conn.DoErr("DEBUG", "DIGEST")
			conn.Close()
			if err != nil || r.IsError() {
				same = false
				break
			}
			st := Status(p.Addr)
			last = append(last, r.Str+"@"+st["applied_index"])
			if len(last) > 1 && last[len(last)-1] != last[0] {
				same = false
			}
		}
		if same && len(last) > 0 {
			return strings.Split(last[0], "@")[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nodes did not converge within %v: %v", timeout, last)
	return ""
}

// ClusterMode reports whether BASALT_CLUSTER asks the differential tests to
// run against a follower of a cluster of that many nodes.
func ClusterMode() int {
	n, _ := strconv.Atoi(os.Getenv("BASALT_CLUSTER"))
	return n
}

// ShardMode reports whether BASALT_SHARDS asks the differential tests to
// run against a node in cluster mode with that many shards, compared with a
// redis-server in cluster mode.
func ShardMode() int {
	n, _ := strconv.Atoi(os.Getenv("BASALT_SHARDS"))
	return n
}

// NodesMode reports whether BASALT_NODES asks the cluster-mode pass
// (BASALT_SHARDS) to run through a cluster of that many nodes.
func NodesMode() int {
	n, _ := strconv.Atoi(os.Getenv("BASALT_NODES"))
	return n
}

// StartRedisCluster starts redis-server in cluster mode holding every slot,
// and waits for its cluster to be ok.
func StartRedisCluster(t testing.TB) *Proc {
	t.Helper()
	// Its bus port, claimed as the client port is: by default it is the
	// client port + 10000, which another test's server may hold.
	p := StartRedis(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(FreePort(t)))
	c := Dial(t, p.Addr)
	defer c.Close()
	if r := c.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); r.String() != "+OK" {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", r)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(c.Do("CLUSTER", "INFO").Str, "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatal("redis-server's cluster did not reach state ok")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// WaitBalanced waits until every node of a cluster in cluster mode
// reports cluster_state:ok and leads as many shards as the others (its
// CLUSTER NODES line holds ranges slot ranges), each node's view the same,
// and every shard is led by its preferred node (INFO cluster), so that no
// leadership moves after it returns while the nodes stay up.
func (c *Cluster) WaitBalanced(t testing.TB, timeout time.Duration, ranges int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = c.balanced(ranges); last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the cluster did not balance its leaders within %v: %v", timeout, last)
}

// balanced returns nil if the cluster is balanced (WaitBalanced), else
// which node is not, why, and what it said.
func (c *Cluster) balanced(ranges int) error {
	var views []string
	for i, p := range c.Nodes {
		conn, err := DialErr(p.Addr)
		if err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		info, err1 := conn.DoErr("CLUSTER", "INFO")
		nodesReply, err2 := conn.DoErr("CLUSTER", "NODES")
		shards, err3 := conn.DoErr("INFO", "cluster")
		conn.Close()
		if err := errors.Join(err1, err2, err3); err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		if !strings.Contains(info.Str, "cluster_state:ok") {
			return fmt.Errorf("node %d: not ok:\n%s", i+1, info.Str)
		}
		// A shard this node should lead, led elsewhere for now, will move
		// (the server's balanceLeaders).
		self := "preferred=" + strconv.Itoa(i+1) + ","
		for _, line := range strings.Split(shards.Str, "\n") {
			if strings.Contains(line, self) && !strings.Contains(line, "role=leader") {
				return fmt.Errorf("node %d: a shard not on its preferred leader yet:\n%s", i+1, shards.Str)
			}
		}
		// Each line's slots, without the myself flag that differs by node.
		view := strings.ReplaceAll(nodesReply.Str, "myself,", "")
		for _, line := range strings.Split(strings.TrimSpace(view), "\n") {
			if f := strings.Fields(line); len(f) != 8+ranges {
				return fmt.Errorf("node %d: a node does not lead %d slot ranges:\n%s", i+1, ranges, view)
			}
		}
		views = append(views, view)
	}
	for _, v := range views[1:] {
		if v != views[0] {
			return fmt.Errorf("the nodes' views differ:\n%s", strings.Join(views, "\n"))
		}
	}
	return nil
}

// SlotLeader is the index in Nodes of the node that leads the slot of key,
// by CLUSTER KEYSLOT and CLUSTER SLOTS on the first running node.
func (c *Cluster) SlotLeader(t testing.TB, key string) int {
	t.Helper()
	for _, p := range c.Nodes {
		if !p.Running() {
			continue
		}
		conn := Dial(t, p.Addr)
		defer conn.Close()
		slot, err := strconv.Atoi(conn.Do("CLUSTER", "KEYSLOT", key).String()[1:])
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %s: %v", key, err)
		}
		for _, r := range conn.Do("CLUSTER", "SLOTS").Elems {
			start, _ := strconv.Atoi(r.Elems[0].String()[1:])
			end, _ := strconv.Atoi(r.Elems[1].String()[1:])
			if slot < start || slot > end {
				continue
			}
			addr := net.JoinHostPort(r.Elems[2].Elems[0].Str, r.Elems[2].Elems[1].String()[1:])
			for i, n := range c.Nodes {
				if n.Addr == addr {
					return i
				}
			}
		}
		t.Fatalf("no node leads slot %d of %s", slot, key)
	}
	t.Fatal("no node runs")
	return -1
}
