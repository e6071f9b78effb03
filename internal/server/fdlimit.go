//go:build unix

package server

import (
	"fmt"
	"log/slog"
	"syscall"
)

// planDescriptors raises RLIMIT_NOFILE's soft limit towards what cfg needs
// and lowers maxclients to what the limit leaves. It fails when even the
// node's own files don't fit.
func planDescriptors(cfg Config) (fdPlan, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fdPlan{cfg.MaxClients, storeFiles}, nil
	}
	perClient, peers, groups := 1, 0, 1
	if cfg.ClusterEnabled {
		groups = cfg.ClusterShards // a Raft log each; store is shared among their stores
	}
	if cfg.RaftAddr != "" {
		peers = max(len(cfg.InitialCluster), 3)
		if !cfg.ClusterEnabled {
			// A follower forwards its clients' writes on a connection of
			// each client's own to the leader.
			perClient = 2
		}
	}
	own := func(store int) uint64 { return uint64(reservedFDs + store + groups*raftLogFiles + peers*peerFDs) }
	want := own(storeFiles) + uint64(cfg.MaxClients*perClient)
	if lim.Cur < want {
		raised := lim
		raised.Cur = min(want, lim.Max) // Go raises it to Max at start; try anyway
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			lim = raised
		}
	}
	if lim.Cur >= want {
		return fdPlan{cfg.MaxClients, storeFiles}, nil
	}
	store := max(min(storeFiles, int(lim.Cur/4)), minStoreFiles)
	if lim.Cur <= own(store) {
		return fdPlan{}, fmt.Errorf("the open file limit (ulimit -n) of %d is not enough for basalt to start: it needs at least %d", lim.Cur, own(store)+1)
	}
	plan := fdPlan{maxClients: int((lim.Cur - own(store)) / uint64(perClient)), storeFiles: store}
	slog.Warn(fmt.Sprintf("maxclients of %d needs at least %d open files, but the limit (ulimit -n) is %d: maxclients is reduced to %d to fit. Raise 'ulimit -n' for more clients.",
		cfg.MaxClients, want, lim.Cur, plan.maxClients))
	return plan, nil
}
