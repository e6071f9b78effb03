package rdb

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// seed reads a payload of the fuzz corpus (taken with DUMP from Redis 7.0).
func seed(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/fuzz/FuzzDecode", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

func strs(items [][]byte) []string {
	out := make([]string, len(items))
	for i, b := range items {
		out[i] = string(b)
	}
	return out
}

func TestDecodeRedisPayloads(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		want []string // members, first ones
	}{
		{"redis7-s-int", KindString, []string{"12345"}},
		{"redis7-s-neg", KindString, []string{"-7"}},
		{"redis7-s-big", KindString, []string{"123456789012"}},
		{"redis7-s-short", KindString, []string{"hello"}},
		{"redis7-s-lzf", KindString, []string{strings.Repeat("a", 76) + strings.Repeat("b", 24)}},
		{"redis7-l-small", KindList, []string{"a", "b", "1", "-5", "300", "70000", "-70000", "5000000000", ""}},
		{"redis7-l-big", KindList, []string{"item1", "item2"}},
		{"redis7-set-int", KindSet, []string{"-100", "1", "2", "3", "100000", "5000000000"}},
		{"redis7-set-str", KindSet, nil},
		{"redis7-z-small", KindZSet, []string{"c", "e", "a", "b", "d"}},
		{"redis7-h-small", KindHash, []string{"f1", "f2", "f3"}},
		{"redis7-h-big", KindHash, nil},
		{"redis7-z-big", KindZSet, nil},
	} {
		v, err := Decode(seed(t, c.name))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Kind != c.kind {
			t.Errorf("%s: kind %d, want %d", c.name, v.Kind, c.kind)
			continue
		}
		got := strs(v.Members)
		if v.Kind == KindString {
			got = []string{string(v.Str)}
		}
		if len(got) < len(c.want) || len(c.want) > 0 && !reflect.DeepEqual(got[:len(c.want)], c.want) {
			t.Errorf("%s: got %q, want %q first", c.name, got, c.want)
		}
	}
	z, _ := Decode(seed(t, "redis7-z-small"))
	if want := []float64{math.Inf(-1), 0, 1, 2.5, math.Inf(1)}; !reflect.DeepEqual(z.Scores, want) {
		t.Errorf("scores %v, want %v", z.Scores, want)
	}
	if v, _ := Decode(seed(t, "redis7-l-big")); len(v.Members) != 300 || string(v.Members[299]) != "item300" {
		t.Errorf("big list: %d elements", len(v.Members))
	}
}

func TestVerify(t *testing.T) {
	p := seed(t, "redis7-s-short")
	if err := Verify(p); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		q := bytes.Clone(p)
		q[i] ^= 1
		if _, err := Decode(q); err != ErrVersion {
			t.Errorf("byte %d flipped: %v, want ErrVersion", i, err)
		}
	}
	// A newer RDB version is refused even with a right checksum.
	q := append([]byte(nil), p[:len(p)-footer]...)
	q = append(q, MaxFileVersion+1, 0)
	q = append(q, make([]byte, 8)...)
	crc := CRC64(q[:len(q)-8])
	for i := range 8 {
		q[len(q)-8+i] = byte(crc >> (8 * i))
	}
	if err := Verify(q); err != ErrVersion {
		t.Errorf("version 13: %v", err)
	}
	if err := Verify(p[:9]); err != ErrVersion {
		t.Errorf("short payload: %v", err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 70000)
	for _, v := range []*Value{
		{Kind: KindString, Str: []byte{}},
		{Kind: KindString, Str: big},
		{Kind: KindList, Members: [][]byte{[]byte("a"), {}, big}},
		{Kind: KindSet, Members: [][]byte{[]byte("1"), []byte("x")}},
		{Kind: KindHash, Members: [][]byte{[]byte("f"), {}}, Values: [][]byte{{}, []byte("v")}},
		{Kind: KindZSet, Members: [][]byte{[]byte("a"), []byte("b")}, Scores: []float64{math.Inf(-1), math.Copysign(0, -1)}},
	} {
		got, err := Decode(Encode(v))
		if err != nil {
			t.Errorf("%v: %v", v.Kind, err)
			continue
		}
		if !sameValue(v, got) {
			t.Errorf("round trip of kind %d changed the value", v.Kind)
		}
	}
}

// sameValue compares decoded values, scores by their bits.
func sameValue(a, b *Value) bool {
	if a.Kind != b.Kind || !bytes.Equal(a.Str, b.Str) || len(a.Members) != len(b.Members) ||
		len(a.Values) != len(b.Values) || len(a.Scores) != len(b.Scores) {
		return false
	}
	for i := range a.Members {
		if !bytes.Equal(a.Members[i], b.Members[i]) {
			return false
		}
	}
	for i := range a.Values {
		if !bytes.Equal(a.Values[i], b.Values[i]) {
			return false
		}
	}
	for i := range a.Scores {
		if math.Float64bits(a.Scores[i]) != math.Float64bits(b.Scores[i]) {
			return false
		}
	}
	return reflect.DeepEqual(a.Stream, b.Stream)
}

func TestLZF(t *testing.T) {
	// "abcabcabcX": 3 literals, a back reference of 6 bytes at distance 3,
	// one literal.
	in := []byte{2, 'a', 'b', 'c', 4 << 5, 2, 0, 'X'}
	out, err := lzfDecompress(in, 10)
	if err != nil || string(out) != "abcabcabcX" {
		t.Fatalf("got %q, %v", out, err)
	}
	for _, n := range []int{9, 11} {
		if _, err := lzfDecompress(in, n); err == nil {
			t.Errorf("length %d accepted", n)
		}
	}
	if _, err := lzfDecompress([]byte{1 << 5, 0}, 3); err == nil {
		t.Error("reference before the start accepted")
	}
}

// FuzzDecode gives Decode arbitrary payloads, with a right checksum most
// of the time so that the value decoder is reached: it must return an
// error or a value, never panic, and a value must encode to a payload that
// decodes to the same value.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) >= footer && p[0]&1 == 0 {
			p = seal(p[:len(p)-footer]) // mostly a valid footer
		}
		v, err := Decode(p)
		if err != nil {
			return
		}
		p1 := Encode(v)
		again, err := Decode(p1)
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		// A stream's encoding drops deleted entries, so the node sizes
		// change once: compare encodings for streams.
		if v.Kind == KindStream && !bytes.Equal(p1, Encode(again)) || v.Kind != KindStream && !sameValue(v, again) {
			t.Fatal("re-encoded value differs")
		}
	})
}

// TestOldEncodings decodes the ziplist forms of RDB 9 and older, which
// Redis 7.0 still loads: a ziplist of a string, a 4-bit immediate, 16, 32
// and 8-bit integers, as a list, in a quicklist and as hash pairs.
func TestOldEncodings(t *testing.T) {
	zl := []byte{29, 0, 0, 0, 25, 0, 0, 0, 5, 0,
		0x00, 0x01, 'a',
		0x03, 0xf6,
		0x02, 0xc0, 0x2c, 0x01,
		0x04, 0xd0, 0x90, 0xee, 0xfe, 0xff,
		0x06, 0xfe, 0xfd,
		0xff}
	want := []string{"a", "5", "300", "-70000", "-3"}
	for _, body := range [][]byte{
		append([]byte{typeListZiplist, byte(len(zl))}, zl...),
		append([]byte{typeListQuicklist, 1, byte(len(zl))}, zl...),
	} {
		v, err := Decode(seal(body))
		if err != nil || v.Kind != KindList || !reflect.DeepEqual(strs(v.Members), want) {
			t.Errorf("type %d: %v %v", body[0], v, err)
		}
	}
	zl4 := append(append([]byte(nil), zl[:8]...), 4, 0)
	zl4 = append(append(zl4, zl[10:25]...), 0xff)
	zl4[0] = byte(len(zl4))
	v, err := Decode(seal(append([]byte{typeHashZiplist, byte(len(zl4))}, zl4...)))
	if err != nil || !reflect.DeepEqual(strs(v.Members), []string{"a", "300"}) || !reflect.DeepEqual(strs(v.Values), []string{"5", "-70000"}) {
		t.Errorf("hash ziplist: %v %v", v, err)
	}
}

func TestDecodeStream(t *testing.T) {
	v, err := Decode(seed(t, "redis7-st2"))
	if err != nil || v.Kind != KindStream {
		t.Fatalf("%v %v", v, err)
	}
	s := v.Stream
	var live int
	for _, n := range s.Nodes {
		live += len(n.Entries)
	}
	if s.Length != 247 || live != 247 || s.EntriesAdded != 250 || s.LastID != (StreamID{250, 1}) ||
		s.MaxDeletedID != (StreamID{250, 1}) || s.FirstID != (StreamID{1, 1}) || len(s.Nodes) != 3 {
		t.Errorf("header: %+v, %d live", s, live)
	}
	e := s.Nodes[0].Entries[2]
	if e.ID != (StreamID{4, 1}) || !reflect.DeepEqual(strs(e.Fields), []string{"f", "4", "g", "v4"}) {
		t.Errorf("entry: %+v", e)
	}
	if len(s.Groups) != 2 || string(s.Groups[0].Name) != "g1" || len(s.Groups[0].Pending) != 5 ||
		string(s.Groups[0].Pending[4].Consumer) != "alice" || s.Groups[0].Pending[4].ID != (StreamID{6, 1}) ||
		len(s.Groups[1].Consumers) != 1 || string(s.Groups[1].Consumers[0].Name) != "carol" {
		t.Errorf("groups: %+v", s.Groups)
	}
	// Encoded again it decodes to the same entries and groups.
	again, err := Decode(Encode(v))
	if err != nil || len(again.Stream.Nodes) != 3 || !reflect.DeepEqual(again.Stream.Groups, s.Groups) ||
		!reflect.DeepEqual(again.Stream.Nodes[2].Entries, s.Nodes[2].Entries) {
		t.Errorf("round trip: %v", err)
	}
	if v, err := Decode(seed(t, "redis7-st3")); err != nil || v.Stream.Length != 0 || len(v.Stream.Nodes) != 0 {
		t.Errorf("empty stream: %+v %v", v, err)
	}
}
