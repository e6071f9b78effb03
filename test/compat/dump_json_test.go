package compat

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// DUMP and RESTORE of JSON keys, in RedisJSON 2.x's format (a MODULE_2
// value of type ReJSON-RL, encoding version 3, holding the document's
// compact JSON text). Debian's redis-server has no RedisJSON, so the round
// trips run on basalt alone, against payloads built here from the spec;
// the refusals are compared with redis-server, which (without the module)
// answers them with the same errors.

// reJSONID3 and reJSONID2 are the module type id of "ReJSON-RL" at
// encoding versions 3 and 2 as RDB writes it (0x81, then 8 bytes big
// endian), computed by hand from Redis's moduleTypeEncodeId: each of the
// 9 characters' positions in "A-Za-z0-9-_" is 6 bits (R=17 e=30 J=9 S=18
// O=14 N=13 -=62 R=17 L=11: 0x1178948e37e44b), then 10 bits of version.
const (
	reJSONID3 = "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x03"
	reJSONID2 = "\x81\x45\xe2\x52\x38\xdf\x91\x2c\x02"
)

// rdbStr is an RDB string of fewer than 16384 bytes: a 6 or 14-bit
// length, then the bytes.
func rdbStr(s string) string {
	if len(s) < 64 {
		return string(rune(len(s))) + s
	}
	return string([]byte{0x40 | byte(len(s)>>8), byte(len(s))}) + s
}

// jsonDump is the DUMP payload RedisJSON 2.x gives for a document whose
// compact text is doc: MODULE_2 (7), the id, the string opcode (5) and
// the text, the module EOF opcode (0), RDB version 10 and the CRC-64.
func jsonDump(doc string) string {
	return payload("\x07"+reJSONID3+"\x05"+rdbStr(doc)+"\x00", 10)
}

func TestDumpRestoreJSON(t *testing.T) {
	c := testutil.Dial(t, testutil.StartBasalt(t, "").Addr)
	docs := map[string]string{
		"unicode": `{"héllo":"wörld ✓ 😀","esc":"\"\\\n\u0000\u001f","ключ":["ß","中文"]}`,
		"numbers": `{"big":12345678901234567,"max":9223372036854775807,"min":-9223372036854775808,"huge":1.8446744073709552e19,"f":0.1,"e":1.5e300,"neg":-2.5e-10,"zero":0}`,
		"nested":  `[[[[[]]]],[1,[2,[3,[4,{"a":[null,true,false]}]]]],{"x":{"y":{"z":[]}}}]`,
		"scalar":  `"just a string"`,
	}
	for name, doc := range docs {
		if r := c.Do("JSON.SET", name, "$", doc); r.String() != "+OK" {
			t.Fatalf("JSON.SET %s: %v", name, r)
		}
		text := c.Do("JSON.GET", name).Str
		dump := c.Do("DUMP", name)
		if dump.Kind != '$' || dump.Str != jsonDump(text) {
			t.Errorf("DUMP %s:\n%q\nwant\n%q", name, dump.Str, jsonDump(text))
			continue
		}
		copyKey := name + ":copy"
		if r := c.Do("RESTORE", copyKey, "0", dump.Str); r.String() != "+OK" {
			t.Errorf("RESTORE %s: %v", copyKey, r)
		}
		for _, cmd := range [][]string{{"JSON.GET", "%"}, {"JSON.GET", "%", "$..*"}, {"TYPE", "%"}, {"JSON.TYPE", "%"}, {"TTL", "%"}, {"DUMP", "%"}} {
			orig, cp := strings.Replace(strings.Join(cmd, "\x00"), "%", name, 1), strings.Replace(strings.Join(cmd, "\x00"), "%", copyKey, 1)
			if a, b := c.Do(strings.Split(orig, "\x00")...), c.Do(strings.Split(cp, "\x00")...); a.String() != b.String() {
				t.Errorf("%s: %v on the original, %v on the copy", cmd, a, b)
			}
		}
	}
	p := c.Do("DUMP", "numbers").Str
	jsonScript(t, c, `
RESTORE numbers:copy 0 `+cliQuote(p)+` => -BUSYKEY Target key name already exists.
JSON.SET numbers:copy $.big 1 => +OK
RESTORE numbers:copy 0 `+cliQuote(p)+` REPLACE => +OK
JSON.GET numbers:copy $.big => "[12345678901234567]"
JSON.NUMINCRBY numbers:copy $.zero 2 => "[2]"
RESTORE ttl 100000 `+cliQuote(p)+` => +OK
RESTORE abs 4000000000000 `+cliQuote(p)+` ABSTTL => +OK
PEXPIRETIME abs => :4000000000000
RESTORE past 1 `+cliQuote(p)+` ABSTTL => +OK
EXISTS past => :0
RESTORE numbers:copy 1 `+cliQuote(p)+` ABSTTL REPLACE => +OK
EXISTS numbers:copy => :0
RESTORE idle 0 `+cliQuote(p)+` IDLETIME 1000 => +OK
RESTORE freq 0 `+cliQuote(p)+` FREQ 5 => +OK
JSON.GET freq $.e => "[1.5e300]"
`)
	if ms := c.Do("PTTL", "ttl").Int; ms <= 90000 || ms > 100000 {
		t.Errorf("PTTL after RESTORE with TTL 100000: %d", ms)
	}
	if s := c.Do("OBJECT", "IDLETIME", "idle").Int; s < 999 || s > 1010 {
		t.Errorf("OBJECT IDLETIME after RESTORE IDLETIME 1000: %d", s)
	}
}

// TestRestoreRedisJSONPayloads restores payloads as RedisJSON would give
// them, built from the spec without basalt's encoder: version 3, version
// 2 (with and without an index's strings), the text as Redis's integer
// string encoding, and text with whitespace, which RedisJSON parses and
// basalt stores compact.
func TestRestoreRedisJSONPayloads(t *testing.T) {
	c := testutil.Dial(t, testutil.StartBasalt(t, "").Addr)
	doc := `{"name":"basalt","tags":["a","b"],"n":1.5,"o":{"x":null}}`
	for _, x := range []struct{ name, payload, want string }{
		{"v3", jsonDump(doc), doc},
		{"v2", payload("\x07"+reJSONID2+"\x05"+rdbStr(doc)+"\x02\x00"+"\x00", 10), doc},
		{"v2 index", payload("\x07"+reJSONID2+"\x05"+rdbStr(doc)+"\x02\x01"+"\x05"+rdbStr("idx")+"\x05"+rdbStr("$.name")+"\x00", 10), doc},
		{"int", payload("\x07"+reJSONID3+"\x05\xc1\x39\x30"+"\x00", 10), "12345"},
		{"spaces", jsonDump(" { \"a\" : [ 1 , 2 ] ,\n\"b\":\"\\u00e9\" } "), `{"a":[1,2],"b":"é"}`},
		{"rdb 9", payload("\x07"+reJSONID3+"\x05"+rdbStr(doc)+"\x00", 9), doc},
	} {
		if r := c.Do("RESTORE", x.name, "0", x.payload); r.String() != "+OK" {
			t.Errorf("%s: RESTORE %v", x.name, r)
			continue
		}
		if r := c.Do("JSON.GET", x.name); r.Str != x.want {
			t.Errorf("%s: JSON.GET %v, want %s", x.name, r, x.want)
		}
		if r := c.Do("DUMP", x.name); r.Str != jsonDump(x.want) {
			t.Errorf("%s: DUMP %q", x.name, r.Str)
		}
	}
}

// TestRestoreJSONRefused: module payloads RESTORE must refuse (other
// modules, encoding versions other than 2 and 3, broken module data, text
// that is not JSON), compared with redis-server, which refuses every
// module payload with the same error for want of the module. Nothing is
// written: a key being replaced stays. (RedisJSON itself reads version 0,
// RedisJSON 1.x's tree, which basalt refuses; see README.)
func TestRestoreJSONRefused(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Do("SET", "k", "v")
	other := "\x81" + strings.Repeat("\x11", 7) + "\x03" // some other module type
	good := jsonDump(`{"a":1}`)
	deep := strings.Repeat("[", 129) + strings.Repeat("]", 129)
	for _, x := range []struct{ name, payload, err string }{
		{"other module", payload("\x07"+other+"\x05"+rdbStr(`{"a":1}`)+"\x00", 10), "ERR Bad data format"},
		{"version 0", payload("\x07"+reJSONID3[:8]+"\x00"+"\x05"+rdbStr(`{"a":1}`)+"\x00", 10), "ERR Bad data format"},
		{"version 1", payload("\x07"+reJSONID3[:8]+"\x01"+"\x05"+rdbStr(`{"a":1}`)+"\x00", 10), "ERR Bad data format"},
		{"version 4", payload("\x07"+reJSONID3[:8]+"\x04"+"\x05"+rdbStr(`{"a":1}`)+"\x00", 10), "ERR Bad data format"},
		{"pre-GA module type", payload("\x06"+reJSONID3+"\x05"+rdbStr(`{"a":1}`)+"\x00", 10), "ERR Bad data format"},
		{"truncated", payload("\x07"+reJSONID3+"\x05"+rdbStr(`{"a":1}`)[:4], 10), "ERR Bad data format"},
		{"no module EOF", payload("\x07"+reJSONID3+"\x05"+rdbStr(`{"a":1}`), 10), "ERR Bad data format"},
		{"truncated footer", good[:len(good)-3], "ERR DUMP payload version or checksum are wrong"},
		{"bad checksum", good[:len(good)-1] + string(good[len(good)-1]^1), "ERR DUMP payload version or checksum are wrong"},
		{"rdb version 13", payload("\x07"+reJSONID3+"\x05"+rdbStr(`{"a":1}`)+"\x00", 13), "ERR DUMP payload version or checksum are wrong"},
		{"invalid JSON", jsonDump(`{"a":}`), "ERR Bad data format"},
		{"trailing text", jsonDump(`{"a":1} x`), "ERR Bad data format"},
		{"empty text", jsonDump(``), "ERR Bad data format"},
		{"invalid UTF-8", jsonDump("\"\xff\""), "ERR Bad data format"},
		{"too deep", jsonDump(deep), "ERR Bad data format"},
	} {
		for _, key := range []string{"new", "k"} {
			want, got := d.DoBoth("RESTORE", key, "0", x.payload, "REPLACE")
			if got.String() != "-"+x.err || want.String() != got.String() {
				t.Errorf("%s: basalt %v, redis-server %v, want -%s", x.name, got, want, x.err)
			}
		}
		d.Do("EXISTS", "new")
		d.Do("GET", "k")
	}
}

// TestRestoreJSONNotify: RESTORE of a JSON key raises the generic
// "restore" event, as for any type (Redis raises it for module values
// too), and a replaced key nothing more.
func TestRestoreJSONNotify(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	c.Do("CONFIG", "SET", "notify-keyspace-events", "KEA")
	sub := testutil.Dial(t, b.Addr)
	sub.Send(testutil.Command("PSUBSCRIBE", "__keyspace@0__:*"))
	sub.Read()
	p := jsonDump(`{"a":1}`)
	c.Do("RESTORE", "j", "0", p)
	c.Do("RESTORE", "j", "0", p, "REPLACE")
	c.Do("PUBLISH", "__keyspace@0__:end", "end")
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && len(got) < 10 {
		m := sub.Read()
		if len(m.Elems) != 4 {
			t.Fatalf("message %v", m)
		}
		got = append(got, m.Elems[2].Str+" "+m.Elems[3].Str)
		if m.Elems[3].Str == "end" {
			break
		}
	}
	want := []string{"__keyspace@0__:j restore", "__keyspace@0__:j restore", "__keyspace@0__:end end"}
	if strconv.Quote(strings.Join(got, "|")) != strconv.Quote(strings.Join(want, "|")) {
		t.Errorf("events %q, want %q", got, want)
	}
}
