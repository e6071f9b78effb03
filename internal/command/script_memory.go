package command

import (
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// script-maxmemory: the largest string a script may build.
//
// gopher-lua allocates from the Go heap and has no allocator hook, so a
// script can't be held to a memory budget the way Redis's Lua allocator
// could be. What can exhaust memory in a few instructions is a builtin that
// makes a big string out of small arguments: string.rep('x', 2^40),
// table.concat of a table holding one big string many times, string.format
// with huge widths, cjson.encode of such a table. Those are wrapped here to
// compute the size of what they would build first, and raise a script
// error instead when it passes the limit. The check depends only on the
// script's arguments and the setting, so every node that applies the
// script's record makes the same choice (given the same setting).
var scriptMaxMemory atomic.Int64

func init() { scriptMaxMemory.Store(DefaultScriptMaxMemory) }

// DefaultScriptMaxMemory is script-maxmemory's default: proto-max-bulk-len's,
// the largest value a script could store.
const DefaultScriptMaxMemory = maxStringLen

// SetScriptMaxMemory sets script-maxmemory (bytes) for scripts from now on.
func SetScriptMaxMemory(n int64) { scriptMaxMemory.Store(n) }

// checkScriptString raises a script error if fn would build a string of
// size bytes (size < 0: too large to count).
func checkScriptString(L *lua.LState, fn string, size int64) {
	if limit := scriptMaxMemory.Load(); size < 0 || size > limit {
		L.RaiseError("%s: the result would be larger than script-maxmemory (%d bytes)", fn, limit)
	}
}

// guardStringLib wraps the string and table builtins that build big strings.
func (e *luaEnv) guardStringLib(str, tab *lua.LTable) {
	rep := str.RawGetString("rep")
	format := str.RawGetString("format")
	concat := tab.RawGetString("concat")
	e.setFuncs(str, map[string]lua.LGFunction{
		"rep": func(L *lua.LState) int {
			s, n := L.CheckString(1), L.CheckInt64(2)
			if n > 0 && len(s) > 0 {
				size := int64(len(s)) * n
				if size/n != int64(len(s)) {
					size = -1
				}
				checkScriptString(L, "string.rep", size)
			}
			return callThrough(L, rep)
		},
		"format": func(L *lua.LState) int {
			checkScriptString(L, "string.format", formatBound(L))
			return callThrough(L, format)
		},
	})
	e.setFuncs(tab, map[string]lua.LGFunction{
		"concat": func(L *lua.LState) int {
			checkScriptString(L, "table.concat", concatBound(L))
			return callThrough(L, concat)
		},
	})
}

// callThrough calls the wrapped builtin fn with the arguments on the stack
// and returns its results.
func callThrough(L *lua.LState, fn lua.LValue) int {
	top := L.GetTop()
	L.Insert(fn, 1)
	L.Call(top, lua.MultRet)
	return L.GetTop()
}

// concatBound is the length of table.concat(t, sep, i, j)'s result, at
// most (an element that is not a string is left for concat to refuse).
func concatBound(L *lua.LState) int64 {
	t := L.CheckTable(1)
	sep := int64(len(L.OptString(2, "")))
	i, j := L.OptInt64(3, 1), L.OptInt64(4, int64(t.Len()))
	var size int64
	for k := max(i, 1); k <= min(j, int64(t.Len())); k++ {
		if s, ok := t.RawGetInt(int(k)).(lua.LString); ok {
			size += int64(len(s))
		} else {
			size += 32 // a number's text
		}
		size += sep
		if size > scriptMaxMemory.Load() {
			return -1
		}
	}
	return size
}

// formatBound is the length of string.format's result, at most.
// gopher-lua hands the format to Go's fmt, where a verb may name its
// argument ("%[1]s"), so each verb may print the longest argument: as %q
// or %x, up to 6 bytes per byte, plus its width and precision (which fmt
// parses up to ten million).
func formatBound(L *lua.LState) int64 {
	f := L.CheckString(1)
	longest := int64(32) // a number's text
	for i := 2; i <= L.GetTop(); i++ {
		if s, ok := L.Get(i).(lua.LString); ok {
			longest = max(longest, int64(len(s)))
		}
	}
	const maxWidth = 10_000_010 // what fmt's parsenum reads before tooLarge stops it
	size := int64(len(f))
	for at := strings.IndexByte(f, '%'); at >= 0; at = strings.IndexByte(f, '%') {
		f = f[at+1:]
		size += 6*longest + 64
		// Flags, argument indexes, width and precision: every number
		// counts as a width, and a width from the arguments (*) as the
		// largest two.
		n := int64(0)
		for len(f) > 0 && strings.IndexByte("-+ #.[]*0123456789", f[0]) >= 0 {
			switch c := f[0]; {
			case c >= '0' && c <= '9':
				n = min(n*10+int64(c-'0'), maxWidth)
			case c == '*':
				size += 2 * maxWidth
			default:
				size, n = size+n, 0
			}
			f = f[1:]
		}
		size += n
	}
	return size
}

// The memory watch: what no wrapper sees. The .. operator concatenates
// inside gopher-lua's VM, and tables grow there, so `s = s .. s` thirty
// times or an endless table insert would still exhaust memory. While
// scripts run, the Go heap is looked at every memCheckEvery; once it has
// grown by more than script-maxmemory over its lowest since the run began, the run is
// stopped as SCRIPT KILL stops one, if it wrote nothing yet (a script that
// wrote can't be stopped without breaking its atomicity, as in Redis). The
// heap is the process's, so scripts running at once are measured together.
// A stop is never logged as a record (script_kill.go), so whether it
// happens may depend on timing.
const memCheckEvery = 5 * time.Millisecond

// errScriptMemory is what a script stopped by the memory watch answers.
func errScriptMemory() string {
	return "ERR Script killed: it used more than script-maxmemory (" + strconv.FormatInt(scriptMaxMemory.Load(), 10) + " bytes)"
}

// watchScriptMemory starts the watch if it is not running; scriptRuns is
// locked.
func watchScriptMemory() {
	if scriptRuns.mem == nil {
		scriptRuns.mem = time.AfterFunc(memCheckEvery, checkScriptMemory)
	} else if len(scriptRuns.runs) == 1 {
		scriptRuns.mem.Reset(memCheckEvery)
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// checkScriptMemory stops the runs the heap grew too much under, and looks
// again later while any run is left.
func checkScriptMemory() {
	scriptRuns.Lock()
	metrics.Read(heapSample)
	heap := heapSample[0].Value.Uint64()
	limit := uint64(scriptMaxMemory.Load())
	var over []*scriptRun
	for _, r := range scriptRuns.runs {
		// The lowest heap seen during the run is its start: the garbage
		// of the runs before may be collected meanwhile.
		if r.heapAt == 0 || heap < r.heapAt {
			r.heapAt = heap
		} else if heap > r.heapAt+limit {
			over = append(over, r)
		}
	}
	if len(scriptRuns.runs) > 0 {
		scriptRuns.mem.Reset(memCheckEvery)
	}
	scriptRuns.Unlock()
	for _, r := range over {
		r.killWith(false, errScriptMemory())
	}
}
