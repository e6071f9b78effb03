package command

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson, cmsgpack, struct and bit libraries of Redis's Lua, written
// here: the gopher-lua modules around (gopher-json and the like) are built
// on encoding/json and differ from Lua CJSON where scripts can see it — '/'
// escaped as "\/", numbers as "%.14g", cjson.null, sparse-array and nesting
// checks and their error messages — and no maintained module provides
// lua-cmsgpack's encoding choices or LuaBitOp.

// cjsonNull is cjson.null, a light userdata in Lua CJSON; it converts to a
// nil reply.
var cjsonNull = &lua.LUserData{}

// cjsonConfig is what cjson's configuration functions set. Lua CJSON keeps
// it in its Lua state for good; here it lasts one run (luaEnv.invoke
// restores the defaults), since pooled states and replicas must not
// depend on what an earlier script set.
type cjsonConfig struct {
	encodeMaxDepth, decodeMaxDepth int
	invalidNumbers                 lua.LValue // false, true or "null": NaN and Inf when encoding
	keepBuffer                     lua.LValue // a detail of the C library: changes nothing here
}

var cjsonDefaults = cjsonConfig{encodeMaxDepth: 1000, decodeMaxDepth: 1000, invalidNumbers: lua.LFalse, keepBuffer: lua.LTrue}

func openCjson(L *lua.LState, cfg *cjsonConfig) *lua.LTable {
	*cfg = cjsonDefaults
	t := L.NewTable()
	t.RawSetString("encode", L.NewFunction(cfg.encode))
	t.RawSetString("decode", L.NewFunction(cfg.decode))
	t.RawSetString("null", cjsonNull)
	depth := func(name string, v *int) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			if L.GetTop() > 0 {
				n := luaCheckInt(L, 1, name)
				if n < 1 {
					argError(L, 1, name, "expected integer between 1 and 2147483647")
				}
				*v = n
			}
			L.Push(lua.LNumber(*v))
			return 1
		})
	}
	t.RawSetString("encode_max_depth", depth("encode_max_depth", &cfg.encodeMaxDepth))
	t.RawSetString("decode_max_depth", depth("decode_max_depth", &cfg.decodeMaxDepth))
	option := func(name, extra string, v *lua.LValue) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			if L.GetTop() > 0 {
				*v = cjsonOption(L, name, extra)
			}
			L.Push(*v)
			return 1
		})
	}
	t.RawSetString("encode_invalid_numbers", option("encode_invalid_numbers", "null", &cfg.invalidNumbers))
	t.RawSetString("encode_keep_buffer", option("encode_keep_buffer", "", &cfg.keepBuffer))
	return t
}

// cjsonOption reads an on/off option as Lua CJSON does: a boolean, "on",
// "off" or the option's extra word (none if empty).
func cjsonOption(L *lua.LState, name, extra string) lua.LValue {
	switch v := L.Get(1).(type) {
	case lua.LBool:
		return v
	case lua.LString:
		switch {
		case v == "on":
			return lua.LTrue
		case v == "off":
			return lua.LFalse
		case extra != "" && string(v) == extra:
			return v
		}
	}
	argError(L, 1, name, "invalid option '"+L.ToString(1)+"'")
	return lua.LNil
}

// argError raises Lua 5.1's "bad argument" error (gopher-lua's ArgError
// words it differently).
func argError(L *lua.LState, n int, fn, msg string) {
	raiseC(L, fmt.Sprintf("bad argument #%d to '%s' (%s)", n, fn, msg))
}

// raiseC raises msg as luaL_error does in a C library: with the position
// of the calling Lua code, and none when the caller is a C function, as
// pcall is (gopher-lua's RaiseError looks past Go functions for a
// position).
func raiseC(L *lua.LState, msg string) {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
			L.Error(lua.LString(msg), 0)
		}
	}
	L.RaiseError("%s", msg)
}

func (cfg *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	var b strings.Builder
	if msg := cfg.jsonEncode(&b, L.Get(1), 0); msg != "" {
		raiseC(L, msg)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// jsonEncode appends v's JSON to b, or returns Lua CJSON's error.
func (cfg *cjsonConfig) jsonEncode(b *strings.Builder, v lua.LValue, depth int) string {
	switch v := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		b.WriteString(strconv.FormatBool(bool(v)))
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			switch cfg.invalidNumbers {
			case lua.LFalse:
				return "Cannot serialise number: must not be NaN or Inf"
			case lua.LString("null"):
				b.WriteString("null")
				return ""
			}
			switch { // as Lua CJSON writes them
			case math.IsNaN(f):
				b.WriteString("nan")
			case f > 0:
				b.WriteString("inf")
			default:
				b.WriteString("-inf")
			}
			return ""
		}
		b.WriteString(fmtNum14(f))
	case lua.LString:
		// A table may hold one big string many times (script_memory.go).
		if limit := scriptMaxMemory.Load(); int64(b.Len())+int64(len(v)) > limit {
			return "Cannot serialise: the result would be larger than script-maxmemory (" + strconv.FormatInt(limit, 10) + " bytes)"
		}
		jsonString(b, string(v))
	case *lua.LTable:
		depth++
		if depth > cfg.encodeMaxDepth {
			return "Cannot serialise, excessive nesting (" + strconv.Itoa(depth) + ")"
		}
		return cfg.jsonTable(b, v, depth)
	case *lua.LUserData:
		if v == cjsonNull {
			b.WriteString("null")
			return ""
		}
		return "Cannot serialise userdata: type not supported"
	default:
		return "Cannot serialise " + v.Type().String() + ": type not supported"
	}
	return ""
}

func (cfg *cjsonConfig) jsonTable(b *strings.Builder, t *lua.LTable, depth int) string {
	pairs := tablePairs(t)
	// An array has only positive integer keys and is not too sparse.
	maxIdx, items, array := 0, 0, true
	for i := 0; i < len(pairs) && array; i += 2 {
		n, ok := pairs[i].(lua.LNumber)
		if !ok || float64(n) != math.Floor(float64(n)) || n < 1 {
			array = false
			break
		}
		maxIdx = max(maxIdx, int(n))
		items++
	}
	if array && items > 0 {
		if maxIdx > 10 && maxIdx > items*2 {
			return "Cannot serialise table: excessively sparse array"
		}
		b.WriteByte('[')
		for i := 1; i <= maxIdx; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			if msg := cfg.jsonEncode(b, t.RawGetInt(i), depth); msg != "" {
				return msg
			}
		}
		b.WriteByte(']')
		return ""
	}
	b.WriteByte('{')
	for i := 0; i < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		switch k := pairs[i].(type) {
		case lua.LString:
			jsonString(b, string(k))
		case lua.LNumber:
			jsonString(b, fmtNum14(float64(k)))
		default:
			return "Cannot serialise " + k.Type().String() + ": table key must be a number or string"
		}
		b.WriteByte(':')
		if msg := cfg.jsonEncode(b, pairs[i+1], depth); msg != "" {
			return msg
		}
	}
	b.WriteByte('}')
	return ""
}

func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

func (cfg *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	d := jsonDecoder{L: L, s: L.CheckString(1), maxDepth: cfg.decodeMaxDepth}
	v := d.value(d.next(), 0)
	if tok := d.next(); d.err == "" && tok.kind != "T_END" {
		d.fail("the end", tok)
	}
	if d.err != "" {
		raiseC(L, d.err)
	}
	L.Push(v)
	return 1
}

// jsonDecoder is Lua CJSON's decoder: tokens, with its error messages
// ("Expected value but found T_END at character 1").
type jsonDecoder struct {
	L        *lua.LState
	s        string
	i        int
	err      string
	maxDepth int
}

type jsonToken struct {
	kind string // T_STRING, T_NUMBER... or "invalid token" and the like for T_ERROR
	at   int    // 1-based
	val  lua.LValue
	bad  bool
}

func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	if d.err == "" {
		d.err = "Expected " + expected + " but found " + tok.kind + " at character " + strconv.Itoa(tok.at)
	}
}

func (d *jsonDecoder) next() jsonToken {
	for d.i < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.i]) >= 0 {
		d.i++
	}
	at := d.i + 1
	if d.i >= len(d.s) {
		return jsonToken{kind: "T_END", at: at}
	}
	c := d.s[d.i]
	if k, ok := map[byte]string{'{': "T_OBJ_BEGIN", '}': "T_OBJ_END", '[': "T_ARR_BEGIN", ']': "T_ARR_END", ':': "T_COLON", ',': "T_COMMA"}[c]; ok {
		d.i++
		return jsonToken{kind: k, at: at}
	}
	switch {
	case c == '"':
		return d.str(at)
	case c == '-' || c >= '0' && c <= '9':
		j := d.i
		if c == '-' {
			j++
		}
		digits := func() int {
			k := j
			for j < len(d.s) && d.s[j] >= '0' && d.s[j] <= '9' {
				j++
			}
			return j - k
		}
		ok := digits() > 0
		if j < len(d.s) && d.s[j] == '.' {
			j++
			ok = ok && digits() > 0
		}
		if j < len(d.s) && (d.s[j] == 'e' || d.s[j] == 'E') {
			j++
			if j < len(d.s) && (d.s[j] == '+' || d.s[j] == '-') {
				j++
			}
			ok = ok && digits() > 0
		}
		f, err := strconv.ParseFloat(d.s[d.i:j], 64)
		if !ok || err != nil && !math.IsInf(f, 0) {
			return jsonToken{kind: "invalid number", at: at, bad: true}
		}
		d.i = j
		return jsonToken{kind: "T_NUMBER", at: at, val: lua.LNumber(f)}
	}
	for word, v := range map[string]lua.LValue{"true": lua.LTrue, "false": lua.LFalse, "null": cjsonNull} {
		if strings.HasPrefix(d.s[d.i:], word) {
			d.i += len(word)
			kind := "T_BOOLEAN"
			if word == "null" {
				kind = "T_NULL"
			}
			return jsonToken{kind: kind, at: at, val: v}
		}
	}
	return jsonToken{kind: "invalid token", at: at, bad: true}
}

func (d *jsonDecoder) str(at int) jsonToken {
	var b strings.Builder
	j := d.i + 1
	for {
		if j >= len(d.s) {
			return jsonToken{kind: "unexpected end of string", at: at, bad: true}
		}
		c := d.s[j]
		if c == '"' {
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(d.s) {
			return jsonToken{kind: "unexpected end of string", at: at, bad: true}
		}
		esc := d.s[j+1]
		if r, ok := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[esc]; ok {
			b.WriteByte(r)
			j += 2
			continue
		}
		if esc != 'u' {
			return jsonToken{kind: "invalid escape code", at: at, bad: true}
		}
		r, n := d.unicode(j)
		if n == 0 {
			return jsonToken{kind: "invalid unicode escape code", at: at, bad: true}
		}
		b.WriteString(string(r))
		j += n
	}
	d.i = j + 1
	return jsonToken{kind: "T_STRING", at: at, val: lua.LString(b.String())}
}

// unicode decodes \uXXXX (and a following low surrogate) at s[j:]; it
// returns the rune and the bytes used, 0 if invalid.
func (d *jsonDecoder) unicode(j int) (rune, int) {
	hex := func(k int) (rune, bool) {
		if k+6 > len(d.s) || d.s[k] != '\\' || d.s[k+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(d.s[k+2:k+6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex(j)
	if !ok {
		return 0, 0
	}
	if r >= 0xd800 && r < 0xdc00 {
		lo, ok := hex(j + 6)
		if !ok || lo < 0xdc00 || lo > 0xdfff {
			return 0, 0
		}
		return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12
	}
	if r >= 0xdc00 && r <= 0xdfff || !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, 6
}

func (d *jsonDecoder) value(tok jsonToken, depth int) lua.LValue {
	if d.err != "" {
		return lua.LNil
	}
	switch tok.kind {
	case "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL":
		return tok.val
	case "T_OBJ_BEGIN", "T_ARR_BEGIN":
		depth++
		if depth > d.maxDepth {
			d.err = "Found too many nested data structures (" + strconv.Itoa(depth) + ") at character " + strconv.Itoa(tok.at)
			return lua.LNil
		}
		if tok.kind == "T_ARR_BEGIN" {
			return d.array(depth)
		}
		return d.object(depth)
	}
	d.fail("value", tok)
	return lua.LNil
}

func (d *jsonDecoder) array(depth int) lua.LValue {
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == "T_ARR_END" {
		return t
	}
	for i := 1; d.err == ""; i++ {
		t.RawSetInt(i, d.value(tok, depth))
		tok = d.next()
		if tok.kind == "T_ARR_END" {
			return t
		}
		if tok.kind != "T_COMMA" {
			d.fail("comma or array end", tok)
			break
		}
		tok = d.next()
	}
	return lua.LNil
}

func (d *jsonDecoder) object(depth int) lua.LValue {
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == "T_OBJ_END" {
		return t
	}
	for d.err == "" {
		if tok.kind != "T_STRING" {
			d.fail("object key string", tok)
			break
		}
		key := tok.val
		if tok = d.next(); tok.kind != "T_COLON" {
			d.fail("colon", tok)
			break
		}
		t.RawSet(key, d.value(d.next(), depth))
		tok = d.next()
		if tok.kind == "T_OBJ_END" {
			return t
		}
		if tok.kind != "T_COMMA" {
			d.fail("comma or object end", tok)
			break
		}
		tok = d.next()
	}
	return lua.LNil
}

// The bit library (LuaBitOp): operands are numbers taken modulo 2^32
// (rounded as LuaBitOp does), results signed 32-bit integers.

func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fold := func(op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, bitArg(L, i))
			}
			return bitPush(L, r)
		}
	}
	shift := func(op func(a uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			return bitPush(L, op(bitArg(L, 1), uint(bitArg(L, 2)&31)))
		}
	}
	for name, fn := range map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { return bitPush(L, bitArg(L, 1)) },
		"bnot":    func(L *lua.LState) int { return bitPush(L, ^bitArg(L, 1)) },
		"band":    fold(func(a, b uint32) uint32 { return a & b }),
		"bor":     fold(func(a, b uint32) uint32 { return a | b }),
		"bxor":    fold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  shift(func(a uint32, n uint) uint32 { return a << n }),
		"rshift":  shift(func(a uint32, n uint) uint32 { return a >> n }),
		"arshift": shift(func(a uint32, n uint) uint32 { return uint32(int32(a) >> n) }),
		"rol":     shift(func(a uint32, n uint) uint32 { return bits.RotateLeft32(a, int(n)) }),
		"ror":     shift(func(a uint32, n uint) uint32 { return bits.RotateLeft32(a, -int(n)) }),
		"bswap":   func(L *lua.LState) int { return bitPush(L, bits.ReverseBytes32(bitArg(L, 1))) },
		"tohex": func(L *lua.LState) int {
			b := bitArg(L, 1)
			n := int64(8) // int64: negating int32's minimum must not stay negative
			if L.GetTop() >= 2 {
				n = int64(int32(bitArg(L, 2)))
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n, digits = -n, "0123456789ABCDEF"
			}
			n = min(n, 8)
			buf := make([]byte, n)
			for i := n - 1; i >= 0; i-- {
				buf[i] = digits[b&15]
				b >>= 4
			}
			L.Push(lua.LString(buf))
			return 1
		},
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is LuaBitOp's conversion: add 2^52+2^51 and keep the low 32 bits
// of the double, which rounds to the nearest integer modulo 2^32.
func bitArg(L *lua.LState, i int) uint32 {
	f := float64(L.CheckNumber(i))
	return uint32(math.Float64bits(f + 6755399441055744.0))
}

func bitPush(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// The cmsgpack library (lua-cmsgpack, as Redis ships it): pack encodes
// its arguments one after the other, unpack decodes every value. Integral
// numbers take the smallest integer form, others float32 when exact, else
// float64; a table is an array when its keys are 1..n without holes.

const msgpackMaxNesting = 16

func openCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return msgpackUnpack(L, L.CheckString(1), 0, 0) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, L.CheckString(1), 1, L.OptInt(2, 0))
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, L.CheckString(1), L.CheckInt(2), L.OptInt(3, 0))
	}))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = msgpackEncode(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func msgpackEncode(b []byte, v lua.LValue, depth int) []byte {
	switch v := v.(type) {
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LString:
		return msgpackString(b, string(v))
	case lua.LNumber:
		return msgpackNumber(b, float64(v))
	case *lua.LTable:
		if depth >= msgpackMaxNesting {
			return append(b, 0xc0)
		}
		return msgpackTable(b, v, depth+1)
	}
	return append(b, 0xc0)
}

func msgpackString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 256:
		b = append(b, 0xd9, byte(n))
	case n < 65536:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

func msgpackNumber(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<64 && !math.IsInf(f, 0) {
		if f >= 0 {
			u := uint64(f)
			switch {
			case u < 128:
				return append(b, byte(u))
			case u < 256:
				return append(b, 0xcc, byte(u))
			case u < 65536:
				return append(b, 0xcd, byte(u>>8), byte(u))
			case u < 1<<32:
				return append(b, 0xce, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
			}
			if f < 1<<63 {
				return binary64(append(b, 0xcf), u)
			}
		} else {
			i := int64(f)
			switch {
			case i >= -32:
				return append(b, byte(i))
			case i >= -128:
				return append(b, 0xd0, byte(i))
			case i >= -32768:
				return append(b, 0xd1, byte(i>>8), byte(i))
			case i >= -(1 << 31):
				return append(b, 0xd2, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
			}
			return binary64(append(b, 0xd3), uint64(i))
		}
	}
	if float64(float32(f)) == f || math.IsNaN(f) {
		u := math.Float32bits(float32(f))
		return append(b, 0xca, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	}
	return binary64(append(b, 0xcb), math.Float64bits(f))
}

func binary64(b []byte, u uint64) []byte {
	return append(b, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

func msgpackTable(b []byte, t *lua.LTable, depth int) []byte {
	pairs := tablePairs(t)
	n := len(pairs) / 2
	maxIdx, array := 0, true
	for i := 0; i < len(pairs); i += 2 {
		k, ok := pairs[i].(lua.LNumber)
		if !ok || float64(k) != math.Trunc(float64(k)) || k < 1 {
			array = false
			break
		}
		maxIdx = max(maxIdx, int(k))
	}
	if array && maxIdx == n {
		b = msgpackHeader(b, n, 0x90, 0xdc, 0xdd)
		for i := 1; i <= n; i++ {
			b = msgpackEncode(b, t.RawGetInt(i), depth)
		}
		return b
	}
	b = msgpackHeader(b, n, 0x80, 0xde, 0xdf)
	for i := 0; i < len(pairs); i += 2 {
		b = msgpackEncode(b, pairs[i], depth)
		b = msgpackEncode(b, pairs[i+1], depth)
	}
	return b
}

func msgpackHeader(b []byte, n int, fix, c16, c32 byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n < 65536:
		return append(b, c16, byte(n>>8), byte(n))
	}
	return append(b, c32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// msgpackUnpack decodes up to limit values (0: all) from s[offset:]. With
// a limit, it first returns the offset of what is left, or -1.
func msgpackUnpack(L *lua.LState, s string, limit, offset int) int {
	if offset < 0 || offset > len(s) {
		L.ArgError(2, "offset must be within the string")
	}
	d := msgpackDecoder{L: L, s: s, i: offset}
	var vals []lua.LValue
	for d.i < len(s) && (limit == 0 || len(vals) < limit) {
		vals = append(vals, d.value())
		if d.err != "" {
			L.RaiseError("%s", d.err)
		}
	}
	if limit > 0 {
		next := d.i
		if next >= len(s) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range vals {
		L.Push(v)
	}
	if limit > 0 {
		return len(vals) + 1
	}
	return len(vals)
}

type msgpackDecoder struct {
	L        *lua.LState
	s        string
	i        int
	err      string
	maxDepth int
}

// take returns the next n bytes, or sets the error.
func (d *msgpackDecoder) take(n int) string {
	if d.err != "" || d.i+n > len(d.s) {
		if d.err == "" {
			d.err = "Missing bytes in input."
		}
		return ""
	}
	out := d.s[d.i : d.i+n]
	d.i += n
	return out
}

func (d *msgpackDecoder) uint(n int) uint64 {
	var u uint64
	for _, c := range []byte(d.take(n)) {
		u = u<<8 | uint64(c)
	}
	return u
}

func (d *msgpackDecoder) value() lua.LValue {
	t := d.take(1)
	if t == "" {
		return lua.LNil
	}
	c := t[0]
	switch {
	case c < 0x80:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xf0 == 0x80:
		return d.table(int(c&0x0f), true)
	case c&0xf0 == 0x90:
		return d.table(int(c&0x0f), false)
	case c&0xe0 == 0xa0:
		return lua.LString(d.take(int(c & 0x1f)))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xcc, 0xcd, 0xce, 0xcf:
		return lua.LNumber(d.uint(1 << (c - 0xcc)))
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(int64(d.uint(8)))
	case 0xd9, 0xc4:
		return lua.LString(d.take(int(d.uint(1))))
	case 0xda, 0xc5:
		return lua.LString(d.take(int(d.uint(2))))
	case 0xdb, 0xc6:
		return lua.LString(d.take(int(d.uint(4))))
	case 0xdc:
		return d.table(int(d.uint(2)), false)
	case 0xdd:
		return d.table(int(d.uint(4)), false)
	case 0xde:
		return d.table(int(d.uint(2)), true)
	case 0xdf:
		return d.table(int(d.uint(4)), true)
	}
	if d.err == "" {
		d.err = "Bad data format in input."
	}
	return lua.LNil
}

func (d *msgpackDecoder) table(n int, isMap bool) lua.LValue {
	if n > len(d.s)-d.i { // each element takes a byte at least
		d.err = "Missing bytes in input."
		return lua.LNil
	}
	t := d.L.CreateTable(0, 0)
	for i := 1; i <= n && d.err == ""; i++ {
		if !isMap {
			t.RawSetInt(i, d.value())
			continue
		}
		k := d.value()
		v := d.value()
		if k != lua.LNil {
			t.RawSet(k, v)
		}
	}
	return t
}

// The struct library (Roberto Ierusalimschy's struct.c, as Redis ships
// it): pack(fmt, ...), unpack(fmt, s [, init]) and size(fmt). Formats:
// < > = endianness, ![n] alignment, x padding, b B h H l L T i[n] I[n]
// integers, f d floats, c[n] fixed strings (c0: the whole string, or in
// unpack the length from the previous value), s zero-terminated strings.

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// structItem is one format option: its letter and size.
type structItem struct {
	opt  byte
	size int
}

// structParser walks a format string, keeping endianness and alignment.
type structParser struct {
	L      *lua.LState
	fn     string
	fmt    string
	i      int
	little bool
	align  int
}

func newStructParser(L *lua.LState, fn string) *structParser {
	return &structParser{L: L, fn: fn, fmt: L.CheckString(1), little: true, align: 1}
}

func (p *structParser) number(def int) int {
	if p.i >= len(p.fmt) || p.fmt[p.i] < '0' || p.fmt[p.i] > '9' {
		return def
	}
	n := 0
	for p.i < len(p.fmt) && p.fmt[p.i] >= '0' && p.fmt[p.i] <= '9' {
		n = n*10 + int(p.fmt[p.i]-'0')
		p.i++
	}
	return n
}

// next returns the next item that takes room, or false at the end.
func (p *structParser) next() (structItem, bool) {
	for p.i < len(p.fmt) {
		c := p.fmt[p.i]
		p.i++
		switch c {
		case ' ':
		case '<', '=':
			p.little = true
		case '>':
			p.little = false
		case '!':
			p.align = p.number(8)
		case 'x', 'b', 'B':
			return structItem{c, 1}, true
		case 'h', 'H':
			return structItem{c, 2}, true
		case 'l', 'L', 'T', 'd':
			return structItem{c, 8}, true
		case 'f':
			return structItem{c, 4}, true
		case 'i', 'I':
			n := p.number(4)
			if n < 1 || n > 32 {
				p.L.RaiseError("integral size %d is larger than limit of 32", n)
			}
			return structItem{c, n}, true
		case 'c':
			return structItem{c, p.number(1)}, true
		case 's':
			return structItem{c, 0}, true
		default:
			argError(p.L, 1, p.fn, "invalid format option '"+string(c)+"'")
		}
	}
	return structItem{}, false
}

// pad is how many bytes align an item at offset n.
func (p *structParser) pad(it structItem, n int) int {
	a := it.size
	if a <= 1 || it.opt == 'c' || it.opt == 's' {
		return 0
	}
	a = min(a, p.align)
	if a&(a-1) != 0 {
		argError(p.L, 1, p.fn, "alignment must be power of 2")
	}
	return (a - n&(a-1)) & (a - 1)
}

func (p *structParser) putInt(b []byte, f float64, size int) []byte {
	v := uint64(f)
	if f < 0 {
		v = uint64(int64(f))
	}
	buf := make([]byte, size)
	for i := range size {
		c := byte(0) // past 8 bytes, struct.c pads with zeros whatever the sign
		if i < 8 {
			c = byte(v >> (8 * i))
		}
		if p.little {
			buf[i] = c
		} else {
			buf[size-1-i] = c
		}
	}
	return append(b, buf...)
}

func structPack(L *lua.LState) int {
	p := newStructParser(L, "pack")
	var b []byte
	arg := 2
	for {
		it, ok := p.next()
		if !ok {
			break
		}
		for range p.pad(it, len(b)) {
			b = append(b, 0)
		}
		switch it.opt {
		case 'x':
			b = append(b, 0)
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = p.putInt(b, float64(L.CheckNumber(arg)), it.size)
			arg++
		case 'f', 'd':
			f := float64(L.CheckNumber(arg))
			arg++
			var u uint64
			if it.opt == 'f' {
				u = uint64(math.Float32bits(float32(f)))
			} else {
				u = math.Float64bits(f)
			}
			buf := make([]byte, it.size)
			for i := range it.size {
				if p.little {
					buf[i] = byte(u >> (8 * i))
				} else {
					buf[it.size-1-i] = byte(u >> (8 * i))
				}
			}
			b = append(b, buf...)
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			n := it.size
			if it.opt == 's' || n == 0 {
				n = len(s)
			}
			if len(s) < n {
				argError(L, arg-1, "pack", "string too short")
			}
			b = append(b, s[:n]...)
			if it.opt == 's' {
				b = append(b, 0)
			}
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func structUnpack(L *lua.LState) int {
	p := newStructParser(L, "unpack")
	data := L.CheckString(2)
	pos := L.OptInt(3, 1) - 1
	if pos < 0 || pos > len(data) {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	var vals []lua.LValue
	need := func(n int) {
		if pos+n > len(data) {
			argError(L, 2, "unpack", "data string too short")
		}
	}
	for {
		it, ok := p.next()
		if !ok {
			break
		}
		pos += p.pad(it, pos)
		switch it.opt {
		case 'x':
			need(1)
			pos++
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I', 'f', 'd':
			need(it.size)
			var u uint64
			for i := range min(it.size, 8) {
				c := data[pos+i]
				if !p.little {
					c = data[pos+it.size-1-i]
				}
				u |= uint64(c) << (8 * i)
			}
			pos += it.size
			switch {
			case it.opt == 'f':
				vals = append(vals, lua.LNumber(math.Float32frombits(uint32(u))))
			case it.opt == 'd':
				vals = append(vals, lua.LNumber(math.Float64frombits(u)))
			case it.opt == 'b' || it.opt == 'h' || it.opt == 'l' || it.opt == 'i':
				if it.size < 8 && u&(1<<(8*it.size-1)) != 0 {
					u |= ^uint64(0) << (8 * it.size) // sign-extend
				}
				vals = append(vals, lua.LNumber(int64(u)))
			default:
				vals = append(vals, lua.LNumber(u))
			}
		case 'c':
			n := it.size
			if n == 0 {
				prev, ok := lua.LNil, false
				if len(vals) > 0 {
					prev = vals[len(vals)-1]
					_, ok = prev.(lua.LNumber)
				}
				if !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				n = int(prev.(lua.LNumber))
				vals = vals[:len(vals)-1]
			}
			need(n)
			vals = append(vals, lua.LString(data[pos:pos+n]))
			pos += n
		case 's':
			end := strings.IndexByte(data[pos:], 0)
			if end < 0 {
				L.RaiseError("unfinished string in data")
			}
			vals = append(vals, lua.LString(data[pos:pos+end]))
			pos += end + 1
		}
	}
	for _, v := range vals {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(vals) + 1
}

func structSize(L *lua.LState) int {
	p := newStructParser(L, "size")
	n := 0
	for {
		it, ok := p.next()
		if !ok {
			break
		}
		if it.opt == 's' || it.opt == 'c' && it.size == 0 {
			argError(L, 1, "size", "options 'c0' - 's' have undefined sizes")
		}
		n += p.pad(it, n) + it.size
	}
	L.Push(lua.LNumber(n))
	return 1
}
