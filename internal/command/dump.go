package command

import (
	"math"
	"strings"

	"basalt/internal/jsondoc"
	"basalt/internal/num"
	"basalt/internal/rdb"
	"basalt/internal/store"
)

// DUMP and RESTORE (cluster.c in Redis): a key's value in Redis's DUMP
// format (internal/rdb), so keys move between redis-server and basalt.
// RESTORE decodes the whole payload before it writes anything, then writes
// the value member by member through the same paths as the type's own
// commands (RPUSH, SADD, HSET, ZADD...), so a big collection is stored as
// one entry per member, with the encoding flags those commands would set.
// A JSON document travels in RedisJSON's format (internal/rdb/module.go):
// RESTORE parses its text as JSON.SET parses a value and stores it
// compact, as JSON.SET would.
func init() {
	register(
		&Command{Name: "dump", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Categories: []string{"keyspace"}, Group: "generic", Since: "2.6.0",
			Summary: "Return a serialized version of the value stored at the specified key.", Tips: []string{"nondeterministic_output"},
			KeySpecs: []KeySpec{{Flags: []string{"RO", "access"}, Index: 1, KeyStep: 1}}, Run: cmdDump},
		&Command{Name: "restore", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Categories: []string{"keyspace", "dangerous"}, Group: "generic", Since: "2.6.0",
			Summary:  "Create a key using the provided serialized value, previously obtained using DUMP.",
			KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, Index: 1, KeyStep: 1}}, Run: cmdRestore},
	)
}

const (
	errBusyKey       = "BUSYKEY Target key name already exists."
	errDumpPayload   = "ERR DUMP payload version or checksum are wrong"
	errBadDataFormat = "ERR Bad data format"
	errRestoreTTL    = "ERR Invalid TTL value, must be >= 0"
	errRestoreIdle   = "ERR Invalid IDLETIME value, must be >= 0"
	errRestoreFreq   = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

func cmdDump(c *Ctx) {
	key := c.Args[1]
	m, ok := c.Tx.Lookup(key)
	if !ok {
		c.W.Null()
		return
	}
	c.W.Bulk(rdb.Encode(DumpValue(c.Tx, key, m)))
}

// DumpValue reads the whole value of key, whose metadata is m, in the form
// DUMP and the RDB file writer encode. A JSON document is its stored text,
// which is already the compact JSON RedisJSON's rdb_save writes.
func DumpValue(tx *store.Tx, key []byte, m store.Meta) *rdb.Value {
	c := &Ctx{Tx: tx}
	v := &rdb.Value{}
	switch m.Type {
	case store.TypeString:
		v.Kind, v.Str = rdb.KindString, c.Tx.ReadString(key, m)
	case store.TypeList:
		v.Kind = rdb.KindList
		c.Tx.Members(key, nil, nil, false, func(_, e []byte) bool {
			v.Members = append(v.Members, append([]byte(nil), e...))
			return true
		})
	case store.TypeSet:
		v.Kind = rdb.KindSet
		c.Tx.Members(key, nil, nil, false, func(sub, _ []byte) bool {
			v.Members = append(v.Members, append([]byte(nil), store.HashedMember(sub)...))
			return true
		})
	case store.TypeHash:
		v.Kind = rdb.KindHash
		hashFields(c, key, decodeHashHeader(m.Body), func(f, e []byte) bool {
			v.Members = append(v.Members, append([]byte(nil), f...))
			v.Values = append(v.Values, append([]byte(nil), e...))
			return true
		})
	case store.TypeZSet:
		v.Kind = rdb.KindZSet
		zsetOf(c, key, m).each(nil, nil, false, func(member []byte, score float64) bool {
			v.Members = append(v.Members, append([]byte(nil), member...))
			v.Scores = append(v.Scores, score)
			return true
		})
	case store.TypeStream:
		v.Kind, v.Stream = rdb.KindStream, dumpStream(c, key, m)
	case store.TypeJSON:
		v.Kind, v.Str = rdb.KindJSON, append([]byte(nil), m.Body...)
	default:
		panic("DumpValue: unknown type " + m.Type.String())
	}
	return v
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency], with Redis's checks in Redis's order. FREQ is checked
// and ignored: basalt has no LFU policy, under which Redis ignores it too.
func cmdRestore(c *Ctx) {
	key := c.Args[1]
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	var ok bool
	for i := 4; i < len(c.Args); i++ {
		more := i+1 < len(c.Args)
		switch opt := strings.ToLower(c.Arg(i)); {
		case opt == "replace":
			replace = true
		case opt == "absttl":
			absTTL = true
		case opt == "idletime" && more && freq == -1:
			if idle, ok = restoreInt(c, c.Args[i+1], math.MaxInt64, errRestoreIdle); !ok {
				return
			}
			i++
		case opt == "freq" && more && idle == -1:
			if freq, ok = restoreInt(c, c.Args[i+1], 255, errRestoreFreq); !ok {
				return
			}
			i++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if !replace && c.Tx.Exists(key) {
		c.W.Error(errBusyKey)
		return
	}
	ttl, ok := restoreInt(c, c.Args[2], math.MaxInt64, errRestoreTTL)
	if !ok {
		return
	}
	v, err := rdb.Decode(c.Args[3])
	if err != nil {
		if err == rdb.ErrVersion {
			c.W.Error(errDumpPayload)
		} else {
			c.W.Error(errBadDataFormat)
		}
		return
	}
	if v.Kind == rdb.KindJSON {
		// RedisJSON's rdb_load parses the text as JSON.SET parses its
		// value, and fails the load when it does not parse.
		doc, err := jsondoc.Parse(v.Str)
		if err != nil {
			c.W.Error(errBadDataFormat)
			return
		}
		v.Str = jsondoc.Append(nil, doc, nil)
	}
	deleted := replace && c.Tx.Delete(key)
	if ttl != 0 && !absTTL {
		ttl += c.Tx.Now // wraps on overflow into the past, as in Redis
	}
	if ttl != 0 && ttl <= c.Tx.Now {
		// Already expired: the key is not created (and a replaced one
		// is gone).
		if deleted {
			c.Tx.Notify(store.NotifyGeneric, "del", key)
		}
		c.W.OK()
		return
	}
	restoreValue(c, key, v, ttl)
	if idle >= 0 {
		c.Tx.SetIdle(key, idle)
	}
	c.Tx.Notify(store.NotifyGeneric, "restore", key)
	c.W.OK()
}

// restoreInt parses one of RESTORE's numbers, which must be in [0, most]:
// Redis's errors for a non-integer and for a number out of range (errRange).
func restoreInt(c *Ctx, arg []byte, most int64, errRange string) (int64, bool) {
	n, ok := num.ParseInt(arg)
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, false
	}
	if n < 0 || n > most {
		c.W.Error(errRange)
		return 0, false
	}
	return n, true
}

// restoreValue writes v under key, which does not exist, with expiry
// expireAt (0: none).
func restoreValue(c *Ctx, key []byte, v *rdb.Value, expireAt int64) {
	switch v.Kind {
	case rdb.KindString:
		c.Tx.WriteString(key, v.Str, expireAt)
	case rdb.KindList:
		l := newList(c.Tx, key)
		l.expire = expireAt
		for _, e := range v.Members {
			l.push(false, e)
		}
		l.save()
	case rdb.KindSet:
		var h sizeHeader
		for _, m := range v.Members {
			setAdd(c, key, m, &h)
		}
		c.Tx.Put(key, store.Meta{Type: store.TypeSet, ExpireAt: expireAt, Body: h.encode()})
	case rdb.KindHash:
		restoreHash(c, key, v.Members, v.Values, expireAt)
	case rdb.KindStream:
		restoreStream(c, key, v.Stream, expireAt)
	case rdb.KindJSON:
		// v.Str is the document as cmdRestore parsed and serialized it:
		// the compact text every JSON key holds.
		c.Tx.Put(key, store.Meta{Type: store.TypeJSON, ExpireAt: expireAt, Body: v.Str})
	case rdb.KindZSet:
		// Redis loads a sorted set as a skiplist and converts it to a
		// listpack only if it is small, so a big one keeps its -0 scores
		// from the first member on.
		z := &zset{c: c, key: key, meta: store.Meta{ExpireAt: expireAt}}
		z.h.big = len(v.Members) > zsetMaxListpackEntries
		for _, m := range v.Members {
			z.h.big = z.h.big || len(m) > zsetMaxListpackValue
		}
		for i, m := range v.Members {
			z.insert(m, v.Scores[i])
		}
		z.store()
	}
}
