package compat

import (
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// MODULE answers as a default Redis 7.0 does, but MODULE LIST and INFO
// modules name RedisJSON, whose commands basalt has built in; REPLICAOF
// and SLAVEOF are refused (README, "Where basalt differs").
func TestModuleAndReplicaOf(t *testing.T) {
	d := testutil.NewPairDiff(t)
	d.Run(`
		MODULE
		MODULE HELP
		MODULE HELP x
		MODULE foo
		MODULE LIST x
		MODULE LOAD /nonexistent.so
		MODULE LOAD
		MODULE LOADEX /nonexistent.so CONFIG a b
		MODULE UNLOAD ReJSON
		MODULE UNLOAD
		REPLICAOF
		REPLICAOF 127.0.0.1
		SLAVEOF a b c
	`)
	for _, name := range []string{"module", "replicaof", "slaveof"} {
		want, got := d.DoBoth("COMMAND", "INFO", name)
		if len(got.Elems) != 1 || len(want.Elems) != 1 {
			t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
		}
		sameInfoEntry(t, want.Elems[0], got.Elems[0])
	}

	c := d.Got
	if r := c.Do("MODULE", "LIST"); r.String() != `[["name", "ReJSON", "ver", :20600, "path", "builtin", "args", []]]` {
		t.Errorf("MODULE LIST: %v", r)
	}
	if r := c.Do("INFO", "modules"); !strings.Contains(r.Str, "\r\nmodule:name=ReJSON,ver=20600,") {
		t.Errorf("INFO modules: %q", r.Str)
	}
	for _, args := range [][]string{{"REPLICAOF", "NO", "ONE"}, {"SLAVEOF", "127.0.0.1", "6379"}} {
		if r := c.Do(args...); !r.IsError() || !strings.Contains(r.Str, "RAFT ADD") {
			t.Errorf("%v: %v", args, r)
		}
	}
}
