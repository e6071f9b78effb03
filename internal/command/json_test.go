package command

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// jsonWorkload makes n random JSON write commands on a few documents.
func jsonWorkload(r *rand.Rand, n int) [][][]byte {
	key := func() string { return "j" + strconv.Itoa(r.IntN(3)) }
	paths := []string{"$", ".", "$.a", ".a", "$..n", "$.l", "$.l[*]", "$.o.x", "$.l[0]", "$.o", ".s", "$.b"}
	vals := []string{"1", "2.5", `"s"`, "true", "null", "[1,2]", `{"n":1,"x":[3]}`, `{"a":{"n":2},"l":[1,{"n":3}],"o":{"x":1},"s":"str","b":false}`}
	path := func() string { return paths[r.IntN(len(paths))] }
	val := func() string { return vals[r.IntN(len(vals))] }
	var out [][][]byte
	for range n {
		var a []string
		switch r.IntN(13) {
		case 0, 1:
			a = []string{"JSON.SET", key(), path(), val()}
		case 2, 3:
			a = []string{"JSON.NUMINCRBY", key(), path(), []string{"1", "-2", "0.5"}[r.IntN(3)]}
		case 4:
			a = []string{"JSON.NUMMULTBY", key(), path(), "3"}
		case 5:
			a = []string{"JSON.ARRAPPEND", key(), path(), val(), val()}
		case 6:
			a = []string{"JSON.ARRPOP", key(), path(), strconv.Itoa(r.IntN(4) - 2)}
		case 7:
			a = []string{"JSON.DEL", key(), path()}
		case 8:
			a = []string{"JSON.MERGE", key(), path(), val()}
		case 9:
			a = []string{"JSON.STRAPPEND", key(), path(), `"x"`}
		case 10:
			a = []string{"JSON.TOGGLE", key(), path()}
		case 11:
			a = []string{"JSON.MSET", key(), path(), val(), key(), path(), val()}
		default:
			a = []string{"JSON.CLEAR", key(), path()}
		}
		out = append(out, setArgv(a))
	}
	return out
}

// applyJSON applies cmds in groups of 5 to a fresh store and returns its
// digest and every reply; with cold set, docCache is emptied before every
// command, so every command parses its document.
func applyJSON(t *testing.T, cmds [][][]byte, cold bool) ([32]byte, [][]byte) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var replies [][]byte
	for i := 0; i < len(cmds); i += 5 {
		tx := st.WriteTx()
		for j, argv := range cmds[i:min(i+5, len(cmds))] {
			if cold {
				docCache.Lock()
				clear(docCache.m)
				docCache.bytes = 0
				docCache.Unlock()
			}
			rec := &shard.Record{Index: uint64(i + j + 1), Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{argv}}
			w := resp.NewWriter(2)
			tx.Now = rec.Time
			Apply(tx, rec, nil, nil, w)
			replies = append(replies, w.Bytes())
		}
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	d, err := st.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d, replies
}

// The parsed-document cache changes nothing: the same commands give the
// same replies and the same store whether every command parses its
// document or reuses the tree the previous write left.
func TestJSONCacheIsTransparent(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	cmds := jsonWorkload(rand.New(rand.NewPCG(seed, 2)), 2000)
	dWarm, rWarm := applyJSON(t, cmds, false)
	dCold, rCold := applyJSON(t, cmds, true)
	for i := range rWarm {
		if !bytes.Equal(rWarm[i], rCold[i]) {
			t.Fatalf("command %d %q: %q with the cache, %q without", i, cmds[i], rWarm[i], rCold[i])
		}
	}
	if dWarm != dCold {
		t.Fatalf("same commands, different stores with and without the cache")
	}
	ok := 0
	for _, r := range rWarm {
		if r[0] != '-' {
			ok++
		}
	}
	if ok < len(rWarm)/3 {
		t.Errorf("only %d of %d commands succeeded: the workload tests little", ok, len(rWarm))
	}
}
