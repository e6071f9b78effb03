package store

import (
	"bytes"
	"math/rand"
	"sync/atomic"
	"testing"
)

// TestStringValues drives the string accessors with random whole and range
// writes across the inline/chunked threshold and compares every read with
// a plain byte slice. It also checks that the chunks stored are only those
// holding a nonzero byte.
func TestStringValues(t *testing.T) {
	st := openStore(t)
	key := []byte("k")
	var model []byte
	rng := rand.New(rand.NewSource(1))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			if rng.Intn(3) > 0 { // some zero runs
				b[i] = byte(rng.Intn(256))
			}
		}
		return b
	}
	for step := range 300 {
		tx := st.WriteTx()
		m, ok := tx.Lookup(key)
		if !ok {
			m = Meta{Type: TypeString}
		}
		switch r := rng.Intn(10); {
		case r == 0:
			model = randBytes(rng.Intn(3 * ChunkSize))
			tx.WriteString(key, model, 0)
		case r == 1:
			n := int64(rng.Intn(5 * ChunkSize))
			src := append([]byte(nil), model...)
			model = make([]byte, n)
			tx.WriteStringFunc(key, n, 0, func(off int64, buf []byte) {
				for i := range buf {
					if int(off)+i < len(src) {
						buf[i] = ^src[int(off)+i]
					}
				}
			})
			for i := range model {
				if i < len(src) {
					model[i] = ^src[i]
				}
			}
		default:
			off := int64(rng.Intn(len(model) + 2*ChunkSize))
			data := randBytes(rng.Intn(ChunkSize + 10))
			tx.WriteStringRange(key, m, off, data)
			if need := int(off) + len(data); need > len(model) {
				model = append(model, make([]byte, need-len(model))...)
			}
			copy(model[off:], data)
		}
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}

		rt := st.ReadTx(0, 0, false)
		m, ok = rt.Lookup(key)
		if !ok {
			t.Fatalf("step %d: key missing", step)
		}
		if m.Chunked != (len(model) > InlineMax) || m.StringLen() != int64(len(model)) {
			t.Fatalf("step %d: chunked %v length %d, model %d", step, m.Chunked, m.StringLen(), len(model))
		}
		if got := rt.ReadString(key, m); !bytes.Equal(got, model) {
			t.Fatalf("step %d: value differs", step)
		}
		a := rng.Int63n(int64(len(model)) + 10)
		b := a + rng.Int63n(3*ChunkSize)
		want := model[min(a, int64(len(model))):min(b, int64(len(model)))]
		if got := rt.ReadStringRange(key, m, a, b); !bytes.Equal(got, want) {
			t.Fatalf("step %d: range [%d,%d) differs", step, a, b)
		}
		if m.Chunked {
			rt.Members(key, nil, nil, false, func(sub, v []byte) bool {
				if bytes.Equal(v, zeroChunk[:len(v)]) {
					t.Fatalf("step %d: all-zero chunk stored", step)
				}
				return true
			})
		}
		rt.Close()
	}
}

// TestSparseString checks that a write far past the end of a string
// stores one chunk, and that the hole reads as zeros.
func TestSparseString(t *testing.T) {
	st := openStore(t)
	key := []byte("bm")
	const off = 512<<20 - 1
	tx := st.WriteTx()
	m := tx.WriteStringRange(key, Meta{Type: TypeString}, off, []byte{1})
	if err := tx.Commit(false); err != nil {
		t.Fatal(err)
	}
	rt := st.ReadTx(0, 0, false)
	defer rt.Close()
	n := 0
	rt.Members(key, nil, nil, false, func(sub, v []byte) bool { n++; return true })
	if n != 1 || m.StringLen() != off+1 {
		t.Fatalf("%d chunks, length %d", n, m.StringLen())
	}
	if got := rt.ReadStringRange(key, m, off-5, off+5); !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 1}) {
		t.Fatalf("tail %v", got)
	}
	pieces := 0
	rt.VisitString(key, m, 0, m.StringLen(), func(o, n int64, data []byte) bool {
		pieces++
		return true
	})
	if pieces != 2 {
		t.Fatalf("%d pieces, want a hole and a chunk", pieces)
	}
}

// readString reads key's value on a live read Tx or a snapshot; stale
// reports that a commit came between the metadata and the chunks it read.
func readString(st *Store, key []byte, snapshot bool) (v []byte, stale bool) {
	rt := st.ReadTx(0, 0, snapshot)
	defer rt.Close()
	defer recoverStale(&stale)
	m, _ := rt.Lookup(key)
	return rt.ReadString(key, m), false
}

// TestChunkedReadIsAtomic reads a chunked string on live read views while
// it is rewritten, with another length each time: every read must see one
// of the values written, never the length of one and the chunks of another
// (a read that finds it straddled a commit runs again on a snapshot).
func TestChunkedReadIsAtomic(t *testing.T) {
	st := openStore(t)
	key := []byte("big")
	value := func(i int) []byte { // 'a' * 5 chunks or 'b' * 6 chunks
		return bytes.Repeat([]byte{byte('a' + i%2)}, (5+i%2)*ChunkSize)
	}
	write := func(v []byte) {
		tx := st.WriteTx()
		tx.WriteString(key, v, 0)
		if err := tx.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	write(value(0))
	done := make(chan struct{})
	var stop atomic.Bool
	go func() {
		defer close(done)
		for i := 0; i < 500 && !stop.Load(); i++ {
			write(value(i))
		}
	}()
	for reads := 0; ; reads++ {
		select {
		case <-done:
			return
		default:
		}
		v, stale := readString(st, key, false)
		if stale { // as the server does: again, on a snapshot
			v, _ = readString(st, key, true)
		}
		if !bytes.Equal(v, value(0)) && !bytes.Equal(v, value(1)) {
			stop.Store(true)
			<-done
			t.Fatalf("read %d: torn value (%d bytes, %d of %q)", reads, len(v), bytes.Count(v, v[:1]), v[:1])
		}
	}
}

// recoverStale, deferred, turns a read's ErrStaleRead panic into stale.
func recoverStale(stale *bool) {
	if r := recover(); r != nil {
		if r != ErrStaleRead {
			panic(r)
		}
		*stale = true
	}
}
