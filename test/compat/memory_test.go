package compat

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// MEMORY: replies and errors as Redis's; the figures are basalt's own
// (README, "Where basalt differs"), so they are checked for sense, not
// equality.
func TestMemory(t *testing.T) {
	d := testutil.NewPairDiff(t)

	t.Run("Replies", func(t *testing.T) {
		d.Run(`
			MEMORY
			MEMORY HELP
			MEMORY HELP x
			MEMORY foo
			MEMORY USAGE
			MEMORY USAGE nokey
			SET k v
			MEMORY USAGE k SAMPLES
			MEMORY USAGE k SAMPLES -1
			MEMORY USAGE k SAMPLES x
			MEMORY USAGE k SAMPLES 1 SAMPLES
			MEMORY USAGE k foo 1
			MEMORY USAGE nokey SAMPLES x
			MEMORY PURGE
			MEMORY PURGE x
			MEMORY STATS x
			MEMORY DOCTOR x
			MEMORY MALLOC-STATS x
			COMMAND GETKEYS MEMORY USAGE k
		`)
		for _, args := range [][]string{{"MEMORY", "USAGE", "k"}, {"MEMORY", "USAGE", "k", "SAMPLES", "0"}} {
			want, got := d.DoBoth(args...)
			if want.Kind != got.Kind || got.Int <= 0 {
				t.Errorf("%v: want an integer like %v, got %v", args, want, got)
			}
		}
		want, got := d.DoBoth("COMMAND", "INFO", "memory")
		if len(got.Elems) != 1 || len(want.Elems) != 1 {
			t.Fatalf("COMMAND INFO memory: want %v, got %v", want, got)
		}
		sameInfoEntry(t, want.Elems[0], got.Elems[0])
	})

	t.Run("Stats", func(t *testing.T) {
		skipInShards(t) // it dials no connection of its own
		d.Do("SELECT", "2")
		d.Do("SET", "in2", "v")
		d.Do("SELECT", "0")
		want, got := d.DoBoth("MEMORY", "STATS")
		if len(want.Elems) != len(got.Elems) {
			t.Fatalf("MEMORY STATS: want %d elements, got %d: %v", len(want.Elems), len(got.Elems), got)
		}
		for i := 0; i < len(want.Elems); i += 2 {
			if want.Elems[i].Str != got.Elems[i].Str {
				t.Errorf("MEMORY STATS field %d: want %q, got %q", i/2, want.Elems[i].Str, got.Elems[i].Str)
			}
			if w, g := want.Elems[i+1], got.Elems[i+1]; len(w.Elems) != len(g.Elems) {
				t.Errorf("MEMORY STATS %s: want %v, got %v", want.Elems[i].Str, w, g)
			}
		}
		fields := map[string]testutil.Reply{}
		for i := 0; i+1 < len(got.Elems); i += 2 {
			fields[got.Elems[i].Str] = got.Elems[i+1]
		}
		if n := fields["keys.count"].Int; n != 2 {
			t.Errorf("MEMORY STATS keys.count = %d, want 2", n)
		}
		if n := fields["total.allocated"].Int; n <= 0 || n > fields["peak.allocated"].Int {
			t.Errorf("MEMORY STATS total.allocated %d, peak %d", n, fields["peak.allocated"].Int)
		}
		d.Do("FLUSHALL")
	})

	t.Run("UsageGrowsWithTheValue", func(t *testing.T) {
		c := testutil.Dial(t, d.Got.Addr)
		defer c.Close()
		c.Do("SET", "small", "x")
		c.Do("SET", "big", strings.Repeat("x", 100_000))
		for i := range 2000 {
			c.Do("RPUSH", "list", fmt.Sprintf("element-%04d", i))
			c.Do("ZADD", "zset", strconv.Itoa(i), fmt.Sprintf("member-%04d", i))
		}
		c.Do("RPUSH", "short", "element-0000")
		usage := func(args ...string) int64 {
			r := c.Do(append([]string{"MEMORY", "USAGE"}, args...)...)
			if r.IsError() || r.Int <= 0 {
				t.Fatalf("MEMORY USAGE %v: %v", args, r)
			}
			return r.Int
		}
		if s, b := usage("small"), usage("big"); b < 100_000 || s >= 100 {
			t.Errorf("MEMORY USAGE small %d, big %d", s, b)
		}
		// The 5 members sampled stand for all 2000: the estimate is near
		// the exact figure, and both are 2000 times a short list's.
		exact, sampled := usage("list", "SAMPLES", "0"), usage("list")
		if exact < 2000*int64(len("element-0000")) || sampled < exact*9/10 || sampled > exact*11/10 {
			t.Errorf("MEMORY USAGE list: sampled %d, exact %d, one element %d", sampled, exact, usage("short"))
		}
		if z, l := usage("zset", "SAMPLES", "0"), exact; z < l {
			t.Errorf("MEMORY USAGE zset %d < list %d: a sorted set's two indexes are not counted", z, l)
		}
	})

	t.Run("RedisCliMemkeys", func(t *testing.T) {
		c := testutil.Dial(t, d.Got.Addr)
		defer c.Close()
		c.Do("FLUSHALL")
		c.Do("SET", "huge", strings.Repeat("y", 50_000))
		c.Do("SET", "tiny", "y")
		host, port, _ := strings.Cut(d.Got.Addr, ":")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "redis-cli", "-h", host, "-p", port, "--memkeys").CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli --memkeys: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), `Biggest string found '"huge"'`) {
			t.Errorf("redis-cli --memkeys did not find the biggest key:\n%s", out)
		}
	})
}
