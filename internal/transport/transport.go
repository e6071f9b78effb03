// Package transport carries Raft messages (raftpb.Message) between the
// nodes of a basalt cluster over TCP.
//
// etcd's raft library leaves the network to the application: a Ready lists
// messages addressed to peers by their uint64 IDs, and whatever arrives from
// a peer is fed back with RawNode.Step. A shard's Ready loop will use a
// Transport like this:
//
//	tr := &transport.Transport{ID: 1, Addr: "127.0.0.1:17001", Unreachable: report}
//	tr.Start(func(m raftpb.Message) { recvc <- m }) // the loop calls rn.Step(m)
//	tr.AddPeer(2, "127.0.0.1:17002")
//	...
//	st.SaveReady(rd)        // persist first, as raft requires
//	tr.Send(rd.Messages)    // never blocks
//
// and calls rn.ReportUnreachable(id) for the IDs passed to report.
//
// Raft tolerates lost, duplicated and reordered messages, so the transport
// is deliberately simple and never blocks the Ready loop: each peer has one
// outgoing TCP connection fed by one goroutine through a bounded queue.
// When the queue is full or the peer cannot be reached, messages are dropped
// and the peer is reported unreachable (raft then slows down to probing it).
// Lost connections are redialed with exponential backoff.
//
// Wire format: a connection starts with a header (magic, sender ID,
// receiver ID, then the sender's listen address and its Advertise string,
// each after a 2-byte length; the receiver closes connections meant for
// another node, and learns the address of a sender it has no peer entry
// for: a member added at run time knows no one until they dial it), then
// carries frames of a 4-byte big-endian length and msg.Marshal().
// Frames over MaxMessageSize are refused by both ends. A MsgSnap travels on
// a connection of its own, followed by the snapshot's data in chunks (see
// snapshot.go).
//
// For tests, Partition and Heal drop all traffic to and from one peer at
// this node, so chaos tests can cut a node off without network namespaces.
package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

const (
	// DefaultMaxMessageSize bounds one message when MaxMessageSize is 0.
	DefaultMaxMessageSize = 64 << 20
	// DefaultQueueSize is the per-peer queue length when QueueSize is 0.
	DefaultQueueSize = 4096

	magic        = "bRt2"
	headerSize   = len(magic) + 16 + 2
	dialTimeout  = time.Second
	writeTimeout = 5 * time.Second
	minBackoff   = 20 * time.Millisecond
	maxBackoff   = time.Second
)

// Stats counts messages; all fields are cumulative.
type Stats struct {
	Sent     uint64 // written to a connection
	Dropped  uint64 // dropped on the way (queue full, unreachable, too large, partitioned); a lower bound after a failed write
	Received uint64 // passed to the handler
}

// Transport sends and receives Raft messages for the node ID. Set the
// exported fields, then call Start.
type Transport struct {
	ID   uint64
	Addr string // listen address, e.g. "127.0.0.1:17001"; port 0 picks one (see ListenAddr)

	MaxMessageSize int // 0 means DefaultMaxMessageSize
	QueueSize      int // 0 means DefaultQueueSize

	// Unreachable, if set, is called with a peer's ID when messages to it
	// are dropped because it cannot be reached or its queue is full. It is
	// called from the transport's goroutines and must not block.
	Unreachable func(id uint64)

	// Logf, if set, receives connection errors worth a line in a log.
	Logf func(format string, args ...any)

	// Advertise is sent to every peer this node dials, and a peer's is
	// kept when it dials us (see Advertised): basalt puts the client
	// address there, so a follower knows where to forward commands.
	Advertise string

	// Snapshots (see snapshot.go). SnapshotSource writes the data of the
	// snapshot a MsgSnap names to w; SnapshotSink reads it from r, to its
	// end, and stores it durably before the MsgSnap goes to the handler;
	// SnapshotDone reports whether a peer stored a snapshot sent to it
	// (the node tells raft with ReportSnapshot). They are called from the
	// transport's goroutines; SnapshotDone may block until the node takes
	// the report. A nil SnapshotSource sends no data, a nil SnapshotSink
	// discards it.
	SnapshotSource func(m raftpb.Message, w io.Writer) error
	SnapshotSink   func(m raftpb.Message, r io.Reader) error
	SnapshotDone   func(to uint64, ok bool)

	advertised sync.Map // peer ID -> string

	handler func(raftpb.Message)
	ln      net.Listener
	wg      sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	peers   map[uint64]*peer
	inbound map[net.Conn]struct{}

	faults atomic.Pointer[map[uint64]fault] // copy on write

	sent, dropped, received atomic.Uint64
}

// fault says which directions of a peer's traffic are dropped.
type fault struct{ in, out bool }

// Start listens on Addr and calls handler for every message received, from
// one goroutine per incoming connection: handler must be safe for
// concurrent use and should not block for long (typically it sends on a
// channel the Ready loop reads).
func (t *Transport) Start(handler func(raftpb.Message)) error {
	if t.ID == 0 {
		return errors.New("transport: node ID must not be 0")
	}
	if t.MaxMessageSize <= 0 {
		t.MaxMessageSize = DefaultMaxMessageSize
	}
	if t.QueueSize <= 0 {
		t.QueueSize = DefaultQueueSize
	}
	ln, err := net.Listen("tcp", t.Addr)
	if err != nil {
		return err
	}
	t.ln, t.handler = ln, handler
	t.mu.Lock()
	t.peers = make(map[uint64]*peer)
	t.inbound = make(map[net.Conn]struct{})
	t.mu.Unlock()
	t.wg.Add(1)
	go t.accept()
	return nil
}

// Advertised returns what peer id advertised when it last dialed this
// node ("" if it has not).
func (t *Transport) Advertised(id uint64) string {
	v, _ := t.advertised.Load(id)
	s, _ := v.(string)
	return s
}

// ListenAddr is the address Start listens on (after Start only).
func (t *Transport) ListenAddr() string { return t.ln.Addr().String() }

// Stop closes the listener and every connection and waits for all of the
// transport's goroutines to end. Sends after Stop are dropped.
func (t *Transport) Stop() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.stopped = true
	t.ln.Close()
	for c := range t.inbound {
		c.Close()
	}
	for id, p := range t.peers {
		p.stop()
		delete(t.peers, id)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// Stats returns the message counters.
func (t *Transport) Stats() Stats {
	return Stats{Sent: t.sent.Load(), Dropped: t.dropped.Load(), Received: t.received.Load()}
}

func (t *Transport) logf(format string, args ...any) {
	if t.Logf != nil {
		t.Logf(format, args...)
	}
}

func (t *Transport) unreachable(id uint64) {
	if t.Unreachable != nil {
		t.Unreachable(id)
	}
}

// AddPeer makes messages to id go to addr. Adding a known peer with a new
// address replaces its connection.
func (t *Transport) AddPeer(id uint64, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || t.peers == nil {
		return
	}
	if p := t.peers[id]; p != nil {
		if p.addr == addr {
			return
		}
		p.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &peer{t: t, id: id, addr: addr, queue: make(chan []byte, t.QueueSize), ctx: ctx, cancel: cancel}
	t.peers[id] = p
	t.wg.Add(1)
	go p.run()
}

// learnPeer adds a peer that dialed us if we have no address for it.
func (t *Transport) learnPeer(id uint64, addr string) {
	if addr == "" {
		return
	}
	t.mu.Lock()
	known := t.peers[id] != nil
	t.mu.Unlock()
	if !known {
		t.AddPeer(id, addr)
	}
}

// RemovePeer forgets id: its connection is closed and messages to it are
// dropped.
func (t *Transport) RemovePeer(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.peers[id]; p != nil {
		p.stop()
		delete(t.peers, id)
	}
}

// Partition drops all traffic between this node and peer id, both ways, as
// a network partition would. For tests.
func (t *Transport) Partition(id uint64) { t.SetFault(id, true, true) }

// Heal undoes Partition.
func (t *Transport) Heal(id uint64) { t.SetFault(id, false, false) }

// SetFault drops messages from peer id (in) and/or to it (out). For tests.
func (t *Transport) SetFault(id uint64, in, out bool) {
	for {
		old := t.faults.Load()
		m := make(map[uint64]fault)
		if old != nil {
			for k, v := range *old {
				m[k] = v
			}
		}
		if in || out {
			m[id] = fault{in, out}
		} else {
			delete(m, id)
		}
		if t.faults.CompareAndSwap(old, &m) {
			return
		}
	}
}

func (t *Transport) fault(id uint64) fault {
	if m := t.faults.Load(); m != nil {
		return (*m)[id]
	}
	return fault{}
}

// Send queues msgs for their recipients and returns at once. Messages are
// marshalled here, in the caller's goroutine, because raft requires that
// no entries change while a message referring to them is marshalled.
func (t *Transport) Send(msgs []raftpb.Message) {
	for i := range msgs {
		m := &msgs[i]
		if m.Type == raftpb.MsgSnap {
			t.sendSnapshot(*m)
			continue
		}
		if t.fault(m.To).out {
			t.dropped.Add(1)
			continue
		}
		t.mu.Lock()
		p, stopped := t.peers[m.To], t.stopped
		t.mu.Unlock()
		if stopped {
			t.dropped.Add(1)
			continue
		}
		if p == nil {
			t.dropped.Add(1)
			t.unreachable(m.To)
			continue
		}
		n := m.Size()
		if n > t.MaxMessageSize {
			t.dropped.Add(1)
			t.logf("transport: dropping %s to %d: %d bytes is over the limit", m.Type, m.To, n)
			continue
		}
		frame := make([]byte, 4+n)
		binary.BigEndian.PutUint32(frame, uint32(n))
		if _, err := m.MarshalTo(frame[4:]); err != nil {
			t.dropped.Add(1)
			t.logf("transport: marshal %s: %v", m.Type, err)
			continue
		}
		select {
		case p.queue <- frame:
		default:
			t.dropped.Add(1)
			t.unreachable(m.To)
		}
	}
}

// peer is the outgoing side of one peer: a queue drained by run.
type peer struct {
	t      *Transport
	id     uint64
	addr   string
	queue  chan []byte
	ctx    context.Context
	cancel context.CancelFunc

	snapping atomic.Bool // a snapshot is being sent to the peer
}

func (p *peer) stop() { p.cancel() }

// run writes queued frames to the peer, (re)connecting as needed.
func (p *peer) run() {
	t := p.t
	defer t.wg.Done()
	var conn net.Conn
	var w *bufio.Writer
	var unwatch func() bool
	closeConn := func() {
		unwatch()
		conn.Close()
		conn = nil
	}
	defer func() {
		if conn != nil {
			closeConn()
		}
	}()
	backoff := minBackoff
	for {
		var frame []byte
		select {
		case <-p.ctx.Done():
			return
		case frame = <-p.queue:
		}
		if conn == nil {
			c, stop, err := p.dial(magic)
			if err != nil {
				if p.ctx.Err() != nil {
					return
				}
				t.logf("transport: %d: dial %d at %s: %v", t.ID, p.id, p.addr, err)
				// What is queued is stale by the time we could send it.
				t.dropped.Add(1 + uint64(p.drain()))
				t.unreachable(p.id)
				select {
				case <-p.ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			conn, unwatch, w = c, stop, bufio.NewWriterSize(c, 64<<10)
		}
		// Write this frame and whatever else is queued, then flush once.
		conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(frame)
		n := 1
		for more := true; err == nil && more; {
			select {
			case frame = <-p.queue:
				_, err = w.Write(frame)
				n++
			default:
				more = false
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			t.logf("transport: %d: write to %d: %v", t.ID, p.id, err)
			closeConn()
			t.dropped.Add(1)
			t.unreachable(p.id)
			continue
		}
		t.sent.Add(uint64(n))
		backoff = minBackoff
	}
}

// dial connects to the peer and sends the header, which starts with magic
// (message connections) or snapMagic (a snapshot). The returned function
// cancels the watch that closes the connection when the peer is stopped.
func (p *peer) dial(magic string) (net.Conn, func() bool, error) {
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, nil, err
	}
	// Close the connection as soon as the peer is stopped, so a write
	// blocked on a peer that does not read cannot hold up Stop.
	stop := context.AfterFunc(p.ctx, func() { c.Close() })
	hdr := make([]byte, headerSize)
	copy(hdr, magic)
	binary.BigEndian.PutUint64(hdr[len(magic):], p.t.ID)
	binary.BigEndian.PutUint64(hdr[len(magic)+8:], p.id)
	hdr = hdr[:len(magic)+16]
	for _, s := range []string{p.t.ListenAddr(), p.t.Advertise} {
		s = s[:min(len(s), 1024)]
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(len(s)))
		hdr = append(hdr, s...)
	}
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.Write(hdr); err != nil {
		stop()
		c.Close()
		return nil, nil, err
	}
	return c, stop, nil
}

// drain empties the queue and says how many frames it held.
func (p *peer) drain() int {
	n := 0
	for {
		select {
		case <-p.queue:
			n++
		default:
			return n
		}
	}
}

func (t *Transport) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			t.mu.Lock()
			stopped := t.stopped
			t.mu.Unlock()
			if stopped {
				return
			}
			// Temporary trouble (too many open files...): wait a little.
			t.logf("transport: accept: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		t.mu.Lock()
		if t.stopped {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.inbound[c] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.serve(c)
	}
}

// serve reads frames from one incoming connection until it fails.
func (t *Transport) serve(c net.Conn) {
	defer t.wg.Done()
	defer func() {
		c.Close()
		t.mu.Lock()
		delete(t.inbound, c)
		t.mu.Unlock()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	hdr := make([]byte, headerSize)
	c.SetReadDeadline(time.Now().Add(writeTimeout))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	from := binary.BigEndian.Uint64(hdr[len(magic):])
	if kind := string(hdr[:len(magic)]); kind != magic && kind != snapMagic {
		t.logf("transport: %d: connection from %s is not a raft transport", t.ID, c.RemoteAddr())
		return
	}
	if to := binary.BigEndian.Uint64(hdr[len(magic)+8:]); to != t.ID {
		t.logf("transport: %d: node %d at %s dialed us as node %d", t.ID, from, c.RemoteAddr(), to)
		return
	}
	addr := make([]byte, binary.BigEndian.Uint16(hdr[len(magic)+16:]))
	if _, err := io.ReadFull(r, addr); err != nil {
		return
	}
	var advLen [2]byte
	if _, err := io.ReadFull(r, advLen[:]); err != nil {
		return
	}
	adv := make([]byte, binary.BigEndian.Uint16(advLen[:]))
	if _, err := io.ReadFull(r, adv); err != nil {
		return
	}
	t.advertised.Store(from, string(adv))
	t.learnPeer(from, string(addr))
	if string(hdr[:len(magic)]) == snapMagic {
		t.receiveSnapshot(c, r, from)
		return
	}
	var lenb [4]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, lenb[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(lenb[:]))
		if n > t.MaxMessageSize {
			t.logf("transport: %d: %d bytes from %d is over the limit", t.ID, n, from)
			return
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		// Unmarshal copies every byte field, so buf can be reused.
		var m raftpb.Message
		if err := m.Unmarshal(buf); err != nil {
			t.logf("transport: %d: bad message from %d: %v", t.ID, from, err)
			return
		}
		if m.To != t.ID || t.fault(m.From).in || t.fault(from).in {
			continue
		}
		t.received.Add(1)
		t.handler(m)
	}
}

// String describes the transport for logs.
func (t *Transport) String() string { return fmt.Sprintf("transport %d at %s", t.ID, t.Addr) }
