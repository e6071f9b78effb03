package command

import (
	"strings"

	"basalt/internal/num"
)

// HGETDEL, HGETEX and HSETEX (Redis 8.0): reads and writes of hash fields
// that delete them or set their expiry in the same command (registered
// in hash_expire.go).

// getReplied is get that also replies the value (nil for a missing field).
func (w *hashWriter) getReplied(field []byte) ([]byte, hashSlot) {
	v, slot := w.get(field)
	if slot.exists {
		w.c.W.Bulk(v)
	} else {
		w.c.W.Null()
	}
	return v, slot
}

// HGETDEL key FIELDS numfields field ...: the values (nil for a missing
// field), and the fields deleted.
func cmdHGetDel(c *Ctx) {
	w, fields, ok := hashFieldsForWrite(c, errNumFieldsHTTL, func() (int, bool) { return 2, true }, c.W.Null)
	if !ok {
		return
	}
	deleted := 0
	for _, f := range fields {
		if _, slot := w.getReplied(f); slot.exists {
			w.del(f)
			deleted++
		}
	}
	if deleted > 0 {
		w.done("hdel")
	}
}

// HGETEX key [EX seconds | PX ms | EXAT unix-seconds | PXAT unix-ms |
// PERSIST] FIELDS numfields field ...: the values, and the existing
// fields' expiry set (the field deleted if the time is past) or removed.
func cmdHGetEx(c *Ctx) {
	opt := strings.ToLower(c.Arg(2))
	var at int64
	w, fields, ok := hashFieldsForWrite(c, errNumFieldsHTTL, func() (int, bool) {
		switch opt {
		case "persist":
			return 3, true
		case "ex", "px", "exat", "pxat":
			var ok bool
			at, ok = parseFieldExpire(c, opt, c.Args[3])
			return 4, ok
		}
		opt = ""
		return 2, true
	}, c.W.Null)
	if !ok {
		return
	}
	converted := !w.h.ttls && opt != "" && opt != "persist"
	if converted {
		w.keepTTLs()
	}
	updated, deleted := 0, 0
	for _, f := range fields {
		v, slot := w.getReplied(f)
		switch {
		case !slot.exists, opt == "":
		case opt == "persist":
			if slot.expireAt != 0 {
				w.setTTL(f, v, slot, 0)
			}
			updated++ // Redis counts (and raises "hpersist" for) a field without TTL too
		case at <= c.Tx.Now:
			w.del(f)
			deleted++
		default:
			w.setTTL(f, v, slot, at)
			updated++
		}
	}
	event := "hexpire"
	if opt == "persist" {
		event = "hpersist"
	}
	w.finish(deleted, updated, event, converted)
}

// hsetexOptions are HSETEX's options: FNX or FXX, and EX, PX, EXAT, PXAT
// (at, the expiry) or KEEPTTL.
type hsetexOptions struct {
	fnx, fxx, keepTTL, setTTL bool
	at                        int64
	fields                    int // where the fields and values start
}

// parseHSetEx parses HSETEX's arguments as Redis's hsetexParseArgs does,
// errors included. On an error it has replied.
func parseHSetEx(c *Ctx) (o hsetexOptions, ok bool) {
	errArity := WrongArity("hsetex")
	for i := 2; i < len(c.Args); i++ {
		switch a := strings.ToLower(c.Arg(i)); a {
		case "fields":
			if i >= len(c.Args)-3 {
				c.W.Error(errArity)
				return o, false
			}
			n, ok := num.ParseInt(c.Args[i+1])
			if !ok || n < 1 || n > 1<<31-1 {
				c.W.Error("ERR invalid number of fields")
				return o, false
			}
			if rest := int64(len(c.Args) - i - 2); rest%2 != 0 || n != rest/2 {
				c.W.Error(errArity)
				return o, false
			}
			o.fields = i + 2
			return o, true
		case "fnx", "fxx":
			if o.fnx || o.fxx {
				c.W.Error("ERR Only one of FXX or FNX arguments can be specified")
				return o, false
			}
			o.fnx, o.fxx = a == "fnx", a == "fxx"
		case "keepttl", "ex", "px", "exat", "pxat":
			if o.keepTTL || o.setTTL {
				c.W.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
				return o, false
			}
			if a == "keepttl" {
				o.keepTTL = true
				continue
			}
			if i >= len(c.Args)-1 {
				c.W.Error("ERR missing expire time")
				return o, false
			}
			i++
			if o.at, ok = parseFieldExpire(c, a, c.Args[i]); !ok {
				return o, false
			}
			o.setTTL = true
		default:
			c.W.Error("ERR unknown argument: " + c.Arg(i))
			return o, false
		}
	}
	c.W.Error(errFieldsMissing)
	return o, false
}

// HSETEX key [FNX | FXX] [EX seconds | PX ms | EXAT unix-seconds | PXAT
// unix-ms | KEEPTTL] FIELDS numfields field value ...: 1 once the fields
// are set (deleted at once if the time is past), 0 if FNX or FXX is not
// met. Without an expiry option the fields lose their TTLs, as with HSET.
func cmdHSetEx(c *Ctx) {
	o, ok := parseHSetEx(c)
	if !ok {
		return
	}
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	pairs := c.Args[o.fields:]
	if o.fnx || o.fxx {
		for i := 0; i < len(pairs); i += 2 {
			if _, slot := w.get(pairs[i]); slot.exists != o.fxx {
				c.W.Int(0)
				return
			}
		}
	}
	if o.setTTL {
		w.keepTTLs()
	}
	w.tryConvert(pairs)
	updated, deleted := 0, 0
	for i := 0; i < len(pairs); i += 2 {
		f, v := pairs[i], pairs[i+1]
		_, slot := w.get(f)
		switch {
		case !o.setTTL && !o.keepTTL:
			w.set(f, v)
		case !o.setTTL:
			w.put(f, v, slot)
		case o.at <= c.Tx.Now: // set, then deleted as past its time
			if slot.exists {
				w.del(f)
			}
			deleted++
		default:
			w.setTTL(f, v, slot, o.at)
			updated++
		}
	}
	switch {
	case deleted > 0:
		w.done("hset", "hdel")
	case updated > 0:
		w.done("hset", "hexpire")
	default:
		w.done("hset")
	}
	c.W.Int(1)
}
