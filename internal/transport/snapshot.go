package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Snapshots. A MsgSnap carries only a small descriptor; the store's data
// follows it on a connection of its own, so that heartbeats and appends to
// the peer are not held up behind it, and neither side ever holds more than
// a chunk of it:
//
//	handshake (kind snapMagic, as a message connection's; see auth.go)
//	frame: 4-byte length, the MsgSnap
//	chunks: 4-byte length (1 to SnapshotChunk), data; then a 0 length
//	4-byte CRC-32C of the data
//
// The receiver hands the data to SnapshotSink as it arrives. Once the sink
// has stored it all, the receiver answers one byte (1) and passes the
// MsgSnap to the handler; raft then installs it. The sender reports the
// outcome with SnapshotDone: stored (the answer came), or not (anything
// else), so that raft sends it again later. One snapshot at a time goes to
// a peer; a MsgSnap raft sends meanwhile is dropped, and the report of the
// one in flight stands for it.

const (
	snapMagic = "bRs3"
	// SnapshotChunk is the largest chunk of snapshot data in one frame.
	SnapshotChunk = 1 << 20
	// snapTimeout bounds each write and read of a chunk, and the wait for
	// the receiver's answer after the last one (it syncs its files first).
	snapTimeout = 30 * time.Second
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sendSnapshot starts streaming the snapshot m carries to its recipient.
// Exactly one SnapshotDone follows, from another goroutine (the caller is
// the node's Ready loop, which takes the reports), unless a snapshot of the
// same group to that peer is already in flight or the transport is stopped.
func (t *Transport) sendSnapshot(m raftpb.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peers[NodeOf(m.To)]
	group := GroupOf(m.To)
	if t.stopped || p != nil && p.snapping[group] {
		t.dropped.Add(1)
		return
	}
	if p != nil {
		if p.snapping == nil {
			p.snapping = map[uint32]bool{}
		}
		p.snapping[group] = true
	}
	// Marshalled here, as Send does for every message (see Send).
	frame := make([]byte, 4+m.Size())
	binary.BigEndian.PutUint32(frame, uint32(m.Size()))
	if _, err := m.MarshalTo(frame[4:]); err != nil {
		frame = nil
	}
	t.wg.Add(1) // under mu, so that Stop waits for it
	go func() {
		defer t.wg.Done()
		start := time.Now()
		var n int64
		err := errors.New("no address for the peer")
		if frame == nil {
			err = errors.New("the message does not marshal")
		} else if p != nil {
			n, err = p.streamSnapshot(m, frame)
			// Cleared before the report: raft may send the next one at once.
			t.mu.Lock()
			delete(p.snapping, group)
			t.mu.Unlock()
		}
		if err != nil {
			t.dropped.Add(1)
			t.logf("transport: %d: snapshot %d to %d failed after %d bytes: %v", t.ID, m.Snapshot.Metadata.Index, m.To, n, err)
			if p == nil || p.ctx.Err() == nil {
				t.unreachable(m.To)
			}
		} else {
			t.sent.Add(1)
			t.logf("transport: %d: sent snapshot %d to %d: %d bytes in %v", t.ID, m.Snapshot.Metadata.Index, m.To, n, time.Since(start).Round(time.Millisecond))
		}
		t.snapshotDone(m.To, err == nil)
	}()
}

func (t *Transport) snapshotDone(to uint64, ok bool) {
	if t.SnapshotDone != nil {
		t.SnapshotDone(to, ok)
	}
}

// streamSnapshot sends a MsgSnap (its frame) and its data on a new
// connection and waits for the receiver's answer. It returns how many data
// bytes it sent.
func (p *peer) streamSnapshot(m raftpb.Message, frame []byte) (int64, error) {
	t := p.t
	if t.fault(p.id).out {
		return 0, errors.New("partitioned")
	}
	c, stop, err := p.dial(snapMagic)
	if err != nil {
		return 0, err
	}
	defer func() {
		stop()
		c.Close()
	}()
	c.SetWriteDeadline(time.Now().Add(snapTimeout))
	if _, err := c.Write(frame); err != nil {
		return 0, err
	}
	w := &chunkWriter{t: t, to: p.id, c: c, buf: make([]byte, 4, 4+SnapshotChunk)}
	if t.SnapshotSource != nil {
		err = t.SnapshotSource(m, w)
	}
	if err == nil {
		err = w.close()
	}
	if err != nil {
		return w.n, err
	}
	c.SetReadDeadline(time.Now().Add(2 * snapTimeout))
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return w.n, fmt.Errorf("no answer: %w", err)
	}
	if ack[0] != 1 {
		return w.n, errors.New("the receiver refused it")
	}
	return w.n, nil
}

// chunkWriter frames what is written to it as chunks of at most
// SnapshotChunk bytes.
type chunkWriter struct {
	t   *Transport
	to  uint64
	c   net.Conn
	buf []byte // 4 bytes for the length, then the chunk's data
	crc uint32
	n   int64
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p, written = p[k:], written+k
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush sends the buffered chunk.
func (w *chunkWriter) flush() error {
	data := w.buf[4:]
	if len(data) == 0 {
		return nil
	}
	if w.t.fault(w.to).out {
		return errors.New("partitioned")
	}
	binary.BigEndian.PutUint32(w.buf, uint32(len(data)))
	w.crc = crc32.Update(w.crc, castagnoli, data)
	w.c.SetWriteDeadline(time.Now().Add(snapTimeout))
	if _, err := w.c.Write(w.buf); err != nil {
		return err
	}
	w.n += int64(len(data))
	w.buf = w.buf[:4]
	return nil
}

// close sends the last chunk, the end and the CRC.
func (w *chunkWriter) close() error {
	if err := w.flush(); err != nil {
		return err
	}
	end := binary.BigEndian.AppendUint32(make([]byte, 4), w.crc)
	w.c.SetWriteDeadline(time.Now().Add(snapTimeout))
	_, err := w.c.Write(end)
	return err
}

// receiveSnapshot serves a snapshot connection from peer from, after its
// header: the MsgSnap, then its data for SnapshotSink.
func (t *Transport) receiveSnapshot(c net.Conn, r *bufio.Reader, from uint64) {
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(snapTimeout))
	buf, err := readFrame(r, nil, t.MaxMessageSize)
	if err != nil {
		t.logf("transport: %d: snapshot from %d: %v", t.ID, from, err)
		return
	}
	var m raftpb.Message
	if err := m.Unmarshal(buf); err != nil || m.Type != raftpb.MsgSnap || m.Snapshot == nil {
		t.logf("transport: %d: bad snapshot message from %d: %v", t.ID, from, err)
		return
	}
	if !t.accepts(m, from) {
		return
	}
	cr := &chunkReader{t: t, from: from, c: c, r: r}
	if t.SnapshotSink != nil {
		err = t.SnapshotSink(m, cr)
	} else {
		_, err = io.Copy(io.Discard, cr)
	}
	if err == nil && !cr.done {
		err = errors.New("the sink stopped before the end of the data")
	}
	if err != nil {
		t.logf("transport: %d: receiving snapshot %d from %d: %v", t.ID, m.Snapshot.Metadata.Index, from, err)
		return
	}
	t.logf("transport: %d: received snapshot %d from %d: %d bytes in %v", t.ID, m.Snapshot.Metadata.Index, from, cr.n, time.Since(start).Round(time.Millisecond))
	c.SetWriteDeadline(time.Now().Add(snapTimeout))
	c.Write([]byte{1})
	// Stored: raft may take it even if the answer was lost (the sender
	// then sends it again, and raft ignores the copy).
	t.received.Add(1)
	t.handler(m)
}

// chunkReader reads the data of a snapshot connection: the chunks'
// contents, then io.EOF once the end and a matching CRC were read.
type chunkReader struct {
	t    *Transport
	from uint64
	c    net.Conn
	r    *bufio.Reader
	left int // bytes of the current chunk not read yet
	crc  uint32
	n    int64
	done bool
}

func (cr *chunkReader) Read(p []byte) (int, error) {
	if cr.done {
		return 0, io.EOF
	}
	cr.c.SetReadDeadline(time.Now().Add(snapTimeout))
	if cr.left == 0 {
		if cr.t.fault(cr.from).in {
			return 0, errors.New("partitioned")
		}
		var hdr [4]byte
		if _, err := io.ReadFull(cr.r, hdr[:]); err != nil {
			return 0, noEOF(err)
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 {
			if _, err := io.ReadFull(cr.r, hdr[:]); err != nil {
				return 0, noEOF(err)
			}
			if binary.BigEndian.Uint32(hdr[:]) != cr.crc {
				return 0, errors.New("the snapshot's data does not match its CRC")
			}
			cr.done = true
			return 0, io.EOF
		}
		if n > SnapshotChunk {
			return 0, fmt.Errorf("a chunk of %d bytes is over the limit", n)
		}
		cr.left = int(n)
	}
	k, err := cr.r.Read(p[:min(len(p), cr.left)])
	cr.crc = crc32.Update(cr.crc, castagnoli, p[:k])
	cr.left -= k
	cr.n += int64(k)
	return k, noEOF(err)
}

// noEOF turns an end of the connection inside the data into an error.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
