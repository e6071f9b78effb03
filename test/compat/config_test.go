package compat

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Configuration as redis-server takes it: Debian's stock redis.conf,
// CONFIG GET/SET with Redis's names, aliases and errors, and the
// directives basalt applies (bind, unixsocket, timeout, rename-command,
// pidfile, logfile) checked on a running server.

const stockConf = "/etc/redis/redis.conf"

// basaltParams are the parameters basalt has and Redis 7.0 has not
// (docs/configuration.md lists them).
var basaltParams = []string{"gomaxprocs", "log-retain", "log-retain-bytes", "cache-size", "meta-cache-size",
	"node-id", "raft-addr", "initial-cluster", "join", "metrics-addr", "log-format", "script-maxmemory",
	"cluster-shards", "cluster-replicas", "cluster-proxy", "cluster-max-clock-offset", "debug-clock-offset-ms"}

// startPositional runs basalt as redis-server is run: the config file
// first, then flags. It returns the process's output so far, read on
// demand, and stops the process (by its PID) at the end of the test.
func startPositional(t *testing.T, args ...string) (port int, output func() string) {
	t.Helper()
	port = testutil.FreePort(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "out.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args = append(args, "--port", strconv.Itoa(port), "--dir", filepath.Join(dir, "data"))
	cmd := exec.Command(testutil.BasaltBinary(t), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	output = func() string { b, _ := os.ReadFile(logPath); return string(b) }
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return port, output
		}
		select {
		case <-done:
			t.Fatalf("basalt %v exited:\n%s", args, output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("basalt %v does not listen:\n%s", args, output())
		}
	}
}

// Debian's redis.conf, unchanged, starts basalt as a positional file; only
// the port and dir and the paths that Debian's service owns (pidfile,
// logfile) are given as flags.
func TestConfigStockRedisConf(t *testing.T) {
	if _, err := os.Stat(stockConf); err != nil {
		t.Fatalf("%s: %v (apt-get install -y redis-server)", stockConf, err)
	}
	pidfile := filepath.Join(t.TempDir(), "basalt.pid")
	port, output := startPositional(t, stockConf, "--logfile", "", "--pidfile", pidfile)
	c := testutil.Dial(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if r := c.Do("SET", "k", "v"); r.String() != "+OK" {
		t.Fatalf("SET: %v", r)
	}
	for name, want := range map[string]string{
		"bind": "127.0.0.1 -::1", "appendfsync": "everysec", "port": strconv.Itoa(port), "daemonize": "yes",
		"hash-max-listpack-entries": "512", "client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"proc-title-template": "{title} {listen-addr} {server-mode}", "notify-keyspace-events": "", "oom-score-adj-values": "0 200 800",
	} {
		if got := c.Do("CONFIG", "GET", name).Elems; len(got) != 2 || got[1].Str != want {
			t.Errorf("CONFIG GET %s = %v, want %q", name, got, want)
		}
	}
	if b, err := os.ReadFile(pidfile); err != nil || strings.TrimSpace(string(b)) == "" {
		t.Errorf("pidfile %s: %q %v", pidfile, b, err)
	}
	// One line for each directive basalt accepts without applying it.
	out := output()
	for _, name := range []string{"daemonize", "rdbcompression", "lazyfree-lazy-eviction", "jemalloc-bg-thread"} {
		if n := strings.Count(out, "directive="+name+" "); n != 1 {
			t.Errorf("%d log lines for %s, want 1:\n%s", n, name, out)
		}
	}
}

// A malformed value stops startup with Redis's message; an unknown
// directive too.
func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ line, want string }{
		{"timeout abc", "argument couldn't be parsed into an integer"},
		{"maxmemory -1", "argument must be a memory value"},
		{"maxmemory-policy lots", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{"port 1 2", "wrong number of arguments"},
		{"no-such-directive 1", "Bad directive or wrong number of arguments"},
		{"rename-command nosuch foo", "No such command in rename-command"},
		{"save 100", "Invalid save parameters"},
	} {
		conf := filepath.Join(dir, "bad.conf")
		if err := os.WriteFile(conf, []byte("# a comment\n"+tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, bin := range []string{"redis-server", testutil.BasaltBinary(t)} {
			out, err := exec.Command(bin, conf, "--port", "0", "--dir", dir).CombinedOutput()
			if err == nil {
				t.Errorf("%s with %q started", bin, tc.line)
				continue
			}
			s := string(out)
			if !strings.Contains(s, "at line 2\n>>> '"+tc.line+"'\n"+tc.want) {
				t.Errorf("%s with %q says:\n%s\nwant %q", filepath.Base(bin), tc.line, s, tc.want)
			}
		}
	}
}

// CONFIG GET * lists every Redis 7.0 parameter and alias, and basalt's own
// besides.
func TestConfigNames(t *testing.T) {
	d := testutil.NewPairDiff(t)
	names := func(c *testutil.Conn) []string {
		var out []string
		for i, r := range c.Do("CONFIG", "GET", "*").Elems {
			if i%2 == 0 {
				out = append(out, r.Str)
			}
		}
		slices.Sort(out)
		return out
	}
	want, got := names(d.Want), names(d.Got)
	for _, n := range want {
		if !slices.Contains(got, n) {
			t.Errorf("basalt's CONFIG GET * lacks %s", n)
		}
	}
	for _, n := range got {
		if !slices.Contains(want, n) && !slices.Contains(basaltParams, n) {
			t.Errorf("basalt's CONFIG GET * has %s, which Redis has not and basaltParams does not list", n)
		}
	}
}

// CONFIG SET and GET of Redis's names and aliases, with Redis's errors.
func TestConfigSetGet(t *testing.T) {
	d := testutil.NewPairDiff(t)
	d.Run(`
		CONFIG SET hash-max-ziplist-value 128
		CONFIG GET hash-max-ziplist-value
		CONFIG GET hash-max-listpack-value
		@unordered CONFIG GET *ziplist*
		@unordered CONFIG GET hash-max-*
		CONFIG SET hash-max-ziplist-entries 1k
		CONFIG SET hash-max-ziplist-value 1kb
		CONFIG GET hash-max-ziplist-value
		CONFIG SET list-max-ziplist-size -3
		CONFIG GET list-max-listpack-size
		CONFIG SET list-max-ziplist-size x
		CONFIG SET set-max-intset-entries 1000
		CONFIG GET set-max-intset-entries
		CONFIG SET zset-max-ziplist-entries 64 zset-max-ziplist-value 32
		@unordered CONFIG GET zset-max-*
		CONFIG SET zset-max-ziplist-entries 1 zset-max-listpack-entries 2
		CONFIG SET stream-node-max-bytes 8kb stream-node-max-entries 50 hll-sparse-max-bytes 2000
		@unordered CONFIG GET stream-node-max-bytes stream-node-max-entries hll-sparse-max-bytes
		CONFIG SET maxmemory 100mb
		CONFIG GET maxmemory
		CONFIG SET maxmemory -1
		CONFIG SET maxmemory 10x
		CONFIG SET maxmemory 0
		CONFIG SET maxmemory-policy allkeys-lru
		CONFIG GET maxmemory-policy
		CONFIG SET maxmemory-policy VOLATILE-TTL
		CONFIG GET maxmemory-policy
		CONFIG SET maxmemory-policy lots
		CONFIG SET maxmemory-samples 0
		CONFIG SET maxmemory-clients 10%
		CONFIG GET maxmemory-clients
		CONFIG SET maxmemory-clients 200%
		CONFIG SET maxmemory-clients 1mb
		CONFIG GET maxmemory-clients
		CONFIG SET maxmemory-clients 0
		CONFIG SET save "900 1 300 10"
		CONFIG GET save
		CONFIG SET save 900
		CONFIG SET save "900 x"
		CONFIG SET save ""
		CONFIG GET save
		CONFIG SET min-replicas-to-write 1
		CONFIG GET min-slaves-to-write
		CONFIG SET min-slaves-max-lag 20
		CONFIG GET min-replicas-max-lag
		CONFIG SET min-replicas-to-write -1
		CONFIG SET min-replicas-to-write 0 min-slaves-max-lag 10
		CONFIG SET timeout 100
		CONFIG GET timeout
		CONFIG SET timeout -1
		CONFIG SET timeout 0
		CONFIG SET tcp-keepalive 60
		CONFIG GET tcp-keepalive
		CONFIG SET loglevel verbose
		CONFIG GET loglevel
		CONFIG SET loglevel loud
		CONFIG SET loglevel notice
		CONFIG SET hz 20
		CONFIG GET hz
		CONFIG SET lazyfree-lazy-user-del yes
		CONFIG GET lazyfree-lazy-user-del
		CONFIG SET lazyfree-lazy-user-del maybe
		CONFIG SET slave-read-only no
		CONFIG GET replica-read-only
		CONFIG GET slave-read-only
		CONFIG SET replica-priority 10
		CONFIG GET slave-priority
		CONFIG SET oom-score-adj-values "0 100 800"
		CONFIG GET oom-score-adj-values
		CONFIG SET oom-score-adj-values "0 100"
		CONFIG SET oom-score-adj-values "0 100 9000"
		CONFIG SET shutdown-on-sigterm "nosave now"
		CONFIG GET shutdown-on-sigterm
		CONFIG SET shutdown-on-sigterm bad
		CONFIG SET repl-diskless-load swapdb
		CONFIG GET repl-diskless-load
		CONFIG SET acl-pubsub-default allchannels
		CONFIG GET acl-pubsub-default
		CONFIG SET lua-time-limit 100
		CONFIG GET busy-reply-threshold
		CONFIG SET busy-reply-threshold 5000
		CONFIG SET daemonize yes
		CONFIG SET unixsocketperm 700
		CONFIG SET io-threads 4
		CONFIG SET aclfile /tmp/x
		CONFIG SET logfile /tmp/x
		CONFIG SET pidfile /tmp/x
		CONFIG SET unixsocket /tmp/x
		CONFIG SET syslog-enabled yes
		CONFIG SET supervised systemd
		CONFIG GET daemonize
		CONFIG GET syslog-facility
		CONFIG GET unixsocketperm
		CONFIG GET tcp-backlog
		CONFIG GET tls-port
		CONFIG GET tls-auth-clients
		CONFIG SET tls-session-cache-size 100
		CONFIG GET tls-session-cache-size
		CONFIG SET active-defrag-cycle-max 100
		CONFIG SET active-defrag-threshold-lower 20
		CONFIG SET proto-max-bulk-len 1k
		CONFIG SET client-query-buffer-limit 2mb
		CONFIG GET client-query-buffer-limit
		CONFIG SET client-query-buffer-limit 1
		CONFIG SET tracking-table-max-keys 10
		CONFIG GET tracking-table-max-keys
		CONFIG SET replica-announce-port 70000
		CONFIG SET enable-debug-command yes
		CONFIG SET hz 10 timeout 0 lazyfree-lazy-user-del no slave-read-only yes replica-priority 100 set-max-intset-entries 512
	`)
}

// rename-command in the config file: the old name is unknown, the new one
// runs the command, "" removes it; as in redis-server.
func TestConfigRenameCommand(t *testing.T) {
	r := testutil.StartRedis(t, "--rename-command", "config", "myconfig", "--rename-command", "flushall", "")
	b := testutil.StartBasalt(t, "", "--rename-command", "config", "myconfig", "--rename-command", "flushall", "")
	d := testutil.NewDiff(t, r.Addr, b.Addr)
	d.Run(`
		CONFIG GET port
		FLUSHALL
		config get maxclients
		MYCONFIG GET maxclients
		myconfig SET maxclients 100
		MYCONFIG GET maxclients
		SET k v
		GET k
	`)
}

// bind with several addresses (IPv6 too, where this machine has ::1)
// and a unix socket with its permissions: each serves.
func TestConfigBindUnixSocket(t *testing.T) {
	second := "127.0.0.2"
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		second = "::1"
	}
	sock := filepath.Join(t.TempDir(), "basalt.sock")
	b := testutil.StartBasalt(t, "", "--bind", "127.0.0.1 "+second, "--unixsocket", sock, "--unixsocketperm", "700")
	for _, addr := range []string{b.Addr, net.JoinHostPort(second, strconv.Itoa(b.Port))} {
		c := testutil.Dial(t, addr)
		if r := c.Do("PING"); r.String() != "+PONG" {
			t.Errorf("PING on %s: %v", addr, r)
		}
	}
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("unix socket mode %v, want a socket with 0700", fi.Mode())
	}
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write(testutil.Command("SET", "via", "unix"))
	rd := bufio.NewReader(nc)
	line, _ := rd.ReadString('\n')
	if line != "+OK\r\n" {
		t.Errorf("SET over the unix socket: %q", line)
	}
	// CLIENT INFO names the socket as Redis does: its path, port 0.
	nc.Write(testutil.Command("CLIENT", "INFO"))
	rd.ReadString('\n') // the bulk's length
	line, _ = rd.ReadString('\n')
	if want := " addr=" + sock + ":0 laddr=" + sock + ":0 fd="; !strings.Contains(line, want) {
		t.Errorf("CLIENT INFO over the unix socket: %q, want %q", line, want)
	}
	g := testutil.Dial(t, b.Addr)
	if r := g.Do("GET", "via"); r.Str != "unix" {
		t.Errorf("GET via: %v", r)
	}
	if r := g.Do("CONFIG", "GET", "bind"); len(r.Elems) != 2 || r.Elems[1].Str != "127.0.0.1 "+second {
		t.Errorf("CONFIG GET bind: %v", r)
	}
}

// timeout closes an idle client, not a subscribed one nor one that keeps
// talking.
func TestConfigTimeout(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--timeout", "2")
	idle := testutil.Dial(t, b.Addr)
	busy := testutil.Dial(t, b.Addr)
	sub := testutil.Dial(t, b.Addr)
	sub.Do("SUBSCRIBE", "ch")
	for i := 0; i < 16; i++ { // 4 s: twice the timeout
		time.Sleep(250 * time.Millisecond)
		if r := busy.Do("PING"); r.String() != "+PONG" {
			t.Fatalf("a client sending a command every 250ms was closed: %v", r)
		}
	}
	if _, err := idle.DoErr("PING"); err == nil {
		t.Error("a client idle for twice the timeout is still served")
	}
	if r := busy.Do("PUBLISH", "ch", "hi"); r.Int != 1 {
		t.Errorf("the subscribed client was closed: PUBLISH reached %v", r)
	}
	// CONFIG SET timeout 0 turns it off for the next waits.
	busy.Do("CONFIG", "SET", "timeout", "0")
	time.Sleep(2500 * time.Millisecond)
	if r := busy.Do("PING"); r.String() != "+PONG" {
		t.Errorf("closed after timeout 0: %v", r)
	}
}

// pidfile, logfile and the JSON log.
func TestConfigPidLogFiles(t *testing.T) {
	dir := t.TempDir()
	pid, logf := filepath.Join(dir, "b.pid"), filepath.Join(dir, "b.log")
	b := testutil.StartBasalt(t, "", "--pidfile", pid, "--logfile", logf, "--log-format", "json", "--loglevel", "verbose", "--daemonize", "yes")
	got, err := os.ReadFile(pid)
	if err != nil || strings.TrimSpace(string(got)) != strconv.Itoa(b.Pid()) {
		t.Errorf("pidfile holds %q (%v), want %d", got, err, b.Pid())
	}
	// loglevel changes at run time: a verbose line, then none.
	c := testutil.Dial(t, b.Addr)
	c.Do("CONFIG", "SET", "hz", "20")
	c.Do("CONFIG", "SET", "loglevel", "notice")
	c.Do("CONFIG", "SET", "hz", "30")
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("pidfile left after exit: %v", err)
	}
	text, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		seen[rec["msg"].(string)+"/"+rec["level"].(string)]++
	}
	for _, want := range []string{"basalt ready/notice", "config: accepted, not applied/notice", "bye/notice"} {
		if seen[want] == 0 {
			t.Errorf("no %q line in the log:\n%s", want, text)
		}
	}
	if n := seen["config set: not applied/verbose"]; n != 1 {
		t.Errorf("%d verbose lines of CONFIG SET hz, want 1 (the one before loglevel notice):\n%s", n, text)
	}
}

// /metrics serves redis_exporter's names and basalt's own.
func TestConfigMetrics(t *testing.T) {
	port := testutil.FreePort(t)
	b := testutil.StartBasalt(t, "", "--metrics-addr", "127.0.0.1:"+strconv.Itoa(port))
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v")
	c.Do("GET", "k")
	c.Do("SCRIPT", "LOAD", "return 1")
	scrape := func() string { return testutil.Metrics(t, port) }
	value := func(text, name string) float64 {
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		t.Fatalf("/metrics lacks %s", name)
		return 0
	}
	text := scrape()
	for _, want := range []string{
		"redis_up 1", "redis_connected_clients 1", `redis_commands_total{cmd="set"} 1`, `redis_db_keys{db="db0"} 1`,
		"redis_commands_processed_total ", "redis_connections_received_total ", "redis_keyspace_hits_total ", "redis_keyspace_misses_total ",
		"redis_memory_used_bytes ", "redis_memory_max_bytes 0", "redis_number_of_cached_scripts 1", "redis_connected_slaves 0",
		`redis_instance_info{master_replid=`, `role="master"`, "redis_aof_last_write_status 1", "redis_uptime_in_seconds ",
		"basalt_raft_term ", "basalt_records_applied_total ", "basalt_log_syncs_total ", "basalt_raft_apply_lag ",
		"basalt_raft_leader_changes_total 1", "basalt_raft_snapshots_sent_total 0", `basalt_log_sync_seconds_bucket{shard="0",le="0.001"} `,
		"basalt_raft_clock_max_offset_ms 500", "basalt_raft_clock_offset_ms 0", "basalt_raft_clock_may_lead 1",
		`basalt_group_commit_records_bucket{shard="0",le="+Inf"} `, "basalt_disk_used_bytes ",
		`basalt_pebble_compactions_total{shard="0"} `, `basalt_pebble_write_stalls_total{shard="0"} 0`, `basalt_pebble_l0_files{shard="0"} `, `basalt_pebble_block_cache_hits_total{shard="0"} `, "go_goroutines ", "process_resident_memory_bytes ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The figures move under writes.
	for i := 0; i < 50; i++ {
		c.Do("SET", "k"+strconv.Itoa(i), "v")
	}
	after := scrape()
	for _, name := range []string{"basalt_records_applied_total", "basalt_log_syncs_total", "basalt_raft_commit_index", "redis_commands_processed_total",
		`basalt_log_sync_seconds_count{shard="0"}`, `basalt_group_commit_records_count{shard="0"}`} {
		if v0, v1 := value(text, name), value(after, name); v1 < v0+50 {
			t.Errorf("%s went from %v to %v over 50 writes", name, v0, v1)
		}
	}
}

// tcp-keepalive sets the probes of accepted connections (ss shows the
// timer); 0 turns them off for the next connections.
func TestConfigKeepAlive(t *testing.T) {
	if _, err := exec.LookPath("ss"); err != nil {
		t.Skip("ss (iproute2) is not installed")
	}
	b := testutil.StartBasalt(t, "", "--tcp-keepalive", "77")
	// timer is ss's timer of a new connection's server side, once no
	// reply is in flight (that shows the retransmission timer instead).
	timer := func() string {
		nc, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		nc.Write(testutil.Command("PING"))
		io.ReadFull(nc, make([]byte, 7))
		_, cport, _ := net.SplitHostPort(nc.LocalAddr().String())
		var out []byte
		for i := 0; i < 50; i++ {
			out, err = exec.Command("ss", "-tnoH", "state", "established", "( sport = :"+strconv.Itoa(b.Port)+" and dport = :"+cport+" )").CombinedOutput()
			if err != nil {
				t.Fatalf("ss: %v %s", err, out)
			}
			if !strings.Contains(string(out), "timer:(on") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		return string(out)
	}
	if out := timer(); !strings.Contains(out, "keepalive,1min1") {
		t.Errorf("with tcp-keepalive 77, ss shows %q", out)
	}
	testutil.Dial(t, b.Addr).Do("CONFIG", "SET", "tcp-keepalive", "0")
	if out := timer(); strings.Contains(out, "keepalive") {
		t.Errorf("with tcp-keepalive 0, ss shows %q", out)
	}
}

// maxmemory bounds the caches at start and shows in INFO.
func TestConfigMaxmemory(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	c := testutil.Dial(t, b.Addr)
	for name, want := range map[string]string{"maxmemory": "67108864", "maxmemory-policy": "allkeys-lru",
		"cache-size": "33554432", "meta-cache-size": "8388608"} {
		if got := c.Do("CONFIG", "GET", name).Elems; len(got) != 2 || got[1].Str != want {
			t.Errorf("CONFIG GET %s = %v, want %s", name, got, want)
		}
	}
	_, info := parseInfo(t, c.Do("INFO", "memory"))
	if m := info["Memory"]; m["maxmemory"] != "67108864" || m["maxmemory_human"] != "64.00M" || m["maxmemory_policy"] != "allkeys-lru" {
		t.Errorf("INFO memory: maxmemory %q %q, policy %q", m["maxmemory"], m["maxmemory_human"], m["maxmemory_policy"])
	}
	// Writes never fail for memory: the data is on disk.
	big := strings.Repeat("x", 1<<20)
	for i := 0; i < 80; i++ {
		if r := c.Do("SET", "k"+strconv.Itoa(i), big); r.String() != "+OK" {
			t.Fatalf("SET %d: %v", i, r)
		}
	}
}

// CONFIG REWRITE replaces the lines of the parameters set (an alias's
// under the parameter's name) and appends the others; a restart reads
// them back.
func TestConfigRewrite(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "basalt.conf")
	orig := "# basalt\nhash-max-ziplist-entries 100\ntimeout 0\nrename-command flushall \"\"\n"
	if err := os.WriteFile(conf, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	b := testutil.StartBasalt(t, "", "--config", conf)
	c := testutil.Dial(t, b.Addr)
	expectOK := func(args ...string) {
		t.Helper()
		if r := c.Do(args...); r.String() != "+OK" {
			t.Fatalf("%v: %v", args, r)
		}
	}
	expectOK("CONFIG", "SET", "hash-max-ziplist-entries", "200", "timeout", "5", "maxmemory-policy", "allkeys-lru", "proc-title-template", "{title} x")
	expectOK("CONFIG", "REWRITE")
	got, _ := os.ReadFile(conf)
	for _, want := range []string{"# basalt\nhash-max-listpack-entries 200\ntimeout 5\nrename-command flushall \"\"\n# Generated by CONFIG REWRITE\n",
		"\nmaxmemory-policy allkeys-lru\n", "\nproc-title-template \"{title} x\"\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, got)
		}
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	b.Restart(t)
	c = testutil.Dial(t, b.Addr)
	if r := c.Do("CONFIG", "GET", "timeout").Elems; len(r) != 2 || r[1].Str != "5" {
		t.Errorf("after a restart, CONFIG GET timeout: %v", r)
	}
	if r := c.Do("CONFIG", "GET", "proc-title-template").Elems; len(r) != 2 || r[1].Str != "{title} x" {
		t.Errorf("after a restart, CONFIG GET proc-title-template: %v", r)
	}
}

// --version and --help answer as redis-server's do, in basalt's words.
func TestConfigVersionHelp(t *testing.T) {
	bin := testutil.BasaltBinary(t)
	for flag, want := range map[string]string{"--version": "basalt server v=", "-v": "redis=7.0.15", "--help": "Usage: basalt [/path/to/redis.conf] [options] [-]", "-h": "basalt --port 7777"} {
		out, err := exec.Command(bin, flag).CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("basalt %s: %v\n%s\nwant %q", flag, err, out, want)
		}
	}
}

// supervised systemd tells systemd when basalt serves, as redis-server
// does: a Type=notify unit (Debian's) waits for READY=1.
func TestConfigSupervisedSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	testutil.StartBasalt(t, "", "--supervised", "systemd")
	ln.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	n, _, err := ln.ReadFrom(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "READY=1\n") {
		t.Errorf("systemd got %q, %v; want READY=1", buf[:n], err)
	}
}
