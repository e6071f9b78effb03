package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Conn to a node of a cluster registered with followMoved does what a
// cluster client does with `-MOVED slot host:port`, as `redis-cli -c` does:
// it connects to host:port, sends the command again there and keeps that
// connection from then on. The differential tests' pass through a cluster
// (BASALT_NODES) dials a node that does not lead the keys' slot, so each
// connection's first keyed command is redirected.
//
// To know which command a reply answers, the Conn keeps the commands it
// sent (calls) until the test has read their replies. A redirected
// connection is set up as the old one was, by sending again, in order, the
// commands that changed it and succeeded (stateCommands: the protocol,
// authentication, name, READONLY, tracking...), then, inside MULTI, MULTI
// and the commands queued since. Pipelined commands sent after the
// redirected one are read from the old connection first: those answered
// MOVED too are sent again, the others keep their replies (they ran on the
// old node, as a cluster client's keyless commands run anywhere).
//
// The commands in everyNode are sent to every node, as redis-py's
// RedisCluster does, so that a test starts on an empty key space, and
// finds its functions and scripts, whichever node it dialed. A Conn stops
// following (its replies are read as they come) once it subscribes in
// RESP2, sends MONITOR or CLIENT REPLY, or sends bytes that do not parse as
// commands: then replies no longer answer one command each.

var (
	clustersMu sync.Mutex
	clusters   = map[string][]string{} // a node's address: its cluster's
	redirects  atomic.Int64            // by every Conn since the start
)

// followMoved makes the Conns dialed from now on to any of addrs (a
// cluster's nodes) follow MOVED, until the test ends.
func followMoved(t interface{ Cleanup(func()) }, addrs []string) {
	clustersMu.Lock()
	defer clustersMu.Unlock()
	for _, a := range addrs {
		clusters[a] = addrs
	}
	t.Cleanup(func() {
		clustersMu.Lock()
		defer clustersMu.Unlock()
		for _, a := range addrs {
			delete(clusters, a)
		}
	})
}

// clusterOf returns the addresses of the cluster whose node addr is, if
// its Conns follow MOVED.
func clusterOf(addr string) []string {
	clustersMu.Lock()
	defer clustersMu.Unlock()
	return clusters[addr]
}

// Redirected is how many times Conns have followed a MOVED reply since the
// process started, for the pass through a cluster to prove it did.
func Redirected() int64 { return redirects.Load() }

// stateCommands are the commands whose success changes the connection in a
// way a redirected connection must repeat.
var stateCommands = map[string]bool{
	"HELLO": true, "AUTH": true, "SELECT": true, "READONLY": true, "READWRITE": true,
	"CLIENT SETNAME": true, "CLIENT TRACKING": true, "CLIENT NO-EVICT": true,
	"CLIENT NO-TOUCH": true, "CLIENT SETINFO": true,
}

// streamCommands make replies stop matching commands one to one.
var streamCommands = map[string]bool{
	"MONITOR": true, "CLIENT REPLY": true, "SYNC": true, "PSYNC": true,
}

// subscribeCommands answer with pushes in RESP3, one a channel: the first
// is the command's reply, the others come as pushes do. In RESP2 the
// subscribed connection's messages are replies, so it stops following.
var subscribeCommands = map[string]bool{
	"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true,
	"UNSUBSCRIBE": true, "PUNSUBSCRIBE": true, "SUNSUBSCRIBE": true,
}

// everyNode are the commands that, once they succeed, the Conn sends to the
// cluster's other nodes too (redis-py's RedisCluster sends them to every
// primary).
var everyNode = map[string]bool{
	"FLUSHALL": true, "FLUSHDB": true, "SCRIPT LOAD": true, "SCRIPT FLUSH": true,
	"FUNCTION LOAD": true, "FUNCTION DELETE": true, "FUNCTION FLUSH": true, "FUNCTION RESTORE": true,
}

// blockingCommands may block; the Conn reads their MOVED at once (see
// awaitMoved).
var blockingCommands = map[string]bool{
	"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true,
	"BZPOPMIN": true, "BZPOPMAX": true, "BZMPOP": true, "XREAD": true, "XREADGROUP": true,
}

// maxHops bounds the redirects of one command.
const maxHops = 3

// movedWait is how long a blocking command's reply is awaited after it is
// sent on a connection not yet redirected: a MOVED comes at once.
const movedWait = time.Second

// follow is a following Conn's record of its calls and state.
type follow struct {
	cluster    []string
	calls      []*call             // sent, reply not read by the test yet, in order
	unparsed   []byte              // sent bytes not yet a whole command
	state      []*call             // stateCommands that succeeded, in order
	multi      []*call             // MULTI and the commands queued since, inside MULTI
	caching    *call               // CLIENT CACHING, if the last call; it is for the next
	subs       map[string][]string // SUBSCRIBE and PSUBSCRIBE: the channels, patterns (RESP3)
	resp3      bool
	redirected bool
}

// call is one command sent, and its reply once read from the socket.
type call struct {
	name   string // upper case; with the subcommand for CLIENT
	args   []string
	raw    []byte // the command's bytes as sent
	hops   int
	done   bool
	reply  Reply
	rawRep []byte
}

func (f *follow) waiting() int {
	return slices.IndexFunc(f.calls, func(c *call) bool { return !c.done })
}

// stop ends following: replies are read as they come.
func (f *follow) stop(c *Conn) {
	f.calls = slices.DeleteFunc(f.calls, func(c *call) bool { return !c.done })
	f.unparsed = nil
	c.follow = nil
	if len(f.calls) > 0 { // replies read already, still to hand out
		c.follow = &follow{calls: f.calls}
	}
}

// sent records the commands in raw, just written.
func (c *Conn) sent(raw []byte) {
	f := c.follow
	if f.cluster == nil {
		return
	}
	f.unparsed = append(f.unparsed, raw...)
	var blocking *call
	for len(f.unparsed) > 0 {
		args, n, err := splitCommand(f.unparsed)
		if err != nil {
			f.stop(c)
			return
		}
		if n == 0 {
			break
		}
		if len(args) > 0 {
			cl := &call{name: commandName(args), args: args, raw: bytes.Clone(f.unparsed[:n])}
			f.calls = append(f.calls, cl)
			if blockingCommands[cl.name] {
				blocking = cl
			}
		}
		f.unparsed = f.unparsed[n:]
	}
	if blocking != nil && !f.redirected {
		c.awaitMoved(blocking)
	}
}

// awaitMoved reads replies until cl's has come or a redirect happened, or
// movedWait passes with nothing to read: a blocking command sent to the
// wrong node must be sent on at once, as a cluster client does, not when
// the test reads its reply (after it pushed what the command waits for).
func (c *Conn) awaitMoved(cl *call) {
	f := c.follow
	for c.follow == f && !cl.done && !f.redirected {
		_ = c.nc.SetReadDeadline(time.Now().Add(movedWait))
		if _, err := c.br.Peek(1); err != nil {
			return // blocked, or broken: the test's read will tell
		}
		if err := c.advance(); err != nil {
			c.followErr = err // for the test's next read
			return
		}
	}
}

// readFollowing is ReadErr for a following Conn: the first call's reply.
func (c *Conn) readFollowing() (Reply, []byte, error) {
	if err := c.followErr; err != nil {
		c.followErr = nil
		return Reply{}, nil, err
	}
	for {
		f := c.follow
		if f == nil {
			return c.readSocket()
		}
		if len(f.calls) > 0 && f.calls[0].done {
			cl := f.calls[0]
			f.calls = f.calls[1:]
			if f.cluster == nil && len(f.calls) == 0 {
				c.follow = nil
			}
			return cl.reply, cl.rawRep, nil
		}
		if f.cluster == nil || len(f.calls) == 0 {
			return c.readSocket()
		}
		if err := c.advance(); err != nil {
			return Reply{}, nil, err
		}
	}
}

// advance reads one reply from the socket and gives it to the first call
// waiting for one, following it if it is MOVED.
func (c *Conn) advance() error {
	f := c.follow
	r, raw, err := c.readSocket()
	if err != nil {
		return err
	}
	i := f.waiting()
	if i < 0 || r.Kind == '>' && !subscribeCommands[f.calls[i].name] {
		// A push (or a reply nothing asked for) comes before the replies
		// still awaited.
		if i < 0 {
			i = len(f.calls)
		}
		f.calls = slices.Insert(f.calls, i, &call{done: true, reply: r, rawRep: raw})
		return nil
	}
	cl := f.calls[i]
	if addr, ok := movedTo(r); ok && cl.hops < maxHops {
		return c.redirect(i, addr)
	}
	cl.done, cl.reply, cl.rawRep = true, r, raw
	return c.completed(cl)
}

// movedTo returns the address of a MOVED reply.
func movedTo(r Reply) (string, bool) {
	f := strings.Fields(r.Str)
	if r.Kind != '-' || len(f) != 3 || f[0] != "MOVED" {
		return "", false
	}
	return f[2], true
}

// redirect moves the connection to addr, where calls[i] was sent: it reads
// the old connection's replies to the later calls, connects to addr, sets
// it up as the old one was and sends there the calls answered MOVED.
func (c *Conn) redirect(i int, addr string) error {
	f := c.follow
	f.calls[i].hops++
	caching := f.caching // what the later calls' replies would forget
	for _, cl := range f.calls[i+1:] {
		if cl.done {
			continue
		}
		r, raw, err := c.readSocket()
		if err != nil {
			return err
		}
		if _, ok := movedTo(r); ok {
			continue
		}
		cl.done, cl.reply, cl.rawRep = true, r, raw
		if err := c.completed(cl); err != nil {
			return err
		}
	}
	nc, err := c.dialer.Dial("tcp", addr)
	if err != nil {
		return fmt.Errorf("following MOVED to %s: %w", addr, err)
	}
	_ = c.nc.Close()
	c.nc, c.br, c.Addr = nc, bufio.NewReader(nc), addr
	f.redirected = true
	redirects.Add(1)
	c.Redirects++
	for _, cl := range f.state {
		if r, err := c.roundTrip(cl.raw); err != nil || r.IsError() {
			return fmt.Errorf("setting up the connection MOVED to %s again, %s: %v %v", addr, cl.name, r, err)
		}
	}
	for cmd, names := range f.subs { // a push a name
		if err := c.write(Command(append([]string{cmd}, names...)...)); err != nil {
			return err
		}
		for range names {
			if _, _, err := c.readSocket(); err != nil {
				return err
			}
		}
	}
	for _, cl := range f.multi { // their errors were the old connection's too
		if _, err := c.roundTrip(cl.raw); err != nil {
			return err
		}
	}
	if caching != nil {
		if _, err := c.roundTrip(caching.raw); err != nil {
			return err
		}
	}
	for _, cl := range f.calls {
		if !cl.done {
			if err := c.write(cl.raw); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Conn) roundTrip(raw []byte) (Reply, error) {
	if err := c.write(raw); err != nil {
		return Reply{}, err
	}
	r, _, err := c.readSocket()
	return r, err
}

// completed notes what a call's reply changed in the connection.
func (c *Conn) completed(cl *call) error {
	f := c.follow
	f.caching = nil
	switch {
	case cl.name == "CLIENT CACHING" && f.multi == nil && !cl.reply.IsError():
		f.caching = cl
	case cl.name == "RESET":
		f.state, f.multi, f.resp3, f.subs = nil, nil, false, nil
	case f.multi != nil:
		if cl.name == "EXEC" || cl.name == "DISCARD" {
			f.multi = nil
		} else {
			f.multi = append(f.multi, cl)
		}
	case streamCommands[cl.name] || subscribeCommands[cl.name] && !f.resp3:
		f.stop(c)
	case cl.reply.IsError():
	case cl.name == "MULTI":
		f.multi = []*call{cl}
	case stateCommands[cl.name]:
		f.state = append(f.state, cl)
		if cl.name == "HELLO" && len(cl.args) > 1 {
			f.resp3 = cl.args[1] == "3"
		}
	case cl.name == "SUBSCRIBE" || cl.name == "PSUBSCRIBE":
		f.subscribed(cl.name, true, cl.args[1:])
	case cl.name == "UNSUBSCRIBE" || cl.name == "PUNSUBSCRIBE":
		f.subscribed(cl.name[2:], false, cl.args[1:])
	case everyNode[cl.name]:
		return c.sendToOthers(cl)
	}
	return nil
}

// sendToOthers sends cl (everyNode) to the cluster's other nodes, on
// connections set up as this one is.
func (c *Conn) sendToOthers(cl *call) error {
	for _, addr := range c.follow.cluster {
		if addr == c.Addr {
			continue
		}
		nc, err := c.dialer.Dial("tcp", addr)
		if err != nil {
			return err
		}
		other := &Conn{Addr: addr, Timeout: c.Timeout, nc: nc, br: bufio.NewReader(nc)}
		for _, s := range append(slices.Clone(c.follow.state), cl) {
			r, err := other.roundTrip(s.raw)
			if err == nil && r.IsError() {
				err = errors.New(r.Str)
			}
			if err != nil {
				other.Close()
				return fmt.Errorf("%s on %s: %w", s.name, addr, err)
			}
		}
		other.Close()
	}
	return nil
}

// subscribed notes a RESP3 connection's (un)subscription to names (none:
// all) with cmd, SUBSCRIBE or PSUBSCRIBE, to repeat on a redirect. Shard
// channels stay where they are: they belong to their slot's node.
func (f *follow) subscribed(cmd string, on bool, names []string) {
	if f.subs == nil {
		f.subs = map[string][]string{}
	}
	switch {
	case on:
		for _, n := range names {
			if !slices.Contains(f.subs[cmd], n) {
				f.subs[cmd] = append(f.subs[cmd], n)
			}
		}
	case len(names) == 0:
		delete(f.subs, cmd)
	default:
		f.subs[cmd] = slices.DeleteFunc(f.subs[cmd], func(n string) bool { return slices.Contains(names, n) })
	}
	if len(f.subs[cmd]) == 0 {
		delete(f.subs, cmd)
	}
}

// commandName is args' command in upper case, with the subcommand of
// CLIENT, SCRIPT and FUNCTION.
func commandName(args []string) string {
	name := strings.ToUpper(args[0])
	if (name == "CLIENT" || name == "SCRIPT" || name == "FUNCTION") && len(args) > 1 {
		name += " " + strings.ToUpper(args[1])
	}
	return name
}

// maxSentBulk bounds the argument a Conn waits for when it splits what it
// sent into commands: tests of the protocol's limits announce larger ones.
const maxSentBulk = 64 << 20

// splitCommand returns the first command in b (a multibulk or an inline
// command, as a server reads them) and its length, or n == 0 if b does not
// hold a whole one yet.
func splitCommand(b []byte) (args []string, n int, err error) {
	line := func(from int) (string, int) {
		end := bytes.IndexByte(b[from:], '\n')
		if end < 0 {
			return "", 0
		}
		return strings.TrimSuffix(string(b[from:from+end]), "\r"), from + end + 1
	}
	if b[0] != '*' {
		l, next := line(0)
		if next == 0 {
			return nil, 0, nil
		}
		args, err := SplitArgs(l)
		return args, next, err
	}
	head, pos := line(0)
	if pos == 0 {
		return nil, 0, nil
	}
	count, err := strconv.Atoi(head[1:])
	if err != nil || count > 1<<20 {
		return nil, 0, fmt.Errorf("bad multibulk length %q", head)
	}
	for range count {
		h, next := line(pos)
		if next == 0 {
			return nil, 0, nil
		}
		digits, ok := strings.CutPrefix(h, "$")
		size, err := strconv.Atoi(digits)
		if !ok || err != nil || size < 0 || size > maxSentBulk {
			return nil, 0, fmt.Errorf("bad bulk length %q", h)
		}
		if len(b) < next+size+2 {
			return nil, 0, nil
		}
		args = append(args, string(b[next:next+size]))
		pos = next + size + 2
	}
	return args, pos, nil
}
