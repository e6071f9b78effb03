package command

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// Exec runs one command of rec on tx, as the apply loop runs it in a
// replay. The command must exist and its arity must have been checked.
func Exec(tx *store.Tx, rec *shard.Record, argv [][]byte, seed uint64, w *resp.Writer) {
	run(tx, rec, nil, nil, nil, argv, seed, w, false)
}

func setArgv(a []string) [][]byte {
	out := make([][]byte, len(a))
	for i, s := range a {
		out[i] = []byte(s)
	}
	return out
}

// setWorkload makes n random set write records (some of them EXEC blocks
// with SRANDMEMBER inside, which then runs in the apply loop).
func setWorkload(r *rand.Rand, n int) []*shard.Record {
	key := func() string { return "s" + strconv.Itoa(r.IntN(6)) }
	member := func() string {
		if r.IntN(3) == 0 {
			return "m" + strconv.Itoa(r.IntN(50))
		}
		return strconv.Itoa(r.IntN(700)) // intsets that grow past 512
	}
	one := func() [][]byte {
		var a []string
		switch r.IntN(10) {
		case 0, 1, 2:
			a = []string{"sadd", key()}
			for range 1 + r.IntN(40) {
				a = append(a, member())
			}
		case 3:
			a = []string{"srem", key(), member(), member()}
		case 4:
			a = []string{"spop", key()}
		case 5:
			a = []string{"spop", key(), strconv.Itoa(r.IntN(60))}
		case 6:
			a = []string{"smove", key(), key(), member()}
		case 7:
			a = []string{[]string{"sinterstore", "sunionstore", "sdiffstore"}[r.IntN(3)], key(), key(), key()}
		case 8:
			a = []string{"srandmember", key(), strconv.Itoa(r.IntN(40) - 20)}
		default:
			a = []string{"srandmember", key()}
		}
		return setArgv(a)
	}
	return randomRecords(r, n, one)
}

// randomRecords makes n records of commands from one, a fifth of them
// EXECs of one to three commands.
func randomRecords(r *rand.Rand, n int, one func() [][]byte) []*shard.Record {
	var recs []*shard.Record
	for i := range n {
		rec := &shard.Record{Index: uint64(i + 1), Kind: shard.KindCommand, Time: 1e12, Seed: r.Uint64()}
		if r.IntN(5) == 0 {
			rec.Kind = shard.KindExec
			for range 1 + r.IntN(3) {
				rec.Cmds = append(rec.Cmds, one())
			}
		} else {
			rec.Cmds = [][][]byte{one()}
		}
		recs = append(recs, rec)
	}
	return recs
}

// applySets applies recs to a fresh store in groups of 7 and returns the
// store and every reply.
func applySets(t *testing.T, recs []*shard.Record) (*store.Store, [][]byte) {
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
	}
	return st, replies
}

// setRun runs a command on a read view and returns its reply.
func setRun(st *store.Store, args ...string) testutil.Reply {
	tx := st.ReadTx(0, 1e12, true)
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

// Applying the same set records gives the same state and replies (SPOP and
// SRANDMEMBER in MULTI draw from the record's seed), and every set's header
// agrees with its members.
func TestSetDeterminism(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	recs := setWorkload(rand.New(rand.NewPCG(seed, 1)), 3000)
	a, ra := applySets(t, recs)
	b, rb := applySets(t, recs)
	for i := range ra {
		if !bytes.Equal(ra[i], rb[i]) {
			t.Fatalf("record %d %q: replies %q and %q", i, recs[i].Cmds, ra[i], rb[i])
		}
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("same records, different stores")
	}
	sets := 0
	for k := range 6 {
		key := "s" + strconv.Itoa(k)
		n := setRun(a, "SCARD", key).Int
		all := setRun(a, "SMEMBERS", key)
		if int64(len(all.Elems)) != n {
			t.Errorf("%s: SCARD %d, SMEMBERS has %d", key, n, len(all.Elems))
		}
		if n > 0 {
			sets++
			ints := true
			for _, e := range all.Elems {
				if _, err := strconv.ParseInt(e.Str, 10, 64); err != nil {
					ints = false
				}
			}
			// Once a hash table, always one; an intset must fit one.
			if enc := setRun(a, "OBJECT", "ENCODING", key).Str; enc == "intset" && (!ints || n > setMaxIntsetEntries) {
				t.Errorf("%s: intset with %d members, all integers %v", key, n, ints)
			}
		}
	}
	if sets == 0 {
		t.Errorf("workload left no sets")
	}

	// Another seed draws other members: the seed is what decides.
	other := make([]*shard.Record, len(recs))
	for i, rec := range recs {
		c := *rec
		c.Seed ^= 0x9e3779b97f4a7c15
		other[i] = &c
	}
	_, ro := applySets(t, other)
	same := 0
	for i := range ra {
		if bytes.Equal(ra[i], ro[i]) {
			same++
		}
	}
	if same == len(ra) {
		t.Errorf("changing the seeds changed no reply")
	}
}
