package server

import "sync/atomic"

// Server and connection administration: the handlers' registration, the
// CLIENT REPLY muting of the connection loop and the client state it
// publishes. INFO is in info.go, CLIENT in client_cmd.go, DEBUG in debug.go.

// BasaltVersion is reported by INFO next to the Redis version it follows.
const BasaltVersion = "0.1.0"

// dispatchMuted runs a command whose reply CLIENT REPLY OFF or SKIP drops,
// unless it is pub/sub confirmations, which Redis sends as it sends the
// messages (Client.pushing).
// Pending writes are waited for on both sides so that exactly this
// command's output is cut; CLIENT REPLY ON clears the flags and keeps its OK.
func (c *Client) dispatchMuted(argv [][]byte) {
	c.waitPending()
	mark := c.out.Len()
	c.skipping, c.skipNext, c.pushing = c.skipNext, false, false
	c.dispatch(argv)
	c.waitPending()
	c.replyFailed() // counted before it is dropped, as Redis counts it
	if (c.replyOff || c.skipping) && !c.pushing {
		c.out.Buf = c.out.Buf[:mark]
	}
	c.skipping, c.pushing = false, false
}

// Client state packed for other goroutines: db in bits 0-15, proto in
// 16-19, MULTI in bit 20, queued commands from bit 32.
func (c *Client) publishState() {
	v := uint64(c.db&0xffff) | uint64(c.proto&0xf)<<16 | uint64(len(c.queued)+c.upQueued)<<32
	if c.multi || c.upMulti {
		v |= 1 << 20
	}
	if c.state.Load() != v {
		c.state.Store(v)
	}
}

func (c *Client) loadState() (db, proto int, multi bool, queued int) {
	v := c.state.Load()
	db, proto, multi, queued = int(v&0xffff), int(v>>16&0xf), v&(1<<20) != 0, int(v>>32)
	if proto == 0 { // nothing published yet
		proto = 2
	}
	return
}

// countingReader counts the bytes clients send, for INFO's
// total_net_input_bytes: one atomic add per read call, not per command.
// It also counts its client's reads that brought data (see confirmRead)
// and clears its readIdle as soon as data came (Hub.awaitInput).
type countingReader struct {
	r     interface{ Read([]byte) (int, error) }
	n     *atomic.Int64
	reads *atomic.Uint64
	idle  *atomic.Bool
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.idle.Store(false)
		c.n.Add(int64(n))
		c.reads.Add(1)
	}
	return n, err
}
