package clients

import (
	"context"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// The operations and backup commands through go-redis (RESP3, its
// default), whose parsers expect Redis's reply shapes.
func TestGoRedisOperations(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: p.Addr})
	t.Cleanup(func() { rc.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	must(rc.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	must(rc.SlowLogReset(ctx).Err())
	must(rc.Set(ctx, "k", strings.Repeat("v", 200), 0).Err())
	logs, err := rc.SlowLogGet(ctx, 10).Result()
	must(err)
	found := false
	for _, l := range logs {
		if len(l.Args) == 3 && l.Args[0] == "set" && strings.HasSuffix(l.Args[2], "... (72 more bytes)") && l.ClientAddr != "" {
			found = true
			if time.Since(l.Time) > time.Minute || l.Duration < 0 {
				t.Errorf("slowlog entry time %v, duration %v", l.Time, l.Duration)
			}
		}
	}
	if !found {
		t.Errorf("SLOWLOG GET has no entry for the SET: %+v", logs)
	}
	if n, err := rc.SlowLogLen(ctx).Result(); err != nil || n == 0 {
		t.Errorf("SLOWLOG LEN %d, %v", n, err)
	}

	must(rc.ConfigSet(ctx, "latency-monitor-threshold", "1").Err())
	must(rc.Do(ctx, "DEBUG", "SLEEP", "0.01").Err())
	lat, err := rc.Latency(ctx).Result()
	must(err)
	if len(lat) != 1 || lat[0].Name != "command" || lat[0].Latest < 10*time.Millisecond {
		t.Errorf("LATENCY LATEST: %+v", lat)
	}

	if n, err := rc.MemoryUsage(ctx, "k").Result(); err != nil || n < 200 {
		t.Errorf("MEMORY USAGE k: %d, %v", n, err)
	}
	info, err := rc.InfoMap(ctx, "commandstats", "errorstats").Result()
	must(err)
	if calls := info["Commandstats"]["cmdstat_set"]; !strings.HasPrefix(calls, "calls=1,") {
		t.Errorf("INFO commandstats cmdstat_set: %q", calls)
	}

	before, err := rc.LastSave(ctx).Result()
	must(err)
	must(rc.Save(ctx).Err())
	if after, err := rc.LastSave(ctx).Result(); err != nil || after < before {
		t.Errorf("LASTSAVE %d after SAVE, %d before (%v)", after, before, err)
	}
	must(rc.BgSave(ctx).Err())

	dump, err := rc.Dump(ctx, "k").Result()
	must(err)
	must(rc.Restore(ctx, "copy", time.Minute, dump).Err())
	if v, err := rc.Get(ctx, "copy").Result(); err != nil || len(v) != 200 {
		t.Errorf("GET of the RESTOREd copy: %d bytes, %v", len(v), err)
	}
}
