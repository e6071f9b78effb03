package jsondoc

import (
	"math"
	"strconv"
)

// Format is JSON.GET's INDENT, NEWLINE and SPACE: the string written per
// level of nesting, after each opening bracket and member, and after each
// colon. The zero Format is compact JSON.
type Format struct {
	Indent, Newline, Space string
}

func (f *Format) compact() bool {
	return f == nil || (f.Indent == "" && f.Newline == "" && f.Space == "")
}

// Append appends v serialized as RedisJSON does (serde_json with its
// formatter): compact by default, strings escaped minimally, floats in
// their shortest form with a ".0" when integral.
func Append(buf []byte, v any, f *Format) []byte {
	if f.compact() {
		return appendCompact(buf, v)
	}
	return appendPretty(buf, v, f, 0)
}

// Marshal is Append to a new buffer.
func Marshal(v any) []byte { return appendCompact(nil, v) }

func appendCompact(buf []byte, v any) []byte {
	switch x := v.(type) {
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendCompact(buf, e)
		}
		return append(buf, ']')
	case *Object:
		buf = append(buf, '{')
		for i, k := range x.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = AppendString(buf, k)
			buf = append(buf, ':')
			buf = appendCompact(buf, x.vals[i])
		}
		return append(buf, '}')
	}
	return appendScalar(buf, v)
}

func appendPretty(buf []byte, v any, f *Format, level int) []byte {
	newline := func(level int) []byte {
		buf = append(buf, f.Newline...)
		for range level {
			buf = append(buf, f.Indent...)
		}
		return buf
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return append(buf, "[]"...)
		}
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = newline(level + 1)
			buf = appendPretty(buf, e, f, level+1)
		}
		buf = newline(level)
		return append(buf, ']')
	case *Object:
		if x.Len() == 0 {
			return append(buf, "{}"...)
		}
		buf = append(buf, '{')
		for i, k := range x.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = newline(level + 1)
			buf = AppendString(buf, k)
			buf = append(buf, ':')
			buf = append(buf, f.Space...)
			buf = appendPretty(buf, x.vals[i], f, level+1)
		}
		buf = newline(level)
		return append(buf, '}')
	}
	return appendScalar(buf, v)
}

func appendScalar(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		if x {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case float64:
		return AppendFloat(buf, x)
	case string:
		return AppendString(buf, x)
	}
	return append(buf, "null"...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaping what serde_json does:
// the quote, the backslash and control characters; non-ASCII stays as is.
func AppendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// AppendFloat formats f as serde_json does (the ryu crate's layout): the
// shortest digits that read back to f, in plain notation while the decimal
// point falls within 16 digits of them ("1.0", "0.001", "1e20" otherwise),
// and always with a fraction or an exponent so it reads back as a float.
func AppendFloat(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, "null"...) // serde_json's choice; never stored
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(buf, "-0.0"...)
		}
		return append(buf, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d.ddde±x
	if e[0] == '-' {
		buf = append(buf, '-')
		e = e[1:]
	}
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	n := len(digits)
	kk := exp + 1 // position of the decimal point relative to the digits
	switch {
	case n <= kk && kk <= 16:
		buf = append(buf, digits...)
		for range kk - n {
			buf = append(buf, '0')
		}
		return append(buf, '.', '0')
	case 0 < kk && kk <= 16:
		buf = append(buf, digits[:kk]...)
		buf = append(buf, '.')
		return append(buf, digits[kk:]...)
	case -5 < kk && kk <= 0:
		buf = append(buf, '0', '.')
		for range -kk {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	buf = append(buf, digits[0])
	if n > 1 {
		buf = append(buf, '.')
		buf = append(buf, digits[1:]...)
	}
	buf = append(buf, 'e')
	return strconv.AppendInt(buf, int64(kk-1), 10)
}
