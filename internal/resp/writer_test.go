package resp

import (
	"strconv"
	"strings"
	"testing"
)

// TestShortHeaders checks the hand-written digits of small lengths and
// counts against strconv, around the limits of the fast paths.
func TestShortHeaders(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 42, 99, 100, 101, 12345} {
		w := NewWriter(2)
		w.Bulk([]byte(strings.Repeat("x", n)))
		w.Int(int64(n))
		w.Int(int64(-n))
		w.ArrayLen(n)
		want := "$" + strconv.Itoa(n) + "\r\n" + strings.Repeat("x", n) + "\r\n" +
			":" + strconv.Itoa(n) + "\r\n:" + strconv.Itoa(-n) + "\r\n*" + strconv.Itoa(n) + "\r\n"
		if got := string(w.Bytes()); got != want {
			t.Errorf("n=%d: %q, want %q", n, got, want)
		}
	}
}

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

// BenchmarkBulk writes the reply of an HGETALL of 100 short fields.
func BenchmarkBulk(b *testing.B) {
	var fields [][]byte
	for i := range 100 {
		fields = append(fields, []byte("field"+string(rune('0'+i%10))), []byte("value-"+string(rune('0'+i%10))))
	}
	w := NewWriter(2)
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		w.ArrayLen(len(fields))
		for _, f := range fields {
			w.Bulk(f)
		}
	}
}
