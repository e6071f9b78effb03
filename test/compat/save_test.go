package compat

import (
	"context"
	"fmt"
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

// SAVE and BGSAVE write a dump.rdb that redis-server loads: basalt is
// filled with every type, saved, and a redis-server started on a copy of
// the file must hold the same keys, types, expiries and values. Redis
// without RedisJSON cannot load module values, so the JSON document is
// checked apart, with redis-check-rdb.

// rdbCopy copies basalt's dump file into a fresh directory for a
// redis-server to load.
func rdbCopy(t *testing.T, basaltDir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(basaltDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// redisOn starts redis-server on the dump.rdb in dir.
func redisOn(t *testing.T, dir string) *testutil.Conn {
	t.Helper()
	r := testutil.StartRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
	return testutil.Dial(t, r.Addr)
}

// fillAllTypes writes keys of every type into basalt through c.
func fillAllTypes(t *testing.T, c *testutil.Conn) {
	t.Helper()
	do := func(args ...string) {
		t.Helper()
		if r := c.Do(args...); r.IsError() {
			t.Fatalf("%.80q: %v", args, r)
		}
	}
	many := func(cmd, key string, n int, item func(i int) []string) {
		args := []string{cmd, key}
		for i := range n {
			args = append(args, item(i)...)
		}
		do(args...)
	}
	do("SET", "str", "hello")
	do("SET", "str:int", "12345")
	do("SET", "str:neg", "-42")
	do("SET", "str:empty", "")
	do("SET", "str:bin", "a\x00b\xff\r\n")
	do("SET", "str:big", strings.Repeat("0123456789abcdef", 8000)) // 128 KB: stored in chunks
	do("SETBIT", "bitmap", "100000", "1")
	do("SETBIT", "bitmap", "7", "1")
	do("PFADD", "hll:sparse", "a", "b", "c")
	many("PFADD", "hll:dense", 5000, func(i int) []string { return []string{"e" + strconv.Itoa(i)} })
	do("RPUSH", "list", "a", "b", "1", "")
	many("RPUSH", "list:big", 10000, func(i int) []string { return []string{"item-" + strconv.Itoa(i)} })
	do("SADD", "set:int", "1", "-5", "300", "70000")
	do("SADD", "set:str", "x", "y", "10")
	many("SADD", "set:bigint", 10000, func(i int) []string { return []string{strconv.Itoa(i * 3)} })
	many("SADD", "set:big", 10000, func(i int) []string { return []string{"m" + strconv.Itoa(i)} })
	do("HSET", "hash", "f1", "v1", "f2", "", "n", "12")
	many("HSET", "hash:big", 10000, func(i int) []string { return []string{"f" + strconv.Itoa(i), "v" + strconv.Itoa(i)} })
	do("ZADD", "zset", "1.5", "a", "-inf", "lo", "+inf", "hi", "0", "z")
	many("ZADD", "zset:big", 10000, func(i int) []string { return []string{strconv.Itoa(i%977) + ".25", "m" + strconv.Itoa(i)} })
	do("GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
	// A stream with a deleted entry, two groups, pending entries (one
	// acknowledged), and a consumer with nothing pending.
	for i := 1; i <= 10; i++ {
		do("XADD", "stream", fmt.Sprintf("1700000000000-%d", i), "field", "v"+strconv.Itoa(i), "n", strconv.Itoa(i))
	}
	do("XDEL", "stream", "1700000000000-3")
	do("XGROUP", "CREATE", "stream", "g1", "0")
	do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "4", "STREAMS", "stream", ">")
	do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "stream", ">")
	do("XACK", "stream", "g1", "1700000000000-1")
	do("XGROUP", "CREATE", "stream", "g2", "$")
	do("XGROUP", "CREATECONSUMER", "stream", "g2", "idle")
	for i := 0; i < 1500; i++ {
		do("XADD", "stream:big", "*", "i", strconv.Itoa(i), "pad", strings.Repeat("p", i%50))
	}
	do("XTRIM", "stream:big", "MAXLEN", "1200")
	// Expiries, and a key that expires before the save.
	do("SET", "ttl:str", "v", "EX", "1000")
	do("HSET", "ttl:hash", "f", "v")
	do("PEXPIRE", "ttl:hash", "500000")
	do("SET", "gone", "v", "PX", "1")
	// Other databases.
	for _, db := range []string{"2", "15"} {
		do("SELECT", db)
		do("SET", "db"+db+":str", "in db "+db)
		do("RPUSH", "db"+db+":list", "x", "y")
		do("SET", "db"+db+":ttl", "v", "PX", "300000")
	}
	do("SELECT", "0")
	do("FUNCTION", "LOAD", "#!lua name=savelib\nredis.register_function('savefn', function(keys, args) return 'saved' end)")
}

// sameData compares every database, key, type, expiry and value of want
// (redis-server) and got (basalt). Times in XPENDING and XINFO CONSUMERS
// are left out (they move with the clock).
func sameData(t *testing.T, want, got *testutil.Conn) {
	t.Helper()
	both := func(args ...string) (string, string) {
		return want.Do(args...).String(), got.Do(args...).String()
	}
	same := func(args ...string) {
		t.Helper()
		if w, g := both(args...); w != g {
			t.Errorf("%.100q:\nredis:  %.300s\nbasalt: %.300s", args, w, g)
		}
	}
	sameSorted := func(args ...string) {
		t.Helper()
		if w, g := want.Do(args...).Sorted().String(), got.Do(args...).Sorted().String(); w != g {
			t.Errorf("%q (sorted):\nredis:  %.300s\nbasalt: %.300s", args, w, g)
		}
	}
	// pairs sorts a flat field/value reply by field.
	pairs := func(r testutil.Reply) string {
		var ps []string
		for i := 0; i+1 < len(r.Elems); i += 2 {
			ps = append(ps, r.Elems[i].String()+"="+r.Elems[i+1].String())
		}
		slices.Sort(ps)
		return strings.Join(ps, ",")
	}
	// withoutTimes drops the elements at positions drop of each entry.
	withoutTimes := func(r testutil.Reply, drop ...int) string {
		var out []string
		for _, e := range r.Elems {
			var kept []string
			for i, f := range e.Elems {
				if !slices.Contains(drop, i) {
					kept = append(kept, f.String())
				}
			}
			out = append(out, strings.Join(kept, " "))
		}
		return strings.Join(out, "; ")
	}
	keysChecked := 0
	for db := range 16 {
		for _, c := range []*testutil.Conn{want, got} {
			c.Do("SELECT", strconv.Itoa(db))
		}
		// KEYS, not DBSIZE: DBSIZE counts an expired key until it is
		// deleted, which the file leaves out.
		wk, gk := want.Do("KEYS", "*").Sorted(), got.Do("KEYS", "*").Sorted()
		if wk.String() != gk.String() {
			t.Errorf("db %d keys:\nredis:  %.500s\nbasalt: %.500s", db, wk, gk)
			continue
		}
		for _, k := range wk.Elems {
			key := k.Str
			keysChecked++
			same("TYPE", key)
			wt, gt := want.Do("PTTL", key).Int, got.Do("PTTL", key).Int
			if (wt < 0 || gt < 0) && wt != gt || wt > gt+10000 || gt > wt+10000 {
				t.Errorf("db %d %q: PTTL %d in redis, %d in basalt", db, key, wt, gt)
			}
			switch typ := want.Do("TYPE", key).Str; typ {
			case "string":
				same("GET", key)
			case "list":
				same("LRANGE", key, "0", "-1")
			case "set":
				sameSorted("SMEMBERS", key)
			case "hash":
				if w, g := pairs(want.Do("HGETALL", key)), pairs(got.Do("HGETALL", key)); w != g {
					t.Errorf("HGETALL %q differs", key)
				}
			case "zset":
				same("ZRANGE", key, "0", "-1", "WITHSCORES")
			case "stream":
				same("XRANGE", key, "-", "+")
				same("XLEN", key)
				info := func(c *testutil.Conn) string {
					r := c.Do("XINFO", "STREAM", key)
					var kept []string
					for i := 0; i+1 < len(r.Elems); i += 2 {
						switch r.Elems[i].Str {
						case "radix-tree-keys", "radix-tree-nodes": // node layout, not data
						default:
							kept = append(kept, r.Elems[i].Str+"="+r.Elems[i+1].String())
						}
					}
					return strings.Join(kept, ",")
				}
				if w, g := info(want), info(got); w != g {
					t.Errorf("XINFO STREAM %q:\nredis:  %s\nbasalt: %s", key, w, g)
				}
				same("XINFO", "GROUPS", key)
				for _, g := range want.Do("XINFO", "GROUPS", key).Elems {
					group := g.Elems[1].Str
					if w, gg := withoutTimes(want.Do("XPENDING", key, group, "-", "+", "1000"), 2), withoutTimes(got.Do("XPENDING", key, group, "-", "+", "1000"), 2); w != gg {
						t.Errorf("XPENDING %s %s:\nredis:  %s\nbasalt: %s", key, group, w, gg)
					}
					if w, gg := withoutTimes(want.Do("XINFO", "CONSUMERS", key, group), 5), withoutTimes(got.Do("XINFO", "CONSUMERS", key, group), 5); w != gg {
						t.Errorf("XINFO CONSUMERS %s %s:\nredis:  %s\nbasalt: %s", key, group, w, gg)
					}
				}
			case "ReJSON-RL": // basalt to basalt only: Redis has no RedisJSON here
				same("JSON.GET", key)
			default:
				t.Errorf("db %d %q: type %q", db, key, typ)
			}
		}
	}
	for _, c := range []*testutil.Conn{want, got} {
		c.Do("SELECT", "0")
	}
	same("FUNCTION", "LIST", "WITHCODE")
	if keysChecked < 30 {
		t.Errorf("only %d keys compared", keysChecked)
	}
}

// waitBgsave polls INFO persistence until no BGSAVE (or, in Redis, AOF
// rewrite) runs or waits to run, and at least saves saves were started.
func waitBgsave(t *testing.T, c *testutil.Conn, saves ...int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := c.Do("INFO", "persistence").Str
		idle := true
		for _, f := range []string{"rdb_bgsave_in_progress:0\r\n", "aof_rewrite_in_progress:0\r\n", "aof_rewrite_scheduled:0\r\n"} {
			idle = idle && strings.Contains(info, f)
		}
		for _, n := range saves {
			idle = idle && strings.Contains(info, "rdb_saves:"+strconv.Itoa(n)+"\r\n")
		}
		if idle {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("BGSAVE still running after 30 s:\n%s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSaveLoadsInRedis(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--enable-protected-configs", "yes") // CONFIG SET dbfilename below
	c := testutil.Dial(t, b.Addr)
	fillAllTypes(t, c)
	time.Sleep(20 * time.Millisecond) // "gone" is expired, deleted or not

	before := c.Do("LASTSAVE").Int
	if r := c.Do("SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE: %v", r)
	}
	r := redisOn(t, rdbCopy(t, b.Dir, "dump.rdb"))
	if n := r.Do("EXISTS", "gone").Int; n != 0 {
		t.Error("the expired key was loaded")
	}
	sameData(t, r, c)
	if after := c.Do("LASTSAVE").Int; after < before || after < time.Now().Unix()-60 {
		t.Errorf("LASTSAVE %d after SAVE (before: %d)", after, before)
	}

	// BGSAVE of the changed data, to another file name.
	if r := c.Do("CONFIG", "SET", "dbfilename", "backup.rdb"); r.String() != "+OK" {
		t.Fatalf("CONFIG SET dbfilename: %v", r)
	}
	c.Do("SET", "after-save", "1")
	c.Do("DEL", "list")
	c.Do("XADD", "stream", "*", "late", "entry")
	if r := c.Do("BGSAVE"); r.String() != "+Background saving started" {
		t.Fatalf("BGSAVE: %v", r)
	}
	info := waitBgsave(t, c)
	for _, want := range []string{"rdb_last_bgsave_status:ok", "rdb_saves:2", "rdb_changes_since_last_save:0", "rdb_current_bgsave_time_sec:-1"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO persistence lacks %q:\n%s", want, info)
		}
	}
	r = redisOn(t, rdbCopy(t, b.Dir, "backup.rdb"))
	if r.Do("EXISTS", "after-save").Int != 1 || r.Do("EXISTS", "list").Int != 0 {
		t.Error("BGSAVE's file is not of the data after SAVE")
	}
	sameData(t, r, c)
	c.Do("SET", "one-more", "1")
	if info := c.Do("INFO", "persistence").Str; !strings.Contains(info, "rdb_changes_since_last_save:1\r\n") {
		t.Errorf("one write after the save:\n%s", info)
	}
}

// TestSaveJSON: a JSON document is written as RedisJSON's module value.
// redis-check-rdb walks module values by their opcodes, and redis-server,
// which has no RedisJSON, names the module type of the value it refuses.
func TestSaveJSON(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--dbfilename", "json.rdb")
	c := testutil.Dial(t, b.Addr)
	c.Do("JSON.SET", "doc", "$", `{"name":"basalt","tags":["a","b"],"n":1.5,"o":{"x":null}}`)
	c.Do("JSON.SET", "doc:ttl", "$", `[1,2,3]`)
	c.Do("EXPIRE", "doc:ttl", "1000")
	c.Do("SET", "plain", "v")
	if r := c.Do("SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE: %v", r)
	}
	file := filepath.Join(b.Dir, "json.rdb") // --dbfilename
	out, err := exec.Command("redis-check-rdb", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK") || !strings.Contains(string(out), "3 keys read") {
		t.Errorf("redis-check-rdb: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `{"name":"basalt","tags":["a","b"],"n":1.5,"o":{"x":null}}`) {
		t.Error("the document's JSON text is not in the file")
	}
	dir := rdbCopy(t, b.Dir, "json.rdb")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, _ = exec.CommandContext(ctx, "redis-server", "--port", strconv.Itoa(testutil.FreePort(t)), "--bind", "127.0.0.1", "--dir", dir, "--save", "").CombinedOutput() // it exits: it cannot load the file
	if !strings.Contains(string(out), "no matching module type 'ReJSON-RL'") {
		t.Errorf("redis-server's refusal does not name ReJSON-RL:\n%.3000s", out)
	}
}

// TestSaveReplies compares the replies of the save commands with
// redis-server's, both with enable-protected-configs on so that CONFIG SET
// may change dbfilename (TestProtectedSurfaces has the refusals).
func TestSaveReplies(t *testing.T) {
	redis := testutil.StartRedis(t, "--enable-protected-configs", "yes")
	basalt := testutil.StartBasalt(t, "", "--enable-protected-configs", "yes")
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	d.Run(`
		COMMAND INFO save bgsave lastsave bgrewriteaof
		SAVE x
		BGSAVE foo
		BGSAVE SCHEDULE x
		LASTSAVE x
		BGREWRITEAOF x
		CONFIG SET dbfilename a/b.rdb
		CONFIG SET dbfilename /abs.rdb
		CONFIG SET dbfilename saved.rdb
		CONFIG GET dbfilename
		MULTI
		SAVE
		EXEC
		SAVE
	`)
	want, got := d.DoBoth("LASTSAVE")
	if want.Kind != ':' || got.Kind != ':' || got.Int > time.Now().Unix()+1 || got.Int < time.Now().Unix()-60 {
		t.Errorf("LASTSAVE: redis %v, basalt %v", want, got)
	}
	// SCHEDULE waits for an AOF rewrite; with none running, it starts.
	d.Do("BGSAVE", "SCHEDULE")
	waitBgsave(t, d.Want)
	waitBgsave(t, d.Got)
	// Enough data that neither server's BGSAVE ends before the next
	// command of the same pipeline arrives (Redis notices its child's end
	// only in its cron, at least once every 100 ms).
	big := strings.Repeat("x", 1<<20)
	for i := range 48 {
		d.Do("SET", "big"+strconv.Itoa(i), big)
	}
	pipeline := [][]string{{"BGSAVE"}, {"BGSAVE"}, {"BGSAVE", "SCHEDULE"}, {"SAVE"}, {"BGREWRITEAOF"}, {"INFO", "persistence"}}
	var raw []byte
	for _, args := range pipeline {
		raw = append(raw, testutil.Command(args...)...)
	}
	d.Want.Send(raw)
	d.Got.Send(raw)
	for _, args := range pipeline {
		want, got := d.Want.Read(), d.Got.Read()
		if args[0] == "INFO" {
			for _, f := range []string{"rdb_bgsave_in_progress:1\r\n", "rdb_current_bgsave_time_sec:0\r\n", "rdb_saves:3\r\n"} {
				if !strings.Contains(want.Str, f) || !strings.Contains(got.Str, f) {
					t.Errorf("INFO persistence during a BGSAVE lacks %q:\nredis:\n%s\nbasalt:\n%s", f, want.Str, got.Str)
				}
			}
			continue
		}
		if err := testutil.Compare(args, want, got); err != nil {
			t.Error(err)
		}
	}
	waitBgsave(t, d.Want)
	waitBgsave(t, d.Got)
	// Inside EXEC a BGSAVE is scheduled (and runs right after), and so is
	// an AOF rewrite while a BGSAVE runs.
	d.Run(`
		MULTI
		BGSAVE
		EXEC
	`)
	// SAVE, BGSAVE SCHEDULE, the pipeline's BGSAVE and this one.
	waitBgsave(t, d.Want, 4)
	waitBgsave(t, d.Got, 4)
	if _, err := os.Stat(filepath.Join(basalt.Dir, "saved.rdb")); err != nil {
		t.Errorf("basalt's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(basalt.Dir, "dump.rdb")); err == nil {
		t.Error("a file under the old dbfilename")
	}

	// A save that fails: SAVE answers a bare ERR, a BGSAVE's failure shows
	// in INFO. Redis then refuses writes (MISCONF, stop-writes-on-bgsave-
	// error); basalt, whose data does not depend on the file, does not.
	d.Run(`
		CONFIG SET dbfilename ""
		SAVE
		BGSAVE
	`)
	for _, c := range []*testutil.Conn{d.Want, d.Got} {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(c.Do("INFO", "persistence").Str, "rdb_last_bgsave_status:err") {
			if time.Now().After(deadline) {
				t.Fatal("no failed BGSAVE in INFO persistence")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if r := d.Got.Do("SET", "after-failure", "1"); r.String() != "+OK" {
		t.Errorf("basalt refuses a write after a failed BGSAVE: %v", r)
	}
}

// TestShutdownSave: SHUTDOWN SAVE writes the file before the server
// exits, SHUTDOWN NOSAVE (like a plain SHUTDOWN: there are no save points)
// does not.
func TestShutdownSave(t *testing.T) {
	for _, mode := range []string{"SAVE", "NOSAVE", ""} {
		b := testutil.StartBasalt(t, "")
		c := testutil.Dial(t, b.Addr)
		c.Do("SET", "k", "v"+mode)
		args := []string{"SHUTDOWN"}
		if mode != "" {
			args = append(args, mode)
		}
		if r, err := c.DoErr(args...); err == nil {
			t.Fatalf("%q answered %v", args, r)
		}
		for deadline := time.Now().Add(10 * time.Second); b.Running(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%q: still running", args)
			}
		}
		_, err := os.Stat(filepath.Join(b.Dir, "dump.rdb"))
		if mode != "SAVE" {
			if err == nil {
				t.Errorf("%q wrote a file", args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if r := redisOn(t, rdbCopy(t, b.Dir, "dump.rdb")).Do("GET", "k"); r.Str != "vSAVE" {
			t.Errorf("GET k from the file: %v", r)
		}
	}
}

// TestSaveOnFollower: SAVE is the node's own. On a follower it writes the
// follower's applied state (with the client's own writes, forwarded to the
// leader, applied first) into the follower's directory; nothing goes to
// the leader.
func TestSaveOnFollower(t *testing.T) {
	cl := testutil.StartCluster(t, 3)
	f := cl.Follower(t)
	c := testutil.Dial(t, cl.Nodes[f].Addr)
	for i := range 100 {
		c.Do("SET", "k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	if r := c.Do("SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE on the follower: %v", r)
	}
	if r := c.Do("BGSAVE"); r.String() != "+Background saving started" {
		t.Fatalf("BGSAVE on the follower: %v", r)
	}
	waitBgsave(t, c)
	r := redisOn(t, rdbCopy(t, cl.Nodes[f].Dir, "dump.rdb"))
	if n := r.Do("DBSIZE").Int; n != 100 {
		t.Errorf("the follower's file holds %d keys, want 100", n)
	}
	if got := r.Do("GET", "k99").Str; got != "99" {
		t.Errorf("GET k99 from the follower's file: %q", got)
	}
	for i, p := range cl.Nodes {
		if i == f {
			continue
		}
		if _, err := os.Stat(filepath.Join(p.Dir, "dump.rdb")); err == nil {
			t.Errorf("node %d saved too", i+1)
		}
		if info := testutil.Dial(t, p.Addr).Do("INFO", "persistence").Str; !strings.Contains(info, "rdb_saves:0\r\n") {
			t.Errorf("node %d counts saves:\n%s", i+1, info)
		}
	}
}

// TestSaveRestoreInBasalt: a backup made with SAVE restores into another
// basalt with basalt load-rdb, every key, expiry, JSON document and
// library as it was.
func TestSaveRestoreInBasalt(t *testing.T) {
	from := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, from.Addr)
	fillAllTypes(t, c)
	c.Do("JSON.SET", "json", "$", `{"name":"basalt","list":[1,2.5,"x",null,true,{"deep":[]}],"big":12345678901234567}`)
	c.Do("JSON.SET", "json:ttl", "$", `"just a string"`)
	c.Do("PEXPIRE", "json:ttl", "600000")
	c.Do("SELECT", "2")
	c.Do("JSON.SET", "json:db2", "$", `[[],{}]`)
	c.Do("SELECT", "0")
	if r := c.Do("SAVE"); r.String() != "+OK" {
		t.Fatalf("SAVE: %v", r)
	}
	to := testutil.StartBasalt(t, "")
	_, port, _ := strings.Cut(to.Addr, ":")
	stdout, stderr, code := loadRDB(t, "--host", "127.0.0.1", "--port", port, filepath.Join(from.Dir, "dump.rdb"))
	if code != 0 {
		t.Fatalf("load-rdb exited %d:\n%s%s", code, stdout, stderr)
	}
	sameData(t, c, testutil.Dial(t, to.Addr))
}
