package store

import "github.com/cockroachdb/pebble/v2"

// Databases is the number of logical databases this Tx can address, for
// the commands that take a database index (MOVE, COPY ... DB, SWAPDB,
// FLUSHALL).
func (t *Tx) Databases() int { return len(t.dbMap) }

// Clustered reports whether the Tx's store is a shard of a cluster: one
// database, and only the keys of its slots (Store.Slots).
func (t *Tx) Clustered() bool { return t.st.slots != nil }

// OwnsSlot reports whether the Tx's store serves the hash slot (always,
// outside cluster mode).
func (t *Tx) OwnsSlot(slot uint16) bool { return t.st.slots == nil || t.st.slots.Contains(slot) }

// CopyTo makes dst in logical database dstDB a copy of src, a live key of
// the Tx's current database whose metadata is m: whatever dst held before
// (any type, expired or not) is dropped, then m (expiry included) and every
// member of src are written under dst. It serves RENAME, COPY and MOVE for
// every type; the caller deletes src when the command moves it. src and dst
// must not be the same key of the same database.
func (t *Tx) CopyTo(src []byte, m Meta, dstDB int, dst []byte) {
	t.mustWrite()
	srcPhys := t.phys()
	saved := t.DB
	t.DB = dstDB
	defer func() { t.DB = saved }()

	// Delete first: Put keeps an existing collection's members when the
	// type stays the same, and dst's old members must not survive.
	t.Delete(dst)
	t.Put(dst, m)
	if !m.HasMembers() {
		return // an inline string: its value is in m.Body
	}
	from := MemberPrefix(nil, srcPhys, src)
	to := MemberPrefix(nil, t.phys(), dst)
	// An iterator on the batch sees the batch as it was when created, so
	// writing dst's members while walking src's is safe (and the two
	// prefixes never overlap).
	t.saveHeld(from, PrefixEnd(from))
	it, err := t.chain.view.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: PrefixEnd(from)})
	if err != nil {
		panic(err)
	}
	defer it.Close()
	k := to
	for ok := it.First(); ok; ok = it.Next() {
		k = append(k[:len(to)], it.Key()[len(from):]...)
		t.set(k, it.Value())
	}
	if err := it.Error(); err != nil {
		panic(err)
	}
}
