package server

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"strings"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/resp"
	"basalt/internal/transport"
)

// CLUSTER and ASKING (Redis 7.0's replies and errors). Every node of a
// cluster holds a replica of every shard (docs/cluster.md), and leads some
// of them: to clients each node is a master holding the slots of the
// shards it leads. SLOTS and SHARDS list, for each shard, its leader and
// then its other replicas (as replicas, which READONLY clients read from);
// NODES shows every node as a master with the slots it leads. A node's own
// address is the one the client reached it at (the local end of the
// connection); the others' are the client addresses they advertise to
// their peers.

func cmdAsking(c *Client, argv [][]byte) { c.reply().OK() }

func cmdCluster(c *Client, argv [][]byte) {
	w := c.reply()
	if !c.srv.clustered() {
		w.Error("ERR This instance has cluster support disabled")
		return
	}
	topo := c.srv.topo
	switch sub := strings.ToLower(string(argv[1])); sub {
	case "help":
		command.HelpReply(w, clusterHelp)
	case "info":
		w.Verbatim("txt", c.srv.clusterInfo())
	case "myid":
		w.BulkString(topo.Me().Name)
	case "myshardid":
		// The shard this node leads first, as Redis names a master's shard.
		w.BulkString(c.srv.myShardName())
	case "nodes":
		w.Verbatim("txt", c.clusterNodes())
	case "slots":
		c.clusterSlots(w)
	case "shards":
		c.clusterShards(w)
	case "links":
		c.clusterLinks(w)
	case "keyslot":
		w.Int(int64(cluster.KeySlot(argv[2])))
	case "countkeysinslot":
		slot, ok := parseSlot(w, argv[2])
		if !ok {
			return
		}
		n := int64(0)
		c.slotKeys(slot, func([]byte) bool { n++; return true })
		w.Int(n)
	case "getkeysinslot":
		slot, okSlot := num.ParseInt(argv[2])
		count, okCount := num.ParseInt(argv[3])
		switch {
		case !okSlot || !okCount:
			w.Error(command.ErrNotInt)
			return
		case count < 0 || slot < 0 || slot >= cluster.SlotCount:
			w.Error("ERR Invalid slot or number of keys")
			return
		}
		var keys [][]byte
		if count > 0 {
			c.slotKeys(uint16(slot), func(k []byte) bool {
				keys = append(keys, append([]byte(nil), k...))
				return int64(len(keys)) < count
			})
		}
		w.ArrayLen(len(keys))
		for _, k := range keys {
			w.Bulk(k)
		}
	case "replicas", "slaves":
		if c.srv.nodeNamed(string(argv[2])) == nil {
			w.Error("ERR Unknown node " + string(argv[2]))
			return
		}
		w.ArrayLen(0) // no node is only a replica
	case "count-failure-reports":
		if c.srv.nodeNamed(string(argv[2])) == nil {
			w.Error("ERR Unknown node " + string(argv[2]))
			return
		}
		w.Int(0)
	case "saveconfig":
		w.OK() // the topology is written when it changes
	case "bumpepoch":
		w.Simple("STILL " + strconv.FormatUint(topo.Epoch, 10))
	case "failover":
		w.Error("ERR You should send CLUSTER FAILOVER to a replica")
	default:
		// ADDSLOTS, MEET, SETSLOT, RESET...: the node assigns its slots to
		// its shards itself.
		w.Error("ERR CLUSTER " + strings.ToUpper(sub) + " is not supported: basalt assigns the slots to its shards itself (docs/cluster.md)")
	}
}

// parseSlot reads a slot argument, answering Redis's errors.
func parseSlot(w *resp.Writer, arg []byte) (uint16, bool) {
	n, ok := num.ParseInt(arg)
	if !ok {
		w.Error(command.ErrNotInt)
		return 0, false
	}
	if n < 0 || n >= cluster.SlotCount {
		w.Error("ERR Invalid slot")
		return 0, false
	}
	return uint16(n), true
}

// slotKeys visits the live keys of a slot on the shard serving it (none
// if this node holds no replica of it, as a Redis node has no keys of a
// slot it does not serve).
func (c *Client) slotKeys(slot uint16, fn func(key []byte) bool) {
	sh := c.srv.slotShard[slot]
	if sh == nil {
		return
	}
	tx := sh.Store().ReadTx(0, c.now(), true)
	defer tx.Close()
	tx.SlotKeys(slot, fn)
}

// nodeNamed is the cluster's node of that name, nil if none.
func (s *Server) nodeNamed(name string) *cluster.Node {
	for i := range s.topo.Nodes {
		if s.topo.Nodes[i].Name == name {
			return &s.topo.Nodes[i]
		}
	}
	return nil
}

// leaderOf is the node that leads shard i (0: none known): as the node's
// replica of it knows, or, for a shard held by other nodes only, as their
// leadership news says (shard.Host).
func (s *Server) leaderOf(i int) uint64 {
	if sh := s.shardAt[i]; sh != nil {
		return transport.NodeOf(sh.Leader())
	}
	if s.host == nil {
		return 0
	}
	return s.host.LeaderOf(uint32(i))
}

// leaderAddr is the client address of the node that leads shard i, ""
// if none is known.
func (s *Server) leaderAddr(i int) string {
	if sh := s.shardAt[i]; sh != nil {
		return sh.LeaderAddr()
	}
	if id := s.leaderOf(i); id != 0 {
		return s.host.ClientAddr(id).Forward
	}
	return ""
}

// myShardName is the name of the first shard this node leads, or of the
// first it holds.
func (s *Server) myShardName() string {
	for i, sh := range s.topo.Shards {
		if s.leaderOf(i) == s.topo.NodeID {
			return sh.Name
		}
	}
	return s.topo.Shards[shardNumber(s.shards[0])].Name
}

func (s *Server) clusterInfo() string {
	epoch := strconv.FormatUint(s.topo.Epoch, 10)
	ok, leaders := 0, map[uint64]bool{}
	for i, sh := range s.topo.Shards {
		if l := s.leaderOf(i); l != 0 {
			ok += sh.Slots.Count()
			leaders[l] = true
		}
	}
	state := "ok"
	if ok < cluster.SlotCount || !s.topoAgreed.Load() {
		state = "fail"
	}
	return "cluster_state:" + state + "\r\n" +
		"cluster_slots_assigned:16384\r\n" +
		"cluster_slots_ok:" + strconv.Itoa(ok) + "\r\n" +
		"cluster_slots_pfail:0\r\n" +
		"cluster_slots_fail:" + strconv.Itoa(cluster.SlotCount-ok) + "\r\n" +
		"cluster_known_nodes:" + strconv.Itoa(len(s.topo.Nodes)) + "\r\n" +
		"cluster_size:" + strconv.Itoa(len(leaders)) + "\r\n" +
		"cluster_current_epoch:" + epoch + "\r\n" +
		"cluster_my_epoch:" + epoch + "\r\n" +
		"cluster_stats_messages_sent:0\r\n" +
		"cluster_stats_messages_received:0\r\n" +
		"total_cluster_links_buffer_limit_exceeded:0\r\n"
}

// nodeUp reports whether node id is seen alive: its leadership news came
// lately (shard.Host), it leads a shard (this node hears its heartbeats) or
// it answers a shard this node leads. A node that does none of these is
// shown failed, so clients stop dialing it.
func (s *Server) nodeUp(id uint64) bool {
	if id == s.topo.NodeID || s.host != nil && s.host.Up(id) {
		return true
	}
	for i := range s.topo.Shards {
		switch s.leaderOf(i) {
		case id:
			return true
		case s.topo.NodeID:
			if pr, ok := s.shardAt[i].Status().Progress[transport.ReplicaID(uint32(i), id)]; ok && pr.RecentActive {
				return true
			}
		}
	}
	return false
}

// nodeAddr is where this client reaches node id: ip and port, "" if
// unknown.
func (c *Client) nodeAddr(id uint64) (ip string, port int) {
	a := c.clientAddr(id)
	return a.Host, c.clientPort(a)
}

// ledSlots are the slots of the shards node id leads, adjacent ranges
// merged.
func (s *Server) ledSlots(id uint64) cluster.Slots {
	var out cluster.Slots
	for i, sh := range s.topo.Shards {
		if s.leaderOf(i) == id {
			for _, r := range sh.Slots {
				out = out.Merge(r)
			}
		}
	}
	return out
}

// clusterNodes is CLUSTER NODES: a line per node, id ip:port@cport flags
// master ping-sent pong-recv config-epoch link-state slots.
func (c *Client) clusterNodes() string {
	s := c.srv
	var b strings.Builder
	for _, n := range s.topo.Nodes {
		ip, port := c.nodeAddr(n.ID)
		flags, link := "master", "connected"
		switch {
		case n.ID == s.topo.NodeID:
			flags = "myself,master"
		case ip == "":
			flags = "master,noaddr"
		case !s.nodeUp(n.ID):
			flags, link = "master,fail", "disconnected"
		}
		b.WriteString(n.Name + " " + net.JoinHostPort(ip, strconv.Itoa(port)) + "@0 " + flags + " - 0 0 " +
			strconv.FormatUint(s.topo.Epoch, 10) + " " + link)
		if slots := formatSlots(s.ledSlots(n.ID)); slots != "" {
			b.WriteString(" " + slots)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shardNodes are a shard's replicas, its leader first; ok is false while
// it has none.
func (s *Server) shardNodes(i int) (nodes []uint64, ok bool) {
	leader := s.leaderOf(i)
	if leader == 0 {
		return nil, false
	}
	nodes = []uint64{leader}
	for _, id := range s.topo.Shards[i].Replicas {
		if id != leader {
			nodes = append(nodes, id)
		}
	}
	return nodes, true
}

// writeNode writes a node as CLUSTER SLOTS does: ip, port, id, metadata.
func (c *Client) writeNode(w *resp.Writer, id uint64) {
	ip, port := c.nodeAddr(id)
	w.ArrayLen(4)
	w.BulkString(ip)
	w.Int(int64(port))
	w.BulkString(c.srv.topo.Node(id).Name)
	w.MapLen(0) // no hostname
}

// slotGroup is a run of shards with the same replicas and leader: their
// slots, adjacent ranges merged, and their nodes, the leader first (none
// while they have no leader).
type slotGroup struct {
	slots cluster.Slots
	nodes []uint64
}

// slotGroups are the shards as SLOTS and SHARDS describe them: a lone
// node is one group holding every slot.
func (s *Server) slotGroups() []slotGroup {
	var out []slotGroup
	for i, sh := range s.topo.Shards {
		nodes, _ := s.shardNodes(i)
		if n := len(out); n == 0 || !slices.Equal(out[n-1].nodes, nodes) {
			out = append(out, slotGroup{nodes: nodes})
		}
		last := &out[len(out)-1]
		for _, r := range sh.Slots {
			last.slots = last.slots.Merge(r)
		}
	}
	return out
}

// clusterLinks lists the node's connections with its peers, as Redis
// lists its cluster bus links: one a peer dials (from) and one this node
// dials (to), which here carry the Raft messages of every group they share.
// A lone node has none.
func (c *Client) clusterLinks(w *resp.Writer) {
	if c.srv.host == nil {
		w.ArrayLen(0)
		return
	}
	links := c.srv.host.Transport().Links()
	slices.SortStableFunc(links, func(a, b transport.Link) int { return cmp.Compare(a.Peer, b.Peer) })
	w.ArrayLen(len(links))
	for _, l := range links {
		// A link to a peer writes through a buffer of its own; one from a
		// peer only reads.
		direction, events, allocated := "from", "r", int64(0)
		if l.To {
			direction, events, allocated = "to", "rw", transport.LinkBuffer+l.Queued
		}
		w.MapLen(6)
		w.BulkString("direction")
		w.BulkString(direction)
		w.BulkString("node")
		w.BulkString(c.srv.topo.Node(l.Peer).Name)
		w.BulkString("create-time")
		w.Int(l.Since.UnixMilli())
		w.BulkString("events")
		w.BulkString(events)
		w.BulkString("send-buffer-allocated")
		w.Int(allocated)
		w.BulkString("send-buffer-used")
		w.Int(l.Queued)
	}
}

// clusterSlots lists each slot range with its shard's leader, and as its
// replicas only the shard's nodes that lead no shard. A node leading some
// shards and following others is a master, as NODES shows it: clients
// that give each node one role (redis-py takes the first it sees) would
// otherwise take masters for replicas, and skip them when they send a
// command to every master (DBSIZE, SCAN, SCRIPT LOAD).
func (c *Client) clusterSlots(w *resp.Writer) {
	groups := c.srv.slotGroups()
	n := 0
	masters := map[uint64]bool{}
	for _, g := range groups {
		if g.nodes != nil {
			n += len(g.slots)
			masters[g.nodes[0]] = true
		}
	}
	w.ArrayLen(n)
	for _, g := range groups {
		if g.nodes == nil {
			continue // no leader: its slots are not served
		}
		nodes := g.nodes[:1]
		for _, id := range g.nodes[1:] {
			if !masters[id] {
				nodes = append(nodes[:len(nodes):len(nodes)], id)
			}
		}
		for _, r := range g.slots {
			w.ArrayLen(2 + len(nodes))
			w.Int(int64(r.Start))
			w.Int(int64(r.End))
			for _, id := range nodes {
				c.writeNode(w, id)
			}
		}
	}
}

func (c *Client) clusterShards(w *resp.Writer) {
	entries := c.srv.slotGroups()
	w.ArrayLen(len(entries))
	for _, e := range entries {
		w.MapLen(2)
		w.BulkString("slots")
		w.ArrayLen(2 * len(e.slots))
		for _, r := range e.slots {
			w.Int(int64(r.Start))
			w.Int(int64(r.End))
		}
		w.BulkString("nodes")
		w.ArrayLen(len(e.nodes))
		for k, id := range e.nodes {
			a := c.clientAddr(id)
			role, health := "master", "online"
			if k > 0 {
				role = "replica"
			}
			if a.Host == "" || !c.srv.nodeUp(id) {
				health = "fail"
			}
			ports := shardsPorts(a)
			w.MapLen(6 + len(ports))
			w.BulkString("id")
			w.BulkString(c.srv.topo.Node(id).Name)
			for _, p := range ports {
				w.BulkString(p.name)
				w.Int(int64(p.port))
			}
			w.BulkString("ip")
			w.BulkString(a.Host)
			w.BulkString("endpoint")
			w.BulkString(a.Host)
			w.BulkString("role")
			w.BulkString(role)
			w.BulkString("replication-offset")
			w.Int(0) // as master_repl_offset in INFO
			w.BulkString("health")
			w.BulkString(health)
		}
	}
}

// clusterHelp is Redis 7.0's CLUSTER HELP text.
var clusterHelp = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
	"HELP",
	"    Prints this help.",
}
