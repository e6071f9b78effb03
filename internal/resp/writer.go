package resp

import (
	"math"
	"slices"
	"strconv"
)

// Writer appends replies to a buffer in the client's protocol version.
// Aggregate replies are written as a header (ArrayLen, MapLen...) followed by
// their elements. RESP3-only types degrade to their RESP2 forms as Redis does.
type Writer struct {
	Buf   []byte
	Proto int // 2 or 3
	// ErrorsCounted is how many of the error replies written were counted
	// as errors already (a script's, made from its redis.call's error):
	// INFO errorstats must not count them again.
	ErrorsCounted int
}

// NewWriter returns a Writer for protocol version proto.
func NewWriter(proto int) *Writer { return &Writer{Proto: proto} }

func (w *Writer) Reset()        { w.Buf, w.ErrorsCounted = w.Buf[:0], 0 }
func (w *Writer) Len() int      { return len(w.Buf) }
func (w *Writer) Bytes() []byte { return w.Buf }

// Raw appends already encoded RESP.
func (w *Writer) Raw(b []byte) { w.Buf = append(w.Buf, b...) }

func (w *Writer) line(prefix byte, s string) {
	w.Buf = append(w.Buf, prefix)
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

func (w *Writer) header(prefix byte, n int64) {
	if n >= 0 && n < 100 {
		// Most lengths and counts are small: writing their digits here
		// costs a fraction of strconv's general path, which shows in
		// replies of many short elements (HGETALL, ZRANGE).
		if n < 10 {
			w.Buf = append(w.Buf, prefix, byte('0'+n), '\r', '\n')
		} else {
			w.Buf = append(w.Buf, prefix, byte('0'+n/10), byte('0'+n%10), '\r', '\n')
		}
		return
	}
	w.Buf = append(w.Buf, prefix)
	w.Buf = strconv.AppendInt(w.Buf, n, 10)
	w.Buf = append(w.Buf, '\r', '\n')
}

// OK writes +OK.
func (w *Writer) OK() { w.Buf = append(w.Buf, "+OK\r\n"...) }

// Simple writes a status reply.
func (w *Writer) Simple(s string) { w.line('+', s) }

// Error writes an error reply; msg starts with its code, e.g. "ERR syntax error".
// Newlines would break the protocol, so they become spaces as in Redis.
func (w *Writer) Error(msg string) {
	w.Buf = append(w.Buf, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.Buf = append(w.Buf, c)
	}
	w.Buf = append(w.Buf, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	if n := len(b); n < 100 {
		// The short element of a long reply (HGETALL, ZRANGE): its header
		// written in place, no call.
		if n < 10 {
			w.Buf = append(w.Buf, '$', byte('0'+n), '\r', '\n')
		} else {
			w.Buf = append(w.Buf, '$', byte('0'+n/10), byte('0'+n%10), '\r', '\n')
		}
	} else {
		w.header('$', int64(n))
	}
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkFill writes a bulk string of n bytes that fill writes in place (its
// buffer zeroed first): a big value read in pieces is not assembled
// elsewhere and copied again.
func (w *Writer) BulkFill(n int, fill func(dst []byte)) {
	w.header('$', int64(n))
	w.Buf = slices.Grow(w.Buf, n+2)
	dst := w.Buf[len(w.Buf) : len(w.Buf)+n]
	clear(dst)
	fill(dst)
	w.Buf = append(w.Buf[:len(w.Buf)+n], '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkInt writes n as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [20]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes a null bulk string ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "$-1\r\n"...)
	}
}

// NullArray writes a null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
	} else {
		w.Buf = append(w.Buf, "*-1\r\n"...)
	}
}

// ArrayLen starts an array of n elements.
func (w *Writer) ArrayLen(n int) { w.header('*', int64(n)) }

// LenBefore puts a length header, written by header, at mark: before the
// elements written since, for a reply whose count is known only once its
// elements are written (streamed from an iterator, not collected first).
func (w *Writer) LenBefore(mark int, header func()) {
	tail := len(w.Buf)
	header()
	var hdr [32]byte // a header is at most 23 bytes
	n := copy(hdr[:], w.Buf[tail:])
	copy(w.Buf[mark+n:], w.Buf[mark:tail])
	copy(w.Buf[mark:], hdr[:n])
}

// MapLen starts a map of n key/value pairs (a flat array of 2n in RESP2).
func (w *Writer) MapLen(n int) {
	if w.Proto >= 3 {
		w.header('%', int64(n))
	} else {
		w.header('*', int64(2*n))
	}
}

// SetLen starts a set of n elements (an array in RESP2).
func (w *Writer) SetLen(n int) {
	if w.Proto >= 3 {
		w.header('~', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// PushLen starts an out-of-band push message (an array in RESP2).
func (w *Writer) PushLen(n int) {
	if w.Proto >= 3 {
		w.header('>', int64(n))
	} else {
		w.header('*', int64(n))
	}
}

// Double writes a double: a RESP3 double, or a bulk string in RESP2,
// formatted as Redis's "%.17g" with inf and -inf spelled out.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = append(tmp[:0], "inf"...)
	case math.IsInf(f, -1):
		s = append(tmp[:0], "-inf"...)
	case math.IsNaN(f):
		s = append(tmp[:0], "nan"...)
	default:
		s = strconv.AppendFloat(tmp[:0], f, 'g', 17, 64)
	}
	if w.Proto >= 3 {
		w.Buf = append(w.Buf, ',')
		w.Buf = append(w.Buf, s...)
		w.Buf = append(w.Buf, '\r', '\n')
	} else {
		w.Bulk(s)
	}
}

// Bool writes a RESP3 boolean, or 1/0 in RESP2.
func (w *Writer) Bool(b bool) {
	switch {
	case w.Proto >= 3 && b:
		w.Buf = append(w.Buf, "#t\r\n"...)
	case w.Proto >= 3:
		w.Buf = append(w.Buf, "#f\r\n"...)
	case b:
		w.Int(1)
	default:
		w.Int(0)
	}
}

// Verbatim writes a RESP3 verbatim string with a three-letter format
// ("txt"), or a bulk string in RESP2.
func (w *Writer) Verbatim(format, s string) {
	if w.Proto < 3 {
		w.BulkString(s)
		return
	}
	w.header('=', int64(len(s)+4))
	w.Buf = append(w.Buf, format...)
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkStrings writes an array of bulk strings.
func (w *Writer) BulkStrings(ss []string) {
	w.ArrayLen(len(ss))
	for _, s := range ss {
		w.BulkString(s)
	}
}
