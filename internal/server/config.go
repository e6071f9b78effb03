package server

import (
	"basalt/internal/acl"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Config holds the server's settings, named as redis-server names them.
// Each is declared, with its default and checks, in the table of
// configtable.go.
type Config struct {
	Bind           string // addresses, space separated; "-" before one: optional
	Port           int
	UnixSocket     string
	UnixSocketPerm int64
	Timeout        int // seconds a client may stay idle (0: forever)
	TCPKeepAlive   int // seconds between keepalive probes (0: off)
	Dir            string
	DBFilename     string // the RDB file SAVE and BGSAVE write in Dir
	AppendFsync    shard.Fsync
	RequirePass    string
	// ACL (acl_cmd.go): the "user" directives, the ACL file, the ACL
	// LOG's length and the channels of new selectors (acl-pubsub-default).
	Users            []acl.Definition
	ACLFile          string
	ACLLogMaxLen     int
	ACLPubsubDefault string
	Databases        int
	MaxClients       int
	ProtoMaxBulkLen  int64
	GoMaxProcs       int
	LogRetain        int64  // Raft log entries kept after they are applied (0: no limit)
	LogRetainBytes   int64  // and at most this many bytes of them (0: no limit)
	LuaTimeLimit     int64  // ms a script runs before other clients get BUSY
	CacheSize        int64  // Pebble block cache, bytes
	MetaCacheSize    int64  // in-memory metadata cache, bytes (0: off)
	MaxMemory        int64  // bounds the caches and the Go heap (memory.go; 0: none)
	MaxMemoryPolicy  string // accepted and shown; data on disk is never evicted
	MaxMemoryClients string // maxmemory-clients: bytes or "N%" of MaxMemory (clientevict.go)
	LogLevel         string // Redis's levels: debug, verbose, notice, warning
	LogFile          string // "" : standard output
	LogFormat        string // text or json
	PidFile          string
	Supervised       string // systemd or auto: tell systemd when ready (log.go)
	MetricsAddr      string // where /metrics is served ("" : not served)
	File             string // the config file, which CONFIG REWRITE updates ("" none)

	// RenameCommands are the config file's rename-command lines, in order:
	// {old, new}; an empty new name removes the command.
	RenameCommands [][2]string

	// Other holds the parameters basalt accepts without applying them,
	// as CONFIG GET shows them; NotApplied lists those a flag, the file
	// or CONFIG SET gave, for the log.
	Other      map[string]string
	NotApplied []string
	includes   int // config files being read, nested by include

	// Dangerous surfaces (protect.go): "no", "yes" or "local" (from
	// loopback or the unix socket only), as in Redis 7.0.
	EnableDebugCommand     string
	EnableModuleCommand    string
	EnableProtectedConfigs string

	// Trust (trustConfig below): protected mode, and the secret that
	// authenticates node-to-node traffic.
	ProtectedMode bool
	ClusterSecret string
	SecretFile    string // cluster-secret-file, where ClusterSecret was read
	// Mutual TLS between nodes: tls-cluster or tls-replication (both mean
	// the Raft traffic here), with redis.conf's file settings.
	TLSCluster                         bool
	TLSCertFile, TLSKeyFile, TLSCAFile string
	// TLS for clients (tls.go): the port, and how clients are served.
	TLSPort                                  int
	TLSCADir                                 string
	TLSClientCertFile, TLSClientKeyFile      string // shown when this node dials a peer
	TLSKeyFilePass, TLSClientKeyFilePass     string // the keys' passwords, if they are encrypted
	TLSAuthClients                           string // no, yes, optional
	TLSProtocols, TLSCiphers, TLSCipherSuite string
	TLSSessionCaching                        bool

	// Replication (etcd's flag names). A server without RaftAddr is a group
	// of one voter.
	NodeID         uint64
	RaftAddr       string            // this node's Raft listen address
	InitialCluster map[uint64]string // every voter's Raft address, when the log is new
	Join           bool              // start empty, to be added with RAFT ADD

	// Cluster mode (shards.go): the slots divided among ClusterShards
	// Raft groups, Redis Cluster's protocol.
	ClusterEnabled bool
	ClusterShards  int // shards of a new node (default: the machine's cores)
	// ClusterReplicas is how many nodes hold each shard (0: every node).
	ClusterReplicas int
	// ClusterProxy: new clients' commands for slots another node leads are
	// proxied there, not answered MOVED (CLIENT PROXY changes it for one).
	ClusterProxy bool
	// MaxClockOffset (ms, cluster-max-clock-offset) bounds how far a
	// leader's clock may be from its peers'; DebugClockOffset (ms) shifts
	// this node's clock, for tests.
	MaxClockOffset, DebugClockOffset int64

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

	// stream-node-max-entries and stream-node-max-bytes: where stream
	// nodes end, which XADD and XTRIM with ~ trim whole.
	StreamNodeMaxEntries, StreamNodeMaxBytes int64

	// Limits against hostile input (docs/limits.md).
	LuaMaxMemory int64 // script-maxmemory: the largest string a script may build
}

// bufferClasses are client-output-buffer-limit's classes, in CONFIG GET's order.
var bufferClasses = [3]string{"normal", "slave", "pubsub"}

// pubsubClass indexes Config.OutputLimits.
const pubsubClass = 2

// DefaultConfig is what `basalt` with no flags uses: every parameter at
// its table default (configtable.go).
func DefaultConfig() Config {
	var c Config
	for i := range params {
		if p := &params[i]; p.def != "" && (p.ptr != nil || p.set != nil && p.unused == "") {
			if err := c.Set(p.name, p.def); err != nil {
				panic(fmt.Sprintf("config table: %s's default %q: %v", p.name, p.def, err))
			}
		}
	}
	c.NotApplied = nil
	return c
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

// parseMemory reads a redis.conf memory value: 1024, 1k, 1kb, 1m, 1mb, 1g, 1gb.
func parseMemory(s string) (int64, error) {
	if strings.HasPrefix(s, "-") || s == "" {
		return 0, fmt.Errorf("not a memory value") // memtoull refuses a sign
	}
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

// LoadFile reads a redis.conf file, as redis-server does; the file is
// the one CONFIG REWRITE updates.
func (c *Config) LoadFile(path string) error {
	if abs, err := filepath.Abs(path); err == nil {
		c.File = abs
	}
	return c.include(path)
}

// include reads a config file's lines (the include directive comes here).
func (c *Config) include(path string) error {
	if c.includes >= 16 { // a file that includes itself would never end
		return fmt.Errorf("include nested more than 16 deep")
	}
	c.includes++
	defer func() { c.includes-- }()
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("Fatal error, can't open config file '%s': %v", path, err)
	}
	return c.LoadText(string(data), "configuration file")
}

// LoadText applies config lines: a file's, or the command line's turned
// into lines. An error reads as redis-server's.
func (c *Config) LoadText(text, source string) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := resp.SplitArgs([]byte(line))
		err := fmt.Errorf("Unbalanced quotes in configuration line")
		if ok {
			if len(args) == 0 {
				continue
			}
			words := make([]string, len(args))
			for j, a := range args {
				words[j] = string(a)
			}
			err = c.Directive(words)
		}
		if err != nil {
			return fmt.Errorf("\n*** FATAL CONFIG FILE ERROR (basalt, Redis %s) ***\nReading the %s, at line %d\n>>> '%s'\n%v", RedisVersion, source, i+1, line, err)
		}
	}
	return nil
}

// fileDirectives are the directives a config file may hold that are not
// parameters, with why basalt does not apply those it does not.
var fileDirectives = map[string]string{
	"loadmodule": notModules,
	"sentinel":   "basalt has no sentinel mode; it elects its leaders with Raft",
	// config.c's deprecated directives, accepted silently.
	"list-max-ziplist-entries": "",
	"list-max-ziplist-value":   "",
	"lua-replicate-commands":   "",
}

// Directive applies one config line's words, name first, as
// loadServerConfigFromString does.
func (c *Config) Directive(args []string) error {
	name := strings.ToLower(args[0])
	if p := lookupParam(name); p != nil {
		if p.flags&multiArg == 0 && len(args) != 2 || len(args) < 2 {
			return fmt.Errorf("wrong number of arguments")
		}
		return c.Set(name, strings.Join(args[1:], " "))
	}
	switch why, known := fileDirectives[name]; {
	case name == "include" && len(args) == 2:
		return c.include(args[1])
	case name == "rename-command" && len(args) == 3:
		return c.renameCommand(args[1], args[2])
	case name == "user" && len(args) >= 2:
		return c.addUser(args[1], args[2:])
	case name == "sentinel":
		return fmt.Errorf("sentinel directive while not in sentinel mode")
	case known && why == "" && len(args) == 2:
		return nil
	case known && why != "" && len(args) >= 2:
		c.notApplied(name)
		return nil
	case strings.Contains(name, "."): // a module's parameter
		if len(args) < 2 {
			return fmt.Errorf("Module config specified without value")
		}
		c.notApplied("loadmodule")
		return nil
	}
	return fmt.Errorf("Bad directive or wrong number of arguments")
}

// addUser checks a "user" line as Redis does (ACLAppendUserForLoading);
// the server creates the users at start.
func (c *Config) addUser(name string, rules []string) error {
	for _, d := range c.Users {
		if d.Name == name {
			return fmt.Errorf("Duplicate user '%s' found", name)
		}
	}
	if _, err := acl.Edit(nil, name, rules, false); err != nil {
		return fmt.Errorf("Error in user declaration '%s': %s", name, strings.TrimPrefix(err.Error(), "Error in ACL SETUSER modifier "))
	}
	c.Users = append(c.Users, acl.Definition{Name: name, Rules: rules})
	return nil
}

// renameCommand checks a rename-command line as Redis does; the server
// renames at start (command.Rename).
func (c *Config) renameCommand(from, to string) error {
	renamed := map[string]string{} // names the earlier lines moved: old → new
	for _, r := range c.RenameCommands {
		renamed[r[0]], renamed[r[1]] = "", r[0]
	}
	exists := func(name string) bool {
		if orig, ok := renamed[strings.ToLower(name)]; ok {
			return orig != ""
		}
		return command.Lookup([]byte(name)) != nil
	}
	if !exists(from) {
		return fmt.Errorf("No such command in rename-command")
	}
	if to != "" && exists(to) {
		return fmt.Errorf("Target command name already exists")
	}
	c.RenameCommands = append(c.RenameCommands, [2]string{strings.ToLower(from), strings.ToLower(to)})
	return nil
}

func (c *Config) notApplied(name string) {
	if !slices.Contains(c.NotApplied, name) {
		c.NotApplied = append(c.NotApplied, name)
	}
}

// WhyNotApplied says why basalt does not apply a directive NotApplied lists.
func WhyNotApplied(name string) string {
	if p := lookupParam(name); p != nil {
		return p.unused
	}
	return fileDirectives[name]
}

// Trust settings (docs/replication.md, "What a node trusts"): the cluster
// secret and TLS between nodes are given at start only, and CONFIG GET
// does not show the secret.

// minSecret is the shortest cluster secret accepted: a handshake seen on
// the network lets one guess a secret offline.
const minSecret = 16

func setClusterSecret(c *Config, value string) error {
	if len(value) < minSecret {
		return fmt.Errorf("the cluster secret must be at least %d characters", minSecret)
	}
	c.ClusterSecret = value
	return nil
}

func setClusterSecretFile(c *Config, value string) error {
	b, err := os.ReadFile(value)
	if err != nil {
		return err
	}
	if err := setClusterSecret(c, strings.TrimSpace(string(b))); err != nil {
		return fmt.Errorf("%s: %v", value, err)
	}
	c.SecretFile = value
	return nil
}
