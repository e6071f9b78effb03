package store

import (
	"bytes"
	"math"
	"sort"
	"testing"
)

func TestSortableEncodings(t *testing.T) {
	floats := []float64{math.Inf(-1), -math.MaxFloat64, -1e10, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 0.5, 1, 1e300, math.Inf(1)}
	var enc [][]byte
	for _, f := range floats {
		b := SortableFloat(nil, f)
		if g := FloatFromSortable(b); g != f {
			t.Errorf("float %v round-trips to %v", f, g)
		}
		enc = append(enc, b)
	}
	if !sort.SliceIsSorted(enc, func(i, j int) bool { return bytes.Compare(enc[i], enc[j]) < 0 }) {
		t.Error("float encodings are not in numeric order")
	}
	ints := []int64{math.MinInt64, -1 << 40, -1, 0, 1, 1 << 40, math.MaxInt64}
	enc = enc[:0]
	for _, n := range ints {
		b := SortableInt(nil, n)
		if m := IntFromSortable(b); m != n {
			t.Errorf("int %d round-trips to %d", n, m)
		}
		enc = append(enc, b)
	}
	if !sort.SliceIsSorted(enc, func(i, j int) bool { return bytes.Compare(enc[i], enc[j]) < 0 }) {
		t.Error("int encodings are not in numeric order")
	}
	sub := HashedSub(nil, []byte("field"))
	if string(HashedMember(sub)) != "field" || PosBytes(HashedPos(sub)) == nil || !bytes.HasPrefix(sub, PosBytes(HashedPos(sub))) {
		t.Errorf("HashedSub %x", sub)
	}
}
