package compat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/rdb"
	"basalt/internal/testutil"
)

// basalt load-rdb: a dump.rdb saved by redis-server, holding every type in
// each of its encodings, is loaded into basalt (alone, and through a
// follower of a 3-node cluster), then every key is read back from both
// servers and compared.

// fillRedis writes keys of every type and encoding, in several databases,
// and a function library.
func fillRedis(t *testing.T, c *testutil.Conn) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	itoa := strconv.Itoa
	do := func(args ...string) {
		t.Helper()
		if r := c.Do(args...); r.IsError() {
			t.Fatalf("%v: %v", args, r)
		}
	}
	random := make([]byte, 50_000)
	for i := range random {
		random[i] = byte(rnd.IntN(256))
	}
	// Strings: plain, integers (RDB's integer forms), LZF-compressed, binary.
	do("SET", "s", "hello")
	do("SET", "int", "12345")
	do("SET", "neg", "-7")
	do("SET", "bigint", "123456789012")
	do("SET", "empty", "")
	do("SET", "bin\x00key\xff", "\x00\x01\xfe\xff")
	do("SET", "lzf", strings.Repeat("abcdefgh", 20_000))
	do("SET", "random", string(random))
	// Lists: a listpack node, and a quicklist of many nodes.
	do("RPUSH", "lsmall", "a", "b", "1", "-5", "300", "70000", "5000000000", "")
	big := []string{"RPUSH", "lbig"}
	for i := range 3000 {
		big = append(big, "item-"+itoa(i)+strings.Repeat("x", i%50))
	}
	do(big...)
	// Sets: intsets, and hash tables of integers and of strings.
	do("SADD", "sint", "1", "2", "3", "-100", "5000000000")
	big = []string{"SADD", "sintbig"}
	for i := range 1000 {
		big = append(big, itoa(i*7))
	}
	do(big...)
	do("SADD", "sstr", "a", "b", "c")
	big = []string{"SADD", "sstrbig"}
	for i := range 600 {
		big = append(big, "member:"+itoa(i))
	}
	do(big...)
	// Hashes: listpacks, and hash tables (many fields, a long value).
	do("HSET", "hsmall", "f1", "v1", "f2", "2", "f3", "")
	big = []string{"HSET", "hbig"}
	for i := range 300 {
		big = append(big, "field"+itoa(i), "value"+itoa(i*i))
	}
	do(big...)
	do("HSET", "hlong", "f", strings.Repeat("v", 100))
	// Sorted sets: listpacks and skiplists, infinities included.
	do("ZADD", "zsmall", "1", "a", "2.5", "b", "-3", "c", "inf", "d", "-inf", "e")
	big = []string{"ZADD", "zbig"}
	for i := range 300 {
		big = append(big, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), "m"+itoa(i))
	}
	do(big...)
	// A stream of several nodes with deleted entries, groups, consumers
	// and pending entries, and a small one.
	for i := 1; i <= 250; i++ {
		do("XADD", "stream", itoa(i)+"-1", "f", itoa(i), "g", strings.Repeat("v", i%40))
	}
	do("XDEL", "stream", "3-1", "150-1", "250-1")
	do("XGROUP", "CREATE", "stream", "g1", "0")
	do("XGROUP", "CREATE", "stream", "g2", "$")
	do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "stream", ">")
	do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "stream", ">")
	do("XACK", "stream", "g1", "2-1")
	do("XGROUP", "CREATECONSUMER", "stream", "g2", "carol")
	do("XADD", "xsmall", "1-1", "f", "v")
	// HyperLogLogs, sparse and dense.
	do("PFADD", "hll", "a", "b", "c")
	big = []string{"PFADD", "hlldense"}
	for i := range 5000 {
		big = append(big, "e"+itoa(i))
	}
	do(big...)
	// Expiries, and a key that expires after SAVE and before the load.
	do("SET", "ttl", "v", "PX", "100000000")
	do("HSET", "httl", "f", "v")
	do("EXPIRE", "httl", "5000")
	do("SET", "soon", "v", "PX", "1500")
	// Other databases.
	for _, db := range []string{"1", "5", "15"} {
		do("SELECT", db)
		do("SET", "in-db-"+db, db)
		do("RPUSH", "l", db, "x")
	}
	do("SELECT", "0")
	do("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return 1 end)")
	do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f2', callback=function(keys, args) return 2 end, flags={'no-writes'}}")
}

// saveRedis fills a redis-server, saves it and returns the dump's path.
func saveRedis(t *testing.T) (*testutil.Proc, string) {
	t.Helper()
	redis := testutil.StartRedis(t)
	c := testutil.Dial(t, redis.Addr)
	defer c.Close()
	fillRedis(t, c)
	if r := c.Do("SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE: %v", r)
	}
	return redis, filepath.Join(redis.Dir, "dump.rdb")
}

// loadRDB runs basalt load-rdb with args and returns its output and exit
// code.
func loadRDB(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.BasaltBinary(t), append([]string{"load-rdb"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("load-rdb: %v", err)
	}
	return out.String(), errOut.String(), code
}

// compareAll compares every key of every database of redis with basalt's.
func compareAll(t *testing.T, redisAddr, basaltAddr string) {
	t.Helper()
	d := testutil.NewDiff(t, redisAddr, basaltAddr)
	d.DoUnordered("FUNCTION", "LIST", "WITHCODE") // in dict order in Redis
	for db := range 16 {
		d.Do("SELECT", strconv.Itoa(db))
		d.Do("DBSIZE")
		keys := d.Want.Do("KEYS", "*")
		for _, e := range keys.Elems {
			k := e.Str
			d.Do("TYPE", k)
			d.Do("OBJECT", "ENCODING", k)
			want, got := d.DoBoth("PTTL", k)
			if (want.Int < 0) != (got.Int < 0) || want.Int < 0 && want.Int != got.Int || abs(want.Int-got.Int) > 10_000 {
				t.Errorf("db %d key %q: PTTL %v in redis, %v in basalt", db, k, want, got)
			}
			switch typ := d.Want.Do("TYPE", k).Str; typ {
			case "string":
				d.Do("GET", k)
			case "list":
				d.Do("LRANGE", k, "0", "-1")
			case "set":
				d.DoUnordered("SMEMBERS", k)
			case "hash":
				want, got := d.DoBoth("HGETALL", k)
				if !slices.Equal(pairs(want), pairs(got)) {
					t.Errorf("db %d key %q: HGETALL differs: %d and %d fields", db, k, len(want.Elems)/2, len(got.Elems)/2)
				}
			case "zset":
				d.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
			case "stream":
				d.Do("XRANGE", k, "-", "+")
				// radix-tree-nodes depends on the tree's history (see
				// dump_test.go): left out.
				args := []string{"XINFO", "STREAM", k, "FULL"}
				w, g := d.DoBoth(args...)
				for _, r := range []*testutil.Reply{&w, &g} {
					for i := 0; i+1 < len(r.Elems); i += 2 {
						if r.Elems[i].Str == "radix-tree-nodes" {
							r.Elems[i+1] = testutil.Reply{Kind: ':'}
						}
					}
				}
				if err := testutil.Compare(args, w, g); err != nil {
					t.Errorf("db %d: %v", db, err)
				}
			default:
				t.Errorf("db %d key %q: type %s", db, k, typ)
			}
		}
	}
	d.Do("PFCOUNT", "hll")
	d.Do("PFCOUNT", "hlldense")
}

func abs(x int64) int64 { return max(x, -x) }

// pairs renders a RESP2 HGETALL reply's field-value pairs, sorted.
func pairs(r testutil.Reply) []string {
	var out []string
	for i := 0; i+1 < len(r.Elems); i += 2 {
		out = append(out, strconv.Quote(r.Elems[i].Str)+"="+strconv.Quote(r.Elems[i+1].Str))
	}
	slices.Sort(out)
	return out
}

func TestLoadRDB(t *testing.T) {
	redis, dump := saveRedis(t)
	time.Sleep(1600 * time.Millisecond) // "soon" expires

	t.Run("single node", func(t *testing.T) {
		basalt := testutil.StartBasalt(t, "")
		out, errOut, code := loadRDB(t, "--port", strconv.Itoa(basalt.Port), dump)
		if code != 0 {
			t.Fatalf("exit code %d\n%s%s", code, out, errOut)
		}
		for _, want := range []string{"keys loaded: 31\n", "  db 0: 25\n", "  db 1: 2\n", "  db 15: 2\n",
			"keys expired, skipped: 1\n", "function libraries loaded: 2\n", "errors: 0\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		compareAll(t, redis.Addr, basalt.Addr)

		// Loaded keys are durable: they are there after a restart.
		if err := basalt.Stop(); err != nil {
			t.Fatal(err)
		}
		basalt.Restart(t)
		compareAll(t, redis.Addr, basalt.Addr)

		// Again: every key is there already.
		out, errOut, code = loadRDB(t, "--port", strconv.Itoa(basalt.Port), dump)
		if code != 1 || !strings.Contains(errOut, "already exists (use --replace to overwrite)") || !strings.Contains(out, "errors: ") {
			t.Errorf("loading twice: exit code %d\n%s%s", code, out, errOut)
		}
		// --replace overwrites.
		c := testutil.Dial(t, basalt.Addr)
		c.Do("SET", "s", "changed")
		c.Do("SELECT", "5")
		c.Do("RPUSH", "l", "more")
		c.Close()
		out, errOut, code = loadRDB(t, "--replace", "--port", strconv.Itoa(basalt.Port), dump)
		if code != 0 || !strings.Contains(out, "keys loaded: 31\n") {
			t.Errorf("--replace: exit code %d\n%s%s", code, out, errOut)
		}
		compareAll(t, redis.Addr, basalt.Addr)
	})

	t.Run("cluster follower", func(t *testing.T) {
		cl := testutil.StartCluster(t, 3)
		f := cl.Nodes[cl.Follower(t)]
		out, errOut, code := loadRDB(t, "--port", strconv.Itoa(f.Port), dump)
		if code != 0 || !strings.Contains(out, "keys loaded: 31\n") {
			t.Fatalf("exit code %d\n%s%s", code, out, errOut)
		}
		cl.WaitConverged(t, 30*time.Second)
		for _, n := range cl.Nodes {
			compareAll(t, redis.Addr, n.Addr)
		}
	})
}

// A key already in basalt stops the load (without --replace), naming the
// key; the keys sent before it stay loaded.
func TestLoadRDBBusyKey(t *testing.T) {
	dir := t.TempDir()
	var body []byte
	for _, k := range []string{"a", "b", "c"} {
		body = append(body, 0, 1, k[0], 1, 'v')
	}
	path := filepath.Join(dir, "dump.rdb")
	if err := os.WriteFile(path, rdbFile(10, body), 0o644); err != nil {
		t.Fatal(err)
	}
	basalt := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, basalt.Addr)
	defer c.Close()
	c.Do("SET", "b", "mine")
	out, errOut, code := loadRDB(t, "--batch", "1", "--port", strconv.Itoa(basalt.Port), path)
	want := `basalt load-rdb: key "b" of db 0: BUSYKEY Target key name already exists. (use --replace to overwrite)` + "\n"
	if code != 1 || errOut != want || !strings.Contains(out, "keys loaded: 1\n") || !strings.Contains(out, "errors: 1\n") {
		t.Errorf("exit code %d\nstdout: %s\nstderr: %q\nwant:   %q", code, out, errOut, want)
	}
	if r := c.Do("GET", "b"); r.Str != "mine" {
		t.Errorf("b was overwritten: %v", r)
	}
	if r := c.Do("EXISTS", "a", "c"); r.Int != 1 {
		t.Errorf("EXISTS a c: %v, want 1 (a loaded, c not reached)", r)
	}
}

// A corrupt record stops the load, naming the key; the keys before it
// are loaded.
func TestLoadRDBCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dump.rdb")
	body := []byte{0, 1, 'a', 1, 'v', 0, 1, 'k', 0x80, 0, 0, 0xff, 0}
	if err := os.WriteFile(path, rdbFile(10, body), 0o644); err != nil {
		t.Fatal(err)
	}
	basalt := testutil.StartBasalt(t, "")
	out, errOut, code := loadRDB(t, "--port", strconv.Itoa(basalt.Port), path)
	want := "basalt load-rdb: " + path + `: at byte 14, key "k" of db 0: rdb: bad data format` + "\n"
	if code != 1 || errOut != want || !strings.Contains(out, "keys loaded: 1\n") {
		t.Errorf("exit code %d\nstdout: %s\nstderr: %q\nwant:   %q", code, out, errOut, want)
	}
	c := testutil.Dial(t, basalt.Addr)
	defer c.Close()
	if r := c.Do("KEYS", "*"); r.String() != `["a"]` {
		t.Errorf("KEYS *: %v", r)
	}
}

// rdbFile wraps records in an RDB file of version ver with its checksum.
func rdbFile(ver int, body []byte) []byte {
	b := append([]byte("REDIS"+strconv.Itoa(10000 + ver)[1:]), body...)
	b = append(b, 0xff)
	return binary.LittleEndian.AppendUint64(b, rdb.CRC64(b))
}

// Files that cannot be loaded: exit code 1 and a message naming why,
// before anything is sent (no server listens on the port).
func TestLoadRDBBadFiles(t *testing.T) {
	dir := t.TempDir()
	port := strconv.Itoa(testutil.FreePort(t))
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing file", []string{filepath.Join(dir, "nosuch.rdb")}, 1, "nosuch.rdb: no such file or directory"},
		{"bad magic", []string{write("magic.rdb", []byte("RDB0010\xff"))}, 1, "magic.rdb: not an RDB file"},
		{"version 13", []string{write("v13.rdb", rdbFile(13, nil))}, 1, "v13.rdb: RDB file version 13 is not supported"},
		{"no file", nil, 2, "give exactly one RDB file"},
		{"two files", []string{"a", "b"}, 2, "give exactly one RDB file"},
		{"bad flag", []string{"--nosuch", "a"}, 2, "flag provided but not defined: -nosuch"},
	} {
		_, errOut, code := loadRDB(t, append([]string{"--port", port}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit code %d, stderr %q; want %d and %q", c.name, code, errOut, c.code, c.want)
		}
	}
	// The server is needed only once the file's header is read.
	_, errOut, code := loadRDB(t, "--port", port, write("ok.rdb", rdbFile(10, nil)))
	if code != 1 || !strings.Contains(errOut, "connecting to 127.0.0.1:"+port) {
		t.Errorf("no server: exit code %d, stderr %q", code, errOut)
	}
}
