package server

import (
	"strconv"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/shard"
)

// Routing in cluster mode: Redis Cluster's rules (getNodeByQuery) decide
// which shard a command runs in, or answer CROSSSLOT, MOVED or CLUSTERDOWN;
// a client that is not cluster-aware may have its commands proxied instead
// (proxy.go).

const errCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot"

// route picks the shard of a command in cluster mode, by Redis Cluster's
// rule (getNodeByQuery): every key of the command in one slot. Inside
// MULTI, each queued command is checked on its own, and EXEC checks that
// all of them share one slot, and the watched keys their shard. It answers the error
// and reports false if the command may not run.
func (c *Client) route(cmd, kind *command.Command, argv [][]byte) bool {
	if cmd.Name == "exec" {
		if c.topologyRefuses(kind) {
			c.endMulti()
			return false
		}
		if c.multi && !c.multiErr && c.txCross {
			c.endMulti()
			c.rejected = kind
			c.reply().Error(errCrossSlot)
			return false
		}
		c.sh = c.srv.keylessShard()
		if c.multi && !c.multiErr && c.watchLost {
			c.endMulti()
			c.reply().NullArray() // its proxied WATCHes' node stopped leading: as if a key changed
			return false
		}
		if c.proxy && c.multi && !c.multiErr && c.execElsewhere(kind) {
			return false
		}
		if c.txSlot >= 0 {
			if !c.srv.leadsSlot(c.txSlot) { // it moved since the commands were queued
				c.endMulti()
				c.redirect(c.txSlot)
				return false
			}
			c.sh = c.srv.slotShard[c.txSlot]
		}
		if len(c.watching) > 0 && c.watchShard != c.sh {
			if c.txSlot < 0 {
				c.sh = c.watchShard // the transaction has no keys: run it beside the watches
			} else {
				c.endMulti()
				c.reply().Error(errCrossSlot)
				return false
			}
		}
		return true
	}
	slot := -1
	keys := kind.SlotKeys(argv)
	shardChannels := shardPubSub[cmd.Name]
	if shardChannels { // routed by their channels' slot, as Redis Cluster does
		keys = argv[1:]
		if cmd.Name == "spublish" {
			keys = argv[1:2]
		}
	}
	for _, k := range keys {
		switch s := int(cluster.KeySlot(k)); {
		case slot == -1:
			slot = s
		case s != slot:
			c.rejected = kind
			c.rejectInMulti()
			c.reply().Error(errCrossSlot)
			return false
		}
	}
	if (slot >= 0 || kind.IsWrite() || cmd.Flags&command.Script != 0) && c.topologyRefuses(kind) {
		return false
	}
	if c.multi && !isTxControl(cmd.Name) {
		switch {
		case slot < 0:
		case !c.srv.leadsSlot(slot) && !c.proxy: // a proxying client's EXEC goes there (execElsewhere)
			c.rejected = kind
			c.rejectInMulti()
			c.redirect(slot)
			return false
		case c.txSlot < 0:
			c.txSlot = slot
		case slot != c.txSlot:
			c.txCross = true // Redis answers CROSSSLOT at EXEC
		}
		return true
	}
	if cmd.Name == "watch" && (len(c.watching) > 0 && c.srv.slotShard[slot] != c.watchShard ||
		c.upWatched && c.srv.slotIndex[slot] != c.srv.slotIndex[c.upWatchSlot]) {
		// The watches of one EXEC are checked by one shard's apply loop.
		c.reply().Error(errCrossSlot)
		return false
	}
	if slot < 0 {
		c.sh = c.srv.keylessShard()
		return true
	}
	// Shard channels' messages stay on the node (SPUBLISH is not logged),
	// so publishers and subscribers meet at the shard's leader. A READONLY
	// client reads from a replica here, if the node holds one.
	sh := c.srv.slotShard[slot]
	if sh == nil || !sh.IsLeader() && (shardChannels || !(c.readonly && readsOnly(cmd, kind))) {
		if c.proxy && !shardChannels {
			if cmd.Name == "watch" && len(c.watching) > 0 {
				c.reply().Error(errCrossSlot) // watches here and there: no one shard checks them all
				return false
			}
			runHere := c.proxySlot(slot, kind, argv)
			if cmd.Name == "watch" && c.upWatched {
				c.upWatchSlot = slot
			}
			return runHere
		}
		c.rejected = kind
		c.redirect(slot)
		return false
	}
	c.sh = sh
	return true
}

// topologyRefuses answers CLUSTERDOWN to a command of the key space while
// the cluster has not committed this node's topology (awaitTopology).
func (c *Client) topologyRefuses(kind *command.Command) bool {
	if c.srv.awaitTopology() {
		return false
	}
	c.rejected = kind
	c.rejectInMulti()
	c.reply().Error("CLUSTERDOWN The cluster is down")
	return true
}

// awaitTopology reports whether the cluster has committed this node's
// topology, waiting for it up to leaderWait: a new cluster's first
// commands wait for its metadata group (publishTopology).
func (s *Server) awaitTopology() bool {
	for deadline := time.Now().Add(leaderWait); !s.topoAgreed.Load(); {
		if s.topoDiffers.Load() || !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-s.closed:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// leadsSlot reports whether this node leads the shard of slot.
func (s *Server) leadsSlot(slot int) bool {
	sh := s.slotShard[slot]
	return sh != nil && sh.IsLeader()
}

// shardPubSub are the commands of shard channels (Redis 7's sharded pub/sub).
var shardPubSub = map[string]bool{"ssubscribe": true, "sunsubscribe": true, "spublish": true}

// redirect answers MOVED to the node that leads slot's shard, as Redis
// Cluster answers for a slot another master serves, or CLUSTERDOWN if the
// shard still has no leader after leaderWait (a lost majority: a shard
// without a majority never takes a write).
func (c *Client) redirect(slot int) { c.reply().Error(c.moved(slot)) }

// moved is redirect's reply.
func (c *Client) moved(slot int) string {
	i := c.srv.slotIndex[slot]
	addr := c.movedAddr(i)
	// During an election, wait for its outcome (leaderWait): a failover is
	// then a pause and a MOVED, not an error, for cluster clients.
	for deadline := time.Now().Add(leaderWait); addr == "" && time.Now().Before(deadline); addr = c.movedAddr(i) {
		select {
		case <-c.srv.closed:
			deadline = time.Time{}
		case <-time.After(10 * time.Millisecond):
		}
	}
	if addr == "" {
		return "CLUSTERDOWN The cluster is down"
	}
	return "MOVED " + strconv.Itoa(slot) + " " + addr
}

// readsOnly reports whether a command only reads, so that a READONLY
// client may run it on a replica.
func readsOnly(cmd, kind *command.Command) bool {
	if cmd.Flags&command.Script != 0 { // EVAL may write, EVAL_RO may not
		return cmd.Flags&command.ReadOnly != 0
	}
	return !kind.IsWrite() && cmd.Flags&(command.Conn|command.Blocking) == 0 && kind.Flags&command.AllowBusy == 0
}

// keylessShard is where a command without keys runs (EVAL with none,
// PUBLISH in a cluster, MULTI with no keys): the first shard this node
// leads, or the first shard.
func (s *Server) keylessShard() *shard.Shard {
	for _, sh := range s.shards {
		if sh.IsLeader() {
			return sh
		}
	}
	return s.shards[0]
}
