package command

import "strings"

// Commands the server runs because they need the connection: their table
// entries live here with the rest; their handlers are in package server.
func init() {
	const connFlags = Conn | NoScript | Loading | Stale
	register(
		&Command{Name: "select", Arity: 2, Flags: Conn | Loading | Stale | Fast, Categories: []string{"connection"}, Group: "connection", Since: "1.0.0", Summary: "Changes the selected database."},
		&Command{Name: "auth", Arity: -2, Flags: connFlags | Fast | NoAuth | AllowBusy, Categories: []string{"connection"}, Group: "connection", Since: "1.0.0", Summary: "Authenticates the connection."},
		&Command{Name: "hello", Arity: -1, Flags: connFlags | Fast | NoAuth | AllowBusy, Categories: []string{"connection"}, Group: "connection", Since: "6.0.0", Summary: "Handshakes with the Redis server."},
		&Command{Name: "quit", Arity: -1, Flags: connFlags | Fast | NoAuth | AllowBusy, Categories: []string{"connection"}, Group: "connection", Since: "1.0.0", Summary: "Closes the connection."},
		&Command{Name: "reset", Arity: 1, Flags: connFlags | Fast | NoAuth | AllowBusy, Categories: []string{"connection"}, Group: "connection", Since: "6.2.0", Summary: "Resets the connection."},
		&Command{Name: "shutdown", Arity: -1, Flags: connFlags | Admin | NoMulti | AllowBusy, Categories: []string{"admin", "dangerous"}, Group: "server", Since: "1.0.0", Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server."},
		&Command{Name: "multi", Arity: 1, Flags: connFlags | Fast | AllowBusy, Categories: []string{"transaction"}, Group: "transactions", Since: "1.2.0", Summary: "Starts a transaction."},
		&Command{Name: "exec", Arity: 1, Flags: connFlags | SkipSlowlog, Categories: []string{"transaction"}, Group: "transactions", Since: "1.2.0", Summary: "Executes all commands in a transaction."},
		&Command{Name: "discard", Arity: 1, Flags: connFlags | Fast | AllowBusy, Categories: []string{"transaction"}, Group: "transactions", Since: "2.0.0", Summary: "Discards a transaction."},
		&Command{Name: "watch", Arity: -2, Flags: connFlags | Fast | AllowBusy, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{{Flags: []string{"RO"}, Index: 1, LastKey: -1, KeyStep: 1}}, Categories: []string{"transaction"}, Group: "transactions", Since: "2.2.0", Summary: "Monitors changes to keys to determine the execution of a transaction."},
		&Command{Name: "readonly", Arity: 1, Flags: connFlags | Fast, Categories: []string{"connection"}, Group: "cluster", Since: "3.0.0", Summary: "Enables read-only queries for a connection to a follower: reads are served from the follower's state, possibly stale."},
		&Command{Name: "readwrite", Arity: 1, Flags: connFlags | Fast, Categories: []string{"connection"}, Group: "cluster", Since: "3.0.0", Summary: "Enables read-write queries for a connection: reads go to the leader again."},
		&Command{Name: "raft", Arity: -2, Flags: Conn | Admin | NoScript | Stale, Categories: []string{"admin", "dangerous"}, Group: "server", Since: "basalt", Summary: "Shows and changes the node's Raft group: STATUS, ADD id raft-addr [LEARNER], REMOVE id, TRANSFER [id], ISOLATE on|off."},
		&Command{Name: "role", Arity: 1, Flags: Conn | NoScript | Loading | Stale | Fast, Categories: []string{"admin", "dangerous"}, Group: "server", Since: "2.8.12", Summary: "Return the role of the instance in the context of replication"},
		&Command{Name: "wait", Arity: 3, Flags: Conn | NoScript, Categories: []string{"connection"}, Group: "generic", Since: "3.0.0", Summary: "Waits until the writes sent before it are in the logs of at least numreplicas other members of the node's Raft group.", Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}},
		&Command{Name: "waitaof", Arity: 4, Flags: Conn | NoScript, Categories: []string{"connection"}, Group: "generic", Since: "7.2.0", Summary: "Waits until the writes sent before it are synced to this node's log and are in the logs of at least numreplicas other members of its Raft group.", Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}},
		&Command{Name: "failover", Arity: -1, Flags: Conn | Admin | NoScript | Stale, Categories: []string{"admin", "dangerous"}, Group: "server", Since: "6.2.0", Summary: "Start a coordinated failover between this server and one of its replicas."},
		replicaOf("replicaof", "5.0.0", "Make the server a replica of another instance, or promote it as master."),
		replicaOf("slaveof", "1.0.0", "Make the server a replica of another instance, or promote it as master."),
		&Command{Name: "unwatch", Arity: 1, Flags: connFlags | Fast | AllowBusy, Categories: []string{"transaction"}, Group: "transactions", Since: "2.2.0", Summary: "Forgets about watched keys of a transaction."},
	)
}

// errReplicaOf answers REPLICAOF and SLAVEOF: a basalt node follows the
// leader of its Raft group, which RAFT ADD, REMOVE and TRANSFER change.
const errReplicaOf = "ERR REPLICAOF is not supported: basalt nodes replicate through their Raft group (RAFT ADD, RAFT REMOVE, RAFT TRANSFER)"

func replicaOf(name, since, summary string) *Command {
	return &Command{Name: name, Arity: 3, Flags: Admin | NoScript | Stale | NoAsyncLoading, Categories: []string{"admin", "dangerous"}, Group: "replication", Since: since, Summary: summary,
		Run: func(c *Ctx) { c.W.Error(errReplicaOf) }}
}

// MIGRATE's table entry (handler: internal/server/migrate.go). It talks to
// another server, so it cannot run in the apply loop.
func init() {
	rw := []string{"RW", "access", "delete"}
	register(&Command{Name: "migrate", Arity: -6, Flags: Conn | Write, FirstKey: 3, LastKey: 3, Step: 1,
		Categories: []string{"keyspace", "dangerous"}, Group: "generic", Since: "2.6.0",
		Summary: "Atomically transfer a key from a Redis instance to another one.", Tips: []string{"nondeterministic_output"},
		KeySpecs: []KeySpec{{Flags: rw, Index: 3, KeyStep: 1},
			{Flags: append(rw[:3:3], "incomplete"), Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1}},
		GetKeys: migrateKeys})
}

// migrateKeys finds MIGRATE's keys as Redis's migrateGetKeys does: the key
// argument, or what follows KEYS (none if the key argument is not empty).
func migrateKeys(argv [][]byte) []FoundKey {
	first, n := 3, 1
	skip := map[string]int{"copy": 0, "replace": 0, "auth": 1, "auth2": 2}
	for i := 6; i < len(argv); i++ {
		opt := strings.ToLower(string(argv[i]))
		if opt == "keys" {
			if len(argv[3]) > 0 {
				return nil
			}
			first, n = i+1, len(argv)-i-1
			break
		}
		i += skip[opt]
	}
	var keys []FoundKey
	for i := first; i < first+n && i < len(argv); i++ {
		keys = append(keys, FoundKey{argv[i], []string{"RW", "access", "delete"}})
	}
	return keys
}
