package command

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"basalt/internal/store"
)

// The blocking commands. Each runs like its non-blocking twin; when it
// finds nothing, a client's call waits (c.BlockOn, see shard/block.go) and
// a call inside MULTI answers nil at once, as in Redis.
func init() {
	blocking := func(c *Command, group string, keySpecs ...KeySpec) *Command {
		c.Flags |= Write | Blocking
		c.Group = group
		c.KeySpecs = keySpecs
		return c
	}
	popSpec := KeySpec{Flags: []string{"RW", "access", "delete"}, Index: 1, LastKey: -2, KeyStep: 1}
	moveSpecs := []KeySpec{
		{Flags: []string{"RW", "access", "delete"}, Index: 1, KeyStep: 1},
		{Flags: []string{"RW", "insert"}, Index: 2, KeyStep: 1},
	}
	mpopSpec := KeySpec{Flags: []string{"RW", "access", "delete"}, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}
	listCat := []string{"list"}
	zsetCat := []string{"sortedset"}
	register(
		blocking(&Command{Name: "blpop", Arity: -3, Flags: NoScript, FirstKey: 1, LastKey: -2, Step: 1, Categories: listCat, Since: "2.0.0",
			Summary: "Remove and get the first element in a list, or block until one is available", Run: func(c *Ctx) { cmdBPop(c, true) }}, "list", popSpec),
		blocking(&Command{Name: "brpop", Arity: -3, Flags: NoScript, FirstKey: 1, LastKey: -2, Step: 1, Categories: listCat, Since: "2.0.0",
			Summary: "Remove and get the last element in a list, or block until one is available", Run: func(c *Ctx) { cmdBPop(c, false) }}, "list", popSpec),
		blocking(&Command{Name: "blmove", Arity: 6, Flags: DenyOOM | NoScript, FirstKey: 1, LastKey: 2, Step: 1, Categories: listCat, Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBLMove}, "list", moveSpecs...),
		blocking(&Command{Name: "brpoplpush", Arity: 4, Flags: DenyOOM | NoScript, FirstKey: 1, LastKey: 2, Step: 1, Categories: listCat, Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBRPopLPush}, "list", moveSpecs...),
		blocking(&Command{Name: "blmpop", Arity: -5, Categories: listCat, Since: "7.0.0",
			Summary: "Pop elements from a list, or block until one is available", Run: cmdBLMPop}, "list", mpopSpec),
		blocking(&Command{Name: "bzpopmin", Arity: -3, Flags: NoScript | Fast, FirstKey: 1, LastKey: -2, Step: 1, Categories: zsetCat, Since: "5.0.0",
			Summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", Run: func(c *Ctx) { cmdBZPop(c, false) }}, "sorted-set", popSpec),
		blocking(&Command{Name: "bzpopmax", Arity: -3, Flags: NoScript | Fast, FirstKey: 1, LastKey: -2, Step: 1, Categories: zsetCat, Since: "5.0.0",
			Summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", Run: func(c *Ctx) { cmdBZPop(c, true) }}, "sorted-set", popSpec),
		blocking(&Command{Name: "bzmpop", Arity: -5, Categories: []string{"sortedset"}, Since: "7.0.0",
			Summary: "Remove and return members with scores in a sorted set or block until one is available", Run: cmdBZMPop}, "sorted-set", mpopSpec),
	)
}

// TimeoutArg returns the timeout argument of a blocking command.
func TimeoutArg(argv [][]byte) []byte {
	switch strings.ToLower(string(argv[0])) {
	case "blmpop", "bzmpop":
		return argv[1]
	}
	return argv[len(argv)-1]
}

// ParseTimeout reads a blocking command's timeout in seconds (fractions
// allowed; 0 waits forever) with Redis's errors. Like Redis it keeps whole
// milliseconds, so 0.0001 waits forever.
func ParseTimeout(arg []byte) (time.Duration, string) {
	f, err := strconv.ParseFloat(string(arg), 64)
	if err != nil || math.IsNaN(f) || strings.TrimSpace(string(arg)) != string(arg) {
		return 0, "ERR timeout is not a float or out of range"
	}
	ms := f * 1000
	// Redis converts to a C long long: past its range x86 gives the
	// most negative value, hence "negative" for 1e30.
	if ms >= math.MaxInt64 || int64(ms) < 0 {
		return 0, "ERR timeout is negative"
	}
	if ms > 1e12 { // over 30 years: as good as forever, and no overflow
		return 0, ""
	}
	return time.Duration(int64(ms)) * time.Millisecond, ""
}

// timeoutOK checks the timeout inside the apply loop, where MULTI brings
// blocking commands the connection did not look at.
func timeoutOK(c *Ctx) bool {
	if _, msg := ParseTimeout(TimeoutArg(c.Args)); msg != "" {
		c.W.Error(msg)
		return false
	}
	return true
}

// nothing answers a blocking command that found nothing: wait for keys,
// or reply nil when it may not block.
func nothing(c *Ctx, keys [][]byte, nullArray bool) {
	switch {
	case c.MayBlock():
		c.BlockOn(keys)
	case nullArray:
		c.W.NullArray()
	default:
		c.W.Null()
	}
}

// servable returns the keys a blocked call may be served from. When a
// write wakes it, Redis serves it only from a key of the type it waits for
// and leaves it blocked on one that now holds another type; the first call
// answers WRONGTYPE instead.
func servable(c *Ctx, keys [][]byte, typ store.Type) [][]byte {
	if !c.Retried() {
		return keys
	}
	prev := c.Tx.KeyMiss(false)
	defer c.Tx.KeyMiss(prev)
	var out [][]byte
	for _, key := range keys {
		if m, ok := c.Tx.Lookup(key); !ok || m.Type == typ {
			out = append(out, key)
		}
	}
	return out
}

// popServable runs pop on the keys the call may be served from. A retry
// served from fewer keys than it names (keys are c.Args[first:], numkeys
// at c.Args[numkeysAt] if not 0) is rewritten in the record to name only
// those, so that the log replays what it did rather than a WRONGTYPE.
func popServable(c *Ctx, first, numkeysAt int, keys [][]byte, typ store.Type, pop func(keys [][]byte) bool) bool {
	from := servable(c, keys, typ)
	if !pop(from) {
		return false
	}
	if len(from) != len(keys) {
		argv := append(append(slices.Clone(c.Args[:first]), from...), c.Args[first+len(keys):]...)
		if numkeysAt > 0 {
			argv[numkeysAt] = strconv.AppendInt(nil, int64(len(from)), 10)
		}
		c.rec.Cmds[0], c.Args = argv, argv
	}
	return true
}

func cmdBPop(c *Ctx, left bool) {
	if !timeoutOK(c) {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if !popServable(c, 1, 0, keys, store.TypeList, func(keys [][]byte) bool { return listPopFirst(c.Tx, keys, left, 0, c.W) }) {
		nothing(c, keys, true)
	}
}

func cmdBLMove(c *Ctx) {
	from, ok1 := parseListEnd(c.Args[3])
	to, ok2 := parseListEnd(c.Args[4])
	if !ok1 || !ok2 {
		c.W.Error(ErrSyntax)
		return
	}
	blockingMove(c, from, to)
}

func cmdBRPopLPush(c *Ctx) { blockingMove(c, false, true) }

// blockingMove is BLMOVE and BRPOPLPUSH: a source of another type is
// servable only on the first call (which answers WRONGTYPE).
func blockingMove(c *Ctx, from, to bool) {
	if timeoutOK(c) && (len(servable(c, c.Args[1:2], store.TypeList)) == 0 || !listMove(c.Tx, c.Args[1], c.Args[2], from, to, c.W)) {
		nothing(c, c.Args[1:2], false)
	}
}

func cmdBLMPop(c *Ctx) {
	keys, left, count, ok := parseMPop(c, 2, "left", "right")
	if ok && timeoutOK(c) && !popServable(c, 3, 2, keys, store.TypeList, func(keys [][]byte) bool { return listPopFirst(c.Tx, keys, left, count, c.W) }) {
		nothing(c, keys, true)
	}
}

func cmdBZPop(c *Ctx, max bool) {
	if !timeoutOK(c) {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if !popServable(c, 1, 0, keys, store.TypeZSet, func(keys [][]byte) bool { return ZPop(c, keys, max, -1, true, false, false) }) {
		nothing(c, keys, true)
	}
}

func cmdBZMPop(c *Ctx) {
	keys, min, count, ok := parseMPop(c, 2, "min", "max")
	if ok && timeoutOK(c) && !popServable(c, 3, 2, keys, store.TypeZSet, func(keys [][]byte) bool { return ZPop(c, keys, !min, count, true, true, false) }) {
		nothing(c, keys, true)
	}
}
