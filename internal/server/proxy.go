package server

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
)

// The proxy, in cluster mode: a client that is not cluster-aware
// (cluster-proxy, CLIENT PROXY ON) has the commands of slots another node
// leads run there, over a connection of the client's own to that node
// (forward.go's upstream), the replies relayed in order. A failover is a
// pause for it: the proxy waits for the shard's new leader, runs a read in
// flight again there, and sends a command the old leader answered MOVED
// to the new one.

// proxySlot runs a command of a slot this node does not lead on the slot's
// leader, for a client that is not cluster-aware (cluster-proxy, CLIENT
// PROXY ON): over the client's connection to that node (forward.go), its
// reply coming back in order. During an election, or while the known
// leader does not answer (it died, and its shard has not elected another
// yet), it looks again until leaderWait has passed, so that a failover is
// a pause for the client, as it is for a follower's clients outside
// cluster mode. It reports true if this node has meanwhile become the
// leader: the command then runs here. (A transaction goes at EXEC:
// execElsewhere.)
func (c *Client) proxySlot(slot int, kind *command.Command, argv [][]byte) (runHere bool) {
	err := c.awaitLeader(slot, true, func(addr string) error {
		if addr == "" {
			return errNoLeader
		}
		if err := c.useUpstream(addr); err != nil {
			return err
		}
		c.forward(argv)
		c.replyMark = markNone // the node that runs it counts it
		return nil
	})
	if err == errLedHere {
		c.sh = c.srv.slotShard[slot]
		return true
	}
	if err != nil {
		c.rejected = kind
		c.reply().Error(proxyError(err))
	}
	return false
}

// execElsewhere, for a proxying client, runs its transaction at the leader
// of the transaction's slot, or of its proxied WATCHes' when it has no
// keys, if that is another node: MULTI, the commands queued here and EXEC
// go over the client's connection there, and only EXEC's reply comes back.
// WATCHes made here and commands run there (or the other way round) get
// CROSSSLOT, as route gives them on one node. It reports whether it
// answered EXEC.
func (c *Client) execElsewhere(kind *command.Command) bool {
	slot := c.txSlot
	if slot < 0 && c.upWatched {
		slot = c.upWatchSlot
	}
	if slot < 0 || !c.upWatched && c.srv.leadsSlot(slot) {
		return false // all here
	}
	if len(c.watching) > 0 || c.upWatched && c.srv.slotIndex[slot] != c.srv.slotIndex[c.upWatchSlot] {
		c.endMulti()
		c.rejected = kind
		c.reply().Error(errCrossSlot)
		return true
	}
	queued, watched, lost := c.queued, c.upWatched, false
	c.upWatched = false // EXEC unwatches there
	c.endMulti()
	err := c.awaitLeader(slot, false, func(addr string) error {
		if addr == "" {
			return errNoLeader
		}
		if watched && (c.up == nil || c.up.addr != addr) {
			// The WATCHes are on a node that no longer leads.
			lost = true
			if c.up != nil {
				c.up.sendAs([][]byte{[]byte("UNWATCH")}, upReply{drop: true})
			}
			return nil
		}
		if err := c.useUpstream(addr); err != nil {
			return err
		}
		if !c.syncProto() {
			return errLeaderLost
		}
		c.up.sendAs([][]byte{[]byte("MULTI")}, upReply{drop: true})
		for _, argv := range queued {
			c.up.sendAs(argv, upReply{drop: true})
		}
		c.up.sendAs([][]byte{[]byte("EXEC")}, upReply{})
		c.replyMark = markNone // the node that runs it counts it
		return nil
	})
	switch {
	case err != nil:
		c.rejected = kind
		c.reply().Error(proxyError(err))
	case lost:
		c.reply().NullArray() // as if a watched key had changed
	}
	return true
}

const (
	errLedHere   = forwardError("led here")                                   // awaitLeader: this node leads the slot
	errWriteLost = forwardError("the write may or may not have been applied") // reroute: stop
)

// awaitLeader calls try with the address of the node that leads slot ("" if
// none is known) until it succeeds, it fails for good (a user the leader
// lacks, a write of unknown outcome), or leaderWait has passed (try's last
// error). If stopHere, it stops with errLedHere once this node leads the
// slot; otherwise try gets this node's address then.
func (c *Client) awaitLeader(slot int, stopHere bool, try func(addr string) error) error {
	i := c.srv.slotIndex[slot]
	deadline := time.Now().Add(leaderWait)
	for {
		if stopHere && c.srv.leadsSlot(slot) {
			return errLedHere
		}
		err := try(c.srv.leaderAddr(i))
		if err == nil || err == errUserNotOnLeader || err == errWriteLost || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-c.srv.closed:
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// proxyError is the reply to a command the proxy could not deliver.
func proxyError(err error) string {
	switch err {
	case errNoLeader:
		return "CLUSTERDOWN The cluster is down"
	case errUserNotOnLeader:
		return "NOPERM " + err.Error()
	}
	return "TRYAGAIN " + err.Error()
}

// proxyTo runs a command on the node at addr (the metadata group's leader,
// for ACL changes) over the client's connection to it.
func (c *Client) proxyTo(addr string, argv [][]byte) {
	if err := c.useUpstream(addr); err != nil {
		c.reply().Error(proxyError(err))
		return
	}
	c.forward(argv)
	c.replyMark = markNone // the node that runs it counts it
}

// useUpstream makes the client's connection to the node at addr the one
// its proxied commands go over, after the replies still to come on the
// one it had.
func (c *Client) useUpstream(addr string) error {
	if c.up != nil && c.up.addr == addr {
		return nil
	}
	if c.up != nil {
		c.drainUpstream(true)
		c.closeUpstream()
		if c.upWatched { // the EXEC they guard aborts, as if a key had changed
			c.upWatched, c.watchLost = false, true
		}
	}
	u, err := c.openUpstream(addr)
	if err == nil {
		c.up = u
	}
	return err
}

// reroute runs a proxied command again at its slot's leader, its reply in
// its turn among the client's: a read whose node died before the reply
// (resend), or a command that node answered MOVED without running (its
// shard's leadership had moved). It waits for the leader as proxySlot
// does; that may now be this node, which serves it as it serves any
// client. It goes over a connection of its own (c.rerouted, closed once
// the replies waited for are in), as the client's other proxied commands
// may still be waiting on c.up. A write whose connection fails once it went out
// answers that its outcome is unknown.
func (c *Client) reroute(r upReply, slot int) {
	if slot < 0 {
		c.out.Error("TRYAGAIN " + errLeaderLost.Error())
		return
	}
	err := c.awaitLeader(slot, false, func(addr string) error {
		if addr == "" {
			return errNoLeader
		}
		reply, sent, err := c.runAt(addr, r.again)
		switch {
		case err != nil && sent && !r.read:
			return errWriteLost
		case err != nil:
			return err
		case isMoved(reply):
			return errNoLeader // it moved again: look again
		}
		c.out.Raw(reply)
		return nil
	})
	switch err {
	case nil:
	case errWriteLost:
		c.out.Error(errOutcomeUnknown)
	default:
		c.out.Error(proxyError(err))
	}
}

// runAt sends argv to the node at addr over the client's rerouting
// connection there and returns the reply (the push messages before it are
// the client's, and go to its output). sent reports whether the command
// may have gone out before a failure.
func (c *Client) runAt(addr string, argv [][]byte) (reply []byte, sent bool, err error) {
	u := c.rerouted[addr]
	if u == nil {
		if u, err = c.openUpstream(addr); err != nil {
			return nil, false, err
		}
		if c.rerouted == nil {
			c.rerouted = map[string]*upstream{}
		}
		c.rerouted[addr] = u
	}
	u.send(argv)
	u.replies = u.replies[:0]
	for err = u.w.Flush(); err == nil; {
		if u.buf, err = resp.ReadReply(u.r, u.buf[:0]); err == nil {
			if len(u.buf) == 0 || u.buf[0] != '>' {
				return u.buf, true, nil
			}
			c.out.Raw(u.buf)
		}
	}
	u.nc.Close()
	delete(c.rerouted, addr)
	return nil, true, errLeaderLost
}

// closeRerouted closes the connections reroute opened.
func (c *Client) closeRerouted() {
	for addr, u := range c.rerouted {
		u.nc.Close()
		delete(c.rerouted, addr)
	}
}

// isMoved reports whether reply is a MOVED redirection.
func isMoved(reply []byte) bool { return bytes.HasPrefix(reply, []byte("-MOVED ")) }

// movedSlot is the slot of a MOVED reply, -1 if it has none.
func movedSlot(reply []byte) int {
	f := bytes.Fields(reply[1:])
	if len(f) < 2 {
		return -1
	}
	slot, err := strconv.Atoi(string(f[1]))
	if err != nil || slot < 0 || slot >= cluster.SlotCount {
		return -1
	}
	return slot
}

// slotOf is the slot of a command's first key, -1 if it has none.
func slotOf(argv [][]byte) int {
	kind := kindOf(argv)
	if kind == nil {
		return -1
	}
	keys := kind.SlotKeys(argv)
	if len(keys) == 0 {
		return -1
	}
	return int(cluster.KeySlot(keys[0]))
}

// lostSlot answers, in cluster mode, a command whose shard this node
// stopped leading after it routed it here (a leadership transfer, or a
// leader cut off from its majority), as Redis Cluster answers a command
// of a slot that moved: MOVED to the new leader or, for a proxying client
// and a command that may run again (rerun), the command run there
// (reroute). It reports false where err is another error, or argv has no
// key: err's reply stands.
func (c *Client) lostSlot(err error, argv [][]byte, rerun bool) bool {
	var notLeader *shard.NotLeaderError
	if !c.srv.clustered() || !errors.As(err, &notLeader) {
		return false
	}
	slot := slotOf(argv)
	switch {
	case slot < 0:
		return false
	case c.proxy && rerun:
		kind := kindOf(argv) // a read is sent again if its connection fails too
		c.reroute(upReply{again: argv, read: kind != nil && readsOnly(command.Lookup(argv[0]), kind)}, slot)
	default:
		c.out.Error(c.moved(slot))
	}
	return true
}

// redirectRefused answers a write its shard refused because this node
// stopped leading it (lostSlot), by its record: a command may run again
// elsewhere, a transaction gets MOVED (its client must go there).
func (c *Client) redirectRefused(p *shard.Proposal) bool {
	if p.Err == nil {
		return false
	}
	switch p.Rec.Kind {
	case shard.KindCommand:
		return len(p.Rec.Cmds) == 1 && c.lostSlot(p.Err, p.Rec.Cmds[0], true)
	case shard.KindExec:
		for _, argv := range p.Rec.Cmds {
			if slotOf(argv) >= 0 {
				return c.lostSlot(p.Err, argv, false)
			}
		}
	}
	return false
}
