package server

import (
	"cmp"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/store"
)

// Client eviction (maxmemory-clients), as Redis 7.0 does it: the memory
// that clients' buffers hold is summed, and when the sum reaches the limit
// the biggest clients are closed until it is below again. A thousand
// subscribers that never read could otherwise each hold their whole
// client-output-buffer-limit (32 MB: 32 GB in all).
//
// What is counted, per client: its pub/sub output queue (messages not yet
// on the socket), a reply of 16 KB or more while it is being written, and
// the buffer of a big argument while it arrives. Redis checks the sum
// before each command; basalt checks it after each command of a client,
// and a publish or a growing argument that passes it wakes an evictor at
// once, so a message to many subscribers needs no further command to be
// acted on.

// countedReply is the smallest reply counted while it is written: smaller
// ones (nearly all) leave at once and cost no shared counter (Redis's own
// reply buffer is 16 KB).
const countedReply = 16 << 10

// minClientMemLimit is Redis's floor for maxmemory-clients, so that a
// tiny setting cannot cut every client off.
const minClientMemLimit = 128 << 10

// clientMem is one client's share of the sum; the parts are set by the
// goroutines that own each buffer.
type clientMem struct {
	query, reply, queue atomic.Int64
	noEvict             atomic.Bool // CLIENT NO-EVICT ON
}

func (m *clientMem) total() int64 { return m.query.Load() + m.reply.Load() + m.queue.Load() }

// clientEviction is the server's side: the sum, the limit and the count.
type clientEviction struct {
	used    atomic.Int64 // bytes all clients' buffers hold
	limit   atomic.Int64 // maxmemory-clients in bytes; 0: no eviction
	evicted atomic.Int64 // INFO's evicted_clients
	wake    chan struct{}
	mu      sync.Mutex     // one eviction pass at a time
	overLog store.LogLimit // NO-EVICT clients alone over the limit: logged every 10 s
}

// clientMemLimit is maxmemory-clients in bytes (0: off). A percentage is
// of maxmemory, and without maxmemory it is no limit, as in Redis.
func clientMemLimit(cfg Config) int64 {
	v := cfg.MaxMemoryClients
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		n, _ := strconv.ParseInt(pct, 10, 64)
		if n == 0 {
			return 0
		}
		if cfg.MaxMemory == 0 {
			return 1<<63 - 1
		}
		return max(int64(float64(cfg.MaxMemory)*float64(n)/100), minClientMemLimit)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	if n == 0 {
		return 0
	}
	return max(n, minClientMemLimit)
}

// applyClientEviction runs at start and when maxmemory or
// maxmemory-clients changes.
func (s *Server) applyClientEviction(cfg Config) {
	e := &s.clientEvict
	if e.wake == nil {
		e.wake = make(chan struct{}, 1)
		e.overLog.Period = 10 * time.Second
		go s.evictLoop()
	}
	e.limit.Store(clientMemLimit(cfg))
	s.wakeEvictor()
}

// setMem sets one part of a client's memory and keeps the sum; growth
// past the limit wakes the evictor.
func (c *Client) setMem(part *atomic.Int64, n int64) {
	e := &c.srv.clientEvict
	d := n - part.Swap(n)
	if d == 0 {
		return
	}
	if used := e.used.Add(d); d > 0 && e.over(used) {
		c.srv.wakeEvictor()
	}
}

func (e *clientEviction) over(used int64) bool {
	limit := e.limit.Load()
	return limit > 0 && used >= limit
}

func (s *Server) wakeEvictor() {
	select {
	case s.clientEvict.wake <- struct{}{}:
	default:
	}
}

func (s *Server) evictLoop() {
	for {
		select {
		case <-s.clientEvict.wake:
			s.evictClients()
		case <-s.closed:
			return
		}
	}
}

// evictClients closes the biggest evictable clients while the sum is at
// or over the limit. Clients with NO-EVICT count in the sum but are never
// chosen, as in Redis.
func (s *Server) evictClients() {
	e := &s.clientEvict
	if !e.over(e.used.Load()) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	type sized struct {
		c   *Client
		mem int64
	}
	var victims []sized
	for _, c := range s.clientsByID() {
		if !c.mem.noEvict.Load() && !c.killed.Load() {
			if m := c.mem.total(); m > 0 {
				victims = append(victims, sized{c, m})
			}
		}
	}
	slices.SortFunc(victims, func(a, b sized) int { return cmp.Compare(b.mem, a.mem) })
	defer memorySpike() // what the evicted held goes back to the OS
	for _, v := range victims {
		if !e.over(e.used.Load()) {
			return
		}
		slog.Info("Evicting client: " + v.c.infoLine())
		e.evicted.Add(1) // before the socket closes: whoever sees it closed sees it counted
		v.c.evict()
	}
	if e.over(e.used.Load()) {
		if missed, ok := e.overLog.Allow(); ok {
			slog.Warn("Over client maxmemory after evicting all evictable clients", "since_last", missed)
		}
	}
}

// evict closes a client at once: its queued output is dropped and its
// goroutine sees the socket fail and cleans up.
func (c *Client) evict() {
	c.killed.Store(true)
	h := c.srv.hub
	h.mu.Lock()
	s := c.sub // set under the hub's lock (ensureSub)
	h.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.dead, s.buf = true, nil
		s.recount()
		s.mu.Unlock()
	}
	c.nc.Close()
}

// recount sets the client's queue memory to what its buffers hold (the
// spare one too); the caller holds s.mu.
func (s *subscriber) recount() {
	n := 0
	if !s.dead {
		n = cap(s.buf) + cap(s.spare) + s.inflight
	}
	s.c.setMem(&s.c.mem.queue, int64(n))
}

// dropMem takes a closed client's buffers out of the sum.
func (c *Client) dropMem() {
	c.setMem(&c.mem.query, 0)
	c.setMem(&c.mem.reply, 0)
}

// afterCommand is Redis's check before the next command: a client whose
// command grew the sum past the limit (a PUBLISH to many slow
// subscribers) evicts before it goes on.
func (c *Client) afterCommand() {
	if c.mem.query.Load() != 0 {
		c.setMem(&c.mem.query, 0) // the argument is read
	}
	if c.srv.clientEvict.over(c.srv.clientEvict.used.Load()) {
		c.srv.evictClients()
	}
}
