// Package num converts numbers to and from their Redis wire form exactly as
// Redis 7.0 does (util.c string2ll, string2d, string2ld, ld2string and
// networking.c addReplyDouble), including the 80-bit x87 long double
// arithmetic behind INCRBYFLOAT and HINCRBYFLOAT.
package num

import (
	"math"
	"strconv"
)

// ParseInt parses b exactly like Redis's string2ll, the parser behind every
// integer argument (INCR/INCRBY, EXPIRE, SETRANGE offsets, ...) and behind
// reading a stored string as an integer. It accepts an optional '-'
// followed by decimal digits, without leading zeros (only "0" itself may
// start with 0, so "-0", "00" and "01" are rejected), without '+', without
// any surrounding space, and only within the int64 range.
func ParseInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n >= 21 { // LONG_STR_SIZE: no valid form is longer than 20
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	i := 0
	neg := b[0] == '-'
	if neg {
		i++
		if i == n {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true // -(1<<63) wraps to math.MinInt64
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// ParseIntString is ParseInt for strings.
func ParseIntString(s string) (int64, bool) {
	return ParseInt([]byte(s))
}

// FormatInt returns the decimal form of n (Redis ll2string).
func FormatInt(n int64) []byte {
	return strconv.AppendInt(make([]byte, 0, 20), n, 10)
}

// AppendInt appends the decimal form of n to dst.
func AppendInt(dst []byte, n int64) []byte {
	return strconv.AppendInt(dst, n, 10)
}

// ParseFloat parses a double argument exactly like Redis's string2d (used
// by getDoubleFromObject: ZADD and ZINCRBY scores, GEO coordinates, ...):
// C strtod syntax (decimal, hexadecimal such as "0x1p3", "inf",
// "infinity", any letter case, optional sign including '+'), but the whole
// input must be consumed (so embedded NUL bytes are rejected), the first
// byte must not be whitespace, NaN is rejected, and so are out-of-range
// values: overflow to ±Inf (e.g. "1e400") and underflow to zero (e.g.
// "1e-400"). Subnormal results ("1e-310") and literal infinities are
// accepted. Rounding is glibc's: to nearest even, except for its quirk on
// subnormal results (see hexTopExp), which makes e.g.
// "0x1.00000000000008p-1075" round to zero and be rejected.
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, n, rangeErr := strtod(b)
	if n != len(b) || math.IsNaN(f) {
		return 0, false
	}
	if rangeErr && (f == 0 || math.IsInf(f, 0)) {
		return 0, false
	}
	return f, true
}

// ParseFloatString is ParseFloat for strings.
func ParseFloatString(s string) (float64, bool) {
	return ParseFloat([]byte(s))
}

// Strtod emulates glibc strtod on b (as if b were NUL-terminated at its
// first NUL byte): leading whitespace is skipped, the longest valid prefix
// is converted and its length (including the skipped whitespace) returned
// as n; n == 0 means no conversion (f is then 0). "nan" yields NaN; values
// out of range yield ±Inf or (signed) zero. This is the primitive behind
// Redis's score-range parsing (zslParseRange: strtod plus a check that the
// rest is empty), which, unlike ParseFloat, accepts leading spaces, ""
// (as 0), overflow and underflow.
func Strtod(b []byte) (f float64, n int) {
	f, n, _ = strtod(b)
	return f, n
}

// FormatDouble formats f the way Redis 7.0 replies a double (addReplyDouble:
// printf "%.17g", with "inf" and "-inf"), as in ZSCORE, ZINCRBY or
// ZRANGE WITHSCORES. The same text follows ',' in a RESP3 double.
// For example 0.1 is "0.10000000000000001", 1e100 is "1e+100", -0.0 is
// "-0". (Redis 7.2 switched to shortest round-trip output; 7.0 does not.)
func FormatDouble(f float64) []byte {
	return AppendDouble(make([]byte, 0, 24), f)
}

// AppendDouble appends FormatDouble(f) to dst.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	// Go's 'g' with an explicit precision matches C's %.17g: the same
	// exponent threshold, trailing zeros removed, at least two exponent
	// digits.
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// isSpace is C isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
