package rdb

import (
	"fmt"
	"strings"
)

// Module values (RDB_TYPE_MODULE_2), of which basalt knows one: RedisJSON's
// JSON documents. This is the one encoder and the one decoder of them,
// used by DUMP/RESTORE payloads (Encode, Decode) and by RDB files
// (FileWriter, FileReader) alike, since a value has the same bytes in both.
//
// Redis writes a module value (rdbSaveObject) as the module type's 64-bit
// id as a length, then what the type's rdb_save wrote, each item after its
// opcode (RDB_MODULE_OPCODE_*), then the EOF opcode.

// Module data opcodes (RDB_MODULE_OPCODE_*): the fields of module data,
// each an opcode and its value, up to an EOF.
const (
	moduleOpEOF    = 0
	moduleOpSInt   = 1
	moduleOpUInt   = 2
	moduleOpFloat  = 3
	moduleOpDouble = 4
	moduleOpString = 5
)

// RedisJSON's module type (RedisJSON 2.x, redis_json/src/lib.rs and
// redisjson.rs): the type "ReJSON-RL" at encoding version 3, whose
// rdb_save writes the document as one string of compact JSON text, which
// its rdb_load parses back.
const (
	reJSONTypeName        = "ReJSON-RL"
	reJSONEncodingVersion = 3
)

// moduleTypeNameAlphabet is the alphabet of module type names: a name's 9
// characters are 6 bits each of its id (module.c, moduleTypeEncodeId).
const moduleTypeNameAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleTypeID is the id Redis writes before a module value: the 9
// characters of the type's name, 6 bits each, then 10 bits of encoding
// version. name must be 9 characters of moduleTypeNameAlphabet.
func ModuleTypeID(name string, encver uint64) uint64 {
	if len(name) != 9 {
		panic("rdb: a module type name is 9 characters")
	}
	var id uint64
	for i := range len(name) {
		pos := strings.IndexByte(moduleTypeNameAlphabet, name[i])
		if pos < 0 {
			panic("rdb: bad character in a module type name")
		}
		id = id<<6 | uint64(pos)
	}
	return id<<10 | encver&1023
}

// moduleName decodes a module ID: nine characters of six bits each, then
// a 10-bit encoding version (moduleTypeNameByID).
func moduleName(id uint64) string {
	b := make([]byte, 9)
	for i := range b {
		b[i] = moduleTypeNameAlphabet[(id>>(10+6*(8-i)))&63]
	}
	return string(b)
}

// appendJSON writes a JSON document (v.Str, its JSON text) as RedisJSON
// writes it: the MODULE_2 type byte, ReJSON-RL's id at encoding version 3,
// the text as a string item, then EOF. Redis Stack loads it; a Redis
// without the module refuses it.
func appendJSON(b []byte, doc []byte) []byte {
	b = appendLen(append(b, typeModule2), ModuleTypeID(reJSONTypeName, reJSONEncodingVersion))
	b = appendString(appendLen(b, moduleOpString), doc)
	return appendLen(b, moduleOpEOF)
}

// moduleError is a module value basalt can't read: an ErrFormat (RESTORE
// answers "Bad data format") whose text names the module, for load-rdb.
type moduleError struct {
	name   string
	encver uint64
}

func (e moduleError) Error() string {
	return fmt.Sprintf("a value of module %s (encoding version %d) can't be loaded", e.name, e.encver)
}

func (e moduleError) Is(target error) bool { return target == ErrFormat }

// moduleJSON reads a module value (after its type byte) that must be a
// JSON document of RedisJSON (type ReJSON-RL; basalt has no other
// modules) and returns it as a KindJSON value holding the JSON text, not
// checked here: the reader of the value parses it. RedisJSON 2.x writes
// encoding version 3, one string; version 2 (its first releases) has an
// unsigned after it, and two more strings when that is not 0 (an index's,
// ignored as RedisJSON ignores them). RedisJSON 1.x's version 0 is a tree
// of its own and is refused, as are other versions and other modules.
func (r *reader) moduleJSON() (*Value, error) {
	id, err := r.plainLen()
	if err != nil {
		return nil, err
	}
	name, encver := moduleName(id), id&1023
	if name != reJSONTypeName || encver != 2 && encver != 3 {
		return nil, moduleError{name, encver}
	}
	str := func() ([]byte, error) {
		if op, err := r.plainLen(); err != nil || op != moduleOpString {
			return nil, ErrFormat
		}
		return r.str()
	}
	doc, err := str()
	if err != nil {
		return nil, err
	}
	if encver == 2 {
		op, err := r.plainLen()
		if err != nil || op != moduleOpUInt {
			return nil, ErrFormat
		}
		n, err := r.plainLen()
		if err != nil {
			return nil, err
		}
		for i := 0; n > 0 && i < 2; i++ {
			if _, err := str(); err != nil {
				return nil, err
			}
		}
	}
	if op, err := r.plainLen(); err != nil || op != moduleOpEOF {
		return nil, ErrFormat
	}
	return &Value{Kind: KindJSON, Str: doc}, nil
}
