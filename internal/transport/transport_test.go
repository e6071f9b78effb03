package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// checkGoroutines fails the test if goroutines started during it are still
// running shortly after it ends.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// inbox collects received messages.
type inbox struct {
	mu   sync.Mutex
	msgs []raftpb.Message
}

func (b *inbox) add(m raftpb.Message) {
	b.mu.Lock()
	b.msgs = append(b.msgs, m)
	b.mu.Unlock()
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.msgs)
}

func (b *inbox) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("received %d messages, want %d", b.len(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func start(t *testing.T, tr *Transport, h func(raftpb.Message)) *Transport {
	t.Helper()
	if tr.Addr == "" {
		tr.Addr = "127.0.0.1:0"
	}
	if err := tr.Start(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Stop)
	return tr
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func msg(from, to uint64, i int) raftpb.Message {
	return raftpb.Message{Type: raftpb.MsgApp, From: from, To: to, Term: 3, Index: uint64(i),
		Entries: []raftpb.Entry{{Term: 3, Index: uint64(i + 1), Data: []byte(fmt.Sprint("payload ", i))}}}
}

func TestSendReceive(t *testing.T) {
	checkGoroutines(t)
	var in1, in2 inbox
	a := start(t, &Transport{ID: 1}, in1.add)
	b := start(t, &Transport{ID: 2}, in2.add)
	a.AddPeer(2, b.ListenAddr())
	b.AddPeer(1, a.ListenAddr())
	const n = 1000
	for i := 0; i < n; i += 10 {
		var ab, ba []raftpb.Message
		for j := i; j < i+10; j++ {
			ab = append(ab, msg(1, 2, j))
			ba = append(ba, msg(2, 1, j))
		}
		a.Send(ab)
		b.Send(ba)
	}
	in1.wait(t, n)
	in2.wait(t, n)
	// One connection per direction keeps a peer's messages in order.
	for i, m := range in2.msgs {
		want := msg(1, 2, i)
		if m.From != 1 || m.To != 2 || m.Index != want.Index || len(m.Entries) != 1 || !bytes.Equal(m.Entries[0].Data, want.Entries[0].Data) {
			t.Fatalf("message %d: %+v, want %+v", i, m, want)
		}
	}
	if s := a.Stats(); s.Sent != n || s.Dropped != 0 || s.Received != n {
		t.Fatalf("stats %+v", s)
	}
	a.Stop()
	b.Stop()
}

func TestUnreachableAndReconnect(t *testing.T) {
	checkGoroutines(t)
	unreach := make(chan uint64, 100)
	a := start(t, &Transport{ID: 1, Unreachable: func(id uint64) {
		select {
		case unreach <- id:
		default:
		}
	}}, func(raftpb.Message) {})
	addr := freeAddr(t)
	a.AddPeer(2, addr)
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	select {
	case id := <-unreach:
		if id != 2 {
			t.Fatalf("unreachable %d", id)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no unreachable report")
	}
	// Messages to an unknown peer are dropped and reported too.
	a.Send([]raftpb.Message{msg(1, 9, 0)})
	if id := <-unreach; id != 2 && id != 9 {
		t.Fatalf("unreachable %d", id)
	}

	// The peer comes up: messages get through after a redial.
	var in inbox
	b := start(t, &Transport{ID: 2, Addr: addr}, in.add)
	deadline := time.Now().Add(5 * time.Second)
	for in.len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no message after the peer came up")
		}
		a.Send([]raftpb.Message{msg(1, 2, 1)})
		time.Sleep(20 * time.Millisecond)
	}
	// It goes down and up again.
	b.Stop()
	var in2 inbox
	start(t, &Transport{ID: 2, Addr: addr}, in2.add)
	deadline = time.Now().Add(5 * time.Second)
	for in2.len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no message after the peer restarted")
		}
		a.Send([]raftpb.Message{msg(1, 2, 2)})
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPartition(t *testing.T) {
	checkGoroutines(t)
	var in1, in2 inbox
	a := start(t, &Transport{ID: 1}, in1.add)
	b := start(t, &Transport{ID: 2}, in2.add)
	a.AddPeer(2, b.ListenAddr())
	b.AddPeer(1, a.ListenAddr())
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	b.Send([]raftpb.Message{msg(2, 1, 0)})
	in1.wait(t, 1)
	in2.wait(t, 1)

	a.Partition(2) // at a: both directions
	for i := range 20 {
		a.Send([]raftpb.Message{msg(1, 2, i)})
		b.Send([]raftpb.Message{msg(2, 1, i)})
	}
	time.Sleep(200 * time.Millisecond)
	if in1.len() != 1 || in2.len() != 1 {
		t.Fatalf("partitioned: received %d and %d", in1.len(), in2.len())
	}

	a.SetFault(2, false, true) // only a's messages to b are lost
	b.Send([]raftpb.Message{msg(2, 1, 0)})
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	in1.wait(t, 2)
	time.Sleep(100 * time.Millisecond)
	if in2.len() != 1 {
		t.Fatal("a one-way fault let a message out")
	}

	a.Heal(2)
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	in2.wait(t, 2)
}

func TestMaxMessageSize(t *testing.T) {
	checkGoroutines(t)
	var in inbox
	a := start(t, &Transport{ID: 1, MaxMessageSize: 1000}, func(raftpb.Message) {})
	b := start(t, &Transport{ID: 2, MaxMessageSize: 1000}, in.add)
	a.AddPeer(2, b.ListenAddr())
	big := msg(1, 2, 0)
	big.Entries[0].Data = make([]byte, 2000)
	a.Send([]raftpb.Message{big, msg(1, 2, 1)})
	in.wait(t, 1)
	if s := a.Stats(); s.Dropped != 1 {
		t.Fatalf("stats %+v", s)
	}

	// A receiver closes a connection that announces an oversized frame,
	// and one that is not from a raft transport or meant for another node.
	for _, c := range []net.Conn{dialAs(t, b, 1, nil), rawConn(t, b, "GET / HTTP/1.1\r\n\r\n\r\n"), rawConn(t, b, hello{kind: magic, from: 1, to: 3}.bytes())} {
		c.Write(binary.BigEndian.AppendUint32(nil, 1<<20))
		expectClosed(t, c)
	}
}

// dialAs opens a connection to tr that authenticates as node from with
// secret, as an attacker that knows the secret (or a test) would.
func dialAs(t *testing.T, tr *Transport, from uint64, secret []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", tr.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := (&Transport{ID: from, Secret: secret}).clientHandshake(c, magic, tr.ID); err != nil {
		t.Fatalf("handshake as %d: %v", from, err)
	}
	return c
}

// rawConn opens a connection to tr and writes b on it.
func rawConn(t *testing.T, tr *Transport, b string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", tr.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Write([]byte(b))
	return c
}

func (h hello) bytes() string { return string(h.marshal()) }

// expectClosed fails unless the other end closes c within a few seconds
// (after sending whatever it sends).
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(handshakeTimeout + 2*time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("read %v, want EOF", err)
	}
}

// TestSlowPeer checks Send never blocks on a peer that stops reading: the
// queue fills, messages are dropped and the peer is reported.
func TestSlowPeer(t *testing.T) {
	checkGoroutines(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // and never read
		}
	}()
	var mu sync.Mutex
	reports := 0
	a := start(t, &Transport{ID: 1, QueueSize: 8, Unreachable: func(uint64) {
		mu.Lock()
		reports++
		mu.Unlock()
	}}, func(raftpb.Message) {})
	a.AddPeer(2, ln.Addr().String())
	m := msg(1, 2, 0)
	m.Entries[0].Data = make([]byte, 1<<20)
	began := time.Now()
	for range 200 {
		a.Send([]raftpb.Message{m})
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("Send blocked for %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if reports == 0 || a.Stats().Dropped == 0 {
		t.Fatalf("%d reports, stats %+v", reports, a.Stats())
	}
	// Stop must not wait for the blocked write.
	stopped := make(chan struct{})
	go func() { a.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Stop hangs on a peer that does not read")
	}
	(<-accepted).Close()
}

func TestRemovePeer(t *testing.T) {
	checkGoroutines(t)
	var in inbox
	a := start(t, &Transport{ID: 1}, func(raftpb.Message) {})
	b := start(t, &Transport{ID: 2}, in.add)
	a.AddPeer(2, b.ListenAddr())
	a.AddPeer(2, b.ListenAddr()) // no-op
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	in.wait(t, 1)
	a.RemovePeer(2)
	a.Send([]raftpb.Message{msg(1, 2, 1)})
	time.Sleep(100 * time.Millisecond)
	if in.len() != 1 {
		t.Fatal("message sent to a removed peer")
	}
	// Re-adding at a new address (the same node moved) works.
	a.AddPeer(2, "127.0.0.1:1")
	a.AddPeer(2, b.ListenAddr())
	a.Send([]raftpb.Message{msg(1, 2, 2)})
	in.wait(t, 2)
}
