package glob

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type matchCase struct {
	pat, str string
	want     bool
}

// Case-sensitive cases; every one has been checked against redis-server
// 7.0.15 with KEYS (see TestLiveTable).
var matchCases = []matchCase{
	// Plain and empty.
	{"", "", true},
	{"", "a", false},
	{"a", "", false},
	{"abc", "abc", true},
	{"abc", "abd", false},
	{"abc", "ab", false},
	{"ab", "abc", false},
	{"abc", "ABC", false},
	// Stars.
	{"**", "", false}, // the matcher never matches an empty subject...
	{"?*", "", false},
	{"a*", "a", true}, // ...but trailing stars match nothing after it
	{"a**", "a", true},
	{"a*", "abc", true},
	{"*c", "abc", true},
	{"*b*", "abc", true},
	{"*b*", "ac", false},
	{"a*b*c", "aXbYc", true},
	{"a*b*c", "aXbY", false},
	{"**a**", "bab", true},
	{"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", true},
	{"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	{"h*llo", "hllo", true},
	// Question mark.
	{"?", "a", true},
	{"?", "", false},
	{"?", "ab", false},
	{"h?llo", "hello", true},
	{"h?llo", "hllo", false},
	{"??", "\x00\xff", true},
	// Classes.
	{"h[ae]llo", "hello", true},
	{"h[ae]llo", "hallo", true},
	{"h[ae]llo", "hillo", false},
	{"h[^e]llo", "hallo", true},
	{"h[^e]llo", "hello", false},
	{"h[a-b]llo", "hbllo", true},
	{"h[a-b]llo", "hcllo", false},
	{"[z-a]", "m", true}, // reversed range
	{"[z-a]", "A", false},
	{"[a-]", "]", true}, // range ']'..'a', class continues
	{"[a-]", "^", true},
	{"[a-]", "b", false},
	{"[a-]x]", "ax", false}, // the class is "a-]x" closed by the second ']'
	{"[a-]x]", "a", true},
	{"[a-]x]", "x", true},
	{"[-a]", "-", true},
	{"[a-", "a", true}, // unterminated: 'a' and '-' as plain members
	{"[a-", "-", true},
	{"[a-", "b", false},
	{"[", "[", false},   // empty unterminated class matches nothing
	{"[^", "x", true},   // negated empty unterminated class matches anything
	{"[^", "", false},   // ...but one byte
	{"[^", "xy", false}, //
	{"[]", "]", false},  // empty class
	{"[]a]", "a", false},
	{"[]a]", "]", false},
	{"[^]", "x", true}, // negated empty class
	{"[^]a", "xa", true},
	{"[abc", "c", true},
	{"[abc", "d", false},
	{"[^abc", "d", true},
	{"[!a]", "b", false}, // '!' is not negation
	{"[!a]", "!", true},
	{"[*]", "*", true},
	{"[*]", "a", false},
	{"[?]", "?", true},
	{"[[]", "[", true},
	{"[\\]]", "]", true}, // escaped ']' inside class
	{"[\\]", "]", true},  // "\]" escapes ']', class unterminated
	{"[\\]", "\\", false},
	{"[a\\", "\\", true}, // trailing backslash in class is literal
	{"[a\\", "a", true},
	{"[\\-a]", "-", true},
	{"[\\-a]", "b", false},
	{"[a\\-c]", "b", false}, // escaped '-' is not a range
	{"[a-\\]", "\\", true},  // range a..'\' = '\'..a
	{"[a-\\]", "b", false},  // the class continues to the end: "]" inside
	{"[a-\\]", "]", true},
	// Signed-char ranges: bytes >= 0x80 are negative.
	{"[a-\xff]", "b", false}, // range -1..'a'
	{"[a-\xff]", "\x00", true},
	{"[a-\xff]", "Z", true},
	{"[a-\xff]", "\xff", true},
	{"[a-\xff]", "\x80", false},
	{"[\x80-\x00]", "\xc3", true},
	{"[\x80-\x00]", "a", false},
	{"[\x00-\x7f]", "\x80", false},
	{"[\x00-\x7f]", "\x7f", true},
	// Escapes.
	{"\\*", "*", true},
	{"\\*", "a", false},
	{"\\?", "?", true},
	{"\\[", "[", true},
	{"\\a", "a", true},
	{"\\\\", "\\", true},
	{"\\", "\\", true}, // trailing lone backslash is literal
	{"a\\", "a\\", true},
	{"a\\", "a", false},
	{"\\*\\*", "**", true},
	// Embedded NUL bytes.
	{"a\x00b", "a\x00b", true},
	{"*\x00", "ab\x00", true},
	{"[\x00]", "\x00", true},
	// Leftover pattern after the subject runs out.
	{"abc*", "abc", true},
	{"abc*?", "abc", false},
	{"abc*[", "abc", false},
	{"abc*\\", "abc", false},
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		if got := Match([]byte(c.pat), []byte(c.str), false); got != c.want {
			t.Errorf("Match(%q, %q, false) = %v, want %v", c.pat, c.str, got, c.want)
		}
		if got := MatchString(c.pat, c.str, false); got != c.want {
			t.Errorf("MatchString(%q, %q, false) = %v, want %v", c.pat, c.str, got, c.want)
		}
	}
}

func TestMatchNocase(t *testing.T) {
	cases := []matchCase{
		{"abc", "ABC", true},
		{"ABC", "abc", true},
		{"a*C", "AbC", true},
		{"h[AE]llo", "Hello", true},
		{"h[^E]llo", "hello", false},
		{"[A-Z]", "q", true},
		{"[a-z]", "Q", true},
		{"[Z-A]", "q", true},
		// Bounds are folded after swapping: [B-a] is 'B'..'a' -> 'b'..'a',
		// an empty range.
		{"[a-B]", "c", false},
		{"[a-B]", "a", false},
		{"[a-B]", "_", false},
		{"[Z-a]", "_", false}, // 'Z'..'a' folds to 'z'..'a'
		// An escaped byte inside a class is compared case-sensitively.
		{"[\\A]", "a", false},
		{"[\\A]", "A", true},
		{"\\A", "a", true}, // but not outside a class
		// Only ASCII folds.
		{"\xc3", "\xe3", false},
		{"[\xc0-\xc5]", "\xe3", false},
	}
	for _, c := range cases {
		if got := Match([]byte(c.pat), []byte(c.str), true); got != c.want {
			t.Errorf("Match(%q, %q, true) = %v, want %v", c.pat, c.str, got, c.want)
		}
	}
}

// TestNesting pins the recursion limit: at most 1000 nested '*' retries.
func TestNesting(t *testing.T) {
	for n, want := range map[int]bool{1000: true, 1001: true, 1002: false, 5000: false} {
		s := bytes.Repeat([]byte("a"), n)
		p := bytes.Repeat([]byte("a*"), n)
		if got := Match(p, s, false); got != want {
			t.Errorf("n=%d: got %v, want %v", n, got, want)
		}
	}
	// Consecutive stars collapse and do not count as nesting.
	p := []byte(strings.Repeat("*", 100000) + "a")
	if !Match(p, []byte("bbba"), false) {
		t.Error("many consecutive stars")
	}
}

func TestPathological(t *testing.T) {
	cases := []struct{ pat, str string }{
		{strings.Repeat("a*", 1000) + "b", strings.Repeat("a", 10000)},
		{strings.Repeat("*a", 1000) + "b", strings.Repeat("a", 10000)},
		{strings.Repeat("*?", 1000) + "b", strings.Repeat("a", 10000)},
		{strings.Repeat("*[a-z]", 1000) + "!", strings.Repeat("a", 10000)},
		{strings.Repeat("*[^b]", 500) + "*b", strings.Repeat("a", 20000)},
		{strings.Repeat("*", 100000) + strings.Repeat("a*", 900) + "b", strings.Repeat("a", 100000)},
	}
	for _, c := range cases {
		m := matcher{pat: []byte(c.pat)}
		start := time.Now()
		got := m.match(0, []byte(c.str), 0)
		if got {
			t.Errorf("%.20q...: unexpected match", c.pat)
		}
		if limit := callBound([]byte(c.pat), []byte(c.str)); m.calls > limit {
			t.Errorf("%.20q...: %d calls > bound %d", c.pat, m.calls, limit)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.20q...: took %v", c.pat, d)
		}
	}
}

// callBound is a bound on the number of matcher invocations: each star
// retry loop runs at most once over the subject (after a full failure all
// enclosing loops stop).
func callBound(pat, str []byte) int {
	return (bytes.Count(pat, []byte("*"))+1)*(len(str)+1) + 1
}

func TestIsLiteral(t *testing.T) {
	for p, want := range map[string]bool{
		"":          true,
		"foo":       true,
		"user:1000": true,
		"a]b^c-d!":  true,
		"\x00\xff":  true,
		"a*":        false,
		"a?":        false,
		"a[b":       false,
		"a\\b":      false,
	} {
		if got := IsLiteral([]byte(p)); got != want {
			t.Errorf("IsLiteral(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestLiteralPrefix(t *testing.T) {
	cases := []struct {
		pat, prefix string
		complete    bool
	}{
		{"", "", true},
		{"foo", "foo", true},
		{"foo*", "foo", false},
		{"*foo", "", false},
		{"user:?", "user:", false},
		{"user:[0-9]", "user:", false},
		{"a\\*b", "a*b", true},
		{"a\\*b*", "a*b", false},
		{"a\\", "a\\", true},
		{"\\\\x", "\\x", true},
		{"a\\[b]", "a[b]", true},
	}
	for _, c := range cases {
		prefix, complete := LiteralPrefix([]byte(c.pat))
		if string(prefix) != c.prefix || complete != c.complete {
			t.Errorf("LiteralPrefix(%q) = %q, %v; want %q, %v", c.pat, prefix, complete, c.prefix, c.complete)
		}
		if c.complete && !Match([]byte(c.pat), []byte(c.prefix), false) {
			t.Errorf("%q does not match its literal %q", c.pat, c.prefix)
		}
	}
}

// naive is an independent, exponential-time reference implementation of the
// same semantics without the backtracking cut-off, for small inputs.
func naive(pat, str []byte, nocase bool) bool {
	at := func(i int) byte {
		if i < len(pat) {
			return pat[i]
		}
		return 0
	}
	eq := func(a, b byte) bool {
		if nocase {
			return lower(int(a)) == lower(int(b))
		}
		return a == b
	}
	var rec func(p int, s []byte) bool
	rec = func(p int, s []byte) bool {
		if p == len(pat) {
			return len(s) == 0
		}
		if len(s) == 0 {
			return false // an empty subject never enters the matching loop
		}
		switch pat[p] {
		case '*':
			for at(p+1) == '*' {
				p++
			}
			if p == len(pat)-1 {
				return true
			}
			for i := 0; i < len(s); i++ {
				if rec(p+1, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			return next(p+1, s[1:], rec, at)
		case '[':
			q := p + 1
			not := at(q) == '^'
			if not {
				q++
			}
			matched := false
			for {
				if at(q) == '\\' && len(pat)-q >= 2 {
					q++
					matched = matched || pat[q] == s[0]
				} else if at(q) == ']' {
					break
				} else if q == len(pat) {
					q--
					break
				} else if len(pat)-q >= 3 && pat[q+1] == '-' {
					lo, hi, c := int(int8(pat[q])), int(int8(pat[q+2])), int(int8(s[0]))
					if lo > hi {
						lo, hi = hi, lo
					}
					if nocase {
						lo, hi, c = lower(lo), lower(hi), lower(c)
					}
					matched = matched || (lo <= c && c <= hi)
					q += 2
				} else {
					matched = matched || eq(pat[q], s[0])
				}
				q++
			}
			if matched == not {
				return false
			}
			return next(q+1, s[1:], rec, at)
		case '\\':
			if len(pat)-p >= 2 {
				p++
			}
		}
		if !eq(pat[p], s[0]) {
			return false
		}
		return next(p+1, s[1:], rec, at)
	}
	return rec(0, str)
}

// next continues after a single-byte match: once the subject is exhausted,
// trailing stars are skipped and the match is decided.
func next(p int, s []byte, rec func(int, []byte) bool, at func(int) byte) bool {
	if len(s) == 0 {
		for at(p) == '*' {
			p++
		}
	}
	return rec(p, s)
}

func TestAgainstNaive(t *testing.T) {
	alpha := []byte("ab*?[]^-\\A\xff")
	// Exhaustive over short patterns and subjects.
	var pats, strs [][]byte
	var gen func(prefix []byte, n int, alpha []byte, out *[][]byte)
	gen = func(prefix []byte, n int, alpha []byte, out *[][]byte) {
		*out = append(*out, append([]byte(nil), prefix...))
		if n == 0 {
			return
		}
		for _, c := range alpha {
			gen(append(prefix, c), n-1, alpha, out)
		}
	}
	gen(nil, 4, alpha, &pats)
	gen(nil, 3, []byte("aA]-\\\xff"), &strs)
	for _, p := range pats {
		for _, s := range strs {
			for _, nc := range []bool{false, true} {
				if got, want := Match(p, s, nc), naive(p, s, nc); got != want {
					t.Fatalf("Match(%q, %q, %v) = %v, naive %v", p, s, nc, got, want)
				}
			}
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, c := range matchCases {
		f.Add([]byte(c.pat), []byte(c.str), false)
	}
	f.Add([]byte(strings.Repeat("a*", 40)+"b"), []byte(strings.Repeat("a", 60)), false)
	f.Add([]byte("*[a-z]*[^0]?\\*"), []byte("Hello*"), true)
	f.Fuzz(func(t *testing.T, pat, str []byte, nocase bool) {
		m := matcher{pat: pat, nocase: nocase}
		got := m.match(0, str, 0)
		if limit := callBound(pat, str); m.calls > limit {
			t.Fatalf("Match(%q, %q): %d calls > bound %d", pat, str, m.calls, limit)
		}
		if got != Match(pat, str, nocase) {
			t.Fatal("not deterministic")
		}
		// Cross-check with the exponential reference when it is cheap.
		if bytes.Count(pat, []byte("*")) <= 4 && len(str) <= 16 {
			if want := naive(pat, str, nocase); got != want {
				t.Fatalf("Match(%q, %q, %v) = %v, naive %v", pat, str, nocase, got, want)
			}
		}
		prefix, complete := LiteralPrefix(pat)
		if got && !nocase && !bytes.HasPrefix(str, prefix) {
			t.Fatalf("Match(%q, %q) but literal prefix %q missing", pat, str, prefix)
		}
		if complete && !nocase && got != bytes.Equal(str, prefix) {
			t.Fatalf("literal %q (from %q) vs %q: Match %v", prefix, pat, str, got)
		}
		if IsLiteral(pat) && (!complete || !bytes.Equal(prefix, pat)) {
			t.Fatalf("IsLiteral(%q) but LiteralPrefix = %q, %v", pat, prefix, complete)
		}
	})
}
