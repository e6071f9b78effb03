package rdb

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// Streams (RDB_TYPE_STREAM_LISTPACKS and _2, rdb.c and t_stream.c). The
// entries are in listpack nodes, each under the ID of its master entry;
// the header counts and IDs follow, then the consumer groups, each with
// its pending entries (ID, delivery time, delivery count) and its
// consumers (name, seen time, the IDs of the pending entries they own).

// StreamID is an entry ID.
type StreamID struct{ Ms, Seq uint64 }

func (a StreamID) less(b StreamID) bool { return a.Ms < b.Ms || a.Ms == b.Ms && a.Seq < b.Seq }

// Stream is a decoded stream. Nodes hold its live entries in ID order.
type Stream struct {
	Nodes        []StreamNode
	Length       uint64
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
	Groups       []StreamGroup
}

// StreamNode is one listpack node: its master entry's ID and field names,
// its live entries, how many entries it ever held (deleted ones
// included), the last of their IDs, and its size in bytes.
type StreamNode struct {
	First   StreamID
	Fields  [][]byte
	Entries []StreamEntry
	Total   uint64
	Last    StreamID
	Bytes   uint64
}

// StreamEntry is an entry: its ID and its fields and values, alternating.
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte
}

// StreamGroup is a consumer group. EntriesRead is -1 when unknown.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64
	Pending     []StreamNack
	Consumers   []StreamConsumer
}

// StreamNack is a pending entry and the consumer that owns it.
type StreamNack struct {
	ID            StreamID
	DeliveryTime  int64
	DeliveryCount uint64
	Consumer      []byte
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name     []byte
	SeenTime int64
}

// Stream entry flags in a listpack.
const (
	entryDeleted    = 1
	entrySameFields = 2
)

func (r *reader) streamID() (StreamID, error) {
	ms, err := r.plainLen()
	if err != nil {
		return StreamID{}, err
	}
	seq, err := r.plainLen()
	return StreamID{ms, seq}, err
}

// rawID reads an ID as 16 big-endian bytes.
func (r *reader) rawID() (StreamID, error) {
	b, err := r.take(16)
	if err != nil {
		return StreamID{}, err
	}
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}, nil
}

// msTime reads a millisecond time: 8 bytes, little endian.
func (r *reader) msTime() (int64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// stream decodes a stream; v2 (Redis 7.0) adds the first ID, the greatest
// deleted ID, the count of entries ever added and each group's count of
// entries read; v3 (Redis 7.2, in RDB files only) adds each consumer's
// active time, which Redis 7.0 has not and is dropped.
func (r *reader) stream(v2, v3 bool) (*Value, error) {
	nodes, err := r.plainLen()
	if err != nil || nodes > uint64(r.left()) {
		return nil, ErrFormat
	}
	s := &Stream{}
	var live uint64
	var prev StreamID
	for range nodes {
		key, err := r.str()
		if err != nil || len(key) != 16 {
			return nil, ErrFormat
		}
		lp, err := r.str()
		if err != nil {
			return nil, err
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		n, err := streamNode(master, lp)
		if err != nil {
			return nil, err
		}
		if len(n.Entries) == 0 {
			continue // nothing live: Redis would have dropped the node
		}
		if len(s.Nodes) > 0 && !prev.less(master) {
			return nil, ErrFormat // nodes out of order or overlapping
		}
		prev = n.Last
		live += uint64(len(n.Entries))
		s.Nodes = append(s.Nodes, n)
	}
	if s.Length, err = r.plainLen(); err != nil {
		return nil, err
	}
	if s.Length != live {
		return nil, ErrFormat
	}
	if s.LastID, err = r.streamID(); err != nil {
		return nil, err
	}
	if v2 {
		if s.FirstID, err = r.streamID(); err != nil {
			return nil, err
		}
		if s.MaxDeletedID, err = r.streamID(); err != nil {
			return nil, err
		}
		if s.EntriesAdded, err = r.plainLen(); err != nil {
			return nil, err
		}
	} else {
		s.EntriesAdded = s.Length
		s.FirstID = StreamID{^uint64(0), ^uint64(0)} // streamGetEdgeID of an empty stream
		if live > 0 {
			s.FirstID = s.Nodes[0].Entries[0].ID
		}
	}
	if live > 0 && s.LastID.less(s.Nodes[len(s.Nodes)-1].Last) {
		return nil, ErrFormat
	}
	groups, err := r.plainLen()
	if err != nil || groups > uint64(r.left()) {
		return nil, ErrFormat
	}
	seen := map[string]bool{}
	for range groups {
		g, err := r.streamGroup(v2, v3, s)
		if err != nil {
			return nil, err
		}
		if seen[string(g.Name)] {
			return nil, ErrFormat
		}
		seen[string(g.Name)] = true
		s.Groups = append(s.Groups, g)
	}
	return &Value{Kind: KindStream, Stream: s}, nil
}

// streamGroup decodes a consumer group. Every pending entry must belong to
// exactly one of its consumers.
func (r *reader) streamGroup(v2, v3 bool, s *Stream) (StreamGroup, error) {
	name, err := r.str()
	if err != nil {
		return StreamGroup{}, err
	}
	g := StreamGroup{Name: name, EntriesRead: -1}
	if g.LastID, err = r.streamID(); err != nil {
		return g, err
	}
	if v2 {
		n, err := r.plainLen()
		if err != nil {
			return g, err
		}
		g.EntriesRead = int64(n)
	}
	if !v2 {
		g.EntriesRead = s.estimateRead(g.LastID)
	}
	pending, err := r.plainLen()
	if err != nil || pending > uint64(r.left()/17) {
		return g, ErrFormat
	}
	index := make(map[StreamID]int, prealloc(int(pending)))
	for range pending {
		var n StreamNack
		if n.ID, err = r.rawID(); err != nil {
			return g, err
		}
		if n.DeliveryTime, err = r.msTime(); err != nil {
			return g, err
		}
		if n.DeliveryCount, err = r.plainLen(); err != nil {
			return g, err
		}
		if _, dup := index[n.ID]; dup {
			return g, ErrFormat
		}
		index[n.ID] = len(g.Pending)
		g.Pending = append(g.Pending, n)
	}
	consumers, err := r.plainLen()
	if err != nil || consumers > uint64(r.left()) {
		return g, ErrFormat
	}
	names := map[string]bool{}
	for range consumers {
		var c StreamConsumer
		if c.Name, err = r.str(); err != nil {
			return g, err
		}
		if names[string(c.Name)] {
			return g, ErrFormat
		}
		names[string(c.Name)] = true
		if c.SeenTime, err = r.msTime(); err != nil {
			return g, err
		}
		if v3 {
			if _, err = r.msTime(); err != nil {
				return g, err
			}
		}
		owned, err := r.plainLen()
		if err != nil || owned > uint64(r.left()/16) {
			return g, ErrFormat
		}
		for range owned {
			id, err := r.rawID()
			if err != nil {
				return g, err
			}
			i, ok := index[id]
			if !ok || g.Pending[i].Consumer != nil {
				return g, ErrFormat
			}
			g.Pending[i].Consumer = c.Name
		}
		g.Consumers = append(g.Consumers, c)
	}
	for _, n := range g.Pending {
		if n.Consumer == nil {
			return g, ErrFormat
		}
	}
	return g, nil
}

// streamNode decodes a node's listpack: the master entry (live count,
// deleted count, field count, the fields, a 0), then each entry: flags,
// ID differences from the master ID, the field count and fields unless
// they are the master's, the values, and the entry's element count.
func streamNode(master StreamID, lp []byte) (StreamNode, error) {
	items, err := listpackEntries(lp)
	if err != nil {
		return StreamNode{}, err
	}
	p := &items
	next := func() ([]byte, bool) {
		if len(*p) == 0 {
			return nil, false
		}
		e := (*p)[0]
		*p = (*p)[1:]
		return e, true
	}
	nextInt := func() (int64, bool) {
		e, ok := next()
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseInt(string(e), 10, 64)
		return v, err == nil
	}
	n := StreamNode{First: master, Bytes: uint64(len(lp))}
	count, ok1 := nextInt()
	deleted, ok2 := nextInt()
	nf, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || nf < 0 || nf > int64(len(items)) {
		return n, ErrFormat
	}
	for range nf {
		f, _ := next()
		n.Fields = append(n.Fields, f)
	}
	if z, ok := nextInt(); !ok || z != 0 {
		return n, ErrFormat
	}
	prev, first := StreamID{}, true
	for len(items) > 0 {
		flags, ok1 := nextInt()
		dms, ok2 := nextInt()
		dseq, ok3 := nextInt()
		if !ok1 || !ok2 || !ok3 {
			return n, ErrFormat
		}
		id := StreamID{master.Ms + uint64(dms), master.Seq + uint64(dseq)}
		if !first && !prev.less(id) || id.less(master) {
			return n, ErrFormat
		}
		prev, first = id, false
		e := StreamEntry{ID: id}
		k := nf
		if flags&entrySameFields == 0 {
			if k, ok1 = nextInt(); !ok1 || k < 0 || k > int64(len(items)) {
				return n, ErrFormat
			}
		}
		for i := range k {
			var f []byte
			if flags&entrySameFields != 0 {
				f = n.Fields[i]
			} else if f, ok1 = next(); !ok1 {
				return n, ErrFormat
			}
			v, ok := next()
			if !ok {
				return n, ErrFormat
			}
			e.Fields = append(e.Fields, f, v)
		}
		if _, ok := nextInt(); !ok { // lp-count
			return n, ErrFormat
		}
		n.Total++
		n.Last = id
		if flags&entryDeleted == 0 {
			n.Entries = append(n.Entries, e)
		}
	}
	if uint64(len(n.Entries)) != uint64(count) || n.Total != uint64(count+deleted) {
		return n, ErrFormat
	}
	return n, nil
}

// appendStream writes s as RDB_TYPE_STREAM_LISTPACKS_2: each node as a
// listpack whose entries reuse the master fields when they are the same.
func appendStream(b []byte, s *Stream) []byte {
	b = appendLen(append(b, typeStreamListpack2), uint64(len(s.Nodes)))
	for _, n := range s.Nodes {
		key := binary.BigEndian.AppendUint64(nil, n.First.Ms)
		b = appendString(b, binary.BigEndian.AppendUint64(key, n.First.Seq))
		lp := newListpack()
		lp.int(int64(len(n.Entries)))
		lp.int(0)
		lp.int(int64(len(n.Fields)))
		for _, f := range n.Fields {
			lp.str(f)
		}
		lp.int(0)
		for _, e := range n.Entries {
			same := len(e.Fields) == 2*len(n.Fields)
			for i := 0; same && i < len(n.Fields); i++ {
				same = bytes.Equal(e.Fields[2*i], n.Fields[i])
			}
			nf := len(e.Fields) / 2
			count := nf + 3
			if same {
				lp.int(entrySameFields)
			} else {
				lp.int(0)
				count += nf + 1
			}
			lp.int(int64(e.ID.Ms - n.First.Ms))
			lp.int(int64(e.ID.Seq - n.First.Seq))
			if !same {
				lp.int(int64(nf))
			}
			for i, f := range e.Fields {
				if i%2 == 1 || !same {
					lp.str(f)
				}
			}
			lp.int(int64(count))
		}
		b = appendString(b, lp.bytes())
	}
	b = appendLen(b, s.Length)
	for _, id := range []StreamID{s.LastID, s.FirstID, s.MaxDeletedID} {
		b = appendLen(appendLen(b, id.Ms), id.Seq)
	}
	b = appendLen(b, s.EntriesAdded)
	b = appendLen(b, uint64(len(s.Groups)))
	for _, g := range s.Groups {
		b = appendString(b, g.Name)
		b = appendLen(appendLen(b, g.LastID.Ms), g.LastID.Seq)
		b = appendLen(b, uint64(g.EntriesRead))
		b = appendLen(b, uint64(len(g.Pending)))
		for _, n := range g.Pending {
			b = binary.BigEndian.AppendUint64(b, n.ID.Ms)
			b = binary.BigEndian.AppendUint64(b, n.ID.Seq)
			b = binary.LittleEndian.AppendUint64(b, uint64(n.DeliveryTime))
			b = appendLen(b, n.DeliveryCount)
		}
		b = appendLen(b, uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			b = appendString(b, c.Name)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.SeenTime))
			var owned []StreamID
			for _, n := range g.Pending {
				if bytes.Equal(n.Consumer, c.Name) {
					owned = append(owned, n.ID)
				}
			}
			b = appendLen(b, uint64(len(owned)))
			for _, id := range owned {
				b = binary.BigEndian.AppendUint64(b, id.Ms)
				b = binary.BigEndian.AppendUint64(b, id.Seq)
			}
		}
	}
	return b
}

// estimateRead is streamEstimateDistanceFromFirstEverEntry, with which
// Redis fills in the entries read of a group from an RDB that has none:
// the number of entries up to id, or -1 when it cannot tell.
func (s *Stream) estimateRead(id StreamID) int64 {
	switch {
	case s.EntriesAdded == 0:
		return 0
	case s.Length == 0 && !s.LastID.less(id), id == s.LastID:
		return int64(s.EntriesAdded)
	case s.LastID.less(id):
		return -1
	}
	if s.MaxDeletedID == (StreamID{}) || s.MaxDeletedID.less(s.FirstID) {
		switch {
		case id.less(s.FirstID):
			return int64(s.EntriesAdded - s.Length)
		case id == s.FirstID:
			return int64(s.EntriesAdded - s.Length + 1)
		}
	}
	return -1
}
