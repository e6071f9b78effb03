package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultTimeout is the read and write deadline of each Conn call, so a hung
// server fails the test instead of hanging it.
var DefaultTimeout = 10 * time.Second

// Conn is a raw RESP connection. Methods without an error result call
// t.Fatalf on I/O errors, so they belong to the test goroutine; the *Err
// variants are for other goroutines and for tests that expect the connection
// to break (crash tests).
type Conn struct {
	Addr    string
	Timeout time.Duration // per call; DefaultTimeout unless changed

	// Redirects counts the MOVED replies this Conn followed (redirect.go).
	Redirects int

	t         testing.TB
	dialer    net.Dialer
	nc        net.Conn
	br        *bufio.Reader
	raw       []byte  // exact bytes of the last reply read
	follow    *follow // set where the Conn follows MOVED
	followErr error   // met while following, for the next read
}

// Dial connects to addr; the connection is closed in t.Cleanup.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	return dialWith(t, "tcp", addr, net.Dialer{Timeout: DefaultTimeout})
}

// DialFrom connects to addr from the local address from (an IP): a
// client on 127.0.0.2 is on loopback but not "local" to Redis.
func DialFrom(t testing.TB, addr, from string) *Conn {
	t.Helper()
	return dialWith(t, "tcp", addr, net.Dialer{Timeout: DefaultTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}})
}

// DialUnix connects to a unix socket.
func DialUnix(t testing.TB, path string) *Conn {
	t.Helper()
	return dialWith(t, "unix", path, net.Dialer{Timeout: DefaultTimeout})
}

// SkipTest, when set, may skip the test that dials (t.Skip): test/compat's
// TestMain skips there, by name, the tests that cannot run in its pass
// under Redis Cluster's rules.
var SkipTest func(t testing.TB)

func dialWith(t testing.TB, network, addr string, d net.Dialer) *Conn {
	t.Helper()
	if SkipTest != nil {
		SkipTest(t)
	}
	nc, err := d.Dial(network, addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c := newConn(addr, d, nc)
	c.t = t
	t.Cleanup(c.Close)
	return c
}

func newConn(addr string, d net.Dialer, nc net.Conn) *Conn {
	c := &Conn{Addr: addr, Timeout: DefaultTimeout, dialer: d, nc: nc, br: bufio.NewReader(nc)}
	if cluster := clusterOf(addr); cluster != nil {
		c.follow = &follow{cluster: cluster}
	}
	return c
}

// DialErr connects to addr without a test: for helpers that poll servers
// and goroutines. The caller closes the connection.
func DialErr(addr string) (*Conn, error) {
	d := net.Dialer{Timeout: DefaultTimeout}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return newConn(addr, d, nc), nil
}

// Command encodes args as a RESP multibulk command.
func Command(args ...string) []byte {
	if KeyTag != nil {
		args = KeyTag(args)
	}
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// Close closes the connection; it may be called more than once.
func (c *Conn) Close() { _ = c.nc.Close() }

// KeyTag, when set, rewrites the key arguments of every command Command
// encodes (so Do's and pipelines'): the differential tests' pass in cluster mode (BASALT_SHARDS)
// gives every key a hash tag, so that a scenario's keys share a slot as
// Redis Cluster's rules need, on both servers alike (test/compat's
// TestMain sets it; testutil cannot know the command table).
var KeyTag func(args []string) []string

// Do sends a command and reads one reply.
func (c *Conn) Do(args ...string) Reply {
	c.t.Helper()
	c.Send(Command(args...))
	return c.Read()
}

// DoErr is Do returning I/O and protocol errors instead of failing the test.
func (c *Conn) DoErr(args ...string) (Reply, error) {
	if err := c.SendErr(Command(args...)); err != nil {
		return Reply{}, err
	}
	return c.ReadErr()
}

// DoBytes sends raw bytes (e.g. an inline command) and returns the exact
// bytes of one reply.
func (c *Conn) DoBytes(raw []byte) []byte {
	c.t.Helper()
	c.Send(raw)
	_, b := c.ReadRaw()
	return b
}

// Send writes raw bytes; use it with Command to pipeline.
func (c *Conn) Send(raw []byte) {
	c.t.Helper()
	if err := c.SendErr(raw); err != nil {
		c.t.Fatalf("write to %s: %v", c.Addr, err)
	}
}

// SendErr is Send returning the error.
func (c *Conn) SendErr(raw []byte) error {
	if err := c.write(raw); err != nil {
		return err
	}
	if c.follow != nil {
		c.sent(raw)
	}
	return nil
}

func (c *Conn) write(raw []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.Timeout))
	_, err := c.nc.Write(raw)
	return err
}

// Read reads one reply.
func (c *Conn) Read() Reply {
	c.t.Helper()
	r, _ := c.ReadRaw()
	return r
}

// ReadRaw reads one reply and also returns its exact bytes.
func (c *Conn) ReadRaw() (Reply, []byte) {
	c.t.Helper()
	r, err := c.ReadErr()
	if err != nil {
		c.t.Fatalf("read from %s: %v", c.Addr, err)
	}
	return r, c.raw
}

// ReadErr is Read returning the error (io.EOF when the server closed).
func (c *Conn) ReadErr() (Reply, error) {
	if c.follow != nil {
		r, raw, err := c.readFollowing()
		c.raw = raw
		return r, err
	}
	r, raw, err := c.readSocket()
	c.raw = raw
	return r, err
}

// readSocket reads one reply from the connection.
func (c *Conn) readSocket() (Reply, []byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.Timeout))
	p := parser{r: c.br}
	r, err := p.reply()
	return r, p.raw, err
}

// Reply is one RESP2 or RESP3 reply. Compare replies by String(): two replies
// are equal iff their renderings are.
type Reply struct {
	Kind   byte    // type byte as sent: + - : $ * _ % ~ , # = ( > !
	Str    string  // + - $ ! = payload; , and ( exact text as sent; # "t" or "f"
	Int    int64   // : value; # 1 or 0
	Null   bool    // RESP2 null: $-1 (Kind '$') or *-1 (Kind '*'); RESP3 null is Kind '_'
	Elems  []Reply // * ~ > elements; % and | as key, value, key, value...
	Format string  // = verbatim format, e.g. "txt"
	Attr   []Reply // RESP3 attribute (|) sent before this reply, as key, value...
}

// IsError reports a simple or blob error.
func (r Reply) IsError() bool { return r.Kind == '-' || r.Kind == '!' }

// IsNil reports any null: $-1, *-1 or RESP3 _.
func (r Reply) IsNil() bool { return r.Null || r.Kind == '_' }

// ParseReply parses exactly one reply from b.
func ParseReply(b []byte) (Reply, error) {
	br := bufio.NewReader(bytes.NewReader(b))
	p := parser{r: br}
	r, err := p.reply()
	if err == nil && len(p.raw) != len(b) {
		err = fmt.Errorf("%d bytes after the reply", len(b)-len(p.raw))
	}
	return r, err
}

// maxBulk is Redis's proto-max-bulk-len; longer means a broken stream.
const maxBulk = 512 << 20

type parser struct {
	r   *bufio.Reader
	raw []byte // everything read so far
}

func (p *parser) line() (string, error) {
	b, err := p.r.ReadBytes('\n')
	p.raw = append(p.raw, b...)
	if err != nil {
		return "", err
	}
	if len(b) < 3 || b[len(b)-2] != '\r' {
		return "", fmt.Errorf("protocol error: bad line %q", b)
	}
	return string(b[:len(b)-2]), nil
}

func (p *parser) length(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > maxBulk {
		return 0, fmt.Errorf("protocol error: bad length %q", s)
	}
	return n, nil
}

func (p *parser) reply() (Reply, error) {
	line, err := p.line()
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Kind: line[0]}
	rest := line[1:]
	switch r.Kind {
	case '+', '-':
		r.Str = rest
	case ':':
		r.Int, err = strconv.ParseInt(rest, 10, 64)
	case ',', '(': // keep the exact text: 1.5 and 1.50 must differ
		r.Str = rest
	case '#':
		r.Str = rest
		switch rest {
		case "t":
			r.Int = 1
		case "f":
		default:
			err = fmt.Errorf("protocol error: bad boolean %q", line)
		}
	case '_':
		if rest != "" {
			err = fmt.Errorf("protocol error: bad null %q", line)
		}
	case '$', '!', '=':
		return p.bulk(r, rest)
	case '*', '~', '%', '>', '|':
		return p.aggregate(r, rest)
	default:
		err = fmt.Errorf("protocol error: unknown reply type in %q", line)
	}
	return r, err
}

func (p *parser) bulk(r Reply, rest string) (Reply, error) {
	n, err := p.length(rest)
	if err != nil {
		return r, err
	}
	if n < 0 {
		if r.Kind != '$' {
			return r, fmt.Errorf("protocol error: %c-1", r.Kind)
		}
		r.Null = true
		return r, nil
	}
	data := make([]byte, n+2)
	_, err = io.ReadFull(p.r, data)
	p.raw = append(p.raw, data...)
	if err != nil {
		return r, err
	}
	if data[n] != '\r' || data[n+1] != '\n' {
		return r, errors.New("protocol error: bulk string not followed by CRLF")
	}
	r.Str = string(data[:n])
	if r.Kind == '=' {
		if len(r.Str) < 4 || r.Str[3] != ':' {
			return r, fmt.Errorf("protocol error: verbatim string %q without format", r.Str)
		}
		r.Format, r.Str = r.Str[:3], r.Str[4:]
	}
	return r, nil
}

func (p *parser) aggregate(r Reply, rest string) (Reply, error) {
	n, err := p.length(rest)
	if err != nil {
		return r, err
	}
	if n < 0 {
		if r.Kind != '*' {
			return r, fmt.Errorf("protocol error: %c-1", r.Kind)
		}
		r.Null = true
		return r, nil
	}
	if r.Kind == '%' || r.Kind == '|' {
		n *= 2
	}
	r.Elems = make([]Reply, 0, min(n, 1024))
	for range n {
		e, err := p.reply()
		if err != nil {
			return r, err
		}
		r.Elems = append(r.Elems, e)
	}
	if r.Kind == '|' { // an attribute decorates the reply that follows it
		next, err := p.reply()
		next.Attr = append(r.Elems, next.Attr...)
		return next, err
	}
	return r, nil
}

// String renders the reply canonically, showing its type:
//
//	+OK  -ERR msg  :3  "abc"  !"blob err"  =txt:"verbatim"  ,1.5  (12345  #t
//	(nil) for $-1, (nil-array) for *-1, (null) for RESP3 _
//	["a", :1]  ~{"a", "b"}  %{"k": "v"}  >["message", ...]  |{"k": "v"} <reply>
//
// Bulk strings are Go-quoted. Simple strings and errors are bare, except
// inside aggregates when they hold delimiter characters, where they are
// quoted too; so the rendering is unambiguous.
func (r Reply) String() string {
	var b strings.Builder
	r.render(&b, true)
	return b.String()
}

func (r Reply) render(b *strings.Builder, top bool) {
	if r.Attr != nil {
		b.WriteString("|")
		renderElems(b, '{', '}', r.Attr, true)
		b.WriteByte(' ')
	}
	switch r.Kind {
	case '+', '-':
		b.WriteByte(r.Kind)
		if top || bare(r.Str) {
			b.WriteString(r.Str)
		} else {
			b.WriteString(strconv.Quote(r.Str))
		}
	case ',', '(':
		b.WriteByte(r.Kind)
		if bare(r.Str) && !strings.ContainsAny(r.Str, "()") {
			b.WriteString(r.Str)
		} else {
			b.WriteString(strconv.Quote(r.Str))
		}
	case ':':
		b.WriteString(":" + strconv.FormatInt(r.Int, 10))
	case '#':
		b.WriteString("#" + r.Str)
	case '_':
		b.WriteString("(null)")
	case '$':
		if r.Null {
			b.WriteString("(nil)")
		} else {
			b.WriteString(strconv.Quote(r.Str))
		}
	case '!':
		b.WriteString("!" + strconv.Quote(r.Str))
	case '=':
		b.WriteString("=" + r.Format + ":" + strconv.Quote(r.Str))
	case '*':
		if r.Null {
			b.WriteString("(nil-array)")
		} else {
			renderElems(b, '[', ']', r.Elems, false)
		}
	case '>':
		b.WriteByte('>')
		renderElems(b, '[', ']', r.Elems, false)
	case '~':
		b.WriteByte('~')
		renderElems(b, '{', '}', r.Elems, false)
	case '%':
		b.WriteByte('%')
		renderElems(b, '{', '}', r.Elems, true)
	default:
		fmt.Fprintf(b, "(invalid reply %q)", r.Kind)
	}
}

func renderElems(b *strings.Builder, open, close byte, elems []Reply, pairs bool) {
	b.WriteByte(open)
	for i, e := range elems {
		switch {
		case i == 0:
		case pairs && i%2 == 1:
			b.WriteString(": ")
		default:
			b.WriteString(", ")
		}
		e.render(b, false)
	}
	b.WriteByte(close)
}

// bare reports whether s can be rendered unquoted inside an aggregate.
func bare(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || strings.IndexByte(`"\,:[]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Sorted returns r with its top-level elements in a canonical order (map
// pairs by key), for replies whose order is unspecified (SMEMBERS, KEYS,
// HGETALL in RESP3). A RESP2 HGETALL array is sorted element-wise, which
// loses the pairing but still catches most differences.
func (r Reply) Sorted() Reply {
	type item struct {
		key   string
		elems []Reply
	}
	step := 1
	if r.Kind == '%' {
		step = 2
	}
	var items []item
	for i := 0; i+step <= len(r.Elems); i += step {
		e := r.Elems[i : i+step]
		var key strings.Builder
		for _, x := range e {
			key.WriteString(x.String() + "\x00")
		}
		items = append(items, item{key.String(), e})
	}
	slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
	out := r
	out.Elems = make([]Reply, 0, len(r.Elems))
	for _, it := range items {
		out.Elems = append(out.Elems, it.elems...)
	}
	if r.Elems == nil {
		out.Elems = nil
	}
	return out
}
