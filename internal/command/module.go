package command

import "log/slog"

// MODULE: basalt loads no modules, but it has RedisJSON's commands built
// in, and clients and tools (redis-om, RedisInsight) look for the "ReJSON"
// module in MODULE LIST before they use them. So MODULE LIST names it, at
// the RedisJSON version whose commands basalt follows, and INFO modules
// shows it. LOAD, LOADEX and UNLOAD are refused unless
// enable-module-command allows them (the server's protected commands);
// allowed, they answer what Redis answers for a module it cannot load and
// for RedisJSON, whose data type keeps it loaded.

// JSONModuleVersion is the RedisJSON version basalt's JSON commands
// follow, as MODULE LIST shows versions: 2.6.0.
const JSONModuleVersion = 20600

// JSONModuleInfo is the module's line of INFO modules.
const JSONModuleInfo = "module:name=ReJSON,ver=20600,api=1,filters=0,usedby=[],using=[],options=[handle-io-errors]"

func init() {
	const admin = Admin | NoScript
	adminCats := []string{"admin", "dangerous"}
	sub := func(name string, arity int, flags Flags, summary string, run func(*Ctx), tips ...string) *Command {
		return &Command{Name: "module|" + name, Arity: arity, Flags: flags, Categories: adminCats, Group: "server", Since: "4.0.0", Summary: summary, Tips: tips, Run: run}
	}
	load := func(name string, arity int, summary string, run func(*Ctx)) *Command {
		return sub(name, arity, admin|NoAsyncLoading, summary, run)
	}
	register(&Command{Name: "module", Arity: -2, Group: "server", Since: "4.0.0", Summary: "A container for module commands",
		Run: func(c *Ctx) { table["module"].Subcommand(c.Args[1]).Run(c) },
		Subcommands: []*Command{
			{Name: "module|help", Arity: 2, Flags: Loading | Stale, Group: "server", Since: "5.0.0", Summary: "Show helpful text about the different subcommands", Run: cmdModuleHelp},
			sub("list", 2, admin, "List all modules loaded by the server", cmdModuleList, "nondeterministic_output_order"),
			load("load", -3, "Load a module", cmdModuleLoad),
			load("loadex", -3, "Load a module with extended parameters", cmdModuleLoad),
			load("unload", 3, "Unload a module", cmdModuleUnload),
		}})
}

var moduleHelp = []string{
	"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LIST",
	"    Return a list of loaded modules.",
	"LOAD <path> [<arg> ...]",
	"    Load a module library from <path>, passing to it any optional arguments.",
	"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
	"    Load a module library from <path>, while passing it module configurations and optional arguments.",
	"UNLOAD <name>",
	"    Unload a module.",
	"HELP",
	"    Prints this help.",
}

func cmdModuleHelp(c *Ctx) {
	HelpReply(c.W, moduleHelp)
}

func cmdModuleList(c *Ctx) {
	c.W.ArrayLen(1)
	c.W.MapLen(4)
	c.W.BulkString("name")
	c.W.BulkString("ReJSON")
	c.W.BulkString("ver")
	c.W.Int(JSONModuleVersion)
	c.W.BulkString("path")
	c.W.BulkString("builtin")
	c.W.BulkString("args")
	c.W.ArrayLen(0)
}

// cmdModuleLoad answers what Redis answers when a module fails to load:
// basalt has no module API.
func cmdModuleLoad(c *Ctx) {
	slog.Warn("MODULE LOAD: basalt has no module API and loads no modules", "path", string(c.Args[2]))
	c.W.Error("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(c *Ctx) {
	why := "no such module with that name"
	if string(c.Args[2]) == "ReJSON" {
		why = "the module exports one or more module-side data types, can't unload"
	}
	c.W.Error("ERR Error unloading module: " + why)
}
