package store

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"
)

// Digest returns a SHA-256 over the store's user data: for each logical
// database in order, its key count, then every metadata entry (key, type,
// expiry, body) and every collection member in key order. The record log and
// shard state are left out, and databases are named by their logical number,
// so two stores that went through the same records digest the same even if
// their physical layout differs. It reads the committed state.
func (s *Store) Digest() ([32]byte, error) {
	s.installing.RLock() // the whole old store or the whole new one (see InstallSnapshot)
	defer s.installing.RUnlock()
	h := sha256.New()
	dbMap := *s.dbMap.Load()
	var n [8]byte
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(n[:0], uint64(len(b))))
		h.Write(b)
	}
	snap := s.pdb.NewSnapshot()
	defer snap.Close()
	for logical, phys := range dbMap {
		h.Write(binary.BigEndian.AppendUint64(n[:0], uint64(logical)))
		h.Write(binary.BigEndian.AppendUint64(n[:0], uint64(s.counts[phys].Load())))
		// Metadata and members, each with the prefix byte so that one
		// cannot stand for the other; the db bytes are cut off.
		for _, prefix := range []byte{prefixMeta, prefixMember, prefixExpiry} {
			lo, hi := dbSpan(prefix, phys)
			it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
			if err != nil {
				return [32]byte{}, err
			}
			for ok := it.First(); ok; ok = it.Next() {
				h.Write([]byte{prefix})
				field(it.Key()[1+dbBytes:])
				field(it.Value())
			}
			err = it.Error()
			it.Close()
			if err != nil {
				return [32]byte{}, err
			}
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}
