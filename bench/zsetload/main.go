// Command zsetload loads a big sorted set into a server and measures the
// commands of a leaderboard on it. Member i is "m<i>" with a score drawn
// from i alone (an integer below 1e9), so two servers loaded with the same
// -n hold the same set.
//
//	go run ./bench/zsetload -addr 127.0.0.1:6379 -n 10000000 -load
//	go run ./bench/zsetload -addr 127.0.0.1:6379 -n 10000000 -tests zrank,zscore -secs 10 -c 50 -P 1
//
// -load fills the set with pipelined ZADDs of 100 members (4 connections)
// and prints "load,<members/s>". Each test then runs for -secs seconds on
// -c connections, each sending pipelines of -P commands and waiting for
// the replies, and prints "<test>,<ops/s>":
//
//	zadd           ZADD key <random score> <random member>  (a score change)
//	zscore         ZSCORE key <random member>
//	zrank          ZRANK key <random member>
//	zrangebyscore  ZRANGEBYSCORE key s s+1000 for a random s (about 10
//	               members a reply with 10,000,000 members)
//	zrange         ZRANGE key r r+9 for a random rank r
//
// Any error reply stops it.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const scoreSpan = 1_000_000_000

// score is member i's score: a fixed pseudo-random integer below 1e9.
func score(i int) int {
	x := uint64(i) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return int((x ^ x>>31) % scoreSpan)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	key := flag.String("key", "bench:lb", "sorted set key")
	n := flag.Int("n", 10_000_000, "members")
	load := flag.Bool("load", false, "load the set first")
	tests := flag.String("tests", "", "comma-separated tests to run")
	secs := flag.Float64("secs", 10, "seconds per test")
	conns := flag.Int("c", 50, "connections per test")
	pipeline := flag.Int("P", 1, "commands per pipeline")
	flag.Parse()

	if *load {
		start := time.Now()
		if err := fill(*addr, *key, *n); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("load,%.0f\n", float64(*n)/time.Since(start).Seconds())
	}
	for _, t := range strings.Split(*tests, ",") {
		if t == "" {
			continue
		}
		ops, err := run(*addr, *key, *n, t, *conns, *pipeline, time.Duration(*secs*float64(time.Second)))
		if err != nil {
			log.Fatalf("%s: %v", t, err)
		}
		fmt.Printf("%s,%.0f\n", t, ops)
	}
}

// fill adds every member with 4 connections, each pipelining 16 ZADDs of
// 100 members over its share.
func fill(addr, key string, n int) error {
	const conns, batch, depth = 4, 100, 16
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, to := n*c/conns, n*(c+1)/conns
			errs <- withConn(addr, func(w *bufio.Writer, r *bufio.Reader) error {
				pending := 0
				for i := from; i < to; i += batch {
					args := []string{"ZADD", key}
					for j := i; j < min(i+batch, to); j++ {
						args = append(args, strconv.Itoa(score(j)), "m"+strconv.Itoa(j))
					}
					writeCmd(w, args)
					if pending++; pending == depth {
						if err := flushRead(w, r, pending); err != nil {
							return err
						}
						pending = 0
					}
				}
				return flushRead(w, r, pending)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// command returns a random command of test t.
func command(t, key string, n int, rng *rand.Rand) ([]string, error) {
	member := func() string { return "m" + strconv.Itoa(rng.IntN(n)) }
	switch t {
	case "zadd":
		return []string{"ZADD", key, strconv.Itoa(rng.IntN(scoreSpan)), member()}, nil
	case "zscore":
		return []string{"ZSCORE", key, member()}, nil
	case "zrank":
		return []string{"ZRANK", key, member()}, nil
	case "zrangebyscore":
		s := rng.IntN(scoreSpan)
		return []string{"ZRANGEBYSCORE", key, strconv.Itoa(s), strconv.Itoa(s + 1000)}, nil
	case "zrange":
		r := rng.IntN(n)
		return []string{"ZRANGE", key, strconv.Itoa(r), strconv.Itoa(r + 9)}, nil
	}
	return nil, fmt.Errorf("unknown test %q", t)
}

// run sends test t's commands for d on conns connections and returns the
// commands answered per second.
func run(addr, key string, n int, t string, conns, pipeline int, d time.Duration) (float64, error) {
	if _, err := command(t, key, n, rand.New(rand.NewPCG(0, 0))); err != nil {
		return 0, err
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := time.Now()
	deadline := start.Add(d)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
			errs <- withConn(addr, func(w *bufio.Writer, r *bufio.Reader) error {
				for time.Now().Before(deadline) {
					for range pipeline {
						args, _ := command(t, key, n, rng)
						writeCmd(w, args)
					}
					if err := flushRead(w, r, pipeline); err != nil {
						return err
					}
					done.Add(int64(pipeline))
				}
				return nil
			})
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return float64(done.Load()) / el.Seconds(), nil
}

func withConn(addr string, fn func(*bufio.Writer, *bufio.Reader) error) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(bufio.NewWriterSize(c, 1<<16), bufio.NewReaderSize(c, 1<<16))
}

func writeCmd(w *bufio.Writer, args []string) {
	fmt.Fprintf(w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// flushRead sends what is buffered and reads k replies.
func flushRead(w *bufio.Writer, r *bufio.Reader, k int) error {
	if err := w.Flush(); err != nil {
		return err
	}
	for range k {
		if err := skipReply(r); err != nil {
			return err
		}
	}
	return nil
}

// skipReply reads one RESP2 reply; an error reply is returned as an error.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return errors.New("empty reply line")
	}
	switch line[0] {
	case '-':
		return errors.New(line[1:])
	case '+', ':':
		return nil
	case '$':
		l, err := strconv.Atoi(line[1:])
		if err != nil || l < 0 {
			return err
		}
		_, err = r.Discard(l + 2)
		return err
	case '*':
		l, err := strconv.Atoi(line[1:])
		if err != nil {
			return err
		}
		for range l {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}
