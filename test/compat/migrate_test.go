package compat

import (
	"strconv"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// MIGRATE from a Redis 7.0 into basalt: redis-server sends basalt its own
// DUMP payloads as RESTOREs, so keys of every type move with their TTLs,
// as they would to another Redis.
func TestMigrateFromRedis(t *testing.T) {
	redis, basalt := testutil.StartPair(t)
	src, dst := testutil.Dial(t, redis.Addr), testutil.Dial(t, basalt.Addr)
	fillAllTypes(t, src)
	host, port, _ := strings.Cut(basalt.Addr, ":")
	for db := range 16 {
		src.Do("SELECT", strconv.Itoa(db))
		keys := src.Do("KEYS", "*")
		if len(keys.Elems) == 0 {
			continue
		}
		args := []string{"MIGRATE", host, port, "", strconv.Itoa(db), "5000", "COPY", "KEYS"}
		for _, k := range keys.Elems {
			args = append(args, k.Str)
		}
		if r := src.Do(args...); r.String() != "+OK" {
			t.Fatalf("MIGRATE of db %d's %d keys: %v", db, len(keys.Elems), r)
		}
	}
	src.Do("SELECT", "0")
	if r := dst.Do("FUNCTION", "RESTORE", src.Do("FUNCTION", "DUMP").Str); r.String() != "+OK" {
		t.Fatalf("FUNCTION RESTORE: %v", r)
	}
	sameData(t, src, dst)

	// Without COPY the key leaves the source; BUSYKEY comes back as
	// Redis's relayed error, and REPLACE overwrites.
	src.Do("SET", "moved", "1")
	if r := src.Do("MIGRATE", host, port, "moved", "0", "5000"); r.String() != "+OK" {
		t.Fatalf("MIGRATE moved: %v", r)
	}
	expectReply(t, src.Do("EXISTS", "moved"), ":0")
	expectReply(t, dst.Do("GET", "moved"), `"1"`)
	dst.Do("SET", "clash", "basalt")
	src.Do("SET", "clash", "redis")
	expectReply(t, src.Do("MIGRATE", host, port, "clash", "0", "5000"), "-ERR Target instance replied with error: BUSYKEY Target key name already exists.")
	expectReply(t, src.Do("MIGRATE", host, port, "clash", "0", "5000", "REPLACE"), "+OK")
	expectReply(t, dst.Do("GET", "clash"), `"redis"`)
}

func expectReply(t *testing.T, r testutil.Reply, want string) {
	t.Helper()
	if r.String() != want {
		t.Errorf("got %v, want %s", r, want)
	}
}
