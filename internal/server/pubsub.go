package server

import (
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"basalt/internal/command"
	"basalt/internal/glob"
	"basalt/internal/resp"
)

// Pub/sub. Nothing here touches the key space, and on a lone node nothing
// goes to the log: PUBLISH changes no data, so it is not a record there (in
// a cluster it is: see pubsub_cluster.go). The hub maps channels, patterns and shard
// channels to their subscribers; Publish copies a message into the output
// queue of each receiver and never waits for a socket.
//
// Output of a subscribed client. A client that subscribes once gets an
// output queue (subscriber) for the rest of its life. Its own replies still
// build up in Client.out; at flush time (and before anything that must be
// ordered against messages) they are appended to the queue, which is the
// single ordered stream of bytes for the socket. Messages are appended to
// the same queue by publishers, always whole, so a message never lands in
// the middle of a reply. The queue is written by whichever comes first:
// the client's goroutine at flush, or the subscriber's writer goroutine
// when a message arrives while the client is idle; wmu keeps one writer at
// a time, so bytes leave in queue order.
//
// A slow subscriber cannot slow the publisher: the queue is bounded by
// client-output-buffer-limit's pubsub class (32mb hard, 8mb soft for 60 s
// by default, as Redis). A client over the limit is disconnected, as Redis
// does, and its queued messages are dropped.

// Kinds of subscription.
const (
	kindChannel = iota
	kindPattern
	kindShard
	numKinds
)

// kindNames holds each kind's subscribe and unsubscribe confirmations and
// message type.
var kindNames = [numKinds]struct{ sub, unsub, msg string }{
	{"subscribe", "unsubscribe", "message"},
	{"psubscribe", "punsubscribe", "pmessage"},
	{"ssubscribe", "sunsubscribe", "smessage"},
}

// BufferLimit is one class of client-output-buffer-limit: a client whose
// output exceeds Hard bytes, or Soft bytes for Seconds in a row, is
// disconnected. Zero turns a limit off.
type BufferLimit struct {
	Hard, Soft, Seconds int64
}

// Hub holds the subscriptions of all clients of this server.
type Hub struct {
	// mu orders everything: subscribing, unsubscribing and publishing take
	// it, so every subscriber sees the messages in the same order, and a
	// confirmation and the messages that follow it are queued in order.
	mu    sync.Mutex
	subs  [numKinds]map[string]*subSet
	limit BufferLimit // the pubsub class of client-output-buffer-limit
}

// subSet is the subscribers of one channel or pattern.
type subSet struct {
	name []byte
	subs map[*subscriber]struct{}
}

func newHub(limit BufferLimit) *Hub {
	h := &Hub{limit: limit}
	for k := range h.subs {
		h.subs[k] = map[string]*subSet{}
	}
	return h
}

// SetLimit changes the output buffer limit of subscribers.
func (h *Hub) SetLimit(l BufferLimit) {
	h.mu.Lock()
	h.limit = l
	h.mu.Unlock()
}

// Publish delivers message to the subscribers of channel and of the
// patterns that match it, and returns how many received it (a client
// subscribed through two patterns counts twice, as in Redis). It is
// PUBLISH on a lone node (in a cluster the message comes with a committed
// batch, see keyspaceEvents); it does not block on any subscriber.
func (h *Hub) Publish(channel, message []byte) int {
	return h.publish(kindChannel, channel, message)
}

// PublishShard is SPUBLISH: shard channels have their own name space and
// no patterns.
func (h *Hub) PublishShard(channel, message []byte) int {
	return h.publish(kindShard, channel, message)
}

func (h *Hub) publish(kind int, channel, message []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.publishLocked(kind, channel, message)
}

func (h *Hub) publishLocked(kind int, channel, message []byte) int {
	n := 0
	if set := h.subs[kind][string(channel)]; set != nil {
		var enc [2][]byte // the message in RESP2 and RESP3, made on first use
		for s := range set.subs {
			s.enqueue(encodeMessage(&enc, s.proto(), kindNames[kind].msg, nil, channel, message), h.limit)
			n++
		}
	}
	if kind != kindChannel {
		return n
	}
	for _, set := range h.subs[kindPattern] {
		if !glob.Match(set.name, channel, false) {
			continue
		}
		var enc [2][]byte
		for s := range set.subs {
			s.enqueue(encodeMessage(&enc, s.proto(), "pmessage", set.name, channel, message), h.limit)
			n++
		}
	}
	return n
}

// inputWait bounds how long a PUBLISH waits for subscribers to run the
// input they have, and awaitMax how many subscribers it looks at
// (awaitInput): on a loaded machine a goroutine may wait milliseconds for
// a thread, and each look costs a system call. A subscriber that was
// still busy when a wait ended is not waited for again for slowPause.
const (
	inputWait = 10 * time.Millisecond
	awaitMax  = 16
	slowPause = int64(time.Second)
)

// awaitInput lets the subscribers that a message on channel would reach,
// and that have input waiting, run it before the message is published:
// Redis serves connections in the order their data arrived, so an
// UNSUBSCRIBE written before another connection's PUBLISH leaves the
// channel first, even unconfirmed. Each connection has a goroutine of its
// own, and when the poller finds both readable Go may run the PUBLISH
// first. The wait ends when every subscriber is quiet (inputWaiter), or
// after inputWait. Only RESP2 subscribers are waited for (their input can
// only be pub/sub commands, PING, QUIT or RESET, which run at once, where
// a RESP3 subscriber may be running any command for a long time), and only
// when the message reaches at most awaitMax of them: a message to many is
// not delayed, and a subscriber that never stops sending delays at most
// one PUBLISH each slowPause.
func (h *Hub) awaitInput(kind int, channel []byte, publisher *Client) {
	var look []*inputWaiter
	now := nanotime()
	add := func(set *subSet) {
		for s := range set.subs {
			if s.c != publisher && s.proto() == 2 && !s.slow(now) && len(look) <= awaitMax {
				look = append(look, &inputWaiter{s: s})
			}
		}
	}
	h.mu.Lock()
	if set := h.subs[kind][string(channel)]; set != nil {
		add(set)
	}
	if kind == kindChannel {
		for _, set := range h.subs[kindPattern] {
			if glob.Match(set.name, channel, false) {
				add(set)
			}
		}
	}
	h.mu.Unlock()
	if len(look) > awaitMax {
		return
	}
	for i := 0; ; i++ {
		look = slices.DeleteFunc(look, (*inputWaiter).quiet)
		if len(look) == 0 {
			return
		}
		if t := nanotime(); t-now >= int64(inputWait) {
			for _, w := range look {
				w.s.slowAt.Store(t)
			}
			return
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond) // not a busy loop for the whole wait
		}
	}
}

// slow reports whether a PUBLISH waited in vain for the subscriber's
// input less than slowPause before now.
func (s *subscriber) slow(now int64) bool {
	at := s.slowAt.Load()
	return at != 0 && now-at < slowPause
}

// inputWaiter follows a subscriber for awaitInput. The subscriber is quiet
// when its goroutine waits for input with none buffered (readIdle) and
// its socket holds no unread bytes, and, if it held some when last looked
// at, a read has brought them in since (a goroutine that has just read
// them may not have cleared readIdle yet).
type inputWaiter struct {
	s         *subscriber
	readAfter uint64 // the client's read count when its socket last held bytes
	mustRead  bool
}

func (w *inputWaiter) quiet() bool {
	c := w.s.c
	reads := c.socketReads.Load()
	if w.s.inputPending() {
		w.readAfter, w.mustRead = reads, true
		return false
	}
	return c.readIdle.Load() && (!w.mustRead || c.socketReads.Load() > w.readAfter)
}

// receivers counts the subscribers that a message on channel would reach
// now, as Publish would count them (PUBLISH from a script).
func (h *Hub) receivers(channel []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	if set := h.subs[kindChannel][string(channel)]; set != nil {
		n = len(set.subs)
	}
	for _, set := range h.subs[kindPattern] {
		if glob.Match(set.name, channel, false) {
			n += len(set.subs)
		}
	}
	return n
}

// encodeMessage returns the message for a client of protocol proto,
// encoding it once per protocol into enc.
func encodeMessage(enc *[2][]byte, proto int, typ string, pattern, channel, message []byte) []byte {
	i := min(proto, 3) - 2
	if enc[i] == nil {
		w := resp.NewWriter(proto)
		n := 3
		if pattern != nil {
			n = 4
		}
		w.PushLen(n)
		w.BulkString(typ)
		if pattern != nil {
			w.Bulk(pattern)
		}
		w.Bulk(channel)
		w.Bulk(message)
		enc[i] = w.Bytes()
	}
	return enc[i]
}

// subscriber is a client's subscriptions and its output queue.
type subscriber struct {
	c *Client
	// names are the client's subscriptions by kind. Only the client's
	// goroutine changes them, holding the hub's lock; other goroutines
	// read them under that lock.
	names [numKinds]map[string]struct{}
	// lost are shard channels the node stopped serving (dropShardChannels):
	// out of the hub already, and taken out of names by the client's
	// goroutine (forgetLostChannels), which hasLost wakes. Guarded by the
	// hub's lock.
	lost    map[string]struct{}
	hasLost atomic.Bool

	mu        sync.Mutex
	buf       []byte    // bytes waiting for the socket, in order
	spare     []byte    // the previous buf, reused
	inflight  int       // bytes being written now (still counted against the limit)
	softSince time.Time // when the queue went over the soft limit; zero if under
	dead      bool      // over the limit or closed: drop everything
	// held: nothing is written until EXEC's reply joins the queue at
	// heldAt (see holdForExec).
	held   bool
	heldAt int

	raw    syscall.RawConn // the client's socket, for inputPending; nil if none
	slowAt atomic.Int64    // when a PUBLISH last waited in vain for its input (awaitInput)

	wmu  sync.Mutex    // held while writing to the socket
	wake chan struct{} // a message is waiting (capacity 1)
	done chan struct{} // the client is gone: the writer stops
}

func (s *subscriber) proto() int {
	_, proto, _, _ := s.c.loadState()
	return proto
}

// count returns the subscription count Redis reports in confirmations:
// channels and patterns together, shard channels on their own.
func (s *subscriber) count(kind int) int {
	if kind == kindShard {
		return len(s.names[kindShard])
	}
	return len(s.names[kindChannel]) + len(s.names[kindPattern])
}

func (s *subscriber) total() int {
	return len(s.names[kindChannel]) + len(s.names[kindPattern]) + len(s.names[kindShard])
}

// enqueue appends b to the queue and wakes the writer; a client over the
// limit is disconnected instead.
func (s *subscriber) enqueue(b []byte, lim BufferLimit) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return
	}
	s.buf = append(s.buf, b...)
	if s.overLimit(lim) {
		s.dead, s.buf = true, nil
		s.recount()
		s.mu.Unlock()
		slog.Warn("client closed for overcoming of output buffer limits", "id", s.c.id, "addr", s.c.nc.RemoteAddr().String())
		s.c.killed.Store(true)
		s.c.nc.Close() // the client's goroutine sees the read fail and cleans up
		return
	}
	s.recount()
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// overLimit applies client-output-buffer-limit as Redis does: the hard
// limit at once, the soft one when exceeded continuously for its seconds.
func (s *subscriber) overLimit(lim BufferLimit) bool {
	size := int64(len(s.buf) + s.inflight)
	if lim.Hard > 0 && size >= lim.Hard {
		return true
	}
	if lim.Soft == 0 || size < lim.Soft {
		s.softSince = time.Time{}
		return false
	}
	now := time.Now()
	if s.softSince.IsZero() {
		s.softSince = now
		return false
	}
	return now.Sub(s.softSince) > time.Duration(lim.Seconds)*time.Second
}

// commit moves the client's buffered replies to the queue, so that what
// is published from now on follows them.
func (s *subscriber) commit(out *resp.Writer) {
	if out.Len() == 0 {
		return
	}
	s.mu.Lock()
	if !s.dead {
		s.buf = append(s.buf, out.Bytes()...)
		s.recount()
	}
	s.mu.Unlock()
	out.Reset()
	if cap(out.Buf) > 1<<20 {
		out.Buf = nil
	}
}

// drain writes the queue to the socket until it is empty; false when the
// connection is gone.
func (s *subscriber) drain() bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for {
		s.mu.Lock()
		if s.dead || len(s.buf) == 0 || s.held {
			dead := s.dead
			s.mu.Unlock()
			return !dead
		}
		b := s.buf
		s.buf, s.inflight = s.spare[:0], len(b)
		s.mu.Unlock()

		n, err := s.c.nc.Write(b)
		s.c.srv.Stats.NetOutput.Add(int64(n))

		s.mu.Lock()
		s.inflight = 0
		if cap(b) <= 1<<20 { // don't keep a huge buffer for an idle client
			s.spare = b[:0]
		} else {
			s.spare = nil
		}
		if err != nil {
			s.dead, s.buf = true, nil
		}
		s.recount()
		s.mu.Unlock()
		if err != nil {
			s.c.nc.Close()
			return false
		}
	}
}

// writeLoop writes messages that arrive while the client's goroutine is
// waiting for a command.
func (s *subscriber) writeLoop() {
	for {
		select {
		case <-s.wake:
			if !s.drain() {
				return
			}
		case <-s.done:
			return
		}
	}
}

// ---- the client's side ----

// subscribed reports whether the client is in Redis's pub/sub mode: it has
// at least one subscription of any kind.
func (c *Client) subscribed() bool { return c.sub != nil && c.sub.total() > 0 }

// flushQueued is flush for a client with an output queue.
func (c *Client) flushQueued() bool {
	c.sub.commit(c.out)
	c.flushTracking()
	return c.sub.drain()
}

// orderedOutput commits the buffered replies before something that must
// follow them on the socket (a confirmation, a message to oneself). Inside
// EXEC or with replies muted the buffer is not final yet and stays put.
// Confirmations are never muted (Client.pushing).
func (c *Client) orderedOutput() {
	muted := (c.replyOff || c.skipping) && !c.pushing
	if c.sub != nil && !c.execing && !muted {
		c.sub.commit(c.out)
	}
}

// holdForExec is for SUBSCRIBE and PUBLISH inside EXEC, whose reply is
// not in the queue yet: the messages that follow must not reach the socket
// before it. The queue stops being written until endExec puts the reply in
// place. Called with the hub's lock held, so no message is queued between.
func (c *Client) holdForExec() {
	if !c.execing || c.sub == nil {
		return
	}
	s := c.sub
	s.mu.Lock()
	if !s.held {
		s.held, s.heldAt = true, len(s.buf)
	}
	s.mu.Unlock()
}

// endExec runs when EXEC's reply is complete: if messages were held, the
// buffered replies go in before them and the queue is written again.
func (c *Client) endExec() {
	c.execing = false
	s := c.sub
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.held = false
	if s.dead || c.replyOff || c.skipping { // muted: the reply is dropped anyway
		return
	}
	s.buf = slices.Insert(s.buf, s.heldAt, c.out.Bytes()...)
	s.recount()
	c.out.Reset()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pubsubGate applies RESP2's pub/sub mode, where only (P|S)SUBSCRIBE,
// (P|S)UNSUBSCRIBE, PING, QUIT and RESET run; PING answers ["pong", arg].
// It reports whether it answered the command.
func (c *Client) pubsubGate(cmd *command.Command, argv [][]byte) bool {
	if c.proto != 2 || !c.subscribed() {
		return false
	}
	switch cmd.Name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "quit", "reset":
		return false
	case "ping":
		if len(argv) > 2 {
			return false // the usual arity error
		}
		w := c.reply()
		w.ArrayLen(2)
		w.BulkString("pong")
		if len(argv) == 2 {
			w.Bulk(argv[1])
		} else {
			w.BulkString("")
		}
		return true
	}
	c.rejected = refusedKind(cmd, argv)
	c.rejectInMulti()
	c.reply().Error("ERR Can't execute '" + *c.lastCmd.Load() + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return true
}

// ensureSub gives the client its subscriber and starts its writer.
func (c *Client) ensureSub() *subscriber {
	if c.sub == nil {
		s := &subscriber{c: c, wake: make(chan struct{}, 1), done: make(chan struct{}), raw: rawConn(c.nc)}
		for k := range s.names {
			s.names[k] = map[string]struct{}{}
		}
		h := c.srv.hub
		h.mu.Lock()
		c.sub = s // under the lock: CLIENT LIST reads it from other goroutines
		h.mu.Unlock()
		go s.writeLoop()
	}
	return c.sub
}

// confirm writes one (un)subscribe confirmation: [kind, name, count].
func confirm(w *resp.Writer, typ string, name []byte, count int) {
	w.PushLen(3)
	w.BulkString(typ)
	if name == nil {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
}

func (c *Client) subscribe(kind int, names [][]byte) {
	w := c.reply()
	c.pushing = true
	s := c.ensureSub()
	h := c.srv.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	c.holdForExec()
	for _, name := range names {
		if _, ok := s.names[kind][string(name)]; !ok {
			s.names[kind][string(name)] = struct{}{}
			set := h.subs[kind][string(name)]
			if set == nil {
				set = &subSet{name: slices.Clone(name), subs: map[*subscriber]struct{}{}}
				h.subs[kind][string(name)] = set
			}
			set.subs[s] = struct{}{}
		}
		confirm(w, kindNames[kind].sub, name, s.count(kind))
	}
	// Queued under the hub's lock: messages published from now on follow.
	c.orderedOutput()
}

// unsubscribe removes the named subscriptions, or all of the kind when
// names is empty, confirming each (or answering a nil name and 0 when
// there was none). notify false drops them silently (RESET, disconnect).
func (c *Client) unsubscribe(kind int, names [][]byte, notify bool) {
	var w *resp.Writer
	if notify {
		w = c.reply()
		c.pushing = true
	}
	s := c.sub
	h := c.srv.hub
	if s != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	if len(names) == 0 && s != nil {
		for name := range s.names[kind] {
			names = append(names, []byte(name))
		}
		slices.SortFunc(names, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	}
	if len(names) == 0 {
		if notify {
			count := 0
			if s != nil {
				count = s.count(kind)
			}
			confirm(w, kindNames[kind].unsub, nil, count)
		}
		return
	}
	for _, name := range names {
		count := 0
		if s != nil {
			if _, ok := s.names[kind][string(name)]; ok {
				delete(s.names[kind], string(name))
				// (A lost shard channel has no set: dropShardChannels.)
				if set := h.subs[kind][string(name)]; set != nil {
					delete(set.subs, s)
					if len(set.subs) == 0 {
						delete(h.subs[kind], string(name))
					}
				}
			}
			count = s.count(kind)
		}
		if notify {
			confirm(w, kindNames[kind].unsub, name, count)
		}
	}
}

// dropShardChannels unsubscribes every client from the shard channels
// whose slot the node no longer serves (keep reports the ones it does),
// telling each with an sunsubscribe message, as Redis does when a node
// loses a slot: the subscriber then subscribes again where the slot's new
// leader is, since SPUBLISH reaches only the subscribers of that node.
func (h *Hub) dropShardChannels(keep func(channel []byte) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, set := range h.subs[kindShard] {
		if keep(set.name) {
			continue
		}
		for s := range set.subs {
			if s.lost == nil {
				s.lost = map[string]struct{}{}
			}
			s.lost[name] = struct{}{}
			s.hasLost.Store(true)
			w := resp.NewWriter(s.proto())
			confirm(w, kindNames[kindShard].unsub, set.name, len(s.names[kindShard])-len(s.lost))
			s.enqueue(w.Bytes(), h.limit)
		}
		delete(h.subs[kindShard], name)
	}
}

// forgetLostChannels takes the shard channels dropShardChannels took from
// the hub out of the client's subscriptions.
func (c *Client) forgetLostChannels() {
	h, s := c.srv.hub, c.sub
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range s.lost {
		delete(s.names[kindShard], name)
	}
	s.lost = nil
	s.hasLost.Store(false)
}

// dropSubscriptions forgets every subscription without replies (RESET).
func (c *Client) dropSubscriptions() {
	if c.sub == nil {
		return
	}
	for k := range numKinds {
		c.unsubscribe(k, nil, false)
	}
}

// closeSub ends the subscriber when the client goes away.
func (c *Client) closeSub() {
	if c.sub == nil {
		return
	}
	c.dropSubscriptions()
	c.sub.mu.Lock()
	c.sub.dead, c.sub.buf = true, nil
	c.sub.recount()
	c.sub.mu.Unlock()
	close(c.sub.done)
}

// subCounts returns another client's subscription counts for CLIENT LIST.
func (s *Server) subCounts(c *Client) (n [numKinds]int) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if c.sub != nil {
		for k := range n {
			n[k] = len(c.sub.names[k])
		}
	}
	return n
}

// ---- commands ----

func cmdSubscribe(c *Client, argv [][]byte)    { c.subscribe(kindChannel, argv[1:]) }
func cmdPsubscribe(c *Client, argv [][]byte)   { c.subscribe(kindPattern, argv[1:]) }
func cmdUnsubscribe(c *Client, argv [][]byte)  { c.unsubscribeCmd(kindChannel, argv[1:]) }
func cmdPunsubscribe(c *Client, argv [][]byte) { c.unsubscribeCmd(kindPattern, argv[1:]) }
func cmdSunsubscribe(c *Client, argv [][]byte) { c.unsubscribeCmd(kindShard, argv[1:]) }

func (c *Client) unsubscribeCmd(kind int, names [][]byte) {
	c.unsubscribe(kind, names, true)
	c.orderedOutput() // no message after the confirmation
}

// cmdSsubscribe: unlike SUBSCRIBE, Redis refuses SSUBSCRIBE inside MULTI.
func cmdSsubscribe(c *Client, argv [][]byte) {
	if c.execing {
		c.reply().Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	c.subscribe(kindShard, argv[1:])
}

// cmdPublish is PUBLISH (see Client.publish in pubsub_cluster.go).
func cmdPublish(c *Client, argv [][]byte) { c.publish(argv[1], argv[2], nil) }

func cmdSpublish(c *Client, argv [][]byte) {
	w := c.reply()
	c.orderedOutput()
	if !c.execing {
		c.srv.hub.awaitInput(kindShard, argv[1], c)
	}
	c.holdForExec()
	w.Int(int64(c.srv.hub.PublishShard(argv[1], argv[2])))
}

var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

func cmdPubsub(c *Client, argv [][]byte) {
	w := c.reply()
	h := c.srv.hub
	sub := strings.ToLower(string(argv[1]))
	switch sub {
	case "channels", "shardchannels":
		if len(argv) > 3 {
			w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try PUBSUB HELP.")
			return
		}
		kind := kindChannel
		if sub == "shardchannels" {
			kind = kindShard
		}
		var out [][]byte
		h.mu.Lock()
		for _, set := range h.subs[kind] {
			if len(argv) == 2 || glob.Match(argv[2], set.name, false) {
				out = append(out, set.name)
			}
		}
		h.mu.Unlock()
		w.ArrayLen(len(out))
		for _, name := range out {
			w.Bulk(name)
		}
	case "numsub", "shardnumsub":
		kind := kindChannel
		if sub == "shardnumsub" {
			kind = kindShard
		}
		w.ArrayLen(2 * (len(argv) - 2))
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, name := range argv[2:] {
			n := 0
			if set := h.subs[kind][string(name)]; set != nil {
				n = len(set.subs)
			}
			w.Bulk(name)
			w.Int(int64(n))
		}
	case "numpat":
		w.Int(int64(h.numPatterns()))
	case "help":
		command.HelpReply(w, pubsubHelp)
	}
}

// numChannels and numPatterns are INFO's pubsub_channels and
// pubsub_patterns (shard channels: numShardChannels).
func (h *Hub) numChannels() int      { return h.size(kindChannel) }
func (h *Hub) numPatterns() int      { return h.size(kindPattern) }
func (h *Hub) numShardChannels() int { return h.size(kindShard) }

func (h *Hub) size(kind int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[kind])
}

// outputLimit is the pubsub class's limit, which monitors share.
func (h *Hub) outputLimit() BufferLimit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.limit
}
