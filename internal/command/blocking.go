package command

import (
	"math"
	"strconv"
	"strings"
	"time"
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
	lists := []string{"write", "list", "slow", "blocking"}
	zsets := []string{"write", "sortedset", "fast", "blocking"}
	register(
		blocking(&Command{Name: "blpop", Arity: -3, Flags: NoScript, FirstKey: 1, LastKey: -2, Step: 1, Categories: lists, Since: "2.0.0",
			Summary: "Remove and get the first element in a list, or block until one is available", Run: func(c *Ctx) { cmdBPop(c, true) }}, "list", popSpec),
		blocking(&Command{Name: "brpop", Arity: -3, Flags: NoScript, FirstKey: 1, LastKey: -2, Step: 1, Categories: lists, Since: "2.0.0",
			Summary: "Remove and get the last element in a list, or block until one is available", Run: func(c *Ctx) { cmdBPop(c, false) }}, "list", popSpec),
		blocking(&Command{Name: "blmove", Arity: 6, Flags: DenyOOM | NoScript, FirstKey: 1, LastKey: 2, Step: 1, Categories: lists, Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBLMove}, "list", moveSpecs...),
		blocking(&Command{Name: "brpoplpush", Arity: 4, Flags: DenyOOM | NoScript, FirstKey: 1, LastKey: 2, Step: 1, Categories: lists, Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBRPopLPush}, "list", moveSpecs...),
		blocking(&Command{Name: "blmpop", Arity: -5, Categories: lists, Since: "7.0.0",
			Summary: "Pop elements from a list, or block until one is available", Run: cmdBLMPop}, "list", mpopSpec),
		blocking(&Command{Name: "bzpopmin", Arity: -3, Flags: NoScript | Fast, FirstKey: 1, LastKey: -2, Step: 1, Categories: zsets, Since: "5.0.0",
			Summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", Run: func(c *Ctx) { cmdBZPop(c, false) }}, "sorted-set", popSpec),
		blocking(&Command{Name: "bzpopmax", Arity: -3, Flags: NoScript | Fast, FirstKey: 1, LastKey: -2, Step: 1, Categories: zsets, Since: "5.0.0",
			Summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", Run: func(c *Ctx) { cmdBZPop(c, true) }}, "sorted-set", popSpec),
		blocking(&Command{Name: "bzmpop", Arity: -5, Categories: []string{"write", "sortedset", "slow", "blocking"}, Since: "7.0.0",
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

func cmdBPop(c *Ctx, left bool) {
	if !timeoutOK(c) {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if !listPopFirst(c.Tx, keys, left, 0, c.W) {
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
	if timeoutOK(c) && !listMove(c.Tx, c.Args[1], c.Args[2], from, to, c.W) {
		nothing(c, c.Args[1:2], false)
	}
}

func cmdBRPopLPush(c *Ctx) {
	if timeoutOK(c) && !listMove(c.Tx, c.Args[1], c.Args[2], false, true, c.W) {
		nothing(c, c.Args[1:2], false)
	}
}

func cmdBLMPop(c *Ctx) {
	keys, left, count, ok := parseMPop(c, 2, "left", "right")
	if ok && timeoutOK(c) && !listPopFirst(c.Tx, keys, left, count, c.W) {
		nothing(c, keys, true)
	}
}

func cmdBZPop(c *Ctx, max bool) {
	if !timeoutOK(c) {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if !ZPop(c, keys, max, -1, true, false, false) {
		nothing(c, keys, true)
	}
}

func cmdBZMPop(c *Ctx) {
	keys, min, count, ok := parseMPop(c, 2, "min", "max")
	if ok && timeoutOK(c) && !ZPop(c, keys, !min, count, true, true, false) {
		nothing(c, keys, true)
	}
}
