package command

import (
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"basalt/internal/clock"
	"basalt/internal/num"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Lua scripting (eval.c and script_lua.c in Redis 7.0): EVAL, EVALSHA, their
// read-only forms and SCRIPT. A script is one record: the connection turns
// EVALSHA into EVAL with the script's body before proposing it (see
// PrepareScript), so the log never depends on a script cache and replaying
// it, or applying it on a replica, runs exactly the same code. The script
// runs inside the apply loop, so it is atomic and isolated like MULTI/EXEC;
// its redis.call runs the command handlers on the same write batch. The
// read-only forms run on a read view, outside the apply loop.
//
// The Lua environment (script_lua.go) follows Redis's: KEYS and ARGV, the
// redis library, protected globals, cjson and bit (script_libs.go).
// Randomness comes from the record's seed and TIME from the record's clock,
// so a script's effects are a function of the state and the record.
func init() {
	scriptCat := []string{"scripting"}
	const evalFlags = NoScript | Stale | SkipMonitor | NoMandatoryKeys | Script
	// EVAL's key spec has a note, EVALSHA's the same spec without it.
	evalSpec := func(ro, notes bool) []KeySpec {
		spec := KeySpec{Flags: []string{"RW", "access", "update"}, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}
		note := "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
		if ro {
			spec.Flags = []string{"RO", "access"}
			note = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
		}
		if notes {
			spec.Notes = note
		}
		return []KeySpec{spec}
	}
	sub := func(name string, arity int, flags Flags, summary string, tips ...string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Categories: scriptCat, Since: "2.6.0", Group: "scripting", Summary: summary, Tips: tips}
	}
	register(
		&Command{Name: "eval", Arity: -3, Flags: evalFlags, Categories: scriptCat, Since: "2.6.0", Group: "scripting", Summary: "Execute a Lua script server side",
			KeySpecs: evalSpec(false, true), Run: func(c *Ctx) { cmdEval(c, false) }},
		&Command{Name: "evalsha", Arity: -3, Flags: evalFlags, Categories: scriptCat, Since: "2.6.0", Group: "scripting", Summary: "Execute a Lua script server side",
			KeySpecs: evalSpec(false, false), Run: cmdEvalShaMissing},
		&Command{Name: "eval_ro", Arity: -3, Flags: ReadOnly | evalFlags, Categories: scriptCat, Since: "7.0.0", Group: "scripting", Summary: "Execute a read-only Lua script server side",
			KeySpecs: evalSpec(true, true), Run: func(c *Ctx) { cmdEval(c, true) }},
		&Command{Name: "evalsha_ro", Arity: -3, Flags: ReadOnly | evalFlags, Categories: scriptCat, Since: "7.0.0", Group: "scripting", Summary: "Execute a read-only Lua script server side",
			KeySpecs: evalSpec(true, false), Run: cmdEvalShaMissing},
		&Command{Name: "script", Arity: -2, Group: "scripting", Since: "2.6.0", Summary: "A container for Lua scripts management commands", Run: cmdScript,
			Subcommands: []*Command{
				sub("script|debug", 3, NoScript, "Set the debug mode for executed scripts."),
				sub("script|exists", -3, NoScript, "Check existence of scripts in the script cache.", "request_policy:all_shards", "response_policy:agg_logical_and"),
				sub("script|flush", -2, NoScript, "Remove all the scripts from the script cache.", "request_policy:all_nodes", "response_policy:all_succeeded"),
				sub("script|help", 2, Loading|Stale, "Show helpful text about the different subcommands"),
				sub("script|kill", 2, NoScript|AllowBusy, "Kill the script currently in execution.", "request_policy:all_shards", "response_policy:one_succeeded"),
				sub("script|load", 3, NoScript|Stale, "Load the specified Lua script into the script cache.", "request_policy:all_nodes", "response_policy:all_succeeded"),
			}},
	)
}

// script is a compiled script of the cache.
type script struct {
	sha   string
	body  []byte
	proto *lua.FunctionProto
	// From a "#!lua flags=..." first line: shebang says there is one,
	// noWrites that the script may not write (it then runs as a read),
	// noCluster that it may not run in cluster mode.
	shebang, noWrites, noCluster bool
}

// scripts is the script cache: SCRIPT LOAD and EVAL add to it, SCRIPT
// FLUSH empties it, EVALSHA looks bodies up in it. It lives in memory as in
// Redis (lost on restart) and holds compiled code, so a script is compiled
// once. Records never depend on it: they carry the body.
var scripts = struct {
	sync.Mutex
	m      map[string]*script
	byBody map[string]*script // the same scripts by body: EVALSHA runs as EVAL, and a map lookup costs less than a SHA1
}{m: map[string]*script{}, byBody: map[string]*script{}}

// CachedScripts is the number of scripts in the cache (INFO's
// number_of_cached_scripts).
func CachedScripts() int {
	scripts.Lock()
	defer scripts.Unlock()
	return len(scripts.m)
}

// SHA1Hex is the hex SHA1 of b, the name of a script.
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// loadScript returns body's compiled script, compiling and caching it the
// first time; on a compile error it returns Redis's error reply.
func loadScript(body []byte) (*script, string) {
	scripts.Lock()
	s := scripts.byBody[string(body)]
	scripts.Unlock()
	if s != nil {
		return s, ""
	}
	sha := SHA1Hex(body)
	scripts.Lock()
	s = scripts.m[sha]
	scripts.Unlock()
	if s != nil {
		return s, ""
	}
	shebang, noWrites, msg := parseShebang(body)
	if msg != "" {
		return nil, msg
	}
	src := string(body)
	if shebang { // the first line becomes a comment: line numbers stay
		src = "--" + src[2:]
	}
	proto, msg := compileLua(src, body, "user_script", "ERR Error compiling script (new function): ")
	if msg != "" {
		return nil, msg
	}
	s = &script{sha: sha, body: append([]byte(nil), body...), proto: proto, shebang: shebang, noWrites: noWrites,
		noCluster: shebang && shebangHasFlag(body, "no-cluster")}
	scripts.Lock()
	scripts.m[sha] = s
	scripts.byBody[string(s.body)] = s
	scripts.Unlock()
	return s, ""
}

// compileLua compiles src (body, as the user wrote it, for error lines)
// as the chunk named chunk; an error is Redis's, after prefix.
func compileLua(src string, body []byte, chunk, prefix string) (*lua.FunctionProto, string) {
	tree, err := parse.Parse(strings.NewReader(src), chunk)
	if err != nil {
		return nil, prefix + compileError(err, body, chunk)
	}
	proto, err := lua.Compile(tree, chunk)
	if err != nil {
		return nil, prefix + compileError(err, body, chunk)
	}
	// gopher-lua marks a main chunk as needing Lua 5.0's implicit "arg"
	// table and builds one on every call, though the chunk has no local of
	// that name to reach it; Lua 5.1 marks only functions declared with
	// "..." that way. A third of an EVALSHA's allocations went there.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

// shebangHasFlag reports whether a valid shebang's flags= list names flag.
func shebangHasFlag(body []byte, flag string) bool {
	line, _, _ := strings.Cut(string(body), "\n")
	for _, p := range strings.Split(line, " ") {
		if flags, ok := strings.CutPrefix(p, "flags="); ok && slices.Contains(strings.Split(flags, ","), flag) {
			return true
		}
	}
	return false
}

// parseShebang reads Redis 7's "#!lua flags=no-writes,..." first line.
func parseShebang(body []byte) (shebang, noWrites bool, msg string) {
	if !strings.HasPrefix(string(body), "#!") {
		return false, false, ""
	}
	line, _, _ := strings.Cut(string(body), "\n")
	parts := strings.Split(line, " ")
	if parts[0] != "#!lua" {
		return true, false, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		flags, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return true, false, "ERR Unknown lua shebang option: " + p
		}
		for _, f := range strings.Split(flags, ",") {
			switch f {
			case "no-writes":
				noWrites = true
			case "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys", "":
			default:
				return true, false, "ERR Unexpected flag in script shebang: " + f
			}
		}
	}
	return true, noWrites, ""
}

// lookupScript returns the cached script named sha (any case), or nil.
func lookupScript(sha []byte) *script {
	if len(sha) != 40 {
		return nil
	}
	scripts.Lock()
	defer scripts.Unlock()
	return scripts.m[strings.ToLower(string(sha))]
}

const errNoScript = "NOSCRIPT No matching script. Please use EVAL."

// PrepareScript is what a connection does with EVAL, EVALSHA, FCALL and
// their read-only forms before running or proposing them: EVALSHA becomes EVAL
// carrying the cached body, so that the record is self-contained, and the
// checks that need no data (number of keys, compilation) are answered
// without a record. It returns the command to run and whether it only
// reads (EVAL_RO, or a script flagged no-writes), or an error reply.
func PrepareScript(argv [][]byte) (out [][]byte, read bool, msg string) {
	name := strings.ToLower(string(argv[0]))
	if name == "fcall" || name == "fcall_ro" {
		// The function is data: its checks need the store (cmdFcall).
		return argv, name == "fcall_ro", ""
	}
	if name == "evalsha" || name == "evalsha_ro" {
		s := lookupScript(argv[1])
		if s == nil {
			return nil, false, errNoScript
		}
		out := make([][]byte, len(argv))
		copy(out, argv)
		out[0] = []byte(strings.Replace(name, "evalsha", "eval", 1))
		out[1] = s.body
		argv = out
	}
	if _, _, msg := scriptKeys(argv); msg != "" {
		return nil, false, msg
	}
	s, msg := loadScript(argv[1])
	if msg != "" {
		return nil, false, msg
	}
	ro := strings.HasSuffix(strings.ToLower(string(argv[0])), "_ro")
	if msg := roCheck(s, ro); msg != "" {
		return nil, false, msg
	}
	return argv, ro || s.noWrites, ""
}

// roCheck refuses a script with a shebang but without no-writes in
// EVAL_RO, as Redis does.
func roCheck(s *script, ro bool) string {
	if ro && s.shebang && !s.noWrites {
		return "ERR Can not execute a script with write flag using *_ro command."
	}
	return ""
}

// ResolveQueued rewrites the EVALSHA commands of a MULTI block into EVAL
// with their bodies, as PrepareScript does for one command, taking the
// block's own SCRIPT LOAD and SCRIPT FLUSH into account in order. An
// EVALSHA whose script is missing stays as is and answers NOSCRIPT when the
// block is applied.
func ResolveQueued(cmds [][][]byte) [][][]byte {
	var out [][][]byte
	for i, argv := range cmds {
		name := strings.ToLower(string(argv[0]))
		switch {
		case name == "script" && len(argv) == 3 && strings.EqualFold(string(argv[1]), "load"):
			loadScript(argv[2])
		case name == "script" && len(argv) >= 2 && strings.EqualFold(string(argv[1]), "flush"):
			flushScripts()
		case (name == "evalsha" || name == "evalsha_ro") && len(argv) >= 3:
			if rewritten, _, msg := PrepareScript(argv); msg == "" {
				if out == nil {
					out = append([][][]byte(nil), cmds...)
				}
				out[i] = rewritten
			}
		}
	}
	if out == nil {
		return cmds
	}
	return out
}

func flushScripts() {
	scripts.Lock()
	scripts.m, scripts.byBody = map[string]*script{}, map[string]*script{}
	scripts.Unlock()
}

// scriptKeys splits EVAL's arguments into keys and args, or returns
// Redis's error for a bad number of keys.
func scriptKeys(argv [][]byte) (keys, args [][]byte, msg string) {
	n, ok := num.ParseInt(argv[2])
	switch {
	case !ok:
		return nil, nil, ErrNotInt
	case n > int64(len(argv)-3):
		return nil, nil, "ERR Number of keys can't be greater than number of args"
	case n < 0:
		return nil, nil, "ERR Number of keys can't be negative"
	}
	return argv[3 : 3+n], argv[3+n:], ""
}

// cmdEval runs a script: in the apply loop for EVAL, on a read view or in
// the apply loop (inside MULTI) for EVAL_RO.
func cmdEval(c *Ctx, readOnly bool) {
	keys, args, msg := scriptKeys(c.Args)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	s, msg := loadScript(c.Args[1])
	if msg == "" && s.noCluster && c.Tx.Clustered() {
		msg = errNoCluster
	}
	if msg == "" {
		msg = roCheck(s, readOnly)
	}
	if msg != "" {
		c.W.Error(msg)
		return
	}
	e := getEnv()
	e.run(c, s, keys, args, readOnly || s.noWrites || !c.Tx.Writable())
	putEnv(e)
}

// cmdEvalShaMissing runs only for an EVALSHA the connection could not
// resolve (inside MULTI): the apply loop never looks at the cache.
func cmdEvalShaMissing(c *Ctx) { c.W.Error(errNoScript) }

func cmdScript(c *Ctx) {
	switch strings.ToLower(c.Arg(1)) {
	case "load":
		s, msg := loadScript(c.Args[2])
		if msg != "" {
			c.W.Error(msg)
			return
		}
		c.W.BulkString(s.sha)
	case "exists":
		c.W.ArrayLen(len(c.Args) - 2)
		for _, sha := range c.Args[2:] {
			if lookupScript(sha) != nil {
				c.W.Int(1)
			} else {
				c.W.Int(0)
			}
		}
	case "flush":
		if len(c.Args) > 3 || len(c.Args) == 3 && !strings.EqualFold(c.Arg(2), "sync") && !strings.EqualFold(c.Arg(2), "async") {
			c.W.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
		flushScripts()
		c.W.OK()
	case "kill":
		killRunning(c)
	case "debug":
		c.W.Error("ERR SCRIPT DEBUG is not supported")
	case "help":
		c.W.BulkStrings([]string{
			"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DEBUG (YES|SYNC|NO)",
			"    Set the debug mode for subsequent scripts executed.",
			"EXISTS <sha1> [<sha1> ...]",
			"    Return information about the existence of the scripts in the script cache.",
			"FLUSH [ASYNC|SYNC]",
			"    Flush the Lua scripts cache. Very dangerous on replicas.",
			"    When called without the optional mode argument, the behavior is determined by the",
			"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
			"    * ASYNC: Asynchronously flush the scripts cache.",
			"    * SYNC: Synchronously flush the scripts cache.",
			"KILL",
			"    Kill the currently executing Lua script.",
			"LOAD <script>",
			"    Load a script into the scripts cache without executing it.",
			"HELP",
			"    Prints this help.",
		})
	}
}

// killRunning is SCRIPT KILL and FUNCTION KILL: they stop the script or
// function running, whichever it is.
func killRunning(c *Ctx) {
	msg := errNotBusy // inside EXEC, in the apply loop: nothing else runs
	if c.rec == nil {
		msg = KillScript()
	}
	if msg != "" {
		c.W.Error(msg)
		return
	}
	c.W.OK()
}

// clusterDisabled refuses CLUSTER called from a script with Redis's error
// when it has no cluster support (outside cluster mode):
// CLUSTER RESET is refused to scripts, the other subcommands say that
// cluster support is disabled.
func clusterDisabled(argv [][]byte) string {
	if len(argv) < 2 {
		return "Wrong number of args calling Redis command from script"
	}
	if strings.EqualFold(string(argv[1]), "reset") {
		return "This Redis command is not allowed from script"
	}
	return "This instance has cluster support disabled"
}

// publish is PUBLISH called from a script. The message goes out when the
// script's record commits, on every node that applies it, as a PUBLISH
// record does in a cluster. Its count is the leader's: the leader applying
// the record for its client counts its subscribers and keeps the count in
// the record (Record.Published), so that a follower or a replay answers
// the script the same and a script that branches on it writes the same.
func (e *luaEnv) publish(argv [][]byte) string {
	c := e.c
	if e.readOnly || !c.Tx.Writable() || c.rec == nil {
		return "Write commands are not allowed from read-only scripts."
	}
	var n int64
	if rec := c.rec; c.live {
		if c.Host != nil {
			n = int64(c.Host.PublishReceivers(argv[1]))
		}
		rec.Published = append(rec.Published, n)
	} else if len(rec.Published) > 0 {
		n, rec.Published = rec.Published[0], rec.Published[1:]
	}
	// A node catching up on old records has no subscriber that was there.
	if clock.UnixMilli()-c.rec.Time < publishMaxAge {
		c.Tx.Publish(argv[1], argv[2], nil)
	}
	e.w.Reset()
	e.w.Proto = e.resp
	e.w.Int(n)
	return ""
}

// publishMaxAge is how old a record's message may be and still be
// delivered (as shard.Publish does for PUBLISH records).
const publishMaxAge = 5000 // ms
