package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// smallRDB is a dump.rdb saved by Redis 7.0.15 (SAVE) holding a few keys
// of each type, a key with a TTL, a key in db 3 and a function library.
func smallRDB(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/redis7-small.rdb")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// errRoundTrip is a value whose DUMP payload does not decode: a bug.
var errRoundTrip = errors.New("a decoded value's payload does not decode")

// readAll reads every record of a file, at most limit of them.
func readAll(b []byte, size int64) ([]Record, error) {
	f, err := NewFileReader(bytes.NewReader(b), size)
	if err != nil {
		return nil, err
	}
	var out []Record
	for range 10000 {
		r, err := f.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		rec := *r
		rec.Key, rec.Code = bytes.Clone(r.Key), bytes.Clone(r.Code)
		if r.Value != nil {
			// The value aliases the reader's buffer: keep its payload.
			rec.Value, err = Decode(Encode(r.Value))
			if err != nil {
				return out, fmt.Errorf("%w: key %q: %v", errRoundTrip, r.Key, err)
			}
		}
		out = append(out, rec)
	}
	return out, errors.New("too many records")
}

func TestFileReaderRedisFile(t *testing.T) {
	for _, size := range []int64{int64(len(smallRDB(t))), -1} {
		recs, err := readAll(smallRDB(t), size)
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]Record{}
		var codes []string
		for _, r := range recs {
			switch r.Kind {
			case RecordKey:
				keys[fmt.Sprintf("%d/%s", r.DB, r.Key)] = r
			case RecordFunction:
				codes = append(codes, string(r.Code))
			default:
				t.Errorf("unexpected record %+v", r)
			}
		}
		if len(codes) != 1 || !strings.HasPrefix(codes[0], "#!lua name=lib\n") {
			t.Errorf("function codes %q", codes)
		}
		want := map[string]struct {
			kind    Kind
			members []string
		}{
			"0/s": {KindString, []string{"hello"}}, "0/i": {KindString, []string{"12345"}},
			"0/neg": {KindString, []string{"-7"}}, "0/ttl": {KindString, []string{"v"}},
			"0/l": {KindList, []string{"3", "a", "b"}}, "0/si": {KindSet, []string{"1", "2", "3"}},
			"0/ss": {KindSet, []string{"a", "b"}}, "0/h": {KindHash, []string{"f", "g"}},
			"0/z": {KindZSet, []string{"a", "b"}}, "0/x": {KindStream, nil},
			"0/hll": {KindString, nil}, "3/d3": {KindString, []string{"x"}},
		}
		if len(keys) != len(want) {
			t.Errorf("read %d keys, want %d", len(keys), len(want))
		}
		for name, w := range want {
			r, ok := keys[name]
			if !ok {
				t.Errorf("key %s missing", name)
				continue
			}
			if r.Value.Kind != w.kind {
				t.Errorf("key %s: kind %d, want %d", name, r.Value.Kind, w.kind)
			}
			got := strs(r.Value.Members)
			if w.kind == KindString {
				got = []string{string(r.Value.Str)}
			}
			slices.Sort(got)
			if w.members != nil && !reflect.DeepEqual(got, w.members) {
				t.Errorf("key %s: %q, want %q", name, got, w.members)
			}
			if (name == "0/ttl") != (r.ExpireMs != 0) {
				t.Errorf("key %s: expiry %d", name, r.ExpireMs)
			}
		}
		if x := keys["0/x"].Value.Stream; x == nil || x.Length != 2 || len(x.Groups) != 1 || len(x.Groups[0].Pending) != 1 {
			t.Errorf("stream %+v", x)
		}
	}
}

// Every truncation and every changed byte of a real file is an error:
// the checksum catches what the structure does not.
func TestFileReaderCorrupt(t *testing.T) {
	good := smallRDB(t)
	for n := range len(good) {
		if _, err := readAll(good[:n], int64(n)); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
		if _, err := readAll(good[:n], -1); err == nil {
			t.Errorf("truncated to %d bytes, size unknown: no error", n)
		}
	}
	for i := range len(good) {
		b := bytes.Clone(good)
		b[i] ^= 0x41
		if _, err := readAll(b, int64(len(b))); err == nil {
			t.Errorf("byte %d changed: no error", i)
		}
	}
	// A zero checksum is not checked (rdbchecksum no).
	b := bytes.Clone(good)
	copy(b[len(b)-8:], make([]byte, 8))
	if _, err := readAll(b, int64(len(b))); err != nil {
		t.Errorf("zero checksum: %v", err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	if _, err := readAll(bad, int64(len(bad))); !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong checksum: %v", err)
	}
}

// file builds an RDB file of version ver from records, with a checksum.
func file(ver int, body ...string) []byte {
	b := fmt.Appendf(nil, "REDIS%04d", ver)
	b = append(b, strings.Join(body, "")...)
	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(b))
}

func str(s string) string { return string(appendString(nil, []byte(s))) }

func TestFileReaderHeader(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{[]byte("REDIT0010\xff"), "not an RDB file"},
		{[]byte("REDIS"), "not an RDB file"},
		{[]byte(""), "not an RDB file"},
		{[]byte("REDIS00a1\xff"), "not an RDB file"},
		{[]byte("REDIS+010\xff"), "not an RDB file"},
		{[]byte("REDIS0000\xff"), "not an RDB file"},
		{file(13), "RDB file version 13 is not supported"},
		{file(99), "RDB file version 99 is not supported"},
	} {
		_, err := NewFileReader(bytes.NewReader(c.b), int64(len(c.b)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.b, err, c.want)
		}
	}
	for _, ver := range []int{1, 4, 9, 10, 11, 12} {
		b := file(ver, "\x00"+str("k")+str("v"))
		if ver < 5 {
			b = b[:len(b)-8] // no checksum before version 5
		}
		recs, err := readAll(b, int64(len(b)))
		if err != nil || len(recs) != 1 || string(recs[0].Key) != "k" {
			t.Errorf("version %d: %v %+v", ver, err, recs)
		}
	}
}

func TestFileReaderRecords(t *testing.T) {
	lp := newListpack()
	lp.str([]byte("a"))
	lp.str([]byte("7"))
	setLP := string(appendString(nil, lp.bytes()))
	expMs := string(binary.LittleEndian.AppendUint64(nil, 1234567890123))
	expS := string(binary.LittleEndian.AppendUint32(nil, 1234567890))
	moduleAux := "\xf7" + "\x81" + string(binary.BigEndian.AppendUint64(nil, 0x1234<<10|3)) +
		"\x02\x02" + "\x02\x05" + "\x01\x05" + "\x03abcd" + "\x04abcdefgh" + "\x05" + str("s") + "\x00"
	for _, c := range []struct {
		name string
		b    []byte
		want string // records as kind:db:key:expiry, or an error
	}{
		{"ops", file(10, "\xfa"+str("redis-ver")+str("7.0.15"),
			"\xfe\x02\xfb\x01\x00", "\xfc"+expMs+"\xf8\x05\xf9\x07\x00"+str("a")+str("1"),
			"\xfd"+expS+"\x00"+str("b")+str("2"), "\x00"+str("c")+str("3")),
			"1:2:a:1234567890123 1:2:b:1234567890000 1:2:c:0"},
		{"set listpack (7.2)", file(11, "\x14"+str("s")+setLP), "1:0:s:0"},
		{"slot info (7.4)", file(12, "\xf4\x01\x02\x03", "\x00"+str("k")+str("v")), "1:0:k:0"},
		{"hash field ttl (7.4)", file(12, "\x18"+str("h")+"\x00"), `key "h" of db 0: a hash with field expiries (RDB type 24`},
		{"unknown type", file(12, "\x1a"+str("h")+"\x00"), `key "h" of db 0: unknown RDB type 26`},
		{"module aux", file(10, moduleAux, "\x00"+str("k")+str("v")), "3:0::0 1:0:k:0"},
		{"module value", file(10, "\x07"+str("m")+"\x81"+string(binary.BigEndian.AppendUint64(nil, 0x1234<<10|3))),
			`key "m" of db 0: a value of module`},
		{"pre-GA function", file(10, "\xf6"+str("x")), "Pre-GA function format not supported"},
		{"function", file(10, "\xf5"+str("#!lua name=x\n")), "2:0::0"},
		{"lying string", file(10, "\x00"+str("k")+"\x81\x00\x00\x01\x00\x00\x00\x00\x00"), "bad data format"},
		{"lying count", file(10, "\x01"+str("k")+"\x81\x00\x00\x01\x00\x00\x00\x00\x00"), "bad data format"},
		{"empty list", file(10, "\x01"+str("k")+"\x00"), "bad data format"},
		{"no EOF", []byte("REDIS0010\x00\x01k\x01v"), "the file ends early"},
		{"no checksum", []byte("REDIS0010\xff\x00\x00"), "the file ends early"},
	} {
		recs, err := readAll(c.b, int64(len(c.b)))
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%d:%d:%s:%d", r.Kind, r.DB, r.Key, r.ExpireMs))
		}
		s := strings.Join(got, " ")
		if err != nil {
			s = err.Error()
		}
		if !strings.Contains(s, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, s, c.want)
		}
	}
}

// A length that claims more than the file holds allocates nothing like
// it, even when the file's size is unknown.
func TestFileReaderLyingLengthMemory(t *testing.T) {
	b := file(10, "\x00"+str("k")+"\x81\x00\x00\x00\x40\x00\x00\x00\x00") // 256 GiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := NewFileReader(bytes.NewReader(b), -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Next(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v, want %v", err, ErrTruncated)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("%d bytes allocated", n)
	}
}

func FuzzLoadRDB(f *testing.F) {
	f.Add(smallRDB(f))
	f.Add(file(11, "\x14"+str("s")+str("x")))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, size := range []int64{int64(len(b)), -1} {
			// Whatever the bytes, an error or records whose payloads
			// the DUMP decoder takes back.
			if _, err := readAll(b, size); errors.Is(err, errRoundTrip) {
				t.Fatal(err)
			}
		}
	})
}

// A stream of Redis 7.2 (type 21) has each consumer's active time after
// its seen time; it is read and dropped.
func TestFileReaderStreamV3(t *testing.T) {
	recs, err := readAll(smallRDB(t), -1)
	if err != nil {
		t.Fatal(err)
	}
	var x *Value
	for _, r := range recs {
		if string(r.Key) == "x" {
			x = r.Value
		}
	}
	// x's one group has one consumer, "c", last: its name, seen time,
	// owned count 1 and the 16 bytes of the ID it owns end the value.
	body := Encode(x)
	body = body[:len(body)-footer]
	if body[0] != typeStreamListpack2 || !bytes.HasSuffix(body[:len(body)-8-1-16], []byte("\x01c")) {
		t.Fatalf("unexpected encoding %q", body)
	}
	at := len(body) - 17
	v3 := append([]byte{typeStreamListpack3}, body[1:at]...)
	v3 = append(v3, "\x01\x02\x03\x04\x05\x06\x07\x08"...)
	v3 = append(v3, body[at:]...)
	got, err := readAll(file(11, "\x15"+str("x")+string(v3[1:])), -1)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].Value, x) {
		t.Errorf("got %v %+v, want %+v", err, got, x)
	}
}

// A key larger than a read chunk is read in several.
func TestFileReaderBigKey(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3*fillChunk/16+5)
	for _, size := range []int64{-1, 0} {
		b := file(10, "\x00"+str("big")+str(big), "\x00"+str("after")+str("v"))
		if size == 0 {
			size = int64(len(b))
		}
		recs, err := readAll(b, size)
		if err != nil || len(recs) != 2 || string(recs[0].Value.Str) != big || string(recs[1].Key) != "after" {
			t.Errorf("size %d: %v, %d records", size, err, len(recs))
		}
	}
}
