package compat

import (
	"bytes"
	"strconv"
	"testing"

	"basalt/internal/testutil"
)

// TestRandomPicks checks that HRANDFIELD, SRANDMEMBER and ZRANDMEMBER pick
// members fairly, on both servers: chi-square over the counts of many
// picks, divided by its degrees of freedom (about 1 for a uniform pick).
// Basalt picks from a small collection exactly uniformly, as Redis does
// from a listpack, and from a big one within the unfairness of Redis's
// hashtable pick; Redis's figures are logged beside basalt's.
func TestRandomPicks(t *testing.T) {
	p := newPair(t)
	types := []struct {
		name string
		fill func(key string, members []string) []string
	}{
		{"HRANDFIELD", func(key string, members []string) []string {
			args := []string{"HSET", key}
			for _, m := range members {
				args = append(args, m, "v")
			}
			return args
		}},
		{"SRANDMEMBER", func(key string, members []string) []string {
			return append([]string{"SADD", key}, members...)
		}},
		{"ZRANDMEMBER", func(key string, members []string) []string {
			args := []string{"ZADD", key}
			for i, m := range members {
				args = append(args, strconv.Itoa(i), m)
			}
			return args
		}},
	}
	for _, typ := range types {
		t.Run(typ.name, func(t *testing.T) {
			d := p.diff(t)
			for _, size := range []struct {
				n, picks int
				single   bool    // one pick per call, else one call with a negative count
				maxChi   float64 // basalt's bound on chi-square per degree of freedom
			}{
				// Exact: about 1, above these once in 10^6 runs.
				{n: 20, picks: 2000, single: true, maxChi: 3.5},
				{n: 100, picks: 10000, single: true, maxChi: 2},
				// Redis's hashtable pick gives 1 to 8 here, and the first
				// member after a random hash (basalt before) about
				// 1+picks/n.
				{n: 300, picks: 12000, single: true, maxChi: 8},
				{n: 2000, picks: 60000, maxChi: 8},
			} {
				members := make([]string, size.n)
				for i := range members {
					members[i] = "m" + strconv.Itoa(i)
				}
				key := "k" + strconv.Itoa(size.n)
				d.Do(typ.fill(key, members)...)
				for _, c := range []*testutil.Conn{d.Want, d.Got} {
					counts := randomPickCounts(t, c, typ.name, key, size.picks, size.single)
					expected := float64(size.picks) / float64(size.n)
					chi := 0.0
					for _, m := range members {
						diff := float64(counts[m]) - expected
						chi += diff * diff / expected
						delete(counts, m)
					}
					if len(counts) > 0 {
						t.Fatalf("%s %s %s: picks that are not members: %v", c.Addr, typ.name, key, counts)
					}
					chi /= float64(size.n - 1)
					t.Logf("%s %s of %d members: chi-square per degree of freedom %.2f", c.Addr, typ.name, size.n, chi)
					if c == d.Got && chi > size.maxChi {
						t.Errorf("%s %s of %d members, %d picks: chi-square per degree of freedom %.2f, want at most %.1f",
							c.Addr, typ.name, size.n, size.picks, chi, size.maxChi)
					}
				}
			}
		})
	}
}

// randomPickCounts counts the members that picks of cmd key return: one a
// call, pipelined, or in one call with a negative count.
func randomPickCounts(t *testing.T, c *testutil.Conn, cmd, key string, picks int, single bool) map[string]int {
	t.Helper()
	counts := map[string]int{}
	if !single {
		r := c.Do(cmd, key, strconv.Itoa(-picks))
		if len(r.Elems) != picks {
			t.Fatalf("%s %s -%d: %d elements", cmd, key, picks, len(r.Elems))
		}
		for _, e := range r.Elems {
			counts[e.Str]++
		}
		return counts
	}
	const batch = 1000
	one := testutil.Command(cmd, key)
	for done := 0; done < picks; done += batch {
		c.Send(bytes.Repeat(one, batch))
		for range batch {
			r := c.Read()
			if r.Kind != '$' {
				t.Fatalf("%s %s: %v", cmd, key, r)
			}
			counts[r.Str]++
		}
	}
	return counts
}
