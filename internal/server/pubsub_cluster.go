package server

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Pub/sub in a cluster. PUBLISH goes through the log (a KindPublish record,
// or inside its EXEC's record) and every node delivers the message to its
// own subscribers when it applies it, so a message published on any node
// reaches subscribers on every node. As in Redis Cluster, PUBLISH answers
// the number of subscribers of the node the client is connected to that
// got the message, and PUBSUB answers about that node's subscriptions.
//
// A node that does not lead sends its client's PUBLISH to the leader as
// RAFT PUBLISH origin channel message, where origin names the node and the
// request; when this node applies the record it learns how many of its
// subscribers got the message (shard.Config.Published) and answers that,
// so a message to oneself also comes before the reply, as in Redis.
//
// Inside a MULTI that the leader holds for a client of this node, the
// subscription commands, SPUBLISH and PUBSUB are about this node: the
// leader queues a stand-in (PING) in their place, and when EXEC's reply
// comes back this node runs them in their places (spliceExec). A queued
// PUBLISH goes as RAFT PUBLISH, whose place gets this node's count.

// A node holds the shards of some of the cluster's nodes only: the message of
// a PUBLISH goes through one shard's log, so the nodes that hold no replica
// of that shard get it from its leader over the Raft connections instead
// (shard.Host.Relay), as Redis Cluster's nodes get it over the cluster bus.

// relay delivers the events of each shard's committed batches to this
// node's subscribers, and relays the messages PUBLISHed through a shard
// this node leads to the nodes without a replica of it.
type relay struct {
	hub *Hub
	to  atomic.Pointer[map[*store.Store]relayTarget] // set once the shards are open
}

// relayTarget is a shard and the nodes that hold no replica of it.
type relayTarget struct {
	host    *shard.Host
	sh      *shard.Shard
	lacking []uint64
}

// start relays the shards' messages from now on (only in a cluster of
// several nodes where some hold not every shard).
func (r *relay) start(host *shard.Host, topo *cluster.Topology, shards []*shard.Shard) {
	if host == nil {
		return
	}
	to := map[*store.Store]relayTarget{}
	for _, sh := range shards {
		t := relayTarget{host: host, sh: sh}
		for _, n := range topo.Nodes {
			if !topo.Shards[shardNumber(sh)].Hosts(n.ID) {
				t.lacking = append(t.lacking, n.ID)
			}
		}
		if t.lacking != nil {
			to[sh.Store()] = t
		}
	}
	r.to.Store(&to)
}

// events is st's listener of committed events (store.SetNotify).
func (r *relay) events(st *store.Store) store.NotifyListener {
	return func(flags store.NotifyFlags, events []store.Event) {
		r.hub.keyspaceEvents(flags, events)
		to := r.to.Load()
		if to == nil {
			return
		}
		t, ok := (*to)[st]
		if !ok || !t.sh.IsLeader() {
			return
		}
		for _, e := range events {
			if e.Publish {
				t.host.Relay(t.lacking, e.Key, []byte(e.Name))
			}
		}
	}
}

// deliver is a message another node relayed: this node's subscribers get it.
func (r *relay) deliver(channel, message []byte) { r.hub.publish(kindChannel, channel, message) }

// origins are the PUBLISHes this node's clients sent through the leader,
// waiting for this node to apply them.
type origins struct {
	node uint64
	mu   sync.Mutex
	next uint64 // starts at random: a record of an earlier run is never taken for a new one
	wait map[uint64]*pubWait
}

// pubWait is one PUBLISH sent through the leader.
type pubWait struct {
	seq    uint64
	origin []byte        // "node:seq", RAFT PUBLISH's argument
	n      int           // this node's receivers, once done is closed
	done   chan struct{} // closed when this node applied the record
}

// pubWaitLimit bounds the wait for this node to apply a PUBLISH the leader
// committed: a node cut off from the leader answers 0 after it.
const pubWaitLimit = 5 * time.Second

func newOrigins(node uint64) *origins {
	return &origins{node: node, next: rand.Uint64(), wait: map[uint64]*pubWait{}}
}

// add registers a PUBLISH about to be sent to the leader.
func (o *origins) add() *pubWait {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	w := &pubWait{seq: o.next, done: make(chan struct{})}
	w.origin = strconv.AppendUint(append(strconv.AppendUint(nil, o.node, 10), ':'), o.next, 10)
	o.wait[o.next] = w
	return w
}

// published is shard.Config.Published: a PUBLISH with origin was applied
// here and n of this node's subscribers got it.
func (o *origins) published(origin []byte, n int) {
	node, seq, ok := bytes.Cut(origin, []byte{':'})
	if !ok || string(node) != strconv.FormatUint(o.node, 10) {
		return
	}
	id, err := strconv.ParseUint(string(seq), 10, 64)
	if err != nil {
		return
	}
	o.mu.Lock()
	w := o.wait[id]
	delete(o.wait, id)
	o.mu.Unlock()
	if w != nil {
		w.n = n
		close(w.done)
	}
}

// drop forgets a PUBLISH whose reply will not be needed (the leader
// refused it, the client went away).
func (o *origins) drop(w *pubWait) {
	o.mu.Lock()
	delete(o.wait, w.seq)
	o.mu.Unlock()
}

// count waits until this node applied w's record and returns how many of
// its subscribers got the message (0 if it did not apply it in time).
func (o *origins) count(w *pubWait) int {
	t := time.NewTimer(pubWaitLimit)
	defer t.Stop()
	select {
	case <-w.done:
		return w.n
	case <-t.C:
		o.drop(w)
		return 0
	}
}

// publish is PUBLISH, and RAFT PUBLISH (origin set) on the leader, outside
// EXEC (spliceConnReplies answers those inside).
func (c *Client) publish(channel, message, origin []byte) {
	if c.sh.Lone() {
		c.publishHere(channel, message)
		return
	}
	if c.sub != nil {
		// A message to oneself goes out when this node applies the record:
		// the replies before it must be in the queue by then.
		c.reply()
		c.orderedOutput()
	}
	// In cluster mode c.sh is a shard this node leads, if any: every node
	// holds every shard, so any shard's log reaches every node.
	if origin == nil && (c.up != nil || !c.sh.IsLeader()) {
		w := c.srv.origins.add()
		c.forwardAs([][]byte{[]byte("RAFT"), []byte("PUBLISH"), w.origin, channel, message}, upReply{pub: w})
		return
	}
	args := [][]byte{channel, message}
	if origin != nil {
		args = append(args, origin)
	}
	c.propose(shard.Record{Kind: shard.KindPublish, Cmds: [][][]byte{args}})
}

// publishHere is PUBLISH on a lone node: the message goes to this node's
// subscribers at once, outside the log.
func (c *Client) publishHere(channel, message []byte) {
	w := c.reply()
	c.orderedOutput() // a message to oneself follows the replies before it
	if !c.execing {
		c.srv.hub.awaitInput(kindChannel, channel, c)
	}
	c.holdForExec()
	w.Int(int64(c.srv.hub.Publish(channel, message)))
}

// hasPublish reports whether queued commands hold a PUBLISH.
func hasPublish(queued [][][]byte) bool {
	for _, q := range queued {
		if _, _, _, ok := command.PublishArgs(q); ok {
			return true
		}
	}
	return false
}

// runsHere lists the commands that, queued in a MULTI the leader holds,
// still run on this node at EXEC: they are about this node's connection
// and subscribers.
var runsHere = map[string]bool{
	"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "spublish": true, "pubsub": true,
}

// upReply says what to do with the leader's reply to one forwarded
// command; the zero value relays it.
type upReply struct {
	pub    *pubWait // a PUBLISH: answer this node's count instead (origins.count)
	here   [][]byte // inside MULTI: a command this node runs at EXEC, in its stand-in's place
	queued bool     // inside MULTI: a QUEUED reply gives the command a place in EXEC's reply
	exec   bool     // EXEC or DISCARD: the end of the MULTI (spliceExec)
	// read marks a read outside MULTI, sent again if the leader is lost
	// before its reply (resend); again is the command kept for that, and
	// in cluster mode that of every proxied command, which a node that
	// lost the slot answers MOVED without running it (reroute). lost
	// marks, on the new leader's connection, a command whose leader was
	// lost before its reply, which answers so in its place.
	read  bool
	again [][]byte
	lost  bool
	// drop marks a reply that is not the client's: MULTI's and the
	// commands' of a transaction proxied at EXEC (execElsewhere).
	drop bool
}

// inMulti prepares a command forwarded inside MULTI: the argv to send (a
// stand-in for a command that runs here, RAFT PUBLISH for a PUBLISH) and
// what to do with its reply. A command with bad arguments goes as it is,
// for the leader to refuse it and fail the transaction.
func (c *Client) inMulti(cmd *command.Command, argv [][]byte) ([][]byte, upReply) {
	r := upReply{queued: true}
	if cmd == nil {
		return argv, r
	}
	if ch, msg, _, ok := command.PublishArgs(argv); ok && cmd.Name == "publish" {
		r.pub = c.srv.origins.add()
		return [][]byte{[]byte("RAFT"), []byte("PUBLISH"), r.pub.origin, ch, msg}, r
	}
	if _, errReply := checkArgs(cmd, argv); runsHere[cmd.Name] && errReply == "" {
		r.here = argv
		return [][]byte{[]byte("PING")}, r
	}
	return argv, r
}

// relay appends the leader's reply to a forwarded command to the output.
func (c *Client) relay(r upReply, reply []byte) {
	isErr := len(reply) > 0 && reply[0] == '-'
	switch {
	case r.queued:
		if string(reply) == "+QUEUED\r\n" {
			c.upSlots = append(c.upSlots, r)
		} else if r.pub != nil {
			c.srv.origins.drop(r.pub)
		}
		c.out.Raw(reply)
	case r.pub != nil && !isErr:
		c.out.Int(int64(c.srv.origins.count(r.pub)))
	case r.pub != nil:
		c.srv.origins.drop(r.pub)
		c.out.Raw(reply)
	case r.exec:
		c.spliceExec(reply)
	default:
		c.out.Raw(reply)
	}
}

// spliceExec appends the reply of EXEC (or DISCARD) that ends a MULTI the
// leader held, with the commands queued to run here run in their places.
func (c *Client) spliceExec(reply []byte) {
	slots := c.upSlots
	c.upSlots = nil
	c.execing = true
	defer c.endExec()
	var elems [][]byte
	if anyHere(slots) {
		elems = splitArray(reply)
	}
	if elems == nil || len(elems) != len(slots) {
		// Aborted (or nothing runs here): the reply stands.
		dropWaits(c.srv.origins, slots)
		c.out.Raw(reply)
		return
	}
	c.out.ArrayLen(len(elems))
	for i, e := range elems {
		s := slots[i]
		switch {
		case s.pub != nil && e[0] != '-':
			c.out.Int(int64(c.srv.origins.count(s.pub)))
		case s.pub != nil:
			c.srv.origins.drop(s.pub)
			c.out.Raw(e)
		case s.here != nil:
			connHandlerOf(command.Lookup(s.here[0]))(c, s.here)
		default:
			c.out.Raw(e)
		}
	}
}

func anyHere(slots []upReply) bool {
	for _, s := range slots {
		if s.pub != nil || s.here != nil {
			return true
		}
	}
	return false
}

func dropWaits(o *origins, rs []upReply) {
	for _, r := range rs {
		if r.pub != nil {
			o.drop(r.pub)
		}
	}
}

// splitArray returns the elements of an array reply, each a whole reply,
// or nil if reply is not an array (an error, a null array).
func splitArray(reply []byte) [][]byte {
	if len(reply) == 0 || reply[0] != '*' {
		return nil
	}
	end := bytes.IndexByte(reply, '\n')
	n, err := strconv.Atoi(string(bytes.TrimSuffix(reply[1:end], []byte("\r"))))
	if err != nil || n < 0 {
		return nil
	}
	r := bufio.NewReader(bytes.NewReader(reply[end+1:]))
	elems := make([][]byte, 0, n)
	for range n {
		e, err := resp.ReadReply(r, nil)
		if err != nil {
			return nil
		}
		elems = append(elems, e)
	}
	return elems
}
