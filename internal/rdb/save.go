package rdb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"io"
)

// Writing a whole RDB file (SAVE, BGSAVE), in the order of Redis 7.0's
// rdbSaveRio: the magic and version, the auxiliary fields, the function
// libraries (rdbSaveFunctions comes before the databases), then each
// non-empty database (SELECTDB, RESIZEDB, its keys), EOF and the CRC-64 of
// every byte before it, little endian. Values are in the forms DUMP writes
// (Encode), which Redis 7.0 loads; JSON documents are written as the
// RedisJSON module writes them (module.go).

// AuxField is one auxiliary field of the header (redis-ver, ctime...).
type AuxField struct{ Key, Value string }

// FileWriter writes an RDB file to an io.Writer, keeping the running
// checksum. The first error sticks: later calls do nothing and Close
// returns it.
type FileWriter struct {
	w   *bufio.Writer
	crc uint64 // Redis's crc64 of everything written so far
	buf []byte
	val []byte // Key's scratch
	err error
}

// NewFileWriter starts a file on w: the magic, version 10 and aux.
func NewFileWriter(w io.Writer, aux []AuxField) *FileWriter {
	f := &FileWriter{w: bufio.NewWriterSize(w, 256<<10)}
	f.buf = fmt.Appendf(f.buf[:0], "%s%04d", fileMagic, Version)
	for _, a := range aux {
		f.buf = append(f.buf, opAux)
		f.buf = appendString(f.buf, []byte(a.Key))
		f.buf = appendString(f.buf, []byte(a.Value))
	}
	f.flush()
	return f
}

// flush writes f.buf and empties it.
func (f *FileWriter) flush() {
	if f.err == nil {
		f.crc = fileCRCUpdate(f.crc, f.buf)
		_, f.err = f.w.Write(f.buf)
	}
	f.buf = f.buf[:0]
}

// fileCRCUpdate is Redis's crc64(crc, p, len(p)): CRC64 carried on from crc.
func fileCRCUpdate(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}

// Functions writes the libraries' codes, each as a FUNCTION2 opcode and a
// string (rdbSaveFunctions). Redis writes them before the databases.
func (f *FileWriter) Functions(codes [][]byte) {
	for _, code := range codes {
		f.buf = appendString(append(f.buf, opFunction2), code)
		f.flush()
	}
}

// Database starts database db: SELECTDB, then RESIZEDB with its key count
// and the count of keys with an expiry, which the loader takes as hash
// table size hints.
func (f *FileWriter) Database(db int, keys, expires uint64) {
	f.buf = appendLen(append(f.buf, opSelectDB), uint64(db))
	f.buf = appendLen(append(f.buf, opResizeDB), keys)
	f.buf = appendLen(f.buf, expires)
	f.flush()
}

// keyHead writes a key's expiry (unix ms, 0 for none), its value's type
// byte and its name into f.buf.
func (f *FileWriter) keyHead(key []byte, expireAt int64, typ byte) {
	if expireAt != 0 {
		f.buf = binary.LittleEndian.AppendUint64(append(f.buf, opExpireTimeMs), uint64(expireAt))
	}
	f.buf = appendString(append(f.buf, typ), key)
}

// Key writes one key of the current database with its expiry (unix ms, 0
// for none) and value, encoded as DUMP encodes it.
func (f *FileWriter) Key(key []byte, expireAt int64, v *Value) {
	f.val = appendValue(f.val[:0], v) // the type byte, then the value
	f.keyHead(key, expireAt, f.val[0])
	f.buf = append(f.buf, f.val[1:]...)
	f.flush()
}

// Close ends the file (EOF and the checksum) and flushes it to the
// underlying writer, which it does not close or sync.
func (f *FileWriter) Close() error {
	f.buf = append(f.buf, opEOF)
	f.flush()
	if f.err != nil {
		return f.err
	}
	f.buf = binary.LittleEndian.AppendUint64(f.buf, f.crc)
	if _, err := f.w.Write(f.buf); err != nil {
		return err
	}
	return f.w.Flush()
}

// Err is the first error met writing, if any.
func (f *FileWriter) Err() error { return f.err }
