package num

import (
	"bytes"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

type intCase struct {
	in   string
	want int64
	ok   bool
}

// Checked against redis-server 7.0.15 (INCRBY 0 by in; TestLiveParseInt).
var intCases = []intCase{
	{"0", 0, true},
	{"1", 1, true},
	{"-1", -1, true},
	{"99", 99, true},
	{"-99", -99, true},
	{"9223372036854775807", math.MaxInt64, true},
	{"-9223372036854775808", math.MinInt64, true},
	{"9223372036854775808", 0, false},
	{"-9223372036854775809", 0, false},
	{"18446744073709551615", 0, false},
	{"18446744073709551616", 0, false},
	{"99999999999999999999", 0, false},
	{"-0", 0, false},
	{"00", 0, false},
	{"01", 0, false},
	{"-01", 0, false},
	{"+1", 0, false},
	{" 1", 0, false},
	{"1 ", 0, false},
	{"", 0, false},
	{"-", 0, false},
	{"1a", 0, false},
	{"0x10", 0, false},
	{"1e3", 0, false},
	{"1.0", 0, false},
	{"1\x00", 0, false},
	{"\u0661", 0, false}, // Arabic-Indic digit one
}

func TestParseInt(t *testing.T) {
	for _, c := range intCases {
		got, ok := ParseInt([]byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
		if got2, ok2 := ParseIntString(c.in); got2 != got || ok2 != ok {
			t.Errorf("ParseIntString(%q) differs", c.in)
		}
	}
}

// ParseInt must accept exactly the canonical decimal forms.
func TestParseIntRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		n := rng.Int63() >> uint(rng.Intn(64))
		if rng.Intn(2) == 0 {
			n = -n
		}
		s := FormatInt(n)
		if got, ok := ParseInt(s); !ok || got != n {
			t.Fatalf("ParseInt(%q) = %d, %v", s, got, ok)
		}
		if string(AppendInt([]byte("x"), n)) != "x"+string(s) {
			t.Fatal("AppendInt")
		}
	}
}

func FuzzParseInt(f *testing.F) {
	for _, c := range intCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := ParseInt(b)
		// string2ll accepts exactly what ll2string produces.
		std, err := strconv.ParseInt(string(b), 10, 64)
		canonical := err == nil && strconv.FormatInt(std, 10) == string(b)
		if ok != canonical || (ok && n != std) {
			t.Fatalf("ParseInt(%q) = %d, %v; canonical %v", b, n, ok, canonical)
		}
	})
}

type floatCase struct {
	in   string
	want float64
	ok   bool
}

// Checked against redis-server 7.0.15 (ZADD; TestLiveParseAndFormatDouble).
var floatCases = []floatCase{
	{"1", 1, true},
	{"-1.5", -1.5, true},
	{"+1", 1, true},
	{"-0", math.Copysign(0, -1), true},
	{".5", 0.5, true},
	{"5.", 5, true},
	{"1.e5", 1e5, true},
	{"1E5", 1e5, true},
	{"1e+5", 1e5, true},
	{"00012.50", 12.5, true},
	{"0.1", 0.1, true},
	{"inf", math.Inf(1), true},
	{"+inf", math.Inf(1), true},
	{"-inf", math.Inf(-1), true},
	{"INF", math.Inf(1), true},
	{"Infinity", math.Inf(1), true},
	{"-infinity", math.Inf(-1), true},
	{"0x10", 16, true},
	{"0x1p3", 8, true},
	{"0X1.8P+1", 3, true},
	{"-0x.8", -0.5, true},
	{"1e308", 1e308, true},
	{"1.7976931348623157e308", math.MaxFloat64, true},
	{"1e-310", 1e-310, true}, // subnormal: accepted
	{"4.9e-324", 5e-324, true},
	{"0e-999", 0, true},
	{"0e99999999999999999999", 0, true},
	{"1e400", 0, false},  // overflow
	{"-1e400", 0, false}, // overflow
	{"1e-400", 0, false}, // underflow to zero
	{"2e-324", 0, false}, // rounds to zero
	{"0x1p1024", 0, false},
	// glibc drops the 54th significant bit of subnormal results instead of
	// using it as a sticky bit: 2^-1075 × (1 + 2^-53) becomes the tie
	// 2^-1075, which rounds to even (zero: rejected).
	{"0x1.00000000000008p-1075", 0, false},
	{"0x1.000001p-1075", 5e-324, true},
	{"0x1.00000000000008p-1074", 5e-324, true},
	{"nan", 0, false},
	{"NaN", 0, false},
	{"-nan", 0, false},
	{"nan(1)", 0, false},
	{"", 0, false},
	{" 1", 0, false},
	{"\t1", 0, false},
	{"1 ", 0, false},
	{"1\n", 0, false},
	{".", 0, false},
	{"-", 0, false},
	{"e5", 0, false},
	{"1e", 0, false},
	{"1e+", 0, false},
	{"0x", 0, false},
	{"0xg", 0, false},
	{"0x1p", 0, false},
	{"1x", 0, false},
	{"infinit", 0, false},
	{"1_000", 0, false},
	{"1,5", 0, false},
	{"--1", 0, false},
	{"+-1", 0, false},
	{"1\x00", 0, false},
	{"\x00", 0, false},
}

func TestParseFloat(t *testing.T) {
	for _, c := range floatCases {
		got, ok := ParseFloat([]byte(c.in))
		if ok != c.ok || math.Float64bits(got) != math.Float64bits(c.want) && c.ok {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
		if got2, ok2 := ParseFloatString(c.in); ok2 != ok || math.Float64bits(got2) != math.Float64bits(got) {
			t.Errorf("ParseFloatString(%q) differs", c.in)
		}
	}
}

func TestParseFloatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) {
			continue
		}
		for _, s := range []string{
			strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'e', 30, 64),
			string(FormatDouble(f)),
			strconv.FormatFloat(f, 'x', -1, 64),
		} {
			got, ok := ParseFloat([]byte(s))
			if f == 0 || math.IsInf(f, 0) || s[0] != '-' && s[0] >= 'a' {
				continue
			}
			if !ok || got != f {
				t.Fatalf("ParseFloat(%q) = %v, %v; want %v", s, got, ok, f)
			}
		}
	}
}

func TestStrtod(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		n    int
	}{
		{"", 0, 0},
		{"abc", 0, 0},
		{"  12abc", 12, 4},
		{"\t\n\v\f\r 1", 1, 7},
		{"1e", 1, 1},
		{"1e+", 1, 1},
		{"1e+2x", 100, 4},
		{"0x", 0, 1},
		{"0xz", 0, 1},
		{"0x1p", 1, 3},
		{"0x1.8p1!", 3, 7},
		{"1.5.5", 1.5, 3},
		{"-.5e1", -5, 5},
		{"inf", math.Inf(1), 3},
		{"infinityx", math.Inf(1), 8},
		{"infinit", math.Inf(1), 3},
		{"-InFiNiTy", math.Inf(-1), 9},
		{"1e400", math.Inf(1), 5},
		{"-1e400", math.Inf(-1), 6},
		{"1e-400", 0, 6},
		{"12\x0034", 12, 2},
		{"(5)", 0, 0},
		// Short integers take a fast path; longer ones the general one.
		{"100", 100, 3},
		{"+7", 7, 2},
		{"-42", -42, 3},
		{"007", 7, 3},
		{"999999999999999", 999999999999999, 15},
		{"-9007199254740993", -9007199254740992, 17}, // rounded: 2^53+1 is not a float64
		{"+", 0, 0},
		{"-", 0, 0},
	}
	for _, c := range cases {
		got, n := Strtod([]byte(c.in))
		if got != c.want || n != c.n {
			t.Errorf("Strtod(%q) = %v, %d; want %v, %d", c.in, got, n, c.want, c.n)
		}
	}
	if got, _ := Strtod([]byte("-0")); got != 0 || !math.Signbit(got) {
		t.Errorf("Strtod(\"-0\") = %v, want -0", got)
	}
	for in, n := range map[string]int{"nan": 3, "-nan": 4, "nan()": 5, "nan(ab_1)x": 9, "nan(a b)": 3, "nan(": 3, "NAN": 3} {
		got, gn := Strtod([]byte(in))
		if !math.IsNaN(got) || gn != n {
			t.Errorf("Strtod(%q) = %v, %d; want NaN, %d", in, got, gn, n)
		}
	}
}

// Checked against printf("%.17g") (via ZSCORE on redis-server 7.0.15).
func TestFormatDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0:                       "0",
		1:                       "1",
		-1.5:                    "-1.5",
		0.1:                     "0.10000000000000001",
		0.5:                     "0.5",
		1.0 / 3:                 "0.33333333333333331",
		100:                     "100",
		1e15:                    "1000000000000000",
		1e16:                    "10000000000000000",
		1e17:                    "1e+17",
		123456789012345678:      "1.2345678901234568e+17",
		1e100:                   "1e+100",
		1e-4:                    "0.0001",
		1e-5:                    "1.0000000000000001e-05",
		1.5e-7:                  "1.4999999999999999e-07",
		math.MaxFloat64:         "1.7976931348623157e+308",
		5e-324:                  "4.9406564584124654e-324",
		math.Inf(1):             "inf",
		math.Inf(-1):            "-inf",
		math.Copysign(0, -1):    "-0",
		9007199254740993:        "9007199254740992",
		-2.5:                    "-2.5",
		3.0000000000000004:      "3.0000000000000004",
		12345678901234567890.0:  "1.2345678901234567e+19",
		123456789012345678901.0: "1.2345678901234568e+20",
	} {
		if got := string(FormatDouble(f)); got != want {
			t.Errorf("FormatDouble(%v) = %q, want %q", f, got, want)
		}
	}
	if got := string(FormatDouble(math.NaN())); got != "nan" {
		t.Errorf("FormatDouble(NaN) = %q", got)
	}
	if got := string(AppendDouble([]byte("s:"), 2.5)); got != "s:2.5" {
		t.Errorf("AppendDouble = %q", got)
	}
}

type incrCase struct {
	cur  *string // nil: key missing
	incr string
	want string // reply; errors start with "-"
}

func sp(s string) *string { return &s }

const (
	errNotFloat = "-ERR value is not a valid float"
	errNaNOrInf = "-ERR increment would produce NaN or Infinity"
)

// Checked against redis-server 7.0.15 (TestLiveIncrByFloatTable).
var incrCases = []incrCase{
	// The examples of the INCRBYFLOAT documentation.
	{sp("10.50"), "0.1", "10.6"},
	{sp("10.6"), "-5", "5.6"},
	{sp("5.0e3"), "2.0e2", "5200"},
	{sp("3.0e3"), "2e2", "3200"},
	// Missing key counts as 0.
	{nil, "1.5", "1.5"},
	{nil, "0", "0"},
	{nil, "-0", "0"},
	{nil, "1", "1"},
	{nil, "5.0e3", "5000"},
	// Long double precision hides binary noise that double would show.
	{sp("0.1"), "0.2", "0.3"},
	{nil, "0.1", "0.1"},
	{sp("1.1"), "2.2", "3.3"},
	{sp("1"), "1e-17", "1.00000000000000001"},
	{sp("1"), "1e-18", "1"},
	{sp("0"), "1e-17", "0.00000000000000001"},
	{sp("0"), "4e-18", "0"},
	{sp("0"), "6e-18", "0.00000000000000001"},
	{sp("0"), "-6e-18", "-0.00000000000000001"},
	{sp("0"), "-4e-18", "0"}, // "-0" becomes "0"
	{sp("-5"), "5", "0"},
	{sp("-0"), "-0", "0"},
	{sp("123456789012345678"), "1", "123456789012345679"},
	{sp("9223372036854775807"), "1", "9223372036854775808"},
	{sp("18446744073709551615"), "1", "18446744073709551616"},
	{sp("36893488147419103231"), "0", "36893488147419103232"}, // 65 bits rounds
	{sp("1e20"), "0", "100000000000000000000"},
	{sp("1e30"), "0", "1000000000000000000024696061952"}, // 1e30 is not exact in 64 bits
	{sp("0.3333333333333333333333"), "0", "0.33333333333333333"},
	{sp("2.5"), "0", "2.5"},
	{sp("-2.5"), "0", "-2.5"},
	{sp("0.000000000000000005"), "0", "0"}, // just below 5e-18 in binary
	{sp("0.000000000000000015"), "0", "0.00000000000000002"},
	// Beyond double's range but within long double's.
	{sp("1e308"), "1e308", "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096"},
	{sp("1e400"), "0", "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880"},
	{sp("-1e-400"), "0", "0"},
	{sp("1e4932"), "1e4932", errNaNOrInf},
	{sp("1e4933"), "0", errNotFloat},  // overflows long double on parsing
	{sp("1e-5000"), "0", errNotFloat}, // underflows to zero on parsing
	{sp("1e-4950"), "0", "0"},         // subnormal: fine
	{sp("0e-5000"), "1", "1"},
	// glibc's subnormal quirk: the 65th significant bit is ignored, so
	// this is a tie between 0 and the smallest subnormal: 0, rejected.
	{nil, "0x1.0000000000000001p-16446", errNotFloat},
	{nil, "0x1.000001p-16446", "0"},
	// Infinities parse, but the sum must be finite.
	{sp("inf"), "1", errNaNOrInf},
	{nil, "inf", errNaNOrInf},
	{nil, "-Infinity", errNaNOrInf},
	{sp("inf"), "-inf", errNaNOrInf},
	// Syntax.
	{nil, "nan", errNotFloat},
	{nil, "", errNotFloat},
	{sp(""), "1", errNotFloat},
	{nil, " 1", errNotFloat},
	{nil, "1 ", errNotFloat},
	{nil, "abc", errNotFloat},
	{sp("abc"), "1", errNotFloat},
	{nil, "+1.5", "1.5"},
	{nil, "0x1p-2", "0.25"},
	{nil, "0x10", "16"},
	{nil, ".5", "0.5"},
	{nil, "5.", "5"},
	{nil, "1e", errNotFloat},
	{nil, "0x", errNotFloat},
	// Embedded NUL bytes are rejected (string2ld checks that strtold
	// consumed all of the input, not just up to the terminator).
	{nil, "1\x00junk", errNotFloat},
	{sp("2\x00junk"), "1", errNotFloat},
	{nil, "1\x00", errNotFloat},
	{nil, "\x00", errNotFloat},
	{sp("\x00abc"), "7", errNotFloat},
}

func TestIncrByFloat(t *testing.T) {
	for _, c := range incrCases {
		if got := ourIncr(c.cur, c.incr); got != c.want {
			t.Errorf("IncrByFloat(%s, %q) = %q, want %q", showCur(c.cur), c.incr, got, c.want)
		}
	}
}

func TestLongInputs(t *testing.T) {
	// string2ld rejects inputs of 5120 bytes or more.
	ok := "1." + strings.Repeat("0", 5117)
	if got := ourIncr(nil, ok); got != "1" {
		t.Errorf("5119 bytes: %q", got)
	}
	if got := ourIncr(nil, ok+"0"); got != errNotFloat {
		t.Errorf("5120 bytes: %q", got)
	}
	// Long inputs still round correctly (sticky digits beyond the limit).
	x := "0.5" + strings.Repeat("0", 20000) + "1"
	s, n := scan([]byte(x))
	if n != len(x) {
		t.Fatal("scan")
	}
	v, _ := s.longDouble()
	if got := v.String(); got != "0.5" {
		t.Errorf("long: %q", got)
	}
}

func TestHIncrByFloat(t *testing.T) {
	cases := []struct {
		cur  *string
		incr string
		want string
	}{
		{nil, "1.5", "1.5"},
		{sp("10.50"), "0.1", "10.6"},
		{nil, "inf", "-ERR value is NaN or Infinity"},
		{nil, "nan", errNotFloat},
		{nil, "x", errNotFloat},
		{sp("x"), "1", "-ERR hash value is not a float"},
		{sp(""), "1", "-ERR hash value is not a float"},
		{sp("inf"), "1", errNaNOrInf},
		{sp("1e4932"), "1e4932", errNaNOrInf},
		{sp("1\x00x"), "1", "-ERR hash value is not a float"},
	}
	for _, c := range cases {
		var cur []byte
		if c.cur != nil {
			cur = []byte(*c.cur)
		}
		got := ""
		if r, err := HIncrByFloat(cur, []byte(c.incr)); err != nil {
			got = "-" + err.Error()
		} else {
			got = string(r)
		}
		if got != c.want {
			t.Errorf("HIncrByFloat(%s, %q) = %q, want %q", showCur(c.cur), c.incr, got, c.want)
		}
	}
}

func TestLongDouble(t *testing.T) {
	var zero LongDouble
	if zero.String() != "0" || zero.Sign() != 0 || zero.IsInf() || zero.Float64() != 0 {
		t.Error("zero value")
	}
	x := LongDoubleFromInt64(math.MinInt64)
	if x.String() != "-9223372036854775808" || x.Sign() != -1 {
		t.Errorf("MinInt64: %s", x)
	}
	tenth, _ := ParseLongDoubleString("0.1")
	if tenth.Float64() != 0.1 {
		t.Errorf("Float64(0.1) = %v", tenth.Float64())
	}
	big, _ := ParseLongDoubleString("1e4000")
	if !math.IsInf(big.Float64(), 1) {
		t.Error("1e4000 as float64")
	}
	inf, _ := ParseLongDoubleString("-inf")
	if !inf.IsInf() || inf.String() != "-inf" || inf.Sign() != -1 {
		t.Error("-inf")
	}
	if _, ok := inf.Add(LongDouble{}); !ok {
		t.Error("-inf + 0")
	}
	pinf, _ := ParseLongDoubleString("inf")
	if _, ok := inf.Add(pinf); ok {
		t.Error("-inf + inf is NaN")
	}
	// The largest long double and the overflow threshold.
	maxLD, ok := ParseLongDoubleString("0x1.fffffffffffffffep16383")
	if !ok || maxLD.IsInf() {
		t.Fatal("max long double")
	}
	if s, _ := maxLD.Add(LongDoubleFromInt64(1)); s.IsInf() {
		t.Error("max + 1 must round back to max")
	}
	if s, _ := maxLD.Add(maxLD); !s.IsInf() {
		t.Error("max + max must overflow")
	}
	if _, ok := ParseLongDoubleString("0x1.ffffffffffffffffp16383"); ok {
		t.Error("rounds up to 2^16384: overflow")
	}
	// Subnormals: the smallest is 2^-16445; half of it rounds to even (0).
	for in, want := range map[string]bool{
		"0x1p-16445":   true,
		"0x1p-16446":   false,
		"0x1.8p-16446": true,
		"0x1p-16447":   false,
		"3.6e-4951":    true,
		"1.9e-4951":    true,
		"1.8e-4951":    false,
	} {
		if _, ok := ParseLongDoubleString(in); ok != want {
			t.Errorf("ParseLongDouble(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

func BenchmarkIncrByFloat(b *testing.B) {
	cur, incr := []byte("10.50"), []byte("0.1")
	for b.Loop() {
		if _, err := IncrByFloat(cur, incr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFloat(b *testing.B) {
	in := []byte("3.141592653589793")
	for b.Loop() {
		ParseFloat(in)
	}
}

func FuzzIncrByFloat(f *testing.F) {
	for _, c := range incrCases {
		cur := []byte(nil)
		if c.cur != nil {
			cur = []byte(*c.cur)
		}
		f.Add(cur, []byte(c.incr))
	}
	f.Fuzz(func(t *testing.T, cur, incr []byte) {
		r, err := IncrByFloat(cur, incr)
		if err != nil {
			return
		}
		// The result is a valid float that reads back as itself.
		r2, err := IncrByFloat(r, []byte("0"))
		if err != nil || !bytes.Equal(r, r2) {
			t.Fatalf("%q + %q = %q, re-read %q %v", cur, incr, r, r2, err)
		}
	})
}

func FuzzParseFloat(f *testing.F) {
	for _, c := range floatCases {
		f.Add([]byte(c.in))
	}
	for _, s := range specials {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n := Strtod(b)
		if n < 0 || n > len(b) || (n == 0 && v != 0) {
			t.Fatalf("Strtod(%q) = %v, %d", b, v, n)
		}
		if g, ok := ParseFloat(b); ok {
			if n != len(b) || math.IsNaN(g) || math.Float64bits(g) != math.Float64bits(v) {
				t.Fatalf("ParseFloat(%q) = %v but Strtod = %v, %d", b, g, v, n)
			}
			if r, ok := ParseFloat(FormatDouble(g)); !ok || r != g {
				t.Fatalf("ParseFloat(%q) = %v does not round-trip via %q", b, g, FormatDouble(g))
			}
		}
		if x, ok := ParseLongDouble(b); ok {
			if len(b) >= 5120 || !bytes.Equal(b, bytes.TrimLeft(b, " \t\n\v\f\r")) {
				t.Fatalf("ParseLongDouble(%q) accepted", b)
			}
			if _, ok := ParseLongDouble(x.Human()); !ok && !x.IsInf() {
				t.Fatalf("ParseLongDouble(%q): %q does not parse", b, x.Human())
			}
		}
	})
}

// What glibc strtod reports as ERANGE, as SORT sees it (checked against
// redis-server 7.0: SORT refuses exactly the erange ones).
func TestStrtodERange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		erange bool
	}{
		{"1", false}, {"inf", false}, {"-inf", false}, {"", false},
		{"1e400", true}, {"-1e400", true}, {"1e-400", true},
		{"1e-310", true}, {"4.9406564584124654e-324", true}, {"2.2250738585072011e-308", true},
		{"2.2250738585072014e-308", false}, {"0x1p-1070", false}, {"0x1.8p-1070", false},
	} {
		if _, _, got := StrtodERange([]byte(tc.in)); got != tc.erange {
			t.Errorf("StrtodERange(%q): erange %v, want %v", tc.in, got, tc.erange)
		}
	}
}
