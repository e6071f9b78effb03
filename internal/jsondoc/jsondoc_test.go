package jsondoc

import (
	"fmt"
	"strings"
	"testing"
)

// seatMap is a document of about 2 KB like the seat maps the JSON commands
// serve: sections with counters.
func seatMap() []byte {
	var b strings.Builder
	b.WriteString(`{"event":"e1","venue":"Main Hall","sections":{`)
	for i := range 24 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%c-%d":{"stats":{"available":100,"sold":0,"held":0},"price":49.5,"rows":["r1","r2"]}`, 'A'+i/8, i%8+1)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

func TestRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[1,2.5,"x",true,null,{}],"c":{"d":[]}}`, `[1,{"a":[2,{"b":3}],"c":4},[5]]`, `{"a":1,"a":2,"b":3}`,
		`"\u00e9\n\"\\\u0001"`, `-0.0`, `1e300`, `[0.1,1.0,1e-7,123456789012345678]`,
		string(seatMap()),
	} {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out := Marshal(v)
		w, err := ParseStored(out)
		if err != nil || !Equal(v, w) || string(Marshal(w)) != string(out) {
			t.Errorf("%s -> %s does not read back (%v)", in, out, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		``:          "EOF while parsing a value at line 1 column 0",
		`{`:         "EOF while parsing an object at line 1 column 1",
		`{"a" 1}`:   "expected `:` at line 1 column 6",
		`[1,]`:      "expected value at line 1 column 4",
		"[1]\n x":   "trailing characters at line 2 column 2",
		`tru`:       "EOF while parsing a value at line 1 column 3",
		`"a`:        "EOF while parsing a string at line 1 column 2",
		`01`:        "trailing characters at line 1 column 2",
		`{"a":1}}`:  "trailing characters at line 1 column 8",
		`"\x"`:      "invalid escape at line 1 column 3",
		`[1 2]`:     "expected `,` or `]` at line 1 column 4",
		`{1:2}`:     "key must be a string at line 1 column 2",
		`{"a":1 2}`: "expected `,` or `}` at line 1 column 8",
	} {
		if _, err := Parse([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q): %v, want %s", in, err, want)
		}
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Parse([]byte(deep)); err == nil {
		t.Errorf("nesting deeper than %d accepted", MaxDepth)
	}
}

func TestFloatFormat(t *testing.T) {
	for f, want := range map[float64]string{
		1.5: "1.5", 2: "2.0", 0.1: "0.1", 1e20: "1e20", 1e16: "1e16", 1e15: "1000000000000000.0",
		1e-7: "1e-7", 0.0001: "0.0001", 0.00001: "0.00001", -3.25: "-3.25", 1.5e-10: "1.5e-10",
		123456789012345678: "1.2345678901234568e17",
	} {
		if got := string(AppendFloat(nil, f)); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

// The work of one JSON.NUMINCRBY on a 2 KB document, without the store:
// parse, locate, update, serialize.
func BenchmarkNumIncrBy2KB(b *testing.B) {
	body := seatMap()
	p, err := ParsePath("$.sections['A-1'].stats.available")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		doc, err := ParseStored(body)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range p.Locate(doc) {
			doc = SetAt(doc, l, At(doc, l).(int64)-1)
		}
		body = Append(make([]byte, 0, len(body)+64), doc, nil)
	}
}

// A ".." needs something after it, as in RedisJSON's grammar: a bare one
// (at the end, or "...." read as two) was taken, and a long run of them
// made Locate run for ever (FuzzJSONPath's 05be593e309babde).
func TestPathDescent(t *testing.T) {
	for _, s := range []string{"$..", "..", "$....", "....", "$..a..", "$.....a", "$..a....b", strings.Repeat(".", 2594)} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("ParsePath(%.20q) accepted", s)
		}
	}
	doc, _ := Parse([]byte(`{"a":[{"a":1}],"b":{"c":2}}`))
	for s, want := range map[string]int{"$..a": 2, "..a": 2, "$..*": 5, "$..[0]": 1, "$..['c']": 1, "$..a..a": 1} {
		p, err := ParsePath(s)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", s, err)
			continue
		}
		if n := len(p.Locate(doc)); n != want {
			t.Errorf("%q: %d matches, want %d", s, n, want)
		}
	}
}
