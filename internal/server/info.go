package server

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"basalt/internal/command"
	"basalt/internal/shard"
)

// INFO: the sections redis_exporter and operators read.

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
		add("tcp_port", cmp.Or(cfg.Port, cfg.TLSPort)) // as Redis
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
		input := int64(0)
		for _, c := range s.clients {
			input = max(input, c.qb.recentMax(nanotime()))
		}
		s.mu.Unlock()
		add("connected_clients", n)
		add("cluster_connections", 0)
		add("maxclients", cfg.MaxClients)
		add("client_recent_max_input_buffer", input)
		add("client_recent_max_output_buffer", 0)
		add("blocked_clients", s.sumShards(func(sh *shard.Shard) int64 { return int64(sh.BlockedCount()) })+s.replWaits.Load())
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
			"mem_clients_slaves"} {
			add(k, 0) // none of these buffers exists in basalt
		}
		add("mem_clients_normal", s.clientEvict.used.Load()) // what maxmemory-clients bounds
		add("mem_cluster_links", 0)
		add("mem_aof_buffer", 0)
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
		add("evicted_clients", s.clientEvict.evicted.Load())
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
		s.clockInfo(add)
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
			// Per shard: its slots, the node that leads it when up
			// (balanceLeaders), and its group's Raft figures.
			for _, sh := range s.shards {
				st, i := sh.Status(), shardNumber(sh)
				add(fmt.Sprintf("basalt_shard%d", i), fmt.Sprintf("slots=%s,preferred=%d,role=%s,term=%d,commit=%d,applied=%d,keys=%d",
					formatSlots(s.topo.Shards[i].Slots), s.topo.Shards[i].Replicas[0], st.Role, st.Term, st.Commit, st.Applied, shardKeys(sh)))
			}
			// The metadata group, and the epoch of the topology it committed
			// (0: none yet).
			st, epoch := s.meta.Status(), uint64(0)
			if t := s.committedTopology(); t != nil {
				epoch = t.Epoch
			}
			add("basalt_meta", fmt.Sprintf("role=%s,term=%d,commit=%d,applied=%d,topology_epoch=%d", st.Role, st.Term, st.Commit, st.Applied, epoch))
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
