package compat

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// Server and connection administration: PING, ECHO, TIME, LOLWUT, COMMAND,
// INFO, CONFIG, CLIENT, AUTH with requirepass.

// parseInfo splits an INFO reply into sections ("Server"...) of fields.
func parseInfo(t *testing.T, r testutil.Reply) (order []string, sections map[string]map[string]string) {
	t.Helper()
	if r.IsError() {
		t.Fatalf("INFO: %v", r)
	}
	sections = map[string]map[string]string{}
	cur := ""
	for _, line := range strings.Split(r.Str, "\r\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# "):
			cur = line[2:]
			order = append(order, cur)
			sections[cur] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || cur == "" {
				t.Errorf("INFO line %q does not parse", line)
				continue
			}
			sections[cur][k] = v
		}
	}
	return order, sections
}

func infoField(t *testing.T, c *testutil.Conn, section, field string) int64 {
	t.Helper()
	_, s := parseInfo(t, c.Do("INFO", section))
	for _, fields := range s {
		if v, ok := fields[field]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %s:%s is not an integer", section, field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// clientFields parses one CLIENT LIST / CLIENT INFO line into its keys in
// order and a map of values.
func clientFields(line string) (keys []string, m map[string]string) {
	m = map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		keys = append(keys, k)
		m[k] = v
	}
	return keys, m
}

// sameInfoEntry compares COMMAND INFO entries: the first nine fields
// exactly, and each of basalt's subcommands with Redis's of the same name
// (Redis has more, in hash order).
func sameInfoEntry(t *testing.T, want, got testutil.Reply) {
	t.Helper()
	if len(want.Elems) != 10 || len(got.Elems) != 10 {
		t.Errorf("COMMAND INFO entry shape:\n  want: %v\n  got:  %v", want, got)
		return
	}
	for i := 0; i < 9; i++ {
		if want.Elems[i].String() != got.Elems[i].String() {
			t.Errorf("%s field %d:\n  want: %v\n  got:  %v", want.Elems[0].Str, i, want.Elems[i], got.Elems[i])
		}
	}
	if len(got.Elems[9].Elems) == 0 && want.Elems[9].String() != got.Elems[9].String() {
		t.Errorf("%s subcommands: want %v, got %v", want.Elems[0].Str, want.Elems[9], got.Elems[9])
	}
	for _, gs := range got.Elems[9].Elems {
		found := false
		for _, ws := range want.Elems[9].Elems {
			if ws.Elems[0].Str == gs.Elems[0].Str {
				sameInfoEntry(t, ws, gs)
				found = true
			}
		}
		if !found && !basaltOnly[gs.Elems[0].Str] {
			t.Errorf("basalt has subcommand %s, Redis does not", gs.Elems[0].Str)
		}
	}
}

func names(r testutil.Reply) []string {
	var out []string
	for _, e := range r.Elems {
		out = append(out, e.Str)
	}
	return out
}

func TestServer(t *testing.T) {
	redis, basalt := testutil.StartPair(t)
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)

	t.Run("PingEchoTimeLolwut", func(t *testing.T) {
		d.Run(`
			PING
			PING hello
			PING a b
			ECHO x
			ECHO ""
			ECHO
			TIME x
			LOLWUT
			LOLWUT VERSION x
		`)
		want, got := d.DoBoth("TIME")
		if len(want.Elems) != 2 || len(got.Elems) != 2 || got.Elems[0].Kind != '$' {
			t.Fatalf("TIME: want %v, got %v", want, got)
		}
		secs, _ := strconv.ParseInt(got.Elems[0].Str, 10, 64)
		usec, _ := strconv.ParseInt(got.Elems[1].Str, 10, 64)
		if d := time.Now().Unix() - secs; d < -1 || d > 1 || usec < 0 || usec >= 1e6 {
			t.Errorf("TIME %v is not now", got)
		}
		d.Proto(3)
		defer d.Proto(2)
		d.Run("PING\nLOLWUT\nECHO x")
	})

	t.Run("CommandInfo", func(t *testing.T) {
		// Commands of this file, compared whole (subcommands by name).
		for _, name := range []string{"ping", "echo", "time", "lolwut", "command", "info", "config", "client", "debug",
			"config|set", "client|list", "command|getkeys"} {
			want, got := d.DoBoth("COMMAND", "INFO", name)
			if len(got.Elems) != 1 || len(want.Elems) != 1 {
				t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
			}
			sameInfoEntry(t, want.Elems[0], got.Elems[0])
		}
		// Other files' commands: the legacy fields, which their tables hold.
		for _, name := range []string{"get", "set", "del"} {
			want, got := d.DoBoth("COMMAND", "INFO", name)
			w, g := want.Elems[0], got.Elems[0]
			if len(g.Elems) != 10 {
				t.Fatalf("COMMAND INFO %s: %v", name, got)
			}
			for i := 0; i < 7; i++ {
				if w.Elems[i].String() != g.Elems[i].String() {
					t.Errorf("COMMAND INFO %s field %d: want %v, got %v", name, i, w.Elems[i], g.Elems[i])
				}
			}
		}
		d.Do("COMMAND", "INFO", "nosuch")
		d.Do("COMMAND", "INFO", "ping", "nosuch", "echo")
		d.Do("COMMAND", "INFO", "CONFIG|GET")
		d.Do("COMMAND", "DOCS", "nosuch")
		d.Proto(3)
		defer d.Proto(2)
		d.Do("COMMAND", "INFO", "ping", "time")
		d.Do("COMMAND", "INFO", "nosuch")
		want, got := d.DoBoth("COMMAND", "INFO", "config")
		sameInfoEntry(t, want.Elems[0], got.Elems[0])
	})

	t.Run("CommandCountListDocs", func(t *testing.T) {
		g := d.Got
		count := g.Do("COMMAND", "COUNT")
		all := g.Do("COMMAND")
		if count.Kind != ':' || int(count.Int) != len(all.Elems) || count.Int < 10 {
			t.Fatalf("COMMAND COUNT %v, COMMAND has %d entries", count, len(all.Elems))
		}
		if n := len(g.Do("COMMAND", "INFO").Elems); n != len(all.Elems) {
			t.Errorf("COMMAND INFO without names: %d entries, COMMAND: %d", n, len(all.Elems))
		}
		subs := 0
		for _, e := range all.Elems {
			if len(e.Elems) != 10 {
				t.Fatalf("COMMAND entry %v", e)
			}
			subs += len(e.Elems[9].Elems)
		}
		list := g.Do("COMMAND", "LIST")
		if len(list.Elems) != len(all.Elems)+subs {
			t.Errorf("COMMAND LIST has %d names, want %d commands + %d subcommands", len(list.Elems), len(all.Elems), subs)
		}
		// Every basalt name exists in Redis (the JSON commands in Redis
		// with the RedisJSON module); filters select the same way.
		redisNames := names(d.Want.Do("COMMAND", "LIST"))
		for _, n := range names(list) {
			if !slices.Contains(redisNames, n) && !basaltOnly[n] && !strings.HasPrefix(n, "json.") {
				t.Errorf("basalt lists %q, Redis has no such command", n)
			}
		}
		for _, filter := range [][]string{{"PATTERN", "cl*"}, {"ACLCAT", "connection"}, {"pattern", "CONFIG|*"}} {
			args := append([]string{"COMMAND", "LIST", "FILTERBY"}, filter...)
			want, got := d.DoBoth(args...)
			if len(got.Elems) == 0 {
				t.Errorf("%v: nothing", args)
			}
			for _, n := range names(got) {
				if !slices.Contains(names(want), n) && !basaltOnly[n] {
					t.Errorf("%v: basalt lists %q, Redis does not", args, n)
				}
			}
		}
		d.Run(`
			COMMAND LIST FILTERBY MODULE x
			COMMAND LIST FILTERBY aclcat nosuch
			COMMAND LIST FILTERBY foo x
			COMMAND LIST FILTERBY
			COMMAND LIST x y z w
			COMMAND HELP
			COMMAND FOO
			COMMAND COUNT x
		`)
		// DOCS: summary, since and group as Redis's.
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			want, got := d.DoBoth("COMMAND", "DOCS", "ping", "config", "nosuch", "client")
			if got.IsError() || len(got.Elems) != 6 {
				t.Fatalf("COMMAND DOCS: %v", got)
			}
			docs := func(r testutil.Reply) map[string]map[string]string {
				m := map[string]map[string]string{}
				for i := 0; i+1 < len(r.Elems); i += 2 {
					f := map[string]string{}
					for j := 0; j+1 < len(r.Elems[i+1].Elems); j += 2 {
						f[r.Elems[i+1].Elems[j].Str] = r.Elems[i+1].Elems[j+1].Str
					}
					m[r.Elems[i].Str] = f
				}
				return m
			}
			wd, gd := docs(want), docs(got)
			for name, f := range gd {
				for _, k := range []string{"summary", "since", "group"} {
					if f[k] == "" || f[k] != wd[name][k] {
						t.Errorf("RESP%d COMMAND DOCS %s %s: want %q, got %q", proto, name, k, wd[name][k], f[k])
					}
				}
			}
		}
		d.Proto(2)
	})

	t.Run("CommandGetKeys", func(t *testing.T) {
		d.Run(`
			COMMAND GETKEYS get a
			COMMAND GETKEYS set a b
			COMMAND GETKEYS SET a b EX 10
			COMMAND GETKEYS del a b c
			COMMAND GETKEYS ping x
			COMMAND GETKEYS foo x
			COMMAND GETKEYS get a b
			COMMAND GETKEYS get
			COMMAND GETKEYS config get
			COMMAND GETKEYS config nosuch x
			COMMAND GETKEYSANDFLAGS get a
			COMMAND GETKEYSANDFLAGS ping x
		`)
		d.Proto(3)
		d.Do("COMMAND", "GETKEYSANDFLAGS", "get", "k")
		d.Proto(2)
	})

	t.Run("Info", func(t *testing.T) {
		// The same sections, in the same order, for each selection.
		for _, args := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "server", "CLIENTS"},
			{"INFO", "keyspace", "server", "keyspace"}, {"INFO", "everything"}} {
			want, got := d.DoBoth(args...)
			wo, _ := parseInfo(t, want)
			goo, _ := parseInfo(t, got)
			if strings.Join(wo, ",") != strings.Join(goo, ",") {
				t.Errorf("%v sections:\n  want: %v\n  got:  %v", args, wo, goo)
			}
		}
		d.Do("INFO", "nosuch")
		_, s := parseInfo(t, d.Got.Do("INFO", "all"))
		_, rs := parseInfo(t, d.Want.Do("INFO", "all"))
		for sec, fields := range map[string][]string{
			"Server":      {"redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id", "tcp_port", "uptime_in_seconds", "uptime_in_days", "executable", "config_file"},
			"Clients":     {"connected_clients", "maxclients", "blocked_clients"},
			"Memory":      {"used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak", "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio"},
			"Persistence": {"loading", "aof_enabled", "aof_rewrite_in_progress", "rdb_bgsave_in_progress"},
			"Stats":       {"total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec", "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "rejected_connections"},
			"Replication": {"role", "connected_slaves", "master_replid", "master_repl_offset"},
			"CPU":         {"used_cpu_sys", "used_cpu_user"},
			"Cluster":     {"cluster_enabled"},
		} {
			for _, f := range fields {
				if _, ok := rs[sec][f]; !ok {
					t.Errorf("Redis has no %s in %s: fix the test", f, sec)
				}
				if _, ok := s[sec][f]; !ok {
					t.Errorf("INFO %s has no %s", sec, f)
				}
			}
		}
		if v := s["Server"]["redis_version"]; v != rs["Server"]["redis_version"] {
			t.Errorf("redis_version %q, Redis %q", v, rs["Server"]["redis_version"])
		}
		if s["Server"]["basalt_version"] == "" || s["Persistence"]["aof_enabled"] != "1" || s["Replication"]["role"] != wantRole() {
			t.Errorf("INFO: basalt_version %q aof_enabled %q role %q", s["Server"]["basalt_version"], s["Persistence"]["aof_enabled"], s["Replication"]["role"])
		}
		if s["Server"]["tcp_port"] != strconv.Itoa(basalt.Port) {
			t.Errorf("tcp_port %s, basalt listens on %d", s["Server"]["tcp_port"], basalt.Port)
		}
		if n, _ := strconv.ParseInt(s["Memory"]["used_memory"], 10, 64); n <= 0 {
			t.Errorf("used_memory %q", s["Memory"]["used_memory"])
		}

		// connected_clients counts connections.
		g := d.Got
		before := infoField(t, g, "clients", "connected_clients")
		var extra []*testutil.Conn
		for range 3 {
			c := testutil.Dial(t, basalt.Addr)
			c.Do("PING")
			extra = append(extra, c)
		}
		if n := infoField(t, g, "clients", "connected_clients"); n != before+3 {
			t.Errorf("connected_clients %d after 3 more connections, was %d", n, before)
		}
		for _, c := range extra {
			c.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for infoField(t, g, "clients", "connected_clients") != before && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := infoField(t, g, "clients", "connected_clients"); n != before {
			t.Errorf("connected_clients %d after closing them, want %d", n, before)
		}

		// Group commit shows in INFO persistence: a pipeline of 100 writes
		// is applied as 100 records in fewer groups, and the log synced.
		stats := func() (records, groups, syncs int64) {
			return infoField(t, g, "persistence", "basalt_records_applied"),
				infoField(t, g, "persistence", "basalt_groups_committed"),
				infoField(t, g, "persistence", "basalt_log_syncs")
		}
		r0, g0, s0 := stats()
		var pipe []byte
		for i := range 100 {
			pipe = append(pipe, testutil.Command("SET", "groupcommit:"+strconv.Itoa(i), "v")...)
		}
		g.Send(pipe)
		for range 100 {
			g.Read()
		}
		deadline = time.Now().Add(5 * time.Second) // a follower applies after it answers
		for r, _, _ := stats(); r < r0+100 && time.Now().Before(deadline); r, _, _ = stats() {
			time.Sleep(20 * time.Millisecond)
		}
		if r1, g1, s1 := stats(); r1-r0 < 100 || g1 == g0 || g1-g0 >= r1-r0 || s1 == s0 {
			t.Errorf("after a pipeline of 100 SETs: %d records in %d groups, %d syncs", r1-r0, g1-g0, s1-s0)
		}

		// INFO memory shows the metadata cache and its member memos: the
		// fields a write put in a hash stay as memos.
		m0 := infoField(t, g, "memory", "basalt_member_memo_bytes")
		g.Do("HSET", "memo:h", "f1", "v1", "f2", "v2")
		g.Do("HGET", "memo:h", "f1")
		deadline = time.Now().Add(5 * time.Second)
		for infoField(t, g, "memory", "basalt_member_memo_bytes") <= m0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if m := infoField(t, g, "memory", "basalt_member_memo_bytes"); m <= m0 || infoField(t, g, "memory", "basalt_meta_cache_bytes") <= 0 {
			t.Errorf("INFO memory: member memos %d bytes after HSET, %d before; metadata cache %d bytes", m, m0, infoField(t, g, "memory", "basalt_meta_cache_bytes"))
		}

		// total_commands_processed grows with each command.
		n0 := infoField(t, g, "stats", "total_commands_processed")
		in0 := infoField(t, g, "stats", "total_net_input_bytes")
		for range 10 {
			g.Do("PING")
		}
		if n := infoField(t, g, "stats", "total_commands_processed"); n < n0+10 {
			t.Errorf("total_commands_processed %d after 10 commands, was %d", n, n0)
		}
		if n := infoField(t, g, "stats", "total_net_input_bytes"); n < in0+10*int64(len(testutil.Command("PING"))) {
			t.Errorf("total_net_input_bytes %d after 10 PINGs, was %d", n, in0)
		}

		// Keyspace is the same as Redis's for the same data.
		d.Do("FLUSHALL")
		d.Run(`
			SET a 1
			SET b 2
			SELECT 2
			SET c 3
			SELECT 0
		`)
		d.Do("INFO", "keyspace")
		d.Do("FLUSHALL")
		d.Do("INFO", "keyspace")

		// Active expiry is counted (by the leader, which runs it).
		e0 := infoField(t, g, "stats", "expired_keys")
		if testutil.ClusterMode() > 1 {
			e0 = -1
		}
		g.Do("SET", "soon", "x", "PX", "50")
		deadline = time.Now().Add(5 * time.Second)
		for infoField(t, g, "stats", "expired_keys") == e0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := infoField(t, g, "stats", "expired_keys"); n < e0+1 {
			t.Errorf("expired_keys %d after a key expired, was %d", n, e0)
		}

		d.Proto(3)
		_, got := d.DoBoth("INFO", "server")
		if got.Kind != '=' || got.Format != "txt" {
			t.Errorf("RESP3 INFO is %v, want a verbatim string", got.Kind)
		}
		d.Do("INFO", "nosuch")
		d.Proto(2)
	})

	t.Run("Config", func(t *testing.T) {
		d.Run(`
			CONFIG SET appendfsync everysec
			CONFIG GET appendfsync
			CONFIG SET appendfsync no maxclients 5000
			@unordered CONFIG GET appendfsync maxclients
			CONFIG GET maxc*
			CONFIG GET MAXCLIENTS
			CONFIG GET nosuch
			CONFIG GET
			CONFIG SET databases 5
			CONFIG SET foo 1
			CONFIG SET appendfsync bad
			CONFIG SET appendfsync everysec appendfsync no
			CONFIG SET maxclients abc
			CONFIG SET maxclients 0
			CONFIG SET proto-max-bulk-len 1
			CONFIG SET requirepass
			CONFIG SET appendfsync always maxclients x
			CONFIG GET appendfsync
			CONFIG SET appendfsync always maxclients 4000 proto-max-bulk-len 512mb
			@unordered CONFIG GET appendfsync maxclients proto-max-bulk-len
			CONFIG REWRITE
			CONFIG RESETSTAT
			CONFIG RESETSTAT x
			CONFIG HELP
			CONFIG FOO
			CONFIG
		`)
		d.Proto(3)
		d.DoUnordered("CONFIG", "GET", "appendfsync", "maxclients", "databases")
		d.Proto(2)

		// The fsync policy takes effect and INFO says so.
		g := d.Got
		g.Do("CONFIG", "SET", "appendfsync", "everysec")
		_, s := parseInfo(t, g.Do("INFO", "persistence"))
		if s["Persistence"]["appendfsync"] != "everysec" {
			t.Errorf("INFO persistence appendfsync:%q after CONFIG SET appendfsync everysec", s["Persistence"]["appendfsync"])
		}
		g.Do("CONFIG", "SET", "appendfsync", "always")

		// RESETSTAT zeroes the counters.
		for range 5 {
			g.Do("PING")
		}
		g.Do("CONFIG", "RESETSTAT")
		if n := infoField(t, g, "stats", "total_commands_processed"); n > 2 {
			t.Errorf("total_commands_processed %d right after CONFIG RESETSTAT", n)
		}

		// maxclients applies to new connections.
		before := infoField(t, g, "clients", "connected_clients")
		g.Do("CONFIG", "SET", "maxclients", strconv.FormatInt(before, 10))
		c := testutil.Dial(t, basalt.Addr)
		if r, err := c.DoErr("PING"); err == nil && r.Str != "ERR max number of clients reached" {
			t.Errorf("connection beyond maxclients: %v", r)
		}
		// Back to a number any descriptor limit allows: a follower's
		// client takes two descriptors (forwarding), and CONFIG SET refuses
		// more clients than the limit holds, as Redis's updateMaxclients.
		if r := g.Do("CONFIG", "SET", "maxclients", "4000"); r.String() != "+OK" {
			t.Fatalf("CONFIG SET maxclients 4000: %v", r)
		}
	})

	t.Run("ConfigRewrite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "basalt.conf")
		os.WriteFile(path, []byte("# test config\nappendfsync everysec\nmaxclients 100\nmaxclients 200\n"), 0o644)
		p := testutil.StartBasalt(t, "", "--config", path)
		c := testutil.Dial(t, p.Addr)
		if r := c.Do("CONFIG", "GET", "maxclients"); r.String() != `["maxclients", "200"]` {
			t.Errorf("from the file: %v", r)
		}
		c.Do("CONFIG", "SET", "appendfsync", "no", "maxclients", "77", "requirepass", "a b")
		if r := c.Do("CONFIG", "REWRITE"); r.String() != "+OK" {
			t.Fatalf("CONFIG REWRITE: %v", r)
		}
		b, _ := os.ReadFile(path)
		// Lines set in place, later duplicates dropped, other non-default
		// settings (here port and dir from the command line) appended.
		want := "# test config\nappendfsync no\nmaxclients 77\n# Generated by CONFIG REWRITE\n"
		if !strings.HasPrefix(string(b), want) || strings.Count(string(b), "maxclients") != 1 ||
			!strings.Contains(string(b), "\nrequirepass \"a b\"\n") || !strings.Contains(string(b), "\nport "+strconv.Itoa(p.Port)+"\n") {
			t.Errorf("rewritten file:\n%s", b)
		}
		_, s := parseInfo(t, c.Do("INFO", "server"))
		if s["Server"]["config_file"] != path {
			t.Errorf("config_file %q, want %q", s["Server"]["config_file"], path)
		}
		// Without a password again (the harness PINGs on restart).
		c.Do("CONFIG", "SET", "requirepass", "")
		c.Do("CONFIG", "REWRITE")
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), "\nrequirepass \"\"\n") {
			t.Errorf("second rewrite:\n%s", b)
		}
		p.Stop()
		p.Restart(t)
		c = testutil.Dial(t, p.Addr)
		if r := c.Do("CONFIG", "GET", "maxclients"); r.String() != `["maxclients", "77"]` {
			t.Errorf("after restart: %v", r)
		}
	})

	t.Run("Client", func(t *testing.T) {
		d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
		d.Run(`
			CLIENT GETNAME
			CLIENT SETNAME conn1
			CLIENT GETNAME
			CLIENT SETNAME "a b"
			CLIENT SETNAME
			CLIENT GETNAME
			CLIENT SETNAME ""
			CLIENT GETNAME
			CLIENT NO-EVICT on
			CLIENT NO-EVICT off
			CLIENT NO-EVICT maybe
			CLIENT REPLY maybe
			CLIENT LIST TYPE foo
			CLIENT LIST TYPE pubsub
			CLIENT LIST ID abc
			CLIENT LIST ID 0
			CLIENT LIST foo
			CLIENT LIST ID 999999
			CLIENT KILL 1.2.3.4:5
			CLIENT KILL ID abc
			CLIENT KILL ID 0
			CLIENT KILL USER foo
			CLIENT KILL TYPE foo
			CLIENT KILL SKIPME maybe
			CLIENT KILL ID 1 ID
			CLIENT KILL foo bar
			CLIENT KILL ID 999999
			CLIENT KILL TYPE pubsub
			CLIENT FOO
			CLIENT
			CLIENT ID x
		`)
		g := d.Got
		id := g.Do("CLIENT", "ID")
		if id.Kind != ':' || id.Int <= 0 {
			t.Fatalf("CLIENT ID %v", id)
		}
		// CLIENT INFO has Redis's fields in Redis's order, with our values.
		g.Do("CLIENT", "SETNAME", "me")
		g.Do("SELECT", "3")
		wantKeys, _ := clientFields(d.Want.Do("CLIENT", "INFO").Str)
		keys, f := clientFields(g.Do("CLIENT", "INFO").Str)
		if strings.Join(keys, " ") != strings.Join(wantKeys, " ") {
			t.Errorf("CLIENT INFO fields:\n  want: %v\n  got:  %v", wantKeys, keys)
		}
		if f["id"] != strconv.FormatInt(id.Int, 10) || f["name"] != "me" || f["db"] != "3" || f["cmd"] != "client|info" ||
			f["flags"] != "N" || f["multi"] != "-1" || f["user"] != "default" || f["resp"] != "2" || f["laddr"] != basalt.Addr {
			t.Errorf("CLIENT INFO values: %v", f)
		}
		g.Do("SELECT", "0")

		// CLIENT LIST shows every connection, one line each.
		other := testutil.Dial(t, basalt.Addr)
		otherID := other.Do("CLIENT", "ID").Int
		other.Do("MULTI")
		other.Do("PING")
		list := g.Do("CLIENT", "LIST").Str
		if !strings.HasSuffix(list, "\n") {
			t.Errorf("CLIENT LIST does not end in a newline: %q", list)
		}
		seen := map[string]map[string]string{}
		for _, line := range strings.Split(strings.TrimSuffix(list, "\n"), "\n") {
			_, f := clientFields(line)
			seen[f["id"]] = f
		}
		if n := infoField(t, g, "clients", "connected_clients"); int64(len(seen)) != n {
			t.Errorf("CLIENT LIST has %d lines, connected_clients %d", len(seen), n)
		}
		if o := seen[strconv.FormatInt(otherID, 10)]; o == nil || o["flags"] != "x" || o["multi"] != "1" || o["cmd"] != "ping" {
			t.Errorf("the other client in MULTI: %v", o)
		}
		if r := g.Do("CLIENT", "LIST", "ID", strconv.FormatInt(otherID, 10)); strings.Count(r.Str, "\n") != 1 || !strings.HasPrefix(r.Str, "id="+strconv.FormatInt(otherID, 10)+" ") {
			t.Errorf("CLIENT LIST ID: %q", r.Str)
		}

		// CLIENT KILL ID closes that connection, and only that one.
		if r := g.Do("CLIENT", "KILL", "ID", strconv.FormatInt(otherID, 10)); r.String() != ":1" {
			t.Errorf("CLIENT KILL ID: %v", r)
		}
		if _, err := other.DoErr("PING"); err == nil {
			t.Errorf("killed connection still answers")
		}
		if r := g.Do("PING"); r.String() != "+PONG" {
			t.Errorf("killer: %v", r)
		}
		// The old form by address, and SKIPME no on both servers.
		for _, addr := range []string{redis.Addr, basalt.Addr} {
			victim := testutil.Dial(t, addr)
			ctl := testutil.Dial(t, addr)
			vinfo := victim.Do("CLIENT", "INFO").Str
			_, vf := clientFields(vinfo)
			if r := ctl.Do("CLIENT", "KILL", vf["addr"]); r.String() != "+OK" {
				t.Errorf("%s CLIENT KILL addr: %v", addr, r)
			}
			if _, err := victim.DoErr("PING"); err == nil {
				t.Errorf("%s: connection killed by address still answers", addr)
			}
			if r := ctl.Do("CLIENT", "KILL", "ADDR", vf["addr"]); r.String() != ":0" {
				t.Errorf("%s: CLIENT KILL ADDR of a closed connection: %v", addr, r)
			}
			myID := strconv.FormatInt(ctl.Do("CLIENT", "ID").Int, 10)
			if r := ctl.Do("CLIENT", "KILL", "ID", myID); r.String() != ":0" {
				t.Errorf("%s: CLIENT KILL ID self (SKIPME yes): %v", addr, r)
			}
			if r := ctl.Do("CLIENT", "KILL", "ID", myID, "SKIPME", "no"); r.String() != ":1" {
				t.Errorf("%s: CLIENT KILL ID self SKIPME no: %v", addr, r)
			}
			if _, err := ctl.DoErr("PING"); err == nil {
				t.Errorf("%s: connection that killed itself still answers", addr)
			}
		}
	})

	t.Run("ClientReply", func(t *testing.T) {
		// Each server gets the same pipeline; the replies must be the same.
		script := [][]string{
			{"CLIENT", "REPLY", "OFF"},
			{"SET", "r", "1"},
			{"GET", "r"},
			{"PING"},
			{"CLIENT", "REPLY", "ON"},
			{"GET", "r"},
			{"CLIENT", "REPLY", "SKIP"},
			{"ECHO", "skipped"},
			{"ECHO", "shown"},
			{"CLIENT", "REPLY", "SKIP"},
			{"CLIENT", "REPLY", "ON"},
			{"CLIENT", "REPLY", "OFF"},
			{"CLIENT", "REPLY", "SKIP"},
			{"INCR", "r"},
			{"CLIENT", "REPLY", "ON"},
			{"GET", "r"},
		}
		var replies [2][]string
		for i, addr := range []string{redis.Addr, basalt.Addr} {
			c := testutil.Dial(t, addr)
			var raw []byte
			for _, args := range script {
				raw = append(raw, testutil.Command(args...)...)
			}
			c.Send(raw)
			for range 6 {
				replies[i] = append(replies[i], c.Read().String())
			}
			if r := c.Do("PING"); r.String() != "+PONG" {
				t.Errorf("%s: after the script, PING: %v (extra replies?)", addr, r)
			}
		}
		if strings.Join(replies[0], " ") != strings.Join(replies[1], " ") {
			t.Errorf("CLIENT REPLY pipeline:\n  want: %v\n  got:  %v", replies[0], replies[1])
		}
	})

	t.Run("RequirePass", func(t *testing.T) {
		d.Do("CONFIG", "SET", "requirepass", "secret")
		defer func() {
			// d was connected before the password: still authenticated.
			d.Do("CONFIG", "SET", "requirepass", "")
		}()
		n := testutil.NewDiff(t, redis.Addr, basalt.Addr)
		n.Run(`
			PING
			GET a
			CLIENT ID
			COMMAND COUNT
			AUTH wrong
			AUTH default wrong
			AUTH nosuch secret
			AUTH a b c
			HELLO 3
			HELLO 3 AUTH default wrong
			PING
			AUTH secret
			PING
			AUTH wrong
			PING
		`)
		h := testutil.NewDiff(t, redis.Addr, basalt.Addr)
		want, got := h.DoBoth("HELLO", "3", "AUTH", "default", "secret")
		if want.Kind != '%' || got.Kind != '%' || len(want.Elems) != len(got.Elems) {
			t.Errorf("HELLO 3 AUTH: want %v, got %v", want, got)
		}
		h.Run("PING\nAUTH default secret")
		d.Do("PING")
	})

	t.Run("DebugSleep", func(t *testing.T) {
		start := time.Now()
		if r := d.Got.Do("DEBUG", "SLEEP", "0.2"); r.String() != "+OK" {
			t.Errorf("DEBUG SLEEP: %v", r)
		}
		if el := time.Since(start); el < 200*time.Millisecond {
			t.Errorf("DEBUG SLEEP 0.2 returned after %v", el)
		}
	})
}

// basaltOnly are the commands Redis 7.0 does not have: basalt's own
// (RAFT, CLIENT PROXY), CLUSTER MYSHARDID and WAITAOF from Redis 7.2, hash
// field expiration from Redis 7.4 and HGETDEL, HGETEX and HSETEX from 8.0.
var basaltOnly = map[string]bool{"raft": true, "cluster|myshardid": true, "client|proxy": true, "waitaof": true,
	"hexpire": true, "hpexpire": true, "hexpireat": true, "hpexpireat": true, "httl": true, "hpttl": true,
	"hexpiretime": true, "hpexpiretime": true, "hpersist": true, "hgetdel": true, "hgetex": true, "hsetex": true}

// wantRole is INFO's role: a follower reports itself as a replica.
func wantRole() string {
	if testutil.ClusterMode() > 1 {
		return "slave"
	}
	return "master"
}
