package server

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"basalt/internal/command"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// The configuration table: every parameter of Redis 7.0.15's config.c
// and basalt's own, declared once,
// as config.c declares them. Adding a setting is one entry here (and a
// Config field when basalt uses it).
//
// An entry with ptr sets a Config field; one without is accepted, checked
// and kept in Config.Other for CONFIG GET and REWRITE, and unused says
// why basalt does not apply it (logged when a file or flag sets it).
// apply runs after CONFIG SET changed the parameter; try runs before the
// change is kept, and its error refuses it (what is in use stays).

type paramKind int

const (
	boolParam    paramKind = iota // yes/no
	intParam                      // an integer within [min, max]
	memParam                      // an integer or a memory value (1gb)
	octalParam                    // an octal integer (unixsocketperm)
	enumParam                     // one of enum (several, space separated, if multi)
	stringParam                   // any string
	specialParam                  // set and get do the work
)

type paramFlag int

const (
	immutable paramFlag = 1 << iota // set only at start (CONFIG SET refuses)
	protected                       // CONFIG SET refuses it unless enable-protected-configs allows (protect.go)
	multiArg                        // takes several arguments on a config line
	percentOK                       // memParam that also takes "N%" (maxmemory-clients)
	secret                          // never shown by CONFIG GET nor written by CONFIG REWRITE
)

type param struct {
	name, alias string
	kind        paramKind
	min, max    int64
	enum        []string
	def         string // basalt's default, as CONFIG GET shows it
	flags       paramFlag
	ptr         func(*Config) any // *bool, *int, *int64 or *string
	set         func(*Config, string) error
	get         func(*Config) string
	apply       func(*Server, Config)
	try         func(*Server, Config) error
	unused      string
}

const intMax, int64Max, uintMax = math.MaxInt32, math.MaxInt64, math.MaxUint32

// Why basalt accepts a parameter without applying it, by reason.
const (
	notForked   = "basalt never forks and keeps no RDB or AOF of its own: its data lives in Pebble, written through its Raft log"
	notAOF      = "the Raft log is basalt's append-only file, always on; appendfsync sets its fsync policy"
	notEncoding = "basalt stores collections as Pebble entries, never as listpacks or intsets; the value is kept for CONFIG GET"
	notRepl     = "basalt replicates with Raft (raft-addr, initial-cluster), not with Redis's replication"
	notEvicted  = "basalt's data is on disk and never evicted; see maxmemory in docs/configuration.md"
	notProcess  = "a Go runtime setting redis-server has and basalt does not need"
	notSyslog   = "basalt logs to logfile or standard output, not to syslog"
	notLazy     = "basalt already deletes big keys in O(1) for the caller (range deletions)"
	notDefrag   = "basalt's memory is Go's heap and Pebble's cache; there is no allocator to defragment"
	notTLSCache = "Go's TLS resumes sessions with tickets, which need no server-side cache; tls-session-caching no turns them off"
	notTLSOrder = "Go's TLS chooses the cipher suite itself, by what the hardware accelerates"
	notTLSDH    = "Go's TLS exchanges keys with elliptic curves only: no DH parameters are needed"
	notModules  = "basalt has no module API"
	notDaemon   = "basalt runs in the foreground: let the service manager daemonize and supervise it"
	notSaved    = "basalt writes RDB files only on SAVE and BGSAVE: every write is already durable in its log"
	notMinRepl  = "a write is acknowledged once a majority of the Raft group has it, whatever this says"
	notBus      = "basalt's nodes talk over their Raft port (raft-addr), not a cluster bus"
	notAnnounce = "a node announces the address --bind and --port give it"
	notFailover = "every shard is a Raft group: it fails over by election, and answers CLUSTERDOWN only while it has no leader"
)

var params = []param{
	// Network and clients.
	{name: "bind", kind: specialParam, def: "127.0.0.1", flags: immutable | multiArg, set: setBind, get: func(c *Config) string { return c.Bind }},
	{name: "port", kind: intParam, max: 65535, def: "6379", ptr: func(c *Config) any { return &c.Port }, try: tryPorts},
	{name: "unixsocket", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.UnixSocket }},
	{name: "unixsocketperm", kind: octalParam, max: 0o777, def: "0", flags: immutable, ptr: func(c *Config) any { return &c.UnixSocketPerm }},
	{name: "timeout", kind: intParam, max: intMax, def: "0", ptr: func(c *Config) any { return &c.Timeout }, apply: func(s *Server, c Config) { s.applyNetConfig(c) }},
	{name: "tcp-keepalive", kind: intParam, max: intMax, def: "300", ptr: func(c *Config) any { return &c.TCPKeepAlive }, apply: func(s *Server, c Config) { s.applyNetConfig(c) }},
	{name: "tcp-backlog", kind: intParam, max: intMax, def: "511", flags: immutable, unused: "Go listens with the system's backlog (somaxconn)"},
	{name: "maxclients", kind: intParam, min: 1, max: uintMax, def: "10000", ptr: func(c *Config) any { return &c.MaxClients }, try: tryMaxClients},
	{name: "protected-mode", kind: boolParam, def: "yes", ptr: func(c *Config) any { return &c.ProtectedMode }},
	{name: "requirepass", kind: stringParam, ptr: func(c *Config) any { return &c.RequirePass },
		apply: func(s *Server, c Config) { setDefaultPassword(s.users, c.RequirePass) }},
	{name: "proto-max-bulk-len", kind: memParam, min: 1 << 20, max: int64Max, def: "536870912", ptr: func(c *Config) any { return &c.ProtoMaxBulkLen }},
	{name: "client-query-buffer-limit", kind: memParam, min: 1 << 20, max: int64Max, def: "1073741824", unused: "a command's arguments are bounded by proto-max-bulk-len"},
	{name: "client-output-buffer-limit", kind: specialParam, def: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", flags: multiArg, set: (*Config).setOutputLimits, get: getOutputLimits,
		apply: func(s *Server, c Config) { s.hub.SetLimit(c.OutputLimits[pubsubClass]) }},
	{name: "socket-mark-id", kind: intParam, max: uintMax, def: "0", flags: immutable, unused: "basalt does not mark its sockets"},
	{name: "bind-source-addr", kind: stringParam, unused: notRepl},

	// Files, logs and the process.
	{name: "dir", kind: stringParam, def: "./basalt-data", flags: immutable | protected, ptr: func(c *Config) any { return &c.Dir }},
	{name: "dbfilename", kind: specialParam, def: "dump.rdb", flags: protected, set: setDBFilename, get: func(c *Config) string { return c.DBFilename }},
	{name: "logfile", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.LogFile }},
	{name: "loglevel", kind: enumParam, enum: []string{"debug", "verbose", "notice", "warning"}, def: "notice",
		ptr: func(c *Config) any { return &c.LogLevel }, apply: func(_ *Server, c Config) { setLogLevel(c.LogLevel) }},
	{name: "log-format", kind: enumParam, enum: []string{"text", "json"}, def: "text", flags: immutable, ptr: func(c *Config) any { return &c.LogFormat }},
	{name: "pidfile", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.PidFile }},
	{name: "daemonize", kind: boolParam, def: "no", flags: immutable, unused: notDaemon},
	{name: "supervised", kind: enumParam, enum: []string{"upstart", "systemd", "auto", "no"}, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.Supervised }},
	{name: "syslog-enabled", kind: boolParam, def: "no", flags: immutable, unused: notSyslog},
	{name: "syslog-ident", kind: stringParam, def: "redis", flags: immutable, unused: notSyslog},
	{name: "syslog-facility", kind: enumParam, enum: []string{"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}, def: "local0", flags: immutable, unused: notSyslog},
	{name: "always-show-logo", kind: boolParam, def: "no", flags: immutable, unused: "basalt shows no logo"},
	{name: "set-proc-title", kind: boolParam, def: "yes", flags: immutable, unused: "basalt keeps its process title"},
	{name: "proc-title-template", kind: stringParam, def: "{title} {listen-addr} {server-mode}", unused: "basalt keeps its process title"},
	{name: "crash-log-enabled", kind: boolParam, def: "yes", unused: "a Go panic prints its own stack"},
	{name: "crash-memcheck-enabled", kind: boolParam, def: "yes", unused: "a Go panic prints its own stack"},
	{name: "disable-thp", kind: boolParam, def: "yes", flags: immutable, unused: notProcess},
	{name: "oom-score-adj", kind: enumParam, enum: []string{"no", "yes", "relative", "absolute"}, def: "no", unused: notProcess},
	{name: "oom-score-adj-values", kind: specialParam, def: "0 200 800", flags: multiArg, set: setOOMValues, unused: notProcess},
	{name: "io-threads", kind: intParam, min: 1, max: 128, def: "1", flags: immutable, unused: "basalt serves each client on a goroutine of its own; gomaxprocs sets the cores"},
	{name: "io-threads-do-reads", kind: boolParam, def: "no", flags: immutable, unused: "basalt serves each client on a goroutine of its own"},
	{name: "server_cpulist", kind: stringParam, flags: immutable, unused: notProcess},
	{name: "bio_cpulist", kind: stringParam, flags: immutable, unused: notProcess},
	{name: "aof_rewrite_cpulist", kind: stringParam, flags: immutable, unused: notForked},
	{name: "bgsave_cpulist", kind: stringParam, flags: immutable, unused: notForked},
	{name: "jemalloc-bg-thread", kind: boolParam, def: "yes", unused: notDefrag},
	{name: "ignore-warnings", kind: stringParam, unused: "basalt checks no kernel bugs at start"},
	{name: "hz", kind: intParam, max: intMax, def: "10", unused: "basalt's background work (active expiry) runs ten times a second"},
	{name: "dynamic-hz", kind: boolParam, def: "yes", unused: "basalt's background work (active expiry) runs ten times a second"},
	{name: "active-expire-effort", kind: intParam, min: 1, max: 10, def: "1", unused: "basalt's active expiry reads an expiry index, never samples"},
	{name: "activerehashing", kind: boolParam, def: "yes", unused: "basalt's key space is Pebble, not a hash table"},
	{name: "shutdown-timeout", kind: intParam, max: intMax, def: "10", unused: notRepl},
	{name: "shutdown-on-sigint", kind: enumParam, enum: []string{"default", "save", "nosave", "now", "force"}, def: "default", flags: multiArg, unused: "a signal stops basalt once its acknowledged writes are on disk"},
	{name: "shutdown-on-sigterm", kind: enumParam, enum: []string{"default", "save", "nosave", "now", "force"}, def: "default", flags: multiArg, unused: "a signal stops basalt once its acknowledged writes are on disk"},
	{name: "gomaxprocs", kind: intParam, max: 1024, def: "0", ptr: func(c *Config) any { return &c.GoMaxProcs }, apply: func(_ *Server, c Config) { setGoMaxProcs(c.GoMaxProcs) }},
	{name: "metrics-addr", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.MetricsAddr }},

	// Dangerous surfaces, as in Redis 7.0 (protect.go): DEBUG, MODULE
	// LOAD/UNLOAD and CONFIG SET of the protected parameters (dir,
	// dbfilename) are refused unless these allow them.
	{name: "enable-debug-command", kind: enumParam, enum: protectedAction, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.EnableDebugCommand }},
	{name: "enable-module-command", kind: enumParam, enum: protectedAction, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.EnableModuleCommand }},
	{name: "enable-protected-configs", kind: enumParam, enum: protectedAction, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.EnableProtectedConfigs }},

	// Memory.
	{name: "maxmemory", kind: memParam, max: int64Max, def: "0", ptr: func(c *Config) any { return &c.MaxMemory }, apply: func(s *Server, c Config) { setMemoryLimit(c); s.applyClientEviction(c) }},
	{name: "maxmemory-policy", kind: enumParam, enum: []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}, def: "noeviction", ptr: func(c *Config) any { return &c.MaxMemoryPolicy }},
	{name: "maxmemory-samples", kind: intParam, min: 1, max: intMax, def: "5", unused: notEvicted},
	{name: "maxmemory-eviction-tenacity", kind: intParam, max: 100, def: "10", unused: notEvicted},
	{name: "lfu-log-factor", kind: intParam, max: intMax, def: "10", unused: notEvicted},
	{name: "lfu-decay-time", kind: intParam, max: intMax, def: "1", unused: notEvicted},
	{name: "replica-ignore-maxmemory", alias: "slave-ignore-maxmemory", kind: boolParam, def: "yes", unused: notEvicted},
	{name: "lazyfree-lazy-eviction", kind: boolParam, def: "no", unused: notLazy},
	{name: "lazyfree-lazy-expire", kind: boolParam, def: "no", unused: notLazy},
	{name: "lazyfree-lazy-server-del", kind: boolParam, def: "no", unused: notLazy},
	{name: "lazyfree-lazy-user-del", kind: boolParam, def: "no", unused: notLazy},
	{name: "lazyfree-lazy-user-flush", kind: boolParam, def: "no", unused: notLazy},
	{name: "replica-lazy-flush", alias: "slave-lazy-flush", kind: boolParam, def: "no", unused: notLazy},
	{name: "activedefrag", kind: boolParam, def: "no", unused: notDefrag},
	{name: "active-defrag-ignore-bytes", kind: memParam, min: 1, max: int64Max, def: "104857600", unused: notDefrag},
	{name: "active-defrag-threshold-lower", kind: intParam, max: 1000, def: "10", unused: notDefrag},
	{name: "active-defrag-threshold-upper", kind: intParam, max: 1000, def: "100", unused: notDefrag},
	{name: "active-defrag-cycle-min", kind: intParam, min: 1, max: 99, def: "1", unused: notDefrag},
	{name: "active-defrag-cycle-max", kind: intParam, min: 1, max: 99, def: "25", unused: notDefrag},
	{name: "active-defrag-max-scan-fields", kind: intParam, min: 1, max: int64Max, def: "1000", unused: notDefrag},
	{name: "cache-size", kind: memParam, min: 1 << 20, max: int64Max, def: strconv.FormatInt(store.DefaultCacheSize, 10), flags: immutable, ptr: func(c *Config) any { return &c.CacheSize }},
	{name: "meta-cache-size", kind: memParam, max: int64Max, def: strconv.FormatInt(store.DefaultMetaCacheSize, 10), flags: immutable, ptr: func(c *Config) any { return &c.MetaCacheSize }},

	// Client eviction (clientevict.go): bytes, or a percentage of maxmemory.
	{name: "maxmemory-clients", kind: memParam, min: -100, max: int64Max, def: "0", flags: percentOK, ptr: func(c *Config) any { return &c.MaxMemoryClients }, apply: func(s *Server, c Config) { s.applyClientEviction(c) }},

	// Encodings: accepted and shown, never used (notEncoding), but for
	// streams, whose node bookkeeping decides what '~' trims.
	{name: "hash-max-listpack-entries", alias: "hash-max-ziplist-entries", kind: intParam, max: int64Max, def: "512", unused: notEncoding},
	{name: "hash-max-listpack-value", alias: "hash-max-ziplist-value", kind: memParam, max: int64Max, def: "64", unused: notEncoding},
	{name: "list-max-listpack-size", alias: "list-max-ziplist-size", kind: intParam, min: math.MinInt32, max: intMax, def: "-2", unused: notEncoding},
	{name: "list-compress-depth", kind: intParam, max: intMax, def: "0", unused: notEncoding},
	{name: "set-max-intset-entries", kind: intParam, max: int64Max, def: "512", unused: notEncoding},
	{name: "zset-max-listpack-entries", alias: "zset-max-ziplist-entries", kind: intParam, max: int64Max, def: "128", unused: notEncoding},
	{name: "zset-max-listpack-value", alias: "zset-max-ziplist-value", kind: memParam, max: int64Max, def: "64", unused: notEncoding},
	{name: "hll-sparse-max-bytes", kind: memParam, max: int64Max, def: "3000", unused: notEncoding},
	{name: "stream-node-max-bytes", kind: memParam, max: int64Max, def: "4096", ptr: func(c *Config) any { return &c.StreamNodeMaxBytes }, apply: applyStreamNodeMax},
	{name: "stream-node-max-entries", kind: intParam, max: int64Max, def: "100", ptr: func(c *Config) any { return &c.StreamNodeMaxEntries }, apply: applyStreamNodeMax},

	// Persistence.
	{name: "appendfsync", kind: specialParam, def: "always", set: setAppendFsync, get: func(c *Config) string { return c.AppendFsync.String() },
		apply: func(s *Server, c Config) {
			for _, sh := range s.shards {
				sh.SetFsync(c.AppendFsync)
			}
		}},
	{name: "appendonly", kind: boolParam, def: "yes", get: func(*Config) string { return "yes" }, unused: notAOF},
	{name: "appendfilename", kind: stringParam, def: "appendonly.aof", flags: immutable, unused: notAOF},
	{name: "appenddirname", kind: stringParam, def: "appendonlydir", flags: immutable, unused: notAOF},
	{name: "no-appendfsync-on-rewrite", kind: boolParam, def: "no", unused: notAOF},
	{name: "auto-aof-rewrite-percentage", kind: intParam, max: intMax, def: "100", unused: notAOF},
	{name: "auto-aof-rewrite-min-size", kind: memParam, max: int64Max, def: "67108864", unused: notAOF},
	{name: "aof-load-truncated", kind: boolParam, def: "yes", unused: notAOF},
	{name: "aof-use-rdb-preamble", kind: boolParam, def: "yes", unused: notAOF},
	{name: "aof-timestamp-enabled", kind: boolParam, def: "no", unused: notAOF},
	{name: "aof-rewrite-incremental-fsync", kind: boolParam, def: "yes", unused: notAOF},
	{name: "aof-disable-auto-gc", kind: boolParam, def: "no", unused: notAOF},
	{name: "save", kind: specialParam, flags: multiArg, set: setSave, unused: notSaved},
	{name: "stop-writes-on-bgsave-error", kind: boolParam, def: "yes", unused: notSaved},
	{name: "rdbcompression", kind: boolParam, def: "yes", unused: "basalt's RDB files are written uncompressed"},
	{name: "rdbchecksum", kind: boolParam, def: "yes", flags: immutable, unused: "basalt's RDB files always carry a checksum"},
	{name: "rdb-del-sync-files", kind: boolParam, def: "no", unused: notRepl},
	{name: "rdb-save-incremental-fsync", kind: boolParam, def: "yes", unused: notForked},
	{name: "sanitize-dump-payload", kind: enumParam, enum: []string{"no", "yes", "clients"}, def: "no", unused: "RESTORE always checks its payload in full"},
	{name: "log-retain", kind: intParam, max: int64Max, def: "100000", flags: immutable, ptr: func(c *Config) any { return &c.LogRetain }},
	{name: "log-retain-bytes", kind: memParam, max: int64Max, def: "268435456", flags: immutable, ptr: func(c *Config) any { return &c.LogRetainBytes }},

	// Replication: Raft's settings are basalt's; Redis's are accepted.
	{name: "node-id", kind: specialParam, flags: immutable, set: setNodeID, get: func(c *Config) string { return strconv.FormatUint(c.NodeID, 10) }},
	{name: "raft-addr", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.RaftAddr }},
	{name: "initial-cluster", kind: specialParam, flags: immutable, set: setInitialCluster, get: func(c *Config) string { return FormatCluster(c.InitialCluster) }},
	{name: "join", kind: boolParam, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.Join }},
	// Cluster mode (shards.go, docs/cluster.md): Redis Cluster's directives,
	// and basalt's shards. Nodes find each other by --initial-cluster and
	// keep their topology in topology.json; they have no cluster bus.
	{name: "cluster-enabled", kind: boolParam, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.ClusterEnabled }},
	{name: "cluster-shards", kind: intParam, min: 1, max: 1024, def: strconv.Itoa(runtime.NumCPU()), flags: immutable, ptr: func(c *Config) any { return &c.ClusterShards }},
	{name: "cluster-replicas", kind: intParam, max: 1024, def: "0", flags: immutable, ptr: func(c *Config) any { return &c.ClusterReplicas }},
	{name: "cluster-proxy", kind: boolParam, def: "no", ptr: func(c *Config) any { return &c.ClusterProxy }},
	{name: "cluster-config-file", kind: stringParam, def: "nodes.conf", flags: immutable, unused: notBus},
	{name: "cluster-port", kind: intParam, max: 65535, def: "0", flags: immutable, unused: notBus},
	{name: "cluster-node-timeout", kind: intParam, max: int64Max, def: "15000", unused: "a shard elects a new leader after Raft's election timeout (about a second)"},
	{name: "cluster-announce-ip", kind: stringParam, unused: notAnnounce},
	{name: "cluster-announce-hostname", kind: stringParam, unused: notAnnounce},
	{name: "cluster-announce-port", kind: intParam, max: 65535, def: "0", unused: notAnnounce},
	{name: "cluster-announce-tls-port", kind: intParam, max: 65535, def: "0", unused: notAnnounce},
	{name: "cluster-announce-bus-port", kind: intParam, max: 65535, def: "0", unused: notBus},
	{name: "cluster-preferred-endpoint-type", kind: enumParam, enum: []string{"ip", "hostname", "unknown-endpoint"}, def: "ip", unused: notAnnounce},
	{name: "cluster-require-full-coverage", kind: boolParam, def: "yes", unused: notFailover},
	{name: "cluster-allow-reads-when-down", kind: boolParam, def: "no", unused: notFailover},
	{name: "cluster-allow-pubsubshard-when-down", kind: boolParam, def: "yes", unused: notFailover},
	{name: "cluster-replica-no-failover", alias: "cluster-slave-no-failover", kind: boolParam, def: "no", unused: notFailover},
	{name: "cluster-replica-validity-factor", alias: "cluster-slave-validity-factor", kind: intParam, max: intMax, def: "10", unused: notFailover},
	{name: "cluster-migration-barrier", kind: intParam, max: intMax, def: "1", unused: notFailover},
	{name: "cluster-allow-replica-migration", kind: boolParam, def: "yes", unused: notFailover},
	{name: "cluster-link-sendbuf-limit", kind: memParam, max: int64Max, def: "0", unused: notBus},
	{name: "cluster-max-clock-offset", kind: intParam, max: 86400000, def: "500", ptr: func(c *Config) any { return &c.MaxClockOffset }, apply: func(_ *Server, c Config) { applyClock(c) }},
	{name: "debug-clock-offset-ms", kind: specialParam, def: "0", set: setDebugClockOffset, get: func(c *Config) string { return strconv.FormatInt(c.DebugClockOffset, 10) }, apply: func(_ *Server, c Config) { applyClock(c) }},
	{name: "cluster-secret", kind: specialParam, flags: immutable | secret, set: setClusterSecret, get: func(c *Config) string { return c.ClusterSecret }},
	{name: "cluster-secret-file", kind: specialParam, flags: immutable | secret, set: setClusterSecretFile, get: func(c *Config) string { return c.SecretFile }},
	{name: "min-replicas-to-write", alias: "min-slaves-to-write", kind: intParam, max: intMax, def: "0", unused: notMinRepl},
	{name: "min-replicas-max-lag", alias: "min-slaves-max-lag", kind: intParam, max: intMax, def: "10", unused: notMinRepl},
	{name: "replicaof", alias: "slaveof", kind: specialParam, flags: immutable | multiArg, set: setReplicaOf, unused: notRepl},
	{name: "masterauth", kind: stringParam, unused: notRepl},
	{name: "masteruser", kind: stringParam, unused: notRepl},
	{name: "replica-serve-stale-data", alias: "slave-serve-stale-data", kind: boolParam, def: "yes", unused: notRepl},
	{name: "replica-read-only", alias: "slave-read-only", kind: boolParam, def: "yes", unused: notRepl},
	{name: "replica-priority", alias: "slave-priority", kind: intParam, max: intMax, def: "100", unused: notRepl},
	{name: "replica-announced", kind: boolParam, def: "yes", unused: notRepl},
	{name: "replica-announce-ip", alias: "slave-announce-ip", kind: stringParam, unused: notRepl},
	{name: "replica-announce-port", alias: "slave-announce-port", kind: intParam, max: 65535, def: "0", unused: notRepl},
	{name: "replica-ignore-disk-write-errors", kind: boolParam, def: "no", unused: notRepl},
	{name: "repl-diskless-sync", kind: boolParam, def: "yes", unused: notRepl},
	{name: "repl-diskless-sync-delay", kind: intParam, max: intMax, def: "5", unused: notRepl},
	{name: "repl-diskless-sync-max-replicas", kind: intParam, max: intMax, def: "0", unused: notRepl},
	{name: "repl-diskless-load", kind: enumParam, enum: []string{"disabled", "on-empty-db", "swapdb"}, def: "disabled", unused: notRepl},
	{name: "repl-disable-tcp-nodelay", kind: boolParam, def: "no", unused: notRepl},
	{name: "repl-ping-replica-period", alias: "repl-ping-slave-period", kind: intParam, min: 1, max: intMax, def: "10", unused: notRepl},
	{name: "repl-timeout", kind: intParam, min: 1, max: intMax, def: "60", unused: notRepl},
	{name: "repl-backlog-size", kind: memParam, min: 1, max: int64Max, def: "1048576", unused: notRepl},
	{name: "repl-backlog-ttl", kind: intParam, max: int64Max, def: "3600", unused: notRepl},
	{name: "propagation-error-behavior", kind: enumParam, enum: []string{"ignore", "panic", "panic-on-replicas"}, def: "ignore", unused: notRepl},

	// Commands, scripts, events and diagnostics.
	{name: "databases", kind: intParam, min: 1, max: 65535, def: "16", flags: immutable, ptr: func(c *Config) any { return &c.Databases }},
	{name: "busy-reply-threshold", alias: "lua-time-limit", kind: intParam, max: int64Max, def: "5000", ptr: func(c *Config) any { return &c.LuaTimeLimit },
		apply: func(_ *Server, c Config) { command.SetScriptTimeLimit(c.LuaTimeLimit) }},
	{name: "script-maxmemory", kind: memParam, min: 1 << 20, max: int64Max, def: strconv.FormatInt(command.DefaultScriptMaxMemory, 10), ptr: func(c *Config) any { return &c.LuaMaxMemory },
		apply: func(_ *Server, c Config) { command.SetScriptMaxMemory(c.LuaMaxMemory) }},
	{name: "notify-keyspace-events", kind: specialParam, set: setNotify, get: func(c *Config) string { return c.NotifyKeyspaceEvents.String() },
		apply: func(s *Server, c Config) {
			for _, sh := range s.shards {
				sh.Store().SetNotify(c.NotifyKeyspaceEvents, s.relay.events(sh.Store()))
			}
		}},
	{name: "slowlog-log-slower-than", kind: intParam, min: -1, max: int64Max, def: "10000", ptr: func(c *Config) any { return &c.SlowlogSlowerThan }, apply: (*Server).applyOpsConfig},
	{name: "slowlog-max-len", kind: intParam, max: int64Max, def: "128", ptr: func(c *Config) any { return &c.SlowlogMaxLen }, apply: (*Server).applyOpsConfig},
	{name: "latency-monitor-threshold", kind: intParam, max: int64Max, def: "0", ptr: func(c *Config) any { return &c.LatencyMonitorThreshold }, apply: (*Server).applyOpsConfig},
	{name: "latency-tracking", kind: boolParam, def: "yes", ptr: func(c *Config) any { return &c.LatencyTracking }, apply: (*Server).applyOpsConfig},
	{name: "latency-tracking-info-percentiles", kind: specialParam, def: "50 99 99.9", flags: multiArg, set: setPercentiles, get: getPercentiles},
	{name: "tracking-table-max-keys", kind: intParam, max: int64Max, def: "1000000", unused: "basalt's tracking table holds what its clients read"},
	{name: "acllog-max-len", kind: intParam, max: intMax, def: "128", ptr: func(c *Config) any { return &c.ACLLogMaxLen },
		apply: func(s *Server, c Config) { s.aclLog.Trim(c.ACLLogMaxLen) }},
	{name: "aclfile", kind: stringParam, flags: immutable, ptr: func(c *Config) any { return &c.ACLFile }},
	{name: "acl-pubsub-default", kind: enumParam, enum: []string{"allchannels", "resetchannels"}, def: "resetchannels", ptr: func(c *Config) any { return &c.ACLPubsubDefault },
		apply: func(s *Server, c Config) { s.users.SetAllChannelsDefault(c.ACLPubsubDefault == "allchannels") }},

	// TLS (tls.go): tls-port serves clients, tls-cluster the Raft traffic.
	// CONFIG SET of the files and settings reloads them (tryTLS), or
	// refuses and keeps those in use.
	{name: "tls-port", kind: intParam, max: 65535, def: "0", ptr: func(c *Config) any { return &c.TLSPort }, try: tryPorts},
	{name: "tls-session-cache-size", kind: intParam, max: intMax, def: "20480", unused: notTLSCache},
	{name: "tls-session-cache-timeout", kind: intParam, max: intMax, def: "300", unused: notTLSCache},
	{name: "tls-cluster", kind: boolParam, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.TLSCluster }},
	{name: "tls-replication", kind: boolParam, def: "no", flags: immutable, ptr: func(c *Config) any { return &c.TLSCluster }}, // both mean the Raft traffic
	{name: "tls-auth-clients", kind: enumParam, enum: []string{"no", "yes", "optional"}, def: "yes", ptr: func(c *Config) any { return &c.TLSAuthClients }, try: tryTLS},
	{name: "tls-prefer-server-ciphers", kind: boolParam, def: "no", unused: notTLSOrder},
	{name: "tls-session-caching", kind: boolParam, def: "yes", ptr: func(c *Config) any { return &c.TLSSessionCaching }, try: tryTLS},
	{name: "tls-cert-file", kind: stringParam, ptr: func(c *Config) any { return &c.TLSCertFile }, try: tryTLS},
	{name: "tls-key-file", kind: stringParam, ptr: func(c *Config) any { return &c.TLSKeyFile }, try: tryTLS},
	{name: "tls-key-file-pass", kind: stringParam, ptr: func(c *Config) any { return &c.TLSKeyFilePass }, try: tryTLS},
	{name: "tls-client-cert-file", kind: stringParam, ptr: func(c *Config) any { return &c.TLSClientCertFile }, try: tryTLS},
	{name: "tls-client-key-file", kind: stringParam, ptr: func(c *Config) any { return &c.TLSClientKeyFile }, try: tryTLS},
	{name: "tls-client-key-file-pass", kind: stringParam, ptr: func(c *Config) any { return &c.TLSClientKeyFilePass }, try: tryTLS},
	{name: "tls-dh-params-file", kind: stringParam, unused: notTLSDH},
	{name: "tls-ca-cert-file", kind: stringParam, ptr: func(c *Config) any { return &c.TLSCAFile }, try: tryTLS},
	{name: "tls-ca-cert-dir", kind: stringParam, ptr: func(c *Config) any { return &c.TLSCADir }, try: tryTLS},
	{name: "tls-protocols", kind: stringParam, ptr: func(c *Config) any { return &c.TLSProtocols }, try: tryTLS},
	{name: "tls-ciphers", kind: stringParam, ptr: func(c *Config) any { return &c.TLSCiphers }, try: tryTLS},
	{name: "tls-ciphersuites", kind: stringParam, ptr: func(c *Config) any { return &c.TLSCipherSuite }, try: tryTLS},
}

// paramsByName finds a parameter by its name or alias, lower-cased.
var paramsByName = func() map[string]*param {
	m := map[string]*param{}
	for i := range params {
		p := &params[i]
		m[p.name] = p
		if p.alias != "" {
			m[p.alias] = p
		}
	}
	return m
}()

func lookupParam(name string) *param { return paramsByName[strings.ToLower(name)] }

// configNames lists every name CONFIG GET * answers: names and aliases.
func configNames() []string {
	names := make([]string, 0, len(paramsByName))
	for _, p := range params {
		names = append(names, p.name)
		if p.alias != "" {
			names = append(names, p.alias)
		}
	}
	return names
}

// parse checks a value as config.c does and returns it as CONFIG GET
// shows it.
func (p *param) parse(v string) (string, error) {
	switch p.kind {
	case boolParam:
		switch strings.ToLower(v) {
		case "yes":
			return "yes", nil
		case "no":
			return "no", nil
		}
		return "", fmt.Errorf("argument must be 'yes' or 'no'")
	case enumParam:
		words := []string{v}
		if p.flags&multiArg != 0 {
			words = strings.Fields(v)
		}
		if len(words) == 0 {
			words = []string{""} // refused below
		}
		for i, w := range words {
			words[i] = strings.ToLower(w)
			if !slices.Contains(p.enum, words[i]) {
				return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(p.enum, ", "))
			}
		}
		return strings.Join(words, " "), nil
	case stringParam:
		return v, nil
	}
	n, percent, err := p.parseNumber(v)
	if err != nil {
		return "", err
	}
	if percent {
		return strconv.FormatInt(-n, 10) + "%", nil
	}
	if n < p.min || n > p.max {
		if p.kind == octalParam {
			return "", fmt.Errorf("argument must be between %o and %o inclusive", p.min, p.max)
		}
		return "", fmt.Errorf("argument must be between %d and %d inclusive", p.min, p.max)
	}
	if p.kind == octalParam {
		return strconv.FormatInt(n, 8), nil
	}
	return strconv.FormatInt(n, 10), nil
}

// parseNumber reads an integer setting, with config.c's errors; percent
// says a memParam with percentOK was given as "N%" (n is then -N).
func (p *param) parseNumber(v string) (n int64, percent bool, err error) {
	switch p.kind {
	case memParam:
		if n, err := parseMemory(v); err == nil {
			return n, false, nil
		}
		if p.flags&percentOK != 0 {
			if n, err := strconv.ParseInt(strings.TrimSuffix(v, "%"), 10, 64); err == nil && n >= 0 && strings.HasSuffix(v, "%") && len(v) > 1 {
				if n > -p.min {
					return 0, false, fmt.Errorf("percentage argument must be less or equal to %d", -p.min)
				}
				return -n, true, nil
			}
			return 0, false, fmt.Errorf("argument must be a memory or percent value")
		}
		return 0, false, fmt.Errorf("argument must be a memory value")
	case octalParam:
		n, err := strconv.ParseInt(v, 8, 64)
		if err != nil {
			return 0, false, fmt.Errorf("argument couldn't be parsed as an octal number")
		}
		return n, false, nil
	}
	n, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("argument couldn't be parsed into an integer")
	}
	return n, false, nil
}

// Set applies one setting by its redis.conf name or alias: the command
// line, the config file and CONFIG SET all come here.
func (c *Config) Set(name, value string) error {
	p := lookupParam(name)
	if p == nil {
		return fmt.Errorf("unknown option '%s'", name)
	}
	if p.unused != "" {
		c.notApplied(p.name)
	}
	if p.set != nil {
		return p.set(c, value)
	}
	v, err := p.parse(value)
	if err != nil {
		return err
	}
	if p.ptr == nil {
		c.setOther(p.name, v)
		return nil
	}
	switch dst := p.ptr(c).(type) {
	case *bool:
		*dst = v == "yes"
	case *int:
		*dst, _ = strconv.Atoi(v)
	case *int64:
		base := 10
		if p.kind == octalParam {
			base = 8
		}
		*dst, _ = strconv.ParseInt(v, base, 64)
	case *string:
		*dst = v
	}
	return nil
}

// Get returns a setting's value as CONFIG GET shows it; ok is false for an
// unknown name.
func (c *Config) Get(name string) (string, bool) {
	p := lookupParam(name)
	if p == nil {
		return "", false
	}
	return c.get(p), true
}

func (c *Config) get(p *param) string {
	if p.get != nil {
		return p.get(c)
	}
	if p.ptr == nil {
		if v, ok := c.Other[p.name]; ok {
			return v
		}
		return p.def
	}
	switch v := p.ptr(c).(type) {
	case *bool:
		return yesNo(*v)
	case *int:
		return strconv.Itoa(*v)
	case *int64:
		if p.kind == octalParam {
			return strconv.FormatInt(*v, 8)
		}
		return strconv.FormatInt(*v, 10)
	case *string:
		return *v
	}
	return ""
}

// setOther keeps a parameter basalt does not apply. The map is copied:
// Config values are copied by CONFIG SET and share it otherwise.
func (c *Config) setOther(name, v string) {
	c.Other = maps.Clone(c.Other)
	if c.Other == nil {
		c.Other = map[string]string{}
	}
	c.Other[name] = v
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ---- the special parameters' parsers ----

// debugCommand reads enable-debug-command; set in init, since the table's
// setters may not refer to the table.
var debugCommand func(*Config) string

func init() {
	debugCommand = func(c *Config) string { v, _ := c.Get("enable-debug-command"); return v }
}

// setDebugClockOffset shifts this node's clock, for clock-skew tests only:
// a node must be started with enable-debug-command yes or local to take it.
func setDebugClockOffset(c *Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < -86400000 || n > 86400000 {
		return fmt.Errorf("argument must be between -86400000 and 86400000 inclusive")
	}
	if n != 0 && debugCommand(c) == "no" {
		return fmt.Errorf("a clock offset is for tests: start the node with enable-debug-command yes or local")
	}
	c.DebugClockOffset = n
	return nil
}

// setBind takes up to 16 addresses, as Redis; "-" before one makes it
// optional (skipped when it cannot be bound).
func setBind(c *Config, v string) error {
	addrs := strings.Fields(v)
	if len(addrs) > 16 {
		return fmt.Errorf("Too many bind addresses specified.")
	}
	if len(addrs) == 0 {
		return fmt.Errorf("wrong number of arguments")
	}
	c.Bind = strings.Join(addrs, " ")
	return nil
}

func setDBFilename(c *Config, v string) error {
	if strings.ContainsRune(v, '/') { // Redis's pathIsBaseName
		return fmt.Errorf("dbfilename can't be a path, just a filename")
	}
	c.DBFilename = v
	return nil
}

// applyStreamNodeMax hands the stream node limits to the apply loop, which
// logs them with the records that add to or trim a stream.
func applyStreamNodeMax(_ *Server, c Config) {
	command.SetStreamNodeMax(c.StreamNodeMaxEntries, c.StreamNodeMaxBytes)
}

func setAppendFsync(c *Config, v string) error {
	f, ok := shard.ParseFsync(strings.ToLower(v))
	if !ok {
		return fmt.Errorf("argument(s) must be one of the following: everysec, always, no")
	}
	c.AppendFsync = f
	return nil
}

func setNodeID(c *Config, v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return fmt.Errorf("argument must be a positive integer")
	}
	c.NodeID = n
	return nil
}

func setInitialCluster(c *Config, v string) error {
	m, err := ParseCluster(v)
	if err != nil {
		return err
	}
	c.InitialCluster = m
	return nil
}

func setNotify(c *Config, v string) error {
	f, err := store.ParseNotifyFlags(v)
	if err != nil {
		return err
	}
	c.NotifyKeyspaceEvents = f
	return nil
}

func setPercentiles(c *Config, v string) error {
	p, err := parsePercentiles(v)
	if err != nil {
		return err
	}
	c.LatencyPercentiles = p
	return nil
}

func getPercentiles(c *Config) string {
	parts := make([]string, len(c.LatencyPercentiles))
	for i, p := range c.LatencyPercentiles {
		parts[i] = formatPercentile(p)
	}
	return strings.Join(parts, " ")
}

// setSave checks "<seconds> <changes>"... as Redis does; "" clears it.
func setSave(c *Config, v string) error {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return fmt.Errorf("Invalid save parameters")
	}
	for _, n := range f {
		if x, err := strconv.ParseInt(n, 10, 64); err != nil || x < 0 {
			return fmt.Errorf("Invalid save parameters")
		}
	}
	c.setOther("save", strings.Join(f, " "))
	return nil
}

func setOOMValues(c *Config, v string) error {
	f := strings.Fields(v)
	if len(f) != 3 {
		return fmt.Errorf("wrong number of arguments")
	}
	for _, n := range f {
		if x, err := strconv.Atoi(n); err != nil || x < -2000 || x > 2000 {
			return fmt.Errorf("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
	}
	c.setOther("oom-score-adj-values", strings.Join(f, " "))
	return nil
}

// setReplicaOf accepts "<host> <port>" or "no one" and keeps it: basalt's
// followers are Raft members (notRepl).
func setReplicaOf(c *Config, v string) error {
	f := strings.Fields(v)
	if len(f) != 2 {
		return fmt.Errorf("wrong number of arguments")
	}
	if strings.EqualFold(f[0], "no") && strings.EqualFold(f[1], "one") {
		c.setOther("replicaof", "")
		return nil
	}
	if n, err := strconv.Atoi(f[1]); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("Invalid master port")
	}
	c.setOther("replicaof", f[0]+" "+f[1])
	return nil
}

func getOutputLimits(c *Config) string {
	var parts []string
	for i, l := range c.OutputLimits {
		parts = append(parts, fmt.Sprintf("%s %d %d %d", bufferClasses[i], l.Hard, l.Soft, l.Seconds))
	}
	return strings.Join(parts, " ")
}
