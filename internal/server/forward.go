package server

import (
	"basalt/internal/acl"
	"bufio"
	"net"
	"strconv"
	"strings"
	"time"

	"basalt/internal/command"
	"basalt/internal/resp"
)

// Forwarding. A node that does not lead its group relays a client's
// commands to the leader over a connection of its own (one per client, so
// the leader keeps the client's state: MULTI, WATCH, blocking calls) and
// relays the replies back in order. Reads of a client that sent READONLY
// are served from this node's state instead, knowingly stale. Commands
// about the node itself or the connection (INFO, RAFT, CONFIG, CLIENT...)
// stay here: the client is this node's connection, so CLIENT ID, LIST,
// KILL and REPLY act here, and REPLY OFF/SKIP mute relayed replies too.
//
// A client that started forwarding keeps forwarding to the same leader.
// If that connection fails (the leader died), the client moves to the new
// leader as soon as one answers (resend): the reads whose replies were
// still to come run again there, and a write whose reply was still to come
// answers that its outcome is unknown, as the old leader may have applied
// it. Where the old leader held state for the client that cannot move (a
// MULTI), the client's connection is closed instead, as it would be had it
// been connected to the leader: it reconnects and gets the new leader.

// localCommands run on the node the client is connected to.
var localCommands = map[string]bool{
	"auth": true, "hello": true, "acl": true, "quit": true, "reset": true, "shutdown": true, "info": true, "config": true,
	"client": true, "debug": true, "raft": true, "role": true, "failover": true, "readonly": true, "readwrite": true,
	"command": true, "lolwut": true, "ping": true, "echo": true, "time": true,
	"save": true, "bgsave": true, "lastsave": true, "bgrewriteaof": true, // this node's backup (save.go)
	"sync": true, "psync": true, "replconf": true, // this node's snapshot (sync.go)
	"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "spublish": true, "pubsub": true,
	"publish": true, // sent to the leader in a form of its own (pubsub_cluster.go)
}

// changesUsers reports whether argv is an ACL command that changes the
// users: the leader writes them through the log (acl_cmd.go).
func changesUsers(cmd *command.Command, argv [][]byte) bool {
	if cmd.Name != "acl" || len(argv) < 2 {
		return false
	}
	switch strings.ToLower(string(argv[1])) {
	case "setuser", "deluser", "load":
		return true
	}
	return false
}

// upstream is a client's connection to the leader.
type upstream struct {
	nc      net.Conn
	addr    string // the node it is connected to
	r       *bufio.Reader
	w       *bufio.Writer
	replies []upReply // the commands sent whose replies were not read yet
	proto   int
	buf     []byte
}

// mustForward reports whether cmd (nil if unknown) goes to the leader.
// Once a client forwards, everything but local commands follows, errors
// included: the leader's MULTI must see a queued command's arity error.
func (c *Client) mustForward(cmd *command.Command, argv [][]byte) bool {
	if c.srv.clustered() {
		return false // cluster clients follow MOVED (route, in shards.go)
	}
	if c.proto == 2 && c.subscribed() {
		// RESP2's pub/sub mode: what may run is about this node, and the
		// rest is refused here (pubsubGate).
		return false
	}
	if c.upMulti {
		// The leader queues (or refuses) whatever comes inside MULTI.
		return cmd == nil || cmd.Name != "quit" && cmd.Name != "reset"
	}
	if cmd != nil && localCommands[cmd.Name] && !changesUsers(cmd, argv) {
		return false
	}
	// A READONLY client reads here, unless it is inside MULTI.
	kind := cmd
	if cmd != nil && len(cmd.Subcommands) > 0 && len(argv) > 1 {
		kind = cmd.Subcommand(argv[1]) // XGROUP CREATE is a write, XINFO a read
	}
	// SCRIPT KILL (AllowBusy) is for the leader's scripts.
	readOnly := kind != nil && !kind.IsWrite() && cmd.Flags&(command.Conn|command.Blocking) == 0 && kind.Flags&command.AllowBusy == 0
	if cmd != nil && cmd.Flags&command.Script != 0 { // EVAL may write, EVAL_RO may not
		readOnly = cmd.Flags&command.ReadOnly != 0
	}
	if c.readonly && readOnly && !c.upMulti {
		return false
	}
	if c.up != nil {
		return true
	}
	return cmd != nil && !c.srv.group().IsLeader()
}

// forward sends argv to the leader; its reply is read by waitPending.
func (c *Client) forward(argv [][]byte) { c.forwardAs(argv, upReply{}) }

// cloneArgv copies argv into one buffer: two allocations a command.
func cloneArgv(argv [][]byte) [][]byte {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(argv))
	for i, a := range argv {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}

// forwardAs is forward with what to do with the reply (see upReply).
func (c *Client) forwardAs(argv [][]byte, r upReply) {
	c.waitLocal()
	cmd := command.Lookup(argv[0])
	if c.up == nil && len(c.watching) > 0 && !c.srv.clustered() {
		// The leader that knew these WATCHes is gone: the EXEC they guard
		// aborts, as it would had the keys changed.
		c.unwatchAll()
		c.watchLost = true
	}
	if c.watchLost && cmd != nil && cmd.Name == "exec" && c.upMulti {
		c.watchLost, c.upMulti, c.upQueued, c.upName = false, false, 0, nil
		c.drainUpstream(true)
		c.up.send([][]byte{[]byte("DISCARD")})
		c.drainUpstream(false)
		dropWaits(c.srv.origins, c.upSlots)
		c.upSlots = nil
		c.out.NullArray()
		return
	}
	if cmd != nil && (cmd.Name == "unwatch" || cmd.Name == "discard" || cmd.Name == "exec") {
		c.watchLost, c.upWatched = false, false
	}
	if cmd != nil && cmd.Name == "watch" && !c.upMulti {
		c.upWatched = true
	}
	if !c.upMulti && r.pub == nil {
		if kind := kindOf(argv); kind != nil && readsOnly(cmd, kind) {
			r.read = true
		}
		if r.read || c.srv.clustered() {
			r.again = cloneArgv(argv) // argv is the read buffer's
		}
	}
	if c.up == nil {
		if err := c.dialUpstream(); err != nil {
			if r.pub != nil {
				c.srv.origins.drop(r.pub)
			}
			if err == errUserNotOnLeader {
				c.reply().Error("NOPERM " + err.Error())
			} else {
				c.reply().Error("TRYAGAIN " + err.Error())
			}
			return
		}
	}
	if !c.syncProto() {
		return // the leader is gone, and the client's connection is closing
	}
	held := false
	if c.upMulti {
		if cmd != nil && (cmd.Name == "exec" || cmd.Name == "discard") {
			r.exec = true
			if cmd.Name == "exec" && c.sub != nil {
				// A message to this subscriber published by the transaction
				// must not reach it before EXEC's reply (see holdForExec),
				// which is waited for at once.
				c.execing, held = true, true
				c.holdForExec()
			}
		} else {
			argv, r = c.inMulti(cmd, argv)
		}
	}
	c.up.sendAs(argv, r)
	switch {
	case cmd == nil:
	case cmd.Name == "multi":
		c.upMulti, c.upQueued = true, 0
	case cmd.Name == "exec" || cmd.Name == "discard":
		if cmd.Name == "exec" && c.upName != nil {
			// A CLIENT SETNAME queued in the MULTI names this node's
			// connection too (even if a WATCH aborts the EXEC).
			c.name.Store(c.upName)
		}
		c.upMulti, c.upQueued, c.upName = false, 0, nil
	case c.upMulti:
		c.upQueued++ // for CLIENT LIST; the leader may still refuse it
		if cmd.Name == "client" && len(argv) == 3 && strings.EqualFold(string(argv[1]), "setname") && validClientName(argv[2]) == "" {
			name := string(argv[2])
			c.upName = &name
		}
	case cmd.Name == "select" && len(argv) == 2:
		if db, ok := c.parseDB(argv[1]); ok {
			c.db = db // for this node's READONLY reads
		}
	case cmd.Flags&command.Blocking != 0 || cmd.Name == "wait" || cmd.Name == "waitaof":
		// WAIT and WAITAOF block on the leader too, maybe for ever.
		c.waitBlockingUpstream()
		return
	}
	if held {
		c.drainUpstream(true)
		return
	}
	if c.up != nil && c.up.w.Buffered() > 64<<10 {
		c.drainUpstream(true)
	}
}

// waitBlockingUpstream waits for a forwarded blocking command's reply; if
// the client hangs up meanwhile, the connection to the leader is closed
// too, so the leader withdraws the call instead of serving a gone client.
func (c *Client) waitBlockingUpstream() {
	if err := c.up.w.Flush(); err != nil {
		c.upstreamFailed()
		return
	}
	gone, stopWatching := c.watchDisconnect()
	up := c.up.nc
	done := make(chan struct{})
	go func() {
		select {
		case <-gone:
			up.Close()
		case <-done:
		}
	}()
	c.drainUpstream(true)
	close(done)
	stopWatching()
}

// syncProto makes the leader answer in the client's protocol after a
// HELLO that ran here; it reports false if the leader is gone.
func (c *Client) syncProto() bool {
	if c.up.proto == c.proto {
		return true
	}
	c.up.send([][]byte{[]byte("HELLO"), []byte(strconv.Itoa(c.proto))})
	if !c.drainUpstream(false) {
		return false
	}
	c.up.proto = c.proto
	return true
}

func (u *upstream) send(argv [][]byte) { u.sendAs(argv, upReply{}) }

// authenticate runs AUTH user pass on a new connection to the leader, and
// reports whether it answered OK.
func (u *upstream) authenticate(user string, pass []byte) bool {
	u.nc.SetDeadline(time.Now().Add(2 * time.Second))
	defer u.nc.SetDeadline(time.Time{})
	u.sendAs([][]byte{[]byte("AUTH"), []byte(user), pass}, upReply{})
	u.replies = u.replies[:len(u.replies)-1] // answered here
	if u.w.Flush() != nil {
		return false
	}
	line, err := u.r.ReadString('\n')
	return err == nil && line == "+OK\r\n"
}

func (u *upstream) sendAs(argv [][]byte, r upReply) {
	u.w.WriteString("*" + strconv.Itoa(len(argv)) + "\r\n")
	for _, a := range argv {
		u.w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
		u.w.Write(a)
		u.w.WriteString("\r\n")
	}
	u.replies = append(u.replies, r)
}

// leaderWait bounds how long a command waits for a leader to dial: a
// little more than an election takes (1 to 2 s), so that a failover shows
// a follower's clients a pause rather than errors.
const leaderWait = 3 * time.Second

// dialUpstream opens the client's connection to the leader. While no
// leader is known or the last one does not answer (it died, and the group
// has not elected another yet), it tries again until leaderWait has
// passed. A command that had not reached the old leader then runs on the
// new one. (In cluster mode the proxy dials: proxySlot.)
func (c *Client) dialUpstream() error {
	deadline := time.Now().Add(leaderWait)
	for {
		u, err := c.openUpstream(c.srv.group().LeaderAddr())
		if err == nil {
			c.up = u
		}
		if err == nil || err == errUserNotOnLeader || time.Now().After(deadline) {
			return err
		}
		select {
		case <-c.srv.closed:
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openUpstream opens a connection of the client's to the leader at addr and
// gives it the client's state: password, protocol, database, name.
func (c *Client) openUpstream(addr string) (*upstream, error) {
	if addr == "" {
		return nil, errNoLeader
	}
	nc, err := c.srv.dialNode(addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	u := &upstream{nc: nc, addr: addr, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10), proto: 2}
	// The client's user on the leader, which checks what the client's
	// scripts call. A named user the leader lacks gets nothing from it
	// (the default user might let its scripts do more); a default user's
	// connection falls back on this node's requirepass.
	name := c.userName()
	authed := c.authPass != nil && u.authenticate(name, c.authPass)
	var setup [][][]byte
	switch pass := c.srv.config().RequirePass; {
	case !authed && name != acl.DefaultName:
		nc.Close()
		return nil, errUserNotOnLeader
	case !authed && pass != "":
		setup = append(setup, [][]byte{[]byte("AUTH"), []byte(pass)})
	}
	if c.proto != 2 {
		setup = append(setup, [][]byte{[]byte("HELLO"), []byte(strconv.Itoa(c.proto))})
		u.proto = c.proto
	}
	if c.db != 0 {
		setup = append(setup, [][]byte{[]byte("SELECT"), []byte(strconv.Itoa(c.db))})
	}
	if name := *c.name.Load(); name != "" {
		setup = append(setup, [][]byte{[]byte("CLIENT"), []byte("SETNAME"), []byte(name)})
	}
	if c.srv.clustered() {
		// One hop at most: a node that lost the slot answers MOVED, and
		// this node routes the command again (reroute), where proxying
		// it on could send it back here while the two disagree.
		setup = append(setup, [][]byte{[]byte("CLIENT"), []byte("PROXY"), []byte("OFF")})
	}
	for _, argv := range setup {
		u.send(argv)
	}
	u.replies = u.replies[:0]
	err = u.w.Flush()
	for range setup {
		if err == nil {
			u.buf, err = resp.ReadReply(u.r, u.buf[:0]) // its errors are not the client's
		}
	}
	if err != nil {
		nc.Close()
		return nil, errLeaderLost
	}
	return u, nil
}

type forwardError string

func (e forwardError) Error() string { return string(e) }

const (
	errNoLeader   = forwardError("no leader is known for the shard; try again shortly")
	errLeaderLost = forwardError("the connection to the leader was lost")
	// ACL users are per node: see docs/operations.md.
	errUserNotOnLeader = forwardError("this user cannot authenticate on the leader of the shard; give every node the same aclfile")
)

// errOutcomeUnknown answers a write whose leader was lost before its reply.
const errOutcomeUnknown = "ERR the connection to the leader was lost before the reply: the write may or may not have been applied"

// drainUpstream reads the replies of the forwarded commands, appending them
// to the client's output if keep (otherwise they are not the client's, and
// dropped). A failed leader connection ends the client's connection.
// Commands run here while a reply is relayed (spliceExec) find it a no-op.
func (c *Client) drainUpstream(keep bool) bool {
	u := c.up
	if u == nil || len(u.replies) == 0 || c.draining {
		return true
	}
	c.draining = true
	defer func() {
		c.draining = false
		c.closeRerouted()
	}()
	for len(u.replies) > 0 {
		if r := u.replies[0]; r.lost {
			u.replies = u.replies[1:]
			if keep {
				c.out.Error(errOutcomeUnknown)
			}
			continue
		}
		err := u.w.Flush()
		if err == nil {
			u.buf, err = resp.ReadReply(u.r, u.buf[:0])
		}
		if err != nil {
			if !keep || !c.resend() {
				return c.upstreamFailed()
			}
			if u = c.up; u == nil {
				return true
			}
			continue
		}
		if len(u.buf) > 0 && u.buf[0] == '>' {
			if keep {
				c.out.Raw(u.buf) // a push message, not a reply
			}
			continue
		}
		r := u.replies[0]
		u.replies = u.replies[1:]
		switch {
		case !keep || r.drop:
		case r.again != nil && c.srv.clustered() && isMoved(u.buf):
			// The node lost the slot's shard, and did not run it.
			c.reroute(r, movedSlot(u.buf))
		default:
			c.relay(r, u.buf)
		}
	}
	u.replies = nil // don't keep the consumed array growing
	if cap(u.buf) > 1<<20 {
		u.buf = nil
	}
	return true
}

// resend moves the client to a new leader after its connection to the old
// one failed before the replies still to come (see the top of this file).
// In cluster mode each read goes, in its turn, to its slot's leader as
// this node now knows it (reroute): the dead node's shards may each elect
// a leader elsewhere. It reports false where the old leader held a MULTI
// for the client, or no leader answers within leaderWait: upstreamFailed
// then ends it.
func (c *Client) resend() bool {
	if c.upMulti || c.execing {
		return false
	}
	pending := c.up.replies
	c.up.replies = nil
	reads := false
	for i, r := range pending {
		if r.pub != nil { // a PUBLISH: its count will not come
			c.srv.origins.drop(r.pub)
			pending[i].pub = nil
		}
		reads = reads || r.read
	}
	c.closeUpstream()
	if c.upWatched { // the EXEC those WATCHes guard aborts, as if the keys changed
		c.upWatched, c.watchLost = false, true
	}
	switch {
	case c.srv.clustered():
		for _, r := range pending {
			if r.drop {
				continue
			}
			if r.read {
				c.reroute(r, slotOf(r.again))
			} else {
				c.out.Error(errOutcomeUnknown)
			}
		}
		return true
	case !reads:
		for range pending {
			c.out.Error(errOutcomeUnknown)
		}
		return true
	}
	if c.dialUpstream() != nil {
		c.up = &upstream{replies: pending} // for upstreamFailed's errors
		return false
	}
	for _, r := range pending {
		if !r.read {
			c.up.replies = append(c.up.replies, upReply{lost: true})
			continue
		}
		c.up.sendAs(r.again, upReply{read: true, again: r.again})
	}
	return true
}

func (c *Client) upstreamFailed() bool {
	for _, r := range c.up.replies {
		if !r.drop {
			c.out.Error("ERR " + errLeaderLost.Error())
		}
	}
	c.closeUpstream()
	if c.execing {
		c.endExec() // the errors go out
	}
	c.closing = true
	return false
}

// closeUpstream closes the connection to the leader, forgetting the
// PUBLISHes whose replies were still to come.
func (c *Client) closeUpstream() {
	if c.up != nil {
		dropWaits(c.srv.origins, c.up.replies)
		if c.up.nc != nil {
			c.up.nc.Close()
		}
		c.up = nil
	}
	dropWaits(c.srv.origins, c.upSlots)
	c.upSlots = nil
}
