// Package cluster holds Redis Cluster helpers: the CRC16 key hash and the
// key-to-slot mapping used by CLUSTER KEYSLOT and cluster routing.
package cluster

// SlotCount is the number of hash slots in Redis Cluster.
const SlotCount = 16384

// crcTable is the byte-wise table for CRC-16/XMODEM (polynomial 0x1021,
// initial value 0, no reflection, no final xor).
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC16 returns the CRC-16/XMODEM checksum of b, the hash Redis Cluster
// uses for keys. CRC16("123456789") == 0x31C3.
func CRC16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^c]
	}
	return crc
}

// HashTag returns the part of key that is hashed to pick its slot: the
// bytes between the first '{' and the first '}' after it, provided that
// part is non-empty; otherwise the whole key. So "{user1000}.following"
// and "{user1000}.followers" share a slot, "foo{}{bar}" hashes as a whole,
// "foo{{bar}}zap" hashes "{bar" and "foo{bar}{zap}" hashes "bar".
func HashTag(key []byte) []byte {
	for s := 0; s < len(key); s++ {
		if key[s] != '{' {
			continue
		}
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e == s+1 {
					return key // "{}": hash the whole key
				}
				return key[s+1 : e]
			}
		}
		return key // no '}' after the first '{'
	}
	return key
}

// KeySlot returns the Redis Cluster hash slot (0..16383) of key.
func KeySlot(key []byte) uint16 {
	return CRC16(HashTag(key)) & (SlotCount - 1)
}

// KeySlotString is KeySlot for a string key.
func KeySlotString(key string) uint16 {
	return KeySlot([]byte(key))
}
