// Package model is a model-based property test of basalt against
// redis-server: rapid generates random command sequences over a small key set
// (hashes, lists, sets, sorted sets and geo sets, strings and generic key commands,
// wrong-type use included), each command goes to both servers and the replies
// must match. redis-server is the model.
//
//	go test ./test/model/                        # 100 sequences
//	go test ./test/model/ -rapid.checks=2000     # hunt for differences
//
// On a mismatch rapid shrinks the sequence and logs the commands of the
// smallest failing one.
package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"

	"pgregory.net/rapid"
)

// cmpMode says how two replies are compared.
type cmpMode int

const (
	exact     cmpMode = iota
	unordered         // elements in hash-table order: compare sorted
	pairs             // field/value (or member/score) pairs in hash order
	scan              // [cursor, elements]: cursor exact, elements as pairs or sorted
	ttl               // a TTL measured at slightly different moments
	random            // SRANDMEMBER, HRANDFIELD, ZRANDMEMBER: check by property
	encoding          // OBJECT ENCODING: exact but for a documented difference
)

type cmd struct {
	args []string
	mode cmpMode
}

// Keys: a few per type, so commands collide; wrong-type use comes from
// picking a key of another type now and then, and from RENAME/COPY.
var keysOf = map[byte][]string{
	'h': {"h1", "h2", "h3"},
	'l': {"l1", "l2", "l3"},
	's': {"s1", "s2", "s3"},
	'z': {"z1", "z2", "z3"},
	'k': {"k1", "k2", "k3"},
}

var allKeys = func() []string {
	var all []string
	for _, t := range "hlszk" {
		all = append(all, keysOf[byte(t)]...)
	}
	slices.Sort(all)
	return all
}()

// long crosses the 64-byte listpack value limit of hashes and sorted sets.
var long = strings.Repeat("x", 70)

var (
	fields   = []string{"f1", "f2", "f3", "a", "1"}
	values   = []string{"v", "1", "-1", "10", "", "1.5", "9223372036854775807", "-9223372036854775808", long}
	members  = []string{"a", "b", "c", "1", "2", "-1", "100", long}
	zmembers = []string{"a", "b", "c", "d", "1", long}
	elems    = []string{"a", "b", "c", "1", "-1", "", long}
	ints     = []string{"0", "1", "-1", "2", "-2", "3", "10", "-10", "100", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "abc", "1.5", ""}
	smallInt = []string{"0", "1", "-1", "2", "-2", "3", "5", "-5", "100", "-100", "x"}
	counts   = []string{"0", "1", "2", "3", "5", "100", "-1", "-3", "x"}
	scores   = []string{"0", "1", "-1", "2", "2.5", "-2.5", "1e3", "inf", "-inf", "+inf", "-0", "nan", "abc", "0x10", "9007199254740993", "1e-320"}
	incrs    = []string{"1", "-1", "0", "2.5", "-0.5", "1e308", "inf", "-inf", "1e17", "x"}
	sranges  = []string{"-inf", "+inf", "0", "(0", "1", "(1", "-1", "(-1", "2.5", "(2.5", "inf", "(inf", "x", "(", "[1"}
	lons     = []string{"0", "13.361389", "15.087269", "-180", "180", "179.9999", "-0", "1e-7", "181", "x"}
	lats     = []string{"0", "38.115556", "37.502669", "85.05112878", "-85.05112878", "-85.06", "1e-7", "y"}
	radii    = []string{"0", "1", "150", "200", "5000", "30000", "-1", "inf", "x"}
	units    = []string{"m", "km", "KM", "mi", "ft", "yd"}
	lranges  = []string{"-", "+", "[a", "(a", "[b", "(b", "[c", "(d", "[1", "[", "(", "a"}
)

// g wraps a rapid.T with short draw helpers.
type g struct{ t *rapid.T }

func (g g) of(label string, opts []string) string {
	return rapid.SampledFrom(opts).Draw(g.t, label)
}

func (g g) n(min, max int) int { return rapid.IntRange(min, max).Draw(g.t, "n") }

func (g g) coin() bool { return rapid.Bool().Draw(g.t, "coin") }

// key mostly picks a key of type typ, sometimes any key (wrong type).
func (g g) key(typ byte) string {
	if g.n(0, 9) == 9 { // shrinks toward the right type
		return g.of("key", allKeys)
	}
	return g.of("key", keysOf[typ])
}

func (g g) keys(typ byte, min, max int) []string {
	n := g.n(min, max)
	out := make([]string, n)
	for i := range out {
		out[i] = g.key(typ)
	}
	return out
}

func (g g) some(label string, opts []string, min, max int) []string {
	n := g.n(min, max)
	out := make([]string, n)
	for i := range out {
		out[i] = g.of(label, opts)
	}
	return out
}

func c(mode cmpMode, args ...string) cmd { return cmd{args: args, mode: mode} }

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

// future is an absolute expiry one million seconds ahead, the same for both
// servers, so EXPIREAT/EXPIRETIME replies are exact.
var future = time.Now().Unix() + 1_000_000

// generators, one per command family. The table is indexed by a drawn int.
var generators = []func(g g) cmd{
	// strings
	func(g g) cmd { return c(exact, "SET", g.key('k'), g.of("v", values)) },
	func(g g) cmd { return c(exact, "GET", g.key('k')) },
	func(g g) cmd { return c(exact, "INCRBY", g.key('k'), g.of("i", ints)) },
	func(g g) cmd { return c(exact, "APPEND", g.key('k'), g.of("v", values)) },
	func(g g) cmd { return c(exact, "STRLEN", g.key('k')) },
	func(g g) cmd { return c(exact, "GETDEL", g.key('k')) },
	func(g g) cmd { return c(exact, "SET", g.key('k'), g.of("v", values), "KEEPTTL") },
	// generic
	func(g g) cmd { return c(exact, cat([]string{"DEL"}, g.keys('k', 1, 3))...) },
	func(g g) cmd { return c(exact, cat([]string{"UNLINK"}, g.keys('h', 1, 2))...) },
	func(g g) cmd { return c(exact, cat([]string{"EXISTS"}, g.keys('s', 1, 3))...) },
	func(g g) cmd { return c(exact, "TYPE", g.of("key", allKeys)) },
	func(g g) cmd { return c(encoding, "OBJECT", "ENCODING", g.of("key", allKeys)) },
	func(g g) cmd { return c(exact, "RENAME", g.of("key", allKeys), g.of("key", allKeys)) },
	func(g g) cmd { return c(exact, "RENAMENX", g.of("key", allKeys), g.of("key", allKeys)) },
	func(g g) cmd {
		args := []string{"COPY", g.of("key", allKeys), g.of("key", allKeys)}
		if g.coin() {
			args = append(args, "REPLACE")
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{"EXPIRE", g.of("key", allKeys), g.of("ttl", []string{"100000", "200000", "0", "-1", "9223372036854775807", "x"})}
		if g.coin() {
			args = append(args, g.of("opt", []string{"NX", "XX"}))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		// Absolute times: GT/LT compare the same numbers on both servers.
		at := future + int64(g.n(0, 3))*1000
		args := []string{"EXPIREAT", g.of("key", allKeys), strconv.FormatInt(at, 10)}
		if g.coin() {
			args = append(args, g.of("opt", []string{"NX", "XX", "GT", "LT"}))
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(exact, "PERSIST", g.of("key", allKeys)) },
	func(g g) cmd { return c(ttl, g.of("ttl", []string{"TTL", "PTTL"}), g.of("key", allKeys)) },
	func(g g) cmd { return c(ttl, "EXPIRETIME", g.of("key", allKeys)) },
	func(g g) cmd { return c(unordered, "KEYS", g.of("pat", []string{"*", "h*", "?1", "[lz]*"})) },
	func(g g) cmd { return c(exact, "DBSIZE") },
	func(g g) cmd {
		return c(scan, "SCAN", "0", "COUNT", "1000", "TYPE", g.of("type", []string{"string", "hash", "list", "set", "zset"}))
	},
	func(g g) cmd {
		return c(exact, "SETRANGE", g.key('k'), g.of("off", []string{"0", "1", "5", "-1"}), g.of("v", values))
	},
	func(g g) cmd { return c(exact, "MSET", g.key('k'), g.of("v", values), g.key('k'), g.of("v", values)) },
	func(g g) cmd {
		// Many members at once: crosses the listpack/intset limits (128
		// entries, 512 integers), so encodings convert.
		key := g.of("key", allKeys)
		var args []string
		switch key[0] {
		case 'h':
			args = []string{"HSET", key}
			for i := range 130 {
				args = append(args, "bf"+strconv.Itoa(i), strconv.Itoa(i))
			}
		case 's':
			args = []string{"SADD", key}
			for i := range 520 {
				args = append(args, strconv.Itoa(i-10))
			}
		case 'z':
			args = []string{"ZADD", key}
			for i := range 130 {
				args = append(args, strconv.Itoa(i%7), "bm"+strconv.Itoa(i))
			}
		case 'l':
			args = []string{"RPUSH", key}
			for i := range 130 {
				args = append(args, elems[i%len(elems)])
			}
		default:
			args = []string{"SET", key, strings.Repeat("y", 100)}
		}
		return c(exact, args...)
	},

	// hashes
	func(g g) cmd {
		args := []string{"HSET", g.key('h')}
		for range g.n(1, 3) {
			args = append(args, g.of("f", fields), g.of("v", values))
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(exact, "HSETNX", g.key('h'), g.of("f", fields), g.of("v", values)) },
	func(g g) cmd { return c(exact, "HGET", g.key('h'), g.of("f", fields)) },
	func(g g) cmd { return c(exact, cat([]string{"HMGET", g.key('h')}, g.some("f", fields, 1, 3))...) },
	func(g g) cmd { return c(exact, cat([]string{"HDEL", g.key('h')}, g.some("f", fields, 1, 3))...) },
	func(g g) cmd { return c(exact, "HEXISTS", g.key('h'), g.of("f", fields)) },
	func(g g) cmd { return c(exact, "HLEN", g.key('h')) },
	func(g g) cmd { return c(exact, "HSTRLEN", g.key('h'), g.of("f", fields)) },
	func(g g) cmd { return c(exact, "HINCRBY", g.key('h'), g.of("f", fields), g.of("i", ints)) },
	func(g g) cmd { return c(exact, "HINCRBYFLOAT", g.key('h'), g.of("f", fields), g.of("i", incrs)) },
	func(g g) cmd { return c(pairs, "HGETALL", g.key('h')) },
	func(g g) cmd { return c(unordered, g.of("cmd", []string{"HKEYS", "HVALS"}), g.key('h')) },
	func(g g) cmd { return c(scan, "HSCAN", g.key('h'), "0", "COUNT", "1000") },
	func(g g) cmd {
		args := []string{"HRANDFIELD", g.key('h')}
		if g.coin() {
			args = append(args, g.of("count", counts))
			if g.coin() {
				args = append(args, "WITHVALUES")
			}
		}
		return c(random, args...)
	},

	// lists
	func(g g) cmd {
		return c(exact, cat([]string{g.of("cmd", []string{"LPUSH", "RPUSH", "LPUSHX", "RPUSHX"}), g.key('l')}, g.some("e", elems, 1, 3))...)
	},
	func(g g) cmd {
		args := []string{g.of("cmd", []string{"LPOP", "RPOP"}), g.key('l')}
		if g.coin() {
			args = append(args, g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(exact, "LLEN", g.key('l')) },
	func(g g) cmd { return c(exact, "LINDEX", g.key('l'), g.of("i", smallInt)) },
	func(g g) cmd { return c(exact, "LSET", g.key('l'), g.of("i", smallInt), g.of("e", elems)) },
	func(g g) cmd { return c(exact, "LRANGE", g.key('l'), g.of("i", smallInt), g.of("i", smallInt)) },
	func(g g) cmd {
		return c(exact, "LINSERT", g.key('l'), g.of("where", []string{"BEFORE", "AFTER", "x"}), g.of("e", elems), g.of("e", elems))
	},
	func(g g) cmd { return c(exact, "LREM", g.key('l'), g.of("i", smallInt), g.of("e", elems)) },
	func(g g) cmd { return c(exact, "LTRIM", g.key('l'), g.of("i", smallInt), g.of("i", smallInt)) },
	func(g g) cmd {
		args := []string{"LPOS", g.key('l'), g.of("e", elems)}
		for _, opt := range []string{"RANK", "COUNT", "MAXLEN"} {
			if g.coin() {
				args = append(args, opt, g.of("i", smallInt))
			}
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		side := []string{"LEFT", "RIGHT"}
		return c(exact, "LMOVE", g.key('l'), g.key('l'), g.of("from", side), g.of("to", side))
	},
	func(g g) cmd { return c(exact, "RPOPLPUSH", g.key('l'), g.key('l')) },
	func(g g) cmd {
		keys := g.keys('l', 1, 3)
		args := cat([]string{"LMPOP", strconv.Itoa(len(keys))}, keys, []string{g.of("side", []string{"LEFT", "RIGHT"})})
		if g.coin() {
			args = append(args, "COUNT", g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		// A short timeout: an empty key times out with a nil reply on both.
		return c(exact, g.of("cmd", []string{"BLPOP", "BRPOP"}), g.key('l'), g.key('l'), "0.01")
	},

	// sets
	func(g g) cmd { return c(exact, cat([]string{"SADD", g.key('s')}, g.some("m", members, 1, 3))...) },
	func(g g) cmd { return c(exact, cat([]string{"SREM", g.key('s')}, g.some("m", members, 1, 3))...) },
	func(g g) cmd { return c(exact, "SISMEMBER", g.key('s'), g.of("m", members)) },
	func(g g) cmd { return c(exact, cat([]string{"SMISMEMBER", g.key('s')}, g.some("m", members, 1, 3))...) },
	func(g g) cmd { return c(exact, "SCARD", g.key('s')) },
	func(g g) cmd { return c(unordered, "SMEMBERS", g.key('s')) },
	func(g g) cmd { return c(exact, "SMOVE", g.key('s'), g.key('s'), g.of("m", members)) },
	func(g g) cmd {
		return c(unordered, cat([]string{g.of("cmd", []string{"SINTER", "SUNION", "SDIFF"})}, g.keys('s', 1, 3))...)
	},
	func(g g) cmd {
		return c(exact, cat([]string{g.of("cmd", []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}), g.key('s')}, g.keys('s', 1, 3))...)
	},
	func(g g) cmd {
		keys := g.keys('s', 1, 3)
		args := cat([]string{"SINTERCARD", strconv.Itoa(len(keys))}, keys)
		if g.coin() {
			args = append(args, "LIMIT", g.of("n", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(scan, "SSCAN", g.key('s'), "0", "COUNT", "1000") },
	func(g g) cmd {
		// Only counts that pop everything (or nothing) are deterministic:
		// 1000 is more than the bulk SADD above adds.
		return c(unordered, "SPOP", g.key('s'), g.of("count", []string{"0", "1000", "-1"}))
	},
	func(g g) cmd {
		args := []string{"SRANDMEMBER", g.key('s')}
		if g.coin() {
			args = append(args, g.of("count", counts))
		}
		return c(random, args...)
	},

	// sorted sets
	func(g g) cmd {
		args := []string{"ZADD", g.key('z')}
		for _, opts := range [][]string{{"NX", "XX"}, {"GT", "LT"}, {"CH"}, {"INCR"}} {
			if g.n(0, 3) == 0 {
				args = append(args, g.of("opt", opts))
			}
		}
		for range g.n(1, 3) {
			args = append(args, g.of("score", scores), g.of("m", zmembers))
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(exact, "ZINCRBY", g.key('z'), g.of("incr", incrs), g.of("m", zmembers)) },
	func(g g) cmd { return c(exact, cat([]string{"ZREM", g.key('z')}, g.some("m", zmembers, 1, 3))...) },
	func(g g) cmd { return c(exact, "ZCARD", g.key('z')) },
	func(g g) cmd { return c(exact, "ZSCORE", g.key('z'), g.of("m", zmembers)) },
	func(g g) cmd { return c(exact, cat([]string{"ZMSCORE", g.key('z')}, g.some("m", zmembers, 1, 3))...) },
	func(g g) cmd {
		args := []string{g.of("cmd", []string{"ZRANK", "ZREVRANK"}), g.key('z'), g.of("m", zmembers)}
		return c(exact, args...)
	},
	func(g g) cmd { return c(exact, "ZCOUNT", g.key('z'), g.of("min", sranges), g.of("max", sranges)) },
	func(g g) cmd { return c(exact, "ZLEXCOUNT", g.key('z'), g.of("min", lranges), g.of("max", lranges)) },
	func(g g) cmd {
		args := []string{"ZRANGE", g.key('z')}
		switch g.n(0, 2) {
		case 0:
			args = append(args, g.of("i", smallInt), g.of("i", smallInt))
		case 1:
			args = append(args, g.of("min", sranges), g.of("max", sranges), "BYSCORE")
		default:
			args = append(args, g.of("min", lranges), g.of("max", lranges), "BYLEX")
		}
		if g.coin() {
			args = append(args, "REV")
		}
		if g.coin() {
			args = append(args, "LIMIT", g.of("off", smallInt), g.of("count", counts))
		}
		if g.coin() {
			args = append(args, "WITHSCORES")
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{g.of("cmd", []string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}), g.key('z'), g.of("min", sranges), g.of("max", sranges)}
		if g.coin() {
			args = append(args, "WITHSCORES")
		}
		if g.coin() {
			args = append(args, "LIMIT", g.of("off", smallInt), g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{g.of("cmd", []string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}), g.key('z'), g.of("min", lranges), g.of("max", lranges)}
		if g.coin() {
			args = append(args, "LIMIT", g.of("off", smallInt), g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{"ZREVRANGE", g.key('z'), g.of("i", smallInt), g.of("i", smallInt)}
		if g.coin() {
			args = append(args, "WITHSCORES")
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		return c(exact, "ZREMRANGEBYRANK", g.key('z'), g.of("i", smallInt), g.of("i", smallInt))
	},
	func(g g) cmd {
		return c(exact, "ZREMRANGEBYSCORE", g.key('z'), g.of("min", sranges), g.of("max", sranges))
	},
	func(g g) cmd {
		return c(exact, "ZREMRANGEBYLEX", g.key('z'), g.of("min", lranges), g.of("max", lranges))
	},
	func(g g) cmd {
		args := []string{g.of("cmd", []string{"ZPOPMIN", "ZPOPMAX"}), g.key('z')}
		if g.coin() {
			args = append(args, g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		keys := g.keys('z', 1, 3)
		args := cat([]string{"ZMPOP", strconv.Itoa(len(keys))}, keys, []string{g.of("side", []string{"MIN", "MAX"})})
		if g.coin() {
			args = append(args, "COUNT", g.of("count", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		return c(exact, g.of("cmd", []string{"BZPOPMIN", "BZPOPMAX"}), g.key('z'), g.key('z'), "0.01")
	},
	func(g g) cmd {
		op := g.of("cmd", []string{"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"})
		keys := g.keys('z', 1, 3)
		args := []string{op}
		if strings.HasSuffix(op, "STORE") {
			args = append(args, g.key('z'))
		}
		args = append(args, strconv.Itoa(len(keys)))
		args = append(args, keys...)
		if op != "ZDIFF" && op != "ZDIFFSTORE" {
			if g.coin() {
				args = append(args, "WEIGHTS")
				for range keys {
					args = append(args, g.of("w", []string{"1", "-1", "2", "0", "inf", "0.5"}))
				}
			}
			if g.coin() {
				args = append(args, "AGGREGATE", g.of("agg", []string{"SUM", "MIN", "MAX"}))
			}
		}
		if !strings.HasSuffix(op, "STORE") && g.coin() {
			args = append(args, "WITHSCORES")
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		keys := g.keys('z', 1, 3)
		args := cat([]string{"ZINTERCARD", strconv.Itoa(len(keys))}, keys)
		if g.coin() {
			args = append(args, "LIMIT", g.of("n", counts))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{"ZRANGESTORE", g.key('z'), g.key('z')}
		if g.coin() {
			args = append(args, g.of("i", smallInt), g.of("i", smallInt))
		} else {
			args = append(args, g.of("min", sranges), g.of("max", sranges), "BYSCORE")
		}
		if g.coin() {
			args = append(args, "REV")
		}
		return c(exact, args...)
	},
	func(g g) cmd { return c(scan, "ZSCAN", g.key('z'), "0", "COUNT", "1000") },

	// geo sets, which are sorted sets (ZADD's scores decoded as positions)
	func(g g) cmd {
		args := []string{"GEOADD", g.key('z')}
		for _, opts := range [][]string{{"NX", "XX"}, {"CH"}} {
			if g.n(0, 3) == 0 {
				args = append(args, g.of("opt", opts))
			}
		}
		for range g.n(1, 3) {
			args = append(args, g.of("lon", lons), g.of("lat", lats), g.of("m", zmembers))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		return c(exact, cat([]string{g.of("cmd", []string{"GEOPOS", "GEOHASH"}), g.key('z')}, g.some("m", zmembers, 1, 3))...)
	},
	func(g g) cmd {
		args := []string{"GEODIST", g.key('z'), g.of("m", zmembers), g.of("m", zmembers)}
		if g.coin() {
			args = append(args, g.of("unit", units))
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		var args []string
		switch g.n(0, 2) {
		case 0:
			args = []string{"GEOSEARCH", g.key('z')}
		case 1:
			args = []string{"GEOSEARCHSTORE", g.key('z'), g.key('z')}
		default:
			args = []string{"GEORADIUS", g.key('z'), g.of("lon", lons), g.of("lat", lats), g.of("r", radii), g.of("unit", units)}
		}
		if args[0] != "GEORADIUS" {
			if g.coin() {
				args = append(args, "FROMMEMBER", g.of("m", zmembers))
			} else {
				args = append(args, "FROMLONLAT", g.of("lon", lons), g.of("lat", lats))
			}
			if g.coin() {
				args = append(args, "BYRADIUS", g.of("r", radii), g.of("unit", units))
			} else {
				args = append(args, "BYBOX", g.of("r", radii), g.of("r", radii), g.of("unit", units))
			}
		}
		for range g.n(0, 3) {
			switch g.n(0, 5) {
			case 0:
				args = append(args, g.of("sort", []string{"ASC", "DESC"}))
			case 1:
				args = append(args, "COUNT", g.of("count", counts))
			case 2:
				args = append(args, "ANY")
			case 3:
				args = append(args, g.of("with", []string{"WITHCOORD", "WITHDIST", "WITHHASH"}))
			case 4:
				args = append(args, g.of("store", []string{"STORE", "STOREDIST"}), g.key('z'))
			default:
				args = append(args, "STOREDIST")
			}
		}
		return c(exact, args...)
	},
	func(g g) cmd {
		args := []string{"ZRANDMEMBER", g.key('z')}
		if g.coin() {
			args = append(args, g.of("count", counts))
			if g.coin() {
				args = append(args, "WITHSCORES")
			}
		}
		return c(random, args...)
	},
}

// pairsSorted turns a flat [a1 b1 a2 b2 ...] array, a RESP3 map or an array
// of [a b] pairs into sorted "a=b" strings: hash-order replies compared with
// their pairing kept.
func pairsSorted(r testutil.Reply) []string {
	var out []string
	if len(r.Elems) > 0 && r.Elems[0].Kind == '*' { // RESP3 WITHSCORES / WITHVALUES
		for _, e := range r.Elems {
			out = append(out, e.String())
		}
	} else {
		for i := 0; i+1 < len(r.Elems); i += 2 {
			out = append(out, r.Elems[i].String()+"="+r.Elems[i+1].String())
		}
	}
	slices.Sort(out)
	return out
}

// session runs commands on both servers and checks their replies.
type session struct {
	t           *rapid.T
	redis, bslt *testutil.Conn
	broken      bool // an I/O error: the next check reconnects
}

func (s *session) both(args []string) (want, got testutil.Reply) {
	want, err := s.redis.DoErr(args...)
	if err != nil {
		s.broken = true
		s.t.Fatalf("redis-server: %v: %v", args, err)
	}
	got, err = s.bslt.DoErr(args...)
	if err != nil {
		s.broken = true
		s.t.Fatalf("basalt: %v: %v", args, err)
	}
	return want, got
}

func (s *session) fail(args []string, want, got any) {
	s.t.Fatalf("%s\n  want: %v\n  got:  %v", strings.Join(args, " "), want, got)
}

func (s *session) run(c cmd) {
	want, got := s.both(c.args)
	if c.mode == exact || want.IsError() || got.IsError() || want.IsNil() || got.IsNil() || want.Kind != got.Kind {
		if err := testutil.Compare(c.args, want, got); err != nil {
			s.t.Fatal(err)
		}
		return
	}
	switch c.mode {
	case unordered:
		if err := testutil.Compare(c.args, want.Sorted(), got.Sorted()); err != nil {
			s.t.Fatal(err)
		}
	case pairs:
		if w, g := pairsSorted(want), pairsSorted(got); !slices.Equal(w, g) {
			s.fail(c.args, w, g)
		}
	case scan:
		s.checkScan(c.args, want, got)
	case ttl:
		s.checkTTL(c.args, want, got)
	case random:
		s.checkRandom(c.args, want, got)
	case encoding:
		// README: a string's encoding depends on its value only, so one
		// that APPEND or SETRANGE made "raw" in Redis may be "embstr" or
		// "int" here.
		if want.String() != got.String() && (want.Str != "raw" || got.Str != "embstr" && got.Str != "int") {
			s.fail(c.args, want, got)
		}
	}
}

// checkScan compares a SCAN-family reply that Redis gives in one call
// (COUNT 1000 covers the small key set and collections): the cursor
// exactly, the elements sorted.
func (s *session) checkScan(args []string, want, got testutil.Reply) {
	if len(want.Elems) != 2 || len(got.Elems) != 2 || want.Elems[0].String() != got.Elems[0].String() {
		s.fail(args, want, got)
	}
	w, g := want.Elems[1], got.Elems[1]
	if args[0] == "SSCAN" || args[0] == "SCAN" {
		if err := testutil.Compare(args, w.Sorted(), g.Sorted()); err != nil {
			s.t.Fatal(err)
		}
	} else if wp, gp := pairsSorted(w), pairsSorted(g); !slices.Equal(wp, gp) {
		s.fail(args, wp, gp)
	}
}

// checkTTL accepts TTLs that differ by the time between the two calls.
func (s *session) checkTTL(args []string, want, got testutil.Reply) {
	slack := int64(1)
	if args[0] == "PTTL" {
		slack = 1000
	}
	w, g := want.Int, got.Int
	if want.Kind != ':' || got.Kind != ':' || (w < 0 || g < 0) && w != g || w-g > slack || g-w > slack {
		s.fail(args, want, got)
	}
}

// checkRandom checks a random-member reply by property: same count and
// reply shape as Redis, members and values taken from the collection, no
// repeats for a positive count, the whole collection when the count covers
// it.
func (s *session) checkRandom(args []string, want, got testutil.Reply) {
	key := args[1]
	// The collection's content, from redis-server (the states are equal so far).
	var content testutil.Reply
	switch args[0] {
	case "SRANDMEMBER":
		content, _ = s.both([]string{"SMEMBERS", key})
	case "HRANDFIELD":
		content, _ = s.both([]string{"HGETALL", key})
	case "ZRANDMEMBER":
		content, _ = s.both([]string{"ZRANGE", key, "0", "-1", "WITHSCORES"})
	}
	// value of each member (or "" for sets), by rendering.
	value := map[string]string{}
	if args[0] == "SRANDMEMBER" {
		for _, e := range content.Elems {
			value[e.String()] = ""
		}
	} else if len(content.Elems) > 0 && content.Elems[0].Kind == '*' {
		for _, p := range content.Elems {
			value[p.Elems[0].String()] = p.Elems[1].String()
		}
	} else {
		for i := 0; i+1 < len(content.Elems); i += 2 {
			value[content.Elems[i].String()] = content.Elems[i+1].String()
		}
	}
	if len(args) == 2 { // one member or nil (nil cases were compared exactly)
		if want.Kind != got.Kind {
			s.fail(args, want, got)
		}
		if _, ok := value[got.String()]; !ok {
			s.fail(args, fmt.Sprintf("a member of %v", content), got)
		}
		return
	}
	if want.Kind != got.Kind || len(want.Elems) != len(got.Elems) {
		s.fail(args, want, got)
	}
	count, _ := strconv.Atoi(args[2])
	withValues := len(args) > 3
	seen := map[string]bool{}
	for i := 0; i < len(got.Elems); i++ {
		m, v := got.Elems[i], testutil.Reply{}
		if withValues {
			if m.Kind == '*' { // RESP3: [member, value] pairs
				if len(m.Elems) != 2 {
					s.fail(args, want, got)
				}
				m, v = m.Elems[0], m.Elems[1]
			} else {
				i++
				v = got.Elems[i]
			}
		}
		val, ok := value[m.String()]
		if !ok || withValues && val != v.String() {
			s.fail(args, fmt.Sprintf("members of %v", content), got)
		}
		if count > 0 && seen[m.String()] {
			s.fail(args, "distinct members", got)
		}
		seen[m.String()] = true
	}
	if count >= len(value) && len(seen) != len(value) {
		s.fail(args, fmt.Sprintf("all of %v", content), got)
	}
}

// TestModel runs random command sequences on both servers.
func TestModel(t *testing.T) {
	redis, bslt := testutil.StartPair(t)
	s := &session{broken: true}
	rapid.Check(t, func(rt *rapid.T) {
		s.t = rt
		if s.broken { // a timed-out reply would arrive as the next one's
			s.redis, s.bslt, s.broken = testutil.Dial(t, redis.Addr), testutil.Dial(t, bslt.Addr), false
			s.redis.Timeout, s.bslt.Timeout = 5*time.Second, 5*time.Second
		}
		s.run(c(exact, "FLUSHALL"))
		proto := rapid.SampledFrom([]string{"2", "3"}).Draw(rt, "proto")
		if w, g := s.both([]string{"HELLO", proto}); w.IsError() || g.IsError() {
			rt.Fatalf("HELLO %s: %v / %v", proto, w, g)
		}
		rt.Logf("HELLO %s", proto)
		gen := g{rt}
		steps := rapid.IntRange(1, 50).Draw(rt, "steps")
		for range steps {
			if gen.n(0, 19) == 19 { // shrinks toward plain commands
				s.multi(gen)
				continue
			}
			c := generators[rapid.IntRange(0, len(generators)-1).Draw(rt, "cmd")](gen)
			rt.Logf("%s", strings.Join(c.args, " "))
			s.run(c)
		}
	})
}

// multi runs a few exactly comparable commands in MULTI/EXEC.
func (s *session) multi(gen g) {
	s.t.Logf("MULTI")
	s.run(c(exact, "MULTI"))
	for range gen.n(1, 4) {
		c := generators[rapid.IntRange(0, len(generators)-1).Draw(s.t, "cmd")](gen)
		if c.mode != exact { // replies inside EXEC are compared exactly
			continue
		}
		s.t.Logf("  %s", strings.Join(c.args, " "))
		s.run(c)
	}
	s.t.Logf("EXEC")
	s.run(c(exact, "EXEC"))
}
