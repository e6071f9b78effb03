package rdb

import (
	"errors"
	"strings"
	"testing"
)

// reJSONID3 and reJSONID2 are the bytes Redis writes (rdbSaveLen of a
// number over 32 bits: 0x81, then 8 bytes big endian) for the module type
// id of "ReJSON-RL" at encoding versions 3 and 2, computed once by hand
// from moduleTypeEncodeId rather than with ModuleTypeID: each character's
// position in "A-Za-z0-9-_" takes 6 bits, R=17 e=30 J=9 S=18 O=14 N=13
// -=62 R=17 L=11, so the 54 bits are 0x1178948e37e44b, shifted left by
// 10 bits for the encoding version: 0x45e25238df912c00 | version.
const (
	reJSONID3 = "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x03"
	reJSONID2 = "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x02"
)

// jsonPayload is a DUMP payload of a RedisJSON document, built from the
// spec: MODULE_2 (7), the id, what rdb_save wrote (body), the module EOF
// opcode (0), then the footer.
func jsonPayload(id, body string) []byte {
	return seal([]byte("\x07" + id + body + "\x00"))
}

// TestJSONPayload checks the encoder against a hand-built payload and the
// decoder on RedisJSON's forms: version 3, version 2 with and without an
// index's strings, and the document as an integer or LZF string, which is
// how Redis's string saving writes short numeric and long texts.
func TestJSONPayload(t *testing.T) {
	doc := `{"a":[1,"é"]}`
	want := jsonPayload(reJSONID3, "\x05"+str(doc))
	if got := Encode(&Value{Kind: KindJSON, Str: []byte(doc)}); string(got) != string(want) {
		t.Errorf("Encode:\n%q\nwant\n%q", got, want)
	}
	lzfText := `{"k":"` + strings.Repeat("x", 20) + `"}` // 28 bytes: one literal run
	for _, c := range []struct{ name, id, body, want string }{
		{"version 3", reJSONID3, "\x05" + str(doc), doc},
		{"version 2", reJSONID2, "\x05" + str(doc) + "\x02\x00", doc},
		{"version 2 with index", reJSONID2, "\x05" + str(doc) + "\x02\x01\x05" + str("idx") + "\x05" + str("x"), doc},
		{"integer string", reJSONID3, "\x05\xc0\x7b", "123"},
		{"LZF string", reJSONID3, "\x05\xc3\x1d\x1c\x1b" + lzfText, lzfText},
	} {
		v, err := Decode(jsonPayload(c.id, c.body))
		if err != nil || v.Kind != KindJSON || string(v.Str) != c.want {
			t.Errorf("%s: %+v, %v", c.name, v, err)
		}
	}
}

// TestJSONPayloadRefused: other modules, other encoding versions and
// broken module data are ErrFormat, a wrong footer ErrVersion.
func TestJSONPayloadRefused(t *testing.T) {
	doc := "\x05" + str(`{"a":1}`)
	other := string(appendLen(nil, ModuleTypeID("MyType123", 3)))
	for _, c := range []struct {
		name string
		p    []byte
		want error
	}{
		{"other module", jsonPayload(other, doc), ErrFormat},
		{"version 0", jsonPayload(reJSONID3[:8]+"\x00", doc), ErrFormat},
		{"version 4", jsonPayload(reJSONID3[:8]+"\x04", doc), ErrFormat},
		{"no string opcode", jsonPayload(reJSONID3, str(`{"a":1}`)), ErrFormat},
		{"unsigned not string", jsonPayload(reJSONID3, "\x02\x07"), ErrFormat},
		{"version 2 without unsigned", jsonPayload(reJSONID2, doc), ErrFormat},
		{"no EOF", seal([]byte("\x07" + reJSONID3 + doc + "\x05")), ErrFormat},
		{"truncated id", seal([]byte("\x07" + reJSONID3[:5])), ErrFormat},
		{"truncated text", seal([]byte("\x07" + reJSONID3 + "\x05\x30abc")), ErrFormat},
		{"pre-GA module type", seal([]byte("\x06" + reJSONID3 + doc + "\x00")), ErrFormat},
		{"checksum", func() []byte { p := jsonPayload(reJSONID3, doc); p[len(p)-1] ^= 1; return p }(), ErrVersion},
	} {
		if _, err := Decode(c.p); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
