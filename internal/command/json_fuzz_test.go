package command

import (
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// FuzzJSONPath gives arbitrary paths and values to JSON.SET, JSON.GET and
// the other JSON commands on a small document: every reply must be a well
// formed RESP reply (errors are fine) and nothing may panic. The seeds are
// the path forms RedisJSON users write.
func FuzzJSONPath(f *testing.F) {
	for _, s := range []struct{ path, value string }{
		{"$", `{"a":1}`},
		{".", `[1,2,3]`},
		{"$.sections['A-1'].stats.available", "-1"},
		{"$..a", "2"},
		{"$.b[*]", `"x"`},
		{"$.b[?(@.a>1)]", `{"c":null}`},
		{"$.b[?(@.a==\"c\")].a", "true"},
		{"$['A-1']", "1.5"},
		{"$.a[0]", "[]"},
		{"$.b[-1:]", "{}"},
		{"$.b[0,1]", "0"},
		{".b[1].a", "1e400"},
		{"a", `"\u00e9"`},
		{"$.[1]", "null"},
		{"$..*", "[[[[]]]]"},
		{"$[", "{"},
		{"$.b[?(@.a", "1"},
		{"", ""},
		{"..", "-0"},
	} {
		f.Add(s.path, s.value)
	}
	st, err := store.Open(f.TempDir(), store.Options{Databases: 1, CacheSize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	doc := `{"a":1,"b":[{"a":2},{"a":5},{"a":"c"}],"A-1":{"stats":{"available":100,"sold":0}},"t":true,"s":"str"}`
	f.Fuzz(func(t *testing.T, path, value string) {
		tx := st.WriteTx()
		defer tx.Close()
		tx.Now = 1e12
		rec := &shard.Record{Kind: shard.KindCommand, Time: 1e12}
		run := func(args ...string) {
			w := resp.NewWriter(2)
			Exec(tx, rec, setArgv(args), 1, w)
			if _, err := testutil.ParseReply(w.Bytes()); err != nil {
				t.Fatalf("%q: bad reply %q: %v", args, w.Bytes(), err)
			}
		}
		run("JSON.SET", "k", "$", doc)
		for _, cmd := range [][]string{
			{"JSON.SET", "k", path, value},
			{"JSON.SET", "k", path, value, "NX"},
			{"JSON.GET", "k", path},
			{"JSON.GET", "k", "INDENT", " ", path, "$"},
			{"JSON.TYPE", "k", path},
			{"JSON.NUMINCRBY", "k", path, "1"},
			{"JSON.NUMMULTBY", "k", path, value},
			{"JSON.STRAPPEND", "k", path, `"x"`},
			{"JSON.ARRAPPEND", "k", path, value},
			{"JSON.ARRINSERT", "k", path, "-1", value},
			{"JSON.ARRINDEX", "k", path, value, "-2", "-1"},
			{"JSON.ARRPOP", "k", path, "0"},
			{"JSON.ARRTRIM", "k", path, "1", "-1"},
			{"JSON.OBJKEYS", "k", path},
			{"JSON.OBJLEN", "k", path},
			{"JSON.STRLEN", "k", path},
			{"JSON.ARRLEN", "k", path},
			{"JSON.TOGGLE", "k", path},
			{"JSON.MERGE", "k", path, value},
			{"JSON.RESP", "k", path},
			{"JSON.MGET", "k", "k", path},
			{"JSON.CLEAR", "k", path},
			{"JSON.DEL", "k", path},
			{"JSON.GET", "k"},
		} {
			run(cmd...)
		}
	})
}
