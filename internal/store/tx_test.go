package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestCounts checks that the key and expiry counts follow every way a key
// can gain or lose an expiry, survive a restart, and that FLUSHDB and
// expired keys are accounted for.
func TestCounts(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	const now = 1_000_000
	check := func(st *Store, keys, expires int64) {
		t.Helper()
		tx := st.ReadTx(0, now, false)
		defer tx.Close()
		if tx.Count() != keys || tx.Expires() != expires {
			t.Fatalf("count %d expires %d, want %d %d", tx.Count(), tx.Expires(), keys, expires)
		}
	}
	write := func(fn func(tx *Tx)) {
		t.Helper()
		commitNow(t, st, now, fn)
	}
	str := func(expireAt int64) Meta { return Meta{Type: TypeString, ExpireAt: expireAt, Body: []byte("v")} }

	write(func(tx *Tx) {
		tx.Put([]byte("a"), str(0))
		tx.Put([]byte("b"), str(now+1000))
		tx.Put([]byte("c"), str(now+2000))
	})
	check(st, 3, 2)
	write(func(tx *Tx) {
		tx.Put([]byte("a"), str(now+5000)) // gains an expiry
		tx.Put([]byte("b"), str(0))        // loses it
		tx.Put([]byte("c"), str(now+3000)) // changes it
	})
	check(st, 3, 2)
	write(func(tx *Tx) { tx.Delete([]byte("a")) })
	check(st, 2, 1)

	st.Close()
	if st, err = Open(dir, Options{Databases: 4}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check(st, 2, 1)

	// An expired key found by a write is removed with its index entry.
	write(func(tx *Tx) { tx.Put([]byte("d"), str(now-1)) })
	check(st, 3, 2)
	write(func(tx *Tx) {
		if tx.Exists([]byte("d")) {
			t.Error("expired key exists")
		}
	})
	check(st, 2, 1)
	// c's expiry moved later, so its entry stayed at the earlier time.
	if due := st.Due(0, now+10_000, 10); len(due) != 1 || string(due[0]) != string(dueEntry(now+2000, "c")) {
		t.Errorf("expiry index: %q", due)
	}
	write(func(tx *Tx) { tx.Flush(0) })
	check(st, 0, 0)
}

// commitNow runs fn on a write Tx whose clock reads at, and commits it.
func commitNow(t *testing.T, st *Store, at int64, fn func(tx *Tx)) {
	t.Helper()
	tx := st.WriteTx()
	tx.Now = at
	fn(tx)
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
}

func dueEntry(at int64, key string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at)), key...)
}

// TestExpiryHints follows the expiry index's entries, which may come before
// a key's expiry but never after it, through ExpireDue: an entry that comes
// due moves to the key's expiry, expires the key or goes away with it.
func TestExpiryHints(t *testing.T) {
	st := openStore(t)
	const now = 1_000_000
	str := func(expireAt int64) Meta { return Meta{Type: TypeString, ExpireAt: expireAt, Body: []byte("v")} }
	write := func(at int64, fn func(tx *Tx)) {
		t.Helper()
		commitNow(t, st, at, fn)
	}
	index := func() []string {
		var got []string
		for _, e := range st.Due(0, math.MaxInt64-1, 100) {
			got = append(got, fmt.Sprintf("%d:%s", binary.BigEndian.Uint64(e)-now, e[8:]))
		}
		return got
	}
	want := func(w ...string) {
		t.Helper()
		if got := index(); !slices.Equal(got, w) {
			t.Fatalf("expiry index %q, want %q", got, w)
		}
	}
	settle := func(at int64, wantExpired ...string) {
		t.Helper()
		var expired []string
		write(at, func(tx *Tx) {
			for _, e := range st.Due(0, at, 100) {
				if tx.ExpireDue(e) {
					expired = append(expired, string(e[8:]))
				}
			}
		})
		if !slices.Equal(expired, wantExpired) {
			t.Fatalf("at +%d expired %q, want %q", at-now, expired, wantExpired)
		}
	}

	write(now, func(tx *Tx) {
		for _, k := range []string{"later", "sooner", "persisted", "deleted", "due", "recreated"} {
			tx.Put([]byte(k), str(now+100))
		}
	})
	write(now, func(tx *Tx) {
		tx.Put([]byte("later"), str(now+300)) // keeps its entry at +100
		tx.Put([]byte("sooner"), str(now+50)) // moves it to +50
		tx.Put([]byte("persisted"), str(0))   // drops it
		tx.Delete([]byte("deleted"))          // drops it
		tx.Delete([]byte("recreated"))        // drops it,
		tx.Put([]byte("recreated"), str(0))   // and the new key has none
		tx.Put([]byte("recreated"), str(now+500))
	})
	want("50:sooner", "100:due", "100:later", "500:recreated")
	settle(now+60, "sooner")
	want("100:due", "100:later", "500:recreated")
	settle(now+100, "due")
	want("300:later", "500:recreated") // moved to its expiry
	write(now+100, func(tx *Tx) { tx.Put([]byte("later"), str(now+400)) })
	settle(now + 300)
	want("400:later", "500:recreated")
	write(now+300, func(tx *Tx) { tx.Delete([]byte("later")) })
	settle(now+500, "recreated")
	want()
	tx := st.ReadTx(0, now+500, false)
	defer tx.Close()
	if n := tx.Count(); n != 1 { // persisted
		t.Fatalf("%d keys left, want 1", n)
	}
}

// A write that commits through the cache entry it read updates the key
// even when that entry was evicted and the key cached again meanwhile.
func TestMetaCacheStaleRef(t *testing.T) {
	c := newMetaCache(cacheShards * 200)
	key := []byte("k")
	c.set(key, []byte("old"), true, nil)
	_, ref, _, _ := c.get(key)
	c.set(key, []byte("v1"), true, ref)
	if e, again, _, _ := c.get(key); again != ref || string(e.value) != "v1" {
		t.Fatalf("in place: %q, same entry %v", e.value, again == ref)
	}
	for i := 0; !ref.dead; i++ {
		if i == 100000 {
			t.Fatal("the entry was never evicted")
		}
		c.set(fmt.Appendf(nil, "other%d", i), []byte("0123456789"), true, nil)
	}
	_, _, version, _ := c.get(key)
	c.fill(key, []byte("v1"), true, version) // a reader caches the key again
	c.set(key, []byte("v2"), true, ref)
	if e, _, _, _ := c.get(key); string(e.value) != "v2" {
		t.Fatalf("after a write through an evicted entry the cache holds %q", e.value)
	}
}

// The metadata cache stays within its size, replacing entries in place.
func TestMetaCacheBound(t *testing.T) {
	c := newMetaCache(cacheShards * 1000)
	for i := range 100000 {
		c.set(fmt.Appendf(nil, "key%d", i), []byte("0123456789"), true, nil)
		c.set(fmt.Appendf(nil, "key%d", i/2), []byte("01234567890123456789"), true, nil)
	}
	var n int
	for i := range c.shards {
		s := &c.shards[i]
		var sum int64
		for k, e := range s.m {
			sum += e.cost([]byte(k))
		}
		if sum != s.bytes || s.bytes > s.limit {
			t.Fatalf("shard %d: counted %d bytes, holds %d, limit %d", i, s.bytes, sum, s.limit)
		}
		n += len(s.m)
	}
	if n == 0 {
		t.Fatal("the cache holds nothing")
	}
	c.set([]byte("last"), []byte("v"), true, nil)
	if e, ref, _, _ := c.get([]byte("last")); ref == nil || string(e.value) != "v" {
		t.Errorf("latest entry: %q, %v", e.value, ref != nil)
	}
}

// A live read whose metadata and members straddle a commit panics with
// ErrStaleRead (its caller reads again on a snapshot): the key may have
// changed type in between, and members of another type read as its own.
func TestStaleReadDetected(t *testing.T) {
	st, err := Open(t.TempDir(), Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil { // a leaked iterator shows here
			t.Error(err)
		}
	}()
	key := []byte("k")
	write := func(typ Type, member string) {
		t.Helper()
		tx := st.WriteTx()
		tx.Delete(key)
		tx.Put(key, Meta{Type: typ, Body: []byte{1}})
		tx.SetMember(key, []byte(member), []byte("v"))
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	stale := func(read func(tx *Tx)) (stale bool) {
		defer func() {
			if r := recover(); r != nil {
				if r != ErrStaleRead {
					panic(r)
				}
				stale = true
			}
		}()
		read(nil)
		return false
	}
	write(TypeHash, "field")
	for _, c := range []struct {
		name   string
		commit bool // a commit between the lookup and the member read
		snap   bool
	}{{"quiet", false, false}, {"straddled", true, false}, {"snapshot", true, true}} {
		for _, member := range []func(tx *Tx){
			func(tx *Tx) { tx.Member(key, []byte("field")) },
			func(tx *Tx) { tx.Members(key, nil, nil, false, func(_, _ []byte) bool { return true }) },
			func(tx *Tx) { tx.MemberIter(key, nil, []byte{0xff}).Close() },
		} {
			tx := st.ReadTx(0, 0, c.snap)
			if m, ok := tx.Lookup(key); !ok || m.Type != TypeHash {
				t.Fatalf("%s: lookup %v %v", c.name, m, ok)
			}
			if c.commit {
				write(TypeHash, "field")
			}
			got := stale(func(*Tx) { member(tx) })
			tx.Close()
			if want := c.commit && !c.snap; got != want {
				t.Errorf("%s: stale %v, want %v", c.name, got, want)
			}
		}
	}
}

// Metadata written in a group reaches the batches once, when the Tx is
// sealed; until then every way a Tx can read it must still see it: a
// SCAN in the same Tx or a chained one, a FLUSHDB of another database
// (which must keep it) or of its own (which must drop it), and the value
// committed is the last one written.
func TestMetaWrittenOnce(t *testing.T) {
	st := openStore(t)
	str := func(v string) Meta { return Meta{Type: TypeString, Body: []byte(v)} }
	scan := func(tx *Tx, db int) (keys []string) {
		saved := tx.DB
		tx.DB = db
		defer func() { tx.DB = saved }()
		tx.Scan(0, 100, func(key []byte, m Meta) { keys = append(keys, fmt.Sprintf("%s=%s", key, m.Body)) })
		slices.Sort(keys)
		return keys
	}

	tx := st.WriteTx()
	tx.Put([]byte("a"), str("1"))
	tx.Put([]byte("a"), str("2"))
	if got := fmt.Sprint(scan(tx, 0)); got != "[a=2]" {
		t.Fatalf("SCAN in the writing Tx: %s", got)
	}
	tx.Put([]byte("a"), str("3"))
	tx.DB = 1
	tx.Put([]byte("b"), str("1"))
	tx.DB = 0
	tx.Flush(0)
	tx.Put([]byte("c"), str("1"))
	tx.Put([]byte("d"), str("1"))
	next := st.WriteTxAfter(tx, 0)
	next.Put([]byte("c"), str("2"))
	if got := fmt.Sprint(scan(next, 0), scan(next, 1)); got != "[c=2 d=1] [b=1]" {
		t.Fatalf("SCAN in a chained Tx: %s", got)
	}
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := next.Commit(true); err != nil {
		t.Fatal(err)
	}
	for db, want := range []string{"[c=2 d=1]", "[b=1]"} {
		r := st.ReadTx(db, 0, true)
		got := fmt.Sprint(scan(r, db))
		r.Close()
		if got != want {
			t.Errorf("db %d after commit: %s, want %s", db, got, want)
		}
	}
	if n := st.counts[0].Load() + st.counts[1].Load(); n != 3 {
		t.Errorf("%d keys counted, want 3", n)
	}
}

// Due starts where the last call found its first entry, so the deletions
// that the entries settled before it left are not stepped over again;
// an entry it went past anyway is found at the next scan from the start
// (after dueFullScan).
func TestDueStartsPastSettled(t *testing.T) {
	st := openStore(t)
	const now = 1_000_000
	commitNow(t, st, now, func(tx *Tx) {
		for i := range 3000 {
			tx.Put([]byte(fmt.Sprintf("k%04d", i)), Meta{Type: TypeString, ExpireAt: now + 1 + int64(i), Body: []byte("v")})
		}
	})
	at := int64(now + 5000)
	settled := 0
	for {
		due := st.Due(0, at, 512)
		if len(due) == 0 {
			break
		}
		if got := int64(binary.BigEndian.Uint64(due[0])); got != now+1+int64(settled) {
			t.Fatalf("Due starts at +%d, want +%d", got-now, settled+1)
		}
		commitNow(t, st, at, func(tx *Tx) {
			for _, e := range due {
				tx.ExpireDue(e)
			}
		})
		settled += len(due)
		if start := st.due.start[0]; start != now+1+int64(settled-len(due)) {
			t.Fatalf("after %d settled Due would start at +%d", settled, start-now)
		}
	}
	if settled != 3000 {
		t.Fatalf("%d entries settled, want 3000", settled)
	}
	// An entry the start went past anyway (forced here) is found by the
	// next scan from the beginning.
	commitNow(t, st, at, func(tx *Tx) {
		tx.Put([]byte("missed"), Meta{Type: TypeString, ExpireAt: at - 1, Body: []byte("v")})
	})
	st.due.from(0, at) // a scan that started after the commit
	st.due.set(0, at)
	if due := st.Due(0, at, 512); len(due) != 0 {
		t.Fatalf("Due found %d entries past its start", len(due))
	}
	if due := st.Due(0, at+dueFullScan, 512); len(due) != 1 || string(due[0][8:]) != "missed" {
		t.Fatalf("the scan from the start found %q", due)
	}
}

// An entry committed before where Due would start (SET ... PXAT in the
// past writes one) moves the start back, also when the commit lands while
// a scan runs.
func TestDueFindsEarlierEntries(t *testing.T) {
	st := openStore(t)
	const now = 1_000_000
	put := func(key string, at int64) {
		commitNow(t, st, now, func(tx *Tx) {
			tx.Put([]byte(key), Meta{Type: TypeString, ExpireAt: at, Body: []byte("v")})
		})
	}
	put("late", now+100)
	if due := st.Due(0, now, 10); len(due) != 0 {
		t.Fatalf("nothing is due yet, Due found %d", len(due))
	}
	put("past", 1) // before where the next scan starts (now - dueSlack)
	if due := st.Due(0, now+1, 10); len(due) != 1 || string(due[0][8:]) != "past" {
		t.Fatalf("Due found %q, want the entry in the past", due)
	}
	// A commit between a scan's start and its end.
	from := st.due.from(0, now+2)
	put("racing", 2)
	st.due.set(0, now)
	if got := st.due.start[0]; got != 2 || from > 2 {
		t.Fatalf("the next scan starts at %d, want 2", got)
	}
}
