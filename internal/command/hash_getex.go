package command

import (
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// HGETDEL, HGETEX and HSETEX (Redis 8.0): reads and writes of hash fields
// that delete them or set their expiry in the same command.
func init() {
	hashCat := []string{"hash"}
	one := singleKey("hash")
	register(
		one(&Command{Name: "hgetdel", Arity: -5, Flags: Write | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Returns the value of a field and deletes it from the hash.", Run: cmdHGetDel}, "RW", "access", "delete"),
		one(&Command{Name: "hgetex", Arity: -5, Flags: Write | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Get the value of one or more fields of a given hash key, and optionally set their expiration.", Run: cmdHGetEx}, "RW", "access", "update"),
		one(&Command{Name: "hsetex", Arity: -6, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Set the value of one or more fields of a given hash key, and optionally set their expiration.", Run: cmdHSetEx}, "RW", "update"),
	)
}

// hashGetForWrite serves a command that reads fields and then changes
// them: after the key's type check, parse reads its options and returns
// where "FIELDS numfields field ..." starts, then the hash is looked up for
// the write. A missing key answers a nil per field. It reports whether the
// command goes on, with the reply's array started.
func hashGetForWrite(c *Ctx, parse func() (fieldsAt int, ok bool)) (*hashWriter, [][]byte, bool) {
	_, exists, wrong := c.Lookup(c.Args[1], store.TypeHash)
	if wrong {
		return nil, nil, false
	}
	fieldsAt, ok := parse()
	if !ok {
		return nil, nil, false
	}
	fields, ok := hashFieldArgs(c, fieldsAt, errNumFieldsHTTL)
	if !ok {
		return nil, nil, false
	}
	var w *hashWriter
	if exists {
		w, _ = hashForWrite(c, c.Args[1])
	}
	c.W.ArrayLen(len(fields))
	if w == nil || w.h.n == 0 { // no hash, or its last fields just expired
		for range fields {
			c.W.Null()
		}
		return nil, nil, false
	}
	return w, fields, true
}

// HGETDEL key FIELDS numfields field ...: the values (nil for a missing
// field), and the fields deleted.
func cmdHGetDel(c *Ctx) {
	w, fields, ok := hashGetForWrite(c, func() (int, bool) { return 2, true })
	if !ok {
		return
	}
	deleted := 0
	for _, f := range fields {
		v, slot := w.get(f)
		if !slot.exists {
			c.W.Null()
			continue
		}
		c.W.Bulk(v)
		w.del(f)
		deleted++
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
	w, fields, ok := hashGetForWrite(c, func() (int, bool) {
		switch opt {
		case "persist":
			return 3, true
		case "ex", "px", "exat", "pxat":
			unit := int64(1)
			if opt == "ex" || opt == "exat" {
				unit = 1000
			}
			var ok bool
			at, ok = parseFieldExpire(c, c.Args[3], opt == "ex" || opt == "px", unit)
			return 4, ok
		}
		opt = ""
		return 2, true
	})
	if !ok {
		return
	}
	if opt != "" && opt != "persist" {
		w.keepTTLs()
	}
	updated, deleted := 0, 0
	for _, f := range fields {
		v, slot := w.get(f)
		if !slot.exists {
			c.W.Null()
			continue
		}
		c.W.Bulk(v)
		switch {
		case opt == "":
		case opt == "persist":
			if slot.expireAt != 0 {
				w.setTTL(f, v, slot, 0)
				updated++
			}
		case at <= c.Tx.Now:
			w.del(f)
			deleted++
		default:
			w.setTTL(f, v, slot, at)
			updated++
		}
	}
	switch {
	case updated > 0 && opt == "persist":
		w.done("hpersist")
	case updated > 0:
		w.done("hexpire")
	case deleted > 0:
		w.done("hdel")
	case opt != "" && opt != "persist":
		w.write(c.Tx.PutQuiet) // the fields now keep expiries
	}
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
			unit := int64(1)
			if a == "ex" || a == "exat" {
				unit = 1000
			}
			if o.at, ok = parseFieldExpire(c, c.Args[i], a == "ex" || a == "px", unit); !ok {
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
