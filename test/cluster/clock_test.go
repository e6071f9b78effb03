package cluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// clockBound is cluster-max-clock-offset's default.
const clockBound = 500 * time.Millisecond

// TestClockSkew: record time (TTLs, TIME in a script, XADD IDs) stays
// within cluster-max-clock-offset of real time through a failover to a
// node whose clock is ahead, to one behind, and back; a node an hour off
// does not lead, and a leader whose clock jumps an hour hands over.
func TestClockSkew(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--enable-debug-command", "yes")
	l := c.WaitLeader(t, 15*time.Second)
	ahead, behind := (l+1)%3, (l+2)%3
	conns := make([]*testutil.Conn, 3)
	for i := range conns {
		conns[i] = testutil.Dial(t, c.Nodes[i].Addr)
		waitMayLead(t, conns[i], "1")
	}
	checkRecordTime(t, conns[l], "at start")
	expect(t, conns[l].Do("SET", "lives", "v", "PX", "60000"), "+OK")
	lives := conns[l].Do("PEXPIRETIME", "lives").Int

	expect(t, conns[ahead].Do("CONFIG", "SET", "debug-clock-offset-ms", "300"), "+OK")
	expect(t, conns[behind].Do("CONFIG", "SET", "debug-clock-offset-ms", "-300"), "+OK")
	for _, step := range []struct {
		to   int
		name string
	}{{ahead, "led by a node 300 ms ahead"}, {behind, "led by a node 300 ms behind"}, {l, "failed back"}} {
		// The node behind waits until its clock passes the last record's
		// time by less than the bound; the FAILOVER is retried meanwhile.
		failoverTo(t, c, conns, step.to)
		checkRecordTime(t, conns[step.to], step.name)
		if got := conns[step.to].Do("PEXPIRETIME", "lives").Int; got != lives {
			t.Fatalf("%s: a key's expiry moved from %d to %d", step.name, lives, got)
		}
	}

	// An hour ahead: the others measure it, it says why it does not lead,
	// and a FAILOVER to it does not happen.
	expect(t, conns[ahead].Do("CONFIG", "SET", "debug-clock-offset-ms", "3600000"), "+OK")
	waitMayLead(t, conns[ahead], "0")
	// The node knows its own offset at once; the leader's probes (4 a
	// second) see it within a few of them.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		peer := infoMap(conns[l])[fmt.Sprintf("raft_clock_peer%d", ahead+1)]
		off, _ := strconv.ParseFloat(strings.TrimPrefix(strings.Split(peer, ",")[0], "offset_ms="), 64)
		if off >= 3599900 && off <= 3600100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader measures node %d's clock as %q", ahead+1, peer)
		}
	}
	if why := infoMap(conns[ahead])["raft_clock_refusal"]; !strings.Contains(why, "agrees within 500ms with 1 of the 3 nodes") {
		t.Fatalf("refusal: %q", why)
	}
	host, port, _ := strings.Cut(c.Nodes[ahead].Addr, ":")
	expect(t, conns[l].Do("FAILOVER", "TO", host, port, "TIMEOUT", "3000"), "+OK")
	time.Sleep(3500 * time.Millisecond)
	if i, ok := c.Leader(); ok && i == ahead {
		t.Fatal("a node an hour ahead took leadership")
	}
	if log, _ := os.ReadFile(c.Nodes[ahead].Log); !strings.Contains(string(log), `level=warning msg="raft: this node does not lead: this node's clock agrees within 500ms with 1 of the 3 nodes`) {
		t.Errorf("node %d does not log why it does not lead:\n%s", ahead+1, log)
	}
	checkRecordTime(t, conns[l], "with a follower an hour ahead")

	// The leader's clock jumps an hour back (with the other two within the
	// bound again): it hands over, and a key with EX 2 expires in time.
	// (300 ms and 0: the node -300 ms behind would be 600 ms from the
	// one ahead, past the bound, and then no node could lead.)
	expect(t, conns[ahead].Do("CONFIG", "SET", "debug-clock-offset-ms", "300"), "+OK")
	expect(t, conns[behind].Do("CONFIG", "SET", "debug-clock-offset-ms", "0"), "+OK")
	waitMayLead(t, conns[ahead], "1")
	waitMayLead(t, conns[behind], "1")
	expect(t, conns[l].Do("CONFIG", "SET", "debug-clock-offset-ms", "-3600000"), "+OK")
	waitLeaderIsNot(t, c, l, "a leader an hour behind kept leading")
	waitMayLead(t, conns[l], "0")
	n := c.WaitLeader(t, 15*time.Second)
	checkRecordTime(t, conns[n], "after the leader's clock jumped back")
	// Through the old leader, which may still be handing over: TRYAGAIN
	// then, which clients retry.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := conns[l].Do("SET", "lock", "held", "EX", "2")
		if r.String() == "+OK" {
			break
		}
		if !strings.HasPrefix(r.Str, "TRYAGAIN ") || time.Now().After(deadline) {
			t.Fatalf("SET lock through the old leader: %v", r)
		}
	}
	time.Sleep(3 * time.Second)
	expect(t, conns[n].Do("EXISTS", "lock"), ":0")

	expect(t, conns[l].Do("CONFIG", "SET", "debug-clock-offset-ms", "0"), "+OK")
	waitMayLead(t, conns[l], "1")
	c.WaitConverged(t, 20*time.Second)
}

// TestClockOffsetNeedsDebug: a node started without enable-debug-command
// refuses a clock offset.
func TestClockOffsetNeedsDebug(t *testing.T) {
	c := testutil.Dial(t, testutil.StartBasalt(t, "", "--enable-debug-command", "no").Addr)
	expect(t, c.Do("CONFIG", "SET", "debug-clock-offset-ms", "1000"),
		"-ERR CONFIG SET failed (possibly related to argument 'debug-clock-offset-ms') - a clock offset is for tests: start the node with enable-debug-command yes or local")
	expect(t, c.Do("CONFIG", "GET", "cluster-max-clock-offset"), `["cluster-max-clock-offset", "500"]`)
}

// checkRecordTime writes through conn and checks that the time the records
// carry is within the bound of this process's clock: a key's PX expiry,
// TIME in a script, an XADD ID; and that TTL reads as set.
func checkRecordTime(t *testing.T, conn *testutil.Conn, step string) {
	t.Helper()
	before := time.Now().UnixMilli()
	expect(t, conn.Do("SET", "clock:k", "v", "PX", "100000"), "+OK")
	tm := conn.Do("EVAL", "return redis.call('TIME')", "0")
	id := conn.Do("XADD", "clock:s", "*", "f", "v")
	after := time.Now().UnixMilli()
	if len(tm.Elems) != 2 || id.IsError() {
		t.Fatalf("%s: TIME %s, XADD %s", step, tm, id)
	}
	sec, _ := strconv.ParseInt(tm.Elems[0].Str, 10, 64)
	usec, _ := strconv.ParseInt(tm.Elems[1].Str, 10, 64)
	idMs, _ := strconv.ParseInt(strings.Split(id.Str, "-")[0], 10, 64)
	bound := clockBound.Milliseconds()
	for name, ms := range map[string]int64{
		"a PX expiry":  conn.Do("PEXPIRETIME", "clock:k").Int - 100000,
		"TIME in EVAL": sec*1000 + usec/1000,
		"an XADD ID":   idMs,
	} {
		if ms < before-bound || ms > after+bound {
			t.Errorf("%s: %s says %d, real time was %d to %d", step, name, ms, before, after)
		}
	}
	if ttl := conn.Do("TTL", "clock:k").Int; ttl < 99 || ttl > 101 {
		t.Errorf("%s: SET PX 100000 then TTL %d", step, ttl)
	}
}

// failoverTo asks the leader to hand over to node to until it has.
func failoverTo(t *testing.T, c *testutil.Cluster, conns []*testutil.Conn, to int) {
	t.Helper()
	host, port, _ := strings.Cut(c.Nodes[to].Addr, ":")
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, ok := c.Leader()
		if ok && l == to {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d did not take over (leader: %d)", to+1, l+1)
		}
		if ok {
			conns[l].Do("FAILOVER", "TO", host, port, "TIMEOUT", "2000")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitMayLead waits until a node's INFO says raft_clock_may_lead:want.
func waitMayLead(t *testing.T, conn *testutil.Conn, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for infoMap(conn)["raft_clock_may_lead"] != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: raft_clock_may_lead is not %s: %v", conn.Addr, want, infoMap(conn))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func infoMap(conn *testutil.Conn) map[string]string {
	_, m := parseInfoLines(conn.Do("INFO", "replication").Str)
	return m
}
