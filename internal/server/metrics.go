package server

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"basalt/internal/shard"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// /metrics: Prometheus figures under redis_exporter's names (v1.62), so
// its dashboards work on basalt unchanged, and basalt's own under
// basalt_. Each scrape reads INFO, as redis_exporter does, so the two
// always agree.

// infoMetrics maps INFO fields to redis_exporter's metric names (without
// the redis_ prefix); counters end in _total.
var infoMetrics = map[string]string{
	"uptime_in_seconds": "uptime_in_seconds", "process_id": "process_id", "io_threads_active": "io_threads_active",
	"connected_clients": "connected_clients", "blocked_clients": "blocked_clients", "maxclients": "max_clients",
	"tracking_clients": "tracking_clients", "clients_in_timeout_table": "clients_in_timeout_table",
	"client_recent_max_output_buffer": "client_recent_max_output_buffer_bytes", "client_recent_max_input_buffer": "client_recent_max_input_buffer_bytes",
	"used_memory": "memory_used_bytes", "used_memory_rss": "memory_used_rss_bytes", "used_memory_peak": "memory_used_peak_bytes",
	"used_memory_lua": "memory_used_lua_bytes", "used_memory_overhead": "memory_used_overhead_bytes", "used_memory_dataset": "memory_used_dataset_bytes",
	"used_memory_scripts": "memory_used_scripts_bytes", "number_of_cached_scripts": "number_of_cached_scripts",
	"maxmemory": "memory_max_bytes", "total_system_memory": "total_system_memory_bytes", "mem_fragmentation_ratio": "mem_fragmentation_ratio",
	"lazyfree_pending_objects": "lazyfree_pending_objects", "expired_stale_perc": "expired_stale_percentage",
	"loading": "loading_dump_file", "async_loading": "async_loading", "rdb_changes_since_last_save": "rdb_changes_since_last_save",
	"rdb_bgsave_in_progress": "rdb_bgsave_in_progress", "rdb_last_save_time": "rdb_last_save_timestamp_seconds",
	"rdb_last_bgsave_status": "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec": "rdb_last_bgsave_duration_sec",
	"rdb_current_bgsave_time_sec": "rdb_current_bgsave_duration_sec", "rdb_saves": "rdb_saves_total",
	"aof_enabled": "aof_enabled", "aof_rewrite_in_progress": "aof_rewrite_in_progress", "aof_rewrite_scheduled": "aof_rewrite_scheduled",
	"aof_last_rewrite_time_sec": "aof_last_rewrite_duration_sec", "aof_current_rewrite_time_sec": "aof_current_rewrite_duration_sec",
	"aof_last_bgrewrite_status": "aof_last_bgrewrite_status", "aof_last_write_status": "aof_last_write_status",
	"pubsub_channels": "pubsub_channels", "pubsub_patterns": "pubsub_patterns", "pubsubshard_channels": "pubsubshard_channels",
	"latest_fork_usec": "latest_fork_usec", "tracking_total_keys": "tracking_total_keys", "tracking_total_items": "tracking_total_items",
	"tracking_total_prefixes": "tracking_total_prefixes", "migrate_cached_sockets": "migrate_cached_sockets_total",
	"connected_slaves": "connected_slaves", "repl_backlog_size": "replication_backlog_bytes", "repl_backlog_active": "repl_backlog_is_active",
	"repl_backlog_first_byte_offset": "repl_backlog_first_byte_offset", "repl_backlog_histlen": "repl_backlog_history_bytes",
	"master_repl_offset": "master_repl_offset", "second_repl_offset": "second_repl_offset",
	"sync_full": "replica_resyncs_full", "sync_partial_ok": "replica_partial_resync_accepted", "sync_partial_err": "replica_partial_resync_denied",
	"total_connections_received": "connections_received_total", "total_commands_processed": "commands_processed_total",
	"rejected_connections": "rejected_connections_total", "total_net_input_bytes": "net_input_bytes_total", "total_net_output_bytes": "net_output_bytes_total",
	"total_net_repl_input_bytes": "net_repl_input_bytes_total", "total_net_repl_output_bytes": "net_repl_output_bytes_total",
	"expired_keys": "expired_keys_total", "expired_time_cap_reached_count": "expired_time_cap_reached_total",
	"evicted_keys": "evicted_keys_total", "evicted_clients": "evicted_clients_total",
	"keyspace_hits": "keyspace_hits_total", "keyspace_misses": "keyspace_misses_total",
	"used_cpu_sys": "cpu_sys_seconds_total", "used_cpu_user": "cpu_user_seconds_total",
	"used_cpu_sys_children": "cpu_sys_children_seconds_total", "used_cpu_user_children": "cpu_user_children_seconds_total",
	"total_error_replies": "total_error_replies",
}

// basaltCounters are the INFO figures of basalt's that only grow: their
// metrics are counters, named ..._total.
var basaltCounters = map[string]bool{"basalt_records_applied": true, "basalt_groups_committed": true, "basalt_log_syncs": true,
	"basalt_read_compactions": true, "raft_leader_changes": true, "raft_snapshots_sent": true, "raft_snapshots_received": true}

// instanceLabels are redis_instance_info's labels, read from INFO.
var instanceLabels = []string{"role", "redis_version", "redis_build_id", "redis_mode", "os", "maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid"}

type infoCollector struct{ s *Server }

func (infoCollector) Describe(chan<- *prometheus.Desc) {} // unchecked: the fields follow INFO

func (m infoCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(name, help string, kind prometheus.ValueType, v float64, labels []string, values ...string) {
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, labels, nil), kind, v, values...)
	}
	emit("redis_up", "Information about the Redis instance", prometheus.GaugeValue, 1, nil)
	fields := map[string]string{}
	for _, section := range infoAll {
		for _, line := range strings.Split(m.s.infoSection(section, nil), "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.HasPrefix(line, "#") {
				continue
			}
			fields[k] = v
			switch {
			case strings.HasPrefix(k, "db") && section == "keyspace":
				kv := subFields(v)
				emit("redis_db_keys", "Total number of keys by DB", prometheus.GaugeValue, kv["keys"], []string{"db"}, k)
				emit("redis_db_keys_expiring", "Total number of expiring keys by DB", prometheus.GaugeValue, kv["expires"], []string{"db"}, k)
				emit("redis_db_avg_ttl_seconds", "Avg TTL in seconds", prometheus.GaugeValue, kv["avg_ttl"]/1000, []string{"db"}, k)
			case strings.HasPrefix(k, "cmdstat_"):
				kv := subFields(v)
				cmd := strings.TrimPrefix(k, "cmdstat_")
				emit("redis_commands_total", "Total number of calls per command", prometheus.CounterValue, kv["calls"], []string{"cmd"}, cmd)
				emit("redis_commands_duration_seconds_total", "Total amount of time in seconds spent per command", prometheus.CounterValue, kv["usec"]/1e6, []string{"cmd"}, cmd)
				emit("redis_commands_rejected_calls_total", "Total number of rejected calls per command", prometheus.CounterValue, kv["rejected_calls"], []string{"cmd"}, cmd)
				emit("redis_commands_failed_calls_total", "Total number of failed calls per command", prometheus.CounterValue, kv["failed_calls"], []string{"cmd"}, cmd)
			case strings.HasPrefix(k, "errorstat_"):
				emit("redis_errors_total", "Total number of errors per error type", prometheus.CounterValue, subFields(v)["count"], []string{"err"}, strings.TrimPrefix(k, "errorstat_"))
			case k == "master_link_status":
				emit("redis_master_link_up", "Master link status", prometheus.GaugeValue, boolFloat(v == "up"), nil)
			case infoMetrics[k] != "":
				kind := prometheus.GaugeValue
				if strings.HasSuffix(infoMetrics[k], "_total") {
					kind = prometheus.CounterValue
				}
				if f, ok := infoNumber(v); ok {
					emit("redis_"+infoMetrics[k], k+" from INFO", kind, f, nil)
				}
			case k == "used_disk_bytes":
				if f, ok := infoNumber(v); ok {
					emit("basalt_disk_used_bytes", "Bytes the data directory's store takes on disk", prometheus.GaugeValue, f, nil)
				}
			case strings.HasPrefix(k, "basalt_") || strings.HasPrefix(k, "raft_"):
				name, kind := "basalt_"+strings.TrimPrefix(k, "basalt_"), prometheus.GaugeValue
				if basaltCounters[k] {
					name, kind = name+"_total", prometheus.CounterValue
				}
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					emit(name, k+" from INFO", kind, f, nil)
				}
			}
		}
	}
	// Per shard (one, "0", outside cluster mode): the log's syncs and group
	// commits, and Pebble's figures; in cluster mode also each shard's Raft
	// state as this node sees it.
	for _, sh := range m.s.shards {
		id := strconv.Itoa(shardNumber(sh))
		for name, h := range map[string]*shard.Histogram{"basalt_log_sync_seconds": sh.Stats.SyncSeconds, "basalt_group_commit_records": sh.Stats.GroupRecords} {
			buckets, count, sum := h.Read()
			ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(name, "the log's syncs (seconds); the records of each group commit", []string{"shard"}, nil), count, sum, buckets, id)
		}
		if db := sh.Store().Pebble(); db != nil {
			pm := db.Metrics()
			for _, g := range []struct {
				name, help string
				kind       prometheus.ValueType
				v          float64
			}{
				{"basalt_pebble_compactions_total", "Pebble compactions", prometheus.CounterValue, float64(pm.Compact.Count)},
				{"basalt_pebble_flushes_total", "Pebble memtable flushes", prometheus.CounterValue, float64(pm.Flush.Count)},
				{"basalt_pebble_l0_files", "Pebble sstables in L0 (many: writes outrun compactions)", prometheus.GaugeValue, float64(pm.Levels[0].TablesCount)},
				{"basalt_pebble_l0_sublevels", "Pebble L0 sublevels (read amplification)", prometheus.GaugeValue, float64(pm.Levels[0].Sublevels)},
				{"basalt_pebble_read_amplification", "Pebble read amplification", prometheus.GaugeValue, float64(pm.ReadAmp())},
				{"basalt_pebble_block_cache_bytes", "Pebble block cache in use", prometheus.GaugeValue, float64(pm.BlockCache.Size)},
				{"basalt_pebble_block_cache_hits_total", "Pebble block cache hits", prometheus.CounterValue, float64(pm.BlockCache.Hits)},
				{"basalt_pebble_block_cache_misses_total", "Pebble block cache misses", prometheus.CounterValue, float64(pm.BlockCache.Misses)},
				{"basalt_pebble_write_stalls_total", "Pebble write stalls (writes wait for a flush or a compaction)", prometheus.CounterValue, float64(sh.Store().WriteStalls())},
			} {
				emit(g.name, g.help, g.kind, g.v, []string{"shard"}, id)
			}
		}
		if m.s.clustered() {
			st := sh.Status()
			emit("basalt_shard_raft_term", "the shard's Raft term", prometheus.GaugeValue, float64(st.Term), []string{"shard"}, id)
			emit("basalt_shard_commit_index", "the shard's committed log index", prometheus.GaugeValue, float64(st.Commit), []string{"shard"}, id)
			emit("basalt_shard_applied_index", "the shard's applied log index", prometheus.GaugeValue, float64(st.Applied), []string{"shard"}, id)
			emit("basalt_shard_apply_lag", "entries the shard has committed and not applied", prometheus.GaugeValue, float64(st.Commit-min(st.Applied, st.Commit)), []string{"shard"}, id)
			emit("basalt_shard_leader", "1 if this node leads the shard", prometheus.GaugeValue, boolFloat(sh.IsLeader()), []string{"shard"}, id)
			emit("basalt_shard_leader_changes_total", "the shard's leader changes this node saw", prometheus.CounterValue, float64(sh.Stats.LeaderChanges.Load()), []string{"shard"}, id)
		}
	}
	for id, o := range m.s.group().ClockOffsets() {
		emit("basalt_clock_offset_seconds", "a peer's clock minus this node's, as measured", prometheus.GaugeValue, o.Offset.Seconds(), []string{"peer"}, strconv.FormatUint(id, 10))
	}
	values := make([]string, len(instanceLabels))
	for i, l := range instanceLabels {
		values[i] = fields[l]
	}
	emit("redis_instance_info", "Information about the Redis instance", prometheus.GaugeValue, 1, instanceLabels, values...)
}

// subFields reads "keys=1,expires=0" as numbers.
func subFields(v string) map[string]float64 {
	out := map[string]float64{}
	for _, part := range strings.Split(v, ",") {
		k, n, _ := strings.Cut(part, "=")
		out[k], _ = strconv.ParseFloat(n, 64)
	}
	return out
}

// infoNumber reads an INFO value as redis_exporter does: "ok" and "up"
// are 1, "err" 0, a percentage its number.
func infoNumber(v string) (float64, bool) {
	switch v {
	case "ok", "up":
		return 1, true
	case "err", "fail", "down":
		return 0, true
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	return f, err == nil
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ServeMetrics serves /metrics on addr (metrics-addr) and returns the
// address it listens on. The listener closes with the server.
func (s *Server) ServeMetrics(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(infoCollector{s}, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			slog.Warn("metrics listener", "err", err)
		}
	}()
	go func() {
		<-s.closed
		srv.Close()
	}()
	return ln.Addr().String(), nil
}
