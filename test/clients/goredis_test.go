// Package clients runs real Redis clients against basalt: go-redis v9,
// rueidis and the redis-cli binary, with their default handshakes.
package clients

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// recordingConn keeps the first bytes a client writes, to see its handshake.
type recordingConn struct {
	net.Conn
	mu      *sync.Mutex
	written *bytes.Buffer
}

func (c recordingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.written.Len() < 4096 {
		c.written.Write(b)
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func TestGoRedis(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	var mu sync.Mutex
	var first bytes.Buffer
	rc := redis.NewClient(&redis.Options{
		Addr:                  p.Addr,
		ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return recordingConn{nc, &mu, &first}, nil
		},
	})
	t.Cleanup(func() { rc.Close() })

	t.Run("handshake is HELLO 3", func(t *testing.T) {
		if err := rc.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		hs := first.String()
		mu.Unlock()
		if !strings.HasPrefix(hs, "*2\r\n$5\r\nhello\r\n$1\r\n3\r\n") {
			t.Errorf("go-redis did not open with HELLO 3 (or basalt refused it): first bytes %q", hs)
		}
		// RESP3 null decodes as redis.Nil.
		if err := rc.Get(ctx, "missing").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("GET missing: %v, want redis.Nil", err)
		}
		info, err := rc.Conn().Hello(ctx, 3, "", "", "").Result()
		if err != nil || fmt.Sprint(info["proto"]) != "3" || info["server"] != "redis" {
			t.Errorf("HELLO 3: %v, %v", info, err)
		}
	})

	t.Run("strings", func(t *testing.T) {
		if err := rc.Set(ctx, "a", "hello", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := rc.Get(ctx, "a").Result(); err != nil || v != "hello" {
			t.Errorf("GET a = %q, %v", v, err)
		}
		for i := 1; i <= 3; i++ {
			if n, err := rc.Incr(ctx, "n").Result(); err != nil || n != int64(i) {
				t.Errorf("INCR n = %d, %v; want %d", n, err, i)
			}
		}
		if err := rc.Incr(ctx, "a").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
			t.Errorf("INCR on a word: %v", err)
		}
		if err := rc.Set(ctx, "ttl", "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if d, err := rc.TTL(ctx, "ttl").Result(); err != nil && strings.Contains(err.Error(), "unknown command") {
			t.Logf("TTL not implemented yet: %v", err)
		} else if err != nil || d <= 0 || d > time.Minute {
			t.Errorf("TTL after SET EX 60 = %v, %v", d, err)
		}
	})

	t.Run("pipeline of 1000", func(t *testing.T) {
		cmds, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 500 {
				p.Set(ctx, "p:"+strconv.Itoa(i), i, 0)
				p.Incr(ctx, "p:count")
			}
			return nil
		})
		if err != nil || len(cmds) != 1000 {
			t.Fatalf("Pipelined: %d replies, %v", len(cmds), err)
		}
		for i, c := range cmds {
			if ic, ok := c.(*redis.IntCmd); ok && ic.Val() != int64(i/2+1) {
				t.Fatalf("reply %d: INCR = %d, want %d", i, ic.Val(), i/2+1)
			}
		}
		vals, err := rc.MGet(ctx, "p:0", "p:499", "p:500").Result()
		if err != nil || fmt.Sprint(vals) != "[0 499 <nil>]" {
			t.Errorf("MGET = %v, %v", vals, err)
		}
	})

	t.Run("MULTI/EXEC", func(t *testing.T) {
		var incr *redis.IntCmd
		_, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "tx:a", "1", 0)
			incr = p.Incr(ctx, "tx:a")
			p.Set(ctx, "tx:b", "x", 0)
			return nil
		})
		if err != nil || incr.Val() != 2 {
			t.Fatalf("TxPipelined: INCR %d, %v", incr.Val(), err)
		}
		// A runtime error inside EXEC fails that command only.
		var bad *redis.IntCmd
		_, err = rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
			bad = p.Incr(ctx, "tx:b")
			p.Set(ctx, "tx:c", "after", 0)
			return nil
		})
		if err == nil || bad.Err() == nil {
			t.Errorf("INCR on a word inside EXEC: no error")
		}
		if v, _ := rc.Get(ctx, "tx:c").Result(); v != "after" {
			t.Errorf("command after a failing one in EXEC not applied: %q", v)
		}
	})

	// Optimistic locking: 20 goroutines increment one counter with
	// WATCH/GET/MULTI/SET/EXEC; the counter ends at the number of
	// transactions that committed, whatever the conflicts.
	t.Run("WATCH increments", func(t *testing.T) {
		const workers, tries = 20, 15
		key := "watched"
		var ok, conflicts atomic.Int64
		increment := func() error {
			return rc.Watch(ctx, func(tx *redis.Tx) error {
				n, err := tx.Get(ctx, key).Int()
				if err != nil && !errors.Is(err, redis.Nil) {
					return err
				}
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, key, n+1, 0)
					return nil
				})
				return err
			}, key)
		}
		// Without contention a watched transaction always commits.
		for i := range 10 {
			if err := increment(); err != nil {
				t.Fatalf("uncontended WATCH increment %d: %v", i, err)
			}
			ok.Add(1)
		}
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range tries {
					switch err := increment(); {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, redis.TxFailedErr):
						conflicts.Add(1)
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		n, err := rc.Get(ctx, key).Int64()
		if err != nil || n != ok.Load() {
			t.Errorf("counter = %d (%v), but %d transactions committed (%d conflicts)", n, err, ok.Load(), conflicts.Load())
		}
		t.Logf("%d committed, %d aborted by WATCH", ok.Load(), conflicts.Load())
	})

	t.Run("context timeout", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := rc.Do(short, "DEBUG", "SLEEP", "1").Err()
		if err == nil {
			t.Fatalf("DEBUG SLEEP 1 with a 100ms deadline succeeded")
		}
		if el := time.Since(start); el > 800*time.Millisecond {
			t.Errorf("the deadline was not honoured: returned after %v (%v)", el, err)
		}
		// The client recovers: a new connection serves the next command.
		if v, err := rc.Get(ctx, "a").Result(); err != nil || v != "hello" {
			t.Errorf("after a timeout: GET a = %q, %v", v, err)
		}
	})
}

// TestRueidis uses rueidis without client-side caching (TestRueidisCache
// has it).
func TestRueidis(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("rueidis.NewClient: %v", err)
	}
	defer c.Close()

	if err := c.Do(ctx, c.B().Set().Key("r:a").Value("1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	resps := c.DoMulti(ctx,
		c.B().Incr().Key("r:a").Build(),
		c.B().Get().Key("r:a").Build(),
		c.B().Get().Key("r:missing").Build(),
		c.B().Set().Key("r:b").Value("x").Nx().Build(),
		c.B().Set().Key("r:b").Value("y").Nx().Build(),
		c.B().Mget().Key("r:a", "r:b").Build(),
	)
	if n, err := resps[0].AsInt64(); err != nil || n != 2 {
		t.Errorf("INCR = %d, %v", n, err)
	}
	if v, err := resps[1].ToString(); err != nil || v != "2" {
		t.Errorf("GET = %q, %v", v, err)
	}
	if err := resps[2].Error(); !rueidis.IsRedisNil(err) {
		t.Errorf("GET missing: %v, want nil", err)
	}
	if err := resps[3].Error(); err != nil {
		t.Errorf("SET NX on a new key: %v", err)
	}
	if err := resps[4].Error(); !rueidis.IsRedisNil(err) {
		t.Errorf("SET NX on an existing key: %v, want nil", err)
	}
	if vs, err := resps[5].AsStrSlice(); err != nil || strings.Join(vs, ",") != "2,x" {
		t.Errorf("MGET = %v, %v", vs, err)
	}

	// Many concurrent callers share rueidis's pipelined connection.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if err := c.Do(ctx, c.B().Incr().Key("r:shared").Build()).Error(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := c.Do(ctx, c.B().Get().Key("r:shared").Build()).AsInt64(); err != nil || n != 1000 {
		t.Errorf("shared counter = %d, %v; want 1000", n, err)
	}
}

// TestRueidisCache uses rueidis with its defaults: client-side caching in
// CLIENT TRACKING's OPTIN mode. A cached read is served from the client's
// memory until another client's write invalidates it; then the next read
// goes to the server and sees the write.
func TestRueidisCache(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx := context.Background()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}})
	if err != nil {
		t.Fatalf("rueidis.NewClient with its defaults: %v", err)
	}
	defer c.Close()
	other := testutil.Dial(t, p.Addr)
	other.Do("SET", "rc:a", "1")
	other.Do("HSET", "rc:h", "f", "1")

	get := func() rueidis.RedisResult { return c.DoCache(ctx, c.B().Get().Key("rc:a").Cache(), time.Minute) }
	hget := func() rueidis.RedisResult {
		return c.DoCache(ctx, c.B().Hget().Key("rc:h").Field("f").Cache(), time.Minute)
	}
	for i := range 3 {
		if v, err := get().ToString(); err != nil || v != "1" {
			t.Fatalf("cached GET #%d = %q, %v", i, v, err)
		}
		if v, err := hget().ToString(); err != nil || v != "1" {
			t.Fatalf("cached HGET #%d = %q, %v", i, v, err)
		}
	}
	if r := get(); !r.IsCacheHit() {
		t.Errorf("the third GET was not served from the cache")
	}
	// Another client's writes invalidate; the next reads see them.
	other.Do("SET", "rc:a", "2")
	other.Do("HINCRBY", "rc:h", "f", "5")
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := get().ToString()
		h, herr := hget().ToString()
		if err == nil && v == "2" && herr == nil && h == "6" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after writes elsewhere the cache still answers GET %q (%v), HGET %q (%v)", v, err, h, herr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A write of this client's own, and a delete.
	if err := c.Do(ctx, c.B().Set().Key("rc:a").Value("3").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	other.Do("DEL", "rc:h")
	deadline = time.Now().Add(5 * time.Second)
	for {
		v, err := get().ToString()
		herr := hget().Error()
		if err == nil && v == "3" && rueidis.IsRedisNil(herr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after its own SET and a DEL: GET %q (%v), HGET error %v", v, err, herr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedisCli drives basalt with the redis-cli binary.
func TestRedisCli(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	p := testutil.StartBasalt(t, "")
	port := strconv.Itoa(p.Port)
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"-h", "127.0.0.1", "-p", port}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	if out := run("", "SET", "a", "b"); out != "OK" {
		t.Errorf("SET a b: %q", out)
	}
	if out := run("", "GET", "a"); out != "b" {
		t.Errorf("GET a: %q", out)
	}
	if out := run("", "INCR", "a"); out != "(error) ERR value is not an integer or out of range" && out != "ERR value is not an integer or out of range" {
		t.Errorf("INCR a: %q", out)
	}

	// --pipe: raw RESP on stdin, a summary on stdout. redis-cli ends the
	// stream with an ECHO of a random marker to know it has every reply.
	const n = 5000
	var in bytes.Buffer
	for i := range n {
		in.Write(testutil.Command("SET", "cli:"+strconv.Itoa(i), strconv.Itoa(i)))
	}
	out := run(in.String(), "--pipe")
	if !strings.Contains(out, fmt.Sprintf("errors: 0, replies: %d", n)) {
		t.Errorf("--pipe output:\n%s", out)
	}
	if got := run("", "GET", "cli:4999"); got != "4999" {
		t.Errorf("GET cli:4999 after --pipe: %q", got)
	}
}
