package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/raftlog"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/transport"
)

// The shards a node serves. Without cluster mode a node is one Raft group
// holding 16 databases, exactly as before. With cluster-enabled, the 16384
// hash slots are divided among several shards (cluster-shards), each a Raft
// group with its own store, log and apply loop, so writes to different
// shards apply on different cores. Each shard has replicas on
// cluster-replicas nodes, one of which leads it, and every node holds a
// replica of the metadata group (openMeta; docs/cluster.md). A client's command goes
// to the shard of its keys' slot (route.go); the keyless commands that
// cover the key space cover the shards the node leads (clusterwide.go).

// nodeGroups are the Raft groups openShards starts on a node: its shards,
// and in cluster mode its replica of the metadata group, with the topology
// and the host they share.
type nodeGroups struct {
	shards  []*shard.Shard
	meta    *shard.Shard
	topo    *cluster.Topology
	host    *shard.Host
	raftLog *raftlog.Engine // the groups' logs, in cluster mode
	agreed  bool            // the metadata group has committed topo (see Server.topoAgreed)
}

// openShards opens the node's stores and starts their groups, which apply
// their records with apply; relayed hears the pub/sub messages other nodes
// relay; prepare is called on each store before its group starts; storeFiles bounds the
// files the stores keep open, together. In a cluster of several nodes the
// groups share one transport, the host's.
func openShards(cfg Config, sc shard.Config, apply shard.Applier, relayed func(channel, message []byte), storeFiles int, prepare func(*store.Store)) (*nodeGroups, error) {
	topoPath := filepath.Join(cfg.Dir, "topology.json")
	_, statErr := os.Stat(topoPath)
	hasTopology := statErr == nil
	if !cfg.ClusterEnabled {
		if hasTopology {
			return nil, fmt.Errorf("%s holds a cluster node's data (%s): start it with --cluster-enabled yes", cfg.Dir, topoPath)
		}
		sh, err := openShard(filepath.Join(cfg.Dir, "data"), store.Options{Databases: cfg.Databases, CacheSize: cfg.CacheSize, MetaCacheSize: metaCacheOption(cfg.MetaCacheSize), MaxOpenFiles: storeFiles}, sc, apply, prepare)
		if err != nil {
			return nil, err
		}
		return &nodeGroups{shards: []*shard.Shard{sh}}, nil
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "data")); err == nil {
		return nil, fmt.Errorf("%s holds the data of a node without cluster mode: start it without --cluster-enabled, or move its keys with basalt load-rdb", cfg.Dir)
	}
	topo, err := clusterTopology(cfg)
	if err != nil {
		return nil, err
	}
	// One engine holds the logs of all the node's groups, so that their
	// appends share its WAL's syncs: with a log each, every shard synced
	// its own small groups, and 4 shards spent 1.6 times the CPU a SET
	// they spent with appendfsync everysec (-P 16, 50 clients).
	if sc.RaftLog, err = raftlog.OpenEngine(filepath.Join(cfg.Dir, "raftlog")); err != nil {
		return nil, fmt.Errorf("raft log: %w", err)
	}
	var host *shard.Host
	if cfg.RaftAddr != "" {
		nodes := map[uint64]string{}
		for _, n := range topo.Nodes {
			nodes[n.ID] = n.RaftAddr
		}
		if host, err = shard.NewHost(shard.HostConfig{NodeID: topo.NodeID, RaftAddr: cfg.RaftAddr, Advertise: sc.Advertise, Secret: sc.Secret, ClusterID: sc.ClusterID,
			ServerTLS: sc.ServerTLS, ClientTLS: sc.ClientTLS, Nodes: nodes, Relayed: relayed}); err != nil {
			sc.RaftLog.Close()
			return nil, err
		}
	}
	// The metadata group's committed topology is the cluster's; the file
	// is what a new cluster starts from, and a copy of the last one seen.
	meta, err := openMeta(cfg, sc, apply, topo, host)
	if err != nil {
		closeShards(nil, host, sc.RaftLog)
		return nil, err
	}
	// What the node's log committed before it stopped is applied first (a
	// replica that applied nothing yet has seen no topology but the first).
	if meta.Applied() > 0 {
		if err := meta.WaitApplied(meta.Status().Commit, time.After(5*time.Second)); err != nil {
			slog.Warn("metadata group: the topology file is used", "err", err)
		}
	}
	committed := committedTopology(meta, topo.NodeID)
	if committed != nil && !bytes.Equal(committed.Shared(), topo.Shared()) {
		slog.Warn("the topology in the data directory differs from the cluster's: the cluster's is taken", "file_epoch", topo.Epoch, "epoch", committed.Epoch)
		if err := cluster.SaveTopology(cfg.Dir, committed); err != nil {
			closeShards([]*shard.Shard{meta}, host, sc.RaftLog)
			return nil, err
		}
		topo = committed
	}
	var n int64 // the shards this node holds a replica of
	for _, ts := range topo.Shards {
		if ts.Hosts(topo.NodeID) {
			n++
		}
	}
	metaCache := metaCacheOption(cfg.MetaCacheSize)
	if metaCache > 0 {
		metaCache = max(metaCache/n, 1<<20)
	}
	accessSlots := max(store.DefaultAccessSlots>>bits.Len64(uint64(n-1)), 1<<16) // a power of two
	var shards []*shard.Shard
	for _, ts := range topo.Shards {
		if !ts.Hosts(topo.NodeID) {
			continue
		}
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
		sh, err := openShard(filepath.Join(dir, "data"), store.Options{Databases: 1, CacheSize: max(cfg.CacheSize/n, 8<<20), MetaCacheSize: metaCache, Slots: ts.Slots,
			MaxOpenFiles: max(storeFiles/int(n), minStoreFiles), AccessSlots: accessSlots}, c, apply, prepare)
		if err != nil {
			closeShards(append(shards, meta), host, sc.RaftLog)
			return nil, fmt.Errorf("shard %d: %w", ts.Index, err)
		}
		shards = append(shards, sh)
	}
	return &nodeGroups{shards: shards, meta: meta, topo: topo, host: host, raftLog: sc.RaftLog, agreed: committed != nil}, nil
}

// metaGroup is the Raft group of the cluster's metadata: no shard has it.
const metaGroup = 1<<32 - 2

// openMeta starts the node's replica of the metadata group: a group with
// no slots and a replica on every node, whose store holds what belongs to
// the whole cluster and has no shard to live in: the topology (publishTopology)
// and the ACL users (acl_cmd.go). Its records are few and small, so its
// store gets a small cache.
func openMeta(cfg Config, sc shard.Config, apply shard.Applier, topo *cluster.Topology, host *shard.Host) (*shard.Shard, error) {
	dir := filepath.Join(cfg.Dir, "meta")
	sc.RaftDir, sc.Host = filepath.Join(dir, "raft"), host
	sc.ID = transport.ReplicaID(metaGroup, topo.NodeID)
	sc.Peers = map[uint64]string{}
	for _, n := range topo.Nodes {
		if n.ID != topo.NodeID {
			sc.Peers[transport.ReplicaID(metaGroup, n.ID)] = n.RaftAddr
		}
	}
	sh, err := openShard(filepath.Join(dir, "data"), store.Options{Databases: 1, CacheSize: 8 << 20, MaxOpenFiles: minStoreFiles}, sc, apply, func(*store.Store) {})
	if err != nil {
		return nil, fmt.Errorf("metadata group: %w", err)
	}
	return sh, nil
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
	replicas := cfg.ClusterReplicas
	if replicas == 0 { // Redis's usual deployment: a master and two replicas
		replicas = min(defaultReplicas, len(nodes))
	}
	topo, created, err := cluster.LoadOrCreateTopology(cfg.Dir, func() (*cluster.Topology, error) {
		switch {
		case cfg.Join:
			return nil, errors.New("cluster-enabled: adding a node to a running cluster (--join) is not supported yet")
		case me >= 1<<32:
			return nil, errors.New("cluster-enabled: node-id must be below 4294967296")
		case nodes[me] != cfg.RaftAddr:
			return nil, fmt.Errorf("cluster-enabled: --initial-cluster must name this node (%d) at its --raft-addr %s", me, cfg.RaftAddr)
		case replicas > len(nodes):
			return nil, fmt.Errorf("cluster-enabled: cluster-replicas %d: there are only %d nodes to hold them", replicas, len(nodes))
		case cfg.ClusterShards*replicas < len(nodes):
			return nil, fmt.Errorf("cluster-enabled: %d shards of %d replicas leave some of the %d nodes without a shard: raise cluster-shards or cluster-replicas", cfg.ClusterShards, replicas, len(nodes))
		}
		seed := cluster.RandomSeed()
		if cfg.RaftAddr != "" {
			seed = FormatCluster(nodes) + "/" + strconv.Itoa(cfg.ClusterShards)
		}
		return cluster.NewTopology(seed, me, nodes, cfg.ClusterShards, replicas), nil
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
func openShard(dir string, o store.Options, sc shard.Config, apply shard.Applier, prepare func(*store.Store)) (*shard.Shard, error) {
	st, err := store.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	prepare(st)
	sh, err := shard.New(st, apply, sc)
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

// closeShards stops the groups, closes their stores, then the host and
// the engine of their logs (either may be nil).
func closeShards(shards []*shard.Shard, host *shard.Host, raftLog *raftlog.Engine) error {
	// Together: each leader hands its shard over (shard.Close), which may
	// wait for a follower, and a node's last shards find none.
	var wg sync.WaitGroup
	for _, sh := range shards {
		wg.Go(sh.Close)
	}
	wg.Wait()
	var first error
	for _, sh := range shards {
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
	if raftLog != nil {
		if err := raftLog.Close(); err != nil && first == nil {
			first = err
		}
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
		for _, sh := range s.shards {
			i := shardNumber(sh)
			if pref := s.topo.Shards[i].Replicas[0]; pref != s.topo.NodeID && sh.IsLeader() {
				// Only to a member raft saw lately (transferLeadership).
				sh.TransferLeadershipTo(transport.ReplicaID(uint32(i), pref), time.Second)
			}
		}
	}
}

// watchLeaderships unsubscribes the clients of shard channels whose slot
// this node stopped leading (Hub.dropShardChannels): at once after a
// shard's leadership left, and once a second for a subscription that came
// just as it left.
func (s *Server) watchLeaderships() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	led := make([]bool, len(s.shards))
	for tick := 0; ; tick++ {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		lost := false
		for i, sh := range s.shards {
			leads := sh.IsLeader()
			lost = lost || led[i] && !leads
			led[i] = leads
		}
		if (lost || tick%10 == 0) && s.hub.numShardChannels() > 0 {
			s.hub.dropShardChannels(func(channel []byte) bool { return s.leadsSlot(int(cluster.KeySlot(channel))) })
		}
	}
}

// defaultReplicas is how many nodes hold each shard unless
// cluster-replicas says otherwise (fewer if the cluster has fewer nodes).
const defaultReplicas = 3

// shardNumber is a shard's index in the topology: its Raft group (0
// outside cluster mode).
func shardNumber(sh *shard.Shard) int { return int(transport.GroupOf(sh.ID())) }

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

// publishTopology writes the node's topology into the metadata group, by
// whichever node leads the group first, unless the group has one: from
// then on the cluster's topology is one committed value, the same on
// every node, which the changes to come (nodes joining, slots moving) will
// replace in one write each, with a higher epoch.
//
// A node of a new cluster computes its topology from its flags, which
// could differ from another's (--cluster-shards left to default on
// machines of different cores): until the group has committed one and it
// is this node's, the node serves no key (route), or two nodes could take
// writes for one slot in two shards. A node whose topology is not the
// cluster's says so and answers CLUSTERDOWN; restarted, it takes the
// cluster's (openShards).
func (s *Server) publishTopology() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if committed := s.committedTopology(); committed != nil {
			if bytes.Equal(committed.Shared(), s.topo.Shared()) {
				s.topoAgreed.Store(true)
			} else {
				s.topoDiffers.Store(true)
				slog.Error("this node's topology differs from the cluster's: it serves no key until restarted, and then takes the cluster's (are cluster-shards and cluster-replicas the same on every node?)",
					"shards", len(s.topo.Shards), "cluster_shards", len(committed.Shards))
			}
			return
		}
		if s.meta.IsLeader() {
			p := shard.NewProposal(shard.Record{Kind: shard.KindTopology, Cmds: [][][]byte{{s.topo.Shared()}}}, 2)
			if s.meta.Propose(p) == nil {
				select { // without a majority it may wait long: Close need not
				case <-p.Done:
				case <-s.closed:
					return
				}
			}
		}
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
	}
}

// committedTopology is the topology the metadata group's log committed and
// this node's replica applied, nil if none yet (or unreadable, which is
// logged).
func (s *Server) committedTopology() *cluster.Topology {
	return committedTopology(s.meta, s.topo.NodeID)
}

// committedTopology is the topology meta's store holds, as node me sees
// it.
func committedTopology(meta *shard.Shard, me uint64) *cluster.Topology {
	tx := meta.Store().ReadTx(0, nowMs(), false)
	defer tx.Close()
	b, ok := tx.Topology()
	if !ok {
		return nil
	}
	t, err := cluster.ParseShared(b, me)
	if err != nil {
		slog.Error("the metadata group's topology", "err", err)
		return nil
	}
	return t
}
