// Command deltime measures how long DEL and UNLINK of a big collection take
// compared with a small one: basalt drops the key's metadata and removes the
// members with one range deletion, so both should cost about one write.
// bench/delbig.sh runs it against basalt and redis-server.
//
//	go run ./bench/deltime -addr 127.0.0.1:6379 -name redis -big 1000000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	name := flag.String("name", "server", "label for the output")
	big := flag.Int("big", 1_000_000, "members of the big collection")
	small := flag.Int("small", 10, "members of the small collection")
	reps := flag.Int("reps", 5, "repetitions of the small case (median)")
	flag.Parse()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, Protocol: 2, PoolSize: 1,
		ReadTimeout: 5 * time.Minute, WriteTimeout: time.Minute})
	defer rdb.Close()

	for _, typ := range []string{"hash", "set"} {
		for _, op := range []string{"DEL", "UNLINK"} {
			var smalls []time.Duration
			for range *reps {
				fill(ctx, rdb, typ, "bench:del:small", *small)
				smalls = append(smalls, timeDel(ctx, rdb, op, "bench:del:small"))
			}
			slices.Sort(smalls)
			fillTime := fill(ctx, rdb, typ, "bench:del:big", *big)
			bigTime := timeDel(ctx, rdb, op, "bench:del:big")
			// The next write after the big delete: no stall behind it.
			start := time.Now()
			if err := rdb.Set(ctx, "bench:del:after", "1", 0).Err(); err != nil {
				log.Fatal(err)
			}
			after := time.Since(start)
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", *name, typ, op,
				ms(smalls[len(smalls)/2]), ms(bigTime), ms(after),
				fmt.Sprintf("%.0f", float64(*big)/fillTime.Seconds()))
		}
	}
}

// fill creates key with n members (fields field:i -> value:i for a hash,
// member:i for a set) by pipelined commands of 1,000 members each, checks
// the count and returns the time it took.
func fill(ctx context.Context, rdb *redis.Client, typ, key string, n int) time.Duration {
	start := time.Now()
	if err := rdb.Del(ctx, key).Err(); err != nil {
		log.Fatal(err)
	}
	const perCmd, perPipe = 1000, 100
	pipe := rdb.Pipeline()
	queued := 0
	for i := 0; i < n; i += perCmd {
		var args []any
		if typ == "hash" {
			args = []any{"HSET", key}
			for j := i; j < min(i+perCmd, n); j++ {
				args = append(args, "field:"+strconv.Itoa(j), "value:"+strconv.Itoa(j))
			}
		} else {
			args = []any{"SADD", key}
			for j := i; j < min(i+perCmd, n); j++ {
				args = append(args, "member:"+strconv.Itoa(j))
			}
		}
		pipe.Do(ctx, args...)
		if queued++; queued == perPipe {
			if _, err := pipe.Exec(ctx); err != nil {
				log.Fatal(err)
			}
			queued = 0
		}
	}
	if queued > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			log.Fatal(err)
		}
	}
	d := time.Since(start)
	var got int64
	var err error
	if typ == "hash" {
		got, err = rdb.HLen(ctx, key).Result()
	} else {
		got, err = rdb.SCard(ctx, key).Result()
	}
	if err != nil || got != int64(n) {
		log.Fatalf("%s %s has %d members (%v), want %d", typ, key, got, err, n)
	}
	return d
}

// timeDel times one DEL or UNLINK round trip and checks the key is gone.
func timeDel(ctx context.Context, rdb *redis.Client, op, key string) time.Duration {
	start := time.Now()
	n, err := rdb.Do(ctx, op, key).Int()
	d := time.Since(start)
	if err != nil || n != 1 {
		log.Fatalf("%s %s = %d (%v), want 1", op, key, n, err)
	}
	if e, err := rdb.Exists(ctx, key).Result(); err != nil || e != 0 {
		log.Fatalf("%s still exists after %s (%v)", key, op, err)
	}
	return d
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
