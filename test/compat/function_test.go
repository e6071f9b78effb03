package compat

import (
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// TestFunction compares Redis 7 functions with Redis 7.0: FUNCTION LOAD
// (shebangs, register_function's two forms and its errors, the load
// environment), FCALL and FCALL_RO, LIST, DELETE, FLUSH, STATS, KILL, DUMP
// and RESTORE. Redis lists libraries and a library's functions in hash
// order, so listings of several are compared sorted (see canonList).
func TestFunction(t *testing.T) {
	p := newPair(t)
	// fdiff empties the key space and the libraries.
	fdiff := func(t *testing.T) *testutil.Diff {
		d := p.diff(t)
		d.Do("FUNCTION", "FLUSH")
		return d
	}

	t.Run("LoadAndCall", func(t *testing.T) {
		d := fdiff(t)
		d.Run(`
			FUNCTION LOAD "#!lua name=mylib\nredis.register_function('f1', function(keys, args) return {keys, args} end)\nredis.register_function{function_name='f2', callback=function(keys, args) return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}, description='desc two'}"
			FCALL f1 2 a b c d
			FCALL f1 0
			FCALL F1 0
			FUNCTION LOAD "#!lua name=MyLib\nredis.register_function('F1', function() return 1 end)"
			FUNCTION LOAD "#!lua name=MyLib\nredis.register_function('Up', function() return 1 end)"
			FCALL uP 0
			FUNCTION DELETE mylib2
			FUNCTION DELETE MyLib
			FCALL uP 0
			FCALL f2 1 k v
			FCALL_RO f1 0
			FCALL_RO f2 1 k v
			FUNCTION LOAD "#!lua name=w\nredis.register_function('setit', function(keys, args) return redis.call('set', keys[1], args[1]) end)\nredis.register_function{function_name='getit', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}"
			FCALL setit 1 k v1
			FCALL getit 1 k
			FCALL_RO getit 1 k
			FCALL_RO setit 1 k v2
			GET k
			FCALL nope 0
			FCALL nope x
			FCALL f1 x
			FCALL f1 -1
			FCALL f1 3 a
			FCALL f1
			FCALL_RO nope 0
			FCALL_RO f1 -1
			MULTI
			FCALL setit 1 k v3
			FCALL_RO getit 1 k
			EXEC
		`)
	})

	t.Run("Environment", func(t *testing.T) {
		d := fdiff(t)
		d.Run(`
			FUNCTION LOAD "#!lua name=env\nlocal function helper(k) return redis.call('get', k) end\nlocal v = redis.REDIS_VERSION_NUM\nredis.log(redis.LOG_DEBUG, 'loading')\nredis.register_function('g', function(keys, args) return {helper(keys[1]), #args, type(v)} end)\nredis.register_function('e', function(keys, args) return KEYS end)\nredis.register_function('e2', function(keys, args) error('boom') end)\nredis.register_function('e3', function(keys, args) return redis.call('nope') end)\nredis.register_function('e4', function(keys, args) x = 5 end)\nredis.register_function('e5', function(keys, args) return redis.setresp(3) end)\nredis.register_function('e6', function(keys, args) return redis.pcall('incr', keys[1]) end)\nredis.register_function('e7', function() return string.rep('ab', 2) .. cjson.encode({1}) end)"
			SET k v
			FCALL g 1 k a b
			FCALL e 0
			FCALL e2 0
			FCALL e3 0
			FCALL e4 0
			FCALL e5 0
			FCALL e6 1 k
			FCALL e7 0
		`)
		// Only register_function, log, the log levels and the version may be
		// reached while a library loads.
		for _, body := range []string{
			"redis.call('set','a','b')",
			"local s = string",
			"local s = math.random()",
			"local s = KEYS",
			"local s = _G",
			"local s = redis.pcall",
			"local s = redis.sha1hex('a')",
			"local s = redis.setresp(3)",
			"x = 1",
			"redis.foo = 1",
			"local t = {} local n = ('a'):rep(2) local l = redis.LOG_WARNING",
		} {
			d.Do("FUNCTION", "LOAD", "#!lua name=x\n"+body+"\nredis.register_function('fx', function() return 1 end)")
			d.Do("FUNCTION", "DELETE", "x")
		}
	})

	t.Run("LoadErrors", func(t *testing.T) {
		d := fdiff(t)
		reg := "\nredis.register_function('f', function() return 1 end)"
		for _, code := range []string{
			"redis.register_function('f', function() return 1 end)",
			"#!lua" + reg,
			"#!lua name=x foo=bar" + reg,
			"#!js name=x" + reg,
			"#! name=x" + reg,
			"#!lua name=a name=b" + reg,
			"#!lua name=x",
			"#!lua name=\"x" + reg,
			"#!lua name=x-y" + reg,
			"#!lua name=" + reg,
			"#!LUA NAME=up" + reg,
			"#!lua name=\"quoted\"" + reg,
			"#!lua  name=spaces " + reg,
			"#!lua name=x\nreturn 1",
			"#!lua name=x\nredis.register_function('f-1', function() return 1 end)",
			"#!lua name=x\nredis.register_function('', function() return 1 end)",
			"#!lua name=x\nredis.register_function('g', function() end)\nredis.register_function('g', function() end)",
			"#!lua name=x\nredis.register_function('g', 'notfunc')",
			"#!lua name=x\nredis.register_function('g')",
			"#!lua name=x\nredis.register_function('g', function() end, 3)",
			"#!lua name=x\nredis.register_function({}, function() end)",
			"#!lua name=x\nredis.register_function(12, function() return 1 end)",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, flags={'bad'}}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, flags={1}}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, foo=1}",
			"#!lua name=x\nredis.register_function{function_name='g'}",
			"#!lua name=x\nredis.register_function{callback=function() end}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, flags='no-writes'}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=2}",
			"#!lua name=x\nredis.register_function{function_name=1, callback=function() end}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, description={}}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, description=1}",
			"#!lua name=x\nredis.register_function{'g', function() end}",
			"#!lua name=x\nredis.register_function{function_name='g', callback=function() end, flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}",
			"#!lua name=x\nredis.register_function{FUNCTION_NAME='g', Callback=function() end, flags={'NO-WRITES'}}",
			"#!lua name=x\nredis.register_function('" + strings.Repeat("a", 70) + "', function() return 1 end)",
		} {
			d.Do("FUNCTION", "LOAD", code)
			d.Do("FUNCTION", "LIST")
			d.Do("FUNCTION", "FLUSH")
		}
		d.Run(`
			FUNCTION LOAD
			FUNCTION LOAD replace
			FUNCTION LOAD foo "#!lua name=a\nredis.register_function('a', function() end)"
			FUNCTION LOAD replace foo bar
			FUNCTION LOAD replace replace "#!lua name=a"
			FUNCTION LOAD "#!lua name=lib1\nredis.register_function('f', function() return 1 end)"
			FUNCTION LOAD "#!lua name=lib1\nredis.register_function('g', function() return 1 end)"
			FUNCTION LOAD "#!lua name=lib2\nredis.register_function('f', function() return 2 end)"
			FUNCTION LOAD "#!lua name=lib1\nlocal a = ("
			FUNCTION LOAD REPLACE "#!lua name=lib1\nredis.register_function('f2', function() return 2 end)"
			FCALL f 0
			FCALL f2 0
			FUNCTION LOAD "#!lua name=lib2\nredis.register_function('f', function() return 3 end)"
			FCALL f 0
			FUNCTION LOAD REPLACE "#!lua name=lib2\nredis.register_function('f2', function() return 3 end)"
			FCALL f 0
			FUNCTION LOAD "#!lua name=slow\nwhile true do end"
			FUNCTION LIST LIBRARYNAME slow
		`)
	})

	t.Run("ListDeleteFlush", func(t *testing.T) {
		d := fdiff(t)
		d.Run(`
			FUNCTION LIST
			FUNCTION LOAD "#!lua name=lib1\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'allow-stale', 'no-writes'}, description='d'}"
			FUNCTION LIST
			FUNCTION LIST WITHCODE
			FUNCTION LIST LIBRARYNAME lib*
			FUNCTION LIST LIBRARYNAME LIB1
			FUNCTION LIST LIBRARYNAME x WITHCODE
			FUNCTION LIST withcode libraryname l?b1
			FUNCTION LIST foo
			FUNCTION LIST libraryname
			FUNCTION LIST withcode withcode
			FUNCTION LIST libraryname a libraryname b
			FUNCTION LIST bar baz
			FUNCTION LOAD "#!lua name=lib2\nredis.register_function('g', function() return 2 end)"
			@unordered FUNCTION LIST
			@unordered FUNCTION LIST LIBRARYNAME lib*
			FUNCTION STATS
			FUNCTION DELETE lib1
			FUNCTION DELETE lib1
			FUNCTION DELETE
			FUNCTION DELETE a b
			FCALL f 0
			FCALL g 0
			FUNCTION STATS
			FUNCTION FLUSH foo
			FUNCTION FLUSH a b
			FUNCTION FLUSH async
			FUNCTION LIST
			FUNCTION LOAD "#!lua name=lib2\nredis.register_function('g', function() return 2 end)"
			FUNCTION FLUSH SYNC
			FUNCTION FLUSH
			FCALL g 0
			FUNCTION STATS
			FUNCTION KILL
			FUNCTION HELP
			FUNCTION NOPE
			FUNCTION
		`)
		// A library of several functions: Redis lists them in hash order.
		code := "#!lua name=many\nredis.register_function('a', function() end)\nredis.register_function{function_name='b', callback=function() end, description='bee', flags={'no-writes'}}\nredis.register_function('c', function() end)"
		d.Do("FUNCTION", "LOAD", code)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			for _, args := range [][]string{{"FUNCTION", "LIST"}, {"FUNCTION", "LIST", "WITHCODE"}, {"FUNCTION", "STATS"}} {
				w, g := d.DoBoth(args...)
				if err := testutil.Compare(args, canonList(w), canonList(g)); err != nil {
					t.Errorf("RESP%d: %v", proto, err)
				}
			}
		}
		d.Proto(2)
	})

	t.Run("FlushallKeepsFunctions", func(t *testing.T) {
		d := fdiff(t)
		d.Run(`
			FUNCTION LOAD "#!lua name=keep\nredis.register_function('kept', function() return 'still here' end)"
			SET a b
			FLUSHALL
			FLUSHDB
			FCALL kept 0
			DBSIZE
			FUNCTION LIST
		`)
	})

	t.Run("DumpRestore", func(t *testing.T) {
		d := fdiff(t)
		d.Run(`
			FUNCTION LOAD "#!lua name=l1\nredis.register_function('f1', function() return 1 end)"
			FUNCTION LOAD "#!lua name=l2\nredis.register_function('f2', function() return 2 end)"
			FUNCTION RESTORE bad
			FUNCTION RESTORE bad nope
			FUNCTION RESTORE a b c
		`)
		// Each server's payload restores into the other, whatever its
		// compression.
		w, g := d.DoBoth("FUNCTION", "DUMP")
		if w.Kind != '$' || g.Kind != '$' {
			t.Fatalf("FUNCTION DUMP: redis %v, basalt %v", w, g)
		}
		for _, payload := range []string{w.Str, g.Str} {
			d.Do("FUNCTION", "RESTORE", payload, "REPLACE")
			d.Do("FCALL", "f2", "0")
			d.Do("FUNCTION", "FLUSH")
			d.Do("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('f1', function() return 9 end)")
			d.Do("FUNCTION", "RESTORE", payload)
			d.Do("FUNCTION", "RESTORE", payload, "replace")
			d.Do("FCALL", "f1", "0")
			d.Do("FUNCTION", "RESTORE", payload, "FLUSH")
			d.Do("FCALL", "f1", "0")
			d.DoUnordered("FUNCTION", "LIST")
			d.Do("FUNCTION", "RESTORE", payload[:len(payload)-1]+"x")
		}
		// Collisions, with payloads of one library (Redis checks a payload's
		// libraries in hash order).
		d.Do("FUNCTION", "FLUSH")
		d.Do("FUNCTION", "LOAD", "#!lua name=one\nredis.register_function('f1', function() return 1 end)")
		_, g = d.DoBoth("FUNCTION", "DUMP")
		d.Do("FUNCTION", "RESTORE", g.Str)
		d.Do("FUNCTION", "RESTORE", g.Str, "APPEND")
		d.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=one\nredis.register_function('F1', function() return 2 end)")
		d.Do("FUNCTION", "RESTORE", g.Str, "REPLACE")
		d.Do("FCALL", "f1", "0")
		d.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=one\nredis.register_function('x', function() return 2 end)")
		d.Do("FUNCTION", "LOAD", "#!lua name=two\nredis.register_function('f1', function() return 3 end)")
		d.Do("FUNCTION", "RESTORE", g.Str, "REPLACE")
		d.Do("FCALL", "f1", "0")
		d.Do("FUNCTION", "FLUSH")
		_, g = d.DoBoth("FUNCTION", "DUMP")
		d.Do("FUNCTION", "RESTORE", g.Str)
		d.Do("FUNCTION", "LIST")
	})

	t.Run("RESP3", func(t *testing.T) {
		d := fdiff(t)
		d.Proto(3)
		d.Run(`
			FUNCTION LOAD "#!lua name=r3\nredis.register_function{function_name='f', callback=function(keys, args) return {double=1.5} end, flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}, description='three'}"
			FUNCTION LIST WITHCODE
			FUNCTION LOAD "#!lua name=r4\nredis.register_function('g', function(keys, args) redis.setresp(3) return redis.call('hgetall', keys[1]) end)"
			FUNCTION LIST LIBRARYNAME r4
			FUNCTION STATS
			HSET h a 1
			FCALL f 0
			FCALL g 1 h
			FCALL_RO f 0
		`)
	})
}

// canonList sorts what Redis lists in hash order: the libraries of FUNCTION
// LIST and each library's functions.
func canonList(r testutil.Reply) testutil.Reply {
	if r.Kind != '*' {
		return r
	}
	out := r
	out.Elems = make([]testutil.Reply, len(r.Elems))
	for i, lib := range r.Elems {
		lib.Elems = append([]testutil.Reply(nil), lib.Elems...)
		for j := 0; j+1 < len(lib.Elems); j += 2 {
			if lib.Elems[j].Str == "functions" {
				lib.Elems[j+1] = lib.Elems[j+1].Sorted()
			}
		}
		out.Elems[i] = lib
	}
	return out.Sorted()
}

// TestFunctionRestart checks that libraries are data: they survive a
// restart of basalt and FLUSHALL, and FCALL finds them after it.
func TestFunctionRestart(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	c.Do("FUNCTION", "LOAD", "#!lua name=durable\nredis.register_function('incrby2', function(keys) return redis.call('incrby', keys[1], 2) end)")
	c.Do("FUNCTION", "LOAD", "#!lua name=gone\nredis.register_function('g', function() return 1 end)")
	c.Do("FUNCTION", "DELETE", "gone")
	if r := c.Do("FCALL", "incrby2", "1", "n"); r.String() != "(integer) 2" && r.Int != 2 {
		t.Fatalf("FCALL: %v", r)
	}
	c.Do("FLUSHALL")
	c.Close()
	b.Kill() // SIGKILL: what was acknowledged is on disk
	b.Restart(t)
	c = testutil.Dial(t, b.Addr)
	defer c.Close()
	if r := c.Do("FCALL", "incrby2", "1", "n"); r.Int != 2 || r.IsError() {
		t.Errorf("FCALL after restart: %v", r)
	}
	if r := c.Do("FCALL", "g", "0"); r.Str != "ERR Function not found" {
		t.Errorf("deleted function after restart: %v", r)
	}
	if r := c.Do("FUNCTION", "LIST"); len(r.Elems) != 1 {
		t.Errorf("FUNCTION LIST after restart: %v", r)
	}
}
