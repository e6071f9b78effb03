package server

import (
	"basalt/internal/acl"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/clock"
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Client is one connection and its state.
type Client struct {
	srv   *Server
	nc    net.Conn
	id    int64
	rd    *resp.Reader
	out   *resp.Writer
	proto int

	db                 int
	authed             bool
	user               atomic.Pointer[acl.Handle] // the ACL user (acl_cmd.go)
	authPass           []byte                     // the password it authenticated with, for the leader's side
	name               atomic.Pointer[string]
	created            time.Time
	lastCmd            atomic.Pointer[string]
	lastAt             atomic.Int64
	closing            bool // close after the replies are written (QUIT, protocol error)
	replyOff, skipNext bool
	skipping           bool // this command's reply is dropped (CLIENT REPLY SKIP)
	pushing            bool // this command's reply is pub/sub confirmations, which muting keeps
	inExec             bool // EXEC runs the queued connection commands (BGSAVE answers "scheduled")

	// state mirrors db, proto and MULTI for CLIENT LIST, which other
	// goroutines run (see publishState in admin.go).
	state atomic.Uint64

	// Writes proposed but not yet answered, in order. Their replies follow
	// whatever is already in out, so anything written to out directly must
	// wait for them first.
	pending []*shard.Proposal

	up          *upstream        // the connection to the leader this client's commands go to
	upMulti     bool             // the leader has this client in MULTI
	upWatched   bool             // the leader has WATCHes of this client
	upWatchSlot int              // in cluster mode, a slot of those WATCHes (execElsewhere)
	upQueued    int              // commands forwarded inside that MULTI
	upName      *string          // a CLIENT SETNAME queued in it
	watchLost   bool             // WATCHes made on this node before it stopped leading
	readonly    bool             // READONLY: reads are served here even on a follower
	confirmed   readConfirmation // which buffered reads a ReadIndex covers
	socketReads atomic.Uint64    // reads from the socket that brought data
	// clock is the time the commands of one read from the socket see
	// (clockAt: that read's number; see now).
	clock, clockAt int64
	upSlots        []upReply // the commands the leader queued in that MULTI, for EXEC's reply (pubsub_cluster.go)
	draining       bool      // the leader's replies are being relayed

	multi    bool
	multiErr bool
	queued   [][][]byte
	watching []shard.WatchKey

	// sh is the shard the command being dispatched goes to: the node's
	// group, or in cluster mode the shard of its keys' slot (route, in
	// shards.go). txSlot is the slot of the keys queued in MULTI (-1:
	// none yet), txCross says they span shards, and watchShard is the
	// shard of the watched keys.
	sh         *shard.Shard
	txSlot     int
	txCross    bool
	watchShard *shard.Shard
	// proxy says the commands of slots another node leads go there, not
	// MOVED (proxySlot); rerouted holds the connections of the proxied
	// commands sent again during a drain (reroute).
	proxy     bool
	rerouted  map[string]*upstream
	wroteTo   *shard.Shard // the shard of the client's last write (WAIT)
	killed    atomic.Bool
	closeOnce sync.Once
	mem       clientMem // what its buffers hold, for maxmemory-clients (clientevict.go)

	// blocked is set while a blocking command (or WAIT) waits here;
	// unblock carries CLIENT UNBLOCK's reason to it (true: ERROR).
	blocked atomic.Bool
	unblock chan bool

	sub *subscriber // set on the first SUBSCRIBE or CLIENT TRACKING (pubsub.go)
	// readIdle is set while the client waits for input with none
	// buffered, until a read brings some: a PUBLISH waits for the
	// subscribers that have input to run it (Hub.awaitInput).
	readIdle atomic.Bool
	// qb follows Redis's query buffer for CLIENT LIST (client_querybuf.go);
	// argvMem is the running command's argument bytes (argv-mem).
	qb      *queryBuf
	argvMem atomic.Int64

	// The command being dispatched, for LATENCY, SLOWLOG and MONITOR
	// (calls.go): call is what ran (nil: refused, queued or forwarded),
	// callAsync says it went to the write path (its accounting waits in
	// calls, beside pending), callBlocked that it was a blocking call.
	call                   *command.Command
	callAsync, callBlocked bool
	calls                  []pendingCall
	dispatched             [][]byte          // the command being dispatched, as sent
	spiked                 bool              // a command's arguments were big: see memorySpike
	dispatchedAt           int64             // and when (nanotime)
	execApplied            [][][]byte        // the commands of the EXEC that just applied
	execDB                 int               // the database that EXEC began in
	monitoring             bool              // MONITOR (monitor.go)
	tally                  command.CallTally // commandstats and latency counts not added yet
	clockNext              int64             // when the last command ended, if the next one was read with it
	// replyMark is where the reply of the command being dispatched starts
	// in out, for INFO errorstats and failed_calls (markUnset: none yet);
	// replyErr says it was an error, once checked (replyFailed).
	replyMark int
	replyErr  bool
	rejected  *command.Command // the command refused before it ran (rejected_calls)
	track     *tracking        // CLIENT TRACKING's state, nil when off (tracking.go)
	execing   bool             // running EXEC's connection commands
	repl      replConf         // what REPLCONF set (sync.go)
	// dispatching is the command the gates look at (dispatch).
	dispatching call
}

func newClient(s *Server, nc net.Conn) *Client {
	c := &Client{
		srv:     s,
		nc:      nc,
		id:      s.nextID.Add(1),
		out:     resp.NewWriter(2),
		proto:   2,
		authed:  !s.defaultNeedsAuth(),
		created: time.Now(),
		unblock: make(chan bool, 1),
		qb:      newQueryBuf(nanotime()),
		sh:      s.group(),
		txSlot:  -1,
		proxy:   s.config().ClusterProxy,
	}
	c.rd = resp.NewReader(countingReader{nc, &s.Stats.NetInput, &c.socketReads, &c.readIdle}) // needs c
	c.user.Store(s.users.Default())
	c.rd.Grown = func(n int) {
		c.setMem(&c.mem.query, int64(n)) // a big argument as it arrives
		if n >= spikeBytes {
			memorySpike() // the smaller buffer before it is garbage
		}
	}
	c.rd.MaxBulk = s.config().ProtoMaxBulkLen
	c.rd.Authenticated = c.authed
	empty := ""
	c.name.Store(&empty)
	c.lastCmd.Store(&empty)
	return c
}

// flushAt bounds how much reply data a pipeline accumulates before writing.
const flushAt = 64 << 10

func (c *Client) serve() {
	defer c.close()
	for {
		empty := c.rd.Buffered() == 0
		c.readIdle.Store(empty)
		idle := empty && c.idleDeadline()
		argv, err := c.rd.ReadCommand()
		c.readIdle.Store(false) // also when the command was buffered
		if idle {
			c.clearIdleDeadline()
		}
		if err != nil {
			if c.rd.LastSize >= spikeBytes { // a big bulk, cut off
				memorySpike()
			}
			if resp.IsProtocolError(err) {
				c.waitPending()
				c.out.Error("ERR " + err.Error())
				c.srv.errors.noteText(err.Error())
				c.flush()
			}
			return
		}
		if c.rd.LastSize >= spikeBytes {
			c.spiked = true
		}
		if len(argv) > 0 {
			c.srv.Stats.Commands.Add(1)
			// A command read with the one before it (a pipeline)
			// starts when that one ended: one clock reading a call.
			start := c.clockNext
			if start == 0 {
				start = nanotime()
			}
			c.clockNext = 0
			c.dispatched, c.dispatchedAt = argv, start
			c.replyMark, c.replyErr = markUnset, false
			wire, bigArg := commandInput(argv)
			c.qb.read(start, wire, bigArg, int64(c.rd.Buffered()))
			c.argvMem.Store(argvMem(argv))
			if c.replyOff || c.skipNext {
				c.dispatchMuted(argv)
			} else {
				c.dispatch(argv)
			}
			c.callDone(argv, start)
			c.argvMem.Store(0)
			c.publishState()
			c.afterCommand()
		}
		if c.closing || c.killed.Load() {
			c.waitPending()
			c.flush()
			return
		}
		if c.rd.Buffered() == 0 || c.out.Len() > flushAt || len(c.pending) >= 1024 {
			c.confirmed.reset() // what comes next arrives after these replies
			c.qb.consumed(int64(c.rd.Buffered()))
			c.waitPending()
			c.tally.Flush()
			c.clockNext = 0 // the next command waits to be read
			if !c.flush() {
				return
			}
			c.dispatched = nil // answered: a big argument is not kept while the client idles
		}
	}
}

func (c *Client) close() {
	c.closeOnce.Do(func() {
		c.closeUpstream()
		c.stopMonitoring()
		c.tally.Flush()
		c.unwatchAll()
		c.srv.tracker.disable(c)
		c.closeSub()
		c.nc.Close()
		c.dropMem()
	})
}

// flush writes the buffered replies to the socket.
func (c *Client) flush() bool {
	if c.sub != nil {
		return c.flushQueued()
	}
	if c.out.Len() == 0 {
		return true
	}
	counted := c.out.Len() >= countedReply
	if counted {
		c.setMem(&c.mem.reply, int64(c.out.Len())) // while a slow reader keeps it
	}
	n, err := c.nc.Write(c.out.Bytes())
	if counted {
		c.setMem(&c.mem.reply, 0)
	}
	c.srv.Stats.NetOutput.Add(int64(n))
	c.out.Reset()
	if cap(c.out.Buf) >= spikeBytes || c.spiked {
		c.spiked = false
		memorySpike()
	}
	if cap(c.out.Buf) > 1<<20 { // don't keep a huge buffer for an idle client
		c.out.Buf = nil
	}
	return err == nil
}

// waitPending waits for the proposed and forwarded commands and appends
// their replies.
func (c *Client) waitPending() {
	c.waitLocal()
	c.drainUpstream(true)
}

// waitLocal waits for the proposed writes and appends their replies.
func (c *Client) waitLocal() {
	// The clock is read again only after a wait: the writes of one group
	// commit end together (a clock reading was 4% of a GET -P 16's CPU).
	now := int64(0)
	for i, p := range c.pending {
		failed := false
		ok, waited := c.awaitTimed(p)
		if waited || now == 0 {
			now = nanotime()
		}
		if ok {
			if b := p.W.Bytes(); !c.redirectRefused(p) {
				c.out.Raw(b)
				if isErrorReply(b) {
					failed = true
					if p.W.ErrorsCounted == 0 {
						c.srv.errors.note(b)
					}
				}
			}
			putProposal(p)
		} else {
			c.out.Error(command.ErrBusy)
			c.srv.errors.noteMessage([]byte("-" + command.ErrBusy))
		}
		c.pending[i] = nil
		if pc := c.calls[i]; pc.cmd != nil {
			c.srv.observe(pc.cmd, pc.argv, now-pc.start, c, failed)
		}
		c.calls[i] = pendingCall{}
	}
	c.pending = c.pending[:0]
	c.calls = c.calls[:0]
	c.closeRerouted()
}

// await waits for a proposed write's reply. If a script in the apply loop
// passes its time limit meanwhile and the write is still queued behind it,
// the write is withdrawn instead, as Redis answers BUSY to the commands it
// reads while the script runs, and await reports false: p must then not
// be reused (the shard may still hold it).
func (c *Client) await(p *shard.Proposal) bool {
	ok, _ := c.awaitTimed(p)
	return ok
}

// awaitTimed is await that also reports whether the reply was not there
// yet, so that the caller knows its clock reading is stale.
func (c *Client) awaitTimed(p *shard.Proposal) (ok, waited bool) {
	select {
	case <-p.Done:
		return true, false
	default:
	}
	select {
	case <-p.Done:
		return true, true
	case <-command.ScriptBusyC():
		if p.Withdraw() {
			return false, true
		}
		<-p.Done // the loop has it: the script itself, or a write before it
		return true, true
	}
}

// busy answers BUSY for a command that arrives while a script in the apply
// loop is past its time limit, and reports whether it did. This client's
// own writes are waited for first: if the script is one of them, the
// command runs once it ends, as Redis reads nothing more from a client
// whose script runs.
func (c *Client) busy(cmd *command.Command) bool {
	w := c.reply()
	if !command.ScriptBusy() {
		return false
	}
	c.rejectInMulti()
	if cmd.Name == "exec" {
		// Redis aborts the transaction, and says why.
		c.endMulti()
		w.Error("EXECABORT Transaction discarded because of: " + command.ErrBusy)
		return true
	}
	w.Error(command.ErrBusy)
	return true
}

// reply gives direct access to the output after the pending writes.
func (c *Client) reply() *resp.Writer {
	c.waitPending()
	if c.replyMark == markUnset {
		c.replyMark = len(c.out.Buf)
	}
	return c.out
}

// call is the command being dispatched, as the gates see it: cmd is the
// table's entry (nil: unknown), kind the subcommand that decides read or
// write (nil until the arguments are checked).
type call struct {
	argv      [][]byte
	cmd, kind *command.Command
	now       int64
}

// gates are the checks a command passes before it runs, in Redis's order
// (processCommand). Each answers the command (refuses, forwards or queues
// it) and returns true, or lets it through.
var gates = []func(c *Client, k *call) bool{
	(*Client).forwardGate,
	(*Client).unknownGate,
	(*Client).argsGate,
	(*Client).protectedGate,
	(*Client).authGate,
	(*Client).noMultiGate,
	(*Client).aclGate,
	(*Client).pubsubContextGate,
	(*Client).routeGate,
	(*Client).monitorGate,
	(*Client).busyGate,
	(*Client).pauseGate,
	(*Client).queueGate,
}

func (c *Client) dispatch(argv [][]byte) {
	k := &c.dispatching // reused: one allocation less a command
	*k = call{argv: argv, cmd: command.Lookup(argv[0]), now: c.now()}
	c.lastAt.Store(k.now)
	if c.sub != nil && c.sub.hasLost.Load() {
		c.forgetLostChannels()
	}
	if c.track != nil {
		c.trackCommand(k.cmd)
	}
	for _, gate := range gates {
		if gate(c, k) {
			return
		}
	}
	c.run(k.cmd, k.kind, k.argv, k.now)
}

// refuse answers a command that a gate stops with an error; a refused
// command fails the transaction it is queued in.
func (c *Client) refuse(kind *command.Command, errReply string) bool {
	c.rejected = kind
	c.rejectInMulti()
	c.reply().Error(errReply)
	return true
}

// forwardGate sends the command to the leader when this node cannot run
// it. The leader checks it, as it must for MULTI's sake, except the ACL:
// the user is this connection's.
func (c *Client) forwardGate(k *call) bool {
	cmd, argv := k.cmd, k.argv
	if !c.authed || c.multi || !c.mustForward(cmd, argv) {
		return false
	}
	if cmd != nil {
		c.lastCmd.Store(&cmd.Name)
		// Inside a transaction the leader checks: a refusal must fail
		// its transaction there.
		if kind, errReply := checkArgs(cmd, argv); errReply == "" && !c.upMulti && c.aclRefuses(kind, argv) {
			return true
		}
		if cmd.Flags&command.Script != 0 {
			// EVALSHA of a script this node knows goes as EVAL with its body.
			argv = command.ResolveQueued([][][]byte{argv})[0]
		}
		if c.track != nil {
			c.trackForwarded(cmd, argv)
		}
		c.waitPause(cmd, argv)
		if c.srv.monitors.active() {
			// Shown where the client is connected; the leader shows
			// it too, as its link from this node runs it.
			if kind, errReply := checkArgs(cmd, argv); errReply == "" && kind.Flags&command.Admin == 0 {
				c.srv.feedMonitors(c.db, c.nc.RemoteAddr().String(), redactArgs(kind, argv))
			}
		}
	}
	c.forward(argv)
	c.replyMark = markNone // the leader runs it, and counts it
	return true
}

func (c *Client) unknownGate(k *call) bool {
	if k.cmd != nil {
		c.lastCmd.Store(&k.cmd.Name)
		return false
	}
	c.rejectInMulti()
	c.reply().Error(unknownCommand(k.argv))
	return true
}

// argsGate checks the arity and the subcommand, and finds kind.
func (c *Client) argsGate(k *call) bool {
	kind, errReply := checkArgs(k.cmd, k.argv)
	if errReply == "" {
		k.kind = kind
		c.lastCmd.Store(&kind.Name)
		return false
	}
	if k.cmd.Name == "exec" {
		// Redis discards the transaction, and says why.
		c.rejectInMulti()
		c.endMulti()
		errReply = "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(errReply, "ERR ")
	}
	return c.refuse(refusedKind(k.cmd, k.argv), errReply)
}

// protectedGate: DEBUG and MODULE as enable-debug-command and
// enable-module-command allow them (protect.go).
func (c *Client) protectedGate(k *call) bool { return c.refuseProtected(k.kind) }

func (c *Client) authGate(k *call) bool {
	if c.authed || k.cmd.Flags&command.NoAuth != 0 {
		return false
	}
	return c.refuse(k.kind, "NOAUTH Authentication required.")
}

func (c *Client) noMultiGate(k *call) bool {
	if !c.multi || k.cmd.Flags&command.NoMulti == 0 {
		return false
	}
	return c.refuse(k.kind, "ERR Command not allowed inside a transaction")
}

func (c *Client) aclGate(k *call) bool { return c.aclRefuses(k.kind, k.argv) }

// pubsubContextGate: RESP2's pub/sub mode allows only a few commands.
func (c *Client) pubsubContextGate(k *call) bool {
	return c.sub != nil && c.pubsubGate(k.cmd, k.argv)
}

// routeGate, in cluster mode, sends the client to the node of the keys'
// slot (MOVED), or proxies the command there.
func (c *Client) routeGate(k *call) bool {
	if !c.srv.clustered() {
		return false
	}
	if !c.multi && changesUsers(k.cmd, k.argv) && !c.srv.meta.IsLeader() {
		// The users are written by the metadata group's leader.
		if addr := c.srv.meta.LeaderAddr(); addr != "" {
			c.proxyTo(addr, k.argv)
			return true
		}
	}
	if !c.route(k.cmd, k.kind, k.argv) {
		return true
	}
	// This command runs here: the replies of the commands proxied
	// before it come first.
	c.drainUpstream(true)
	return false
}

func (c *Client) monitorGate(k *call) bool {
	if !c.monitoring || !monitorRefuses(k.kind) {
		return false
	}
	return c.refuse(k.kind, "ERR Replica can't interact with the keyspace")
}

// busyGate answers BUSY while a script is past its time limit.
func (c *Client) busyGate(k *call) bool {
	if !command.ScriptBusy() || (k.cmd.Flags|k.kind.Flags)&command.AllowBusy != 0 || !c.busy(k.cmd) {
		return false
	}
	c.rejected = k.kind
	return true
}

// pauseGate waits out CLIENT PAUSE; it never answers.
func (c *Client) pauseGate(k *call) bool {
	c.waitPause(k.cmd, k.argv)
	return false
}

// queueGate queues the command of a client in MULTI.
func (c *Client) queueGate(k *call) bool {
	if !c.multi || isTxControl(k.cmd.Name) {
		return false
	}
	c.queued = append(c.queued, k.argv)
	c.reply().Simple("QUEUED")
	return true
}

// run executes a command that passed the gates.
func (c *Client) run(cmd, kind *command.Command, argv [][]byte, now int64) {
	// A plain read touches the keys it finds as it looks them up
	// (store.Tx.Touching), which skips the access table mostly; anything
	// else touches its keys here.
	if c.track != nil && tracksRead(cmd, kind) {
		c.trackRead(kind, argv)
	}
	c.ran(cmd, kind, argv)
	touch := !noTouch[cmd.Name]
	plainRead := cmd.Flags&(command.Conn|command.Script|command.Blocking) == 0 && kind.Flags&command.AllowBusy == 0 && !kind.IsWrite()
	if touch && !plainRead {
		for _, k := range kind.Keys(argv) {
			c.sh.Store().Touch(c.db, k, now)
		}
	}
	if c.srv.clustered() && c.clusterWide(kind, argv, now) {
		return
	}
	switch {
	case cmd.Flags&command.Conn != 0:
		h := connHandlerOf(cmd)
		if h == nil {
			c.reply().Error("ERR command '" + string(argv[0]) + "' is not available")
			return
		}
		if c.up != nil && !c.readonly && showsData[cmd.Name] {
			// This client's writes went to the leader: wait until this
			// node has them, so INFO keyspace or DEBUG DIGEST after a
			// write shows it.
			if w := c.reply(); !c.confirmLocal(w) {
				return
			}
		}
		h(c, argv)
	case kind.Flags&command.AllowBusy != 0:
		// SCRIPT KILL: it must not wait for the apply loop, as a read's
		// ReadIndex may. FUNCTION STATS reads applied state.
		tx := c.sh.Store().ReadTx(c.db, now, true)
		cmd.Run(&command.Ctx{Tx: tx, Args: argv, W: c.reply(), Host: c.srv})
		tx.Close()
	case cmd.Flags&command.Script != 0:
		c.script(argv, now)
	case cmd.Flags&command.Blocking != 0 && command.Blocks(argv):
		c.callBlocked = true
		c.blockingCall(argv)
	case kind.IsWrite():
		if cmd.ReadFirst != nil && c.readFirst(cmd, argv, now) {
			return
		}
		c.proposeCommand(cmd, shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}})
	default:
		c.read(cmd, argv, now, touch)
	}
}

// now is the clock in unix ms for a command: read once for the commands
// that one read from the socket brought (time.Now was 4% of a pipelined
// PFCOUNT's CPU), as Redis reads it once per event loop iteration.
func (c *Client) now() int64 {
	if at := int64(c.socketReads.Load()); at != c.clockAt || c.clock == 0 {
		c.clock, c.clockAt = clock.UnixMilli(), at
	}
	return c.clock
}

// checkArgs checks argv's arity and subcommand for cmd and returns the
// command that decides read or write (the subcommand if there is one), or
// the error reply.
func checkArgs(cmd *command.Command, argv [][]byte) (kind *command.Command, errReply string) {
	if !cmd.ArityOK(len(argv)) {
		return nil, command.WrongArity(cmd.Name)
	}
	if len(cmd.Subcommands) == 0 || len(argv) < 2 { // bare COMMAND is valid
		return cmd, ""
	}
	sub := cmd.Subcommand(argv[1])
	if sub == nil {
		return nil, "ERR unknown subcommand '" + string(argv[1]) + "'. Try " + strings.ToUpper(cmd.Name) + " HELP."
	}
	if !sub.ArityOK(len(argv)) {
		return nil, command.WrongArity(sub.Name)
	}
	return sub, ""
}

// refusedKind is the command Redis counts a call refused by checkArgs
// against (rejected_calls): the subcommand named if it exists, else the
// command itself unless it has subcommands.
func refusedKind(cmd *command.Command, argv [][]byte) *command.Command {
	if len(cmd.Subcommands) == 0 || len(argv) < 2 {
		return cmd
	}
	return cmd.Subcommand(argv[1])
}

// noTouch lists the commands that look at keys without counting as a use
// (OBJECT IDLETIME), as in Redis 7.0.
var noTouch = map[string]bool{"object": true, "type": true, "exists": true, "ttl": true,
	"pttl": true, "expiretime": true, "pexpiretime": true, "watch": true,
	"ssubscribe": true, "sunsubscribe": true, "spublish": true} // shard channels are not keys

// read runs a read-only command on applied state, after this client's own
// pending writes so that it sees them.
func (c *Client) read(cmd *command.Command, argv [][]byte, now int64, touch bool) {
	w := c.reply()
	if !c.confirmRead(cmd, argv, w) {
		return
	}
	// Movable-key commands (SINTERCARD, ZUNION...) have FirstKey 0 but key specs.
	multiKey := cmd.FirstKey > 0 && cmd.LastKey != cmd.FirstKey || cmd.FirstKey == 0 && cmd.KeySpecs != nil
	runRead(c.sh.Store(), c.db, now, multiKey, touch, w, argv, cmd.Run)
}

// runRead runs a read on a new read Tx (on a snapshot if snapshot; touching
// the keys it finds if touching: see store.Tx.Touching). A read
// without one that finds a commit came between its metadata and its
// members (store.ErrStaleRead) runs again on a snapshot. Any other panic
// becomes an error reply, its partial output dropped, as the apply loop
// does for writes: a bug in one read must not take the server down.
func runRead(st *store.Store, db int, now int64, snapshot, touching bool, w *resp.Writer, argv [][]byte, run func(*command.Ctx)) {
	for readOnce(st, db, now, snapshot, touching, w, argv, run) {
		snapshot = true
	}
}

// readOnce runs a read on a Tx of its own and reports whether it met a
// commit between its reads (store.ErrStaleRead), its reply undone.
func readOnce(st *store.Store, db int, now int64, snapshot, touching bool, w *resp.Writer, argv [][]byte, run func(*command.Ctx)) (stale bool) {
	mark := w.Len()
	tx := st.ReadTx(db, now, snapshot)
	tx.Touching = touching
	defer tx.Close()
	defer func() {
		if r := recover(); r != nil {
			w.Buf = w.Buf[:mark]
			if stale = r == store.ErrStaleRead; !stale {
				slog.Error("read panicked", "command", string(argv[0]), "panic", r, "stack", string(debug.Stack()))
				w.Error("ERR internal error while reading")
			}
		}
	}()
	run(&command.Ctx{Tx: tx, Args: argv, W: w})
	return false
}

// showsData lists the node-local commands whose reply shows the data.
var showsData = map[string]bool{"info": true, "debug": true, "save": true, "bgsave": true, "sync": true, "psync": true}

// confirmLocal waits until this node holds every write committed so far.
func (c *Client) confirmLocal(w *resp.Writer) bool {
	if err := c.sh.ReadIndex(5 * time.Second); err != nil {
		w.Error(shard.ErrorReply(err))
		return false
	}
	return true
}

// confirmRead makes a read linearizable: it confirms leadership and waits
// for the store to hold every write committed before this read arrived.
// One confirmation covers every command already buffered. It answers the
// error and returns false if that fails; in cluster mode, where this node
// stopped leading the shard, that answer is argv's redirection (lostSlot).
func (c *Client) confirmRead(cmd *command.Command, argv [][]byte, w *resp.Writer) bool {
	if c.readonly || localCommands[cmd.Name] {
		return true
	}
	at := c.socketReads.Load()
	if !c.confirmed.covers(at) {
		if err := c.sh.ReadIndex(5 * time.Second); err != nil {
			if !c.lostSlot(err, argv, true) {
				w.Error(shard.ErrorReply(err))
			}
			return false
		}
		c.confirmed.set(at)
	}
	return true
}

// readConfirmation tracks which buffered commands one ReadIndex covers:
// those received before it started. The reader counts its reads from the
// socket; while the count has not moved, every command it hands out was
// already received. (Buffered bytes alone don't tell: the reader may have
// refilled its buffer in the middle of a batch.)
type readConfirmation struct {
	valid bool
	at    uint64 // socket reads before the ReadIndex
}

func (r *readConfirmation) covers(reads uint64) bool { return r.valid && r.at == reads }
func (r *readConfirmation) set(reads uint64)         { r.valid, r.at = true, reads }
func (r *readConfirmation) reset()                   { r.valid = false }

// readFirst runs a command's ReadFirst on applied state, like read, with a
// snapshot only if argv names several keys; it reports whether that
// answered. Not while the client's writes are in flight, unless they are
// all calls of the same command and it allows that (ReadFirstAfterSame):
// a read would wait for them to commit, holding up the rest of its
// pipeline (SETBITs that change a bit and SETBITs that don't, in turns,
// ran at 0.4x), where the write path takes it in the same group.
func (c *Client) readFirst(cmd *command.Command, argv [][]byte, now int64) bool {
	if c.up != nil && len(c.up.replies) > 0 || len(c.pending) > 0 && !(cmd.ReadFirstAfterSame && c.pendingAre(cmd.Name)) {
		return false
	}
	w := c.reply()
	if !c.confirmRead(cmd, argv, w) {
		return true
	}
	answered := true // what a panic leaves: its error reply
	runRead(c.sh.Store(), c.db, now, len(cmd.Keys(argv)) > 1, false, w, argv, func(ctx *command.Ctx) { answered = cmd.ReadFirst(ctx) })
	return answered
}

// pendingAre reports whether every write of the client in flight is a
// call of the command name.
func (c *Client) pendingAre(name string) bool {
	for _, p := range c.pending {
		if p.Rec.Kind != shard.KindCommand || len(p.Rec.Cmds) != 1 || !strings.EqualFold(string(p.Rec.Cmds[0][0]), name) {
			return false
		}
	}
	return true
}

// proposeHere hands p to the command's shard, which WAIT then asks about.
func (c *Client) proposeHere(p *shard.Proposal) error {
	c.wroteTo = c.sh
	return c.sh.Propose(p)
}

// propose sends a write down the ordered path without waiting: pipelined
// writes of one client join the same group commit.
func (c *Client) propose(rec shard.Record) { c.proposeCommand(nil, rec) }

// proposeCommand is propose of a command record carrying cmd, the command
// dispatch looked up, so that the apply loop need not look it up again.
func (c *Client) proposeCommand(cmd *command.Command, rec shard.Record) {
	p := getProposal(c)
	p.Rec = rec
	if cmd != nil {
		p.Run.Command = cmd
	}
	if err := c.proposeHere(p); err != nil {
		p.Err = err
		if w := c.reply(); !c.redirectRefused(p) {
			w.Error(proposeError(err))
		}
		putProposal(p)
		return
	}
	c.pending = append(c.pending, p)
	pc := pendingCall{}
	if c.call != nil && !c.callBlocked {
		pc = pendingCall{cmd: c.call, argv: c.dispatched, start: c.dispatchedAt}
		c.callAsync = true
	}
	c.calls = append(c.calls, pc)
}

var proposalPool = sync.Pool{New: func() any { return shard.NewProposal(shard.Record{}, 2) }}

func getProposal(c *Client) *shard.Proposal {
	p := proposalPool.Get().(*shard.Proposal)
	p.W.Reset()
	p.W.Proto = c.proto
	p.Client = uint64(c.id)
	return p
}

func putProposal(p *shard.Proposal) {
	p.Recycle()
	if cap(p.W.Buf) > 64<<10 {
		p.W.Buf = nil
	}
	proposalPool.Put(p)
}

func unknownCommand(argv [][]byte) string {
	var args strings.Builder
	for _, a := range argv[1:] {
		if args.Len() >= 128 {
			break
		}
		args.WriteString("'")
		args.WriteString(truncate(string(a), 128-args.Len()))
		args.WriteString("' ")
	}
	return "ERR unknown command '" + truncate(string(argv[0]), 128) + "', with args beginning with: " + args.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:max(n, 0)]
	}
	return s
}

// proposeError is the reply to a write the shard would not take.
func proposeError(err error) string { return shard.ErrorReply(err) }
