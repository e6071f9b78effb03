// Package server accepts Redis clients, runs their commands and keeps the
// server-wide state: configuration, clients, active expiry, shutdown.
package server

import (
	"basalt/internal/acl"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/cluster"
	"basalt/internal/command"
	"basalt/internal/raftlog"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Server is one basalt process.
type Server struct {
	mu  sync.Mutex
	cfg Config
	// users are the ACL users and aclLog the ACL LOG (acl_cmd.go).
	users  *acl.Users
	aclLog acl.Log
	// aclMu orders the changes of users and their records; aclGen is 1 +
	// the store's ACLGen the users were last loaded at (0: load again).
	aclMu  sync.Mutex
	aclGen atomic.Uint64
	// replWaits counts the clients waiting in WAIT or WAITAOF (raft.go),
	// which INFO's blocked_clients counts, as Redis does.
	replWaits atomic.Int64
	lns       listeners                 // listen.go
	tls       atomic.Pointer[serverTLS] // tls-port and tls-cluster's certificates (tls.go), nil without TLS
	// shards are the Raft groups this node holds a replica of (shards.go):
	// one without cluster mode; with it, each serves the slots topo gives
	// it. shardAt is the node's replica of each of topo's shards (nil: held
	// by other nodes only), slotShard the one of each slot, and slotIndex
	// each slot's shard in topo.
	shards    []*shard.Shard
	topo      *cluster.Topology
	shardAt   []*shard.Shard
	slotShard []*shard.Shard
	slotIndex []int
	host      *shard.Host     // the shards' shared transport, in a cluster of several nodes
	raftLog   *raftlog.Engine // the groups' logs, in cluster mode
	// meta is the node's replica of the metadata group in cluster mode
	// (openMeta), nil outside it. topoAgreed is set once the group has
	// committed topo, topoDiffers once it committed another (publishTopology).
	meta                    *shard.Shard
	topoAgreed, topoDiffers atomic.Bool
	runID                   string
	start                   time.Time
	closed                  chan struct{}
	once                    sync.Once
	// closeOnce runs Close's work once; closeErr is its outcome.
	closeOnce sync.Once
	closeErr  error

	clients map[int64]*Client
	hub     *Hub     // pub/sub subscriptions (pubsub.go)
	relay   *relay   // PUBLISH to the nodes without the shard (pubsub_cluster.go)
	origins *origins // PUBLISHes sent through the leader (pubsub_cluster.go)
	tracker *tracker // CLIENT TRACKING (tracking.go)
	pause   pause    // CLIENT PAUSE (pause.go)

	slowlog         slowlog        // SLOWLOG (slowlog.go)
	latency         latencyMonitor // LATENCY (latency.go)
	latencyTracking atomic.Bool    // latency-tracking: per-command histograms
	errors          errorStats     // total_error_replies, INFO errorstats
	monitors        monitors       // MONITOR (monitor.go)
	failingOver     atomic.Bool    // a FAILOVER's transfer is under way (failover.go)
	idleTimeout     atomic.Int64   // timeout, seconds (listen.go)
	keepAlive       atomic.Int64   // tcp-keepalive, seconds
	saving          saveState      // SAVE and BGSAVE (save.go)
	nextID          atomic.Int64
	wg              sync.WaitGroup
	Stats           Stats
	shutdown        chan struct{} // closed by SHUTDOWN or a signal

	refusedLog  store.LogLimit // the lines of refused clients (listen.go)
	clientEvict clientEviction // maxmemory-clients (clientevict.go)
}

// Stats are server-wide counters for INFO.
type Stats struct {
	Connections    atomic.Int64
	Rejected       atomic.Int64
	Commands       atomic.Int64
	ExpiredKeys    atomic.Int64
	NetInput       atomic.Int64
	NetOutput      atomic.Int64
	NetReplOutput  atomic.Int64 // snapshots sent to SYNC (sync.go)
	SyncFull       atomic.Int64 // SYNCs and PSYNCs answered with a snapshot
	SyncPartialErr atomic.Int64 // PSYNCs that asked to continue and got a snapshot
}

// New opens the data directory and prepares a server; Serve starts it.
func New(cfg Config) (*Server, error) {
	boundCaches(&cfg)
	for _, r := range cfg.RenameCommands {
		if err := command.Rename(r[0], r[1]); err != nil {
			return nil, err
		}
	}
	if err := checkRaftTrust(cfg); err != nil {
		return nil, err
	}
	tlsState, err := newServerTLS(cfg)
	if err != nil {
		return nil, err
	}
	raftServerTLS, raftClientTLS := raftTLS(cfg, tlsState)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	users, err := newUsers(cfg)
	if err != nil {
		return nil, err
	}
	fds, err := planDescriptors(cfg)
	if err != nil {
		return nil, err
	}
	cfg.MaxClients = fds.maxClients
	applyClock(cfg)
	hub := newHub(cfg.OutputLimits[pubsubClass])
	sc := shardConfig(cfg)
	sc.ServerTLS, sc.ClientTLS = raftServerTLS, raftClientTLS
	command.SetScriptTimeLimit(cfg.LuaTimeLimit)
	command.SetScriptMaxMemory(cfg.LuaMaxMemory)
	command.SetClusterDatabases(cfg.Databases)
	applyStreamNodeMax(nil, cfg)
	origins := newOrigins(sc.ID)
	sc.Published = origins.published
	// The shards tell the server what their scripts call (command.Host);
	// none is live before clients connect, so s is filled in below.
	s := &Server{}
	relay := &relay{hub: hub}
	groups, err := openShards(cfg, sc, command.Applier(s), relay.deliver, fds.storeFiles, func(st *store.Store) {
		st.SetNotify(cfg.NotifyKeyspaceEvents, relay.events(st))
	})
	if err != nil {
		return nil, err
	}
	shards, topo := groups.shards, groups.topo
	relay.start(groups.host, topo, shards)
	removeSaveLeftovers(cfg.Dir) // the stores' locks say no other basalt uses dir
	*s = Server{
		cfg:      cfg,
		users:    users,
		shards:   shards,
		topo:     topo,
		meta:     groups.meta,
		host:     groups.host,
		raftLog:  groups.raftLog,
		runID:    newRunID(),
		start:    time.Now(),
		closed:   make(chan struct{}),
		clients:  map[int64]*Client{},
		hub:      hub,
		relay:    relay,
		origins:  origins,
		shutdown: make(chan struct{}),
	}
	s.refusedLog.Period = refusedLogEvery
	s.topoAgreed.Store(groups.agreed)
	s.tls.Store(tlsState)
	if topo != nil {
		s.shardAt = make([]*shard.Shard, len(topo.Shards))
		for _, sh := range shards {
			s.shardAt[shardNumber(sh)] = sh
		}
		s.slotIndex = topo.ShardBySlot()
		s.slotShard = make([]*shard.Shard, cluster.SlotCount)
		for slot, i := range s.slotIndex {
			s.slotShard[slot] = s.shardAt[i]
		}
	}
	s.tracker = newTracker(s)
	s.applyOpsConfig(cfg)
	s.applyNetConfig(cfg)
	s.applyClientEviction(cfg)
	// The users of the log, if an ACL command changed them.
	s.syncUsers()
	s.saving.lastSave, s.saving.bgOK, s.saving.bgSeconds = s.start, true, -1 // as Redis at startup
	return s, nil
}

// clientByID finds a connected client.
func (s *Server) clientByID(id int64) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

// shardConfig is the shard's part of the configuration.
func shardConfig(cfg Config) shard.Config {
	sc := shard.Config{
		ID:             max(cfg.NodeID, 1),
		RaftAddr:       cfg.RaftAddr,
		Join:           cfg.Join,
		Advertise:      advertised(cfg).String(),
		RaftDir:        filepath.Join(cfg.Dir, "raft"),
		Fsync:          cfg.AppendFsync,
		LogRetain:      uint64(cfg.LogRetain),
		LogRetainBytes: uint64(cfg.LogRetainBytes),
		Peers:          map[uint64]string{},
		Secret:         []byte(cfg.ClusterSecret),
		ClusterID:      clusterID(cfg),
	}
	for id, addr := range cfg.InitialCluster {
		if id != sc.ID {
			sc.Peers[id] = addr
		}
	}
	return sc
}

// errProtected is Redis 7.0's answer to a client protected mode refuses.
const errProtected = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// protectedRefuses is Redis's protected mode: with protected-mode yes and
// no password, only local clients (127.0.0.1, ::1, the unix socket) are
// served.
func (s *Server) protectedRefuses(nc net.Conn) bool {
	cfg := s.config()
	if !cfg.ProtectedMode || !s.users.Default().User().NoPass() {
		return false // the default user needs a password: Redis 7.0's test
	}
	return !isLocalAddr(nc.RemoteAddr())
}

// ShutdownRequested is closed when a client asks the server to stop.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown }

func (s *Server) requestShutdown() {
	s.once.Do(func() { close(s.shutdown) })
}

// Close stops accepting, disconnects clients, applies the queued writes and
// closes the store. Everything acknowledged is already durable. A second
// call waits for the first to finish, so that a process stops only once
// its stores are closed, whichever of its paths calls Close first.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	close(s.closed)
	s.requestShutdown()
	s.closeListeners()
	s.mu.Lock()
	for _, c := range s.clients {
		c.nc.Close()
	}
	s.mu.Unlock()
	if command.LiveScript() {
		// A script in the apply loop would hold up its client and the
		// shard for as long as it runs (forever, for a runaway one):
		// stop it, written or not, after halting the shard so that its
		// record is dropped, never logged. Its writes were never
		// acknowledged: this is a crash before its reply.
		for _, sh := range s.shards {
			sh.Halt()
		}
		for command.StopScripts() {
			time.Sleep(time.Millisecond)
		}
	}
	s.wg.Wait()
	groups := s.shards
	if s.meta != nil {
		groups = append(groups[:len(groups):len(groups)], s.meta)
	}
	return closeShards(groups, s.host, s.raftLog)
}

// expireLoop is active expiry: ten times a second it reads the expiry index
// (never the key space) and proposes the deletion of what is due, as a
// record, so that expiry goes through the same ordered path as any write.
func (s *Server) expireLoop() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		// The same tick loads users another node changed (acl_cmd.go),
		// so that a deleted user's idle connections go soon.
		s.syncUsers()
		if s.pause.active() {
			continue // not while clients are paused
		}
		for _, sh := range s.shards {
			if sh.IsLeader() { // the leader expires keys for the whole group
				s.expireDue(sh)
			}
		}
	}
}

// expireDue proposes the deletion of sh's keys that are due, in batches.
func (s *Server) expireDue(sh *shard.Shard) {
	const batch = 512
	st := sh.Store()
	now := time.Now().UnixMilli()
	for db := 0; db < st.Databases(); db++ {
		for {
			tx := st.ReadTx(db, now, false)
			due := st.Due(tx.Phys(db), now, batch)
			tx.Close()
			if len(due) == 0 {
				break
			}
			p := shard.NewProposal(shard.Record{Kind: shard.KindExpireDue, DB: db, Cmds: [][][]byte{due}}, 2)
			if sh.Propose(p) != nil {
				break
			}
			<-p.Done
			if n, err := strconv.ParseInt(strings.Trim(string(p.W.Bytes()), ":\r\n"), 10, 64); err == nil {
				s.Stats.ExpiredKeys.Add(n) // the keys deleted; the other entries were moved
			}
			if len(due) < batch {
				break
			}
		}
	}
}

// metaCacheOption maps the setting (0: off) to store.Options (negative: off).
func metaCacheOption(size int64) int64 {
	if size == 0 {
		return -1
	}
	return size
}

func newRunID() string {
	b := make([]byte, 20)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		f.Read(b)
		f.Close()
	}
	return fmt.Sprintf("%x", b)
}
