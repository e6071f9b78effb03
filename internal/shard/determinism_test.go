package shard_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"basalt/internal/command"
	"basalt/internal/rdb"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"

	"github.com/cockroachdb/pebble/v2"
)

// gen makes the arguments of one write command from a random source. Keys
// come from a small set so that commands collide and overwrite each other.
type gen struct {
	name string
	args func(r *rand.Rand) []string
}

func key(r *rand.Rand) string { return "k" + strconv.Itoa(r.IntN(40)) }
func val(r *rand.Rand) string { return "v" + strconv.Itoa(r.IntN(1000)) }
func num(r *rand.Rand) string { return strconv.Itoa(r.IntN(200) - 100) }

// Short TTLs (a few ms) so keys expire in the middle of the workload and
// lazy expiry runs at record time, which replay must reproduce.
func ttlMS(r *rand.Rand) string { return strconv.Itoa(1 + r.IntN(30)) }

var gens = []gen{
	{"set", func(r *rand.Rand) []string {
		a := []string{key(r), val(r)}
		switch r.IntN(6) {
		case 0:
			a = append(a, "EX", strconv.Itoa(1+r.IntN(100)))
		case 1:
			a = append(a, "PX", ttlMS(r))
		case 2:
			a = append(a, "NX")
		case 3:
			a = append(a, "XX", "GET")
		case 4:
			a = append(a, "KEEPTTL")
		}
		return a
	}},
	{"setex", func(r *rand.Rand) []string { return []string{key(r), "1", val(r)} }},
	{"psetex", func(r *rand.Rand) []string { return []string{key(r), ttlMS(r), val(r)} }},
	{"setnx", func(r *rand.Rand) []string { return []string{key(r), val(r)} }},
	{"getset", func(r *rand.Rand) []string { return []string{key(r), val(r)} }},
	{"getdel", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"getex", func(r *rand.Rand) []string { return []string{key(r), "PX", ttlMS(r)} }},
	{"incr", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"decr", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"incrby", func(r *rand.Rand) []string { return []string{key(r), num(r)} }},
	{"decrby", func(r *rand.Rand) []string { return []string{key(r), num(r)} }},
	{"incrbyfloat", func(r *rand.Rand) []string { return []string{key(r), num(r) + ".25"} }},
	{"append", func(r *rand.Rand) []string { return []string{key(r), val(r)} }},
	{"setrange", func(r *rand.Rand) []string { return []string{key(r), strconv.Itoa(r.IntN(20)), val(r)} }},
	{"mset", func(r *rand.Rand) []string { return []string{key(r), val(r), key(r), val(r), key(r), val(r)} }},
	{"msetnx", func(r *rand.Rand) []string { return []string{key(r), val(r), key(r), val(r)} }},
	{"del", func(r *rand.Rand) []string { return []string{key(r), key(r)} }},
	{"unlink", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"expire", func(r *rand.Rand) []string { return []string{key(r), strconv.Itoa(1 + r.IntN(100))} }},
	{"pexpire", func(r *rand.Rand) []string { return []string{key(r), ttlMS(r)} }},
	{"pexpireat", func(r *rand.Rand) []string {
		return []string{key(r), strconv.FormatInt(time.Now().UnixMilli()+int64(r.IntN(40)), 10)}
	}},
	{"persist", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"rename", func(r *rand.Rand) []string { return []string{key(r), key(r)} }},
	{"renamenx", func(r *rand.Rand) []string { return []string{key(r), key(r)} }},
	{"copy", func(r *rand.Rand) []string { return []string{key(r), key(r), "REPLACE"} }},
	{"move", func(r *rand.Rand) []string { return []string{key(r), "1"} }},
	{"restore", func(r *rand.Rand) []string { // TTLs count from the record's time
		p := restorePayloads[r.IntN(len(restorePayloads))]
		return []string{key(r), []string{"0", ttlMS(r)}[r.IntN(2)], p, "REPLACE"}
	}},
	{"lpush", func(r *rand.Rand) []string { return []string{key(r), val(r), val(r)} }},
	{"rpop", func(r *rand.Rand) []string { return []string{key(r)} }},
	{"sadd", func(r *rand.Rand) []string { return []string{key(r), val(r), val(r)} }},
	{"spop", func(r *rand.Rand) []string { return []string{key(r)} }}, // uses the record's seed
	{"hset", func(r *rand.Rand) []string { return []string{key(r), val(r), val(r)} }},
	{"hincrby", func(r *rand.Rand) []string { return []string{key(r), "f", num(r)} }},
	// Hash fields that expire in the middle of the workload: lazily at
	// record time, and through the KindExpireDue records below.
	{"hpexpire", func(r *rand.Rand) []string { return []string{key(r), ttlMS(r), "FIELDS", "2", val(r), "f"} }},
	{"hexpire", func(r *rand.Rand) []string { return []string{key(r), "100", "GT", "FIELDS", "1", "f"} }},
	{"hpersist", func(r *rand.Rand) []string { return []string{key(r), "FIELDS", "1", "f"} }},
	{"hsetex", func(r *rand.Rand) []string { return []string{key(r), "PX", ttlMS(r), "FIELDS", "1", val(r), val(r)} }},
	{"hgetex", func(r *rand.Rand) []string { return []string{key(r), "PX", ttlMS(r), "FIELDS", "1", "f"} }},
	{"hgetdel", func(r *rand.Rand) []string { return []string{key(r), "FIELDS", "1", val(r)} }},
	{"zadd", func(r *rand.Rand) []string { return []string{key(r), num(r), val(r)} }},
	// Streams: "*" IDs, idle times and delivery times come from the record.
	{"xadd", func(r *rand.Rand) []string { return []string{key(r), "MAXLEN", "~", "3", "*", "f", val(r)} }},
	{"xtrim", func(r *rand.Rand) []string { return []string{key(r), "MAXLEN", strconv.Itoa(r.IntN(4))} }},
	{"xgroup", func(r *rand.Rand) []string { return []string{"CREATE", key(r), "g", "0", "MKSTREAM"} }},
	{"xreadgroup", func(r *rand.Rand) []string {
		return []string{"GROUP", "g", "c" + strconv.Itoa(r.IntN(3)), "COUNT", "2", "STREAMS", key(r), ">"}
	}},
	{"xautoclaim", func(r *rand.Rand) []string { return []string{key(r), "g", "c9", "0", "0", "COUNT", "2"} }},
	{"xclaim", func(r *rand.Rand) []string { return []string{key(r), "g", "c8", "0", "0-1", "IDLE", "5"} }},
	{"flushdb", func(r *rand.Rand) []string { return nil }},
	{"swapdb", func(r *rand.Rand) []string { return []string{strconv.Itoa(r.IntN(3)), strconv.Itoa(r.IntN(3))} }},
}

// restorePayloads are DUMP payloads of a value of each type.
var restorePayloads = func() []string {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	id := rdb.StreamID{Ms: 5, Seq: 1}
	var out []string
	for _, v := range []*rdb.Value{
		{Kind: rdb.KindString, Str: []byte("dumped")},
		{Kind: rdb.KindList, Members: b("a", "b", "c")},
		{Kind: rdb.KindSet, Members: b("1", "x")},
		{Kind: rdb.KindHash, Members: b("f", "g"), Values: b("1", "2")},
		{Kind: rdb.KindZSet, Members: b("a", "b"), Scores: []float64{1, 2.5}},
		{Kind: rdb.KindStream, Stream: &rdb.Stream{Length: 1, LastID: id, FirstID: id, EntriesAdded: 1,
			Nodes:  []rdb.StreamNode{{First: id, Fields: b("f"), Entries: []rdb.StreamEntry{{ID: id, Fields: b("f", "v")}}, Total: 1, Last: id, Bytes: 30}},
			Groups: []rdb.StreamGroup{{Name: []byte("g"), LastID: id, EntriesRead: 1, Pending: []rdb.StreamNack{{ID: id, DeliveryTime: 1, DeliveryCount: 1, Consumer: []byte("c0")}}, Consumers: []rdb.StreamConsumer{{Name: []byte("c0"), SeenTime: 1}}}}}},
	} {
		out = append(out, string(rdb.Encode(v)))
	}
	return out
}()

// available keeps the generators whose command exists and writes, so the
// test covers more as the command table grows.
func available(t *testing.T) []gen {
	var out []gen
	var names []string
	for _, g := range gens {
		c := command.Lookup([]byte(g.name))
		if c == nil || c.Run == nil {
			continue
		}
		writes := c.IsWrite()
		for _, sub := range c.Subcommands {
			writes = writes || sub.IsWrite() // XGROUP CREATE
		}
		if writes {
			out = append(out, g)
			names = append(names, g.name)
		}
	}
	t.Logf("write commands exercised: %v", names)
	if len(out) == 0 {
		t.Fatal("no write command available")
	}
	return out
}

func argv(name string, args []string) [][]byte {
	out := [][]byte{[]byte(name)}
	for _, a := range args {
		out = append(out, []byte(a))
	}
	return out
}

// randomRecord makes a command record, an EXEC block (sometimes with a
// SELECT inside and sometimes WATCHing a key, so that some abort) or an
// active-expiry record.
func randomRecord(r *rand.Rand, gs []gen, sh *shard.Shard) shard.Record {
	one := func() [][]byte {
		g := gs[r.IntN(len(gs))]
		if (g.name == "flushdb" || g.name == "swapdb") && r.IntN(10) != 0 {
			g = gs[0] // keep whole-database commands rare
		}
		return argv(g.name, g.args(r))
	}
	db := r.IntN(3)
	switch p := r.IntN(100); {
	case p < 10:
		rec := shard.Record{Kind: shard.KindExec, DB: db}
		for range 1 + r.IntN(5) {
			if r.IntN(6) == 0 {
				rec.Cmds = append(rec.Cmds, argv("select", []string{strconv.Itoa(r.IntN(3))}))
			}
			rec.Cmds = append(rec.Cmds, one())
		}
		if r.IntN(3) == 0 {
			k := []byte(key(r))
			rec.Watch = []shard.WatchKey{{DB: db, Key: k, Index: sh.Watch(db, k)}}
		}
		return rec
	case p < 11:
		return shard.Record{Kind: shard.KindExpire, DB: db, Cmds: [][][]byte{{[]byte(key(r)), []byte(key(r))}}}
	case p < 14:
		// Expiry index entries around now, due or not, for keys that may
		// have any expiry or none.
		entry := func() []byte {
			at := time.Now().UnixMilli() + int64(r.IntN(60)) - 30
			return append(binary.BigEndian.AppendUint64(nil, uint64(at)), key(r)...)
		}
		return shard.Record{Kind: shard.KindExpireDue, DB: db, Cmds: [][][]byte{{entry(), entry()}}}
	default:
		return shard.Record{Kind: shard.KindCommand, DB: db, Cmds: [][][]byte{one()}}
	}
}

// TestReplayDeterminism runs a random concurrent workload through a live
// shard, then replays the shard's log into an empty store: both stores must
// hold the same data, byte for byte.
func TestReplayDeterminism(t *testing.T) {
	gs := available(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	st, sh, raftDir := startLone(t)
	var err error

	const writers, perWriter = 8, 1500
	var wg sync.WaitGroup
	var mu sync.Mutex
	var props []*shard.Proposal
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := range perWriter {
				p := shard.NewProposal(randomRecord(r, gs, sh), 2)
				if err := sh.Propose(p); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				props = append(props, p)
				mu.Unlock()
				// Wait now and then, so groups vary in size and
				// time moves on between records.
				if i%50 == 0 {
					<-p.Done
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	sh.Close()

	var recs []*shard.Record
	kinds := map[shard.Kind]int{}
	err = shard.ReadLog(raftDir, func(rec *shard.Record) error {
		recs = append(recs, rec)
		kinds[rec.Kind]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Records that changed nothing are not logged.
	if len(recs) == 0 || len(recs) > writers*perWriter {
		t.Fatalf("log holds %d records of %d proposed", len(recs), writers*perWriter)
	}
	t.Logf("records by kind: %v", kinds)

	checkReplay(t, st, recs)
	// Applied again one by one, each record gives the reply its client got
	// (a record's seed identifies it).
	replies := make(map[uint64][]byte, len(props))
	for _, p := range props {
		replies[p.Rec.Seed] = p.W.Bytes()
	}
	again, err := store.Open(t.TempDir(), store.Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	tx := again.WriteTx()
	mismatches := 0
	for _, rec := range recs {
		w := resp.NewWriter(2)
		tx.DB, tx.Now = rec.DB, rec.Time
		command.Apply(tx, rec, nil, nil, w)
		if want := replies[rec.Seed]; !bytes.Equal(w.Bytes(), want) && mismatches < 5 {
			mismatches++
			t.Errorf("record %d %q: replayed reply %q, live reply %q", rec.Index, rec.Cmds, w.Bytes(), want)
		}
	}
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}

	if keys := liveKeys(st); keys == 0 {
		t.Errorf("workload left no keys at all; the comparison proves little")
	}
}

// liveKeys counts keys in the first databases, to check the workload
// did leave data to compare.
func liveKeys(st *store.Store) int64 {
	var n int64
	for db := range 3 {
		tx := st.ReadTx(db, 0, false)
		n += tx.Count()
		tx.Close()
	}
	return n
}

// TestDigestSeesChanges guards the digest itself: a changed value, expiry or
// database must change it.
func TestDigestSeesChanges(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := map[[32]byte]string{}
	step := func(name string, f func(tx *store.Tx)) {
		t.Helper()
		tx := st.WriteTx()
		f(tx)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
		d, err := st.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[d]; ok {
			t.Errorf("%s: digest same as after %s", name, prev)
		}
		seen[d] = name
	}
	step("empty", func(tx *store.Tx) {})
	step("set", func(tx *store.Tx) { tx.Put([]byte("a"), store.Meta{Type: store.TypeString, Body: []byte("1")}) })
	step("value", func(tx *store.Tx) { tx.Put([]byte("a"), store.Meta{Type: store.TypeString, Body: []byte("2")}) })
	step("expiry", func(tx *store.Tx) {
		tx.Put([]byte("a"), store.Meta{Type: store.TypeString, Body: []byte("2"), ExpireAt: 1 << 40})
	})
	step("member", func(tx *store.Tx) {
		tx.Put([]byte("h"), store.Meta{Type: store.TypeHash})
		tx.SetMember([]byte("h"), []byte("f"), []byte("x"))
	})
	step("swap", func(tx *store.Tx) { tx.Swap(0, 1) })
}

// dumpStore returns a store's user data (no log, no shard state) by key.
func dumpStore(st *store.Store) map[string]string {
	out := map[string]string{}
	it, _ := st.Pebble().NewIter(&pebble.IterOptions{})
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if k[0] == 's' {
			continue
		}
		out[string(k)] = string(it.Value())
	}
	it.Close()
	return out
}

// checkReplay applies recs to an empty store and fails t unless it ends
// equal to st (by digest), logging the first entries that differ.
func checkReplay(t *testing.T, st *store.Store, recs []*shard.Record) {
	t.Helper()
	replayed, err := store.Open(t.TempDir(), store.Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer replayed.Close()
	if err := shard.Replay(replayed, command.Apply, recs); err != nil {
		t.Fatal(err)
	}
	a, err := st.Digest()
	if err != nil {
		t.Fatal(err)
	}
	b, err := replayed.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		for i, d := range diffStores(st, replayed) {
			if i < 20 {
				t.Log(d)
			}
		}
		t.Fatalf("replayed store differs: digest %x, live store %x", b, a)
	}
}

// diffStores lists the entries where a live and a replayed store differ,
// to say what a failing replay got wrong.
func diffStores(a, b *store.Store) []string {
	da, db := dumpStore(a), dumpStore(b)
	var d []string
	for k, v := range da {
		if w, ok := db[k]; !ok || w != v {
			d = append(d, fmt.Sprintf("live %q=%q replay=%q(%v)", k, v, w, ok))
		}
	}
	for k, v := range db {
		if _, ok := da[k]; !ok {
			d = append(d, fmt.Sprintf("replay-only %q=%q", k, v))
		}
	}
	sort.Strings(d)
	return d
}

// startLone starts a lone shard (a one-voter group) on a new store whose
// whole Raft log is kept (LogRetain 0), for tests that replay it.
func startLone(t *testing.T) (*store.Store, *shard.Shard, string) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	raftDir := t.TempDir()
	sh, err := shard.New(st, command.Apply, shard.Config{RaftDir: raftDir, Fsync: shard.FsyncNo})
	if err != nil {
		t.Fatal(err)
	}
	if !sh.WaitLeader(5 * time.Second) {
		t.Fatal("no leader")
	}
	return st, sh, raftDir
}
