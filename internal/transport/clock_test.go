package transport

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// TestClockProbe: a probe takes the peer's clock minus ours as the middle
// of the round trip, and refuses an answer to another probe.
func TestClockProbe(t *testing.T) {
	for _, peerAhead := range []time.Duration{0, time.Hour, -90 * time.Minute} {
		c, s := net.Pipe()
		go func() {
			var b [16]byte
			if _, err := io.ReadFull(s, b[:8]); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
			t2 := int64(binary.BigEndian.Uint64(b[:])) + int64(10*time.Millisecond+peerAhead)
			binary.BigEndian.PutUint64(b[8:], uint64(t2))
			s.Write(b[:])
		}()
		o, err := probe(c)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The peer read its clock 10 ms after ours, 20 ms into a round trip
		// of a little over 20 ms: the estimate is off by at most RTT/2.
		if got := o.Offset - peerAhead; got.Abs() > o.RTT/2 || o.RTT < 20*time.Millisecond {
			t.Fatalf("peer %s ahead: measured %s (rtt %s)", peerAhead, o.Offset, o.RTT)
		}
	}
	c, s := net.Pipe()
	defer c.Close()
	go func() {
		var b [16]byte
		io.ReadFull(s, b[:8])
		s.Write(make([]byte, 16)) // echoes a t1 of 0
	}()
	if _, err := probe(c); err == nil {
		t.Fatal("an answer to another probe was taken")
	}
}

// TestClockOffsets: nodes measure each other's clocks (here the same
// clock), and a node's clock agrees with a majority only once enough of
// its peers are measured to agree.
func TestClockOffsets(t *testing.T) {
	checkGoroutines(t)
	drop := func(raftpb.Message) {}
	a := start(t, &Transport{ID: 1}, drop)
	b := start(t, &Transport{ID: 2}, drop)
	a.AddPeer(2, b.ListenAddr())
	if err := a.CheckClock(time.Second); err == nil {
		// Two nodes: node 1 alone is not a majority until it measured node 2.
		if _, ok := a.ClockOffsets()[2]; !ok {
			t.Fatal("a node agreed with a majority before measuring its peer")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.CheckClock(time.Second) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("never measured: %v", a.CheckClock(time.Second))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if o := a.ClockOffsets()[2]; o.Offset.Abs() > 50*time.Millisecond || o.RTT <= 0 {
		t.Fatalf("one clock measured %s apart (rtt %s)", o.Offset, o.RTT)
	}
	// A third node that cannot be reached: 2 of 3 still agree.
	a.AddPeer(3, freeAddr(t))
	if err := a.CheckClock(time.Second); err != nil {
		t.Fatal(err)
	}
	// A fourth: 2 of 4 is no majority, and the reason says so.
	a.AddPeer(4, freeAddr(t))
	err := a.CheckClock(time.Second)
	if err == nil || !strings.Contains(err.Error(), "2 of the 4 nodes") || !strings.Contains(err.Error(), "2 not measured lately") {
		t.Fatalf("CheckClock = %v", err)
	}
	// A removed peer is forgotten.
	a.RemovePeer(3)
	a.RemovePeer(4)
	if _, ok := a.ClockOffsets()[3]; ok {
		t.Fatal("a removed peer's offset is still reported")
	}
}
