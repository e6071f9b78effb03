package compat

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// The dangerous surfaces, guarded as redis-server 7.0.15 guards them
// (docs/operations.md, "Dangerous commands"): DEBUG, MODULE LOAD, LOADEX
// and UNLOAD, and CONFIG SET of the protected parameters, refused unless
// enable-debug-command, enable-module-command or enable-protected-configs
// allows them; and the parameters that name files, which no client may
// change.

// TestProtectedSurfaces compares the refusals with redis-server's, both
// at their defaults (testutil turns DEBUG on for basalt: off here).
func TestProtectedSurfaces(t *testing.T) {
	redis := testutil.StartRedis(t)
	basalt := testutil.StartBasalt(t, "", "--enable-debug-command", "no")
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	d.Run(`
		CONFIG GET enable-debug-command
		@unordered CONFIG GET enable-*
		DEBUG SLEEP 0
		DEBUG DIGEST
		debug reload
		DEBUG
		MODULE LOAD /nonexistent.so
		MODULE UNLOAD ReJSON
		MODULE LOAD
		MODULE HELP x
		CONFIG SET dir /tmp
		CONFIG SET dbfilename x.rdb
		CONFIG SET maxclients 100 dbfilename x.rdb
		CONFIG SET dbfilename x.rdb nosuch 1
		CONFIG SET nosuch 1 dir /tmp
		CONFIG GET dbfilename
		CONFIG SET enable-protected-configs yes
		CONFIG SET enable-debug-command local
		CONFIG SET enable-module-command yes
		CONFIG SET logfile /tmp/x.log
		CONFIG SET pidfile /tmp/x.pid
		CONFIG SET aclfile /tmp/users.acl
		CONFIG SET unixsocket /tmp/x.sock
		CONFIG SET cluster-config-file /tmp/nodes.conf
		CONFIG SET appendfilename x.aof
		CONFIG SET appenddirname /tmp
		MULTI
		DEBUG SLEEP 0
		EXEC
	`)
	// Refused calls count as rejected, as Redis counts them.
	want, got := d.DoBoth("INFO", "commandstats")
	if w, g := rejectedCalls(want.Str, "debug"), rejectedCalls(got.Str, "debug"); w != g || w == "" {
		t.Errorf("DEBUG's rejected_calls: redis %q, basalt %q", w, g)
	}

	// Redis checks before authentication: a client that has not
	// authenticated learns DEBUG is off, and nothing else.
	d.Run("CONFIG SET requirepass secret")
	d = testutil.NewDiff(t, redis.Addr, basalt.Addr)
	d.Run(`
		DEBUG SLEEP 0
		MODULE UNLOAD x
		MODULE LIST
		CONFIG SET dbfilename x.rdb
		AUTH secret
		DEBUG SLEEP 0
	`)
}

// rejectedCalls returns the rejected_calls of a command's INFO
// commandstats line.
func rejectedCalls(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":"); ok {
			for _, f := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(f, "rejected_calls="); ok {
					return v
				}
			}
		}
	}
	return ""
}

// TestProtectedLocal: "local" lets clients on 127.0.0.1 through and no
// other, "yes" every client; a client from 127.0.0.2 (loopback, but not
// local to Redis) shows the difference.
func TestProtectedLocal(t *testing.T) {
	args := []string{"--enable-debug-command", "local", "--enable-module-command", "yes", "--enable-protected-configs", "local", "--protected-mode", "no"}
	socks := t.TempDir()
	redis := testutil.StartRedis(t, append(args, "--unixsocket", filepath.Join(socks, "redis.sock"))...)
	basalt := testutil.StartBasalt(t, "", append(args, "--unixsocket", filepath.Join(socks, "basalt.sock"))...)
	missing := filepath.Join(t.TempDir(), "missing.so")
	script := [][]string{
		{"DEBUG", "SLEEP", "0"},
		{"MODULE", "LOAD", missing},
		{"MODULE", "LOADEX", missing, "CONFIG", "a", "b"},
		{"MODULE", "UNLOAD", "nosuch"},
		{"CONFIG", "SET", "dbfilename", "x.rdb"},
		{"CONFIG", "SET", "dbfilename", "../x.rdb"},
		{"CONFIG", "GET", "dbfilename"},
	}
	for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
		w, g := testutil.DialFrom(t, redis.Addr, from), testutil.DialFrom(t, basalt.Addr, from)
		for _, cmd := range script {
			if err := testutil.Compare(cmd, w.Do(cmd...), g.Do(cmd...)); err != nil {
				t.Errorf("from %s: %v", from, err)
			}
		}
	}
	// The unix socket is local.
	w, g := testutil.DialUnix(t, filepath.Join(socks, "redis.sock")), testutil.DialUnix(t, filepath.Join(socks, "basalt.sock"))
	for _, cmd := range script[:1] {
		if err := testutil.Compare(cmd, w.Do(cmd...), g.Do(cmd...)); err != nil {
			t.Errorf("over the unix socket: %v", err)
		}
	}

	// Protected mode, too, serves only local clients.
	for _, p := range []*testutil.Proc{redis, basalt} {
		testutil.Dial(t, p.Addr).Do("CONFIG", "SET", "protected-mode", "yes")
	}
	w, g = testutil.DialFrom(t, redis.Addr, "127.0.0.2"), testutil.DialFrom(t, basalt.Addr, "127.0.0.2")
	if err := testutil.Compare([]string{"PING"}, w.Do("PING"), g.Do("PING")); err != nil {
		t.Errorf("protected mode, from 127.0.0.2: %v", err)
	}

	// Where basalt differs: its dir holds its data and is set at start
	// only, so allowed or not it never changes (Redis would chdir).
	c := testutil.Dial(t, basalt.Addr)
	if r := c.Do("CONFIG", "SET", "dir", t.TempDir()); r.Str != "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config" {
		t.Errorf("CONFIG SET dir with enable-protected-configs local: %v", r)
	}
	// RedisJSON's commands are built in: unloading it fails as it fails
	// in Redis, for its data type.
	if r := c.Do("MODULE", "UNLOAD", "ReJSON"); r.Str != "ERR Error unloading module: the module exports one or more module-side data types, can't unload" {
		t.Errorf("MODULE UNLOAD ReJSON: %v", r)
	}
}

// TestNothingWritesOutsideDir tries, with every protection turned off,
// each way a client could name a file, and checks that nothing appears
// outside basalt's --dir.
func TestNothingWritesOutsideDir(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--enable-debug-command", "yes", "--enable-module-command", "yes", "--enable-protected-configs", "yes")
	outside := t.TempDir()
	parent := filepath.Dir(b.Dir)
	before := dirNames(t, parent)
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v")
	// The tls-* files may change at run time, as in Redis: they are only
	// read (TLS's reload), and nothing below may appear outside.
	for _, name := range []string{"tls-cert-file", "tls-key-file", "tls-ca-cert-file"} {
		c.Do("CONFIG", "SET", name, filepath.Join(outside, "x"))
	}
	for _, name := range []string{"dir", "logfile", "pidfile", "aclfile", "unixsocket", "cluster-config-file", "appenddirname",
		"cluster-secret-file", "raft-addr", "metrics-addr", "include"} {
		if r := c.Do("CONFIG", "SET", name, filepath.Join(outside, "x")); !r.IsError() {
			t.Errorf("CONFIG SET %s %s: %v", name, outside, r)
		}
	}
	for _, name := range []string{filepath.Join(outside, "dump.rdb"), "../escape.rdb", "a/b.rdb", "..", "."} {
		r := c.Do("CONFIG", "SET", "dbfilename", name)
		if strings.Contains(name, "/") != r.IsError() {
			t.Errorf("CONFIG SET dbfilename %s: %v", name, r)
		}
		if r := c.Do("SAVE"); !r.IsError() && (name == ".." || name == ".") {
			t.Errorf("SAVE to dbfilename %s: %v", name, r)
		}
	}
	for _, cmd := range [][]string{
		{"MODULE", "LOAD", filepath.Join(outside, "x.so")},
		{"DEBUG", "RELOAD"},
		{"DEBUG", "JMAP"},
		{"CONFIG", "REWRITE"}, // no config file: nothing to rewrite
		{"ACL", "SAVE"},
		{"EVAL", "return io.open('" + filepath.Join(outside, "lua") + "', 'w')", "0"},
		{"EVAL", "return os.execute('touch " + filepath.Join(outside, "lua") + "')", "0"},
		{"EVAL", "return dofile('" + filepath.Join(outside, "lua") + "')", "0"},
	} {
		if r := c.Do(cmd...); !r.IsError() {
			t.Errorf("%v: %v", cmd, r)
		}
	}
	c.Do("CONFIG", "SET", "dbfilename", "dump.rdb")
	if r := c.Do("BGSAVE"); r.IsError() {
		t.Errorf("BGSAVE: %v", r)
	}
	waitBgsave(t, c)
	if names := dirNames(t, outside); len(names) > 0 {
		t.Errorf("files written outside --dir: %v", names)
	}
	if after := dirNames(t, parent); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("--dir's parent changed: %v, then %v", before, after)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "dump.rdb")); err != nil {
		t.Errorf("the RDB file in --dir: %v", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestPprofLoopbackOnly: Go's profiler (which shows the heap's contents)
// is served only with --pprof, a command-line flag, on a loopback
// address; the metrics listener does not serve it.
func TestPprofLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:1", "[::]:1", "192.0.2.1:1", ":1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, testutil.BasaltBinary(t), "--pprof", addr, "--port", "0", "--dir", t.TempDir()).CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "is not a loopback address") {
			t.Errorf("basalt --pprof %s: %v\n%s", addr, err, out)
		}
	}
	metrics := testutil.FreePort(t)
	b := testutil.StartBasalt(t, "", "--metrics-addr", "127.0.0.1:"+strconv.Itoa(metrics))
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(metrics) + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the metrics listener's /debug/pprof/: %s", resp.Status)
	}
	c := testutil.Dial(t, b.Addr)
	if r := c.Do("CONFIG", "SET", "pprof", "127.0.0.1:1"); r.Str != "ERR Unknown option or number of arguments for CONFIG SET - 'pprof'" {
		t.Errorf("CONFIG SET pprof: %v", r)
	}
}
