package command

import (
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Lua 5.1's wording for the errors a script sees. gopher-lua's parser and
// VM word them their own way; scripts and clients see Redis's Lua 5.1
// texts instead, where gopher-lua's message says enough to write them.

// syntaxMessages maps gopher-lua's parser and lexer messages to Lua 5.1's.
// Lua's parser says more where it knows what it expected ("'end'
// expected"); gopher-lua's says "syntax error" for all of them, which is
// Lua's "unexpected symbol", its most frequent.
var syntaxMessages = map[string]string{
	"syntax error":                  "unexpected symbol",
	"Invalid token":                 "unexpected symbol",
	"Invalid '~' token":             "unexpected symbol",
	"unterminated string":           "unfinished string",
	"unterminated multiline string": "unfinished long string",
	"invalid multiline string":      "invalid long string delimiter",
	"invalid multiline comment":     "unfinished long comment",
	"illegal hexadecimal number":    "malformed number",
}

// compileError formats an error of gopher-lua's parser or compiler as Lua
// 5.1 does: "CHUNK:LINE: message near 'token'".
func compileError(err error, body []byte, chunk string) string {
	switch e := err.(type) {
	case *parse.Error:
		line, near := e.Pos.Line, nearToken(e.Token)
		if line == parse.EOF {
			line, near = strings.Count(string(body), "\n")+1, "<eof>"
		}
		msg := e.Message
		if m, ok := syntaxMessages[msg]; ok {
			msg = m
		}
		return chunk + ":" + strconv.Itoa(line) + ": " + msg + " near '" + near + "'"
	case *lua.CompileError:
		return chunk + ":" + strconv.Itoa(e.Line) + ": " + e.Message
	}
	return chunk + ": " + err.Error()
}

// nearToken is luaX_token2str: a control character reads "char(N)".
func nearToken(tok string) string {
	if len(tok) == 1 && (tok[0] < 32 || tok[0] == 127) {
		return "char(" + strconv.Itoa(int(tok[0])) + ")"
	}
	return tok
}

// chunkID is luaO_chunkid: the name a chunk loaded by loadstring gets in
// its messages. "=name" is name, "@file" the file, and source text reads
// [string "its first line"], cut to fit Lua's 60 bytes.
func chunkID(source string) string {
	const idSize = 60
	if name, ok := strings.CutPrefix(source, "="); ok {
		return name[:min(len(name), idSize-1)]
	}
	if file, ok := strings.CutPrefix(source, "@"); ok {
		if room := idSize - len(" '...' ") - 1; len(file) > room {
			return "..." + file[len(file)-room:]
		}
		return file
	}
	if i := strings.IndexByte(source, 0); i >= 0 {
		source = source[:i] // a C string ends there
	}
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	n = min(n, idSize-len(` [string "..."] `)-1)
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}

// luaDumpHeader is the header of Lua 5.1's binary chunks (on 64-bit
// Linux), all string.dump gives: Redis's Lua loads no binary chunk, so a
// dump is of no use but to fail loading, as there.
const luaDumpHeader = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"

func stringDump(L *lua.LState) int {
	L.CheckFunction(1)
	L.Push(lua.LString(luaDumpHeader))
	return 1
}

// loadstring is Lua 5.1's: the chunk is named after its text (chunkID),
// and a syntax error is returned in Lua's words.
func loadstring(L *lua.LState) int {
	src := L.CheckString(1)
	chunk := chunkID(L.OptString(2, src))
	tree, err := parse.Parse(strings.NewReader(src), chunk)
	var proto *lua.FunctionProto
	if err == nil {
		proto, err = lua.Compile(tree, chunk)
	}
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(compileError(err, []byte(src), chunk)))
		return 2
	}
	L.Push(L.NewFunctionFromProto(proto))
	return 1
}

// runtimeMessages rewrite gopher-lua's runtime errors as Lua 5.1's (lvm.c,
// ldebug.c). Lua also names the variable ("attempt to index local 't' (a
// nil value)"), which gopher-lua cannot tell. Where gopher-lua does not
// give the value's type (a call of a value that is not a function, # and
// unary minus of a wrong type), the message says "a nil value", by far
// the most frequent case.
var runtimeMessages = []struct {
	re   *regexp.Regexp
	with func(m []string) string
}{
	{regexp.MustCompile(`attempt to call a non-function object`), func([]string) string {
		return "attempt to call a nil value"
	}},
	{regexp.MustCompile(`__len undefined`), func([]string) string {
		return "attempt to get length of a nil value"
	}},
	{regexp.MustCompile(`__unm undefined`), func([]string) string {
		return "attempt to perform arithmetic on a nil value"
	}},
	{regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '(?s:.*)'$`), func(m []string) string {
		return "attempt to index a " + m[1] + " value"
	}},
	// gopher-lua has turned numeric strings into numbers: the culprit is
	// the first operand that is not a number.
	{regexp.MustCompile(`cannot perform (?:add|sub|mul|div|mod|pow|unm) operation between (\w+) and (\w+)`), func(m []string) string {
		if m[1] != "number" {
			return "attempt to perform arithmetic on a " + m[1] + " value"
		}
		return "attempt to perform arithmetic on a " + m[2] + " value"
	}},
	{regexp.MustCompile(`cannot perform concat operation between (\w+) and (\w+)`), func(m []string) string {
		if m[1] != "string" && m[1] != "number" {
			return "attempt to concatenate a " + m[1] + " value"
		}
		return "attempt to concatenate a " + m[2] + " value"
	}},
	{regexp.MustCompile(`attempt to compare (\w+) with (\w+)`), func(m []string) string {
		if m[1] == m[2] {
			return "attempt to compare two " + m[1] + " values"
		}
		return m[0]
	}},
	{regexp.MustCompile(`bad argument #(\d+) to (\w+) \(`), func(m []string) string {
		return "bad argument #" + m[1] + " to '" + m[2] + "' ("
	}},
	{regexp.MustCompile(`in table for (\w+)$`), func(m []string) string {
		return "in table for '" + m[1] + "'"
	}},
}

// lua51Error rewrites a runtime error message in Lua 5.1's words.
func lua51Error(msg string) string {
	for _, r := range runtimeMessages {
		if m := r.re.FindStringSubmatchIndex(msg); m != nil {
			parts := make([]string, len(m)/2)
			for i := range parts {
				parts[i] = msg[m[2*i]:m[2*i+1]]
			}
			return msg[:m[0]] + r.with(parts) + msg[m[1]:]
		}
	}
	return msg
}
