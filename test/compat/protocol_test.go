package compat

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// rawExchange sends raw bytes on a fresh connection and collects every
// reply until the server closes the connection or goes quiet for a moment.
// closed says whether the server closed it.
func rawExchange(t *testing.T, addr string, raw []byte, quiet time.Duration) (replies []string, closed bool) {
	t.Helper()
	c := testutil.Dial(t, addr)
	defer c.Close()
	c.Send(raw)
	c.Timeout = quiet
	for {
		r, err := c.ReadErr()
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
				return replies, true
			case errors.As(err, &ne) && ne.Timeout():
				return replies, false
			default:
				// A reset counts as closed too.
				return replies, strings.Contains(err.Error(), "reset")
			}
		}
		replies = append(replies, r.String())
	}
}

// TestProtocol sends malformed and unusual input to redis-server and basalt
// as raw bytes and compares the replies, and whether the connection was
// closed.
func TestProtocol(t *testing.T) {
	redis, basalt := testutil.StartPair(t)
	cases := []struct{ name, raw string }{
		{"multibulk", "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n"},
		{"multibulk not a number", "*x\r\n$4\r\nPING\r\n"},
		{"multibulk plus sign", "*+1\r\n$4\r\nPING\r\n"},
		{"multibulk leading zero", "*01\r\n$4\r\nPING\r\n"},
		{"multibulk minus zero", "*-0\r\n"},
		{"multibulk negative skipped", "*-5\r\nPING\r\n"},
		{"multibulk zero skipped", "*0\r\nPING\r\n"},
		{"multibulk over INT_MAX", "*2147483648\r\n"},
		{"multibulk LF only", "*1\n$4\r\nPING\r\n"},
		{"multibulk trailing space", "*1 \r\n$4\r\nPING\r\n"},
		{"expected dollar", "*1\r\nx\r\n"},
		{"expected dollar empty", "*1\r\n\r\n"},
		{"expected dollar after args", "*2\r\n$4\r\nECHO\r\n:1\r\n"},
		{"bulk not a number", "*1\r\n$x\r\n"},
		{"bulk negative", "*1\r\n$-1\r\n"},
		{"bulk leading zero", "*1\r\n$04\r\nPING\r\n"},
		{"bulk plus sign", "*1\r\n$+4\r\nPING\r\n"},
		{"bulk LF only", "*1\r\n$4\nPING\r\n"},
		{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n"},
		{"bulk terminator not checked", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"},
		{"inline", "PING\r\n"},
		{"inline LF", "PING\n"},
		{"inline empty lines", "\r\n\n   \r\nPING\r\n"},
		{"inline quotes", "SET \"a b\" 'c\\'d'\r\nGET \"a b\"\r\n"},
		{"inline hex escapes", "SET k \"\\x41\\x4g\\n\\\"\"\r\nGET k\r\n"},
		{"inline unbalanced double", "SET \"a b\r\nPING\r\n"},
		{"inline unbalanced single", "SET 'a\r\nPING\r\n"},
		{"inline quote then letter", "SET \"a\"b c\r\nPING\r\n"},
		{"inline unknown command", "NOSUCH a b\r\n"},
		{"pipeline then error", "PING\r\n*1\r\n$4\r\nPING\r\n*x\r\nPING\r\n"},
		{"too big inline", strings.Repeat("a", 70000)},
		{"too big mbulk count", "*" + strings.Repeat("1", 70000)},
		{"too big bulk count", "*1\r\n$" + strings.Repeat("1", 70000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const quiet = 300 * time.Millisecond
			want, wantClosed := rawExchange(t, redis.Addr, []byte(c.raw), quiet)
			got, gotClosed := rawExchange(t, basalt.Addr, []byte(c.raw), quiet)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("%q:\nredis:  %q\nbasalt: %q", c.raw, want, got)
			}
			if wantClosed != gotClosed {
				t.Errorf("%q: connection closed: redis %v, basalt %v", c.raw, wantClosed, gotClosed)
			}
		})
	}

	// A 600 MB bulk announced and never sent: Redis refuses it at once
	// (over proto-max-bulk-len) and so must basalt, without allocating.
	t.Run("announce 600MB", func(t *testing.T) {
		raw := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$629145600\r\n")
		want, wantClosed := rawExchange(t, redis.Addr, raw, time.Second)
		got, gotClosed := rawExchange(t, basalt.Addr, raw, time.Second)
		if strings.Join(want, "\n") != strings.Join(got, "\n") || wantClosed != gotClosed {
			t.Errorf("redis %q (closed %v), basalt %q (closed %v)", want, wantClosed, got, gotClosed)
		}
	})

	// A bulk under the limit but never completed: both wait for the rest.
	t.Run("announce 500MB and stall", func(t *testing.T) {
		raw := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$524288000\r\nabc")
		want, wantClosed := rawExchange(t, redis.Addr, raw, 500*time.Millisecond)
		got, gotClosed := rawExchange(t, basalt.Addr, raw, 500*time.Millisecond)
		if len(want) != 0 || len(got) != 0 || wantClosed || gotClosed {
			t.Errorf("redis %q (closed %v), basalt %q (closed %v)", want, wantClosed, got, gotClosed)
		}
	})

	// Many clients announcing 500 MB arguments and stalling must not make
	// basalt allocate them: it reads bulks as the data arrives.
	t.Run("stalled big bulks cost no memory", func(t *testing.T) {
		before := usedMemory(t, basalt.Addr)
		for range 10 {
			c := testutil.Dial(t, basalt.Addr)
			c.Send([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$524288000\r\n" + strings.Repeat("x", 1024)))
		}
		time.Sleep(300 * time.Millisecond)
		if grown := usedMemory(t, basalt.Addr) - before; grown > 200<<20 {
			t.Errorf("basalt's heap grew by %d MB for 10 stalled 500 MB announcements", grown>>20)
		}
		if r := testutil.Dial(t, basalt.Addr).Do("PING"); r.String() != "+PONG" {
			t.Errorf("PING while clients stall: %v", r)
		}
	})

	// 10k SETs in one write: every reply comes back, in order.
	t.Run("10k pipelined", func(t *testing.T) {
		var buf bytes.Buffer
		for i := range 10000 {
			buf.Write(testutil.Command("SET", "pipe:"+strconv.Itoa(i), strconv.Itoa(i)))
		}
		buf.Write(testutil.Command("GET", "pipe:9999"))
		for _, p := range []*testutil.Proc{redis, basalt} {
			c := testutil.Dial(t, p.Addr)
			c.Send(buf.Bytes())
			for i := range 10000 {
				if r := c.Read(); r.String() != "+OK" {
					t.Fatalf("%s: reply %d to SET is %v", p.Addr, i, r)
				}
			}
			if r := c.Read(); r.Str != "9999" {
				t.Errorf("%s: GET pipe:9999 = %v", p.Addr, r)
			}
			c.Close()
		}
	})

	// After all the abuse both servers still serve new connections and
	// kept the data written before.
	t.Run("still serving", func(t *testing.T) {
		d := testutil.NewDiff(t, redis.Addr, basalt.Addr)
		d.Do("GET", "pipe:0")
		d.Do("GET", "pipe:5000")
		d.Do("GET", "a b")
		d.Do("GET", "k")
		d.Do("PING")
	})
}

// usedMemory is basalt's heap in use as INFO memory reports it.
func usedMemory(t *testing.T, addr string) int64 {
	r := testutil.Dial(t, addr).Do("INFO", "memory")
	for _, line := range strings.Split(r.Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("no used_memory in INFO memory: %v", r)
	return 0
}
