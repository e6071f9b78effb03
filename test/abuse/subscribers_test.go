package abuse

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// A thousand subscribers that never read, and a publisher of 64 KB
// messages: each could hold its whole client-output-buffer-limit (32 MB,
// 32 GB in all). With maxmemory-clients 64mb the biggest are evicted as
// Redis evicts them, the server's RSS stays bounded, a second client's
// PING keeps answering, and INFO counts every subscriber it closed.
func TestSlowSubscribers(t *testing.T) {
	const (
		subscribers = 1000
		message     = 64 << 10
		// 64 MB of queues, 60 MB for the idle connections, and what Go's
		// collector lets pile up between collections (peaks seen here:
		// 470-520 MB); without eviction RSS passes it within 15 publishes.
		maxRSS = 800 * mb
	)
	b := testutil.StartBasalt(t, "", "--maxmemory-clients", "64mb")
	var subs []net.Conn
	for i := range subscribers {
		nc, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
		defer nc.Close()
		nc.(*net.TCPConn).SetReadBuffer(4 << 10) // what the kernel holds for it stays small
		fmt.Fprintf(nc, "*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")
		subs = append(subs, nc)
	}
	for i, nc := range subs { // each reads its confirmation, then never again
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, err := bufio.NewReader(nc).ReadString('\n'); err != nil || line != "*3\r\n" {
			t.Fatalf("subscriber %d: %q %v", i, line, err)
		}
	}
	c := testutil.Dial(t, b.Addr)
	if r := c.Do("CLIENT", "NO-EVICT", "on"); r.Str != "OK" { // the publisher is never chosen
		t.Fatalf("CLIENT NO-EVICT on: %v", r)
	}
	idle := procStatus(t, b.Pid(), "VmRSS")
	stopPinger := startPinger(t, b.Addr)
	payload := strings.Repeat("m", message)
	receivers, publishes := int64(subscribers), 0
	deadline := time.Now().Add(15 * time.Second)
	// Until a tenth are left: fewer could each reach the 32 MB
	// client-output-buffer-limit within 64 MB, and be closed for that.
	for receivers > subscribers/10 && publishes < 2000 && time.Now().Before(deadline) {
		r := c.Do("PUBLISH", "ch", payload)
		if r.IsError() {
			t.Fatalf("PUBLISH: %v", r)
		}
		receivers, publishes = r.Int, publishes+1
		if rss := procStatus(t, b.Pid(), "VmRSS"); rss > maxRSS {
			t.Fatalf("RSS %d MB after %d publishes to %d receivers (bound %d MB)", rss/mb, publishes, receivers, maxRSS/mb)
		}
	}
	stall := stopPinger()
	// The last evictions close their sockets after PUBLISH answered: the
	// count of subscribers left is read once they are gone.
	var evicted, left int64
	for wait := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		evicted = infoField(t, c, "stats", "evicted_clients")
		left = c.Do("PUBSUB", "NUMSUB", "ch").Elems[1].Int
		if evicted+left == subscribers || time.Now().After(wait) {
			break
		}
	}
	peak := peakRSS(t, b.Pid())
	t.Logf("%d publishes of %d KB; %d subscribers left, %d evicted; RSS %d MB before, peak %d MB; PING waited up to %v",
		publishes, message>>10, left, evicted, idle/mb, peak/mb, stall)
	if left > subscribers/10 || evicted+left != subscribers {
		t.Errorf("evicted_clients %d and %d subscribers left, want %d in all and at most %d left", evicted, left, subscribers, subscribers/10)
	}
	if peak > maxRSS {
		t.Errorf("peak RSS %d MB (bound %d MB)", peak/mb, maxRSS/mb)
	}
	if stall > 2*time.Second {
		t.Errorf("a second client's PING waited %v", stall)
	}
	if used := infoField(t, c, "memory", "mem_clients_normal"); used > 64*mb {
		t.Errorf("mem_clients_normal %d MB after the evictions (limit 64 MB)", used/mb)
	}
}

// infoField reads one integer field of an INFO section.
func infoField(t *testing.T, c *testutil.Conn, section, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(c.Do("INFO", section).Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in INFO %s", field, section)
	return 0
}

// maxmemory-clients as a percent of maxmemory (1% of 100mb: 1 MB): a
// client sending a 4 MB argument slowly is evicted once its buffer passes
// the limit, one with CLIENT NO-EVICT on is not (CLIENT LIST shows it with
// flag e and what it holds in tot-mem), and the server answers throughout.
// As in Redis, NO-EVICT clients count in the sum: while one holds more
// than the limit, every other client with a buffer in use is evicted.
func TestClientEvictionQueryBuffer(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--maxmemory", "100mb", "--maxmemory-clients", "1%")
	c := testutil.Dial(t, b.Addr)
	if r := c.Do("CONFIG", "GET", "maxmemory-clients"); len(r.Elems) != 2 || r.Elems[1].Str != "1%" {
		t.Fatalf("CONFIG GET maxmemory-clients: %v", r)
	}
	c.Do("CLIENT", "NO-EVICT", "on") // the kept client alone is over the limit: every other one would go
	sendHalf := func(conn *testutil.Conn) {
		conn.Send([]byte(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s", 4*mb, strings.Repeat("x", 2*mb))))
	}
	kept := testutil.Dial(t, b.Addr)
	if r := kept.Do("CLIENT", "NO-EVICT", "on"); r.Str != "OK" {
		t.Fatalf("CLIENT NO-EVICT on: %v", r)
	}
	sendHalf(kept)
	evicted := testutil.Dial(t, b.Addr)
	sendHalf(evicted)
	if _, err := evicted.ReadErr(); err == nil {
		t.Fatalf("a client holding 2 MB of a 4 MB argument was not evicted (limit 1 MB)")
	}
	if n := infoField(t, c, "stats", "evicted_clients"); n != 1 {
		t.Errorf("evicted_clients %d, want 1", n)
	}
	var line string
	for _, l := range strings.Split(c.Do("CLIENT", "LIST").Str, "\n") {
		if strings.Contains(l, "flags=e") {
			line = l
		}
	}
	if !strings.Contains(line, "tot-mem=") || strings.Contains(line, "tot-mem=0 ") {
		t.Errorf("CLIENT LIST has no client with flag e holding memory: %q", line)
	}
	kept.Send([]byte(strings.Repeat("x", 2*mb) + "\r\n"))
	if r := kept.Read(); r.Str != "OK" {
		t.Errorf("the NO-EVICT client's SET: %.100v", r)
	}
	if r := c.Do("STRLEN", "k"); r.Int != 4*mb {
		t.Errorf("STRLEN k: %v", r)
	}
}
