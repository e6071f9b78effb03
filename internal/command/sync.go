package command

// SYNC, PSYNC and REPLCONF: the replication handshake, which basalt
// answers for snapshots only (redis-cli --rdb); the server runs them
// (internal/server/sync.go). Their entries are Redis 7.0's.
func init() {
	syncFlags := Conn | Admin | NoScript | NoAsyncLoading | NoMulti
	adminCats := []string{"admin", "dangerous"}
	register(
		&Command{Name: "sync", Arity: 1, Flags: syncFlags, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "Internal command used for replication"},
		&Command{Name: "psync", Arity: -3, Flags: syncFlags, Categories: adminCats, Group: "server", Since: "2.8.0", Summary: "Internal command used for replication"},
		&Command{Name: "replconf", Arity: -1, Flags: Conn | Admin | NoScript | Loading | Stale | AllowBusy, Categories: adminCats, Group: "server", Since: "3.0.0", Summary: "An internal command for configuring the replication stream"},
	)
}
