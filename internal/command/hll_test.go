package command

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Registers and counts below were read from redis-server 7.0.15 (PFDEBUG
// DECODE after one PFADD into an empty key; PFCOUNT after adding e0..eN-1).
func TestHLLPatLenMatchesRedis(t *testing.T) {
	for _, c := range []struct {
		ele          string
		index, count int
	}{
		{"a", 12711, 2}, {"foo", 7348, 5}, {"", 5938, 2}, {"1234567", 10327, 3},
		{"hello world!", 8716, 3}, {"abcdefgh", 1383, 1}, {"abcdefghi", 6903, 1},
	} {
		if i, n := hllPatLen([]byte(c.ele)); i != c.index || n != c.count {
			t.Errorf("hllPatLen(%q) = %d, %d; Redis: %d, %d", c.ele, i, n, c.index, c.count)
		}
	}
}

func TestHLLCountMatchesRedis(t *testing.T) {
	v := hllNew()
	added := 0
	for _, c := range []struct {
		n    int
		want uint64
		enc  byte
	}{{10, 10, hllSparse}, {1000, 1008, hllSparse}, {100000, 100853, hllDense}} {
		for ; added < c.n; added++ {
			var r int
			if v, r = hllAdd(v, []byte("e"+strconv.Itoa(added))); r < 0 {
				t.Fatalf("hllAdd: corrupt after %d elements", added)
			}
		}
		h, ok := hllHisto(v)
		if got := hllEstimate(&h); !ok || got != c.want || v[4] != c.enc {
			t.Errorf("%d elements: count %d (ok %v), encoding %d; Redis: %d, %d", c.n, got, ok, v[4], c.want, c.enc)
		}
	}
}

func TestHLLNew(t *testing.T) {
	want := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
	if v := hllNew(); string(v) != want || !hllValid(v) || !hllCacheValid(v) {
		t.Errorf("hllNew() = %q", v)
	}
	var h [64]int
	h[0] = hllRegisters
	if n := hllEstimate(&h); n != 0 {
		t.Errorf("empty estimate %d", n)
	}
}

func TestHLLDenseRegisters(t *testing.T) {
	regs := make([]byte, hllDenseSize-hllHdrSize)
	want := make([]int, hllRegisters)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 5 {
		for i := range want {
			want[i] = rng.IntN(hllRegMax + 1)
			denseSet(regs, i, want[i])
		}
		for i := range want {
			if got := denseGet(regs, i); got != want[i] {
				t.Fatalf("round %d: register %d = %d, want %d", round, i, got, want[i])
			}
		}
	}
}

// Sparse and dense HLLs fed the same elements hold the same registers, the
// sparse one stays within its limit and always covers every register.
func TestHLLSparseMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		sparse := hllNew()
		dense, _ := hllToDense(hllNew())
		n := rng.IntN(3000)
		for i := range n {
			ele := []byte(strconv.Itoa(trial) + ":" + strconv.Itoa(rng.IntN(n+1)) + ":" + strconv.Itoa(i%7))
			var r1, r2 int
			sparse, r1 = hllAdd(sparse, ele)
			dense, r2 = hllAdd(dense, ele)
			if r1 != r2 {
				t.Fatalf("trial %d element %d: sparse says %d, dense %d", trial, i, r1, r2)
			}
			if sparse[4] == hllSparse {
				if len(sparse) > hllSparseMaxBytes {
					t.Fatalf("trial %d: sparse HLL of %d bytes", trial, len(sparse))
				}
				if _, ok := hllHisto(sparse); !ok {
					t.Fatalf("trial %d element %d: sparse opcodes don't cover the registers", trial, i)
				}
			}
		}
		if sparse[4] == hllSparse {
			sparse, _ = hllToDense(sparse)
		}
		if string(sparse[hllHdrSize:]) != string(dense[hllHdrSize:]) {
			t.Fatalf("trial %d (%d elements): registers differ", trial, n)
		}
	}
}

func TestHLLCorrupt(t *testing.T) {
	hdr := string(hllNew()[:hllHdrSize])
	for name, v := range map[string]string{
		"no opcodes":  hdr,
		"too few":     hdr + "\x7f\xfe",
		"too many":    hdr + "\x7f\xff\x00",
		"val overrun": hdr + "\x7f\xfe\x83",
	} {
		if _, ok := hllHisto([]byte(v)); ok {
			t.Errorf("%s: hllHisto accepted it", name)
		}
		if hllMerge(make([]byte, hllRegisters), []byte(v)) {
			t.Errorf("%s: hllMerge accepted it", name)
		}
		if _, ok := hllToDense([]byte(v)); ok {
			t.Errorf("%s: hllToDense accepted it", name)
		}
	}
	for name, v := range map[string]string{
		"short":       "HYLL",
		"magic":       "HYLX" + hdr[4:] + "\x7f\xff",
		"encoding":    "HYLL\x02" + hdr[5:] + "\x7f\xff",
		"dense short": "HYLL\x00" + hdr[5:] + "\x7f\xff",
	} {
		if hllValid([]byte(v)) {
			t.Errorf("%s: hllValid accepted it", name)
		}
	}
}
