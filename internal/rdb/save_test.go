package rdb

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// savedRDBKey is a key read back from a file by readSavedFile.
type savedRDBKey struct {
	db       uint64
	key      string
	expireAt int64
	v        *Value // nil for a module value
	moduleID uint64
	module   []byte // the module value's one string
}

// savedRDBFile is what readSavedFile found in a file.
type savedRDBFile struct {
	aux       map[string]string
	functions []string
	resize    map[uint64][2]uint64
	keys      []savedRDBKey
}

// readSavedFile parses an RDB file as FileWriter writes it, checking the
// magic, that the file ends right after EOF and the checksum, and that
// opcodes come in Redis's order (functions before databases).
func readSavedFile(t *testing.T, b []byte) savedRDBFile {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("REDIS0010")) {
		t.Fatalf("magic: %q", b[:min(9, len(b))])
	}
	f := savedRDBFile{aux: map[string]string{}, resize: map[uint64][2]uint64{}}
	r := &reader{b: b, pos: 9}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("at %d: %v", r.pos, err)
		}
	}
	db, inDB := uint64(0), false
	var expireAt int64
	for {
		op, err := r.byte()
		must(err)
		switch op {
		case opAux:
			k, err := r.str()
			must(err)
			v, err := r.str()
			must(err)
			f.aux[string(k)] = string(v)
		case opFunction2:
			if inDB {
				t.Fatal("a function library after a database")
			}
			code, err := r.str()
			must(err)
			f.functions = append(f.functions, string(code))
		case opSelectDB:
			db, err = r.plainLen()
			must(err)
			inDB = true
		case opResizeDB:
			keys, err := r.plainLen()
			must(err)
			expires, err := r.plainLen()
			must(err)
			f.resize[db] = [2]uint64{keys, expires}
		case opExpireTimeMs:
			ms, err := r.take(8)
			must(err)
			expireAt = int64(binary.LittleEndian.Uint64(ms))
		case opEOF:
			if r.left() != 8 {
				t.Fatalf("%d bytes after EOF, want the 8 of the checksum", r.left())
			}
			if got, want := binary.LittleEndian.Uint64(b[r.pos:]), CRC64(b[:r.pos]); got != want {
				t.Fatalf("checksum %x, want %x", got, want)
			}
			return f
		default:
			if !inDB {
				t.Fatal("a key before SELECTDB")
			}
			key, err := r.str()
			must(err)
			k := savedRDBKey{db: db, key: string(key), expireAt: expireAt}
			expireAt = 0
			if op == 7 { // a module value: its id, opcode-tagged items, EOF
				k.moduleID, err = r.plainLen()
				must(err)
				opcode, err := r.plainLen()
				must(err)
				if opcode != 5 {
					t.Fatalf("module item opcode %d, want a string (5)", opcode)
				}
				k.module, err = r.str()
				must(err)
				if opcode, err = r.plainLen(); err != nil || opcode != 0 {
					t.Fatalf("module value ends with opcode %d (%v), want EOF (0)", opcode, err)
				}
			} else {
				k.v, err = r.value(op)
				must(err)
			}
			f.keys = append(f.keys, k)
		}
	}
}

// writeSavedFile writes a file with FileWriter and returns its bytes.
func writeSavedFile(t *testing.T, fn func(f *FileWriter)) []byte {
	t.Helper()
	var buf bytes.Buffer
	f := NewFileWriter(&buf, []AuxField{{Key: "redis-ver", Value: "7.0.15"}, {Key: "aof-base", Value: "0"}})
	fn(f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameDumpEncoding compares values by their DUMP payloads: a stream's nodes
// are recomputed as it is decoded, so fields compare only once encoded.
func sameDumpEncoding(a, b *Value) bool { return bytes.Equal(Encode(a), Encode(b)) }

func TestFileWriter(t *testing.T) {
	// Values of every type as Redis 7.0 dumped them (the fuzz corpus).
	var values []*Value
	ents, err := os.ReadDir("testdata/fuzz/FuzzDecode")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "redis7-") {
			continue
		}
		v, err := Decode(seed(t, e.Name()))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		values = append(values, v)
	}
	if len(values) < 10 {
		t.Fatalf("only %d seeds", len(values))
	}
	doc := []byte(`{"a":[1,2.5,"x",null,true],"b":{}}`)
	b := writeSavedFile(t, func(f *FileWriter) {
		f.Functions([][]byte{[]byte("#!lua name=a\n"), []byte("#!lua name=b\n")})
		f.Database(0, uint64(len(values)), 1)
		for i, v := range values {
			at := int64(0)
			if i == 1 {
				at = 1_700_000_000_123
			}
			f.Key([]byte{'k', byte(i)}, at, v)
		}
		f.Database(3, 1, 0)
		f.Key([]byte("doc"), 0, &Value{Kind: KindJSON, Str: doc})
	})
	got := readSavedFile(t, b)
	if got.aux["redis-ver"] != "7.0.15" || got.aux["aof-base"] != "0" {
		t.Errorf("aux fields %v", got.aux)
	}
	if strings.Join(got.functions, "|") != "#!lua name=a\n|#!lua name=b\n" {
		t.Errorf("functions %q", got.functions)
	}
	if got.resize[0] != [2]uint64{uint64(len(values)), 1} || got.resize[3] != [2]uint64{1, 0} {
		t.Errorf("RESIZEDB %v", got.resize)
	}
	if len(got.keys) != len(values)+1 {
		t.Fatalf("%d keys, want %d", len(got.keys), len(values)+1)
	}
	for i, v := range values {
		k := got.keys[i]
		wantAt := int64(0)
		if i == 1 {
			wantAt = 1_700_000_000_123
		}
		if k.db != 0 || k.key != string([]byte{'k', byte(i)}) || k.expireAt != wantAt || k.v == nil || !sameDumpEncoding(v, k.v) {
			t.Errorf("key %d: read back db %d %q expiry %d, value same: %v", i, k.db, k.key, k.expireAt, k.v != nil && sameDumpEncoding(v, k.v))
		}
	}
	j := got.keys[len(values)]
	if j.db != 3 || j.key != "doc" || j.v != nil || !bytes.Equal(j.module, doc) || j.moduleID != ModuleTypeID("ReJSON-RL", 3) {
		t.Errorf("JSON key read back as %+v", j)
	}

	// A flipped byte anywhere breaks the checksum.
	bad := append([]byte(nil), b...)
	bad[len(bad)/2] ^= 1
	if binary.LittleEndian.Uint64(bad[len(bad)-8:]) == CRC64(bad[:len(bad)-8]) {
		t.Error("checksum still matches a changed file")
	}
}

// TestFileWriterEmpty: an empty store is the header, EOF and checksum.
func TestFileWriterEmpty(t *testing.T) {
	b := writeSavedFile(t, func(*FileWriter) {})
	got := readSavedFile(t, b)
	if len(got.keys) != 0 || len(got.functions) != 0 || b[len(b)-9] != opEOF {
		t.Errorf("empty file: %+v", got)
	}
}

// TestModuleTypeID checks the id's layout against Redis's
// moduleTypeNameByID: 9 six-bit characters, then 10 bits of version.
func TestModuleTypeID(t *testing.T) {
	id := ModuleTypeID("ReJSON-RL", 3)
	if id&1023 != 3 {
		t.Errorf("encoding version %d", id&1023)
	}
	name := make([]byte, 9)
	for i, rest := 8, id>>10; i >= 0; i, rest = i-1, rest>>6 {
		name[i] = moduleTypeNameAlphabet[rest&63]
	}
	if string(name) != "ReJSON-RL" {
		t.Errorf("name decodes as %q", name)
	}
}

// TestFileWriterLoader reads a written file back with the file loader
// (FileReader): every record, in order, with its database and expiry,
// and the JSON document as JSON text.
func TestFileWriterLoader(t *testing.T) {
	var values []*Value
	ents, err := os.ReadDir("testdata/fuzz/FuzzDecode")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "redis7-") {
			v, err := Decode(seed(t, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
	}
	b := writeSavedFile(t, func(f *FileWriter) {
		f.Functions([][]byte{[]byte("#!lua name=lib\n")})
		for i, v := range values {
			if i%5 == 0 {
				f.Database(i, 5, 0)
			}
			f.Key([]byte{'k', byte(i)}, int64(i)*1000, v)
		}
		f.Database(9, 1, 0)
		f.Key([]byte("doc"), 0, &Value{Kind: KindJSON, Str: []byte(`{"a":1}`)})
	})
	r, err := NewFileReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != Version {
		t.Errorf("version %d", r.Version)
	}
	rec, err := r.Next()
	if err != nil || rec.Kind != RecordFunction || string(rec.Code) != "#!lua name=lib\n" {
		t.Fatalf("first record %+v, %v", rec, err)
	}
	for i, v := range values {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if rec.Kind != RecordKey || rec.DB != i/5*5 || string(rec.Key) != string([]byte{'k', byte(i)}) || rec.ExpireMs != int64(i)*1000 || !sameDumpEncoding(v, rec.Value) {
			t.Errorf("key %d read back as db %d %q expiry %d", i, rec.DB, rec.Key, rec.ExpireMs)
		}
	}
	rec, err = r.Next()
	if err != nil || rec.DB != 9 || string(rec.Key) != "doc" || rec.Value == nil || rec.Value.Kind != KindJSON || string(rec.Value.Str) != `{"a":1}` {
		t.Errorf("the JSON document read back as %+v, %v", rec, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last key: %v", err)
	}
}

// TestLoadJSONVersions reads RedisJSON's module values of encoding
// versions 3 (RedisJSON 2.x, what SAVE writes) and 2 (its first Rust
// releases: an unsigned after the document, and two strings after it
// when it is not 0), and refuses version 0 and other modules.
func TestLoadJSONVersions(t *testing.T) {
	id := func(name string, encver uint64) string {
		return string(appendLen(nil, ModuleTypeID(name, encver)))
	}
	doc := "\x05" + str(`{"a":[1]}`)
	for _, c := range []struct {
		name, value, want string
	}{
		{"version 3", id("ReJSON-RL", 3) + doc + "\x00", `{"a":[1]}`},
		{"version 2", id("ReJSON-RL", 2) + doc + "\x02\x00" + "\x00", `{"a":[1]}`},
		{"version 2 with index", id("ReJSON-RL", 2) + doc + "\x02\x01" + "\x05" + str("i") + "\x05" + str("j") + "\x00", `{"a":[1]}`},
		{"version 0", id("ReJSON-RL", 0) + doc + "\x00", "ReJSON-RL (encoding version 0) can't be loaded"},
		{"other module", id("MyType123", 3) + doc + "\x00", "MyType123 (encoding version 3) can't be loaded"},
		{"no EOF", id("ReJSON-RL", 3) + doc + "\x05" + str("x"), "bad data format"},
		{"not a string", id("ReJSON-RL", 3) + "\x02\x07\x00", "bad data format"},
	} {
		b := file(10, "\xfe\x01", "\x07"+str("doc")+c.value)
		r, err := NewFileReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = string(rec.Value.Str)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzFileWriter writes whatever value a payload decodes to as a key of a
// file and reads it back.
func FuzzFileWriter(f *testing.F) {
	ents, _ := os.ReadDir("testdata/fuzz/FuzzDecode")
	for _, e := range ents {
		p, err := os.ReadFile(filepath.Join("testdata/fuzz/FuzzDecode", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(p), "\n")
		if len(lines) < 2 {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err == nil {
			f.Add([]byte(s), int64(len(e.Name())))
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, expireAt int64) {
		if len(p) >= footer {
			p = seal(p[:len(p)-footer])
		}
		v, err := Decode(p)
		if err != nil {
			return
		}
		b := writeSavedFile(t, func(f *FileWriter) {
			f.Database(5, 1, 0)
			f.Key([]byte("k"), expireAt, v)
		})
		got := readSavedFile(t, b)
		if len(got.keys) != 1 || got.keys[0].expireAt != expireAt || !sameDumpEncoding(v, got.keys[0].v) {
			t.Fatal("the key read back differs")
		}
		r, err := NewFileReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil || rec.DB != 5 || rec.ExpireMs != expireAt || !sameDumpEncoding(v, rec.Value) {
			t.Fatalf("the loader reads the key back as %+v, %v", rec, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the key: %v", err)
		}
	})
}
