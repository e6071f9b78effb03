// Package abuse checks what bad clients leave behind: malformed protocol,
// huge and half-sent arguments, wrong arity and types, clients that hang up
// while blocked, subscribed, in MULTI or with replies unread. The server
// must answer them, stay up, keep its data exactly as it was and, once they
// are gone, hold no more memory or goroutines than before.
package abuse

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// payloads are sent each on a connection of its own, which is then read
// until the server answers or hangs up, and closed.
var payloads = func() [][]byte {
	big := strings.Repeat("x", 4<<20)
	p := [][]byte{
		[]byte("*abc\r\n"),                                                  // bad multibulk length
		[]byte("*2\r\n$3\r\nGET\r\n$-5\r\n"),                                // bad bulk length
		[]byte("*1\r\n$4\r\nPINGPONG\r\n"),                                  // bulk longer than declared
		[]byte("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$600000000\r\n"),              // over proto-max-bulk-len
		[]byte("*2000000000\r\n"),                                           // over the multibulk limit
		[]byte("set \"a b\r\n"),                                             // unbalanced quotes
		[]byte(strings.Repeat("a", 70<<10)),                                 // inline request without end
		append([]byte("*2\r\n$3\r\nGET\r\n$400000000\r\n"), big[:1<<20]...), // half-sent huge bulk
		[]byte("*1\r\n$4\r\nPI"),                                            // half-sent command
		testutil.Command("GET", big, big),                                   // wrong arity, big arguments
		testutil.Command("NOSUCHCOMMAND", big),                              // unknown command, big argument
		testutil.Command("LPUSH", "canary", big),                            // wrong type, big argument
		testutil.Command("SETRANGE", "k", "536870912", "x"),                 // over the string size limit
		testutil.Command("BLPOP", "nothing-here", "0"),                      // hangs up while blocked
		testutil.Command("XREAD", "BLOCK", "0", "STREAMS", "no-stream", "$"),
		append(testutil.Command("MULTI"), testutil.Command("SET", "queued", big)...), // hangs up in MULTI
		testutil.Command("SUBSCRIBE", "ch1", "ch2"),
		testutil.Command("PSUBSCRIBE", "p*"),
		testutil.Command("WATCH", "canary"),
	}
	// Replies never read: 20,000 pipelined GETs of a 64 KB value.
	var unread bytes.Buffer
	for range 20000 {
		unread.Write(testutil.Command("GET", "fat"))
	}
	return append(p, unread.Bytes())
}()

// abuse sends every payload once, several connections at a time.
func abuse(t *testing.T, addr string) {
	t.Helper()
	done := make(chan error, len(payloads))
	for _, p := range payloads {
		go func() {
			nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				done <- err
				return
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(300 * time.Millisecond))
			_, _ = nc.Write(p)
			// Read what comes (an error reply, a push, nothing while
			// blocked) until the server hangs up or the deadline passes.
			_, _ = io.Copy(io.Discard, nc)
			done <- nil
		}()
	}
	for range payloads {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// runtimeStats returns basalt's live heap after a GC and its goroutine
// count, from its pprof endpoint.
func runtimeStats(t *testing.T, pprofAddr string) (heap, goroutines int64) {
	t.Helper()
	get := func(path string, re *regexp.Regexp) int64 {
		resp, err := http.Get("http://" + pprofAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no %s in the answer", path, re)
		}
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return n
	}
	heap = get("/debug/pprof/heap?gc=1&debug=1", regexp.MustCompile(`# HeapAlloc = (\d+)`))
	goroutines = get("/debug/pprof/goroutine?debug=1", regexp.MustCompile(`goroutine profile: total (\d+)`))
	return heap, goroutines
}

// waitClients waits until INFO clients shows field at value (within 10 s).
func waitClients(t *testing.T, c *testutil.Conn, field string, value int) {
	t.Helper()
	want := field + ":" + strconv.Itoa(value) + "\r\n"
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := c.Do("INFO", "clients").Str
		if strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %s:%d in INFO clients:\n%s", field, value, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAbuseLeavesNoTrace(t *testing.T) {
	pprofAddr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	b := testutil.StartBasalt(t, "", "--pprof", pprofAddr)
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "canary", "alive")
	c.Do("RPUSH", "list", "a", "b", "c")
	c.Do("HSET", "hash", "f", "v")
	c.Do("SET", "fat", strings.Repeat("f", 64<<10))
	digest := c.Do("DEBUG", "DIGEST").Str

	const rounds = 6
	var heaps, goroutines []int64
	for round := range rounds {
		abuse(t, b.Addr)
		if r := c.Do("PING"); r.Str != "PONG" {
			t.Fatalf("round %d: PING answered %v", round, r)
		}
		waitClients(t, c, "connected_clients", 1)
		h, g := runtimeStats(t, pprofAddr)
		heaps, goroutines = append(heaps, h), append(goroutines, g)
	}
	t.Logf("live heap per round %v, goroutines %v, peak RSS %d MB", heaps, goroutines, peakRSS(t, b.Pid())>>20)

	if got := c.Do("DEBUG", "DIGEST").Str; got != digest {
		t.Errorf("the data changed: digest %s, was %s", got, digest)
	}
	if r := c.Do("GET", "canary"); r.Str != "alive" {
		t.Errorf("GET canary = %v", r)
	}
	for _, k := range []string{"queued", "k"} {
		if r := c.Do("EXISTS", k); r.Int != 0 {
			t.Errorf("key %s written by an aborted or refused command", k)
		}
	}
	// The first round warms caches and pools up; after it, a leak grows
	// with every round. 2 MB is far below what one round sends (about
	// 30 MB of arguments and 1.3 GB of replies asked for).
	if grown := heaps[rounds-1] - heaps[1]; grown > 2<<20 {
		t.Errorf("live heap grew by %d bytes from round 2 to round %d: %v", grown, rounds, heaps)
	}
	if goroutines[rounds-1] > goroutines[1]+2 {
		t.Errorf("goroutines grew from %d to %d: %v", goroutines[1], goroutines[rounds-1], goroutines)
	}
	// A declared length is not an allocation: the half-sent 400 MB bulk
	// must cost what was sent, not what was announced.
	if peak := peakRSS(t, b.Pid()); peak > 256<<20 {
		t.Errorf("peak RSS %d MB", peak>>20)
	}
}

// peakRSS returns a process's peak resident set size (Linux).
func peakRSS(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmHWM") }

// procStatus returns a size in bytes from /proc/pid/status: VmRSS is the
// resident set, VmHWM its peak.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(field + `:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// INFO's blocked_clients counts the clients waiting in BLPOP and its kin,
// and drops back when they are served or hang up.
func TestBlockedClientsCount(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	waitClients(t, c, "blocked_clients", 0)
	served := testutil.Dial(t, b.Addr)
	served.Send(testutil.Command("BLPOP", "q", "0"))
	gone := testutil.Dial(t, b.Addr)
	gone.Send(testutil.Command("BZPOPMIN", "z", "0"))
	waitClients(t, c, "blocked_clients", 2)
	c.Do("RPUSH", "q", "x")
	if r := served.Read(); len(r.Elems) != 2 || r.Elems[1].Str != "x" {
		t.Fatalf("BLPOP answered %v", r)
	}
	waitClients(t, c, "blocked_clients", 1)
	gone.Close()
	waitClients(t, c, "blocked_clients", 0)
}
