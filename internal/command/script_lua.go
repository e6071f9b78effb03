package command

import (
	"basalt/internal/cluster"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"basalt/internal/num"
	"basalt/internal/resp"

	lua "github.com/yuin/gopher-lua"
)

// The Lua environment of scripts, as Redis 7.0 builds it (script_lua.c): the
// base library less what reaches outside (no io, os, debug, print, dofile,
// require...), string, table, math, coroutine, cjson, cmsgpack, struct, bit,
// and the redis library. Globals are read-only: creating or changing one
// raises "Attempt to modify a readonly table" and reading a missing one
// raises "Script attempted to access nonexistent global variable".
// gopher-lua has no read-only tables, so scripts see proxies: empty tables
// whose metatable reads from the real table and refuses writes.

// luaEnv is one Lua state with its libraries and what the script being
// run needs. States are reused (building one costs about 100 µs): a run
// changes nothing in them but KEYS, ARGV and the random generator, which
// the next run sets again.
type luaEnv struct {
	L         *lua.LState
	globals   *lua.LTable // the real globals; scripts see proxy
	proxy     *lua.LTable
	protected map[*lua.LTable]bool // proxies, for rawset and setmetatable
	handler   *lua.LFunction
	pcg       *rand.PCG
	rng       *rand.Rand
	cjson     cjsonConfig
	w         *resp.Writer // replies of redis.call
	// What redis.call's arguments are carved from (argv).
	argBuf   []byte
	argHeads [][]byte

	// Function libraries (function_lua.go): library code reads its
	// globals through libMT's __index, loadAPI while it loads and the
	// script globals while its functions run.
	libGlobals, libMT, loadAPI *lua.LTable
	reg                        *[]registration // while library code loads
	quiet                      bool            // redis.log does nothing (an FCALL's reload)

	// The run in progress.
	c        *Ctx
	kr       *scriptRun // nil if the run may not be stopped
	kctx     *killCtx   // the context of the env's killable runs
	sha      string     // the script's SHA1, or the function's name
	chunk    string     // "user_script" or "user_function"
	readOnly bool
	resp     int
	calls    uint64
	errLine  int
	keys     *lua.LTable // KEYS and ARGV, reused from run to run (argTable)
	args     *lua.LTable
	addrs    map[lua.LValue]int // what tostring shows for tables and functions
	sub      Ctx                // of the command redis.call runs
}

var envPool struct {
	sync.Mutex
	free []*luaEnv
}

func getEnv() *luaEnv {
	envPool.Lock()
	defer envPool.Unlock()
	if n := len(envPool.free); n > 0 {
		e := envPool.free[n-1]
		envPool.free = envPool.free[:n-1]
		return e
	}
	return newEnv()
}

func putEnv(e *luaEnv) {
	envPool.Lock()
	defer envPool.Unlock()
	if len(envPool.free) < 8 { // more than the apply loop and a few readers need
		envPool.free = append(envPool.free, e)
	}
}

// baseAllowed are the base library's globals Redis 7.0 keeps.
var baseAllowed = []string{"xpcall", "tostring", "setmetatable", "next", "assert", "tonumber",
	"rawequal", "collectgarbage", "getmetatable", "rawset", "pcall", "type", "select", "unpack",
	"pairs", "rawget", "loadstring", "ipairs", "load", "error"}

func newEnv() *luaEnv {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: 1024 * 20, RegistryMaxSize: 1 << 22})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{"", lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	pcg := rand.NewPCG(0, 0)
	e := &luaEnv{L: L, globals: L.NewTable(), protected: map[*lua.LTable]bool{}, addrs: map[lua.LValue]int{}, pcg: pcg, rng: rand.New(pcg), w: resp.NewWriter(2), kctx: newKillCtx()}
	opened := L.G.Global
	for _, name := range baseAllowed {
		e.globals.RawSetString(name, opened.RawGetString(name))
	}
	e.globals.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	e.setFuncs(e.globals, map[string]lua.LGFunction{
		"pcall": e.pcall, "error": luaErrorFn, "loadstring": loadstring, "rawset": e.guard(opened.RawGetString("rawset")),
		"setmetatable": e.guard(opened.RawGetString("setmetatable")), "tostring": e.tostring(opened.RawGetString("tostring")),
		"getmetatable": e.getmetatable(opened.RawGetString("getmetatable")),
		// The memory count differs from node to node: scripts see 0.
		"collectgarbage": func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 },
	})
	e.guardStringLib(opened.RawGetString("string").(*lua.LTable), opened.RawGetString("table").(*lua.LTable))
	e.setFuncs(opened.RawGetString("string").(*lua.LTable), map[string]lua.LGFunction{"dump": stringDump})
	math := opened.RawGetString("math").(*lua.LTable)
	e.setFuncs(math, map[string]lua.LGFunction{"random": e.random, "randomseed": e.randomseed})
	e.globals.RawSetString("cjson", openCjson(L, &e.cjson))
	e.globals.RawSetString("bit", openBit(L))
	e.globals.RawSetString("cmsgpack", openCmsgpack(L))
	e.globals.RawSetString("struct", openStruct(L))
	e.globals.RawSetString("redis", e.openRedis())
	for _, name := range []string{"string", "table", "math", "coroutine", "cjson", "bit", "cmsgpack", "struct", "redis"} {
		lib := opened.RawGetString(name)
		if lib == lua.LNil {
			lib = e.globals.RawGetString(name)
		}
		e.globals.RawSetString(name, e.protect(lib.(*lua.LTable)))
	}
	// Reading a missing global is an error, not nil.
	strict := L.NewTable()
	strict.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	L.SetMetatable(e.globals, strict)
	e.proxy = e.protect(e.globals)
	// In Redis _G has a metatable, read-only like _G; getmetatable sees a
	// read-only stand-in, so t stays out of reach.
	e.proxy.Metatable.(*lua.LTable).RawSetString("__metatable", e.protect(L.NewTable()))
	// String methods ("x"):upper() read the string library through its
	// proxy too, and the metatable itself is hidden.
	smt := L.GetMetatable(lua.LString("")).(*lua.LTable)
	smt.RawSetString("__index", e.globals.RawGetString("string"))
	smt.RawSetString("__metatable", lua.LFalse)
	e.globals.RawSetString("_G", e.proxy)
	L.G.Global, L.Env = e.proxy, e.proxy // what loadstring'd code sees
	e.handler = L.NewFunction(e.onError)
	e.openLibEnv()
	return e
}

func (e *luaEnv) setFuncs(t *lua.LTable, fns map[string]lua.LGFunction) {
	for name, fn := range fns {
		t.RawSetString(name, e.L.NewFunction(fn))
	}
}

const errReadonly = "Attempt to modify a readonly table"

// protect returns a read-only proxy of t.
func (e *luaEnv) protect(t *lua.LTable) *lua.LTable {
	proxy := e.L.NewTable()
	mt := e.L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", e.L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse) // getmetatable can't reach t
	e.L.SetMetatable(proxy, mt)
	e.protected[proxy] = true
	return proxy
}

// guard wraps rawset or setmetatable so that they refuse protected
// tables; Lua raises that error from inside the C function, so it carries
// no position.
// Both return their table, as in Lua 5.1 (gopher-lua's rawset returns
// nothing).
func (e *luaEnv) guard(orig lua.LValue) lua.LGFunction {
	fn := orig.(*lua.LFunction).GFunction
	return func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && e.protected[t] {
			L.Error(lua.LString(errReadonly), 0)
		}
		fn(L)
		L.Push(L.Get(1))
		return 1
	}
}

// getmetatable answers nil for the protected library tables, which have
// none in Redis (their proxies' metatables are hidden behind false).
func (e *luaEnv) getmetatable(orig lua.LValue) lua.LGFunction {
	fn := orig.(*lua.LFunction).GFunction
	return func(L *lua.LState) int {
		fn(L)
		if t, ok := L.Get(1).(*lua.LTable); ok && e.protected[t] && L.Get(-1) == lua.LFalse {
			L.Pop(1)
			L.Push(lua.LNil)
		}
		return 1
	}
}

// luaErrorFn is Lua 5.1's error: a number message gets the position too,
// and error() raises nil.
func luaErrorFn(L *lua.LState) int {
	obj := L.Get(1)
	if n, ok := obj.(lua.LNumber); ok {
		obj = lua.LString(fmtNum14(float64(n)))
	}
	if s, ok := obj.(lua.LString); ok {
		obj = lua.LString(luaWhere(L, L.OptInt(2, 1)) + string(s))
	}
	L.Error(obj, 0)
	return 0
}

// luaWhere is luaL_where: the position of the function level calls up
// (1: the one that called error), or nothing if that is not a Lua
// function, such as what runs the script.
func luaWhere(L *lua.LState, level int) string {
	if level <= 0 {
		return ""
	}
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": "
}

// tostring formats numbers as Lua 5.1 does ("%.14g"); gopher-lua prints
// them in full (concatenation still does). Tables, functions and the like
// print a number counted within the run instead of their address, so that
// a script storing one gives the same data on every replica and replay.
func (e *luaEnv) tostring(orig lua.LValue) lua.LGFunction {
	fn := orig.(*lua.LFunction)
	return func(L *lua.LState) int {
		switch v := L.Get(1).(type) {
		case lua.LNumber:
			L.Push(lua.LString(fmtNum14(float64(v))))
			return 1
		case *lua.LTable, *lua.LFunction, *lua.LUserData, *lua.LState:
			if L.GetMetaField(v, "__tostring") == lua.LNil {
				n, ok := e.addrs[v]
				if !ok {
					n = len(e.addrs) + 1
					e.addrs[v] = n
				}
				L.Push(lua.LString(fmt.Sprintf("%s: 0x%08x", v.Type(), n)))
				return 1
			}
		}
		return fn.GFunction(L)
	}
}

// pcall is Redis's: an error raised by redis.call (a table with an err
// field) reaches the script as its message string.
func (e *luaEnv) pcall(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(1, "value expected")
	}
	if err := L.PCall(n-1, lua.MultRet, nil); err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if e.killed() { // it is raised again at the next instruction
			obj = lua.LString(e.kr.why)
		}
		switch v := obj.(type) {
		case *lua.LTable:
			if s, ok := v.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		case lua.LString:
			obj = lua.LString(lua51Error(string(v)))
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// onError is the error handler of a run: it notes the line of the
// innermost Lua function, which Redis appends to the error reply.
func (e *luaEnv) onError(L *lua.LState) int {
	e.errLine = -1
	for i := 0; ; i++ {
		dbg, ok := L.GetStack(i)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.What != "G" && dbg.CurrentLine >= 0 {
			e.errLine = dbg.CurrentLine
			break
		}
	}
	return 1
}

func (e *luaEnv) random(L *lua.LState) int {
	r := e.rng.Float64()
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := luaCheckInt(L, 1, "random")
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := luaCheckInt(L, 1, "random"), luaCheckInt(L, 2, "random")
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *luaEnv) randomseed(L *lua.LState) int {
	e.pcg.Seed(uint64(luaCheckInt(L, 1, "randomseed")), 0)
	return 0
}

// luaCheckInt is Lua's luaL_checkint, which takes a numeric string too
// (gopher-lua's CheckInt refuses it).
func luaCheckInt(L *lua.LState, n int, fn string) int {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return int(v)
	case lua.LString:
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64); err == nil {
			return int(f)
		}
	}
	argError(L, n, fn, "number expected, got "+L.Get(n).Type().String())
	return 0
}

// run runs script s for c and writes its reply (or error) to c.W.
func (e *luaEnv) run(c *Ctx, s *script, keys, args [][]byte, readOnly bool) {
	e.invoke(c, s.sha, "user_script", readOnly, func(L *lua.LState) (int, error) {
		e.globals.RawSetString("KEYS", e.argTable(&e.keys, keys))
		e.globals.RawSetString("ARGV", e.argTable(&e.args, args))
		fn := L.NewFunctionFromProto(s.proto)
		fn.Env = e.proxy
		L.Push(fn)
		return 0, nil
	})
}

// invoke runs code for c and writes its reply (or error) to c.W: push
// pushes the Lua function to call and its arguments and returns how many
// arguments it pushed. name is the script's SHA1 or the function's name and
// chunk the chunk name, for error messages.
func (e *luaEnv) invoke(c *Ctx, name, chunk string, readOnly bool, push func(L *lua.LState) (int, error)) {
	e.c, e.sha, e.chunk, e.readOnly, e.resp, e.calls, e.errLine = c, name, chunk, readOnly, 2, 0, -1
	clear(e.addrs)
	db := c.Tx.DB
	L := e.L
	// A run may be stopped (see script_kill.go) if the leader applies it
	// for a client, or if it runs on a read view; never when a record is
	// applied from the log. The VM then checks a context at every
	// instruction, which costs a few percent of pure Lua loops.
	e.kr = nil
	if c.live || c.rec == nil {
		e.kr = startRun(c.live, e.kctx)
		L.SetContext(e.kctx)
	} else {
		L.RemoveContext()
	}
	defer func() {
		c.Tx.DB = db // SELECT inside a script doesn't change the caller's
		e.c = nil
		if e.kr != nil {
			endRun(e.kr)
			e.kr = nil
		}
	}()
	e.pcg.Seed(c.Seed, c.Seed>>1|1)
	e.cjson = cjsonDefaults
	nargs, err := push(L)
	if err == nil {
		err = L.PCall(nargs, 1, e.handler)
	}
	if err != nil {
		if e.killed() {
			e.writeKilled(c)
			return
		}
		e.writeError(c.W, err)
		return
	}
	ret := L.Get(-1)
	L.Pop(1)
	e.reply(c.W, ret, 0)
}

// argTable returns a table holding vals, for KEYS or ARGV: *t, the one
// the env's last run got, if that run left it plain (plainArray), else a
// new one. A run cannot keep a reference to it for the next to see (the
// globals are read-only, and nothing else outlives the run), and a plain
// table refilled is in the very state of a new one, so reusing it shows
// nowhere; but values it holds already are not converted again.
func (e *luaEnv) argTable(t **lua.LTable, vals [][]byte) *lua.LTable {
	tb := *t
	if tb == nil || !plainArray(tb) {
		tb = e.L.CreateTable(len(vals), 0)
		*t = tb
	}
	for range tb.MaxN() - len(vals) {
		tb.Remove(-1)
	}
	for i, v := range vals {
		if old, ok := tb.RawGetInt(i + 1).(lua.LString); !ok || string(old) != string(v) {
			tb.RawSetInt(i+1, lua.LString(v)) // in place, or appended
		}
	}
	return tb
}

// plainArray reports whether t holds nothing but its array part, whose
// last slot is not nil (table.remove would see such a slot), and has no
// metatable. An empty t is not plain: it could hold nil slots.
func plainArray(t *lua.LTable) bool {
	n := t.MaxN()
	if n == 0 || t.Metatable != lua.LNil {
		return false
	}
	last := t.Remove(-1) // the last slot, which MaxN does not tell
	if last == lua.LNil {
		return false
	}
	t.RawSetInt(n, last)           // appended back
	k, _ := t.Next(lua.LNumber(n)) // the first key past the array part
	return k == lua.LNil
}

// killed reports whether the run was stopped.
func (e *luaEnv) killed() bool {
	if e.kr == nil {
		return false
	}
	e.kr.mu.Lock()
	defer e.kr.mu.Unlock()
	return e.kr.killed
}

// writeKilled answers Redis's error for a stopped script. In the apply
// loop the script wrote nothing (or the shard is halted), and its command
// in the record becomes a script that only returns that error: the log
// never holds a stopped script.
func (e *luaEnv) writeKilled(c *Ctx) {
	msg := e.kr.why + " script: " + e.sha + ", on @" + e.chunk + ":" + strconv.Itoa(max(e.errLine, 0)) + "."
	c.W.Error(msg)
	if c.rec != nil {
		c.Args[0] = []byte("eval") // an FCALL too
		c.Args[1] = killedScript(msg)
		c.Args[2] = []byte("0") // the keys left are ARGV now: unused
	}
}

// killedScript is the body of a script that returns the error msg.
func killedScript(msg string) []byte {
	return []byte("return redis.error_reply(" + strconv.Quote(msg) + ")")
}

// writeError writes the reply of a script that raised an error, with the
// script and line as Redis adds them.
func (e *luaEnv) writeError(w *resp.Writer, err error) {
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	var msg string
	if t, ok := obj.(*lua.LTable); ok {
		if t.RawGetString(errCounted) == lua.LTrue {
			w.ErrorsCounted++
		}
		s, ok := t.RawGetString("err").(lua.LString)
		if !ok {
			s = "ERR unknown error"
		}
		msg = string(s)
	} else {
		msg = "ERR " + lua51Error(luaString(obj))
	}
	line := e.errLine
	if line < 0 {
		// The handler could not run (the Lua stack overflowed): take the
		// line from the message's position.
		prefix := "ERR " + e.chunk + ":"
		pos, _, _ := strings.Cut(strings.TrimPrefix(msg, prefix), ":")
		if n, err := strconv.Atoi(pos); err == nil && strings.HasPrefix(msg, prefix) {
			line = n
		}
	}
	if line >= 0 {
		msg += " script: " + e.sha + ", on @" + e.chunk + ":" + strconv.Itoa(line) + "."
	}
	w.Error(msg)
}

// luaString is tostring(v) for an error value.
func luaString(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return fmtNum14(float64(n))
	}
	return v.String()
}

// reply converts a script's return value to a reply, as Redis does:
// numbers truncate to integers, true is 1 and false nil (RESP2), a table is
// an error ({err=}), a status ({ok=}), one of the RESP3 forms, or an array
// up to its first nil.
func (e *luaEnv) reply(w *resp.Writer, v lua.LValue, depth int) {
	if depth > 1000 {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		switch {
		case e.resp == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(luaInt(float64(v)))
	case *lua.LTable:
		e.replyTable(w, v, depth)
	default:
		w.Null()
	}
}

func (e *luaEnv) replyTable(w *resp.Writer, t *lua.LTable, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		if t.RawGetString(errCounted) == lua.LTrue {
			w.ErrorsCounted++
		}
		w.Error(string(s))
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		b := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s))
		if w.Proto >= 3 {
			w.Raw([]byte("(" + b + "\r\n"))
		} else {
			w.BulkString(b)
		}
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, okf := vt.RawGetString("format").(lua.LString)
		s, oks := vt.RawGetString("string").(lua.LString)
		if okf && oks {
			w.Verbatim(string(f), string(s))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		pairs := tablePairs(m)
		w.MapLen(len(pairs) / 2)
		for _, v := range pairs {
			e.reply(w, v, depth+1)
		}
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		pairs := tablePairs(s)
		w.SetLen(len(pairs) / 2)
		for i := 0; i < len(pairs); i += 2 {
			e.reply(w, pairs[i], depth+1)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.ArrayLen(n)
	for i := 1; i <= n; i++ {
		e.reply(w, t.RawGetInt(i), depth+1)
	}
}

// tablePairs lists t's keys and values in pairs() order. gopher-lua's
// ForEach walks Go maps in random order: never use it where order shows.
func tablePairs(t *lua.LTable) []lua.LValue {
	var out []lua.LValue
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		out = append(out, k, v)
	}
	return out
}

// luaInt is C's (long long) cast of a Lua number as Redis's x86 build
// does it: out of range and NaN give the smallest integer.
func luaInt(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// fmtNum14 is Lua 5.1's number format, "%.14g".
func fmtNum14(f float64) string { return fmtG(f, 14) }

// fmtG is C's "%.Ng".
func fmtG(f float64, prec int) string {
	var buf [32]byte
	return string(appendG(buf[:0], f, prec))
}

// appendG appends f formatted as C's "%.Ng" to b.
func appendG(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// The redis library.

func (e *luaEnv) openRedis() *lua.LTable {
	L := e.L
	t := L.NewTable()
	e.setFuncs(t, map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return e.call(L, true) },
		"pcall":              func(L *lua.LState) int { return e.call(L, false) },
		"sha1hex":            redisSha1hex,
		"error_reply":        redisErrorReply,
		"status_reply":       redisStatusReply,
		"log":                redisLog,
		"setresp":            e.setresp,
		"set_repl":           redisSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      e.aclCheckCmd,
	})
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3, "REDIS_VERSION_NUM": 0x07000f} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(RedisVersion))
	return t
}

// errorTable is Redis's error object: {err="CODE message"}. msg is either
// "-CODE message" (a reply) or a plain message, which gets the code ERR.
func errorTable(L *lua.LState, msg string) *lua.LTable {
	code := "ERR"
	if rest, ok := strings.CutPrefix(msg, "-"); ok {
		if c, m, ok := strings.Cut(rest, " "); ok {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(code+" "+strings.Trim(msg, "\r\n")))
	return t
}

// errCounted marks an error object made from a redis.call's error, which
// was counted as an error reply already: a script that returns or raises
// it fails, but its reply is not counted again (Redis's
// ignore_error_stats_update).
const errCounted = "ignore_error_stats_update"

// raise raises a Redis error object: it carries no position of its own.
func raise(L *lua.LState, msg string) {
	L.Error(errorTable(L, msg), 0)
}

// Chunks the arguments of redis.call are carved from (see argv).
const (
	argChunk  = 4096 // bytes
	headChunk = 256  // arguments
)

// argv converts redis.call's arguments; numbers are formatted "%.17g" so
// that no precision is lost. A command may keep its arguments, so their
// memory is never written again once handed out; but rather than two
// allocations per call, they are carved from chunks that the env keeps
// until they are used up (cap-limited, so that an append by a command
// reallocates instead of overwriting the next call's).
func (e *luaEnv) argv(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	size := 0
	for i := 1; i <= n; i++ {
		if v, ok := L.Get(i).(lua.LString); ok {
			size += len(v)
		} else {
			size += 24 // a number's %.17g
		}
	}
	if cap(e.argBuf)-len(e.argBuf) < size {
		e.argBuf = make([]byte, 0, max(argChunk, size))
	}
	if cap(e.argHeads)-len(e.argHeads) < n {
		e.argHeads = make([][]byte, 0, max(headChunk, n))
	}
	buf := e.argBuf
	argv := e.argHeads[len(e.argHeads) : len(e.argHeads)+n : len(e.argHeads)+n]
	for i := range argv {
		start := len(buf)
		switch v := L.Get(i + 1).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendG(buf, float64(v), 17)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		argv[i] = buf[start:len(buf):len(buf)]
	}
	e.argBuf, e.argHeads = buf, e.argHeads[:len(e.argHeads)+n]
	return argv, ""
}

// call is redis.call (raise) and redis.pcall: it runs a command on the
// script's view of the key space and converts its reply to Lua.
func (e *luaEnv) call(L *lua.LState, raiseErr bool) int {
	if e.c == nil {
		raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	argv, msg := e.argv(L)
	if msg == "" {
		msg = e.execObserved(argv)
	}
	if msg != "" {
		t := errorTable(L, msg)
		t.RawSetString(errCounted, lua.LTrue)
		if raiseErr {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	v, _ := parseReply(L, e.w.Buf, 0)
	if t, ok := v.(*lua.LTable); ok && len(e.w.Buf) > 0 && e.w.Buf[0] == '-' {
		t.RawSetString(errCounted, lua.LTrue)
		if raiseErr {
			L.Error(t, 0)
		}
	}
	L.Push(v)
	return 1
}

// execObserved is exec, timed and told to the Host when a client's script
// (not a replayed one) ran the command.
func (e *luaEnv) execObserved(argv [][]byte) string {
	host := e.c.Host
	if host == nil || !e.c.live && e.c.rec != nil {
		return e.exec(argv)
	}
	start := time.Now()
	msg := e.exec(argv)
	if msg == "" {
		host.ScriptCalled(e.c.Tx.DB, Lookup(argv[0]), argv, int64(time.Since(start)), e.w.Buf)
	} else if e.kr == nil || msg != "-"+e.kr.why {
		host.ScriptRefused(refusedCommand(argv), msg)
	}
	return msg
}

// refusedCommand is the command (or subcommand) a refused redis.call
// named, nil if none: Redis counts the refusal as its rejected call.
func refusedCommand(argv [][]byte) *Command {
	cmd := Lookup(argv[0])
	if cmd == nil || len(cmd.Subcommands) == 0 || len(argv) < 2 {
		return cmd
	}
	return cmd.Subcommand(argv[1])
}

// exec runs one command for redis.call into e.w, or returns why it may not
// run.
func (e *luaEnv) exec(argv [][]byte) string {
	cmd := Lookup(argv[0])
	if cmd != nil && cmd.Name == "cluster" && !e.c.Tx.Clustered() {
		return clusterDisabled(argv)
	}
	if cmd == nil {
		return "Unknown Redis command called from script"
	}
	if !cmd.ArityOK(len(argv)) {
		return "Wrong number of args calling Redis command from script"
	}
	flags := cmd.Flags
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		sub := cmd.Subcommand(argv[1])
		if sub == nil {
			return "Unknown Redis command called from script"
		}
		if !sub.ArityOK(len(argv)) {
			return "Wrong number of args calling Redis command from script"
		}
		flags |= sub.Flags
	}
	if flags&NoScript != 0 || cmd.Run == nil && cmd.Name != "select" && cmd.Name != "publish" {
		return "This Redis command is not allowed from script"
	}
	if msg := e.checkACL(cmd, argv); msg != "" {
		return msg
	}
	if cmd.Name == "publish" {
		return e.publish(argv)
	}
	if cmd.IsWrite() && (e.readOnly || !e.c.Tx.Writable()) {
		return "Write commands are not allowed from read-only scripts."
	}
	if e.c.Tx.Clustered() {
		if msg := e.checkSlots(cmd, argv); msg != "" {
			return msg
		}
	}
	e.w.Reset()
	e.w.Proto = e.resp
	if cmd.Name == "select" {
		applySelect(e.c.Tx, argv[1], e.w)
		return ""
	}
	if e.kr != nil {
		return e.execKillable(cmd, argv, flags)
	}
	e.runSub(cmd, argv)
	return ""
}

// execKillable is exec's end for a run that may be stopped. SCRIPT KILL
// waits for the command, and may not stop the script once it called a
// write command (as Redis) or changed anything (a read deleting an expired
// key). (Apart from exec, so that the defers are open-coded: exec returns
// in too many places.)
func (e *luaEnv) execKillable(cmd *Command, argv [][]byte, flags Flags) string {
	r, tx := e.kr, e.c.Tx
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killed {
		return "-" + r.why
	}
	if flags&Write != 0 {
		r.dirty = true
	}
	defer func(before int) {
		if tx.Writes() != before {
			r.dirty = true
		}
	}(tx.Writes())
	e.runSub(cmd, argv)
	return ""
}

// runSub runs the command of redis.call into e.w.
func (e *luaEnv) runSub(cmd *Command, argv [][]byte) {
	c := e.c
	e.sub = Ctx{Tx: c.Tx, Args: argv, W: e.w, Seed: c.Seed + e.calls + 1, Host: c.Host, rec: c.rec, live: c.live, script: true}
	runCmd(cmd, &e.sub)
	e.calls++
}

// luaOK is the status of most write commands, boxed once.
var luaOK lua.LValue = lua.LString("OK")

// parseReply converts the reply at b[i:] to Lua, as Redis converts a
// command's reply for redis.call; it returns the value and where the next
// reply begins.
func parseReply(L *lua.LState, b []byte, i int) (lua.LValue, int) {
	end := i + indexCRLF(b[i:])
	line := b[i+1 : end]
	next := end + 2
	switch b[i] {
	case '+':
		ok := luaOK
		if string(line) != "OK" {
			ok = lua.LString(line)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", ok)
		return t, next
	case '-':
		return errorTable(L, "-"+string(line)), next
	case ':':
		n, _ := num.ParseInt(line)
		return lua.LNumber(n), next
	case '$', '=':
		n, _ := num.ParseInt(line)
		if n < 0 {
			return lua.LFalse, next
		}
		s := b[next : next+int(n)]
		next += int(n) + 2
		if b[i] == '$' {
			return lua.LString(s), next
		}
		vt := L.CreateTable(0, 2)
		vt.RawSetString("string", lua.LString(s[4:]))
		vt.RawSetString("format", lua.LString(s[:3]))
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", vt)
		return t, next
	case '*', '~', '>':
		n, _ := num.ParseInt(line)
		if n < 0 {
			return lua.LFalse, next
		}
		if b[i] != '~' {
			arr := L.CreateTable(int(n), 0)
			for j := 1; j <= int(n); j++ {
				var v lua.LValue
				v, next = parseReply(L, b, next)
				arr.RawSetInt(j, v)
			}
			return arr, next
		}
		set := L.CreateTable(0, int(n))
		for range n {
			var v lua.LValue
			v, next = parseReply(L, b, next)
			set.RawSet(v, lua.LTrue)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", set)
		return t, next
	case '%':
		n, _ := num.ParseInt(line)
		m := L.CreateTable(0, int(n))
		for range n {
			var k, v lua.LValue
			k, next = parseReply(L, b, next)
			v, next = parseReply(L, b, next)
			m.RawSet(k, v)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t, next
	case '_':
		return lua.LNil, next
	case '#':
		return lua.LBool(string(line) == "t"), next
	case ',':
		f, _ := strconv.ParseFloat(string(line), 64)
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, next
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, next
	}
	return lua.LNil, next
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return len(b)
}

func redisSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "wrong number of arguments")
	}
	s := ""
	switch v := L.Get(1).(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber:
		s = fmtNum14(float64(v))
	}
	L.Push(lua.LString(SHA1Hex([]byte(s))))
	return 1
}

func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	msg := string(s)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(errorTable(L, msg))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

// redisLog is redis.log: Redis's levels go to slog (verbose as debug,
// notice as info).
func redisLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := luaNumber(L.Get(1))
	if !ok {
		raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < 0 || level > 3 {
		raise(L, "Invalid debug level.")
	}
	var parts []string
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			parts = append(parts, string(v))
		case lua.LNumber:
			parts = append(parts, fmtNum14(float64(v)))
		}
	}
	slevel := [...]slog.Level{slog.LevelDebug, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[level]
	slog.Log(context.Background(), slevel, strings.Join(parts, " "), "source", "script")
	return 0
}

// luaNumber is lua_isnumber/lua_tonumber: numbers and numeric strings.
func luaNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		f, ok := num.ParseFloat([]byte(strings.TrimSpace(string(v))))
		return f, ok
	}
	return 0, false
}

func (e *luaEnv) setresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.setresp() requires one argument.")
	}
	n, _ := luaNumber(L.Get(1))
	if n != 2 && n != 3 {
		raise(L, "RESP version must be 2 or 3.")
	}
	e.resp = int(n)
	return 0
}

// redisSetRepl checks its argument as Redis does; scripts are replicated
// as whole records, so the flags change nothing.
func redisSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.set_repl() requires two arguments.")
	}
	n, _ := luaNumber(L.Get(1))
	if int(n)&^3 != 0 {
		raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

func (e *luaEnv) aclCheckCmd(L *lua.LState) int {
	argv, msg := e.argv(L)
	if msg != "" {
		raise(L, msg)
	}
	cmd := Lookup(argv[0])
	if cmd == nil {
		raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if sub := cmd.Subcommand(argv[1]); sub != nil {
			cmd = sub
		}
	}
	if !cmd.ArityOK(len(argv)) {
		raise(L, "Invalid number of arguments")
	}
	rules := e.c.acl()
	L.Push(lua.LBool(rules == "" || e.c.Host == nil || e.c.Host.ScriptACL(rules, cmd, argv, false) == ""))
	return 1
}

// checkACL refuses a call the script's user may not make.
func (e *luaEnv) checkACL(cmd *Command, argv [][]byte) string {
	rules := e.c.acl()
	if rules == "" || e.c.Host == nil {
		return ""
	}
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		cmd = cmd.Subcommand(argv[1])
	}
	return e.c.Host.ScriptACL(rules, cmd, argv, e.c.live || e.c.rec == nil)
}

// checkSlots is Redis Cluster's rule for a script's calls
// (scriptVerifyClusterState): every key it touches is served by this
// shard. (Redis 7.0 lets scripts without a shebang touch keys of several
// slots of the node; basalt lets every script, within its shard.) It
// depends only on the record and the shard's slots, so replicas and
// replays decide alike.
func (e *luaEnv) checkSlots(cmd *Command, argv [][]byte) string {
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		cmd = cmd.Subcommand(argv[1])
	}
	for _, k := range cmd.SlotKeys(argv) {
		if !e.c.Tx.OwnsSlot(cluster.KeySlot(k)) {
			return "Script attempted to access a non local key in a cluster node"
		}
	}
	return ""
}
