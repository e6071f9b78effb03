package rdb

// An RDB file (rdb.c rdbSaveRio in Redis 7.0): the magic "REDIS" and the
// version as four ASCII digits, then auxiliary fields, then for each
// non-empty database a SELECTDB and a RESIZEDB opcode followed by its keys,
// each key optionally preceded by its expiry, then EOF and a CRC-64 of
// everything before it, little endian (zero when rdbchecksum is off).
//
// The opcodes share the byte with the object types: a byte of 245 and up
// is an opcode, anything lower is the type of the key that follows.
const (
	opFunction2    = 245 // a function library's code (Redis 7.0)
	opFunction     = 246 // a function of Redis 7.0's release candidates, refused
	opModuleAux    = 247 // module auxiliary data
	opIdle         = 248 // LRU idle time of the next key, in seconds
	opFreq         = 249 // LFU frequency of the next key, one byte
	opAux          = 250 // an auxiliary field: two strings
	opResizeDB     = 251 // hash table size hints: two lengths
	opExpireTimeMs = 252 // expiry of the next key: 8 bytes, ms, little endian
	opExpireTime   = 253 // expiry of the next key: 4 bytes, s (old RDBs)
	opSelectDB     = 254 // the database of the keys that follow: a length
	opEOF          = 255 // end of the file, then the checksum
)

// fileMagic starts every RDB file, followed by the version as "%04d".
const fileMagic = "REDIS"
