package server

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
)

// The keyless commands that concern the whole key space (DBSIZE, KEYS,
// SCAN, RANDOMKEY, FLUSHALL, FUNCTION's writes), over the shards the node
// leads, in cluster mode.

// clusterWide runs, in cluster mode and outside MULTI, the keyless
// commands that concern every shard of the node, and reports whether
// argv was one.
func (c *Client) clusterWide(kind *command.Command, argv [][]byte, now int64) bool {
	switch kind.Name {
	case "dbsize":
		c.sumReplies(kind, argv, now)
	case "keys":
		c.concatShards(kind, argv, now)
	case "scan":
		c.scanShards(kind, argv, now)
	case "randomkey":
		c.randomKey(kind, argv, now)
	case "flushall", "flushdb", "function|load", "function|delete", "function|flush", "function|restore":
		c.proposeAll(argv)
	default:
		return false
	}
	return true
}

// led are the shards this node leads, in slot order: the keyless commands
// that cover the key space cover theirs, as a Redis Cluster master's cover
// the slots it serves.
func (s *Server) led() []*shard.Shard {
	var out []*shard.Shard
	for _, sh := range s.shards {
		if sh.IsLeader() {
			out = append(out, sh)
		}
	}
	return out
}

// readEach runs a read on every shard this node leads and returns each
// reply.
func (c *Client) readEach(kind *command.Command, argv [][]byte, now int64) [][]byte {
	var replies [][]byte
	for _, sh := range c.srv.led() {
		w := resp.NewWriter(c.proto)
		runRead(sh.Store(), 0, now, true, false, w, argv, kind.Run)
		replies = append(replies, w.Bytes())
	}
	return replies
}

// sumReplies answers an integer command (DBSIZE) with the sum over shards.
func (c *Client) sumReplies(kind *command.Command, argv [][]byte, now int64) {
	w := c.reply()
	var sum int64
	for _, r := range c.readEach(kind, argv, now) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(r[1:])), 10, 64)
		if r[0] != ':' || err != nil {
			w.Raw(r) // an error: as the shard answered
			return
		}
		sum += n
	}
	w.Int(sum)
}

// concatShards answers an array command (KEYS) with the shards' arrays in
// slot order.
func (c *Client) concatShards(kind *command.Command, argv [][]byte, now int64) {
	w := c.reply()
	var elems [][]byte
	for _, r := range c.readEach(kind, argv, now) {
		e := splitArray(r)
		if e == nil {
			w.Raw(r) // an error: as the shard answered
			return
		}
		elems = append(elems, e...)
	}
	w.ArrayLen(len(elems))
	for _, e := range elems {
		w.Raw(e)
	}
}

// scanShards is SCAN over the shards this node leads. A cursor is a key
// position, which starts with the key's slot (store.Pos), so the cursor
// names the shard to go on in; when that shard's keys end before COUNT
// keys were found, the scan goes on from the first slot of the next shard,
// so a small key space is scanned in one call, as in Redis.
func (c *Client) scanShards(kind *command.Command, argv [][]byte, now int64) {
	w := c.reply()
	cursor, err := strconv.ParseUint(string(argv[1]), 10, 64)
	if err != nil {
		runRead(c.srv.group().Store(), 0, now, true, false, w, argv, kind.Run) // its error
		return
	}
	count := 10
	for i := 2; i+1 < len(argv); i++ {
		if strings.EqualFold(string(argv[i]), "count") {
			if n, err := strconv.Atoi(string(argv[i+1])); err == nil && n > 0 {
				count = n
			}
		}
	}
	shards := c.srv.shardAt
	// next is the first shard from i on that this node leads (len: none).
	next := func(i int) int {
		for i < len(shards) && (shards[i] == nil || !shards[i].IsLeader()) {
			i++
		}
		return i
	}
	start := func(i int) uint64 { return uint64(c.srv.topo.Shards[i].Slots[0].Start) << 48 }
	args := append([][]byte(nil), argv...)
	var keys [][]byte
	i := c.srv.slotIndex[min(cursor>>48, cluster.SlotCount-1)]
	if j := next(i); j != i { // not led here (any more): on from the next one
		i, cursor = j, 0
		if i < len(shards) {
			cursor = start(i)
		}
	}
	for i < len(shards) {
		args[1] = strconv.AppendUint(nil, cursor, 10)
		r := resp.NewWriter(c.proto)
		runRead(shards[i].Store(), 0, now, true, false, r, args, kind.Run)
		elems := splitArray(r.Bytes())
		if len(elems) != 2 || splitArray(elems[1]) == nil {
			w.Raw(r.Bytes()) // an error: as the shard answered
			return
		}
		keys = append(keys, splitArray(elems[1])...)
		cursor, _ = strconv.ParseUint(strings.TrimSpace(string(elems[0][bytes.IndexByte(elems[0], '\n')+1:])), 10, 64)
		if cursor != 0 {
			break
		}
		if i = next(i + 1); i < len(shards) {
			cursor = start(i)
			if len(keys) >= count {
				break
			}
		}
	}
	w.ArrayLen(2)
	w.BulkString(strconv.FormatUint(cursor, 10))
	w.ArrayLen(len(keys))
	for _, k := range keys {
		w.Raw(k)
	}
}

// randomKey is RANDOMKEY: a random key of a random shard this node leads
// that has one.
func (c *Client) randomKey(kind *command.Command, argv [][]byte, now int64) {
	w := c.reply()
	led := c.srv.led()
	n := len(led)
	if n == 0 {
		w.Null()
		return
	}
	first := rand.IntN(n)
	for j := range n {
		mark := w.Len()
		runRead(led[(first+j)%n].Store(), 0, now, true, false, w, argv, kind.Run)
		if j == n-1 || !isNullReply(w.Buf[mark:]) {
			return
		}
		w.Buf = w.Buf[:mark]
	}
}

func isNullReply(r []byte) bool {
	return bytes.Equal(r, []byte("$-1\r\n")) || bytes.Equal(r, []byte("_\r\n"))
}

// proposeAll applies a write to every shard this node leads (FLUSHALL, FUNCTION LOAD: the
// function libraries are kept by each shard, so that FCALL finds them in
// the shard of its keys) and answers the first error, or else the first
// reply: the shards' function spaces agree, so their replies do too.
func (c *Client) proposeAll(argv [][]byte) {
	w := c.reply()
	var ps []*shard.Proposal
	var answer []byte
	refuse := func(msg string) {
		e := resp.NewWriter(c.proto)
		e.Error(msg)
		answer = e.Bytes()
	}
	for _, sh := range c.srv.led() {
		p := getProposal(c)
		p.Rec = shard.Record{Kind: shard.KindCommand, DB: c.db, Cmds: [][][]byte{argv}}
		if err := sh.Propose(p); err != nil {
			putProposal(p)
			refuse(proposeError(err))
			continue
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		if !c.await(p) { // withdrawn behind a script past its time limit
			refuse(command.ErrBusy)
			continue
		}
		if b := p.W.Bytes(); answer == nil || isErrorReply(b) && !isErrorReply(answer) {
			answer = append([]byte(nil), b...)
		}
		putProposal(p)
	}
	if answer == nil { // this node leads no shard
		w.OK()
		return
	}
	w.Raw(answer)
}
