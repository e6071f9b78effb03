package command

import (
	"encoding/binary"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS.
func init() {
	streamCat := []string{"stream"}
	infoSub := func(name string, arity int, summary string, tips ...string) *Command {
		return &Command{Name: "xinfo|" + name, Arity: arity, Flags: ReadOnly, Categories: streamCat, Group: "stream", Since: "5.0.0", Summary: summary, Tips: tips,
			FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, Index: 2, KeyStep: 1}}}
	}
	register(&Command{Name: "xinfo", Arity: -2, Group: "stream", Since: "5.0.0", Summary: "A container for stream introspection commands", Run: cmdXInfo,
		Subcommands: []*Command{
			infoSub("consumers", 4, "List the consumers in a consumer group", "nondeterministic_output"),
			infoSub("groups", 3, "List the consumer groups of a stream"),
			infoSub("stream", -3, "Get information about a stream"),
			{Name: "xinfo|help", Arity: 2, Flags: Loading | Stale, Categories: []string{"stream"}, Group: "stream", Since: "5.0.0", Summary: "Show helpful text about the different subcommands"},
		}})
}

var xinfoHelp = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

func cmdXInfo(c *Ctx) {
	sub := strings.ToLower(c.Arg(1))
	syntax := func() {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + c.Arg(1) + "'. Try XINFO HELP.")
	}
	if sub == "help" {
		HelpReply(c.W, xinfoHelp)
		return
	}
	s, wrong := openStream(c, c.Args[2])
	switch {
	case wrong:
		return
	case s == nil:
		c.W.Error(ErrNoSuchKey)
		return
	}
	switch sub {
	case "consumers":
		e, ok := s.group(c.Args[3])
		if !ok {
			c.W.Error("NOGROUP No such consumer group '" + c.Arg(3) + "' for key name '" + c.Arg(2) + "'")
			return
		}
		xinfoConsumers(c, e)
	case "groups":
		groups := s.groups()
		c.W.ArrayLen(len(groups))
		for _, g := range groups {
			c.W.MapLen(6)
			c.W.BulkString("name")
			c.W.Bulk(g.name)
			c.W.BulkString("consumers")
			c.W.Int(int64(g.consumers))
			c.W.BulkString("pending")
			c.W.Int(int64(g.pending))
			c.W.BulkString("last-delivered-id")
			c.W.BulkString(g.last.String())
			writeReadAndLag(c, s, g)
		}
	case "stream":
		full, count := false, int64(10)
		switch args := c.Args[3:]; {
		case len(args) == 0:
		case (len(args) == 1 || len(args) == 3) && strings.EqualFold(string(args[0]), "full"):
			full = true
			if len(args) == 3 {
				if !strings.EqualFold(string(args[1]), "count") {
					syntax()
					return
				}
				n, ok := num.ParseInt(args[2])
				if !ok {
					c.W.Error(ErrNotInt)
					return
				}
				count = max(n, 0)
			}
		default:
			syntax()
			return
		}
		xinfoStream(c, s, full, count)
	}
}

// writeReadAndLag writes a group's entries-read and lag fields.
func writeReadAndLag(c *Ctx, s *stream, g *group) {
	c.W.BulkString("entries-read")
	if g.entriesRead == invalidEntriesRead {
		c.W.Null()
	} else {
		c.W.Int(g.entriesRead)
	}
	c.W.BulkString("lag")
	if lag, ok := s.lag(g); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

func xinfoConsumers(c *Ctx, e *groupEdit) {
	type row struct {
		name    []byte
		seen    int64
		pending uint64
	}
	var rows []row
	p := groupTagged('c', e.g.name)
	c.Tx.Members(e.s.key, p, store.PrefixEnd(p), false, func(sub, v []byte) bool {
		rows = append(rows, row{append([]byte(nil), sub[len(p):]...), int64(binary.BigEndian.Uint64(v)), binary.BigEndian.Uint64(v[8:])})
		return true
	})
	c.W.ArrayLen(len(rows))
	for _, r := range rows {
		c.W.MapLen(3)
		c.W.BulkString("name")
		c.W.Bulk(r.name)
		c.W.BulkString("pending")
		c.W.Int(int64(r.pending))
		c.W.BulkString("idle")
		c.W.Int(max(c.Tx.Now-r.seen, 0))
	}
}

// radixNodes stands for Redis's radix tree node count, which depends on
// its rax layout: an estimate from the number of nodes (keys).
func radixNodes(keys uint64) int64 { return int64(keys) + 1 }

func xinfoStream(c *Ctx, s *stream, full bool, count int64) {
	h := &s.h
	if full {
		c.W.MapLen(9)
	} else {
		c.W.MapLen(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(h.length))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(h.nodes))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(radixNodes(h.nodes))
	c.W.BulkString("last-generated-id")
	c.W.BulkString(h.last.String())
	c.W.BulkString("max-deleted-entry-id")
	c.W.BulkString(h.maxDeleted.String())
	c.W.BulkString("entries-added")
	c.W.Int(int64(h.entriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	c.W.BulkString(h.first.String())
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(len(s.groups())))
		for _, name := range []string{"first-entry", "last-entry"} {
			c.W.BulkString(name)
			found := false
			s.each(streamID{}, maxStreamID, name == "last-entry", func(id streamID, v []byte) bool {
				c.writeEntry(id, v)
				found = true
				return false
			})
			if !found {
				c.W.Null()
			}
		}
		return
	}
	c.W.BulkString("entries")
	ids, vals := s.entries(streamID{}, count)
	xreadEntries(c, ids, vals)
	groups := s.groups()
	c.W.BulkString("groups")
	c.W.ArrayLen(len(groups))
	for _, g := range groups {
		e := &groupEdit{s: s, g: g}
		c.W.MapLen(7)
		c.W.BulkString("name")
		c.W.Bulk(g.name)
		c.W.BulkString("last-delivered-id")
		c.W.BulkString(g.last.String())
		writeReadAndLag(c, s, g)
		c.W.BulkString("pel-count")
		c.W.Int(int64(g.pending))
		c.W.BulkString("pending")
		type pend struct {
			id streamID
			n  nack
		}
		var pel []pend
		e.eachNack(streamID{}, func(id streamID, n nack) bool {
			pel = append(pel, pend{id, n})
			return count == 0 || int64(len(pel)) < count
		})
		c.W.ArrayLen(len(pel))
		for _, p := range pel {
			c.W.ArrayLen(4)
			c.W.BulkString(p.id.String())
			c.W.Bulk(p.n.consumer)
			c.W.Int(p.n.time)
			c.W.Int(int64(p.n.count))
		}
		type cons struct {
			name    []byte
			seen    int64
			pending uint64
		}
		var all []cons
		cp := groupTagged('c', g.name)
		c.Tx.Members(s.key, cp, store.PrefixEnd(cp), false, func(sub, v []byte) bool {
			all = append(all, cons{append([]byte(nil), sub[len(cp):]...), int64(binary.BigEndian.Uint64(v)), binary.BigEndian.Uint64(v[8:])})
			return true
		})
		c.W.BulkString("consumers")
		c.W.ArrayLen(len(all))
		for _, cn := range all {
			c.W.MapLen(4)
			c.W.BulkString("name")
			c.W.Bulk(cn.name)
			c.W.BulkString("seen-time")
			c.W.Int(cn.seen)
			c.W.BulkString("pel-count")
			c.W.Int(int64(cn.pending))
			c.W.BulkString("pending")
			var ids []streamID
			e.eachConsumerNack(cn.name, streamID{}, func(id streamID) bool {
				ids = append(ids, id)
				return count == 0 || int64(len(ids)) < count
			})
			c.W.ArrayLen(len(ids))
			for _, id := range ids {
				n, _ := e.nack(id)
				c.W.ArrayLen(3)
				c.W.BulkString(id.String())
				c.W.Int(n.time)
				c.W.Int(int64(n.count))
			}
		}
	}
}
