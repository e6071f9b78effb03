// Command streamgroup measures consumer-group throughput: clients read one
// entry at a time with XREADGROUP ... COUNT 1 STREAMS key > and acknowledge
// it with XACK, pipelining -pipeline reads and then as many acks. It prints
// "XREADGROUP+XACK,<pairs per second>" (a pair is one read and one ack),
// in redis-benchmark's CSV shape, so bench/streams.sh treats both alike.
//
//	streamgroup -addr 127.0.0.1:6379 -prefill 100000      # fill the stream once
//	streamgroup -addr 127.0.0.1:6379 -group g1 -n 50000   # one measured run
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	key := flag.String("key", "bench:stream", "stream key")
	prefill := flag.Int("prefill", 0, "append this many entries and exit")
	group := flag.String("group", "g", "consumer group to create at 0 and read with")
	n := flag.Int("n", 50000, "read+ack pairs in all")
	clients := flag.Int("clients", 50, "concurrent connections")
	pipeline := flag.Int("pipeline", 1, "reads (then acks) per round trip")
	flag.Parse()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: *clients, MaxRetries: -1,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rdb.Close()

	if *prefill > 0 {
		for i := 0; i < *prefill; i += 1000 {
			pipe := rdb.Pipeline()
			for j := i; j < min(i+1000, *prefill); j++ {
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: *key, Values: []string{"field", "value"}})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				fail("prefill: %v", err)
			}
		}
		return
	}
	if err := rdb.XGroupCreate(ctx, *key, *group, "0").Err(); err != nil {
		fail("XGROUP CREATE: %v", err)
	}
	var left atomic.Int64
	left.Store(int64(*n))
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("c%d", c)
			for left.Add(-int64(*pipeline)) > -int64(*pipeline) {
				reads := make([]*redis.XStreamSliceCmd, *pipeline)
				_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					for k := range reads {
						reads[k] = p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: *group, Consumer: name,
							Streams: []string{*key, ">"}, Count: 1, Block: -1})
					}
					return nil
				})
				if err != nil && err != redis.Nil {
					fail("XREADGROUP: %v", err)
				}
				var ids []string
				for _, r := range reads {
					if res, err := r.Result(); err == nil && len(res) == 1 && len(res[0].Messages) == 1 {
						ids = append(ids, res[0].Messages[0].ID)
					}
				}
				if len(ids) < len(reads) {
					fail("the stream ran out: prefill more entries")
				}
				_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, id := range ids {
						p.XAck(ctx, *key, *group, id)
					}
					return nil
				})
				if err != nil {
					fail("XACK: %v", err)
				}
				done.Add(int64(len(ids)))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if pend, err := rdb.XPending(ctx, *key, *group).Result(); err != nil || pend.Count != 0 {
		fail("after the run: XPENDING %+v, %v", pend, err)
	}
	fmt.Printf("XREADGROUP+XACK,%.2f\n", float64(done.Load())/el.Seconds())
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "streamgroup: "+format+"\n", args...)
	os.Exit(1)
}
