package clients

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisPubSub drives pub/sub with go-redis v9 in RESP3 (its default)
// and RESP2: a PubSub receives every message of several concurrent
// publishers, each publisher's in order, by channel and by pattern.
func TestGoRedisPubSub(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rc := redis.NewClient(&redis.Options{Addr: p.Addr, Protocol: proto, PoolSize: 8})
			defer rc.Close()

			ps := rc.Subscribe(ctx, "events")
			defer ps.Close()
			if err := ps.PSubscribe(ctx, "ev*"); err != nil {
				t.Fatal(err)
			}
			// Wait for both confirmations, so no message is published
			// before the subscriptions exist.
			for range 2 {
				if _, err := ps.Receive(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := rc.PubSubNumSub(ctx, "events").Result(); err != nil || n["events"] != 1 {
				t.Fatalf("PUBSUB NUMSUB: %v %v", n, err)
			}

			const publishers, perPublisher = 4, 500
			var wg sync.WaitGroup
			errs := make(chan error, publishers)
			for i := range publishers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for seq := range perPublisher {
						n, err := rc.Publish(ctx, "events", fmt.Sprintf("%d:%d", i, seq)).Result()
						if err != nil || n != 2 { // the channel and the pattern
							errs <- fmt.Errorf("PUBLISH: %d, %v", n, err)
							return
						}
					}
				}()
			}

			// Each publisher's messages arrive in order, once by channel
			// and once by pattern.
			next := map[string][]int{"": make([]int, publishers), "ev*": make([]int, publishers)}
			for got := 0; got < 2*publishers*perPublisher; got++ {
				m, err := ps.ReceiveMessage(ctx)
				if err != nil {
					t.Fatalf("after %d messages: %v", got, err)
				}
				if m.Channel != "events" {
					t.Fatalf("message on %q", m.Channel)
				}
				pub, seq, _ := strings.Cut(m.Payload, ":")
				i, _ := strconv.Atoi(pub)
				s, _ := strconv.Atoi(seq)
				want := next[m.Pattern]
				if want == nil || i < 0 || i >= publishers || s != want[i] {
					t.Fatalf("message %q (pattern %q): want publisher %d's %v", m.Payload, m.Pattern, i, want)
				}
				want[i]++
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}

			if err := ps.Unsubscribe(ctx, "events"); err != nil {
				t.Fatal(err)
			}
			if err := ps.PUnsubscribe(ctx, "ev*"); err != nil {
				t.Fatal(err)
			}
			// Wait until the hub has forgotten them (the confirmations
			// are read by ps, not by the test).
			deadline := time.Now().Add(5 * time.Second)
			for {
				n, err := rc.Publish(ctx, "events", "x").Result()
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("PUBLISH after unsubscribing reaches %d clients", n)
				}
				time.Sleep(10 * time.Millisecond)
			}

			// Shard channels.
			sps := rc.SSubscribe(ctx, "shard")
			defer sps.Close()
			if _, err := sps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := rc.SPublish(ctx, "shard", "hello").Result(); err != nil || n != 1 {
				t.Fatalf("SPUBLISH: %d %v", n, err)
			}
			m, err := sps.ReceiveMessage(ctx)
			if err != nil || m.Channel != "shard" || m.Payload != "hello" {
				t.Fatalf("shard message %v %v", m, err)
			}
		})
	}
}
