package cluster

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Chaos helpers shared by the tests of this package: the run's length and
// seed, a client connection that survives node failures, and the nemesis
// that kills, restarts and isolates nodes while clients work.

// opTimeout bounds one command: a write to an isolated leader waits until
// the leader notices it lost its quorum (an election timeout, 1-2 s), a
// read gives up confirming leadership after 5 s on the server.
const opTimeout = 6 * time.Second

// chaosDuration is how long the workload runs: $BASALT_CHAOS_SECONDS if
// set, else def (a fifth of it with -short).
func chaosDuration(t *testing.T, def time.Duration) time.Duration {
	t.Helper()
	if s := os.Getenv("BASALT_CHAOS_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("BASALT_CHAOS_SECONDS=%q: want a positive number of seconds", s)
		}
		return time.Duration(n) * time.Second
	}
	if testing.Short() {
		return def / 5
	}
	return def
}

// chaosSeed is $BASALT_CHAOS_SEED if set, else a fresh seed. It fixes the
// nemesis's choices and the clients' operations (not their timing), and
// every failure message repeats it.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("BASALT_CHAOS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BASALT_CHAOS_SEED=%q: %v", s, err)
		}
		return n
	}
	return rand.Uint64()
}

// clock gives the run's timestamps: nanoseconds since its start, on the
// monotonic clock.
type clock struct{ start time.Time }

func (c clock) now() int64 { return int64(time.Since(c.start)) }

// client is one client's connection to a random node of the cluster; after
// a connection error it reconnects to another random node.
type client struct {
	nodes []*testutil.Proc
	rng   *rand.Rand
	conn  *testutil.Conn
}

// do sends one command. An error is an I/O error (the connection is
// closed then, and the next call reconnects) or a failure to connect to any
// node before the deadline.
func (c *client) do(deadline time.Time, args ...string) (testutil.Reply, error) {
	if c.conn == nil {
		if err := c.connect(deadline); err != nil {
			return testutil.Reply{}, err
		}
	}
	r, err := c.conn.DoErr(args...)
	if err != nil {
		c.drop()
		return r, err
	}
	// In cluster mode, follow a MOVED to the slot's leader once, as
	// cluster clients do; a MOVED that remains is a refused write.
	if addr, ok := strings.CutPrefix(r.Str, "MOVED "); ok && r.IsError() {
		_, addr, _ = strings.Cut(addr, " ")
		conn, derr := testutil.DialErr(addr)
		if derr != nil {
			return r, nil
		}
		c.drop()
		conn.Timeout = opTimeout
		c.conn = conn
		if r, err = c.conn.DoErr(args...); err != nil {
			c.drop()
		}
	}
	return r, err
}

// connect tries random nodes (a killed one refuses at once) until one
// accepts or the deadline passes.
func (c *client) connect(deadline time.Time) error {
	var err error
	for time.Now().Before(deadline) {
		p := c.nodes[c.rng.IntN(len(c.nodes))]
		var conn *testutil.Conn
		if conn, err = testutil.DialErr(p.Addr); err == nil {
			conn.Timeout = opTimeout
			c.conn = conn
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no node accepted a connection: %v", err)
}

// drop closes the connection; the next command reconnects.
func (c *client) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// failoverError reports whether an error reply is one of those a client
// may get while the cluster fails over, to be retried.
func failoverError(msg string) bool {
	return strings.HasPrefix(msg, "TRYAGAIN ") ||
		strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "CLUSTERDOWN ") ||
		strings.HasPrefix(msg, "ERR leadership changed; ") ||
		strings.HasPrefix(msg, "ERR the connection to the leader was lost") || // the reply's outcome unknown
		msg == "ERR server is shutting down" ||
		strings.HasPrefix(msg, "ERR timed out ") // ReadIndex on a leader that lost its quorum
}

// notApplied reports whether a failover error says the write was not
// applied: the node refused it as not the leader (internal/shard's
// NotLeaderError; in cluster mode MOVED or CLUSTERDOWN, given before the
// write is proposed), or could not forward it (internal/server/forward.go:
// no leader known, dialing it failed, the new connection to it failed
// before the command was sent). Every other failure leaves the outcome
// unknown: "ERR leadership changed; the write may or may not have
// been applied", "ERR the connection to the leader was lost [before the
// reply...]" (the command had been forwarded), a broken connection, a
// timeout. The
// checks hold basalt to this: a write reported not applied that was
// applied shows up as a value or an increment nobody wrote.
func notApplied(msg string) bool {
	return strings.HasPrefix(msg, "TRYAGAIN no leader is known") ||
		strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "CLUSTERDOWN ") || // refused before the log (cluster mode)
		strings.HasPrefix(msg, "TRYAGAIN this node is not the leader") ||
		strings.HasPrefix(msg, "TRYAGAIN dial tcp ") ||
		msg == "TRYAGAIN the connection to the leader was lost" ||
		msg == "ERR server is shutting down"
}

// backoff is a client's pause after a failure, before it tries again.
func backoff(rng *rand.Rand) {
	time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
}

// event is one thing the nemesis did, with its span on the run's clock.
type event struct {
	start, end int64
	what       string
}

// nemesis injects faults into a cluster from the test goroutine (Restart
// may fail the test, so it must not run elsewhere). It keeps a log of what
// it did for failure messages and the history's visualization.
type nemesis struct {
	t     *testing.T
	c     *testutil.Cluster
	net   *testutil.Netns // the nodes' namespaces, if they run in some: partitions are the network's
	rng   *rand.Rand
	clock clock

	mu     sync.Mutex
	events []event
}

func newNemesis(t *testing.T, c *testutil.Cluster, seed uint64, clk clock) *nemesis {
	return &nemesis{t: t, c: c, rng: rand.New(rand.NewPCG(seed, 0x6e656d65736973)), clock: clk}
}

func (n *nemesis) record(start int64, format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, event{start: start, end: n.clock.now(), what: fmt.Sprintf(format, args...)})
}

// log returns the events as lines "[start-end s] what".
func (n *nemesis) log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, e := range n.events {
		fmt.Fprintf(&b, "  [%7.3fs - %7.3fs] %s\n", float64(e.start)/1e9, float64(e.end)/1e9, e.what)
	}
	return b.String()
}

// sleep pauses for a random duration in [lo, hi), cut short at until.
func (n *nemesis) sleep(lo, hi time.Duration, until time.Time) {
	d := lo + time.Duration(n.rng.Int64N(int64(hi-lo)))
	if left := time.Until(until); d > left {
		d = max(left, 0)
	}
	time.Sleep(d)
}

// victim picks a running node: the leader half of the time (if there is
// one), else any. It returns -1 if no node runs.
func (n *nemesis) victim() int {
	if n.rng.IntN(2) == 0 {
		if l, ok := n.c.Leader(); ok {
			return l
		}
	}
	var up []int
	for i, p := range n.c.Nodes {
		if p.Running() {
			up = append(up, i)
		}
	}
	if len(up) == 0 {
		return -1
	}
	return up[n.rng.IntN(len(up))]
}

// role names node i's role for the log.
func (n *nemesis) role(i int) string {
	if st := testutil.Status(n.c.Nodes[i].Addr); st != nil {
		return st["role"]
	}
	return "unknown role"
}

// killRestart SIGKILLs node i, waits a little and restarts it.
func (n *nemesis) killRestart(i int, until time.Time) {
	t0 := n.clock.now()
	role := n.role(i)
	n.c.Nodes[i].Kill()
	n.sleep(200*time.Millisecond, 1500*time.Millisecond, until)
	n.c.Nodes[i].Restart(n.t)
	n.record(t0, "node %d (%s) killed, restarted", i+1, role)
}

// isolate cuts node i off from its peers' Raft traffic for 1-3 s: in its
// namespace, off the network; on loopback, by RAFT ISOLATE.
func (n *nemesis) isolate(i int, until time.Time) {
	t0 := n.clock.now()
	role := n.role(i)
	n.setIsolated(i, true)
	n.sleep(time.Second, 3*time.Second, until.Add(time.Second))
	n.setIsolated(i, false)
	if n.net != nil {
		n.record(t0, "node %d (%s) off the network, back", i+1, role)
	} else {
		n.record(t0, "node %d (%s) isolated from its peers, healed", i+1, role)
	}
}

func (n *nemesis) setIsolated(i int, on bool) {
	if n.net != nil {
		if err := n.net.Isolate(i, on); err != nil {
			n.t.Fatal(err)
		}
		return
	}
	onOff := map[bool]string{true: "on", false: "off"}[on]
	if err := raftIsolate(n.c.Nodes[i].Addr, onOff); err != nil {
		n.t.Fatalf("RAFT ISOLATE %s for node %d: %v", onOff, i+1, err)
	}
}

// cut drops the traffic between node i and another for 1-3 s, both still
// reaching the third node and the clients: a partial partition, where
// the node between them must not let either lead against the other. On
// loopback, where only a whole node can be isolated, it isolates i.
func (n *nemesis) cut(i int, until time.Time) {
	if n.net == nil {
		n.isolate(i, until)
		return
	}
	j := (i + 1 + n.rng.IntN(len(n.c.Nodes)-1)) % len(n.c.Nodes)
	t0 := n.clock.now()
	roles := n.role(i) + ", " + n.role(j)
	if err := n.net.Cut(i, j, true); err != nil {
		n.t.Fatal(err)
	}
	n.sleep(time.Second, 3*time.Second, until.Add(time.Second))
	if err := n.net.Cut(i, j, false); err != nil {
		n.t.Fatal(err)
	}
	n.record(t0, "nodes %d and %d (%s) cut from each other, joined", i+1, j+1, roles)
}

// killAll SIGKILLs every node at once.
func (n *nemesis) killAll() {
	t0 := n.clock.now()
	for _, p := range n.c.Nodes {
		go p.Kill()
	}
	for _, p := range n.c.Nodes {
		p.Kill() // waits until the process is gone
	}
	n.record(t0, "every node killed")
}

// heal lifts every isolation and restarts the nodes that are down.
func (n *nemesis) heal() {
	t0 := n.clock.now()
	for i, p := range n.c.Nodes {
		if !p.Running() {
			p.Restart(n.t)
			continue
		}
		n.setIsolated(i, false)
	}
	n.record(t0, "healed: every node running and connected")
}

func raftIsolate(addr, onOff string) error {
	conn, err := testutil.DialErr(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.Timeout = opTimeout
	r, err := conn.DoErr("RAFT", "ISOLATE", onOff)
	if err == nil && r.String() != "+OK" {
		err = fmt.Errorf("reply %s", r)
	}
	return err
}

// evidenceDir makes a directory for a failure's evidence and copies the
// nodes' logs there (t.TempDir is removed when the test ends, so it goes
// elsewhere). It returns "" if it cannot.
func evidenceDir(t *testing.T, c *testutil.Cluster, prefix string) string {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Logf("no directory for the failure's evidence: %v", err)
		return ""
	}
	for i, p := range c.Nodes {
		if b, err := os.ReadFile(p.Log); err == nil {
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d.log", i+1)), b, 0o644)
		}
	}
	return dir
}

// logRaftState logs each node's log bounds: with --log-retain small, a
// node that restarts far behind catches up from a snapshot.
func logRaftState(t *testing.T, c *testutil.Cluster) {
	for i, p := range c.Nodes {
		st := testutil.Status(p.Addr)
		t.Logf("node %d: %s, applied %s, log %s..%s", i+1, st["role"], st["applied_index"], st["log_first_index"], st["log_last_index"])
	}
}
