package compat

import (
	"testing"

	"basalt/internal/testutil"
)

// INFO's keyspace_hits and keyspace_misses count the lookups of read
// commands as Redis does (writes count none), and number_of_cached_scripts
// the script cache: what redis_exporter graphs.
func TestKeyspaceStats(t *testing.T) {
	if testutil.ClusterMode() > 1 {
		t.Skip("INFO counts what its node served; a follower forwards these reads and scripts to the leader")
	}
	d := testutil.NewPairDiff(t)
	d.Run(`
		SET a 1
		HSET h f v
		RPUSH l x
		GET a
		GET nokey
		MGET a b c
		EXISTS a b nokey
		HGET h f
		HGETALL h
		HGET nokey f
		INCR a
		LRANGE l 0 -1
		LLEN l
		TYPE a
		TTL a
		STRLEN a
		SISMEMBER s x
		ZSCORE z m
		GETRANGE a 0 1
		XRANGE nokey - +
		SINTER s l
		SCRIPT LOAD "return 1"
		SCRIPT LOAD "return 2"
		EVAL "return 3" 0
	`)
	stats := func(c *testutil.Conn) [3]string {
		_, s := parseInfo(t, c.Do("INFO", "everything"))
		return [3]string{s["Stats"]["keyspace_hits"], s["Stats"]["keyspace_misses"], s["Memory"]["number_of_cached_scripts"]}
	}
	if want, got := stats(d.Want), stats(d.Got); want != got {
		t.Errorf("keyspace_hits, keyspace_misses, number_of_cached_scripts: redis %v, basalt %v", want, got)
	}
	d.Do("CONFIG", "RESETSTAT")
	if want, got := stats(d.Want), stats(d.Got); want != got {
		t.Errorf("after CONFIG RESETSTAT: redis %v, basalt %v", want, got)
	}
}

// Every field of Redis's INFO is in basalt's, in the same section: tools
// such as redis_exporter read them by name (with v1.62, basalt and
// redis-server give the same metric names).
func TestInfoFields(t *testing.T) {
	d := testutil.NewPairDiff(t)
	_, want := parseInfo(t, d.Want.Do("INFO", "everything"))
	_, got := parseInfo(t, d.Got.Do("INFO", "everything"))
	for section, fields := range want {
		switch section {
		case "Commandstats", "Errorstats", "Latencystats", "Keyspace":
			continue // one line per command, error or database
		}
		for name := range fields {
			if _, ok := got[section][name]; !ok {
				t.Errorf("basalt's INFO %s lacks %s", section, name)
			}
		}
	}
}
