package replica_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/command"
	"basalt/internal/replica"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// checkGoroutines fails the test if goroutines it started outlive it.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// cluster is a group of nodes on loopback; nodes[i] is nil while stopped.
type cluster struct {
	t     *testing.T
	ids   []uint64
	nodes []*replica.Node
	raft  []string
	data  []string
	addrs []string
}

func newCluster(t *testing.T, size int) *cluster {
	checkGoroutines(t)
	c := &cluster{t: t}
	for i := range size {
		c.ids = append(c.ids, uint64(i+1))
		c.raft = append(c.raft, t.TempDir())
		c.data = append(c.data, t.TempDir())
		c.addrs = append(c.addrs, "127.0.0.1:0")
		c.nodes = append(c.nodes, nil)
	}
	for i := range size {
		c.start(i)
	}
	// Addresses are known once every node listens.
	for i, a := range c.nodes {
		for j, b := range c.nodes {
			if i != j {
				a.AddPeer(b.ID(), b.Addr())
			}
		}
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	return c
}

// start opens node i on its directories and address.
func (c *cluster) start(i int) {
	c.t.Helper()
	peers := map[uint64]string{}
	for j, id := range c.ids {
		if j != i {
			peers[id] = ""
			if !strings.HasSuffix(c.addrs[j], ":0") {
				peers[id] = c.addrs[j]
			}
		}
	}
	n, err := replica.Open(replica.Config{
		ID: c.ids[i], Addr: c.addrs[i], Peers: peers,
		RaftDir: c.raft[i], DataDir: c.data[i],
		Store: store.Options{CacheSize: 8 << 20},
		Apply: command.Apply,
		// 200-400ms without a heartbeat: elections stay quick but a slow
		// fsync on a busy machine does not depose a healthy leader.
		ElectionTicks: 20,
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes[i] = n
	c.addrs[i] = n.Addr() // restart on the same address
}

func (c *cluster) stop(i int) {
	if n := c.nodes[i]; n != nil {
		if err := n.Close(); err != nil {
			c.t.Errorf("close node %d: %v", n.ID(), err)
		}
		if err := n.Err(); err != nil {
			c.t.Errorf("node %d failed: %v", n.ID(), err)
		}
		c.nodes[i] = nil
	}
}

func (c *cluster) live() []*replica.Node {
	var out []*replica.Node
	for _, n := range c.nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// leader waits for a node that leads and that every live node follows.
func (c *cluster) leader() *replica.Node { return leaderOf(c.t, c.live()) }

// leaderOf waits for a node of nodes that leads and that all of them follow.
func leaderOf(t *testing.T, nodes []*replica.Node) *replica.Node {
	t.Helper()
	var lead *replica.Node
	waitFor(t, 5*time.Second, "a leader", func() bool {
		lead = nil
		for _, n := range nodes {
			if n.IsLeader() {
				lead = n
			}
		}
		if lead == nil {
			return false
		}
		for _, n := range nodes {
			if n.Leader() != lead.ID() {
				return false
			}
		}
		return true
	})
	return lead
}

// sameDigest waits until every live node has applied the same index and
// their stores digest the same, and returns that digest.
func (c *cluster) sameDigest() [32]byte {
	c.t.Helper()
	var d [32]byte
	var why string
	ok := poll(5*time.Second, func() bool {
		nodes := c.live()
		for _, n := range nodes[1:] {
			if n.Applied() != nodes[0].Applied() {
				why = fmt.Sprintf("node %d applied %d, node %d %d", n.ID(), n.Applied(), nodes[0].ID(), nodes[0].Applied())
				return false
			}
		}
		for i, n := range nodes {
			got, err := n.Store().Digest()
			if err != nil {
				c.t.Fatal(err)
			}
			if i == 0 {
				d = got
			} else if got != d {
				why = fmt.Sprintf("node %d's digest differs from node %d's at index %d", n.ID(), nodes[0].ID(), n.Applied())
				return false
			}
		}
		return true
	})
	if !ok {
		c.t.Fatalf("replicas disagree: %s", why)
	}
	return d
}

func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll(d, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func record(args ...string) *shard.Record {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{argv}}
}

func propose(n *replica.Node, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reply, err := n.Propose(ctx, record(args...), 2)
	return string(reply), err
}

// write proposes through the current leader, retrying while leadership
// moves, and checks the reply (unless want is empty).
func (c *cluster) write(want string, args ...string) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := propose(c.leader(), args...)
		if err == nil {
			if want != "" && got != want {
				c.t.Fatalf("%q: got %q, want %q", args, got, want)
			}
			return
		}
		var nl *replica.NotLeaderError
		if !errors.As(err, &nl) || time.Now().After(deadline) {
			c.t.Fatalf("%q: %v", args, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, n *replica.Node, key string) string {
	t.Helper()
	tx := n.Store().ReadTx(0, time.Now().UnixMilli(), false)
	defer tx.Close()
	m, ok := tx.Lookup([]byte(key))
	if !ok {
		return "<nil>"
	}
	return string(m.Body)
}

// TestReplicate writes through the leader and checks that every replica
// applies the same records to the same state, and that followers refuse
// writes naming the leader.
func TestReplicate(t *testing.T) {
	c := newCluster(t, 3)
	lead := c.leader()
	c.write("+OK\r\n", "SET", "k", "v")
	c.write("+OK\r\n", "SET", "ttl", "x", "PX", "100000") // the record's time goes everywhere
	c.write(":1\r\n", "INCR", "n")
	c.write(":2\r\n", "INCR", "n")
	c.write(":3\r\n", "RPUSH", "l", "a", "b", "c")
	c.write(":2\r\n", "HSET", "h", "f1", "v1", "f2", "v2")
	c.write(":5\r\n", "SADD", "s", "a", "b", "c", "d", "e")
	c.write("", "SPOP", "s", "2") // the seed picks the same members everywhere; reply checked below
	for _, n := range c.live() {
		if n == lead {
			continue
		}
		_, err := propose(n, "SET", "k", "w")
		var nl *replica.NotLeaderError
		if !errors.As(err, &nl) || nl.Leader != lead.ID() {
			t.Fatalf("follower %d: got %v, want a NotLeaderError naming %d", n.ID(), err, lead.ID())
		}
	}
	c.sameDigest()
	for _, n := range c.live() {
		if got := get(t, n, "k"); got != "v" {
			t.Fatalf("node %d: k = %q", n.ID(), got)
		}
		if got := get(t, n, "n"); got != "2" {
			t.Fatalf("node %d: n = %q", n.ID(), got)
		}
	}
}

// TestFailover closes the leader, writes through the new one, restarts the
// old leader on its directories and checks it catches up; then a node
// whose data store is lost rebuilds it from its raft log.
func TestFailover(t *testing.T) {
	c := newCluster(t, 3)
	for i := range 20 {
		c.write(":"+strconv.Itoa(i+1)+"\r\n", "INCR", "n")
		c.write("+OK\r\n", "SET", "k"+strconv.Itoa(i), "v")
	}
	before := c.sameDigest()
	old := c.leader()
	oldIdx := int(old.ID() - 1)
	c.stop(oldIdx)
	began := time.Now()
	lead := c.leader()
	if lead.ID() == old.ID() {
		t.Fatal("the closed node still leads")
	}
	c.write(":21\r\n", "INCR", "n")
	t.Logf("node %d closed; node %d leads and took a write after %v", old.ID(), lead.ID(), time.Since(began))
	c.write("+OK\r\n", "SET", "after", "failover")

	c.start(oldIdx)
	after := c.sameDigest()
	if after == before {
		t.Fatal("digest did not change with the writes after failover")
	}
	if got := get(t, c.nodes[oldIdx], "after"); got != "failover" {
		t.Fatalf("restarted node: after = %q", got)
	}
	c.write(":22\r\n", "INCR", "n")
	c.sameDigest()

	// Lose a follower's data store: on restart it replays the whole log.
	f := 0
	for c.nodes[f].IsLeader() {
		f++
	}
	c.stop(f)
	if err := os.RemoveAll(c.data[f]); err != nil {
		t.Fatal(err)
	}
	c.start(f)
	d := c.sameDigest()
	if got := get(t, c.nodes[f], "n"); got != "22" {
		t.Fatalf("rebuilt node: n = %q", got)
	}

	// Restart everything: the state is the same.
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i)
	}
	if got := c.sameDigest(); got != d {
		t.Fatal("digest changed across a full restart")
	}
	c.write(":23\r\n", "INCR", "n")
}

// TestConcurrentIncr proposes INCRs from 20 goroutines on the leader: each
// acknowledged INCR is counted exactly once.
func TestConcurrentIncr(t *testing.T) {
	c := newCluster(t, 3)
	lead := c.leader()
	const workers, each = 20, 50
	var mu sync.Mutex
	seen := map[int64]bool{}
	var acked, failed int
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				reply, err := propose(lead, "INCR", "counter")
				mu.Lock()
				if err != nil {
					failed++
					mu.Unlock()
					continue
				}
				v, perr := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"), 10, 64)
				if perr != nil || seen[v] {
					mu.Unlock()
					t.Errorf("reply %q: not a fresh integer", reply)
					return
				}
				seen[v] = true
				acked++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	c.sameDigest()
	final, err := strconv.Atoi(get(t, c.leader(), "counter"))
	if err != nil {
		t.Fatal(err)
	}
	// An error means the outcome is unknown, so the count may be above
	// the acknowledgements by at most the failures; every reply is unique.
	if final < acked || final > acked+failed {
		t.Fatalf("counter = %d, %d acknowledged, %d failed", final, acked, failed)
	}
	for v := range seen {
		if v < 1 || v > int64(final) {
			t.Fatalf("reply %d outside 1..%d", v, final)
		}
	}
	if failed > 0 {
		t.Logf("%d proposals failed (leadership changed under load)", failed)
	}
	t.Logf("%d INCRs acknowledged, counter = %d; the leader applied %d entries in %d batches",
		acked, final, lead.Stats.Applied.Load(), lead.Stats.Batches.Load())
}

// TestPartitionedLeader cuts the leader off: a write it accepted cannot
// commit, and fails with ErrUnknownOutcome when it steps down; the majority
// elects a leader and goes on; once healed, the old leader's uncommitted
// entry is replaced by the majority's log and all replicas agree.
func TestPartitionedLeader(t *testing.T) {
	c := newCluster(t, 3)
	c.write("+OK\r\n", "SET", "x", "before")
	old := c.leader()
	var rest []*replica.Node
	for _, n := range c.live() {
		if n != old {
			rest = append(rest, n)
			old.Transport().Partition(n.ID())
		}
	}
	_, err := propose(old, "SET", "x", "lost")
	if !errors.Is(err, replica.ErrUnknownOutcome) {
		t.Fatalf("proposal on the cut-off leader: %v, want ErrUnknownOutcome", err)
	}
	lead := leaderOf(t, rest)
	if got, err := propose(lead, "SET", "x", "after"); err != nil || got != "+OK\r\n" {
		t.Fatalf("write on the new leader: %q, %v", got, err)
	}
	for _, n := range rest {
		old.Transport().Heal(n.ID())
	}
	c.sameDigest()
	for _, n := range c.live() {
		if got := get(t, n, "x"); got != "after" {
			t.Fatalf("node %d: x = %q", n.ID(), got)
		}
	}
}
