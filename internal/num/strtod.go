package num

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
)

// numKind is what a C strtod-style scan recognised.
type numKind uint8

const (
	kindNone numKind = iota // no conversion
	kindNum                 // finite decimal or hexadecimal number
	kindInf                 // "inf" / "infinity"
	kindNaN                 // "nan" / "nan(...)"
)

// scanned is the syntactic result of scanning a strtod-style number.
// For kindNum the value is ±digits × base^exp, where digits holds the
// significant digits (ASCII, hex digits for hex) with leading and trailing
// zeros removed (empty means zero), base is 10 for decimal and 2 for hex
// (exp is then a binary exponent and each digit stands for 4 bits).
type scanned struct {
	kind   numKind
	neg    bool
	hex    bool
	digits []byte
	exp    int64
}

// expLimit saturates parsed exponents; anything beyond is far outside
// every floating-point range, whatever the number of digits.
const expLimit = 1 << 40

// scan parses the longest prefix of b that glibc strtod/strtold accept in
// the C locale, treating b as ending at its first NUL byte. It returns the
// parse and the number of bytes consumed (0 if none).
func scan(b []byte) (s scanned, n int) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		s.neg = b[i] == '-'
		i++
	}
	if i >= len(b) {
		return scanned{}, 0
	}
	switch c := lowerASCII(b[i]); {
	case c == 'i':
		if !hasPrefixFold(b[i:], "inf") {
			return scanned{}, 0
		}
		i += 3
		if hasPrefixFold(b[i:], "inity") {
			i += 5
		}
		s.kind = kindInf
		return s, i
	case c == 'n':
		if !hasPrefixFold(b[i:], "nan") {
			return scanned{}, 0
		}
		i += 3
		if i < len(b) && b[i] == '(' {
			j := i + 1
			for j < len(b) && (isAlnum(b[j]) || b[j] == '_') {
				j++
			}
			if j < len(b) && b[j] == ')' {
				i = j + 1
			}
		}
		s.kind = kindNaN
		return s, i
	}
	if b[i] == '0' && i+1 < len(b) && lowerASCII(b[i+1]) == 'x' {
		if m, ok := scanMantissa(b, i+2, true); ok {
			s.kind, s.hex = kindNum, true
			e, j := scanExponent(b, m.end, 'p')
			s.digits, s.exp = normalize(m.digits, e-4*int64(m.frac), 4, '0')
			return s, j
		}
		// "0x" without hex digits: just the "0" is a number.
		s.kind = kindNum
		return s, i + 1
	}
	m, ok := scanMantissa(b, i, false)
	if !ok {
		return scanned{}, 0
	}
	s.kind = kindNum
	e, j := scanExponent(b, m.end, 'e')
	s.digits, s.exp = normalize(m.digits, e-int64(m.frac), 1, '0')
	return s, j
}

type mantissa struct {
	digits []byte // all mantissa digits, '.' removed
	frac   int    // how many of them follow the '.'
	end    int
}

// scanMantissa scans digits [. digits] from b[i:], requiring at least one
// digit.
func scanMantissa(b []byte, i int, hex bool) (m mantissa, ok bool) {
	isDigit := isDec
	if hex {
		isDigit = isHex
	}
	start := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	intEnd := i
	m.digits = b[start:intEnd]
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i > fs {
			m.frac = i - fs
			m.digits = append(append(make([]byte, 0, intEnd-start+m.frac), b[start:intEnd]...), b[fs:i]...)
		}
	}
	if len(m.digits) == 0 {
		return mantissa{}, false
	}
	m.end = i
	return m, true
}

// scanExponent scans an optional exponent (marker, optional sign, at least
// one decimal digit) at b[i:]; without digits nothing is consumed.
func scanExponent(b []byte, i int, marker byte) (int64, int) {
	if i >= len(b) || lowerASCII(b[i]) != marker {
		return 0, i
	}
	j := i + 1
	neg := false
	if j < len(b) && (b[j] == '+' || b[j] == '-') {
		neg = b[j] == '-'
		j++
	}
	if j >= len(b) || !isDec(b[j]) {
		return 0, i
	}
	var e int64
	for ; j < len(b) && isDec(b[j]); j++ {
		if e < expLimit {
			e = e*10 + int64(b[j]-'0')
		}
	}
	if neg {
		e = -e
	}
	return e, j
}

// normalize strips leading zeros and trailing zeros (each trailing zero
// adds step to the exponent).
func normalize(digits []byte, exp int64, step int64, zero byte) ([]byte, int64) {
	for len(digits) > 0 && digits[0] == zero {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == zero {
		digits = digits[:len(digits)-1]
		exp += step
	}
	if len(digits) == 0 {
		return nil, 0
	}
	return digits, exp
}

// strtod converts like glibc strtod; rangeErr reports what glibc signals
// with ERANGE when the result is ±Inf or zero (overflow, or underflow of a
// nonzero input to zero).
func strtod(b []byte) (f float64, n int, rangeErr bool) {
	if f, ok := shortInt(b); ok {
		return f, len(b), false
	}
	s, n := scan(b)
	switch s.kind {
	case kindNone:
		return 0, 0, false
	case kindInf:
		return signed(math.Inf(1), s.neg), n, false
	case kindNaN:
		return math.NaN(), n, false
	}
	if len(s.digits) == 0 {
		return signed(0, s.neg), n, false
	}
	// Rewrite as 0.DIGITS × base^mag, with mag bounded so that Go's parser
	// sees a small exponent; anything outside is certainly out of range.
	var text []byte
	if s.hex {
		mag := s.exp + 4*int64(len(s.digits)) // value in [2^(mag-4), 2^mag)
		switch {
		case mag > 1100:
			return signed(math.Inf(1), s.neg), n, true
		case mag < -1100:
			return signed(0, s.neg), n, true
		}
		digits := s.digits
		if hexTopExp(digits, s.exp) < dblMinExp {
			digits = clearHexBit(digits, dblMantBits+1) // glibc quirk
		}
		text = append(append(append(make([]byte, 0, len(digits)+16), "0x0."...), digits...), 'p')
		text = strconv.AppendInt(text, mag, 10)
	} else {
		mag := s.exp + int64(len(s.digits)) // value in [10^(mag-1), 10^mag)
		switch {
		case mag > 400:
			return signed(math.Inf(1), s.neg), n, true
		case mag < -400:
			return signed(0, s.neg), n, true
		}
		if mag <= -307 && glibcKeepsAllDigits(s.digits, s.exp, dblMantBits, dblMinExp) {
			// Possibly subnormal and subject to glibc's quirk.
			f := subnormalDecimal(s)
			return f, n, f == 0
		}
		text = append(append(append(make([]byte, 0, len(s.digits)+16), "0."...), s.digits...), 'e')
		text = strconv.AppendInt(text, mag, 10)
	}
	// Go's ParseFloat rounds correctly (to nearest even, with subnormals),
	// like glibc.
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !math.IsInf(f, 0) {
		panic("num: cannot parse normalized float " + string(text))
	}
	rangeErr = math.IsInf(f, 0) || f == 0
	return signed(f, s.neg), n, rangeErr
}

// shortInt converts b if it is only an optional sign and 1 to 15 decimal
// digits, the common score or bound ("100", "-5"): such a number is exact
// in a float64, so the general scan and ParseFloat are not needed.
func shortInt(b []byte) (float64, bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	if len(b) == i || len(b)-i > 15 {
		return 0, false
	}
	var v int64
	for _, c := range b[i:] {
		if !isDec(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return signed(float64(v), b[0] == '-'), true
}

// float64 parameters in math/big terms (x = m × 2^e, 0.5 <= |m| < 1).
const (
	dblMantBits = 53
	dblMinExp   = -1021 // smallest normal is 2^-1022
)

// subnormalDecimal converts a tiny decimal exactly like glibc strtod,
// including its subnormal quirk (see clearHexBit).
func subnormalDecimal(s scanned) float64 {
	m, _ := new(big.Int).SetString(string(s.digits), 10)
	x := quoSticky(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(-s.exp), nil))
	if x.MantExp(nil) < dblMinExp {
		x = clearBitFromTop(x, dblMantBits+1)
	}
	f, _ := x.Float64() // nearest even, with subnormals
	return signed(f, s.neg)
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isAlnum(c byte) bool {
	return isDec(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(b[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// StrtodERange is Strtod that also reports whether glibc's strtod sets
// errno to ERANGE: on overflow, on underflow to zero, and when the result is
// subnormal and inexact ("1e-310", not "0x1p-1070"). SORT rejects a value
// that sets it.
func StrtodERange(b []byte) (f float64, n int, erange bool) {
	f, n, erange = strtod(b)
	if erange || f == 0 || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) >= 0x1p-1022 {
		return f, n, erange
	}
	s, _ := scan(b)
	return f, n, !s.isExactly(math.Abs(f))
}

// isExactly reports whether the magnitude of the number s scanned is x.
func (s scanned) isExactly(x float64) bool {
	base := int64(10)
	if s.hex {
		base = 16
	}
	d, ok := new(big.Int).SetString(string(s.digits), int(base))
	if !ok {
		return false
	}
	if s.hex {
		base = 2 // exp is binary
	}
	v := new(big.Rat).SetInt(d)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(max(s.exp, -s.exp)), nil))
	if s.exp < 0 {
		v.Quo(v, scale)
	} else {
		v.Mul(v, scale)
	}
	return v.Cmp(new(big.Rat).SetFloat64(x)) == 0
}
