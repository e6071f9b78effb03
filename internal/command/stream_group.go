package command

import (
	"encoding/binary"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// Consumer groups: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM (XREADGROUP
// is in stream_read.go). A group, each consumer and each pending entry is a
// member of the stream (see stream.go); a pending entry is stored twice, in
// the group's list and in its consumer's, as Redis keeps two PELs.
//
// Like Redis, these commands do not mark the key modified (no WATCH
// invalidation), except XGROUP CREATE ... MKSTREAM, which creates the key,
// and XGROUP DESTROY, which must wake the clients blocked on the group.
func init() {
	streamCat := []string{"stream"}
	nondet := []string{"nondeterministic_output"}
	one := singleKey("stream")
	sub := func(name string, arity int, flags Flags, since, summary string, keyFlags ...string) *Command {
		return &Command{Name: "xgroup|" + name, Arity: arity, Flags: flags, Categories: streamCat, Group: "stream", Since: since, Summary: summary,
			FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{{Flags: keyFlags, Index: 2, KeyStep: 1}}}
	}
	register(
		&Command{Name: "xgroup", Arity: -2, Group: "stream", Since: "5.0.0", Summary: "A container for consumer groups commands", Run: cmdXGroup,
			Subcommands: []*Command{
				sub("create", -5, Write|DenyOOM, "5.0.0", "Create a consumer group.", "RW", "insert"),
				sub("createconsumer", 5, Write|DenyOOM, "6.2.0", "Create a consumer in a consumer group.", "RW", "insert"),
				sub("delconsumer", 5, Write, "5.0.0", "Delete a consumer from a consumer group.", "RW", "delete"),
				sub("destroy", 4, Write, "5.0.0", "Destroy a consumer group.", "RW", "delete"),
				sub("setid", -5, Write, "5.0.0", "Set a consumer group to an arbitrary last delivered ID value.", "RW", "update"),
				{Name: "xgroup|help", Arity: 2, Flags: Loading | Stale, Categories: []string{"stream"}, Group: "stream", Since: "5.0.0", Summary: "Show helpful text about the different subcommands"},
			}},
		one(&Command{Name: "xack", Arity: -4, Flags: Write | Fast, Categories: streamCat, Since: "5.0.0", Summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", Run: cmdXAck}, "RW", "update"),
		one(&Command{Name: "xpending", Arity: -3, Flags: ReadOnly, Categories: []string{"stream"}, Since: "5.0.0", Summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", Tips: nondet, Run: cmdXPending}, "RO", "access"),
		one(&Command{Name: "xclaim", Arity: -6, Flags: Write | Fast, Categories: streamCat, Since: "5.0.0", Summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", Tips: nondet, Run: cmdXClaim}, "RW", "update"),
		one(&Command{Name: "xautoclaim", Arity: -6, Flags: Write | Fast, Categories: streamCat, Since: "6.2.0", Summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", Tips: nondet, Run: cmdXAutoClaim}, "RW", "delete"),
	)
	table["xgroup"].Subcommands[5].Run = cmdXGroupHelp
}

// invalidEntriesRead is SCG_INVALID_ENTRIES_READ: the group's read counter
// is unknown.
const invalidEntriesRead = -1

// group is a consumer group: where it is (last delivered ID), how many
// entries it read (for the lag), and its counts.
type group struct {
	name        []byte
	last        streamID
	entriesRead int64
	pending     uint64
	consumers   uint64
	// pelMax is at or after every ID in the pending list: a new delivery
	// after it needs no lookup of an earlier one. (Records written before
	// it was kept have none: group finds it.)
	pelMax streamID
	// pelMin is at or before every ID in the pending list, so a scan of
	// the lists starts there instead of stepping over every entry acked
	// before it (deleted, they stay in the engine until compacted). It
	// moves up to the first pending entry after every pelMinEvery entries
	// leave the list, and when the list empties (groupEdit.save); dropped
	// counts them. Records written before it was kept have 0-0.
	pelMin  streamID
	dropped uint64
}

// pelMinEvery is how many entries leave a pending list between two
// lookups of its first one: a lookup per XACK cost XREADGROUP+XACK 4% of
// its CPU, and a scan steps over at most about this many more deletions.
const pelMinEvery = 32

// groupRecordLen is the length of a group record with every field.
const groupRecordLen = 80

// Point reads look up a group's record, its consumers and its pending
// entries again soon after they are written (XACK the entry XREADGROUP
// delivered): they may have member memos, a stream's entries not.
func init() { store.MemoStreamMembers("gcp") }

func groupSub(name []byte) []byte { return append([]byte{'g'}, name...) }

// groupTagged is tag | len(group) | group: the prefix of a group's
// consumers ('c'), pending entries ('p') or consumers' pending entries ('q').
// It has room for what callers append (an entry ID, a consumer's name, or
// both), so that a sub key is one allocation.
func groupTagged(tag byte, name []byte) []byte {
	b := binary.BigEndian.AppendUint32(append(make([]byte, 0, 5+len(name)+groupTaggedRoom), tag), uint32(len(name)))
	return append(b, name...)
}

const groupTaggedRoom = 48

func (g *group) encode() []byte {
	b := g.last.append(make([]byte, 0, groupRecordLen))
	b = binary.BigEndian.AppendUint64(b, uint64(g.entriesRead))
	b = binary.BigEndian.AppendUint64(b, g.pending)
	b = binary.BigEndian.AppendUint64(b, g.consumers)
	b = g.pelMin.append(g.pelMax.append(b))
	return binary.BigEndian.AppendUint64(b, g.dropped)
}

func decodeGroup(name, b []byte) *group {
	g := &group{name: append([]byte(nil), name...), last: idFrom(b), entriesRead: int64(binary.BigEndian.Uint64(b[16:])),
		pending: binary.BigEndian.Uint64(b[24:]), consumers: binary.BigEndian.Uint64(b[32:]), pelMax: maxStreamID}
	if len(b) >= 56 {
		g.pelMax = idFrom(b[40:])
	}
	if len(b) >= groupRecordLen {
		g.pelMin, g.dropped = idFrom(b[56:]), binary.BigEndian.Uint64(b[72:])
	}
	return g
}

// consumer is a group's consumer: when it was last seen and how many
// entries it has pending.
type consumer struct {
	name    []byte
	seen    int64
	pending uint64
	created bool // by this command: save raises "xgroup-createconsumer"
}

// nack is a pending entry: its consumer, last delivery time and count.
type nack struct {
	time     int64
	count    uint64
	consumer []byte
}

func (n *nack) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16+len(n.consumer)), uint64(n.time))
	b = binary.BigEndian.AppendUint64(b, n.count)
	return append(b, n.consumer...)
}

func decodeNack(b []byte) nack {
	return nack{time: int64(binary.BigEndian.Uint64(b)), count: binary.BigEndian.Uint64(b[8:]), consumer: append([]byte(nil), b[16:]...)}
}

// groupEdit is one command's work on a group: the group and the consumers
// it loaded, written back by save.
type groupEdit struct {
	s    *stream
	g    *group
	cons []*consumer // loaded, in load order
	// findMin says save looks up the first pending entry for pelMin.
	findMin bool
}

// group finds a group of the stream.
func (s *stream) group(name []byte) (*groupEdit, bool) {
	v, ok := s.c.Tx.Member(s.key, groupSub(name))
	if !ok {
		return nil, false
	}
	e := &groupEdit{s: s, g: decodeGroup(name, v)}
	// Records written before pelMin, or pelMax, was kept: the next save
	// stores pelMin; pelMax is found now.
	e.findMin = len(v) < groupRecordLen
	if e.g.pelMax == maxStreamID {
		e.g.pelMax = streamID{}
		p := groupTagged('p', name)
		s.c.Tx.Members(s.key, p, store.PrefixEnd(p), true, func(sub, _ []byte) bool {
			e.g.pelMax = idFrom(sub[len(p):])
			return false
		})
	}
	return e, true
}

// groups lists the stream's groups in name order.
func (s *stream) groups() []*group {
	var out []*group
	s.c.Tx.Members(s.key, []byte{'g'}, []byte{'g' + 1}, false, func(sub, v []byte) bool {
		out = append(out, decodeGroup(sub[1:], v))
		return true
	})
	return out
}

func (e *groupEdit) consumerSub(name []byte) []byte {
	return append(groupTagged('c', e.g.name), name...)
}

func (e *groupEdit) pelSub(id streamID) []byte { return id.append(groupTagged('p', e.g.name)) }

func (e *groupEdit) consumerPelPrefix(name []byte) []byte {
	b := binary.BigEndian.AppendUint32(groupTagged('q', e.g.name), uint32(len(name)))
	return append(b, name...)
}

// consumer returns a consumer of the group, created if create (it then
// counts as seen now); nil if missing and not create.
func (e *groupEdit) consumer(name []byte, create bool) *consumer {
	for _, c := range e.cons {
		if string(c.name) == string(name) {
			return c
		}
	}
	var c *consumer
	if v, ok := e.s.c.Tx.Member(e.s.key, e.consumerSub(name)); ok {
		c = &consumer{name: append([]byte(nil), name...), seen: int64(binary.BigEndian.Uint64(v)), pending: binary.BigEndian.Uint64(v[8:])}
	} else if create {
		c = &consumer{name: append([]byte(nil), name...), seen: e.s.c.Tx.Now, created: true}
		e.g.consumers++
	} else {
		return nil
	}
	e.cons = append(e.cons, c)
	return c
}

// save writes the group and the consumers it loaded, held in the Tx: the
// XREADGROUPs and XACKs of one group rewrite the same few.
func (e *groupEdit) save() {
	tx := e.s.c.Tx
	if e.findMin {
		e.findMin = false
		from := e.g.pelMin
		e.g.pelMin, e.g.dropped = e.g.pelMax, 0 // past the last entry acked, if none is left
		if e.g.pending > 0 {
			// Forward from the old bound: each acknowledged entry is
			// stepped over once here, not by every later scan.
			p := groupTagged('p', e.g.name)
			tx.Members(e.s.key, from.append(p), store.PrefixEnd(p), false, func(sub, _ []byte) bool {
				e.g.pelMin = idFrom(sub[len(p):])
				return false
			})
		}
	}
	tx.HoldMember(e.s.key, groupSub(e.g.name), e.g.encode())
	for _, c := range e.cons {
		v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(c.seen))
		tx.HoldMember(e.s.key, e.consumerSub(c.name), binary.BigEndian.AppendUint64(v, c.pending))
		if c.created {
			tx.Notify(store.NotifyStream, "xgroup-createconsumer", e.s.key)
			c.created = false
		}
	}
}

// nack returns the group's pending entry for id.
func (e *groupEdit) nack(id streamID) (nack, bool) {
	if id.cmp(e.g.pelMax) > 0 {
		return nack{}, false
	}
	v, ok := e.s.c.Tx.Member(e.s.key, e.pelSub(id))
	if !ok {
		return nack{}, false
	}
	return decodeNack(v), true
}

// putNack writes a pending entry owned by c; prev is its previous owner
// (nil for a new entry), whose list loses it.
func (e *groupEdit) putNack(id streamID, n nack, prev, c *consumer) {
	tx := e.s.c.Tx
	if prev == nil {
		if e.g.pending == 0 || id.cmp(e.g.pelMin) < 0 {
			e.g.pelMin = id
		}
		e.g.pending++
	}
	if id.cmp(e.g.pelMax) > 0 {
		e.g.pelMax = id
	}
	if prev != c {
		if prev != nil {
			tx.DeleteMember(e.s.key, id.append(e.consumerPelPrefix(prev.name)))
			prev.pending--
		}
		tx.SetMember(e.s.key, id.append(e.consumerPelPrefix(c.name)), nil)
		c.pending++
	}
	n.consumer = c.name
	tx.SetMember(e.s.key, e.pelSub(id), n.encode())
}

// dropNack removes a pending entry from both lists.
func (e *groupEdit) dropNack(id streamID, n nack) {
	tx := e.s.c.Tx
	tx.DeleteMember(e.s.key, e.pelSub(id))
	tx.DeleteMember(e.s.key, id.append(e.consumerPelPrefix(n.consumer)))
	e.g.pending--
	if e.g.dropped++; e.g.pending == 0 || e.g.dropped >= pelMinEvery {
		e.findMin = true
	}
	if owner := e.consumer(n.consumer, false); owner != nil {
		owner.pending--
	}
}

// eachNack visits the group's pending entries from id start on.
func (e *groupEdit) eachNack(start streamID, fn func(id streamID, n nack) bool) {
	p := groupTagged('p', e.g.name)
	e.s.c.Tx.Members(e.s.key, e.pelFrom(start).append(p), store.PrefixEnd(p), false, func(sub, v []byte) bool {
		return fn(idFrom(sub[len(p):]), decodeNack(v))
	})
}

// eachConsumerNack visits the IDs of a consumer's pending entries from
// start on.
func (e *groupEdit) eachConsumerNack(name []byte, start streamID, fn func(id streamID) bool) {
	p := e.consumerPelPrefix(name)
	e.s.c.Tx.Members(e.s.key, e.pelFrom(start).append(p), store.PrefixEnd(p), false, func(sub, _ []byte) bool {
		return fn(idFrom(sub[len(p):]))
	})
}

// pelFrom is where a scan of the pending lists from start begins: no
// entry of them is before pelMin.
func (e *groupEdit) pelFrom(start streamID) streamID {
	if start.cmp(e.g.pelMin) < 0 {
		return e.g.pelMin
	}
	return start
}

// rangeHasTombstones reports whether an entry was deleted in [start, end],
// as streamRangeHasTombstones.
func (s *stream) rangeHasTombstones(start streamID) bool {
	if s.h.length == 0 || s.h.maxDeleted.isZero() || s.h.first.cmp(s.h.maxDeleted) > 0 {
		return false
	}
	return start.cmp(s.h.maxDeleted) <= 0
}

// estimateEntriesRead is streamEstimateDistanceFromFirstEverEntry: the
// number of entries up to id, or invalidEntriesRead when it cannot tell.
func (s *stream) estimateEntriesRead(id streamID) int64 {
	h := &s.h
	if h.entriesAdded == 0 {
		return 0
	}
	if h.length == 0 && id.cmp(h.last) < 1 {
		return int64(h.entriesAdded)
	}
	switch cmpLast := id.cmp(h.last); {
	case cmpLast == 0:
		return int64(h.entriesAdded)
	case cmpLast > 0:
		return invalidEntriesRead
	}
	if h.maxDeleted.isZero() || h.maxDeleted.cmp(h.first) < 0 {
		switch id.cmp(h.first) {
		case -1:
			return int64(h.entriesAdded - h.length)
		case 0:
			return int64(h.entriesAdded - h.length + 1)
		}
	}
	return invalidEntriesRead
}

// lag is a group's lag as XINFO reports it; false when unknown (nil).
func (s *stream) lag(g *group) (int64, bool) {
	switch {
	case s.h.entriesAdded == 0:
		return 0, true
	case g.entriesRead != invalidEntriesRead && !s.rangeHasTombstones(g.last):
		return int64(s.h.entriesAdded) - g.entriesRead, true
	}
	if read := s.estimateEntriesRead(g.last); read != invalidEntriesRead {
		return int64(s.h.entriesAdded) - read, true
	}
	return 0, false
}

// delivered moves the group past id, an entry it just read (the read
// counter as streamReplyWithRange keeps it).
func (e *groupEdit) delivered(id streamID) {
	g, s := e.g, e.s
	if id.cmp(g.last) <= 0 {
		return
	}
	if g.entriesRead != invalidEntriesRead && !s.rangeHasTombstones(id) {
		g.entriesRead++
	} else if s.h.entriesAdded > 0 {
		g.entriesRead = s.estimateEntriesRead(id)
	}
	g.last = id
}

func errNoGroup(key, group []byte) string {
	return "NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'"
}

var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

func cmdXGroupHelp(c *Ctx) {
	HelpReply(c.W, xgroupHelp)
}

// cmdXGroup runs XGROUP's subcommands with Redis's order of checks.
func cmdXGroup(c *Ctx) {
	sub := strings.ToLower(c.Arg(1))
	if sub == "help" {
		cmdXGroupHelp(c)
		return
	}
	syntax := func() {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + c.Arg(1) + "'. Try XGROUP HELP.")
	}
	mkstream := false
	entriesRead := int64(invalidEntriesRead)
	if sub == "create" || sub == "setid" {
		for i := 5; i < len(c.Args); {
			opt := strings.ToLower(c.Arg(i))
			switch {
			case opt == "mkstream" && sub == "create":
				mkstream = true
				i++
			case opt == "entriesread" && i+1 < len(c.Args):
				n, ok := num.ParseInt(c.Args[i+1])
				if !ok {
					c.W.Error(ErrNotInt)
					return
				}
				if n < 0 && n != invalidEntriesRead {
					c.W.Error("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = n
				i += 2
			default:
				syntax()
				return
			}
		}
	}
	key, name := c.Args[2], c.Args[3]
	s, wrong := openStream(c, key)
	if wrong {
		return
	}
	if s == nil && !mkstream {
		c.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
		return
	}
	var e *groupEdit
	if s != nil {
		e, _ = s.group(name)
	}
	if e == nil && (sub == "setid" || sub == "createconsumer" || sub == "delconsumer") {
		c.W.Error("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
		return
	}
	switch {
	case sub == "create" && len(c.Args) <= 8:
		var id streamID
		if c.Arg(4) == "$" {
			if s != nil {
				id = s.h.last
			}
		} else {
			var ok bool
			if id, ok = idArg(c, c.Args[4]); !ok {
				return
			}
		}
		if s == nil {
			s = newStream(c, key)
			s.save()
		}
		if e != nil {
			c.W.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
		e = &groupEdit{s: s, g: &group{name: name, last: id, entriesRead: entriesRead}}
		e.save()
		c.Tx.Notify(store.NotifyStream, "xgroup-create", key)
		c.W.OK()
	case sub == "setid" && (len(c.Args) == 5 || len(c.Args) == 7):
		var id streamID
		if c.Arg(4) == "$" {
			id = s.h.last
		} else {
			var ok bool
			if id, ok = parseID(c.Args[4], false, 0, nil); !ok {
				c.W.Error(errInvalidID)
				return
			}
		}
		e.g.last, e.g.entriesRead = id, entriesRead
		e.save()
		c.Tx.Notify(store.NotifyStream, "xgroup-setid", key)
		c.W.OK()
	case sub == "destroy" && len(c.Args) == 4:
		if e == nil {
			c.W.Int(0)
			return
		}
		tx := c.Tx
		tx.DeleteMember(key, groupSub(name))
		for _, tag := range []byte{'c', 'p', 'q'} {
			p := groupTagged(tag, name)
			tx.DeleteMemberRange(key, p, store.PrefixEnd(p))
		}
		// Marks the key modified, which wakes the clients blocked on the
		// group (they get NOGROUP); Redis only wakes them.
		s.save()
		c.Tx.Notify(store.NotifyStream, "xgroup-destroy", key)
		c.W.Int(1)
	case sub == "createconsumer" && len(c.Args) == 5:
		if e.consumer(c.Args[4], false) != nil {
			c.W.Int(0)
			return
		}
		e.consumer(c.Args[4], true)
		e.save()
		c.W.Int(1)
	case sub == "delconsumer" && len(c.Args) == 5:
		cons := e.consumer(c.Args[4], false)
		if cons == nil {
			c.W.Int(0)
			return
		}
		pending := cons.pending
		var ids []streamID
		e.eachConsumerNack(cons.name, streamID{}, func(id streamID) bool {
			ids = append(ids, id)
			return true
		})
		for _, id := range ids {
			c.Tx.DeleteMember(key, e.pelSub(id))
		}
		p := e.consumerPelPrefix(cons.name)
		c.Tx.DeleteMemberRange(key, p, store.PrefixEnd(p))
		e.findMin = e.findMin || len(ids) > 0
		c.Tx.DeleteMember(key, e.consumerSub(cons.name))
		e.g.pending -= pending
		e.g.consumers--
		e.cons = nil
		e.save()
		c.Tx.Notify(store.NotifyStream, "xgroup-delconsumer", key)
		c.W.Int(int64(pending))
	default:
		syntax()
	}
}

// groupArgs opens key and its group for XACK-like commands; a missing key
// or group is reported by missing (which replies).
func groupArgs(c *Ctx, missing func()) (*groupEdit, bool) {
	prev := c.Tx.KeyMiss(true) // a read lookup in Redis, even for XACK (keymiss events)
	s, wrong := openStream(c, c.Args[1])
	c.Tx.KeyMiss(prev)
	if wrong {
		return nil, false
	}
	var e *groupEdit
	if s != nil {
		e, _ = s.group(c.Args[2])
	}
	if e == nil {
		missing()
		return nil, false
	}
	return e, true
}

// XACK key group id [id ...]
func cmdXAck(c *Ctx) {
	e, ok := groupArgs(c, func() { c.W.Int(0) })
	if !ok {
		return
	}
	ids := make([]streamID, 0, len(c.Args)-3)
	for _, a := range c.Args[3:] {
		id, ok := idArg(c, a)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	acked := int64(0)
	for _, id := range ids {
		if n, ok := e.nack(id); ok {
			e.dropNack(id, n)
			acked++
		}
	}
	if acked > 0 {
		e.save()
	}
	c.W.Int(acked)
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
func cmdXPending(c *Ctx) {
	n := len(c.Args)
	if n != 3 && (n < 6 || n > 9) {
		c.W.Error(ErrSyntax)
		return
	}
	var start, end streamID
	var count, minIdle int64
	var consumerName []byte
	if n >= 6 {
		at := 3
		if strings.EqualFold(c.Arg(3), "idle") {
			v, ok := num.ParseInt(c.Args[4])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			minIdle = v
			if n < 8 {
				c.W.Error(ErrSyntax)
				return
			}
			at += 2
		}
		v, ok := num.ParseInt(c.Args[at+2])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		count = max(v, 0)
		if start, ok = intervalArg(c, c.Args[at], true); !ok {
			return
		}
		if end, ok = intervalArg(c, c.Args[at+1], false); !ok {
			return
		}
		if at+3 < n {
			consumerName = c.Args[at+3]
		}
	}
	e, ok := groupArgs(c, func() { c.W.Error(errNoGroup(c.Args[1], c.Args[2])) })
	if !ok {
		return
	}
	if n == 3 {
		xpendingSummary(c, e)
		return
	}
	now := c.Tx.Now
	type row struct {
		id streamID
		n  nack
	}
	var rows []row
	visit := func(id streamID, nk nack) bool {
		if id.cmp(end) > 0 || count == 0 {
			return false
		}
		if minIdle != 0 && now-nk.time < minIdle {
			return true
		}
		rows = append(rows, row{id, nk})
		count--
		return true
	}
	if consumerName != nil {
		if e.consumer(consumerName, false) == nil {
			c.W.ArrayLen(0)
			return
		}
		e.eachConsumerNack(consumerName, start, func(id streamID) bool {
			nk, _ := e.nack(id)
			return visit(id, nk)
		})
	} else {
		e.eachNack(start, visit)
	}
	c.W.ArrayLen(len(rows))
	for _, r := range rows {
		c.W.ArrayLen(4)
		c.W.BulkString(r.id.String())
		c.W.Bulk(r.n.consumer)
		c.W.Int(max(now-r.n.time, 0))
		c.W.Int(int64(r.n.count))
	}
}

// xpendingSummary answers XPENDING key group: the count, the smallest and
// greatest pending IDs, and the consumers with entries pending.
func xpendingSummary(c *Ctx, e *groupEdit) {
	c.W.ArrayLen(4)
	c.W.Int(int64(e.g.pending))
	if e.g.pending == 0 {
		c.W.Null()
		c.W.Null()
		c.W.NullArray()
		return
	}
	p := groupTagged('p', e.g.name)
	var ids []streamID
	for _, rev := range []bool{false, true} {
		c.Tx.Members(e.s.key, e.g.pelMin.append(p), store.PrefixEnd(p), rev, func(sub, _ []byte) bool {
			ids = append(ids, idFrom(sub[len(p):]))
			return false
		})
	}
	c.W.BulkString(ids[0].String())
	c.W.BulkString(ids[1].String())
	type row struct {
		name    []byte
		pending uint64
	}
	var rows []row
	cp := groupTagged('c', e.g.name)
	c.Tx.Members(e.s.key, cp, store.PrefixEnd(cp), false, func(sub, v []byte) bool {
		if n := binary.BigEndian.Uint64(v[8:]); n > 0 {
			rows = append(rows, row{append([]byte(nil), sub[len(cp):]...), n})
		}
		return true
	})
	c.W.ArrayLen(len(rows))
	for _, r := range rows {
		c.W.ArrayLen(2)
		c.W.Bulk(r.name)
		c.W.BulkInt(int64(r.pending))
	}
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
// [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]
func cmdXClaim(c *Ctx) {
	e, ok := groupArgs(c, func() { c.W.Error(errNoGroup(c.Args[1], c.Args[2])) })
	if !ok {
		return
	}
	minIdle, ok := num.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(c.Args); j++ {
		if _, ok := parseID(c.Args[j], true, 0, nil); !ok {
			break
		}
	}
	lastIDArg := j
	now := c.Tx.Now
	at, retry := int64(-1), int64(-1)
	force, justid := false, false
	var lastID streamID
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		opt := strings.ToLower(c.Arg(j))
		intOpt := func(what string) (int64, bool) {
			j++
			v, ok := num.ParseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid " + what + " option argument for XCLAIM")
			}
			return v, ok
		}
		switch {
		case opt == "force":
			force = true
		case opt == "justid":
			justid = true
		case opt == "idle" && more > 0:
			v, ok := intOpt("IDLE")
			if !ok {
				return
			}
			at = now - v
		case opt == "time" && more > 0:
			if at, ok = intOpt("TIME"); !ok {
				return
			}
		case opt == "retrycount" && more > 0:
			if retry, ok = intOpt("RETRYCOUNT"); !ok {
				return
			}
		case opt == "lastid" && more > 0:
			j++
			if lastID, ok = idArg(c, c.Args[j]); !ok {
				return
			}
		default:
			c.W.Error("ERR Unrecognized XCLAIM option '" + c.Arg(j) + "'")
			return
		}
	}
	if at < 0 || at > now {
		// A delivery time in the future or bogus means now, as Redis.
		at = now
	}
	if lastID.cmp(e.g.last) > 0 {
		e.g.last = lastID
	}
	var cons *consumer
	type claimed struct {
		id streamID
		v  []byte
	}
	var out []claimed
	for _, a := range c.Args[5:lastIDArg] {
		id, _ := parseID(a, true, 0, nil)
		n, had := e.nack(id)
		v, exists := e.s.entry(id)
		if !exists {
			if had {
				e.dropNack(id, n)
			}
			continue
		}
		switch {
		case !had && !force:
			continue
		case !had:
			n = nack{time: now, count: 1} // FORCE makes the entry pending
		case minIdle > 0 && now-n.time < minIdle:
			continue
		}
		if cons == nil {
			cons = e.consumer(c.Args[3], true)
			cons.seen = now
		}
		var prev *consumer
		if had {
			prev = e.consumer(n.consumer, false)
		}
		n.time = at
		if retry >= 0 {
			n.count = uint64(retry)
		} else if !justid {
			n.count++
		}
		e.putNack(id, n, prev, cons)
		out = append(out, claimed{id, v})
	}
	e.save()
	c.W.ArrayLen(len(out))
	for _, cl := range out {
		if justid {
			c.W.BulkString(cl.id.String())
		} else {
			c.writeEntry(cl.id, cl.v)
		}
	}
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func cmdXAutoClaim(c *Ctx) {
	minIdle, ok := num.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := intervalArg(c, c.Args[5], true)
	if !ok {
		return
	}
	count := int64(100)
	justid := false
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch opt := strings.ToLower(c.Arg(j)); {
		case opt == "count" && more > 0:
			v, ok := num.ParseInt(c.Args[j+1])
			if !ok || v < 1 || v > (1<<63-1)/16 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case opt == "justid":
			justid = true
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	e, ok := groupArgs(c, func() { c.W.Error(errNoGroup(c.Args[1], c.Args[2])) })
	if !ok {
		return
	}
	now := c.Tx.Now
	attempts := count * 10
	var cons *consumer
	type claimed struct {
		id streamID
		v  []byte
	}
	var out []claimed
	var deleted []streamID
	var next streamID
	// The iterator sees the list as it was, so claiming on the way is safe.
	e.eachNack(start, func(id streamID, n nack) bool {
		if attempts == 0 || count == 0 {
			next = id // the cursor: the first entry not looked at
			return false
		}
		attempts--
		v, exists := e.s.entry(id)
		if !exists {
			e.dropNack(id, n)
			deleted = append(deleted, id)
			count--
			return true
		}
		if minIdle > 0 && now-n.time < minIdle {
			return true
		}
		if cons == nil {
			cons = e.consumer(c.Args[3], true)
			cons.seen = now
		}
		n.time = now
		if !justid {
			n.count++
		}
		e.putNack(id, n, e.consumer(n.consumer, false), cons)
		out = append(out, claimed{id, append([]byte(nil), v...)})
		count--
		return true
	})
	if cons != nil || len(deleted) > 0 || e.findMin {
		e.save() // else nothing changed: no write to log
	}
	c.W.ArrayLen(3)
	c.W.BulkString(next.String())
	c.W.ArrayLen(len(out))
	for _, cl := range out {
		if justid {
			c.W.BulkString(cl.id.String())
		} else {
			c.writeEntry(cl.id, cl.v)
		}
	}
	c.W.ArrayLen(len(deleted))
	for _, id := range deleted {
		c.W.BulkString(id.String())
	}
}
