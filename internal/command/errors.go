package command

// Redis's error replies, word for word.
const (
	ErrWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax      = "ERR syntax error"
	ErrNotInt      = "ERR value is not an integer or out of range"
	ErrNotFloat    = "ERR value is not a valid float"
	ErrOverflow    = "ERR increment or decrement would overflow"
	ErrNoSuchKey   = "ERR no such key"
	ErrDBIndex     = "ERR DB index is out of range"
	ErrStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrExpireTime  = "ERR invalid expire time in '%s' command"
)

// WrongArity is the reply for a wrong number of arguments.
func WrongArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// ErrSelectCluster answers SELECT of a database other than 0 in cluster mode.
const ErrSelectCluster = "ERR SELECT is not allowed in cluster mode"
