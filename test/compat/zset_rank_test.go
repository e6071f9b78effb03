package compat

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// zpipe sends cmds to both servers as one pipeline and compares the
// replies one by one; it stops the test at the first difference, since
// the data would differ from there on.
func zpipe(t *testing.T, d *testutil.Diff, cmds [][]string) {
	t.Helper()
	var buf []byte
	for _, c := range cmds {
		buf = append(buf, testutil.Command(c...)...)
	}
	d.Want.Send(buf)
	d.Got.Send(buf)
	for _, c := range cmds {
		want, got := d.Want.Read(), d.Got.Read()
		if err := testutil.Compare(c, want, got); err != nil {
			t.Fatal(err)
		}
	}
}

// zrankRound is n random commands on key, a set of members m0..m<members-1>:
// adds, score changes (ties included), removals of all kinds, and rank
// reads at every kind of offset.
func zrankRound(r *rand.Rand, key string, n, members int) [][]string {
	member := func() string { return "m" + strconv.Itoa(r.IntN(members)) }
	score := func() string {
		if r.IntN(3) == 0 {
			return strconv.Itoa(r.IntN(20)) // ties, ordered by member
		}
		return strconv.FormatFloat(float64(r.IntN(1_000_000))/100, 'g', -1, 64)
	}
	rank := func() string { return strconv.Itoa(r.IntN(2*members) - members) }
	var cmds [][]string
	for range n {
		var c []string
		switch x := r.IntN(100); {
		case x < 25:
			c = []string{"ZADD", key}
			for range 1 + r.IntN(8) {
				c = append(c, score(), member())
			}
		case x < 33:
			c = []string{"ZINCRBY", key, score(), member()}
		case x < 40:
			c = []string{"ZREM", key, member(), member(), member()}
		case x < 43:
			c = []string{[]string{"ZPOPMIN", "ZPOPMAX"}[r.IntN(2)], key, strconv.Itoa(r.IntN(5))}
		case x < 46:
			from := r.IntN(members)
			c = []string{"ZREMRANGEBYRANK", key, strconv.Itoa(from), strconv.Itoa(from + r.IntN(4))}
		case x < 60:
			c = []string{[]string{"ZRANK", "ZREVRANK"}[r.IntN(2)], key, member()}
		case x < 70:
			from := r.IntN(members)
			c = []string{"ZRANGE", key, strconv.Itoa(from), strconv.Itoa(from + r.IntN(5)), "WITHSCORES"}
		case x < 75:
			from := r.IntN(members)
			c = []string{"ZRANGE", key, strconv.Itoa(from), strconv.Itoa(from + r.IntN(5)), "REV"}
		case x < 80:
			c = []string{"ZRANGE", key, rank(), rank()}
		case x < 83:
			c = []string{"ZREVRANGE", key, rank(), rank(), "WITHSCORES"}
		case x < 85:
			from := r.IntN(members)
			c = []string{"ZRANGESTORE", key + ":dst", key, strconv.Itoa(from), strconv.Itoa(from + r.IntN(300))}
		case x < 88:
			c = []string{"ZRANGEBYSCORE", key, score(), "+inf", "LIMIT", "0", "3"}
		case x < 90:
			c = []string{"ZCOUNT", key, "(" + score(), score()}
		default:
			c = []string{"ZCARD", key}
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// zrankFill adds members m<from>..m<to-1> with random scores.
func zrankFill(r *rand.Rand, key string, from, to int) [][]string {
	var cmds [][]string
	for i := from; i < to; i += 100 {
		c := []string{"ZADD", key}
		for j := i; j < min(i+100, to); j++ {
			c = append(c, strconv.Itoa(r.IntN(5000)), "m"+strconv.Itoa(j))
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// zrankAll checks every member's rank both ways and the whole order.
func zrankAll(t *testing.T, d *testutil.Diff, key string, members int) {
	t.Helper()
	cmds := [][]string{{"ZRANGE", key, "0", "-1", "WITHSCORES"}, {"ZCARD", key}}
	for i := range members {
		m := "m" + strconv.Itoa(i)
		cmds = append(cmds, []string{"ZRANK", key, m}, []string{"ZREVRANK", key, m})
	}
	zpipe(t, d, cmds)
}

// Sorted sets cross the rank index's build size (1024 members) and drop
// size (256) both ways under random writes, and every rank command answers
// as Redis does on the way; an indexed set keeps its ranks through COPY,
// RENAME, MOVE, SWAPDB and expiry.
func TestZSetRankIndex(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	p := newPair(t)

	t.Run("Random", func(t *testing.T) {
		d := p.diff(t)
		const members = 3000
		start := time.Now()
		// Grow through the build size in steps, with random rounds between.
		for to := 300; to <= 2400; to += 300 {
			zpipe(t, d, zrankFill(r, "lb", to-300, to))
			zpipe(t, d, zrankRound(r, "lb", 300, to))
		}
		zrankAll(t, d, "lb", members)
		// Many rounds on the indexed set, then shrink it below the drop
		// size, and grow it again.
		for range 6 {
			zpipe(t, d, zrankRound(r, "lb", 400, members))
		}
		zrankAll(t, d, "lb", members)
		zpipe(t, d, [][]string{{"ZREMRANGEBYRANK", "lb", "100", "-50"}, {"ZCARD", "lb"}})
		zpipe(t, d, zrankRound(r, "lb", 200, members))
		zrankAll(t, d, "lb", members)
		zpipe(t, d, zrankFill(r, "lb", 0, members))
		zpipe(t, d, zrankRound(r, "lb", 400, members))
		zrankAll(t, d, "lb", members)
		// Pops and range removals down to nothing.
		for range 12 {
			zpipe(t, d, [][]string{{"ZPOPMIN", "lb", "97"}, {"ZPOPMAX", "lb", "89"}, {"ZRANK", "lb", "m1500"},
				{"ZREMRANGEBYRANK", "lb", "500", "549"}, {"ZRANGE", "lb", "400", "402", "WITHSCORES"}, {"ZCARD", "lb"}})
		}
		zpipe(t, d, [][]string{{"ZREMRANGEBYRANK", "lb", "0", "-1"}, {"EXISTS", "lb"}})
		t.Logf("%v", time.Since(start))
	})

	t.Run("Keys", func(t *testing.T) {
		d := p.diff(t)
		zpipe(t, d, zrankFill(r, "a", 0, 2000))
		zpipe(t, d, [][]string{{"COPY", "a", "b"}, {"RENAME", "b", "c"}, {"ZADD", "c", "-1", "first"}})
		zpipe(t, d, zrankRound(r, "c", 300, 2000))
		zrankAll(t, d, "a", 2000)
		zrankAll(t, d, "c", 2000)
		zpipe(t, d, [][]string{{"MOVE", "c", "1"}, {"SELECT", "1"}, {"ZRANK", "c", "first"}})
		zrankAll(t, d, "c", 2000)
		zpipe(t, d, [][]string{{"SWAPDB", "0", "1"}, {"ZRANK", "c", "m5"}, {"COPY", "c", "a", "DB", "1", "REPLACE"}})
		zrankAll(t, d, "c", 2000)
		zpipe(t, d, [][]string{{"SELECT", "0"}})
		zrankAll(t, d, "c", 2000)
		zpipe(t, d, [][]string{{"SELECT", "1"}})
		zrankAll(t, d, "a", 2000)
		// Expiry, lazy and active, then a new set under the same name.
		zpipe(t, d, [][]string{{"PEXPIRE", "a", "20"}, {"SELECT", "0"}, {"PEXPIRE", "c", "20"}})
		time.Sleep(300 * time.Millisecond)
		zpipe(t, d, [][]string{{"ZRANK", "c", "m5"}, {"EXISTS", "c"}, {"ZADD", "c", "1", "x", "2", "y"},
			{"ZRANK", "c", "y"}, {"ZRANGE", "c", "0", "-1", "WITHSCORES"}, {"SELECT", "1"}, {"EXISTS", "a"}})
		// DEL, then a new big set under the same name.
		zpipe(t, d, zrankFill(r, "a", 0, 1500))
		zpipe(t, d, [][]string{{"DEL", "a"}, {"ZADD", "a", "5", "m3"}, {"ZRANK", "a", "m3"}})
		zpipe(t, d, zrankFill(r, "a", 1000, 2200))
		zrankAll(t, d, "a", 2200)
		zpipe(t, d, [][]string{{"FLUSHALL"}})
	})
}
