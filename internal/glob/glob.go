// Package glob implements Redis's glob-style pattern matching
// (stringmatchlen in Redis's util.c), as used by KEYS, SCAN MATCH,
// PSUBSCRIBE, HSCAN/SSCAN/ZSCAN MATCH and friends.
//
// The semantics are reproduced exactly, including Redis's quirks:
//
//   - '*' matches any sequence (also empty), '?' any single byte.
//   - '[abc]', '[^abc]', '[a-z]' classes; a reversed range '[z-a]' is the
//     same as '[a-z]'. Range bounds and the subject byte are compared as
//     signed C chars (x86-64), so bytes >= 0x80 sort below 0x00.
//   - '\x' escapes x, both outside and inside brackets. A trailing lone
//     backslash is a literal backslash. Inside brackets an escaped byte is
//     always compared case-sensitively, even with nocase.
//   - An unterminated class such as '[abc' is closed by the end of the
//     pattern; '[^' alone therefore matches any single byte, '[' alone
//     matches nothing.
//   - A range's upper bound may be ']' ('[a-]' is the range ']'..'a', and
//     the class continues up to the next ']').
//   - An empty subject matches only the empty pattern: even "*" does not
//     match "" (Redis's KEYS and SCAN special-case the exact pattern "*"
//     before calling the matcher, so callers wanting KEYS * to list the
//     empty key must do the same).
//   - Case folding (nocase) is ASCII-only (C locale tolower).
//   - Protection against abusive patterns: once the remainder of a pattern
//     after some '*' has failed at every position, no longer match is tried
//     for earlier stars (polynomial instead of exponential time), and
//     recursion deeper than 1000 stars fails the match (the CVE-2024-31228
//     fix of Redis 7.2.6, present in the reference redis-server 7.0.15
//     build, Debian's 7.0.15-1~deb12u10).
package glob

// maxNesting is the recursion limit of Redis's stringmatchlen_impl.
const maxNesting = 1000

// Match reports whether str matches the glob pattern with Redis's
// stringmatchlen semantics. nocase enables ASCII case-insensitive matching.
func Match(pattern, str []byte, nocase bool) bool {
	m := matcher{pat: pattern, nocase: nocase}
	return m.match(0, str, 0)
}

// MatchString is Match for strings.
func MatchString(pattern, str string, nocase bool) bool {
	return Match([]byte(pattern), []byte(str), nocase)
}

// IsLiteral reports whether pattern contains no glob metacharacters
// ('*', '?', '[' or '\'). A literal pattern matches (case-sensitively)
// exactly one string: itself. Note that the empty pattern is literal and
// matches only the empty string.
func IsLiteral(pattern []byte) bool {
	for _, c := range pattern {
		switch c {
		case '*', '?', '[', '\\':
			return false
		}
	}
	return true
}

// LiteralPrefix returns the literal prefix that every string matching
// pattern case-sensitively must start with: the pattern up to its first
// unescaped '*', '?' or '[', with backslash escapes resolved. complete is
// true when the whole pattern is literal (after unescaping); then, with
// nocase false, a string matches if and only if it equals prefix.
// The returned slice aliases pattern when no unescaping was needed.
func LiteralPrefix(pattern []byte) (prefix []byte, complete bool) {
	var buf []byte // allocated on the first escape
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*', '?', '[':
			if buf == nil {
				return pattern[:i], false
			}
			return buf, false
		case '\\':
			if buf == nil {
				buf = append(make([]byte, 0, len(pattern)), pattern[:i]...)
			}
			if i+1 < len(pattern) {
				i++
				c = pattern[i]
			}
			// A trailing backslash stands for itself.
			buf = append(buf, c)
		default:
			if buf != nil {
				buf = append(buf, c)
			}
		}
	}
	if buf == nil {
		return pattern, true
	}
	return buf, true
}

type matcher struct {
	pat        []byte
	nocase     bool
	skipLonger bool // a tail after a '*' failed everywhere: give up
	calls      int  // recursion counter, for tests
}

// at returns the pattern byte at i, or 0 past the end (Redis relies on the
// NUL terminator of its sds strings when peeking one byte ahead).
func (m *matcher) at(i int) byte {
	if i < len(m.pat) {
		return m.pat[i]
	}
	return 0
}

// lower is C-locale tolower on a (possibly negative, signed-char) value.
func lower(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func (m *matcher) eq(a, b byte) bool {
	if m.nocase {
		return lower(int(a)) == lower(int(b))
	}
	return a == b
}

// match matches str against m.pat[p:].
func (m *matcher) match(p int, str []byte, nesting int) bool {
	m.calls++
	if nesting > maxNesting {
		return false
	}
	pat := m.pat
	for p < len(pat) && len(str) > 0 {
		switch pat[p] {
		case '*':
			for m.at(p+1) == '*' {
				p++
			}
			if p == len(pat)-1 {
				return true // trailing star matches the rest
			}
			for len(str) > 0 {
				if m.match(p+1, str, nesting+1) {
					return true
				}
				if m.skipLonger {
					return false
				}
				str = str[1:]
			}
			// The tail failed starting anywhere in the remaining string, so
			// letting any earlier star swallow more cannot help either.
			m.skipLonger = true
			return false
		case '?':
			str = str[1:]
		case '[':
			p++
			not := m.at(p) == '^'
			if not {
				p++
			}
			matched := false
			for {
				rest := len(pat) - p
				c := m.at(p)
				if c == '\\' && rest >= 2 {
					p++
					if pat[p] == str[0] { // deliberately case-sensitive
						matched = true
					}
				} else if c == ']' {
					break
				} else if rest == 0 {
					p-- // unterminated: step back so the outer p++ lands on the end
					break
				} else if rest >= 3 && pat[p+1] == '-' {
					// Signed char comparison, as on x86-64.
					start, end, ch := int(int8(c)), int(int8(pat[p+2])), int(int8(str[0]))
					if start > end {
						start, end = end, start
					}
					if m.nocase {
						start, end, ch = lower(start), lower(end), lower(ch)
					}
					p += 2
					if ch >= start && ch <= end {
						matched = true
					}
				} else if m.eq(c, str[0]) {
					matched = true
				}
				p++
			}
			if not {
				matched = !matched
			}
			if !matched {
				return false
			}
			str = str[1:]
		case '\\':
			if len(pat)-p >= 2 {
				p++
			}
			fallthrough
		default:
			if !m.eq(pat[p], str[0]) {
				return false
			}
			str = str[1:]
		}
		p++
		if len(str) == 0 {
			for m.at(p) == '*' {
				p++
			}
		}
	}
	return p == len(pat) && len(str) == 0
}
