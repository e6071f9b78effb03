package compat

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// notifyDiff runs scripts on redis-server and basalt with a subscriber to
// every keyspace notification on each, and compares the replies and the
// messages pushed, in order, after every line.
type notifyDiff struct {
	t   *testing.T
	d   *testutil.Diff
	sub [2]*testutil.Conn // redis's, basalt's
	n   int
}

const notifyMarker = "__notify_marker__"

// newNotifyDiff connects to the pair on an empty key space, sets
// notify-keyspace-events on both (comparing the replies) and subscribes
// to __key*__:* and to the marker channel.
func newNotifyDiff(t *testing.T, p *pair, flags string) *notifyDiff {
	t.Helper()
	nd := &notifyDiff{t: t, d: p.diff(t)}
	nd.d.Do("CONFIG", "SET", "notify-keyspace-events", flags)
	for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
		c := testutil.Dial(t, addr)
		c.Send(testutil.Command("PSUBSCRIBE", "__key*__:*"))
		c.Read()
		c.Send(testutil.Command("SUBSCRIBE", notifyMarker))
		c.Read()
		nd.sub[i] = c
	}
	return nd
}

// run runs a script, one command per line (see Diff.Run). After each line
// the messages each subscriber got are compared, except after a line
// prefixed "@later ", whose messages are compared with the next line's
// (for an expiry that happens when the server gets to it, or inside
// MULTI). A line prefixed "@any " runs without comparing its replies (a
// random pick). "@sleep MS" waits.
func (nd *notifyDiff) run(script string) {
	nd.t.Helper()
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		line, later := strings.CutPrefix(line, "@later ")
		if ms, ok := strings.CutPrefix(line, "@sleep "); ok {
			n, _ := strconv.Atoi(ms)
			time.Sleep(time.Duration(n) * time.Millisecond)
		} else if cmd, ok := strings.CutPrefix(line, "@any "); ok {
			args, err := testutil.SplitArgs(cmd)
			if err != nil {
				nd.t.Fatalf("%q: %v", line, err)
			}
			nd.d.DoBoth(args...)
		} else {
			nd.d.Run(line)
		}
		if !later {
			nd.compare(line)
		}
	}
}

// compare publishes a marker on both servers and compares the messages
// each subscriber got before it.
func (nd *notifyDiff) compare(where string) {
	nd.t.Helper()
	nd.n++
	sameMessagesBefore(nd.t, where, "keyspace notifications", [2]*testutil.Conn{nd.d.Want, nd.d.Got}, nd.sub, notifyMarker, strconv.Itoa(nd.n))
}

// TestKeyspaceNotifications compares the events Redis and basalt publish
// for each type's commands, including commands that change nothing (no
// event) and keys that expire.
func TestKeyspaceNotifications(t *testing.T) {
	p := newPair(t)

	t.Run("Config", func(t *testing.T) {
		d := p.diff(t)
		for _, v := range []string{"", "K", "E", "g", "A", "KEA", "KEAn", "nAKE", "Em", "mn", "KEg$lshzxetd",
			"KEg$lshzxetdmn", "KEg$lshzxtd", "x", "KEz", "AA", "KEq", "kE", "a", " ", "K E"} {
			d.Do("CONFIG", "SET", "notify-keyspace-events", v)
			d.Do("CONFIG", "GET", "notify-keyspace-events")
		}
		d.Do("CONFIG", "SET", "notify-keyspace-events", "KEA", "maxclients", "x")
		d.Do("CONFIG", "GET", "notify-keyspace-events")
		d.Do("CONFIG", "SET", "notify-keyspace-events", "")
	})

	t.Run("Strings", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			SET a 1
			SET a 2
			SET a 3 NX
			SET a 4 XX GET
			SET b 1 XX
			SET c 1 PX 100000
			SET c 2 KEEPTTL
			SET c 1 EX 100 GET
			GETSET c 3
			GETDEL c
			GETDEL c
			SET d 1
			GETEX d EX 100
			GETEX d PERSIST
			GETEX d PERSIST
			GETEX d
			GETEX d PX 100000
			GETEX d EXAT 1
			GETEX d EX 100
			SETNX e 1
			SETNX e 2
			SETEX e 100 1
			PSETEX e 100000 1
			MSET e 1 f 2 e 3
			MSETNX g 1 e 1
			MSETNX g 1 h 1
			APPEND i x
			APPEND i y
			SETRANGE j 0 ""
			SETRANGE j 2 x
			SETRANGE j 0 ""
			INCR k
			INCRBY k 5
			DECR k
			DECRBY k 2
			INCRBYFLOAT k 1.5
			INCR a
			INCR nosuch
			SET k2 abc
			INCR k2
			INCRBYFLOAT k2 1
			GET a
			MGET a b
			STRLEN a
		`)
	})

	t.Run("BitmapsAndHLL", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			SETBIT l 3 1
			SETBIT l 3 1
			SETBIT l 3 0
			SETBIT l 100 0
			SET s abc
			SETBIT s 0 0
			BITFIELD m GET u8 0
			BITFIELD m SET u8 0 1
			BITFIELD m SET u8 0 1
			BITFIELD m INCRBY u8 0 1 GET u8 0
			BITFIELD m OVERFLOW FAIL INCRBY u2 0 100
			BITFIELD m2 OVERFLOW FAIL INCRBY u2 0 100
			BITOP AND n l m
			BITOP AND n nokey
			BITOP AND n nokey
			BITOP OR n l m
			PFADD o a
			PFADD o a
			PFADD o
			PFADD p
			PFMERGE o p
			PFMERGE q o
			PFCOUNT o
		`)
	})

	t.Run("Keys", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			SET a 1
			SET b 2
			DEL a b c
			DEL a
			SET a 1
			UNLINK a a
			SET a 1
			RENAME a a
			RENAME a b
			SET a 1
			RENAME a b
			RENAMENX b a
			SET b 1
			RENAMENX a b
			RENAME nosuch x
			COPY a c
			COPY a c
			COPY a c REPLACE
			COPY a c DB 1
			MOVE c 1
			MOVE a 1
			MOVE nosuch 1
			SELECT 1
			SET x 1
			DEL a c
			SELECT 0
			EXPIRE b 100
			EXPIRE b 100 NX
			EXPIRE b 200 GT
			PEXPIRE b 1000000
			EXPIREAT b 1
			EXPIRE nokey 10
			SET b 1 EX 100
			PERSIST b
			PERSIST b
			EXPIRE b -1
			SET t 1
			TOUCH t nokey
			EXISTS t
			TYPE t
			SWAPDB 0 1
			SELECT 1
			DEL t
			SWAPDB 0 1
			SELECT 0
			FLUSHDB
			SET x 1
			FLUSHALL
		`)
	})

	t.Run("Expiry", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			SET e1 v PX 100
			RPUSH e2 a b
			@sleep 400
			PEXPIRE e2 100
			@sleep 400
			SET e1 v
			HSET e3 f v
			PEXPIREAT e3 1
			@later SET e4 v PXAT 1
			@sleep 400
			EXPIRE e1 -1
			SET e5 v EX 100
			EXPIRE e5 0
		`)
	})

	t.Run("Lists", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			LPUSH l a b
			RPUSH l c
			LPUSHX nol a
			RPUSHX l d
			LPUSHX l z
			LPOP l
			RPOP l 0
			LPOP l 5
			LPOP l
			RPUSH l a b c d
			RPOPLPUSH l l2
			RPOPLPUSH l l
			LMOVE l l2 LEFT RIGHT
			LMOVE l l2 LEFT LEFT
			RPUSH l a
			LMOVE l l RIGHT LEFT
			LMOVE nol l LEFT LEFT
			RPUSH l a b c
			LINSERT l BEFORE b x
			LINSERT l BEFORE zz x
			LINSERT nol BEFORE zz x
			LSET l 0 q
			LREM l 0 zz
			LREM l 1 q
			LTRIM l 0 -1
			LTRIM l 0 0
			LTRIM nol 0 1
			LTRIM l 5 6
			RPUSH l a b
			LMPOP 2 nol l RIGHT COUNT 5
			LMPOP 1 nol LEFT
			RPUSH l a
			BLPOP l 1
			RPUSH l a b
			BRPOPLPUSH l l3 1
			BLMOVE l l3 RIGHT LEFT 1
			BLMPOP 1 1 l3 LEFT COUNT 1
			LPOP l2 10
			LRANGE l3 0 -1
		`)
	})

	t.Run("Blocked", func(t *testing.T) {
		// A blocked client served by another client's push: the push's
		// event, then the pop's.
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			XADD st 1-1 f v
			XGROUP CREATE st g $
		`)
		for _, c := range []struct {
			block []string
			push  string
		}{
			{[]string{"BLPOP", "bl", "5"}, "RPUSH bl a b"},
			{[]string{"BLMOVE", "bm", "bm2", "RIGHT", "LEFT", "5"}, "RPUSH bm a"},
			{[]string{"BZPOPMIN", "bz", "5"}, "ZADD bz 1 a"},
			{[]string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "st", ">"}, "XADD st 2-1 f v"},
		} {
			var conns [2]*testutil.Conn
			for i, addr := range []string{p.redis.Addr, p.basalt.Addr} {
				conns[i] = testutil.Dial(t, addr)
				conns[i].Send(testutil.Command(c.block...))
			}
			time.Sleep(100 * time.Millisecond)
			nd.run(c.push)
			if want, got := conns[0].Read(), conns[1].Read(); want.String() != got.String() {
				t.Errorf("%q: want %s, got %s", c.block, want, got)
			}
		}
	})

	t.Run("Hashes", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			HSET h a 1 b 2
			HSET h a 1
			HMSET h a 2
			HSETNX h a 1
			HSETNX h c 1
			HDEL h zz
			HDEL h a b
			HDEL nosuch a
			HINCRBY h n 1
			HINCRBYFLOAT h f 1.5
			HINCRBY h a x
			HDEL h c n f
			HINCRBY h2 x 1
			HINCRBYFLOAT h3 x 1
			HGET h2 x
		`)
	})

	t.Run("Sets", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			SADD s a b
			SADD s a
			SREM s zz
			SREM s a
			SMOVE s s2 b
			SADD s a
			SMOVE s s2 zz
			SMOVE s s a
			SMOVE s s2 a
			SADD s2 x
			SADD s a
			SMOVE s2 s a
			SADD s a b c d
			@any SPOP s
			SPOP s 0
			@any SPOP s 1
			@any SPOP s 10
			SPOP s
			SADD s a
			SPOP s
			SADD s a b c
			SADD t b c d
			SINTERSTORE d s t
			SINTERSTORE d s nokey
			SINTERSTORE d s nokey
			SUNIONSTORE d s t
			SDIFFSTORE d s t
			SDIFFSTORE d s s
			SUNIONSTORE s s t
			SINTERCARD 2 s t
		`)
	})

	t.Run("SortedSets", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			ZADD z 1 a 2 b
			ZADD z 1 a
			ZADD z NX 5 a
			ZADD z XX CH 5 a
			ZADD z INCR 1 a
			ZADD z NX INCR 1 a
			ZADD z GT 1 a
			ZADD z XX 1 nosuch
			ZINCRBY z 1 q
			ZINCRBY z 0 q
			ZREM z zz
			ZREM z q
			ZADD z 3 c 4 d 5 e
			ZREMRANGEBYSCORE z 100 200
			ZREMRANGEBYSCORE z 0 3
			ZREMRANGEBYRANK z 0 0
			ZREMRANGEBYLEX z - +
			ZADD z 1 a 2 b 3 c
			ZPOPMIN z
			ZPOPMAX z 0
			ZPOPMAX z 10
			ZPOPMIN z
			ZADD z 1 a 2 b 3 c
			ZADD y 1 b 2 c
			ZUNIONSTORE d 2 z y
			ZINTERSTORE d 2 z y
			ZINTERSTORE d 2 z nokey
			ZINTERSTORE d 2 z nokey
			ZDIFFSTORE d 2 z y
			ZRANGESTORE d2 z 0 -1
			ZRANGESTORE d2 z 5 6
			ZMPOP 1 z MIN COUNT 1
			BZPOPMIN z 1
			BZMPOP 1 1 z MAX COUNT 5
			ZADD z 0 a
			ZINCRBY z 0 a
			ZADD z nan a
		`)
	})

	t.Run("Streams", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			XADD s 1-1 a 1
			XADD s NOMKSTREAM 2-1 a 1
			XADD s2 NOMKSTREAM 2-1 a 1
			XADD s MAXLEN 1 3-1 a 1
			XADD s MAXLEN 5 4-1 a 1
			XTRIM s MAXLEN 5
			XTRIM s MAXLEN 1
			XDEL s 1-1
			XDEL s 4-1
			XSETID s 10-1
			XGROUP CREATE s g 0
			XGROUP CREATE s g 0
			XGROUP CREATE s3 g 0 MKSTREAM
			XGROUP SETID s g 0
			XGROUP CREATECONSUMER s g c
			XGROUP CREATECONSUMER s g c
			XADD s 11-1 a 1
			XADD s 12-1 a 1
			XREADGROUP GROUP g c2 COUNT 1 STREAMS s >
			XREADGROUP GROUP g c2 COUNT 1 STREAMS s >
			XREADGROUP GROUP g c5 COUNT 1 STREAMS s 0
			XREADGROUP GROUP g c6 STREAMS s >
			XACK s g 11-1
			XCLAIM s g c3 0 12-1
			XCLAIM s g c3b 0 9-1
			XAUTOCLAIM s g c4 0 0
			XGROUP DELCONSUMER s g c
			XGROUP DELCONSUMER s g nobody
			XGROUP DESTROY s g
			XGROUP DESTROY s g
			XADD s MAXLEN = 0 13-1 a 1
			XLEN s
		`)
	})

	t.Run("TransactionsAndScripts", func(t *testing.T) {
		nd := newNotifyDiff(t, p, "KEA")
		nd.run(`
			@later MULTI
			@later SET a 1
			@later LPUSH l x
			@later DEL a nosuch
			@later SELECT 2
			@later SET b 1
			EXEC
			SELECT 0
			EVAL "redis.call('SET', KEYS[1], 'v'); redis.call('EXPIRE', KEYS[1], 100); return redis.call('DEL', KEYS[1])" 1 k
			EVAL "return redis.call('INCR', KEYS[1])" 1 k
			WATCH k
			SET k 5
			@later MULTI
			@later INCR k
			EXEC
			@later MULTI
			@later INCR k
			@later SET k x
			@later INCR k
			EXEC
		`)
	})

	t.Run("Classes", func(t *testing.T) {
		// Only some classes, one channel kind, new-key events.
		nd := newNotifyDiff(t, p, "Kl")
		nd.run(`
			SET a 1
			LPUSH l a
			DEL l a
		`)
		nd.d.Do("CONFIG", "SET", "notify-keyspace-events", "Eg$")
		nd.run(`
			SET a 1
			LPUSH l a
			DEL l a
		`)
		nd.d.Do("CONFIG", "SET", "notify-keyspace-events", "KEAn")
		nd.run(`
			SET a 1
			SET a 2
			RPUSH l a
			RENAME a b
			SET a 1
			RENAME a b
			COPY b c
			COPY b c REPLACE
			SADD s a
			SUNIONSTORE s2 s
			SUNIONSTORE s2 s
			ZADD z 1 a
			ZUNIONSTORE z2 1 z
			ZUNIONSTORE z2 1 z
			BITOP OR bo a
			BITOP OR bo a
			XGROUP CREATE st g $ MKSTREAM
			PFMERGE hll nokey
		`)
		nd.d.Do("CONFIG", "SET", "notify-keyspace-events", "KEm")
		keymiss := nd.run
		if testutil.ClusterMode() > 1 {
			// Reads go to the leader, whose subscribers get the keymiss
			// events: not this follower's (see README).
			keymiss = func(string) {}
		}
		keymiss(`
			SET a 1
			GET a
			GET nosuch
			MGET a b c
			EXISTS b b a
			TOUCH b
			TYPE b
			TTL b
			PEXPIRETIME b
			OBJECT ENCODING b
			KEYS b
			@unordered KEYS *
			@any RANDOMKEY
			DBSIZE
			STRLEN b
			GETRANGE b 0 1
			SUBSTR b 0 1
			GETBIT b 0
			BITCOUNT b
			BITPOS b 1
			BITFIELD_RO b GET u8 0
			LCS a b
			PFCOUNT p
			PFCOUNT p q
			LLEN l
			LINDEX l 0
			LRANGE l 0 -1
			LPOS l a
			HGET h f
			HMGET h a b
			HGETALL h
			HEXISTS h f
			HLEN h
			HRANDFIELD h
			SCARD s
			SISMEMBER s m
			SMISMEMBER s a b
			SMEMBERS s
			SRANDMEMBER s
			SSCAN s 0
			SUNION s t
			SINTERCARD 1 s
			ZCARD z
			ZSCORE z m
			ZMSCORE z a b
			ZRANGE z 0 -1
			ZRANGEBYSCORE z 0 1
			ZCOUNT z 0 1
			ZRANDMEMBER z
			ZUNION 2 z y
			XLEN x
			XRANGE x - +
			XREVRANGE x + -
			XINFO STREAM x
			XREAD STREAMS x 0
			XREAD COUNT 1 STREAMS x y 0 0
			XREAD STREAMS x x 0 0
			GETEX nosuch
			GETDEL nosuch
			COPY nosuch x
			SUNIONSTORE d nosuch
			GETSET gs1 x
			SET gs2 x GET
			XACK nox g 1-1
			XCLAIM nox g c 0 1-1
			XAUTOCLAIM nox g c 0 0
			LMPOP 1 nol LEFT
			ZMPOP 1 noz MIN
			SMOVE nos1 nos2 m
			LINSERT nol BEFORE a b
			HINCRBY noh f 1
			ZINCRBY noz 1 m
			SETBIT nob 1 1
			BITFIELD nobf GET u8 0
			PFADD nohll a
			XADD nost NOMKSTREAM * a 1
			EXPIRE nosuch 10
			RENAME nosuch x
			LPOS nol a
			XPENDING x g
			EVAL_RO "return redis.call('GET', KEYS[1])" 1 e
			EVAL "return redis.call('GET', KEYS[1])" 1 e
			@later MULTI
			@later GET m1
			@later EXISTS m1
			EXEC
			@later MULTI
			@later GET m1
			@later SET m2 1
			@later LLEN m3
			EXEC
			INCR nosuch
			DEL nosuch
			RPOPLPUSH nosuch x
			WATCH nosuch
			UNWATCH
		`)
		nd.d.Do("CONFIG", "SET", "notify-keyspace-events", "gK")
		nd.run(`
			SET a 1
			DEL a
		`)
	})
}

// TestKeyspaceNotificationsJSON checks the JSON commands' events against
// RedisJSON's names (class d, "module"); no oracle has RedisJSON here.
func TestKeyspaceNotificationsJSON(t *testing.T) {
	b := testutil.StartBasalt(t, "", "--notify-keyspace-events", "KEd")
	c := testutil.Dial(t, b.Addr)
	sub := testutil.Dial(t, b.Addr)
	sub.Send(testutil.Command("PSUBSCRIBE", "__keyspace@0__:*"))
	sub.Read()
	sub.Send(testutil.Command("SUBSCRIBE", notifyMarker))
	sub.Read()
	steps := []struct {
		cmd    []string
		events string
	}{
		{[]string{"JSON.SET", "j", "$", `{"a":1,"b":[1,2],"s":"x","t":true,"o":{"k":1}}`}, "json.set"},
		{[]string{"JSON.SET", "j", "$.nosuch.x", "1"}, ""},
		{[]string{"JSON.SET", "j", "$.a", "2", "NX"}, ""},
		{[]string{"JSON.NUMINCRBY", "j", "$.a", "1"}, "json.numincrby"},
		{[]string{"JSON.NUMINCRBY", "j", "$.s", "1"}, ""},
		{[]string{"JSON.NUMMULTBY", "j", "$.a", "2"}, "json.nummultby"},
		{[]string{"JSON.STRAPPEND", "j", "$.s", `"y"`}, "json.strappend"},
		{[]string{"JSON.ARRAPPEND", "j", "$.b", "3"}, "json.arrappend"},
		{[]string{"JSON.ARRINSERT", "j", "$.b", "0", "0"}, "json.arrinsert"},
		{[]string{"JSON.ARRPOP", "j", "$.b"}, "json.arrpop"},
		{[]string{"JSON.ARRTRIM", "j", "$.b", "0", "1"}, "json.arrtrim"},
		{[]string{"JSON.TOGGLE", "j", "$.t"}, "json.toggle"},
		{[]string{"JSON.CLEAR", "j", "$.o"}, "json.clear"},
		{[]string{"JSON.CLEAR", "j", "$.o"}, ""},
		{[]string{"JSON.MERGE", "j", "$", `{"m":1}`}, "json.merge"},
		// One json.mset per triplet that changed its document.
		{[]string{"JSON.MSET", "j", "$.a", "7", "j2", "$", "1", "j", "$.nosuch.x", "1", "j", "$.z", "1"}, "json.mset json.mset json.mset"},
		{[]string{"JSON.MSET", "j", "$.nosuch.x", "1"}, ""},
		{[]string{"JSON.MSET", "j", "$.a", "8", "nokey", "$.x", "1"}, ""}, // an error: nothing changes
		{[]string{"JSON.DEL", "j", "$.m"}, "json.del"},
		{[]string{"JSON.DEL", "j", "$.nosuch"}, ""},
		{[]string{"JSON.FORGET", "j"}, "json.del"},
		{[]string{"JSON.DEL", "j"}, ""},
		{[]string{"SET", "j", "1"}, ""}, // class $ is off
	}
	for i, s := range steps {
		c.Do(s.cmd...)
		c.Do("PUBLISH", notifyMarker, strconv.Itoa(i))
		var got []string
		for {
			r := sub.Read()
			if r.Elems[1].Str == notifyMarker {
				break
			}
			got = append(got, r.Elems[3].Str)
		}
		if strings.Join(got, " ") != s.events {
			t.Errorf("%q: events %q, want %q", s.cmd, got, s.events)
		}
	}
}
