package resp

import "testing"

func TestLenBefore(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := &Writer{Proto: proto}
		w.Simple("before")
		mark := w.Len()
		for i := range 12 {
			w.BulkInt(int64(i))
			w.BulkInt(int64(i * i))
		}
		w.LenBefore(mark, func() { w.MapLen(12) })
		want := &Writer{Proto: proto}
		want.Simple("before")
		want.MapLen(12)
		for i := range 12 {
			want.BulkInt(int64(i))
			want.BulkInt(int64(i * i))
		}
		if string(w.Bytes()) != string(want.Bytes()) {
			t.Errorf("RESP%d: %q, want %q", proto, w.Bytes(), want.Bytes())
		}
	}
}
