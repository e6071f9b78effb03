// Package workload runs application-shaped workloads against basalt with an
// ordinary client library (go-redis v9) and checks the end state.
package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// A Kafka-style queue on streams: partitions are streams, one consumer
// group reads them all. Producers append with XADD *; consumers read with
// XREADGROUP BLOCK COUNT >, acknowledge with XACK and commit their offset
// per partition with SET. One consumer "crashes" after taking a batch it
// never acknowledges; another takes its entries over with XAUTOCLAIM, and
// a final sweep finds what is left with XPENDING and takes it with XCLAIM.
// At the end every message was consumed and acknowledged, nothing is
// pending, and the group's lag is zero on every partition.
const (
	partitions = 4
	producers  = 3
	perProd    = 500
	consumers  = 4
	group      = "workers"
	// claimIdle is how long an entry must be pending before another
	// consumer may take it.
	claimIdle = 300 * time.Millisecond
)

func partition(p int) string { return "orders:" + strconv.Itoa(p) }

// ledger records what was produced and what was processed.
type ledger struct {
	mu        sync.Mutex
	produced  map[string]string // "partition/id" -> message
	processed map[string]int    // "partition/id" -> times processed
	msgs      map[string]bool   // message bodies processed
}

func (l *ledger) process(stream string, m redis.XMessage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	body, _ := m.Values["msg"].(string)
	if body == "" {
		return fmt.Errorf("%s %s: no msg field in %v", stream, m.ID, m.Values)
	}
	l.processed[stream+"/"+m.ID]++
	l.msgs[body] = true
	return nil
}

func TestQueue(t *testing.T) {
	runQueue(t, []string{testutil.StartBasalt(t, "").Addr})
}

// TestQueueCluster runs the queue on a 3-node cluster, each client on one
// of the nodes (followers forward to the leader).
func TestQueueCluster(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	runQueue(t, addrs)
	c.WaitConverged(t, 20*time.Second)
}

func runQueue(t *testing.T, addrs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var clients atomic.Int64
	client := func() *redis.Client {
		addr := addrs[int(clients.Add(1))%len(addrs)]
		return redis.NewClient(&redis.Options{Addr: addr, PoolSize: 2, MaxRetries: -1,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	}
	admin := client()
	defer admin.Close()
	streams := make([]string, 0, 2*partitions)
	for p := range partitions {
		if err := admin.XGroupCreateMkStream(ctx, partition(p), group, "$").Err(); err != nil {
			t.Fatalf("XGROUP CREATE: %v", err)
		}
		streams = append(streams, partition(p))
	}
	for range partitions {
		streams = append(streams, ">")
	}

	l := &ledger{produced: map[string]string{}, processed: map[string]int{}, msgs: map[string]bool{}}
	var failures atomic.Int64
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}

	// Producers: message j of producer i goes to partition (i+j) % 4.
	var prodWG sync.WaitGroup
	for i := range producers {
		prodWG.Add(1)
		go func() {
			defer prodWG.Done()
			rdb := client()
			defer rdb.Close()
			for j := range perProd {
				stream := partition((i + j) % partitions)
				body := fmt.Sprintf("p%d-m%d", i, j)
				id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: "*", Values: []string{"msg", body, "producer", strconv.Itoa(i)}}).Result()
				if err != nil {
					fail("XADD %s: %v", stream, err)
					return
				}
				l.mu.Lock()
				l.produced[stream+"/"+id] = body
				l.mu.Unlock()
			}
		}()
	}
	producing := make(chan struct{})
	began := time.Now()
	go func() { prodWG.Wait(); close(producing); t.Logf("produced in %v", time.Since(began)) }()

	// handle processes a batch, acknowledges it and commits the offsets.
	handle := func(rdb *redis.Client, name string, batch []redis.XStream) {
		for _, st := range batch {
			if len(st.Messages) == 0 {
				continue
			}
			ids := make([]string, len(st.Messages))
			for k, m := range st.Messages {
				if err := l.process(st.Stream, m); err != nil {
					fail("%s: %v", name, err)
				}
				ids[k] = m.ID
			}
			if n, err := rdb.XAck(ctx, st.Stream, group, ids...).Result(); err != nil || n != int64(len(ids)) {
				fail("%s XACK %s %d ids: %d, %v", name, st.Stream, len(ids), n, err)
			}
			if err := rdb.Set(ctx, "offset:"+group+":"+name+":"+st.Stream, ids[len(ids)-1], 0).Err(); err != nil {
				fail("%s SET offset: %v", name, err)
			}
		}
	}
	// allDone reports whether every produced message was processed.
	allDone := func() bool {
		select {
		case <-producing:
		default:
			return false
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.msgs) == producers*perProd
	}

	var consWG sync.WaitGroup
	crashed := make(chan struct{})
	for k := range consumers {
		consWG.Add(1)
		go func() {
			defer consWG.Done()
			name := "consumer-" + strconv.Itoa(k)
			rdb := client()
			defer rdb.Close()
			lastClaim := time.Now()
			for batches := 0; ctx.Err() == nil && !allDone(); batches++ {
				batch, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: name, Streams: streams,
					Count: 20, Block: 100 * time.Millisecond}).Result()
				if err != nil && !errors.Is(err, redis.Nil) {
					fail("%s XREADGROUP: %v", name, err)
					return
				}
				// Consumer 3 dies holding its fifth batch, unacknowledged.
				if k == 3 && batches >= 4 && len(batch) > 0 {
					close(crashed)
					return
				}
				handle(rdb, name, batch)
				// Consumer 0 takes over entries idle for too long.
				if k == 0 && time.Since(lastClaim) > claimIdle {
					lastClaim = time.Now()
					for p := range partitions {
						start := "0-0"
						for range 100 {
							msgs, next, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: partition(p), Group: group,
								Consumer: name, MinIdle: claimIdle, Start: start, Count: 50}).Result()
							if err != nil {
								fail("%s XAUTOCLAIM: %v", name, err)
								return
							}
							handle(rdb, name, []redis.XStream{{Stream: partition(p), Messages: msgs}})
							if start = next; start == "0-0" {
								break
							}
						}
					}
				}
			}
		}()
	}
	consWG.Wait()
	<-producing
	t.Logf("consumed in %v", time.Since(began))
	select {
	case <-crashed:
	default:
		t.Error("consumer-3 never crashed: the workload did not exercise claiming")
	}
	if ctx.Err() != nil {
		t.Fatalf("timed out: %d of %d messages processed", len(l.msgs), producers*perProd)
	}

	// Final sweep: nothing should be left, but if it is, XPENDING finds it
	// and XCLAIM takes it, as an operator would.
	for p := range partitions {
		pend, err := admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: partition(p), Group: group, Start: "-", End: "+", Count: 1000}).Result()
		if err != nil {
			t.Fatalf("XPENDING: %v", err)
		}
		ids := make([]string, len(pend))
		for k, e := range pend {
			ids[k] = e.ID
		}
		if len(ids) > 0 {
			msgs, err := admin.XClaim(ctx, &redis.XClaimArgs{Stream: partition(p), Group: group, Consumer: "sweeper", Messages: ids}).Result()
			if err != nil {
				t.Fatalf("XCLAIM: %v", err)
			}
			handle(admin, "sweeper", []redis.XStream{{Stream: partition(p), Messages: msgs}})
		}
	}

	// Every message consumed at least once and acknowledged.
	if len(l.produced) != producers*perProd {
		t.Fatalf("%d messages produced, want %d", len(l.produced), producers*perProd)
	}
	for key, body := range l.produced {
		if l.processed[key] == 0 {
			t.Errorf("message %s (%s) never processed", key, body)
		}
	}
	if len(l.msgs) != producers*perProd {
		t.Errorf("%d distinct messages processed, want %d", len(l.msgs), producers*perProd)
	}
	total := int64(0)
	for p := range partitions {
		s := partition(p)
		n, err := admin.XLen(ctx, s).Result()
		if err != nil {
			t.Fatal(err)
		}
		total += n
		// Nothing lost: the stream holds exactly what was produced to it.
		entries, err := admin.XRange(ctx, s, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range entries {
			if body := l.produced[s+"/"+m.ID]; body == "" || m.Values["msg"] != body {
				t.Errorf("%s %s holds %v, produced %q", s, m.ID, m.Values, body)
			}
		}
		pend, err := admin.XPending(ctx, s, group).Result()
		if err != nil || pend.Count != 0 {
			t.Errorf("XPENDING %s: %+v, %v; want nothing pending", s, pend, err)
		}
		groups, err := admin.XInfoGroups(ctx, s).Result()
		if err != nil || len(groups) != 1 {
			t.Fatalf("XINFO GROUPS %s: %v, %v", s, groups, err)
		}
		if g := groups[0]; g.Lag != 0 || g.EntriesRead != n || g.Pending != 0 {
			t.Errorf("XINFO GROUPS %s: %+v; want lag 0, entries-read %d, pending 0", s, g, n)
		}
		last, err := admin.XRevRangeN(ctx, s, "+", "-", 1).Result()
		if err != nil || len(last) != 1 || groups[0].LastDeliveredID != last[0].ID {
			t.Errorf("%s: last delivered %s, last entry %v (%v)", s, groups[0].LastDeliveredID, last, err)
		}
		// The crashed consumer holds nothing any more.
		cons, err := admin.XInfoConsumers(ctx, s, group).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cons {
			if c.Pending != 0 {
				t.Errorf("%s: consumer %s still has %d pending", s, c.Name, c.Pending)
			}
		}
	}
	if total != producers*perProd {
		t.Errorf("streams hold %d entries, want %d", total, producers*perProd)
	}
	// Committed offsets name entries of their partition.
	keys, err := admin.Keys(ctx, "offset:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("offsets: %v, %v", keys, err)
	}
	for _, k := range keys {
		v, err := admin.Get(ctx, k).Result()
		stream := k[len("offset:"+group+":"):]
		stream = stream[len(stream)-len("orders:0"):]
		if err != nil || l.produced[stream+"/"+v] == "" {
			t.Errorf("offset %s = %q (%v): not an entry of %s", k, v, err, stream)
		}
	}
	t.Logf("%d messages, %d processings, %d offsets committed", len(l.msgs), sumValues(l.processed), len(keys))
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
