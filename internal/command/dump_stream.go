package command

import (
	"encoding/binary"

	"basalt/internal/rdb"
	"basalt/internal/store"
)

// DUMP and RESTORE of streams (dump.go): the stream's nodes, entries,
// header, groups, consumers and pending entries, to and from
// internal/rdb's Stream. RESTORE keeps the payload's node boundaries, so
// approximate trimming and XINFO's radix tree counts go on as in the
// server the stream came from.

func toRDBID(id streamID) rdb.StreamID   { return rdb.StreamID{Ms: id.ms, Seq: id.seq} }
func fromRDBID(id rdb.StreamID) streamID { return streamID{id.Ms, id.Seq} }

// decodeFields splits a stored entry (encodeFields) into copies of its
// fields and values.
func decodeFields(v []byte) [][]byte {
	n, k := binary.Uvarint(v)
	v = v[k:]
	out := make([][]byte, 0, n)
	for range n {
		l, k := binary.Uvarint(v)
		out = append(out, append([]byte(nil), v[k:k+int(l)]...))
		v = v[k+int(l):]
	}
	return out
}

// dumpStream reads the whole stream key, whose metadata is m.
func dumpStream(c *Ctx, key []byte, m store.Meta) *rdb.Stream {
	s := &stream{c: c, key: key, m: m, h: decodeStreamHeader(m.Body)}
	out := &rdb.Stream{Length: s.h.length, LastID: toRDBID(s.h.last), FirstID: toRDBID(s.h.first),
		MaxDeletedID: toRDBID(s.h.maxDeleted), EntriesAdded: s.h.entriesAdded}
	var nodes []node
	s.eachNode(func(n node) bool {
		n.fields = append([]byte(nil), n.fields...) // the iterator's memory
		nodes = append(nodes, n)
		return true
	})
	for _, n := range nodes {
		rn := rdb.StreamNode{First: toRDBID(n.first), Fields: decodeFields(n.fields)}
		s.each(n.first, n.last, false, func(id streamID, v []byte) bool {
			rn.Entries = append(rn.Entries, rdb.StreamEntry{ID: toRDBID(id), Fields: decodeFields(v)})
			return true
		})
		out.Nodes = append(out.Nodes, rn)
	}
	for _, g := range s.groups() {
		rg := rdb.StreamGroup{Name: g.name, LastID: toRDBID(g.last), EntriesRead: g.entriesRead}
		e := &groupEdit{s: s, g: g}
		e.eachNack(streamID{}, func(id streamID, n nack) bool {
			rg.Pending = append(rg.Pending, rdb.StreamNack{ID: toRDBID(id), DeliveryTime: n.time, DeliveryCount: n.count, Consumer: n.consumer})
			return true
		})
		p := groupTagged('c', g.name)
		c.Tx.Members(key, p, store.PrefixEnd(p), false, func(sub, v []byte) bool {
			rg.Consumers = append(rg.Consumers, rdb.StreamConsumer{Name: append([]byte(nil), sub[len(p):]...), SeenTime: int64(binary.BigEndian.Uint64(v))})
			return true
		})
		out.Groups = append(out.Groups, rg)
	}
	return out
}

// restoreStream writes st under key, which does not exist, with expiry
// expireAt (0: none), through the stream's own member writes.
func restoreStream(c *Ctx, key []byte, st *rdb.Stream, expireAt int64) {
	s := newStream(c, key)
	s.m.ExpireAt = expireAt
	for _, rn := range st.Nodes {
		n := node{first: fromRDBID(rn.First), live: uint64(len(rn.Entries)), total: rn.Total,
			bytes: rn.Bytes, last: fromRDBID(rn.Last), fields: encodeFields(rn.Fields)}
		s.putNode(&n)
		for _, e := range rn.Entries {
			c.Tx.SetMember(key, entrySub(fromRDBID(e.ID)), encodeFields(e.Fields))
		}
		if s.h.nodes++; s.h.nodes == 1 {
			s.h.head = n.first
		}
		s.h.tail = n.first
	}
	s.h.length, s.h.entriesAdded = st.Length, st.EntriesAdded
	s.h.last, s.h.maxDeleted = fromRDBID(st.LastID), fromRDBID(st.MaxDeletedID)
	s.h.first = fromRDBID(st.FirstID)
	if len(st.Nodes) > 0 { // the header's first ID is the first live entry's
		s.h.first = fromRDBID(st.Nodes[0].Entries[0].ID)
	}
	for _, rg := range st.Groups {
		e := &groupEdit{s: s, g: &group{name: rg.Name, last: fromRDBID(rg.LastID), entriesRead: rg.EntriesRead}}
		owner := make(map[string]*consumer, len(rg.Consumers))
		for _, rc := range rg.Consumers {
			cons := &consumer{name: rc.Name, seen: rc.SeenTime}
			owner[string(rc.Name)] = cons
			e.cons = append(e.cons, cons)
			e.g.consumers++
		}
		for _, n := range rg.Pending {
			e.putNack(fromRDBID(n.ID), nack{time: n.DeliveryTime, count: n.DeliveryCount}, nil, owner[string(n.Consumer)])
		}
		e.save()
	}
	s.save()
}
