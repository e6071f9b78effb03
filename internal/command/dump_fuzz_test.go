package command

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/rdb"
	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
	"basalt/internal/testutil"
)

// FuzzRestore gives RESTORE arbitrary payloads (with a right footer most of
// the time, so that the value decoder is reached), then works on the key
// with its type's commands: nothing may panic, every reply must be well
// formed, and a value RESTORE took must DUMP to a payload that RESTOREs to
// a value with the same DUMP. The seeds are internal/rdb's corpus of
// payloads from Redis 7.0.
func FuzzRestore(f *testing.F) {
	files, _ := filepath.Glob("../rdb/testdata/fuzz/FuzzDecode/*")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(s))
	}
	st, err := store.Open(f.TempDir(), store.Options{Databases: 1, CacheSize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) >= 10 && p[0]&1 == 0 {
			p = p[:len(p)-8]
			p = binary.LittleEndian.AppendUint64(p, rdb.CRC64(p))
		}
		tx := st.WriteTx()
		defer tx.Close()
		tx.Now = 1e12
		rec := &shard.Record{Kind: shard.KindCommand, Time: 1e12}
		run := func(args ...string) []byte {
			w := resp.NewWriter(2)
			Exec(tx, rec, setArgv(args), 1, w)
			if _, err := testutil.ParseReply(w.Bytes()); err != nil {
				t.Fatalf("%q: bad reply %q: %v", args, w.Bytes(), err)
			}
			return w.Bytes()
		}
		if r := run("RESTORE", "k", "0", string(p), "REPLACE"); string(r) != "+OK\r\n" {
			return
		}
		dump := run("DUMP", "k")
		payload, err := testutil.ParseReply(dump)
		if err != nil || payload.Kind != '$' {
			t.Fatalf("DUMP: %q", dump)
		}
		if r := run("RESTORE", "k2", "0", payload.Str, "REPLACE"); string(r) != "+OK\r\n" {
			t.Fatalf("RESTORE of basalt's own DUMP: %q", r)
		}
		if again := run("DUMP", "k2"); !bytes.Equal(again, dump) {
			t.Fatalf("DUMP after a round trip differs:\n%q\n%q", dump, again)
		}
		for _, cmd := range [][]string{
			{"XINFO", "STREAM", "k", "FULL"},
			{"XADD", "k", "*", "f", "v"},
			{"XTRIM", "k", "MAXLEN", "~", "1"},
			{"XDEL", "k", "0-1", "1-1"},
			{"XPENDING", "k", "g1"},
			{"XAUTOCLAIM", "k", "g1", "c", "0", "0"},
			{"LRANGE", "k", "0", "-1"},
			{"LPOP", "k"},
			{"ZRANGE", "k", "0", "-1", "WITHSCORES"},
			{"ZPOPMIN", "k"},
			{"HGETALL", "k"},
			{"SMEMBERS", "k"},
			{"SPOP", "k"},
			{"GET", "k"},
			{"DUMP", "k"},
		} {
			run(cmd...)
		}
	})
}
