package testutil

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`SET k v`, []string{"SET", "k", "v"}},
		{"  GET \t k  ", []string{"GET", "k"}},
		{``, nil},
		{`SET k ""`, []string{"SET", "k", ""}},
		{`SET "a b" "x\ny\r\tz"`, []string{"SET", "a b", "x\ny\r\tz"}},
		{`SET k "q\"uote\\back"`, []string{"SET", "k", `q"uote\back`}},
		{`SET k "\x41\x7a\xff\x4"`, []string{"SET", "k", "Az\xffx4"}},
		{`SET k "\q"`, []string{"SET", "k", "q"}},
		{`SET k 'it\'s \n raw'`, []string{"SET", "k", `it's \n raw`}},
		{`SET k ''`, []string{"SET", "k", ""}},
		{`SET a"b c" v`, []string{"SET", "ab c", "v"}},
		{`ECHO "日本"`, []string{"ECHO", "日本"}},
	}
	for _, tt := range tests {
		got, err := SplitArgs(tt.line)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	for _, bad := range []string{`SET "k`, `SET 'k`, `SET "a"b`, `SET 'a'b`, `SET k "\"`} {
		if got, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseAndString(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"+OK\r\n", "+OK"},
		{"-ERR wrong, very: wrong\r\n", "-ERR wrong, very: wrong"},
		{":-3\r\n", ":-3"},
		{"$3\r\nabc\r\n", `"abc"`},
		{"$0\r\n\r\n", `""`},
		{"$4\r\na\r\nb\r\n", `"a\r\nb"`},
		{"$-1\r\n", "(nil)"},
		{"*-1\r\n", "(nil-array)"},
		{"_\r\n", "(null)"},
		{"*0\r\n", "[]"},
		{"*3\r\n$1\r\na\r\n:1\r\n*1\r\n+x\r\n", `["a", :1, [+x]]`},
		{"*2\r\n+a, +b\r\n-ERR x: y\r\n", `[+"a, +b", -"ERR x: y"]`},
		{",1.5\r\n", ",1.5"},
		{",inf\r\n", ",inf"},
		{"(123456789012345678901234567890\r\n", "(123456789012345678901234567890"},
		{"#t\r\n", "#t"},
		{"#f\r\n", "#f"},
		{"%2\r\n+k\r\n:1\r\n$1\r\nz\r\n_\r\n", `%{+k: :1, "z": (null)}`},
		{"~2\r\n$1\r\na\r\n$1\r\nb\r\n", `~{"a", "b"}`},
		{">2\r\n$7\r\nmessage\r\n$2\r\nhi\r\n", `>["message", "hi"]`},
		{"=8\r\ntxt:a\nbc\r\n", `=txt:"a\nbc"`},
		{"!5\r\nERR x\r\n", `!"ERR x"`},
		{"|1\r\n+ttl\r\n:9\r\n$1\r\nv\r\n", `|{+ttl: :9} "v"`},
	}
	for _, tt := range tests {
		r, err := ParseReply([]byte(tt.raw))
		if err != nil {
			t.Errorf("ParseReply(%q): %v", tt.raw, err)
			continue
		}
		if got := r.String(); got != tt.want {
			t.Errorf("ParseReply(%q).String() = %s, want %s", tt.raw, got, tt.want)
		}
	}
	for _, bad := range []string{"", "+OK\n", "?x\r\n", "$3\r\nab\r\n", "$3\r\nabcd\r\n", ":x\r\n", "#x\r\n", "~-1\r\n", "+OK\r\n+OK\r\n"} {
		if r, err := ParseReply([]byte(bad)); err == nil {
			t.Errorf("ParseReply(%q) = %v, want an error", bad, r)
		}
	}
}

func parse(t *testing.T, raw string) Reply {
	t.Helper()
	r, err := ParseReply([]byte(raw))
	if err != nil {
		t.Fatalf("ParseReply(%q): %v", raw, err)
	}
	return r
}

func TestCompareDetectsTypeDifferences(t *testing.T) {
	pairs := [][2]string{
		{"+abc\r\n", "$3\r\nabc\r\n"},
		{":1\r\n", "$1\r\n1\r\n"},
		{"$-1\r\n", "_\r\n"},
		{"$-1\r\n", "*-1\r\n"},
		{"*0\r\n", "~0\r\n"},
		{",1.5\r\n", ",1.50\r\n"},
		{"*2\r\n+a\r\n+b\r\n", "*1\r\n+a, +b\r\n"},
		{"-ERR x\r\n", "!5\r\nERR x\r\n"},
		{"%1\r\n+a\r\n+b\r\n", "*2\r\n+a\r\n+b\r\n"},
	}
	for _, p := range pairs {
		if err := Compare([]string{"X"}, parse(t, p[0]), parse(t, p[1])); err == nil {
			t.Errorf("Compare(%q, %q) = nil, want a mismatch", p[0], p[1])
		}
	}
	if err := Compare([]string{"X"}, parse(t, "*1\r\n:1\r\n"), parse(t, "*1\r\n:1\r\n")); err != nil {
		t.Errorf("equal replies: %v", err)
	}
	a := parse(t, "%2\r\n+b\r\n:2\r\n+a\r\n:1\r\n").Sorted()
	if got := a.String(); got != "%{+a: :1, +b: :2}" {
		t.Errorf("Sorted map = %s", got)
	}
}

// recorder catches Errorf so a test can check that Diff reports mismatches.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestDiffTwoRedis(t *testing.T) {
	a, b := StartRedis(t), StartRedis(t)
	d := NewDiff(t, a.Addr, b.Addr)
	d.Run(`
		# strings and counters
		SET k v
		GET k
		GET missing
		SET "sp ace" "x\ny"
		GET "sp ace"
		INCR n
		INCRBY n 41
		INCR k
		GET
		NOSUCHCOMMAND 'a b'
		RPUSH l a b c
		LRANGE l 0 -1
		BLPOP nosuch 0.01
		ZADD z 1.5 m 2 n
		ZSCORE z m
		HSET h f1 v1 f2 v2
		@unordered SMEMBERS nosuch
	`)

	want, got := d.DoBoth("HELLO", "3")
	for _, r := range []Reply{want, got} {
		if r.Kind != '%' || !strings.Contains(r.String(), `"proto": :3`) {
			t.Errorf("HELLO 3 = %v, want a map with proto 3", r)
		}
	}
	d.Run(`
		ZSCORE z m
		ZRANGE z 0 -1 WITHSCORES
		GET missing
		HGETALL h
		SADD s x y
		@unordered SMEMBERS s
		INCR k
	`)
	if want, _ := d.DoBoth("ZSCORE", "z", "m"); want.String() != ",1.5" {
		t.Errorf("RESP3 ZSCORE = %v, want ,1.5", want)
	}

	// A real difference must be reported, and the Diff must carry on.
	d.Got.Do("SET", "k", "other")
	want, got = d.DoBoth("GET", "k")
	if err := Compare([]string{"GET", "k"}, want, got); err == nil {
		t.Errorf("GET k: %v and %v compare equal", want, got)
	}
	rec := &recorder{TB: t}
	rd := &Diff{Want: d.Want, Got: d.Got, t: rec}
	rd.Run("GET k\nEXISTS k\nGET k\n")
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "script line 1") || !strings.Contains(rec.errs[1], "script line 3") {
		t.Errorf("mismatch reports = %q, want lines 1 and 3", rec.errs)
	}
}

func TestConnPipelineAndRaw(t *testing.T) {
	p := StartRedis(t)
	c := Dial(t, p.Addr)
	c.Send(append(Command("SET", "a", "1"), Command("GET", "a")...))
	if r := c.Read(); r.String() != "+OK" {
		t.Errorf("SET = %v", r)
	}
	if r := c.Read(); r.String() != `"1"` {
		t.Errorf("GET = %v", r)
	}
	if got := string(c.DoBytes([]byte("GET a\r\n"))); got != "$1\r\n1\r\n" {
		t.Errorf("inline GET raw = %q", got)
	}
	// The connection breaks when the server dies: DoErr reports it.
	p.Kill()
	if r, err := c.DoErr("PING"); err == nil {
		t.Errorf("PING after Kill = %v, want an error", r)
	}
}

func TestProcLifecycle(t *testing.T) {
	p := StartRedis(t)
	pid := p.Pid()
	if pid == 0 || !p.Running() {
		t.Fatalf("pid %d, running %v", pid, p.Running())
	}
	p.Kill()
	if p.Running() {
		t.Fatal("running after Kill")
	}
	p.Restart(t)
	if p.Pid() == pid {
		t.Errorf("same pid %d after Restart", pid)
	}
	if r := Dial(t, p.Addr).Do("PING"); r.String() != "+PONG" {
		t.Errorf("PING after Restart = %v", r)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// TestStartBasaltStandIn runs StartBasalt with redis-server as the binary: it
// takes the same --bind/--port/--dir flags, and with its default save points
// it persists on SIGTERM but not on SIGKILL, like a crash test expects.
func TestStartBasaltStandIn(t *testing.T) {
	t.Setenv("BASALT_BIN", "redis-server")
	dir := t.TempDir()
	p := StartBasalt(t, dir)
	c := Dial(t, p.Addr)
	c.Do("SET", "a", "1")
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	p.Restart(t)
	c = Dial(t, p.Addr)
	c.Do("SET", "b", "2")
	p.Kill()
	p.Restart(t)
	c = Dial(t, p.Addr)
	if r := c.Do("MGET", "a", "b"); r.String() != `["1", (nil)]` {
		t.Errorf("after Stop and Kill: MGET a b = %v", r)
	}
	log, err := os.ReadFile(p.Log)
	if err != nil || strings.Count(string(log), "=== testutil: starting") != 3 {
		t.Errorf("log %s should record 3 starts (err %v)", p.Log, err)
	}
}
