package compat

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
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

	// Redis starts a new node at 100 entries or about 4 kB of listpack;
	// '~' trims whole nodes, so the node bounds must be Redis's.
	t.Run("Nodes", func(t *testing.T) {
		d := p.diff(t)
		v50, v200 := strings.Repeat("y", 50), strings.Repeat("z", 200)
		shapes := map[string]func(i int) []string{
			"five":  func(i int) []string { return []string{"f1", v50, "f2", v50, "f3", v50, "f4", v50, "f5", v50} },
			"names": func(i int) []string { return []string{"name" + itoa(i), v200} },
			"ints":  func(i int) []string { return []string{"k", itoa(i), "other", itoa(i * i * 1000)} },
			"mixed": func(i int) []string { return []string{"k" + itoa(i%3), v200 + itoa(i)} },
			"big":   func(i int) []string { return []string{"f", strings.Repeat("x", 5000)} },
			"neg":   func(i int) []string { return []string{"-5", "-100000", "x", "007"} },
		}
		for _, name := range []string{"five", "names", "ints", "mixed", "big", "neg"} {
			for i := 1; i <= 130; i++ {
				id := itoa(i*1000) + "-" + itoa(i%7)
				d.Do(append([]string{"XADD", name, id}, shapes[name](i)...)...)
			}
			d.Do("XTRIM", name, "MAXLEN", "~", "1")
			d.Do("XLEN", name)
			w, g := d.DoBoth("XINFO", "STREAM", name)
			if w.Elems[3].Int != g.Elems[3].Int {
				t.Errorf("%s: radix-tree-keys %v, basalt %v", name, w.Elems[3], g.Elems[3])
			}
		}
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
			# an emptied stream's last ID may go below its
			# max_deleted_entry_id in Redis 7.0 (7.2 refuses it)
			XADD e 6-0 a 1
			XDEL e 6-0
			XSETID e 5-0
			XINFO STREAM e
			XADD e 5-5 a 1
			XINFO STREAM e
		`)
	})
}

// idleMasked compares replies after zeroing the small integers (under 2 s)
// that doMask finds: idle times and delivery times depend on the clock.
func idleMasked(t *testing.T, d *testutil.Diff, mask func(r *testutil.Reply), args ...string) {
	t.Helper()
	w, g := d.DoBoth(args...)
	mask(&w)
	mask(&g)
	closeTimes(&w, &g)
	if err := testutil.Compare(args, w, g); err != nil {
		t.Error(err)
	}
}

// closeTimes makes g's large integers (times in ms) equal to w's where they
// differ by at most 1.5 s: the servers' clocks are read at different moments.
func closeTimes(w, g *testutil.Reply) {
	if w.Kind == ':' && g.Kind == ':' && w.Int >= 2000 && g.Int >= 2000 && g.Int-w.Int <= 1500 && w.Int-g.Int <= 1500 {
		g.Int = w.Int
	}
	for i := range min(len(w.Elems), len(g.Elems)) {
		closeTimes(&w.Elems[i], &g.Elems[i])
	}
}

// zeroIdle zeroes an integer under 2000 (a time in ms close to now).
func zeroIdle(r *testutil.Reply) {
	if r.Kind == ':' && r.Int >= 0 && r.Int < 2000 {
		r.Int = 0
	}
}

// maskPending zeroes the idle field of XPENDING's extended rows.
func maskPending(r *testutil.Reply) {
	for i := range r.Elems {
		if row := &r.Elems[i]; len(row.Elems) == 4 {
			zeroIdle(&row.Elems[2])
		}
	}
}

func TestStreamGroups(t *testing.T) {
	p := newPair(t)

	t.Run("Group", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XGROUP CREATE s g $
			XGROUP CREATE s g $ MKSTREAM
			XGROUP CREATE s g $ MKSTREAM
			XLEN s
			XGROUP CREATE s g2 0 ENTRIESREAD 5
			XGROUP CREATE s g3 0 ENTRIESREAD -2
			XGROUP CREATE s g3 0 ENTRIESREAD x
			XGROUP CREATE s g3 0 FOO
			XGROUP CREATE s g3 x
			XGROUP CREATE s g3 0 MKSTREAM ENTRIESREAD 1 MKSTREAM
			XGROUP CREATECONSUMER s g c1
			XGROUP CREATECONSUMER s g c1
			XGROUP CREATECONSUMER s nog c1
			XGROUP CREATECONSUMER missing g c1
			XGROUP DELCONSUMER s g c1
			XGROUP DELCONSUMER s g c1
			XGROUP SETID s g 5-5
			XGROUP SETID s g $ ENTRIESREAD 3
			XGROUP SETID s g - 
			XGROUP SETID s g x
			XGROUP SETID s g 0 ENTRIESREAD
			XGROUP SETID s nog 0
			XGROUP DESTROY s g3
			XGROUP DESTROY s g3
			XGROUP DESTROY missing g3
			XGROUP FOO s g
			XGROUP CREATE s
			XGROUP DESTROY s g x
			XGROUP HELP
			XGROUP HELP x
			SET str v
			XGROUP CREATE str g $
			XGROUP CREATE str g $ MKSTREAM
			XINFO GROUPS s
		`)
	})

	t.Run("ReadGroup", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 1-1 a 1
			XADD s 2-1 b 2
			XADD s 3-1 c 3
			XGROUP CREATE s g 0
			XREADGROUP GROUP g c1 COUNT 1 STREAMS s >
			XREADGROUP GROUP g c2 STREAMS s >
			XREADGROUP GROUP g c2 STREAMS s >
			XREADGROUP GROUP g c1 STREAMS s 0
			XREADGROUP GROUP g c2 STREAMS s 0
			XREADGROUP GROUP g c2 COUNT 1 STREAMS s 2-1
			XREADGROUP GROUP g c3 STREAMS s 0
			XPENDING s g
			XACK s g 1-1 9-9
			XACK s g 1-1
			XACK s g x
			XACK s nog 1-1
			XACK missing g 1-1
			XPENDING s g
			XADD s 4-1 d 4
			XADD s 5-1 e 5
			XREADGROUP GROUP g c1 NOACK STREAMS s >
			XPENDING s g
			XDEL s 2-1
			XREADGROUP GROUP g c2 STREAMS s 0
			XINFO GROUPS s
			XREADGROUP GROUP nog c1 STREAMS s >
			XREADGROUP GROUP g c1 STREAMS missing >
			XREADGROUP GROUP g c1 STREAMS s $
			XREADGROUP GROUP g c1 STREAMS s
			XREADGROUP GROUP g c1 STREAMS s > x
			XREADGROUP GROUP g c1 STREAMS s x
			XREADGROUP GROUP g STREAMS s >
			XREADGROUP COUNT 1 STREAMS s >
			XREADGROUP GROUP g c1 COUNT x STREAMS s >
			XREADGROUP GROUP g c1 FOO STREAMS s >
			XREADGROUP GROUP g c1 BLOCK -1 STREAMS s >
			XREADGROUP GROUP g c1 BLOCK x STREAMS s >
			XREAD GROUP g c1 STREAMS s >
			XREAD NOACK STREAMS s 0
			XREAD STREAMS s >
			SET str v
			XREADGROUP GROUP g c1 STREAMS str >
			XGROUP SETID s g 0
			XREADGROUP GROUP g c9 COUNT 1 STREAMS s s > >
			XREADGROUP GROUP g c9 COUNT 2 STREAMS s >
			XPENDING s g
			XGROUP DELCONSUMER s g c9
			XPENDING s g
		`)
		d.Proto(3)
		d.Run(`
			XADD s 6-1 f 6
			XREADGROUP GROUP g c1 STREAMS s >
			XREADGROUP GROUP g c1 STREAMS s >
			XPENDING s g
		`)
	})

	t.Run("Read", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s1 1-1 a 1
			XADD s1 2-1 b 2
			XADD s2 1-5 c 3
			XREAD STREAMS s1 0
			XREAD COUNT 1 STREAMS s1 s2 0 0
			XREAD STREAMS s1 s2 1-1 1-5
			XREAD STREAMS s1 s2 $ $
			XREAD STREAMS missing 0
			XREAD STREAMS s1 missing 0 0
			XREAD STREAMS s1
			XREAD STREAMS s1 x
			XREAD COUNT -1 STREAMS s1 0
			XREAD FOO STREAMS s1 0
			XREAD BLOCK x STREAMS s1 0
			XREAD BLOCK -5 STREAMS s1 0
			XREAD BLOCK 0 STREAMS s1 0
			XREAD STREAMS s1 s1 0 1-1
			XREAD COUNT 1 STREAMS s1 s2 s1 0 0 1-1
			SET str v
			XREAD STREAMS str 0
			XREAD STREAMS s1 str 0 0
			XADD s3 1-1 a 1
			XADD s3 2-1 b 2
			XDEL s3 2-1
			XREAD STREAMS s3 1-1
			XREAD STREAMS s3 0-1
			XSETID s3 9-1
			XREAD STREAMS s3 1-1
			XGROUP CREATE s3 g3 1-1
			XREADGROUP GROUP g3 c STREAMS s3 >
			XADD s3 10-1 c 3
			XREADGROUP GROUP g3 c STREAMS s3 >
			MULTI
			XREAD BLOCK 0 STREAMS missing 0
			XREAD BLOCK 0 STREAMS s1 $
			EXEC
		`)
		d.Proto(3)
		d.Run(`
			XREAD STREAMS s1 s2 0 0
			XREAD STREAMS missing 0
		`)
	})

	t.Run("Pending", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 1-1 a 1
			XADD s 2-1 b 2
			XADD s 3-1 c 3
			XADD s 4-1 d 4
			XGROUP CREATE s g 0
			XREADGROUP GROUP g c1 COUNT 2 STREAMS s >
			XREADGROUP GROUP g c2 STREAMS s >
			XPENDING s g
			XPENDING missing g
			XPENDING s nog
			XPENDING s g - + x
			XPENDING s g IDLE x - + 10
			XPENDING s g IDLE 10 - +
			XPENDING s g x + 10
			XPENDING s g (- + 10
			XPENDING s g - (0-0 10
			XPENDING s g - + 10 nobody
			XPENDING str g
		`)
		for _, args := range [][]string{
			{"XPENDING", "s", "g", "-", "+", "10"},
			{"XPENDING", "s", "g", "-", "+", "2"},
			{"XPENDING", "s", "g", "-", "+", "0"},
			{"XPENDING", "s", "g", "-", "+", "-3"},
			{"XPENDING", "s", "g", "(1-1", "(4-1", "10"},
			{"XPENDING", "s", "g", "-", "+", "10", "c2"},
			{"XPENDING", "s", "g", "-", "+", "10", "c1", "extra"},
			{"XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"},
			{"XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10"},
			{"XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10", "c1"},
		} {
			idleMasked(t, d, maskPending, args...)
		}
	})

	t.Run("Claim", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 1-1 a 1
			XADD s 2-1 b 2
			XADD s 3-1 c 3
			XADD s 4-1 d 4
			XGROUP CREATE s g 0
			XREADGROUP GROUP g c1 STREAMS s >
			XCLAIM s g c2 0 1-1 2-1
			XCLAIM s g c2 0 1-1 JUSTID
			XCLAIM s g c2 100000 3-1
			XCLAIM s g c3 0 3-1 RETRYCOUNT 7 JUSTID
			XCLAIM s g c3 0 9-1 FORCE
			XCLAIM s g c3 0 8-1
			XCLAIM s g c3 x 1-1
			XCLAIM s g c3 0 1-1 IDLE x
			XCLAIM s g c3 0 1-1 TIME x
			XCLAIM s g c3 0 1-1 RETRYCOUNT x
			XCLAIM s g c3 0 1-1 LASTID x
			XCLAIM s g c3 0 1-1 BOGUS
			XCLAIM s g c3 0 x
			XCLAIM s nog c3 0 1-1
			XCLAIM missing g c3 0 1-1
			XDEL s 4-1
			XCLAIM s g c3 0 4-1
			XPENDING s g
			XADD s 5-1 e 5
			XCLAIM s g c3 0 5-1 FORCE JUSTID
			XREADGROUP GROUP g c4 STREAMS s >
			XPENDING s g
			XCLAIM s g c3 0 5-1 IDLE 500000
			XCLAIM s g c1 0 1-1 LASTID 100-1 JUSTID
			# Entries trimmed away leave the PEL when claimed.
			DEL x
			XADD x 1-0 f v
			XADD x 2-0 f v
			XADD x 3-0 f v
			XGROUP CREATE x grp 0
			XREADGROUP GROUP grp Alice STREAMS x >
			XTRIM x MAXLEN 1
			XCLAIM x grp Bob 0 1-0 2-0 3-0
			XPENDING x grp - + 10 Alice
			XPENDING x grp
			XINFO GROUPS s
			XCLAIM s g c1 0 1-1 TIME 1 JUSTID
		`)
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "-", "+", "10")
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "IDLE", "400000", "-", "+", "10")
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "IDLE", "1000000", "-", "+", "10")
	})

	t.Run("AutoClaim", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XADD s 1-1 a 1
			XADD s 2-1 b 2
			XADD s 3-1 c 3
			XADD s 4-1 d 4
			XADD s 5-1 e 5
			XGROUP CREATE s g 0
			XREADGROUP GROUP g c1 STREAMS s >
			XAUTOCLAIM s g c2 0 0 COUNT 2
			XAUTOCLAIM s g c2 0 3-1 COUNT 1 JUSTID
			XAUTOCLAIM s g c2 100000 0
			XDEL s 1-1 4-1
			XAUTOCLAIM s g c3 0 0 COUNT 1
			XAUTOCLAIM s g c3 0 (2-1 COUNT 10
			XAUTOCLAIM s g c3 0 -
			XPENDING s g
			XAUTOCLAIM s g c3 x 0
			XAUTOCLAIM s g c3 0 x
			XAUTOCLAIM s g c3 0 0 COUNT 0
			XAUTOCLAIM s g c3 0 0 COUNT x
			XAUTOCLAIM s g c3 0 0 FOO
			XAUTOCLAIM s nog c3 0 0
			XAUTOCLAIM missing g c3 0 0
			XAUTOCLAIM str g c3 0 0
			XAUTOCLAIM s g c3 0 (18446744073709551615-18446744073709551615
		`)
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "-", "+", "10")
	})

	// Scans of the pending lists start at the group's first pending ID,
	// which acknowledgements in any order, claims, forced entries and a
	// deleted consumer move; reads of the entries start at the first live
	// one after trims and deletions at the head.
	t.Run("ScansAfterAcks", func(t *testing.T) {
		d := p.diff(t)
		var b strings.Builder
		for i := 1; i <= 12; i++ {
			fmt.Fprintf(&b, "XADD s %d-1 f %d\n", i, i)
		}
		d.Run(b.String() + `
			XGROUP CREATE s g 0
			XREADGROUP GROUP g c1 COUNT 4 STREAMS s >
			XREADGROUP GROUP g c2 COUNT 4 STREAMS s >
			XREADGROUP GROUP g c3 STREAMS s >
			XACK s g 2-1 3-1
			XACK s g 1-1
			XREADGROUP GROUP g c1 STREAMS s 0
			XAUTOCLAIM s g c4 0 0 COUNT 1 JUSTID
			XACK s g 4-1 6-1 5-1
			XREADGROUP GROUP g c2 STREAMS s 0
			XAUTOCLAIM s g c4 0 0 COUNT 2 JUSTID
			XCLAIM s g c5 0 2-1 FORCE JUSTID
			XPENDING s g
			XAUTOCLAIM s g c4 0 0 COUNT 1 JUSTID
			XGROUP DELCONSUMER s g c4
			XPENDING s g
			XREADGROUP GROUP g c3 STREAMS s 0
			XTRIM s MAXLEN 5
			XRANGE s - + COUNT 2
			XREVRANGE s + - COUNT 10
			XREAD COUNT 2 STREAMS s 0
			XDEL s 8-1 9-1
			XRANGE s - +
			XRANGE s 0 9-1
			XREVRANGE s 9-1 -
			XINFO STREAM s
			XACK s g 7-1 8-1 9-1 10-1 11-1 12-1
			XPENDING s g
			XAUTOCLAIM s g c6 0 0
			XTRIM s MAXLEN 0
			XRANGE s - +
			XREVRANGE s + -
			XLEN s
			XADD s 13-1 f 13
			XRANGE s - +
			XREADGROUP GROUP g c6 STREAMS s >
			XPENDING s g
		`)
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "-", "+", "10")
		idleMasked(t, d, maskPending, "XPENDING", "s", "g", "-", "+", "10", "c3")
	})
}

// maskInfo zeroes what XINFO answers from the clock or from Redis's memory
// layout: absolute times (seen-time, delivery times), idle times, and
// radix-tree-nodes.
func maskInfo(r *testutil.Reply) {
	for i := range r.Elems {
		e := &r.Elems[i]
		if e.Kind == ':' && e.Int > 1e12 && e.Int < 1e13 {
			e.Int = 0
		}
		if i > 0 && e.Kind == ':' {
			switch r.Elems[i-1].Str {
			case "idle":
				zeroIdle(e)
			case "radix-tree-nodes":
				e.Int = 0
			}
		}
		maskInfo(e)
	}
}

func TestStreamInfo(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		XGROUP CREATE e g 0 MKSTREAM
		XADD s 1-1 a 1
		XADD s 2-1 b 2
		XADD s 3-1 c 3
		XGROUP CREATE s g 0
		XGROUP CREATE s g2 $
		XGROUP CREATE s g3 2-1
		XREADGROUP GROUP g c1 COUNT 1 STREAMS s >
		XREADGROUP GROUP g c2 STREAMS s >
		XGROUP CREATECONSUMER s g c3
		XINFO GROUPS s
		XINFO GROUPS e
		XINFO GROUPS missing
		XINFO CONSUMERS s nog
		XINFO CONSUMERS missing g
		XINFO STREAM missing
		XINFO STREAM s FULL COUNT x
		XINFO STREAM s FULL foo
		XINFO STREAM s foo
		XINFO STREAM s FULL CNT 1
		XINFO HELP
		XINFO FOO s
		SET str v
		XINFO STREAM str
		XINFO GROUPS str
		XDEL s 2-1
		XINFO GROUPS s
		XADD s 4-1 d 4
		XINFO GROUPS s
		XGROUP SETID s g3 1-1
		XINFO GROUPS s
		XGROUP SETID s g3 5-1
		XINFO GROUPS s
		XSETID s 10-1 ENTRIESADDED 20 MAXDELETEDID 9-1
		XINFO GROUPS s
	`)
	for _, proto := range []int{2, 3} {
		d.Proto(proto)
		for _, args := range [][]string{
			{"XINFO", "STREAM", "s"},
			{"XINFO", "STREAM", "e"},
			{"XINFO", "STREAM", "s", "FULL"},
			{"XINFO", "STREAM", "s", "FULL", "COUNT", "1"},
			{"XINFO", "STREAM", "s", "FULL", "COUNT", "0"},
			{"XINFO", "STREAM", "e", "FULL"},
			{"XINFO", "CONSUMERS", "s", "g"},
			{"XINFO", "GROUPS", "s"},
		} {
			idleMasked(t, d, maskInfo, args...)
		}
	}
}

// IDs made by "*" come from the record's clock: they differ between the
// servers, so they are checked on basalt alone, with the errors on both.
func TestStreamAutoID(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	g := d.Got
	parse := func(r testutil.Reply) (ms, seq uint64) {
		t.Helper()
		a, b, ok := strings.Cut(r.Str, "-")
		m, err1 := strconv.ParseUint(a, 10, 64)
		s, err2 := strconv.ParseUint(b, 10, 64)
		if r.Kind != '$' || !ok || err1 != nil || err2 != nil {
			t.Fatalf("not an ID: %v", r)
		}
		return m, s
	}
	before := uint64(time.Now().UnixMilli())
	var lastMs, lastSeq uint64
	for i := range 200 {
		ms, seq := parse(g.Do("XADD", "s", "*", "i", strconv.Itoa(i)))
		if i > 0 && (ms < lastMs || ms == lastMs && seq != lastSeq+1 || ms > lastMs && seq != 0) {
			t.Fatalf("ID %d-%d after %d-%d", ms, seq, lastMs, lastSeq)
		}
		lastMs, lastSeq = ms, seq
	}
	after := uint64(time.Now().UnixMilli())
	if first, _ := parse(g.Do("XRANGE", "s", "-", "+", "COUNT", "1").Elems[0].Elems[0]); first < before || lastMs > after {
		t.Errorf("IDs %d..%d outside the clock's %d..%d", first, lastMs, before, after)
	}
	// A last ID in the future: "*" goes on from it.
	future := after + 1e9
	g.Do("XSETID", "s", strconv.FormatUint(future, 10)+"-5")
	if ms, seq := parse(g.Do("XADD", "s", "*", "a", "b")); ms != future || seq != 6 {
		t.Errorf("XADD * after XSETID %d-5: %d-%d", future, ms, seq)
	}
	if ms, seq := parse(g.Do("XADD", "s", strconv.FormatUint(future, 10)+"-*", "a", "b")); ms != future || seq != 7 {
		t.Errorf("XADD ms-* on the last ms: %d-%d", ms, seq)
	}
	if ms, seq := parse(g.Do("XADD", "s", strconv.FormatUint(future+5, 10)+"-*", "a", "b")); ms != future+5 || seq != 0 {
		t.Errorf("XADD ms-* on a new ms: %d-%d", ms, seq)
	}
	d.Run(`
		XADD t 5-* a b
		XADD t 5-* a b
		XADD t 4-* a b
		XADD t 5-1 a b
		XADD t 18446744073709551615-18446744073709551615 a b
		XADD t * a b
		XADD t 18446744073709551615-* a b
		XRANGE t - +
		XADD u 7-18446744073709551615 a b
		XADD u 7-* a b
	`)
}

func TestStreamBlocking(t *testing.T) {
	p := newPair(t)

	t.Run("XReadWokenByXAdd", func(t *testing.T) {
		d := p.diff(t)
		d.Do("XADD", "s", "1-1", "old", "1")
		b := newBlocker(t, p)
		// "$" is the last ID when the call was made: the old entry is not
		// returned, the new one is.
		b.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		settle()
		d.Do("XADD", "s", "2-1", "new", "2")
		b.expect(t, "XREAD $ woken by XADD")

		b.send("XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
		settle()
		d.Do("XADD", "b", "5-1", "x", "y")
		b.expect(t, "XREAD on two streams woken by XADD to the second")

		b.send("XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "s", "2-1")
		settle()
		d.Run(`
			MULTI
			XADD s 3-1 a 1
			XADD s 4-1 a 1
			XADD s 5-1 a 1
			EXEC
		`)
		b.expect(t, "XREAD COUNT 2 woken by EXEC")

		// Served after blocking: the first stream with news only.
		b.send("XREAD", "BLOCK", "0", "STREAMS", "m1", "m2", "$", "$")
		settle()
		d.Run(`
			MULTI
			XADD m1 1-1 a 1
			XADD m2 1-1 b 2
			EXEC
		`)
		b.expect(t, "XREAD on two streams woken by one EXEC")

		// ... and at most 1000 entries without COUNT.
		b.send("XREAD", "BLOCK", "0", "STREAMS", "many", "$")
		settle()
		d.Do("MULTI")
		for i := 1; i <= 1003; i++ {
			d.Do("XADD", "many", itoa(i)+"-1", "f", "v")
		}
		d.Do("EXEC")
		w, g := b.want.Read(), b.got.Read()
		if count := func(r testutil.Reply) int {
			if len(r.Elems) != 1 || len(r.Elems[0].Elems) != 2 {
				return -1
			}
			return len(r.Elems[0].Elems[1].Elems)
		}; count(w) != 1000 || count(g) != 1000 {
			t.Errorf("XREAD woken by 1003 entries: redis %d entries, basalt %d", count(w), count(g))
		}

		// Writes that add nothing after the ID do not serve it.
		b.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		settle()
		d.Do("XDEL", "s", "1-1")
		d.Do("XTRIM", "s", "MAXLEN", "3")
		d.Do("XADD", "s", "9-1", "last", "1")
		b.expect(t, "XREAD $ after XDEL and XTRIM")

		b.want.Do("HELLO", "3")
		b.got.Do("HELLO", "3")
		b.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		settle()
		d.Do("XADD", "s", "10-1", "resp", "3")
		b.expect(t, "XREAD in RESP3")
	})

	t.Run("Timeout", func(t *testing.T) {
		b := newBlocker(t, p)
		start := time.Now()
		b.send("XREAD", "BLOCK", "200", "STREAMS", "never", "$")
		b.expect(t, "XREAD timeout")
		if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
			t.Errorf("XREAD BLOCK 200 took %v", el)
		}
		d := p.diff(t)
		d.Run(`
			XGROUP CREATE s g $ MKSTREAM
		`)
		b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">")
		b.expect(t, "XREADGROUP timeout")
		d.Run(`
			XINFO GROUPS s
		`)
		idleMasked(t, d, maskInfo, "XINFO", "CONSUMERS", "s", "g")
	})

	// Consumers blocked on one group are served in the order they blocked,
	// each with what is new for the group.
	t.Run("XReadGroupFIFO", func(t *testing.T) {
		d := p.diff(t)
		d.Do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		var bs []*blocker
		for _, c := range []string{"c1", "c2", "c3"} {
			b := newBlocker(t, p)
			b.send("XREADGROUP", "GROUP", "g", c, "COUNT", "1", "BLOCK", "0", "STREAMS", "q", ">")
			settle()
			bs = append(bs, b)
		}
		d.Do("XADD", "q", "1-1", "m", "1")
		bs[0].expect(t, "first waiter")
		d.Do("XADD", "q", "2-1", "m", "2")
		bs[1].expect(t, "second waiter")
		d.Do("XADD", "q", "3-1", "m", "3")
		bs[2].expect(t, "third waiter")
		d.Do("XPENDING", "q", "g")
		d.Do("XINFO", "GROUPS", "q")

		// Two streams with news at once: the first is served.
		d.Do("XGROUP", "CREATE", "q1", "g", "$", "MKSTREAM")
		d.Do("XGROUP", "CREATE", "q2", "g", "$", "MKSTREAM")
		bs[1].send("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "q1", "q2", ">", ">")
		settle()
		d.Run(`
			MULTI
			XADD q1 1-1 a 1
			XADD q2 1-1 b 2
			EXEC
			XPENDING q2 g
		`)
		bs[1].expect(t, "XREADGROUP on two streams woken by one EXEC")
		d.Do("XPENDING", "q1", "g")
		d.Do("XINFO", "GROUPS", "q2")

		// NOACK: delivered, not pending.
		bs[0].send("XREADGROUP", "GROUP", "g", "c1", "NOACK", "BLOCK", "0", "STREAMS", "q", ">")
		settle()
		d.Do("XADD", "q", "4-1", "m", "4")
		bs[0].expect(t, "NOACK waiter")
		d.Do("XPENDING", "q", "g")
	})

	t.Run("XReadGroupUnblockedByDeletion", func(t *testing.T) {
		d := p.diff(t)
		b := newBlocker(t, p)
		d.Do("XGROUP", "CREATE", "s1", "g", "$", "MKSTREAM")
		b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s1", ">")
		settle()
		d.Do("DEL", "s1")
		b.expect(t, "XREADGROUP when the stream is deleted")

		d.Do("XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM")
		b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s2", ">")
		settle()
		d.Do("XGROUP", "DESTROY", "s2", "g")
		b.expect(t, "XREADGROUP when the group is destroyed")

		d.Do("XGROUP", "CREATE", "s3", "g", "$", "MKSTREAM")
		b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s3", ">")
		settle()
		d.Do("SET", "s3", "string")
		b.expect(t, "XREADGROUP when the key changes type")

		// FLUSHDB, FLUSHALL and SWAPDB delete it too.
		for _, flush := range [][]string{{"FLUSHDB"}, {"FLUSHALL"}, {"SWAPDB", "0", "1"}} {
			d.Do("XGROUP", "CREATE", "s5", "g", "$", "MKSTREAM")
			b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s5", ">")
			settle()
			d.Do(flush...)
			b.expect(t, "XREADGROUP after "+strings.Join(flush, " "))
		}
		// A BLPOP waits on through FLUSHALL, and SWAPDB may serve it.
		b.send("BLPOP", "l", "0")
		settle()
		d.Do("FLUSHALL")
		d.Do("SELECT", "1")
		d.Do("RPUSH", "l", "from-db-1")
		d.Do("SELECT", "0")
		d.Do("SWAPDB", "0", "1")
		b.expect(t, "BLPOP served by SWAPDB")

		// XREAD waits on through a deletion.
		b.send("XREAD", "BLOCK", "0", "STREAMS", "s4", "$")
		settle()
		d.Do("XADD", "s4", "1-1", "a", "b")
		b.expect(t, "XREAD served")
		b.send("XREAD", "BLOCK", "0", "STREAMS", "s4", "$")
		settle()
		d.Do("DEL", "s4")
		d.Do("XADD", "s4", "2-1", "a", "b")
		b.expect(t, "XREAD after the stream was deleted and made again")
	})

	t.Run("InsideMulti", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			XGROUP CREATE s g $ MKSTREAM
			MULTI
			XREAD BLOCK 0 STREAMS s $
			XREADGROUP GROUP g c BLOCK 0 STREAMS s >
			XADD s 1-1 a b
			XREADGROUP GROUP g c BLOCK 0 STREAMS s >
			EXEC
		`)
	})
}

func TestStreamKeyspace(t *testing.T) {
	p := newPair(t)
	d := p.diff(t)
	d.Run(`
		XADD s 1-1 a b
		XADD s 2-1 c d
		XGROUP CREATE s g 0
		XREADGROUP GROUP g c COUNT 1 STREAMS s >
		RENAME s s2
		XINFO GROUPS s2
		XPENDING s2 g
		COPY s2 s3
		XRANGE s3 - +
		XPENDING s3 g
		XREADGROUP GROUP g c STREAMS s3 >
		XPENDING s2 g
		XPENDING s3 g
		DEL s2
		EXISTS s2
		SCAN 0 TYPE stream
		EXPIRE s3 100
		XADD s3 3-1 e f
		TTL s3
		XDEL s3 1-1 2-1 3-1
		XLEN s3
		EXISTS s3
		XINFO GROUPS s3
		TYPE s3
		SET s3 str
		XLEN s3
	`)

	// WATCH: what marks a stream modified, as in Redis.
	o := p.conn(t)
	watch := func(what string, args ...string) {
		t.Helper()
		d.Do("WATCH", "w")
		o.Do(args...)
		w, g := d.DoBoth("MULTI")
		if w.String() != "+OK" || g.String() != "+OK" {
			t.Fatalf("MULTI: %v %v", w, g)
		}
		d.Do("PING")
		if w, g := d.DoBoth("EXEC"); w.String() != g.String() {
			t.Errorf("WATCH then %s: redis %v, basalt %v", what, w, g)
		}
	}
	d.Run(`
		XADD w 1-1 a b
		XADD w 2-1 a b
		XGROUP CREATE w g 0
	`)
	watch("XREADGROUP", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "w", ">")
	watch("XACK", "XACK", "w", "g", "1-1")
	watch("XCLAIM", "XCLAIM", "w", "g", "c2", "0", "1-1", "FORCE")
	watch("XAUTOCLAIM", "XAUTOCLAIM", "w", "g", "c3", "0", "0")
	watch("XGROUP CREATECONSUMER", "XGROUP", "CREATECONSUMER", "w", "g", "c9")
	watch("XGROUP SETID", "XGROUP", "SETID", "w", "g", "0")
	watch("XGROUP CREATE", "XGROUP", "CREATE", "w", "g2", "0")
	watch("XADD", "XADD", "w", "3-1", "a", "b")
	watch("XDEL", "XDEL", "w", "3-1")
	watch("XDEL nothing", "XDEL", "w", "3-1")
	watch("XTRIM", "XTRIM", "w", "MAXLEN", "1")
	watch("XTRIM nothing", "XTRIM", "w", "MAXLEN", "1")
	watch("XSETID", "XSETID", "w", "10-1")
}
