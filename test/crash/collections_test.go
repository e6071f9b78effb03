package crash

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// The collection workload, under appendfsync always: writers RPUSH unique
// elements to a few lists and pop them with LPOP and BLPOP, HINCRBY hash
// fields, SADD unique members, ZADD unique members and ZINCRBY a few
// counters. Each writer is sequential, so at most one of its commands is in
// flight (sent, unanswered) at the kill: that one may or may not have been
// applied, every answered one must survive.

const (
	numLists  = 3
	numHashes = 3
	numSets   = 2
	numZsets  = 2
	zCounters = 5 // ZINCRBY members per sorted set
)

func listKey(i int) string  { return "list:" + strconv.Itoa(i) }
func hashKey(i int) string  { return "hash:" + strconv.Itoa(i) }
func setKey(i int) string   { return "set:" + strconv.Itoa(i) }
func zsetKey(i int) string  { return "zset:" + strconv.Itoa(i) }
func zCounter(i int) string { return "ctr:" + strconv.Itoa(i) }

// push is one RPUSH: its elements land together, in order, or not at all.
// The elements verified after a restart become pushes too (acked, sent at
// the zero time), so they are judged like the rest.
type push struct {
	elems     []string
	send, ack time.Time
	acked     bool
}

// popAck is an acknowledged pop of one consumer: the elements it returned.
type popAck struct {
	writer int
	elems  []string
}

// listModel is one list since the last restart.
type listModel struct {
	base    []*push         // the verified content, one push per element
	pushes  map[int][]*push // by producer (writer), in the order sent
	popped  map[string]bool // elements acked as popped
	pops    []popAck        // acked pops, each consumer's in its order
	pending int             // how many elements in-flight pops may have taken
}

// incr is one HINCRBY or ZINCRBY (always by a positive amount).
type incr struct {
	by    int64
	acked bool
}

// counter is a hash field or sorted set member that only grows: after a
// crash it holds base + every acked increment + any of those in flight.
type counter struct {
	base  int64 // 0: absent
	incrs []*incr
}

// possible returns the values the counter may hold after a crash.
func (c *counter) possible() map[int64]bool {
	sum := c.base
	var inflight []int64
	for _, in := range c.incrs {
		if in.acked {
			sum += in.by
		} else {
			inflight = append(inflight, in.by)
		}
	}
	sums := map[int64]bool{sum: true}
	for _, by := range inflight { // at most one per writer
		for _, s := range slices.Collect(maps.Keys(sums)) {
			sums[s+by] = true
		}
	}
	return sums
}

func (c *counter) String() string {
	s := fmt.Sprintf("base %d, increments:", c.base)
	for _, in := range c.incrs {
		s += " " + strconv.FormatInt(in.by, 10)
		if in.acked {
			s += "(acked)"
		}
	}
	return s
}

// add is one SADD or ZADD of unique members: all of them or none.
type add struct {
	members []string
	scores  []int64 // ZADD only
	acked   bool
}

type setModel struct {
	base map[string]bool
	adds []*add
}

type zsetModel struct {
	base map[string]float64 // unique members (not counters) verified
	adds []*add
	ctrs map[string]*counter
}

// collModel is every collection's history; writers add to it concurrently.
type collModel struct {
	mu     sync.Mutex
	lists  []*listModel
	hashes []map[string]*counter
	sets   []*setModel
	zsets  []*zsetModel
	errs   []string // protocol violations seen by writers
}

func newCollModel() *collModel {
	m := &collModel{}
	for range numLists {
		m.lists = append(m.lists, &listModel{})
	}
	for range numHashes {
		m.hashes = append(m.hashes, map[string]*counter{})
	}
	for range numSets {
		m.sets = append(m.sets, &setModel{base: map[string]bool{}})
	}
	for range numZsets {
		m.zsets = append(m.zsets, &zsetModel{base: map[string]float64{}, ctrs: map[string]*counter{}})
	}
	m.reset()
	return m
}

// reset starts a cycle: what was verified is the base, nothing is in flight.
func (m *collModel) reset() {
	for _, l := range m.lists {
		l.pushes, l.popped, l.pops, l.pending = map[int][]*push{}, map[string]bool{}, nil, 0
	}
	for _, s := range m.sets {
		s.adds = nil
	}
	for _, z := range m.zsets {
		z.adds = nil
	}
}

// collWriter runs a random mix of collection commands until stop is closed
// or a request fails (the server died).
type collWriter struct {
	id, cycle int
	m         *collModel
	rc        *redis.Client
	rng       *rand.Rand
	seq       int
	acks      int
	blocked   int // BLPOPs that timed out
	woken     int // BLPOPs that waited, then popped
}

func (w *collWriter) unique() string {
	w.seq++
	return fmt.Sprintf("c%d.w%d.%d", w.cycle, w.id, w.seq)
}

func (w *collWriter) run(ctx context.Context, stop <-chan struct{}, errs chan<- error) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		var err error
		switch p := w.rng.IntN(100); {
		case p < 25:
			err = w.rpush(ctx)
		case p < 35:
			err = w.lpop(ctx)
		case p < 45:
			err = w.blpop(ctx)
		case p < 65:
			err = w.hincrby(ctx)
		case p < 78:
			err = w.sadd(ctx)
		case p < 88:
			err = w.zadd(ctx)
		default:
			err = w.zincrby(ctx)
		}
		if err != nil {
			if serverErr(err) {
				errs <- fmt.Errorf("writer %d: %w", w.id, err)
			}
			return
		}
		w.acks++
	}
}

// rpush pushes 1-3 new elements, mostly to the first list: the others,
// pushed less, are often empty, so BLPOP (mostly on the last) blocks.
func (w *collWriter) rpush(ctx context.Context) error {
	l := 0 // half the pushes, the rest spread
	if w.rng.IntN(2) == 0 {
		l = w.rng.IntN(numLists)
	}
	p := &push{}
	for range 1 + w.rng.IntN(3) {
		p.elems = append(p.elems, w.unique())
	}
	lm := w.m.lists[l]
	w.m.mu.Lock()
	lm.pushes[w.id] = append(lm.pushes[w.id], p)
	p.send = time.Now()
	w.m.mu.Unlock()
	n, err := w.rc.RPush(ctx, listKey(l), anys(p.elems)...).Result()
	if err != nil {
		return err
	}
	if n < int64(len(p.elems)) {
		return wrongReply(fmt.Sprintf("RPUSH %s of %d elements answered length %d", listKey(l), len(p.elems), n))
	}
	w.m.mu.Lock()
	p.ack, p.acked = time.Now(), true
	w.m.mu.Unlock()
	return nil
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// popping counts a pop about to be sent as pending on its lists and
// returns the function that records its reply.
func (w *collWriter) popping(lists []int, count int) func(key string, elems []string) {
	w.m.mu.Lock()
	for _, l := range lists {
		w.m.lists[l].pending += count
	}
	w.m.mu.Unlock()
	return func(key string, elems []string) {
		w.m.mu.Lock()
		defer w.m.mu.Unlock()
		for _, l := range lists {
			w.m.lists[l].pending -= count
		}
		if key == "" {
			return
		}
		l := slices.IndexFunc(lists, func(l int) bool { return listKey(l) == key })
		if l < 0 {
			w.m.errs = append(w.m.errs, fmt.Sprintf("writer %d popped from %q, a key it did not ask for", w.id, key))
			return
		}
		lm := w.m.lists[lists[l]]
		for _, e := range elems {
			if lm.popped[e] {
				w.m.errs = append(w.m.errs, fmt.Sprintf("writer %d popped %q from %s, already popped by an acked pop", w.id, e, key))
			}
			lm.popped[e] = true
		}
		lm.pops = append(lm.pops, popAck{writer: w.id, elems: elems})
	}
}

// lpop pops one element, or up to two with a count.
func (w *collWriter) lpop(ctx context.Context) error {
	l := w.rng.IntN(numLists)
	k := listKey(l)
	count := 1 + w.rng.IntN(2)
	done := w.popping([]int{l}, count)
	var elems []string
	var err error
	if count == 1 {
		var e string
		if e, err = w.rc.LPop(ctx, k).Result(); err == nil {
			elems = []string{e}
		}
	} else {
		elems, err = w.rc.LPopCount(ctx, k, count).Result()
	}
	switch {
	case errors.Is(err, redis.Nil):
		done("", nil)
	case err != nil:
		return err
	case len(elems) == 0 || len(elems) > count:
		return wrongReply(fmt.Sprintf("LPOP %s %d answered %q", k, count, elems))
	default:
		done(k, elems)
	}
	return nil
}

// blpop waits up to 10-50 ms on one list or on all of them.
func (w *collWriter) blpop(ctx context.Context) error {
	var lists []int
	switch r := w.rng.IntN(10); {
	case r < 5: // the list pushed least, often empty
		lists = []int{numLists - 1}
	case r < 7:
		lists = []int{2, 1, 0}
	default:
		lists = []int{w.rng.IntN(numLists)}
	}
	args := []any{"blpop"}
	for _, l := range lists {
		args = append(args, listKey(l))
	}
	args = append(args, fmt.Sprintf("0.%03d", 10+w.rng.IntN(41)))
	done := w.popping(lists, 1)
	sent := time.Now()
	v, err := w.rc.Do(ctx, args...).Slice()
	if errors.Is(err, redis.Nil) {
		w.blocked++
		done("", nil)
		return nil
	}
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return wrongReply(fmt.Sprintf("BLPOP answered %v", v))
	}
	k, _ := v[0].(string)
	e, _ := v[1].(string)
	done(k, []string{e})
	if time.Since(sent) > 20*time.Millisecond {
		w.woken++
	}
	return nil
}

// hincrby adds 1-100 to a field; each cycle brings new fields, so HLEN
// grows.
func (w *collWriter) hincrby(ctx context.Context) error {
	h, f := w.rng.IntN(numHashes), "f"+strconv.Itoa(w.rng.IntN(6*w.cycle))
	in := &incr{by: 1 + w.rng.Int64N(100)}
	w.m.mu.Lock()
	c := w.m.hashes[h][f]
	if c == nil {
		c = &counter{}
		w.m.hashes[h][f] = c
	}
	c.incrs = append(c.incrs, in)
	w.m.mu.Unlock()
	n, err := w.rc.HIncrBy(ctx, hashKey(h), f, in.by).Result()
	if err != nil {
		return err
	}
	if n < in.by {
		return wrongReply(fmt.Sprintf("HINCRBY %s %s %d answered %d", hashKey(h), f, in.by, n))
	}
	w.m.mu.Lock()
	in.acked = true
	w.m.mu.Unlock()
	return nil
}

// sadd adds 1-3 new members: the reply must count them all.
func (w *collWriter) sadd(ctx context.Context) error {
	s := w.rng.IntN(numSets)
	a := &add{}
	for range 1 + w.rng.IntN(3) {
		a.members = append(a.members, w.unique())
	}
	w.m.mu.Lock()
	w.m.sets[s].adds = append(w.m.sets[s].adds, a)
	w.m.mu.Unlock()
	n, err := w.rc.SAdd(ctx, setKey(s), anys(a.members)...).Result()
	if err != nil {
		return err
	}
	if n != int64(len(a.members)) {
		return wrongReply(fmt.Sprintf("SADD %s of %d new members answered %d", setKey(s), len(a.members), n))
	}
	w.m.mu.Lock()
	a.acked = true
	w.m.mu.Unlock()
	return nil
}

// zadd adds 1-3 new members with small integer scores (ties are common,
// so the member order within a score is exercised too).
func (w *collWriter) zadd(ctx context.Context) error {
	z := w.rng.IntN(numZsets)
	a := &add{}
	var zs []redis.Z
	for range 1 + w.rng.IntN(3) {
		a.members = append(a.members, w.unique())
		a.scores = append(a.scores, w.rng.Int64N(1000))
		zs = append(zs, redis.Z{Score: float64(a.scores[len(a.scores)-1]), Member: a.members[len(a.members)-1]})
	}
	w.m.mu.Lock()
	w.m.zsets[z].adds = append(w.m.zsets[z].adds, a)
	w.m.mu.Unlock()
	n, err := w.rc.ZAdd(ctx, zsetKey(z), zs...).Result()
	if err != nil {
		return err
	}
	if n != int64(len(zs)) {
		return wrongReply(fmt.Sprintf("ZADD %s of %d new members answered %d", zsetKey(z), len(zs), n))
	}
	w.m.mu.Lock()
	a.acked = true
	w.m.mu.Unlock()
	return nil
}

// zincrby adds 1-100 to one of the counters of a sorted set.
func (w *collWriter) zincrby(ctx context.Context) error {
	z, name := w.rng.IntN(numZsets), zCounter(w.rng.IntN(zCounters))
	in := &incr{by: 1 + w.rng.Int64N(100)}
	w.m.mu.Lock()
	c := w.m.zsets[z].ctrs[name]
	if c == nil {
		c = &counter{}
		w.m.zsets[z].ctrs[name] = c
	}
	c.incrs = append(c.incrs, in)
	w.m.mu.Unlock()
	score, err := w.rc.ZIncrBy(ctx, zsetKey(z), float64(in.by), name).Result()
	if err != nil {
		return err
	}
	if score < float64(in.by) || score != math.Trunc(score) {
		return wrongReply(fmt.Sprintf("ZINCRBY %s %d %s answered %v", zsetKey(z), in.by, name, score))
	}
	w.m.mu.Lock()
	in.acked = true
	w.m.mu.Unlock()
	return nil
}

// collCycle runs writers for a while, kills the server, restarts it and
// verifies every collection.
func collCycle(t *testing.T, p *testutil.Proc, m *collModel, cycle, writers int, run time.Duration, rng *rand.Rand) {
	ctx := context.Background()
	stop := make(chan struct{})
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	ws := make([]*collWriter, writers)
	for i := range ws {
		ws[i] = &collWriter{id: i, cycle: cycle, m: m, rc: newClient(p.Addr), rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))}
		wg.Add(1)
		go func(w *collWriter) {
			defer wg.Done()
			w.run(ctx, stop, errs)
		}(ws[i])
	}
	time.Sleep(run)
	p.Kill()
	close(stop)
	wg.Wait()
	acks, blocked, woken, pending := 0, 0, 0, 0
	for _, w := range ws {
		w.rc.Close()
		acks += w.acks
		blocked += w.blocked
		woken += w.woken
	}
	for _, l := range m.lists {
		pending += l.pending
	}
	close(errs)
	for err := range errs {
		t.Errorf("cycle %d: %v", cycle, err)
	}
	for _, e := range m.errs {
		t.Errorf("cycle %d: %s", cycle, e)
	}
	m.errs = nil
	if acks == 0 {
		t.Fatalf("cycle %d: no write was acknowledged in %v", cycle, run)
	}

	p.Restart(t)
	v := verifyCollections(t, p, m, cycle)
	t.Logf("cycle %d: %d acked operations in %v (BLPOP: %d timed out, %d woken; in-flight pops could take %d, took %d), %d elements and members verified",
		cycle, acks, run, blocked, woken, pending, v.taken, v.checked)
	m.reset()
}

// verifier reads the collections back after a restart, checks them against
// the model and makes what it read the next cycle's base.
type verifier struct {
	t       *testing.T
	ctx     context.Context
	rc      *redis.Client
	cycle   int
	present int // collections that exist, for DBSIZE
	checked int // elements and members read
	taken   int // list elements taken by in-flight pops
}

func verifyCollections(t *testing.T, p *testutil.Proc, m *collModel, cycle int) *verifier {
	v := &verifier{t: t, ctx: context.Background(), rc: newClient(p.Addr), cycle: cycle}
	defer v.rc.Close()
	v.lists(m.lists)
	v.hashes(m.hashes)
	v.sets(m.sets)
	v.zsets(m.zsets)
	// The key count is kept apart from the keys; it must survive too.
	if n := v.rc.DBSize(v.ctx).Val(); n != int64(v.present) {
		v.fail("DBSIZE %d after restart, but %d collections are present", n, v.present)
	}
	return v
}

func (v *verifier) fail(format string, args ...any) {
	v.t.Helper()
	v.t.Errorf("cycle %d: "+format, append([]any{v.cycle}, args...)...)
}

func (v *verifier) exec(pipe redis.Pipeliner) {
	v.t.Helper()
	if _, err := pipe.Exec(v.ctx); err != nil && !errors.Is(err, redis.Nil) {
		v.t.Fatalf("cycle %d: reading back: %v", v.cycle, err)
	}
}

// count checks a collection's count (LLEN, HLEN...), kept in its metadata,
// against the n members read.
func (v *verifier) count(key string, n int, card *redis.IntCmd) {
	v.t.Helper()
	if card.Val() != int64(n) {
		v.fail("%s holds %d after restart but its count says %d", key, n, card.Val())
	}
	if n > 0 {
		v.present++
	}
	v.checked += n
}

func (v *verifier) lists(lists []*listModel) {
	pipe := v.rc.Pipeline()
	var ranges []*redis.StringSliceCmd
	var lens []*redis.IntCmd
	for i := range lists {
		ranges = append(ranges, pipe.LRange(v.ctx, listKey(i), 0, -1))
		lens = append(lens, pipe.LLen(v.ctx, listKey(i)))
	}
	v.exec(pipe)
	for i, lm := range lists {
		got := ranges[i].Val()
		v.count(listKey(i), len(got), lens[i])
		probs, taken := lm.check(got)
		for _, prob := range probs {
			v.fail("%s: %s", listKey(i), prob)
		}
		v.taken += taken
		lm.base = nil
		for _, e := range got {
			lm.base = append(lm.base, &push{elems: []string{e}, acked: true})
		}
	}
}

// hashes reads each hash whole (HGETALL) and field by field (HMGET): the
// two must agree, and each field hold a possible sum.
func (v *verifier) hashes(hashes []map[string]*counter) {
	pipe := v.rc.Pipeline()
	var alls []*redis.MapStringStringCmd
	var lens []*redis.IntCmd
	var mgets []*redis.SliceCmd
	fields := make([][]string, len(hashes))
	for i, h := range hashes {
		alls = append(alls, pipe.HGetAll(v.ctx, hashKey(i)))
		lens = append(lens, pipe.HLen(v.ctx, hashKey(i)))
		fields[i] = slices.Sorted(maps.Keys(h))
		mgets = append(mgets, pipe.HMGet(v.ctx, hashKey(i), append(fields[i], "never")...))
	}
	v.exec(pipe)
	for i, h := range hashes {
		k, got, mget := hashKey(i), alls[i].Val(), mgets[i].Val()
		v.count(k, len(got), lens[i])
		for f, val := range got {
			if h[f] == nil {
				v.fail("%s has field %s = %q, never incremented", k, f, val)
			}
		}
		for j, f := range fields[i] {
			val, ok := got[f]
			if s, _ := mget[j].(string); s != val || (mget[j] != nil) != ok {
				v.fail("%s field %s: HGETALL has %q (%v), HMGET %v", k, f, val, ok, mget[j])
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if ok && (err != nil || n <= 0) {
				v.fail("%s field %s = %q after restart, not a positive count", k, f, val)
				continue
			}
			if c := h[f]; !c.possible()[n] {
				v.fail("%s field %s = %q (present %v) after restart; lost an acknowledged HINCRBY? %v", k, f, val, ok, c)
			}
			h[f].base, h[f].incrs = n, nil
		}
	}
}

// sets reads each set whole (SMEMBERS) and member by member (SMISMEMBER
// of every member ever added).
func (v *verifier) sets(sets []*setModel) {
	pipe := v.rc.Pipeline()
	var alls []*redis.StringSliceCmd
	var cards []*redis.IntCmd
	var ises []*redis.BoolSliceCmd
	known := make([][]string, len(sets))
	for i, s := range sets {
		alls = append(alls, pipe.SMembers(v.ctx, setKey(i)))
		cards = append(cards, pipe.SCard(v.ctx, setKey(i)))
		known[i] = append(slices.Collect(maps.Keys(s.base)), "never")
		for _, a := range s.adds {
			known[i] = append(known[i], a.members...)
		}
		ises = append(ises, pipe.SMIsMember(v.ctx, setKey(i), anys(known[i])...))
	}
	v.exec(pipe)
	for i, s := range sets {
		k, got, is := setKey(i), alls[i].Val(), ises[i].Val()
		v.count(k, len(got), cards[i])
		in := map[string]bool{}
		for _, e := range got {
			in[e] = true
		}
		if len(in) != len(got) {
			v.fail("%s: SMEMBERS repeats members", k)
		}
		for j, e := range known[i] {
			if is[j] != in[e] {
				v.fail("%s: SMISMEMBER %s is %v, SMEMBERS says %v", k, e, is[j], in[e])
			}
			delete(in, e)
		}
		for e := range in {
			v.fail("%s has %q, never added", k, e)
		}
		in = map[string]bool{}
		for _, e := range got {
			in[e] = true
		}
		for e := range s.base {
			if !in[e] {
				v.fail("%s lost %q, present before the last crash", k, e)
			}
		}
		for _, a := range s.adds {
			v.checkAdd(k, a, func(e string) bool { return in[e] })
		}
		s.base = in
	}
}

// zsets reads each sorted set in score order (ZRANGE, the score index) and
// member by member (ZMSCORE, the member index): they must agree.
func (v *verifier) zsets(zsets []*zsetModel) {
	pipe := v.rc.Pipeline()
	var alls []*redis.ZSliceCmd
	var cards, counts []*redis.IntCmd
	var mscores []*redis.Cmd
	known := make([][]string, len(zsets))
	for i, z := range zsets {
		k := zsetKey(i)
		alls = append(alls, pipe.ZRangeWithScores(v.ctx, k, 0, -1))
		cards = append(cards, pipe.ZCard(v.ctx, k))
		counts = append(counts, pipe.ZCount(v.ctx, k, "-inf", "+inf"))
		known[i] = append(slices.Collect(maps.Keys(z.base)), "never")
		for _, a := range z.adds {
			known[i] = append(known[i], a.members...)
		}
		known[i] = append(known[i], slices.Collect(maps.Keys(z.ctrs))...)
		// Not go-redis's ZMScore, which reads a missing member as 0.
		mscores = append(mscores, pipe.Do(v.ctx, append([]any{"zmscore", k}, anys(known[i])...)...))
	}
	v.exec(pipe)
	for i, z := range zsets {
		k, got := zsetKey(i), alls[i].Val()
		v.count(k, len(got), cards[i])
		if n := counts[i].Val(); n != int64(len(got)) {
			v.fail("%s: ZCOUNT -inf +inf is %d, ZRANGE has %d", k, n, len(got))
		}
		scores := map[string]float64{}
		for j, e := range got {
			name := e.Member.(string)
			if _, dup := scores[name]; dup {
				v.fail("%s: ZRANGE repeats %q", k, name)
			}
			scores[name] = e.Score
			if prev := got[max(j-1, 0)]; j > 0 && (prev.Score > e.Score || prev.Score == e.Score && prev.Member.(string) >= name) {
				v.fail("%s: ZRANGE out of order: %v before %v", k, prev, e)
			}
		}
		ms, _ := mscores[i].Slice()
		unknown := maps.Clone(scores)
		for j, name := range known[i] {
			want, ok := scores[name]
			var score float64
			switch s := ms[j].(type) {
			case float64: // RESP3
				score = s
			case string:
				score, _ = strconv.ParseFloat(s, 64)
			}
			if (ms[j] != nil) != ok || score != want {
				v.fail("%s: ZMSCORE %s is %v, ZRANGE has %v (%v)", k, name, ms[j], want, ok)
			}
			delete(unknown, name)
		}
		for name := range unknown {
			v.fail("%s has %q, never added", k, name)
		}

		for name, score := range z.base {
			if now, ok := scores[name]; !ok || now != score {
				v.fail("%s: %q had score %v before the last crash, now %v (present %v)", k, name, score, now, ok)
			}
		}
		for _, a := range z.adds {
			v.checkAdd(k, a, func(e string) bool { _, ok := scores[e]; return ok })
			for j, e := range a.members {
				if s, ok := scores[e]; ok && s != float64(a.scores[j]) {
					v.fail("%s: %q has score %v, added with %d", k, e, s, a.scores[j])
				}
			}
		}
		for name, c := range z.ctrs {
			s := scores[name] // 0 if absent: nothing was added
			if !c.possible()[int64(s)] || s != math.Trunc(s) {
				v.fail("%s: counter %s = %v after restart; lost an acknowledged ZINCRBY? %v", k, name, s, c)
			}
			c.base, c.incrs = int64(s), nil
			delete(scores, name)
		}
		z.base = scores
	}
}

// checkAdd: an SADD or ZADD of new members lands whole or not at all, and
// whole if it was acknowledged.
func (v *verifier) checkAdd(key string, a *add, has func(string) bool) {
	v.t.Helper()
	n := 0
	for _, e := range a.members {
		if has(e) {
			n++
		}
	}
	switch {
	case n != 0 && n != len(a.members):
		v.fail("%s: an add of %q is half applied after restart (%d of %d members)", key, a.members, n, len(a.members))
	case a.acked && n == 0:
		v.fail("%s: acknowledged add of %q lost after restart", key, a.members)
	}
}

// where is an element's place in its producer's sequence.
type where struct {
	producer int // -1: the base
	pos      int // in the producer's elements, flattened
	cmd      int // index of its push
}

// check judges a list read after a restart, got, against what was pushed
// and popped, and returns what is wrong. Elements of one producer keep
// their order and, pops taking the head, what remains of them is a
// contiguous run of its sequence: before it, elements that were popped;
// after it, pushes that were never applied (only the last, in flight, can
// be). An applied element neither present nor acked as popped was taken by
// an in-flight pop: there are at most pending of them.
func (lm *listModel) check(got []string) (probs []string, taken int) {
	seqs := map[int][]*push{-1: lm.base}
	for w, ps := range lm.pushes {
		seqs[w] = ps
	}
	index := map[string]where{}
	flat := map[int][]string{}
	for w, ps := range seqs {
		for ci, p := range ps {
			for _, e := range p.elems {
				index[e] = where{producer: w, pos: len(flat[w]), cmd: ci}
				flat[w] = append(flat[w], e)
			}
		}
	}
	at := map[string]int{}
	for i, e := range got {
		if _, dup := at[e]; dup {
			probs = append(probs, fmt.Sprintf("%q appears twice", e))
		}
		at[e] = i
		if _, ok := index[e]; !ok {
			probs = append(probs, fmt.Sprintf("holds %q, never pushed", e))
		}
		if lm.popped[e] {
			probs = append(probs, fmt.Sprintf("holds %q, acknowledged as popped", e))
		}
	}
	for e := range lm.popped {
		if _, ok := index[e]; !ok {
			probs = append(probs, fmt.Sprintf("%q was popped, never pushed", e))
		}
	}

	for w, ps := range seqs {
		// A push was applied if acked, if any of its elements was seen,
		// or if a later push of the same producer was.
		applied := make([]bool, len(ps))
		for ci := len(ps) - 1; ci >= 0; ci-- {
			applied[ci] = ps[ci].acked || ci+1 < len(ps) && applied[ci+1]
			for _, e := range ps[ci].elems {
				_, in := at[e]
				applied[ci] = applied[ci] || in || lm.popped[e]
			}
		}
		first, last := -1, -1
		for i, e := range flat[w] {
			j, in := at[e]
			if !in {
				continue
			}
			if last >= 0 && (i != last+1 || j < at[flat[w][last]]) {
				probs = append(probs, fmt.Sprintf("producer %d's %q is out of order or not next to %q", w, e, flat[w][last]))
			}
			if first < 0 {
				first = i
			}
			last = i
		}
		for i, e := range flat[w] {
			_, in := at[e]
			switch ci := index[e].cmd; {
			case in || !applied[ci]:
			case last >= 0 && i > last && lm.popped[e]:
				probs = append(probs, fmt.Sprintf("%q was popped before %q, pushed earlier by the same producer", e, flat[w][last]))
			case last >= 0 && i > last:
				probs = append(probs, fmt.Sprintf("lost %q, pushed (acked %v) after %q that is still there", e, ps[ci].acked, flat[w][last]))
			case !lm.popped[e]:
				taken++
			}
		}
	}
	if taken > lm.pending {
		probs = append(probs, fmt.Sprintf("%d pushed elements are neither in the list nor acked as popped, but in-flight pops could take only %d", taken, lm.pending))
	}

	// Real time: an element acked before another was sent is ahead of it.
	var maxSend time.Time
	var maxSendElem string
	for _, e := range got {
		wh, ok := index[e]
		if !ok {
			continue
		}
		p := seqs[wh.producer][wh.cmd]
		if p.acked && p.ack.Before(maxSend) {
			probs = append(probs, fmt.Sprintf("%q is after %q, though acked before that was sent", e, maxSendElem))
		}
		if p.send.After(maxSend) {
			maxSend, maxSendElem = p.send, e
		}
	}

	// Each consumer sees a producer's elements in push order.
	seen := map[[2]int]int{} // consumer, producer -> last position popped
	for _, pa := range lm.pops {
		for _, e := range pa.elems {
			wh, ok := index[e]
			if !ok {
				continue
			}
			key := [2]int{pa.writer, wh.producer}
			if last, ok := seen[key]; ok && wh.pos <= last {
				probs = append(probs, fmt.Sprintf("writer %d popped %q after %q of the same producer", pa.writer, e, flat[wh.producer][last]))
			}
			seen[key] = wh.pos
		}
	}
	if len(probs) > 10 {
		probs = append(probs[:10], fmt.Sprintf("and %d more problems", len(probs)-10))
	}
	return probs, taken
}

// TestCrashCollections: with appendfsync always, every acknowledged push,
// pop, increment and add to lists, hashes, sets and sorted sets survives
// SIGKILL, in-flight ones land whole or not at all, and the counts kept in
// metadata agree with the members.
func TestCrashCollections(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	p := testutil.StartBasalt(t, "", "--appendfsync", "always")
	m := newCollModel()
	start := time.Now()
	for c := 1; c <= 5 && !t.Failed(); c++ {
		collCycle(t, p, m, c, 8, time.Duration(150+rng.IntN(600))*time.Millisecond, rng)
		if time.Since(start) > 20*time.Second {
			t.Logf("stopping after %d cycles: time budget spent", c)
			break
		}
	}
}

// TestListModel checks the list judge itself on small histories.
func TestListModel(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// base a b; producer 0 pushed c d (acked), then e (in flight);
	// producer 1 pushed x, acked before producer 0 sent c, then y (acked
	// after e was sent).
	model := func(popped []string, pending int, pops ...popAck) *listModel {
		lm := &listModel{
			base: []*push{{elems: []string{"a"}, acked: true}, {elems: []string{"b"}, acked: true}},
			pushes: map[int][]*push{
				0: {{elems: []string{"c", "d"}, send: at(2), ack: at(3), acked: true}, {elems: []string{"e"}, send: at(6)}},
				1: {{elems: []string{"x"}, send: at(0), ack: at(1), acked: true}, {elems: []string{"y"}, send: at(5), ack: at(7), acked: true}},
			},
			popped:  map[string]bool{},
			pops:    pops,
			pending: pending,
		}
		for _, e := range popped {
			lm.popped[e] = true
		}
		return lm
	}
	for _, c := range []struct {
		name    string
		lm      *listModel
		got     string
		wantErr bool
	}{
		{"all there", model(nil, 0), "a b x c d y", false},
		{"in-flight push applied", model(nil, 0), "a b x c d y e", false},
		{"in-flight push applied first", model(nil, 0), "a b x c d e y", false},
		{"acked pops gone", model([]string{"a", "b", "x"}, 0), "c d y", false},
		{"in-flight pop took one", model([]string{"a"}, 1), "x c d y", false},
		{"in-flight pop may take an in-flight push", model([]string{"a", "b", "x", "c", "d", "y"}, 1), "", false},
		{"popped in-flight push", model([]string{"a", "b", "x", "c", "d", "y", "e"}, 0), "", false},
		{"lost head", model(nil, 0), "b x c d y", true},
		{"lost more than in-flight pops took", model(nil, 1), "x c d y", true},
		{"lost acked push", model(nil, 0), "a b x c d", true},
		{"half a push", model(nil, 0), "a b x c y", true},
		{"half a push popped", model([]string{"a", "b", "x", "c"}, 0), "y", true},
		{"gap", model(nil, 0), "a x c d y", true},
		{"producer order", model(nil, 0), "a b x d c y", true},
		{"real-time order", model(nil, 0), "a b c d x y", true},
		{"base after new", model(nil, 0), "a x b c d y", true},
		{"popped but there", model([]string{"a"}, 0), "a b x c d y", true},
		{"popped out of order", model([]string{"a", "b", "x", "d"}, 0), "c y", true},
		{"twice", model(nil, 0), "a b x c d y y", true},
		{"never pushed", model(nil, 0), "a b x c d y z", true},
		{"popped never pushed", model([]string{"z"}, 0), "a b x c d y", true},
		{"consumer order", model([]string{"a", "b"}, 0, popAck{3, []string{"b"}}, popAck{3, []string{"a"}}), "x c d y", true},
		{"consumers interleave", model([]string{"a", "b"}, 0, popAck{3, []string{"b"}}, popAck{4, []string{"a"}}), "x c d y", false},
	} {
		probs, _ := c.lm.check(strings.Fields(c.got))
		if (len(probs) > 0) != c.wantErr {
			t.Errorf("%s: check(%q) = %q, want problems %v", c.name, c.got, probs, c.wantErr)
		}
	}
}

// TestCounterModel checks the sums a counter may hold after a crash.
func TestCounterModel(t *testing.T) {
	c := &counter{base: 10, incrs: []*incr{{by: 1, acked: true}, {by: 2}, {by: 4, acked: true}, {by: 8}}}
	got := slices.Sorted(maps.Keys(c.possible()))
	if want := []int64{15, 17, 23, 25}; !slices.Equal(got, want) {
		t.Errorf("possible() = %v, want %v", got, want)
	}
}
