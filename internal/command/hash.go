package command

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"basalt/internal/glob"
	"basalt/internal/num"
	"basalt/internal/store"
)

// Hash commands (t_hash.c in Redis). A hash is a metadata entry whose body
// is a hashHeader, and one member entry per field: store.HashedSub(field) ->
// value. HGET and HSET touch one member; HLEN reads only the header.
//
// A small hash (Redis's listpack) keeps its fields in insertion order, as
// Redis does: each value starts with its field's number (a uvarint), given
// when the field is added and kept when it is set again, and HGETALL, HKEYS,
// HVALS, HSCAN, HRANDFIELD and DUMP sort the fields by it. Past Redis's
// listpack limits the hash is converted, as Redis converts it to a
// hashtable: the numbers are dropped from the values and the order is the
// store's (hash order), which Redis does not promise either. Hashes written
// before basalt kept the order have plain values and no next number in
// their header: they answer in hash order until a field is set, which
// numbers their fields in that order first (hashWriter.number). Once a
// field has had a TTL, every value also carries its field's expiry after
// the number (hashHeader; the commands are in hash_expire.go).
func init() {
	hashCat := []string{"hash"}
	one := singleKey("hash")
	nondetOrder := []string{"nondeterministic_output_order"}
	nondet := []string{"nondeterministic_output"}
	register(
		one(&Command{Name: "hset", Arity: -4, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Set the string value of a hash field", Run: func(c *Ctx) { hsetGeneric(c, false) }}, "RW", "update"),
		one(&Command{Name: "hsetnx", Arity: 4, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Set the value of a hash field, only if the field does not exist", Run: cmdHSetNX}, "RW", "insert"),
		one(&Command{Name: "hmset", Arity: -4, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Set multiple hash fields to multiple values", Run: func(c *Ctx) { hsetGeneric(c, true) }}, "RW", "update"),
		one(&Command{Name: "hget", Arity: 3, Flags: ReadOnly | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Get the value of a hash field", Run: cmdHGet}, "RO", "access"),
		one(&Command{Name: "hmget", Arity: -3, Flags: ReadOnly | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Get the values of all the given hash fields", Run: cmdHMGet}, "RO", "access"),
		one(&Command{Name: "hgetall", Arity: 2, Flags: ReadOnly, Categories: hashCat, Since: "2.0.0", Summary: "Get all the fields and values in a hash", Tips: nondetOrder, Run: func(c *Ctx) { hgetallGeneric(c, true, true) }}, "RO", "access"),
		one(&Command{Name: "hkeys", Arity: 2, Flags: ReadOnly, Categories: hashCat, Since: "2.0.0", Summary: "Get all the fields in a hash", Tips: nondetOrder, Run: func(c *Ctx) { hgetallGeneric(c, true, false) }}, "RO", "access"),
		one(&Command{Name: "hvals", Arity: 2, Flags: ReadOnly, Categories: hashCat, Since: "2.0.0", Summary: "Get all the values in a hash", Tips: nondetOrder, Run: func(c *Ctx) { hgetallGeneric(c, false, true) }}, "RO", "access"),
		one(&Command{Name: "hdel", Arity: -3, Flags: Write | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Delete one or more hash fields", Run: cmdHDel}, "RW", "delete"),
		one(&Command{Name: "hexists", Arity: 3, Flags: ReadOnly | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Determine if a hash field exists", Run: cmdHExists}, "RO"),
		one(&Command{Name: "hlen", Arity: 2, Flags: ReadOnly | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Get the number of fields in a hash", Run: cmdHLen}, "RO"),
		one(&Command{Name: "hstrlen", Arity: 3, Flags: ReadOnly | Fast, Categories: hashCat, Since: "3.2.0", Summary: "Get the length of the value of a hash field", Run: cmdHStrlen}, "RO"),
		one(&Command{Name: "hincrby", Arity: 4, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "2.0.0", Summary: "Increment the integer value of a hash field by the given number", Run: cmdHIncrBy}, "RW", "access", "update"),
		one(&Command{Name: "hincrbyfloat", Arity: 4, Flags: Write | DenyOOM | Fast, Categories: hashCat, Since: "2.6.0", Summary: "Increment the float value of a hash field by the given amount", Run: cmdHIncrByFloat}, "RW", "access", "update"),
		one(&Command{Name: "hrandfield", Arity: -2, Flags: ReadOnly, Categories: hashCat, Since: "6.2.0", Summary: "Get one or multiple random fields from a hash", Tips: nondet, Run: cmdHRandField}, "RO", "access"),
		one(&Command{Name: "hscan", Arity: -3, Flags: ReadOnly, Categories: hashCat, Since: "2.8.0", Summary: "Incrementally iterate hash fields and associated values", Tips: nondet, Run: cmdHScan}, "RO", "access"),
	)
}

// Redis's listpack limits at their defaults (hash-max-listpack-entries and
// hash-max-listpack-value). They are constants so that applying a record
// never depends on configuration.
const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
)

const (
	errHashNotInt = "ERR hash value is not an integer"
	errOutOfRange = "ERR value is out of range"
)

// hashHeader is a hash's metadata body: its sizeHeader, then, once a
// field of it was given a TTL (ttls, a bit of the sizeHeader's flag byte),
// due as a uvarint, then, while the hash keeps insertion order (ordered),
// the number its next new field takes, as a uvarint.
//
// In a hash with ttls every stored value carries its field's expiry (unix
// ms, 0 for none) as a uvarint after the number. due is a hint: no field
// expires before it (0: no field has a TTL). The key's expiry index has an
// entry at due, so active expiry finds the hash (hash_expire.go).
type hashHeader struct {
	sizeHeader
	ordered bool
	next    uint64
	ttls    bool
	due     int64
}

const hashTTLsFlag = 2 // in the sizeHeader's flag byte

func decodeHashHeader(b []byte) hashHeader {
	h := hashHeader{sizeHeader: decodeSizeHeader(b)}
	rest := b[sizeHeaderLen:]
	if b[sizeHeaderLen-1]&hashTTLsFlag != 0 {
		due, n := binary.Uvarint(rest)
		h.ttls, h.due, rest = true, int64(due), rest[n:]
	}
	if len(rest) > 0 {
		h.ordered = true
		h.next, _ = binary.Uvarint(rest)
	}
	return h
}

func (h hashHeader) encode() []byte {
	b := h.appendTo(make([]byte, 0, sizeHeaderLen+2*binary.MaxVarintLen64))
	if h.ttls {
		b[sizeHeaderLen-1] |= hashTTLsFlag
		b = binary.AppendUvarint(b, uint64(h.due))
	}
	if h.ordered {
		b = binary.AppendUvarint(b, h.next)
	}
	return b
}

// value splits a stored field value into its number (0 in a hash that
// keeps no order), its expiry (0 for none) and the field's value.
func (h hashHeader) value(stored []byte) (seq uint64, expireAt int64, v []byte) {
	v = stored
	if h.ordered {
		n := 0
		if seq, n = binary.Uvarint(v); n <= 0 {
			panic("hash: corrupt ordered field value")
		}
		v = v[n:]
	}
	if h.ttls {
		at, n := binary.Uvarint(v)
		if n <= 0 {
			panic("hash: corrupt field expiry")
		}
		expireAt, v = int64(at), v[n:]
	}
	return seq, expireAt, v
}

// store appends a field's stored value to buf.
func (h hashHeader) store(buf []byte, seq uint64, expireAt int64, v []byte) []byte {
	if h.ordered {
		buf = binary.AppendUvarint(buf, seq)
	}
	if h.ttls {
		buf = binary.AppendUvarint(buf, uint64(expireAt))
	}
	return append(buf, v...)
}

// fieldLive reports whether a field whose expiry is expireAt exists at
// now (unix ms), as Meta.Expired decides for keys.
func fieldLive(expireAt, now int64) bool { return expireAt == 0 || expireAt > now }

// hasDue reports whether some field may have expired at now, so that
// counts from the header may be off until they are removed.
func (h hashHeader) hasDue(now int64) bool { return h.due != 0 && h.due <= now }

// hashFields visits the live fields and values of key, whose header is h: in
// insertion order when h keeps it (the hash is small, so it is read whole
// first), else streamed in the store's order. fn's arguments are valid
// only during the call.
func hashFields(c *Ctx, key []byte, h hashHeader, fn func(field, value []byte) bool) {
	if !h.ordered {
		c.Tx.Members(key, nil, nil, false, func(sub, stored []byte) bool {
			_, at, v := h.value(stored)
			if !fieldLive(at, c.Tx.Now) {
				return true
			}
			return fn(store.HashedMember(sub), v)
		})
		return
	}
	o := hashOrders.Get().(*hashOrder)
	defer hashOrders.Put(o)
	o.read(c, key, h)
	for _, e := range o.sorted() {
		if !fn(o.buf[e.at:e.at+e.flen], o.buf[e.at+e.flen:e.at+e.flen+e.vlen]) {
			return
		}
	}
}

// hashOrder puts the fields of an ordered hash in order: one copy of all
// fields and values, and entries that hold offsets into it rather than
// slices, so that ordering them moves no pointers. It is reused (a small
// hash is at most 512 fields of 64 bytes).
type hashOrder struct {
	buf     []byte
	entries []hashEntry
	slots   []int32
	lo, hi  uint64
}

type hashEntry struct {
	seq            uint64
	at, flen, vlen int32
}

var hashOrders = sync.Pool{New: func() any { return new(hashOrder) }}

func (o *hashOrder) read(c *Ctx, key []byte, h hashHeader) {
	o.buf, o.entries, o.lo, o.hi = o.buf[:0], o.entries[:0], math.MaxUint64, 0
	c.Tx.Members(key, nil, nil, false, func(sub, stored []byte) bool {
		seq, at, v := h.value(stored)
		if !fieldLive(at, c.Tx.Now) {
			return true
		}
		f := store.HashedMember(sub)
		o.entries = append(o.entries, hashEntry{seq, int32(len(o.buf)), int32(len(f)), int32(len(v))})
		o.buf = append(append(o.buf, f...), v...)
		o.lo, o.hi = min(o.lo, seq), max(o.hi, seq)
		return true
	})
}

// sorted returns the entries in number order. The numbers are dense unless
// many fields were deleted, so they are placed by number when their span
// is a few times their count, and sorted otherwise.
func (o *hashOrder) sorted() []hashEntry {
	n := len(o.entries)
	if n < 2 {
		return o.entries
	}
	span := o.hi - o.lo + 1
	if span > uint64(4*n) {
		slices.SortFunc(o.entries, func(a, b hashEntry) int { return cmp.Compare(a.seq, b.seq) })
		return o.entries
	}
	o.slots = slices.Grow(o.slots[:0], int(span))[:span]
	for i := range o.slots {
		o.slots[i] = -1
	}
	for i, e := range o.entries {
		o.slots[e.seq-o.lo] = int32(i)
	}
	o.entries = slices.Grow(o.entries, n)
	out := o.entries[n : n : 2*n] // the placed entries follow the read ones
	for _, i := range o.slots {
		if i >= 0 {
			out = append(out, o.entries[i])
		}
	}
	return out
}

// hashGet returns field's value in key, whose header is h, if it is live.
func hashGet(c *Ctx, key []byte, h hashHeader, field []byte) ([]byte, bool) {
	v, _, ok := hashGetTTL(c, key, h, field)
	return v, ok
}

// hashGetTTL is hashGet that also returns the field's expiry (0: none).
func hashGetTTL(c *Ctx, key []byte, h hashHeader, field []byte) (v []byte, expireAt int64, ok bool) {
	stored, ok := c.Tx.Member(key, store.HashedSub(nil, field))
	if !ok {
		return nil, 0, false
	}
	_, expireAt, v = h.value(stored)
	if !fieldLive(expireAt, c.Tx.Now) {
		return nil, 0, false
	}
	return v, expireAt, true
}

// hashEncoding is OBJECT ENCODING for a hash.
func hashEncoding(m store.Meta) string {
	h := decodeHashHeader(m.Body)
	if h.big {
		return "hashtable"
	}
	if h.ttls {
		return "listpackex"
	}
	return "listpack"
}

// hashWriter edits one hash in a write: it tracks the header and writes it
// (or deletes the key once empty) in done.
type hashWriter struct {
	c       *Ctx
	key     []byte
	m       store.Meta
	h       hashHeader
	indexed int64 // the due time the expiry index has an entry for
	sub     []byte
	buf     []byte // a stored value
}

// hashForWrite looks key up as a hash for a write; a missing key is an
// empty hash (created by done if a field is set), which keeps insertion
// order. Fields that expired by the record's time are removed first (and
// the hash with them if none is left), as Redis's lazy field expiry does.
// On WRONGTYPE it has replied and returns false.
func hashForWrite(c *Ctx, key []byte) (*hashWriter, bool) {
	m, ok, wrong := c.Lookup(key, store.TypeHash)
	if wrong {
		return nil, false
	}
	w := &hashWriter{c: c, key: key}
	if !ok {
		w.reset()
		return w, true
	}
	w.m, w.h = m, decodeHashHeader(m.Body)
	w.indexed = w.h.due
	if w.h.hasDue(c.Tx.Now) {
		w.expireFields()
	}
	return w, true
}

// reset makes w an empty hash, as for a missing key.
func (w *hashWriter) reset() {
	w.m, w.h, w.indexed = store.Meta{Type: store.TypeHash}, hashHeader{ordered: true}, 0
}

func (w *hashWriter) subKey(field []byte) []byte {
	w.sub = store.HashedSub(w.sub[:0], field)
	return w.sub
}

// hashSlot is what get found of a field: whether it exists, its number
// in an ordered hash and its expiry (0: none), which put keeps.
type hashSlot struct {
	exists   bool
	seq      uint64
	expireAt int64
}

// get returns field's value; an existing empty value is non-nil, as
// num.HIncrByFloat tells it from a missing field.
func (w *hashWriter) get(field []byte) ([]byte, hashSlot) {
	if w.h.n == 0 {
		return nil, hashSlot{}
	}
	stored, ok := w.c.Tx.Member(w.key, w.subKey(field))
	if !ok {
		return nil, hashSlot{}
	}
	seq, at, v := w.h.value(stored)
	if v == nil {
		v = []byte{}
	}
	return v, hashSlot{exists: true, seq: seq, expireAt: at}
}

// set writes field, dropping its TTL as HSET does, and reports whether it
// is new.
func (w *hashWriter) set(field, value []byte) bool {
	_, slot := w.get(field)
	slot.expireAt = 0
	return w.put(field, value, slot)
}

// put writes field, which get found in slot, with slot's expiry, and
// reports whether it is new. A field or value longer than Redis's listpack allows, or one field
// too many, converts the hash first, as Redis's hashTypeSet does.
func (w *hashWriter) put(field, value []byte, slot hashSlot) bool {
	if len(field) > hashMaxListpackValue || len(value) > hashMaxListpackValue ||
		!slot.exists && w.h.n >= hashMaxListpackEntries {
		w.convert()
	}
	if !w.h.big && !w.h.ordered {
		w.number()
		if slot.exists {
			_, slot = w.get(field) // its number now
		}
	}
	if w.h.ordered && !slot.exists {
		slot.seq = w.h.next
		w.h.next++
	}
	w.buf = w.h.store(w.buf[:0], slot.seq, slot.expireAt, value)
	w.c.Tx.SetMember(w.key, w.subKey(field), w.buf)
	if !slot.exists {
		w.h.n++
	}
	return !slot.exists
}

// convert makes the hash big, as Redis converts a listpack to a
// hashtable: the fields lose their numbers, and with them their order.
func (w *hashWriter) convert() {
	w.h.big = true
	if w.h.ordered {
		w.rewrite(func() { w.h.ordered, w.h.next = false, 0 }, false)
	}
}

// number gives the fields of a small hash written before basalt kept the
// order their numbers, in the store's order, so that the fields added
// from now on follow them in insertion order.
func (w *hashWriter) number() {
	n := w.rewrite(func() { w.h.ordered = true }, true)
	w.h.next = uint64(n)
}

// rewrite stores each field again in the encoding of the header as change
// leaves it, numbered in the store's order if renumber, and returns how
// many fields there are.
func (w *hashWriter) rewrite(change func(), renumber bool) int {
	var subs, values [][]byte
	var seqs []uint64
	var ats []int64
	w.c.Tx.Members(w.key, nil, nil, false, func(sub, s []byte) bool {
		seq, at, v := w.h.value(s)
		subs, values = append(subs, bytes.Clone(sub)), append(values, bytes.Clone(v))
		seqs, ats = append(seqs, seq), append(ats, at)
		return true
	})
	change()
	for i, sub := range subs {
		if renumber {
			seqs[i] = uint64(i)
		}
		w.buf = w.h.store(w.buf[:0], seqs[i], ats[i], values[i])
		w.c.Tx.SetMember(w.key, sub, w.buf)
	}
	return len(subs)
}

// tryConvert converts the hash before fields and values are written if
// one of them is too long for a listpack, as Redis's hashTypeTryConversion
// does.
func (w *hashWriter) tryConvert(args [][]byte) {
	for _, a := range args {
		if len(a) > hashMaxListpackValue {
			w.convert()
			return
		}
	}
}

// del removes field and reports whether it was there; the other fields
// keep their order.
func (w *hashWriter) del(field []byte) bool {
	if w.h.n == 0 {
		return false
	}
	sub := w.subKey(field)
	if _, ok := w.c.Tx.Member(w.key, sub); !ok {
		return false
	}
	w.c.Tx.DeleteMember(w.key, sub)
	w.h.n--
	return true
}

// done stores the header and raises the command's keyspace events; an
// emptied hash is deleted (with a "del" event after them), as Redis never
// keeps empty collections.
func (w *hashWriter) done(events ...string) {
	if w.h.n == 0 {
		w.c.Tx.Delete(w.key)
	} else {
		w.write(w.c.Tx.Put)
	}
	for _, e := range events {
		w.c.Tx.Notify(store.NotifyHash, e, w.key)
	}
	if w.h.n == 0 {
		w.c.Tx.Notify(store.NotifyGeneric, "del", w.key)
	}
}

// write stores the header with put (Tx.Put, or Tx.PutQuiet for a change
// no client sees), and an expiry index entry at its due time if that moved.
func (w *hashWriter) write(put func([]byte, store.Meta)) {
	w.m.Body = w.h.encode()
	put(w.key, w.m)
	if w.h.due != 0 && w.h.due != w.indexed {
		w.c.Tx.NoteDue(w.c.Tx.DB, w.h.due, w.key)
		w.indexed = w.h.due
	}
}

// restoreHash writes fields and their values under key, which does not
// exist, in their order, as Redis loads a hash: a listpack if it fits, so
// it keeps that order.
func restoreHash(c *Ctx, key []byte, fields, values [][]byte, expireAt int64) {
	w, _ := hashForWrite(c, key)
	if len(fields) > hashMaxListpackEntries {
		w.convert()
	}
	w.tryConvert(fields)
	w.tryConvert(values)
	for i, f := range fields {
		w.set(f, values[i])
	}
	w.m.ExpireAt, w.m.Body = expireAt, w.h.encode()
	c.Tx.Put(key, w.m)
}

// HSET key field value [field value ...], and HMSET which answers OK.
func hsetGeneric(c *Ctx, hmset bool) {
	if len(c.Args)%2 != 0 {
		c.W.Error(WrongArity(strings.ToLower(c.Arg(0))))
		return
	}
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	w.tryConvert(c.Args[2:])
	created := int64(0)
	for i := 2; i < len(c.Args); i += 2 {
		if w.set(c.Args[i], c.Args[i+1]) {
			created++
		}
	}
	w.done("hset")
	if hmset {
		c.W.OK()
	} else {
		c.W.Int(created)
	}
}

func cmdHSetNX(c *Ctx) {
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	_, slot := w.get(c.Args[2])
	if slot.exists {
		c.W.Int(0)
		return
	}
	w.put(c.Args[2], c.Args[3], slot)
	w.done("hset")
	c.W.Int(1)
}

// hashRead looks key up as a hash for a read. When it is missing it replies
// with missing() and returns false; on WRONGTYPE it has replied too.
func hashRead(c *Ctx, missing func()) (store.Meta, bool) {
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeHash)
	if wrong {
		return m, false
	}
	if !ok {
		missing()
		return m, false
	}
	return m, true
}

func cmdHGet(c *Ctx) {
	m, ok := hashRead(c, c.W.Null)
	if !ok {
		return
	}
	if v, ok := hashGet(c, c.Args[1], decodeHashHeader(m.Body), c.Args[2]); ok {
		c.W.Bulk(v)
	} else {
		c.W.Null()
	}
}

func cmdHMGet(c *Ctx) {
	m, ok, wrong := c.Lookup(c.Args[1], store.TypeHash)
	if wrong {
		return
	}
	var h hashHeader
	if ok {
		h = decodeHashHeader(m.Body)
	}
	fields := c.Args[2:]
	c.W.ArrayLen(len(fields))
	for _, f := range fields {
		if ok {
			if v, found := hashGet(c, c.Args[1], h, f); found {
				c.W.Bulk(v)
				continue
			}
		}
		c.W.Null()
	}
}

// hgetallGeneric serves HGETALL (fields and values: a map in RESP3), HKEYS
// and HVALS. The reply is sized from the entries one iterator saw, not from
// the header: a read has no snapshot, and a write may land in between.
func hgetallGeneric(c *Ctx, fields, values bool) {
	m, ok, wrong := c.LookupShared(c.Args[1], store.TypeHash)
	if wrong {
		return
	}
	mark, n := c.W.Len(), 0
	if ok {
		hashFields(c, c.Args[1], decodeHashHeader(m.Body), func(f, v []byte) bool {
			if fields {
				c.W.Bulk(f)
			}
			if values {
				c.W.Bulk(v)
			}
			n++
			return true
		})
	}
	c.W.LenBefore(mark, func() {
		if fields && values {
			c.W.MapLen(n)
		} else {
			c.W.ArrayLen(n)
		}
	})
}

func cmdHDel(c *Ctx) {
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	if w.h.n == 0 {
		c.W.Int(0)
		return
	}
	deleted := int64(0)
	for _, f := range c.Args[2:] {
		if w.del(f) {
			deleted++
		}
	}
	if deleted > 0 {
		w.done("hdel")
	}
	c.W.Int(deleted)
}

func cmdHExists(c *Ctx) {
	m, ok := hashRead(c, func() { c.W.Int(0) })
	if !ok {
		return
	}
	if _, ok := hashGet(c, c.Args[1], decodeHashHeader(m.Body), c.Args[2]); ok {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func cmdHLen(c *Ctx) {
	if m, ok := hashRead(c, func() { c.W.Int(0) }); ok {
		c.W.Int(hashLen(c, c.Args[1], decodeHashHeader(m.Body)))
	}
}

// hashLen is the number of live fields of key, whose header is h: the
// header's count, unless fields expired that are not yet removed (for the
// short while until active expiry removes them, it counts them).
func hashLen(c *Ctx, key []byte, h hashHeader) int64 {
	if !h.hasDue(c.Tx.Now) {
		return h.n
	}
	n := int64(0)
	hashFields(c, key, h, func(_, _ []byte) bool {
		n++
		return true
	})
	return n
}

func cmdHStrlen(c *Ctx) {
	m, ok := hashRead(c, func() { c.W.Int(0) })
	if !ok {
		return
	}
	v, _ := hashGet(c, c.Args[1], decodeHashHeader(m.Body), c.Args[2])
	c.W.Int(int64(len(v)))
}

// HINCRBY key field increment: the increment is checked before the key.
func cmdHIncrBy(c *Ctx) {
	incr, ok := num.ParseInt(c.Args[3])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	var cur int64
	v, slot := w.get(c.Args[2])
	if slot.exists {
		if cur, ok = num.ParseInt(v); !ok {
			c.W.Error(errHashNotInt)
			return
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		c.W.Error(ErrOverflow)
		return
	}
	cur += incr
	w.put(c.Args[2], num.FormatInt(cur), slot)
	w.done("hincrby")
	c.W.Int(cur)
}

// HINCRBYFLOAT key field increment, in long double arithmetic like Redis.
func cmdHIncrByFloat(c *Ctx) {
	if _, err := num.CheckHIncrByFloatIncrement(c.Args[3]); err != nil {
		c.W.Error(err.Error())
		return
	}
	w, ok := hashForWrite(c, c.Args[1])
	if !ok {
		return
	}
	cur, slot := w.get(c.Args[2]) // nil when missing, which counts as 0
	v, err := num.HIncrByFloat(cur, c.Args[3])
	if err != nil {
		c.W.Error(err.Error())
		return
	}
	w.put(c.Args[2], v, slot)
	w.done("hincrbyfloat")
	c.W.Bulk(v)
}

// hashRand picks fields of a hash, whose header is h, at random. While
// some fields may have expired and not yet been removed, it loads the live
// ones and picks among them (size is their count).
type hashRand struct {
	c              *Ctx
	rnd            *rand.Rand
	h              hashHeader
	size           int64
	fields, values [][]byte
}

func newHashRand(c *Ctx, h hashHeader) *hashRand {
	r := &hashRand{c: c, rnd: commandRand(c, 0x68617368), h: h, size: h.n}
	if h.hasDue(c.Tx.Now) {
		r.fields, r.values = hashAll(c, h)
		r.size = int64(len(r.fields))
	}
	return r
}

// pick returns a random field and its value (copies); nil when the hash
// is empty (a concurrent write may have deleted it since the lookup).
func (r *hashRand) pick() (field, value []byte) {
	if r.h.hasDue(r.c.Tx.Now) {
		if len(r.fields) == 0 {
			return nil, nil
		}
		i := r.rnd.IntN(len(r.fields))
		return r.fields[i], r.values[i]
	}
	sub, stored := randomMember(r.c, r.c.Args[1], nil, r.h.n, r.rnd, nil)
	if sub == nil {
		return nil, nil
	}
	_, at, value := r.h.value(stored)
	if !fieldLive(at, r.c.Tx.Now) {
		return nil, nil
	}
	return store.HashedMember(sub), value
}

// hashAll loads every field and value of the hash, in hashFields's order.
func hashAll(c *Ctx, h hashHeader) (fields, values [][]byte) {
	fields, values = make([][]byte, 0, h.n), make([][]byte, 0, h.n)
	hashFields(c, c.Args[1], h, func(f, v []byte) bool {
		fields, values = append(fields, bytes.Clone(f)), append(values, bytes.Clone(v))
		return true
	})
	return fields, values
}

// HRANDFIELD key [count [WITHVALUES]]
func cmdHRandField(c *Ctx) {
	if len(c.Args) == 2 {
		if m, ok := hashRead(c, c.W.Null); ok {
			if f, _ := newHashRand(c, decodeHashHeader(m.Body)).pick(); f != nil {
				c.W.Bulk(f)
			} else {
				c.W.Null()
			}
		}
		return
	}
	l, ok := num.ParseInt(c.Args[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if l == math.MinInt64 {
		c.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withValues := false
	if len(c.Args) > 4 || len(c.Args) == 4 && !strings.EqualFold(c.Arg(3), "withvalues") {
		c.W.Error(ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.W.Error(errOutOfRange)
			return
		}
	}
	m, ok := hashRead(c, func() { c.W.ArrayLen(0) })
	if !ok {
		return
	}
	h := decodeHashHeader(m.Body)
	r := newHashRand(c, h)
	size := r.size
	count, distinct := l, true
	if l < 0 {
		count, distinct = -l, false
	}
	if count == 0 {
		c.W.ArrayLen(0)
		return
	}
	// header and entry write n pairs: flat in RESP2, one array per pair in
	// RESP3.
	header := func(n int64) {
		if withValues && c.W.Proto < 3 {
			n *= 2
		}
		c.W.ArrayLen(int(n))
	}
	entry := func(f, v []byte) {
		if withValues && c.W.Proto >= 3 {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(f)
		if withValues {
			c.W.Bulk(v)
		}
	}
	if !distinct || count == 1 {
		// Repeats allowed: load a small hash once and index it; sample a
		// big one by seeking. Either way the picks are written as drawn.
		guard, ok := startRepeatReply(c, count, withValues)
		if !ok {
			return
		}
		if size <= 1024 || count >= size {
			fields, values := hashAll(c, h)
			if len(fields) == 0 {
				c.W.ArrayLen(0)
				return
			}
			header(count)
			for range count {
				i := r.rnd.IntN(len(fields))
				entry(fields[i], values[i])
				if guard.over() {
					return
				}
			}
			return
		}
		mark := c.W.Len()
		for range count {
			f, v := r.pick()
			if f == nil { // deleted meanwhile
				c.W.Buf = c.W.Buf[:mark]
				c.W.ArrayLen(0)
				return
			}
			entry(f, v)
			if guard.over() {
				return
			}
		}
		c.W.LenBefore(mark, func() { header(count) })
		return
	}
	if count <= size/3 {
		// Few of many: sample until count distinct fields. A concurrent
		// write may shrink the hash, so give up on sampling after many
		// repeats and fall through to the exact method.
		fields, values := make([][]byte, 0, count), make([][]byte, 0, count)
		seen := make(map[string]bool, count)
		for tries := int64(0); int64(len(fields)) < count && tries < 4*count+64; tries++ {
			f, v := r.pick()
			if f == nil || seen[string(f)] {
				continue
			}
			seen[string(f)] = true
			fields, values = append(fields, f), append(values, v)
		}
		if int64(len(fields)) == count {
			header(count)
			for i := range fields {
				entry(fields[i], values[i])
			}
			return
		}
	}
	// Many of the fields, or all: shuffle the lot and take count.
	fields, values := hashAll(c, h)
	n := min(count, int64(len(fields)))
	header(n)
	for i := range int(n) {
		if n < int64(len(fields)) {
			j := i + r.rnd.IntN(len(fields)-i)
			fields[i], fields[j] = fields[j], fields[i]
			values[i], values[j] = values[j], values[i]
		}
		entry(fields[i], values[i])
	}
}

// HSCAN key cursor [MATCH pattern] [COUNT count]. A hash Redis keeps as a
// listpack comes back whole with cursor 0, whatever the cursor and COUNT,
// in its order; a larger one is walked in hash order from the cursor, which is the
// position (store.HashedPos) of the next field, as SCAN does for keys.
func cmdHScan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[2])
	if !ok {
		c.W.Error(errCursor)
		return
	}
	m, ok := hashRead(c, func() { emptyScan(c) })
	if !ok {
		return
	}
	o, ok := parseScanOptions(c, 3, false)
	if !ok {
		return
	}
	count, pat := o.count, o.pat
	var out [][]byte
	visit := func(f, v []byte) {
		if pat != nil && !glob.Match(pat, f, false) {
			return
		}
		out = append(out, append([]byte(nil), f...), append([]byte(nil), v...))
	}
	next := uint64(0)
	h := decodeHashHeader(m.Body)
	if !h.big {
		hashFields(c, c.Args[1], h, func(f, v []byte) bool {
			visit(f, v)
			return true
		})
	} else { // never ordered
		// At least count entries, and every entry of the last position, so
		// that the next cursor (the position of the entry after them)
		// skips nothing.
		seen := int64(0)
		var last uint64
		c.Tx.Members(c.Args[1], store.PosBytes(cursor), nil, false, func(sub, v []byte) bool {
			pos := store.HashedPos(sub)
			if seen >= count && pos != last {
				next = pos
				return false
			}
			seen++
			last = pos
			if _, at, v := h.value(v); fieldLive(at, c.Tx.Now) {
				visit(store.HashedMember(sub), v)
			}
			return true
		})
	}
	c.W.ArrayLen(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.ArrayLen(len(out))
	for _, b := range out {
		c.W.Bulk(b)
	}
}
