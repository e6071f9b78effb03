// Package server accepts Redis clients, runs their commands and keeps the
// server-wide state: configuration, clients, active expiry, shutdown.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/command"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Server is one basalt process.
type Server struct {
	mu     sync.Mutex
	cfg    Config
	ln     net.Listener
	st     *store.Store
	shard  *shard.Shard
	runID  string
	start  time.Time
	closed chan struct{}
	once   sync.Once

	clients map[int64]*Client
	hub     *Hub     // pub/sub subscriptions (pubsub.go)
	origins *origins // PUBLISHes sent through the leader (pubsub_cluster.go)
	tracker *tracker // CLIENT TRACKING (tracking.go)
	pause   pause    // CLIENT PAUSE (pause.go)

	slowlog         slowlog        // SLOWLOG (slowlog.go)
	latency         latencyMonitor // LATENCY (latency.go)
	latencyTracking atomic.Bool    // latency-tracking: per-command histograms
	errors          errorStats     // total_error_replies, INFO errorstats
	monitors        monitors       // MONITOR (monitor.go)
	failingOver     atomic.Bool    // a FAILOVER's transfer is under way (failover.go)
	saving          saveState      // SAVE and BGSAVE (save.go)
	nextID          atomic.Int64
	wg              sync.WaitGroup
	Stats           Stats
	shutdown        chan struct{} // closed by SHUTDOWN or a signal
}

// Stats are server-wide counters for INFO.
type Stats struct {
	Connections    atomic.Int64
	Rejected       atomic.Int64
	Commands       atomic.Int64
	ExpiredKeys    atomic.Int64
	KeyspaceHits   atomic.Int64
	KeyspaceMisses atomic.Int64
	NetInput       atomic.Int64
	NetOutput      atomic.Int64
	NetReplOutput  atomic.Int64 // snapshots sent to SYNC (sync.go)
	SyncFull       atomic.Int64 // SYNCs and PSYNCs answered with a snapshot
	SyncPartialErr atomic.Int64 // PSYNCs that asked to continue and got a snapshot
}

// New opens the data directory and prepares a server; Serve starts it.
func New(cfg Config) (*Server, error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(cfg.Dir, "data"), store.Options{Databases: cfg.Databases, CacheSize: cfg.CacheSize, MetaCacheSize: metaCacheOption(cfg.MetaCacheSize)})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	removeSaveLeftovers(cfg.Dir) // the store's lock says no other basalt uses dir
	hub := newHub(cfg.OutputLimits[pubsubClass])
	st.SetNotify(cfg.NotifyKeyspaceEvents, hub.keyspaceEvents)
	sc := shardConfig(cfg)
	command.SetScriptTimeLimit(cfg.LuaTimeLimit)
	origins := newOrigins(sc.ID)
	sc.Published = origins.published
	sh, err := shard.New(st, command.Apply, sc)
	if err != nil {
		st.Close()
		return nil, err
	}
	if cfg.RaftAddr == "" && !sh.WaitLeader(5*time.Second) {
		sh.Close()
		st.Close()
		return nil, errors.New("the shard did not elect itself leader")
	}
	s := &Server{
		cfg:      cfg,
		st:       st,
		shard:    sh,
		runID:    newRunID(),
		start:    time.Now(),
		closed:   make(chan struct{}),
		clients:  map[int64]*Client{},
		hub:      hub,
		origins:  origins,
		shutdown: make(chan struct{}),
	}
	s.tracker = newTracker(s)
	s.applyOpsConfig(cfg)
	// One server a process: scripts' calls are told to this one.
	command.ScriptCallHook = s.scriptCalled
	command.PublishReceivers = s.hub.receivers
	command.ScriptRefusedHook = s.scriptRefused
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
		Advertise:      net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.Port)),
		RaftDir:        filepath.Join(cfg.Dir, "raft"),
		Fsync:          cfg.AppendFsync,
		LogRetain:      uint64(cfg.LogRetain),
		LogRetainBytes: uint64(cfg.LogRetainBytes),
		Peers:          map[uint64]string{},
	}
	for id, addr := range cfg.InitialCluster {
		if id != sc.ID {
			sc.Peers[id] = addr
		}
	}
	return sc
}

// Listen binds the configured address.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Bind, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts clients until Close.
func (s *Server) Serve() error {
	go s.expireLoop()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.mu.Lock()
		full := len(s.clients) >= s.cfg.MaxClients
		s.mu.Unlock()
		if full {
			s.Stats.Rejected.Add(1)
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			nc.Close()
			continue
		}
		c := newClient(s, nc)
		s.mu.Lock()
		s.clients[c.id] = c
		s.mu.Unlock()
		s.Stats.Connections.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.clients, c.id)
			s.mu.Unlock()
		}()
	}
}

// ShutdownRequested is closed when a client asks the server to stop.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown }

func (s *Server) requestShutdown() {
	s.once.Do(func() { close(s.shutdown) })
}

// Close stops accepting, disconnects clients, applies the queued writes and
// closes the store. Everything acknowledged is already durable.
func (s *Server) Close() error {
	select {
	case <-s.closed:
		return nil
	default:
	}
	close(s.closed)
	s.requestShutdown()
	if s.ln != nil {
		s.ln.Close()
	}
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
		s.shard.Halt()
		for command.StopScripts() {
			time.Sleep(time.Millisecond)
		}
	}
	s.wg.Wait()
	s.shard.Close()
	if err := s.st.SyncWAL(); err != nil {
		slog.Error("final sync", "err", err)
	}
	return s.st.Close()
}

// expireLoop is active expiry: ten times a second it reads the expiry index
// (never the key space) and proposes the deletion of what is due, as a
// record, so that expiry goes through the same ordered path as any write.
func (s *Server) expireLoop() {
	const batch = 512
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		if !s.shard.IsLeader() || s.pause.active() {
			continue // the leader expires keys for the whole group; not while clients are paused
		}
		now := time.Now().UnixMilli()
		for db := 0; db < s.st.Databases(); db++ {
			for {
				tx := s.st.ReadTx(db, now, false)
				due := s.st.Due(tx.Phys(db), now, batch)
				tx.Close()
				if len(due) == 0 {
					break
				}
				p := shard.NewProposal(shard.Record{Kind: shard.KindExpireDue, DB: db, Cmds: [][][]byte{due}}, 2)
				if s.shard.Propose(p) != nil {
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
