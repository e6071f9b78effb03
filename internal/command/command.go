// Package command holds basalt's command table and the handlers that work on
// the key space. The table is data: name, arity, flags and key positions for
// every command, from which the server checks arity, finds keys, answers
// COMMAND and decides whether a command is a read or a write.
package command

import (
	"slices"
	"strings"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Flags describe a command, as COMMAND INFO lists them.
type Flags uint32

const (
	Write Flags = 1 << iota
	ReadOnly
	DenyOOM
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Fast
	NoAuth
	MayReplicate
	NoMulti
	AllowBusy
	// Conn marks commands the server runs itself because they need the
	// connection (SELECT, MULTI, CLIENT ...). Not a Redis flag.
	Conn
	NoMandatoryKeys
	// Script marks EVAL and its kin: not writes, yet applied as a record
	// (see script.go). Not a Redis flag.
	Script
	NoAsyncLoading
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{Write, "write"}, {ReadOnly, "readonly"}, {DenyOOM, "denyoom"}, {Admin, "admin"},
	{PubSub, "pubsub"}, {NoScript, "noscript"}, {Blocking, "blocking"}, {Loading, "loading"},
	{Stale, "stale"}, {SkipMonitor, "skip_monitor"}, {SkipSlowlog, "skip_slowlog"},
	{Fast, "fast"}, {NoAuth, "no_auth"}, {MayReplicate, "may_replicate"},
	{NoMandatoryKeys, "no_mandatory_keys"}, {NoAsyncLoading, "no_async_loading"}, {NoMulti, "no_multi"}, {AllowBusy, "allow_busy"},
}

// Names lists the Redis flag names set in f.
func (f Flags) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Command is one entry of the table.
type Command struct {
	Name  string // lower case; subcommands are "parent|sub"
	Arity int    // as Redis: N exactly, -N at least N (the name counts)
	Flags Flags
	// Key positions as Redis's legacy first/last/step triple: LastKey -1
	// means the last argument, 0 no keys.
	FirstKey, LastKey, Step int
	// Categories are the command's own ACL categories (without '@'):
	// register adds those its flags imply (write, read, fast, slow...).
	Categories            []string
	Summary, Since, Group string // for COMMAND DOCS
	Subcommands           []*Command
	// Tips are COMMAND INFO's command tips ("nondeterministic_output",
	// "request_policy:all_shards"...). KeySpecs describe the key arguments;
	// nil means one spec derived from FirstKey/LastKey/Step (see server.go).
	Tips     []string
	KeySpecs []KeySpec
	// Run executes the command on the key space. Nil for Conn commands,
	// which the server runs.
	Run func(c *Ctx)
	// Conn is the server's handler of a Conn command (set by the server's
	// init; typed as the server's func(*Client, [][]byte), which this
	// package cannot name).
	Conn any
	// ReadFirst, for a command that only sometimes writes (PFCOUNT stores
	// the count it computes), answers on a read view when that changes
	// nothing and reports whether it did; otherwise it writes no reply and
	// the command goes through the write path.
	ReadFirst func(c *Ctx) bool
	// ReadFirstAfterSame says that what ReadFirst answers stays true once
	// the same command's earlier calls are applied (a PFADD only raises
	// registers and creates keys), so it may answer while a client's
	// earlier calls of it are still on the write path.
	ReadFirstAfterSame bool
	// GetKeys, for a command whose keys only parsing finds (SORT's STORE
	// destination, Redis's getkeys_proc), returns them with their key
	// spec's flags, in place of the key positions and specs.
	GetKeys func(argv [][]byte) []FoundKey
	// Stats are the command's calls and latencies (callstats.go).
	Stats CallStats
}

// FoundKey is a key argument with the flags of its key spec.
type FoundKey struct {
	Key   []byte
	Flags []string
}

// IsWrite reports whether the command goes through the write path.
func (c *Command) IsWrite() bool { return c.Flags&Write != 0 || c.ReadFirst != nil }

// Keys returns the key arguments of argv according to the key positions.
func (c *Command) Keys(argv [][]byte) [][]byte {
	if c.GetKeys != nil {
		var keys [][]byte
		for _, k := range c.GetKeys(argv) {
			keys = append(keys, k.Key)
		}
		return keys
	}
	if c.FirstKey <= 0 || c.FirstKey >= len(argv) {
		return nil
	}
	last := c.LastKey
	if last < 0 {
		last = len(argv) + last
	}
	if last >= len(argv) {
		last = len(argv) - 1
	}
	step := max(c.Step, 1)
	if step == 1 && last >= c.FirstKey { // a part of argv: no allocation
		return argv[c.FirstKey : last+1 : last+1]
	}
	var keys [][]byte
	for i := c.FirstKey; i <= last && i < len(argv); i += step {
		keys = append(keys, argv[i])
	}
	return keys
}

// SlotKeys returns the keys of argv that decide its hash slot in cluster
// mode: those COMMAND GETKEYS finds (numkeys arguments and keywords
// followed, shard channels left out), without allocating for a command
// whose keys are one run of arguments.
func (c *Command) SlotKeys(argv [][]byte) [][]byte {
	if c.GetKeys == nil && c.plainKeys() {
		return c.Keys(argv)
	}
	return c.SpecKeys(argv)
}

// plainKeys reports whether the key specs say no more than FirstKey,
// LastKey and Step do.
func (c *Command) plainKeys() bool {
	switch len(c.KeySpecs) {
	case 0:
		return true
	case 1:
		s := c.KeySpecs[0]
		last := s.LastKey == c.LastKey && s.LastKey < 0 || s.LastKey >= 0 && s.LastKey == c.LastKey-c.FirstKey
		return s.Keyword == "" && !s.KeyNum && !s.Unknown && s.Limit <= 1 && s.Index == c.FirstKey && last &&
			max(s.KeyStep, 1) == max(c.Step, 1) && !slices.Contains(s.Flags, "not_key")
	}
	return false
}

// ArityOK reports whether n arguments (the name included) fit the arity.
func (c *Command) ArityOK(n int) bool {
	if c.Arity >= 0 {
		return n == c.Arity
	}
	return n >= -c.Arity
}

// Ctx is what a handler gets: the arguments, a view of the key space and the
// reply writer. In the apply loop Tx is the write batch and Seed comes from
// the record; for reads Tx is a read view.
type Ctx struct {
	Tx   *store.Tx
	Args [][]byte
	W    *resp.Writer
	Seed uint64
	Host Host          // the server, told of what scripts call; may be nil
	rec  *shard.Record // nil for reads
	run  *shard.Run    // the leader's, for its client's record; nil otherwise
	// live: the leader applies rec for a client now; false when rec comes
	// from the log (a follower, a restart, Replay). Only a live script may
	// be stopped (script_kill.go).
	live bool
	// script: run by a script's redis.call (Redis's CLIENT_SCRIPT).
	script bool
	// ACL is the rules of the user whose script runs (shard.Record.ACL;
	// "": any command), for a read-only script that has no record.
	ACL string
}

// acl is the rules the script's calls are checked against.
func (c *Ctx) acl() string {
	if c.rec != nil {
		return c.rec.ACL
	}
	return c.ACL
}

// MayBlock reports whether a blocking command that finds nothing should
// wait (a client's BLPOP) rather than answer nil (inside MULTI, replay).
func (c *Ctx) MayBlock() bool { return c.run != nil && c.run.Block }

// Retried reports whether a blocked command is being run again because one
// of its keys was written.
func (c *Ctx) Retried() bool { return c.run != nil && c.run.Retry }

// BlockOn makes the command wait for a write to one of keys; it writes no
// reply. The apply loop runs the command again once one is touched.
func (c *Ctx) BlockOn(keys [][]byte) { c.run.BlockedOn = keys }

var table = map[string]*Command{}

// All returns every top-level command.
func All() []*Command {
	out := make([]*Command, 0, len(table))
	for _, c := range table {
		out = append(out, c)
	}
	return out
}

// Lookup finds a command by name, ignoring ASCII case as Redis does,
// without allocating (clients send GET or get).
func Lookup(name []byte) *Command {
	var buf [32]byte // longer than any command name
	if len(name) > len(buf) {
		return nil
	}
	// Lowered first: one map lookup whatever the case (clients often send
	// names in capitals).
	lower := buf[:len(name)]
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		lower[i] = ch
	}
	return table[string(lower)]
}

// singleKey returns a helper that gives a command of group the shape most
// commands share: one key, at argument 1, with one key spec of the given
// flags (none when flags is empty).
func singleKey(group string) func(c *Command, flags ...string) *Command {
	return func(c *Command, flags ...string) *Command {
		c.FirstKey, c.LastKey, c.Step = 1, 1, 1
		c.Group = group
		if len(flags) > 0 {
			c.KeySpecs = []KeySpec{{Flags: flags, Index: 1, KeyStep: 1}}
		}
		return c
	}
}

// ACLCategories are Redis's ACL categories, in its order (ACL CAT and
// COMMAND INFO list them so).
var ACLCategories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting",
}

// implicitCategories adds the categories a command's flags imply to the
// ones its entry names, as Redis's setImplicitACLCategories does, and puts
// them in Redis's order.
func (c *Command) implicitCategories() {
	c.Categories = slices.Clone(c.Categories) // entries share their lists
	has := func(cat string) bool { return slices.Contains(c.Categories, cat) }
	add := func(cats ...string) {
		for _, cat := range cats {
			if !has(cat) {
				c.Categories = append(c.Categories, cat)
			}
		}
	}
	if c.Flags&Write != 0 {
		add("write")
	}
	if c.Flags&ReadOnly != 0 && !has("scripting") {
		add("read")
	}
	if c.Flags&Admin != 0 {
		add("admin", "dangerous")
	}
	if c.Flags&PubSub != 0 {
		add("pubsub")
	}
	if c.Flags&Fast != 0 {
		add("fast")
	}
	if c.Flags&Blocking != 0 {
		add("blocking")
	}
	if !has("fast") {
		add("slow")
	}
	// Redis's order; a module's own (json) after.
	rank := func(cat string) int {
		if i := slices.Index(ACLCategories, cat); i >= 0 {
			return i
		}
		return len(ACLCategories)
	}
	slices.SortStableFunc(c.Categories, func(a, b string) int { return rank(a) - rank(b) })
}

// register adds commands to the table; each type's file calls it from init
// with its own list, so the table is assembled from one place per type.
func register(cmds ...*Command) {
	for _, c := range cmds {
		if table[c.Name] != nil {
			panic("command registered twice: " + c.Name)
		}
		for _, sub := range c.Subcommands {
			if !strings.HasPrefix(sub.Name, c.Name+"|") {
				panic("subcommand name must be parent|sub: " + sub.Name)
			}
		}
		c.implicitCategories()
		for _, sub := range c.Subcommands {
			sub.implicitCategories()
		}
		table[c.Name] = c
	}
}

// Subcommand finds argv[1] among c's subcommands.
func (c *Command) Subcommand(name []byte) *Command {
	want := c.Name + "|" + strings.ToLower(string(name))
	for _, s := range c.Subcommands {
		if s.Name == want {
			return s
		}
	}
	return nil
}
