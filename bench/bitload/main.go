// Command bitload is a small redis-benchmark for commands whose arguments
// must be plain integers. redis-benchmark replaces __rand_int__ with a
// zero-padded 12-digit number ("000000001234"), which SETBIT, GETBIT and
// BITFIELD refuse as an offset (Redis's string2ll takes no leading zeros),
// so it cannot benchmark them with random offsets. bitload does what
// redis-benchmark does (C connections, each sending pipelines of P
// commands and waiting for the replies) with __rand_int__ as a plain
// decimal below -r and __rand_bit__ as 0 or 1. It prints one CSV line,
// "name,rps", and fails on any error reply.
//
//	go run ./bench/bitload -p 6379 -c 50 -n 100000 -P 16 -r 8000 SETBIT bench:bm __rand_int__ __rand_bit__
package main

import (
	"bufio"
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

func main() {
	host := flag.String("h", "127.0.0.1", "server host")
	port := flag.Int("p", 6379, "server port")
	clients := flag.Int("c", 50, "connections")
	total := flag.Int("n", 100000, "requests in all")
	pipeline := flag.Int("P", 1, "commands per pipeline")
	keyspace := flag.Int("r", 8000, "__rand_int__ is below this")
	name := flag.String("name", "", "test name in the output (default: the command)")
	flag.Parse()
	tmpl := flag.Args()
	if len(tmpl) == 0 {
		log.Fatal("no command given")
	}
	if *name == "" {
		*name = strings.Join(tmpl, " ")
	}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))

	var left atomic.Int64
	left.Store(int64(*total))
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	start := time.Now()
	for i := range *clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			log.Fatal(err)
		}
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			defer conn.Close()
			if err := client(conn, tmpl, &left, *pipeline, *keyspace, seed); err != nil {
				errs <- err
			}
		}(uint64(i))
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s,%.2f\n", *name, float64(*total)/elapsed.Seconds())
}

// client sends pipelines of up to p commands until the shared budget of
// requests is spent.
func client(conn net.Conn, tmpl []string, left *atomic.Int64, p, keyspace int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x62697473))
	w, r := bufio.NewWriter(conn), bufio.NewReader(conn)
	for {
		n := int64(p)
		if rem := left.Add(-n); rem < 0 {
			n += rem // the last pipeline takes what is left
		}
		if n <= 0 {
			return nil
		}
		for range n {
			fmt.Fprintf(w, "*%d\r\n", len(tmpl))
			for _, a := range tmpl {
				switch a {
				case "__rand_int__":
					a = strconv.Itoa(rng.IntN(keyspace))
				case "__rand_bit__":
					a = strconv.Itoa(rng.IntN(2))
				}
				fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for range n {
			if err := readReply(r); err != nil {
				return err
			}
		}
	}
}

// readReply reads one RESP2 reply and returns an error for an error reply.
func readReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '-':
		return fmt.Errorf("error reply: %s", line)
	case '+', ':':
		return nil
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n >= 0 {
			_, err = r.Discard(n + 2)
		}
		return err
	case '*':
		n, _ := strconv.Atoi(line[1:])
		for range max(n, 0) {
			if err := readReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}
