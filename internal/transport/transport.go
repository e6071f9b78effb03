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
// Each peer's clock is measured too, on a connection of its own (clock.go).
//
// Wire format: a connection starts with the handshake of auth.go, which
// authenticates both ends on the cluster secret. A node accepts a
// connection only from a member of its group (Member) and takes the
// sender's raft address and advertise string only then: a member added at
// run time knows no one until they dial it. Then come frames of a 4-byte
// big-endian length and msg.Marshal(); a message whose From is not the
// authenticated peer is dropped. Frames over MaxMessageSize are refused by
// both ends. A MsgSnap travels on a connection of its own, followed by the
// snapshot's data in chunks (see snapshot.go).
//
// Inbound connections are bounded: at most maxPending are in their
// handshake at once (a new one closes the oldest), each has
// handshakeTimeout to finish it, and a peer keeps at most perPeerConns
// (a new one closes its oldest), so a flood costs a bounded number of
// descriptors and bytes and cannot lock members out.
//
// One transport may carry the messages of several Raft groups (a node in
// cluster mode hosts several shards): a message's From and To are replica
// IDs, the node ID in the low 32 bits and the group in the high 32 (see
// ReplicaID), and connections, peers, membership and faults are the
// nodes'. Outside cluster mode the group is 0 and a replica ID is the node
// ID.
//
// For tests, Partition and Heal drop all traffic to and from one peer at
// this node, so chaos tests can cut a node off without network namespaces.
package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

const (
	// DefaultMaxMessageSize bounds one message when MaxMessageSize is 0.
	// raft's MaxSizePerMsg (1 MB in basalt) bounds a batch of entries, but
	// one entry goes alone whatever its size, and an entry is a group of
	// client writes: the bound is what one write may weigh in a cluster.
	// Frames are read as their bytes arrive, so a peer that announces a
	// big one and sends little costs little.
	DefaultMaxMessageSize = 64 << 20
	// DefaultQueueSize is the per-peer queue length when QueueSize is 0.
	DefaultQueueSize = 4096

	magic        = "bRt3"
	maxPending   = 64 // inbound connections in their handshake
	perPeerConns = 4  // authenticated inbound connections per peer
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

	// Secret is the cluster secret every connection is authenticated
	// with (auth.go); empty is for loopback or TLS only.
	Secret []byte
	// Cluster is the ID of the cluster this node belongs to; 0 means not
	// known yet (a node that joins), learnt from the first authenticated
	// member, after which LearnCluster, if set, is called to record it.
	Cluster      uint64
	LearnCluster func(id uint64)
	// Member, if set, says whether node id is a member of this node's
	// group: connections and messages from others are refused, and their
	// addresses never learnt. It is called from the transport's goroutines.
	Member func(id uint64) bool
	// ServerTLS and ClientTLS, if set (see MutualTLS), run every
	// connection over TLS, for the listener and the dialer.
	ServerTLS, ClientTLS *tls.Config

	advertised sync.Map // peer ID -> string
	clusterID  atomic.Uint64

	handler func(raftpb.Message)
	ln      net.Listener
	wg      sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	peers   map[uint64]*peer
	inbound map[net.Conn]*inbound
	offsets map[uint64]ClockOffset // the peers' clocks (clock.go)

	faults atomic.Pointer[map[uint64]fault] // copy on write

	sent, dropped, received atomic.Uint64

	lastRefusal      atomic.Int64 // unix ns of the last refusal logged
	refusalsUnlogged atomic.Uint64
}

// inbound is an accepted connection: from 0 until its handshake is done.
type inbound struct {
	from  uint64
	since time.Time
	kind  string // what the handshake said it carries (magic: messages)
}

// Link is a connection carrying messages with a peer, as CLUSTER LINKS
// shows it: to (this node dials it, and sends on it) or from the peer.
type Link struct {
	To     bool
	Peer   uint64
	Since  time.Time
	Queued int64 // bytes of messages waiting to go out on it
}

// LinkBuffer is the write buffer of a link this node dials.
const LinkBuffer = 64 << 10

// Links lists the message connections open with peers.
func (t *Transport) Links() []Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Link
	for _, p := range t.peers {
		if since := p.since.Load(); since != 0 {
			out = append(out, Link{To: true, Peer: p.id, Since: time.Unix(0, since), Queued: p.queued.Load()})
		}
	}
	for _, in := range t.inbound {
		if in.from != 0 && in.kind == magic {
			out = append(out, Link{Peer: in.from, Since: in.since})
		}
	}
	return out
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
	t.clusterID.Store(t.Cluster)
	t.mu.Lock()
	t.peers = make(map[uint64]*peer)
	t.inbound = make(map[net.Conn]*inbound)
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

// logRefusal logs a refused connection, at most one a second: a stranger
// can open connections faster than a log should grow.
func (t *Transport) logRefusal(line string) {
	now := time.Now().UnixNano()
	last := t.lastRefusal.Load()
	if now-last < int64(time.Second) || !t.lastRefusal.CompareAndSwap(last, now) {
		t.refusalsUnlogged.Add(1)
		return
	}
	if n := t.refusalsUnlogged.Swap(0); n > 0 {
		line += fmt.Sprintf(" (and %d other connections refused since the last such line)", n)
	}
	t.logf("%s", line)
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
	t.wg.Add(2)
	go p.run()
	go p.probeClock()
}

// member reports whether id may talk to this node.
func (t *Transport) member(id uint64) bool {
	return id != 0 && id != t.ID && (t.Member == nil || t.Member(id))
}

// learnPeer adds a member that dialed us if we have no address for it.
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
		delete(t.offsets, id)
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
		if t.fault(NodeOf(m.To)).out {
			t.dropped.Add(1)
			continue
		}
		t.mu.Lock()
		p, stopped := t.peers[NodeOf(m.To)], t.stopped
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
			p.queued.Add(int64(len(frame)))
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

	// snapping holds the groups a snapshot is being sent to the peer for
	// (under Transport.mu): one at a time per group, as raft sends them,
	// but the groups a node shares with the peer each have their own.
	snapping map[uint32]bool
	since    atomic.Int64 // when run's connection opened (unix ns), 0 while it has none
	queued   atomic.Int64 // bytes in queue
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
		p.since.Store(0)
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
			p.queued.Add(-int64(len(frame)))
		}
		if conn == nil {
			c, stop, err := p.dial(magic)
			if err != nil {
				if p.ctx.Err() != nil {
					return
				}
				if backoff == minBackoff { // the first failure of a streak
					t.logf("transport: %d: dial %d at %s: %v", t.ID, p.id, p.addr, err)
				}
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
			conn, unwatch, w = c, stop, bufio.NewWriterSize(c, LinkBuffer)
			p.since.Store(time.Now().UnixNano())
		}
		// Write this frame and whatever else is queued, then flush once.
		conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(frame)
		n := 1
		for more := true; err == nil && more; {
			select {
			case frame = <-p.queue:
				p.queued.Add(-int64(len(frame)))
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

// dial connects to the peer and authenticates the connection, for
// messages (kind magic) or a snapshot (snapMagic). The returned function
// cancels the watch that closes the connection when the peer is stopped.
func (p *peer) dial(kind string) (net.Conn, func() bool, error) {
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, nil, err
	}
	// Close the connection as soon as the peer is stopped, so a write
	// blocked on a peer that does not read cannot hold up Stop.
	raw := c
	stop := context.AfterFunc(p.ctx, func() { raw.Close() })
	if p.t.ClientTLS != nil {
		c = tls.Client(raw, p.t.ClientTLS)
	}
	if err := p.t.clientHandshake(c, kind, p.id); err != nil {
		stop()
		raw.Close()
		return nil, nil, err
	}
	return c, stop, nil
}

// drain empties the queue and says how many frames it held.
func (p *peer) drain() int {
	n := 0
	for {
		select {
		case frame := <-p.queue:
			p.queued.Add(-int64(len(frame)))
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
		t.evictLocked(0, maxPending-1)
		t.inbound[c] = &inbound{since: time.Now()}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.serve(c)
	}
}

// evictLocked closes the oldest inbound connections from node from (0:
// those still in their handshake) until at most keep are left.
func (t *Transport) evictLocked(from uint64, keep int) {
	for {
		var oldest net.Conn
		n := 0
		for c, in := range t.inbound {
			if in.from != from {
				continue
			}
			n++
			if oldest == nil || in.since.Before(t.inbound[oldest].since) {
				oldest = c
			}
		}
		if n <= keep {
			return
		}
		oldest.Close() // its serve goroutine removes it
		delete(t.inbound, oldest)
	}
}

// serve authenticates one incoming connection, then reads its frames
// until it fails.
func (t *Transport) serve(raw net.Conn) {
	defer t.wg.Done()
	defer func() {
		raw.Close()
		t.mu.Lock()
		delete(t.inbound, raw)
		t.mu.Unlock()
	}()
	c := raw
	if t.ServerTLS != nil {
		c = tls.Server(raw, t.ServerTLS) // its handshake runs in serverHandshake's time
	}
	r := bufio.NewReaderSize(c, 64<<10)
	h, err := t.serverHandshake(c, r)
	if err == nil && !t.member(h.from) {
		err = errNotMember
	}
	if err != nil {
		line := fmt.Sprintf("transport: %d: refused a connection from %s (claims node %d): %v", t.ID, c.RemoteAddr(), h.from, err)
		switch {
		case err == errNotMember || errors.Is(err, errOtherCluster):
			t.logf("%s", line) // from a holder of the secret: always worth a line
		case h.kind != "" || t.ServerTLS != nil: // a raft transport (or a TLS failure), but a stranger's, maybe
			t.logRefusal(line)
		}
		return
	}
	from := h.from
	t.mu.Lock()
	if in := t.inbound[raw]; in != nil {
		in.from, in.since, in.kind = from, time.Now(), h.kind
	}
	t.evictLocked(from, perPeerConns)
	t.mu.Unlock()
	t.advertised.Store(from, h.advertise)
	t.learnPeer(from, h.addr)
	switch h.kind {
	case snapMagic:
		t.receiveSnapshot(c, r, from)
		return
	case clockMagic:
		t.answerClock(c, r, from)
		return
	}
	var buf []byte
	for {
		buf, err = readFrame(r, buf, t.MaxMessageSize)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				t.logf("transport: %d: from %d: %v", t.ID, from, err)
			}
			return
		}
		// Unmarshal copies every byte field, so buf can be reused.
		var m raftpb.Message
		if err := m.Unmarshal(buf); err != nil {
			t.logf("transport: %d: bad message from %d: %v", t.ID, from, err)
			return
		}
		if !t.accepts(m, from) {
			continue
		}
		t.received.Add(1)
		t.handler(m)
	}
}

// accepts reports whether message m, read from a connection authenticated
// as node from, goes to raft: it must be from that node, still a member,
// to this node, and not cut off by a fault.
func (t *Transport) accepts(m raftpb.Message, from uint64) bool {
	if NodeOf(m.From) != from || NodeOf(m.To) != t.ID || !t.member(from) {
		t.dropped.Add(1)
		t.logf("transport: %d: dropped %s from %d to %d on node %d's connection", t.ID, m.Type, m.From, m.To, from)
		return false
	}
	return !t.fault(from).in
}

// readFrame reads one frame (a 4-byte length, then as many bytes) into
// buf, growing it as the bytes arrive rather than all at once.
func readFrame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	var lenb [4]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return buf, err
	}
	n := int(binary.BigEndian.Uint32(lenb[:]))
	if n > limit {
		return buf, fmt.Errorf("a frame of %d bytes is over the limit (%d)", n, limit)
	}
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), 1<<20)
		buf = slices.Grow(buf, k)
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+k]); err != nil {
			return buf, noEOF(err)
		}
		buf = buf[:len(buf)+k]
	}
	return buf, nil
}

// String describes the transport for logs.
func (t *Transport) String() string { return fmt.Sprintf("transport %d at %s", t.ID, t.Addr) }

// ReplicaID is the Raft ID of node's replica in group: node IDs stay below
// 2^32, so that one transport between two nodes carries every group's
// messages and the receiver tells the group from To.
func ReplicaID(group uint32, node uint64) uint64 { return uint64(group)<<32 | node }

// NodeOf is the node of a replica ID.
func NodeOf(id uint64) uint64 { return id & (1<<32 - 1) }

// GroupOf is the group of a replica ID.
func GroupOf(id uint64) uint32 { return uint32(id >> 32) }
