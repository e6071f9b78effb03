package compat

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// zsetFill writes n members prefix+i with score i*step into key on both
// servers with pipelined ZADDs of 1000 members each.
func zsetFill(t *testing.T, d *testutil.Diff, key, prefix string, n int, step float64) {
	t.Helper()
	for _, c := range []*testutil.Conn{d.Want, d.Got} {
		var buf []byte
		cmds := 0
		for i := 0; i < n; i += 1000 {
			args := []string{"ZADD", key}
			for j := i; j < min(i+1000, n); j++ {
				args = append(args, strconv.FormatFloat(float64(j)*step, 'g', -1, 64), prefix+strconv.Itoa(j))
			}
			buf = append(buf, testutil.Command(args...)...)
			cmds++
		}
		c.Send(buf)
		for range cmds {
			if r := c.Read(); r.Kind != ':' {
				t.Fatalf("%s: ZADD fill: %v", c.Addr, r)
			}
		}
	}
}

// zscanAll walks ZSCAN from cursor 0 to the end and returns the sorted
// "member=score" pairs and the number of calls.
func zscanAll(t *testing.T, c *testutil.Conn, args ...string) ([]string, int) {
	t.Helper()
	seen := map[string]string{}
	cursor, calls := "0", 0
	for {
		r := c.Do(append([]string{"ZSCAN", args[0], cursor}, args[1:]...)...)
		calls++
		if r.Kind != '*' || len(r.Elems) != 2 {
			t.Fatalf("%s ZSCAN: %v", c.Addr, r)
		}
		items := r.Elems[1].Elems
		for i := 0; i+1 < len(items); i += 2 {
			m, s := items[i].Str, items[i+1].Str
			if old, ok := seen[m]; ok && old != s {
				t.Errorf("%s ZSCAN: %s seen with %s and %s", c.Addr, m, old, s)
			}
			seen[m] = s
		}
		cursor = r.Elems[0].Str
		if cursor == "0" || calls > 1_000_000 {
			break
		}
	}
	var out []string
	for m, s := range seen {
		out = append(out, m+"="+s)
	}
	slices.Sort(out)
	return out, calls
}

func TestZSet(t *testing.T) {
	p := newPair(t)

	t.Run("FirstLiveInScripts", func(t *testing.T) {
		// A script (one write Tx) that reads the first entry and removes
		// it moves basalt's lower bound past it; writes before it in the
		// same Tx must undo what it remembered. Random scripts, every
		// reply compared.
		d := p.diff(t)
		r := rand.New(rand.NewPCG(13, 14))
		for i := range 200 {
			d.Do("ZADD", "dq", strconv.Itoa(r.IntN(1000)), "j"+strconv.Itoa(i))
		}
		take := "local j = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1) if j[1] then redis.call('ZREM', KEYS[1], j[1]) end return j[1]"
		for range 400 {
			m := "j" + strconv.Itoa(r.IntN(300))
			switch r.IntN(6) {
			case 0, 1:
				d.Do("EVAL", take, "1", "dq", strconv.Itoa(r.IntN(1100)))
			case 2: // read the first, write before it, remove the old first
				d.Do("EVAL", "local j = redis.call('ZRANGE', KEYS[1], 0, 0) redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) if j[1] then redis.call('ZREM', KEYS[1], j[1]) end return redis.call('ZRANGE', KEYS[1], 0, 2, 'WITHSCORES')",
					"1", "dq", strconv.Itoa(r.IntN(1000)-50), m)
			case 3: // read the first, move it, take again
				d.Do("EVAL", "local j = redis.call('ZRANGE', KEYS[1], 0, 0) if j[1] then redis.call('ZINCRBY', KEYS[1], ARGV[1], j[1]) end "+
					"local k = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf', 'LIMIT', 0, 1) if k[1] then redis.call('ZREM', KEYS[1], k[1]) end return redis.call('ZRANGE', KEYS[1], 0, 2)",
					"1", "dq", strconv.Itoa(r.IntN(40)-20))
			case 4:
				d.Do("MULTI")
				d.Do("ZRANGEBYSCORE", "dq", "-inf", "+inf", "LIMIT", "0", "1")
				d.Do("ZREM", "dq", m)
				d.Do("ZADD", "dq", strconv.Itoa(r.IntN(1000)), m)
				d.Do("ZPOPMIN", "dq")
				d.Do("EXEC")
			case 5:
				d.Do("ZRANGE", "dq", "0", "3", "WITHSCORES")
				d.Do("ZCARD", "dq")
			}
		}
		d.Do("ZRANGE", "dq", "0", "-1", "WITHSCORES")
	})

	t.Run("PopBounds", func(t *testing.T) {
		// Pops keep bounds of the score index in basalt's header; writes
		// below or above them, score changes, copies and renames must move
		// or carry them. Random rounds, every reply compared.
		d := p.diff(t)
		r := rand.New(rand.NewPCG(11, 12))
		for i := range 300 {
			d.Do("ZADD", "pq", strconv.Itoa(r.IntN(1000)), "m"+strconv.Itoa(i))
		}
		for range 600 {
			m := "m" + strconv.Itoa(r.IntN(400))
			switch r.IntN(9) {
			case 0, 1:
				d.Do("ZPOPMIN", "pq")
			case 2:
				d.Do("ZPOPMAX", "pq", strconv.Itoa(1+r.IntN(3)))
			case 3:
				d.Do("ZADD", "pq", strconv.Itoa(r.IntN(1000)-10), m)
			case 4:
				d.Do("ZINCRBY", "pq", strconv.Itoa(r.IntN(200)-100), m)
			case 5:
				d.Do("ZREM", "pq", m)
			case 6:
				d.Do("ZRANGE", "pq", "0", "2", "WITHSCORES")
				d.Do("ZRANGEBYSCORE", "pq", "-inf", "+inf", "WITHSCORES", "LIMIT", "0", "3")
				d.Do("ZREVRANGEBYSCORE", "pq", "+inf", "-inf", "LIMIT", "0", "3")
				d.Do("ZCOUNT", "pq", "-inf", "+inf")
				d.Do("ZRANK", "pq", m)
			case 7:
				d.Do("COPY", "pq", "pq2", "REPLACE")
				d.Do("ZPOPMIN", "pq2", "2")
				d.Do("ZADD", "pq2", "-5", m)
				d.Do("ZRANGE", "pq2", "0", "-1", "WITHSCORES")
			case 8:
				d.Do("BZPOPMIN", "pq", "0.01")
				// Range removals move the bounds past what they remove
				// when nothing is left before (or after) it.
				lo := r.IntN(1100) - 50
				d.Do("ZREMRANGEBYSCORE", "pq", strconv.Itoa(lo), strconv.Itoa(lo+r.IntN(60)))
				d.Do("ZREMRANGEBYSCORE", "pq", "-inf", "("+strconv.Itoa(r.IntN(300)))
				d.Do("ZREMRANGEBYRANK", "pq", "-"+strconv.Itoa(1+r.IntN(3)), "-1")
				d.Do("ZREMRANGEBYLEX", "pq", "-", "[m"+strconv.Itoa(r.IntN(10)))
				d.Do("ZRANGE", "pq", "0", "-1", "WITHSCORES")
			}
		}
		d.Do("RENAME", "pq", "pq3")
		d.Do("ZADD", "pq3", "5000", "top")
		d.Do("ZPOPMAX", "pq3")
		d.Do("ZRANGE", "pq3", "0", "-1", "WITHSCORES")
		d.Do("ZCARD", "pq3")
	})

	t.Run("ZAddOptions", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a
			ZADD z 2 b 3 c 1 a
			ZRANGE z 0 -1 WITHSCORES
			ZADD z NX 10 a 4 d
			ZADD z XX 10 a 5 e
			ZRANGE z 0 -1 WITHSCORES
			ZADD z CH 10 a 20 b 6 f
			ZADD z XX CH 10 a 21 b 7 g
			ZADD z GT CH 5 a 50 b 1 h
			ZADD z LT CH 5 a 60 b 2 i
			ZADD z gt ch xx 100 a 1 b
			ZADD z LT NX 1 a
			ZADD z GT NX 1 a
			ZADD z GT LT 1 a
			ZADD z NX XX 1 a
			ZADD z nx xx gt 1 a
			ZADD z INCR 1 a 2 b
			ZADD z INCR 5 a
			ZADD z INCR XX 5 zz
			ZADD z INCR NX 5 a
			ZADD z INCR NX 5 new
			ZADD z INCR GT -1 a
			ZADD z INCR LT -1 a
			ZADD z INCR GT 0 a
			ZADD z INCR LT 0 a
			ZADD z CH 5 a
			ZRANGE z 0 -1 WITHSCORES
			ZADD dup 1 a 2 a 3 a
			ZADD dup CH 5 b 6 b 6 a
			ZADD dup NX 7 c 8 c
			ZRANGE dup 0 -1 WITHSCORES
			ZADD missing XX 1 a
			EXISTS missing
			ZADD missing XX INCR 1 a
			EXISTS missing
			ZADD z 1
			ZADD z 1 a 2
			ZADD z NX
			ZADD z FOO 1 a
			ZADD z 1 a FOO
			ZADD z abc a
			ZADD z 1 a abc b
			ZADD z nan a
			ZADD z "" a
			ZADD z " 1" a
			ZADD z "1 " a
			ZADD z 1e400 a
			ZADD z 1e-400 a
			ZADD z 0x10 hex
			ZADD z +5 plus
			ZADD z -inf ninf +inf pinf Infinity pinf2
			ZADD z INCR -inf pinf
			ZADD z INCR +inf ninf
			ZADD z INCR inf pinf
			ZRANGE z 0 -1 WITHSCORES
			SET str x
			ZADD str 1 a
			ZADD str abc a
			ZADD str NX XX 1 a
			ZINCRBY str 1 a
		`)
	})

	t.Run("ZIncrBy", func(t *testing.T) {
		p.both(t, `
			ZINCRBY z 1 a
			ZINCRBY z 1.5 a
			ZINCRBY z -0.1 a
			ZINCRBY z 0.1 b
			ZINCRBY z 0.2 b
			ZINCRBY z abc a
			ZINCRBY z nan a
			ZINCRBY z nx a
			ZINCRBY z incr a
			ZINCRBY z inf c
			ZINCRBY z -inf c
			ZINCRBY z 1e308 d
			ZINCRBY z 1e308 d
			ZSCORE z c
			ZSCORE z d
			ZRANGE z 0 -1 WITHSCORES
		`)
	})

	t.Run("Scores", func(t *testing.T) {
		p.both(t, `
			ZADD z 0.1 a 1e100 b -1e-100 c 3.0 d 1e15 e 1e17 f 123456789.123456789 g 0x1p-1074 h 4503599627370496 i -4503599627370497 j
			ZRANGE z 0 -1 WITHSCORES
			ZSCORE z a
			ZSCORE z h
			ZMSCORE z a b nosuch c
			ZMSCORE nosuch a b
			ZSCORE nosuch a
			ZSCORE z nosuch
			ZADD z -0 negz
			ZSCORE z negz
			ZADD z INCR -0 negz2
			ZRANGEBYSCORE z -0 0 WITHSCORES
			ZSCAN z 0
			ZADD q 1e17 a 4e18 b 5e18 c -4.6e18 d 4611686018427387904 f 4611686018427387903 g 2.5e15 h
			ZSCAN q 0
			ZADD q2 1e17 a 4e18 b 5e18 c -4.6e18 d 4611686018427387904 f 2.5e15 h 1 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
		`)
		// The same scores in a skiplist: ZSCAN formats them with %.17g.
		d := p.diff(t)
		d.Run(`ZADD q2 1e17 a 4e18 b 5e18 c -4.6e18 d 4611686018427387904 f 2.5e15 h 1 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`)
		want, _ := zscanAll(t, d.Want, "q2", "COUNT", "100")
		got, _ := zscanAll(t, d.Got, "q2", "COUNT", "100")
		if !slices.Equal(want, got) {
			t.Errorf("ZSCAN q2:\n  want: %v\n  got:  %v", want, got)
		}
	})

	t.Run("NegativeZero", func(t *testing.T) {
		// Redis keeps -0 in a skiplist but not in a listpack.
		d := p.diff(t)
		zsetFill(t, d, "big", "m", 200, 1)
		d.Run(`
			ZADD big -0 nz
			ZSCORE big nz
			ZRANGEBYSCORE big -1 0 WITHSCORES
			ZRANGE big 0 2 WITHSCORES
			ZINCRBY big -0 nz
			ZADD small -0 nz
			ZSCORE small nz
			ZUNION 1 small WEIGHTS -1 WITHSCORES
			ZUNIONSTORE dst 1 small WEIGHTS -1
			ZRANGE dst 0 -1 WITHSCORES
			ZUNIONSTORE dst 1 big WEIGHTS -1
			ZRANGE dst -3 -1 WITHSCORES
			ZRANGESTORE dst big 0 -1
			ZSCORE dst nz
			ZRANGESTORE dst big -1 0 BYSCORE
			ZSCORE dst nz
			ZINTER 2 big small WITHSCORES
			ZPOPMIN big 2
		`)
		d.Proto(3)
		d.Run(`
			ZSCORE big nz
			ZMSCORE big nz m1
			ZRANGE big 0 2 WITHSCORES
		`)
	})

	t.Run("Basics", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a 2 b 3 c 3 cc 3 ca 4 d
			ZCARD z
			ZCARD nosuch
			ZRANK z a
			ZRANK z cc
			ZRANK z d
			ZRANK z nosuch
			ZRANK nosuch a
			ZREVRANK z a
			ZREVRANK z ca
			ZREVRANK z d
			ZREVRANK z nosuch
			ZRANK z a WITHSCORE
			ZREM z a nosuch b
			ZREM z a
			ZREM nosuch a
			ZCARD z
			ZREM z c cc ca d
			EXISTS z
			ZADD "z\x00" 1 "m\x00\xff"
			ZRANGE "z\x00" 0 -1 WITHSCORES
			ZSCORE "z\x00" "m\x00\xff"
			SET s x
			ZREM s a
			ZCARD s
			ZSCORE s a
			ZMSCORE s a
			ZRANK s a
			ZREVRANK s a
		`)
	})

	t.Run("ZRangeByRank", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a 2 b 3 c 4 d 5 e 5 f 5 g 6 h
			ZRANGE z 0 -1
			ZRANGE z 0 -1 WITHSCORES
			ZRANGE z 0 -1 withscores
			ZRANGE z 2 4
			ZRANGE z -3 -1
			ZRANGE z -100 100
			ZRANGE z 5 2
			ZRANGE z 8 10
			ZRANGE z -1 -3
			ZRANGE z 0 0 WITHSCORES
			ZRANGE z 0 -1 REV
			ZRANGE z 1 3 REV WITHSCORES
			ZRANGE z -2 -1 REV
			ZREVRANGE z 0 -1
			ZREVRANGE z 0 2 WITHSCORES
			ZREVRANGE z -2 -1 WITHSCORES
			ZREVRANGE z 0 -1 REV
			ZREVRANGE z 0 -1 BYSCORE
			ZRANGE z a 1
			ZRANGE z 0 b
			ZRANGE z 0 1.5
			ZRANGE z 0 -1 LIMIT 0 1
			ZRANGE z 0 -1 LIMIT 1 -1
			ZRANGE z 0 -1 LIMIT 0 -2
			ZRANGE z 0 -1 LIMIT 0
			ZRANGE z 0 -1 LIMIT a 1
			ZRANGE z 0 -1 WITHSCORES WITHSCORES
			ZRANGE z 0 -1 REV REV
			ZRANGE z 0 -1 BYSCORE BYLEX
			ZRANGE z 0 -1 FOO
			ZRANGE nosuch 0 -1
			ZRANGE nosuch a b
			ZREVRANGE nosuch 0 -1
			SET s x
			ZRANGE s 0 -1
			ZRANGE s a b
		`)
	})

	t.Run("ZRangeByScore", func(t *testing.T) {
		p.both(t, `
			ZADD z -inf ninf 1 a 2 b 3 c 4 d 5 e 5 f 5 g 6 h inf pinf
			ZRANGEBYSCORE z -inf +inf
			ZRANGEBYSCORE z -inf +inf WITHSCORES
			ZRANGEBYSCORE z 2 5
			ZRANGEBYSCORE z (2 5
			ZRANGEBYSCORE z 2 (5
			ZRANGEBYSCORE z (2 (5
			ZRANGEBYSCORE z (5 (5
			ZRANGEBYSCORE z 5 5
			ZRANGEBYSCORE z (5 5
			ZRANGEBYSCORE z 5 2
			ZRANGEBYSCORE z (-inf (inf
			ZRANGEBYSCORE z -inf -inf
			ZRANGEBYSCORE z inf inf
			ZRANGEBYSCORE z (inf inf
			ZRANGEBYSCORE z 1.5 4.5
			ZRANGEBYSCORE z " 2" 3
			ZRANGEBYSCORE z "" 3
			ZRANGEBYSCORE z ( 3
			ZRANGEBYSCORE z 0x2 0x3
			ZRANGEBYSCORE z 1e400 1e500
			ZRANGEBYSCORE z -1e400 2
			ZRANGEBYSCORE z "2\x00junk" 3
			ZRANGEBYSCORE z 2 3 LIMIT 0 1
			ZRANGEBYSCORE z -inf inf LIMIT 2 3
			ZRANGEBYSCORE z -inf inf LIMIT 2 3 WITHSCORES
			ZRANGEBYSCORE z -inf inf WITHSCORES LIMIT 2 3
			ZRANGEBYSCORE z -inf inf LIMIT 0 0
			ZRANGEBYSCORE z -inf inf LIMIT 0 -1
			ZRANGEBYSCORE z -inf inf LIMIT 3 -5
			ZRANGEBYSCORE z -inf inf LIMIT -1 2
			ZRANGEBYSCORE z -inf inf LIMIT 10 2
			ZRANGEBYSCORE z -inf inf LIMIT 9 2
			ZRANGEBYSCORE z -inf inf LIMIT 100 2
			ZRANGEBYSCORE z -inf inf LIMIT 1 2 LIMIT 3 1
			ZRANGEBYSCORE z -inf inf LIMIT 1
			ZRANGEBYSCORE z -inf inf LIMIT x 1
			ZRANGEBYSCORE z -inf inf LIMIT 1 x
			ZRANGEBYSCORE z -inf inf BYSCORE
			ZRANGEBYSCORE z -inf inf REV
			ZRANGEBYSCORE z a 1
			ZRANGEBYSCORE z 1 a
			ZRANGEBYSCORE z nan 1
			ZRANGEBYSCORE z (nan 1
			ZRANGEBYSCORE z [1 2
			ZRANGEBYSCORE z "1 " 2
			ZREVRANGEBYSCORE z +inf -inf
			ZREVRANGEBYSCORE z 5 2 WITHSCORES
			ZREVRANGEBYSCORE z (5 2
			ZREVRANGEBYSCORE z 5 (2
			ZREVRANGEBYSCORE z 2 5
			ZREVRANGEBYSCORE z +inf -inf LIMIT 1 3
			ZREVRANGEBYSCORE z +inf -inf LIMIT 1 3 WITHSCORES
			ZREVRANGEBYSCORE z +inf -inf LIMIT 11 1
			ZREVRANGEBYSCORE z +inf -inf LIMIT -5 1
			ZREVRANGEBYSCORE z a b
			ZRANGE z 2 5 BYSCORE
			ZRANGE z (2 5 BYSCORE WITHSCORES
			ZRANGE z 5 2 BYSCORE REV
			ZRANGE z 2 5 BYSCORE REV
			ZRANGE z +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES
			ZRANGE z -inf +inf BYSCORE LIMIT 1 2
			ZRANGE z -inf +inf LIMIT 1 2 BYSCORE
			ZRANGE z -inf +inf REV BYSCORE LIMIT 1 2
			ZRANGE z a b BYSCORE
			ZRANGE nosuch 0 1 BYSCORE
			ZRANGEBYSCORE nosuch a b
			ZRANGEBYSCORE nosuch 0 1
			ZREVRANGEBYSCORE nosuch 1 0
		`)
	})

	t.Run("ZRangeByLex", func(t *testing.T) {
		p.both(t, `
			ZADD z 0 a 0 b 0 c 0 d 0 e 0 ab 0 "" 0 "b\x00" 0 bb 0 ca
			ZRANGEBYLEX z - +
			ZRANGEBYLEX z [b [c
			ZRANGEBYLEX z (b [c
			ZRANGEBYLEX z [b (c
			ZRANGEBYLEX z (b (c
			ZRANGEBYLEX z [b [b
			ZRANGEBYLEX z (b (b
			ZRANGEBYLEX z (b [b
			ZRANGEBYLEX z [c [b
			ZRANGEBYLEX z - [b
			ZRANGEBYLEX z [b +
			ZRANGEBYLEX z - -
			ZRANGEBYLEX z + +
			ZRANGEBYLEX z + -
			ZRANGEBYLEX z [ [b
			ZRANGEBYLEX z ( [b
			ZRANGEBYLEX z [zz +
			ZRANGEBYLEX z - (a
			ZRANGEBYLEX z - + LIMIT 2 3
			ZRANGEBYLEX z - + LIMIT 2 -1
			ZRANGEBYLEX z - + LIMIT -1 2
			ZRANGEBYLEX z - + LIMIT 10 1
			ZRANGEBYLEX z - + LIMIT 9 5
			ZRANGEBYLEX z - + LIMIT 0 0
			ZRANGEBYLEX z - + WITHSCORES
			ZRANGEBYLEX z b c
			ZRANGEBYLEX z -a +
			ZRANGEBYLEX z - +a
			ZRANGEBYLEX z "+\x00x" -
			ZRANGEBYLEX z {a +
			ZREVRANGEBYLEX z + -
			ZREVRANGEBYLEX z [c [b
			ZREVRANGEBYLEX z (c (b
			ZREVRANGEBYLEX z [b [c
			ZREVRANGEBYLEX z + - LIMIT 1 3
			ZREVRANGEBYLEX z + [bb LIMIT 1 2
			ZRANGE z [b [d BYLEX
			ZRANGE z [d [b BYLEX REV
			ZRANGE z [d [b BYLEX REV LIMIT 1 1
			ZRANGE z - + BYLEX WITHSCORES
			ZRANGE z - + BYLEX LIMIT 1 2 REV
			ZLEXCOUNT z - +
			ZLEXCOUNT z [b [c
			ZLEXCOUNT z (b (c
			ZLEXCOUNT z [c [b
			ZLEXCOUNT z b c
			ZLEXCOUNT nosuch - +
			ZLEXCOUNT nosuch a b
			ZRANGEBYLEX nosuch - +
			ZADD mixed 1 b 2 a 3 c 4 aa
			ZRANGEBYLEX mixed - +
			ZRANGEBYLEX mixed [a [a
			ZRANGEBYLEX mixed [b [c
			ZREVRANGEBYLEX mixed [c [a
			ZLEXCOUNT mixed [a [c
			SET s x
			ZRANGEBYLEX s - +
			ZLEXCOUNT s - +
			ZRANGEBYLEX s a b
		`)
	})

	t.Run("ZCount", func(t *testing.T) {
		p.both(t, `
			ZADD z -inf ninf 1 a 2 b 3 c 4 d inf pinf
			ZCOUNT z -inf +inf
			ZCOUNT z (-inf (+inf
			ZCOUNT z 2 3
			ZCOUNT z (2 3
			ZCOUNT z (2 (3
			ZCOUNT z 3 2
			ZCOUNT z 3 3
			ZCOUNT z (3 3
			ZCOUNT z a 1
			ZCOUNT z 1 (a
			ZCOUNT nosuch 0 1
			ZCOUNT nosuch a b
			SET s x
			ZCOUNT s 0 1
			ZCOUNT s a b
		`)
	})

	t.Run("ZRangeStore", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a 2 b 3 c 4 d 5 e
			ZRANGESTORE dst z 0 -1
			ZRANGE dst 0 -1 WITHSCORES
			ZRANGESTORE dst z 1 2
			ZRANGE dst 0 -1 WITHSCORES
			ZRANGESTORE dst z 2 4 BYSCORE LIMIT 1 1
			ZRANGE dst 0 -1 WITHSCORES
			ZRANGESTORE dst z 4 2 BYSCORE REV
			ZRANGE dst 0 -1 WITHSCORES
			ZRANGESTORE dst z 0 -1 REV
			ZRANGE dst 0 -1 WITHSCORES
			ZRANGESTORE dst z - + BYLEX
			ZRANGESTORE dst z 0 -1 WITHSCORES
			ZRANGESTORE dst z 0 -1 LIMIT 0 1
			ZRANGESTORE dst z 5 1
			EXISTS dst
			SET dst x
			EXPIRE dst 100
			ZRANGESTORE dst z 0 0
			TYPE dst
			TTL dst
			ZRANGESTORE dst nosuch 0 -1
			EXISTS dst
			ZRANGESTORE z z 1 2
			ZRANGE z 0 -1 WITHSCORES
			SET s x
			ZRANGESTORE dst s 0 -1
			ZRANGESTORE s z 0 -1
			TYPE s
			ZRANGESTORE dst z a b
		`)
	})

	t.Run("ZRemRange", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a 2 b 3 c 4 d 5 e 6 f 7 g
			ZREMRANGEBYRANK z 0 0
			ZREMRANGEBYRANK z -1 -1
			ZREMRANGEBYRANK z 10 20
			ZREMRANGEBYRANK z 3 1
			ZREMRANGEBYRANK z a 1
			ZRANGE z 0 -1
			ZREMRANGEBYSCORE z (2 4
			ZREMRANGEBYSCORE z 10 20
			ZREMRANGEBYSCORE z a 1
			ZRANGE z 0 -1
			ZREMRANGEBYRANK z 0 -1
			EXISTS z
			ZADD l 0 a 0 b 0 c 0 d
			ZREMRANGEBYLEX l [b (d
			ZREMRANGEBYLEX l (a [a
			ZREMRANGEBYLEX l a b
			ZRANGE l 0 -1
			ZREMRANGEBYLEX l - +
			EXISTS l
			ZREMRANGEBYRANK nosuch 0 -1
			ZREMRANGEBYSCORE nosuch 0 1
			ZREMRANGEBYLEX nosuch - +
			ZREMRANGEBYSCORE nosuch a 1
			SET s x
			ZREMRANGEBYRANK s 0 -1
			ZREMRANGEBYSCORE s 0 1
			ZREMRANGEBYLEX s - +
			ZREMRANGEBYLEX s a b
			ZADD e 1 a
			EXPIRE e 100
			ZREMRANGEBYSCORE e 5 6
			TTL e
		`)
	})

	t.Run("Pop", func(t *testing.T) {
		p.both(t, `
			ZADD z 1 a 2 b 3 c 4 d 5 e 6 f
			ZPOPMIN z
			ZPOPMAX z
			ZPOPMIN z 2
			ZPOPMAX z 1
			ZPOPMIN z 0
			ZPOPMIN z 10
			EXISTS z
			ZPOPMIN z
			ZPOPMIN z 2
			ZPOPMAX nosuch
			ZPOPMIN z -1
			ZPOPMIN z abc
			ZPOPMIN z 1 2
			ZADD z 1 a 2 b 3 c
			ZPOPMIN z -1
			ZPOPMIN z 1.5
			ZADD y 10 x 20 y
			ZMPOP 1 z MIN
			ZMPOP 2 nosuch z MAX COUNT 5
			ZMPOP 2 nosuch z MAX
			ZMPOP 2 y z min count 1
			ZMPOP 1 nosuch MIN
			ZMPOP 2 z y MAX COUNT 10
			EXISTS y
			ZMPOP 0 z MIN
			ZMPOP -1 z MIN
			ZMPOP abc z MIN
			ZMPOP 1 z
			ZMPOP 1 z FOO
			ZMPOP 2 z MIN
			ZMPOP 1 z MIN COUNT 0
			ZMPOP 1 z MIN COUNT -1
			ZMPOP 1 z MIN COUNT abc
			ZMPOP 1 z MIN COUNT 1 COUNT 2
			ZMPOP 1 z MIN COUNT
			ZMPOP 1 z MIN FOO 1
			SET s x
			ZPOPMIN s
			ZPOPMIN s 0
			ZMPOP 2 nosuch s MIN
			ZADD z 1 a
			ZMPOP 2 z s MIN
		`)
	})

	t.Run("SetOps", func(t *testing.T) {
		p.both(t, `
			ZADD a 1 x 2 y 3 z
			ZADD b 10 y 20 z 30 w
			ZADD c 100 z
			SADD s y z v
			ZUNION 2 a b
			ZUNION 2 a b WITHSCORES
			ZUNION 3 a b c WITHSCORES
			ZUNION 2 a b WEIGHTS 2 3 WITHSCORES
			ZUNION 2 a b WEIGHTS 2 -1 WITHSCORES AGGREGATE MIN
			ZUNION 2 a b AGGREGATE MAX WITHSCORES
			ZUNION 2 a b aggregate sum withscores weights 1 1
			ZUNION 2 a s WITHSCORES
			ZUNION 2 a nosuch WITHSCORES
			ZUNION 1 nosuch
			ZINTER 2 a b WITHSCORES
			ZINTER 3 a b c WITHSCORES
			ZINTER 2 a b WEIGHTS 1 0.5 AGGREGATE MAX WITHSCORES
			ZINTER 2 a b AGGREGATE MIN WITHSCORES
			ZINTER 2 a s WITHSCORES
			ZINTER 2 s s WITHSCORES
			ZINTER 2 a nosuch
			ZINTER 2 a a WITHSCORES
			ZDIFF 2 a b
			ZDIFF 2 a b WITHSCORES
			ZDIFF 3 b a c WITHSCORES
			ZDIFF 2 a s WITHSCORES
			ZDIFF 2 s a WITHSCORES
			ZDIFF 1 a WITHSCORES
			ZDIFF 2 nosuch a
			ZDIFF 2 a b WEIGHTS 1 2
			ZDIFF 2 a b AGGREGATE SUM
			ZINTERCARD 2 a b
			ZINTERCARD 3 a b c
			ZINTERCARD 2 a b LIMIT 1
			ZINTERCARD 2 a b LIMIT 0
			ZINTERCARD 2 a s
			ZINTERCARD 2 a nosuch
			ZINTERCARD 2 a b LIMIT -1
			ZINTERCARD 2 a b LIMIT x
			ZINTERCARD 0 a
			ZINTERCARD x a
			ZINTERCARD 3 a b
			ZINTERCARD 2 a b WITHSCORES
			ZINTERCARD 2 a b WEIGHTS 1 2
			ZUNION 0 a
			ZUNION -1 a
			ZUNION x a
			ZUNION 3 a b
			ZUNION 2 a b WEIGHTS 1
			ZUNION 2 a b WEIGHTS 1 x
			ZUNION 2 a b WEIGHTS 1 nan
			ZUNION 2 a b AGGREGATE
			ZUNION 2 a b AGGREGATE avg
			ZUNION 2 a b FOO
			ZUNION 2 a b LIMIT 1
			SET str x
			ZUNION 2 a str
			ZUNION 2 a str WEIGHTS x
			ZINTER 2 str a
			ZINTERCARD 2 a str
			ZDIFF 2 a str
			ZUNIONSTORE dst 2 a b
			ZRANGE dst 0 -1 WITHSCORES
			ZUNIONSTORE dst 2 a b WEIGHTS 1 2 AGGREGATE MAX
			ZRANGE dst 0 -1 WITHSCORES
			ZUNIONSTORE dst 2 a b WITHSCORES
			ZINTERSTORE dst 2 a b
			ZRANGE dst 0 -1 WITHSCORES
			ZINTERSTORE dst 2 a c
			ZINTERSTORE dst 2 a x
			EXISTS dst
			ZDIFFSTORE dst 2 a b
			ZRANGE dst 0 -1 WITHSCORES
			ZDIFFSTORE dst 2 a a
			EXISTS dst
			ZUNIONSTORE a 2 a b
			ZRANGE a 0 -1 WITHSCORES
			SET dst x
			EXPIRE dst 100
			ZUNIONSTORE dst 1 b
			TTL dst
			TYPE dst
			ZUNIONSTORE dst 0 b
			ZUNIONSTORE dst 2 b str
			ZINTERSTORE dst 1 str
			ZDIFFSTORE dst 1 str
			TYPE dst
			ZUNIONSTORE str 1 b
			TYPE str
		`)
	})

	t.Run("SetOpsFloat", func(t *testing.T) {
		p.both(t, `
			ZADD a inf x -inf y 0 z 0.1 w
			ZADD b -inf x inf y 0.2 w
			ZADD c 0.3 w 1 x
			ZUNION 2 a b WITHSCORES
			ZINTER 2 a b WITHSCORES
			ZUNION 3 a b c WITHSCORES
			ZINTER 3 a b c WITHSCORES
			ZUNION 3 c b a WITHSCORES
			ZUNION 2 a b WEIGHTS 0 1 WITHSCORES
			ZINTER 2 a b WEIGHTS 1 0 WITHSCORES
			ZINTER 2 a b WEIGHTS 1 0 AGGREGATE MIN WITHSCORES
			ZINTER 2 a b WEIGHTS 1 0 AGGREGATE MAX WITHSCORES
			ZUNION 2 a b WEIGHTS inf -inf WITHSCORES
			ZUNION 2 a b WEIGHTS 0x1p3 1e-3 WITHSCORES
		`)
	})

	t.Run("ZScan", func(t *testing.T) {
		p.both(t, `
			ZADD z 3 c 1 a 2 b 2.5 foo 0.1 bar
			ZSCAN z 0
			ZSCAN z 0 COUNT 1
			ZSCAN z 123
			ZSCAN z 0 MATCH b*
			ZSCAN z 0 MATCH *a* COUNT 100
			ZSCAN z 0 COUNT 0
			ZSCAN z 0 COUNT -1
			ZSCAN z 0 COUNT x
			ZSCAN z 0 MATCH
			ZSCAN z 0 TYPE zset
			ZSCAN z 0 FOO bar
			ZSCAN z x
			ZSCAN z -1
			ZSCAN nosuch 0
			ZSCAN nosuch 0 COUNT 0
			ZSCAN nosuch x
			SET s x
			ZSCAN s 0
			ZSCAN s x
		`)
		d := p.diff(t)
		zsetFill(t, d, "big", "m", 1000, 0.5)
		for _, args := range [][]string{{"big"}, {"big", "COUNT", "7"}, {"big", "MATCH", "m1*", "COUNT", "50"}} {
			want, _ := zscanAll(t, d.Want, args...)
			got, calls := zscanAll(t, d.Got, args...)
			if !slices.Equal(want, got) {
				t.Errorf("ZSCAN %v: want %d pairs, got %d", args, len(want), len(got))
			}
			if len(args) == 3 && calls < 1000/7 {
				t.Errorf("ZSCAN %v: %d calls for 1000 members", args, calls)
			}
		}
	})

	t.Run("ZRandMember", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			ZADD z 1 a 2 b 3 c 4 d 5 e
			ZRANDMEMBER nosuch
			ZRANDMEMBER nosuch 5
			ZRANDMEMBER nosuch -5 WITHSCORES
			ZRANDMEMBER z 0
			ZRANDMEMBER z 0 WITHSCORES
			ZRANDMEMBER z 5
			ZRANDMEMBER z 10 WITHSCORES
			ZRANDMEMBER z x
			ZRANDMEMBER z 1 FOO
			ZRANDMEMBER z 1 WITHSCORES FOO
			ZRANDMEMBER z -9223372036854775808
			ZRANDMEMBER z 9223372036854775807 WITHSCORES
			ZRANDMEMBER z -4611686018427387904 WITHSCORES
			ZRANDMEMBER z 4611686018427387904 WITHSCORES
			SET s x
			ZRANDMEMBER s
			ZRANDMEMBER s 1
		`)
		zsetFill(t, d, "big", "m", 300, 1)
		d.Do("ZRANDMEMBER", "big", "300")
		d.Do("ZRANDMEMBER", "big", "1000", "WITHSCORES")
		members := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
		for i := range 300 {
			members["m"+strconv.Itoa(i)] = strconv.Itoa(i)
		}
		check := func(proto int, key string, count int, withScores bool) {
			args := []string{"ZRANDMEMBER", key, strconv.Itoa(count)}
			if withScores {
				args = append(args, "WITHSCORES")
			}
			r := d.Got.Do(args...)
			n := count
			if n < 0 {
				n = -n
			}
			size := 5
			if key == "big" {
				size = 300
			}
			if count > 0 {
				n = min(n, size)
			}
			var got []string
			switch {
			case withScores && proto == 2:
				if len(r.Elems) != 2*n {
					t.Fatalf("%v: %v", args, r)
				}
				for i := 0; i < len(r.Elems); i += 2 {
					if members[r.Elems[i].Str] != r.Elems[i+1].Str {
						t.Errorf("%v: %s with score %s", args, r.Elems[i].Str, r.Elems[i+1].Str)
					}
					got = append(got, r.Elems[i].Str)
				}
			case withScores:
				if len(r.Elems) != n {
					t.Fatalf("%v: %v", args, r)
				}
				for _, pair := range r.Elems {
					if len(pair.Elems) != 2 || pair.Elems[1].Kind != ',' || members[pair.Elems[0].Str] != pair.Elems[1].Str {
						t.Errorf("%v: pair %v", args, pair)
					}
					got = append(got, pair.Elems[0].Str)
				}
			default:
				if len(r.Elems) != n {
					t.Fatalf("%v: %v", args, r)
				}
				for _, e := range r.Elems {
					got = append(got, e.Str)
				}
			}
			seen := map[string]bool{}
			for _, m := range got {
				if _, ok := members[m]; !ok || (key == "z") != (len(m) == 1) {
					t.Errorf("%v: %q is not a member", args, m)
				}
				if count > 0 && seen[m] {
					t.Errorf("%v: %q twice", args, m)
				}
				seen[m] = true
			}
		}
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			for _, key := range []string{"z", "big"} {
				for _, count := range []int{1, 2, 3, 4, -1, -3, -20, 50, 150, 299} {
					check(proto, key, count, false)
					check(proto, key, count, true)
				}
			}
			// Without a count: one member, a bulk string.
			r := d.Got.Do("ZRANDMEMBER", "big")
			if _, ok := members[r.Str]; !ok || r.Kind != '$' {
				t.Errorf("ZRANDMEMBER big: %v", r)
			}
		}
		// Negative counts repeat members: 2000 draws from 5 see all 5.
		r := d.Got.Do("ZRANDMEMBER", "z", "-2000")
		seen := map[string]bool{}
		for _, e := range r.Elems {
			seen[e.Str] = true
		}
		if len(seen) != 5 {
			t.Errorf("ZRANDMEMBER z -2000 saw %d members", len(seen))
		}
	})

	t.Run("Encoding", func(t *testing.T) {
		d := p.diff(t)
		long := strings.Repeat("x", 64)
		d.Run(fmt.Sprintf(`
			ZADD z 1 a
			OBJECT ENCODING z
			ZADD z 1 %[1]s
			OBJECT ENCODING z
			ZADD z 1 %[1]sy
			OBJECT ENCODING z
			ZREM z %[1]sy
			OBJECT ENCODING z
			ZADD l 1 %[1]sy
			OBJECT ENCODING l
			ZUNIONSTORE u 1 z
			OBJECT ENCODING u
			ZRANGESTORE r z 0 -1
			OBJECT ENCODING r
			COPY z zc
			OBJECT ENCODING zc
		`, long))
		zsetFill(t, d, "e", "m", 128, 1)
		d.Do("OBJECT", "ENCODING", "e")
		d.Do("ZADD", "e", "1", "one-more")
		d.Do("OBJECT", "ENCODING", "e")
		d.Do("ZPOPMIN", "e", "100")
		d.Do("OBJECT", "ENCODING", "e")
		d.Do("ZUNIONSTORE", "u", "1", "e")
		d.Do("OBJECT", "ENCODING", "u")
		zsetFill(t, d, "f", "m", 200, 1)
		d.Do("ZRANGESTORE", "r", "f", "0", "127")
		d.Do("OBJECT", "ENCODING", "r")
		d.Do("ZRANGESTORE", "r", "f", "0", "128")
		d.Do("OBJECT", "ENCODING", "r")
		d.Do("ZRANGESTORE", "r", "f", "0", "300", "BYSCORE")
		d.Do("OBJECT", "ENCODING", "r")
		d.Do("ZINTERSTORE", "r", "2", "f", "e")
		d.Do("OBJECT", "ENCODING", "r")
	})

	t.Run("Keyspace", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			ZADD z 1 a 2 b 3 c
			TYPE z
			SCAN 0 TYPE zset
			EXPIRE z 100
			ZADD z 4 d
			ZREM z d
			ZINCRBY z 1 a
			ZPOPMAX z
			TTL z
			RENAME z z2
			ZRANGE z2 0 -1 WITHSCORES
			EXISTS z
			TTL z2
			COPY z2 z3
			ZRANGE z3 0 -1 WITHSCORES
			ZADD z3 9 x
			ZRANGE z2 0 -1
			COPY z2 z3
			COPY z2 z3 REPLACE
			ZRANGE z3 0 -1
			ZADD other 5 o
			RENAME other z3
			ZRANGE z3 0 -1 WITHSCORES
			MOVE z2 1
			EXISTS z2
			SELECT 1
			ZRANGE z2 0 -1 WITHSCORES
			ZSCORE z2 a
			SELECT 0
			SET z2 str
			ZADD z2 1 a
			DEL z3
			ZCARD z3
			ZADD z3 1 a
			ZRANGE z3 0 -1 WITHSCORES
			PEXPIRE z3 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			ZCARD z3
			ZSCORE z3 a
			EXISTS z3
			ZADD z3 7 new
			ZRANGE z3 0 -1 WITHSCORES
			SET str v
			ZADD str 1 a
			SET str v
			DEL str
			ZADD str 1 a
			ZRANGE str 0 -1
		`)
	})

	t.Run("Transactions", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			ZADD z 1 a
			WATCH z
			ZADD z 2 b
			MULTI
			ZADD z 3 c
			EXEC
			ZRANGE z 0 -1
			WATCH z
			ZSCORE z a
			MULTI
			ZINCRBY z 5 a
			ZPOPMIN z
			ZRANGEBYSCORE z -inf +inf WITHSCORES
			ZRANDMEMBER z 10
			ZADD z x a
			EXEC
			ZRANGE z 0 -1 WITHSCORES
		`)
		// A write by another client between WATCH and EXEC aborts.
		other := p.conn(t)
		d.Do("WATCH", "z")
		other.Do("ZADD", "z", "9", "other")
		d.Do("MULTI")
		d.Do("ZCARD", "z")
		d.Do("EXEC")
		// Commands that change nothing do not touch the key.
		for _, args := range [][]string{
			{"ZADD", "z", "NX", "1", "a"}, {"ZADD", "z", "XX", "1", "nosuch"}, {"ZADD", "z", "GT", "-5", "a"},
			{"ZINCRBY", "z", "0", "a"}, {"ZREM", "z", "nosuch"}, {"ZREMRANGEBYSCORE", "z", "100", "200"},
			{"ZREMRANGEBYRANK", "z", "50", "60"}, {"ZREMRANGEBYLEX", "z", "[zz", "+"}, {"ZPOPMIN", "z", "0"},
			{"ZRANGESTORE", "nosuch", "nosuch2", "0", "-1"},
		} {
			d.Do("WATCH", "z", "nosuch")
			other.Do(args...)
			d.Do("MULTI")
			d.Do("ZCARD", "z")
			d.Do("EXEC")
		}
	})

	t.Run("CommandInfo", func(t *testing.T) {
		d := p.diff(t)
		for _, name := range []string{"zadd", "zincrby", "zrem", "zcard", "zscore", "zmscore", "zrank", "zrevrank",
			"zcount", "zlexcount", "zrange", "zrangestore", "zrangebyscore", "zrevrangebyscore", "zrangebylex",
			"zrevrangebylex", "zrevrange", "zremrangebyrank", "zremrangebyscore", "zremrangebylex", "zpopmin",
			"zpopmax", "zmpop", "zrandmember", "zunion", "zinter", "zdiff", "zunionstore", "zinterstore",
			"zdiffstore", "zintercard", "zscan"} {
			want, got := d.DoBoth("COMMAND", "INFO", name)
			if len(want.Elems) != 1 || len(got.Elems) != 1 {
				t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
			}
			sameInfoEntry(t, want.Elems[0], got.Elems[0])
			want, got = d.DoBoth("COMMAND", "DOCS", name)
			if len(want.Elems) != 2 || len(got.Elems) != 2 {
				t.Fatalf("COMMAND DOCS %s: want %v, got %v", name, want, got)
			}
			field := func(r testutil.Reply, k string) string {
				for i := 0; i+1 < len(r.Elems); i += 2 {
					if r.Elems[i].Str == k {
						return r.Elems[i+1].String()
					}
				}
				return ""
			}
			for _, k := range []string{"summary", "since", "group"} {
				if w, g := field(want.Elems[1], k), field(got.Elems[1], k); w != g {
					t.Errorf("COMMAND DOCS %s %s: want %s, got %s", name, k, w, g)
				}
			}
		}
		d.Run(`
			COMMAND GETKEYS ZUNIONSTORE d 2 a b WEIGHTS 1 2
			COMMAND GETKEYS ZINTER 3 a b c
			COMMAND GETKEYS ZMPOP 2 a b MIN
			COMMAND GETKEYS ZRANGESTORE d s 0 -1
			COMMAND GETKEYS ZADD k 1 a
		`)
	})

	t.Run("Random", func(t *testing.T) {
		// Random commands on a small and a big (skiplist) set, with ties,
		// infinities and -0 among the scores, compared reply by reply.
		d := p.diff(t)
		zsetFill(t, d, "big", "m", 150, 0.25)
		rng := rand.New(rand.NewPCG(7, 9))
		scores := []string{"0", "-0", "1", "1.5", "-2", "inf", "-inf", "3", "0.1", "1e20"}
		bounds := []string{"-inf", "+inf", "0", "(0", "1", "(1.5", "3", "(3", "-2", "(-inf", "20", "(37.5"}
		lex := []string{"-", "+", "[a", "(a", "[m1", "(m10", "[m2", "[c", "(zz", "[b"}
		pick := func(l []string) string { return l[rng.IntN(len(l))] }
		member := func() string {
			if rng.IntN(2) == 0 {
				return string(rune('a' + rng.IntN(6)))
			}
			return "m" + strconv.Itoa(rng.IntN(160))
		}
		for i := range 3000 {
			key := "small"
			if rng.IntN(2) == 0 {
				key = "big"
			}
			if i == 1500 {
				d.Proto(3)
			}
			var args []string
			switch rng.IntN(16) {
			case 0, 1:
				args = []string{"ZADD", key}
				for _, o := range []string{"NX", "XX", "GT", "LT", "CH"} {
					if rng.IntN(6) == 0 {
						args = append(args, o)
					}
				}
				for range 1 + rng.IntN(3) {
					args = append(args, pick(scores), member())
				}
			case 2:
				args = []string{"ZINCRBY", key, pick(scores), member()}
			case 3:
				args = []string{"ZREM", key, member(), member()}
			case 4:
				args = []string{"ZRANGE", key, strconv.Itoa(rng.IntN(40) - 20), strconv.Itoa(rng.IntN(200) - 20), "WITHSCORES"}
			case 5:
				args = []string{"ZRANGE", key, pick(bounds), pick(bounds), "BYSCORE", "LIMIT", strconv.Itoa(rng.IntN(10) - 1), strconv.Itoa(rng.IntN(10) - 1), "WITHSCORES"}
			case 6:
				args = []string{"ZRANGE", key, pick(bounds), pick(bounds), "BYSCORE", "REV", "WITHSCORES"}
			case 7:
				args = []string{"ZRANK", key, member()}
				if rng.IntN(2) == 0 {
					args[0] = "ZREVRANK"
				}
			case 8:
				args = []string{"ZCOUNT", key, pick(bounds), pick(bounds)}
			case 9:
				args = []string{"ZSCORE", key, member()}
			case 10:
				args = []string{"ZREMRANGEBYSCORE", key, pick(bounds), pick(bounds)}
				if rng.IntN(4) != 0 {
					args = []string{"ZRANGEBYSCORE", key, pick(bounds), pick(bounds), "WITHSCORES"}
				}
			case 11:
				args = []string{"ZREMRANGEBYRANK", key, strconv.Itoa(rng.IntN(10)), strconv.Itoa(rng.IntN(10))}
				if rng.IntN(4) != 0 {
					args = []string{"ZREVRANGE", key, strconv.Itoa(rng.IntN(10)), strconv.Itoa(rng.IntN(200) - 50), "WITHSCORES"}
				}
			case 12:
				args = []string{"ZPOPMIN", key}
				if rng.IntN(2) == 0 {
					args = []string{"ZPOPMAX", key, strconv.Itoa(rng.IntN(3))}
				}
			case 13:
				args = []string{"ZUNION", "2", "small", "big", "WEIGHTS", pick(scores), pick(scores), "AGGREGATE", pick([]string{"SUM", "MIN", "MAX"}), "WITHSCORES"}
			case 14:
				args = []string{"ZINTERSTORE", "dst", "2", "big", "small", "WEIGHTS", pick(scores), pick(scores)}
				if rng.IntN(2) == 0 {
					args = []string{"ZDIFF", "2", key, "dst", "WITHSCORES"}
				}
			case 15:
				// Lex ranges on a set of equal scores only: Redis's order
				// is undefined otherwise.
				args = []string{"ZRANGE", "lex", pick(lex), pick(lex), "BYLEX"}
				if rng.IntN(3) == 0 {
					args = append(args, "REV")
				}
				if rng.IntN(3) == 0 {
					args = append(args, "LIMIT", strconv.Itoa(rng.IntN(5)), strconv.Itoa(rng.IntN(5)-1))
				}
				if rng.IntN(5) == 0 {
					args = []string{"ZADD", "lex", "0", member()}
				}
			}
			if !d.Do(args...) {
				break
			}
		}
	})

	t.Run("Big", func(t *testing.T) {
		// 100,000 members, pipelined: commands on one member stay fast.
		d := p.diff(t)
		const n = 100_000
		start := time.Now()
		zsetFill(t, d, "big", "m", n, 0.5)
		t.Logf("fill: %v", time.Since(start))
		start = time.Now()
		d.Run(`
			ZCARD big
			ZSCORE big m99999
			ZRANK big m0
			ZRANK big m99999
			ZREVRANK big m99999
			ZRANK big m50000
			ZRANGE big 0 4 WITHSCORES
			ZRANGE big -5 -1 WITHSCORES
			ZRANGE big 49998 50002
			ZREVRANGE big 0 2
			ZRANGEBYSCORE big 2500 2502 WITHSCORES
			ZRANGEBYSCORE big (49999 +inf
			ZREVRANGEBYSCORE big +inf -inf LIMIT 0 3
			ZRANGEBYSCORE big -inf +inf LIMIT 99998 5
			ZCOUNT big -inf +inf
			ZCOUNT big 100 200
			ZADD big 7.25 new
			ZRANK big new
			ZINCRBY big 100000 new
			ZRANK big new
			ZREM big new m5
			ZCARD big
			ZPOPMIN big 2
			ZPOPMAX big 2
			ZMSCORE big m10 m20 nosuch
			ZREMRANGEBYRANK big 0 9
			ZREMRANGEBYSCORE big 49000 +inf
			ZCARD big
			OBJECT ENCODING big
			ZINTERCARD 1 big LIMIT 10
		`)
		t.Logf("commands: %v", time.Since(start))
		start = time.Now()
		zsetFill(t, d, "lex", "k", n, 0)
		d.Run(`
			ZRANGEBYLEX lex [k5000 (k5001
			ZRANGEBYLEX lex (k99990 +
			ZREVRANGEBYLEX lex [k10 - LIMIT 0 3
			ZLEXCOUNT lex [k9999 [k99999
		`)
		t.Logf("lex: %v", time.Since(start))
		// One ZSCORE on the big set must not scan it.
		start = time.Now()
		for range 200 {
			d.Got.Do("ZSCORE", "big", "m12345")
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("200 ZSCORE on a big set took %v", el)
		}
	})
}
