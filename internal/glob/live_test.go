package glob

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"strconv"
	"testing"
)

// Differential test against a real Redis. Run with e.g.
//
//	BASALT_REDIS_ADDR=127.0.0.1:6379 go test ./internal/glob -run Live
//
// The server's data is flushed: never point this at a server you care about.

type liveConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialLive(t *testing.T) *liveConn {
	addr := os.Getenv("BASALT_REDIS_ADDR")
	if addr == "" {
		t.Skip("BASALT_REDIS_ADDR not set")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &liveConn{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
}

func (l *liveConn) send(args ...[]byte) {
	fmt.Fprintf(l.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(l.w, "$%d\r\n", len(a))
		l.w.Write(a)
		l.w.WriteString("\r\n")
	}
}

// read returns []byte for bulk/simple strings, error for errors, int64 for
// integers, []any for arrays, nil for null.
func (l *liveConn) read() any {
	line, err := l.r.ReadBytes('\n')
	if err != nil {
		panic(err)
	}
	line = bytes.TrimSuffix(line, []byte("\r\n"))
	switch line[0] {
	case '+':
		return line[1:]
	case '-':
		return fmt.Errorf("%s", line[1:])
	case ':':
		n, _ := strconv.ParseInt(string(line[1:]), 10, 64)
		return n
	case '$':
		n, _ := strconv.Atoi(string(line[1:]))
		if n < 0 {
			return nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(l.r, b); err != nil {
			panic(err)
		}
		return b[:n]
	case '*':
		n, _ := strconv.Atoi(string(line[1:]))
		if n < 0 {
			return nil
		}
		out := make([]any, n)
		for i := range out {
			out[i] = l.read()
		}
		return out
	}
	panic("bad reply " + string(line))
}

func randBytes(rng *rand.Rand, alphabet []byte, max int) []byte {
	n := rng.Intn(max + 1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.Intn(len(alphabet))]
	}
	return b
}

func TestLiveKeys(t *testing.T) {
	l := dialLive(t)
	rng := rand.New(rand.NewSource(1))
	patAlpha := []byte("abAB*?[]^-\\z\x00\x80\xff")
	strAlpha := []byte("abAB]-^\\*z\x00\x80\xff")
	const batch = 500
	matches, total := 0, 0
	defer func() { t.Logf("%d of %d cases matched", matches, total) }()
	for round := 0; round < 40; round++ {
		type tc struct{ pat, str []byte }
		var cases []tc
		for i := 0; i < batch; i++ {
			p := randBytes(rng, patAlpha, 8)
			s := randBytes(rng, strAlpha, 6)
			if round%2 == 1 {
				p = patternFor(rng, s, patAlpha)
			}
			if string(p) == "*" {
				continue // KEYS shortcut, not the matcher
			}
			cases = append(cases, tc{p, s})
			total++
			l.send([]byte("FLUSHALL"))
			l.send([]byte("SET"), s, []byte("1"))
			l.send([]byte("KEYS"), p)
		}
		l.w.Flush()
		for _, c := range cases {
			l.read()
			l.read()
			got := len(l.read().([]any)) == 1
			if got {
				matches++
			}
			if want := Match(c.pat, c.str, false); got != want {
				t.Errorf("Match(%q, %q): redis %v, ours %v", c.pat, c.str, got, want)
			}
		}
	}
}

// patternFor builds a pattern that likely (not certainly) matches s.
func patternFor(rng *rand.Rand, s, alpha []byte) []byte {
	var p []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch rng.Intn(10) {
		case 0:
			p = append(p, '?')
		case 1:
			p = append(p, '*')
			i += rng.Intn(2)
		case 2:
			p = append(p, '[', alpha[rng.Intn(len(alpha))], c, ']')
		case 3:
			p = append(p, '[', alpha[rng.Intn(len(alpha))], '-', alpha[rng.Intn(len(alpha))], ']')
		case 4:
			p = append(p, '\\', c)
		case 5:
			p = append(p, alpha[rng.Intn(len(alpha))])
		case 6:
			p = append(p, '[', '^', alpha[rng.Intn(len(alpha))])
		default:
			p = append(p, c)
		}
	}
	if rng.Intn(3) == 0 {
		p = append(p, '*')
	}
	return p
}

func TestLiveNesting(t *testing.T) {
	l := dialLive(t)
	for _, n := range []int{999, 1000, 1001, 1002, 1003} {
		s := bytes.Repeat([]byte("a"), n)
		p := bytes.Repeat([]byte("a*"), n)
		l.send([]byte("FLUSHALL"))
		l.send([]byte("SET"), s, []byte("1"))
		l.send([]byte("KEYS"), p)
		l.w.Flush()
		l.read()
		l.read()
		got := len(l.read().([]any)) == 1
		if want := Match(p, s, false); got != want {
			t.Errorf("n=%d: redis %v, ours %v", n, got, want)
		}
	}
}

// CONFIG GET matches parameter names with nocase=1.
func TestLiveConfigGetNocase(t *testing.T) {
	l := dialLive(t)
	l.send([]byte("CONFIG"), []byte("GET"), []byte("*"))
	l.w.Flush()
	all := l.read().([]any)
	var names [][]byte
	for i := 0; i < len(all); i += 2 {
		names = append(names, all[i].([]byte))
	}
	rng := rand.New(rand.NewSource(2))
	alpha := []byte("aeimnoprstxyAEIMNOPRSTXY-*?[]^\\")
	for i := 0; i < 3000; i++ {
		p := randBytes(rng, alpha, 10)
		if string(p) == "*" {
			continue
		}
		l.send([]byte("CONFIG"), []byte("GET"), p)
		l.w.Flush()
		rep := l.read().([]any)
		got := map[string]bool{}
		for j := 0; j < len(rep); j += 2 {
			got[string(rep[j].([]byte))] = true
		}
		for _, n := range names {
			if w := Match(p, n, true); w != got[string(n)] {
				t.Errorf("CONFIG GET %q / %q: redis %v, ours %v", p, n, got[string(n)], w)
			}
		}
	}
}

func TestLiveTable(t *testing.T) {
	l := dialLive(t)
	for _, c := range matchCases {
		l.send([]byte("FLUSHALL"))
		l.send([]byte("SET"), []byte(c.str), []byte("1"))
		l.send([]byte("KEYS"), []byte(c.pat))
		l.w.Flush()
		l.read()
		l.read()
		if got := len(l.read().([]any)) == 1; got != c.want {
			t.Errorf("KEYS %q with key %q: redis %v, table %v", c.pat, c.str, got, c.want)
		}
	}
}
