package command

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"basalt/internal/clock"
	"basalt/internal/glob"
	"basalt/internal/resp"
)

// Server commands that need no key space and no connection state (PING,
// ECHO, TIME, LOLWUT, COMMAND), and the table entries of the administration
// commands the server package runs (INFO, CONFIG, CLIENT, DEBUG).

// KeySpec is one key specification as COMMAND INFO shows it. The search
// begins at argument Index, or after Keyword (looked for from StartFrom,
// backwards when negative). Keys are then a range (LastKey relative to the
// beginning, negative from the end; KeyStep; Limit) or, when KeyNum, counted
// by the argument at KeyNumIdx with the first key at FirstKey.
type KeySpec struct {
	Flags     []string // "RO", "access", "RW", "update", "OW", "RM", "delete"...
	Notes     string
	Index     int
	Keyword   string
	StartFrom int
	KeyNum    bool
	// Unknown: neither where the search begins nor how keys are found can
	// be told (SORT's BY/GET patterns and STORE); Redis shows both as
	// "unknown" with empty specs.
	Unknown   bool
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

func init() {
	const admin = Admin | NoScript | Loading | Stale
	adminCats := []string{"admin", "dangerous"}
	connCats := []string{"connection"}
	adminConnCats := []string{"admin", "dangerous", "connection"}
	sub := func(name string, arity int, flags Flags, cats []string, since, group, summary string, tips ...string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Categories: cats, Since: since, Group: group, Summary: summary, Tips: tips}
	}
	register(
		&Command{Name: "ping", Arity: -1, Flags: Fast, Categories: []string{"connection"}, Group: "connection", Since: "1.0.0", Summary: "Ping the server",
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Run: cmdPing},
		&Command{Name: "echo", Arity: 2, Flags: Loading | Stale | Fast, Categories: []string{"connection"}, Group: "connection", Since: "1.0.0", Summary: "Echo the given string", Run: cmdEcho},
		&Command{Name: "time", Arity: 1, Flags: Loading | Stale | Fast, Group: "server", Since: "2.6.0", Summary: "Return the current server time",
			Tips: []string{"nondeterministic_output"}, Run: cmdTime},
		&Command{Name: "lolwut", Arity: -1, Flags: ReadOnly | Fast, Group: "server", Since: "5.0.0", Summary: "Display some computer art and the Redis version", Run: cmdLolwut},
		&Command{Name: "command", Arity: -1, Flags: Loading | Stale, Categories: connCats, Group: "server", Since: "2.8.13", Summary: "Get array of Redis command details",
			Tips: []string{"nondeterministic_output_order"}, Run: cmdCommand, Subcommands: []*Command{
				sub("command|count", 2, Loading|Stale, connCats, "2.8.13", "server", "Get total number of Redis commands"),
				sub("command|list", -2, Loading|Stale, connCats, "7.0.0", "server", "Get an array of Redis command names", "nondeterministic_output_order"),
				sub("command|info", -2, Loading|Stale, connCats, "2.8.13", "server", "Get array of specific Redis command details, or all when no argument is given.", "nondeterministic_output_order"),
				sub("command|docs", -2, Loading|Stale, connCats, "7.0.0", "server", "Get array of specific Redis command documentation", "nondeterministic_output_order"),
				sub("command|getkeys", -4, Loading|Stale, connCats, "2.8.13", "server", "Extract keys given a full Redis command"),
				sub("command|getkeysandflags", -4, Loading|Stale, connCats, "7.0.0", "server", "Extract keys and access flags given a full Redis command"),
				sub("command|help", 2, Loading|Stale, connCats, "5.0.0", "server", "Show helpful text about the different subcommands"),
			}},
		// The rest run in package server (flag Conn).
		&Command{Name: "info", Arity: -1, Flags: Conn | Loading | Stale, Categories: []string{"dangerous"}, Group: "server", Since: "1.0.0", Summary: "Get information and statistics about the server",
			Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
		&Command{Name: "acl", Arity: -2, Flags: Conn, Group: "server", Since: "6.0.0", Summary: "A container for Access List Control commands ", Subcommands: []*Command{
			sub("acl|cat", -2, NoScript|Loading|Stale, nil, "6.0.0", "server", "List the ACL categories or the commands inside a category"),
			sub("acl|deluser", -3, admin, nil, "6.0.0", "server", "Remove the specified ACL users and the associated rules"),
			sub("acl|dryrun", -4, admin, nil, "7.0.0", "server", "Returns whether the user can execute the given command without executing the command."),
			sub("acl|genpass", -2, NoScript|Loading|Stale, nil, "6.0.0", "server", "Generate a pseudorandom secure password to use for ACL users"),
			sub("acl|getuser", 3, admin, nil, "6.0.0", "server", "Get the rules for a specific ACL user"),
			sub("acl|help", 2, Loading|Stale, nil, "6.0.0", "server", "Show helpful text about the different subcommands"),
			sub("acl|list", 2, admin, nil, "6.0.0", "server", "List the current ACL rules in ACL config file format"),
			sub("acl|load", 2, admin, nil, "6.0.0", "server", "Reload the ACLs from the configured ACL file"),
			sub("acl|log", -2, admin, nil, "6.0.0", "server", "List latest events denied because of ACLs in place"),
			sub("acl|save", 2, admin, nil, "6.0.0", "server", "Save the current ACL rules in the configured ACL file"),
			sub("acl|setuser", -3, admin, nil, "6.0.0", "server", "Modify or create the rules for a specific ACL user"),
			sub("acl|users", 2, admin, nil, "6.0.0", "server", "List the username of all the configured ACL rules"),
			sub("acl|whoami", 2, NoScript|Loading|Stale, nil, "6.0.0", "server", "Return the name of the user associated to the current connection"),
		}},
		&Command{Name: "config", Arity: -2, Flags: Conn, Group: "server", Since: "2.0.0", Summary: "A container for server configuration commands", Subcommands: []*Command{
			sub("config|get", -3, admin, adminCats, "2.0.0", "server", "Get the values of configuration parameters"),
			sub("config|set", -4, admin, adminCats, "2.0.0", "server", "Set configuration parameters to the given values", "request_policy:all_nodes", "response_policy:all_succeeded"),
			sub("config|resetstat", 2, admin, adminCats, "2.0.0", "server", "Reset the stats returned by INFO"),
			sub("config|rewrite", 2, admin, adminCats, "2.8.0", "server", "Rewrite the configuration file with the in memory configuration"),
			sub("config|help", 2, Loading|Stale, nil, "5.0.0", "server", "Show helpful text about the different subcommands"),
		}},
		&Command{Name: "client", Arity: -2, Flags: Conn, Group: "connection", Since: "2.4.0", Summary: "A container for client connection commands", Subcommands: []*Command{
			sub("client|id", 2, NoScript|Loading|Stale, connCats, "5.0.0", "connection", "Returns the client ID for the current connection"),
			sub("client|setname", 3, NoScript|Loading|Stale, connCats, "2.6.9", "connection", "Set the current connection name"),
			sub("client|getname", 2, NoScript|Loading|Stale, connCats, "2.6.9", "connection", "Get the current connection name"),
			sub("client|list", -2, admin, adminConnCats, "2.4.0", "connection", "Get the list of client connections", "nondeterministic_output"),
			sub("client|info", 2, NoScript|Loading|Stale, connCats, "6.2.0", "connection", "Returns information about the current client connection.", "nondeterministic_output"),
			sub("client|kill", -3, admin, adminConnCats, "2.4.0", "connection", "Kill the connection of a client"),
			sub("client|no-evict", 3, admin, adminConnCats, "7.0.0", "connection", "Set client eviction mode for the current connection"),
			sub("client|proxy", 3, NoScript|Loading|Stale, connCats, "basalt", "connection", "In cluster mode, run the commands of slots another node leads on that node (ON), or answer MOVED (OFF)"),
			sub("client|reply", 3, NoScript|Loading|Stale, connCats, "3.2.0", "connection", "Instruct the server whether to reply to commands"),
			sub("client|help", 2, Loading|Stale, connCats, "5.0.0", "connection", "Show helpful text about the different subcommands"),
			sub("client|pause", -3, admin, adminConnCats, "2.9.50", "connection", "Stop processing commands from clients for some time"),
			sub("client|unpause", 2, admin, adminConnCats, "6.2.0", "connection", "Resume processing of clients that were paused"),
			sub("client|unblock", -3, admin, adminConnCats, "5.0.0", "connection", "Unblock a client blocked in a blocking command from a different connection"),
			sub("client|tracking", -3, NoScript|Loading|Stale, connCats, "6.0.0", "connection", "Enable or disable server assisted client side caching support"),
			sub("client|caching", 3, NoScript|Loading|Stale, connCats, "6.0.0", "connection", "Instruct the server about tracking or not keys in the next request"),
			sub("client|getredir", 2, NoScript|Loading|Stale, connCats, "6.0.0", "connection", "Get tracking notifications redirection client ID if any"),
			sub("client|trackinginfo", 2, NoScript|Loading|Stale, connCats, "6.2.0", "connection", "Return information about server assisted client side caching for the current connection"),
		}},
		&Command{Name: "debug", Arity: -2, Flags: Conn | admin, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "A container for debugging commands"},
		&Command{Name: "slowlog", Arity: -2, Flags: Conn, Group: "server", Since: "2.2.12", Summary: "A container for slow log commands", Subcommands: []*Command{
			sub("slowlog|len", 2, Admin|Loading|Stale, adminCats, "2.2.12", "server", "Get the slow log's length", "request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"),
			sub("slowlog|reset", 2, Admin|Loading|Stale, adminCats, "2.2.12", "server", "Clear all entries from the slow log", "request_policy:all_nodes", "response_policy:all_succeeded"),
			sub("slowlog|get", -2, Admin|Loading|Stale, adminCats, "2.2.12", "server", "Get the slow log's entries", "request_policy:all_nodes", "nondeterministic_output"),
			sub("slowlog|help", 2, Loading|Stale, nil, "6.2.0", "server", "Show helpful text about the different subcommands"),
		}},
		&Command{Name: "latency", Arity: -2, Flags: Conn, Group: "server", Since: "2.8.13", Summary: "A container for latency diagnostics commands", Subcommands: []*Command{
			sub("latency|reset", -2, admin, adminCats, "2.8.13", "server", "Reset latency data for one or more events.", "request_policy:all_nodes", "response_policy:all_succeeded"),
			sub("latency|help", 2, Loading|Stale, nil, "2.8.13", "server", "Show helpful text about the different subcommands."),
			sub("latency|history", 3, admin, adminCats, "2.8.13", "server", "Return timestamp-latency samples for the event.", "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"),
			sub("latency|latest", 2, admin, adminCats, "2.8.13", "server", "Return the latest latency samples for all events.", "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"),
			sub("latency|histogram", -2, admin, adminCats, "7.0.0", "server", "Return the cumulative distribution of latencies of a subset of commands or all.", "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"),
			sub("latency|doctor", 2, admin, adminCats, "2.8.13", "server", "Return a human readable latency analysis report.", "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"),
			sub("latency|graph", 3, admin, adminCats, "2.8.13", "server", "Return a latency graph for the event.", "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"),
		}},
		&Command{Name: "monitor", Arity: 1, Flags: Conn | admin, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "Listen for all requests received by the server in real time"},
	)
}

func cmdPing(c *Ctx) {
	switch len(c.Args) {
	case 1:
		c.W.Simple("PONG")
	case 2:
		c.W.Bulk(c.Args[1])
	default:
		c.W.Error(WrongArity("ping"))
	}
}

func cmdEcho(c *Ctx) { c.W.Bulk(c.Args[1]) }

// cmdTime reads the wall clock, except in the apply loop (a script, or
// MULTI), where time comes from the record: milliseconds, so the
// microseconds end in 000.
func cmdTime(c *Ctx) {
	now := clock.Now()
	if c.rec != nil {
		now = time.UnixMilli(c.Tx.Now)
	}
	c.W.ArrayLen(2)
	c.W.BulkInt(now.Unix())
	c.W.BulkInt(int64(now.Nanosecond() / 1000))
}

// RedisVersion is the Redis version basalt answers as.
const RedisVersion = "7.0.15"

// cmdLolwut answers with the version line only; Redis draws art for
// VERSION 5 and 6, which basalt does not.
func cmdLolwut(c *Ctx) {
	for i := 1; i < len(c.Args); i++ {
		if strings.EqualFold(c.Arg(i), "version") && i+1 < len(c.Args) {
			if _, err := strconv.ParseInt(c.Arg(i+1), 10, 64); err != nil {
				c.W.Error(ErrNotInt)
				return
			}
			i++
		}
	}
	c.W.Verbatim("txt", "Redis ver. "+RedisVersion+"\n")
}

var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Prints this help.",
}

// HelpReply writes a HELP text as Redis does: an array of status lines.
func HelpReply(w *resp.Writer, lines []string) {
	w.ArrayLen(len(lines))
	for _, l := range lines {
		w.Simple(l)
	}
}

func cmdCommand(c *Ctx) {
	w := c.W
	if len(c.Args) == 1 {
		all := All()
		w.ArrayLen(len(all))
		for _, cmd := range all {
			WriteInfo(w, cmd)
		}
		return
	}
	switch strings.ToLower(c.Arg(1)) {
	case "count":
		w.Int(int64(len(table)))
	case "help":
		HelpReply(w, commandHelp)
	case "info":
		if len(c.Args) == 2 {
			all := All()
			w.ArrayLen(len(all))
			for _, cmd := range all {
				WriteInfo(w, cmd)
			}
			return
		}
		w.ArrayLen(len(c.Args) - 2)
		for _, name := range c.Args[2:] {
			if cmd := LookupFull(string(name)); cmd != nil {
				WriteInfo(w, cmd)
			} else {
				w.Null()
			}
		}
	case "docs":
		var cmds []*Command
		if len(c.Args) == 2 {
			cmds = All()
		} else {
			for _, name := range c.Args[2:] {
				if cmd := LookupFull(string(name)); cmd != nil {
					cmds = append(cmds, cmd)
				}
			}
		}
		w.MapLen(len(cmds))
		for _, cmd := range cmds {
			w.BulkString(cmd.Name)
			writeDocs(w, cmd)
		}
	case "list":
		commandList(c)
	case "getkeys", "getkeysandflags":
		commandGetKeys(c, strings.EqualFold(c.Arg(1), "getkeysandflags"))
	}
}

// LookupFull finds a command or a "parent|sub" subcommand by name.
func LookupFull(name string) *Command {
	parent, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	cmd := table[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	return cmd.Subcommand([]byte(sub))
}

// WriteInfo writes one COMMAND INFO entry: the ten fields of Redis 7.0.
func WriteInfo(w *resp.Writer, cmd *Command) {
	w.ArrayLen(10)
	w.BulkString(cmd.Name)
	w.Int(int64(cmd.Arity))
	flags := cmd.Flags.Names()
	specs := cmd.Specs()
	movable := cmd.GetKeys != nil // keys found by parsing, as Redis's getkeys_proc
	for _, s := range specs {
		movable = movable || s.Keyword != "" || s.KeyNum || s.Unknown
	}
	if movable {
		flags = append(flags, "movablekeys")
	}
	w.SetLen(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.Step))
	w.SetLen(len(cmd.Categories))
	for _, cat := range cmd.Categories {
		w.Simple("@" + cat)
	}
	w.SetLen(len(cmd.Tips))
	for _, t := range cmd.Tips {
		w.BulkString(t)
	}
	w.SetLen(len(specs))
	for _, s := range specs {
		writeKeySpec(w, s)
	}
	if len(cmd.Subcommands) == 0 {
		w.SetLen(0) // as Redis: an empty set, but an array when there are some
		return
	}
	w.ArrayLen(len(cmd.Subcommands))
	for _, s := range cmd.Subcommands {
		WriteInfo(w, s)
	}
}

// Specs returns the command's key specs, deriving one from the legacy key
// positions when the table gives none.
func (c *Command) Specs() []KeySpec {
	if c.KeySpecs != nil || c.FirstKey <= 0 {
		return c.KeySpecs
	}
	s := KeySpec{Index: c.FirstKey, LastKey: c.LastKey, KeyStep: max(c.Step, 1)}
	if c.LastKey >= 0 {
		s.LastKey = c.LastKey - c.FirstKey
	}
	switch {
	case c.Flags&Write != 0:
		s.Flags = []string{"RW", "update"}
	default:
		s.Flags = []string{"RO", "access"}
	}
	return []KeySpec{s}
}

func writeKeySpec(w *resp.Writer, s KeySpec) {
	n := 3
	if s.Notes != "" {
		n++
		w.MapLen(n)
		w.BulkString("notes")
		w.BulkString(s.Notes)
	} else {
		w.MapLen(n)
	}
	w.BulkString("flags")
	w.SetLen(len(s.Flags))
	for _, f := range s.Flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.MapLen(2)
	w.BulkString("type")
	if s.Unknown {
		w.BulkString("unknown")
		w.BulkString("spec")
		w.MapLen(0)
		w.BulkString("find_keys")
		w.MapLen(2)
		w.BulkString("type")
		w.BulkString("unknown")
		w.BulkString("spec")
		w.MapLen(0)
		return
	}
	if s.Keyword != "" {
		w.BulkString("keyword")
		w.BulkString("spec")
		w.MapLen(2)
		w.BulkString("keyword")
		w.BulkString(s.Keyword)
		w.BulkString("startfrom")
		w.Int(int64(s.StartFrom))
	} else {
		w.BulkString("index")
		w.BulkString("spec")
		w.MapLen(1)
		w.BulkString("index")
		w.Int(int64(s.Index))
	}
	w.BulkString("find_keys")
	w.MapLen(2)
	w.BulkString("type")
	if s.KeyNum {
		w.BulkString("keynum")
		w.BulkString("spec")
		w.MapLen(3)
		w.BulkString("keynumidx")
		w.Int(int64(s.KeyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(s.FirstKey))
		w.BulkString("keystep")
		w.Int(int64(s.KeyStep))
	} else {
		w.BulkString("range")
		w.BulkString("spec")
		w.MapLen(3)
		w.BulkString("lastkey")
		w.Int(int64(s.LastKey))
		w.BulkString("keystep")
		w.Int(int64(s.KeyStep))
		w.BulkString("limit")
		w.Int(int64(s.Limit))
	}
}

// writeDocs writes a command's COMMAND DOCS map. Complexity and arguments
// are not in basalt's table, and Redis makes both optional.
func writeDocs(w *resp.Writer, cmd *Command) {
	n := 3
	if len(cmd.Subcommands) > 0 {
		n++
	}
	w.MapLen(n)
	w.BulkString("summary")
	w.BulkString(cmd.Summary)
	w.BulkString("since")
	w.BulkString(cmd.Since)
	w.BulkString("group")
	w.BulkString(cmd.Group)
	if len(cmd.Subcommands) > 0 {
		w.BulkString("subcommands")
		w.MapLen(len(cmd.Subcommands))
		for _, s := range cmd.Subcommands {
			w.BulkString(s.Name)
			writeDocs(w, s)
		}
	}
}

// commandList answers COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]:
// names of commands and subcommands.
func commandList(c *Ctx) {
	keep := func(*Command) bool { return true }
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 5 && strings.EqualFold(c.Arg(2), "filterby"):
		arg := c.Arg(4)
		switch strings.ToLower(c.Arg(3)) {
		case "module":
			keep = func(*Command) bool { return false } // no modules
		case "aclcat":
			keep = func(cmd *Command) bool { return slices.Contains(cmd.Categories, strings.ToLower(arg)) }
		case "pattern":
			keep = func(cmd *Command) bool { return glob.Match([]byte(arg), []byte(cmd.Name), true) }
		default:
			c.W.Error(ErrSyntax)
			return
		}
	default:
		c.W.Error(ErrSyntax)
		return
	}
	var names []string
	for _, cmd := range All() {
		if keep(cmd) {
			names = append(names, cmd.Name)
		}
		for _, s := range cmd.Subcommands {
			if keep(s) {
				names = append(names, s.Name)
			}
		}
	}
	c.W.BulkStrings(names)
}

// commandGetKeys answers COMMAND GETKEYS / GETKEYSANDFLAGS <full command>.
func commandGetKeys(c *Ctx, withFlags bool) {
	argv := c.Args[2:]
	cmd := Lookup(argv[0])
	if cmd != nil && len(cmd.Subcommands) > 0 && len(argv) > 1 {
		cmd = cmd.Subcommand(argv[1])
	}
	var specs []KeySpec
	if cmd != nil {
		specs = cmd.keySpecs()
	}
	switch {
	case cmd == nil:
		c.W.Error("ERR Invalid command specified")
		return
	case len(specs) == 0:
		c.W.Error("ERR The command has no key arguments")
		return
	case !cmd.ArityOK(len(argv)):
		c.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := cmd.FoundKeys(argv)
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		if !withFlags {
			c.W.Bulk(k.Key)
			continue
		}
		c.W.ArrayLen(2)
		c.W.Bulk(k.Key)
		c.W.SetLen(len(k.Flags))
		for _, f := range k.Flags {
			c.W.Simple(f)
		}
	}
}

// FoundKeys returns the keys of argv with the flags of their key specs
// (COMMAND GETKEYSANDFLAGS; the ACL checks a key's access by them).
func (c *Command) FoundKeys(argv [][]byte) []FoundKey {
	if c.GetKeys != nil {
		return c.GetKeys(argv)
	}
	var keys []FoundKey
	for _, s := range c.keySpecs() {
		for _, k := range s.Keys(argv) {
			keys = append(keys, FoundKey{k, s.Flags})
		}
	}
	return keys
}

// keySpecs are the specs that name keys (not shard channels: not_key).
func (c *Command) keySpecs() []KeySpec {
	return slices.DeleteFunc(slices.Clone(c.Specs()), func(s KeySpec) bool { return slices.Contains(s.Flags, "not_key") })
}

// SpecKeys returns the keys of argv as COMMAND GETKEYS finds them, from
// the key specs: unlike Keys, it follows numkeys arguments and keywords
// (ZUNION, EVAL, XREAD ... STREAMS).
func (c *Command) SpecKeys(argv [][]byte) [][]byte {
	if c.GetKeys != nil {
		return c.Keys(argv)
	}
	var keys [][]byte
	for _, s := range c.keySpecs() {
		keys = append(keys, s.Keys(argv)...)
	}
	return keys
}

// Keys returns the arguments of argv (argv[0] the command) that the spec
// names as keys.
func (s KeySpec) Keys(argv [][]byte) [][]byte {
	start := s.Index
	if s.Keyword != "" {
		start = 0
		from, step := s.StartFrom, 1
		if from < 0 {
			from, step = len(argv)+from, -1
		}
		for i := from; i > 0 && i < len(argv); i += step {
			if strings.EqualFold(string(argv[i]), s.Keyword) {
				start = i + 1
				break
			}
		}
	}
	if start <= 0 || start >= len(argv) {
		return nil
	}
	step := max(s.KeyStep, 1)
	var first, last int
	if s.KeyNum {
		if start+s.KeyNumIdx >= len(argv) {
			return nil
		}
		n, err := strconv.Atoi(string(argv[start+s.KeyNumIdx]))
		if err != nil || n <= 0 {
			return nil
		}
		first = start + s.FirstKey
		last = first + (n-1)*step
		if last >= len(argv) { // more keys than arguments: none, as Redis finds
			return nil
		}
	} else {
		first = start
		switch {
		case s.LastKey >= 0:
			last = start + s.LastKey
		case s.Limit > 1:
			last = start + (len(argv)-start)/s.Limit - 1
		default:
			last = len(argv) + s.LastKey
		}
	}
	var keys [][]byte
	for i := first; i <= last && i < len(argv); i += step {
		keys = append(keys, argv[i])
	}
	return keys
}
