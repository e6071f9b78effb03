package compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// aclRules are ACL SETUSER lines whose replies and GETUSER/LIST output
// must match Redis's. A user's rules name at most one single command
// beyond categories: Redis prints several in its hash order.
var aclRules = `
ACL SETUSER alice on >pw ~k* &ch* +get
ACL GETUSER alice
ACL SETUSER bob on nopass allkeys allchannels allcommands -config
ACL GETUSER bob
ACL SETUSER carol %R~r* %W~w* ~b* %RW~r* +@read -@dangerous
ACL SETUSER dave +@all -@dangerous
ACL SETUSER erin +@read +@write -@keyspace +select|0
ACL SETUSER frank +select|0 (~x +set) (%R~y &z +@read)
ACL GETUSER frank
ACL DRYRUN frank set x v
ACL DRYRUN frank get y
ACL DRYRUN frank set y v
ACL DRYRUN frank get x
ACL DRYRUN frank mget x y
ACL DRYRUN frank publish z m
ACL DRYRUN frank select 0
ACL DRYRUN frank select 1
ACL DRYRUN frank ping
ACL SETUSER frank clearselectors
ACL SETUSER grace +config|get #d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1
ACL GETUSER grace
ACL SETUSER grace !d74ff0ee8da3b9806b18c877dbf29bbde50b5bd8e4dad7a3a725000feb82e8f1 >a >b <a
ACL SETUSER heidi +@all reset
ACL SETUSER ivan skip-sanitize-payload +@pubsub -@slow
ACL USERS
ACL GETUSER nosuch
ACL SETUSER x +nosuch
ACL SETUSER x +@nosuch
ACL SETUSER x bogus
ACL SETUSER x allkeys ~x
ACL SETUSER x &* &x
ACL SETUSER x <nope
ACL SETUSER x #abc
ACL SETUSER x +config|get|x
ACL SETUSER x +get|
ACL SETUSER x -select|0
ACL SETUSER x (~x +get
ACL SETUSER x (~x +nosuch)
ACL SETUSER "a b"
ACL USERS
ACL DELUSER default
ACL DELUSER alice nosuch
ACL USERS
ACL CAT
ACL CAT nosuch
@unordered ACL CAT geo
@unordered ACL CAT transaction
@unordered ACL CAT scripting
ACL WHOAMI
ACL GENPASS 0
ACL GENPASS 5000
ACL GENPASS x
ACL LOAD
ACL SAVE
ACL DRYRUN nosuch get x
ACL DRYRUN bob nosuch
ACL DRYRUN bob get
ACL DRYRUN bob get x
ACL DRYRUN bob config get x
ACL DRYRUN carol set r1 v
ACL DRYRUN carol get r1
ACL DRYRUN carol get w1
ACL SETUSER judy on nopass resetchannels &news.* -@all +publish +subscribe +psubscribe
ACL DRYRUN judy publish news.a m
ACL DRYRUN judy publish sports m
ACL DRYRUN judy psubscribe news.*
ACL DRYRUN judy psubscribe news.a*
ACL BOGUS
ACL LOG RESET
ACL LOG 0
`

func TestACLRulesDiff(t *testing.T) {
	d := testutil.NewPairDiff(t)
	d.Run(aclRules)
	doTokens(t, d, "ACL", "GETUSER", "carol")
	doTokens(t, d, "ACL", "LIST")
	// GENPASS: its length.
	for _, bits := range []string{"", "1", "4", "5", "255", "4096"} {
		args := []string{"ACL", "GENPASS"}
		if bits != "" {
			args = append(args, bits)
		}
		want, got := d.DoBoth(args...)
		if len(want.Str) != len(got.Str) || want.Kind != got.Kind {
			t.Errorf("%v: want %v, got %v", args, want, got)
		}
	}
}

// userDiff connects to both servers as user (password pass).
func userDiff(t *testing.T, redis, basalt *testutil.Proc, user, pass string) *testutil.Diff {
	t.Helper()
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	d.Do("AUTH", user, pass)
	return d
}

// TestACLPermissionsDiff: the NOPERM errors for commands, keys, channels,
// transactions and scripts, and the ACL LOG entries they leave.
func TestACLPermissionsDiff(t *testing.T) {
	redis, basalt := testutil.StartPair(t)
	admin := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	admin.Run(`
ACL SETUSER app on >secret ~app:* %R~ro:* &chan:* +@read +@write +@scripting +@transaction +@pubsub -flushall
SET ro:1 v
ACL LOG RESET
`)
	app := userDiff(t, redis, basalt, "app", "secret")
	app.Run(`
ACL WHOAMI
SET app:1 v
GET app:1
GET ro:1
SET ro:1 w
GET other
MSET app:2 x other y
FLUSHALL
CONFIG GET maxmemory
PUBLISH chan:1 m
PUBLISH other m
EVAL "return redis.call('get', KEYS[1])" 1 app:1
EVAL "return redis.call('get', 'other')" 0
EVAL "return redis.pcall('set', 'ro:1', 'x')" 0
EVAL "return redis.call('flushall')" 0
EVAL "return redis.call('publish', 'other', 'm')" 0
EVAL "return redis.acl_check_cmd('get', 'other')" 0
EVAL "return redis.acl_check_cmd('get', 'app:1')" 0
EVAL_RO "return redis.call('get', 'other')" 0
MULTI
SET app:3 v
GET other
EXEC
MULTI
SET app:3 v
GET app:3
`)
	// Permissions revoked while queued: EXEC refuses that command only.
	admin.Do("ACL", "SETUSER", "app", "-get")
	app.Run(`
EXEC
AUTH app wrong
AUTH nosuch secret
AUTH secret
`)
	// SUBSCRIBE and PSUBSCRIBE check every channel.
	app.Do("SUBSCRIBE", "other")
	app.Do("PSUBSCRIBE", "chan:*")
	// The log: the deterministic fields of each entry. (Through a
	// follower, the leader logs the denials of scripts and transactions.)
	for _, n := range []string{"1", "3", "20"} {
		if testutil.ClusterMode() > 1 {
			break
		}
		want, got := admin.DoBoth("ACL", "LOG", n)
		if err := testutil.Compare([]string{"ACL", "LOG", n}, logFields(want), logFields(got)); err != nil {
			t.Error(err)
		}
	}
	admin.Run(`
ACL LOG RESET
ACL LOG
ACL DELUSER app
`)
}

// logFields keeps count, reason, context, object and username of ACL LOG
// entries (age and client info differ).
func logFields(r testutil.Reply) testutil.Reply {
	for i, e := range r.Elems {
		var keep []testutil.Reply
		for j := 0; j+1 < len(e.Elems); j += 2 {
			switch e.Elems[j].Str {
			case "count", "reason", "context", "object", "username":
				keep = append(keep, e.Elems[j], e.Elems[j+1])
			}
		}
		r.Elems[i].Elems = keep
	}
	return r
}

// TestACLAuthDiff: AUTH and HELLO with users, requirepass as the default
// user's password, CLIENT KILL USER.
func TestACLAuthDiff(t *testing.T) {
	redis, basalt := testutil.StartPair(t)
	admin := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	admin.Run(`
AUTH x
AUTH default x
ACL SETUSER off1 off >pw +@all
ACL SETUSER np on nopass +@all ~*
CONFIG SET requirepass s3cret
`)
	c := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	c.Run(`
GET k
AUTH wrong
AUTH off1 pw
AUTH np anything
ACL WHOAMI
AUTH default s3cret
ACL WHOAMI
HELLO 2 AUTH nosuch x
CLIENT KILL USER nosuch
`)
	for _, args := range [][]string{{"HELLO", "2", "AUTH", "np", "x"}, {"ACL", "GETUSER", "default"}} {
		want, got := c.DoBoth(args...)
		if want.IsError() != got.IsError() {
			t.Errorf("%v: want %v, got %v", args, want, got)
		}
	}
	admin.Run(`
AUTH default s3cret
CONFIG SET requirepass ""
ACL GETUSER default
ACL LIST
`)
	admin.Do("CLIENT", "KILL", "USER", "np") // c, on both

}

// TestACLDeletedUserDisconnected: ACL DELUSER closes the user's
// connections, and a user losing a channel loses its subscriptions' connection.
func TestACLDeletedUserDisconnected(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	admin := testutil.Dial(t, b.Addr)
	admin.Do("ACL", "SETUSER", "temp", "on", "nopass", "+@all", "~*", "&news")
	c := testutil.Dial(t, b.Addr)
	if r := c.Do("AUTH", "temp", "x"); r.IsError() {
		t.Fatal(r)
	}
	sub := testutil.Dial(t, b.Addr)
	sub.Do("AUTH", "temp", "x")
	sub.Do("SUBSCRIBE", "news")
	if r := admin.Do("ACL", "SETUSER", "temp", "resetchannels"); r.IsError() {
		t.Fatal(r)
	}
	if _, err := sub.ReadErr(); err == nil || os.IsTimeout(err) {
		t.Errorf("a subscriber whose channel was revoked stays connected (%v)", err)
	}
	if r := admin.Do("ACL", "DELUSER", "temp"); !strings.Contains(r.String(), "1") {
		t.Fatal(r)
	}
	if _, err := c.DoErr("PING"); err == nil {
		t.Error("a deleted user's connection stays open")
	}
}

// tokenSorted sorts the words of every string in r: Redis lists a rule's
// single commands in its hash table's order.
func tokenSorted(r testutil.Reply) testutil.Reply {
	if r.Str != "" {
		words := strings.Fields(r.Str)
		slices.Sort(words)
		r.Str = strings.Join(words, " ")
	}
	elems := make([]testutil.Reply, len(r.Elems))
	for i, e := range r.Elems {
		elems[i] = tokenSorted(e)
	}
	r.Elems = elems
	return r
}

// doTokens compares a reply after tokenSorted.
func doTokens(t *testing.T, d *testutil.Diff, args ...string) {
	t.Helper()
	want, got := d.DoBoth(args...)
	if err := testutil.Compare(args, tokenSorted(want), tokenSorted(got)); err != nil {
		t.Error(err)
	}
}

// TestACLFileDiff: aclfile at startup, ACL SAVE and ACL LOAD, and their
// errors, against redis-server.
func TestACLFileDiff(t *testing.T) {
	files := make([]string, 2)
	for i := range files {
		files[i] = filepath.Join(t.TempDir(), "users.acl")
		if err := os.WriteFile(files[i], []byte("user default on nopass ~* &* +@all\nuser ops on >pw ~* resetchannels -@all +@read\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	redis := testutil.StartRedis(t, "--aclfile", files[0])
	basalt := testutil.StartBasalt(t, "", "--aclfile", files[1])
	d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
	d.Run(`
ACL USERS
ACL GETUSER ops
ACL SETUSER extra on nopass +ping
ACL SAVE
ACL DELUSER extra
ACL LOAD
ACL USERS
ACL GETUSER extra
`)
	ops := userDiff(t, redis, basalt, "ops", "pw")
	ops.Do("GET", "x")
	for i, text := range []string{
		"user default on nopass ~* &* +@all\nbogus line\nuser a +nosuch\nuser b #xyz\nuser a on\n",
		"user ops on >pw2 +@all\n", // default made anew, ops reconnects
	} {
		for _, f := range files {
			if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want, got := d.DoBoth("ACL", "LOAD")
		// The messages name each server's own file.
		if g := strings.ReplaceAll(got.String(), files[1], files[0]); g != want.String() {
			t.Errorf("ACL LOAD of file %d:\n want %v\n got  %v", i, want, got)
		}
	}
	d.Run(`
ACL LIST
ACL WHOAMI
`)
	if _, err := ops.Got.DoErr("PING"); err == nil {
		t.Error("ACL LOAD left the connection of a reloaded user open")
	}
	for _, f := range files {
		os.Remove(f)
	}
	want, got := d.DoBoth("ACL", "LOAD")
	if g := strings.ReplaceAll(got.String(), files[1], files[0]); g != want.String() {
		t.Errorf("ACL LOAD of a missing file:\n want %v\n got  %v", want, got)
	}
}

// TestACLUserDirective: "user" lines of a config file create users at
// startup, and a bad one stops it with Redis's message.
func TestACLUserDirective(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--user", "svc", "on", ">pw", "~svc:*", "+@all")
	c := testutil.Dial(t, b.Addr)
	if r := c.Do("AUTH", "svc", "pw"); r.IsError() {
		t.Fatal(r)
	}
	if r := c.Do("SET", "other", "x"); !strings.HasPrefix(r.Str, "NOPERM") {
		t.Errorf("SET other as svc: %v", r)
	}
	out, err := exec.Command(testutil.BasaltBinary(t), "--port", "0", "--dir", t.TempDir(), "--user", "bad", "+nosuch").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Error in user declaration 'bad'") {
		t.Errorf("a bad user line: %v\n%s", err, out)
	}
}
