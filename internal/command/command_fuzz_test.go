package command

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// FuzzCommands runs arbitrary arguments through every command the apply
// loop runs, on a key space holding a key of each type: no command may
// panic, build a reply past fuzzReplyLimit, take past fuzzCommandTime, or
// answer a malformed reply, whatever its counts, offsets and sizes. An
// input is up to 4 lines, each a command as redis-cli splits it. The
// seeds (fuzzSeeds, and testdata/fuzz/FuzzCommands) reach the count and
// size branches that once killed a node (SRANDMEMBER -1e10, HRANDFIELD,
// ZRANDMEMBER, string.rep) and every command once with plausible
// arguments. Scripts and function libraries are left out: a script may
// loop forever by design (SCRIPT KILL and lua-time-limit bound it).
func FuzzCommands(f *testing.F) {
	for _, c := range All() {
		if fuzzable(c) {
			f.Add(c.Name + " k 1 2")
			f.Add(c.Name + " s -10000000000")
		}
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	st, err := store.Open(f.TempDir(), store.Options{Databases: 16, CacheSize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, input string) {
		tx := st.WriteTx() // never committed: every input starts from the same keys
		defer tx.Close()
		tx.Now = 1e12
		rec := &shard.Record{Kind: shard.KindCommand, Time: 1e12}
		exec := func(argv [][]byte) {
			w := resp.NewWriter(2)
			start := time.Now()
			Exec(tx, rec, argv, 7, w)
			if took := time.Since(start); took > fuzzCommandTime {
				t.Fatalf("%q took %v", argv, took)
			}
			if n := len(w.Bytes()); n > fuzzReplyLimit {
				t.Fatalf("%q: a reply of %d bytes", argv, n)
			}
			if _, err := testutil.ParseReply(w.Bytes()); err != nil {
				t.Fatalf("%q: bad reply %q: %v", argv, w.Bytes(), err)
			}
		}
		for _, setup := range fuzzKeys {
			exec(setArgv(strings.Fields(setup)))
		}
		lines := strings.SplitN(input, "\n", 5)
		for _, line := range lines[:min(len(lines), 4)] {
			argv, ok := resp.SplitArgs([]byte(line))
			if !ok || len(argv) == 0 {
				continue
			}
			if c := Lookup(argv[0]); c != nil && fuzzable(c) && arityFits(c, argv) {
				exec(argv)
			}
		}
	})
}

// fuzzable reports whether FuzzCommands runs c: the commands the apply
// loop runs (Run), but scripts and function libraries.
func fuzzable(c *Command) bool {
	return c.Run != nil && c.Flags&Script == 0 && c.Name != "function"
}

// arityFits is the dispatch path's arity check, for c and its subcommand.
func arityFits(c *Command, argv [][]byte) bool {
	if len(c.Subcommands) > 0 {
		if len(argv) < 2 {
			return false
		}
		if c = c.Subcommand(argv[1]); c == nil {
			return false
		}
	}
	return c.Arity > 0 && len(argv) == c.Arity || c.Arity < 0 && len(argv) >= -c.Arity
}

// What one fuzzed command may take: time (the fuzzer runs on a busy
// machine) and reply bytes.
const (
	fuzzCommandTime = 5 * time.Second
	fuzzReplyLimit  = 256 << 20
)

// fuzzKeys are the keys every input starts with, one of each type.
var fuzzKeys = []string{
	"SET str hello",
	"SETRANGE big 100000 x",
	"SADD s a b c 1 2 3",
	"HSET h f1 v1 f2 v2 f3 v3",
	"RPUSH l a b c a b c",
	"ZADD z 1 a 2 b 3 c",
	"XADD x 1-1 f v",
	"XADD x 2-1 f v",
	"XGROUP CREATE x g 0",
	"PFADD hll a b c",
	"SETBIT bits 100 1",
	"GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
	`JSON.SET j $ {"a":[1,2,{"b":"c"}],"n":1.5}`,
	"EXPIRE str 1000",
}

var fuzzSeeds = []string{
	"SRANDMEMBER s -10000000000",
	"SRANDMEMBER s 9223372036854775807",
	"HRANDFIELD h -10000000000 WITHVALUES",
	"ZRANDMEMBER z -10000000000 WITHSCORES",
	"SPOP s 10000000000",
	"LPOS l a COUNT 0 MAXLEN 0 RANK -9223372036854775808",
	"LRANGE l -9223372036854775808 9223372036854775807",
	"SETRANGE str 536870911 x",
	"SETBIT bits 4294967295 1",
	"BITFIELD bits SET u63 4294967295 1 INCRBY i64 0 9223372036854775807",
	"BITCOUNT big -9223372036854775808 9223372036854775807 BIT",
	"GETRANGE big -1000000000000 1000000000000",
	"XRANGE x - + COUNT 9223372036854775807",
	"XAUTOCLAIM x g c 0 0-0 COUNT 1000000000",
	"XADD x MAXLEN ~ 1000000000000 * f v",
	"XREADGROUP GROUP g c COUNT 9223372036854775807 STREAMS x >",
	"ZRANGE z 0 -1 BYSCORE LIMIT 0 -1",
	"ZRANGESTORE dst z -9223372036854775808 9223372036854775807",
	"SORT l LIMIT 0 9223372036854775807 ALPHA",
	"GEOSEARCH geo FROMLONLAT 15 37 BYRADIUS 1e300 km COUNT 9223372036854775807",
	"LINSERT l BEFORE a x\nLTRIM l 9223372036854775807 -9223372036854775808",
	"APPEND str x\nINCRBYFLOAT str 1e308\nINCRBYFLOAT str inf",
	"JSON.ARRINSERT j $.a -9223372036854775808 1\nJSON.ARRTRIM j $.a 0 9223372036854775807",
	`JSON.SET j $.a[2].b [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	"COPY s s2 DB 15\nMOVE str 15",
	"OBJECT FREQ str\nRESTORE k 0 \x00\x01 REPLACE",
	"HINCRBYFLOAT h f1 1e309\nHSETNX h f9 v",
	"SINTERCARD 2 s s LIMIT 9223372036854775807",
	"LMPOP 2 l l LEFT COUNT 9223372036854775807",
	"ZUNIONSTORE out 2 z z WEIGHTS 1e308 1e308 AGGREGATE SUM",
}

// TestFuzzSeedsCover checks that the seeds name commands that exist, so
// that a renamed command does not silently drop its seed.
func TestFuzzSeedsCover(t *testing.T) {
	for _, s := range append(append([]string{}, fuzzKeys...), fuzzSeeds...) {
		for _, line := range strings.Split(s, "\n") {
			name, _, _ := bytes.Cut([]byte(line), []byte(" "))
			if Lookup(name) == nil {
				t.Errorf("seed %q names no command", line)
			}
		}
	}
}
