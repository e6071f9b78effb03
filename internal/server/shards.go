package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/transport"
)

// The shards a node serves. Without cluster mode a node is one Raft group
// holding 16 databases, exactly as before. With cluster-enabled, the 16384
// hash slots are divided among several shards (cluster-shards), each a Raft
// group with its own store, log and apply loop, so writes to different
// shards apply on different cores; a client's command goes to the shard
// of its keys' slot, and Redis Cluster's rules (CROSSSLOT, database 0 only)
// apply. A node of a cluster serves every shard; clusters of several
// nodes, with MOVED between them, come later (docs/cluster.md).

// openShards opens the node's stores and starts their groups; prepare is
// called on each store before its group starts; storeFiles bounds the
// files the stores keep open, together. In a cluster of several nodes the
// groups share one transport, the host's.
func openShards(cfg Config, sc shard.Config, storeFiles int, prepare func(*store.Store)) ([]*shard.Shard, *cluster.Topology, *shard.Host, error) {
	topoPath := filepath.Join(cfg.Dir, "topology.json")
	_, statErr := os.Stat(topoPath)
	hasTopology := statErr == nil
	if !cfg.ClusterEnabled {
		if hasTopology {
			return nil, nil, nil, fmt.Errorf("%s holds a cluster node's data (%s): start it with --cluster-enabled yes", cfg.Dir, topoPath)
		}
		sh, err := openShard(filepath.Join(cfg.Dir, "data"), store.Options{Databases: cfg.Databases, CacheSize: cfg.CacheSize, MetaCacheSize: metaCacheOption(cfg.MetaCacheSize), MaxOpenFiles: storeFiles}, sc, prepare)
		if err != nil {
			return nil, nil, nil, err
		}
		return []*shard.Shard{sh}, nil, nil, nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "data")); err == nil {
		return nil, nil, nil, fmt.Errorf("%s holds the data of a node without cluster mode: start it without --cluster-enabled, or move its keys with basalt load-rdb", cfg.Dir)
	}
	topo, err := clusterTopology(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	var host *shard.Host
	if cfg.RaftAddr != "" {
		if host, err = shard.NewHost(shard.HostConfig{NodeID: topo.NodeID, RaftAddr: cfg.RaftAddr, Advertise: sc.Advertise, Secret: sc.Secret, ClusterID: sc.ClusterID,
			ServerTLS: sc.ServerTLS, ClientTLS: sc.ClientTLS}); err != nil {
			return nil, nil, nil, err
		}
	}
	n := int64(len(topo.Shards))
	meta := metaCacheOption(cfg.MetaCacheSize)
	if meta > 0 {
		meta = max(meta/n, 1<<20)
	}
	var shards []*shard.Shard
	for _, ts := range topo.Shards {
		dir := filepath.Join(cfg.Dir, "shards", strconv.Itoa(ts.Index))
		c := sc
		c.RaftDir, c.Host = filepath.Join(dir, "raft"), host
		c.ID = transport.ReplicaID(uint32(ts.Index), topo.NodeID)
		c.Peers = map[uint64]string{}
		for _, id := range ts.Replicas {
			if id != topo.NodeID {
				c.Peers[transport.ReplicaID(uint32(ts.Index), id)] = topo.Node(id).RaftAddr
			}
		}
		sh, err := openShard(filepath.Join(dir, "data"), store.Options{Databases: 1, CacheSize: max(cfg.CacheSize/n, 8<<20), MetaCacheSize: meta, Slots: ts.Slots,
			MaxOpenFiles: max(storeFiles/int(n), minStoreFiles)}, c, prepare)
		if err != nil {
			closeShards(shards, host)
			return nil, nil, nil, fmt.Errorf("shard %d: %w", ts.Index, err)
		}
		shards = append(shards, sh)
	}
	return shards, topo, host, nil
}

// clusterTopology reads the node's topology, or computes and writes it at
// its first start: every node of a new cluster computes the same one from
// --initial-cluster and --cluster-shards.
func clusterTopology(cfg Config) (*cluster.Topology, error) {
	me := max(cfg.NodeID, 1)
	nodes := map[uint64]string{me: ""}
	if cfg.RaftAddr != "" {
		nodes = cfg.InitialCluster
	}
	topo, created, err := cluster.LoadOrCreateTopology(cfg.Dir, func() (*cluster.Topology, error) {
		switch {
		case cfg.Join:
			return nil, errors.New("cluster-enabled: adding a node to a running cluster (--join) is not supported yet")
		case me >= 1<<32:
			return nil, errors.New("cluster-enabled: node-id must be below 4294967296")
		case nodes[me] != cfg.RaftAddr:
			return nil, fmt.Errorf("cluster-enabled: --initial-cluster must name this node (%d) at its --raft-addr %s", me, cfg.RaftAddr)
		case cfg.ClusterReplicas != 0 && cfg.ClusterReplicas != len(nodes):
			return nil, fmt.Errorf("cluster-enabled: cluster-replicas %d: every node holds a replica of every shard for now, so it must be the number of nodes (%d)", cfg.ClusterReplicas, len(nodes))
		}
		seed := cluster.RandomSeed()
		if cfg.RaftAddr != "" {
			seed = FormatCluster(nodes) + "/" + strconv.Itoa(cfg.ClusterShards)
		}
		return cluster.NewTopology(seed, me, nodes, cfg.ClusterShards, len(nodes)), nil
	})
	switch {
	case err != nil:
		return nil, err
	case topo.NodeID != me:
		return nil, fmt.Errorf("the data directory %s belongs to node %d of its cluster, not node %d", cfg.Dir, topo.NodeID, me)
	case !created && len(topo.Shards) != cfg.ClusterShards:
		slog.Info("cluster-shards is taken from the data directory", "shards", len(topo.Shards), "asked", cfg.ClusterShards)
	}
	return topo, nil
}

// openShard opens one store and starts its group. A group of one voter
// elects itself at once.
func openShard(dir string, o store.Options, sc shard.Config, prepare func(*store.Store)) (*shard.Shard, error) {
	st, err := store.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	prepare(st)
	sh, err := shard.New(st, command.Apply, sc)
	if err != nil {
		st.Close()
		return nil, err
	}
	if sc.RaftAddr == "" && !sh.WaitLeader(5*time.Second) {
		sh.Close()
		st.Close()
		return nil, errors.New("the shard did not elect itself leader")
	}
	return sh, nil
}

// closeShards stops the groups, closes their stores, then the host.
func closeShards(shards []*shard.Shard, host *shard.Host) error {
	var first error
	for _, sh := range shards {
		sh.Close()
		st := sh.Store()
		if err := st.SyncWAL(); err != nil {
			slog.Error("final sync", "err", err)
		}
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	if host != nil {
		host.Close()
	}
	return first
}

// sumShards adds f's figure over the node's shards (INFO).
func (s *Server) sumShards(f func(*shard.Shard) int64) int64 {
	var n int64
	for _, sh := range s.shards {
		n += f(sh)
	}
	return n
}

// recordsApplied counts the records the node's shards applied.
func (s *Server) recordsApplied() int64 {
	return s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.Records.Load() })
}

// shardKeys counts a shard's keys in every database.
func shardKeys(sh *shard.Shard) int64 {
	var n int64
	st := sh.Store()
	for db := range st.Databases() {
		tx := st.ReadTx(db, 0, false)
		n += tx.Count()
		tx.Close()
	}
	return n
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// formatSlots writes slot ranges as CLUSTER NODES does: 0-5460 5462.
func formatSlots(slots cluster.Slots) string {
	var b []byte
	for i, r := range slots {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, uint64(r.Start), 10)
		if r.End != r.Start {
			b = append(b, '-')
			b = strconv.AppendUint(b, uint64(r.End), 10)
		}
	}
	return string(b)
}

// balanceLeaders moves each shard's leadership to its preferred node (the
// first of its replicas) whenever that node is up, so that leaders, and the
// writes they apply first, spread evenly over the nodes, and come back to
// a node that restarted. It looks once a second.
func (s *Server) balanceLeaders() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		for i, ts := range s.topo.Shards {
			if pref := ts.Replicas[0]; pref != s.topo.NodeID && s.shards[i].IsLeader() {
				// Only to a member raft saw lately (transferLeadership).
				s.shards[i].TransferLeadershipTo(transport.ReplicaID(uint32(i), pref), time.Second)
			}
		}
	}
}

// clustered reports whether the node runs in cluster mode.
func (s *Server) clustered() bool { return s.topo != nil }

// mode is the server's mode as HELLO and INFO name it.
func (s *Server) mode() string {
	if s.clustered() {
		return "cluster"
	}
	return "standalone"
}

// group is the node's Raft group outside cluster mode (RAFT, ROLE, WAIT,
// FAILOVER and forwarding speak of it); in cluster mode, the first shard.
func (s *Server) group() *shard.Shard { return s.shards[0] }

// databases is how many databases a client may SELECT.
func (s *Server) databases() int { return s.group().Store().Databases() }

const errCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot"

// route picks the shard of a command in cluster mode, by Redis Cluster's
// rule (getNodeByQuery): every key of the command in one slot. Inside
// MULTI, each queued command is checked on its own, and EXEC checks that
// all of them share one slot, and the watched keys their shard. It answers the error
// and reports false if the command may not run.
func (c *Client) route(cmd, kind *command.Command, argv [][]byte) bool {
	if cmd.Name == "exec" {
		if c.multi && !c.multiErr && c.txCross {
			c.endMulti()
			c.rejected = kind
			c.reply().Error(errCrossSlot)
			return false
		}
		c.sh = c.srv.keylessShard()
		if c.txSlot >= 0 {
			c.sh = c.srv.slotShard[c.txSlot]
			if !c.sh.IsLeader() { // it moved since the commands were queued
				c.endMulti()
				c.redirect(c.txSlot)
				return false
			}
		}
		if len(c.watching) > 0 && c.watchShard != c.sh {
			if c.txSlot < 0 {
				c.sh = c.watchShard // the transaction has no keys: run it beside the watches
			} else {
				c.endMulti()
				c.reply().Error(errCrossSlot)
				return false
			}
		}
		return true
	}
	slot := -1
	keys := kind.SlotKeys(argv)
	shardChannels := shardPubSub[cmd.Name]
	if shardChannels { // routed by their channels' slot, as Redis Cluster does
		keys = argv[1:]
		if cmd.Name == "spublish" {
			keys = argv[1:2]
		}
	}
	for _, k := range keys {
		switch s := int(cluster.KeySlot(k)); {
		case slot == -1:
			slot = s
		case s != slot:
			c.rejected = kind
			c.rejectInMulti()
			c.reply().Error(errCrossSlot)
			return false
		}
	}
	if c.multi && !isTxControl(cmd.Name) {
		switch {
		case slot < 0:
		case !c.srv.slotShard[slot].IsLeader():
			c.rejected = kind
			c.rejectInMulti()
			c.redirect(slot)
			return false
		case c.txSlot < 0:
			c.txSlot = slot
		case slot != c.txSlot:
			c.txCross = true // Redis answers CROSSSLOT at EXEC
		}
		return true
	}
	if cmd.Name == "watch" && len(c.watching) > 0 && c.srv.slotShard[slot] != c.watchShard {
		// The watches of one EXEC are checked by one shard's apply loop.
		c.reply().Error(errCrossSlot)
		return false
	}
	if slot < 0 {
		c.sh = c.srv.keylessShard()
		return true
	}
	c.sh = c.srv.slotShard[slot]
	// Shard channels' messages stay on the node (SPUBLISH is not logged),
	// so publishers and subscribers meet at the shard's leader.
	if !c.sh.IsLeader() && (shardChannels || !(c.readonly && readsOnly(cmd, kind))) {
		if addr := c.sh.LeaderAddr(); c.proxy && addr != "" && !shardChannels && cmd.Name != "watch" {
			c.proxyTo(addr, argv)
			return false
		}
		c.rejected = kind
		c.redirect(slot)
		return false
	}
	return true
}

// proxyTo runs a command of a slot another node leads on that node, for a
// client that is not cluster-aware (cluster-proxy, CLIENT PROXY ON): the
// command goes over the client's connection to that node (forward.go),
// and its reply comes back in order. A transaction or a WATCH there gets
// MOVED instead: they need the client on that node.
func (c *Client) proxyTo(addr string, argv [][]byte) {
	if c.up != nil && c.up.addr != addr {
		c.drainUpstream(true)
		c.closeUpstream()
	}
	c.proxyAddr = addr
	c.forward(argv)
	c.replyMark = markNone // the node that runs it counts it
}

// upstreamAddr is the node a client's commands are forwarded to: the
// proxied slot's leader in cluster mode, else the group's leader.
func (c *Client) upstreamAddr() string {
	if c.srv.clustered() {
		return c.proxyAddr
	}
	return c.srv.group().LeaderAddr()
}

// shardPubSub are the commands of shard channels (Redis 7's sharded pub/sub).
var shardPubSub = map[string]bool{"ssubscribe": true, "sunsubscribe": true, "spublish": true}

// redirect answers MOVED to the node that leads slot's shard, as Redis
// Cluster answers for a slot another master serves, or CLUSTERDOWN while
// the shard has no leader (an election, or a lost majority: a shard
// without a majority never takes a write).
func (c *Client) redirect(slot int) {
	addr := c.srv.slotShard[slot].LeaderAddr()
	if addr == "" {
		c.reply().Error("CLUSTERDOWN The cluster is down")
		return
	}
	c.reply().Error("MOVED " + strconv.Itoa(slot) + " " + addr)
}

// readsOnly reports whether a command only reads, so that a READONLY
// client may run it on a replica.
func readsOnly(cmd, kind *command.Command) bool {
	if cmd.Flags&command.Script != 0 { // EVAL may write, EVAL_RO may not
		return cmd.Flags&command.ReadOnly != 0
	}
	return !kind.IsWrite() && cmd.Flags&(command.Conn|command.Blocking) == 0 && kind.Flags&command.AllowBusy == 0
}

// keylessShard is where a command without keys runs (EVAL with none,
// PUBLISH in a cluster, MULTI with no keys): the first shard this node
// leads, or the first shard.
func (s *Server) keylessShard() *shard.Shard {
	for _, sh := range s.shards {
		if sh.IsLeader() {
			return sh
		}
	}
	return s.shards[0]
}

// clusterWide runs, in cluster mode and outside MULTI, the keyless
// commands that concern every shard of the node, and reports whether
// argv was one.
func (c *Client) clusterWide(kind *command.Command, argv [][]byte, now int64) bool {
	switch kind.Name {
	case "dbsize":
		c.sumShards(kind, argv, now)
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

// sumShards answers an integer command (DBSIZE) with the sum over shards.
func (c *Client) sumShards(kind *command.Command, argv [][]byte, now int64) {
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
	shards := c.srv.shards
	// next is the first shard from i on that this node leads (len: none).
	next := func(i int) int {
		for i < len(shards) && !shards[i].IsLeader() {
			i++
		}
		return i
	}
	start := func(i int) uint64 { return uint64(c.srv.topo.Shards[i].Slots[0].Start) << 48 }
	args := append([][]byte(nil), argv...)
	var keys [][]byte
	i := c.srv.shardIndex(int(min(cursor>>48, cluster.SlotCount-1)))
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

// shardIndex is the index of the shard serving slot.
func (s *Server) shardIndex(slot int) int {
	for i, sh := range s.shards {
		if sh == s.slotShard[slot] {
			return i
		}
	}
	return 0
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
