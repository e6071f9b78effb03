package compat

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// redis-cli --rdb and --functions-rdb take a snapshot over the replication
// handshake (REPLCONF rdb-only 1, SYNC). The file they write from basalt
// must load in redis-server with every key, as SAVE's does (save_test.go).

// cliRDB runs redis-cli against addr with mode (--rdb or --functions-rdb)
// writing file, and returns its output; it fails t unless redis-cli
// succeeds within a minute.
func cliRDB(t *testing.T, addr, mode, file string) string {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", "-h", host, "-p", port, mode, file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Transfer finished with success") {
		t.Fatalf("redis-cli %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

// noTempFiles fails t if a snapshot's temporary file is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, "temp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestSyncRDBLoadsInRedis(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	fillAllTypes(t, c)
	time.Sleep(20 * time.Millisecond) // "gone" is expired, deleted or not

	dir := t.TempDir()
	out := cliRDB(t, b.Addr, "--rdb", filepath.Join(dir, "dump.rdb"))
	if !strings.Contains(out, "sending REPLCONF rdb-only 1") {
		t.Errorf("redis-cli did not ask for the RDB only:\n%s", out)
	}
	r := redisOn(t, dir)
	if n := r.Do("EXISTS", "gone").Int; n != 0 {
		t.Error("the expired key was loaded")
	}
	sameData(t, r, c)
	noTempFiles(t, b.Dir)
	if _, err := os.Stat(filepath.Join(b.Dir, "dump.rdb")); err == nil {
		t.Error("SYNC wrote dump.rdb: it is SAVE's")
	}

	// --functions-rdb: the libraries and no keys.
	fdir := t.TempDir()
	out = cliRDB(t, b.Addr, "--functions-rdb", filepath.Join(fdir, "dump.rdb"))
	if !strings.Contains(out, "sending REPLCONF rdb-filter-only functions") {
		t.Errorf("redis-cli did not filter:\n%s", out)
	}
	fr := redisOn(t, fdir)
	if n := fr.Do("DBSIZE").Int; n != 0 {
		t.Errorf("the functions file holds %d keys", n)
	}
	for db := range 16 {
		fr.Do("SELECT", strconv.Itoa(db))
		if n := fr.Do("DBSIZE").Int; n != 0 {
			t.Errorf("the functions file holds %d keys in db %d", n, db)
		}
	}
	if w, g := c.Do("FUNCTION", "LIST", "WITHCODE").String(), fr.Do("FUNCTION", "LIST", "WITHCODE").String(); w != g || !strings.Contains(g, "savelib") {
		t.Errorf("FUNCTION LIST WITHCODE:\nbasalt:     %s\nfrom file:  %s", w, g)
	}

	for f, want := range map[string]int64{"sync_full": 2, "sync_partial_ok": 0, "sync_partial_err": 0} {
		if n := infoField(t, c, "stats", f); n != want {
			t.Errorf("INFO stats %s:%d, want %d", f, n, want)
		}
	}
	if n := infoField(t, c, "stats", "total_net_repl_output_bytes"); n < 100000 {
		t.Errorf("total_net_repl_output_bytes:%d after two snapshots", n)
	}
	if n := infoField(t, c, "persistence", "rdb_saves"); n != 0 {
		t.Errorf("rdb_saves:%d: a snapshot is not a save", n)
	}
}

// syncConn is a raw connection for the handshake: the snapshot is a bulk
// without its CRLF, which testutil.Conn does not read.
type syncConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialSync(t *testing.T, addr string) *syncConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	return &syncConn{t, nc, bufio.NewReader(nc)}
}

// do sends args and returns the reply's first line.
func (s *syncConn) do(args ...string) string {
	s.t.Helper()
	s.send(args...)
	return s.line()
}

func (s *syncConn) send(args ...string) {
	s.t.Helper()
	if _, err := s.nc.Write(testutil.Command(args...)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *syncConn) line() string {
	s.t.Helper()
	l, err := s.br.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading a line: %v (read %q)", err, l)
	}
	return strings.TrimSuffix(l, "\r\n")
}

// header skips the keepalive newlines and returns the snapshot's length.
func (s *syncConn) header() int {
	s.t.Helper()
	for {
		l := s.line()
		if l == "" || l == "\n" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(l, "$"))
		if err != nil || l[0] != '$' {
			s.t.Fatalf("snapshot header %q", l)
		}
		return n
	}
}

// snapshot reads n bytes of the snapshot into dir/dump.rdb, then expects
// the server to close the connection.
func (s *syncConn) snapshot(n int, dir string) {
	s.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(s.br, b); err != nil {
		s.t.Fatalf("reading %d bytes of snapshot: %v", n, err)
	}
	if !strings.HasPrefix(string(b), "REDIS0010") {
		s.t.Errorf("the snapshot starts with %.20q", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if rest, err := io.ReadAll(s.br); err != nil || len(rest) != 0 {
		s.t.Errorf("after the snapshot: %q, %v (want the connection closed)", rest, err)
	}
}

// TestPsyncRDBOnly: PSYNC from an rdb-only client is a full
// resynchronization announced with the node's replication id, then the
// snapshot, then the connection closes. rdb-filter-only "" asks for an
// empty file.
func TestPsyncRDBOnly(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v")
	c.Do("SELECT", "3")
	c.Do("HSET", "h", "f", "1")
	replid := ""
	for _, l := range strings.Split(c.Do("INFO", "replication").Str, "\r\n") {
		if v, ok := strings.CutPrefix(l, "master_replid:"); ok {
			replid = v
		}
	}
	if len(replid) != 40 {
		t.Fatalf("master_replid %q", replid)
	}

	s := dialSync(t, b.Addr)
	for _, args := range [][]string{{"REPLCONF", "listening-port", "6380"}, {"REPLCONF", "capa", "eof", "capa", "psync2"}, {"REPLCONF", "rdb-only", "1"}} {
		if r := s.do(args...); r != "+OK" {
			t.Fatalf("%q: %s", args, r)
		}
	}
	s.send("PSYNC", "?", "-1")
	if l := s.line(); l != "+FULLRESYNC "+replid+" 0" {
		t.Errorf("PSYNC: %q", l)
	}
	dir := t.TempDir()
	s.snapshot(s.header(), dir)
	r := redisOn(t, dir)
	if got := r.Do("GET", "k").Str; got != "v" {
		t.Errorf("GET k from the snapshot: %q", got)
	}
	r.Do("SELECT", "3")
	if got := r.Do("HGET", "h", "f").Str; got != "1" {
		t.Errorf("HGET h f from the snapshot: %q", got)
	}

	// A PSYNC that asks to continue gets a snapshot too, counted as a
	// partial resynchronization refused; an empty filter, an empty file.
	s = dialSync(t, b.Addr)
	s.do("REPLCONF", "rdb-only", "1")
	s.do("REPLCONF", "rdb-filter-only", "")
	s.send("PSYNC", replid, "100")
	if l := s.line(); !strings.HasPrefix(l, "+FULLRESYNC ") {
		t.Errorf("PSYNC %s 100: %q", replid, l)
	}
	dir = t.TempDir()
	s.snapshot(s.header(), dir)
	r = redisOn(t, dir)
	if n := r.Do("DBSIZE").Int; n != 0 {
		t.Errorf("the empty snapshot holds %d keys", n)
	}
	if l := r.Do("FUNCTION", "LIST"); len(l.Elems) != 0 {
		t.Errorf("the empty snapshot holds functions: %v", l)
	}
	for f, want := range map[string]int64{"sync_full": 2, "sync_partial_err": 1} {
		if n := infoField(t, c, "stats", f); n != want {
			t.Errorf("INFO stats %s:%d, want %d", f, n, want)
		}
	}
}

// TestSyncSlowReader: a client that does not read its snapshot holds
// nothing the others need: writes, reads and other snapshots go on, and
// the slow one gets the state of the instant it asked.
func TestSyncSlowReader(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	big := strings.Repeat("x", 1<<20)
	for i := range 32 { // more than the socket buffers hold
		c.Do("SET", "big"+strconv.Itoa(i), big)
	}
	slow := dialSync(t, b.Addr)
	slow.do("REPLCONF", "rdb-only", "1")
	slow.send("SYNC")
	n := slow.header() // the file is written: its instant is past
	if n < 32<<20 {
		t.Fatalf("a snapshot of %d bytes", n)
	}

	start := time.Now()
	for i := range 32 {
		c.Do("DEL", "big"+strconv.Itoa(i))
	}
	c.Do("SET", "after", "1")
	if r := c.Do("GET", "after"); r.Str != "1" {
		t.Errorf("GET after: %v", r)
	}
	dir := t.TempDir()
	cliRDB(t, b.Addr, "--rdb", filepath.Join(dir, "dump.rdb"))
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the others waited %v", took)
	}
	if n := redisOn(t, dir).Do("DBSIZE").Int; n != 1 {
		t.Errorf("the second snapshot holds %d keys, want 1", n)
	}

	sdir := t.TempDir()
	slow.snapshot(n, sdir)
	r := redisOn(t, sdir)
	if n := r.Do("DBSIZE").Int; n != 32 {
		t.Errorf("the slow snapshot holds %d keys, want the 32 of its instant", n)
	}
	if got := r.Do("STRLEN", "big31").Int; got != 1<<20 {
		t.Errorf("STRLEN big31 in the slow snapshot: %d", got)
	}
	noTempFiles(t, b.Dir)
}

// TestSyncReplies compares REPLCONF, SYNC and PSYNC's replies and errors
// with redis-server's.
func TestSyncReplies(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	for _, name := range []string{"sync", "psync", "replconf"} {
		want, got := d.DoBoth("COMMAND", "INFO", name)
		sameInfoEntry(t, want.Elems[0], got.Elems[0])
	}
	long := strings.Repeat("a", 255)
	d.Run(`
		REPLCONF
		REPLCONF x
		REPLCONF foo bar
		REPLCONF foo bar baz
		REPLCONF listening-port 1 foo bar
		REPLCONF listening-port abc
		REPLCONF listening-port -5
		REPLCONF LISTENING-PORT 99999999999
		REPLCONF ip-address 127.0.0.1
		REPLCONF ip-address ` + long + `
		REPLCONF ip-address ` + long + `a
		REPLCONF capa eof capa psync2 capa nosuch
		REPLCONF rdb-only 2
		REPLCONF rdb-only -1
		REPLCONF rdb-only x
		REPLCONF rdb-only 0
		REPLCONF rdb-filter-only ""
		REPLCONF rdb-filter-only foo
		REPLCONF rdb-filter-only "functions foo"
		REPLCONF rdb-filter-only "\"x"
		REPLCONF rdb-filter-only "FUNCTIONS 'functions'"
		SYNC x
		PSYNC
		PSYNC ?
		PSYNC ? -1 FAILOVER
		MULTI
		SYNC
		PSYNC ? -1
		REPLCONF capa eof
		EXEC
		EVAL "return redis.call('replconf','capa','eof')" 0
		EVAL "return redis.call('sync')" 0
		EVAL "return redis.call('psync','?','-1')" 0
	`)
	// ACK and GETACK answer nothing to a client that is not a replica.
	for _, args := range [][]string{{"REPLCONF", "ack", "5"}, {"REPLCONF", "ACK", "x"}, {"REPLCONF", "getack", "*"}, {"REPLCONF", "listening-port", "1", "ack", "5"}} {
		raw := append(testutil.Command(args...), testutil.Command("PING")...)
		d.Want.Send(raw)
		d.Got.Send(raw)
		if err := testutil.Compare(args, d.Want.Read(), d.Got.Read()); err != nil {
			t.Error(err)
		}
	}
	// Replies waiting in the buffer (a pipeline) forbid the snapshot; and
	// a bad offset is refused. Each on a connection of its own: Redis
	// syncs the client anyway after the bad offset.
	for _, cmds := range [][][]string{{{"REPLCONF", "rdb-only", "1"}, {"SYNC"}}, {{"PING"}, {"PSYNC", "?", "-1"}}, {{"PSYNC", "?", "x"}}} {
		var raw []byte
		for _, args := range cmds {
			raw = append(raw, testutil.Command(args...)...)
		}
		e := p.conn(t)
		e.Want.Send(raw)
		e.Got.Send(raw)
		for _, args := range cmds {
			if err := testutil.Compare(args, e.Want.Read(), e.Got.Read()); err != nil {
				t.Error(err)
			}
		}
		e.Want.Close()
		e.Got.Close()
	}
}

// TestSyncNeedsRDBOnly: basalt does not stream its writes to replicas (its
// nodes replicate through Raft), so SYNC and PSYNC from a client that did
// not send REPLCONF rdb-only 1 are refused, and a redis-server pointed at
// basalt with REPLICAOF keeps its link down instead of holding a copy that
// never follows.
func TestSyncNeedsRDBOnly(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v")
	const errNoStream = "ERR basalt does not stream replication (its nodes replicate through Raft): send REPLCONF rdb-only 1 first for a snapshot, as redis-cli --rdb does"
	for _, args := range [][]string{{"SYNC"}, {"PSYNC", "?", "-1"}} {
		if r := c.Do(args...); r.Str != errNoStream {
			t.Errorf("%q: %v", args, r)
		}
	}
	c.Do("REPLCONF", "rdb-only", "1")
	c.Do("REPLCONF", "rdb-only", "0")
	if r := c.Do("SYNC"); r.Str != errNoStream {
		t.Errorf("SYNC after rdb-only 0: %v", r)
	}
	if r := c.Do("PING"); r.String() != "+PONG" {
		t.Errorf("the connection after a refused SYNC: %v", r)
	}

	_, port, _ := strings.Cut(b.Addr, ":")
	r := testutil.Dial(t, testutil.StartRedis(t).Addr)
	if res := r.Do("REPLICAOF", "127.0.0.1", port); res.IsError() {
		t.Fatal(res)
	}
	time.Sleep(1500 * time.Millisecond) // a few attempts
	info := r.Do("INFO", "replication").Str
	if !strings.Contains(info, "master_link_status:down") {
		t.Errorf("the replica of basalt:\n%s", info)
	}
	if r.Do("EXISTS", "k").Int != 0 {
		t.Error("the replica loaded basalt's data")
	}
	if n := infoField(t, c, "stats", "sync_full"); n != 0 {
		t.Errorf("sync_full:%d after refused syncs", n)
	}
	r.Do("REPLICAOF", "NO", "ONE")
}

// TestSyncOnFollower: the snapshot is the node's own. On a follower it is
// the follower's applied state (with the client's own writes, forwarded to
// the leader, applied first); nothing goes to the leader.
func TestSyncOnFollower(t *testing.T) {
	cl := testutil.StartCluster(t, 3)
	f := cl.Follower(t)
	c := testutil.Dial(t, cl.Nodes[f].Addr)
	for i := range 100 {
		c.Do("SET", "k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	dir := t.TempDir()
	cliRDB(t, cl.Nodes[f].Addr, "--rdb", filepath.Join(dir, "dump.rdb"))
	r := redisOn(t, dir)
	if n := r.Do("DBSIZE").Int; n != 100 {
		t.Errorf("the follower's snapshot holds %d keys, want 100", n)
	}
	if got := r.Do("GET", "k99").Str; got != "99" {
		t.Errorf("GET k99 from the follower's snapshot: %q", got)
	}
	for i, p := range cl.Nodes {
		want := int64(0)
		if i == f {
			want = 1
		}
		if n := infoField(t, testutil.Dial(t, p.Addr), "stats", "sync_full"); n != want {
			t.Errorf("node %d: sync_full:%d, want %d", i+1, n, want)
		}
	}
}
