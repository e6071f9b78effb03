package compat

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// trackDiff drives client-side caching on redis-server and basalt: on
// each, a tracking client (RESP3, subscribed to a marker channel) and a
// writer. Lines starting "T " run on the tracking client, "W " on the
// writer; after a writer's line the writer publishes a marker, and the
// messages the tracking client got before it (invalidations) are compared.
// In a cluster the marker goes through the log behind the write, so the
// follower's invalidation comes first there too.
type trackDiff struct {
	t      *testing.T
	tr, wr [2]*testutil.Conn // redis's, basalt's
	msgs   [2]*testutil.Conn // where the messages arrive: tr, or a redirect's target
	n      int
}

const trackMarker = "__track_marker__"

func newTrackDiff(t *testing.T, p *pair, proto int) *trackDiff {
	t.Helper()
	p.diff(t) // an empty key space
	td := &trackDiff{t: t}
	for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
		td.tr[i], td.wr[i] = testutil.Dial(t, addr), testutil.Dial(t, addr)
		if proto == 3 {
			td.tr[i].Do("HELLO", "3")
			td.tr[i].Send(testutil.Command("SUBSCRIBE", trackMarker))
			td.tr[i].Read()
		}
	}
	td.msgs = td.tr
	if proto == 3 {
		td.compareMessages("setup") // a follower has applied the FLUSHALL
	}
	return td
}

// run runs a script of "T cmd" and "W cmd" lines.
func (td *trackDiff) run(script string) {
	td.t.Helper()
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		who, cmd, _ := strings.Cut(line, " ")
		args, err := testutil.SplitArgs(cmd)
		if err != nil {
			td.t.Fatalf("%q: %v", line, err)
		}
		var got [2][]string
		for i := range td.tr {
			if who == "T" {
				got[i] = td.replyOf(td.tr[i], args)
			} else {
				got[i] = []string{td.wr[i].Do(args...).String()}
			}
		}
		if !slices.Equal(got[0], got[1]) {
			td.t.Errorf("%s\n  want: %s\n  got:  %s", line, strings.Join(got[0], "\n        "), strings.Join(got[1], "\n        "))
		}
		if who == "W" {
			td.compareMessages(line)
		}
	}
}

// replyOf sends args on c and returns what came back up to and including
// the command's reply: the push messages before it, then the reply.
func (td *trackDiff) replyOf(c *testutil.Conn, args []string) []string {
	c.Send(testutil.Command(args...))
	var out []string
	for {
		r := c.Read()
		out = append(out, r.String())
		if r.Kind != '>' {
			return out
		}
	}
}

// compareMessages publishes a marker on both servers and compares what
// each tracking client got before it.
func (td *trackDiff) compareMessages(where string) {
	td.t.Helper()
	td.n++
	sameMessagesBefore(td.t, "after "+where, "messages", td.wr, td.msgs, trackMarker, strconv.Itoa(td.n))
}

// TestTracking compares CLIENT TRACKING's replies, errors and invalidation
// messages with Redis's, in the default, OPTIN, OPTOUT and BCAST modes.
func TestTracking(t *testing.T) {
	p := newPair(t)

	t.Run("Errors", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			CLIENT TRACKING
			CLIENT TRACKING maybe
			CLIENT TRACKING on foo
			CLIENT TRACKING on prefix a
			CLIENT TRACKING on bcast optin
			CLIENT TRACKING on optin optout
			CLIENT TRACKING on redirect x
			CLIENT TRACKING on redirect 999999
			CLIENT TRACKING on bcast prefix a prefix ab
			CLIENT TRACKING on bcast prefix ab prefix a
			CLIENT TRACKING on bcast prefix a prefix a
			CLIENT CACHING yes
			CLIENT CACHING maybe
			CLIENT GETREDIR
			CLIENT TRACKINGINFO
			CLIENT TRACKING on optin
			CLIENT CACHING no
			CLIENT CACHING maybe
			CLIENT CACHING yes
			CLIENT TRACKINGINFO
			CLIENT GETREDIR
			CLIENT TRACKING on optout
			CLIENT TRACKING on bcast
			CLIENT TRACKING off
			CLIENT TRACKINGINFO
			CLIENT TRACKING on optout noloop
			CLIENT CACHING yes
			CLIENT CACHING no
			CLIENT TRACKINGINFO
			CLIENT TRACKING off
			CLIENT TRACKING on bcast prefix a prefix b
			CLIENT TRACKING on bcast prefix ab
			CLIENT TRACKING on bcast prefix c
			CLIENT TRACKINGINFO
			CLIENT TRACKING on
			CLIENT TRACKING off
			CLIENT GETREDIR
		`)
		d.Proto(3)
		d.Run(`
			CLIENT TRACKING on optin
			CLIENT CACHING yes
			CLIENT TRACKINGINFO
			CLIENT TRACKING off
			CLIENT TRACKINGINFO
		`)
		for _, sub := range []string{"tracking", "caching", "getredir", "trackinginfo"} {
			want, got := d.DoBoth("COMMAND", "INFO", "client|"+sub)
			sameInfoEntry(t, want.Elems[0], got.Elems[0])
		}
	})

	t.Run("Default", func(t *testing.T) {
		td := newTrackDiff(t, p, 3)
		td.run(`
			T CLIENT TRACKING on
			T GET a
			T MGET b c
			T HGET h f
			T ZSCORE z m
			W SET a 1
			W SET a 2
			W MSET b 1 c 2 d 3
			W HSET h f 1
			W HSET h f 2
			W ZADD z 1 m
			T GET a
			T HGET h f
			W HINCRBY h f 1
			W DEL a
			# the tracking client's own write: after its reply
			T GET a
			T SET a 5
			W PING
			T GET a
			W EXPIRE a 100
			W PERSIST a
			T GET a
			W FLUSHALL
			W SET a 1
			T EXISTS a
			W DEL a
			T PFCOUNT hll
			T SORT_RO l
			T EVAL "return redis.call('get', KEYS[1])" 1 s
			W PFADD hll x
			W RPUSH l 3 1 2
			W SET s 1
			T CLIENT TRACKING off
			T GET a
			W SET a 2
		`)
	})

	t.Run("NoLoop", func(t *testing.T) {
		if testutil.ClusterMode() > 0 {
			t.Skip("a follower cannot tell its client's writes in the log: NOLOOP does not hold back their invalidations there (README)")
		}
		td := newTrackDiff(t, p, 3)
		td.run(`
			T CLIENT TRACKING on noloop
			T GET a
			T SET a 1
			W PING
			T GET a
			W SET a 2
		`)
	})

	t.Run("OptInOptOut", func(t *testing.T) {
		td := newTrackDiff(t, p, 3)
		td.run(`
			T CLIENT TRACKING on optin
			T GET a
			T CLIENT CACHING yes
			T GET b
			T GET c
			W MSET a 1 b 2 c 3
			T CLIENT CACHING yes
			T MULTI
			T GET a
			T PTTL a
			T EXEC
			T GET b
			W MSET a 2 b 3
			# a read queued in MULTI is tracked when EXEC runs it
			T CLIENT CACHING yes
			T MULTI
			T GET q
			W SET q 1
			T EXEC
			W SET q 2
			T CLIENT TRACKING off
			T CLIENT TRACKING on optout
			T CLIENT CACHING no
			T GET a
			T GET b
			W MSET a 3 b 4
		`)
	})

	t.Run("Broadcast", func(t *testing.T) {
		td := newTrackDiff(t, p, 3)
		td.run(`
			T CLIENT TRACKING on bcast prefix user: prefix job:
			W SET user:1 a
			W MSET user:2 b other c job:9 d
			W SET other x
			W DEL user:1 user:2
			T CLIENT TRACKING off
			T CLIENT TRACKING on bcast
			W SET anything 1
		`)
	})

	t.Run("Info", func(t *testing.T) {
		td := newTrackDiff(t, p, 3)
		td.run(`
			T CLIENT TRACKING on
			T MGET i1 i2 i3
			W SET i1 x
		`)
		bc := testutil.Dial(t, p.redis.Addr)
		bb := testutil.Dial(t, p.basalt.Addr)
		for _, c := range []*testutil.Conn{bc, bb} {
			c.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "y")
		}
		// The figures of INFO: tracking clients, keys, items and prefixes
		// (the earlier subtests' clients are gone: their IDs stay in the
		// tables of both, as keys they read were never written).
		fields := func(c *testutil.Conn) string {
			var out []string
			for _, sec := range []string{"clients", "stats"} {
				for _, l := range strings.Split(c.Do("INFO", sec).Str, "\r\n") {
					if strings.HasPrefix(l, "tracking_") {
						out = append(out, l)
					}
				}
			}
			return strings.Join(out, " ")
		}
		want, got := fields(bc), fields(bb)
		for deadline := time.Now().Add(2 * time.Second); want != got && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond) // a closed connection is noticed a little later
			want, got = fields(bc), fields(bb)
		}
		if want != got || !strings.Contains(got, "tracking_clients:2") {
			t.Errorf("INFO tracking figures: want %q, got %q", want, got)
		}
	})

	t.Run("RedirectRESP2", func(t *testing.T) {
		// A RESP2 client gets invalidations as messages of the
		// __redis__:invalidate channel on another connection.
		td := newTrackDiff(t, p, 2)
		var sub [2]*testutil.Conn
		var ids [2]int64
		for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
			sub[i] = testutil.Dial(t, addr)
			ids[i] = sub[i].Do("CLIENT", "ID").Int
			sub[i].Send(testutil.Command("SUBSCRIBE", "__redis__:invalidate", trackMarker))
			sub[i].Read()
			sub[i].Read()
		}
		td.msgs = sub
		td.compareMessages("setup")
		for i, id := range ids {
			if r := td.tr[i].Do("CLIENT", "TRACKING", "on", "REDIRECT", strconv.FormatInt(id, 10)); r.String() != "+OK" {
				t.Fatalf("CLIENT TRACKING on REDIRECT: %v", r)
			}
			if r := td.tr[i].Do("CLIENT", "GETREDIR"); r.Int != id {
				t.Errorf("CLIENT GETREDIR: %v, want %d", r, id)
			}
		}
		td.run(`
			T GET k
			T MGET k2 k3
			W SET k 1
			W MSET k2 1 k3 2
			W FLUSHALL
		`)
	})
}
