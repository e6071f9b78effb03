package command

import (
	"context"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The Lua side of functions (function_lua.c in Redis 7.0): compiling a
// library and running its code, which registers its functions.
//
// Library code runs with globals of its own: an empty read-only table whose
// reads go through its metatable's __index. While the code loads, that is
// the load API, which holds nothing but a small redis table
// (register_function, log, the log levels and the version); while one of
// its functions runs, the script globals (script_lua.go), where KEYS and
// ARGV are not set: a function gets them as its two arguments.
//
// A library's functions are closures made by its code, and a closure
// belongs to the Lua state that ran the code. Rather than keep them per
// pooled state, FCALL runs the library's compiled code again (it only
// defines and registers functions, which costs microseconds) and calls the
// callback it registers under the name. So a function starts from the same
// state on every call, on every node and on replay: unlike Redis, local
// variables of the library do not keep values from one call to the next.

// Script flags of functions (and shebangs), in Redis's order (script.c
// scripts_flags_def), which FUNCTION LIST keeps.
var scriptFlagNames = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

const (
	flagNoWrites  = 1 << 0
	flagNoCluster = 1 << 3
)

// errNoCluster answers a script or function flagged no-cluster in cluster
// mode.
const errNoCluster = "ERR Can not run script on cluster, 'no-cluster' flag is set."

// libFunc is a function a library registers.
type libFunc struct {
	name    string
	desc    string
	hasDesc bool
	flags   int // bits in scriptFlagNames' order
}

// registration is a libFunc with its callback, during one run of the
// library's code.
type registration struct {
	libFunc
	fn *lua.LFunction
}

// library is a compiled library with what its code registers, in order.
type library struct {
	name  string
	code  []byte
	proto *lua.FunctionProto
	funcs []libFunc
}

// find returns the index of function name, in any case, or -1.
func (l *library) find(name string) int {
	for i, f := range l.funcs {
		if strings.EqualFold(f.name, name) {
			return i
		}
	}
	return -1
}

// libraries caches compiled libraries by their code (a map lookup costs
// FCALL less than a SHA1 of it), so that FCALL and FUNCTION LIST compile
// nothing; the code in the store is the truth, and a miss compiles it
// again.
var libraries = struct {
	sync.Mutex
	m map[string]*library
}{m: map[string]*library{}}

// maxLibraries bounds the cache: libraries replaced or deleted stay in it
// until it is emptied.
const maxLibraries = 1024

// loadTimeout is how long library code may run while it loads, as Redis's
// LOAD_TIMEOUT_MS.
const loadTimeout = 500 * time.Millisecond

// errLoadTimeout is what a library whose code runs past loadTimeout gets.
const errLoadTimeout = "ERR Error registering functions: ERR FUNCTION LOAD timeout"

// compileLibrary returns the compiled library of code, whose header has
// been parsed already (name), from the cache or by compiling and running
// it; on error it returns Redis's error reply. With limit, the code may
// run only loadTimeout long.
func compileLibrary(name string, code []byte, limit bool) (*library, string) {
	libraries.Lock()
	lib := libraries.m[string(code)]
	libraries.Unlock()
	if lib != nil {
		return lib, ""
	}
	// The first line becomes empty: line numbers stay.
	src := string(code)
	if i := strings.IndexByte(src, '\n'); i >= 0 {
		src = src[i:]
	}
	proto, msg := compileLua(src, code, "user_function", "ERR Error compiling function: ")
	if msg != "" {
		return nil, msg
	}
	lib = &library{name: name, code: append([]byte(nil), code...), proto: proto}
	e := getEnv()
	defer putEnv(e)
	if limit {
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		defer cancel()
		e.L.SetContext(ctx)
	} else {
		e.L.RemoveContext()
	}
	regs, err := e.loadLib(proto, false)
	if err != nil {
		if limit && e.L.Context().Err() != nil {
			return nil, errLoadTimeout
		}
		return nil, "ERR Error registering functions: " + loadError(err)
	}
	if len(regs) == 0 {
		return nil, "ERR No functions registered"
	}
	for _, r := range regs {
		lib.funcs = append(lib.funcs, r.libFunc)
	}
	libraries.Lock()
	if len(libraries.m) >= maxLibraries {
		clear(libraries.m)
	}
	libraries.m[string(lib.code)] = lib
	libraries.Unlock()
	return lib, ""
}

// loadError is the message of an error raised by library code: a Redis
// error object's err field, else "ERR " and the message.
func loadError(err error) string {
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			return string(s)
		}
		return "ERR unknown error"
	}
	return "ERR " + luaString(obj)
}

// openLibEnv builds the globals of library code and the load API.
func (e *luaEnv) openLibEnv() {
	L := e.L
	redis := L.NewTable()
	e.setFuncs(redis, map[string]lua.LGFunction{"register_function": e.registerFunction, "log": e.loadLog})
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3, "REDIS_VERSION_NUM": 0x07000f} {
		redis.RawSetString(name, lua.LNumber(v))
	}
	redis.RawSetString("REDIS_VERSION", lua.LString(RedisVersion))
	// Reading a missing name of the load API is an error, as in Redis.
	strict := L.GetMetatable(e.globals)
	L.SetMetatable(redis, strict)
	api := L.NewTable()
	api.RawSetString("redis", e.protect(redis))
	L.SetMetatable(api, strict)
	e.loadAPI = api

	e.libGlobals = L.NewTable()
	e.libMT = L.NewTable()
	e.libMT.RawSetString("__index", e.globals)
	e.libMT.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	e.libMT.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(e.libGlobals, e.libMT)
	e.protected[e.libGlobals] = true
}

// loadLib runs a library's compiled code and returns what it registers;
// quiet silences its redis.log calls (an FCALL's reload).
func (e *luaEnv) loadLib(proto *lua.FunctionProto, quiet bool) ([]registration, error) {
	var regs []registration
	e.reg, e.quiet = &regs, quiet
	e.libMT.RawSetString("__index", e.loadAPI)
	defer func() {
		e.reg, e.quiet = nil, false
		e.libMT.RawSetString("__index", e.globals)
	}()
	fn := e.L.NewFunctionFromProto(proto)
	fn.Env = e.libGlobals
	e.L.Push(fn)
	err := e.L.PCall(0, 0, nil)
	return regs, err
}

func (e *luaEnv) loadLog(L *lua.LState) int {
	if e.quiet {
		return 0
	}
	return redisLog(L)
}

// luaIsString is lua_isstring: strings and numbers, which it converts.
func luaIsString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return fmtNum14(float64(v)), true
	}
	return "", false
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func (e *luaEnv) registerFunction(L *lua.LState) int {
	if e.reg == nil {
		raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	var r registration
	msg := ""
	switch L.GetTop() {
	case 1:
		msg = namedRegistration(L, &r)
	case 2:
		name, ok := luaIsString(L.Get(1))
		fn, isFn := L.Get(2).(*lua.LFunction)
		switch {
		case !ok:
			msg = "first argument to redis.register_function must be a string"
		case !isFn:
			msg = "second argument to redis.register_function must be a function"
		}
		r.name, r.fn = name, fn
	default:
		msg = "wrong number of arguments to redis.register_function"
	}
	if msg == "" && !validName(r.name) {
		msg = errBadName
	}
	if msg == "" {
		for _, other := range *e.reg {
			if other.name == r.name {
				msg = "Function already exists in the library"
			}
		}
	}
	if msg != "" {
		raise(L, msg)
	}
	*e.reg = append(*e.reg, r)
	return 0
}

// namedRegistration reads register_function's table of named arguments.
func namedRegistration(L *lua.LState, r *registration) string {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	hasName := false
	pairs := tablePairs(t)
	for i := 0; i < len(pairs); i += 2 {
		key, ok := luaIsString(pairs[i])
		if !ok {
			return "named argument key given to redis.register_function is not a string"
		}
		v := pairs[i+1]
		switch strings.ToLower(key) {
		case "function_name":
			if r.name, hasName = luaIsString(v); !hasName {
				return "function_name argument given to redis.register_function must be a string"
			}
		case "description":
			if r.desc, r.hasDesc = luaIsString(v); !r.hasDesc {
				return "description argument given to redis.register_function must be a string"
			}
		case "callback":
			if r.fn, ok = v.(*lua.LFunction); !ok {
				return "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				return "flags argument to redis.register_function must be a table representing function flags"
			}
			if r.flags, ok = readFlags(ft); !ok {
				return "unknown flag given"
			}
		default:
			return "unknown argument given to redis.register_function"
		}
	}
	if !hasName {
		return "redis.register_function must get a function name argument"
	}
	if r.fn == nil {
		return "redis.register_function must get a callback argument"
	}
	return ""
}

// readFlags reads a flags table's array part, up to its first nil.
func readFlags(t *lua.LTable) (int, bool) {
	flags := 0
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaIsString(v)
		if !ok {
			return 0, false
		}
		found := false
		for bit, name := range scriptFlagNames {
			if strings.EqualFold(name, s) {
				flags |= 1 << bit
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// errBadName is Redis 7.0's error for a bad library or function name (it
// says "Library" for both).
const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// validName is functionsVerifyName: letters, digits and underscores, at
// least one.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// runFunction runs function fn of lib for c with keys and args as its two
// arguments, and writes its reply to c.W.
func (e *luaEnv) runFunction(c *Ctx, lib *library, fn string, keys, args [][]byte, readOnly bool) {
	e.invoke(c, fn, "user_function", readOnly, func(L *lua.LState) (int, error) {
		// KEYS and ARGV are not globals of functions.
		e.globals.RawSetString("KEYS", lua.LNil)
		e.globals.RawSetString("ARGV", lua.LNil)
		regs, err := e.loadLib(lib.proto, true)
		if err != nil {
			return 0, err
		}
		for _, r := range regs {
			if r.name == fn {
				L.Push(r.fn)
				L.Push(e.argTable(&e.keys, keys))
				L.Push(e.argTable(&e.args, args))
				return 2, nil
			}
		}
		return 0, &lua.ApiError{Object: errorTable(L, "Function not found")}
	})
}
