package compat

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestScripting compares EVAL and friends with Redis 7.0: reply conversions
// both ways, errors and their positions, the redis library, cjson, bit,
// global protection, the script cache and read-only scripts.
func TestScripting(t *testing.T) {
	p := newPair(t)

	t.Run("LuaToReply", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			EVAL 'return 1' 0
			EVAL 'return 3.99' 0
			EVAL 'return -3.99' 0
			EVAL 'return 2^63' 0
			EVAL 'return -2^63' 0
			EVAL 'return 1/0' 0
			EVAL 'return 0/0' 0
			EVAL 'return "hello"' 0
			EVAL 'return ""' 0
			EVAL 'return true' 0
			EVAL 'return false' 0
			EVAL 'return nil' 0
			EVAL 'return {}' 0
			EVAL 'return {1,2,3,nil,4}' 0
			EVAL 'return {1,"a",true,false,{2,{3}}}' 0
			EVAL 'return {1, 2.5, "x", {ok="fine"}, {err="bad"}}' 0
			EVAL 'return {ok="good"}' 0
			EVAL 'return {ok="line\r\nbreak"}' 0
			EVAL 'return {err="bad thing"}' 0
			EVAL 'return {err="-no code"}' 0
			EVAL 'return {err=1}' 0
			EVAL 'return {ok=1}' 0
			EVAL 'return {err="x", ok="y"}' 0
			EVAL 'return {ok="y", 1, 2}' 0
			EVAL 'return redis.error_reply("My Error")' 0
			EVAL 'return redis.error_reply("-ERR My Error")' 0
			EVAL 'return redis.error_reply("")' 0
			EVAL 'return redis.error_reply()' 0
			EVAL 'return redis.error_reply(1)' 0
			EVAL 'return redis.status_reply("FINE")' 0
			EVAL 'return redis.status_reply()' 0
			EVAL 'return {type(KEYS), #KEYS, #ARGV, KEYS[1], ARGV[2]}' 2 k1 k2 a1 a2 a3
			EVAL 'KEYS[1] = "z"; return KEYS[1]' 1 a
			EVAL 'return cjson.null' 0
			EVAL 'return {1, cjson.null, 3}' 0
			EVAL 'return print' 0
			EVAL 'return select("#", ...)' 0
			EVAL 'local t = {...} return #t' 0
			EVAL 'return arg' 0
			EVAL 'local function f(...) return {arg.n, arg[2]} end return f(1, 2)' 0
		`)
	})

	t.Run("ReplyToLua", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s str
			RPUSH l a b c
			HSET h f v
			EVAL 'return redis.call("set", KEYS[1], ARGV[1])' 1 k v
			EVAL 'return redis.call("get", KEYS[1])' 1 k
			EVAL 'return redis.call("get", "nokey")' 0
			EVAL 'return type(redis.call("get", "nokey"))' 0
			EVAL 'return {redis.call("get", "nokey")}' 0
			EVAL 'return redis.call("incr", "n")' 0
			EVAL 'return type(redis.call("incr", "n"))' 0
			EVAL 'return redis.call("lrange", "l", 0, -1)' 0
			EVAL 'return #redis.call("lrange", "l", 0, -1)' 0
			EVAL 'return redis.call("hgetall", "h")' 0
			EVAL 'return redis.call("hgetall", "nokey")' 0
			EVAL 'return redis.call("ping")' 0
			EVAL 'return redis.call("ping").ok' 0
			EVAL 'return type(redis.call("set", "x", "y"))' 0
			EVAL 'return redis.call("set", "x", 1.5)' 0
			EVAL 'redis.call("set", "x", 0.1); return redis.call("get", "x")' 0
			EVAL 'redis.call("set", "x", 0.1+0.2); return redis.call("get", "x")' 0
			EVAL 'redis.call("set", "x", 1e15+0.5); return redis.call("get", "x")' 0
			EVAL 'redis.call("set", "x", 10000000000000000000); return redis.call("get", "x")' 0
			EVAL 'redis.call("set", "x", 1/0); return redis.call("get", "x")' 0
			EVAL 'redis.call("set", "x", -0.0); return redis.call("get", "x")' 0
			EVAL 'return redis.call("incrbyfloat", "f", "0.1")' 0
			EVAL 'return redis.pcall("lpush", "s", "x")' 0
			EVAL 'local r = redis.pcall("lpush", "s", "x"); return type(r) .. r.err' 0
			EVAL 'return redis.pcall("nosuch")' 0
			EVAL 'return redis.pcall("get")' 0
			EVAL 'return redis.pcall()' 0
			EVAL 'return redis.call("time")[1] > "0"' 0
			EVAL 'redis.call("select", 1); return redis.call("set", "indb1", "x")' 0
			EXISTS indb1
			SELECT 1
			GET indb1
			SELECT 0
			EVAL 'return redis.call("spop", "nokey")' 0
		`)
	})

	t.Run("Errors", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET s str
			EVAL 'return redis.call("nosuch")' 0
			EVAL 'return redis.call("get")' 0
			EVAL 'return redis.call("get", "a", "b")' 0
			EVAL 'return redis.call("lpush", "s", "x")' 0
			EVAL 'return redis.call("set", "x", "y", "z")' 0
			EVAL 'return redis.call("blpop", "x", 0)' 0
			EVAL 'return redis.call("multi")' 0
			EVAL 'return redis.call("eval", "return 1", 0)' 0
			EVAL 'return redis.call("script", "load", "return 1")' 0
			EVAL 'return redis.call("config", "get", "maxmemory")' 0
			EVAL 'return redis.call()' 0
			EVAL 'return redis.call(1)' 0
			EVAL 'return redis.call("set", "x", {})' 0
			EVAL 'return redis.call("set", "x", nil)' 0
			EVAL 'return error("boom")' 0
			EVAL 'error("lvl0", 0)' 0
			EVAL 'error(42)' 0
			EVAL 'error()' 0
			EVAL 'error(nil)' 0
			EVAL 'error({err="MYERR custom"})' 0
			EVAL 'return pcall(function() redis.call("nosuch") end)' 0
			EVAL 'local ok, e = pcall(function() redis.call("nosuch") end); return e' 0
			EVAL 'local ok, e = pcall(function() redis.call("lpush", "s", "x") end); return e' 0
			EVAL 'local ok, e = pcall(function() redis.call("lpush", "s", "x") end); return type(e)' 0
			EVAL 'local ok, e = pcall(function() error("x") end); return e' 0
			EVAL 'return {pcall(function() return 1, 2 end)}' 0
			EVAL 'return redis.sha1hex("")' 0
			EVAL 'return redis.sha1hex("abc")' 0
			EVAL 'return redis.sha1hex()' 0
			EVAL 'return redis.setresp(4)' 0
			EVAL 'return redis.setresp()' 0
			EVAL 'return redis.set_repl(redis.REPL_ALL)' 0
			EVAL 'return redis.set_repl(8)' 0
			EVAL 'return redis.set_repl()' 0
			EVAL 'return redis.replicate_commands()' 0
			EVAL 'return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_SLAVE, redis.REPL_ALL}' 0
			EVAL 'return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}' 0
			EVAL 'redis.log(redis.LOG_DEBUG, "from a script", 1)' 0
			EVAL 'redis.log(99, "hello")' 0
			EVAL 'redis.log(redis.LOG_WARNING)' 0
			EVAL 'redis.log("x", "y")' 0
			EVAL 'return 1' 1
			EVAL 'return 1' -1
			EVAL 'return 1' abc
			EVAL 'return 1' 2 a
			EVALSHA 'return 1' 0
		`)
		// Errors on a later line report that line.
		d.Do("EVAL", "local a = 1\nlocal b = 2\nreturn redis.call('nosuch')", "0")
		d.Do("EVAL", "local function f()\n  error('deep')\nend\nf()", "0")
		d.Do("EVAL", "\n\nerror('third')", "0")
		d.Do("EVAL", "local function f(n) return 1 + f(n + 1) end\nreturn f(1)", "0")
	})

	// Lua 5.1's wording of compile and runtime errors, from EVAL, pcall,
	// error's levels and loadstring, where gopher-lua's own differs.
	t.Run("LuaWording", func(t *testing.T) {
		d := p.diff(t)
		for _, script := range []string{
			"return 1 +",
			"x = = 1",
			"return 'abc",
			"return [[abc",
			"--[[ abc",
			"return 0x",
			"return @",
			"\n\nreturn ]",
			"return (nil)()",
			"return (nil).x",
			"return (true)[1]",
			"return #(nil)",
			"return -(nil)",
			"return 1 + {}",
			"return nil * 2",
			"return '10' + nil",
			"return 'a' .. {}",
			"return 1 .. nil",
			"return {} < {}",
			"return 1 < 'x'",
			"return math.floor('a')",
			"return table.insert(nil, 1)",
			"return table.concat({{}})",
			"return {pcall(function() return nil .. 'x' end)}",
			"return {pcall(function() return (5).x end)}",
			"error('msg', 1)",
			"error('msg', 2)",
			"local function f() error('msg', 2) end\nf()",
			"return {pcall(function() error('m', 2) end)}",
			"return loadstring(string.dump(function() return 1 end))()",
			"return type(string.dump(function() return 1 end))",
			"return loadstring('return 7')()",
			"return {loadstring('x = = 1')}",
			"return {loadstring('return \"abc\\nx', 'chunky')}",
			"return {loadstring('if x then', '=named')}",
			"return {loadstring('return 1 + 2 +', '@file.lua')}",
			"return {loadstring(string.rep('x', 80) .. ' =')}",
			"return {pcall(loadstring('error(\"in chunk\")'))}",
			"return {pcall(loadstring('return nil + 1', '=mine'))}",
		} {
			d.Do("EVAL", script, "0")
		}
	})

	t.Run("Globals", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			EVAL 'x = 5' 0
			EVAL 'redis = 5' 0
			EVAL 'KEYS = 1' 0
			EVAL 'redis.call = nil' 0
			EVAL 'string.foo = 1' 0
			EVAL 'cjson.encode = 1' 0
			EVAL 'setmetatable(_G, nil)' 0
			EVAL 'return y' 0
			EVAL 'return _G.x' 0
			EVAL 'return rawget(_G, "x")' 0
			EVAL 'return os' 0
			EVAL 'return io' 0
			EVAL 'return dofile' 0
			EVAL 'return require' 0
			EVAL 'return debug' 0
			EVAL 'return _VERSION' 0
			EVAL 'local t = {}; t.x = 1; return t.x' 0
			EVAL 'return loadstring("return 1")()' 0
			EVAL 'return type(loadstring)' 0
			EVAL 'return {type(cjson), type(bit), type(math), type(string), type(table), type(coroutine), type(cmsgpack)}' 0
			EVAL 'return {type(pcall), type(xpcall), type(unpack), type(select), type(tonumber), type(next)}' 0
			EVAL 'return tostring(0.1+0.2)' 0
			EVAL 'return tostring(1/3)' 0
			EVAL 'return tostring(1e100)' 0
			EVAL 'return tostring(2^53)' 0
			EVAL 'return tostring(-1/0)' 0
			EVAL 'return tonumber("0x10")' 0
			EVAL 'return string.format("%5.2f", 3.14159)' 0
			EVAL 'return string.rep("ab", 3)' 0
			EVAL 'return table.concat({1, 2, 3}, ",")' 0
			EVAL 'return math.floor(3.7)' 0
			EVAL 'return ("abc"):upper()' 0
			EVAL 'local ok = pcall(function() getmetatable("").__index.upper = nil end); return {ok, ("x"):upper()}' 0
			EVAL 'local ok = pcall(function() rawset(_G, "x", 1) end); return ok' 0
			EVAL 'local ok = pcall(function() rawset(string, "x", 1) end); return ok' 0
			EVAL 'local t = setmetatable({}, {__index = function(t, k) return k .. "!" end}); return t.hi' 0
			EVAL 'return rawset({}, "a", 1).a' 0
			EVAL 'return math.random() < 1' 0
			EVAL 'local r = math.random(10); return r >= 1 and r <= 10' 0
			EVAL 'local r = math.random(5, 6); return r >= 5 and r <= 6' 0
			EVAL 'local g = getmetatable(_G) g.__index = {}' 0
			EVAL 'return type(getmetatable(_G))' 0
			EVAL 'return {getmetatable(redis) == nil, getmetatable(cjson) == nil}' 0
			EVAL 'setmetatable(_G, {})' 0
			EVAL 'math.randomseed(ARGV[1]); local a = math.random() math.randomseed(ARGV[1]); return a == math.random()' 0 10
			EVAL 'math.randomseed("x")' 0
			EVAL 'local r = math.random("3"); return r >= 1 and r <= 3' 0
		`)
	})

	// Lua CJSON's settings. Redis keeps them in its Lua state for later
	// scripts; basalt for one run (docs/compatibility.md), so each run sets
	// what it uses.
	t.Run("CjsonSettings", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			EVAL 'return {cjson.encode_max_depth(1), pcall(cjson.encode, {a={}})}' 0
			EVAL 'cjson.encode_max_depth(2) return cjson.encode({a={}})' 0
			EVAL 'cjson.decode_max_depth(1) return cjson.decode("{\"o\": [1]}")' 0
			EVAL 'return cjson.decode_max_depth(3)' 0
			EVAL 'return cjson.encode({0/0})' 0
			EVAL 'return {tostring(cjson.encode_invalid_numbers(true)), cjson.encode({0/0, 1/0, -1/0})}' 0
			EVAL 'return {cjson.encode_invalid_numbers("null"), cjson.encode({1/0})}' 0
			EVAL 'return tostring(cjson.encode_invalid_numbers("off"))' 0
			EVAL 'cjson.encode_invalid_numbers("maybe")' 0
			EVAL 'return {tostring(cjson.encode_keep_buffer(false)), cjson.encode({1})}' 0
			EVAL 'cjson.encode_max_depth(0)' 0
			EVAL 'return {pcall(cjson.decode, "[")}' 0
			EVAL 'return cjson.decode("[")' 0
			EVAL 'cjson.encode_max_depth(1) return cjson.encode({a={}})' 0
			EVAL 'cjson.encode_max_depth(1000) cjson.decode_max_depth(1000) cjson.encode_invalid_numbers(false)' 0
		`)
	})

	// Commands a script may not call the way a client does.
	t.Run("RefusedCommands", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XGROUP CREATE s g $ MKSTREAM
			EVAL "return redis.pcall('xread','BLOCK',0,'STREAMS','s','$')" 1 s
			EVAL "return redis.pcall('XREADGROUP','group','g','c','BLOCK',0,'STREAMS','s','>')" 1 s
			EVAL "return redis.call('xread','STREAMS','s','$')" 1 s
			EVAL "return redis.call('xread','BLOCK',0,'STREAMS','s','$')" 1 s
			EVAL "redis.call('cluster', 'reset', 'hard')" 0
			EVAL "return redis.pcall('cluster', 'info')" 0
			EVAL "return redis.pcall('cluster')" 0
		`)
	})

	t.Run("CjsonAndBit", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			EVAL 'return cjson.encode({1,2,{a=1}})' 0
			EVAL 'return cjson.encode({a=1.5})' 0
			EVAL 'return cjson.encode({"a/b", 1.5, 1e20, 0.1, -3, true, false})' 0
			EVAL 'return cjson.encode("q\"b\\n\n\1")' 0
			EVAL 'return cjson.encode({[1]=1,[3]=3})' 0
			EVAL 'return cjson.encode({[1]=1,[30]=3})' 0
			EVAL 'return cjson.encode({})' 0
			EVAL 'return cjson.encode(cjson.null)' 0
			EVAL 'return cjson.encode(function() end)' 0
			EVAL 'return cjson.encode({[true]=1})' 0
			EVAL 'return cjson.encode(0/0)' 0
			EVAL 'return cjson.encode({[1.5]=1})' 0
			EVAL 'return cjson.decode("[1,2,3.5,\"x\",null,true]")' 0
			EVAL 'return cjson.encode(cjson.decode("{\"a\":[1,2,{}]}"))' 0
			EVAL 'return cjson.encode(cjson.decode("{\"a\":null}"))' 0
			EVAL 'return cjson.decode("{\"a\":1}").a' 0
			EVAL 'return cjson.decode("\"\\u00e9\\/x\"")' 0
			EVAL 'return cjson.decode("1e2")' 0
			EVAL 'return cjson.decode("{")' 0
			EVAL 'return cjson.decode("")' 0
			EVAL 'return cjson.decode("[1,]")' 0
			EVAL 'return cjson.decode(" [1, 2] x")' 0
			EVAL 'return cjson.decode("nul")' 0
			EVAL 'return cjson.decode("{\"a\" 1}")' 0
			EVAL 'return cjson.decode("[1 2]")' 0
			EVAL 'return type(cjson.null)' 0
			EVAL 'return cjson.encode()' 0
			EVAL 'return cjson.decode("1", "2")' 0
			EVAL 'local v = cjson.decode(ARGV[1]); return {v.name, v.n, #v.list}' 0 '{"name":"basalt","n":7,"list":[1,2,3]}'
			EVAL 'return cmsgpack.pack(1, -1, 200, -200, 70000, -70000, 1.5, 0.1, "abc", true, false, nil, {1,2,3})' 0
			EVAL 'return cmsgpack.pack(2^40, -2^40, 2^64, 3.25, -33, -129, 65535, 65536, {}, {a=1}, {[1]=1,[3]=3})' 0
			EVAL 'return cmsgpack.pack(string.rep("x", 40), string.rep("y", 300), {{{{1}}}})' 0
			EVAL 'return {cmsgpack.unpack(cmsgpack.pack(1, "x", {1,2}, 1.5, -70000, 2^40, string.rep("z", 300)))}' 0
			EVAL 'return cmsgpack.unpack("")' 0
			EVAL 'return cmsgpack.pack()' 0
			EVAL 'return cmsgpack.pack(function() end)' 0
			EVAL 'return {cmsgpack.unpack_one(cmsgpack.pack(1, 2))}' 0
			EVAL 'return {cmsgpack.unpack_one(cmsgpack.pack(1))}' 0
			EVAL 'return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}' 0
			EVAL 'return type(cmsgpack.unpack(cmsgpack.pack({})))' 0
			EVAL 'local t = cmsgpack.unpack(cmsgpack.pack({a=5, b={1, 2}})); return {t.a, t.b[2]}' 0
			EVAL 'return struct.pack(">iHb", 1, 2, -3)' 0
			EVAL 'return {struct.unpack(">iHb", struct.pack(">iHb", 1, 2, -3))}' 0
			EVAL 'return struct.pack("<i2c3s", -2, "abcdef", "zz")' 0
			EVAL 'return {struct.unpack("<i2c3s", struct.pack("<i2c3s", -2, "abcdef", "zz"))}' 0
			EVAL 'return struct.size(">iHbd")' 0
			EVAL 'return struct.size("!>iHbd")' 0
			EVAL 'return struct.pack("!4bi", 1, 2)' 0
			EVAL 'return {struct.unpack("d", struct.pack("d", 1.5))}' 0
			EVAL 'return {struct.unpack("<f", struct.pack("<f", -2.5))}' 0
			EVAL 'return struct.pack("q", 1)' 0
			EVAL 'return struct.unpack("i", "ab")' 0
			EVAL 'return struct.pack("i17", 1)' 0
			EVAL 'return struct.pack("i17", -1)' 0
			EVAL 'return {struct.unpack("Bc0", struct.pack("Bc0", 3, "hey"))}' 0
			EVAL 'return struct.pack(">lLT", -1, 1, 2)' 0
			EVAL 'return {struct.unpack(">I3", "abcdef", 2)}' 0
			EVAL 'return {struct.unpack("<hHx", "\255\255\255\255\0")}' 0
			EVAL 'return type(struct)' 0
			EVAL 'return bit.band(0xff, 0x0f)' 0
			EVAL 'return bit.bor(1, 2, 4)' 0
			EVAL 'return bit.bxor(5, 3, 1)' 0
			EVAL 'return bit.bnot(0)' 0
			EVAL 'return bit.tobit(0xffffffff)' 0
			EVAL 'return bit.tobit(2^32 + 5)' 0
			EVAL 'return bit.lshift(1, 40)' 0
			EVAL 'return bit.lshift(1, 31)' 0
			EVAL 'return bit.rshift(-256, 4)' 0
			EVAL 'return bit.arshift(-256, 4)' 0
			EVAL 'return bit.tohex(255)' 0
			EVAL 'return bit.tohex(-1, -4)' 0
			EVAL 'return bit.tohex(0x1234, 2)' 0
			EVAL 'return bit.rol(0x12345678, 8)' 0
			EVAL 'return bit.ror(0x12345678, 8)' 0
			EVAL 'return bit.bswap(0x12345678)' 0
		`)
	})

	t.Run("Cache", func(t *testing.T) {
		d := p.diff(t)
		// INFO counts the cached scripts, EVAL's too. (Through a follower
		// SCRIPT LOAD and EVAL go to the leader, whose cache they fill.)
		d.Do("SCRIPT", "FLUSH")
		for i := range 5 {
			d.Do("SCRIPT", "LOAD", "return "+strconv.Itoa(i))
		}
		d.Do("EVAL", "return 'x'", "0")
		for _, n := range []int64{6, 0} {
			if testutil.ClusterMode() > 1 {
				break
			}
			if w, g := infoField(t, d.Want, "memory", "number_of_cached_scripts"), infoField(t, d.Got, "memory", "number_of_cached_scripts"); w != n || g != n {
				t.Errorf("number_of_cached_scripts: redis %d, basalt %d, want %d", w, g, n)
			}
			d.Do("SCRIPT", "FLUSH", "ASYNC")
		}
		d.Run(`
			SCRIPT FLUSH
			EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
			EVALSHA abc 0
			SCRIPT LOAD 'return {KEYS[1], ARGV[1]}'
			SCRIPT EXISTS d006f1a90249474274c76f5be725b8f5804a346b a33f8c3a98a0a8e6c5e4c2e0c7b29c2e79a1b6d4
			EVAL 'return 1' 0
			SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db E0E1F9FABFC9D4800C877A703B823AC0578FF8DB ffffffffffffffffffffffffffffffffffffffff
			EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
			EVALSHA E0E1F9FABFC9D4800C877A703B823AC0578FF8DB 0
			SCRIPT LOAD 'return redis.call("incr", KEYS[1])'
			EVALSHA 024f02195a7e52e1776d26af209f8a79d0470e0f 1 counter
			SCRIPT FLUSH ASYNC
			SCRIPT FLUSH SYNC
			SCRIPT FLUSH BAD
			SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db
			EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
			SCRIPT KILL
			SCRIPT NOPE
			SCRIPT LOAD
			EVALSHA_RO e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
		`)
		want, got := d.DoBoth("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])")
		if want.String() != got.String() {
			t.Fatalf("SCRIPT LOAD: %v vs %v", want, got)
		}
		d.Do("EVALSHA", want.Str, "1", "c")
		d.Do("EVALSHA", want.Str, "1", "c")
		d.Do("EVALSHA", want.Str, "2", "c")
		d.Do("EVALSHA_RO", want.Str, "1", "c")
		d.Do("GET", "c")
		// Inside MULTI: a script loaded in the block runs in it.
		d.Run(`
			SCRIPT FLUSH
			MULTI
			SCRIPT LOAD 'return "in multi"'
			EVALSHA 1272f811d650530b6cc9b0bbe88363873c43baa1 0
			EVAL 'return redis.call("incr", "m")' 0
			EVALSHA ffffffffffffffffffffffffffffffffffffffff 0
			EXEC
		`)
		d.Run(`
			SCRIPT LOAD 'return 1'
			MULTI
			SCRIPT FLUSH
			EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0
			EXEC
			SCRIPT LOAD 'return "in multi"'
		`)
		sha := "1272f811d650530b6cc9b0bbe88363873c43baa1" // of return "in multi"
		d.Run(`
			MULTI
			EVALSHA ` + sha + ` 0
			EVAL 'redis.call("set", "a", 1); redis.call("incr", "a"); return redis.call("get", "a")' 0
			GET a
			EXEC
		`)
	})

	t.Run("ReadOnly", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			SET a 1
			EVAL_RO 'return redis.call("get", KEYS[1])' 1 a
			EVAL_RO 'return redis.call("set", "a", "b")' 0
			EVAL_RO 'return redis.pcall("set", "a", "b")' 0
			EVAL_RO 'return redis.call("incr", "a")' 0
			GET a
			EVAL_RO 'return 1' 2 a
			EVAL_RO 'x = 1' 0
			MULTI
			EVAL_RO 'return redis.call("get", "a")' 0
			EVAL_RO 'return redis.call("del", "a")' 0
			EXEC
		`)
	})

	t.Run("Shebang", func(t *testing.T) {
		d := p.diff(t)
		for _, c := range [][]string{
			{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"},
			{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')", "0"},
			{"EVAL", "#!lua\nreturn 1", "0"},
			{"EVAL", "#!lua flags=bad\nreturn 1", "0"},
			{"EVAL", "#!js\nreturn 1", "0"},
			{"EVAL", "#!lua name=x\nreturn 1", "0"},
			{"EVAL", "#!lua flags=no-writes,allow-stale,no-cluster,allow-oom,allow-cross-slot-keys\nreturn 1", "0"},
			{"EVAL", "#!lua\nerror('x')", "0"},
			{"EVAL_RO", "#!lua\nreturn redis.call('set','a','b')", "0"},
			{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get','a')", "0"},
			{"EVAL", "#!lua\nreturn redis.call('set',KEYS[1],'b')", "1", "a"},
			{"SCRIPT", "LOAD", "#!lua flags=bad\nreturn 1"},
			{"GET", "a"},
		} {
			d.Do(c...)
		}
	})

	t.Run("Command", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			COMMAND INFO eval evalsha eval_ro evalsha_ro
			COMMAND GETKEYS EVAL 'return 1' 2 k1 k2 a1
			COMMAND GETKEYS EVAL 'return 1' 0 a1
		`)
	})

	t.Run("RESP3", func(t *testing.T) {
		d := p.diff(t)
		d.Proto(3)
		d.Run(`
			HSET h f v
			EVAL 'return true' 0
			EVAL 'return false' 0
			EVAL 'return nil' 0
			EVAL 'redis.setresp(3); return redis.call("hgetall", "h")' 0
			EVAL 'redis.setresp(3); return redis.call("hgetall", "h").map.f' 0
			EVAL 'redis.setresp(3); return redis.call("get", "nokey")' 0
			EVAL 'redis.setresp(3); return type(redis.call("get", "nokey"))' 0
			EVAL 'redis.setresp(3); return true' 0
			EVAL 'redis.setresp(3); return false' 0
			EVAL 'return {double=3.5}' 0
			EVAL 'return {map={a=1}}' 0
			EVAL 'return {set={a=true}}' 0
			EVAL 'return {big_number="123456789012345678901234567890"}' 0
			EVAL 'return {verbatim_string={format="txt", string="hi"}}' 0
			EVAL 'redis.setresp(3); return redis.call("zscore", "nokey", "m")' 0
		`)
		d.Proto(2)
		d.Run(`
			EVAL 'return {double=3.5}' 0
			EVAL 'return {map={a=1}}' 0
			EVAL 'return {set={a=true}}' 0
			EVAL 'return {big_number="123"}' 0
			EVAL 'redis.setresp(3); return redis.call("hgetall", "h")' 0
			EVAL 'redis.setresp(3); return true' 0
		`)
	})
}

// TestScriptAtomic runs a script that increments a key twice and checks
// that no other client's write came in between, from many clients at once.
func TestScriptAtomic(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	const clients, runs = 20, 200
	body := `local a = redis.call('incr', KEYS[1])
local b = redis.call('incr', KEYS[1])
if b ~= a + 1 then return redis.error_reply('ERR interleaved') end
return b`
	sha := testutil.Dial(t, b.Addr).Do("SCRIPT", "LOAD", body).Str
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	deadline := time.Now().Add(40 * time.Second)
	for range clients {
		c := testutil.Dial(t, b.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < runs && time.Now().Before(deadline); i++ {
				r, err := c.DoErr("EVALSHA", sha, "1", "counter")
				if err != nil || r.IsError() {
					errs <- r.String() + " " + strconv.Quote(errString(err))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := testutil.Dial(t, b.Addr).Do("GET", "counter").Str; got != strconv.Itoa(2*clients*runs) {
		t.Fatalf("counter = %s, want %d", got, 2*clients*runs)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
