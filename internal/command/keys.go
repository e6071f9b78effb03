package command

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"basalt/internal/glob"
	"basalt/internal/num"
	"basalt/internal/store"
)

// Generic key-space commands (db.c, expire.c and object.c in Redis): they
// work on any type, because a key's metadata entry carries its type and
// expiry and its members (if any) live under its prefix.
func init() {
	keyCat := []string{"keyspace"}
	dangerous := func(cats []string) []string { return append(append([]string(nil), cats...), "dangerous") }
	// gen sets the legacy key positions and the group of a generic command;
	// with flags, one key spec: the key at first, or (last -1) every
	// argument from first on.
	gen := func(first, last int, c *Command, flags ...string) *Command {
		if first > 0 {
			c.FirstKey, c.LastKey, c.Step = first, last, 1
		}
		if flags != nil {
			c.KeySpecs = []KeySpec{{Flags: flags, Index: first, LastKey: min(last, 0), KeyStep: 1}}
		}
		if c.Group == "" {
			c.Group = "generic"
		}
		return c
	}
	// src/dst give RENAME, RENAMENX and COPY their two key specs.
	srcDst := func(c *Command, src, dst []string) *Command {
		c.KeySpecs = []KeySpec{{Flags: src, Index: 1, KeyStep: 1}, {Flags: dst, Index: 2, KeyStep: 1}}
		return c
	}
	multiShardSum := []string{"request_policy:multi_shard", "response_policy:agg_sum"}
	allShards := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	nondet := []string{"nondeterministic_output"}
	objSub := func(name, since, summary string, run func(*Ctx)) *Command {
		return &Command{Name: "object|" + name, Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Categories: keyCat, Group: "generic", Since: since, Summary: summary,
			Tips: nondet, KeySpecs: []KeySpec{{Flags: []string{"RO"}, Index: 2, KeyStep: 1}}, Run: run}
	}
	register(
		gen(1, -1, &Command{Name: "del", Arity: -2, Flags: Write, Categories: keyCat, Since: "1.0.0", Summary: "Delete a key", Tips: multiShardSum, Run: cmdDel}, "RM", "delete"),
		gen(1, -1, &Command{Name: "unlink", Arity: -2, Flags: Write | Fast, Categories: keyCat, Since: "4.0.0", Summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", Tips: multiShardSum, Run: cmdDel}, "RM", "delete"),
		gen(1, -1, &Command{Name: "exists", Arity: -2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Determine if a key exists", Tips: multiShardSum, Run: cmdExists}, "RO"),
		gen(1, 1, &Command{Name: "type", Arity: 2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Determine the type stored at key", Run: cmdType}, "RO"),
		srcDst(gen(1, 2, &Command{Name: "rename", Arity: 3, Flags: Write, Categories: keyCat, Since: "1.0.0", Summary: "Rename a key", Run: func(c *Ctx) { renameGeneric(c, false) }}),
			[]string{"RW", "access", "delete"}, []string{"OW", "update"}),
		srcDst(gen(1, 2, &Command{Name: "renamenx", Arity: 3, Flags: Write | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Rename a key, only if the new key does not exist", Run: func(c *Ctx) { renameGeneric(c, true) }}),
			[]string{"RW", "access", "delete"}, []string{"OW", "insert"}),
		srcDst(gen(1, 2, &Command{Name: "copy", Arity: -3, Flags: Write | DenyOOM, Categories: keyCat, Since: "6.2.0", Summary: "Copy a key", Run: cmdCopy}),
			[]string{"RO", "access"}, []string{"OW", "update"}),
		gen(1, 1, &Command{Name: "move", Arity: 3, Flags: Write | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Move a key to another database", Run: cmdMove}, "RW", "access", "update"),
		gen(1, -1, &Command{Name: "touch", Arity: -2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "3.2.1", Summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.", Tips: multiShardSum, Run: cmdExists}, "RO"),
		gen(1, 1, &Command{Name: "expire", Arity: -3, Flags: Write | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Set a key's time to live in seconds", Run: func(c *Ctx) { expireGeneric(c, c.Tx.Now, 1000) }}, "RW", "update"),
		gen(1, 1, &Command{Name: "pexpire", Arity: -3, Flags: Write | Fast, Categories: keyCat, Since: "2.6.0", Summary: "Set a key's time to live in milliseconds", Run: func(c *Ctx) { expireGeneric(c, c.Tx.Now, 1) }}, "RW", "update"),
		gen(1, 1, &Command{Name: "expireat", Arity: -3, Flags: Write | Fast, Categories: keyCat, Since: "1.2.0", Summary: "Set the expiration for a key as a UNIX timestamp", Run: func(c *Ctx) { expireGeneric(c, 0, 1000) }}, "RW", "update"),
		gen(1, 1, &Command{Name: "pexpireat", Arity: -3, Flags: Write | Fast, Categories: keyCat, Since: "2.6.0", Summary: "Set the expiration for a key as a UNIX timestamp specified in milliseconds", Run: func(c *Ctx) { expireGeneric(c, 0, 1) }}, "RW", "update"),
		gen(1, 1, &Command{Name: "ttl", Arity: 2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "1.0.0", Summary: "Get the time to live for a key in seconds", Tips: nondet, Run: func(c *Ctx) { ttlGeneric(c, false, false) }}, "RO", "access"),
		gen(1, 1, &Command{Name: "pttl", Arity: 2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "2.6.0", Summary: "Get the time to live for a key in milliseconds", Tips: nondet, Run: func(c *Ctx) { ttlGeneric(c, true, false) }}, "RO", "access"),
		gen(1, 1, &Command{Name: "expiretime", Arity: 2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "7.0.0", Summary: "Get the expiration Unix timestamp for a key", Run: func(c *Ctx) { ttlGeneric(c, false, true) }}, "RO", "access"),
		gen(1, 1, &Command{Name: "pexpiretime", Arity: 2, Flags: ReadOnly | Fast, Categories: keyCat, Since: "7.0.0", Summary: "Get the expiration Unix timestamp for a key in milliseconds", Run: func(c *Ctx) { ttlGeneric(c, true, true) }}, "RO", "access"),
		gen(1, 1, &Command{Name: "persist", Arity: 2, Flags: Write | Fast, Categories: keyCat, Since: "2.2.0", Summary: "Remove the expiration from a key", Run: cmdPersist}, "RW", "update"),
		gen(0, 0, &Command{Name: "keys", Arity: 2, Flags: ReadOnly, Categories: dangerous(keyCat), Since: "1.0.0", Summary: "Find all keys matching the given pattern",
			Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"}, Run: cmdKeys}),
		gen(0, 0, &Command{Name: "scan", Arity: -2, Flags: ReadOnly, Categories: keyCat, Since: "2.8.0", Summary: "Incrementally iterate the keys space",
			Tips: []string{"nondeterministic_output", "request_policy:special"}, Run: cmdScan}),
		gen(0, 0, &Command{Name: "randomkey", Arity: 1, Flags: ReadOnly, Categories: keyCat, Since: "1.0.0", Summary: "Return a random key from the keyspace",
			Tips: []string{"request_policy:all_shards", "nondeterministic_output"}, Run: cmdRandomKey}),
		gen(0, 0, &Command{Name: "dbsize", Arity: 1, Flags: ReadOnly | Fast, Categories: keyCat, Group: "server", Since: "1.0.0", Summary: "Return the number of keys in the selected database",
			Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}, Run: cmdDBSize}),
		gen(0, 0, &Command{Name: "flushdb", Arity: -1, Flags: Write, Categories: dangerous(keyCat), Group: "server", Since: "1.0.0", Summary: "Remove all keys from the current database", Tips: allShards, Run: cmdFlushDB}),
		gen(0, 0, &Command{Name: "flushall", Arity: -1, Flags: Write, Categories: dangerous(keyCat), Group: "server", Since: "1.0.0", Summary: "Remove all keys from all databases", Tips: allShards, Run: cmdFlushAll}),
		gen(0, 0, &Command{Name: "swapdb", Arity: 3, Flags: Write | Fast, Categories: dangerous(keyCat), Group: "server", Since: "4.0.0", Summary: "Swaps two Redis databases", Run: cmdSwapDB}),
		&Command{Name: "object", Arity: -2, Group: "generic", Since: "2.2.3", Summary: "A container for object introspection commands", Run: cmdObject,
			Subcommands: []*Command{
				// In the order Redis lists them.
				{Name: "object|help", Arity: 2, Flags: Loading | Stale, Categories: []string{"keyspace"}, Group: "generic", Since: "6.2.0", Summary: "Show helpful text about the different subcommands", Run: cmdObjectHelp},
				objSub("encoding", "2.2.3", "Inspect the internal encoding of a Redis object", cmdObjectEncoding),
				objSub("freq", "4.0.0", "Get the logarithmic access frequency counter of a Redis object", cmdObjectFreq),
				objSub("refcount", "2.2.3", "Get the number of references to the value of the key", cmdObjectRefCount),
				objSub("idletime", "2.2.3", "Get the time since a Redis object was last accessed", cmdObjectIdleTime),
			}},
	)
}

const (
	errSameObject = "ERR source and destination objects are the same"
	errIntRange   = "ERR value is out of range, value must between -2147483648 and 2147483647"
	errCursor     = "ERR invalid cursor"
	errNotLFU     = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

func cmdDel(c *Ctx) {
	n := int64(0)
	for _, k := range c.Args[1:] {
		if c.Tx.Delete(k) {
			c.Tx.Notify(store.NotifyGeneric, "del", k)
			n++
		}
	}
	c.W.Int(n)
}

// cmdExists serves EXISTS and TOUCH: a key named twice counts twice. TOUCH
// would update the access time, which basalt does not track.
func cmdExists(c *Ctx) {
	n := int64(0)
	for _, k := range c.Args[1:] {
		if c.Tx.Exists(k) {
			n++
		}
	}
	c.W.Int(n)
}

func cmdType(c *Ctx) {
	m, ok := c.Tx.Lookup(c.Args[1])
	if !ok {
		c.W.Simple("none")
		return
	}
	c.W.Simple(m.Type.String())
}

func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	m, ok := c.Tx.Lookup(src)
	if !ok {
		c.W.Error(ErrNoSuchKey)
		return
	}
	if bytes.Equal(src, dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if nx && c.Tx.Exists(dst) {
		c.W.Int(0)
		return
	}
	copyKey(c, src, m, c.Tx.DB, dst) // the TTL goes with the value
	c.Tx.Delete(src)
	c.Tx.Notify(store.NotifyGeneric, "rename_from", src)
	c.Tx.Notify(store.NotifyGeneric, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// dbIndex parses a database index as Redis's getIntFromObjectOrReply does,
// then checks it against the number of databases.
func dbIndex(c *Ctx, arg []byte) (int, bool) { return dbIndexOf(c, arg, c.Tx.Databases()) }

// dbIndexOf is dbIndex against databases databases.
func dbIndexOf(c *Ctx, arg []byte, databases int) (int, bool) {
	n, ok := num.ParseInt(arg)
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		c.W.Error(errIntRange)
		return 0, false
	}
	if n < 0 || n >= int64(databases) {
		c.W.Error(ErrDBIndex)
		return 0, false
	}
	return int(n), true
}

// COPY source destination [DB destination-db] [REPLACE]
func cmdCopy(c *Ctx) {
	src, dst := c.Args[1], c.Args[2]
	dstDB, replace, toOther := c.Tx.DB, false, false
	for i := 3; i < len(c.Args); i++ {
		switch opt := strings.ToLower(c.Arg(i)); {
		case opt == "replace":
			replace = true
		case opt == "db" && i+1 < len(c.Args) && c.Tx.Clustered():
			// As Redis: n is checked against databases (one database is
			// held, the setting counts), then after the options refused.
			db, ok := dbIndexOf(c, c.Args[i+1], int(configuredDatabases.Load()))
			if !ok {
				return
			}
			toOther = toOther || db != 0
			i++
		case opt == "db" && i+1 < len(c.Args):
			db, ok := dbIndex(c, c.Args[i+1])
			if !ok {
				return
			}
			dstDB = db
			i++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if toOther {
		c.W.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if dstDB == c.Tx.DB && bytes.Equal(src, dst) {
		c.W.Error(errSameObject)
		return
	}
	prev := c.Tx.KeyMiss(true) // the source is a read (keymiss events)
	m, ok := c.Tx.Lookup(src)
	c.Tx.KeyMiss(prev)
	if !ok || (!replace && c.Tx.ExistsIn(dstDB, dst)) {
		c.W.Int(0)
		return
	}
	copyKey(c, src, m, dstDB, dst)
	c.Tx.NotifyIn(dstDB, store.NotifyGeneric, "copy_to", dst)
	c.W.Int(1)
}

// MOVE key db
func cmdMove(c *Ctx) {
	if c.Tx.Clustered() {
		c.W.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	key := c.Args[1]
	db, ok := dbIndex(c, c.Args[2])
	if !ok {
		return
	}
	if db == c.Tx.DB {
		c.W.Error(errSameObject)
		return
	}
	m, ok := c.Tx.Lookup(key)
	if !ok || c.Tx.ExistsIn(db, key) {
		c.W.Int(0)
		return
	}
	copyKey(c, key, m, db, key)
	c.Tx.Delete(key)
	c.Tx.Notify(store.NotifyGeneric, "move_from", key)
	c.Tx.NotifyIn(db, store.NotifyGeneric, "move_to", key)
	c.W.Int(1)
}

// Expire options (expire.c parseExtendedExpireArgumentsOrReply).
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// expireGeneric serves EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT: base is the
// time the argument counts from (the record's time, or 0 for the *AT
// forms) and unit converts it to milliseconds.
func expireGeneric(c *Ctx, base, unit int64) {
	flags := 0
	for _, a := range c.Args[3:] {
		switch strings.ToLower(string(a)) {
		case "nx":
			flags |= expNX
		case "xx":
			flags |= expXX
		case "gt":
			flags |= expGT
		case "lt":
			flags |= expLT
		default:
			c.W.Error("ERR Unsupported option " + string(a))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		c.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		c.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	// Negative times are allowed (they delete the key), but an overflow of
	// the unit conversion or of the addition is an error.
	if when > math.MaxInt64/unit || when < math.MinInt64/unit || when*unit > math.MaxInt64-base {
		c.W.Error(fmt.Sprintf(ErrExpireTime, strings.ToLower(c.Arg(0))))
		return
	}
	when = when*unit + base

	key := c.Args[1]
	m, ok := c.Tx.Lookup(key)
	if !ok {
		c.W.Int(0)
		return
	}
	cur := m.ExpireAt // 0: no expiry, an infinite TTL for GT and LT
	switch {
	case flags&expNX != 0 && cur != 0,
		flags&expXX != 0 && cur == 0,
		flags&expGT != 0 && (cur == 0 || when <= cur),
		flags&expLT != 0 && cur != 0 && when >= cur:
		c.W.Int(0)
		return
	}
	if when <= c.Tx.Now {
		c.Tx.Delete(key) // a time in the past deletes the key, as Redis does
		c.Tx.Notify(store.NotifyGeneric, "del", key)
	} else {
		m.ExpireAt = when
		c.Tx.Put(key, m)
		c.Tx.Notify(store.NotifyGeneric, "expire", key)
	}
	c.W.Int(1)
}

// ttlGeneric serves TTL, PTTL, EXPIRETIME and PEXPIRETIME.
func ttlGeneric(c *Ctx, ms, abs bool) {
	m, ok := c.Tx.Lookup(c.Args[1])
	switch {
	case !ok:
		c.W.Int(-2)
		return
	case m.ExpireAt == 0:
		c.W.Int(-1)
		return
	}
	t := m.ExpireAt
	if !abs {
		t = max(t-c.Tx.Now, 0)
	}
	if !ms {
		// Rounded to the nearest second; Redis's arithmetic behaves as
		// unsigned near the top of the range, so this does too.
		t = int64((uint64(t) + 500) / 1000)
	}
	c.W.Int(t)
}

func cmdPersist(c *Ctx) {
	m, ok := c.Tx.Lookup(c.Args[1])
	if !ok || m.ExpireAt == 0 {
		c.W.Int(0)
		return
	}
	m.ExpireAt = 0
	c.Tx.Put(c.Args[1], m)
	c.Tx.Notify(store.NotifyGeneric, "persist", c.Args[1])
	c.W.Int(1)
}

// KEYS pattern. A pattern without wildcards names one key: look it up
// instead of walking the database.
func cmdKeys(c *Ctx) {
	pat := c.Args[1]
	if lit, complete := glob.LiteralPrefix(pat); complete {
		if c.Tx.Alive(c.Tx.DB, lit) { // no lazy expiry nor keymiss, as KEYS
			c.W.ArrayLen(1)
			c.W.Bulk(lit)
		} else {
			c.W.ArrayLen(0)
		}
		return
	}
	all := string(pat) == "*" // Redis's special case: it also lists the empty key
	var out [][]byte
	c.Tx.Scan(0, math.MaxInt, func(key []byte, _ store.Meta) {
		if all || glob.Match(pat, key, false) {
			out = append(out, append([]byte(nil), key...))
		}
	})
	c.W.ArrayLen(len(out))
	for _, k := range out {
		c.W.Bulk(k)
	}
}

// parseCursor reads a SCAN cursor as Redis does with strtoul: an optional
// sign (a negative value wraps around), decimal digits, nothing after them,
// no leading space; the empty string is cursor 0.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	i, neg := 0, false
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 0, false
	case '+', '-':
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 || v > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if neg {
		v = -v
	}
	return v, true
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The cursor is a
// position in the key space's hash order (store.Pos), so it stays valid
// while keys come and go: a key present for the whole scan is returned.
func cmdScan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[1])
	if !ok {
		c.W.Error(errCursor)
		return
	}
	o, ok := parseScanOptions(c, 2, true)
	if !ok {
		return
	}
	count, pat, typ := o.count, o.pat, o.typ
	var out [][]byte
	next := c.Tx.Scan(cursor, int(min(count, math.MaxInt32)), func(key []byte, m store.Meta) {
		if pat != nil && !glob.Match(pat, key, false) {
			return
		}
		if typ != nil && !strings.EqualFold(string(typ), m.Type.String()) {
			return
		}
		out = append(out, append([]byte(nil), key...))
	})
	c.W.ArrayLen(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.ArrayLen(len(out))
	for _, k := range out {
		c.W.Bulk(k)
	}
}

// RANDOMKEY picks the first live key at or after a random position of the
// hash order, wrapping around once. Reads are not replicated, so a read view
// may use any randomness; in the apply loop (inside MULTI) the record's seed
// keeps it deterministic.
func cmdRandomKey(c *Ctx) {
	if c.Tx.Count() == 0 {
		c.W.Null()
		return
	}
	var pos uint64
	if c.Tx.Writable() {
		pos = rand.New(rand.NewPCG(c.Seed, 0x6b657973)).Uint64()
	} else {
		pos = rand.Uint64()
	}
	pos &= 1<<62 - 1 // positions are slot<<48 | hash48
	var key []byte
	pick := func(k []byte, _ store.Meta) {
		if key == nil {
			key = append([]byte(nil), k...)
		}
	}
	for wrapped := false; key == nil; {
		next := c.Tx.Scan(pos, 16, pick)
		if next == 0 {
			if wrapped {
				break // every key has expired
			}
			wrapped = true
		}
		pos = next
	}
	if key == nil {
		c.W.Null()
		return
	}
	c.W.Bulk(key)
}

func cmdDBSize(c *Ctx) { c.W.Int(c.Tx.Count()) }

// flushOptionOK checks FLUSHDB/FLUSHALL's optional SYNC or ASYNC. Both
// flush the same way: range deletions cost the same whatever the size.
func flushOptionOK(c *Ctx) bool {
	if len(c.Args) == 1 || len(c.Args) == 2 && (strings.EqualFold(c.Arg(1), "sync") || strings.EqualFold(c.Arg(1), "async")) {
		return true
	}
	c.W.Error(ErrSyntax)
	return false
}

func cmdFlushDB(c *Ctx) {
	if flushOptionOK(c) {
		c.Tx.Flush(c.Tx.DB)
		c.W.OK()
	}
}

func cmdFlushAll(c *Ctx) {
	if flushOptionOK(c) {
		for db := range c.Tx.Databases() {
			c.Tx.Flush(db)
		}
		c.W.OK()
	}
}

// SWAPDB index1 index2
func cmdSwapDB(c *Ctx) {
	if c.Tx.Clustered() { // one database in cluster mode
		c.W.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	var ids [2]int
	for i, what := range []string{"first", "second"} {
		n, ok := num.ParseInt(c.Args[1+i])
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			c.W.Error("ERR invalid " + what + " DB index")
			return
		}
		ids[i] = int(n)
	}
	for _, id := range ids {
		if id < 0 || id >= c.Tx.Databases() {
			c.W.Error(ErrDBIndex)
			return
		}
	}
	if ids[0] != ids[1] {
		c.Tx.Swap(ids[0], ids[1])
	}
	c.W.OK()
}

// cmdObject dispatches OBJECT's subcommands; the server has checked that
// the subcommand exists and its arity.
func cmdObject(c *Ctx) {
	sub := table["object"].Subcommand(c.Args[1])
	if sub == nil {
		c.W.Error("ERR unknown subcommand '" + c.Arg(1) + "'. Try OBJECT HELP.")
		return
	}
	sub.Run(c)
}

// objectKey looks up OBJECT's key; a missing key is a null reply (and no
// keymiss event, as in Redis).
func objectKey(c *Ctx) (store.Meta, bool) {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(false))
	m, ok := c.Tx.Lookup(c.Args[2])
	if !ok {
		c.W.Null()
	}
	return m, ok
}

// objectEncoding names the encoding Redis would use. Strings follow Redis's
// rules for a value stored by SET (tryObjectEncoding): a canonical int64 is
// "int", up to 44 bytes "embstr", longer "raw". Collections answer their
// large-size encoding until their headers say how big they are. A small
// HyperLogLog is "raw" as PFADD makes it (Redis would say "embstr" for the
// same bytes stored by SET).
func objectEncoding(m store.Meta) string {
	switch m.Type {
	case store.TypeString:
		if m.Chunked || m.Raw {
			return "raw"
		}
		if _, ok := num.ParseInt(m.Body); ok {
			return "int"
		}
		if len(m.Body) <= 44 && !hllValid(m.Body) {
			return "embstr"
		}
		return "raw"
	case store.TypeList:
		return "quicklist"
	case store.TypeHash:
		return hashEncoding(m)
	case store.TypeSet:
		return setEncoding(m)
	case store.TypeZSet:
		return zsetEncoding(m)
	case store.TypeStream:
		return "stream"
	}
	return "raw"
}

func cmdObjectEncoding(c *Ctx) {
	if m, ok := objectKey(c); ok {
		c.W.BulkString(objectEncoding(m))
	}
}

// cmdObjectRefCount answers as Redis does for a fresh value: the shared
// integers 0..9999 have the "immortal" count, everything else 1.
func cmdObjectRefCount(c *Ctx) {
	m, ok := objectKey(c)
	if !ok {
		return
	}
	if m.Type == store.TypeString && !m.Chunked {
		if n, ok := num.ParseInt(m.Body); ok && n >= 0 && n < 10000 {
			c.W.Int(math.MaxInt32)
			return
		}
	}
	c.W.Int(1)
}

// cmdObjectIdleTime answers from the store's in-memory access clock.
func cmdObjectIdleTime(c *Ctx) {
	if _, ok := objectKey(c); ok {
		c.W.Int(c.Tx.IdleSeconds(c.Args[2]))
	}
}

// cmdObjectFreq answers what Redis does without an LFU maxmemory policy,
// the only mode basalt has: access frequency is not tracked.
func cmdObjectFreq(c *Ctx) {
	if _, ok := objectKey(c); ok {
		c.W.Error(errNotLFU)
	}
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func cmdObjectHelp(c *Ctx) {
	HelpReply(c.W, objectHelp)
}
