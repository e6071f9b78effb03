package command

import (
	"bytes"
	"encoding/binary"
	"testing"

	"basalt/internal/rdb"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// TestWriteRDBSkipsExpired writes a file from a view taken after one key
// expired but before anything deleted it: the key must not be in the
// file, and the keys around it, the JSON document and the library must.
func TestWriteRDBSkipsExpired(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{Databases: 2, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const now = 1_000_000_000_000
	tx := st.WriteTx()
	tx.Now = now
	rec := &shard.Record{Kind: shard.KindCommand, Time: now}
	for _, args := range [][]string{
		{"SET", "live-before", "v"},
		{"SET", "expired-key", "v", "PX", "10"},
		{"SET", "ttl-key", "v", "PX", "100000"},
		{"JSON.SET", "doc-key", "$", `{"a":[1,"two"]}`},
		{"FUNCTION", "LOAD", "#!lua name=savedlib\nredis.register_function('f', function() return 1 end)"},
	} {
		w := resp.NewWriter(2)
		Exec(tx, rec, setArgv(args), 1, w)
		if bytes.HasPrefix(w.Bytes(), []byte("-")) {
			t.Fatalf("%q: %s", args, w.Bytes())
		}
	}
	if err := tx.Commit(true); err != nil {
		t.Fatal(err)
	}
	view, err := st.View(now + 1000) // expired-key is due, not deleted
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err = WriteRDB(&buf, []*store.View{view}, nil, RDBParts{})
	view.Tx.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, want := range []string{"live-before", "ttl-key", "doc-key", `{"a":[1,"two"]}`, "#!lua name=savedlib"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%q is missing from the file", want)
		}
	}
	if bytes.Contains(b, []byte("expired-key")) {
		t.Error("the expired key was written")
	}
	// RESIZEDB counts what the store counts (the expired key too, as
	// Redis counts its dict), a hint only.
	if i := bytes.IndexByte(b, 251); i < 0 || i+2 >= len(b) || b[i+1] != 4 || b[i+2] != 2 {
		t.Errorf("no RESIZEDB of 4 keys, 2 with an expiry: % x", b)
	}
	if binary.LittleEndian.Uint64(b[len(b)-8:]) != rdb.CRC64(b[:len(b)-8]) {
		t.Error("bad checksum")
	}
}
