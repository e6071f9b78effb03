package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/store"
)

// Client-side caching: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO.
//
// A tracking client in the default mode has the keys of its reads noted in
// the tracker's table before the read runs; when a committed batch modifies
// one (the store hands the keys over at commit, before the group's replies:
// store/tracking.go), each client noted for it gets an "invalidate" message
// and the key leaves the table, as in Redis. A BCAST client is told of
// every modified key under its prefixes instead, one message per batch. A
// FLUSHDB, FLUSHALL or SWAPDB invalidates everything (a null key list).
// Keys are names, whatever the database, as in Redis.
//
// Messages go through the client's output queue (the pub/sub one,
// pubsub.go), whole, so they never land inside a reply. One must not
// overtake a reply either: a read that ran before a write committed would
// otherwise be answered after the write's invalidation, and the client
// would cache the old value for good. So an invalidation of a key this
// client read since its last flush, or of a key its own write modified
// (Redis 7 sends those after the write's reply), waits in the client's
// deferred list and goes out at its next flush, after those replies.
//
// In a cluster each node tracks its own clients and invalidates as it
// applies the log; a follower forwards a client's reads but notes their
// keys itself, so its invalidations trail the leader by the replication
// lag.

// trackingMaxKeys bounds the table, as Redis's tracking-table-max-keys
// (default 1,000,000): past it, keys are dropped, invalidated for their
// clients.
const trackingMaxKeys = 1_000_000

// tracker holds every client's tracking state and the table of keys read.
type tracker struct {
	srv *Server
	mu  sync.Mutex
	// keys are the IDs of the default-mode clients that read each key: IDs,
	// as in Redis, so that a client gone since is skipped and not kept.
	keys    map[string]map[int64]struct{}
	items   int // client IDs in keys, for INFO
	bcast   map[*Client]struct{}
	clients int // clients with tracking on
}

// tracking is one client's CLIENT TRACKING state; guarded by tracker.mu
// but for caching, which only the client's goroutine uses.
type tracking struct {
	bcast, optin, optout, noloop bool
	redirect                     int64 // client ID, 0: none
	broken                       bool  // the redirect target is gone
	prefixes                     [][]byte
	// caching is CLIENT CACHING's YES (1) or NO (-1) for the next command
	// (and a MULTI's commands); fresh while that command has not come.
	caching int8
	fresh   bool
	// inFlight are the keys read since the last flush; deferred the
	// invalidations waiting for that flush (nil: all keys).
	inFlight map[string]struct{}
	deferred [][][]byte // messages, each its keys
	flushAll bool
	// upQueued are the commands of a MULTI a follower forwards, tracked
	// when its EXEC goes.
	upQueued [][][]byte
}

func newTracker(s *Server) *tracker {
	return &tracker{srv: s, keys: map[string]map[int64]struct{}{}, bcast: map[*Client]struct{}{}}
}

// ---- CLIENT subcommands ----

func clientTracking(c *Client, argv [][]byte) {
	w := c.reply()
	var opts tracking
	var prefixes [][]byte
	for j := 3; j < len(argv); j++ {
		more := j < len(argv)-1
		switch opt := strings.ToLower(string(argv[j])); {
		case opt == "redirect" && more:
			j++
			if opts.redirect != 0 {
				w.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := num.ParseInt(argv[j])
			if !ok {
				w.Error(command.ErrNotInt)
				return
			}
			if c.srv.clientByID(id) == nil {
				w.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			opts.redirect = id
		case opt == "bcast":
			opts.bcast = true
		case opt == "optin":
			opts.optin = true
		case opt == "optout":
			opts.optout = true
		case opt == "noloop":
			opts.noloop = true
		case opt == "prefix" && more:
			j++
			prefixes = append(prefixes, argv[j])
		default:
			w.Error(command.ErrSyntax)
			return
		}
	}
	t := c.srv.tracker
	switch strings.ToLower(string(argv[2])) {
	case "on":
		if errMsg := t.enable(c, opts, prefixes); errMsg != "" {
			w.Error(errMsg)
			return
		}
	case "off":
		t.disable(c)
	default:
		w.Error(command.ErrSyntax)
		return
	}
	w.OK()
}

func clientCaching(c *Client, argv [][]byte) {
	w := c.reply()
	tr := c.track
	if tr == nil {
		w.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch strings.ToLower(string(argv[2])) {
	case "yes":
		if !tr.optin {
			w.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
		tr.caching = 1
	case "no":
		if !tr.optout {
			w.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
		tr.caching = -1
	default:
		w.Error(command.ErrSyntax)
		return
	}
	tr.fresh = true
	w.OK()
}

func clientGetRedir(c *Client) {
	c.srv.tracker.mu.Lock()
	id := int64(-1)
	if tr := c.track; tr != nil {
		id = tr.redirect
	}
	c.srv.tracker.mu.Unlock()
	c.reply().Int(id)
}

func clientTrackingInfo(c *Client) {
	t := c.srv.tracker
	t.mu.Lock()
	flags, redirect, prefixes := []string{"off"}, int64(-1), [][]byte(nil)
	if tr := c.track; tr != nil {
		flags, redirect, prefixes = []string{"on"}, tr.redirect, tr.prefixes
		for _, f := range []struct {
			on   bool
			name string
		}{
			{tr.bcast, "bcast"}, {tr.optin, "optin"}, {tr.optin && tr.caching == 1, "caching-yes"},
			{tr.optout, "optout"}, {tr.optout && tr.caching == -1, "caching-no"},
			{tr.noloop, "noloop"}, {tr.broken, "broken_redirect"},
		} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
	}
	t.mu.Unlock()
	w := c.reply()
	w.MapLen(3)
	w.BulkString("flags")
	w.SetLen(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("redirect")
	w.Int(redirect)
	w.BulkString("prefixes")
	w.ArrayLen(len(prefixes))
	for _, p := range prefixes {
		w.Bulk(p)
	}
}

// enable turns tracking on (or changes its options) with Redis's checks;
// it returns an error line or "".
func (t *tracker) enable(c *Client, opts tracking, prefixes [][]byte) string {
	old := c.track
	switch {
	case !opts.bcast && len(prefixes) > 0:
		return "ERR PREFIX option requires BCAST mode to be enabled"
	case old != nil && old.bcast != opts.bcast:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	case opts.bcast && (opts.optin || opts.optout):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	case opts.optin && opts.optout:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	case old != nil && (opts.optin && old.optout || opts.optout && old.optin):
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	}
	if opts.bcast {
		if len(prefixes) == 0 {
			prefixes = [][]byte{{}} // every key
		}
		for i, p := range prefixes {
			if old != nil {
				for _, e := range old.prefixes {
					if overlap(p, e) {
						return fmt.Sprintf("ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client must not overlap.", p, e)
					}
				}
			}
			for _, q := range prefixes[i+1:] {
				if overlap(p, q) {
					return fmt.Sprintf("ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single client must not overlap.", p, q)
				}
			}
		}
	}
	c.ensureSub() // the messages' queue
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := &opts
	if old != nil {
		tr.prefixes = old.prefixes
		tr.inFlight, tr.deferred, tr.flushAll = old.inFlight, old.deferred, old.flushAll
	} else {
		t.clients++
		if t.clients == 1 {
			for _, sh := range t.srv.shards {
				sh.Store().SetInvalidation(t.invalidate)
			}
		}
	}
	for _, p := range prefixes {
		tr.prefixes = append(tr.prefixes, bytes.Clone(p))
	}
	slices.SortFunc(tr.prefixes, bytes.Compare) // Redis keeps them in a radix tree
	if tr.bcast {
		t.bcast[c] = struct{}{}
	}
	c.track = tr
	return ""
}

// overlap reports whether one of two prefixes starts the other.
func overlap(a, b []byte) bool { return bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a) }

// disable turns c's tracking off (CLIENT TRACKING OFF, RESET, a closed
// connection). Its ID stays in the table, which skips clients that no
// longer track, until the keys are modified.
func (t *tracker) disable(c *Client) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.track == nil {
		return
	}
	c.track = nil
	delete(t.bcast, c)
	if t.clients--; t.clients == 0 {
		for _, sh := range t.srv.shards {
			sh.Store().SetInvalidation(nil)
		}
	}
}

// ---- noting reads ----

// tracksRead reports whether a command's keys are tracked: Redis tracks
// the read-only commands (PFCOUNT too, which basalt may apply as a write),
// and the keys of the read-only commands a script calls, which basalt
// takes to be its declared keys.
func tracksRead(cmd, kind *command.Command) bool {
	return cmd.Flags&command.Conn == 0 && (kind.Flags&command.ReadOnly != 0 || cmd.Flags&command.Script != 0)
}

// trackRead notes the keys of a read c is about to run, if its tracking
// mode wants them: before the read, so that a write committed while it
// runs is not missed.
func (c *Client) trackRead(kind *command.Command, argv [][]byte) {
	tr := c.track
	if tr == nil || tr.bcast || tr.optin && tr.caching != 1 || tr.optout && tr.caching == -1 {
		return
	}
	keys := kind.SpecKeys(argv)
	if len(keys) == 0 {
		return
	}
	t := c.srv.tracker
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr.inFlight == nil {
		tr.inFlight = map[string]struct{}{}
	}
	for _, k := range keys {
		set := t.keys[string(k)]
		if set == nil {
			set = map[int64]struct{}{}
			t.keys[string(k)] = set
			if len(t.keys) > trackingMaxKeys {
				t.evictOne(string(k))
			}
		}
		if _, ok := set[c.id]; !ok {
			set[c.id] = struct{}{}
			t.items++
		}
		tr.inFlight[string(k)] = struct{}{}
	}
}

// trackCommand runs before each command of c: CLIENT CACHING's choice
// lasts for the one command after it (a whole MULTI ... EXEC), and other
// CLIENT calls in between keep it, as in Redis.
func (c *Client) trackCommand(cmd *command.Command) {
	tr := c.track
	if tr == nil || tr.caching == 0 || cmd != nil && cmd.Name == "client" || c.multi || c.upMulti {
		return
	}
	if tr.fresh {
		tr.fresh = false
		return
	}
	tr.caching = 0
}

// evictOne drops a key other than keep from the full table, invalidating
// it for its clients.
func (t *tracker) evictOne(keep string) {
	for k, set := range t.keys {
		if k == keep {
			continue
		}
		delete(t.keys, k)
		t.items -= len(set)
		t.sendEach(set, []byte(k), 0)
		return
	}
}

// ---- invalidating ----

// invalidate is the store's invalidation listener: it runs in the apply
// loop as a batch commits, for the keys one record (or several in a row)
// modified.
func (t *tracker) invalidate(keys []store.Invalidation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(keys) > 0 {
		if keys[0].All {
			t.invalidateAll()
			keys = keys[1:]
			continue
		}
		n := slices.IndexFunc(keys, func(inv store.Invalidation) bool { return inv.All })
		if n < 0 {
			n = len(keys)
		}
		t.invalidateKeys(keys[:n])
		keys = keys[n:]
	}
}

// invalidateKeys tells the clients that read keys, and the BCAST clients
// of their prefixes, that they changed. Called with t.mu held.
func (t *tracker) invalidateKeys(keys []store.Invalidation) {
	for _, inv := range keys {
		set := t.keys[string(inv.Key)]
		if set == nil {
			continue
		}
		delete(t.keys, string(inv.Key))
		t.items -= len(set)
		t.sendEach(set, inv.Key, inv.Writer)
	}
	for c := range t.bcast {
		t.broadcast(c, keys)
	}
}

// sendEach tells the default-mode clients of set, those still connected
// and tracking, that key changed. Called with t.mu held.
func (t *tracker) sendEach(set map[int64]struct{}, key []byte, writer uint64) {
	for id := range set {
		if c := t.srv.clientByID(id); c != nil && c.track != nil && !c.track.bcast {
			t.send(c, [][]byte{key}, false, writer)
		}
	}
}

// invalidateAll tells every tracking client that every key changed
// (FLUSHDB, FLUSHALL, SWAPDB). Called with t.mu held.
func (t *tracker) invalidateAll() {
	clear(t.keys)
	t.items = 0
	t.srv.mu.Lock()
	var tracking []*Client
	for _, c := range t.srv.clients {
		if c.track != nil {
			tracking = append(tracking, c)
		}
	}
	t.srv.mu.Unlock()
	for _, c := range tracking {
		t.send(c, nil, true, 0)
	}
}

// broadcast tells BCAST client c of the keys under its prefixes, as Redis
// does: one message per prefix, in prefix order, its keys sorted and
// without repeats.
func (t *tracker) broadcast(c *Client, keys []store.Invalidation) {
	tr := c.track
	for _, p := range tr.prefixes {
		var hit [][]byte
		writer := uint64(0)
		for _, inv := range keys {
			if !bytes.HasPrefix(inv.Key, p) {
				continue
			}
			own := inv.Writer == uint64(c.id)
			if own && tr.noloop {
				continue
			}
			if own {
				writer = inv.Writer
			}
			hit = append(hit, inv.Key)
		}
		if len(hit) > 0 {
			slices.SortFunc(hit, bytes.Compare)
			t.send(c, slices.CompactFunc(hit, bytes.Equal), false, writer)
		}
	}
}

// send tells c that keys (all, if all) changed; writer is the client whose
// write changed them. Called with t.mu held.
func (t *tracker) send(c *Client, keys [][]byte, all bool, writer uint64) {
	tr := c.track
	own := writer != 0 && writer == uint64(c.id)
	if tr == nil || own && tr.noloop {
		return
	}
	defer func() {
		for _, k := range keys {
			delete(tr.inFlight, string(k))
		}
	}()
	if own || all && len(tr.inFlight) > 0 || !all && tr.readSince(keys) {
		if all {
			tr.flushAll = true
		} else {
			tr.deferred = append(tr.deferred, keys)
		}
		return
	}
	t.deliver(c, keys, all)
}

// readSince reports whether c read one of keys since its last flush.
func (tr *tracking) readSince(keys [][]byte) bool {
	for _, k := range keys {
		if _, ok := tr.inFlight[string(k)]; ok {
			return true
		}
	}
	return false
}

// deliver queues the invalidation message for c (or its redirect target).
// Called with t.mu held.
func (t *tracker) deliver(c *Client, keys [][]byte, all bool) {
	tr := c.track
	target := c
	if tr.redirect != 0 {
		if target = t.srv.clientByID(tr.redirect); target == nil {
			tr.broken = true
			if c.sub.proto() == 3 {
				w := resp.NewWriter(3)
				w.PushLen(2)
				w.BulkString("tracking-redir-broken")
				w.Int(tr.redirect)
				c.sub.enqueue(w.Bytes(), c.srv.hub.limit)
			}
			return
		}
	}
	h := t.srv.hub
	h.mu.Lock() // target's goroutine subscribes under it
	sub := target.sub
	subscribed := sub != nil && sub.total() > 0
	h.mu.Unlock()
	if sub == nil {
		return // a redirect target with no output queue: it never subscribed
	}
	proto := sub.proto()
	w := resp.NewWriter(proto)
	switch {
	case proto == 3:
		w.PushLen(2)
		w.BulkString("invalidate")
	case tr.redirect != 0 && subscribed:
		// RESP2 has no push messages: the target gets them as messages
		// of the __redis__:invalidate channel it subscribed to.
		w.ArrayLen(3)
		w.BulkString("message")
		w.BulkString("__redis__:invalidate")
	default:
		return // a RESP2 client that does not redirect gets nothing, as in Redis
	}
	if all {
		w.Null()
	} else {
		w.ArrayLen(len(keys))
		for _, k := range keys {
			w.Bulk(k)
		}
	}
	sub.enqueue(w.Bytes(), h.limit)
}

// flushTracking queues the invalidations c's flush held back, after the
// replies it just queued.
func (c *Client) flushTracking() {
	if c.track == nil {
		return
	}
	t := c.srv.tracker
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := c.track
	if tr == nil {
		return
	}
	clear(tr.inFlight)
	if tr.flushAll {
		t.deliver(c, nil, true)
	}
	for _, keys := range tr.deferred {
		t.deliver(c, keys, false)
	}
	tr.deferred, tr.flushAll = nil, false
}

// trackForwarded notes the keys of a command a follower sends to the
// leader. Inside MULTI it keeps the command until EXEC goes, as the leader
// reads then, not when it queues.
func (c *Client) trackForwarded(cmd *command.Command, argv [][]byte) {
	tr := c.track
	if !c.upMulti {
		c.trackKeys(cmd, argv)
		return
	}
	switch cmd.Name {
	case "exec":
		for _, q := range tr.upQueued {
			c.trackKeys(command.Lookup(q[0]), q)
		}
		tr.upQueued = nil
	case "discard":
		tr.upQueued = nil
	default:
		tr.upQueued = append(tr.upQueued, cloneArgv(argv)) // argv's bytes are the reader's
	}
}

// trackKeys notes the keys of a command about to run, here or on the
// leader (EXEC's commands, a follower's forwarded ones). A read's keys
// are tracked; a write's are only in flight: a follower applies the write
// when the log brings it, maybe before the leader's reply reaches the
// client, and its invalidation must not overtake that reply. (A follower
// cannot tell its client's writes from others' in the log, so NOLOOP does
// not hold back their invalidations.)
func (c *Client) trackKeys(cmd *command.Command, argv [][]byte) {
	if cmd == nil {
		return
	}
	kind := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if kind = cmd.Subcommand(argv[1]); kind == nil {
			return
		}
	}
	if cmd.Flags&command.Conn != 0 || !kind.ArityOK(len(argv)) {
		return
	}
	if tracksRead(cmd, kind) {
		c.trackRead(kind, argv)
	}
	if !kind.IsWrite() {
		return
	}
	tr, t := c.track, c.srv.tracker
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr.inFlight == nil {
		tr.inFlight = map[string]struct{}{}
	}
	for _, k := range kind.SpecKeys(argv) {
		tr.inFlight[string(k)] = struct{}{}
	}
}

// trackingStats are INFO's tracking figures.
type trackingStats struct{ clients, keys, items, prefixes int }

func (t *tracker) stats() trackingStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := trackingStats{clients: t.clients, keys: len(t.keys), items: t.items}
	prefixes := map[string]bool{}
	for c := range t.bcast {
		for _, p := range c.track.prefixes {
			prefixes[string(p)] = true
		}
	}
	st.prefixes = len(prefixes)
	return st
}
