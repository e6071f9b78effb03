package compat

import (
	"strconv"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// SORT and SORT_RO against redis-server. A set's order without sorting is
// its hash order, which differs, so no test reads a set unsorted (except
// where Redis sorts it anyway: STORE and scripts).
func TestSort(t *testing.T) {
	p := newPair(t)

	t.Run("Numeric", func(t *testing.T) {
		p.both(t, `
			RPUSH l 3 1 2 10 -5 1.5 1e2 0x10 " 7" inf -inf 3
			SORT l
			SORT l DESC
			SORT l ASC
			SORT l DESC ASC
			SORT_RO l
			SORT_RO l DESC
			SADD s 5 -1 3 100 20 0
			SORT s
			SORT s DESC
			SADD s2 1.5 a1 x
			SORT s2
			ZADD z 1 30 2 10 3 20 4 -2
			SORT z
			SORT z DESC
			SORT nokey
			SORT_RO nokey
			SORT nokey DESC LIMIT 0 1
			# Equal scores: ordered by the elements' bytes.
			RPUSH eq 1.0 1 01 +1 1e0 2 0.5
			SORT eq
			SORT eq DESC
			RPUSH empty "" 1 -1
			SORT empty
		`)
	})

	t.Run("NotANumber", func(t *testing.T) {
		p.diff(t).Run(`
			RPUSH l 1 abc 2
			SORT l
			SORT_RO l DESC
			SORT l STORE dst
			EXISTS dst
			RPUSH l2 "5 " 1
			SORT l2
			RPUSH l3 nan 1
			SORT l3
			RPUSH l8 "   " 1
			SORT l8
			# strtod stops at a NUL byte; an exact subnormal is no range error.
			RPUSH l9 "2\x00junk" 1
			SORT l9
			RPUSH l7 0x1p-1070 1
			SORT l7
			# BY values too.
			RPUSH ids 1 2
			SET w_1 10
			SET w_2 notnum
			SORT ids BY w_*
			SORT ids BY w_* ALPHA
			# Range errors last: Redis leaves errno at ERANGE after them, and
			# refuses any value strtod reads until a failing system call
			# (the next accept) resets it.
			RPUSH l4 1e400 1
			SORT l4
			RPUSH l5 1e-400 1
			SORT l5
			RPUSH l6 1e-310 1
			SORT l6
		`)
	})

	t.Run("Alpha", func(t *testing.T) {
		p.both(t, `
			RPUSH l banana apple Cherry 10 9 "" apple "b c" é
			SORT l ALPHA
			SORT l ALPHA DESC
			SORT l ALPHA LIMIT 1 3
			SORT l
			SADD s banana apple Cherry 10 9
			SORT s ALPHA
			SORT s ALPHA DESC
			ZADD z 1 b 2 a 3 c
			SORT z ALPHA
			SORT_RO z ALPHA DESC
			# strcoll stops at NUL; STORE compares every byte.
			RPUSH nul "a\x00b" "a\x00a" "a"
			SORT nul ALPHA STORE dst
			LRANGE dst 0 -1
		`)
	})

	t.Run("By", func(t *testing.T) {
		p.both(t, `
			RPUSH l a b c d e
			MSET w_a 3 w_b 1 w_c 2 w_e 1
			SORT l BY w_*
			SORT l BY w_* DESC
			SORT l BY w_* LIMIT 1 2
			SORT l BY w_* DESC LIMIT 0 3
			SORT_RO l BY w_*
			# Hash fields.
			HSET h_a f 30 g x
			HSET h_b f 10 g y
			HSET h_c f 20
			HSET h_d f 20
			SORT l BY h_*->f
			SORT l BY h_*->f DESC
			SORT l BY h_*->g ALPHA
			SORT l BY h_*->nofield
			# The '*' anywhere; '->' only after it; "->" at the end is part of the key.
			MSET pre_a_post 2 pre_b_post 1
			SORT l BY pre_*_post
			SET "w_a->" 5
			SORT l BY w_*->
			# A BY key of another type counts as missing.
			RPUSH w_d x
			SORT l BY w_*
			# ALPHA BY: distinct values (ties have no defined order).
			MSET v_a pear v_b apple v_c fig v_d kiwi v_e date
			SORT l BY v_* ALPHA
			SORT l BY v_* ALPHA DESC
			SORT l BY v_* ALPHA LIMIT 2 2
			# ALPHA BY ties keep a list's order (glibc's qsort is stable),
			# except with LIMIT.
			RPUSH ties d a c b e f g h
			MSET t_a x t_b x t_c y t_d x t_e y
			SORT ties BY t_* ALPHA
			SORT ties BY t_* ALPHA DESC
			SORT ties BY t_* ALPHA STORE dst
			LRANGE dst 0 -1
			SADD s a b c d e
			SORT s BY w_*
			SORT s BY v_* ALPHA
			ZADD z 1 a 2 b 3 c 4 d 5 e
			SORT z BY w_*
			SORT z BY v_* ALPHA DESC
		`)
	})

	t.Run("NoSort", func(t *testing.T) {
		p.both(t, `
			RPUSH l 3 1 2 10 x
			SORT l BY nosort
			SORT l BY nosort DESC
			SORT l BY nosort LIMIT 1 2
			SORT l BY nosort DESC LIMIT 1 2
			SORT l BY nosort LIMIT 3 100
			SORT l BY nosort DESC LIMIT 3 100
			SORT l BY nosort LIMIT 9 2
			SORT l BY nosort LIMIT -3 2
			SORT l BY nosort ALPHA
			SORT_RO l BY nosort DESC
			ZADD z 5 a 1 b 3 c 2 d 4 e
			SORT z BY nosort
			SORT z BY nosort DESC
			SORT z BY nosort LIMIT 1 3
			SORT z BY nosort DESC LIMIT 1 3
			SORT z BY nosort DESC LIMIT 4 3
			SORT z BY nosort LIMIT 5 1
			SORT_RO z BY nosort DESC LIMIT 0 2
			# A pattern without '*' sorts nothing, even after one with it.
			SORT l BY nosort BY w_*
			SORT z BY w_* BY nosort
			# A set is sorted (ALPHA) when stored, whatever BY says.
			SADD s b a c 10 2
			SORT s BY nosort STORE dst
			LRANGE dst 0 -1
			SORT s BY nosort DESC LIMIT 1 2 STORE dst
			LRANGE dst 0 -1
			SADD ints 5 3 9 1
			SORT ints BY nosort
			SORT ints BY nosort LIMIT 1 2
		`)
	})

	t.Run("Get", func(t *testing.T) {
		p.both(t, `
			RPUSH l 3 1 2
			MSET name_1 one name_2 two name_3 three
			HSET info_1 age 10
			HSET info_3 age 30
			SORT l GET name_*
			SORT l GET # GET name_* GET info_*->age
			SORT l DESC GET info_*->age GET #
			SORT l BY nosort GET name_*
			SORT l GET nokey_*
			SORT l GET constant
			SORT l GET info_*->nofield
			# GET of a key of another type, or a hash as a string: nil.
			RPUSH name_2x x
			SORT l GET name_*x
			SORT l GET info_*
			SORT l GET name_*->f
			SORT l LIMIT 1 1 GET # GET #
			SORT_RO l GET name_* GET #
			SADD s 1 2 3
			SORT s GET name_*
			ZADD z 3 1 2 2 1 3
			SORT z BY nosort GET name_* GET #
			SORT z GET name_*
			SORT nokey GET name_*
			SET s_ empty
			SET e_ ""
			RPUSH withempty "" x
			SORT withempty ALPHA GET s_* GET e_*
		`)
	})

	t.Run("Limit", func(t *testing.T) {
		p.both(t, `
			RPUSH l 5 4 3 2 1
			SORT l LIMIT 0 0
			SORT l LIMIT 0 1
			SORT l LIMIT 1 3
			SORT l LIMIT -5 2
			SORT l LIMIT 2 -1
			SORT l LIMIT 2 -100
			SORT l LIMIT 4 10
			SORT l LIMIT 5 1
			SORT l LIMIT 100 1
			SORT l LIMIT 3 9223372036854775807
			SORT l LIMIT 9223372036854775807 9223372036854775807
			SORT l LIMIT -9223372036854775808 -9223372036854775808
			SORT l LIMIT 1 2 LIMIT 3 1
			SORT l LIMIT 0 2 DESC
			SORT l DESC LIMIT 0 2
			SORT nokey LIMIT 0 1
			SORT nokey LIMIT -1 -1
			SORT l LIMIT 1 x
			SORT l LIMIT x 1
			SORT l LIMIT 1.5 1
			SORT l LIMIT 1 99999999999999999999
			SORT l LIMIT 1
			SORT l LIMIT
		`)
	})

	t.Run("Store", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RPUSH l 3 1 2
			SORT l STORE dst
			TYPE dst
			LRANGE dst 0 -1
			SORT l DESC STORE dst
			LRANGE dst 0 -1
			# Overwrites any type, drops the TTL.
			SET str x EX 100
			SORT l STORE str
			TYPE str
			TTL str
			LRANGE str 0 -1
			HSET h f v
			SORT l LIMIT 1 5 STORE h
			LRANGE h 0 -1
			ZADD z 1 a
			SORT l STORE z
			TYPE z
			# nil GET values are stored as empty strings.
			SET name_1 one
			SORT l GET name_* GET # STORE dst
			LRANGE dst 0 -1
			# An empty result deletes the destination.
			SORT nokey STORE dst
			EXISTS dst
			SORT nokey STORE dst
			SORT l LIMIT 5 1 STORE h
			EXISTS h
			# The source itself as the destination; the last STORE wins.
			SORT l DESC STORE l
			LRANGE l 0 -1
			SORT l STORE d1 STORE d2
			EXISTS d1 d2
			SADD s 3 1 2
			SORT s STORE sdst
			LRANGE sdst 0 -1
			ZADD zs 3 a 1 b 2 c
			SORT zs ALPHA DESC STORE zdst
			LRANGE zdst 0 -1
			SORT zs BY nosort LIMIT 1 1 STORE zdst
			LRANGE zdst 0 -1
			SORT l STORE
			SORT_RO l STORE dst
			SORT_RO l ALPHA STORE
			SORT str STORE str
			SET notlist x
			SORT notlist STORE dst
			LRANGE dst 0 -1
		`)
		d.Proto(3)
		d.Run(`
			SORT l STORE dst
			LRANGE dst 0 -1
			SORT l GET nokey_* GET #
		`)
	})

	t.Run("Errors", func(t *testing.T) {
		p.both(t, `
			SET str x
			SORT str
			SORT_RO str
			HSET h f v
			SORT h
			XADD st 1-1 f v
			SORT st ALPHA
			SORT str BADOPT
			SORT nokey BADOPT
			SORT nokey BY
			SORT nokey GET
			SORT nokey ALPHA ALPHA DESC ASC
			SORT nokey STORE
			SORT
			SORT_RO
			SORT_RO nokey STORE x
			SORT str LIMIT x 1
		`)
	})

	t.Run("MultiAndScripts", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RPUSH l 3 1 2
			SET w_1 3
			SET w_2 2
			SET w_3 1
			MULTI
			SORT l
			SORT l BY w_* STORE dst
			SORT_RO dst DESC
			SORT l LIMIT x 1
			EXEC
			LRANGE dst 0 -1
			EVAL "return redis.call('SORT', KEYS[1], 'BY', 'w_*')" 1 l
			EVAL "return redis.call('SORT', KEYS[1], 'DESC', 'STORE', KEYS[2])" 2 l dst2
			LRANGE dst2 0 -1
			EVAL "return redis.call('SORT_RO', KEYS[1], 'GET', 'w_*')" 1 l
			EVAL_RO "return redis.call('SORT_RO', KEYS[1])" 1 l
			EVAL_RO "return redis.call('SORT', KEYS[1])" 1 l
			EVAL "return redis.pcall('SORT', KEYS[1], 'LIMIT', 'x', 1)" 1 l
			# A set is sorted (ALPHA) for a script even with BY nosort.
			SADD s b a c 10 2 1.5
			EVAL "return redis.call('SORT', KEYS[1], 'BY', 'nosort')" 1 s
			EVAL "return redis.call('SORT', KEYS[1], 'BY', 'nosort', 'DESC', 'LIMIT', 1, 3)" 1 s
			EVAL "return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort')" 1 s
			EVAL_RO "return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'GET', '#')" 1 s
			FUNCTION LOAD REPLACE "#!lua name=sortlib\nredis.register_function('s', function(keys) return redis.call('SORT', keys[1], 'BY', 'nosort') end)"
			FCALL s 1 s
			FCALL s 1 l
			FUNCTION DELETE sortlib
		`)
	})

	t.Run("Big", func(t *testing.T) {
		// Past the listpack sizes, and a sorted set with a rank index
		// (ranges by rank seek it).
		d := p.diff(t)
		zsetFill(t, d, "z", "m", 5000, 0.5)
		var list, set []string
		for i := range 3000 {
			list = append(list, strconv.Itoa((i*7919)%3001))
			set = append(set, "e"+strconv.Itoa((i*31)%2000))
		}
		d.Do(append([]string{"RPUSH", "l"}, list...)...)
		d.Do(append([]string{"SADD", "s"}, set...)...)
		d.Run(`
			SORT z BY nosort LIMIT 2500 5
			SORT z BY nosort DESC LIMIT 2500 5
			SORT z BY nosort DESC LIMIT 4990 100
			SORT z ALPHA LIMIT 100 5
			SORT l LIMIT 1500 5
			SORT l DESC LIMIT 0 5
			SORT l BY nosort LIMIT 2000 3
			SORT l BY nosort DESC LIMIT 2000 3
			SORT s ALPHA LIMIT 1000 5
			SORT s ALPHA DESC STORE dst
			LLEN dst
			LRANGE dst 0 4
			SORT s BY nosort STORE dst
			LRANGE dst 1000 1004
			SORT l STORE l
			LRANGE l 1000 1004
		`)
	})

	t.Run("ExpiredAndWatched", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			RPUSH l a b c
			MSET w_a 3 w_b 2 w_c 1 n_a x
			PEXPIRE w_a 1
			PEXPIRE n_a 1
		`)
		time.Sleep(20 * time.Millisecond)
		d.Run(`
			SORT l BY w_* GET n_* GET #
			SORT l BY w_* STORE dst
			LRANGE dst 0 -1
			WATCH dst
		`)
		// Another client's SORT ... STORE modifies the watched key.
		other := p.conn(t)
		other.Do("SORT", "l", "ALPHA", "STORE", "dst")
		d.Run(`
			MULTI
			LRANGE dst 0 -1
			EXEC
			WATCH dst
			MULTI
			SORT l STORE dst
			EXEC
			LRANGE dst 0 -1
		`)
	})

	t.Run("Notify", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			RPUSH l 3 1 2
			SORT l STORE dst
			SORT l STORE dst
			SET str x
			SORT l STORE str
			SORT nokey STORE dst
			SORT nokey STORE dst
			SORT l LIMIT 9 1 STORE str
			SORT l
		`)
		nd = newNotifyDiff(t, p, "Km")
		keymiss := nd.run
		if testutil.ClusterMode() > 1 {
			// SORT without STORE is a read on the leader, whose subscribers
			// get its keymiss events: not this follower's (see README).
			keymiss = func(string) {}
		}
		keymiss(`
			SORT nokey
			RPUSH l 1 2
			SORT l BY w_* GET name_*
			SORT l BY w_* GET name_* STORE dst
		`)
	})

	t.Run("CommandInfo", func(t *testing.T) {
		d := p.diff(t)
		for _, proto := range []int{2, 3} {
			d.Proto(proto)
			for _, name := range []string{"sort", "sort_ro"} {
				want, got := d.DoBoth("COMMAND", "INFO", name)
				if len(got.Elems) != 1 || len(want.Elems) != 1 {
					t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
				}
				sameInfoEntry(t, want.Elems[0], got.Elems[0])
			}
		}
		d.Proto(2)
		for _, name := range []string{"sort", "sort_ro"} {
			// COMMAND DOCS: basalt gives summary, since and group.
			w, g := d.DoBoth("COMMAND", "DOCS", name)
			for _, f := range []string{"summary", "since", "group"} {
				if wf, gf := docField(w, f), docField(g, f); wf != gf || wf == "" {
					t.Errorf("COMMAND DOCS %s %s: redis %q, basalt %q", name, f, wf, gf)
				}
			}
		}
		d.Run(`
			COMMAND GETKEYS sort k
			COMMAND GETKEYS sort k STORE d
			COMMAND GETKEYS sort k BY w_* GET # LIMIT 0 1 STORE d ALPHA
			COMMAND GETKEYS sort k STORE d LIMIT 0 1 STORE e
			COMMAND GETKEYS sort k STORE
			COMMAND GETKEYS sort k LIMIT STORE d
			COMMAND GETKEYS sort k GET STORE d
			COMMAND GETKEYS sort k STORE LIMIT 1 2
			COMMAND GETKEYS sort_ro k
			COMMAND GETKEYS sort_ro k STORE d
			COMMAND GETKEYS sort
			COMMAND GETKEYSANDFLAGS sort k STORE d
			COMMAND GETKEYSANDFLAGS sort_ro k
		`)
	})
}
