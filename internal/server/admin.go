package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
	"basalt/internal/shard"
)

// Server and connection administration: INFO, CONFIG, CLIENT, DEBUG, and
// the CLIENT REPLY muting of the connection loop.

// BasaltVersion is reported by INFO next to the Redis version it follows.
const BasaltVersion = "0.1.0"

func init() {
	connHandlers["info"] = cmdInfo
	connHandlers["config"] = cmdConfig
	connHandlers["client"] = cmdClient
	connHandlers["debug"] = cmdDebug
	connHandlers["slowlog"] = cmdSlowlog
	connHandlers["latency"] = cmdLatency
	connHandlers["monitor"] = cmdMonitor
}

// dispatchMuted runs a command whose reply CLIENT REPLY OFF or SKIP drops,
// unless it is pub/sub confirmations, which Redis sends as it sends the
// messages (Client.pushing).
// Pending writes are waited for on both sides so that exactly this
// command's output is cut; CLIENT REPLY ON clears the flags and keeps its OK.
func (c *Client) dispatchMuted(argv [][]byte) {
	c.waitPending()
	mark := c.out.Len()
	c.skipping, c.skipNext, c.pushing = c.skipNext, false, false
	c.dispatch(argv)
	c.waitPending()
	c.replyFailed() // counted before it is dropped, as Redis counts it
	if (c.replyOff || c.skipping) && !c.pushing {
		c.out.Buf = c.out.Buf[:mark]
	}
	c.skipping, c.pushing = false, false
}

// Client state packed for other goroutines: db in bits 0-15, proto in
// 16-19, MULTI in bit 20, queued commands from bit 32.
func (c *Client) publishState() {
	v := uint64(c.db&0xffff) | uint64(c.proto&0xf)<<16 | uint64(len(c.queued)+c.upQueued)<<32
	if c.multi || c.upMulti {
		v |= 1 << 20
	}
	if c.state.Load() != v {
		c.state.Store(v)
	}
}

func (c *Client) loadState() (db, proto int, multi bool, queued int) {
	v := c.state.Load()
	db, proto, multi, queued = int(v&0xffff), int(v>>16&0xf), v&(1<<20) != 0, int(v>>32)
	if proto == 0 { // nothing published yet
		proto = 2
	}
	return
}

// ---- INFO ----

var (
	infoDefault = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"}
	infoAll     = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}
)

// opsSample keeps the previous command count for instantaneous_ops_per_sec,
// which is measured between two INFO calls.
var opsSample struct {
	sync.Mutex
	at       time.Time
	commands int64
	rate     int64
	peakMem  uint64
}

func cmdInfo(c *Client, argv [][]byte) {
	c.tally.Flush() // this connection's calls so far, for commandstats
	// Sections come in Redis's order whatever the order asked.
	want := map[string]bool{}
	if len(argv) == 1 {
		for _, s := range infoDefault {
			want[s] = true
		}
	}
	for _, a := range argv[1:] {
		var names []string
		switch s := strings.ToLower(string(a)); s {
		case "default":
			names = infoDefault
		case "all", "everything":
			names = infoAll
		default:
			names = []string{s}
		}
		for _, s := range names {
			want[s] = true
		}
	}
	var b strings.Builder
	for _, name := range infoAll {
		if !want[name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(c.srv.infoSection(name, c))
	}
	c.reply().Verbatim("txt", b.String())
}

// infoSection renders one section, "" for an unknown name.
func (s *Server) infoSection(name string, c *Client) string {
	var lines []string
	add := func(k string, v any) { lines = append(lines, fmt.Sprintf("%s:%v", k, v)) }
	cfg := s.config()
	now := time.Now()
	title := name
	switch name {
	case "server":
		title = "Server"
		exe, _ := os.Executable()
		up := int64(now.Sub(s.start).Seconds())
		add("redis_version", RedisVersion)
		add("basalt_version", BasaltVersion)
		add("redis_git_sha1", "00000000")
		add("redis_git_dirty", 0)
		add("redis_build_id", "0")
		add("redis_mode", s.mode())
		add("os", osName())
		add("arch_bits", strconv.IntSize)
		add("monotonic_clock", "POSIX clock_gettime")
		add("multiplexing_api", "epoll")
		add("atomicvar_api", "c11-builtin")
		add("gcc_version", "0.0.0") // no C compiler: go_version names the toolchain
		add("go_version", runtime.Version())
		add("process_id", os.Getpid())
		add("process_supervised", "no")
		add("run_id", s.runID)
		add("tcp_port", cfg.Port)
		add("server_time_usec", now.UnixMicro())
		add("uptime_in_seconds", up)
		add("uptime_in_days", up/86400)
		add("hz", 10)
		add("configured_hz", 10) // basalt's background work runs at 10 Hz whatever hz says
		add("lru_clock", now.Unix()&(1<<24-1))
		add("executable", exe)
		add("config_file", cfg.File)
		add("io_threads_active", 0)
	case "clients":
		title = "Clients"
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		add("connected_clients", n)
		add("cluster_connections", 0)
		add("maxclients", cfg.MaxClients)
		add("client_recent_max_input_buffer", 0)
		add("client_recent_max_output_buffer", 0)
		add("blocked_clients", s.sumShards(func(sh *shard.Shard) int64 { return int64(sh.BlockedCount()) }))
		add("tracking_clients", s.tracker.stats().clients)
		add("clients_in_timeout_table", 0)
	case "memory":
		title = "Memory"
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		rss := rssBytes()
		opsSample.Lock()
		opsSample.peakMem = max(opsSample.peakMem, m.HeapAlloc)
		peak := opsSample.peakMem
		opsSample.Unlock()
		add("used_memory", m.HeapAlloc)
		add("used_memory_human", humanBytes(m.HeapAlloc))
		add("used_memory_rss", rss)
		add("used_memory_rss_human", humanBytes(rss))
		add("used_memory_peak", peak)
		add("used_memory_peak_human", humanBytes(peak))
		add("used_memory_peak_perc", fmt.Sprintf("%.2f%%", 100*float64(m.HeapAlloc)/float64(max(peak, 1))))
		add("used_memory_overhead", m.Sys-m.HeapAlloc)
		add("used_memory_startup", 0)
		add("used_memory_dataset", m.HeapAlloc)
		add("used_memory_dataset_perc", "100.00%")
		// The allocator is Go's: allocated is the live heap, active its
		// spans in use, resident what the heap took from the OS.
		add("allocator_allocated", m.HeapAlloc)
		add("allocator_active", m.HeapInuse)
		add("allocator_resident", m.HeapSys-m.HeapReleased)
		add("total_system_memory", totalMemory())
		add("total_system_memory_human", humanBytes(totalMemory()))
		// Lua states are Go memory, counted in used_memory.
		tx := s.group().Store().ReadTx(0, now.UnixMilli(), false) // every shard has the libraries
		libs, funcs := command.FunctionCounts(tx)
		tx.Close()
		add("used_memory_lua", 0)
		add("used_memory_vm_eval", 0)
		add("used_memory_lua_human", "0B")
		add("used_memory_scripts_eval", 0)
		add("number_of_cached_scripts", command.CachedScripts())
		add("number_of_functions", funcs)
		add("number_of_libraries", libs)
		add("used_memory_vm_functions", 0)
		add("used_memory_vm_total", 0)
		add("used_memory_vm_total_human", "0B")
		add("used_memory_functions", 0)
		add("used_memory_scripts", 0)
		add("used_memory_scripts_human", "0B")
		add("maxmemory", cfg.MaxMemory)
		add("maxmemory_human", humanBytes(uint64(cfg.MaxMemory)))
		add("maxmemory_policy", cfg.MaxMemoryPolicy)
		add("allocator_frag_ratio", fmt.Sprintf("%.2f", float64(m.HeapInuse)/float64(max(m.HeapAlloc, 1))))
		add("allocator_frag_bytes", int64(m.HeapInuse)-int64(m.HeapAlloc))
		add("allocator_rss_ratio", fmt.Sprintf("%.2f", float64(m.HeapSys-m.HeapReleased)/float64(max(m.HeapInuse, 1))))
		add("allocator_rss_bytes", int64(m.HeapSys-m.HeapReleased)-int64(m.HeapInuse))
		add("rss_overhead_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(m.HeapSys-m.HeapReleased, 1))))
		add("rss_overhead_bytes", int64(rss)-int64(m.HeapSys-m.HeapReleased))
		add("mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(m.HeapAlloc, 1))))
		add("mem_fragmentation_bytes", int64(rss)-int64(m.HeapAlloc))
		for _, k := range []string{"mem_not_counted_for_evict", "mem_replication_backlog", "mem_total_replication_buffers",
			"mem_clients_slaves", "mem_clients_normal", "mem_cluster_links", "mem_aof_buffer"} {
			add(k, 0) // none of these buffers exists in basalt
		}
		add("mem_allocator", "go")
		add("active_defrag_running", 0)
		add("lazyfree_pending_objects", 0)
		add("lazyfreed_objects", 0)
		add("used_disk_bytes", s.sumShards(func(sh *shard.Shard) int64 { // basalt: data on disk
			return int64(sh.Store().Pebble().Metrics().DiskSpaceUsage())
		}))
		add("basalt_meta_cache_bytes", s.sumShards(func(sh *shard.Shard) int64 { entries, _ := sh.Store().CacheSize(); return int64(entries) }))
		add("basalt_member_memo_bytes", s.sumShards(func(sh *shard.Shard) int64 { _, memos := sh.Store().CacheSize(); return int64(memos) }))
	case "persistence":
		title = "Persistence"
		// Every write goes through the log before it is acknowledged: that is
		// Redis's AOF, always on; the fsync policy is the live one.
		add("loading", 0)
		add("async_loading", 0)
		for _, k := range []string{"current_cow_peak", "current_cow_size", "current_cow_size_age"} {
			add(k, 0) // basalt never forks
		}
		add("current_fork_perc", "0.00")
		add("current_save_keys_processed", 0)
		add("current_save_keys_total", 0)
		// SAVE and BGSAVE (save.go); changes are records applied since the
		// last successful save's instant.
		sv := &s.saving
		sv.mu.Lock()
		bg, current, bgStatus := 0, int64(-1), "ok"
		if sv.running && sv.background {
			bg, current = 1, int64(now.Sub(sv.started).Seconds())
		}
		if !sv.bgOK {
			bgStatus = "err"
		}
		add("rdb_changes_since_last_save", s.recordsApplied()-sv.changesAt)
		add("rdb_bgsave_in_progress", bg)
		add("rdb_last_save_time", sv.lastSave.Unix())
		add("rdb_last_bgsave_status", bgStatus)
		add("rdb_last_bgsave_time_sec", sv.bgSeconds)
		add("rdb_current_bgsave_time_sec", current)
		add("rdb_saves", sv.saves)
		add("rdb_last_cow_size", 0) // basalt never forks
		add("rdb_last_load_keys_expired", 0)
		add("rdb_last_load_keys_loaded", 0) // no RDB is ever loaded at start
		sv.mu.Unlock()
		add("aof_enabled", 1)
		add("aof_rewrite_in_progress", 0)
		add("aof_rewrite_scheduled", 0)
		add("aof_last_rewrite_time_sec", -1)
		add("aof_current_rewrite_time_sec", -1)
		add("aof_last_bgrewrite_status", "ok")
		add("aof_rewrites", 0)
		add("aof_rewrites_consecutive_failures", 0)
		status := "ok"
		if s.sumShards(func(sh *shard.Shard) int64 { return b2i(sh.Stats.LastErr.Load() != nil || sh.DiskFull()) }) > 0 {
			status = "err" // a shard refuses writes since
		}
		add("aof_last_write_status", status)
		add("aof_last_cow_size", 0)
		add("module_fork_in_progress", 0)
		add("module_fork_last_cow_size", 0)
		add("appendfsync", s.group().FsyncPolicy().String())
		add("basalt_applied_index", s.sumShards(func(sh *shard.Shard) int64 { return int64(sh.Applied()) }))
		// Group commit at work: records applied, the groups (log entries)
		// they came in, and the log's syncs.
		add("basalt_records_applied", s.recordsApplied())
		add("basalt_groups_committed", s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.Groups.Load() }))
		add("basalt_log_syncs", s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.Syncs.Load() }))
		// Ranges compacted because reads stepped over many deletions in them.
		add("basalt_read_compactions", s.sumShards(func(sh *shard.Shard) int64 { return int64(sh.Store().Compactions()) }))
	case "stats":
		title = "Stats"
		cmds := s.Stats.Commands.Load()
		opsSample.Lock()
		if el := now.Sub(opsSample.at); !opsSample.at.IsZero() && el >= 100*time.Millisecond {
			opsSample.rate = int64(float64(cmds-opsSample.commands) / el.Seconds())
		}
		if opsSample.at.IsZero() || now.Sub(opsSample.at) >= 100*time.Millisecond {
			opsSample.at, opsSample.commands = now, cmds
		}
		rate := opsSample.rate
		opsSample.Unlock()
		add("total_connections_received", s.Stats.Connections.Load())
		add("total_commands_processed", cmds)
		add("instantaneous_ops_per_sec", rate)
		add("total_net_input_bytes", s.Stats.NetInput.Load())
		add("total_net_output_bytes", s.Stats.NetOutput.Load())
		add("total_net_repl_input_bytes", 0)
		add("total_net_repl_output_bytes", s.Stats.NetReplOutput.Load())
		add("instantaneous_input_kbps", "0.00")
		add("instantaneous_output_kbps", "0.00")
		add("instantaneous_input_repl_kbps", "0.00")
		add("instantaneous_output_repl_kbps", "0.00")
		add("rejected_connections", s.Stats.Rejected.Load())
		add("sync_full", s.Stats.SyncFull.Load())
		add("sync_partial_ok", 0) // no backlog: never
		add("sync_partial_err", s.Stats.SyncPartialErr.Load())
		add("expired_keys", s.Stats.ExpiredKeys.Load())
		add("expired_stale_perc", "0.00")
		add("expired_time_cap_reached_count", 0)
		add("expire_cycle_cpu_milliseconds", 0)
		add("evicted_keys", 0)
		add("evicted_clients", 0)
		add("total_eviction_exceeded_time", 0) // nothing is evicted
		add("current_eviction_exceeded_time", 0)
		add("keyspace_hits", s.sumShards(func(sh *shard.Shard) int64 { return sh.Store().Hits.Load() })) // lookups of reads outside MULTI and scripts
		add("keyspace_misses", s.sumShards(func(sh *shard.Shard) int64 { return sh.Store().Misses.Load() }))
		add("pubsub_channels", s.hub.numChannels())
		add("pubsub_patterns", s.hub.numPatterns())
		add("pubsubshard_channels", s.hub.numShardChannels())
		add("latest_fork_usec", 0)
		add("total_forks", 0)
		add("migrate_cached_sockets", 0)
		for _, k := range []string{"slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
			"active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time"} {
			add(k, 0) // followers expire nothing themselves; nothing is defragmented
		}
		ts := s.tracker.stats()
		add("tracking_total_keys", ts.keys)
		add("tracking_total_items", ts.items)
		add("tracking_total_prefixes", ts.prefixes)
		add("unexpected_error_replies", 0)
		add("total_error_replies", s.errors.total.Load())
		add("dump_payload_sanitizations", 0)
		for _, k := range []string{"total_reads_processed", "total_writes_processed", "io_threaded_reads_processed", "io_threaded_writes_processed"} {
			add(k, 0) // socket events are not counted (total_net_*_bytes are)
		}
		add("reply_buffer_shrinks", 0)
		add("reply_buffer_expands", 0)
	case "replication":
		title = "Replication"
		st := s.group().Status()
		role := "master"
		if st.Role != "leader" {
			role = "slave"
		}
		add("role", role)
		add("raft_node_id", st.ID)
		add("raft_role", st.Role)
		add("raft_leader_id", st.Leader)
		add("raft_term", st.Term)
		add("raft_commit_index", st.Commit)
		add("raft_applied_index", st.Applied)
		add("raft_voters", joinIDs(st.Voters))
		add("raft_apply_lag", st.Commit-min(st.Applied, st.Commit)) // entries committed, not applied yet
		add("raft_leader_changes", s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.LeaderChanges.Load() }))
		add("raft_snapshots_sent", s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.SnapshotsSent.Load() }))
		add("raft_snapshots_received", s.sumShards(func(sh *shard.Shard) int64 { return sh.Stats.SnapshotsReceived.Load() }))
		for _, l := range raftStatusLines(st)[10:] {
			name, v, _ := strings.Cut(l, ":")
			add("raft_"+name, v)
		}
		// Redis's shape: a follower shows its leader's link, a leader
		// its followers as replicas (offsets are applied indexes).
		if role == "slave" {
			host, port, _ := net.SplitHostPort(st.Advertised[st.Leader])
			link := "up"
			if st.Leader == 0 {
				link = "down"
			}
			add("master_host", host)
			add("master_port", port)
			add("master_link_status", link)
			add("master_last_io_seconds_ago", 0)
			add("master_sync_in_progress", 0)
			add("slave_read_repl_offset", st.Applied)
			add("slave_repl_offset", st.Applied)
			add("slave_priority", 100)
			add("slave_read_only", 1)
			add("replica_announced", 1)
		}
		var replicas []string
		if role == "master" && !s.group().Lone() {
			for _, id := range append(st.Voters, st.Learners...) {
				if pr, ok := st.Progress[id]; ok && id != st.ID {
					host, port, _ := net.SplitHostPort(st.Advertised[id])
					state := "online"
					if !pr.RecentActive {
						state = "wait_bgsave"
					}
					replicas = append(replicas, fmt.Sprintf("ip=%s,port=%s,state=%s,offset=%d,lag=0", host, port, state, pr.Match))
				}
			}
		}
		add("connected_slaves", len(replicas))
		for i, r := range replicas {
			add(fmt.Sprintf("slave%d", i), r)
		}
		add("master_failover_state", "no-failover")
		add("master_replid", s.runID)
		add("master_replid2", strings.Repeat("0", 40))
		add("master_repl_offset", 0)
		add("second_repl_offset", -1)
		add("repl_backlog_active", 0)
		add("repl_backlog_size", 1048576)
		add("repl_backlog_first_byte_offset", 0)
		add("repl_backlog_histlen", 0)
	case "cpu":
		title = "CPU"
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		add("used_cpu_sys", fmt.Sprintf("%.6f", tv(ru.Stime)))
		add("used_cpu_user", fmt.Sprintf("%.6f", tv(ru.Utime)))
		add("used_cpu_sys_children", "0.000000")
		add("used_cpu_user_children", "0.000000")
		add("used_cpu_sys_main_thread", fmt.Sprintf("%.6f", tv(ru.Stime))) // Go has no main thread: the process's
		add("used_cpu_user_main_thread", fmt.Sprintf("%.6f", tv(ru.Utime)))
	case "modules":
		title = "Modules"
		lines = append(lines, command.JSONModuleInfo)
	case "commandstats":
		title = "Commandstats"
		lines = append(lines, commandstatsLines()...)
	case "errorstats":
		title = "Errorstats"
		lines = append(lines, s.errors.lines()...)
	case "latencystats":
		title = "Latencystats"
		lines = append(lines, latencystatsLines(s.config().LatencyPercentiles)...)
	case "cluster":
		title = "Cluster"
		add("cluster_enabled", b2i(s.clustered()))
		if s.clustered() {
			// Per shard: its slots, and its group's Raft figures.
			for i, sh := range s.shards {
				st := sh.Status()
				add(fmt.Sprintf("basalt_shard%d", i), fmt.Sprintf("slots=%s,role=%s,term=%d,commit=%d,applied=%d,keys=%d",
					formatSlots(s.topo.Shards[i].Slots), st.Role, st.Term, st.Commit, st.Applied, shardKeys(sh)))
			}
		}
	case "keyspace":
		title = "Keyspace"
		// avg_ttl is an estimate in Redis; basalt doesn't sample: 0.
		for db := 0; db < s.databases(); db++ {
			var n, exp int64
			for _, sh := range s.shards {
				tx := sh.Store().ReadTx(db, now.UnixMilli(), false)
				n, exp = n+tx.Count(), exp+tx.Expires()
				tx.Close()
			}
			if n > 0 {
				lines = append(lines, fmt.Sprintf("db%d:keys=%d,expires=%d,avg_ttl=0", db, n, exp))
			}
		}
	default:
		return ""
	}
	var b strings.Builder
	b.WriteString("# " + title + "\r\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	return b.String()
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func osName() string {
	typ, _ := os.ReadFile("/proc/sys/kernel/ostype")
	rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x86_64"
	}
	if len(typ) == 0 {
		return runtime.GOOS + " " + arch
	}
	return strings.TrimSpace(string(typ)) + " " + strings.TrimSpace(string(rel)) + " " + arch
}

// rssBytes reads the resident set size from /proc (0 elsewhere).
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func totalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return si.Totalram * uint64(si.Unit)
}

// humanBytes formats as Redis's bytesToHuman: 1.70M, 23.54G, 200B.
func humanBytes(n uint64) string {
	f := float64(n)
	for _, u := range []struct {
		unit string
		size float64
	}{{"P", 1 << 50}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if f >= u.size {
			return fmt.Sprintf("%.2f%s", f/u.size, u.unit)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// ---- CLIENT ----

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}

func cmdClient(c *Client, argv [][]byte) {
	switch strings.ToLower(string(argv[1])) {
	case "id":
		c.reply().Int(c.id)
	case "setname":
		if err := validClientName(argv[2]); err != "" {
			c.reply().Error(err)
			return
		}
		name := string(argv[2])
		c.name.Store(&name)
		c.reply().OK()
	case "getname":
		if name := *c.name.Load(); name != "" {
			c.reply().BulkString(name)
		} else {
			c.reply().Null()
		}
	case "info":
		c.publishState() // this command's own state
		c.reply().Verbatim("txt", c.infoLine()+"\n")
	case "list":
		clientList(c, argv[2:])
	case "kill":
		clientKill(c, argv[2:])
	case "proxy": // basalt's: see proxyTo
		switch strings.ToLower(string(argv[2])) {
		case "on":
			c.proxy = true
			c.reply().OK()
		case "off":
			c.proxy = false
			c.reply().OK()
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "no-evict":
		switch strings.ToLower(string(argv[2])) {
		case "on", "off": // basalt evicts no clients
			c.reply().OK()
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "reply":
		switch strings.ToLower(string(argv[2])) {
		case "on":
			c.replyOff, c.skipNext, c.skipping = false, false, false
			c.reply().OK()
		case "off":
			c.replyOff = true
		case "skip":
			if !c.replyOff {
				c.skipNext = true
			}
		default:
			c.reply().Error(command.ErrSyntax)
		}
	case "unblock":
		clientUnblock(c, argv)
	case "pause":
		clientPause(c, argv)
	case "unpause":
		clientUnpause(c)
	case "tracking":
		clientTracking(c, argv)
	case "caching":
		clientCaching(c, argv)
	case "getredir":
		clientGetRedir(c)
	case "trackinginfo":
		clientTrackingInfo(c)
	case "help":
		command.HelpReply(c.reply(), clientHelp)
	}
}

// clients returns the connected clients in id order, as Redis lists them.
func (s *Server) clientsByID() []*Client {
	s.mu.Lock()
	out := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *Client) int { return int(a.id - b.id) })
	return out
}

func validClientType(t string) bool {
	switch strings.ToLower(t) {
	case "normal", "master", "replica", "slave", "pubsub":
		return true
	}
	return false
}

func clientList(c *Client, args [][]byte) {
	var ids []int64
	typ := ""
	switch {
	case len(args) == 0:
	case len(args) == 2 && strings.EqualFold(string(args[0]), "type"):
		typ = strings.ToLower(string(args[1]))
		if !validClientType(typ) {
			c.reply().Error("ERR Unknown client type '" + string(args[1]) + "'")
			return
		}
	case len(args) >= 2 && strings.EqualFold(string(args[0]), "id"):
		for _, a := range args[1:] {
			id, ok := num.ParseInt(a)
			if !ok {
				c.reply().Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	default:
		c.reply().Error(command.ErrSyntax)
		return
	}
	c.publishState()
	var b strings.Builder
	for _, o := range c.srv.clientsByID() {
		if typ != "" && typ != o.clientType() {
			continue
		}
		if ids != nil && !slices.Contains(ids, o.id) {
			continue
		}
		b.WriteString(o.infoLine())
		b.WriteByte('\n')
	}
	c.reply().Verbatim("txt", b.String())
}

// infoLine is the client's CLIENT LIST line. It runs on other clients'
// goroutines, so it reads only what they publish atomically.
func (c *Client) infoLine() string {
	db, proto, multi, queued := c.loadState()
	now := time.Now()
	subs := c.srv.subCounts(c)
	flags, multiN := "", -1
	if subs[kindChannel]+subs[kindPattern]+subs[kindShard] > 0 {
		flags = "P"
	}
	if multi {
		flags, multiN = flags+"x", queued
	}
	redir := int64(-1)
	c.srv.tracker.mu.Lock()
	if tr := c.track; tr != nil {
		flags, redir = flags+"t", tr.redirect
		if tr.broken {
			flags += "R"
		}
		if tr.bcast {
			flags += "B"
		}
	}
	c.srv.tracker.mu.Unlock()
	if flags == "" {
		flags = "N"
	}
	idle := int64(0)
	if at := c.lastAt.Load(); at > 0 {
		idle = (now.UnixMilli() - at) / 1000
	} else {
		idle = int64(now.Sub(c.created).Seconds())
	}
	cmd := *c.lastCmd.Load()
	if cmd == "" {
		cmd = "NULL"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=default redir=%d resp=%d",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), connFD(c), *c.name.Load(), int64(now.Sub(c.created).Seconds()), idle, flags, db,
		subs[kindChannel], subs[kindPattern], subs[kindShard], multiN, cmd, redir, proto)
}

// clientType is the client's class for CLIENT LIST/KILL TYPE: "pubsub"
// while it has subscriptions, else "normal" (basalt has no replica clients).
func (c *Client) clientType() string {
	if n := c.srv.subCounts(c); n[kindChannel]+n[kindPattern]+n[kindShard] > 0 {
		return "pubsub"
	}
	return "normal"
}

// connFD returns the socket's file descriptor without duplicating it.
func connFD(c *Client) int {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	_ = rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// clientKill handles CLIENT KILL addr (replies OK or an error) and CLIENT
// KILL <filter> <value>... (replies with the number killed).
func clientKill(c *Client, args [][]byte) {
	if len(args) == 1 {
		addr := string(args[0])
		for _, o := range c.srv.clientsByID() {
			if o.nc.RemoteAddr().String() == addr {
				c.reply().OK()
				c.kill(o)
				return
			}
		}
		c.reply().Error("ERR No such client")
		return
	}
	if len(args)%2 != 0 {
		c.reply().Error(command.ErrSyntax)
		return
	}
	var (
		id          int64
		addr, laddr string
		user, typ   string
		skipMe      = true
	)
	for i := 0; i < len(args); i += 2 {
		v := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := num.ParseInt(args[i+1])
			if !ok || n <= 0 {
				c.reply().Error("ERR client-id should be greater than 0")
				return
			}
			id = n
		case "addr":
			addr = v
		case "laddr":
			laddr = v
		case "user":
			if v != "default" {
				c.reply().Error("ERR No such user '" + v + "'")
				return
			}
			user = v
		case "type":
			if !validClientType(v) {
				c.reply().Error("ERR Unknown client type '" + v + "'")
				return
			}
			typ = strings.ToLower(v)
		case "skipme":
			switch strings.ToLower(v) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.reply().Error(command.ErrSyntax)
				return
			}
		default:
			c.reply().Error(command.ErrSyntax)
			return
		}
	}
	_ = user // every client is the default user
	var victims []*Client
	for _, o := range c.srv.clientsByID() {
		switch {
		case id != 0 && o.id != id,
			addr != "" && o.nc.RemoteAddr().String() != addr,
			laddr != "" && o.nc.LocalAddr().String() != laddr,
			typ != "" && typ != o.clientType(),
			skipMe && o == c:
			continue
		}
		victims = append(victims, o)
	}
	c.reply().Int(int64(len(victims)))
	for _, o := range victims {
		c.kill(o)
	}
}

// kill closes another client's connection (its goroutine sees the read
// fail and cleans up), or this one's after its reply is written.
func (c *Client) kill(o *Client) {
	if o == c {
		c.closing = true
		return
	}
	o.killed.Store(true)
	o.nc.Close()
}

// ---- DEBUG ----

// cmdDebug implements DEBUG SLEEP, which tests use to hold a connection.
func cmdDebug(c *Client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	if sub == "digest" && len(argv) == 2 {
		c.waitPending()
		debugDigest(c)
		return
	}
	if sub == "sleep" && len(argv) == 3 {
		secs, ok := num.ParseFloat(argv[2])
		if !ok {
			c.reply().Error(command.ErrNotFloat)
			return
		}
		c.waitPending()
		time.Sleep(time.Duration(secs * float64(time.Second)))
		c.reply().OK()
		return
	}
	c.reply().Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try DEBUG HELP.")
}

// countingReader counts the bytes clients send, for INFO's
// total_net_input_bytes: one atomic add per read call, not per command.
// It also counts its client's reads that brought data (see confirmRead).
type countingReader struct {
	r     interface{ Read([]byte) (int, error) }
	n     *atomic.Int64
	reads *atomic.Uint64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n.Add(int64(n))
		c.reads.Add(1)
	}
	return n, err
}
