package compat

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// TestInfoStats: INFO commandstats, errorstats, latencystats and
// total_error_replies against redis-server after the same commands,
// errors of every kind among them: refused before running (arity, unknown
// subcommand, inside MULTI), failing as they run (WRONGTYPE, syntax, in
// EXEC, in a script's redis.call), EXECABORT. Durations differ, so usec
// is not compared and latencystats only by form.
func TestInfoStats(t *testing.T) {
	if testutil.ClusterMode() > 1 {
		t.Skip("a follower's commands run, and are counted, on the leader: see README")
	}
	d := testutil.NewPairDiff(t)
	d.Run(`
		CONFIG RESETSTAT
		SET s v
		GET s a
		CONFIG FOO
		CONFIG
		CONFIG GET
		NOSUCH x
		OBJECT
		LPUSH s x
		INCR s
		SET k v EX -1
		SET a b c
		GET s
		HGET s f
		ECHO hi
		EVALSHA 0123456789012345678901234567890123456789 0
		EVAL "return redis.call('lpush', KEYS[1], 'x')" 1 s
		EVAL "return redis.pcall('lpush', KEYS[1], 'x')" 1 s
		EVAL "return redis.call('get')" 0
		EVAL "return redis.call('nosuch')" 0
		EVAL "return redis.error_reply('MYERR custom')" 0
		EVAL "error('raw')" 0
		EVAL "return redis.call('get', KEYS[1])" 1 s
		EVAL_RO "return redis.call('hget', KEYS[1], 'f')" 1 s
		MULTI
		SET m 1
		LPUSH m x
		INCR m
		GET m
		EXEC
		MULTI
		GET
		SET m 2
		EXEC
		MULTI
		SET m 3 4
		EXEC
		EXEC
		DISCARD
		DEL s a k m
	`)
	want, got := infoStats(t, d.Want), infoStats(t, d.Got)
	for name, w := range want.commands {
		if g := got.commands[name]; g != w {
			t.Errorf("cmdstat_%s: %s, want %s", name, g, w)
		}
	}
	for name, g := range got.commands {
		if _, ok := want.commands[name]; !ok {
			t.Errorf("cmdstat_%s: %s, redis has none", name, g)
		}
	}
	if got.errors != want.errors {
		t.Errorf("errorstats:\n%s\nwant\n%s", got.errors, want.errors)
	}
	if got.total != want.total {
		t.Errorf("total_error_replies %s, want %s", got.total, want.total)
	}
	if got.latencyNames != want.latencyNames {
		t.Errorf("latencystats for %s, want %s", got.latencyNames, want.latencyNames)
	}
	for name, v := range got.latency {
		checkPercentiles(t, name, v, []string{"p50", "p99", "p99.9"})
	}
	for name, v := range want.latency { // the check holds for redis too
		checkPercentiles(t, "redis "+name, v, []string{"p50", "p99", "p99.9"})
	}

	// The percentiles reported are configurable.
	d.Run(`
		CONFIG GET latency-tracking-info-percentiles
		CONFIG SET latency-tracking-info-percentiles "50 101"
		CONFIG SET latency-tracking-info-percentiles "abc"
		CONFIG SET latency-tracking-info-percentiles "0 100 99.99 50.5"
		CONFIG GET latency-tracking-info-percentiles
	`)
	got = infoStats(t, d.Got)
	if len(got.latency) == 0 {
		t.Fatal("no latencystats")
	}
	for name, v := range got.latency {
		checkPercentiles(t, name, v, []string{"p0", "p100", "p99.99", "p50.5"})
	}
	d.Run(`
		CONFIG SET latency-tracking-info-percentiles ""
		CONFIG GET latency-tracking-info-percentiles
	`)
	if got := infoStats(t, d.Got); got.latency["latency_percentiles_usec_config|set"] != "" || len(got.latency) == 0 {
		t.Errorf("no percentiles asked: %v", got.latency)
	}

	// CONFIG RESETSTAT forgets them all.
	d.Run(`
		CONFIG SET latency-tracking-info-percentiles "50 99 99.9"
		CONFIG RESETSTAT
	`)
	want, got = infoStats(t, d.Want), infoStats(t, d.Got)
	if len(got.commands) != 1 || got.commands["config|resetstat"] != want.commands["config|resetstat"] ||
		got.errors != "" || got.total != "0" || got.latencyNames != want.latencyNames {
		t.Errorf("after CONFIG RESETSTAT: %+v, want %+v", got, want)
	}
}

type infoStatsReply struct {
	commands     map[string]string // name: calls, rejected_calls, failed_calls
	errors       string            // INFO errorstats's lines, sorted
	total        string            // total_error_replies
	latency      map[string]string // INFO latencystats
	latencyNames string            // its commands, sorted
}

// infoStats reads the counters of INFO commandstats, errorstats and
// latencystats, and total_error_replies, in one INFO call.
func infoStats(t *testing.T, c *testutil.Conn) infoStatsReply {
	t.Helper()
	_, sections := parseInfo(t, c.Do("INFO", "commandstats", "errorstats", "latencystats", "stats"))
	out := infoStatsReply{commands: map[string]string{}, latency: sections["Latencystats"],
		total: sections["Stats"]["total_error_replies"]}
	for k, v := range sections["Commandstats"] {
		var keep []string
		for _, f := range strings.Split(v, ",") {
			if !strings.HasPrefix(f, "usec") {
				keep = append(keep, f)
			}
		}
		out.commands[strings.TrimPrefix(k, "cmdstat_")] = strings.Join(keep, ",")
	}
	var errs, names []string
	for k, v := range sections["Errorstats"] {
		errs = append(errs, k+":"+v)
	}
	for k := range out.latency {
		names = append(names, k)
	}
	slices.Sort(errs)
	slices.Sort(names)
	out.errors, out.latencyNames = strings.Join(errs, "\n"), strings.Join(names, " ")
	return out
}

var percentileRe = regexp.MustCompile(`^(p[0-9.]+)=([0-9]+\.[0-9]{3})$`)

// checkPercentiles checks a latencystats value: the percentiles asked, in
// order, each in µs with 3 decimals, not decreasing as the percentile grows.
func checkPercentiles(t *testing.T, name, v string, names []string) {
	t.Helper()
	fields := strings.Split(v, ",")
	if len(fields) != len(names) {
		t.Errorf("%s: %q, want %v", name, v, names)
		return
	}
	values := map[string]float64{}
	for i, f := range fields {
		m := percentileRe.FindStringSubmatch(f)
		if m == nil || m[1] != names[i] {
			t.Errorf("%s: %q, want %s=N.NNN", name, f, names[i])
			continue
		}
		values[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	order := slices.Clone(names)
	slices.SortFunc(order, func(a, b string) int {
		x, _ := strconv.ParseFloat(a[1:], 64)
		y, _ := strconv.ParseFloat(b[1:], 64)
		return cmp.Compare(x, y)
	})
	for i := 1; i < len(order); i++ {
		if values[order[i]] < values[order[i-1]] {
			t.Errorf("%s: %s=%v below %s=%v", name, order[i], values[order[i]], order[i-1], values[order[i-1]])
		}
	}
}
