package store

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// memoModel is what the members of the test's keys are, by key and sub.
type memoModel map[string]map[string]string

func (m memoModel) clone() memoModel {
	c := memoModel{}
	for k, subs := range m {
		c[k] = maps.Clone(subs)
	}
	return c
}

// TestMemberMemos runs random member writes (point writes, held members,
// range deletions, key deletions, type changes, FLUSHDB) through chains of
// up to three uncommitted write Txs, some of them dropped, and checks every
// member read of the write Txs and of live reads against a model: a memo
// must never answer what Pebble would not. Some runs give the keys many
// members (their memos are indexed by a map) or the memos a budget so
// small that they are evicted all the time.
func TestMemberMemos(t *testing.T) {
	for seed := range uint64(12) {
		subs, limit := 4, int64(0)
		switch seed % 4 {
		case 1:
			subs = 3 * memberIndexFrom
		case 2:
			subs, limit = 3*memberIndexFrom, 40*memberMemoCost
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { memoRun(t, seed, subs, limit) })
	}
}

func memoRun(t *testing.T, seed uint64, nsubs int, memoLimit int64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	st := openStore(t)
	if memoLimit > 0 {
		st.cache.memoLimit = memoLimit
	}
	keys := []string{"a", "b", "c"}
	// As a stream's, members starting with 'p' may have memos, those
	// starting with 'e' not (a hash's may).
	MemoStreamMembers("p")
	subs := []string{"f0", "f1", "p2", "e3"}
	for i := len(subs); i < nsubs; i++ {
		subs = append(subs, fmt.Sprint("f", i))
	}
	big := string(bytes.Repeat([]byte("v"), memberMemoValueMax+1))
	value := func() string {
		if rng.IntN(8) == 0 {
			return big
		}
		return fmt.Sprint("v", rng.IntN(1000))
	}

	committed := memoModel{}
	var pending []*Tx             // uncommitted, oldest first
	var states []memoModel        // the model after each of them
	var hits, reads, mismatch int // reads checked, answered by a memo, wrong
	dirtyHits := 0                // write Tx reads of a key its chain wrote, answered by a memo
	check := func(where string, got []byte, found bool, want map[string]string, sub string) {
		t.Helper()
		reads++
		w, ok := want[sub]
		if found != ok || string(got) != w {
			mismatch++
			t.Errorf("%s: member %s = %q %v, want %q %v", where, sub, got, found, w, ok)
		}
	}
	for step := range 3000 {
		// Start a Tx on top of the pending ones (or commit or drop them).
		switch r := rng.IntN(10); {
		case r < 3 && len(pending) > 0:
			if err := pending[0].Commit(false); err != nil {
				t.Fatal(err)
			}
			committed, pending, states = states[0], pending[1:], states[1:]
			continue
		case r == 3 && len(pending) > 0:
			for i := len(pending) - 1; i >= 0; i-- {
				pending[i].Close()
			}
			pending, states = nil, nil
			continue
		case len(pending) == 3:
			continue
		}
		var prev *Tx
		state := committed
		if len(pending) > 0 {
			prev, state = pending[len(pending)-1], states[len(states)-1]
		}
		state = state.clone()
		tx := st.WriteTxAfter(prev, 0)
		tx.Now = 1
		for range 1 + rng.IntN(6) {
			k := keys[rng.IntN(len(keys))]
			trace := func(what string) {
				if testing.Verbose() && k == "a" {
					t.Logf("step %d tx %p (prev %p): %s", step, tx, prev, what)
				}
			}
			key := []byte(k)
			sub := subs[rng.IntN(len(subs))]
			r := rng.IntN(20)
			if nsubs > memberIndexFrom && r >= 13 && r < 17 && rng.IntN(10) > 0 {
				r = 6 // many members: deletions rarer, so that keys get many memos
			}
			switch {
			case r < 6:
				if rng.IntN(4) > 0 {
					tx.Lookup(key) // as commands do: the member's type is known
				}
				if _, _, hit := tx.memberFromMemo(tx.memberKey(key, []byte(sub))); hit {
					hits++
					mk := tx.memberKey(key, []byte(sub))
					if _, _, written, _ := tx.chainMember(mk, ownerLen(mk)); !written && tx.memberDirtyIn(mk[:ownerLen(mk)]) {
						dirtyHits++
					}
				}
				v, found := tx.Member(key, []byte(sub))
				check(fmt.Sprintf("step %d write Tx %s", step, k), v, found, state[k], sub)
			case r < 10:
				if _, ok := tx.Lookup(key); !ok {
					tx.Put(key, Meta{Type: TypeHash})
					state[k] = map[string]string{}
				}
				v := value()
				tx.SetMember(key, []byte(sub), []byte(v))
				state[k][sub] = v
				trace("set " + sub + " " + v[:min(len(v), 5)])
			case r < 11:
				if _, ok := tx.Lookup(key); ok {
					v := value()
					tx.HoldMember(key, []byte(sub), []byte(v))
					state[k][sub] = v
					trace("hold " + sub + " " + v[:min(len(v), 5)])
				}
			case r < 13:
				tx.DeleteMember(key, []byte(sub))
				delete(state[k], sub)
				trace("del " + sub)
			case r < 14:
				// As a stream's, a range of members without memos, or
				// one across members with them.
				lo, hi := "f1", "f3"
				if rng.IntN(2) == 0 {
					lo, hi = "e", "q"
				}
				tx.DeleteMemberRange(key, []byte(lo), []byte(hi))
				for sub := range state[k] {
					if sub >= lo && sub < hi {
						delete(state[k], sub)
					}
				}
			case r < 15:
				tx.Delete(key)
				delete(state, k)
				trace("delete key")
			case r < 16:
				// A change of type drops the members. (The writes of a
				// list's or a stream's members are not logged.)
				typ := []Type{TypeHash, TypeSet, TypeList, TypeStream, TypeZSet}[rng.IntN(5)]
				if m, ok := tx.Lookup(key); ok && m.Type != typ {
					tx.Put(key, Meta{Type: typ})
					state[k] = map[string]string{}
				}
			case r < 17 && rng.IntN(10) == 0:
				tx.Flush(0)
				state = memoModel{}
			default:
				// EXPIRE-like: the metadata changes, the members stay.
				if m, ok := tx.Lookup(key); ok {
					m.ExpireAt = 1_000_000 + int64(rng.IntN(1000))
					tx.Put(key, m)
				}
			}
		}
		pending, states = append(pending, tx), append(states, state)

		// Live reads see committed state.
		for range 3 {
			k := keys[rng.IntN(len(keys))]
			sub := subs[rng.IntN(len(subs))]
			rt := st.ReadTx(0, 1, false)
			if _, ok := rt.Lookup([]byte(k)); ok {
				if _, _, hit := rt.memberFromMemo(rt.memberKey([]byte(k), []byte(sub))); hit {
					hits++
				}
				v, found := rt.Member([]byte(k), []byte(sub))
				check(fmt.Sprintf("step %d read %s", step, k), v, found, committed[k], sub)
			}
			rt.Close()
		}
		if mismatch > 5 {
			t.Fatal("too many mismatches")
		}
		if step%100 == 0 {
			checkMemoCosts(t, st)
		}
	}
	for i := len(pending) - 1; i >= 0; i-- {
		pending[i].Close()
	}
	checkMemoCosts(t, st)
	t.Logf("%d reads, %d from memos (%d of a key the chain wrote)", reads, hits, dirtyHits)
	if hits < reads/20 || dirtyHits < reads/200 {
		t.Fatalf("%d of %d reads found a memo, %d of a key the chain wrote", hits, reads, dirtyHits)
	}
}

// checkMemoCosts checks the cache's costs and its memo indexes.
func checkMemoCosts(t *testing.T, st *Store) {
	t.Helper()
	var total int64
	for i := range st.cache.shards {
		sh := &st.cache.shards[i]
		var sum, memos int64
		for mk, e := range sh.m {
			sum += e.cost([]byte(mk))
			for j, m := range e.members {
				memos += int64(len(m.sub) + len(m.value) + memberMemoCost)
				if e.memberIdx != nil && e.memberIdx[m.sub] != int32(j) {
					t.Errorf("memo %d of %q: index says %d", j, mk, e.memberIdx[m.sub])
				}
			}
			if e.memberIdx != nil && len(e.memberIdx) != len(e.members) {
				t.Errorf("%q: %d memos, %d indexed", mk, len(e.members), len(e.memberIdx))
			}
		}
		if sum != sh.bytes || memos != sh.memoBytes {
			t.Errorf("cache shard %d: entries cost %d and memos %d, the shard counts %d and %d", i, sum, memos, sh.bytes, sh.memoBytes)
		}
		total += memos
	}
	if total != st.cache.memoBytes.Load() || total > st.cache.memoLimit {
		t.Errorf("memos cost %d, the cache counts %d (budget %d)", total, st.cache.memoBytes.Load(), st.cache.memoLimit)
	}
}

// memberDirtyIn reports whether this Tx or an uncommitted one before it in
// its chain wrote members of the key whose member prefix is owner.
func (t *Tx) memberDirtyIn(owner []byte) bool {
	for x := t; x != nil && !x.committed; x = x.prev {
		if _, ok := x.memberDirty[string(owner)]; ok || x.memberDirtyAll || x.flushed {
			return true
		}
	}
	return false
}

// memberMemos counts the member memos in the cache.
func (c *metaCache) memberMemos() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			n += len(e.members)
		}
		s.mu.Unlock()
	}
	return n
}

// TestMemberMemosConcurrentReads has live reads of one member race with
// the commits that increment it: every read must see a value at least as
// new as the last commit done before it started, and no newer than the
// last commit started before it ended. Each commit also drops the key's
// memos (a range deletion), so readers keep filling them as commits come.
func TestMemberMemosConcurrentReads(t *testing.T) {
	st := openStore(t)
	key, sub := []byte("z"), []byte("f")
	var done, started atomic.Int64
	commitNow(t, st, 1, func(tx *Tx) {
		tx.Put(key, Meta{Type: TypeZSet})
		tx.SetMember(key, sub, []byte("0"))
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var hits atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				from := done.Load()
				v, ok, hit, stale := memoRead(st, key, sub)
				to := started.Load()
				if stale {
					continue
				}
				if hit {
					hits.Add(1)
				}
				n, _ := strconv.ParseInt(string(v), 10, 64)
				if !ok || n < from || n > to {
					t.Errorf("read %q (found %v) between commits %d and %d", v, ok, from, to)
					return
				}
			}
		}()
	}
	for i := int64(1); i <= 3000; i++ {
		started.Store(i)
		commitNow(t, st, 1, func(tx *Tx) {
			tx.SetMember(key, sub, []byte(strconv.FormatInt(i, 10)))
			tx.DeleteMemberRange(key, []byte("x"), []byte("y"))
		})
		done.Store(i)
	}
	close(stop)
	wg.Wait()
	if hits.Load() == 0 {
		t.Fatal("no read found a memo")
	}
}

// memoRead is a live read of a member as HGET does it; stale says the
// read met a commit and would run again on a snapshot.
func memoRead(st *Store, key, sub []byte) (v []byte, found, hit, stale bool) {
	rt := st.ReadTx(0, 1, false)
	defer rt.Close()
	defer recoverStale(&stale)
	if _, ok := rt.Lookup(key); !ok {
		return nil, false, false, false
	}
	_, _, hit = rt.memberFromMemo(rt.memberKey(key, sub))
	v, found = rt.Member(key, sub)
	return v, found, hit, false
}
