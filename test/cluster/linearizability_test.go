// Jepsen-style tests of a 3-node basalt cluster under faults: clients
// work against random nodes while a nemesis kills, restarts and
// isolates nodes, and what the clients saw is checked afterwards.
//
// TestLinearizability checks with porcupine that the history of SET, GET,
// INCR and SET ... GET on a few keys is linearizable; durability_test.go
// checks that acknowledged INCRs survive kills, all nodes at once included.
//
// The suite runs them for about 20 s of workload each. The long version
// (any number of seconds, both tests; allow for the check and restarts in
// -timeout):
//
//	BASALT_CHAOS_SECONDS=300 go test -count=1 -timeout 30m -v ./test/cluster/
//
// A failure prints its seed; BASALT_CHAOS_SEED=N replays the same choices
// of faults and operations (not their timing, so not always the same
// interleaving). A history that is not linearizable is written, with a
// porcupine visualization and the nodes' logs, to a directory under
// $TMPDIR that outlives the test (named in the failure). BASALT_BIN=path
// tests a prebuilt binary (one built with -race, say).
//
// Which failures leave a write's outcome unknown, and which say it was not
// applied, is notApplied's business (nemesis_test.go): the checks hold
// basalt to the latter.

package cluster

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/anishathalye/porcupine"
)

// opKind is a register operation.
type opKind uint8

const (
	opGet    opKind = iota // GET k
	opSet                  // SET k v
	opSetGet               // SET k v GET: sets and returns the old value
	opIncr                 // INCR k
)

// regInput is an operation's input; Val is the value SET writes.
type regInput struct {
	Op  opKind
	Key string
	Val int64
}

// regOutput is what the operation returned: the value read (GET, SET GET:
// the old one; Exists false for nil) or INCR's result. Unknown marks a
// write whose outcome the client never learned.
type regOutput struct {
	Unknown bool
	Exists  bool
	Val     int64
}

// regState is one key's value. Every value written is an integer, so
// INCR always succeeds.
type regState struct {
	Exists bool
	Val    int64
}

func (s regState) String() string {
	if !s.Exists {
		return "nil"
	}
	return strconv.FormatInt(s.Val, 10)
}

func (o regOutput) String() string {
	if o.Unknown {
		return "?"
	}
	return regState{o.Exists, o.Val}.String()
}

// registerModel is one key (histories are checked key by key). A write of
// unknown outcome returns at "infinity": porcupine may linearize it
// anywhere after its call, the end included (where it changes nothing that
// was observed): it may or may not have happened.
var registerModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(regState), input.(regInput), output.(regOutput)
		seen := regState{out.Exists, out.Val}
		switch in.Op {
		case opGet:
			return seen == s, s
		case opSet:
			return true, regState{true, in.Val}
		case opSetGet:
			return out.Unknown || seen == s, regState{true, in.Val}
		case opIncr:
			next := regState{true, s.Val + 1}
			return out.Unknown || out.Val == next.Val, next
		}
		panic("unknown op")
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		switch in.Op {
		case opGet:
			return fmt.Sprintf("GET %s -> %s", in.Key, out)
		case opSet:
			return fmt.Sprintf("SET %s %d -> %s", in.Key, in.Val, map[bool]string{true: "?", false: "OK"}[out.Unknown])
		case opSetGet:
			return fmt.Sprintf("SET %s %d GET -> %s", in.Key, in.Val, out)
		default:
			return fmt.Sprintf("INCR %s -> %s", in.Key, out)
		}
	},
	DescribeState: func(state any) string { return state.(regState).String() },
}

// linClients and linKeys shape the workload: several clients per key, so
// that operations on a key overlap.
const (
	linClients = 8
	linKeys    = 4
)

// history is the operations the clients recorded, and the surprises.
type history struct {
	mu         sync.Mutex
	ops        []porcupine.Operation
	unexpected []string       // replies no failover explains: each fails the test
	procs      int            // porcupine client IDs handed out
	dropped    int            // failed reads and refused writes, left out
	unknown    int            // writes of unknown outcome
	errors     map[string]int // failures by kind, for the log
}

var addrRE = regexp.MustCompile(`[0-9.]+:[0-9]+(->[0-9.]+:[0-9]+)?`)

// failed counts a failure by its message's first words, addresses left out.
func (h *history) failed(msg string) {
	msg = addrRE.ReplaceAllString(msg, "ADDR")
	if f := strings.Fields(msg); len(f) > 6 {
		msg = strings.Join(f[:6], " ")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errors == nil {
		h.errors = map[string]int{}
	}
	h.errors[msg]++
}

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	if op.Output.(regOutput).Unknown {
		h.unknown++
	}
}

// newProc hands out a client ID. A client that saw an operation of unknown
// outcome continues under a new ID, as in Jepsen: that operation stays
// open forever, and the visualization needs one open operation per row.
func (h *history) newProc() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.procs++
	return h.procs - 1
}

func (h *history) note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.unexpected) < 20 {
		h.unexpected = append(h.unexpected, fmt.Sprintf(format, args...))
	}
}

// worker is one client of the linearizability workload.
type worker struct {
	id   int
	cl   client
	proc int
	h    *history
	clk  clock
	sets int64 // SETs sent, for unique values
}

// genSpan separates the values SETs write: each SET writes a multiple of it
// never written before (its generation), and the INCRs that follow stay
// below the next multiple, so any value read names the SET it descends
// from (generation 0: INCRs of a missing key).
const genSpan = 1_000_000

func (w *worker) nextValue() int64 {
	w.sets++
	return (w.sets*(linClients+1) + int64(w.id) + 1) * genSpan
}

// args is the command for an operation.
func (in regInput) args() []string {
	switch in.Op {
	case opGet:
		return []string{"GET", in.Key}
	case opSet:
		return []string{"SET", in.Key, strconv.FormatInt(in.Val, 10)}
	case opSetGet:
		return []string{"SET", in.Key, strconv.FormatInt(in.Val, 10), "GET"}
	default:
		return []string{"INCR", in.Key}
	}
}

// run does random operations until stop is closed or the deadline passes.
func (w *worker) run(stop <-chan struct{}, deadline time.Time) {
	defer w.cl.drop()
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return
		default:
		}
		in := regInput{Key: "k" + strconv.Itoa(w.cl.rng.IntN(linKeys))}
		switch x := w.cl.rng.IntN(100); {
		case x < 40:
			in.Op = opGet
		case x < 65:
			in.Op, in.Val = opSet, w.nextValue()
		case x < 80:
			in.Op, in.Val = opSetGet, w.nextValue()
		default:
			in.Op = opIncr
		}
		w.do(in, deadline.Add(opTimeout))
	}
}

// do runs one operation and records it.
func (w *worker) do(in regInput, deadline time.Time) {
	call := w.clk.now()
	r, err := w.cl.do(deadline, in.args()...)
	ret := w.clk.now()
	out, known, applied := regOutput{}, false, true // applied: may have been
	switch {
	case err != nil:
		// The connection broke or timed out: unknown.
		w.h.failed(err.Error())
		backoff(w.cl.rng)
	case r.IsError() && failoverError(r.Str):
		w.h.failed(r.Str)
		applied = !notApplied(r.Str)
		if r.Str == "ERR the connection to the leader was lost" || w.cl.rng.IntN(2) == 0 {
			w.cl.drop() // the follower closes it; else try another node now and then
		}
		backoff(w.cl.rng)
	case r.IsError():
		w.h.note("client %d: %s -> unexpected error %s", w.id, strings.Join(in.args(), " "), r)
	default:
		out, known = w.parse(in, r)
	}
	if !known {
		if in.Op == opGet || !applied {
			w.h.mu.Lock()
			w.h.dropped++
			w.h.mu.Unlock()
			return // a failed read, or a write refused: changed nothing
		}
		w.h.add(porcupine.Operation{ClientId: w.proc, Input: in, Call: call,
			Output: regOutput{Unknown: true}, Return: math.MaxInt64})
		w.proc = w.h.newProc()
		return
	}
	w.h.add(porcupine.Operation{ClientId: w.proc, Input: in, Call: call, Output: out, Return: ret})
}

// parse checks a reply's type and reads its value.
func (w *worker) parse(in regInput, r testutil.Reply) (regOutput, bool) {
	bad := func() (regOutput, bool) {
		w.h.note("client %d: %s -> unexpected reply %s", w.id, strings.Join(in.args(), " "), r)
		return regOutput{}, false
	}
	switch in.Op {
	case opSet:
		if r.String() != "+OK" {
			return bad()
		}
		return regOutput{}, true
	case opIncr:
		if r.Kind != ':' {
			return bad()
		}
		return regOutput{Exists: true, Val: r.Int}, true
	default: // GET, SET GET: a bulk string or nil
		if r.Kind != '$' {
			return bad()
		}
		if r.Null {
			return regOutput{}, true
		}
		v, err := strconv.ParseInt(r.Str, 10, 64)
		if err != nil {
			return bad()
		}
		return regOutput{Exists: true, Val: v}, true
	}
}

func TestLinearizability(t *testing.T) { checkUnderFaults(t, 20*time.Second) }

// TestLinearizabilitySharded is TestLinearizability on a cluster in cluster
// mode: the keys spread over 4 shards, each replicated on the 3 nodes with
// its own leader; the clients follow MOVED.
func TestLinearizabilitySharded(t *testing.T) {
	checkUnderFaults(t, 15*time.Second, "--cluster-enabled", "yes", "--cluster-shards", "4")
}

// TestLinearizabilityPartitioned is TestLinearizabilitySharded with the
// nodes in network namespaces of their own, partitioned by the network: a
// node's link goes down (its peers and the clients lose it alike), or the
// traffic between two nodes is dropped while both still reach the third.
func TestLinearizabilityPartitioned(t *testing.T) {
	net := testutil.NewNetns(t, 3)
	checkUnderFaultsOn(t, 15*time.Second, net, "--cluster-enabled", "yes", "--cluster-shards", "4")
}

// checkUnderFaults runs the workload against a 3-node cluster started with
// args under the nemesis, for dur by default, and checks its history.
func checkUnderFaults(t *testing.T, dur time.Duration, args ...string) {
	checkUnderFaultsOn(t, dur, nil, args...)
}

// checkUnderFaultsOn is checkUnderFaults on loopback (net nil) or in net's
// namespaces, whose partitions are then the network's.
func checkUnderFaultsOn(t *testing.T, dur time.Duration, net *testutil.Netns, args ...string) {
	seed := chaosSeed(t)
	dur = chaosDuration(t, dur)
	t.Logf("seed %d (BASALT_CHAOS_SEED=%d replays its choices), workload %v", seed, seed, dur)
	// A short log: a node restarted far behind catches up from a snapshot.
	args = append([]string{"--log-retain", "10"}, args...)
	var c *testutil.Cluster
	if net != nil {
		c = net.StartCluster(t, args...)
	} else {
		c = testutil.StartCluster(t, 3, args...)
	}
	clk := clock{start: time.Now()}
	nem := newNemesis(t, c, seed, clk)
	nem.net = net
	h := &history{}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	end := time.Now().Add(dur)
	for i := range linClients {
		w := &worker{id: i, h: h, clk: clk, proc: h.newProc(),
			cl: client{nodes: c.Nodes, rng: rand.New(rand.NewPCG(seed, uint64(i)+1))}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(stop, end)
		}()
	}
	stopClients := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopClients() // if the nemesis fails the test

	time.Sleep(min(dur/10, time.Second)) // some history before the first fault
	for time.Now().Before(end) {
		if i := nem.victim(); i >= 0 {
			switch nem.rng.IntN(3) {
			case 0:
				nem.killRestart(i, end)
			case 1:
				nem.isolate(i, end)
			default:
				nem.cut(i, end)
			}
		}
		nem.sleep(300*time.Millisecond, 1500*time.Millisecond, end)
	}
	stopClients()
	nem.heal()
	c.WaitLeader(t, 30*time.Second)
	t.Logf("%.1fs: healed, leader elected", float64(clk.now())/1e9)

	// A last read of every key, after everything healed, closes the history.
	final := &worker{id: -1, h: h, clk: clk, proc: h.newProc(),
		cl: client{nodes: c.Nodes, rng: rand.New(rand.NewPCG(seed, 0))}}
	deadline := time.Now().Add(30 * time.Second)
	for k := range linKeys {
		in := regInput{Op: opGet, Key: "k" + strconv.Itoa(k)}
		for before := len(h.ops); len(h.ops) == before && time.Now().Before(deadline); {
			final.do(in, deadline)
		}
	}
	final.cl.drop()

	counts := map[opKind]int{}
	for _, op := range h.ops {
		counts[op.Input.(regInput).Op]++
	}
	t.Logf("history: %d operations (%d GET, %d SET, %d SET...GET, %d INCR), %d writes of unknown outcome, %d failed reads and refused writes left out",
		len(h.ops), counts[opGet], counts[opSet], counts[opSetGet], counts[opIncr], h.unknown, h.dropped)
	t.Logf("failures: %v", h.errors)
	t.Logf("nemesis:\n%s", nem.log())
	if len(h.unexpected) > 0 {
		t.Errorf("seed %d: replies no failover explains:\n  %s", seed, strings.Join(h.unexpected, "\n  "))
	}
	t.Logf("%.1fs: checking", float64(clk.now())/1e9)
	checkLinearizable(t, seed, h.ops, nem, dur)
	t.Logf("%.1fs: checked", float64(clk.now())/1e9)

	digest := c.WaitConverged(t, 60*time.Second)
	t.Logf("converged, digest %s", digest)
	logRaftState(t, c)
}

// pruneUnobserved drops the writes of unknown outcome (SET, SET ... GET)
// whose value no operation ever observed: a read of it, or of an INCR of
// it. Such a write can be taken out without changing the answer: had it
// been applied, only writes that observe nothing (unknown ones, blind
// SETs) came between it and the next blind SET, so the history without it
// is linearizable too; and the other way round, it may always not have
// happened. This spares porcupine most of the operations left open
// forever, which it otherwise tries at every step.
func pruneUnobserved(ops []porcupine.Operation) ([]porcupine.Operation, int) {
	seen := map[int64]bool{}
	for _, op := range ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		switch {
		case out.Unknown || !out.Exists:
		case in.Op == opIncr:
			seen[(out.Val-1)/genSpan] = true
		default:
			seen[out.Val/genSpan] = true
		}
	}
	kept := ops[:0:0]
	for _, op := range ops {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		if out.Unknown && in.Op != opIncr && !seen[in.Val/genSpan] {
			continue
		}
		kept = append(kept, op)
	}
	return kept, len(ops) - len(kept)
}

// checkLinearizable checks the history key by key; an illegal one is
// written out with the nodes' logs, and the test fails naming the key, an
// operation no linearization reaches, and the files.
func checkLinearizable(t *testing.T, seed uint64, ops []porcupine.Operation, nem *nemesis, dur time.Duration) {
	t.Helper()
	byKey := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(regInput).Key
		byKey[k] = append(byKey[k], op)
	}
	// Valid histories check in well under a second (160,000 operations
	// in 2 minutes of workload: 0.3 s a key); the limit is for a
	// pathological search, which porcupine may also need to prove a
	// history illegal.
	limit := max(30*time.Second, dur/5)
	for k := range linKeys {
		key := "k" + strconv.Itoa(k)
		part, pruned := pruneUnobserved(byKey[key])
		t0 := time.Now()
		res := porcupine.CheckOperationsTimeout(registerModel, part, limit)
		t.Logf("key %s: %d operations (%d unobserved writes of unknown outcome left out): %s in %v",
			key, len(part), pruned, res, time.Since(t0).Round(time.Millisecond))
		switch res {
		case porcupine.Ok:
			continue
		case porcupine.Unknown:
			t.Logf("WARNING: key %s: the checker gave up after %v, neither proving the history linearizable nor refuting it (seed %d)", key, limit, seed)
			continue
		}
		_, info := porcupine.CheckOperationsVerbose(registerModel, part, 2*limit)
		dir := evidenceDir(t, nem.c, "basalt-linearizability-")
		var ann []porcupine.Annotation
		nem.mu.Lock()
		for _, e := range nem.events {
			ann = append(ann, porcupine.Annotation{Tag: "nemesis", Start: e.start, End: e.end, Description: e.what})
		}
		nem.mu.Unlock()
		info.AddAnnotations(ann)
		html := filepath.Join(dir, "history.html")
		if err := porcupine.VisualizePath(registerModel, info, html); err != nil {
			t.Logf("visualizing: %v", err)
		}
		txt := filepath.Join(dir, "history.txt")
		_ = os.WriteFile(txt, []byte(describeHistory(part)), 0o644)
		t.Errorf("seed %d: the history of key %s is NOT linearizable.\n%s\nvisualization: %s\nhistory: %s\nnode logs: %s/node*.log\nnemesis:\n%s",
			seed, key, stuck(info, part), html, txt, dir, nem.log())
	}
}

// stuck describes where the checker got stuck: the operations that follow
// the longest partial linearization.
func stuck(info porcupine.LinearizationInfo, part []porcupine.Operation) string {
	partials := info.PartialLinearizationsOperations()
	if len(partials) == 0 {
		return ""
	}
	var longest []porcupine.Operation
	for _, p := range partials[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	in := map[int64]bool{} // by call time, unique enough to name an operation
	var state any = registerModel.Init()
	for _, op := range longest {
		in[op.Call] = true
		_, state = registerModel.Step(state, op.Input, op.Output)
	}
	var next []string
	for _, op := range sortedByCall(part) {
		if !in[op.Call] && len(next) < 5 {
			next = append(next, describeOp(op))
		}
	}
	return fmt.Sprintf("the longest linearizable prefix has %d of %d operations and leaves the value %v; the first operations it cannot place:\n  %s",
		len(longest), len(part), state, strings.Join(next, "\n  "))
}

func sortedByCall(ops []porcupine.Operation) []porcupine.Operation {
	s := slices.Clone(ops)
	slices.SortFunc(s, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return s
}

func describeOp(op porcupine.Operation) string {
	ret := "never (unknown outcome)"
	if op.Return != math.MaxInt64 {
		ret = fmt.Sprintf("%.6fs", float64(op.Return)/1e9)
	}
	return fmt.Sprintf("client %d: %s, called %.6fs, returned %s",
		op.ClientId, registerModel.DescribeOperation(op.Input, op.Output), float64(op.Call)/1e9, ret)
}

func describeHistory(ops []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range sortedByCall(ops) {
		b.WriteString(describeOp(op) + "\n")
	}
	return b.String()
}
