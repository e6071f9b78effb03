package command

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/store"
)

// XREAD and XREADGROUP. Without BLOCK, XREAD is an ordinary read and
// XREADGROUP an ordinary write. With BLOCK both go through the blocking
// path (shard/block.go): the record is applied, and if it finds nothing it
// waits for a write to one of its streams and is applied again. "$" is
// resolved to the stream's last ID the first time and written back into
// the record, so that a retry (and the log) reads what came after the call.
func init() {
	streamsSpec := func(from int) []KeySpec {
		return []KeySpec{{Flags: []string{"RO", "access"}, Keyword: "STREAMS", StartFrom: from, LastKey: -1, KeyStep: 1, Limit: 2}}
	}
	register(
		&Command{Name: "xread", Arity: -4, Flags: ReadOnly | Blocking, Categories: []string{"stream"}, Group: "stream", Since: "5.0.0",
			Summary:  "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
			KeySpecs: streamsSpec(1), Run: func(c *Ctx) { xreadGeneric(c, false) }},
		&Command{Name: "xreadgroup", Arity: -7, Flags: Write | Blocking, Categories: []string{"stream"}, Group: "stream", Since: "5.0.0",
			Summary:  "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
			KeySpecs: streamsSpec(4), Run: func(c *Ctx) { xreadGeneric(c, true) }},
	)
}

// isStreamRead reports whether argv is XREAD or XREADGROUP.
func isStreamRead(argv [][]byte) bool {
	name := strings.ToLower(string(argv[0]))
	return name == "xread" || name == "xreadgroup"
}

// blockArg returns the index of XREAD's BLOCK argument (0 if none), looked
// for before STREAMS as Redis parses the options.
func blockArg(argv [][]byte) int {
	for i := 1; i < len(argv)-1; i++ {
		switch strings.ToLower(string(argv[i])) {
		case "block":
			return i + 1
		case "streams":
			return 0
		case "count":
			i++
		case "group":
			i += 2
		}
	}
	return 0
}

// Blocks reports whether a command flagged Blocking blocks with these
// arguments: XREAD and XREADGROUP only with BLOCK.
func Blocks(argv [][]byte) bool { return !isStreamRead(argv) || blockArg(argv) > 0 }

// BlockTimeout returns how long a blocking command waits (0: forever), or
// the error it answers instead.
func BlockTimeout(argv [][]byte) (time.Duration, string) {
	if !isStreamRead(argv) {
		return ParseTimeout(TimeoutArg(argv))
	}
	ms, msg := parseBlockMS(argv[blockArg(argv)])
	return time.Duration(ms) * time.Millisecond, msg
}

// parseBlockMS reads BLOCK's milliseconds with Redis's errors.
func parseBlockMS(arg []byte) (int64, string) {
	ms, ok := num.ParseInt(arg)
	switch {
	case !ok:
		return 0, "ERR timeout is not an integer or out of range"
	case ms < 0:
		return 0, "ERR timeout is negative"
	case ms > 1<<62:
		return 0, "ERR timeout is out of range"
	}
	return ms, ""
}

// xreadStream is one stream of an XREAD: the key, the ID argument, what
// it resolved to, and (XREADGROUP) its group.
type xreadStream struct {
	key   []byte
	arg   int
	after streamID // entries after this one
	newer bool     // XREADGROUP ">"
	s     *stream
	e     *groupEdit

	// What servable read to tell that there is something to serve.
	ids  []streamID
	vals [][]byte
}

func xreadGeneric(c *Ctx, xgroup bool) {
	var count int64
	blocking, noack := false, false
	var groupName, consumerName []byte
	streamsAt := 0
	n := len(c.Args)
	for i := 1; i < n && streamsAt == 0; i++ {
		more := n - i - 1
		switch opt := strings.ToLower(c.Arg(i)); {
		case opt == "block" && more > 0:
			if c.script {
				// Redis refuses it outright: a script cannot wait.
				c.W.Error("ERR " + string(c.Args[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			if _, msg := parseBlockMS(c.Args[i]); msg != "" {
				c.W.Error(msg)
				return
			}
			blocking = true
		case opt == "count" && more > 0:
			i++
			v, ok := num.ParseInt(c.Args[i])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			count = max(v, 0)
		case opt == "streams" && more > 0:
			streamsAt = i + 1
			if (n-streamsAt)%2 != 0 {
				c.W.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
		case opt == "group" && more >= 2:
			if !xgroup {
				c.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumerName = c.Args[i+1], c.Args[i+2]
			i += 2
		case opt == "noack":
			if !xgroup {
				c.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if streamsAt == 0 {
		c.W.Error(ErrSyntax)
		return
	}
	if xgroup && groupName == nil {
		c.W.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	nstreams := (n - streamsAt) / 2
	retry := c.Retried()
	streams := make([]xreadStream, nstreams)
	for k := range streams {
		st := &streams[k]
		st.key, st.arg = c.Args[streamsAt+k], streamsAt+nstreams+k
		var s *stream
		if twin := xreadTwin(streams[:k], st.key); twin != nil {
			st.s, st.e = twin.s, twin.e
			s = twin.s
			if s == nil && c.Tx.NotifyOn(store.NotifyKeyMiss) {
				c.Tx.Lookup(st.key) // Redis looks it up again: another keymiss
			}
		} else if m, ok := c.Tx.Lookup(st.key); ok && m.Type != store.TypeStream {
			switch {
			case !retry:
				c.W.Error(ErrWrongType)
				return
			case xgroup:
				c.W.Error("UNBLOCKED the stream key no longer exists")
				return
			}
			// A blocked XREAD waits on while the key holds another type.
		} else if ok {
			s = &stream{c: c, key: st.key, m: m, h: decodeStreamHeader(m.Body)}
		}
		st.s = s
		if xgroup {
			if s != nil && st.e == nil {
				st.e, _ = s.group(groupName)
			}
			switch {
			case retry && s == nil:
				c.W.Error("UNBLOCKED the stream key no longer exists")
				return
			case retry && st.e == nil:
				c.W.Error("NOGROUP the consumer group this client was blocked on no longer exists")
				return
			case st.e == nil:
				c.W.Error("NOGROUP No such key '" + string(st.key) + "' or consumer group '" + string(groupName) + "' in XREADGROUP with GROUP option")
				return
			}
		}
		arg := c.Args[st.arg]
		switch string(arg) {
		case "$":
			if xgroup {
				c.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				st.after = s.h.last
			}
			if c.MayBlock() {
				c.Args[st.arg] = []byte(st.after.String())
			}
			continue
		case ">":
			if !xgroup {
				c.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			st.newer = true
			continue
		}
		id, ok := idArg(c, arg)
		if !ok {
			return
		}
		st.after = id
	}
	if retry && (nstreams > 1 || count == 0) {
		// A blocked call that is served answers as Redis serves a blocked
		// client: with the one stream that has news, at most COUNT (or
		// 1000) entries. The record is rewritten to say so, so that the
		// log replays the same reply.
		for k := range streams {
			if st := &streams[k]; st.s != nil {
				if serve, _ := st.servable(xgroup, 1); serve {
					argv := [][]byte{c.Args[0]}
					if xgroup {
						argv = append(argv, []byte("GROUP"), groupName, consumerName)
					}
					argv = append(argv, []byte("COUNT"), []byte(strconv.FormatInt(cmp.Or(count, 1000), 10)))
					if noack {
						argv = append(argv, []byte("NOACK"))
					}
					id := []byte(">")
					if !xgroup {
						id = []byte(st.after.String())
					}
					argv = append(argv, []byte("STREAMS"), st.key, id)
					c.rec.Cmds[0], c.Args = argv, argv
					xreadGeneric(c, xgroup)
					return
				}
			}
		}
	}
	// Serve what can be served now, stream by stream as Redis does (a
	// stream named twice sees what serving the first one did). The
	// replies go to a buffer until their number is known.
	w := c.W
	c.W = resp.NewWriter(w.Proto)
	served := 0
	for k := range streams {
		st := &streams[k]
		if st.s == nil {
			if c.Tx.NotifyOn(store.NotifyKeyMiss) {
				c.Tx.Lookup(st.key) // Redis looks it up again here: a second keymiss
			}
			continue
		}
		serve, history := st.servable(xgroup, count)
		if !serve {
			continue
		}
		served++
		if c.W.Proto != 3 {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(st.key)
		switch {
		case !xgroup:
			xreadEntries(c, st.ids, st.vals)
		case history:
			start, _ := st.after.incr()
			// The consumer is created, or seen, only when served.
			st.e.consumer(consumerName, true).seen = c.Tx.Now
			xreadHistory(c, st.e, consumerName, start, count)
			st.e.save()
		default:
			st.e.consumer(consumerName, true).seen = c.Tx.Now
			xreadNew(c, st, consumerName, noack)
			st.e.save()
		}
	}
	body := c.W
	c.W = w
	switch {
	case served > 0 && w.Proto == 3:
		w.MapLen(served)
		w.Raw(body.Bytes())
	case served > 0:
		w.ArrayLen(served)
		w.Raw(body.Bytes())
	case blocking && c.MayBlock():
		keys := make([][]byte, nstreams)
		for k := range streams {
			keys[k] = streams[k].key
		}
		c.BlockOn(keys)
	default:
		w.NullArray()
	}
}

// servable reports whether the call can be answered for this stream now,
// and whether from the consumer's history (an XREADGROUP ID other than
// ">"). For ">" it moves after to the group's last delivered ID. A new
// entry to serve is found by reading the first count of them (into ids and
// vals), which serving needs anyway.
func (st *xreadStream) servable(xgroup bool, count int64) (serve, history bool) {
	if xgroup {
		if !st.newer {
			return true, true
		}
		st.after = st.e.g.last
	}
	if st.s.h.length == 0 || st.s.h.last.cmp(st.after) <= 0 {
		// Nothing is after the last ID the stream generated: a reader
		// that has caught up (a consumer polling an idle stream) costs
		// no read.
		return false, false
	}
	start, _ := st.after.incr()
	st.ids, st.vals = st.s.entries(start, count)
	return len(st.ids) > 0, false
}

// xreadTwin finds an earlier stream of the call with the same key.
func xreadTwin(before []xreadStream, key []byte) *xreadStream {
	for k := range before {
		if string(before[k].key) == string(key) {
			return &before[k]
		}
	}
	return nil
}

// entries returns up to count (0: all) entries from start on.
func (s *stream) entries(start streamID, count int64) (ids []streamID, vals [][]byte) {
	if s.h.length == 0 {
		return nil, nil
	}
	from, to := entryBounds(s.liveFrom(start), maxStreamID)
	// A group's consumers read the next entries in turn: a write reads
	// ahead, so that the next consumers' reads in the same group seek
	// nothing (store.MembersAhead). Under bench/streamgroup (COUNT 1,
	// -P 16), 64 entries ahead instead of 4 took the reads' share of the
	// CPU from 7.0% to 5.6%.
	ahead := 0
	if count > 0 {
		ahead = 64
	}
	s.c.Tx.MembersAhead(s.key, from, to, false, ahead, func(sub, v []byte) bool {
		ids = append(ids, idFrom(sub[1:]))
		vals = append(vals, append([]byte(nil), v...))
		return count == 0 || int64(len(ids)) < count
	})
	return ids, vals
}

// xreadEntries replies with entries.
func xreadEntries(c *Ctx, ids []streamID, vals [][]byte) {
	c.W.ArrayLen(len(ids))
	for k, id := range ids {
		c.writeEntry(id, vals[k])
	}
}

func xreadNew(c *Ctx, st *xreadStream, consumerName []byte, noack bool) {
	e := st.e
	cons := e.consumer(consumerName, true)
	c.W.ArrayLen(len(st.ids))
	for k, id := range st.ids {
		e.delivered(id)
		c.writeEntry(id, st.vals[k])
		if noack {
			continue
		}
		n, had := e.nack(id)
		var prev *consumer
		if had {
			prev = e.consumer(n.consumer, false)
		}
		e.putNack(id, nack{time: c.Tx.Now, count: 1}, prev, cons)
	}
}

// xreadHistory replies with the consumer's own pending entries from start
// on, counting a new delivery for each; an entry deleted since is its ID
// with a nil body.
func xreadHistory(c *Ctx, e *groupEdit, consumerName []byte, start streamID, count int64) {
	var ids []streamID
	e.eachConsumerNack(consumerName, start, func(id streamID) bool {
		ids = append(ids, id)
		return count == 0 || int64(len(ids)) < count
	})
	c.W.ArrayLen(len(ids))
	for _, id := range ids {
		v, ok := e.s.entry(id)
		if !ok {
			c.W.ArrayLen(2)
			c.W.BulkString(id.String())
			c.W.NullArray()
			continue
		}
		c.writeEntry(id, v)
		n, _ := e.nack(id)
		n.time = c.Tx.Now
		n.count++
		c.Tx.SetMember(e.s.key, e.pelSub(id), n.encode())
	}
}
