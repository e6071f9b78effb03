package command

import (
	"strings"

	"basalt/internal/glob"
	"basalt/internal/num"
	"basalt/internal/rdb"
	"basalt/internal/store"
)

// Functions (functions.c in Redis 7.0): FUNCTION LOAD, LIST, DELETE,
// FLUSH, STATS, KILL, and FCALL, FCALL_RO.
//
// Unlike the script cache, libraries are data: FUNCTION LOAD, DELETE and
// FLUSH are records applied in the apply loop and stored in the store's
// function space (store/function.go), outside every database, so they
// survive a restart, reach the followers and snapshots, and FCALL applied
// anywhere (or replayed from the log) finds the library the log's earlier
// records made. FCALL is a record like EVAL (it runs in the apply loop);
// FCALL_RO runs on a read view. Compiled libraries are cached by their
// code's hash (function_lua.go).
func init() {
	scriptCat := []string{"scripting"}
	const callFlags = NoScript | Stale | SkipMonitor | NoMandatoryKeys | Script
	evalSpec := func(ro bool) []KeySpec {
		spec := KeySpec{Flags: []string{"RW", "access", "update"}, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1,
			Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"}
		if ro {
			spec.Flags = []string{"RO", "access"}
			spec.Notes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
		}
		return []KeySpec{spec}
	}
	sub := func(name string, arity int, flags Flags, summary string, tips ...string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Categories: scriptCat, Since: "7.0.0", Group: "scripting", Summary: summary, Tips: tips}
	}
	all := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	register(
		&Command{Name: "fcall", Arity: -3, Flags: callFlags, Categories: scriptCat, Since: "7.0.0", Group: "scripting", Summary: "Invoke a function",
			KeySpecs: evalSpec(false), Run: func(c *Ctx) { cmdFcall(c, false) }},
		&Command{Name: "fcall_ro", Arity: -3, Flags: ReadOnly | callFlags, Categories: scriptCat, Since: "7.0.0", Group: "scripting", Summary: "Invoke a read-only function",
			KeySpecs: evalSpec(true), Run: func(c *Ctx) { cmdFcall(c, true) }},
		&Command{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0", Summary: "A container for function commands", Run: cmdFunction,
			Subcommands: []*Command{
				sub("function|delete", 3, Write|NoScript, "Delete a function by name", all...),
				sub("function|dump", 2, NoScript, "Dump all functions into a serialized binary payload"),
				sub("function|flush", -2, Write|NoScript, "Deleting all functions", all...),
				sub("function|help", 2, Loading|Stale, "Show helpful text about the different subcommands"),
				sub("function|kill", 2, NoScript|AllowBusy, "Kill the function currently in execution.", "request_policy:all_shards", "response_policy:one_succeeded"),
				sub("function|list", -2, NoScript, "List information about all the functions", "nondeterministic_output_order"),
				sub("function|load", -3, Write|DenyOOM|NoScript, "Create a function with the given arguments (name, code, description)", all...),
				sub("function|restore", -3, Write|DenyOOM|NoScript, "Restore all the functions on the given payload", all...),
				sub("function|stats", 2, NoScript|AllowBusy, "Return information about the function currently running (name, description, duration)",
					"nondeterministic_output", "request_policy:all_shards", "response_policy:special"),
			}},
	)
}

// libHeader reads a library's "#!lua name=<name>" first line
// (functionExtractLibMetaData and the checks after it in Redis).
func libHeader(code []byte) (name, msg string) {
	s := string(code)
	if !strings.HasPrefix(s, "#!") {
		return "", "ERR Missing library metadata"
	}
	line, _, ok := strings.Cut(s, "\n")
	if !ok {
		return "", "ERR Invalid library metadata"
	}
	parts, ok := splitArgs(line)
	if !ok || len(parts) == 0 {
		return "", "ERR Invalid library metadata"
	}
	hasName := false
	for _, p := range parts[1:] {
		if len(p) < 5 || !strings.EqualFold(p[:5], "name=") {
			return "", "ERR Invalid metadata value given: " + p
		}
		if hasName {
			return "", "ERR Invalid metadata value, name argument was given multiple times"
		}
		name, hasName = p[5:], true
	}
	if !hasName {
		return "", "ERR Library name was not given"
	}
	if !validName(name) {
		return "", "ERR " + errBadName
	}
	if engine := parts[0][2:]; !strings.EqualFold(engine, "lua") {
		return "", "ERR Engine '" + engine + "' not found"
	}
	return name, ""
}

// splitArgs splits a line into words as Redis's sdssplitargs does: spaces
// between words, "double quotes" with backslash escapes and 'single
// quotes'; ok is false for unbalanced quotes.
func splitArgs(line string) (words []string, ok bool) {
	isSpace := func(c byte) bool { return strings.IndexByte(" \n\r\t\v\f", c) >= 0 }
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return words, true
		}
		var w []byte
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHexDigit(line[i+2]) && isHexDigit(line[i+3]):
					w = append(w, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					w = append(w, map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'a': '\a'}[line[i]]|escapeSelf(line[i]))
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false // a closing quote must end the word
					}
					done = true
				default:
					w = append(w, c)
				}
			case insq:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					w = append(w, '\'')
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					w = append(w, c)
				}
			default:
				if i >= len(line) || isSpace(line[i]) {
					done = true
					continue
				}
				switch line[i] {
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					w = append(w, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		words = append(words, string(w))
	}
}

// escapeSelf is the byte a backslash escape stands for when it is not one
// of \n \r \t \b \a: the byte itself.
func escapeSelf(c byte) byte {
	if strings.IndexByte("nrtba", c) >= 0 {
		return 0
	}
	return c
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// storedLibrary returns library name's compiled form from the store, or
// nil.
func storedLibrary(tx *store.Tx, name []byte) *library {
	code, ok := tx.FunctionLibrary(name)
	if !ok {
		return nil
	}
	return compiledLibrary(name, code)
}

// compiledLibrary returns the compiled form of stored library code:
// stored code compiled once already, so it compiles again.
func compiledLibrary(name, code []byte) *library {
	lib, msg := compileLibrary(string(name), code, false)
	if msg != "" {
		panic("command: stored library " + string(name) + " does not load: " + msg)
	}
	return lib
}

// funcNames returns the names lib's functions are stored under: FCALL
// finds a function whatever the case of its name, as in Redis.
func funcNames(lib *library) [][]byte {
	out := make([][]byte, len(lib.funcs))
	for i, f := range lib.funcs {
		out[i] = []byte(strings.ToLower(f.name))
	}
	return out
}

// cmdFcall runs FCALL (in the apply loop) and FCALL_RO (on a read view, or
// in the apply loop inside MULTI).
func cmdFcall(c *Ctx, readOnly bool) {
	owner, code, ok := c.Tx.Function([]byte(strings.ToLower(string(c.Args[1]))))
	if !ok {
		c.W.Error("ERR Function not found")
		return
	}
	lib := compiledLibrary(owner, code)
	n, ok := num.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error("ERR Bad number of keys provided")
		return
	case n > int64(len(c.Args)-3):
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	case n < 0:
		c.W.Error("ERR Number of keys can't be negative")
		return
	}
	fn := lib.funcs[lib.find(string(c.Args[1]))]
	if fn.flags&flagNoCluster != 0 && c.Tx.Clustered() {
		c.W.Error(errNoCluster)
		return
	}
	noWrites := fn.flags&flagNoWrites != 0
	if readOnly && !noWrites {
		c.W.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	e := getEnv()
	e.runFunction(c, lib, fn.name, c.Args[3:3+n], c.Args[3+n:], readOnly || noWrites || !c.Tx.Writable())
	putEnv(e)
}

func cmdFunction(c *Ctx) {
	switch strings.ToLower(c.Arg(1)) {
	case "load":
		functionLoad(c)
	case "delete":
		lib := storedLibrary(c.Tx, c.Args[2])
		if lib == nil {
			c.W.Error("ERR Library not found")
			return
		}
		c.Tx.DeleteFunctionLibrary(c.Args[2], funcNames(lib))
		c.W.OK()
	case "flush":
		switch {
		case len(c.Args) > 3:
			c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + c.Arg(1) + "'. Try FUNCTION HELP.")
			return
		case len(c.Args) == 3 && !strings.EqualFold(c.Arg(2), "sync") && !strings.EqualFold(c.Arg(2), "async"):
			c.W.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		c.Tx.FlushFunctions()
		c.W.OK()
	case "list":
		functionList(c)
	case "stats":
		functionStats(c)
	case "kill":
		killRunning(c)
	case "dump":
		functionDump(c)
	case "restore":
		functionRestore(c)
	case "help":
		HelpReply(c.W, functionHelp)
	}
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func functionLoad(c *Ctx) {
	replace := false
	for _, a := range c.Args[2 : len(c.Args)-1] {
		if !strings.EqualFold(string(a), "replace") {
			c.W.Error("ERR Unknown option given: " + string(a))
			return
		}
		replace = true
	}
	code := c.Args[len(c.Args)-1]
	name, msg := libHeader(code)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	old := storedLibrary(c.Tx, []byte(name))
	if old != nil && !replace {
		c.W.Error("ERR Library '" + name + "' already exists")
		return
	}
	// Library code may run only so long when the leader applies it for a
	// client; the log holds only loads that ended (see loadTimedOut).
	limit := c.live || c.rec == nil
	lib, msg := compileLibrary(name, code, limit)
	if msg == "" {
		msg = checkCollisions(c.Tx, lib)
	}
	if msg != "" {
		loadFailed(c, msg)
		return
	}
	if old != nil {
		c.Tx.DeleteFunctionLibrary([]byte(name), funcNames(old))
	}
	c.Tx.PutFunctionLibrary([]byte(name), lib.code, funcNames(lib))
	c.W.BulkString(name)
}

// loadFailed answers a FUNCTION LOAD or RESTORE whose library failed to
// load with msg (one that ran past its time limit as loadTimedOut does).
func loadFailed(c *Ctx, msg string) {
	if msg == errLoadTimeout && c.rec != nil {
		loadTimedOut(c)
		return
	}
	c.W.Error(msg)
}

// checkCollisions returns Redis's error if a function of lib is another
// library's.
func checkCollisions(tx *store.Tx, lib *library) string {
	for _, f := range lib.funcs {
		if owner, ok := tx.FunctionOwner([]byte(strings.ToLower(f.name))); ok && string(owner) != lib.name {
			return "ERR Function " + f.name + " already exists"
		}
	}
	return ""
}

// loadTimedOut answers a FUNCTION LOAD whose code ran past the time limit
// in the apply loop. Whether it does depends on timing, so the record must
// not say FUNCTION LOAD any more: as for a killed script (writeKilled), its
// command becomes a script that returns the same error.
func loadTimedOut(c *Ctx) {
	c.W.Error(errLoadTimeout)
	c.Args[0], c.Args[1], c.Args[2] = []byte("eval"), killedScript(errLoadTimeout), []byte("0")
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionList(c *Ctx) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case !withCode && strings.EqualFold(string(a), "withcode"):
			withCode = true
		case !hasPattern && strings.EqualFold(string(a), "libraryname"):
			if i >= len(c.Args)-1 {
				c.W.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, hasPattern = c.Args[i], true
		default:
			c.W.Error("ERR Unknown argument " + string(a))
			return
		}
	}
	names, codes := c.Tx.FunctionLibraries()
	var libs []*library
	for i, name := range names {
		if hasPattern && !glob.Match(pattern, name, true) {
			continue
		}
		lib, msg := compileLibrary(string(name), codes[i], false)
		if msg != "" {
			panic("command: stored library " + string(name) + " does not load: " + msg)
		}
		libs = append(libs, lib)
	}
	w := c.W
	w.ArrayLen(len(libs))
	for _, lib := range libs {
		if withCode {
			w.MapLen(4)
		} else {
			w.MapLen(3)
		}
		w.BulkString("library_name")
		w.BulkString(lib.name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.ArrayLen(len(lib.funcs))
		for _, f := range lib.funcs {
			w.MapLen(3)
			w.BulkString("name")
			w.BulkString(f.name)
			w.BulkString("description")
			if f.hasDesc {
				w.BulkString(f.desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			var flags []string
			for bit, name := range scriptFlagNames {
				if f.flags&(1<<bit) != 0 {
					flags = append(flags, name)
				}
			}
			w.SetLen(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.Bulk(lib.code)
		}
	}
}

// functionStats is FUNCTION STATS. The function running is not shown:
// running_script is always nil.
func functionStats(c *Ctx) {
	libs, funcs := FunctionCounts(c.Tx)
	w := c.W
	w.MapLen(2)
	w.BulkString("running_script")
	w.Null()
	w.BulkString("engines")
	w.MapLen(1)
	w.BulkString("LUA")
	w.MapLen(2)
	w.BulkString("libraries_count")
	w.Int(int64(libs))
	w.BulkString("functions_count")
	w.Int(int64(funcs))
}

// FunctionCounts counts the libraries stored and the functions they
// register (FUNCTION STATS, INFO memory).
func FunctionCounts(tx *store.Tx) (libraries, functions int) {
	names, codes := tx.FunctionLibraries()
	for i, name := range names {
		lib, msg := compileLibrary(string(name), codes[i], false)
		if msg != "" {
			panic("command: stored library " + string(name) + " does not load: " + msg)
		}
		functions += len(lib.funcs)
	}
	return len(names), functions
}

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

// functionDump is FUNCTION DUMP: the libraries in name order.
func functionDump(c *Ctx) {
	_, codes := c.Tx.FunctionLibraries()
	c.W.Bulk(rdb.EncodeFunctions(codes))
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func functionRestore(c *Ctx) {
	if len(c.Args) > 4 {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + c.Arg(1) + "'. Try FUNCTION HELP.")
		return
	}
	policy := "append"
	if len(c.Args) == 4 {
		policy = strings.ToLower(c.Arg(3))
		if policy != "append" && policy != "replace" && policy != "flush" {
			c.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, err := rdb.DecodeFunctions(c.Args[2])
	if err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	// The payload's libraries, checked among themselves first.
	var libs []*library
	names := map[string]bool{}
	funcs := map[string]bool{}
	for _, code := range codes {
		name, msg := libHeader(code)
		if msg == "" && names[name] {
			msg = "ERR Library '" + name + "' already exists"
		}
		var lib *library
		if msg == "" {
			lib, msg = compileLibrary(name, code, c.live || c.rec == nil)
		}
		if msg == "" {
			for _, f := range lib.funcs {
				if funcs[f.name] {
					msg = "ERR Function " + f.name + " already exists"
					break
				}
				funcs[f.name] = true
			}
		}
		if msg != "" {
			loadFailed(c, msg)
			return
		}
		names[name] = true
		libs = append(libs, lib)
	}
	if policy == "flush" {
		c.Tx.FlushFunctions()
	} else {
		var replaced []*library
		for _, lib := range libs {
			if old := storedLibrary(c.Tx, []byte(lib.name)); old != nil {
				if policy != "replace" {
					c.W.Error("ERR Library " + lib.name + " already exists")
					return
				}
				replaced = append(replaced, old)
			}
		}
		for _, lib := range libs {
			for _, f := range lib.funcs {
				owner, ok := c.Tx.FunctionOwner([]byte(strings.ToLower(f.name)))
				if ok && !names[string(owner)] {
					c.W.Error("ERR Function " + f.name + " already exists")
					return
				}
			}
		}
		for _, old := range replaced {
			c.Tx.DeleteFunctionLibrary([]byte(old.name), funcNames(old))
		}
	}
	for _, lib := range libs {
		c.Tx.PutFunctionLibrary([]byte(lib.name), lib.code, funcNames(lib))
	}
	c.W.OK()
}
