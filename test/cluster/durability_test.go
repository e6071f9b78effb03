package cluster

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// durClients each INCR a counter of their own, one command at a time, so a
// counter's value is the number of its INCRs applied.
const durClients = 6

// counter is what one client knows of its counter.
type counter struct {
	key       string
	acked     int64 // the highest INCR reply: the counter reached it
	attempted int64 // INCRs sent, less those refused: the counter cannot exceed it
	unknown   int   // INCRs whose outcome is unknown
	violation string
}

// incrLoop INCRs c.key until stop or the deadline. Every reply must be
// above the previous one (one writer, applied at most once) and at most
// the number of INCRs sent; the first violation is kept.
func (c *counter) incrLoop(cl *client, clk clock, stop <-chan struct{}, deadline time.Time) {
	defer cl.drop()
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return
		default:
		}
		c.attempted++
		call := clk.now()
		r, err := cl.do(deadline.Add(opTimeout), "INCR", c.key)
		switch {
		case err != nil:
			c.unknown++
			backoff(cl.rng)
		case r.IsError():
			if r.Str == "ERR the connection to the leader was lost" || cl.rng.IntN(2) == 0 {
				cl.drop() // the follower closes it; else try another node now and then
			}
			backoff(cl.rng)
			if notApplied(r.Str) {
				c.attempted-- // the counter cannot have reached this one
				break
			}
			c.unknown++
			if !failoverError(r.Str) && c.violation == "" {
				c.violation = fmt.Sprintf("INCR %s called at %.3fs: unexpected error %s", c.key, float64(call)/1e9, r)
			}
		case r.Kind != ':' || r.Int <= c.acked || r.Int > c.attempted:
			if c.violation == "" {
				c.violation = fmt.Sprintf("INCR %s called at %.3fs on %s returned %s after an acknowledged %d, with %d INCRs sent",
					c.key, float64(call)/1e9, cl.conn.Addr, r, c.acked, c.attempted)
			}
			c.acked = max(c.acked, r.Int)
		default:
			c.acked = r.Int
		}
	}
}

func TestDurability(t *testing.T) { checkDurability(t, 15*time.Second) }

// TestDurabilitySharded is TestDurability in cluster mode: the counters
// spread over 4 shards whose logs share each node's log engine, every
// node SIGKILLed at once at the end.
func TestDurabilitySharded(t *testing.T) {
	checkDurability(t, 10*time.Second, "--cluster-enabled", "yes", "--cluster-shards", "4")
}

// checkDurability runs the counters against a 3-node cluster started with
// args under SIGKILLs, for dur by default, then kills every node at once
// and checks that no acknowledged INCR was lost.
func checkDurability(t *testing.T, dur time.Duration, args ...string) {
	seed := chaosSeed(t)
	dur = chaosDuration(t, dur)
	t.Logf("seed %d (BASALT_CHAOS_SEED=%d replays its choices), workload %v", seed, seed, dur)
	// A short log: a node restarted far behind catches up from a snapshot.
	c := testutil.StartCluster(t, 3, append([]string{"--log-retain", "10"}, args...)...)
	clk := clock{start: time.Now()}
	nem := newNemesis(t, c, seed, clk)

	counters := make([]*counter, durClients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	end := time.Now().Add(dur)
	for i := range counters {
		ctr := &counter{key: "ctr:" + strconv.Itoa(i)}
		counters[i] = ctr
		cl := &client{nodes: c.Nodes, rng: rand.New(rand.NewPCG(seed, uint64(i)+1))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctr.incrLoop(cl, clk, stop, end.Add(5*time.Second))
		}()
	}
	stopClients := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopClients()

	// One node down at a time, so a majority always runs.
	time.Sleep(min(dur/10, time.Second))
	for time.Now().Before(end) {
		if i := nem.victim(); i >= 0 {
			nem.killRestart(i, end)
		}
		nem.sleep(300*time.Millisecond, 1500*time.Millisecond, end)
	}
	// Then all of them, in the middle of the clients' writes.
	c.WaitLeader(t, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	nem.killAll()
	stopClients()
	t0 := clk.now()
	for _, p := range c.Nodes {
		p.Restart(t)
	}
	c.WaitLeader(t, 30*time.Second)
	nem.record(t0, "every node restarted")

	var failures []string
	total := int64(0)
	cl := &client{nodes: c.Nodes, rng: rand.New(rand.NewPCG(seed, 0))}
	for _, ctr := range counters {
		v, err := readCounter(cl, ctr.key)
		total += ctr.acked
		switch {
		case err != nil:
			failures = append(failures, fmt.Sprintf("%s: %v", ctr.key, err))
		case v < ctr.acked:
			failures = append(failures, fmt.Sprintf("%s = %d after the restart, but INCR acknowledged %d: LOST ACKNOWLEDGED WRITES", ctr.key, v, ctr.acked))
		case v > ctr.attempted:
			failures = append(failures, fmt.Sprintf("%s = %d after the restart, but only %d INCRs were sent", ctr.key, v, ctr.attempted))
		}
		if ctr.violation != "" {
			failures = append(failures, ctr.violation)
		}
		t.Logf("%s: acknowledged %d, sent %d (%d of unknown outcome), read back %d", ctr.key, ctr.acked, ctr.attempted, ctr.unknown, v)
	}
	cl.drop()
	t.Logf("nemesis:\n%s", nem.log())
	if len(failures) > 0 {
		dir := evidenceDir(t, c, "basalt-durability-")
		t.Fatalf("seed %d:\n  %s\nnode logs: %s/node*.log\nnemesis:\n%s", seed, strings.Join(failures, "\n  "), dir, nem.log())
	}
	if total == 0 {
		t.Fatalf("seed %d: no INCR was acknowledged", seed)
	}
	digest := c.WaitConverged(t, 60*time.Second)
	t.Logf("%d INCRs acknowledged; converged, digest %s", total, digest)
	logRaftState(t, c)
}

// readCounter GETs a counter, retrying while the cluster settles.
func readCounter(cl *client, key string) (int64, error) {
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		r, err := cl.do(deadline, "GET", key)
		switch {
		case err != nil:
			last = err.Error()
		case r.IsError():
			last = r.String()
			cl.drop()
		case r.Null:
			return 0, nil
		default:
			return strconv.ParseInt(r.Str, 10, 64)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("GET kept failing for 30 s: %s", last)
}
