package num

import (
	"errors"
	"math/big"
	"math/bits"
)

// Errors of INCRBYFLOAT and HINCRBYFLOAT. Error() is the reply text
// without the leading '-'.
var (
	// ErrNotFloat: the current value or the increment does not parse.
	ErrNotFloat = errors.New("ERR value is not a valid float")
	// ErrNaNOrInf: the sum is NaN or infinite.
	ErrNaNOrInf = errors.New("ERR increment would produce NaN or Infinity")
	// ErrIncrNaNOrInf: HINCRBYFLOAT's increment itself is infinite
	// (INCRBYFLOAT reports ErrNaNOrInf instead).
	ErrIncrNaNOrInf = errors.New("ERR value is NaN or Infinity")
	// ErrHashValueNotFloat: HINCRBYFLOAT's current field value does not
	// parse.
	ErrHashValueNotFloat = errors.New("ERR hash value is not a float")
)

// x87 80-bit extended precision, in math/big terms (x = m × 2^e with
// 0.5 <= |m| < 1).
const (
	ldMantBits = 64
	ldMaxExp   = 16384  // finite values are below 2^16384
	ldMinExp   = -16381 // smallest normal value is 2^-16382
	ldTinyExp  = -16445 // subnormals are multiples of 2^-16445

	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS, the buffer
	// string2ld copies its input into: longer inputs are rejected.
	maxLongDoubleChars = 5 * 1024

	// Significant digits kept when converting decimal (hex) input; the
	// rest is replaced by a sticky nonzero digit. Every rounding boundary
	// of an x87 value has fewer significant digits than this, so the
	// result is still correctly rounded.
	maxDecDigits = 12000
	maxHexDigits = 24
)

// LongDouble is a value of C's long double on x86-64 (x87 80-bit extended
// precision: 64-bit significand, 15-bit exponent, subnormals, ±Inf), the
// type Redis uses for INCRBYFLOAT and HINCRBYFLOAT. The zero value is +0.
// LongDouble values are immutable.
type LongDouble struct {
	f *big.Float // nil means +0
}

// LongDoubleFromInt64 returns n as a long double (exact).
func LongDoubleFromInt64(n int64) LongDouble {
	return LongDouble{new(big.Float).SetInt64(n)}
}

// ParseLongDouble parses b like Redis's string2ld (getLongDoubleFromObject):
// inputs that are empty or at least 5120 bytes long are rejected; the
// whole input must be consumed by glibc strtold (decimal or hex syntax,
// "inf"/"infinity", optional sign; no leading whitespace, no embedded NUL
// bytes); NaN, overflow to ±Inf and underflow of a nonzero input to zero
// are rejected, literal infinities accepted. The value is rounded to long
// double to nearest even like glibc (including glibc's subnormal quirk,
// see hexTopExp).
func ParseLongDouble(b []byte) (LongDouble, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars || isSpace(b[0]) {
		return LongDouble{}, false
	}
	// An embedded NUL stops strtold early, so it is rejected here.
	s, n := scan(b)
	if n != len(b) {
		return LongDouble{}, false
	}
	switch s.kind {
	case kindNone:
		return LongDouble{}, false // unreachable: n == len(b) > 0
	case kindNaN:
		return LongDouble{}, false
	case kindInf:
		return LongDouble{new(big.Float).SetInf(s.neg)}, true
	}
	x, rangeErr := s.longDouble()
	if rangeErr {
		return LongDouble{}, false
	}
	return x, true
}

// ParseLongDoubleString is ParseLongDouble for strings.
func ParseLongDoubleString(s string) (LongDouble, bool) {
	return ParseLongDouble([]byte(s))
}

// longDouble converts a scanned finite number, rounded like glibc; rangeErr
// is set on overflow to ±Inf and on underflow of a nonzero value to zero.
func (s scanned) longDouble() (x LongDouble, rangeErr bool) {
	zero := new(big.Float)
	if s.neg {
		zero.Neg(zero)
	}
	if len(s.digits) == 0 {
		return LongDouble{zero}, false
	}
	inf := new(big.Float).SetInf(s.neg)
	digits, exp := s.digits, s.exp
	var exact *big.Float
	if s.hex {
		if len(digits) > maxHexDigits {
			exp += 4 * int64(len(digits)-maxHexDigits-1)
			digits = append(digits[:maxHexDigits:maxHexDigits], '1')
		}
		mag := exp + 4*int64(len(digits)) // value in [2^(mag-4), 2^mag)
		switch {
		case mag > ldMaxExp+8:
			return LongDouble{inf}, true
		case mag < ldTinyExp-8:
			return LongDouble{zero}, true
		}
		if hexTopExp(digits, exp) < ldMinExp {
			digits = clearHexBit(digits, ldMantBits+1)
		}
		m, _ := new(big.Int).SetString(string(digits), 16)
		exact = new(big.Float).SetInt(m)
		exact.SetMantExp(exact, int(exp))
	} else {
		keepsAll := glibcKeepsAllDigits(digits, exp, ldMantBits, ldMinExp)
		if len(digits) > maxDecDigits {
			exp += int64(len(digits) - maxDecDigits - 1)
			digits = append(digits[:maxDecDigits:maxDecDigits], '1')
		}
		mag := exp + int64(len(digits)) // value in [10^(mag-1), 10^mag)
		switch {
		case mag > 4940: // > 1.19e4932, the largest long double
			return LongDouble{inf}, true
		case mag < -4960: // < 1.8e-4951, half the smallest subnormal
			return LongDouble{zero}, true
		}
		m, _ := new(big.Int).SetString(string(digits), 10)
		if exp >= 0 {
			m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(exp), nil))
			exact = new(big.Float).SetInt(m)
		} else {
			exact = quoSticky(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(-exp), nil))
			if keepsAll && exact.MantExp(nil) < ldMinExp {
				exact = clearBitFromTop(exact, ldMantBits+1)
			}
		}
	}
	if s.neg {
		exact.Neg(exact)
	}
	r, overflow, underflow := roundLD(exact)
	return LongDouble{r}, overflow || underflow
}

// glibc's strtod family has a quirk for subnormal results: the first bit
// after the full-precision mantissa (bit MANT_DIG+1, counting from the
// leading 1) is dropped instead of being folded into the sticky bits, so
// e.g. strtold("0x1.0000000000000001p-16446") is 0 rather than the
// smallest subnormal. It happens for hexadecimal input, and for decimal
// input short enough that glibc reads all of its digits (longer input sets
// the sticky flag anyway). The helpers below reproduce it.

// hexTopExp returns e such that the hex number digits × 2^exp (digits
// without leading zeros) lies in [2^(e-1), 2^e).
func hexTopExp(digits []byte, exp int64) int64 {
	return exp + int64(4*len(digits)-4+bits.Len8(hexVal(digits[0])))
}

// clearHexBit returns digits with the k-th significant bit (k = 1 is the
// leading 1 bit) cleared, copying if it needs to change anything.
func clearHexBit(digits []byte, k int) []byte {
	lead := bits.Len8(hexVal(digits[0]))
	var idx, bit int // digit index and bit within it
	if k <= lead {
		idx, bit = 0, lead-k
	} else {
		idx, bit = 1+(k-lead-1)/4, 3-(k-lead-1)%4
	}
	if idx >= len(digits) || hexVal(digits[idx])&(1<<bit) == 0 {
		return digits
	}
	out := append([]byte(nil), digits...)
	out[idx] = "0123456789abcdef"[hexVal(digits[idx])&^(1<<bit)]
	return out
}

func hexVal(c byte) uint8 {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// glibcKeepsAllDigits reports whether glibc's decimal conversion of a
// value below 1 uses all of its significant digits (value = digits ×
// 10^exp) instead of cutting them after the ones it needs, which it does
// in the fraction path (need_frac_digits in strtod_l.c).
func glibcKeepsAllDigits(digits []byte, exp int64, mantBits, minExp int64) bool {
	n := int64(len(digits))
	x := exp + n // value = 0.DIGITS × 10^x
	if x > 0 {
		return true
	}
	need := min((1-x)*10/3+1+mantBits, mantBits-minExp+2) + x
	return n <= need
}

// clearBitFromTop returns x with its k-th significant bit cleared.
func clearBitFromTop(x *big.Float, k int) *big.Float {
	mant := new(big.Float)
	e := x.MantExp(mant)
	p := max(int(x.MinPrec()), k)
	mi, _ := mant.SetMantExp(mant, p).Int(nil) // exact: p >= MinPrec
	neg := mi.Sign() < 0
	mi.Abs(mi)
	if mi.Bit(p-k) == 0 {
		return x
	}
	mi.SetBit(mi, p-k, 0)
	r := new(big.Float).SetInt(mi)
	if neg {
		r.Neg(r)
	}
	return r.SetMantExp(r, e-p)
}

// quoSticky returns a/b (a, b > 0) to at least 66 significant bits plus a
// sticky bit that is set when the quotient is inexact: rounding it to 64
// bits or fewer gives the correctly rounded a/b.
func quoSticky(a, b *big.Int) *big.Float {
	k := b.BitLen() - a.BitLen() + 68
	if k < 0 {
		k = 0
	}
	q, r := new(big.Int).QuoRem(new(big.Int).Lsh(a, uint(k)), b, new(big.Int))
	q.Lsh(q, 1)
	if r.Sign() != 0 {
		q.SetBit(q, 0, 1)
	}
	f := new(big.Float).SetInt(q)
	return f.SetMantExp(f, -k-1)
}

// roundLD rounds the finite value x (exact, or carrying a sticky bit below
// the rounding position) to long double, to nearest even, with gradual
// underflow.
func roundLD(x *big.Float) (r *big.Float, overflow, underflow bool) {
	if x.Sign() == 0 {
		return new(big.Float).Set(x), false, false
	}
	e := x.MantExp(nil)
	prec := ldMantBits
	if e < ldMinExp {
		prec = e - ldTinyExp // fewer bits for subnormals
	}
	if prec <= 0 {
		// |x| < 2^-16445, the smallest subnormal: round to it or to 0.
		// Only for |x| in (2^-16446, 2^-16445) is the result nonzero; the
		// tie 2^-16446 goes to the even 0.
		r = new(big.Float)
		if prec == 0 {
			half := new(big.Float).SetMantExp(big.NewFloat(1), ldTinyExp-1)
			if new(big.Float).Abs(x).Cmp(half) > 0 {
				r.SetMantExp(big.NewFloat(1), ldTinyExp)
			}
		}
		if x.Signbit() {
			r.Neg(r)
		}
		return r, false, r.Sign() == 0
	}
	r = new(big.Float).SetMode(big.ToNearestEven).SetPrec(uint(prec)).Set(x)
	if r.MantExp(nil) > ldMaxExp {
		return new(big.Float).SetInf(x.Signbit()), true, false
	}
	return r.SetPrec(ldMantBits), false, false
}

func (x LongDouble) float() *big.Float {
	if x.f == nil {
		return new(big.Float)
	}
	return x.f
}

// IsInf reports whether x is ±Inf.
func (x LongDouble) IsInf() bool { return x.f != nil && x.f.IsInf() }

// Sign returns -1, 0 or +1 (0 for both zeros).
func (x LongDouble) Sign() int { return x.float().Sign() }

// Float64 converts x to the nearest float64 (as a C cast would).
func (x LongDouble) Float64() float64 {
	f, _ := x.float().Float64()
	return f
}

// Add returns x+y rounded to long double, as the x87 FPU computes it. ok is
// false if the sum is NaN (Inf + -Inf); an overflowing sum is ±Inf.
func (x LongDouble) Add(y LongDouble) (sum LongDouble, ok bool) {
	a, b := x.float(), y.float()
	if a.IsInf() || b.IsInf() {
		if a.IsInf() && b.IsInf() && a.Signbit() != b.Signbit() {
			return LongDouble{}, false
		}
		if a.IsInf() {
			return x, true
		}
		return y, true
	}
	switch {
	case a.Sign() == 0 && b.Sign() == 0:
		// -0 + -0 = -0, any other pair of zeros sums to +0.
		z := new(big.Float)
		if a.Signbit() && b.Signbit() {
			z.Neg(z)
		}
		return LongDouble{z}, true
	case a.Sign() == 0:
		return y, true
	case b.Sign() == 0:
		return x, true
	}
	// Exact sum: enough bits to span both operands.
	ea, eb := a.MantExp(nil), b.MantExp(nil)
	la, lb := ea-int(a.MinPrec()), eb-int(b.MinPrec())
	prec := max(ea, eb) - min(la, lb) + 2
	exact := new(big.Float).SetPrec(uint(prec)).Add(a, b)
	r, _, _ := roundLD(exact)
	return LongDouble{r}, true
}

// Human formats x like Redis's ld2string in LD_STR_HUMAN mode, the form
// INCRBYFLOAT and HINCRBYFLOAT store and reply: glibc printf "%.17Lf",
// then trailing zeros and a trailing '.' removed, and "-0" turned into
// "0". Infinities are "inf" and "-inf". Large values print in full, e.g.
// 1e308+1e308 gives a 309-digit integer.
func (x LongDouble) Human() []byte {
	return x.AppendHuman(nil)
}

// AppendHuman appends x.Human() to dst.
func (x LongDouble) AppendHuman(dst []byte) []byte {
	f := x.float()
	if f.IsInf() {
		if f.Signbit() {
			return append(dst, "-inf"...)
		}
		return append(dst, "inf"...)
	}
	start := len(dst)
	// big.Float formats the exact binary value and rounds half to even,
	// like glibc.
	dst = f.Append(dst, 'f', 17)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// String returns x.Human() as a string.
func (x LongDouble) String() string { return string(x.Human()) }

// IncrByFloat computes INCRBYFLOAT: current (nil when the key does not
// exist, which counts as 0; an existing empty string must be passed as a
// non-nil empty slice and is not a valid float) plus incr, in long double
// arithmetic, formatted as Redis stores and replies it (Human). Errors:
// ErrNotFloat if either operand does not parse (see ParseLongDouble), and
// ErrNaNOrInf if the sum is NaN or infinite (this includes an infinite
// operand). Examples: "10.50" + "0.1" = "10.6"; "5.0e3" + "2.0e2" = "5200".
func IncrByFloat(current, incr []byte) ([]byte, error) {
	var cur LongDouble
	if current != nil {
		var ok bool
		if cur, ok = ParseLongDouble(current); !ok {
			return nil, ErrNotFloat
		}
	}
	inc, ok := ParseLongDouble(incr)
	if !ok {
		return nil, ErrNotFloat
	}
	sum, ok := cur.Add(inc)
	if !ok || sum.IsInf() {
		return nil, ErrNaNOrInf
	}
	return sum.Human(), nil
}

// CheckHIncrByFloatIncrement validates HINCRBYFLOAT's increment the way
// Redis does before it even looks the key up (so these errors take
// precedence over WRONGTYPE): ErrNotFloat if it does not parse,
// ErrIncrNaNOrInf if it is infinite.
func CheckHIncrByFloatIncrement(incr []byte) (LongDouble, error) {
	inc, ok := ParseLongDouble(incr)
	if !ok {
		return LongDouble{}, ErrNotFloat
	}
	if inc.IsInf() {
		return LongDouble{}, ErrIncrNaNOrInf
	}
	return inc, nil
}

// HIncrByFloat computes HINCRBYFLOAT on a field: current is the field's
// value (nil when the field does not exist, counting as 0). Errors, in
// Redis's order: those of CheckHIncrByFloatIncrement (call it before the
// type check to get Redis's precedence), ErrHashValueNotFloat if current
// does not parse, ErrNaNOrInf if the sum overflows.
func HIncrByFloat(current, incr []byte) ([]byte, error) {
	inc, err := CheckHIncrByFloatIncrement(incr)
	if err != nil {
		return nil, err
	}
	var cur LongDouble
	if current != nil {
		var ok bool
		if cur, ok = ParseLongDouble(current); !ok {
			return nil, ErrHashValueNotFloat
		}
	}
	sum, ok := cur.Add(inc)
	if !ok || sum.IsInf() {
		return nil, ErrNaNOrInf
	}
	return sum.Human(), nil
}
