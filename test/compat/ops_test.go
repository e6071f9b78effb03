package compat

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// SLOWLOG, LATENCY and MONITOR against redis-server: what they record and
// show, with times, ids and addresses taken out.

// startOpsPair starts redis-server (with DEBUG allowed) and a lone basalt:
// through a follower, the leader runs and logs the commands.
func startOpsPair(t *testing.T) *testutil.Diff {
	t.Helper()
	if testutil.ClusterMode() > 1 {
		t.Skip("the slowlog, latency and monitor are each node's: see TestMonitor's notes in README")
	}
	redis := testutil.StartRedis(t, "--enable-debug-command", "yes")
	basalt := testutil.StartBasalt(t, "")
	return testutil.NewDiff(t, redis.Addr, basalt.Addr)
}

// slowlogArgs returns the argument lists of SLOWLOG GET's entries, and
// checks the other fields' shapes.
func slowlogArgs(t *testing.T, server string, r testutil.Reply) []string {
	t.Helper()
	var out []string
	last := int64(-1)
	for _, e := range r.Elems {
		if len(e.Elems) != 6 || e.Elems[3].Kind != '*' {
			t.Fatalf("%s: entry %v", server, e)
		}
		id, at, us := e.Elems[0].Int, e.Elems[1].Int, e.Elems[2].Int
		if last >= 0 && id >= last || us < 0 || time.Since(time.Unix(at, 0)) > time.Minute {
			t.Errorf("%s: entry %v: id, time or duration", server, e)
		}
		last = id
		if !strings.HasPrefix(e.Elems[4].Str, "127.0.0.1:") && e.Elems[4].Str != "?:0" {
			t.Errorf("%s: entry %v: client address", server, e)
		}
		var args []string
		for _, a := range e.Elems[3].Elems {
			args = append(args, strconv.Quote(a.Str))
		}
		out = append(out, strings.Join(args, " ")+" name="+e.Elems[5].Str)
	}
	return out
}

func TestSlowlog(t *testing.T) {
	d := startOpsPair(t)
	d.Run(`
		CONFIG GET slowlog-log-slower-than
		CONFIG GET slowlog-max-len
		CONFIG SET slowlog-log-slower-than -2
		CONFIG SET slowlog-log-slower-than abc
		CONFIG SET slowlog-max-len -1
		CONFIG SET latency-monitor-threshold -1
		SLOWLOG GET -2
		SLOWLOG GET x
		SLOWLOG GET 1 2
		SLOWLOG LEN x
		SLOWLOG foo
		SLOWLOG
		SLOWLOG HELP
		CONFIG SET slowlog-log-slower-than 0
		CONFIG GET slowlog-log-slower-than
		SLOWLOG RESET
		SLOWLOG LEN
	`)
	long := strings.Repeat("x", 200)
	many := []string{"RPUSH", "list"}
	for i := range 40 {
		many = append(many, strconv.Itoa(i))
	}
	for _, cmd := range [][]string{
		{"SET", "k", "v"}, {"GET", "k"}, {"SET", "big", long}, many,
		{"SET", "x", "y", "EX", "-1"}, {"AUTH", "secret"}, {"HELLO", "2", "AUTH", "default", "pw"},
		{"ACL", "SETUSER", "slow", "on", ">pw"}, {"CLIENT", "SETNAME", "tester"}, {"MULTI"}, {"INCR", "n"}, {"GET", "n"}, {"EXEC"},
		{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"}, {"NOSUCH"}, {"GET"},
	} {
		d.DoBoth(cmd...)
	}
	want, got := d.DoBoth("SLOWLOG", "GET", "-1")
	w, g := slowlogArgs(t, "redis", want), slowlogArgs(t, "basalt", got)
	if !slices.Equal(w, g) {
		t.Errorf("SLOWLOG GET -1:\nredis:  %q\nbasalt: %q", w, g)
	}
	if want, got := d.DoBoth("SLOWLOG", "GET", "2"); len(want.Elems) != 2 || len(got.Elems) != 2 {
		t.Errorf("SLOWLOG GET 2: redis %v, basalt %v", want, got)
	}
	d.Run(`
		CONFIG SET slowlog-max-len 3
		SLOWLOG LEN
		PING
		SLOWLOG LEN
		CONFIG SET slowlog-log-slower-than -1
		SLOWLOG RESET
		PING
		SLOWLOG LEN
		SLOWLOG GET
		CONFIG SET slowlog-log-slower-than 10000
		PING
		SLOWLOG LEN
	`)
}

func TestLatency(t *testing.T) {
	d := startOpsPair(t)
	d.Run(`
		CONFIG GET latency-monitor-threshold
		CONFIG GET latency-tracking
		LATENCY LATEST
		LATENCY HISTORY command
		LATENCY GRAPH command
		LATENCY DOCTOR
		LATENCY RESET
		LATENCY RESET command
		LATENCY HISTORY
		LATENCY GRAPH
		LATENCY foo
		LATENCY HELP
		LATENCY HISTOGRAM nosuch
		DEBUG SLEEP 0.02
		LATENCY LATEST
	`)
	d.Do("CONFIG", "SET", "latency-monitor-threshold", "5")
	d.Do("LATENCY", "DOCTOR") // no spike yet, unless a machine stalls 5 ms
	d.Do("DEBUG", "SLEEP", "0.02")
	want, got := d.DoBoth("LATENCY", "LATEST")
	for name, r := range map[string]testutil.Reply{"redis": want, "basalt": got} {
		if len(r.Elems) != 1 || len(r.Elems[0].Elems) != 4 || r.Elems[0].Elems[0].Str != "command" ||
			r.Elems[0].Elems[2].Int < 20 || r.Elems[0].Elems[3].Int < 20 {
			t.Errorf("%s: LATENCY LATEST %v", name, r)
		}
	}
	want, got = d.DoBoth("LATENCY", "HISTORY", "command")
	if len(want.Elems) != 1 || len(got.Elems) != 1 || len(got.Elems[0].Elems) != 2 || got.Elems[0].Elems[1].Int < 20 {
		t.Errorf("LATENCY HISTORY command: redis %v, basalt %v", want, got)
	}
	want, got = d.DoBoth("LATENCY", "GRAPH", "command")
	for name, r := range map[string]testutil.Reply{"redis": want, "basalt": got} {
		lines := strings.Split(r.Str, "\n")
		if len(lines) < 8 || !strings.HasPrefix(lines[0], "command - high ") || lines[1] != strings.Repeat("-", 80) || lines[5] != "_" {
			t.Errorf("%s: LATENCY GRAPH command %q", name, r.Str)
		}
	}
	want, got = d.DoBoth("LATENCY", "DOCTOR")
	if !strings.Contains(want.Str, "1. command: 1 latency spikes") || !strings.Contains(got.Str, "1. command: 1 latency spikes") {
		t.Errorf("LATENCY DOCTOR:\nredis: %s\nbasalt: %s", want.Str, got.Str)
	}
	d.Run(`
		LATENCY RESET nosuch command
		LATENCY LATEST
		LATENCY HISTORY command
		CONFIG SET latency-monitor-threshold 0
	`)

	// Histograms: the same calls counted in Redis's buckets.
	d.Do("CONFIG", "RESETSTAT")
	for range 3 {
		d.Do("SET", "a", "1")
	}
	d.Do("GET", "a")
	d.Do("CONFIG", "GET", "maxmemory")
	for _, proto := range []int{2, 3} {
		d.Proto(proto)
		want, got = d.DoBoth("LATENCY", "HISTOGRAM", "set", "GET", "config", "nosuch")
		w, g := histogramShape(t, "redis", want), histogramShape(t, "basalt", got)
		if w != g {
			t.Errorf("RESP%d LATENCY HISTOGRAM: redis %s, basalt %s", proto, w, g)
		}
	}
	d.Proto(2)
}

// labels are Redis's bucket labels, in µs.
var histogramLabels = []int64{1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266, 270532, 541065, 1073741}

// histogramShape checks one LATENCY HISTOGRAM reply's buckets and returns
// its commands and calls.
func histogramShape(t *testing.T, server string, r testutil.Reply) string {
	t.Helper()
	var out []string
	if r.Kind != '*' && r.Kind != '%' || len(r.Elems)%2 != 0 {
		t.Fatalf("%s: %v", server, r)
	}
	for i := 0; i < len(r.Elems); i += 2 {
		h := r.Elems[i+1]
		if len(h.Elems) != 4 || h.Elems[0].Str != "calls" || h.Elems[2].Str != "histogram_usec" {
			t.Fatalf("%s: %v", server, h)
		}
		buckets, prev, last := h.Elems[3].Elems, int64(0), int64(-1)
		for j := 0; j < len(buckets); j += 2 {
			label, n := buckets[j].Int, buckets[j+1].Int
			if !slices.Contains(histogramLabels, label) || label <= last || n <= prev {
				t.Errorf("%s: %s buckets %v", server, r.Elems[i].Str, h.Elems[3])
			}
			last, prev = label, n
		}
		if prev != h.Elems[1].Int {
			t.Errorf("%s: %s: last bucket %d, calls %d", server, r.Elems[i].Str, prev, h.Elems[1].Int)
		}
		out = append(out, string(r.Kind)+r.Elems[i].Str+"="+strconv.FormatInt(h.Elems[1].Int, 10)+string(h.Kind)+string(h.Elems[3].Kind))
	}
	slices.Sort(out) // a container's subcommands come in Redis's hash order
	return strings.Join(out, " ")
}

// monitorLine matches a MONITOR line: time, database, client, command.
var monitorLine = regexp.MustCompile(`^\+?(\d+)\.(\d{6}) \[(\d+) (\S+)\] (.*)$`)

// monitorSession runs commands on one client while another monitors, and
// returns the lines the monitor got up to the ECHO that ends them, with
// the time left out and the client's address as "client".
func monitorSession(t *testing.T, addr string, cmds [][]string) []string {
	t.Helper()
	m := testutil.Dial(t, addr)
	if r := m.Do("MONITOR"); r.Str != "OK" {
		t.Fatalf("MONITOR: %v", r)
	}
	c := testutil.Dial(t, addr)
	for _, cmd := range cmds {
		c.Do(cmd...)
	}
	c.Do("ECHO", "the end")
	var lines []string
	for range 100 {
		r := m.Read()
		mm := monitorLine.FindStringSubmatch(r.Str)
		if r.Kind != '+' || mm == nil {
			t.Fatalf("%s: MONITOR sent %v", addr, r)
		}
		if at, _ := strconv.ParseInt(mm[1], 10, 64); time.Since(time.Unix(at, 0)) > time.Minute {
			t.Errorf("%s: MONITOR line's time: %q", addr, r.Str)
		}
		from := mm[4]
		if from != "lua" {
			from = "client"
		}
		lines = append(lines, mm[3]+" "+from+" "+mm[5])
		if mm[5] == `"ECHO" "the end"` {
			return lines
		}
	}
	t.Fatalf("%s: no end after 100 lines: %q", addr, lines)
	return nil
}

func TestMonitor(t *testing.T) {
	d := startOpsPair(t)
	cmds := [][]string{
		{"SET", "plain", "v"},
		{"SELECT", "2"},
		{"SET", "bin", "a\x00\x01\xff\n\r\t\a\b\"\\ é"},
		{"GET", "bin"},
		{"MULTI"}, {"INCR", "n"}, {"SET", "m", "1"}, {"EXEC"},
		{"MULTI"}, {"INCR", "n"}, {"NOSUCH"}, {"EXEC"},
		{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", "s", "x\ny"},
		{"AUTH", "secret"},
		{"HELLO", "2", "AUTH", "default", "pw"},
		{"CONFIG", "GET", "maxmemory"},
		{"SLOWLOG", "LEN"},
		{"CLIENT", "SETNAME", "who"},
		{"GET"}, {"NOSUCH"},
		{"SET", "x", "y", "EX", "-1"},
		{"PING"},
	}
	want := monitorSession(t, d.Want.Addr, cmds)
	got := monitorSession(t, d.Got.Addr, cmds)
	if !slices.Equal(want, got) {
		t.Errorf("MONITOR:\nredis:\n%s\nbasalt:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}

	// A monitor may not touch the key space; RESET ends monitoring.
	for _, addr := range []string{d.Want.Addr, d.Got.Addr} {
		m := testutil.Dial(t, addr)
		m.Do("MONITOR")
		if r := m.Do("GET", "k"); r.Str != "ERR Replica can't interact with the keyspace" {
			t.Errorf("%s: GET while monitoring: %v", addr, r)
		}
		m.Do("RESET")
		testutil.Dial(t, addr).Do("SET", "after", "reset")
		if r := m.Do("PING"); r.Str != "PONG" {
			t.Errorf("%s: after RESET: %v", addr, r)
		}
	}
	d.Run(`
		MONITOR x
		MULTI
		MONITOR
		EXEC
	`)
}

// TestMonitorRedisCli reads `redis-cli monitor`'s lines for another
// client's commands.
func TestMonitorRedisCli(t *testing.T) {
	if testutil.ClusterMode() > 1 {
		t.Skip("a lone node's MONITOR")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("no redis-cli")
	}
	b := testutil.StartBasalt(t, "")
	host, port, _ := strings.Cut(b.Addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli := exec.CommandContext(ctx, "redis-cli", "-h", host, "-p", port, "monitor")
	out, err := cli.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cli.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "OK" {
		t.Fatalf("redis-cli monitor began with %q", sc.Text())
	}
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v 1")
	c.Do("LPUSH", "l", "\x00")
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		mm := monitorLine.FindStringSubmatch(sc.Text())
		if mm == nil {
			t.Fatalf("redis-cli monitor printed %q", sc.Text())
		}
		lines = append(lines, mm[3]+" "+mm[5])
	}
	if want := []string{`0 "SET" "k" "v 1"`, `0 "LPUSH" "l" "\x00"`}; !slices.Equal(lines, want) {
		t.Errorf("redis-cli monitor: %q, want %q", lines, want)
	}
}
