package command

import (
	"fmt"
	"strings"
	"testing"
)

func split(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func join(keys [][]byte) string {
	var out []string
	for _, k := range keys {
		out = append(out, string(k))
	}
	return strings.Join(out, " ")
}

// Key specs of the shapes Redis uses, checked on the commands they come from.
func TestKeySpecKeys(t *testing.T) {
	for _, tc := range []struct {
		spec KeySpec
		argv string
		want string
	}{
		{KeySpec{Index: 1, LastKey: 0, KeyStep: 1}, "GET a", "a"},
		{KeySpec{Index: 1, LastKey: -1, KeyStep: 1}, "DEL a b c", "a b c"},
		{KeySpec{Index: 1, LastKey: -1, KeyStep: 2}, "MSET a 1 b 2", "a b"},
		{KeySpec{Index: 1, LastKey: -2, KeyStep: 1}, "BLPOP a b 0", "a b"},
		{KeySpec{Index: 1, LastKey: 0, KeyStep: 1}, "ZUNIONSTORE d 2 a b", "d"},
		{KeySpec{Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}, "ZUNIONSTORE d 2 a b WEIGHTS 1 2", "a b"},
		{KeySpec{Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}, "EVAL s 0 x", ""},
		{KeySpec{Keyword: "STREAMS", StartFrom: 1, LastKey: -1, KeyStep: 1, Limit: 2}, "XREAD COUNT 2 STREAMS s1 s2 0 0", "s1 s2"},
		{KeySpec{Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1}, "MIGRATE h p \"\" 0 5 KEYS a b", "a b"},
		{KeySpec{Keyword: "STORE", StartFrom: 1, LastKey: 0, KeyStep: 1}, "SORT k LIMIT 0 1", ""},
	} {
		if got := join(tc.spec.Keys(split(tc.argv))); got != tc.want {
			t.Errorf("%s with %+v: got %q, want %q", tc.argv, tc.spec, got, tc.want)
		}
	}
}

// Every table entry is well formed for COMMAND INFO and COMMAND DOCS.
func TestTableEntries(t *testing.T) {
	for _, c := range All() {
		for _, e := range append([]*Command{c}, c.Subcommands...) {
			if e.Arity == 0 || e.Summary == "" || e.Since == "" || e.Group == "" || len(e.Categories) == 0 {
				t.Errorf("%s: incomplete entry %+v", e.Name, e)
			}
			if e.Name != strings.ToLower(e.Name) {
				t.Errorf("%s: name must be lower case", e.Name)
			}
		}
	}
}

// TestImplicitCategories: the table names a command's own categories and
// its flags add the rest, as Redis's setImplicitACLCategories does.
func TestImplicitCategories(t *testing.T) {
	for name, want := range map[string]string{
		"get":        "[read string fast]",
		"set":        "[write string slow]",
		"blpop":      "[write list slow blocking]",
		"role":       "[admin fast dangerous]",
		"flushall":   "[keyspace write slow dangerous]",
		"eval":       "[slow scripting]",
		"subscribe":  "[pubsub slow]",
		"config|get": "[admin slow dangerous]",
	} {
		if got := fmt.Sprint(LookupFull(name).Categories); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}
