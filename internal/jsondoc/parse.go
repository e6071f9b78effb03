package jsondoc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting Parse accepts, as serde_json (the parser
// RedisJSON uses) limits recursion to 128 levels.
const MaxDepth = 128

// Parse reads one JSON value (RFC 8259, surrounding whitespace allowed).
// Integers that fit in 64 bits are int64, other numbers float64; object keys
// keep their order (a repeated key keeps its first place and its last
// value). Errors read like serde_json's: "expected value at line 1 column 1".
func Parse(b []byte) (any, error) {
	return parse(b, false)
}

// ParseStored parses a document that Marshal wrote: the same grammar, but
// it skips the checks Marshal's output always passes (repeated keys,
// UTF-8), which makes the parse each JSON command starts with cheaper.
func ParseStored(b []byte) (any, error) {
	return parse(b, true)
}

func parse(b []byte, trusted bool) (any, error) {
	p := parser{b: b, trusted: trusted}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(p.b) {
		return nil, p.errAt("trailing characters", p.i)
	}
	return v, nil
}

type parser struct {
	b       []byte
	i       int
	trusted bool // input from Marshal: no repeated keys, valid UTF-8
	// Members of the objects and arrays being read, copied into slices of
	// the exact size at each closing bracket (fewer allocations than
	// growing each container).
	keys []string
	vals []any
}

// errAt builds an error for byte offset at, with serde_json's 1-based line
// and column.
func (p *parser) errAt(msg string, at int) error {
	line, col := 1, 0
	for j := 0; j < at && j < len(p.b); j++ {
		if p.b[j] == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
	}
	if at < len(p.b) {
		col++
	}
	return fmt.Errorf("%s at line %d column %d", msg, line, col)
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.i >= len(p.b) {
		return nil, p.errAt("EOF while parsing a value", p.i)
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, p.errAt("recursion limit exceeded", p.i)
		}
		return p.object(depth + 1)
	case c == '[':
		if depth >= MaxDepth {
			return nil, p.errAt("recursion limit exceeded", p.i)
		}
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.ident("true")
	case c == 'f':
		return false, p.ident("false")
	case c == 'n':
		return nil, p.ident("null")
	}
	return nil, p.errAt("expected value", p.i)
}

func (p *parser) ident(word string) error {
	for j := 0; j < len(word); j++ {
		if p.i >= len(p.b) {
			return p.errAt("EOF while parsing a value", p.i)
		}
		if p.b[p.i] != word[j] {
			return p.errAt("expected ident", p.i)
		}
		p.i++
	}
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	o := NewObject()
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return o, nil
	}
	km, vm := len(p.keys), len(p.vals)
	defer func() { p.keys, p.vals = p.keys[:km], p.vals[:vm] }()
	for {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errAt("EOF while parsing an object", p.i)
		}
		if p.b[p.i] != '"' {
			return nil, p.errAt("key must be a string", p.i)
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errAt("EOF while parsing an object", p.i)
		}
		if p.b[p.i] != ':' {
			return nil, p.errAt("expected `:`", p.i)
		}
		p.i++
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.keys, p.vals = append(p.keys, k), append(p.vals, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errAt("EOF while parsing an object", p.i)
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			if p.trusted {
				o.keys = append([]string(nil), p.keys[km:]...)
				o.vals = append([]any(nil), p.vals[vm:]...)
			} else {
				for j, k := range p.keys[km:] {
					o.SetValueForKey(k, p.vals[vm+j])
				}
			}
			return o, nil
		default:
			return nil, p.errAt("expected `,` or `}`", p.i)
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return []any{}, nil
	}
	mark := len(p.vals)
	defer func() { p.vals = p.vals[:mark] }()
	for {
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.vals = append(p.vals, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errAt("EOF while parsing a list", p.i)
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return append([]any(nil), p.vals[mark:]...), nil
		default:
			return nil, p.errAt("expected `,` or `]`", p.i)
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.i
	isFloat := false
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i >= len(p.b) {
		return nil, p.errAt("EOF while parsing a value", p.i)
	}
	if p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errAt("invalid number", p.i)
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		isFloat = true
		p.i++
		if digits() == 0 {
			return nil, p.errAt("invalid number", p.i)
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		isFloat = true
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errAt("invalid number", p.i)
		}
	}
	text := string(p.b[start:p.i])
	if !isFloat {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			if n == 0 && text[0] == '-' {
				return math.Copysign(0, -1), nil // serde_json reads -0 as a float
			}
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) {
		return nil, p.errAt("number out of range", start)
	}
	return f, nil
}

func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if !p.trusted && !utf8.Valid(s) {
				return "", p.errAt("invalid unicode code point", start)
			}
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errAt("control character (\\u0000-\\u001F) found while parsing a string", p.i)
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", p.errAt("invalid unicode code point", start)
			}
			return string(buf), nil
		case c < 0x20:
			return "", p.errAt("control character (\\u0000-\\u001F) found while parsing a string", p.i)
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			break
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errAt("invalid escape", p.i)
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one code point; a lone surrogate is an error.
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					r2, ok := p.hex4()
					if !ok {
						return "", p.errAt("invalid escape", p.i)
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
				if r == utf8.RuneError {
					return "", p.errAt("lone leading surrogate in hex escape", p.i)
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errAt("invalid escape", p.i-1)
		}
	}
	return "", p.errAt("EOF while parsing a string", p.i)
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}
