package command

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// listpackHash is Redis's small hash as a model: fields in insertion order,
// a field set again keeps its place, a deleted one leaves the others in
// theirs. Past the limits it stands for a hashtable (big), whose order the
// model does not know.
type listpackHash struct {
	fields, values []string
	big            bool
}

func (h *listpackHash) set(f, v string) {
	if len(f) > hashMaxListpackValue || len(v) > hashMaxListpackValue {
		h.big = true
	}
	if i := slices.Index(h.fields, f); i >= 0 {
		h.values[i] = v
		return
	}
	h.fields, h.values = append(h.fields, f), append(h.values, v)
}

func (h *listpackHash) del(f string) {
	if i := slices.Index(h.fields, f); i >= 0 {
		h.fields, h.values = slices.Delete(h.fields, i, i+1), slices.Delete(h.values, i, i+1)
	}
}

// flat is HGETALL's reply as the model gives it.
func (h *listpackHash) flat() []string {
	var out []string
	for i, f := range h.fields {
		out = append(out, f, h.values[i])
	}
	return out
}

func replyStrings(r testutil.Reply) []string {
	var out []string
	for _, e := range r.Elems {
		out = append(out, e.Str)
	}
	return out
}

// pairsSorted renders a flat field/value list as sorted "f=v" strings.
func pairsSorted(flat []string) []string {
	var out []string
	for i := 0; i+1 < len(flat); i += 2 {
		out = append(out, flat[i]+"="+flat[i+1])
	}
	slices.Sort(out)
	return out
}

// A small hash answers HGETALL, HKEYS, HVALS and HSCAN in insertion order
// through random HSET, HSETNX, HINCRBY and HDEL, both when its field
// numbers are dense (placed by number) and when deletions made them sparse
// (sorted); once converted (h2 gets long values) it holds the same pairs.
func TestHashInsertionOrder(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	keys := []string{"h0", "h1", "h2"}
	model := map[string]*listpackHash{}
	for _, k := range keys {
		model[k] = &listpackHash{}
	}
	field := func() string { return "f" + strconv.Itoa(r.IntN(40)) }
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range 3000 {
		k := keys[r.IntN(len(keys))]
		h := model[k]
		var argv []string
		switch op := r.IntN(20); {
		case op < 8:
			argv = []string{"hset", k}
			for range 1 + r.IntN(3) {
				f, v := field(), "v"+strconv.Itoa(i)
				argv = append(argv, f, v)
			}
			for j := 2; j < len(argv); j += 2 {
				h.set(argv[j], argv[j+1])
			}
		case op < 10:
			f := field()
			argv = []string{"hsetnx", k, f, "nx"}
			if !slices.Contains(h.fields, f) {
				h.set(f, "nx")
			}
		case op < 12:
			f := field()
			n := 0
			if j := slices.Index(h.fields, f); j >= 0 {
				if n, _ = strconv.Atoi(h.values[j]); h.values[j] != strconv.Itoa(n) {
					continue // not an integer: HINCRBY would fail
				}
			}
			argv = []string{"hincrby", k, f, "3"}
			h.set(f, strconv.Itoa(n+3))
		case op < 19:
			argv = []string{"hdel", k, field(), field()}
			h.del(argv[2])
			h.del(argv[3])
			if len(h.fields) == 0 {
				h.big = false // deleted: a new hash starts small
			}
		default:
			if k != "h2" {
				continue
			}
			argv = []string{"hset", k, field(), strings.Repeat("x", 65)}
			h.set(argv[2], argv[3])
		}
		tx := st.WriteTx()
		tx.Now = 1e12
		Apply(tx, &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{setArgv(argv)}}, nil, nil, nil)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			checkHashOrder(t, st, model)
		}
	}
	if !model["h2"].big || model["h0"].big || len(model["h0"].fields) < 5 {
		t.Errorf("the workload missed a case: h0 %v, h2 %v", model["h0"], model["h2"])
	}
}

// checkHashOrder compares each hash with its model.
func checkHashOrder(t *testing.T, st *store.Store, model map[string]*listpackHash) {
	t.Helper()
	for k, h := range model {
		all := replyStrings(setRun(st, "hgetall", k))
		if h.big {
			if !slices.Equal(pairsSorted(all), pairsSorted(h.flat())) {
				t.Fatalf("HGETALL %s (converted) = %v, want the pairs of %v", k, all, h.flat())
			}
			continue
		}
		if !slices.Equal(all, h.flat()) {
			t.Fatalf("HGETALL %s = %v\nwant %v", k, all, h.flat())
		}
		if keys := replyStrings(setRun(st, "hkeys", k)); !slices.Equal(keys, h.fields) {
			t.Errorf("HKEYS %s = %v, want %v", k, keys, h.fields)
		}
		if vals := replyStrings(setRun(st, "hvals", k)); !slices.Equal(vals, h.values) {
			t.Errorf("HVALS %s = %v, want %v", k, vals, h.values)
		}
		if scan := setRun(st, "hscan", k, "0"); len(scan.Elems) != 2 || !slices.Equal(replyStrings(scan.Elems[1]), h.flat()) {
			t.Errorf("HSCAN %s 0 = %v, want %v", k, scan, h.flat())
		}
	}
}

// Hashes written before basalt kept insertion order (a 9-byte header, plain
// values) still read and write correctly from an existing data directory:
// they answer in hash order; their first change numbers their fields in
// that order, and the fields added after follow in insertion order; a long
// value converts them as before.
func TestHashLegacyEncoding(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	tx := st.WriteTx()
	fields := map[string]string{"a": "1", "b": "", "c": "three", "n": "10"}
	for f, v := range fields {
		tx.SetMember([]byte("old"), store.HashedSub(nil, []byte(f)), []byte(v))
	}
	tx.Put([]byte("old"), store.Meta{Type: store.TypeHash, Body: sizeHeader{n: int64(len(fields))}.encode()})
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st, err = store.Open(dir, store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	check := func(want map[string]string) {
		t.Helper()
		var flat []string
		for f, v := range want {
			flat = append(flat, f, v)
		}
		if all := replyStrings(setRun(st, "hgetall", "old")); !slices.Equal(pairsSorted(all), pairsSorted(flat)) {
			t.Errorf("HGETALL old = %v, want the pairs of %v", all, want)
		}
		for f, v := range want {
			if got := setRun(st, "hget", "old", f); got.Str != v || got.Null {
				t.Errorf("HGET old %s = %v, want %q", f, got, v)
			}
		}
		if n := setRun(st, "hlen", "old"); n.Int != int64(len(want)) {
			t.Errorf("HLEN old = %v, want %d", n, len(want))
		}
	}
	check(fields)
	if got := setRun(st, "hstrlen", "old", "c"); got.Int != 5 {
		t.Errorf("HSTRLEN old c = %v", got)
	}
	if got := setRun(st, "hmget", "old", "a", "x", "n"); !slices.Equal(replyStrings(got), []string{"1", "", "10"}) || !got.Elems[1].Null {
		t.Errorf("HMGET old a x n = %v", got)
	}
	if got := setRun(st, "object", "encoding", "old"); got.Str != "listpack" {
		t.Errorf("OBJECT ENCODING old = %v", got)
	}
	dump := setRun(st, "dump", "old").Str

	write := func(args ...string) {
		t.Helper()
		tx := st.WriteTx()
		tx.Now = 1e12
		w := resp.NewWriter(2)
		Apply(tx, &shard.Record{Kind: shard.KindCommand, Cmds: [][][]byte{setArgv(args)}}, nil, nil, w)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
		if r, _ := testutil.ParseReply(w.Bytes()); r.IsError() {
			t.Fatalf("%v: %v", args, r)
		}
	}
	before := replyStrings(setRun(st, "hkeys", "old"))
	write("hset", "old", "d", "4", "a", "one")
	write("hset", "old", "e", "5")
	if keys := replyStrings(setRun(st, "hkeys", "old")); !slices.Equal(keys, append(before, "d", "e")) {
		t.Errorf("HKEYS old after two new fields = %v, want %v then d and e", keys, before)
	}
	write("hdel", "old", "e")
	write("hincrby", "old", "n", "5")
	write("hdel", "old", "b")
	fields = map[string]string{"a": "one", "c": "three", "n": "15", "d": "4"}
	check(fields)
	write("restore", "copy", "0", dump)
	if all := replyStrings(setRun(st, "hgetall", "copy")); len(all) != 8 {
		t.Errorf("RESTORE of the old hash's DUMP: HGETALL = %v", all)
	}
	long := strings.Repeat("x", 65)
	write("hset", "old", "long", long)
	fields["long"] = long
	check(fields)
	if got := setRun(st, "object", "encoding", "old"); got.Str != "hashtable" {
		t.Errorf("OBJECT ENCODING old after a long value = %v", got)
	}
}

// TestHashHeaderEncoding: every combination of a hash header's parts, and
// a field value with its number and expiry, reads back as written; a
// header of a hash that never had a field TTL is stored as before them.
func TestHashHeaderEncoding(t *testing.T) {
	for _, h := range []hashHeader{
		{sizeHeader: sizeHeader{n: 3}},
		{sizeHeader: sizeHeader{n: 3}, ordered: true, next: 7},
		{sizeHeader: sizeHeader{n: 600, big: true}},
		{sizeHeader: sizeHeader{n: 3}, ordered: true, next: 300, ttls: true, due: 1_800_000_000_000},
		{sizeHeader: sizeHeader{n: 600, big: true}, ttls: true, due: 1},
		{sizeHeader: sizeHeader{n: 1}, ttls: true},
	} {
		b := h.encode()
		if got := decodeHashHeader(b); got != h {
			t.Errorf("header %+v reads back as %+v", h, got)
		}
		if !h.ttls && (string(b[:sizeHeaderLen]) != string(h.sizeHeader.encode()) || (len(b) > sizeHeaderLen) != h.ordered) {
			t.Errorf("header %+v without TTLs is stored as %x", h, b)
		}
		if got := decodeSizeHeader(b); got != h.sizeHeader {
			t.Errorf("size header of %+v reads back as %+v", h, got)
		}
		for _, at := range []int64{0, 1, 1_800_000_000_000} {
			if at != 0 && !h.ttls {
				continue
			}
			seq, value := uint64(0), []byte("value")
			if h.ordered {
				seq = 5
			}
			gotSeq, gotAt, gotValue := h.value(h.store(nil, seq, at, value))
			if gotSeq != seq || gotAt != at || string(gotValue) != string(value) {
				t.Errorf("header %+v: value (%d, %d, %q) reads back as (%d, %d, %q)", h, seq, at, value, gotSeq, gotAt, gotValue)
			}
		}
	}
}
