// Package cluster tests basalt's replication: a 3-node Raft group on
// loopback, clients on any node, failover, membership changes.
package cluster

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestClusterBasics: writes and reads through the leader and a follower,
// transactions and blocking calls forwarded, READONLY reads on a follower,
// and the replicas agreeing byte for byte.
func TestClusterBasics(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader, follower := testutil.Dial(t, c.Nodes[l].Addr), testutil.Dial(t, c.Nodes[f].Addr)

	expect(t, follower.Do("SET", "k", "v"), "+OK")
	expect(t, leader.Do("GET", "k"), `"v"`)
	expect(t, follower.Do("INCR", "n"), ":1")
	expect(t, leader.Do("INCR", "n"), ":2")
	expect(t, follower.Do("GET", "n"), `"2"`) // linearizable: forwarded to the leader

	// MULTI/EXEC with WATCH through the follower; another client's write
	// to the watched key aborts it.
	expect(t, follower.Do("WATCH", "n"), "+OK")
	expect(t, leader.Do("INCR", "n"), ":3")
	expect(t, follower.Do("MULTI"), "+OK")
	expect(t, follower.Do("INCR", "n"), "+QUEUED")
	expect(t, follower.Do("EXEC"), "(nil-array)")
	expect(t, follower.Do("MULTI"), "+OK")
	expect(t, follower.Do("INCR", "n"), "+QUEUED")
	expect(t, follower.Do("SET"), "-ERR wrong number of arguments for 'set' command")
	expect(t, follower.Do("EXEC"), "-EXECABORT Transaction discarded because of previous errors.")

	// A blocked BLPOP through the follower is woken by a push on the leader.
	got := make(chan string, 1)
	go func() {
		bc, err := testutil.DialErr(c.Nodes[f].Addr)
		if err != nil {
			got <- err.Error()
			return
		}
		defer bc.Close()
		bc.Timeout = 20 * time.Second
		r, err := bc.DoErr("BLPOP", "q", "10")
		if err != nil {
			got <- err.Error()
			return
		}
		got <- r.String()
	}()
	time.Sleep(300 * time.Millisecond)
	expect(t, leader.Do("RPUSH", "q", "job"), ":1")
	select {
	case r := <-got:
		if !strings.Contains(r, `"job"`) {
			t.Errorf("BLPOP through a follower: %s", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("BLPOP through a follower was not woken")
	}

	// READONLY: the follower answers from its own state, which catches up.
	expect(t, follower.Do("READONLY"), "+OK")
	expect(t, leader.Do("SET", "late", "1"), "+OK")
	deadline := time.Now().Add(5 * time.Second)
	for follower.Do("GET", "late").String() != `"1"` && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	expect(t, follower.Do("GET", "late"), `"1"`)

	for i, p := range c.Nodes {
		st := testutil.Status(p.Addr)
		want := "follower"
		if i == l {
			want = "leader"
		}
		if st["role"] != want || st["leader_id"] != strconv.Itoa(l+1) || st["voters"] != "1,2,3" {
			t.Errorf("node %d RAFT STATUS %v", i+1, st)
		}
	}
	c.WaitConverged(t, 10*time.Second)
}

// TestWait: WAIT counts the other members whose logs hold the client's
// writes. An acknowledged write is on a majority, so WAIT 1 answers at
// once; with a follower cut off, WAIT 2 answers 1 after its timeout, and
// the follower's return makes it 2. Asked through a follower, it is the
// leader that counts.
func TestWait(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	other := 3 - l - f // the third node
	leader, follower := testutil.Dial(t, c.Nodes[l].Addr), testutil.Dial(t, c.Nodes[f].Addr)
	follower.Timeout = 20 * time.Second

	expect(t, follower.Do("SET", "k", "1"), "+OK")
	expect(t, follower.Do("WAIT", "2", "10000"), ":2")

	// ROLE: the leader lists both followers by client address, a
	// follower names the leader's.
	role := leader.Do("ROLE")
	var ports []string
	if len(role.Elems) == 3 && role.Elems[0].Str == "master" {
		for _, r := range role.Elems[2].Elems {
			ports = append(ports, r.Elems[1].Str)
		}
	}
	sort.Strings(ports)
	var wantPorts []string
	for i, n := range c.Nodes {
		if i != l {
			wantPorts = append(wantPorts, strconv.Itoa(n.Port))
		}
	}
	sort.Strings(wantPorts)
	if strings.Join(ports, ",") != strings.Join(wantPorts, ",") {
		t.Errorf("leader ROLE %v: want replicas on ports %v", role, wantPorts)
	}
	if r := follower.Do("ROLE"); len(r.Elems) != 5 || r.Elems[0].Str != "slave" || r.Elems[2].Int != int64(c.Nodes[l].Port) || r.Elems[3].Str != "connected" {
		t.Errorf("follower ROLE %v: want slave of port %d", r, c.Nodes[l].Port)
	}

	if err := raftIsolate(c.Nodes[other].Addr, "on"); err != nil {
		t.Fatal(err)
	}
	expect(t, leader.Do("SET", "k", "2"), "+OK")
	expect(t, leader.Do("WAIT", "1", "0"), ":1")
	start := time.Now()
	expect(t, leader.Do("WAIT", "2", "300"), ":1")
	if took := time.Since(start); took < 290*time.Millisecond {
		t.Errorf("WAIT 2 300 with a member cut off answered after %v", took)
	}
	expect(t, leader.Do("MULTI"), "+OK")
	expect(t, leader.Do("WAIT", "2", "0"), "+QUEUED")
	expect(t, leader.Do("EXEC"), "[:1]") // inside EXEC it never waits
	if err := raftIsolate(c.Nodes[other].Addr, "off"); err != nil {
		t.Fatal(err)
	}
	expect(t, follower.Do("WAIT", "2", "0"), ":2")
}

// TestWaitaof: WAITAOF answers [1 when the leader's log holds the
// client's writes on disk, the other members whose logs hold them]. With
// appendfsync always both followers have them within its timeout; with one
// follower killed, asking for both waits the whole timeout and answers the
// one; a WAITAOF with no timeout, through the other follower, waits for the
// killed one to come back, while the leader serves other clients.
func TestWaitaof(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	other := 3 - l - f // the third node
	leader, follower := testutil.Dial(t, c.Nodes[l].Addr), testutil.Dial(t, c.Nodes[f].Addr)
	leader.Timeout, follower.Timeout = 20*time.Second, 60*time.Second

	expect(t, follower.Do("SET", "k", "1"), "+OK")
	expect(t, follower.Do("WAITAOF", "1", "2", "10000"), "[:1, :2]")
	expect(t, leader.Do("SET", "k", "2"), "+OK")
	expect(t, leader.Do("WAITAOF", "0", "2", "1000"), "[:1, :2]")

	c.Nodes[other].Kill()
	expect(t, leader.Do("SET", "k", "3"), "+OK")
	expect(t, leader.Do("WAITAOF", "1", "1", "0"), "[:1, :1]")
	start := time.Now()
	expect(t, leader.Do("WAITAOF", "0", "2", "500"), "[:1, :1]")
	if took := time.Since(start); took < 490*time.Millisecond || took > 5*time.Second {
		t.Errorf("WAITAOF 0 2 500 with a follower down answered after %v", took)
	}

	expect(t, follower.Do("SET", "k", "4"), "+OK")
	follower.Send(testutil.Command("WAITAOF", "1", "2", "0"))
	admin := testutil.Dial(t, c.Nodes[l].Addr)
	blocked := func(n string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(admin.Do("INFO", "clients").Str, "blocked_clients:"+n+"\r\n") {
			if time.Now().After(deadline) {
				t.Fatalf("the leader's blocked clients never became %s:\n%s", n, admin.Do("INFO", "clients").Str)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	blocked("1")
	expect(t, leader.Do("INCR", "n"), ":1") // others go on meanwhile
	// A client that hangs up on the follower ends its WAITAOF on the
	// leader.
	gone := testutil.Dial(t, c.Nodes[f].Addr)
	expect(t, gone.Do("SET", "k", "5"), "+OK")
	gone.Send(testutil.Command("WAITAOF", "0", "2", "0"))
	blocked("2")
	gone.Close()
	blocked("1")
	c.Nodes[other].Restart(t)
	expect(t, follower.Read(), "[:1, :2]")

	// A leader that hands leadership over ends the waits it held, as a
	// Redis master that becomes a replica does, instead of holding them
	// for ever: it no longer hears the followers.
	expect(t, leader.Do("SET", "k", "6"), "+OK")
	leader.Send(testutil.Command("WAITAOF", "1", "3", "0")) // more than there are
	blocked("1")
	expect(t, admin.Do("RAFT", "TRANSFER"), "+OK")
	expect(t, leader.Read(), "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
}

// TestFailover kills the leader with SIGKILL: writes resume on a new leader
// within seconds, and the old leader, restarted, catches up and agrees.
// BASALT_FAILOVER_RUNS=10 repeats it and logs the median failover time.
func TestFailover(t *testing.T) {
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("BASALT_FAILOVER_RUNS")); err == nil && n > 0 {
		runs = n
	}
	c := testutil.StartCluster(t, 3)
	var times []time.Duration
	acked := 0
	for run := 0; run < runs; run++ {
		l := c.WaitLeader(t, 15*time.Second)
		// Acknowledged writes before the kill must survive it.
		w := testutil.Dial(t, c.Nodes[(l+1)%3].Addr)
		for i := 0; i < 50; i++ {
			expect(t, w.Do("RPUSH", "acked", strconv.Itoa(acked)), ":"+strconv.Itoa(acked+1))
			acked++
		}
		w.Close()
		c.Nodes[l].Kill()
		start := time.Now()
		survivor := c.Nodes[(l+1)%3].Addr
		for {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("run %d: no write succeeded within 20s of killing the leader", run)
			}
			if conn, err := testutil.DialErr(survivor); err == nil {
				conn.Timeout = 2 * time.Second
				r, err := conn.DoErr("SET", "failover", strconv.Itoa(run))
				conn.Close()
				if err == nil && r.String() == "+OK" {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		times = append(times, time.Since(start))
		c.Nodes[l].Restart(t)
		c.WaitConverged(t, 20*time.Second)
	}
	check := testutil.Dial(t, c.Nodes[0].Addr)
	expect(t, check.Do("LLEN", "acked"), ":"+strconv.Itoa(acked))
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	t.Logf("failover (leader SIGKILL to first successful write), %d runs: median %v, min %v, max %v",
		runs, times[len(times)/2], times[0], times[len(times)-1])
}

// TestMembership adds a fourth node at run time: it starts empty, catches
// up from the log and agrees; then it is removed again.
func TestMembership(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	for i := 0; i < 200; i++ {
		leader.Do("HSET", "h", "f"+strconv.Itoa(i), strconv.Itoa(i))
	}
	p, raftAddr := c.Join(t, 4)
	expect(t, leader.Do("RAFT", "ADD", "4", raftAddr), "+OK")
	c.Nodes = append(c.Nodes, p)
	expect(t, leader.Do("SET", "after-join", "1"), "+OK")
	c.WaitConverged(t, 20*time.Second)
	if st := testutil.Status(p.Addr); st["voters"] != "1,2,3,4" || st["role"] != "follower" {
		t.Errorf("new member's status: %v", st)
	}
	n4 := testutil.Dial(t, p.Addr)
	expect(t, n4.Do("HLEN", "h"), ":200")
	expect(t, n4.Do("SET", "via-4", "x"), "+OK") // forwarded

	expect(t, leader.Do("RAFT", "REMOVE", "4"), "+OK")
	if st := testutil.Status(c.Nodes[l].Addr); st["voters"] != "1,2,3" {
		t.Errorf("after RAFT REMOVE 4: %v", st)
	}
	expect(t, leader.Do("RAFT", "ADD", "x", "y"), "-ERR node ID must be a positive integer")
}

func expect(t *testing.T, r testutil.Reply, want string) {
	t.Helper()
	if r.String() != want {
		t.Fatalf("got %s, want %s", r.String(), want)
	}
}

// TestClusterPubSub: a message published on any node reaches the
// subscribers of every node.
func TestClusterPubSub(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	var subs []*testutil.Conn
	for _, p := range c.Nodes {
		s := testutil.Dial(t, p.Addr)
		expect(t, s.Do("SUBSCRIBE", "news"), `["subscribe", "news", :1]`)
		subs = append(subs, s)
	}
	pub := testutil.Dial(t, c.Nodes[c.Follower(t)].Addr)
	expect(t, pub.Do("PUBLISH", "news", "hello"), ":1")
	for i, s := range subs {
		if r := s.Read(); r.String() != `["message", "news", "hello"]` {
			t.Errorf("subscriber on node %d got %s", i+1, r)
		}
	}
}

// TestSnapshotCatchUp: a follower that was down while the others compacted
// their logs catches up from a snapshot of the store.
func TestSnapshotCatchUp(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--log-retain", "10")
	l := c.WaitLeader(t, 15*time.Second)
	f := (l + 1) % 3
	c.Nodes[f].Stop()
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	// One write at a time: each is an entry of its own, so the log passes
	// the compaction threshold (log-retain + 1024 entries).
	for i := 0; i < 1200; i++ {
		leader.Do("SET", "k"+strconv.Itoa(i%100), strconv.Itoa(i))
	}
	if st := testutil.Status(c.Nodes[l].Addr); st["log_first_index"] == "1" || st["log_first_index"] == "2" {
		t.Fatalf("the leader did not compact its log: %v", st)
	}
	c.Nodes[f].Restart(t)
	c.WaitConverged(t, 30*time.Second)
	follower := testutil.Dial(t, c.Nodes[f].Addr)
	expect(t, follower.Do("READONLY"), "+OK")
	expect(t, follower.Do("GET", "k99"), `"1199"`)
}

// TestFailoverCommand: Redis's FAILOVER on a cluster is a leadership
// transfer, to a chosen follower (TO, by the client address it
// advertises) or to the most up-to-date one; a follower refuses it as a
// Redis replica does.
func TestFailoverCommand(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	f := (l + 1) % 3
	follower := testutil.Dial(t, c.Nodes[f].Addr)
	expect(t, follower.Do("FAILOVER"), "-ERR FAILOVER is not valid when server is a replica.")
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	expect(t, leader.Do("SET", "before", "1"), "+OK")
	expect(t, leader.Do("FAILOVER", "TO", "127.0.0.1", "1"), "-ERR FAILOVER target HOST and PORT is not a replica.")
	expect(t, leader.Do("FAILOVER", "FORCE"), "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.")

	host, port, _ := strings.Cut(c.Nodes[f].Addr, ":")
	expect(t, leader.Do("FAILOVER", "TO", host, port, "TIMEOUT", "5000"), "+OK")
	waitLeaderIs(t, c, f)
	expect(t, follower.Do("SET", "after", "1"), "+OK")
	expect(t, follower.Do("GET", "before"), `"1"`)

	// Without TO: another node leads next.
	expect(t, follower.Do("FAILOVER"), "+OK")
	waitLeaderIsNot(t, c, f, "FAILOVER without TO: the leader did not change")
	c.WaitConverged(t, 20*time.Second)

	// A replica that is down is not online once raft's quorum check (every
	// election timeout, 1 s) has stopped hearing from it.
	l = c.WaitLeader(t, 15*time.Second)
	down := (l + 1) % 3
	host, port, _ = strings.Cut(c.Nodes[down].Addr, ":")
	c.Nodes[down].Kill()
	time.Sleep(2500 * time.Millisecond)
	expect(t, testutil.Dial(t, c.Nodes[l].Addr).Do("FAILOVER", "TO", host, port), "-ERR FAILOVER target replica is not online.")
}

// waitLeaderIsNot waits up to 15 s for a node other than node was to lead,
// and fails with why if none does.
func waitLeaderIsNot(t *testing.T, c *testutil.Cluster, was int, why string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if i, ok := c.Leader(); ok && i != was {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitLeaderIs(t *testing.T, c *testutil.Cluster, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if i, ok := c.Leader(); ok && i == want {
			return
		}
		if time.Now().After(deadline) {
			i, _ := c.Leader()
			t.Fatalf("leader is node %d, want %d", i, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFailoverUnnoticed: a follower's clients see a leader's SIGKILL as a
// pause, on the same connection. A read in flight to the dead leader runs
// again on the new one; a write in flight fails, saying that its outcome
// is unknown; the commands after them wait for the new leader instead of
// failing with TRYAGAIN while the group elects one.
func TestFailoverUnnoticed(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	loops := startUnnoticedLoops(t, c.Nodes[(l+1)%3].Addr, []string{"k"})
	time.Sleep(300 * time.Millisecond)
	c.Nodes[l].Kill()
	time.Sleep(4 * time.Second) // an election and some
	loops.check(t, "a client of the follower")
}

// unnoticedLoops are a GET loop and an INCR loop through one node, over
// keys, each on a connection of its own (TestFailoverUnnoticed).
type unnoticedLoops struct {
	stop    chan struct{}
	results chan unnoticedTally
}

// unnoticedTally is what one loop saw.
type unnoticedTally struct {
	read                            bool
	ok, inFlight, other, reconnects int
}

func startUnnoticedLoops(t *testing.T, addr string, keys []string) *unnoticedLoops {
	l := &unnoticedLoops{stop: make(chan struct{}), results: make(chan unnoticedTally, 2)}
	for _, name := range []string{"GET", "INCR"} {
		go func() {
			r := unnoticedTally{read: name == "GET"}
			defer func() { l.results <- r }()
			var conn *testutil.Conn
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				if conn == nil {
					var err error
					if conn, err = testutil.DialErr(addr); err != nil {
						r.other++
						t.Errorf("dial %s: %v", addr, err)
						return
					}
					conn.Timeout = 10 * time.Second
				}
				reply, err := conn.DoErr(name, keys[i%len(keys)])
				switch {
				case err != nil: // the node closed it
					r.reconnects++
					conn.Close()
					conn = nil
				case reply.IsError() && reply.Str == "ERR the connection to the leader was lost before the reply: the write may or may not have been applied":
					r.inFlight++
				case reply.IsError():
					r.other++
					if r.other <= 5 {
						t.Errorf("%s %s through %s: %v", name, keys[i%len(keys)], addr, reply)
					}
				default:
					r.ok++
				}
			}
		}()
	}
	return l
}

// check stops the loops and checks what they saw: a read in flight when
// the leader died runs again on the new leader; a write in flight, or one
// sent on the broken connection, may each have been applied or not, and
// says so; nothing else fails, and the client's connection stays open.
func (l *unnoticedLoops) check(t *testing.T, who string) {
	t.Helper()
	close(l.stop)
	for range 2 {
		r := <-l.results
		t.Logf("%s: %+v", who, r)
		if r.inFlight > 2 || r.other > 0 || r.ok == 0 || r.reconnects > 0 {
			t.Errorf("%s: %d replies, %d writes of unknown outcome (want at most 2), %d other errors, %d reconnections",
				who, r.ok, r.inFlight, r.other, r.reconnects)
		}
		if r.read && r.inFlight > 0 {
			t.Errorf("%s: a read failed in flight %d times; want it run again", who, r.inFlight)
		}
	}
}
