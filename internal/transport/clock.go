package transport

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"basalt/internal/clock"
)

// Clock offsets. Each node measures every peer's clock against its own on
// a connection of its own (kind clockMagic, after the same handshake as a
// message connection), so a probe never waits behind queued entries:
//
//	dialer →    t1: its clock when sending (8 bytes, unix ns)
//	listener →  t1 echoed, t2: its clock when answering (16 bytes)
//
// The dialer reads the answer at t3 and takes offset = t2 - (t1+t3)/2,
// the peer's clock minus its own, with an error of at most (t3-t1)/2, half
// the round trip (CockroachDB's RemoteClockMonitor measures the same
// way). A node whose clock is off by more than a bound from most of the
// nodes it knows does not lead (see CheckClock and the shard's raft.go).
//
// A node of an older version refuses the unknown kind; its offset is then
// never measured, and counts as not agreeing.

const (
	clockMagic   = "bCk1"
	probeEvery   = 250 * time.Millisecond
	probeTimeout = 2 * time.Second
	// offsetMaxAge is how long a measurement counts: a peer that cannot be
	// probed for longer neither vouches for nor against this node's clock.
	offsetMaxAge = 5 * time.Second
)

// ClockOffset is one measurement of a peer's clock.
type ClockOffset struct {
	Offset time.Duration // the peer's clock minus this node's
	RTT    time.Duration // the probe's round trip: Offset is right within RTT/2
	At     time.Time     // when it was taken (this node's monotonic clock)
}

// within reports whether the peer's clock may be within bound of ours.
func (o ClockOffset) within(bound time.Duration) bool {
	return o.Offset.Abs()-o.RTT/2 <= bound
}

// probeClock measures the peer's clock every probeEvery while the peer is
// known.
func (p *peer) probeClock() {
	t := p.t
	defer t.wg.Done()
	var conn net.Conn
	var unwatch func() bool
	closeConn := func() {
		if conn != nil {
			unwatch()
			conn.Close()
			conn = nil
		}
	}
	defer closeConn()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-p.ctx.Done():
				return
			case <-tick.C:
			}
		}
		if t.fault(p.id).out {
			closeConn()
			continue
		}
		if conn == nil {
			c, stop, err := p.dial(clockMagic)
			if err != nil {
				continue // the message connection logs why the peer cannot be reached
			}
			conn, unwatch = c, stop
		}
		o, err := probe(conn)
		if err != nil {
			closeConn()
			continue
		}
		t.mu.Lock()
		if t.offsets == nil {
			t.offsets = map[uint64]ClockOffset{}
		}
		t.offsets[p.id] = o
		t.mu.Unlock()
	}
}

// probe takes one measurement on a clock connection.
func probe(c net.Conn) (ClockOffset, error) {
	c.SetDeadline(time.Now().Add(probeTimeout))
	var b [16]byte
	start := time.Now()
	t1 := clock.Now().UnixNano()
	binary.BigEndian.PutUint64(b[:], uint64(t1))
	if _, err := c.Write(b[:8]); err != nil {
		return ClockOffset{}, err
	}
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return ClockOffset{}, err
	}
	rtt := time.Since(start)
	if int64(binary.BigEndian.Uint64(b[:])) != t1 {
		return ClockOffset{}, fmt.Errorf("the answer is not to this probe")
	}
	t2 := int64(binary.BigEndian.Uint64(b[8:]))
	return ClockOffset{Offset: time.Duration(t2 - (t1 + int64(rtt)/2)), RTT: rtt, At: time.Now()}, nil
}

// answerClock answers the probes of peer from on an authenticated clock
// connection until it fails or goes quiet.
func (t *Transport) answerClock(c net.Conn, r *bufio.Reader, from uint64) {
	var b [16]byte
	for {
		c.SetReadDeadline(time.Now().Add(offsetMaxAge))
		if _, err := io.ReadFull(r, b[:8]); err != nil {
			return
		}
		if t.fault(from).in {
			continue // cut off: the probe times out, as over a real partition
		}
		binary.BigEndian.PutUint64(b[8:], uint64(clock.Now().UnixNano()))
		c.SetWriteDeadline(time.Now().Add(probeTimeout))
		if _, err := c.Write(b[:]); err != nil {
			return
		}
	}
}

// ClockOffsets returns the latest measurement of each peer's clock taken
// within the last few seconds.
func (t *Transport) ClockOffsets() map[uint64]ClockOffset {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[uint64]ClockOffset, len(t.offsets))
	for id, o := range t.offsets {
		if t.peers[id] != nil && time.Since(o.At) <= offsetMaxAge {
			m[id] = o
		}
	}
	return m
}

// CheckClock returns an error saying why if this node's clock is not
// within bound of a majority of the nodes it knows, itself included: a
// peer whose clock is measured off, or not measured lately, does not
// count for it. A node without peers always agrees with itself.
func (t *Transport) CheckClock(bound time.Duration) error {
	offsets := t.ClockOffsets()
	t.mu.Lock()
	nodes := 1 + len(t.peers)
	t.mu.Unlock()
	agree := 1
	var off []string
	for _, id := range slices.Sorted(maps.Keys(offsets)) {
		if o := offsets[id]; o.within(bound) {
			agree++
		} else {
			off = append(off, fmt.Sprintf("node %d: %s (±%s)", id, o.Offset.Round(time.Millisecond), (o.RTT/2).Round(time.Microsecond)))
		}
	}
	if 2*agree > nodes {
		return nil
	}
	why := fmt.Sprintf("this node's clock agrees within %s with %d of the %d nodes it knows (itself included), not a majority", bound, agree, nodes)
	if len(off) > 0 {
		why += "; peers' clocks minus this one's: " + strings.Join(off, ", ")
	}
	if unmeasured := nodes - agree - len(off); unmeasured > 0 {
		why += fmt.Sprintf("; %d not measured lately", unmeasured)
	}
	return fmt.Errorf("%s", why)
}
