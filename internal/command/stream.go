package command

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"basalt/internal/num"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Streams (t_stream.c in Redis). A stream is a metadata entry whose body is
// streamHeader, and member entries told apart by a tag byte:
//
//	'e' | id                          an entry: its fields and values
//	'n' | id                          a node (see below): counts, size, last id, fields
//	'g' | group                       a consumer group: last id, entries read, counts
//	'c' | len | group | consumer      a consumer: seen time, pending count
//	'p' | len | group | id            the group's pending entry: time, count, consumer
//	'q' | len | group | len | consumer | id   the same entry in its consumer's list
//
// IDs are 16 bytes big-endian (ms, seq), so byte order is ID order and every
// range (XRANGE, XPENDING, XAUTOCLAIM) is one seek. Lengths are 4 bytes.
//
// Redis packs entries into listpack nodes of at most stream-node-max-entries
// entries (100) or stream-node-max-bytes bytes (4096), and approximate
// trimming (MAXLEN ~, MINID ~) removes whole nodes only. Nodes are kept
// here as bookkeeping (an 'n' member per node, keyed by its first ID, with
// the size its listpack would have) so that '~' trims what Redis trims;
// the entries themselves are stored one by one.
func init() {
	one := singleKey("stream")
	streamCat := []string{"stream"}
	nondet := []string{"nondeterministic_output"}
	register(
		one(&Command{Name: "xadd", Arity: -5, Flags: Write | DenyOOM | Fast, Categories: streamCat, Since: "5.0.0", Summary: "Appends a new entry to a stream", Tips: nondet, Run: cmdXAdd}, "RW", "update"),
		one(&Command{Name: "xlen", Arity: 2, Flags: ReadOnly | Fast, Categories: []string{"stream"}, Since: "5.0.0", Summary: "Return the number of entries in a stream", Run: cmdXLen}, "RO"),
		one(&Command{Name: "xrange", Arity: -4, Flags: ReadOnly, Categories: streamCat, Since: "5.0.0", Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval", Run: func(c *Ctx) { xrangeGeneric(c, false) }}, "RO", "access"),
		one(&Command{Name: "xrevrange", Arity: -4, Flags: ReadOnly, Categories: streamCat, Since: "5.0.0", Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", Run: func(c *Ctx) { xrangeGeneric(c, true) }}, "RO", "access"),
		one(&Command{Name: "xdel", Arity: -3, Flags: Write | Fast, Categories: streamCat, Since: "5.0.0", Summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", Run: cmdXDel}, "RW", "delete"),
		one(&Command{Name: "xtrim", Arity: -4, Flags: Write, Categories: streamCat, Since: "5.0.0", Summary: "Trims the stream to (approximately if '~' is passed) a certain size", Tips: nondet, Run: cmdXTrim}, "RW", "delete"),
		one(&Command{Name: "xsetid", Arity: -3, Flags: Write | DenyOOM | Fast, Categories: streamCat, Since: "5.0.0", Summary: "An internal command for replicating stream values", Run: cmdXSetID}, "RW", "update"),
	)
	table["xadd"].KeySpecs[0].Notes = "UPDATE instead of INSERT because of the optional trimming feature"
}

const (
	errInvalidID     = "ERR Invalid stream ID specified as stream command argument"
	errXAddSmaller   = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXAddZero      = "ERR The ID specified in XADD must be greater than 0-0"
	errXAddExhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errIntervalStart = "ERR invalid start ID for the interval"
	errIntervalEnd   = "ERR invalid end ID for the interval"
)

// streamNodeMax is stream-node-max-entries and stream-node-max-bytes as
// configured on this node. The leader reads them once per record and keeps
// them in it (Record.StreamNode), so that applying a record never depends
// on a follower's configuration.
var streamNodeMax atomic.Pointer[shard.StreamNodeMax]

// SetStreamNodeMax sets stream-node-max-entries and stream-node-max-bytes.
func SetStreamNodeMax(entries, bytes int64) {
	streamNodeMax.Store(&shard.StreamNodeMax{Entries: entries, Bytes: bytes})
}

// streamNodeLimits returns the node limits the record applies with: the
// configured ones on the leader applying it for its client, those logged
// with it otherwise.
func (c *Ctx) streamNodeLimits() shard.StreamNodeMax {
	if c.rec == nil {
		return shard.DefaultStreamNodeMax
	}
	if c.rec.StreamNode == nil {
		limits := shard.DefaultStreamNodeMax
		if p := streamNodeMax.Load(); c.live && p != nil {
			limits = *p
		}
		c.rec.StreamNode = &limits
	}
	return *c.rec.StreamNode
}

// streamListpackMaxSize bounds a node's bytes whatever stream-node-max-bytes
// says (STREAM_LISTPACK_MAX_SIZE).
const streamListpackMaxSize = 1 << 30

// streamID is an entry ID: milliseconds and a sequence number.
type streamID struct{ ms, seq uint64 }

var maxStreamID = streamID{math.MaxUint64, math.MaxUint64}

func (a streamID) cmp(b streamID) int {
	switch {
	case a.ms < b.ms:
		return -1
	case a.ms > b.ms:
		return 1
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (a streamID) isZero() bool { return a.ms == 0 && a.seq == 0 }

func (a streamID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}

func (a streamID) append(buf []byte) []byte {
	buf = binary.BigEndian.AppendUint64(buf, a.ms)
	return binary.BigEndian.AppendUint64(buf, a.seq)
}

func idFrom(b []byte) streamID {
	return streamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// incr returns the next ID; false past the last possible one.
func (a streamID) incr() (streamID, bool) {
	switch {
	case a.seq < math.MaxUint64:
		a.seq++
	case a.ms < math.MaxUint64:
		a.ms, a.seq = a.ms+1, 0
	default:
		return a, false
	}
	return a, true
}

// decr returns the previous ID; false before 0-0.
func (a streamID) decr() (streamID, bool) {
	switch {
	case a.seq > 0:
		a.seq--
	case a.ms > 0:
		a.ms, a.seq = a.ms-1, math.MaxUint64
	default:
		return a, false
	}
	return a, true
}

// parseU64 reads a number as Redis's string2ull does: a valid long long
// must not be negative; anything else goes through strtoull, which takes
// leading spaces, a sign and leading zeros, and wraps a negative value.
func parseU64(s string) (uint64, bool) {
	if n, ok := num.ParseIntString(s); ok {
		return uint64(n), n >= 0
	}
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v uint64
	for ; i < len(s); i++ {
		d := s[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false // ERANGE
		}
		v = v*10 + uint64(d-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseID reads a stream ID as streamGenericParseIDOrReply: "ms-seq" or
// "ms" (seq = missingSeq); "-" and "+" unless strict; with seqAuto, "ms-*"
// (reported by auto). It does not reply.
func parseID(arg []byte, strict bool, missingSeq uint64, seqAuto *bool) (streamID, bool) {
	s := string(arg)
	if len(s) > 127 {
		return streamID{}, false
	}
	if len(s) == 1 && (s[0] == '-' || s[0] == '+') {
		if strict {
			return streamID{}, false
		}
		if s[0] == '-' {
			return streamID{0, 0}, true
		}
		return maxStreamID, true
	}
	msPart, seqPart, dash := strings.Cut(s, "-")
	ms, ok := parseU64(msPart)
	if !ok {
		return streamID{}, false
	}
	if !dash {
		return streamID{ms, missingSeq}, true
	}
	if seqAuto != nil && seqPart == "*" {
		*seqAuto = true
		return streamID{ms, 0}, true
	}
	seq, ok := parseU64(seqPart)
	return streamID{ms, seq}, ok
}

// idArg parses a strict ID argument or replies with Redis's error.
func idArg(c *Ctx, arg []byte) (streamID, bool) {
	id, ok := parseID(arg, true, 0, nil)
	if !ok {
		c.W.Error(errInvalidID)
	}
	return id, ok
}

// intervalArg parses a range bound: an ID, "-"/"+", or "(id" for an
// exclusive bound (made inclusive here). It replies on error.
func intervalArg(c *Ctx, arg []byte, start bool) (streamID, bool) {
	missing := uint64(0)
	if !start {
		missing = math.MaxUint64
	}
	if len(arg) > 1 && arg[0] == '(' {
		id, ok := parseID(arg[1:], true, missing, nil)
		if !ok {
			c.W.Error(errInvalidID)
			return id, false
		}
		if start {
			if id, ok = id.incr(); !ok {
				c.W.Error(errIntervalStart)
			}
		} else if id, ok = id.decr(); !ok {
			c.W.Error(errIntervalEnd)
		}
		return id, ok
	}
	id, ok := parseID(arg, false, missing, nil)
	if !ok {
		c.W.Error(errInvalidID)
	}
	return id, ok
}

// streamHeader is a stream's metadata body.
type streamHeader struct {
	length       uint64
	entriesAdded uint64
	nodes        uint64
	last         streamID // last ID generated (XADD, XSETID)
	first        streamID // first live entry, 0-0 when empty
	maxDeleted   streamID // greatest ID removed by XDEL
	tail         streamID // first ID of the last node (0-0: no node)
	// head is the first ID of the first node (0-0: no node, or a header
	// written before it was kept). Scans of the nodes start there: the
	// nodes trimmed before stay in the engine as deletions until
	// compacted, and a stream trimmed on every XADD would step over all
	// of them each time.
	head streamID
}

const streamHeaderLen = 3*8 + 5*16

func (h *streamHeader) encode() []byte {
	b := make([]byte, 0, streamHeaderLen)
	b = binary.BigEndian.AppendUint64(b, h.length)
	b = binary.BigEndian.AppendUint64(b, h.entriesAdded)
	b = binary.BigEndian.AppendUint64(b, h.nodes)
	for _, id := range []streamID{h.last, h.first, h.maxDeleted, h.tail, h.head} {
		b = id.append(b)
	}
	return b
}

func decodeStreamHeader(b []byte) streamHeader {
	var head streamID
	if len(b) >= streamHeaderLen {
		head = idFrom(b[88:])
	}
	return streamHeader{
		head:         head,
		length:       binary.BigEndian.Uint64(b),
		entriesAdded: binary.BigEndian.Uint64(b[8:]),
		nodes:        binary.BigEndian.Uint64(b[16:]),
		last:         idFrom(b[24:]),
		first:        idFrom(b[40:]),
		maxDeleted:   idFrom(b[56:]),
		tail:         idFrom(b[72:]),
	}
}

// stream is one stream being read or edited by a command.
type stream struct {
	c   *Ctx
	key []byte
	m   store.Meta
	h   streamHeader
}

// openStream looks key up as a stream. On WRONGTYPE it has replied and
// returns wrong; a missing key is s == nil.
func openStream(c *Ctx, key []byte) (s *stream, wrong bool) {
	m, ok, wrong := c.Lookup(key, store.TypeStream)
	if !ok {
		return nil, wrong
	}
	return &stream{c: c, key: key, m: m, h: decodeStreamHeader(m.Body)}, false
}

// newStream is an empty stream at key, stored by save.
func newStream(c *Ctx, key []byte) *stream {
	return &stream{c: c, key: key, m: store.Meta{Type: store.TypeStream}}
}

// save writes the header, which also marks the key modified (WATCH,
// blocked readers).
func (s *stream) save() {
	s.m.Body = s.h.encode()
	s.c.Tx.Put(s.key, s.m)
}

func entrySub(id streamID) []byte { return id.append(append(make([]byte, 0, 17), 'e')) }
func nodeSub(id streamID) []byte  { return id.append(append(make([]byte, 0, 17), 'n')) }

// entryBounds are the sub keys of the entries in [start, end].
func entryBounds(start, end streamID) (from, to []byte) {
	from = entrySub(start)
	if next, ok := end.incr(); ok {
		return from, entrySub(next)
	}
	return from, []byte{'e' + 1}
}

// encodeFields is an entry's stored form: the count, then each field and
// value after its length.
func encodeFields(fv [][]byte) []byte {
	n := binary.MaxVarintLen64
	for _, f := range fv {
		n += len(f) + binary.MaxVarintLen32
	}
	b := binary.AppendUvarint(make([]byte, 0, n), uint64(len(fv)))
	for _, f := range fv {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// writeFields replies with an entry's fields and values as an array.
func (c *Ctx) writeFields(v []byte) {
	n, k := binary.Uvarint(v)
	v = v[k:]
	c.W.ArrayLen(int(n))
	for range n {
		l, k := binary.Uvarint(v)
		c.W.Bulk(v[k : k+int(l)])
		v = v[k+int(l):]
	}
}

// writeEntry replies with one entry: [id, [field, value, ...]].
func (c *Ctx) writeEntry(id streamID, v []byte) {
	c.W.ArrayLen(2)
	c.W.BulkString(id.String())
	c.writeFields(v)
}

// node is the bookkeeping of one of Redis's listpack nodes: enough to know
// when Redis would start a new one, and what '~' trimming may drop.
type node struct {
	first       streamID
	live, total uint64   // entries in it now, and ever added to it
	bytes       uint64   // the size of Redis's listpack
	last        streamID // the last ID added to it, deleted or not
	fields      []byte   // the master entry's field names (encodeFields)
}

func (n *node) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 40+len(n.fields)), n.live)
	b = binary.BigEndian.AppendUint64(b, n.total)
	b = binary.BigEndian.AppendUint64(b, n.bytes)
	b = n.last.append(b)
	return append(b, n.fields...)
}

func decodeNode(first streamID, b []byte) node {
	return node{first: first, live: binary.BigEndian.Uint64(b), total: binary.BigEndian.Uint64(b[8:]),
		bytes: binary.BigEndian.Uint64(b[16:]), last: idFrom(b[24:]), fields: b[40:]}
}

// putNode writes a node, held in the Tx: XADDs of one group rewrite the
// tail node each time.
func (s *stream) putNode(n *node) { s.c.Tx.HoldMember(s.key, nodeSub(n.first), n.encode()) }

// nodeOf returns the node holding id (the last node starting at or before it).
func (s *stream) nodeOf(id streamID) (n node, ok bool) {
	to, _ := id.incr()
	s.c.Tx.Members(s.key, []byte{'n'}, nodeSub(to), true, func(sub, v []byte) bool {
		n, ok = decodeNode(idFrom(sub[1:]), append([]byte(nil), v...)), true
		return false
	})
	return n, ok
}

// Sizes in Redis's listpack encoding, to follow the node's byte count:
// every element is its encoding plus a back-length; strings that read as
// integers are stored as integers.
func lpBacklen(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

func lpInt(v int64) int {
	n := 9
	switch {
	case v >= 0 && v <= 127:
		n = 1
	case v >= -4096 && v <= 4095:
		n = 2
	case v >= -32768 && v <= 32767:
		n = 3
	case v >= -8388608 && v <= 8388607:
		n = 4
	case v >= math.MinInt32 && v <= math.MaxInt32:
		n = 5
	}
	return n + lpBacklen(n)
}

func lpString(b []byte) int {
	if v, ok := num.ParseInt(b); ok {
		return lpInt(v)
	}
	n := len(b) + 5
	switch {
	case len(b) <= 63:
		n = len(b) + 1
	case len(b) <= 4095:
		n = len(b) + 2
	}
	return n + lpBacklen(n)
}

// add appends an entry with a new greatest ID. Like streamAppendItem it
// starts a new node when the last one holds stream-node-max-entries
// entries or would reach stream-node-max-bytes, and stores the fields once
// per node when they repeat the node's first entry's.
func (s *stream) add(id streamID, fv [][]byte) {
	raw := uint64(0)
	for _, f := range fv {
		raw += uint64(len(f))
	}
	var n node
	if s.h.nodes > 0 {
		v, _ := s.c.Tx.Member(s.key, nodeSub(s.h.tail))
		n = decodeNode(s.h.tail, v)
	}
	nf := len(fv) / 2
	limits := s.c.streamNodeLimits()
	maxBytes := uint64(limits.Bytes)
	if maxBytes == 0 || maxBytes > streamListpackMaxSize {
		maxBytes = streamListpackMaxSize
	}
	full := n.bytes+raw >= maxBytes || limits.Entries > 0 && n.total >= uint64(limits.Entries)
	if s.h.nodes == 0 || full {
		// A listpack (7 bytes) with the master entry: count, deleted,
		// the number of fields, the fields, and a terminator.
		n = node{first: id, bytes: 7 + uint64(lpInt(1)+lpInt(0)+lpInt(int64(nf))+lpInt(0))}
		names := make([][]byte, nf)
		for i := range names {
			names[i] = fv[2*i]
			n.bytes += uint64(lpString(names[i]))
		}
		n.fields = encodeFields(names)
		if s.h.nodes++; s.h.nodes == 1 {
			s.h.head = id
		}
		s.h.tail = id
	}
	same := sameFields(n.fields, fv)
	flags, count := int64(0), int64(nf+3)
	if same {
		flags = 2 // STREAM_ITEM_FLAG_SAMEFIELDS
	} else {
		count += int64(nf) + 1
	}
	size := lpInt(flags) + lpInt(int64(id.ms-n.first.ms)) + lpInt(int64(id.seq-n.first.seq)) + lpInt(count)
	if !same {
		size += lpInt(int64(nf))
	}
	for i, f := range fv {
		if i%2 == 1 || !same {
			size += lpString(f)
		}
	}
	n.bytes += uint64(size)
	n.live++
	n.total++
	n.last = id
	s.putNode(&n)
	s.c.Tx.SetMember(s.key, entrySub(id), encodeFields(fv))
	if s.h.length == 0 {
		s.h.first = id
	}
	s.h.length++
	s.h.entriesAdded++
	s.h.last = id
}

// sameFields reports whether fv's fields are the master entry's names.
func sameFields(names []byte, fv [][]byte) bool {
	n, k := binary.Uvarint(names)
	if int(n) != len(fv)/2 {
		return false
	}
	names = names[k:]
	for i := 0; i < len(fv); i += 2 {
		l, k := binary.Uvarint(names)
		if string(names[k:k+int(l)]) != string(fv[i]) {
			return false
		}
		names = names[k+int(l):]
	}
	return true
}

// entry returns an entry's stored fields.
func (s *stream) entry(id streamID) ([]byte, bool) {
	return s.c.Tx.Member(s.key, entrySub(id))
}

// remove deletes an entry that exists and updates its node; the caller
// refreshes first (refreshFirst) once done.
func (s *stream) remove(id streamID) {
	n, _ := s.nodeOf(id)
	s.removeIn(&n, id)
}

// removeIn is remove when the entry's node n is known.
func (s *stream) removeIn(n *node, id streamID) {
	s.c.Tx.DeleteMember(s.key, entrySub(id))
	s.h.length--
	n.live--
	if n.live > 0 {
		s.putNode(n)
		return
	}
	s.dropNode(n.first)
}

// dropNode removes a node's bookkeeping (its entries are gone).
func (s *stream) dropNode(first streamID) {
	s.c.Tx.DeleteMember(s.key, nodeSub(first))
	if s.h.nodes--; s.h.nodes == 0 {
		s.h.head, s.h.tail = streamID{}, streamID{}
		return
	}
	if first == s.h.head {
		s.c.Tx.Members(s.key, nodeSub(first), []byte{'n' + 1}, false, func(sub, _ []byte) bool {
			s.h.head = idFrom(sub[1:])
			return false
		})
	}
	if first == s.h.tail {
		s.c.Tx.Members(s.key, nodeSub(s.h.head), nodeSub(first), true, func(sub, _ []byte) bool {
			s.h.tail = idFrom(sub[1:])
			return false
		})
	}
}

// eachNode visits the nodes in order, from the first.
func (s *stream) eachNode(fn func(n node) bool) {
	s.c.Tx.Members(s.key, nodeSub(s.h.head), []byte{'n' + 1}, false, func(sub, v []byte) bool {
		return fn(decodeNode(idFrom(sub[1:]), v))
	})
}

// refreshFirst sets the header's first ID after deletions.
// Deletions only move the first entry forward, so the search starts at
// the old one rather than wading through every entry deleted before it.
func (s *stream) refreshFirst() {
	from := s.h.first
	s.h.first = streamID{}
	if s.h.length > 0 {
		s.each(from, maxStreamID, false, func(id streamID, _ []byte) bool {
			s.h.first = id
			return false
		})
	}
}

// each visits the entries with IDs in [start, end], in order or reversed.
func (s *stream) each(start, end streamID, rev bool, fn func(id streamID, v []byte) bool) {
	start = s.liveFrom(start)
	if s.h.length == 0 || start.cmp(end) > 0 {
		return
	}
	from, to := entryBounds(start, end)
	s.c.Tx.Members(s.key, from, to, rev, func(sub, v []byte) bool { return fn(idFrom(sub[1:]), v) })
}

// liveFrom is where a read of the entries from start begins: none is
// before the first live one, and the entries deleted before it (trimmed,
// most often) stay in the engine as deletions until compacted.
func (s *stream) liveFrom(start streamID) streamID {
	if start.cmp(s.h.first) < 0 {
		return s.h.first
	}
	return start
}

// lastEntry is the ID of the last live entry (0-0 if none), as
// streamLastValidID.
func (s *stream) lastEntry() streamID {
	var last streamID
	if s.h.length == 0 {
		return last
	}
	// Usually the last ID generated is still there: one point lookup.
	if _, ok := s.entry(s.h.last); ok {
		return s.h.last
	}
	{
		s.each(streamID{}, maxStreamID, true, func(id streamID, _ []byte) bool {
			last = id
			return false
		})
	}
	return last
}

// trimArgs are the trimming options of XADD and XTRIM.
type trimArgs struct {
	strategy string // "", "maxlen" or "minid"
	maxlen   int64
	minid    streamID
	approx   bool
	limit    int64
}

// addArgs are XADD's arguments before its fields (XTRIM's, trimming only).
type addArgs struct {
	trim    trimArgs
	idArg   int      // index of the ID argument
	id      streamID // the explicit ID, unless auto
	auto    bool     // "*"
	seqAuto bool     // "ms-*"
	noMk    bool     // NOMKSTREAM
}

// parseAddOrTrim reads XADD's or XTRIM's options from argument 2, as
// streamParseAddOrTrimArgsOrReply. It replies on error.
func parseAddOrTrim(c *Ctx, xadd bool) (a addArgs, ok bool) {
	t := &a.trim
	limitGiven := false
	a.auto = true
	i := 2
loop:
	for ; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		opt := strings.ToLower(c.Arg(i))
		switch {
		case xadd && opt == "*":
			break loop
		case (opt == "maxlen" || opt == "minid") && more > 0:
			if t.strategy != "" {
				c.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return a, false
			}
			if next := c.Arg(i + 1); more >= 2 && (next == "~" || next == "=") {
				t.approx = next == "~"
				i++
			}
			if opt == "maxlen" {
				n, ok := num.ParseInt(c.Args[i+1])
				if !ok {
					c.W.Error(ErrNotInt)
					return a, false
				}
				if n < 0 {
					c.W.Error("ERR The MAXLEN argument must be >= 0.")
					return a, false
				}
				t.maxlen = n
			} else if t.minid, ok = idArg(c, c.Args[i+1]); !ok {
				return a, false
			}
			i++
			t.strategy = opt
		case opt == "limit" && more > 0:
			n, ok := num.ParseInt(c.Args[i+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return a, false
			}
			if n < 0 {
				c.W.Error("ERR The LIMIT argument must be >= 0.")
				return a, false
			}
			t.limit, limitGiven = n, true
			i++
		case xadd && opt == "nomkstream":
			a.noMk = true
		case xadd:
			if a.id, ok = parseID(c.Args[i], true, 0, &a.seqAuto); !ok {
				c.W.Error(errInvalidID)
				return a, false
			}
			a.auto = false
			break loop
		default:
			c.W.Error(ErrSyntax)
			return a, false
		}
	}
	a.idArg = i
	switch {
	case t.limit != 0 && t.strategy == "":
		c.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, false
	case !xadd && t.strategy == "":
		c.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, false
	case limitGiven && !t.approx:
		c.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return a, false
	}
	if !limitGiven && t.approx {
		// At most 100 nodes' worth, bounded both ways as Redis bounds it.
		t.limit = 10000
		if e := c.streamNodeLimits().Entries; e > 0 {
			t.limit = min(100*min(e, 1000000), 1000000)
		}
	}
	return a, true
}

// trim applies a trimming strategy as streamTrim: whole nodes first; with
// '~' it stops at the first node it cannot remove whole, else it deletes
// entries from that node. It returns the number of entries deleted.
func (s *stream) trim(t trimArgs) int64 {
	switch {
	case t.strategy == "",
		t.strategy == "maxlen" && s.h.length <= uint64(t.maxlen),
		t.strategy == "minid" && (s.h.length == 0 || s.h.first.cmp(t.minid) >= 0):
		return 0
	}
	deleted := int64(0)
	var kept streamID // the first entry a partial trim of a node kept
	// The iterator sees the nodes as they were when it started, so
	// removing them on the way is safe.
	s.eachNode(func(n node) bool {
		if s.h.head.isZero() {
			s.h.head = n.first // a header written before head was kept
		}
		if t.strategy == "maxlen" && s.h.length <= uint64(t.maxlen) ||
			t.limit > 0 && deleted+int64(n.live) > t.limit {
			return false
		}
		var whole bool
		if t.strategy == "maxlen" {
			whole = s.h.length-n.live >= uint64(t.maxlen)
		} else {
			whole = n.last.cmp(t.minid) < 0
		}
		if whole {
			from, to := entryBounds(n.first, n.last)
			s.c.Tx.DeleteMemberRange(s.key, from, to)
			s.h.length -= n.live
			deleted += int64(n.live)
			s.dropNode(n.first)
			return true
		}
		if t.approx {
			return false
		}
		var gone []streamID
		s.each(n.first, n.last, false, func(id streamID, _ []byte) bool {
			if t.strategy == "maxlen" && s.h.length-uint64(len(gone)) <= uint64(t.maxlen) ||
				t.strategy == "minid" && id.cmp(t.minid) >= 0 {
				kept = id
				return false
			}
			gone = append(gone, id)
			return true
		})
		for _, id := range gone {
			s.removeIn(&n, id)
		}
		deleted += int64(len(gone))
		return false
	})
	switch {
	case !kept.isZero():
		s.h.first = kept // every entry before it is gone
	case deleted > 0:
		s.refreshFirst()
	}
	return deleted
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
func cmdXAdd(c *Ctx) {
	a, ok := parseAddOrTrim(c, true)
	if !ok {
		return
	}
	i, want, auto, seqAuto := a.idArg, a.id, a.auto, a.seqAuto
	if len(c.Args)-i < 3 || (len(c.Args)-i-1)%2 != 0 {
		c.W.Error(WrongArity("xadd"))
		return
	}
	if !auto && !seqAuto && want.isZero() {
		c.W.Error(errXAddZero)
		return
	}
	s, wrong := openStream(c, c.Args[1])
	if wrong {
		return
	}
	if s == nil {
		if a.noMk {
			c.W.Null()
			return
		}
		s = newStream(c, c.Args[1])
	}
	if s.h.last == maxStreamID {
		c.W.Error(errXAddExhausted)
		return
	}
	var id streamID
	switch {
	case auto:
		// The record's clock, so that every replica makes the same ID.
		if now := uint64(c.Tx.Now); now > s.h.last.ms {
			id = streamID{now, 0}
		} else {
			id, _ = s.h.last.incr()
		}
	case seqAuto && want.ms == s.h.last.ms:
		if s.h.last.seq == math.MaxUint64 {
			// What Redis answers here (its errno is not EDOM).
			c.W.Error("ERR Elements are too large to be stored")
			return
		}
		id = streamID{want.ms, s.h.last.seq + 1}
	default:
		id = want
	}
	if id.cmp(s.h.last) <= 0 {
		c.W.Error(errXAddSmaller)
		return
	}
	s.add(id, c.Args[i+1:])
	trimmed := s.trim(a.trim)
	s.save()
	c.Tx.Notify(store.NotifyStream, "xadd", s.key)
	if trimmed > 0 {
		c.Tx.Notify(store.NotifyStream, "xtrim", s.key)
	}
	c.W.BulkString(id.String())
}

func cmdXLen(c *Ctx) {
	s, wrong := openStream(c, c.Args[1])
	switch {
	case wrong:
	case s == nil:
		c.W.Int(0)
	default:
		c.W.Int(int64(s.h.length))
	}
}

// XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n].
func xrangeGeneric(c *Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := intervalArg(c, startArg, true)
	if !ok {
		return
	}
	end, ok := intervalArg(c, endArg, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if !strings.EqualFold(c.Arg(j), "count") || j+1 >= len(c.Args) {
			c.W.Error(ErrSyntax)
			return
		}
		n, ok := num.ParseInt(c.Args[j+1])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		count = max(n, 0)
		j++
	}
	s, wrong := openStream(c, c.Args[1])
	switch {
	case wrong:
	case s == nil:
		c.W.ArrayLen(0)
	case count == 0:
		c.W.NullArray()
	default:
		var ids []streamID
		var vals [][]byte
		s.each(start, end, rev, func(id streamID, v []byte) bool {
			ids = append(ids, id)
			vals = append(vals, append([]byte(nil), v...))
			return count < 0 || int64(len(ids)) < count
		})
		c.W.ArrayLen(len(ids))
		for k, id := range ids {
			c.writeEntry(id, vals[k])
		}
	}
}

// XDEL key id [id ...]
func cmdXDel(c *Ctx) {
	s, wrong := openStream(c, c.Args[1])
	if wrong {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	// All IDs are checked first: the command runs whole or not at all.
	ids := make([]streamID, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		id, ok := idArg(c, a)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	deleted := int64(0)
	for _, id := range ids {
		if _, ok := s.entry(id); !ok {
			continue
		}
		s.remove(id)
		if id.cmp(s.h.maxDeleted) > 0 {
			s.h.maxDeleted = id
		}
		deleted++
	}
	if deleted > 0 {
		s.refreshFirst()
		s.save()
		c.Tx.Notify(store.NotifyStream, "xdel", s.key)
	}
	c.W.Int(deleted)
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func cmdXTrim(c *Ctx) {
	a, ok := parseAddOrTrim(c, false)
	if !ok {
		return
	}
	s, wrong := openStream(c, c.Args[1])
	switch {
	case wrong:
	case s == nil:
		c.W.Int(0)
	default:
		n := s.trim(a.trim)
		if n > 0 {
			s.save()
			c.Tx.Notify(store.NotifyStream, "xtrim", s.key)
		}
		c.W.Int(n)
	}
}

// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
func cmdXSetID(c *Ctx) {
	id, ok := idArg(c, c.Args[2])
	if !ok {
		return
	}
	added := int64(-1)
	var maxDel streamID
	for i := 3; i < len(c.Args); i += 2 {
		opt := strings.ToLower(c.Arg(i))
		switch {
		case opt == "entriesadded" && i+1 < len(c.Args):
			n, ok := num.ParseInt(c.Args[i+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if n < 0 {
				c.W.Error("ERR entries_added must be positive")
				return
			}
			added = n
		case opt == "maxdeletedid" && i+1 < len(c.Args):
			if maxDel, ok = idArg(c, c.Args[i+1]); !ok {
				return
			}
			if id.cmp(maxDel) < 0 {
				c.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	s, wrong := openStream(c, c.Args[1])
	switch {
	case wrong:
		return
	case s == nil:
		c.W.Error(ErrNoSuchKey)
		return
	}
	if s.h.length > 0 {
		if id.cmp(s.lastEntry()) < 0 {
			c.W.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if added != -1 && s.h.length > uint64(added) {
			c.W.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	// Redis 7.0 does not compare id with the stream's max_deleted_entry_id
	// (7.2 refuses a smaller one).
	s.h.last = id
	if added != -1 {
		s.h.entriesAdded = uint64(added)
	}
	if !maxDel.isZero() {
		s.h.maxDeleted = maxDel
	}
	// Redis 7.0 does not mark the key modified here.
	s.m.Body = s.h.encode()
	c.Tx.PutQuiet(s.key, s.m)
	c.Tx.Notify(store.NotifyStream, "xsetid", s.key)
	c.W.OK()
}
