package compat

import (
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestStreams(t *testing.T) {
	p := newPair(t)

	t.Run("AddRange", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 1-1 a 1
			XADD s 1-2 b 2 c 3
			XADD s 1-2 x y
			XADD s 1-1 x y
			XADD s 0-5 x y
			XADD s 1-* d 4
			XADD s 2-* e 5
			XADD s 2-* f 6
			XADD s 5 g 7
			XADD s 5 g 7
			XADD s 0-0 x y
			XADD s 0 x y
			XADD new 0-* a b
			XADD new2 0-0 a b
			EXISTS new2
			XADD s 6-1 a
			XADD s 6-1 a b c
			XADD s abc a b
			XADD s 1-x a b
			XADD s -1 a b
			XADD s 1- a b
			XADD s 18446744073709551615-18446744073709551614 a b
			XADD s 18446744073709551615-* a b
			XADD s 18446744073709551615-* a b
			XADD s * a b
			XADD s 18446744073709551616 a b
			XLEN s
			XLEN missing
			XRANGE s - +
			XREVRANGE s + -
			XRANGE s 1 2
			XRANGE s 1-2 2-0
			XRANGE s (1-1 (2-1
			XREVRANGE s (2-1 (1-1
			XRANGE s - + COUNT 2
			XRANGE s - + COUNT 0
			XRANGE s - + COUNT -1
			XREVRANGE s + - COUNT 1
			XRANGE s - + COUNT
			XRANGE s - + COUNT x
			XRANGE s - + LIMIT 1
			XRANGE s ( +
			XRANGE s (- +
			XRANGE s - (+
			XRANGE s (18446744073709551615-18446744073709551615 +
			XRANGE s - (0-0
			XRANGE s (0 +
			XRANGE s 5 1
			XRANGE missing - +
			XRANGE s x +
			SET str v
			XADD str 1-1 a b
			XLEN str
			XRANGE str - +
			XADD nomk NOMKSTREAM 1-1 a b
			EXISTS nomk
			XADD s NOMKSTREAM 7-1 a b
			TYPE s
			OBJECT ENCODING s
		`)
		d.Proto(3)
		d.Run(`
			XRANGE s - + COUNT 2
			XRANGE s - + COUNT 0
			XADD nomk NOMKSTREAM 1-1 a b
		`)
	})

	t.Run("DelTrim", func(t *testing.T) {
		d := p.diff(t)
		for i := 1; i <= 250; i++ {
			d.Do("XADD", "s", itoa(i)+"-1", "f", "v")
		}
		d.Run(`
			XDEL s 1-1 2-1 2-1 999-1
			XDEL s x
			XDEL missing 1-1
			XDEL missing x
			XLEN s
			XRANGE s - + COUNT 2
			XTRIM s MAXLEN ~ 200
			XLEN s
			XTRIM s MAXLEN ~ 150
			XLEN s
			XTRIM s MAXLEN = 140
			XLEN s
			XRANGE s - + COUNT 1
			XTRIM s MINID ~ 170
			XTRIM s MINID 170
			XRANGE s - + COUNT 1
			XTRIM s MINID = 175-1
			XLEN s
			XTRIM s MAXLEN ~ 10 LIMIT 20
			XTRIM s MAXLEN ~ 10 LIMIT 100
			XLEN s
			XTRIM s MAXLEN 10 LIMIT 100
			XTRIM s LIMIT 10
			XTRIM s MAXLEN 1 MINID 1
			XTRIM s MAXLEN -1
			XTRIM s MAXLEN x
			XTRIM s MINID x
			XTRIM s LIMIT 10 MAXLEN ~ 5
			XTRIM s MAXLEN ~ 5 LIMIT -1
			XTRIM s FOO 1
			XTRIM missing MAXLEN 0
			XTRIM str MAXLEN 0
			XTRIM s MAXLEN 0
			XLEN s
			XRANGE s - +
			XADD s 300-1 a b
			XADD s MAXLEN 2 301-1 a b
			XADD s MAXLEN 2 302-1 a b
			XRANGE s - +
			XADD s MAXLEN ~ 2 LIMIT 5 303-1 a b
			XADD s MAXLEN 2 LIMIT 5 303-1 a b
			XADD s LIMIT 5 303-1 a b
			XADD s MINID 302 303-1 a b
			XRANGE s - +
			XADD s MAXLEN 1 MINID 1 * a b
			XADD s MAXLEN -5 * a b
			XADD s MAXLEN
			XADD s MAXLEN 5
			XADD s NOMKSTREAM MAXLEN 5
		`)
		// '~' removes whole nodes of 100 entries, as Redis.
		for i := 1; i <= 450; i++ {
			d.Do("XADD", "big", "MAXLEN", "~", "120", itoa(i)+"-1", "field", "value")
		}
		d.Run(`
			XLEN big
			XRANGE big - + COUNT 1
			XDEL big 401-1 402-1
			XTRIM big MINID ~ 420
			XLEN big
		`)
	})

	t.Run("SetID", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 5-1 a b
			XADD s 6-1 a b
			XSETID s 4-1
			XSETID s 6-1
			XSETID s 10-1
			XADD s 10-1 a b
			XADD s * a b
			XSETID s 20-1 ENTRIESADDED 1
			XSETID s 20-1 ENTRIESADDED -1
			XSETID s 20-1 ENTRIESADDED x
			XSETID s 20-1 ENTRIESADDED 9 MAXDELETEDID 21-1
			XSETID s 20-1 ENTRIESADDED 9 MAXDELETEDID 15-1
			XSETID s 19-1
			XSETID s 20-1 FOO 1
			XSETID s 20-1 ENTRIESADDED
			XSETID missing 1-1
			XSETID str 1-1
			XSETID s x
			XSETID s -
			XDEL s 5-1
			XSETID s 1-1
		`)
	})
}
