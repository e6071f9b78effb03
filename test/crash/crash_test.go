// Package crash proves durability: basalt is killed with SIGKILL in the
// middle of concurrent writes, restarted, and every acknowledged write must
// be there (appendfsync always), or all but about the last second of them
// (everysec), with MULTI/EXEC blocks never half applied. collections_test.go
// does the same for lists (pushes and pops, blocking ones too), hashes, sets
// and sorted sets; bitmap_test.go for SETBIT on chunked bitmaps.
package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// attempt is one write of a value to a key: acked is when its reply came
// back (zero if it never did: it was in flight at the crash, or failed).
// Values are unique and never empty; "" stands for the key's absence (DEL).
// ttl says the write set a (long) expiry.
type attempt struct {
	val   string
	acked time.Time
	ttl   bool
}

// keyModel is what we know of one key: the value verified after the last
// restart (base) and the writes attempted since, in the order they were
// sent. One goroutine writes a key, sequentially, so the server applies
// the attempts in this order; only the tail after the last ack is unknown.
type keyModel struct {
	base     string // "" if the key did not exist
	baseTTL  bool   // it had an expiry
	attempts []attempt
}

// allowed reports whether observing (val, ok) after a crash is consistent
// with durability: the write acked last (before cutoff; zero cutoff means
// every ack counts) or one attempted after it. Without such an ack, the
// base or any attempt.
// It also returns whether that write set an expiry.
func (m *keyModel) allowed(val string, cutoff time.Time) (ok, ttl bool) {
	last := -1
	for i, a := range m.attempts {
		if !a.acked.IsZero() && (cutoff.IsZero() || !a.acked.After(cutoff)) {
			last = i
		}
	}
	if last < 0 && val == m.base {
		return true, m.baseTTL
	}
	for _, a := range m.attempts[max(last, 0):] {
		if a.val == val {
			return true, a.ttl
		}
	}
	return false, false
}

func (m *keyModel) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "base %q, attempts:", m.base)
	for _, a := range m.attempts {
		fmt.Fprintf(&b, " %q", a.val)
		if a.ttl {
			b.WriteString("(EX)")
		}
		if !a.acked.IsZero() {
			b.WriteString("(acked)")
		}
	}
	return b.String()
}

// model holds every key's history; writers add to it concurrently.
type model struct {
	mu   sync.Mutex
	keys map[string]*keyModel
	// shared holds every value ever attempted on the shared group.
	shared map[string]bool
}

func (m *model) key(k string) *keyModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	km := m.keys[k]
	if km == nil {
		km = &keyModel{}
		m.keys[k] = km
	}
	return km
}

// attempt records a write about to be sent and returns a function that
// marks it acked.
func (m *model) attempt(k, val string) func() { return m.attemptTTL(k, val, false) }

func (m *model) attemptTTL(k, val string, ttl bool) func() {
	km := m.key(k)
	m.mu.Lock()
	km.attempts = append(km.attempts, attempt{val: val, ttl: ttl})
	i := len(km.attempts) - 1
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		km.attempts[i].acked = time.Now()
		m.mu.Unlock()
	}
}

const (
	ownKeys  = 30 // plain keys per writer
	txKeys   = 3  // keys one MULTI/EXEC sets to the same value
	batchLen = 20 // SETs per pipelined batch
)

// shared is the MULTI/EXEC group every writer writes: its keys must agree
// whatever order the transactions applied in.
var shared = []string{"{tx}shared:a", "{tx}shared:b", "{tx}shared:c"}

func ownKey(w, i int) string  { return "w" + strconv.Itoa(w) + ":k" + strconv.Itoa(i) }
func counterKey(w int) string { return "w" + strconv.Itoa(w) + ":ctr" }
func txKey(w, i int) string   { return "{tx" + strconv.Itoa(w) + "}g:" + strconv.Itoa(i) }

func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:            addr,
		MaxRetries:      -1, // a retried write would blur what was in flight
		DialTimeout:     2 * time.Second,
		ReadTimeout:     5 * time.Second,
		WriteTimeout:    5 * time.Second,
		PoolSize:        2,
		DisableIdentity: true,
	})
}

// writer runs until stop is closed or a request fails (the server died).
// Every write goes through the model before it is sent.
type writer struct {
	id      int
	cycle   int
	m       *model
	rc      *redis.Client
	rng     *rand.Rand
	seq     int
	counter int64 // the counter's value as this writer knows it
	acks    int
}

func (w *writer) value() string {
	w.seq++
	return fmt.Sprintf("c%d:w%d:%d", w.cycle, w.id, w.seq)
}

// serverErr reports an error reply from the server: these writes never
// should fail, so it is a bug, not a crash symptom.
func serverErr(err error) bool {
	var re redis.Error
	var wr wrongReply
	return errors.As(err, &re) || errors.As(err, &wr)
}

// wrongReply is a reply that is not what the command must answer.
type wrongReply string

func (e wrongReply) Error() string { return string(e) }

func (w *writer) run(ctx context.Context, stop <-chan struct{}, errs chan<- error) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		var err error
		switch p := w.rng.IntN(100); {
		case p < 50:
			err = w.set(ctx)
		case p < 65:
			err = w.batch(ctx)
		case p < 80:
			err = w.incr(ctx)
		case p < 92:
			err = w.txOwn(ctx)
		default:
			err = w.txShared(ctx)
		}
		if err != nil {
			if serverErr(err) {
				errs <- fmt.Errorf("writer %d: %w", w.id, err)
			}
			return
		}
	}
}

// set SETs a key, sometimes with a long expiry that must survive too, or
// DELetes it.
func (w *writer) set(ctx context.Context) error {
	k, v := ownKey(w.id, w.rng.IntN(ownKeys)), w.value()
	var err error
	var ack func()
	switch w.rng.IntN(5) {
	case 0:
		ack = w.m.attempt(k, "")
		err = w.rc.Del(ctx, k).Err()
	case 1:
		ack = w.m.attemptTTL(k, v, true)
		err = w.rc.Set(ctx, k, v, time.Hour).Err()
	default:
		ack = w.m.attempt(k, v)
		err = w.rc.Set(ctx, k, v, 0).Err()
	}
	if err != nil {
		return err
	}
	ack()
	w.acks++
	return nil
}

// batch pipelines SETs, some on the same key, in one round trip.
func (w *writer) batch(ctx context.Context) error {
	pipe := w.rc.Pipeline()
	var acks []func()
	var cmds []*redis.StatusCmd
	for range batchLen {
		k, v := ownKey(w.id, w.rng.IntN(ownKeys)), w.value()
		acks = append(acks, w.m.attempt(k, v))
		cmds = append(cmds, pipe.Set(ctx, k, v, 0))
	}
	_, err := pipe.Exec(ctx)
	for i, c := range cmds {
		// A command without an error may still never have been sent
		// (go-redis leaves it untouched when it cannot connect): only
		// an OK read back is an acknowledgement.
		if c.Err() == nil && c.Val() == "OK" {
			acks[i]()
			w.acks++
		}
	}
	return err
}

// incr counts in the model like a SET of the value INCR will reach: the
// acked reply must equal it, and the value after a crash must be at least
// the last acked one.
func (w *writer) incr(ctx context.Context) error {
	k := counterKey(w.id)
	w.counter++
	ack := w.m.attempt(k, strconv.FormatInt(w.counter, 10))
	n, err := w.rc.Incr(ctx, k).Result()
	if err != nil {
		return err
	}
	if n != w.counter {
		return wrongReply(fmt.Sprintf("INCR %s = %d, want %d", k, n, w.counter))
	}
	ack()
	w.acks++
	return nil
}

// txOwn sets the writer's own group of keys to one value in MULTI/EXEC.
func (w *writer) txOwn(ctx context.Context) error {
	v := w.value()
	var keys []string
	var acks []func()
	for i := range txKeys {
		keys = append(keys, txKey(w.id, i))
		acks = append(acks, w.m.attempt(keys[i], v))
	}
	return w.tx(ctx, keys, v, acks)
}

// txShared sets the shared group: writers race, each EXEC is atomic.
func (w *writer) txShared(ctx context.Context) error {
	v := w.value()
	w.m.mu.Lock()
	w.m.shared[v] = true
	w.m.mu.Unlock()
	return w.tx(ctx, shared, v, nil)
}

func (w *writer) tx(ctx context.Context, keys []string, v string, acks []func()) error {
	_, err := w.rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Set(ctx, k, v, 0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ack := range acks {
		ack()
	}
	w.acks++
	return nil
}

// crashCycle runs writers for a while, kills the server, restarts it and
// verifies every key. cutoff is how long before the kill an ack must be for
// the write to count as durable (0: every ack).
func crashCycle(t *testing.T, p *testutil.Proc, m *model, cycle, writers int, run, grace time.Duration, rng *rand.Rand) {
	ctx := context.Background()
	stop := make(chan struct{})
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	ws := make([]*writer, writers)
	for i := range ws {
		ws[i] = &writer{id: i, cycle: cycle, m: m, rc: newClient(p.Addr), rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))}
		// The counter carries over from the previous cycle's verification.
		if km := m.keys[counterKey(i)]; km != nil && km.base != "" {
			ws[i].counter, _ = strconv.ParseInt(km.base, 10, 64)
		}
	}
	// Start the writers only once all have read the model: a running
	// writer changes m.keys.
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, stop, errs)
		}()
	}
	time.Sleep(run)
	killedAt := time.Now()
	p.Kill()
	close(stop)
	wg.Wait()
	acks := 0
	for _, w := range ws {
		w.rc.Close()
		acks += w.acks
	}
	close(errs)
	for err := range errs {
		t.Errorf("cycle %d: %v", cycle, err)
	}
	if acks == 0 {
		t.Fatalf("cycle %d: no write was acknowledged in %v", cycle, run)
	}

	p.Restart(t)
	cutoff := time.Time{}
	if grace > 0 {
		cutoff = killedAt.Add(-grace)
	}
	verify(t, p, m, cycle, cutoff)
	t.Logf("cycle %d: %d acked operations in %v, %d keys verified", cycle, acks, run, len(m.keys))
}

// verify reads every key after a restart and checks it against the model,
// then makes what it read the base of the next cycle.
func verify(t *testing.T, p *testutil.Proc, m *model, cycle int, cutoff time.Time) {
	ctx := context.Background()
	rc := newClient(p.Addr)
	defer rc.Close()
	names := make([]string, 0, len(m.keys)+len(shared))
	for k := range m.keys {
		names = append(names, k)
	}
	names = append(names, shared...)
	pipe := rc.Pipeline()
	gets := make(map[string]*redis.StringCmd, len(names))
	ttls := make(map[string]*redis.DurationCmd, len(names))
	for _, k := range names {
		gets[k] = pipe.Get(ctx, k)
		ttls[k] = pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("cycle %d: reading back: %v", cycle, err)
	}
	read := func(k string) (string, bool) {
		v, err := gets[k].Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("cycle %d: GET %s: %v", cycle, k, err)
		}
		return v, err == nil
	}

	present, lost := 0, 0
	for _, k := range names[:len(m.keys)] {
		km := m.keys[k]
		v, ok := read(k)
		if ok {
			present++
		}
		allowed, ttl := km.allowed(v, cutoff)
		if !allowed {
			if lost++; lost <= 10 { // enough said after ten
				t.Errorf("cycle %d: key %s is %q (exists %v) after restart; lost an acknowledged write? %v", cycle, k, v, ok, km)
			}
		}
		// PTTL is -2 for a missing key, -1 without expiry; go-redis keeps
		// those as raw durations.
		if d := ttls[k].Val(); ok && allowed && (d > 0) != ttl {
			t.Errorf("cycle %d: key %s = %q has PTTL %v after restart; the write that set it had expiry %v", cycle, k, v, d, ttl)
		}
		km.base, km.baseTTL, km.attempts = v, ttl, nil
	}
	if lost > 10 {
		t.Errorf("cycle %d: %d keys in all lost acknowledged writes", cycle, lost)
	}

	// MULTI/EXEC groups are all or nothing.
	groups := [][]string{shared}
	for w := 0; ; w++ {
		if _, ok := m.keys[txKey(w, 0)]; !ok {
			break
		}
		var g []string
		for i := range txKeys {
			g = append(g, txKey(w, i))
		}
		groups = append(groups, g)
	}
	for _, g := range groups {
		v0, ok0 := read(g[0])
		for _, k := range g[1:] {
			if v, ok := read(k); v != v0 || ok != ok0 {
				t.Errorf("cycle %d: transaction half applied: %s=%q (%v) but %s=%q (%v)", cycle, g[0], v0, ok0, k, v, ok)
			}
		}
	}
	if v, ok := read(shared[0]); ok && !m.shared[v] {
		t.Errorf("cycle %d: shared group holds %q, a value never written", cycle, v)
	} else if ok {
		present += len(shared)
	}

	// The key count is kept apart from the keys; it must survive too.
	if n, err := rc.DBSize(ctx).Result(); err == nil && n != int64(present) {
		t.Errorf("cycle %d: DBSIZE %d after restart, but %d keys are present", cycle, n, present)
	}
}

func runCrashTest(t *testing.T, fsync string, cycles, writers int, run func(*rand.Rand) time.Duration, grace time.Duration) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	p := testutil.StartBasalt(t, "", "--appendfsync", fsync)
	m := &model{keys: map[string]*keyModel{}, shared: map[string]bool{}}
	start := time.Now()
	for c := 1; c <= cycles && !t.Failed(); c++ {
		crashCycle(t, p, m, c, writers, run(rng), grace, rng)
		if time.Since(start) > 40*time.Second {
			t.Logf("stopping after %d cycles: time budget spent", c)
			break
		}
	}
}

// TestCrashAlways: with appendfsync always, every acknowledged write
// survives SIGKILL.
func TestCrashAlways(t *testing.T) {
	runCrashTest(t, "always", 6, 8, func(r *rand.Rand) time.Duration {
		return time.Duration(150+r.IntN(600)) * time.Millisecond
	}, 0)
}

// TestCrashEverySec: with appendfsync everysec at most about the last
// second of acknowledged writes may be lost, and the store stays consistent.
func TestCrashEverySec(t *testing.T) {
	runCrashTest(t, "everysec", 3, 6, func(r *rand.Rand) time.Duration {
		return time.Duration(2200+r.IntN(1000)) * time.Millisecond
	}, 1500*time.Millisecond)
}

// TestKeyModel checks the judge itself on small histories.
func TestKeyModel(t *testing.T) {
	acked := time.Unix(100, 0)
	m := &keyModel{base: "b", attempts: []attempt{
		{val: "1", acked: acked}, {val: "2", ttl: true}, {val: "3", acked: acked.Add(time.Second)}, {val: ""}, {val: "5"},
	}}
	for _, c := range []struct {
		val     string
		cutoff  time.Time
		want    bool
		wantTTL bool
	}{
		{"3", time.Time{}, true, false},
		{"", time.Time{}, true, false}, // the DEL after 3 was in flight
		{"5", time.Time{}, true, false},
		{"2", time.Time{}, false, false}, // older than the last ack
		{"1", time.Time{}, false, false},
		{"b", time.Time{}, false, false},
		{"2", acked, true, true}, // the ack of 3 is after the cutoff
		{"1", acked, true, false},
		{"b", acked, false, false},
		{"b", acked.Add(-time.Second), true, false},
		{"x", acked.Add(-time.Second), false, false},
	} {
		ok, ttl := m.allowed(c.val, c.cutoff)
		if ok != c.want || ttl != c.wantTTL {
			t.Errorf("allowed(%q, cutoff %v) = %v, %v; want %v, %v", c.val, c.cutoff.Unix(), ok, ttl, c.want, c.wantTTL)
		}
	}
	fresh := &keyModel{attempts: []attempt{{val: "1"}}}
	if ok, _ := fresh.allowed("", time.Time{}); !ok {
		t.Errorf("a key never acked may be absent")
	}
	if ok, _ := fresh.allowed("2", time.Time{}); ok {
		t.Errorf("a key may only hold a value that was written")
	}
}
