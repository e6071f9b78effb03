package command

import (
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// TestArgTableReuse checks that KEYS and ARGV, reused from run to run,
// look new to every run whatever the run before did to them.
func TestArgTableReuse(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx := st.WriteTx()
	defer tx.Close()
	tx.Now = 1
	eval := func(body string, keys ...string) string {
		argv := [][]byte{[]byte("eval"), []byte(body), []byte(strconv.Itoa(len(keys)))}
		for range 2 { // KEYS, and ARGV with the same values
			for _, k := range keys {
				argv = append(argv, []byte(k))
			}
		}
		w := resp.NewWriter(2)
		Apply(tx, &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{argv}}, nil, nil, w)
		return string(w.Buf)
	}
	// What a run sees of a table it got: its length, metatable, every key
	// pairs() finds, and what table.remove takes off its end.
	const probe = `local out = {}
for _, t in ipairs({KEYS, ARGV}) do
	local n = 0
	for k, v in pairs(t) do n = n + 1 end
	out[#out+1] = #t .. ' ' .. tostring(getmetatable(t)) .. ' ' .. n .. ' ' .. tostring(rawget(t, 3))
	for i = 1, 3 do out[#out+1] = tostring(table.remove(t)) end
end
return out`
	want := eval(probe, "a", "b") // the first run on a new table
	mutations := []string{
		`KEYS[1] = nil ARGV[1] = nil`,
		`KEYS[#KEYS+1] = nil ARGV[#ARGV+1] = nil`, // a nil slot at the end
		`KEYS[#KEYS] = nil ARGV[#ARGV] = nil`,
		`KEYS[5] = 'x' ARGV[7] = 'y'`,
		`KEYS.x = 1 ARGV[1.5] = 1`,
		`KEYS.x = 1 KEYS.x = nil ARGV[-1] = 2 ARGV[-1] = nil`,
		`setmetatable(KEYS, {__index = function() return 'm' end}) setmetatable(ARGV, {})`,
		`table.insert(KEYS, 1, 'z') table.insert(ARGV, 'z')`,
		`table.remove(KEYS) table.remove(ARGV, 1)`,
		`for i = 1, #KEYS do KEYS[i] = nil end for i = #ARGV, 1, -1 do table.remove(ARGV) end`,
		`return 1`,
	}
	for _, m := range mutations {
		for _, keys := range [][]string{nil, {"p"}, {"p", "q"}, {"p", "q", "r"}} {
			eval(m, keys...)
			if got := eval(probe, "a", "b"); got != want {
				t.Fatalf("after %q with %d keys: %q, want %q", m, len(keys), got, want)
			}
		}
	}
}
