package server

import "basalt/internal/raftlog"

// Descriptors, as Redis's adjustOpenFilesLimit counts them: a client costs
// one, and a node runs out when clients and its own files pass
// RLIMIT_NOFILE. At startup the soft limit is raised as far as the hard
// one allows, and if that is still short, maxclients is lowered to fit,
// with one logged line.
const (
	// reservedFDs is Redis's CONFIG_MIN_RESERVED_FDS: listeners, the log,
	// an RDB save, DEBUG and MIGRATE connections.
	reservedFDs = 32
	// storeFiles is what the data store (Pebble) may keep open: its table
	// cache (Pebble's MaxOpenFiles), WAL, manifest, lock and directory.
	// With fewer descriptors it gets a quarter of them, at least
	// minStoreFiles.
	storeFiles    = 1000
	minStoreFiles = 64
	// raftLogFiles is what the Raft log's own Pebble may keep open
	// (raftlog.MaxOpenFiles and its WAL, manifest, lock, directory).
	raftLogFiles = raftlog.MaxOpenFiles + 16
	// peerFDs are the Raft transport's connections to and from a peer,
	// for messages and for clock probes, and a snapshot being sent or
	// received.
	peerFDs = 6
)

// fdPlan is how a node spends its descriptors.
type fdPlan struct {
	maxClients int
	storeFiles int // the data store's MaxOpenFiles
}
