package store

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"
)

// A key's position starts with its hash slot (Pos), so the keys of one slot
// are one range of the metadata key space, and their members one range of
// the member key space: a slot can be counted, listed, and later sent,
// ingested and dropped as a unit.

// SlotKeys visits the live keys of a hash slot in the Tx's database, in SCAN
// order, until fn returns false.
func (t *Tx) SlotKeys(slot uint16, fn func(key []byte) bool) {
	phys := t.phys()
	t.saveMeta() // the iteration reads the view
	lower := binary.BigEndian.AppendUint64(appendDB(nil, prefixMeta, phys), uint64(slot)<<48)
	upper := binary.BigEndian.AppendUint64(appendDB(nil, prefixMeta, phys), uint64(slot+1)<<48)
	it, err := t.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		panic(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		m, err := decodeMeta(it.Value())
		if err != nil {
			panic(err)
		}
		if !m.Expired(t.Now) && !fn(userKeyOfMeta(it.Key())) {
			return
		}
	}
	if err := it.Error(); err != nil {
		panic(err)
	}
}
