// Package concurrency hammers single hot keys of basalt from many clients at
// once. basalt applies the writes of a shard one record at a time, so
// concurrent writes to one key must never conflict, fail or be retried, and
// every count must come out exact.
package concurrency

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

const (
	clients = 50
	rounds  = 300 // per client; each round writes every key once or twice
)

// errs collects error replies and client errors from all goroutines.
type errs struct {
	mu   sync.Mutex
	n    int
	list []string
}

func (e *errs) add(who int, op string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.list) < 10 {
		e.list = append(e.list, fmt.Sprintf("client %d %s: %v", who, op, err))
	}
}

// result is what one client saw.
type result struct {
	pushes int
	popped []string // LPOP results in order
	incrs  []int64  // HINCRBY replies in order
	hsum   int64    // sum of its HINCRBY increments
	zsum   map[string]float64
}

func TestOneKey(t *testing.T) {
	srv := testutil.StartBasalt(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var (
		e       errs
		results = make([]result, clients)
		wg      sync.WaitGroup
		start   = make(chan struct{})
		zmember = []string{"a", "b", "c"}
	)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One connection per client and no retries: an error must show.
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1, MaxRetries: -1,
				ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
			defer rdb.Close()
			res := &results[i]
			res.zsum = map[string]float64{}
			<-start
			for j := range rounds {
				// List: push one, pop one (possibly someone else's, or
				// nothing when others emptied it). Odd clients pop with a
				// BLPOP that times out after 10 ms when the list is empty.
				if err := rdb.RPush(ctx, "L", fmt.Sprintf("%d:%d", i, j)).Err(); err != nil {
					e.add(i, "RPUSH", err)
				} else {
					res.pushes++
				}
				var v string
				var err error
				if i%2 == 0 {
					v, err = rdb.LPop(ctx, "L").Result()
				} else {
					var kv []string
					if kv, err = rdb.Do(ctx, "BLPOP", "L", "0.01").StringSlice(); err == nil {
						if len(kv) != 2 || kv[0] != "L" {
							err = fmt.Errorf("reply %q", kv)
						} else {
							v = kv[1]
						}
					}
				}
				switch {
				case err == nil:
					res.popped = append(res.popped, v)
				case !errors.Is(err, redis.Nil):
					e.add(i, "pop", err)
				}

				// Hash: positive increments, so every reply is a distinct value.
				d := int64(i%7 + 1)
				n, err := rdb.HIncrBy(ctx, "H", "f", d).Result()
				if err != nil {
					e.add(i, "HINCRBY", err)
				} else {
					res.incrs = append(res.incrs, n)
					res.hsum += d
				}

				// Set: add a member of our own, remove every other one.
				m := fmt.Sprintf("%d:%d", i, j)
				if n, err := rdb.SAdd(ctx, "S", m).Result(); err != nil || n != 1 {
					e.add(i, "SADD "+m, fmt.Errorf("reply %d, err %v", n, err))
				}
				if j%2 == 1 {
					prev := fmt.Sprintf("%d:%d", i, j-1)
					if n, err := rdb.SRem(ctx, "S", prev).Result(); err != nil || n != 1 {
						e.add(i, "SREM "+prev, fmt.Errorf("reply %d, err %v", n, err))
					}
				}

				// Sorted set: a few members shared by everyone.
				zm := zmember[(i+j)%len(zmember)]
				zd := float64(i%5 + 1)
				if err := rdb.ZIncrBy(ctx, "Z", zd, zm).Err(); err != nil {
					e.add(i, "ZINCRBY", err)
				} else {
					res.zsum[zm] += zd
				}
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d clients x %d rounds in %v", clients, rounds, time.Since(began))
	if e.n > 0 {
		t.Fatalf("%d errors, first ones:\n%s", e.n, strings.Join(e.list, "\n"))
	}

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer rdb.Close()

	t.Run("list", func(t *testing.T) {
		pushes, pops := 0, 0
		seen := map[string]int{}
		for i, r := range results {
			pushes += r.pushes
			pops += len(r.popped)
			for _, v := range r.popped {
				seen[v]++
			}
			checkFIFO(t, fmt.Sprintf("client %d's pops", i), r.popped)
		}
		n, err := rdb.LLen(ctx, "L").Result()
		if err != nil || n != int64(pushes-pops) {
			t.Errorf("LLEN = %d (%v), want pushes %d - pops %d = %d", n, err, pushes, pops, pushes-pops)
		}
		rest, err := rdb.LRange(ctx, "L", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		checkFIFO(t, "the remaining list", rest)
		for _, v := range rest {
			seen[v]++
		}
		// Every element pushed is popped or still there, exactly once.
		for i := range clients {
			for j := range rounds {
				v := fmt.Sprintf("%d:%d", i, j)
				if seen[v] != 1 {
					t.Errorf("element %s seen %d times", v, seen[v])
				}
				delete(seen, v)
			}
		}
		for v, k := range seen {
			t.Errorf("element %q never pushed, seen %d times", v, k)
		}
	})

	t.Run("hash", func(t *testing.T) {
		var sum int64
		var all []int64
		for i, r := range results {
			sum += r.hsum
			if !slices.IsSorted(r.incrs) {
				t.Errorf("client %d: HINCRBY replies not increasing: %v", i, r.incrs)
			}
			all = append(all, r.incrs...)
		}
		got, err := rdb.HGet(ctx, "H", "f").Int64()
		if err != nil || got != sum {
			t.Errorf("HGET H f = %d (%v), want the sum of increments %d", got, err, sum)
		}
		// Increments are positive and applied one at a time: every reply
		// is a distinct intermediate value, the largest is the final one.
		slices.Sort(all)
		if len(all) > 0 && all[len(all)-1] != sum {
			t.Errorf("largest HINCRBY reply %d, want %d", all[len(all)-1], sum)
		}
		if c := slices.Compact(slices.Clone(all)); len(c) != len(all) {
			t.Errorf("%d HINCRBY replies repeat a value", len(all)-len(c))
		}
	})

	t.Run("set", func(t *testing.T) {
		want := map[string]bool{}
		for i := range clients {
			for j := 1; j < rounds; j += 2 {
				want[fmt.Sprintf("%d:%d", i, j)] = true
			}
			if rounds%2 == 1 { // the last even member was never removed
				want[fmt.Sprintf("%d:%d", i, rounds-1)] = true
			}
		}
		n, err := rdb.SCard(ctx, "S").Result()
		if err != nil || n != int64(len(want)) {
			t.Errorf("SCARD = %d (%v), want %d", n, err, len(want))
		}
		members, err := rdb.SMembers(ctx, "S").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if !want[m] {
				t.Errorf("unexpected member %q", m)
			}
		}
		if len(members) != len(want) {
			t.Errorf("SMEMBERS has %d members, want %d", len(members), len(want))
		}
	})

	t.Run("zset", func(t *testing.T) {
		want := map[string]float64{}
		for _, r := range results {
			for m, s := range r.zsum {
				want[m] += s
			}
		}
		for m, s := range want {
			got, err := rdb.ZScore(ctx, "Z", m).Result()
			if err != nil || got != s {
				t.Errorf("ZSCORE Z %s = %v (%v), want %v", m, got, err, s)
			}
		}
		if n, err := rdb.ZCard(ctx, "Z").Result(); err != nil || n != int64(len(want)) {
			t.Errorf("ZCARD = %d (%v), want %d", n, err, len(want))
		}
	})
}

// checkFIFO checks that the elements of each producer ("client:seq") appear
// in the order they were pushed: the list is a queue (RPUSH, LPOP).
func checkFIFO(t *testing.T, what string, elems []string) {
	t.Helper()
	last := map[string]int{}
	for _, v := range elems {
		who, seq, ok := strings.Cut(v, ":")
		n, err := strconv.Atoi(seq)
		if !ok || err != nil {
			t.Errorf("%s: malformed element %q", what, v)
			continue
		}
		if prev, ok := last[who]; ok && n <= prev {
			t.Errorf("%s: %s after %s:%d", what, v, who, prev)
		}
		last[who] = n
	}
}
