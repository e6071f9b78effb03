//go:build unix

package server

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"

	"basalt/internal/raftlog"
)

// planDescriptors raises RLIMIT_NOFILE's soft limit towards what cfg needs
// and lowers maxclients to what the limit leaves, with a logged line. It
// fails when even the node's own files don't fit.
func planDescriptors(cfg Config) (fdPlan, error) {
	plan, want, limit, err := fitDescriptors(cfg)
	if err == nil && plan.maxClients < cfg.MaxClients {
		slog.Warn(fmt.Sprintf("maxclients of %d needs at least %d open files, but the limit (ulimit -n) is %d: maxclients is reduced to %d to fit. Raise 'ulimit -n' for more clients.",
			cfg.MaxClients, want, limit, plan.maxClients))
	}
	return plan, err
}

// tryMaxClients answers CONFIG SET maxclients as Redis's
// updateMaxclients does: a raise first tries to raise the descriptor
// limit, and is refused, naming the most clients the limit allows, if it
// cannot. It runs under s.mu: s.cfg is the value in use.
func tryMaxClients(s *Server, cfg Config) error {
	old := s.cfg
	if cfg.MaxClients <= old.MaxClients {
		return nil
	}
	plan, _, _, err := fitDescriptors(cfg)
	if err == nil && plan.maxClients >= cfg.MaxClients {
		return nil
	}
	return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", max(plan.maxClients, old.MaxClients))
}

// fitDescriptors raises the soft limit towards what cfg needs (want) and
// returns how the limit it got is spent.
func fitDescriptors(cfg Config) (plan fdPlan, want, limit uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fdPlan{cfg.MaxClients, storeFiles}, 0, 0, nil
	}
	perClient, peers := 1, 0
	logs := logEngines(cfg)
	if cfg.RaftAddr != "" {
		peers = max(len(cfg.InitialCluster), 3)
		if !cfg.ClusterEnabled {
			// A follower forwards its clients' writes on a connection of
			// each client's own to the leader.
			perClient = 2
		}
	}
	own := func(store int) uint64 { return uint64(reservedFDs + store + logs*raftLogFiles + peers*peerFDs) }
	want = own(storeFiles) + uint64(cfg.MaxClients*perClient)
	if lim.Cur < want {
		raised := lim
		raised.Cur = min(want, lim.Max) // Go raises it to Max at start; try anyway
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			lim = raised
		}
	}
	if lim.Cur >= want {
		return fdPlan{cfg.MaxClients, storeFiles}, want, lim.Cur, nil
	}
	store := max(min(storeFiles, int(lim.Cur/4)), minStoreFiles)
	if lim.Cur <= own(store) {
		return fdPlan{}, want, lim.Cur, fmt.Errorf("the open file limit (ulimit -n) of %d is not enough for basalt to start: it needs at least %d", lim.Cur, own(store)+1)
	}
	return fdPlan{maxClients: int((lim.Cur - own(store)) / uint64(perClient)), storeFiles: store}, want, lim.Cur, nil
}

// logEngines is how many Pebble instances hold the node's Raft logs: one,
// and in cluster mode one more for each group whose directory still holds
// a log of its own (a node written before its groups shared one).
func logEngines(cfg Config) int {
	if !cfg.ClusterEnabled {
		return 1
	}
	dirs, _ := filepath.Glob(filepath.Join(cfg.Dir, "shards", "*", "raft"))
	n := 1
	for _, dir := range append(dirs, filepath.Join(cfg.Dir, "meta", "raft")) {
		if raftlog.HasOwnLog(dir) {
			n++
		}
	}
	return n
}
