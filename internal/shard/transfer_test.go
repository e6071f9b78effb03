package shard_test

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/command"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// TestTransferToFollowerNotHeardSinceQuorumCheck: raft forgets which
// followers it heard from at each quorum check (every election timeout)
// and hears a live one again within a heartbeat. A leadership transfer
// asked in between still reaches the live follower. (balanceLeaders asks
// once a second; after one transfer that failed, raft's check came just
// before each of its tries, and a shard kept its leader for good.)
func TestTransferToFollowerNotHeardSinceQuorumCheck(t *testing.T) {
	group := startGroup(t, 3)
	var leader *shard.Shard
	for deadline := time.Now().Add(15 * time.Second); leader == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		for _, sh := range group {
			if sh.IsLeader() {
				leader = sh
			}
		}
	}
	target := group[leader.ID()%3] // the next node
	// The leader hears nothing from the target until a quorum check has
	// forgotten it (the target still hears the leader, so stays a follower).
	leader.Transport().SetFault(target.ID(), true, false)
	for deadline := time.Now().Add(10 * time.Second); leader.Status().Progress[target.ID()].RecentActive; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the leader's quorum check did not forget the silent follower")
		}
	}
	leader.Transport().Heal(target.ID())
	leader.TransferLeadershipTo(target.ID(), 3*time.Second)
	for deadline := time.Now().Add(5 * time.Second); !target.IsLeader(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d did not take over from node %d", target.ID(), leader.ID())
		}
	}
}

// startGroup starts the n replicas (IDs 1..n) of a new group on loopback,
// in this process.
func startGroup(t *testing.T, n int) []*shard.Shard {
	t.Helper()
	addrs := map[uint64]string{}
	for id := uint64(1); id <= uint64(n); id++ {
		addrs[id] = "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	}
	var group []*shard.Shard
	for id := uint64(1); id <= uint64(n); id++ {
		st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		peers := map[uint64]string{}
		for p, addr := range addrs {
			if p != id {
				peers[p] = addr
			}
		}
		sh, err := shard.New(st, command.Apply, shard.Config{ID: id, Peers: peers, RaftAddr: addrs[id], ClusterID: 1,
			RaftDir: t.TempDir(), Fsync: shard.FsyncNo})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sh.Close)
		group = append(group, sh)
	}
	return group
}
