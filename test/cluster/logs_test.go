package cluster

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClusterLogs: an operator follows elections and membership changes
// in the log at notice level, and INFO replication shows the group in
// Redis's shape (connected_slaves on the leader, master_link_status on a
// follower).
func TestClusterLogs(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	id := strconv.Itoa(l + 1)
	waitLog(t, c.Nodes[l], `msg="raft: elected leader" node=`+id)
	f := (l + 1) % 3
	waitLog(t, c.Nodes[f], `msg="raft: leader changed" node=`+strconv.Itoa(f+1)+" leader="+id)

	leader := testutil.Dial(t, c.Nodes[l].Addr)
	_, info := parseInfoLines(leader.Do("INFO", "replication").Str)
	if info["role"] != "master" || info["connected_slaves"] != "2" || !strings.Contains(info["slave0"], "state=online") {
		t.Errorf("leader's INFO replication: %v", info)
	}
	_, info = parseInfoLines(testutil.Dial(t, c.Nodes[f].Addr).Do("INFO", "replication").Str)
	if info["role"] != "slave" || info["master_link_status"] != "up" || info["master_port"] != strconv.Itoa(c.Nodes[l].Port) || info["raft_leader_changes"] != "1" {
		t.Errorf("follower's INFO replication: %v", info)
	}

	p, raftAddr := c.Join(t, 4)
	expect(t, leader.Do("RAFT", "ADD", "4", raftAddr), "+OK")
	c.Nodes = append(c.Nodes, p)
	waitLog(t, c.Nodes[l], `msg="raft: membership changed" change=ConfChangeAddNode member=4`)
	waitLog(t, p, `msg="raft: leader changed" node=4 leader=`+id)
}

// waitLog waits up to 10 s for a line containing want in a node's log.
func waitLog(t *testing.T, p *testutil.Proc, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(p.Log)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, want) {
				if !strings.Contains(line, "level=notice") {
					t.Errorf("not at notice level: %s", line)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s:\n%s", want, p.Log, b)
		}
	}
}

// parseInfoLines reads INFO's "name:value" lines.
func parseInfoLines(s string) ([]string, map[string]string) {
	var order []string
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			order = append(order, k)
			m[k] = v
		}
	}
	return order, m
}
