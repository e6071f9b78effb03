package clients

import (
	"context"
	"testing"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisScript uses go-redis's Script helper: Run sends EVALSHA and
// falls back to EVAL on NOSCRIPT, after which EVALSHA finds the script.
func TestGoRedisScript(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: p.Addr})
	t.Cleanup(func() { rc.Close() })

	incrBy := redis.NewScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], 100)
return {v, redis.call('TTL', KEYS[1]), 'done'}`)
	if ok, err := incrBy.Exists(ctx, rc).Result(); err != nil || ok[0] {
		t.Fatalf("SCRIPT EXISTS before first use: %v %v", ok, err)
	}
	for i, want := range []int64{5, 10} {
		res, err := incrBy.Run(ctx, rc, []string{"counter"}, 5).Slice()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res[0].(int64) != want || res[1].(int64) != 100 || res[2].(string) != "done" {
			t.Fatalf("run %d: %v", i, res)
		}
	}
	if ok, err := incrBy.Exists(ctx, rc).Result(); err != nil || !ok[0] {
		t.Fatalf("SCRIPT EXISTS after Run: %v %v", ok, err)
	}
	if v, err := incrBy.EvalSha(ctx, rc, []string{"counter"}, 1).Slice(); err != nil || v[0].(int64) != 11 {
		t.Fatalf("EVALSHA: %v %v", v, err)
	}
	if err := rc.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := incrBy.EvalSha(ctx, rc, []string{"counter"}, 1).Err(); err == nil || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Fatalf("EVALSHA after SCRIPT FLUSH: %v", err)
	}
	ro := redis.NewScript(`return redis.call('GET', KEYS[1])`)
	if v, err := ro.RunRO(ctx, rc, []string{"counter"}).Text(); err != nil || v != "11" {
		t.Fatalf("EVALSHA_RO/EVAL_RO: %q %v", v, err)
	}
	// An error inside the script reaches the client as a Redis error.
	if err := rc.Eval(ctx, `return redis.call('LPUSH', KEYS[1], 'x')`, []string{"counter"}).Err(); err == nil || !redis.HasErrorPrefix(err, "WRONGTYPE") {
		t.Fatalf("script error: %v", err)
	}
}
