package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// loadData writes about mb megabytes through conn: many small strings, a
// big chunked string, and a hash of many fields, pipelined. The snapshot of
// such a store is many transport chunks.
func loadData(t *testing.T, conn *testutil.Conn, mb int) {
	t.Helper()
	conn.Timeout = 30 * time.Second
	pipeline := func(cmds [][]string) {
		t.Helper()
		for len(cmds) > 0 {
			n := min(len(cmds), 100)
			for _, c := range cmds[:n] {
				conn.Send(testutil.Command(c...))
			}
			for range cmds[:n] {
				if r := conn.Read(); r.IsError() {
					t.Fatalf("loading data: %s", r)
				}
			}
			cmds = cmds[n:]
		}
	}
	value := strings.Repeat("v", 200)
	big := []byte(strings.Repeat("0123456789abcdef", (mb<<20)/4/16))
	for i := range big {
		big[i] ^= byte(i >> 12) // chunks that differ
	}
	expect(t, conn.Do("SET", "big", string(big)), "+OK")
	// The rest: strings (a quarter) and a hash (half), 100 entries a command.
	var cmds [][]string
	for i := 0; i < (mb<<20)/4/250; i += 100 {
		c := []string{"MSET"}
		for j := i; j < i+100; j++ {
			c = append(c, "s:"+strconv.Itoa(j), value)
		}
		cmds = append(cmds, c)
	}
	for i := 0; i < (mb<<20)/2/120; i += 100 {
		c := []string{"HSET", "hash"}
		for j := i; j < i+100; j++ {
			c = append(c, "field:"+strconv.Itoa(j), value[:100])
		}
		cmds = append(cmds, c)
	}
	pipeline(cmds)
}

// logHas reports whether a node's log holds s.
func logHas(p *testutil.Proc, s string) bool {
	b, _ := os.ReadFile(p.Log)
	return strings.Contains(string(b), s)
}

// snapshotDirEmpty fails the test if a node kept received snapshots.
func snapshotDirEmpty(t *testing.T, p *testutil.Proc) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(p.Dir, "raft", "snapshots"))
	if err != nil || len(ents) != 0 {
		t.Errorf("node in %s: snapshot directory holds %v (%v)", p.Dir, ents, err)
	}
}

// TestSnapshotStream: a new member catches up from a snapshot of a store
// of tens of MB (a chunked string of several MB, a hash of 100k fields,
// many keys), streamed in chunks; it ends up with the same digest, and
// the snapshot's files are gone once installed.
func TestSnapshotStream(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--log-retain", "10")
	l := c.WaitLeader(t, 15*time.Second)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	loadData(t, leader, 24)

	p, raftAddr := c.Join(t, 4, "--log-retain", "10")
	start := time.Now()
	expect(t, leader.Do("RAFT", "ADD", "4", raftAddr), "+OK")
	c.Nodes = append(c.Nodes, p)
	expect(t, leader.Do("SET", "after-join", "1"), "+OK")
	c.WaitConverged(t, 60*time.Second)
	t.Logf("a new member caught up from a snapshot of 24 MB of data in %v", time.Since(start).Round(time.Millisecond))
	if !logHas(p, "installed a raft snapshot") || !logHas(c.Nodes[l], "streamed a raft snapshot") {
		t.Error("the new member did not catch up from a snapshot")
	}
	snapshotDirEmpty(t, p)
	n4 := testutil.Dial(t, p.Addr)
	expect(t, n4.Do("READONLY"), "+OK")
	for _, cmd := range [][]string{{"HLEN", "hash"}, {"STRLEN", "big"}, {"DBSIZE"}} {
		expect(t, n4.Do(cmd...), leader.Do(cmd...).String())
	}
	expect(t, n4.Do("GET", "after-join"), `"1"`)
}

// TestSnapshotInstallCrash: members that are killed (SIGKILL, at a hook
// point) after a snapshot's data is stored but before raft has it, after
// raft recorded it but before the store has it, and after the store has
// it but before its files are removed, finish the job when restarted: they
// converge with the group and keep no snapshot files.
func TestSnapshotInstallCrash(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--log-retain", "10")
	l := c.WaitLeader(t, 15*time.Second)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	loadData(t, leader, 8)

	points := []string{"snapshot-received", "snapshot-install", "snapshot-installed"}
	var joined []*testutil.Proc
	for i, point := range points {
		id := strconv.Itoa(4 + i)
		p, raftAddr := c.Join(t, 4+i, "--log-retain", "10")
		p.Stop()
		p.Env = []string{"BASALT_CRASH_AT=" + point}
		p.Restart(t)
		// Learners: the group's quorum stays the three voters.
		expect(t, leader.Do("RAFT", "ADD", id, raftAddr, "LEARNER"), "+OK")
		deadline := time.Now().Add(30 * time.Second)
		for p.Running() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if p.Running() || !logHas(p, "BASALT_CRASH_AT: killing the process") {
			t.Fatalf("node %s did not crash at %s", id, point)
		}
		joined = append(joined, p)
	}
	expect(t, leader.Do("SET", "after-crashes", "1"), "+OK")
	for i, p := range joined {
		p.Env = nil
		p.Restart(t)
		if points[i] == "snapshot-install" && !logHas(p, "finishing the install of a raft snapshot") {
			t.Errorf("node %d did not finish the install at its start", 4+i)
		}
		c.Nodes = append(c.Nodes, p)
	}
	c.WaitConverged(t, 60*time.Second)
	for _, p := range joined {
		snapshotDirEmpty(t, p)
	}
}

// TestSnapshotInstallReadonly: READONLY reads on a follower that installs
// snapshots see the store as it was before an install or after it, never a
// mix: an MGET of keys the leader changed together (one MSET) while the
// follower was cut off answers all old or all new values. (Before the
// install waited for reads, an MGET open across it lost the keys the
// excise took out of its snapshot: about one in two installs showed it.)
func TestSnapshotInstallReadonly(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--log-retain", "10")
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	const n = 2000
	keys := []string{"MGET"}
	for i := range n {
		keys = append(keys, fmt.Sprint("x", i))
	}
	mset := func(v string) {
		args := []string{"MSET"}
		for _, k := range keys[1:] {
			args = append(args, k, v)
		}
		expect(t, leader.Do(args...), "+OK")
	}
	mset("v0")
	loadData(t, leader, 16) // more than a memtable: the keys are in sstables
	c.WaitConverged(t, 30*time.Second)

	// Two READONLY clients read all the keys in a loop until the end.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	var mu sync.Mutex
	var bad []string
	reads := 0
	for range 2 {
		conn := testutil.Dial(t, c.Nodes[f].Addr)
		expect(t, conn.Do("READONLY"), "+OK")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := conn.DoErr(keys...)
				if err != nil {
					return
				}
				seen := map[string]int{}
				for _, e := range r.Elems {
					seen[e.String()]++
				}
				mu.Lock()
				reads++
				if _, missing := seen["(nil)"]; len(r.Elems) != n || len(seen) != 1 || missing {
					bad = append(bad, fmt.Sprintf("%.60s... %v", r.String(), seen))
				}
				mu.Unlock()
			}
		}()
	}
	admin := testutil.Dial(t, c.Nodes[f].Addr)
	for round := 1; round <= 2; round++ {
		expect(t, admin.Do("RAFT", "ISOLATE", "on"), "+OK")
		mset(fmt.Sprint("v", round))
		for i := 0; i < 1100; i++ { // past log-retain + 1024: the leader compacts
			leader.Do("SET", "filler", fmt.Sprint(i))
		}
		waitCompactedPast(t, c, f, leader)
		expect(t, admin.Do("RAFT", "ISOLATE", "off"), "+OK")
		c.WaitConverged(t, 30*time.Second)
		b, _ := os.ReadFile(c.Nodes[f].Log)
		if got := strings.Count(string(b), "installed a raft snapshot"); got != round {
			t.Fatalf("round %d: the follower (node %d) installed %d snapshots; the snapshot lines of the logs:\n%s",
				round, f, got, snapshotLines(c))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d reads", reads)
	if len(bad) > 0 {
		t.Errorf("%d of %d READONLY MGETs saw neither the old store nor the new one, e.g. %v", len(bad), reads, bad[0])
	}
}

// snapshotLines returns every node's log lines about snapshots and
// leadership, for a test's failure message.
func snapshotLines(c *testutil.Cluster) string {
	var out strings.Builder
	for i, n := range c.Nodes {
		b, _ := os.ReadFile(n.Log)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "snapshot") || strings.Contains(line, "leader") || strings.Contains(line, "slow") {
				fmt.Fprintf(&out, "node %d: %s\n", i, line)
			}
		}
	}
	return out.String()
}

// waitCompactedPast writes through leader until every node but f has
// dropped from its log the entries f has not applied, so that whichever
// of them leads once f is back must send it a snapshot. (A node compacts
// on its own schedule: one that applies late, on a slow disk, may not have
// yet, and a leadership change would then catch f up from the log.)
func waitCompactedPast(t *testing.T, c *testutil.Cluster, f int, leader *testutil.Conn) {
	t.Helper()
	applied, _ := strconv.ParseUint(testutil.Status(c.Nodes[f].Addr)["applied_index"], 10, 64)
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		behind := -1
		for n := range c.Nodes {
			first, _ := strconv.ParseUint(testutil.Status(c.Nodes[n].Addr)["log_first_index"], 10, 64)
			if n != f && first <= applied+1 {
				behind = n
			}
		}
		if behind < 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d still holds the log from index %d, which the isolated node %d needs", behind, applied+1, f)
		}
		leader.Do("SET", "filler", fmt.Sprint("more", i))
	}
}
