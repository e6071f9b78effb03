package server

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Config holds the server's settings, named as redis-server names them.
type Config struct {
	Bind            string
	Port            int
	Dir             string
	DBFilename      string // the RDB file SAVE and BGSAVE write in Dir
	AppendFsync     shard.Fsync
	RequirePass     string
	Databases       int
	MaxClients      int
	ProtoMaxBulkLen int64
	GoMaxProcs      int
	LogRetain       int64  // Raft log entries kept after they are applied (0: no limit)
	LogRetainBytes  int64  // and at most this many bytes of them (0: no limit)
	LuaTimeLimit    int64  // ms a script runs before other clients get BUSY
	CacheSize       int64  // Pebble block cache, bytes
	MetaCacheSize   int64  // in-memory metadata cache, bytes (0: off)
	File            string // the --config file, which CONFIG REWRITE updates ("" none)

	// Trust (trustConfig below): protected mode, and the secret that
	// authenticates node-to-node traffic.
	ProtectedMode bool
	ClusterSecret string
	SecretFile    string // cluster-secret-file, where ClusterSecret was read
	// Mutual TLS between nodes: tls-cluster or tls-replication (both mean
	// the Raft traffic here), with redis.conf's file settings.
	TLSCluster                         bool
	TLSCertFile, TLSKeyFile, TLSCAFile string

	// Replication (etcd's flag names). A server without RaftAddr is a group
	// of one voter.
	NodeID         uint64
	RaftAddr       string            // this node's Raft listen address
	InitialCluster map[uint64]string // every voter's Raft address, when the log is new
	Join           bool              // start empty, to be added with RAFT ADD

	// client-output-buffer-limit by class (bufferClasses); basalt enforces
	// the pubsub class (see pubsub.go) and shows the others.
	OutputLimits [3]BufferLimit

	// NotifyKeyspaceEvents is notify-keyspace-events (notify.go).
	NotifyKeyspaceEvents store.NotifyFlags

	// The slowlog and the latency monitor (slowlog.go, latency.go).
	SlowlogSlowerThan       int64 // µs; -1: off, 0: every command
	SlowlogMaxLen           int64
	LatencyMonitorThreshold int64 // ms; 0: off
	LatencyTracking         bool  // per-command histograms (LATENCY HISTOGRAM)
	// LatencyPercentiles is latency-tracking-info-percentiles: what INFO
	// latencystats reports, in this order. Replaced, never modified.
	LatencyPercentiles []float64

	// Limits against hostile input (docs/limits.md).
	LuaMaxMemory int64 // script-maxmemory: the largest string a script may build
}

// bufferClasses are client-output-buffer-limit's classes, in CONFIG GET's order.
var bufferClasses = [3]string{"normal", "slave", "pubsub"}

// pubsubClass indexes Config.OutputLimits.
const pubsubClass = 2

// DefaultConfig is what `basalt` with no flags uses.
func DefaultConfig() Config {
	return Config{
		Bind:            "127.0.0.1",
		Port:            6379,
		Dir:             "./basalt-data",
		DBFilename:      "dump.rdb",
		AppendFsync:     shard.FsyncAlways,
		Databases:       16,
		MaxClients:      10000,
		ProtoMaxBulkLen: resp.DefaultMaxBulk,
		LogRetain:       100000,
		LogRetainBytes:  256 << 20,
		LuaTimeLimit:    5000,
		CacheSize:       store.DefaultCacheSize,
		MetaCacheSize:   store.DefaultMetaCacheSize,
		OutputLimits:    [3]BufferLimit{{}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}},

		SlowlogSlowerThan:  10000,
		SlowlogMaxLen:      128,
		LatencyTracking:    true,
		LatencyPercentiles: []float64{50, 99, 99.9},

		ProtectedMode: true,
		LuaMaxMemory:  command.DefaultScriptMaxMemory,
	}
}

// Set applies one setting by its redis.conf name. It is used by the
// command line, the config file and CONFIG SET.
func (c *Config) Set(name, value string) error {
	switch strings.ToLower(name) {
	case "bind":
		c.Bind = strings.Fields(value)[0]
	case "port":
		return setInt(&c.Port, value, 0, 65535)
	case "dir":
		c.Dir = value
	case "dbfilename":
		if strings.ContainsRune(value, '/') { // Redis's pathIsBaseName
			return fmt.Errorf("dbfilename can't be a path, just a filename")
		}
		c.DBFilename = value
	case "appendfsync":
		f, ok := shard.ParseFsync(strings.ToLower(value))
		if !ok {
			return fmt.Errorf("argument(s) must be one of the following: everysec, always, no")
		}
		c.AppendFsync = f
	case "requirepass":
		c.RequirePass = value
	case "databases":
		return setInt(&c.Databases, value, 1, 65535)
	case "maxclients":
		return setInt(&c.MaxClients, value, 1, 1<<32-1)
	case "proto-max-bulk-len":
		n, err := parseMemory(value)
		if err != nil {
			return fmt.Errorf("argument must be a memory value")
		}
		if n < 1024*1024 {
			return fmt.Errorf("argument must be between 1048576 and 9223372036854775807 inclusive")
		}
		c.ProtoMaxBulkLen = n
	case "gomaxprocs":
		return setInt(&c.GoMaxProcs, value, 0, 1024)
	case "meta-cache-size":
		n, err := parseMemory(value)
		if err != nil || n < 0 {
			return fmt.Errorf("argument must be a memory value")
		}
		c.MetaCacheSize = n
	case "cache-size":
		n, err := parseMemory(value)
		if err != nil || n < 1<<20 {
			return fmt.Errorf("argument must be a memory value of at least 1mb")
		}
		c.CacheSize = n
	case "node-id":
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("argument must be a positive integer")
		}
		c.NodeID = n
	case "raft-addr":
		c.RaftAddr = value
	case "initial-cluster":
		m, err := ParseCluster(value)
		if err != nil {
			return err
		}
		c.InitialCluster = m
	case "join":
		switch strings.ToLower(value) {
		case "yes":
			c.Join = true
		case "no":
			c.Join = false
		default:
			return fmt.Errorf("argument must be 'yes' or 'no'")
		}
	case "log-retain":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("argument must be a non-negative integer")
		}
		c.LogRetain = n
	case "log-retain-bytes":
		n, err := parseMemory(value)
		if err != nil || n < 0 {
			return fmt.Errorf("argument must be a memory value")
		}
		c.LogRetainBytes = n
	case "client-output-buffer-limit":
		return c.setOutputLimits(value)
	case "busy-reply-threshold", "lua-time-limit":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("argument couldn't be parsed into an integer")
		}
		if n < 0 {
			return fmt.Errorf("argument must be between 0 and 9223372036854775807 inclusive")
		}
		c.LuaTimeLimit = n
	case "script-maxmemory":
		n, err := parseMemory(value)
		if err != nil || n < 1<<20 {
			return fmt.Errorf("argument must be a memory value of at least 1mb")
		}
		c.LuaMaxMemory = n
	case "slowlog-log-slower-than":
		return setInt64(&c.SlowlogSlowerThan, value, -1)
	case "slowlog-max-len":
		return setInt64(&c.SlowlogMaxLen, value, 0)
	case "latency-monitor-threshold":
		return setInt64(&c.LatencyMonitorThreshold, value, 0)
	case "latency-tracking":
		switch strings.ToLower(value) {
		case "yes":
			c.LatencyTracking = true
		case "no":
			c.LatencyTracking = false
		default:
			return fmt.Errorf("argument must be 'yes' or 'no'")
		}
	case "latency-tracking-info-percentiles":
		p, err := parsePercentiles(value)
		if err != nil {
			return err
		}
		c.LatencyPercentiles = p
	case "notify-keyspace-events":
		f, err := store.ParseNotifyFlags(value)
		if err != nil {
			return err
		}
		c.NotifyKeyspaceEvents = f
	default:
		return c.setTrust(strings.ToLower(name), value)
	}
	return nil
}

// Get returns a setting's value as CONFIG GET shows it; ok is false for an
// unknown name.
func (c *Config) Get(name string) (string, bool) {
	switch name {
	case "bind":
		return c.Bind, true
	case "port":
		return strconv.Itoa(c.Port), true
	case "dir":
		return c.Dir, true
	case "dbfilename":
		return c.DBFilename, true
	case "appendfsync":
		return c.AppendFsync.String(), true
	case "requirepass":
		return c.RequirePass, true
	case "databases":
		return strconv.Itoa(c.Databases), true
	case "maxclients":
		return strconv.Itoa(c.MaxClients), true
	case "proto-max-bulk-len":
		return strconv.FormatInt(c.ProtoMaxBulkLen, 10), true
	case "gomaxprocs":
		return strconv.Itoa(c.GoMaxProcs), true
	case "log-retain":
		return strconv.FormatInt(c.LogRetain, 10), true
	case "log-retain-bytes":
		return strconv.FormatInt(c.LogRetainBytes, 10), true
	case "busy-reply-threshold", "lua-time-limit":
		return strconv.FormatInt(c.LuaTimeLimit, 10), true
	case "script-maxmemory":
		return strconv.FormatInt(c.LuaMaxMemory, 10), true
	case "cache-size":
		return strconv.FormatInt(c.CacheSize, 10), true
	case "meta-cache-size":
		return strconv.FormatInt(c.MetaCacheSize, 10), true
	case "node-id":
		return strconv.FormatUint(c.NodeID, 10), true
	case "raft-addr":
		return c.RaftAddr, true
	case "initial-cluster":
		return FormatCluster(c.InitialCluster), true
	case "join":
		if c.Join {
			return "yes", true
		}
		return "no", true
	case "client-output-buffer-limit":
		var parts []string
		for i, l := range c.OutputLimits {
			parts = append(parts, fmt.Sprintf("%s %d %d %d", bufferClasses[i], l.Hard, l.Soft, l.Seconds))
		}
		return strings.Join(parts, " "), true
	case "notify-keyspace-events":
		return c.NotifyKeyspaceEvents.String(), true
	case "slowlog-log-slower-than":
		return strconv.FormatInt(c.SlowlogSlowerThan, 10), true
	case "slowlog-max-len":
		return strconv.FormatInt(c.SlowlogMaxLen, 10), true
	case "latency-monitor-threshold":
		return strconv.FormatInt(c.LatencyMonitorThreshold, 10), true
	case "latency-tracking":
		if c.LatencyTracking {
			return "yes", true
		}
		return "no", true
	case "latency-tracking-info-percentiles":
		parts := make([]string, len(c.LatencyPercentiles))
		for i, p := range c.LatencyPercentiles {
			parts[i] = formatPercentile(p)
		}
		return strings.Join(parts, " "), true
	}
	return c.getTrust(name)
}

// parsePercentiles reads latency-tracking-info-percentiles: numbers
// between 0 and 100, separated by spaces; none is allowed.
func parsePercentiles(value string) ([]float64, error) {
	out := []float64{}
	for _, f := range strings.Fields(value) {
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(p) {
			return nil, fmt.Errorf("Invalid latency-tracking-info-percentiles parameters")
		}
		if p < 0 || p > 100 {
			return nil, fmt.Errorf("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		out = append(out, p)
	}
	return out, nil
}

// formatPercentile writes a percentile as Redis does: "%f" without its
// trailing zeros (99.9, 50).
func formatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// ParseCluster reads an --initial-cluster value: "1=host:port,2=host:port".
func ParseCluster(v string) (map[uint64]string, error) {
	m := map[uint64]string{}
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("bad cluster member %q: want ID=HOST:PORT", part)
		}
		m[n] = addr
	}
	return m, nil
}

// FormatCluster is the inverse of ParseCluster, ordered by ID.
func FormatCluster(m map[uint64]string) string {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(id, 10) + "=" + m[id]
	}
	return strings.Join(parts, ",")
}

// ConfigNames lists the settings in the order CONFIG GET * returns them.
var ConfigNames = []string{"bind", "port", "dir", "dbfilename", "appendfsync", "requirepass", "databases",
	"maxclients", "proto-max-bulk-len", "gomaxprocs", "log-retain", "log-retain-bytes", "cache-size", "meta-cache-size",
	"node-id", "raft-addr", "initial-cluster", "join", "client-output-buffer-limit",
	"busy-reply-threshold", "lua-time-limit", "notify-keyspace-events",
	"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold", "latency-tracking",
	"latency-tracking-info-percentiles",
	"script-maxmemory"}

// configAliases maps old names to the name CONFIG REWRITE writes.
var configAliases = map[string]string{"lua-time-limit": "busy-reply-threshold"}

// setOutputLimits reads "<class> <hard> <soft> <seconds>"..., all or nothing.
func (c *Config) setOutputLimits(value string) error {
	f := strings.Fields(value)
	if len(f) == 0 || len(f)%4 != 0 {
		return fmt.Errorf("Wrong number of arguments in buffer limit configuration.")
	}
	limits := c.OutputLimits
	for i := 0; i < len(f); i += 4 {
		var class int
		switch strings.ToLower(f[i]) {
		case "normal":
			class = 0
		case "slave", "replica":
			class = 1
		case "pubsub":
			class = pubsubClass
		default:
			return fmt.Errorf("Invalid client class specified in buffer limit configuration.")
		}
		hard, err1 := parseMemory(f[i+1])
		soft, err2 := parseMemory(f[i+2])
		secs, err3 := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || hard < 0 || soft < 0 || secs < 0 {
			return fmt.Errorf("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		limits[class] = BufferLimit{Hard: hard, Soft: soft, Seconds: secs}
	}
	c.OutputLimits = limits
	return nil
}

func setInt(dst *int, value string, lo, hi int) error {
	n, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi { // Redis's CONFIG SET wording
		return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	*dst = n
	return nil
}

// parseMemory reads a redis.conf memory value: 1024, 1k, 1kb, 1m, 1mb, 1g, 1gb.
func parseMemory(s string) (int64, error) {
	s = strings.ToLower(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1024}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000000}, {"g", 1000000000}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// LoadFile reads a redis.conf-style file: one "name value..." per line, #
// comments, quoted values.
func (c *Config) LoadFile(path string) error {
	if abs, err := filepath.Abs(path); err == nil {
		c.File = abs // CONFIG REWRITE writes here
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		args, ok := resp.SplitArgs([]byte(text))
		if !ok || len(args) < 2 {
			return fmt.Errorf("%s:%d: bad directive %q", path, line, text)
		}
		parts := make([]string, len(args)-1)
		for i, a := range args[1:] {
			parts[i] = string(a)
		}
		if err := c.Set(string(args[0]), strings.Join(parts, " ")); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	return sc.Err()
}

// setInt64 parses an integer setting of at least lo, with Redis's errors.
func setInt64(dst *int64, value string, lo int64) error {
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return fmt.Errorf("argument couldn't be parsed into an integer")
	}
	if n < lo {
		return fmt.Errorf("argument must be between %d and 9223372036854775807 inclusive", lo)
	}
	*dst = n
	return nil
}

// Trust settings (docs/replication.md, "What a node trusts"). The cluster
// secret and TLS between nodes are given at start only, and CONFIG GET
// does not show them.

func init() { ConfigNames = append(ConfigNames, "protected-mode") }

// minSecret is the shortest cluster secret accepted: a handshake seen on
// the network lets one guess a secret offline.
const minSecret = 16

func (c *Config) setTrust(name, value string) error {
	switch name {
	case "protected-mode":
		return setYesNo(&c.ProtectedMode, value)
	case "cluster-secret":
		if len(value) < minSecret {
			return fmt.Errorf("the cluster secret must be at least %d characters", minSecret)
		}
		c.ClusterSecret = value
	case "cluster-secret-file":
		b, err := os.ReadFile(value)
		if err != nil {
			return err
		}
		if err := c.setTrust("cluster-secret", strings.TrimSpace(string(b))); err != nil {
			return fmt.Errorf("%s: %v", value, err)
		}
		c.SecretFile = value
	case "tls-cluster", "tls-replication":
		return setYesNo(&c.TLSCluster, value)
	case "tls-cert-file":
		c.TLSCertFile = value
	case "tls-key-file":
		c.TLSKeyFile = value
	case "tls-ca-cert-file":
		c.TLSCAFile = value
	default:
		return fmt.Errorf("unknown option '%s'", name)
	}
	return nil
}

func (c *Config) getTrust(name string) (string, bool) {
	switch name {
	case "protected-mode":
		return yesNo(c.ProtectedMode), true
	}
	return "", false
}

func setYesNo(dst *bool, value string) error {
	switch strings.ToLower(value) {
	case "yes":
		*dst = true
	case "no":
		*dst = false
	default:
		return fmt.Errorf("argument must be 'yes' or 'no'")
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
