package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// logs collects a transport's log lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logs) wait(t *testing.T, part string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		all := strings.Join(l.lines, "\n")
		l.mu.Unlock()
		if strings.Contains(all, part) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", part, all)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAuthentication: peers that share the secret talk; a peer with
// another secret, a stranger claiming a member's ID, a non-member and a
// node of another cluster are refused, and a node that joins learns the
// cluster ID from an authenticated member.
func TestAuthentication(t *testing.T) {
	checkGoroutines(t)
	secret := []byte("0123456789abcdef")
	members := func(id uint64) bool { return id <= 3 }
	var in2 inbox
	var log2 logs
	var learnt atomic.Uint64
	a := start(t, &Transport{ID: 1, Secret: secret, Cluster: 7, Member: members}, func(raftpb.Message) {})
	b := start(t, &Transport{ID: 2, Secret: secret, Member: members, Logf: log2.logf,
		LearnCluster: func(id uint64) { learnt.Store(id) }}, in2.add)
	a.AddPeer(2, b.ListenAddr())
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	in2.wait(t, 1)
	if b.ClusterID() != 7 || learnt.Load() != 7 {
		t.Fatalf("node 2 has cluster %d, learnt %d; want 7", b.ClusterID(), learnt.Load())
	}
	if got := b.Advertised(1); got != "" {
		t.Fatalf("advertised %q", got)
	}

	// Another secret: the listener sees the dialer fail its MAC and
	// closes the connection without one of its own.
	c := start(t, &Transport{ID: 3, Secret: []byte("another secret!!")}, func(raftpb.Message) {})
	c.AddPeer(2, b.ListenAddr())
	c.Send([]raftpb.Message{msg(3, 2, 0)})
	log2.wait(t, "(claims node 3): authentication failed: the peer does not have this node's cluster secret")
	b.lastRefusal.Store(0) // strangers' refusals are logged once a second
	conn, err := net.Dial("tcp", b.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := (&Transport{ID: 1, Secret: []byte("guess")}).clientHandshake(conn, magic, 2); err == nil || !strings.Contains(err.Error(), "the peer refused the handshake") {
		t.Fatalf("handshake with a wrong secret: %v", err)
	}
	log2.wait(t, "(claims node 1): authentication failed: the peer does not have this node's cluster secret")

	// A member's secret but not a member; another cluster.
	expectClosed(t, dialAs(t, b, 9, secret))
	log2.wait(t, "(claims node 9): the node is not a member of this node's group")
	d := start(t, &Transport{ID: 3, Secret: secret, Cluster: 8}, func(raftpb.Message) {})
	d.AddPeer(2, b.ListenAddr())
	d.Send([]raftpb.Message{msg(3, 2, 0)})
	log2.wait(t, "the peer belongs to another cluster: the peer is in cluster 0000000000000008, this node in cluster 0000000000000007")

	// On an authenticated connection, a message whose From is another
	// node is dropped; the connection's own are taken.
	conn = dialAs(t, b, 1, secret)
	for _, m := range []raftpb.Message{msg(3, 2, 1), msg(1, 2, 2)} {
		frame := binary.BigEndian.AppendUint32(nil, uint32(m.Size()))
		data, _ := m.Marshal()
		conn.Write(append(frame, data...))
	}
	in2.wait(t, 2)
	time.Sleep(50 * time.Millisecond)
	if n := in2.len(); n != 2 || in2.msgs[1].Index != 2 {
		t.Fatalf("received %d messages: %+v", n, in2.msgs)
	}
	log2.wait(t, "dropped MsgApp from 3 to 2 on node 1's connection")
	if s := c.Stats(); s.Received != 0 {
		t.Fatalf("node 3 with another secret: %+v", s)
	}
}

// TestConnectionFlood: a flood of connections that never finish their
// handshake, and a member's many connections, hold a bounded number of
// descriptors, and members still get through.
func TestConnectionFlood(t *testing.T) {
	checkGoroutines(t)
	secret := []byte("0123456789abcdef")
	var in inbox
	var log logs
	b := start(t, &Transport{ID: 2, Secret: secret, Logf: log.logf}, in.add)
	// Strangers' failed handshakes are logged once a second at most.
	for range 50 {
		expectClosed(t, rawConn(t, b, hello{kind: magic, from: 1, to: 2}.bytes()+strings.Repeat("?", macSize)))
	}
	log.mu.Lock()
	if len(log.lines) > 2 || len(log.lines) == 0 || !strings.Contains(log.lines[0], "authentication failed") {
		t.Errorf("50 failed handshakes logged %d lines: %q", len(log.lines), log.lines)
	}
	log.mu.Unlock()
	for i := 0; i < 3*maxPending; i++ {
		c, err := net.Dial("tcp", b.ListenAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(magic)) // and then nothing
	}
	for i := 0; i < 3*perPeerConns; i++ {
		dialAs(t, b, 1, secret)
	}
	count := func() (pending, peer int) {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, in := range b.inbound {
			if in.from == 0 {
				pending++
			} else {
				peer++
			}
		}
		return
	}
	if pending, peer := count(); pending > maxPending || peer > perPeerConns {
		t.Fatalf("%d connections in their handshake, %d from node 1", pending, peer)
	}
	a := start(t, &Transport{ID: 1, Secret: secret}, func(raftpb.Message) {})
	a.AddPeer(2, b.ListenAddr())
	a.Send([]raftpb.Message{msg(1, 2, 0)})
	in.wait(t, 1)
	// Those left in their handshake are closed after handshakeTimeout.
	deadline := time.Now().Add(handshakeTimeout + 3*time.Second)
	for pending, _ := count(); pending > 0; pending, _ = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still in their handshake", pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FuzzInbound feeds what a stranger may send before authenticating (a
// hello) and what a member may send after (frames) to their parsers: they
// must return, not panic, and never allocate past the frame limit.
func FuzzInbound(f *testing.F) {
	f.Add(hello{kind: magic, from: 1, to: 2, cluster: 3, addr: "127.0.0.1:1", advertise: "x"}.marshal())
	f.Add([]byte(snapMagic + "\x00\x00"))
	m := msg(1, 2, 0)
	data, _ := m.Marshal()
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(data))), data...))
	f.Add(binary.BigEndian.AppendUint32(nil, 1<<31))
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, raw, err := readHello(bytes.NewReader(b)); err == nil {
			if !bytes.Equal(h.marshal(), raw) {
				t.Fatalf("hello %+v marshals to %q, read from %q", h, h.marshal(), raw)
			}
		}
		r := bytes.NewReader(b)
		var buf []byte
		for {
			var err error
			buf, err = readFrame(r, buf, 1<<16)
			if err != nil {
				break
			}
			if cap(buf) > 2<<16+1<<20 {
				t.Fatalf("a frame grew its buffer to %d", cap(buf))
			}
			var m raftpb.Message
			_ = m.Unmarshal(buf)
		}
	})
}

// TestNoMACForStrangers: whoever reaches the port gets the listener's
// cluster ID and nonce, and nothing computed from the secret, however it
// answers.
func TestNoMACForStrangers(t *testing.T) {
	checkGoroutines(t)
	b := start(t, &Transport{ID: 2, Secret: []byte("0123456789abcdef")}, func(raftpb.Message) {})
	c := rawConn(t, b, hello{kind: magic, from: 1, to: 2}.bytes())
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	got, _ := io.ReadAll(c)
	if len(got) != 8+nonceSize {
		t.Fatalf("a stranger got %d bytes before proving anything, want %d", len(got), 8+nonceSize)
	}
	c = rawConn(t, b, hello{kind: magic, from: 1, to: 2}.bytes()+strings.Repeat("?", macSize))
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if got, err := io.ReadAll(c); err != nil || len(got) != 8+nonceSize {
		t.Fatalf("after a wrong proof: %d bytes, %v", len(got), err)
	}
}
