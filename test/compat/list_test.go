package compat

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// TestLists compares the list commands with Redis: replies and their types
// in RESP2 and RESP3, errors and the order Redis checks them in, negative
// indexes, lists that disappear when emptied, and the generic key commands
// on lists.
func TestLists(t *testing.T) {
	p := newPair(t)

	// both runs a script in RESP2, then again on an empty key space in RESP3.
	both := func(t *testing.T, script string) {
		t.Helper()
		d := p.diff(t)
		d.Run(script)
		d.Do("FLUSHALL")
		d.Proto(3)
		d.Run(script)
	}

	t.Run("PushPop", func(t *testing.T) {
		both(t, `
			LPUSH l a
			LPUSH l b c d
			RPUSH l x y z
			LRANGE l 0 -1
			LLEN l
			RPUSH l "" "a\x00b" 12 -0 3.0
			LRANGE l 0 -1
			LPUSHX nokey a
			RPUSHX nokey a b
			EXISTS nokey
			LPUSHX l p1 p2
			RPUSHX l r1 r2
			LRANGE l 0 -1
			LPOP l
			RPOP l
			LPOP l 1
			RPOP l 1
			LPOP l 2
			RPOP l 3
			LPOP l 0
			RPOP l 0
			LLEN l
			LPOP l -1
			LPOP l x
			LPOP l 1.5
			LPOP l 1 2
			RPOP l 1 2 3
			LPOP l 100
			EXISTS l
			LPOP l
			LPOP l 0
			LPOP l 1
			RPOP l
			RPOP l 5
			RPOP l -1
			RPUSH one x
			RPOP one
			EXISTS one
			RPUSH one x
			LPOP one
			EXISTS one
			RPUSH two a b
			RPOP two 2
			EXISTS two
			SET s x
			LPUSH s a
			RPUSH s a
			LPUSHX s a
			RPUSHX s a
			LPOP s
			RPOP s 1
			LPOP s 0
			LPOP s -1
			LPOP s x
			LPUSH l
			RPUSH
			LPOP
			lpush l MiXeD
			LRANGE l 0 -1
		`)
	})

	t.Run("IndexSetRange", func(t *testing.T) {
		both(t, `
			RPUSH l a b c d e
			LINDEX l 0
			LINDEX l 4
			LINDEX l 5
			LINDEX l -1
			LINDEX l -5
			LINDEX l -6
			LINDEX l 9223372036854775807
			LINDEX l -9223372036854775808
			LINDEX l x
			LINDEX l 1.0
			LINDEX nokey 0
			LINDEX nokey x
			LSET l 0 A
			LSET l -1 E
			LSET l 2 C
			LSET l 5 x
			LSET l -6 x
			LSET l 9223372036854775807 x
			LSET l -9223372036854775808 x
			LSET l x y
			LSET nokey 0 x
			LSET nokey x y
			LRANGE l 0 -1
			LRANGE l 1 2
			LRANGE l -2 -1
			LRANGE l -100 100
			LRANGE l 3 1
			LRANGE l 5 10
			LRANGE l -1 -2
			LRANGE l 0 0
			LRANGE l -9223372036854775808 9223372036854775807
			LRANGE l 9223372036854775807 -9223372036854775808
			LRANGE l x 1
			LRANGE l 1 x
			LRANGE nokey 0 -1
			LRANGE nokey x 1
			LLEN nokey
			SET s x
			LINDEX s 0
			LINDEX s x
			LSET s 0 x
			LSET s x x
			LRANGE s 0 1
			LRANGE s x 1
			LLEN s
		`)
	})

	t.Run("RangeGrid", func(t *testing.T) {
		d := p.diff(t)
		d.Do("RPUSH", "l", "a", "b", "c", "d", "e")
		d.Do("LPUSH", "l", "z", "y") // head indexes below the first push
		for start := -9; start <= 9; start++ {
			for end := -9; end <= 9; end++ {
				d.Do("LRANGE", "l", strconv.Itoa(start), strconv.Itoa(end))
			}
		}
	})

	t.Run("Trim", func(t *testing.T) {
		d := p.diff(t)
		for start := -7; start <= 7; start++ {
			for end := -7; end <= 7; end++ {
				d.Do("DEL", "l")
				d.Do("RPUSH", "l", "c", "d", "e", "f")
				d.Do("LPUSH", "l", "b", "a")
				d.Do("LTRIM", "l", strconv.Itoa(start), strconv.Itoa(end))
				d.Do("LRANGE", "l", "0", "-1")
				d.Do("EXISTS", "l")
				d.Do("RPUSH", "l", "t")
				d.Do("LPUSH", "l", "h")
				d.Do("LRANGE", "l", "0", "-1")
			}
		}
		both(t, `
			LTRIM nokey 0 1
			LTRIM nokey x 1
			RPUSH l a b c
			LTRIM l x 1
			LTRIM l 0 y
			LTRIM l 0 -1
			LRANGE l 0 -1
			LTRIM l 1 0
			EXISTS l
			SET s x
			LTRIM s 0 1
			LTRIM s x 1
		`)
	})

	t.Run("Insert", func(t *testing.T) {
		d := p.diff(t)
		// Every position, both ways, so both sides of the list get shifted.
		elems := []string{"a", "b", "c", "d", "e", "f", "g"}
		for _, where := range []string{"BEFORE", "AFTER", "before", "aFtEr"} {
			for _, pivot := range elems {
				d.Do("DEL", "l")
				d.Do(append([]string{"RPUSH", "l"}, elems[3:]...)...)
				d.Do("LPUSH", "l", "c", "b", "a")
				d.Do("LINSERT", "l", where, pivot, "new-"+pivot)
				d.Do("LRANGE", "l", "0", "-1")
				d.Do("LINDEX", "l", "0")
				d.Do("LINDEX", "l", "-1")
				d.Do("RPUSH", "l", "T")
				d.Do("LPUSH", "l", "H")
				d.Do("LRANGE", "l", "0", "-1")
			}
		}
		both(t, `
			RPUSH l a b a b
			LINSERT l BEFORE b x
			LINSERT l AFTER b y
			LRANGE l 0 -1
			LINSERT l BEFORE zz x
			LINSERT l MIDDLE a x
			LINSERT l AFTER "" x
			LINSERT nokey BEFORE a x
			LINSERT nokey MIDDLE a x
			EXISTS nokey
			RPUSH one p
			LINSERT one BEFORE p x
			LINSERT one AFTER p y
			LRANGE one 0 -1
			SET s x
			LINSERT s BEFORE a x
			LINSERT s MIDDLE a x
			LINSERT l BEFORE a
		`)
	})

	t.Run("Rem", func(t *testing.T) {
		both(t, `
			RPUSH l a b a c a d a e a
			LREM l 2 a
			LRANGE l 0 -1
			LREM l -2 a
			LRANGE l 0 -1
			LREM l 0 a
			LRANGE l 0 -1
			LREM l 0 zz
			LREM l 1 b
			LREM l -1 e
			LRANGE l 0 -1
			LREM l 0 c
			LREM l -9223372036854775808 d
			EXISTS l
			RPUSH m x x x y x
			LREM m -9223372036854775808 x
			LRANGE m 0 -1
			LREM m 9223372036854775807 y
			EXISTS m
			LREM nokey 0 a
			LREM nokey x a
			LREM l x a
			LREM l 1.5 a
			SET s x
			LREM s 0 a
			LREM s x a
		`)
		// Removals everywhere, so both sides get packed.
		d := p.diff(t)
		for _, count := range []string{"0", "1", "2", "-1", "-2", "3"} {
			for at := range 8 {
				d.Do("DEL", "l")
				elems := []string{"l", "a", "b", "c", "d", "e", "f", "g", "h"}
				elems[1+at] = "x"
				elems[1+(at*5+3)%8] = "x"
				d.Do(append([]string{"RPUSH"}, elems[:5]...)...)
				d.Do(append([]string{"LPUSH", "l"}, elems[5:]...)...)
				d.Do("LREM", "l", count, "x")
				d.Do("LRANGE", "l", "0", "-1")
				d.Do("RPUSH", "l", "T")
				d.Do("LPUSH", "l", "H")
				d.Do("LRANGE", "l", "0", "-1")
			}
		}
	})

	t.Run("Pos", func(t *testing.T) {
		both(t, `
			RPUSH l a b c a b c a
			LPOS l a
			LPOS l c
			LPOS l zz
			LPOS l a RANK 1
			LPOS l a RANK 2
			LPOS l a RANK 3
			LPOS l a RANK 4
			LPOS l a RANK -1
			LPOS l a RANK -3
			LPOS l a RANK -4
			LPOS l a COUNT 0
			LPOS l a COUNT 1
			LPOS l a COUNT 2
			LPOS l a COUNT 10
			LPOS l zz COUNT 0
			LPOS l a RANK 2 COUNT 0
			LPOS l a RANK -1 COUNT 0
			LPOS l a RANK -2 COUNT 1
			LPOS l a RANK 10 COUNT 1
			LPOS l a RANK 10
			LPOS l a MAXLEN 1
			LPOS l a MAXLEN 3 RANK 2
			LPOS l a MAXLEN 4 RANK 2
			LPOS l a MAXLEN 4 COUNT 0
			LPOS l a MAXLEN 1 RANK -1
			LPOS l a MAXLEN 2 RANK -2
			LPOS l a MAXLEN 0 COUNT 0
			LPOS l a rank 2 count 2 maxlen 6
			LPOS l a RANK 2 RANK 1
			LPOS l a COUNT 1 COUNT 0
			LPOS l a RANK -9223372036854775808
			LPOS l a RANK -9223372036854775808 COUNT 1
			LPOS l a RANK -9223372036854775808 COUNT 0
			LPOS l a RANK 9223372036854775807 COUNT 0
			LPOS l a RANK -9223372036854775807
			LPOS l a RANK 0
			LPOS l a RANK x
			LPOS l a COUNT -1
			LPOS l a COUNT x
			LPOS l a MAXLEN -1
			LPOS l a MAXLEN x
			LPOS l a FOO
			LPOS l a RANK
			LPOS l a COUNT
			LPOS l a MAXLEN
			LPOS l a RANK 0 COUNT -1
			LPOS l a COUNT -1 RANK 0
			LPOS l a RANK 1 FOO 1
			LPOS nokey a
			LPOS nokey a COUNT 0
			LPOS nokey a COUNT 3
			LPOS nokey a RANK 0
			LPOS nokey a FOO
			SET s x
			LPOS s a
			LPOS s a COUNT 1
			LPOS s a RANK 0
			LPOS s a MAXLEN -1
		`)
	})

	t.Run("Move", func(t *testing.T) {
		both(t, `
			RPUSH src a b c d
			LMOVE src dst LEFT RIGHT
			LMOVE src dst RIGHT LEFT
			LMOVE src dst left left
			LMOVE src dst right right
			LRANGE dst 0 -1
			EXISTS src
			LMOVE src dst LEFT RIGHT
			RPUSH src a b c
			LMOVE src src LEFT RIGHT
			LRANGE src 0 -1
			LMOVE src src RIGHT LEFT
			LRANGE src 0 -1
			LMOVE src src LEFT LEFT
			LMOVE src src RIGHT RIGHT
			LRANGE src 0 -1
			RPOPLPUSH src src
			LRANGE src 0 -1
			RPOPLPUSH src other
			RPOPLPUSH src other
			RPOPLPUSH src other
			EXISTS src
			LRANGE other 0 -1
			RPOPLPUSH src other
			RPUSH one x
			LMOVE one one LEFT RIGHT
			LMOVE one one RIGHT LEFT
			RPOPLPUSH one one
			LRANGE one 0 -1
			LLEN one
			LMOVE one new RIGHT LEFT
			EXISTS one
			LRANGE new 0 -1
			LMOVE src dst MIDDLE LEFT
			LMOVE src dst LEFT UP
			LMOVE nokey dst LEFT UP
			LMOVE nokey dst LEFT RIGHT
			EXISTS dst
			SET s x
			LMOVE s new LEFT RIGHT
			LMOVE new s LEFT RIGHT
			LRANGE new 0 -1
			LMOVE nokey s LEFT RIGHT
			RPOPLPUSH s new
			RPOPLPUSH new s
			RPOPLPUSH nokey s
			LRANGE new 0 -1
		`)
	})

	t.Run("MPop", func(t *testing.T) {
		both(t, `
			RPUSH a 1 2 3
			RPUSH b x y z w
			LMPOP 1 a LEFT
			LMPOP 2 nokey b RIGHT
			LMPOP 2 a b left COUNT 10
			EXISTS a
			LMPOP 3 nokey a b RIGHT COUNT 2
			LMPOP 2 nokey b RIGHT COUNT 1
			LMPOP 1 b LEFT COUNT 1
			EXISTS b
			LMPOP 2 a b LEFT
			LMPOP 1 nokey RIGHT COUNT 3
			RPUSH c 1 2 3
			LMPOP 0 c LEFT
			LMPOP -1 c LEFT
			LMPOP x c LEFT
			LMPOP 1.0 c LEFT
			LMPOP 2 c LEFT
			LMPOP 9223372036854775807 c LEFT
			LMPOP 2147483648 c LEFT
			LMPOP 1 c MIDDLE
			LMPOP 1 c LEFT COUNT
			LMPOP 1 c LEFT COUNT 0
			LMPOP 1 c LEFT COUNT -1
			LMPOP 1 c LEFT COUNT x
			LMPOP 1 c LEFT COUNT 1 COUNT 2
			LMPOP 1 c LEFT FOO 1
			LMPOP 1 c LEFT COUNT 1 extra
			LMPOP 1 c MIDDLE COUNT 0
			LMPOP 1 nokey LEFT COUNT 0
			LMPOP 1 c left count 2
			LRANGE c 0 -1
			SET s x
			LMPOP 2 s c RIGHT
			LMPOP 2 nokey s RIGHT
			LMPOP 2 c s RIGHT
			LMPOP 1 s RIGHT COUNT 0
			LMPOP 1 c
			LMPOP 1
		`)
	})

	// A random mix of writes on a few short lists, compared reply by reply
	// and then whole, finds shifting and bookkeeping mistakes the scripts
	// above would miss.
	t.Run("Random", func(t *testing.T) {
		d := p.diff(t)
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		r := rand.New(rand.NewPCG(seed, 1))
		keys := []string{"k1", "k2", "k3"}
		elem := func() string { return string(rune('a' + r.IntN(5))) }
		idx := func() string { return strconv.Itoa(r.IntN(14) - 7) }
		end := func() string { return []string{"LEFT", "RIGHT"}[r.IntN(2)] }
		for range 3000 {
			k := keys[r.IntN(len(keys))]
			var args []string
			switch r.IntN(14) {
			case 0:
				args = []string{[]string{"LPUSH", "LPUSHX"}[r.IntN(2)], k, elem(), elem()}
			case 1:
				args = []string{[]string{"RPUSH", "RPUSHX", "RPUSH"}[r.IntN(3)], k, elem(), elem(), elem()}
			case 2:
				args = []string{"LPOP", k}
				if r.IntN(2) == 0 {
					args = append(args, strconv.Itoa(r.IntN(4)))
				}
			case 3:
				args = []string{"RPOP", k, strconv.Itoa(r.IntN(4))}
			case 4:
				args = []string{"LINSERT", k, []string{"BEFORE", "AFTER"}[r.IntN(2)], elem(), elem()}
			case 5:
				args = []string{"LREM", k, strconv.Itoa(r.IntN(5) - 2), elem()}
			case 6:
				args = []string{"LTRIM", k, idx(), idx()}
			case 7:
				args = []string{"LSET", k, idx(), elem()}
			case 8:
				args = []string{"LMOVE", k, keys[r.IntN(len(keys))], end(), end()}
			case 9:
				args = []string{"LMPOP", "2", k, keys[r.IntN(len(keys))], end(), "COUNT", strconv.Itoa(1 + r.IntN(3))}
			case 10:
				args = []string{"LPOS", k, elem(), "RANK", []string{"1", "2", "-1", "-2"}[r.IntN(4)], "COUNT", strconv.Itoa(r.IntN(3))}
			case 11:
				args = []string{"LINDEX", k, idx()}
			case 12:
				args = []string{"LRANGE", k, idx(), idx()}
			case 13:
				args = []string{"RPOPLPUSH", k, keys[r.IntN(len(keys))]}
			}
			if !d.Do(args...) {
				break
			}
		}
		for _, k := range keys {
			d.Do("LRANGE", k, "0", "-1")
			d.Do("LLEN", k)
		}
	})

	t.Run("Keyspace", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RPUSH l a b c
			TYPE l
			OBJECT ENCODING l
			EXPIRE l 100
			RPUSH l d
			LPOP l
			LSET l 0 x
			LINSERT l BEFORE x w
			LREM l 0 zz
			LTRIM l 0 -1
			TTL l
			RENAME l l2
			EXISTS l
			LRANGE l2 0 -1
			TTL l2
			COPY l2 l3
			LRANGE l3 0 -1
			RPUSH l3 more
			LRANGE l2 0 -1
			LRANGE l3 0 -1
			SET str v
			COPY l3 str
			COPY l3 str REPLACE
			TYPE str
			LRANGE str 0 -1
			MOVE l2 1
			EXISTS l2
			SELECT 1
			LRANGE l2 0 -1
			TTL l2
			FLUSHDB
			SELECT 0
			DEL l3 str
			EXISTS l3 str
			RPUSH a 1
			RPUSH b 2
			RENAME a b
			LRANGE b 0 -1
			SET s 1
			RENAME b s
			TYPE s
			LRANGE s 0 -1
			RPUSH tmp x
			LMOVE tmp s RIGHT LEFT
			LRANGE s 0 -1
			SCAN 0 TYPE list
			PERSIST s
			SET s v
			TYPE s
			LPUSH s a
			RPUSH p a
			PEXPIRE p 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			LLEN p
			LRANGE p 0 -1
			RPUSH p b
			LRANGE p 0 -1
			TTL p
			RPUSH q a
			PEXPIRE q 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			LPUSHX q x
			EXISTS q
			LMOVE q p LEFT RIGHT
			RPOPLPUSH p q
			LRANGE q 0 -1
			TTL q
		`)
		// The destination of LMOVE keeps its TTL.
		d.Run(`
			RPUSH d x
			EXPIRE d 1000
			RPUSH s2 y
			LMOVE s2 d LEFT RIGHT
			TTL d
			EXISTS s2
		`)
	})

	t.Run("Transactions", func(t *testing.T) {
		d := p.diff(t)
		other := p.conn(t)
		// Each list command makes a watched key dirty.
		for _, cmd := range [][]string{
			{"RPUSH", "w", "z"}, {"LPUSH", "w", "z"}, {"LPUSHX", "w", "z"}, {"RPUSHX", "w", "z"},
			{"LPOP", "w"}, {"RPOP", "w", "2"}, {"LSET", "w", "0", "q"}, {"LINSERT", "w", "BEFORE", "b", "q"},
			{"LREM", "w", "0", "b"}, {"LTRIM", "w", "1", "-1"}, {"LMOVE", "w", "w", "LEFT", "RIGHT"},
			{"RPOPLPUSH", "w", "other"}, {"RPOPLPUSH", "other2", "w"}, {"LMPOP", "1", "w", "LEFT"},
		} {
			d.Do("DEL", "w")
			d.Do("RPUSH", "w", "a", "b", "c")
			d.Do("RPUSH", "other2", "o")
			d.Do("WATCH", "w")
			other.Do(cmd...)
			d.Run(`
				MULTI
				LRANGE w 0 -1
				EXEC
			`)
		}
		// Reads and writes that don't change the list leave WATCH alone.
		d.Do("DEL", "w")
		d.Do("RPUSH", "w", "a", "b", "c")
		d.Do("WATCH", "w")
		for _, cmd := range [][]string{
			{"LRANGE", "w", "0", "-1"}, {"LINDEX", "w", "0"}, {"LLEN", "w"}, {"LPOS", "w", "a"},
			{"LINSERT", "w", "BEFORE", "zz", "q"}, {"LREM", "w", "0", "zz"}, {"LPUSHX", "nokey", "a"},
		} {
			other.Do(cmd...)
		}
		d.Run(`
			MULTI
			RPUSH w d
			LPOP w
			LMOVE w w2 RIGHT LEFT
			LSET w 5 x
			LRANGE w 0 -1
			LRANGE w2 0 -1
			EXEC
		`)
	})

	t.Run("CommandInfo", func(t *testing.T) {
		d := p.diff(t)
		names := strings.Fields("lpush rpush lpushx rpushx lpop rpop llen lindex lrange lset linsert lrem ltrim lpos lmove rpoplpush lmpop")
		for _, name := range names {
			want, got := d.DoBoth("COMMAND", "INFO", name)
			if len(want.Elems) != 1 || len(got.Elems) != 1 {
				t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
			}
			sameInfoEntry(t, want.Elems[0], got.Elems[0])
			want, got = d.DoBoth("COMMAND", "DOCS", name)
			for _, field := range []string{"summary", "since", "group"} {
				if w, g := docField(want, field), docField(got, field); w != g || w == "" {
					t.Errorf("COMMAND DOCS %s %s: want %q, got %q", name, field, w, g)
				}
			}
		}
		d.Run(`
			COMMAND GETKEYS LMPOP 2 a b LEFT COUNT 1
			COMMAND GETKEYS LMOVE a b LEFT RIGHT
			COMMAND GETKEYS RPOPLPUSH a b
			COMMAND GETKEYS LPUSH a x y
			COMMAND GETKEYSANDFLAGS LMOVE a b LEFT RIGHT
			COMMAND GETKEYSANDFLAGS LMPOP 1 a LEFT
		`)
	})

	// A 100,000-element list built by pipelining: commands that touch the
	// ends or one index must stay fast and agree with Redis.
	t.Run("Big", func(t *testing.T) {
		d := p.diff(t)
		const n = 100_000
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			var buf []byte
			for i := 0; i < n; i += 1000 {
				args := []string{"RPUSH", "big"}
				for j := i; j < i+1000; j++ {
					args = append(args, "e"+strconv.Itoa(j))
				}
				buf = append(buf, testutil.Command(args...)...)
			}
			c.Send(buf)
			for i := 0; i < n; i += 1000 {
				if r := c.Read(); r.IsError() {
					t.Fatalf("RPUSH: %v", r)
				}
			}
		}
		start := time.Now()
		d.Run(`
			LLEN big
			LINDEX big 0
			LINDEX big -1
			LINDEX big 50000
			LINDEX big -50001
			LRANGE big 49998 50002
			LRANGE big -3 -1
			LSET big 50000 mid
			LSET big -1 last
			LINDEX big 50000
			LPOS big e99990
			LPOS big e99990 RANK -1
			LPOS big e5 MAXLEN 10
			LPOS big e50 MAXLEN 10
			LPUSH big h1 h2
			RPUSH big t1
			LPOP big 3
			RPOP big 2
			LMOVE big big LEFT RIGHT
			RPOPLPUSH big big
			LINSERT big AFTER e10 after10
			LINSERT big BEFORE e99990 before99990
			LINDEX big 11
			LINDEX big -10
			LREM big 1 e3
			LREM big -1 e99995
			LRANGE big 0 5
			LRANGE big -7 -1
			LMPOP 1 big RIGHT COUNT 3
			LLEN big
		`)
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("single-element commands on a 100k list took %v", el)
		}
		d.Run(`
			LTRIM big 10 -10
			LLEN big
			LINDEX big 0
			LINDEX big -1
			LRANGE big 40000 40005
			LTRIM big 1000 1999
			LRANGE big 0 2
			LPOP big 999
			LRANGE big 0 -1
			LPOP big 5
			EXISTS big
		`)
	})
}

// docField finds field in a one-command COMMAND DOCS reply (a map in
// RESP3, a flat array in RESP2).
func docField(r testutil.Reply, field string) string {
	if len(r.Elems) != 2 {
		return ""
	}
	doc := r.Elems[1].Elems
	for i := 0; i+1 < len(doc); i += 2 {
		if doc[i].Str == field {
			return doc[i+1].Str
		}
	}
	return ""
}
