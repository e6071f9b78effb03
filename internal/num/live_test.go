package num

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Differential tests against a real Redis 7.0. Run with e.g.
//
//	BASALT_REDIS_ADDR=127.0.0.1:6379 go test ./internal/num -run Live
//
// Keys named basalt:num:* are overwritten.

type liveConn struct {
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
	return &liveConn{bufio.NewReader(c), bufio.NewWriter(c)}
}

func (l *liveConn) send(args ...string) {
	fmt.Fprintf(l.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(l.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// read returns a reply as text: bulk and simple strings as is, errors
// prefixed with "-", integers prefixed with ":", nil as "(nil)".
func (l *liveConn) read() string {
	line, err := l.r.ReadString('\n')
	if err != nil {
		panic(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+':
		return line[1:]
	case '-', ':':
		return line
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "(nil)"
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(l.r, b); err != nil {
			panic(err)
		}
		return string(b[:n])
	}
	panic("unexpected reply " + line)
}

func (l *liveConn) do(args ...string) string {
	l.send(args...)
	l.w.Flush()
	return l.read()
}

// liveIncr runs INCRBYFLOAT on a key holding cur (or missing if cur is nil).
func liveIncr(l *liveConn, cur *string, incr string) string {
	l.send("DEL", "basalt:num:f")
	if cur != nil {
		l.send("SET", "basalt:num:f", *cur)
	}
	l.send("INCRBYFLOAT", "basalt:num:f", incr)
	l.w.Flush()
	l.read()
	if cur != nil {
		l.read()
	}
	return l.read()
}

func ourIncr(cur *string, incr string) string {
	var c []byte
	if cur != nil {
		c = []byte(*cur)
	}
	r, err := IncrByFloat(c, []byte(incr))
	if err != nil {
		return "-" + err.Error()
	}
	return string(r)
}

func TestLiveIncrByFloatTable(t *testing.T) {
	l := dialLive(t)
	for _, c := range incrCases {
		got := liveIncr(l, c.cur, c.incr)
		if got != c.want {
			t.Errorf("INCRBYFLOAT %s by %q: redis %q, table %q", showCur(c.cur), c.incr, got, c.want)
		}
	}
}

func showCur(c *string) string {
	if c == nil {
		return "(missing)"
	}
	return strconv.Quote(*c)
}

var specials = []string{"inf", "-inf", "+inf", "Infinity", "nan", "-0", "0", "", " 1", "1 ", "0x", "0x1p-3",
	"0X1.8P+1", "1e", "1e+", ".", "-.", ".5", "5.", "1e4933", "1e4932", "-1e4932", "1e-4951",
	"1e-4950", "3.6e-4951", "1.9e-4951", "1.8e-4951", "0e99999", "1\x00", "\x00", "1\x002",
	"0x1p16383", "0x1p16384", "0x1.fffffffffffffffep16383", "0x1.ffffffffffffffffp16383",
	"1e308", "1.7976931348623157e308", "-1e309", "1_000", "١", "+-1", "--1", "0x-1", "infinit",
	"nan(123)", "\t1", "1\n", "0.1e-0", "00001.5000", "1,5"}

// randomFloatText produces float-ish strings, valid and not.
func randomFloatText(rng *rand.Rand) string {
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.Intn(10))
		}
		return string(b)
	}
	var sb strings.Builder
	switch rng.Intn(12) {
	case 0:
		return strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.Intn(40)-20)), 'g', -1, 64)
	case 1:
		return strconv.FormatInt(rng.Int63()>>uint(rng.Intn(63)), 10)
	case 2:
		return specials[rng.Intn(len(specials))]
	}
	if rng.Intn(4) == 0 {
		sb.WriteByte("+-"[rng.Intn(2)])
	}
	if rng.Intn(8) == 0 {
		sb.WriteString("0x")
		for i := rng.Intn(20); i >= 0; i-- {
			sb.WriteByte("0123456789abcdefABCDEF"[rng.Intn(22)])
		}
		if rng.Intn(2) == 0 {
			fmt.Fprintf(&sb, "p%d", rng.Intn(200)-100)
		}
		return sb.String()
	}
	sb.WriteString(digits(rng.Intn(25)))
	if rng.Intn(2) == 0 {
		sb.WriteByte('.')
		sb.WriteString(digits(rng.Intn(25)))
	}
	if rng.Intn(3) == 0 {
		fmt.Fprintf(&sb, "e%d", rng.Intn(700)-350)
	}
	if rng.Intn(40) == 0 {
		sb.WriteString(digits(rng.Intn(300)))
	}
	return sb.String()
}

func TestLiveIncrByFloatRandom(t *testing.T) {
	l := dialLive(t)
	rng := rand.New(rand.NewSource(3))
	ok := 0
	for i := 0; i < 20000; i++ {
		var cur *string
		if rng.Intn(5) != 0 {
			s := randomFloatText(rng)
			cur = &s
		}
		incr := randomFloatText(rng)
		got, want := liveIncr(l, cur, incr), ourIncr(cur, incr)
		if got != want {
			t.Errorf("INCRBYFLOAT %s by %q: redis %q, ours %q", showCur(cur), incr, got, want)
		}
		if !strings.HasPrefix(got, "-") {
			ok++
		}
	}
	t.Logf("%d successful increments", ok)
}

func TestLiveIncrByFloatChain(t *testing.T) {
	// Repeated increments accumulate long double rounding.
	l := dialLive(t)
	rng := rand.New(rand.NewSource(4))
	l.do("DEL", "basalt:num:f")
	var cur []byte
	for i := 0; i < 3000; i++ {
		incr := strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.Intn(12)-6)), 'g', -1, 64)
		got := l.do("INCRBYFLOAT", "basalt:num:f", incr)
		want, err := IncrByFloat(cur, []byte(incr))
		if err != nil || got != string(want) {
			t.Fatalf("step %d: %q + %q: redis %q, ours %q %v", i, cur, incr, got, want, err)
		}
		cur = want
	}
}

func TestLiveLongInputs(t *testing.T) {
	l := dialLive(t)
	for _, n := range []int{5118, 5119, 5120, 5121, 6000} {
		for _, s := range []string{
			"1." + strings.Repeat("0", n-2),
			"0." + strings.Repeat("0", n-3) + "1",
			strings.Repeat("1", n),
		} {
			s := s[:n]
			got := liveIncr(l, nil, s)
			if want := ourIncr(nil, s); got != want {
				t.Errorf("len %d %.10q...: redis %.40q, ours %.40q", n, s, got, want)
			}
			got = liveIncr(l, &s, "0")
			if want := ourIncr(&s, "0"); got != want {
				t.Errorf("current len %d %.10q...: redis %.40q, ours %.40q", n, s, got, want)
			}
		}
	}
}

func TestLiveHIncrByFloat(t *testing.T) {
	l := dialLive(t)
	cases := []struct {
		cur  *string
		incr string
	}{
		{nil, "1.5"}, {nil, "inf"}, {nil, "-inf"}, {nil, "nan"}, {nil, "abc"}, {nil, "1e5000"},
		{ptr("abc"), "1"}, {ptr(""), "1"}, {ptr("inf"), "1"}, {ptr("1e4932"), "1e4932"},
		{ptr("10.50"), "0.1"}, {ptr("5.0e3"), "2.0e2"}, {ptr("-3"), "3"}, {ptr("123"), "0.5"},
		{ptr("1\x00x"), "1"},
	}
	for _, c := range cases {
		l.send("DEL", "basalt:num:h")
		if c.cur != nil {
			l.send("HSET", "basalt:num:h", "f", *c.cur)
		}
		l.send("HINCRBYFLOAT", "basalt:num:h", "f", c.incr)
		l.w.Flush()
		l.read()
		if c.cur != nil {
			l.read()
		}
		got := l.read()
		var cur []byte
		if c.cur != nil {
			cur = []byte(*c.cur)
		}
		want := ""
		if r, err := HIncrByFloat(cur, []byte(c.incr)); err != nil {
			want = "-" + err.Error()
		} else {
			want = string(r)
		}
		if got != want {
			t.Errorf("HINCRBYFLOAT %s by %q: redis %q, ours %q", showCur(c.cur), c.incr, got, want)
		}
	}
	// The increment is checked before the key type.
	l.do("DEL", "basalt:num:h")
	l.do("SET", "basalt:num:h", "x")
	for _, incr := range []string{"inf", "x", "1"} {
		got := l.do("HINCRBYFLOAT", "basalt:num:h", "f", incr)
		t.Logf("HINCRBYFLOAT on a string by %q: %s", incr, got)
	}
}

func ptr(s string) *string { return &s }

func TestLiveParseInt(t *testing.T) {
	l := dialLive(t)
	rng := rand.New(rand.NewSource(5))
	inputs := []string{}
	for _, c := range intCases {
		inputs = append(inputs, c.in)
	}
	for i := 0; i < 3000; i++ {
		inputs = append(inputs, randomFloatText(rng))
	}
	for _, in := range inputs {
		l.send("SET", "basalt:num:i", "0")
		l.send("INCRBY", "basalt:num:i", in)
		l.w.Flush()
		l.read()
		got := l.read()
		n, ok := ParseInt([]byte(in))
		want := "-ERR value is not an integer or out of range"
		if ok {
			want = ":" + strconv.FormatInt(n, 10)
		}
		if got != want {
			t.Errorf("INCRBY 0 by %q: redis %q, ours %q", in, got, want)
		}
	}
}

// ZADD parses with string2d; ZSCORE replies with addReplyDouble. A skiplist
// encoded zset is used so that the score is kept as a double.
func TestLiveParseAndFormatDouble(t *testing.T) {
	l := dialLive(t)
	rng := rand.New(rand.NewSource(6))
	var inputs []string
	for _, c := range floatCases {
		inputs = append(inputs, c.in)
	}
	for i := 0; i < 5000; i++ {
		inputs = append(inputs, randomFloatText(rng))
	}
	for i := 0; i < 2000; i++ {
		f := math.Float64frombits(rng.Uint64())
		inputs = append(inputs, strconv.FormatFloat(f, 'g', -1, 64))
	}
	l.do("DEL", "basalt:num:z")
	filler := make([]string, 0, 2+2*200)
	filler = append(filler, "ZADD", "basalt:num:z")
	for i := 0; i < 200; i++ {
		filler = append(filler, "1", "filler"+strconv.Itoa(i))
	}
	l.do(filler...)
	if enc := l.do("OBJECT", "ENCODING", "basalt:num:z"); enc != "skiplist" {
		t.Fatalf("encoding %s", enc)
	}
	for _, in := range inputs {
		// Remove first: ZADD does not replace a score that compares equal
		// (so 0 would not become -0).
		l.send("ZREM", "basalt:num:z", "m")
		l.send("ZADD", "basalt:num:z", in, "m")
		l.send("ZSCORE", "basalt:num:z", "m")
		l.w.Flush()
		l.read()
		r1, r2 := l.read(), l.read()
		f, ok := ParseFloat([]byte(in))
		if strings.HasPrefix(r1, "-") {
			if ok {
				t.Errorf("ZADD %q: redis %q, ours %v", in, r1, f)
			}
			continue
		}
		if !ok {
			t.Errorf("ZADD %q: redis accepted (%s), ours rejected", in, r2)
			continue
		}
		if got := string(FormatDouble(f)); got != r2 {
			t.Errorf("ZADD %q: redis score %q, ours %q", in, r2, got)
		}
	}
}
