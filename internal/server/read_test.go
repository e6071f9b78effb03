package server

import (
	"testing"

	"basalt/internal/command"
	"basalt/internal/resp"
	"basalt/internal/store"
)

func TestRunRead(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	argv := [][]byte{[]byte("zrange")}

	// A panicking read answers an error in place of its partial output,
	// after the replies before it.
	w := resp.NewWriter(2)
	w.OK()
	runRead(st, 0, 0, false, false, w, argv, func(c *command.Ctx) {
		c.W.ArrayLen(3)
		c.W.Bulk([]byte("partial"))
		var entry []byte
		_ = entry[1:9] // a short entry, read as a longer one
	})
	if got, want := string(w.Bytes()), "+OK\r\n-ERR internal error while reading\r\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}

	// A stale read runs again, on a snapshot, and only that run answers.
	w.Reset()
	var snapshots []bool
	runRead(st, 0, 0, false, false, w, argv, func(c *command.Ctx) {
		snapshots = append(snapshots, c.Tx.Pin() == false)
		c.W.Bulk([]byte("run"))
		if len(snapshots) == 1 {
			panic(store.ErrStaleRead)
		}
	})
	if got := string(w.Bytes()); got != "$3\r\nrun\r\n" || len(snapshots) != 2 || snapshots[0] || !snapshots[1] {
		t.Fatalf("output %q, runs on a snapshot %v", got, snapshots)
	}
}
