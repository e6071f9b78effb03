package testutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Diff sends the same commands to two servers, Want (the redis-server oracle)
// and Got (basalt), and reports every reply that differs with t.Errorf,
// carrying on with the test.
type Diff struct {
	Want, Got *Conn
	t         testing.TB
}

// NewDiff connects to want (redis) and got (basalt).
func NewDiff(t testing.TB, want, got string) *Diff {
	t.Helper()
	return &Diff{Want: Dial(t, want), Got: Dial(t, got), t: t}
}

// StartPair starts redis-server and basalt (default arguments), both with an
// empty data set. With BASALT_CLUSTER=N in the environment, basalt is a
// follower of an N-node cluster, so commands go through forwarding; with
// BASALT_SHARDS=N, both run in cluster mode (basalt with N shards).
func StartPair(t testing.TB) (redis, basalt *Proc) {
	t.Helper()
	if n := ShardMode(); n > 0 {
		// BASALT_SHARDS=4: against Redis Cluster's rules, on both sides;
		// with BASALT_NODES=3, through a 3-node cluster, as a cluster
		// client: on a node that does not lead the slot of the keys' hash
		// tag (KeyTag), every Conn dialed to the cluster following MOVED
		// (redirect.go).
		redis = StartRedisCluster(t)
		args := []string{"--cluster-enabled", "yes", "--cluster-shards", strconv.Itoa(n)}
		nodes := NodesMode()
		if nodes < 2 {
			return redis, StartBasalt(t, "", args...)
		}
		if n%nodes != 0 {
			t.Fatalf("BASALT_SHARDS=%d must be a multiple of BASALT_NODES=%d, so the leaders balance", n, nodes)
		}
		c := StartCluster(t, nodes, args...)
		c.WaitBalanced(t, 20*time.Second, n/nodes)
		var addrs []string
		for _, p := range c.Nodes {
			addrs = append(addrs, p.Addr)
		}
		followMoved(t, addrs)
		return redis, c.Nodes[(c.SlotLeader(t, "{t}")+1)%nodes]
	}
	redis = StartRedis(t)
	if n := ClusterMode(); n > 1 {
		// BASALT_CLUSTER=3: the same tests, through a follower of a cluster.
		c := StartCluster(t, n)
		basalt = c.Nodes[c.Follower(t)]
	} else {
		basalt = StartBasalt(t, "")
	}
	// Fresh directories are empty already; FLUSHALL makes sure of it.
	for _, p := range []*Proc{redis, basalt} {
		c := Dial(t, p.Addr)
		if r := c.Do("FLUSHALL"); r.String() != "+OK" {
			t.Errorf("FLUSHALL on %s: %v", p.name, r)
		}
		c.Close()
	}
	return redis, basalt
}

// NewPairDiff starts redis-server and basalt and connects a Diff to them.
func NewPairDiff(t testing.TB) *Diff {
	t.Helper()
	redis, basalt := StartPair(t)
	return NewDiff(t, redis.Addr, basalt.Addr)
}

// DoBoth sends a command to both servers and returns both replies, for
// checks that exact comparison cannot do (TTLs, HELLO, INFO...).
func (d *Diff) DoBoth(args ...string) (want, got Reply) {
	d.t.Helper()
	return d.Want.Do(args...), d.Got.Do(args...)
}

// Do sends a command to both servers and reports a mismatch; it returns
// whether the replies matched.
func (d *Diff) Do(args ...string) bool {
	d.t.Helper()
	return d.check("", args, false)
}

// DoUnordered is Do for replies in unspecified order: both replies are
// compared after Reply.Sorted.
func (d *Diff) DoUnordered(args ...string) bool {
	d.t.Helper()
	return d.check("", args, true)
}

// Proto switches both connections to RESP version v with HELLO, without
// comparing the replies (they hold server name, version and client id).
func (d *Diff) Proto(v int) {
	d.t.Helper()
	want, got := d.DoBoth("HELLO", strconv.Itoa(v))
	if want.IsError() || got.IsError() {
		d.t.Errorf("HELLO %d: want %v, got %v", v, want, got)
	}
}

func (d *Diff) check(where string, args []string, unordered bool) bool {
	d.t.Helper()
	want, got := d.DoBoth(args...)
	if unordered {
		want, got = want.Sorted(), got.Sorted()
	}
	if err := Compare(args, want, got); err != nil {
		d.t.Errorf("%s%v", where, err)
		return false
	}
	return true
}

// Run runs a script, one command per line, tokenized like redis-cli (see
// SplitArgs). Blank lines and lines starting with # are skipped. A line
// starting with "@unordered " is compared with DoUnordered.
func (d *Diff) Run(script string) {
	d.t.Helper()
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		line, unordered := strings.CutPrefix(line, "@unordered ")
		where := fmt.Sprintf("script line %d: ", i+1)
		args, err := SplitArgs(line)
		if err != nil {
			d.t.Errorf("%s%q: %v", where, line, err)
			continue
		}
		if len(args) == 0 {
			continue
		}
		d.check(where, args, unordered)
	}
}

// Compare returns nil if the replies are equal, type included, else an error
// showing the command and both renderings.
func Compare(args []string, want, got Reply) error {
	w, g := want.String(), got.String()
	if w == g {
		return nil
	}
	return fmt.Errorf("%s\n  want: %s\n  got:  %s", strings.Join(quoteArgs(args), " "), w, g)
}

// quoteArgs renders arguments as they would be typed in redis-cli.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		plain := a != ""
		for j := 0; j < len(a); j++ {
			plain = plain && a[j] > ' ' && a[j] <= '~' && strings.IndexByte(`"'\`, a[j]) < 0
		}
		if plain {
			out[i] = a
		} else {
			out[i] = strconv.Quote(a)
		}
	}
	return out
}

// SplitArgs splits a line into arguments like redis-cli (sdssplitargs):
// "double quotes" understand \n \r \t \b \a \" \\ and \xHH (any other \c is c),
// 'single quotes' understand only \', and a closing quote must be followed by
// a space or the end of the line. Quotes may start in the middle of a word:
// a"b c" is one argument, ab c.
func SplitArgs(line string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		var cur []byte
		inDouble, inSingle := false, false
		for done := false; !done; i++ {
			if i == len(line) {
				if inDouble || inSingle {
					return nil, errors.New("unbalanced quotes")
				}
				break
			}
			c := line[i]
			switch {
			case inDouble:
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					n, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
					cur = append(cur, byte(n))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					cur = append(cur, unescape(line[i]))
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errors.New("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, c)
				}
			case inSingle:
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errors.New("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, c)
				}
			case isSpace(c):
				done = true
			case c == '"':
				inDouble = true
			case c == '\'':
				inSingle = true
			default:
				cur = append(cur, c)
			}
		}
		args = append(args, string(cur))
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isSpace(c byte) bool { return strings.IndexByte(" \t\n\v\f\r", c) >= 0 }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
