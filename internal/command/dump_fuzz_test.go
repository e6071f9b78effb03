package command

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/jsondoc"
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
// payloads from Redis 7.0 and RedisJSON's module payloads; an input that
// starts with "J" is the JSON text of a RedisJSON payload built around
// it, so that the JSON parser behind RESTORE is fuzzed as well.
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
	// RedisJSON's payloads: ReJSON-RL's id at encoding version 3 and 2
	// (see test/compat/dump_json_test.go), the text as a string item.
	const id3, id2 = "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x03", "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x02"
	doc := `{"a":[1,2.5,"é",null,true,{"b":[]}],"n":12345678901234567}`
	text := string(rune(len(doc))) + doc
	for _, body := range []string{
		"\x07" + id3 + "\x05" + text + "\x00",
		"\x07" + id2 + "\x05" + text + "\x02\x00\x00",
		"\x07" + id2 + "\x05" + text + "\x02\x01\x05\x01i\x05\x01j\x00",
		"\x07" + id3 + "\x05\xc0\x7b\x00",
	} {
		f.Add(sealPayload([]byte(body)))
	}
	f.Add([]byte("J" + doc))
	f.Add([]byte(`J[[[]],{"x":"\u00e9\ud83d\ude00"},-0.0,1e400]`))
	st, err := store.Open(f.TempDir(), store.Options{Databases: 1, CacheSize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, p []byte) {
		var jsonText []byte // the text of a "J" input
		if len(p) > 0 && p[0] == 'J' && len(p) < 1<<14 {
			jsonText = p[1:]
			body := append([]byte("\x07"+id3+"\x05"), 0x40|byte(len(jsonText)>>8), byte(len(jsonText)))
			p = sealPayload(append(append(body, jsonText...), 0))
		} else if len(p) >= 10 && p[0]&1 == 0 {
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
		r := run("RESTORE", "k", "0", string(p), "REPLACE")
		if jsonText != nil {
			// RESTORE takes the document exactly when JSON.SET would.
			doc, err := jsondoc.Parse(jsonText)
			want := "-ERR Bad data format\r\n"
			if err == nil {
				want = "+OK\r\n"
			}
			if string(r) != want {
				t.Fatalf("RESTORE of JSON text %q: %q, want %q", jsonText, r, want)
			}
			if err == nil {
				w := resp.NewWriter(2)
				w.Bulk(jsondoc.Marshal(doc))
				if got := run("JSON.GET", "k"); string(got) != string(w.Bytes()) {
					t.Fatalf("JSON.GET after RESTORE of %q: %q", jsonText, got)
				}
			}
		}
		if string(r) != "+OK\r\n" {
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
			{"JSON.GET", "k", "$..*"},
			{"JSON.SET", "k", "$..a", "1"},
			{"JSON.ARRAPPEND", "k", "$..*", "2"},
			{"JSON.DEL", "k", "$..b"},
			{"DUMP", "k"},
		} {
			run(cmd...)
		}
	})
}

// sealPayload appends a DUMP payload's footer, RDB version 10 and the
// CRC-64, to a value's encoding.
func sealPayload(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, rdb.Version)
	return binary.LittleEndian.AppendUint64(b, rdb.CRC64(b))
}
