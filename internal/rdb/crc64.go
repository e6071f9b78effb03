package rdb

import "hash/crc64"

// Redis checksums a DUMP payload with CRC-64/Jones (crc64.c): polynomial
// 0xad93d23594c935a9, reflected input and output, initial value 0 and no
// final xor. Go's hash/crc64 computes reflected CRCs from any polynomial
// given in reversed bit order, so its table for the reversed Jones
// polynomial is the right table; but its Update starts from and ends with
// the complement of the register (CRC-64/ECMA-182 and ISO use an initial
// value and final xor of all ones), so the register is complemented on the
// way in and out to get Redis's initial 0 and no xor.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5) // 0xad93d23594c935a9 bit-reversed

// CRC64 is Redis's crc64(0, p, len(p)).
func CRC64(p []byte) uint64 {
	return ^crc64.Update(^uint64(0), jonesTable, p)
}

// crc64Update extends crc, a CRC64 of some bytes, with p: CRC64(a+b) is
// crc64Update(CRC64(a), b).
func crc64Update(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
