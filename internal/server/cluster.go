package server

import (
	"net"
	"strconv"
	"strings"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/resp"
)

// CLUSTER and ASKING (Redis 7.0's replies and errors). A node in cluster
// mode serves all 16384 slots through its shards, so to clients it is one
// master holding every slot: NODES, SLOTS and SHARDS describe it so, with
// the slot ranges of its shards merged where they touch. Its address is
// the one the client reached it at (the local end of the connection), as
// a node that was never told its announced address has no other.

func init() {
	connHandlers["cluster"] = cmdCluster
	connHandlers["asking"] = func(c *Client, argv [][]byte) { c.reply().OK() }
}

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
		w.BulkString(topo.NodeName)
	case "myshardid":
		// A lone node is the one Redis shard of its cluster.
		w.BulkString(topo.ClusterID)
	case "nodes":
		w.Verbatim("txt", c.clusterNodes())
	case "slots":
		c.clusterSlots(w)
	case "shards":
		c.clusterShards(w)
	case "links":
		w.ArrayLen(0) // a lone node has no peers
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
		if string(argv[2]) != topo.NodeName {
			w.Error("ERR Unknown node " + string(argv[2]))
			return
		}
		w.ArrayLen(0)
	case "count-failure-reports":
		if string(argv[2]) != topo.NodeName {
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

// slotKeys visits the live keys of a slot on the shard serving it.
func (c *Client) slotKeys(slot uint16, fn func(key []byte) bool) {
	tx := c.srv.slotShard[slot].Store().ReadTx(0, c.now(), true)
	defer tx.Close()
	tx.SlotKeys(slot, fn)
}

func (s *Server) clusterInfo() string {
	epoch := strconv.FormatUint(s.topo.Epoch, 10)
	return "cluster_state:ok\r\n" +
		"cluster_slots_assigned:16384\r\n" +
		"cluster_slots_ok:16384\r\n" +
		"cluster_slots_pfail:0\r\n" +
		"cluster_slots_fail:0\r\n" +
		"cluster_known_nodes:1\r\n" +
		"cluster_size:1\r\n" +
		"cluster_current_epoch:" + epoch + "\r\n" +
		"cluster_my_epoch:" + epoch + "\r\n" +
		"cluster_stats_messages_sent:0\r\n" +
		"cluster_stats_messages_received:0\r\n" +
		"total_cluster_links_buffer_limit_exceeded:0\r\n"
}

// nodeIP is the address the client reached this node at.
func (c *Client) nodeIP() string {
	if a, ok := c.nc.LocalAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.srv.config().Bind
}

// nodeSlots are the slots of every shard of the node, adjacent ranges
// merged.
func (s *Server) nodeSlots() cluster.Slots {
	var out cluster.Slots
	for slot := 0; slot < cluster.SlotCount; slot++ {
		if s.slotShard[slot] == nil {
			continue
		}
		if n := len(out); n > 0 && int(out[n-1].End) == slot-1 {
			out[n-1].End = uint16(slot)
		} else {
			out = append(out, cluster.SlotRange{Start: uint16(slot), End: uint16(slot)})
		}
	}
	return out
}

// clusterNodes is CLUSTER NODES's line for this node: id ip:port@cport
// flags master ping-sent pong-recv config-epoch link-state slots.
func (c *Client) clusterNodes() string {
	s := c.srv
	port := strconv.Itoa(s.config().Port)
	line := s.topo.NodeName + " " + net.JoinHostPort(c.nodeIP(), port) + "@0 myself,master - 0 0 " +
		strconv.FormatUint(s.topo.Epoch, 10) + " connected"
	if slots := formatSlots(s.nodeSlots()); slots != "" {
		line += " " + slots
	}
	return line + "\n"
}

func (c *Client) clusterSlots(w *resp.Writer) {
	slots := c.srv.nodeSlots()
	w.ArrayLen(len(slots))
	for _, r := range slots {
		w.ArrayLen(3)
		w.Int(int64(r.Start))
		w.Int(int64(r.End))
		w.ArrayLen(4)
		w.BulkString(c.nodeIP())
		w.Int(int64(c.srv.config().Port))
		w.BulkString(c.srv.topo.NodeName)
		w.MapLen(0) // no hostname
	}
}

func (c *Client) clusterShards(w *resp.Writer) {
	slots := c.srv.nodeSlots()
	w.ArrayLen(1)
	w.MapLen(2)
	w.BulkString("slots")
	w.ArrayLen(2 * len(slots))
	for _, r := range slots {
		w.Int(int64(r.Start))
		w.Int(int64(r.End))
	}
	w.BulkString("nodes")
	w.ArrayLen(1)
	w.MapLen(7)
	ip := c.nodeIP()
	w.BulkString("id")
	w.BulkString(c.srv.topo.NodeName)
	w.BulkString("port")
	w.Int(int64(c.srv.config().Port))
	w.BulkString("ip")
	w.BulkString(ip)
	w.BulkString("endpoint")
	w.BulkString(ip)
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("replication-offset")
	w.Int(0) // as master_repl_offset in INFO
	w.BulkString("health")
	w.BulkString("online")
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
