package command

import (
	"bytes"
	"slices"
	"strings"

	"basalt/internal/num"
	"basalt/internal/store"
)

// Hash field expiration (Redis 7.4's HEXPIRE family, t_hash.c). A field's
// expiry is stored with its value once the hash has ttls (hash.go's
// hashHeader), and the hash's due time has an entry in the key expiry
// index. Reads skip expired fields; writes remove them first
// (hashForWrite), and active expiry removes them through the log: its
// KindExpireDue record lists the hash's index entry, and its apply calls
// expireHashFields with the record's time, so every replica removes the
// same fields.
func init() {
	hashCat := []string{"hash"}
	one := singleKey("hash")
	expire := func(name, summary string, run func(*Ctx)) *Command {
		return one(&Command{Name: name, Arity: -6, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "7.4.0", Summary: summary, Run: run}, "RW", "update")
	}
	ttl := func(name, summary string, run func(*Ctx)) *Command {
		return one(&Command{Name: name, Arity: -5, Flags: ReadOnly | Fast, Categories: hashCat, Since: "7.4.0", Summary: summary, Run: run}, "RO", "access")
	}
	register(
		expire("hexpire", "Set expiry for hash field using relative time to expire (seconds)", func(c *Ctx) { hexpireGeneric(c, "ex") }),
		expire("hpexpire", "Set expiry for hash field using relative time to expire (milliseconds)", func(c *Ctx) { hexpireGeneric(c, "px") }),
		expire("hexpireat", "Set expiry for hash field using an absolute Unix timestamp (seconds)", func(c *Ctx) { hexpireGeneric(c, "exat") }),
		expire("hpexpireat", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", func(c *Ctx) { hexpireGeneric(c, "pxat") }),
		ttl("httl", "Returns the TTL in seconds of a hash field.", func(c *Ctx) { httlGeneric(c, true, 1000) }),
		ttl("hpttl", "Returns the TTL in milliseconds of a hash field.", func(c *Ctx) { httlGeneric(c, true, 1) }),
		ttl("hexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", func(c *Ctx) { httlGeneric(c, false, 1000) }),
		ttl("hpexpiretime", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", func(c *Ctx) { httlGeneric(c, false, 1) }),
		one(&Command{Name: "hpersist", Arity: -5, Flags: Write | Fast, Categories: hashCat, Since: "7.4.0", Summary: "Removes the expiration time for each specified field", Run: cmdHPersist}, "RW", "update"),
		// Redis 8.0 (hash_getex.go)
		one(&Command{Name: "hgetdel", Arity: -5, Flags: Write | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Returns the value of a field and deletes it from the hash.", Run: cmdHGetDel}, "RW", "access", "delete"),
		one(&Command{Name: "hgetex", Arity: -5, Flags: Write | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Get the value of one or more fields of a given hash key, and optionally set their expiration.", Run: cmdHGetEx}, "RW", "access", "update"),
		one(&Command{Name: "hsetex", Arity: -6, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "8.0.0", Summary: "Set the value of one or more fields of a given hash key, and optionally set their expiration.", Run: cmdHSetEx}, "RW", "update"),
	)
}

// hfeMaxTime is the latest field expiry Redis accepts (HFE_MAX_ABS_TIME_MSEC).
const hfeMaxTime = (1<<48 - 1) >> 2

const (
	errFieldsMissing  = "ERR Mandatory argument FIELDS is missing or not at the right position"
	errNumFieldsMatch = "ERR The `numfields` parameter must match the number of arguments"
	errNumFieldsHTTL  = "ERR Number of fields must be a positive integer"
)

// expireHashFields removes key's expired fields if it is a hash that has
// some, for active expiry (KindExpireDue), after store.Tx.ExpireDue
// settled the key itself.
func expireHashFields(c *Ctx, key []byte) {
	m, ok := c.Tx.Lookup(key)
	if ok && m.Type == store.TypeHash && decodeHashHeader(m.Body).hasDue(c.Tx.Now) {
		hashForWrite(c, key) // removes them
	}
}

// copyKey is store.Tx.CopyTo for RENAME, COPY and MOVE: a hash's field
// expiries go with its values, and its due time gets an entry in the
// expiry index under the new name, so active expiry finds it there.
func copyKey(c *Ctx, src []byte, m store.Meta, db int, dst []byte) {
	c.Tx.CopyTo(src, m, db, dst)
	if m.Type == store.TypeHash {
		if due := decodeHashHeader(m.Body).due; due != 0 {
			c.Tx.NoteDue(db, due, dst)
		}
	}
}

// expireFields removes the fields that expired by the record's time, with
// Redis's "hexpired" event (and "del" if the hash goes with them), and
// finds the hash's next due time on the way.
func (w *hashWriter) expireFields() {
	now := w.c.Tx.Now
	var dead [][]byte
	next := int64(0)
	w.c.Tx.Members(w.key, nil, nil, false, func(sub, stored []byte) bool {
		_, at, _ := w.h.value(stored)
		switch {
		case at == 0:
		case at <= now:
			dead = append(dead, bytes.Clone(sub))
		case next == 0 || at < next:
			next = at
		}
		return true
	})
	for _, sub := range dead {
		w.c.Tx.DeleteMember(w.key, sub)
	}
	w.h.n -= int64(len(dead))
	w.h.due = next
	if len(dead) == 0 { // the due time was early: only move it
		w.write(w.c.Tx.PutQuiet)
		return
	}
	w.c.Tx.Notify(store.NotifyHash, "hexpired", w.key)
	if w.h.n == 0 {
		w.c.Tx.Delete(w.key)
		w.c.Tx.Notify(store.NotifyGeneric, "del", w.key)
		w.reset()
		return
	}
	w.write(w.c.Tx.Put)
}

// keepTTLs makes the hash store its fields' expiries, as Redis converts a
// listpack to a listpackex before it sets one.
func (w *hashWriter) keepTTLs() {
	if !w.h.ttls {
		w.rewrite(func() { w.h.ttls = true }, false)
	}
}

// setTTL writes field with value and the expiry at (0: none), slot being
// what get found of it (HSETEX also creates fields this way).
func (w *hashWriter) setTTL(field, value []byte, slot hashSlot, at int64) {
	slot.expireAt = at
	w.put(field, bytes.Clone(value), slot)
	if at != 0 && (w.h.due == 0 || at < w.h.due) {
		w.h.due = at
	}
}

// hashFieldArgs parses "FIELDS numfields field ..." from c.Args[at], with
// badCount as the error for a count that is not a positive integer. On an
// error it has replied.
func hashFieldArgs(c *Ctx, at int, badCount string) ([][]byte, bool) {
	if at+1 >= len(c.Args) || !strings.EqualFold(c.Arg(at), "fields") {
		c.W.Error(errFieldsMissing)
		return nil, false
	}
	n, ok := num.ParseInt(c.Args[at+1])
	if !ok || n < 1 {
		c.W.Error(badCount)
		return nil, false
	}
	fields := c.Args[at+2:]
	if n != int64(len(fields)) {
		c.W.Error(errNumFieldsMatch)
		return nil, false
	}
	return fields, true
}

// Conditions of HEXPIRE and its siblings.
const (
	hexpireAlways = iota
	hexpireNX
	hexpireXX
	hexpireGT
	hexpireLT
)

// Replies per field of HEXPIRE and its siblings.
const (
	hfeNoField      = -2
	hfeNoCondition  = 0
	hfeSet          = 1
	hfeDeleted      = 2
	hpersistNoTTL   = -1
	hpersistRemoved = 1
)

// HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field ..., and
// HPEXPIRE, HEXPIREAT, HPEXPIREAT, whose time is read as unit (EX, PX,
// EXAT or PXAT) says. A time already past deletes the field, as Redis
// does.
func hexpireGeneric(c *Ctx, unit string) {
	var at int64
	cond := hexpireAlways
	w, fields, ok := hashFieldsForWrite(c, "ERR Parameter `numFields` should be greater than 0", func() (int, bool) {
		var ok bool
		if at, ok = parseFieldExpire(c, unit, c.Args[2]); !ok {
			return 0, false
		}
		i := slices.Index([]string{"nx", "xx", "gt", "lt"}, strings.ToLower(c.Arg(3)))
		if i < 0 {
			return 3, true
		}
		cond = hexpireNX + i
		return 4, true
	}, func() { c.W.Int(hfeNoField) })
	if !ok {
		return
	}
	converted := !w.h.ttls
	w.keepTTLs()
	set, deleted := 0, 0
	for _, f := range fields {
		v, slot := w.get(f)
		cur := slot.expireAt
		switch {
		case !slot.exists:
			c.W.Int(hfeNoField)
		case cur == 0 && (cond == hexpireXX || cond == hexpireGT),
			cur != 0 && (cond == hexpireNX || cond == hexpireGT && cur >= at || cond == hexpireLT && cur <= at):
			c.W.Int(hfeNoCondition)
		case at <= c.Tx.Now:
			w.del(f)
			deleted++
			c.W.Int(hfeDeleted)
		default:
			w.setTTL(f, v, slot, at)
			set++
			c.W.Int(hfeSet)
		}
	}
	w.finish(deleted, set, "hexpire", converted)
}

// finish ends a command that deleted fields whose new expiry was past
// and set the expiry (or removed it) of others, with Redis's events:
// "hdel" if it deleted any, else event if it set any. If it changed
// nothing but made the hash keep expiries, the header is stored quietly.
func (w *hashWriter) finish(deleted, set int, event string, converted bool) {
	switch {
	case deleted > 0:
		w.done("hdel")
	case set > 0:
		w.done(event)
	case converted:
		w.write(w.c.Tx.PutQuiet)
	}
}

// parseFieldExpire parses arg as the field expiry of unit: EX (seconds
// from the record's time), PX (milliseconds from it), EXAT (unix seconds)
// or PXAT (unix ms), into unix ms, with Redis's bounds (parseExpireTime in
// t_hash.c). On an error it has replied.
func parseFieldExpire(c *Ctx, unit string, arg []byte) (int64, bool) {
	at, ok := num.ParseInt(arg)
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, false
	}
	if at < 0 {
		c.W.Error("ERR invalid expire time, must be >= 0")
		return 0, false
	}
	ms, base := int64(1), int64(0)
	if unit == "ex" || unit == "exat" {
		ms = 1000
	}
	if unit == "ex" || unit == "px" {
		base = c.Tx.Now
	}
	if at > hfeMaxTime/ms || at*ms > hfeMaxTime-base {
		c.W.Error("ERR invalid expire time in '" + strings.ToLower(c.Arg(0)) + "' command")
		return 0, false
	}
	return at*ms + base, true
}

// hashFieldsForWrite serves a command that changes the fields it names:
// after the key's type check, parse reads its options and returns where
// "FIELDS numfields field ..." starts (badCount is the error for a count
// that is not positive), then the hash is looked up for the write and the
// reply's array started. A missing key (or one whose last fields just
// expired) answers missing() per field. It reports whether the command
// goes on.
func hashFieldsForWrite(c *Ctx, badCount string, parse func() (fieldsAt int, ok bool), missing func()) (*hashWriter, [][]byte, bool) {
	_, exists, wrong := c.Lookup(c.Args[1], store.TypeHash)
	if wrong {
		return nil, nil, false
	}
	fieldsAt, ok := parse()
	if !ok {
		return nil, nil, false
	}
	fields, ok := hashFieldArgs(c, fieldsAt, badCount)
	if !ok {
		return nil, nil, false
	}
	var w *hashWriter
	if exists {
		w, _ = hashForWrite(c, c.Args[1])
	}
	c.W.ArrayLen(len(fields))
	if w == nil || w.h.n == 0 {
		for range fields {
			missing()
		}
		return nil, nil, false
	}
	return w, fields, true
}

// replyInts replies an array of n times v.
func replyInts(c *Ctx, n int, v int64) {
	c.W.ArrayLen(n)
	for range n {
		c.W.Int(v)
	}
}

// HTTL key FIELDS numfields field ..., and HPTTL, HEXPIRETIME,
// HPEXPIRETIME: per field -2 if it does not exist, -1 if it has no TTL,
// else its TTL (relative) or expiry time, in unit milliseconds (rounded
// up, as Redis does).
func httlGeneric(c *Ctx, relative bool, unit int64) {
	m, exists, wrong := c.LookupShared(c.Args[1], store.TypeHash)
	if wrong {
		return
	}
	fields, ok := hashFieldArgs(c, 2, errNumFieldsHTTL)
	if !ok {
		return
	}
	if !exists {
		replyInts(c, len(fields), hfeNoField)
		return
	}
	h := decodeHashHeader(m.Body)
	base := int64(0)
	if relative {
		base = c.Tx.Now
	}
	c.W.ArrayLen(len(fields))
	for _, f := range fields {
		_, at, ok := hashGetTTL(c, c.Args[1], h, f)
		switch {
		case !ok:
			c.W.Int(hfeNoField)
		case at == 0:
			c.W.Int(hpersistNoTTL)
		default:
			c.W.Int((at - base + unit - 1) / unit)
		}
	}
}

// HPERSIST key FIELDS numfields field ...: per field -2 if it does not
// exist, -1 if it has no TTL, 1 once its TTL is removed.
func cmdHPersist(c *Ctx) {
	w, fields, ok := hashFieldsForWrite(c, errNumFieldsHTTL, func() (int, bool) { return 2, true }, func() { c.W.Int(hfeNoField) })
	if !ok {
		return
	}
	changed := false
	for _, f := range fields {
		v, slot := w.get(f)
		switch {
		case !slot.exists:
			c.W.Int(hfeNoField)
		case slot.expireAt == 0:
			c.W.Int(hpersistNoTTL)
		default:
			w.setTTL(f, v, slot, 0)
			changed = true
			c.W.Int(hpersistRemoved)
		}
	}
	if changed {
		w.done("hpersist")
	}
}
