// Package resp reads Redis commands (RESP multibulk and inline) and writes
// replies in RESP2 or RESP3.
//
// The codec is ours rather than a library's because it must speak both RESP2
// and RESP3 and must refuse oversized input before allocating it, with
// Redis's exact error strings.
package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Limits that Redis applies to client input.
const (
	DefaultMaxBulk    = 512 << 20 // proto-max-bulk-len
	MaxInlineSize     = 64 << 10  // PROTO_INLINE_MAX_SIZE
	MaxMultibulkLen   = 1<<31 - 1 // INT_MAX, as Redis
	UnauthMultibulk   = 10        // multibulk length allowed before AUTH
	UnauthBulk        = 16384     // bulk length allowed before AUTH
	readBufferSize    = 64 << 10
	preallocArgsLimit = 1024 // arguments allocated up front; beyond, grow as read
	// Short arguments (argArena bytes at most) are copied into blocks of
	// arenaBlock bytes that the commands a Reader reads share, and argument
	// lists of up to argsBlock/8 into blocks of argsBlock slices: a GET or
	// a SET then allocates nothing of its own. A block lives as long as one
	// of its commands is kept (in a MULTI queue, a blocked client).
	argArena   = 64
	arenaBlock = 4096
	argsBlock  = 256
	bigArgs    = 1 << 20 // a command this big gets its own argument list
)

// DefaultMaxQuery bounds the memory one command may take, as Redis's
// client-query-buffer-limit (1 GB) does: millions of small arguments are as
// dangerous as one huge one.
const DefaultMaxQuery = 1 << 30

// ErrQueryLimit ends a connection whose command outgrows Reader.MaxQuery. Redis
// closes such a client without a reply; so do we.
var ErrQueryLimit = errors.New("query buffer limit reached")

// ProtocolError is answered as "-ERR Protocol error: ..." and then the
// connection is closed, as Redis does.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }

// Reader reads commands from a client connection.
type Reader struct {
	br       *bufio.Reader
	MaxBulk  int64
	MaxQuery int64
	// Authenticated lifts the tighter limits Redis applies before AUTH.
	Authenticated bool
	// LastSize is what the last command's arguments weigh (slice headers
	// included; 0 for an inline one); while it is read, what the bulks
	// announced so far weigh.
	LastSize int64
	// Grown, if set, hears the size of each buffer a big bulk's growth
	// allocates (the buffer before it is garbage).
	Grown func(n int)

	arena []byte   // the current block of short arguments
	args  [][]byte // the current block of argument lists
}

// NewReader returns a Reader with Redis's default limits.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readBufferSize), MaxBulk: DefaultMaxBulk, MaxQuery: DefaultMaxQuery, Authenticated: true}
}

// Buffered reports how many bytes are already read from the connection and
// waiting: non-zero means the client pipelined more commands.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Wait blocks until input arrives or reading fails; the input stays
// buffered. A blocked client uses it to notice a disconnect.
func (r *Reader) Wait() error {
	_, err := r.br.Peek(1)
	return err
}

// ReadCommand returns the next command's arguments. An empty inline line
// yields a nil slice with no error; callers skip it. Arguments are freshly
// allocated and may be kept.
func (r *Reader) ReadCommand() ([][]byte, error) {
	r.LastSize = 0
	b, err := r.br.Peek(1)
	if err != nil {
		return nil, err
	}
	if b[0] == '*' {
		return r.readMultibulk()
	}
	return r.readInline()
}

// readLine returns one CRLF-terminated line without the terminator. Lines
// longer than max are a protocol error named by what.
func (r *Reader) readLine(max int, tooBig string) ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Redis refuses a header or inline line over its limit rather than
		// buffering it; with a 64 KiB buffer this is the same limit.
		if max <= r.br.Size() {
			return nil, protoErr(tooBig)
		}
		var long []byte
		long = append(long, line...)
		for err == bufio.ErrBufferFull {
			if len(long) > max {
				return nil, protoErr(tooBig)
			}
			line, err = r.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) > max {
		return nil, protoErr(tooBig)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readHeader reads a multibulk or bulk length line. As Redis, the line ends
// at the first '\r' and the byte after it is skipped whatever it is, so a
// lone '\n' does not end a header.
func (r *Reader) readHeader(tooBig string) ([]byte, error) {
	line, err := r.br.ReadSlice('\r')
	if err == bufio.ErrBufferFull {
		return nil, protoErr(tooBig)
	}
	if err == nil {
		if r.br.Buffered() == 0 {
			// ReadByte refills the buffer, overwriting what line points to.
			line = append([]byte(nil), line...)
		}
		_, err = r.br.ReadByte()
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return line[:len(line)-1], nil
}

func (r *Reader) readMultibulk() ([][]byte, error) {
	line, err := r.readHeader("too big mbulk count string")
	if err != nil {
		return nil, err
	}
	n, ok := parseLen(line[1:])
	if !ok || n > MaxMultibulkLen {
		return nil, protoErr("invalid multibulk length")
	}
	if !r.Authenticated && n > UnauthMultibulk {
		return nil, protoErr("unauthenticated multibulk length")
	}
	if n <= 0 {
		return nil, nil
	}
	var args [][]byte
	if n <= argsBlock/8 {
		if cap(r.args)-len(r.args) < int(n) {
			r.args = make([][]byte, 0, argsBlock)
		}
		args = r.args[len(r.args) : len(r.args) : len(r.args)+int(n)]
		r.args = r.args[:len(r.args)+int(n)]
	} else {
		args = make([][]byte, 0, min(n, preallocArgsLimit))
	}
	var total int64 // bytes this command holds, slice headers included
	for i := int64(0); i < n; i++ {
		hdr, err := r.readHeader("too big bulk count string")
		if err != nil {
			return nil, err
		}
		if len(hdr) == 0 || hdr[0] != '$' {
			c := byte(' ')
			if len(hdr) > 0 {
				c = hdr[0]
			}
			return nil, protoErr("expected '$', got '" + string(c) + "'")
		}
		size, ok := parseLen(hdr[1:])
		if !ok || size < 0 || size > r.MaxBulk {
			return nil, protoErr("invalid bulk length")
		}
		if !r.Authenticated && size > UnauthBulk {
			return nil, protoErr("unauthenticated bulk length")
		}
		if total += size + 24; total > r.MaxQuery {
			return nil, ErrQueryLimit
		}
		r.LastSize = total
		var arg []byte
		if size <= argArena && int(size)+2 <= r.br.Buffered() {
			// A short argument already buffered: copied into the arena,
			// not allocated on its own. Its capacity ends with it, so an
			// append to it cannot overwrite the next one.
			if r.arena == nil || cap(r.arena)-len(r.arena) < int(size) { // non-nil: "" is not a missing argument
				r.arena = make([]byte, 0, arenaBlock)
			}
			b, _ := r.br.Peek(int(size))
			r.arena = append(r.arena, b...)
			arg = r.arena[len(r.arena)-int(size) : len(r.arena) : len(r.arena)]
			r.br.Discard(int(size) + 2) // Redis skips the CRLF unchecked
		} else if arg, err = r.readBulk(int(size)); err != nil {
			return nil, err
		}
		args = append(args, arg)
	}
	if n <= argsBlock/8 && total >= bigArgs {
		// The block's slots would keep a big argument alive until the
		// block is dropped, commands later: the list is moved out.
		own := append([][]byte(nil), args...)
		clear(args)
		args = own
	}
	return args, nil
}

// readBulk reads size bytes and the CRLF after them. Large bulks are read in
// chunks so that a client announcing 512 MB and sending nothing does not make
// us allocate 512 MB: the buffer doubles as bytes arrive, and once it would
// pass half the bulk it takes the whole at once (a client holds at most
// four times what it sent), so a 100 MB argument costs 157 MB of
// allocations, not 227.
func (r *Reader) readBulk(size int) ([]byte, error) {
	const chunk = 1 << 20
	buf := make([]byte, 0, min(size+2, chunk))
	for len(buf) < size+2 {
		need := min(size+2-len(buf), chunk)
		if cap(buf)-len(buf) < need {
			grow := 2*cap(buf) + need
			if 2*grow > size+2 {
				grow = size + 2
			}
			grown := make([]byte, len(buf), grow)
			copy(grown, buf)
			buf = grown
			if r.Grown != nil {
				r.Grown(grow)
			}
		}
		n, err := io.ReadFull(r.br, buf[len(buf):len(buf)+need])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	// Redis skips the two bytes after the data without checking them.
	return buf[:size:size], nil
}

func (r *Reader) readInline() ([][]byte, error) {
	line, err := r.readLine(MaxInlineSize, "too big inline request")
	if err != nil {
		return nil, err
	}
	args, ok := SplitArgs(line)
	if !ok {
		return nil, protoErr("unbalanced quotes in request")
	}
	return args, nil
}

// parseLen parses a RESP length as Redis's string2ll: an optional '-' and
// digits, no '+', no leading zero, no "-0".
func parseLen(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// SplitArgs splits an inline command line like Redis's sdssplitargs: spaces
// separate arguments, "double quotes" take \n \r \t \b \a \\ \" and \xHH
// escapes, 'single quotes' take \'. ok is false for unbalanced quotes or a
// closing quote not followed by a space.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	// Redis splits a C string: a NUL byte ends the line.
	if i := bytes.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		inDouble, inSingle, done := false, false, false
		for !done {
			switch {
			case inDouble:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					cur = append(cur, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				} else if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[i])
					}
				} else if c == '"' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			case inSingle:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					i++
					cur = append(cur, '\'')
				} else if c == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			default:
				if i >= len(line) {
					done = true
					continue
				}
				switch c := line[i]; c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					cur = append(cur, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// IsProtocolError reports whether err came from malformed input.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}
