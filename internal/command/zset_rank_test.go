package command

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// zrankTuning sets the rank index's tuning for one test.
func zrankTuning(t *testing.T, leaf, fan, buildAt, dropAt int64) {
	l, f, b, d := zrankLeaf, zrankFan, zrankBuildAt, zrankDropAt
	zrankLeaf, zrankFan, zrankBuildAt, zrankDropAt = leaf, fan, buildAt, dropAt
	t.Cleanup(func() { zrankLeaf, zrankFan, zrankBuildAt, zrankDropAt = l, f, b, d })
}

// zrankWorkload makes n random sorted set records on keys z0..z2: many
// adds, score changes and removals of all kinds, ties (members of equal
// score), rank reads inside EXEC, and now and then DEL, RENAME, COPY.
func zrankWorkload(r *rand.Rand, n, members int) []*shard.Record {
	key := func() string { return "z" + strconv.Itoa(r.IntN(3)) }
	member := func() string { return "m" + strconv.Itoa(r.IntN(members)) }
	score := func() string {
		if r.IntN(4) == 0 {
			return strconv.Itoa(r.IntN(5)) // ties
		}
		return strconv.FormatFloat(r.Float64()*1000-500, 'g', -1, 64)
	}
	rank := func() string { return strconv.Itoa(r.IntN(members) - members/2) }
	one := func() [][]byte {
		k := key()
		var a []string
		switch x := r.IntN(100); {
		case x < 35:
			a = []string{"zadd", k}
			for range 1 + r.IntN(30) {
				a = append(a, score(), member())
			}
		case x < 45:
			a = []string{"zincrby", k, score(), member()}
		case x < 55:
			a = []string{"zrem", k}
			for range 1 + r.IntN(20) {
				a = append(a, member())
			}
		case x < 60:
			a = []string{[]string{"zpopmin", "zpopmax"}[r.IntN(2)], k, strconv.Itoa(r.IntN(20))}
		case x < 64:
			a = []string{"zremrangebyrank", k, rank(), rank()}
		case x < 66:
			a = []string{"zremrangebyscore", k, score(), score()}
		case x < 75:
			a = []string{[]string{"zrank", "zrevrank"}[r.IntN(2)], k, member()}
		case x < 85:
			a = []string{"zrange", k, rank(), rank(), "withscores"}
			if r.IntN(2) == 0 {
				a = append(a, "rev")
			}
		case x < 87:
			a = []string{"zrangestore", key(), k, rank(), rank()}
		case x < 88:
			a = []string{"zcount", k, score(), score()}
		case x < 90:
			a = []string{"zunionstore", key(), "2", k, key()}
		case x < 92:
			a = []string{"copy", k, key(), "replace"}
		case x < 93:
			a = []string{"rename", k, key()}
		case x < 94:
			a = []string{"del", k}
		default:
			a = []string{"zcard", k}
		}
		return setArgv(a)
	}
	return randomRecords(r, n, one)
}

// zrankRead runs a command on a read view of st and returns its reply.
func zrankRead(st *store.Store, args ...string) testutil.Reply {
	tx := st.ReadTx(0, 1e12, false)
	defer tx.Close()
	w := resp.NewWriter(2)
	argv := setArgv(args)
	Lookup(argv[0]).Run(&Ctx{Tx: tx, Args: argv, W: w})
	r, err := testutil.ParseReply(w.Bytes())
	if err != nil {
		panic(err)
	}
	return r
}

// zrankCheck checks a sorted set's rank index against its members: every
// count and child count exact, the levels nested, one root, no block over
// 2F children, no index below the drop size, none left of a deleted key.
// It returns the set's levels.
func zrankCheck(t *testing.T, st *store.Store, key string) int {
	t.Helper()
	tx := st.ReadTx(0, 1e12, true)
	defer tx.Close()
	m, ok := tx.Lookup([]byte(key))
	if !ok {
		n := 0
		tx.Members([]byte(key), nil, nil, false, func(_, _ []byte) bool { n++; return true })
		if n > 0 {
			t.Fatalf("%s: deleted, %d member entries left", key, n)
		}
		return 0
	}
	c := &Ctx{Tx: tx}
	z := zsetOf(c, []byte(key), m)
	var scores [][]byte // score index keys without the tag
	tx.Members(z.key, zScoreFirst, zScoreEnd, false, func(sub, _ []byte) bool {
		scores = append(scores, append([]byte(nil), sub[1:]...))
		return true
	})
	if int64(len(scores)) != z.h.n {
		t.Fatalf("%s: header says %d members, score index has %d", key, z.h.n, len(scores))
	}
	levels := map[int][]rnode{}
	tx.Members(z.key, []byte{zTagRank}, []byte{zTagRank + 1}, false, func(sub, _ []byte) bool {
		levels[int(sub[1])] = append(levels[int(sub[1])], rnode{level: int(sub[1]), bound: append([]byte{}, sub[2:]...)})
		return true
	})
	counts := 0
	tx.Members(z.key, []byte{zTagCount}, []byte{zTagCount + 1}, false, func(_, _ []byte) bool { counts++; return true })
	blocks := 0
	for l, list := range levels {
		for i, n := range list {
			list[i] = z.rnode(l, n.bound)
		}
		blocks += len(list)
	}
	if counts != blocks {
		t.Fatalf("%s: %d blocks, %d count entries", key, blocks, counts)
	}
	if z.levels == 0 {
		if len(levels) > 0 {
			t.Fatalf("%s: no index in the header, %d levels stored", key, len(levels))
		}
		if z.h.n >= zrankBuildAt {
			t.Fatalf("%s: %d members and no index", key, z.h.n)
		}
		return 0
	}
	if z.h.n < zrankDropAt {
		t.Fatalf("%s: %d members and an index", key, z.h.n)
	}
	if len(levels) != z.levels || len(levels[z.levels]) != 1 {
		t.Fatalf("%s: header says %d levels, stored %d, root level has %d entries", key, z.levels, len(levels), len(levels[z.levels]))
	}
	// below counts the entries of a sorted list of bounds in [lo, hi).
	below := func(list [][]byte, lo, hi []byte) int64 {
		var n int64
		for _, b := range list {
			if bytes.Compare(b, lo) >= 0 && (hi == nil || bytes.Compare(b, hi) < 0) {
				n++
			}
		}
		return n
	}
	for l := 1; l <= z.levels; l++ {
		list := levels[l]
		if len(list[0].bound) != 0 {
			t.Fatalf("%s: level %d starts at %x", key, l, list[0].bound)
		}
		var childBounds [][]byte
		for _, c := range levels[l-1] {
			childBounds = append(childBounds, c.bound)
		}
		for i, n := range list {
			var hi []byte
			if i+1 < len(list) {
				hi = list[i+1].bound
			}
			if want := below(scores, n.bound, hi); n.count != want && l < z.levels {
				t.Fatalf("%s: level %d block %x counts %d members, has %d", key, l, n.bound, n.count, want)
			}
			want := below(scores, n.bound, hi)
			if l > 1 {
				want = below(childBounds, n.bound, hi)
				found := false
				for _, c := range childBounds {
					found = found || bytes.Equal(c, n.bound)
				}
				if !found {
					t.Fatalf("%s: level %d bound %x is not a level %d bound", key, l, n.bound, l-1)
				}
			}
			if n.children != want && (l > 1 || l < z.levels) { // a level-1 root's are the header's
				t.Fatalf("%s: level %d block %x counts %d children, has %d", key, l, n.bound, n.children, want)
			}
			if n.children > 2*zrankWidth(l) {
				t.Fatalf("%s: level %d block %x has %d children", key, l, n.bound, n.children)
			}
		}
	}
	return z.levels
}

// The rank index gives the replies the plain walk gives, through random
// adds, score changes, removals, pops, range removals, stores, copies and
// renames that cross the build and drop sizes many times; its counts stay
// exact; and applying the records twice gives the same store.
func TestZSetRankIndex(t *testing.T) {
	seed := rand.Uint64()
	if s, err := strconv.ParseUint(os.Getenv("ZRANK_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (ZRANK_SEED=%[1]d repeats it)", seed)
	recs := zrankWorkload(rand.New(rand.NewPCG(seed, 2)), 3000, 400)

	zrankTuning(t, 1<<40, 1<<40, 1<<40, 1<<40) // no index: the reference
	_, want := applySets(t, recs)

	zrankTuning(t, 8, 8, 40, 12) // deep trees on small sets
	deep := 0
	applyChecked := func() (*store.Store, [][]byte) {
		st, err := store.Open(t.TempDir(), store.Options{Databases: 1, CacheSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		var replies [][]byte
		for i := 0; i < len(recs); i += 7 {
			tx := st.WriteTx()
			for _, rec := range recs[i:min(i+7, len(recs))] {
				w := resp.NewWriter(2)
				tx.DB, tx.Now = rec.DB, rec.Time
				Apply(tx, rec, nil, nil, w)
				replies = append(replies, w.Bytes())
			}
			if err := tx.Commit(false); err != nil {
				t.Fatal(err)
			}
			for k := range 3 {
				deep = max(deep, zrankCheck(t, st, "z"+strconv.Itoa(k)))
			}
		}
		return st, replies
	}
	a, got := applyChecked()
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			t.Fatalf("record %d %q: without index %q, with %q", i, recs[i].Cmds, want[i], got[i])
		}
	}
	b, again := applyChecked()
	for i := range got {
		if !bytes.Equal(got[i], again[i]) {
			t.Fatalf("record %d: replies differ between two runs", i)
		}
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatal("same records, different stores")
	}

	// Every member's rank on a read view, forward and reverse, and ranges
	// at every offset.
	for k := range 3 {
		key := "z" + strconv.Itoa(k)
		zrankCheck(t, a, key)
		all := zrankRead(a, "zrange", key, "0", "-1")
		n := len(all.Elems)
		for i, e := range all.Elems {
			if r := zrankRead(a, "zrank", key, e.Str); r.Int != int64(i) {
				t.Fatalf("%s: ZRANK %s = %d, want %d", key, e.Str, r.Int, i)
			}
			if r := zrankRead(a, "zrevrank", key, e.Str); r.Int != int64(n-1-i) {
				t.Fatalf("%s: ZREVRANK %s = %d, want %d", key, e.Str, r.Int, n-1-i)
			}
			r := zrankRead(a, "zrange", key, strconv.Itoa(i), strconv.Itoa(i+2))
			if len(r.Elems) == 0 || r.Elems[0].Str != e.Str {
				t.Fatalf("%s: ZRANGE %d: %v, want %s first", key, i, r, e.Str)
			}
			r = zrankRead(a, "zrange", key, strconv.Itoa(i), strconv.Itoa(i), "rev")
			if len(r.Elems) != 1 || r.Elems[0].Str != all.Elems[n-1-i].Str {
				t.Fatalf("%s: ZRANGE %d %d REV: %v", key, i, i, r)
			}
		}
	}
	if deep < 3 {
		t.Errorf("the workload built no index of 3 levels or more (deepest %d)", deep)
	}
}

// Deleting, expiring or shrinking an indexed set leaves no index entry;
// RENAME, COPY and MOVE carry it along.
func TestZSetRankIndexCleanup(t *testing.T) {
	zrankTuning(t, 4, 4, 50, 20)
	st, err := store.Open(t.TempDir(), store.Options{Databases: 2, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func(args ...string) {
		t.Helper()
		tx := st.WriteTx()
		tx.Now = 1e12
		rec := &shard.Record{Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{setArgv(args)}}
		w := resp.NewWriter(2)
		Apply(tx, rec, nil, nil, w)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(w.Bytes(), []byte("-")) {
			t.Fatalf("%q: %s", args, w.Bytes())
		}
	}
	fill := func(key string, n int) {
		a := []string{"zadd", key}
		for i := range n {
			a = append(a, strconv.Itoa(i), fmt.Sprintf("m%04d", i))
		}
		run(a...)
	}
	levels := func(key string) int {
		t.Helper()
		return zrankCheck(t, st, key)
	}
	fill("a", 500)
	if levels("a") < 3 {
		t.Fatalf("a: %d levels", levels("a"))
	}
	run("copy", "a", "b")
	run("rename", "b", "c")
	levels("c")
	if r := zrankRead(st, "zrank", "c", "m0321"); r.Int != 321 {
		t.Fatalf("ZRANK of a renamed copy: %v", r)
	}
	run("del", "c")
	if levels("c") != 0 {
		t.Fatal("c deleted and still indexed")
	}
	run("zremrangebyrank", "a", "0", "-20")
	if levels("a") != 0 {
		t.Fatal("a shrank to 19 members and kept its index")
	}
	fill("a", 500)
	run("pexpireat", "a", "1000")
	run("zadd", "a", "1", "x") // finds it expired: a new set of one
	if levels("a") != 0 {
		t.Fatal("a expired and still indexed")
	}
	fill("a", 500)
	run("move", "a", "1")
	levels("a")
}

// ZLEXCOUNT on an indexed set of equal scores counts long ranges by rank:
// its counts must be those of the ranges themselves (ZRANGEBYLEX walks).
func TestZLexCountRanked(t *testing.T) {
	zrankTuning(t, 8, 8, 40, 12) // deep trees on small sets
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	var recs []*shard.Record
	for i := range 60 {
		a := []string{"zadd", "lex"}
		for range 20 {
			a = append(a, "7", fmt.Sprintf("m%03d", r.IntN(900)))
		}
		recs = append(recs, &shard.Record{Index: uint64(i + 1), Kind: shard.KindCommand, Time: 1e12, Cmds: [][][]byte{setArgv(a)}})
	}
	st, _ := applySets(t, recs)
	if zrankCheck(t, st, "lex") < 2 {
		t.Fatal("no rank index was built")
	}
	bound := func() string {
		switch x := r.IntN(10); {
		case x == 0:
			return "-"
		case x == 1:
			return "+"
		case x < 6:
			return fmt.Sprintf("[m%03d", r.IntN(1000))
		default:
			return fmt.Sprintf("(m%d", r.IntN(1000)) // also between members
		}
	}
	long := 0
	for range 400 {
		min, max := bound(), bound()
		want := len(zrankRead(st, "zrangebylex", "lex", min, max).Elems)
		got := zrankRead(st, "zlexcount", "lex", min, max)
		if got.Int != int64(want) {
			t.Fatalf("ZLEXCOUNT lex %s %s = %d, ZRANGEBYLEX has %d", min, max, got.Int, want)
		}
		if want > 4*int(zrankLeaf) {
			long++
		}
	}
	if long < 50 {
		t.Errorf("only %d ranges long enough to be counted by rank", long)
	}
}
