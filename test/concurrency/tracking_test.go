package concurrency

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/rueidis"
)

// TestTrackingNoStaleCache: rueidis clients with their client-side caches
// (CLIENT TRACKING, OPTIN) read hot keys through the cache while other
// clients increment them, for two seconds. An invalidation that is lost,
// or that reaches a client before the reply it invalidates, leaves a cache
// serving an old value for good: once the writers stop, every cached read
// must give the key's value on the server.
func TestTrackingNoStaleCache(t *testing.T) {
	srv := testutil.StartBasalt(t, "")
	noStaleCache(t, srv.Addr, srv.Addr)
}

// TestTrackingNoStaleCacheFollower is the same with the cached readers on a
// follower of a 3-node cluster (their reads forwarded to the leader, their
// invalidations from the follower's own apply) and the writers on the
// leader: the caches may trail by the replication lag, never for good.
func TestTrackingNoStaleCacheFollower(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	l := c.WaitLeader(t, 15*time.Second)
	noStaleCache(t, c.Nodes[c.Follower(t)].Addr, c.Nodes[l].Addr)
}

func noStaleCache(t *testing.T, readAddr, writeAddr string) {
	ctx := context.Background()
	const keys = 8
	key := func(i int) string { return "hot:" + strconv.Itoa(i) }
	readers := make([]rueidis.Client, 4)
	for i := range readers {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{readAddr}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		readers[i] = c
	}
	cached := func(c rueidis.Client, i int) (int64, error) {
		v, err := c.DoCache(ctx, c.B().Get().Key(key(i)).Cache(), time.Hour).AsInt64()
		if rueidis.IsRedisNil(err) {
			return 0, nil
		}
		return v, err
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ { // writers: INCR, and sometimes SET, DEL or MSET
		c := testutil.Dial(t, writeAddr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := n % keys
				args := []string{"INCR", key(i)}
				switch n % 23 {
				case 0:
					args = []string{"DEL", key(i)}
				case 1:
					args = []string{"MSET", key(i), "100", key((i + 1) % keys), "200"}
				}
				if r, err := c.DoErr(args...); err != nil || r.IsError() {
					errs <- fmt.Errorf("%v: %v %v", args, r, err)
					return
				}
			}
		}()
	}
	for _, c := range readers { // readers: cached reads, some pipelined with writes of their own
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := cached(c, n%keys); err != nil {
					errs <- fmt.Errorf("cached GET: %v", err)
					return
				}
				if n%50 == 0 {
					if err := c.Do(ctx, c.B().Incr().Key(key(n%keys)).Build()).Error(); err != nil {
						errs <- fmt.Errorf("INCR: %v", err)
						return
					}
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	plain := testutil.Dial(t, writeAddr)
	deadline := time.Now().Add(2 * time.Second) // invalidations already sent may still be on their way
	for {
		stale := ""
		for i := range keys {
			want, _ := strconv.ParseInt(plain.Do("GET", key(i)).Str, 10, 64)
			for r, c := range readers {
				got, err := cached(c, i)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					stale += fmt.Sprintf(" reader %d %s: cached %d, server %d;", r, key(i), got, want)
				}
			}
		}
		if stale == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("caches still stale after the writes stopped:%s", stale)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
