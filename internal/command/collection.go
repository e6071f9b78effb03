package command

import "encoding/binary"

// sizeHeader is the metadata body of a hash, a set or a sorted set: the
// member count, so HLEN/SCARD/ZCARD read nothing else, and whether Redis
// would have moved the value to its big encoding (hashtable, skiplist).
// Redis never moves back, so the flag is one way; OBJECT ENCODING and the
// *SCAN commands (which return a small value whole) follow it.
type sizeHeader struct {
	n   int64
	big bool
}

func decodeSizeHeader(b []byte) sizeHeader {
	return sizeHeader{n: int64(binary.BigEndian.Uint64(b)), big: b[8]&1 != 0}
}

const sizeHeaderLen = 9

func (h sizeHeader) encode() []byte { return h.appendTo(make([]byte, 0, sizeHeaderLen)) }

func (h sizeHeader) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(h.n))
	if h.big {
		return append(b, 1)
	}
	return append(b, 0)
}
