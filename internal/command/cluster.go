package command

import "sync/atomic"

// CLUSTER and ASKING: their table entries, as Redis 7.0 declares them
// (flags, arity, categories, tips); the handlers are in package server
// (internal/server/cluster.go), since they answer from the node's topology.
func init() {
	adminCats := []string{"admin", "dangerous"}
	const changes = Admin | Stale | NoAsyncLoading
	sub := func(name string, arity int, flags Flags, cats []string, since, summary string, tips ...string) *Command {
		return &Command{Name: "cluster|" + name, Arity: arity, Flags: flags, Categories: cats, Since: since, Group: "cluster", Summary: summary, Tips: tips}
	}
	const nondet = "nondeterministic_output"
	register(
		&Command{Name: "cluster", Arity: -2, Flags: Conn, Group: "cluster", Since: "3.0.0", Summary: "A container for cluster commands", Subcommands: []*Command{
			sub("addslots", -3, changes, adminCats, "3.0.0", "Assign new hash slots to receiving node"),
			sub("addslotsrange", -4, changes, adminCats, "7.0.0", "Assign new hash slots to receiving node"),
			sub("bumpepoch", 2, changes, adminCats, "3.0.0", "Advance the cluster config epoch", nondet),
			sub("count-failure-reports", 3, Admin|Stale, adminCats, "3.0.0", "Return the number of failure reports active for a given node", nondet),
			sub("countkeysinslot", 3, Stale, nil, "3.0.0", "Return the number of local keys in the specified hash slot"),
			sub("delslots", -3, changes, adminCats, "3.0.0", "Set hash slots as unbound in receiving node"),
			sub("delslotsrange", -4, changes, adminCats, "7.0.0", "Set hash slots as unbound in receiving node"),
			sub("failover", -2, changes, adminCats, "3.0.0", "Forces a replica to perform a manual failover of its master."),
			sub("flushslots", 2, changes, adminCats, "3.0.0", "Delete a node's own slots information"),
			sub("forget", 3, changes, adminCats, "3.0.0", "Remove a node from the nodes table"),
			sub("getkeysinslot", 4, Stale, nil, "3.0.0", "Return local key names in the specified hash slot", nondet),
			sub("help", 2, Loading|Stale, nil, "5.0.0", "Show helpful text about the different subcommands"),
			sub("info", 2, Stale, nil, "3.0.0", "Provides info about Redis Cluster node state", nondet),
			sub("keyslot", 3, Stale, nil, "3.0.0", "Returns the hash slot of the specified key"),
			sub("links", 2, Stale, nil, "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster", nondet),
			sub("meet", -4, changes, adminCats, "3.0.0", "Force a node cluster to handshake with another node"),
			sub("myid", 2, Stale, nil, "3.0.0", "Return the node id"),
			sub("myshardid", 2, Stale, nil, "7.2.0", "Return the node shard id", nondet),
			sub("nodes", 2, Stale, nil, "3.0.0", "Get Cluster config for the node", nondet),
			sub("replicas", 3, Admin|Stale, adminCats, "5.0.0", "List replica nodes of the specified master node", nondet),
			sub("replicate", 3, changes, adminCats, "3.0.0", "Reconfigure a node as a replica of the specified master node"),
			sub("reset", -2, Admin|NoScript|Stale, adminCats, "3.0.0", "Reset a Redis Cluster node"),
			sub("saveconfig", 2, changes, adminCats, "3.0.0", "Forces the node to save cluster state on disk"),
			sub("set-config-epoch", 3, changes, adminCats, "3.0.0", "Set the configuration epoch in a new node"),
			sub("setslot", -4, changes, adminCats, "3.0.0", "Bind a hash slot to a specific node"),
			sub("shards", 2, Stale, nil, "7.0.0", "Get array of cluster slots to node mappings", nondet),
			sub("slaves", 3, Admin|Stale, adminCats, "3.0.0", "List replica nodes of the specified master node", nondet),
			sub("slots", 2, Stale, nil, "3.0.0", "Get array of Cluster slot to node mappings", nondet),
		}},
		&Command{Name: "asking", Arity: 1, Flags: Conn | Fast, Categories: []string{"connection"}, Group: "cluster", Since: "3.0.0", Summary: "Sent by cluster clients after an -ASK redirect"},
	)
}

// configuredDatabases is the databases setting in cluster mode, where
// the store holds one: COPY ... DB n checks n against it first, as Redis
// does (its dbnum stays the setting's in cluster mode).
var configuredDatabases atomic.Int64

// SetClusterDatabases sets the databases setting for cluster mode.
func SetClusterDatabases(n int) { configuredDatabases.Store(int64(n)) }
