package server

import (
	"testing"

	"basalt/internal/resp"
)

// A panicking read answers an error in place of its partial output, after
// the replies before it, and the goroutine goes on.
func TestReadPanicAnswered(t *testing.T) {
	w := resp.NewWriter(2)
	w.OK() // an earlier reply in the same pipeline
	func() {
		defer answerPanic(w, w.Len(), [][]byte{[]byte("zrange")})
		w.ArrayLen(3)
		w.Bulk([]byte("partial"))
		var entry []byte
		_ = entry[1:9] // a short entry, read as a longer one
	}()
	if got, want := string(w.Bytes()), "+OK\r\n-ERR internal error while reading\r\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}
