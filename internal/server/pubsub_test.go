package server

import (
	"io"
	"net"
	"testing"
	"time"
)

// newTestSub returns a subscriber writing to one end of a pipe, and the
// other end.
func newTestSub(t *testing.T) (*subscriber, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &Client{srv: &Server{}, nc: a}
	s := &subscriber{c: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
	return s, b
}

func TestSubscriberHardLimit(t *testing.T) {
	s, peer := newTestSub(t)
	lim := BufferLimit{Hard: 100}
	s.enqueue(make([]byte, 60), lim)
	if s.dead {
		t.Fatal("dead under the hard limit")
	}
	s.enqueue(make([]byte, 60), lim) // 120 >= 100
	if !s.dead || !s.c.killed.Load() || s.buf != nil {
		t.Fatalf("not disconnected over the hard limit: dead %v killed %v", s.dead, s.c.killed.Load())
	}
	s.enqueue([]byte("x"), lim) // dropped
	if s.buf != nil {
		t.Fatal("a dead subscriber queues")
	}
	peer.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := peer.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection not closed: %v", err)
	}
}

func TestSubscriberSoftLimit(t *testing.T) {
	s, _ := newTestSub(t)
	lim := BufferLimit{Soft: 100, Seconds: 0}
	s.enqueue(make([]byte, 150), lim) // over soft: the clock starts
	if s.dead || s.softSince.IsZero() {
		t.Fatalf("dead %v, soft since %v", s.dead, s.softSince)
	}
	time.Sleep(2 * time.Millisecond)
	s.enqueue([]byte("x"), lim) // still over, for longer than 0 s
	if !s.dead {
		t.Fatal("not disconnected over the soft limit")
	}

	// Going back under the soft limit resets the clock.
	s, _ = newTestSub(t)
	lim = BufferLimit{Soft: 100, Seconds: 60}
	s.enqueue(make([]byte, 150), lim)
	s.buf = s.buf[:0] // as if written
	s.enqueue([]byte("x"), lim)
	if !s.softSince.IsZero() {
		t.Fatal("soft limit clock not reset under the limit")
	}
}

// The queue reaches the socket in order, whoever writes it; a held queue
// (EXEC in progress) is not written.
func TestSubscriberDrainOrder(t *testing.T) {
	s, peer := newTestSub(t)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	go s.writeLoop()
	s.held, s.heldAt = true, 0
	s.enqueue([]byte("b"), BufferLimit{})
	if !s.drain() {
		t.Fatal("drain failed")
	}
	s.mu.Lock()
	if string(s.buf) != "b" {
		t.Fatalf("held queue written: %q left", s.buf)
	}
	s.buf = append([]byte("a"), s.buf...) // what endExec does
	s.held = false
	s.mu.Unlock()
	for _, m := range []string{"c", "d", "e"} {
		s.enqueue([]byte(m), BufferLimit{})
	}
	if !s.drain() {
		t.Fatal("drain failed")
	}
	close(s.done)
	s.c.nc.Close()
	if b := <-got; string(b) != "abcde" {
		t.Fatalf("socket got %q", b)
	}
}
