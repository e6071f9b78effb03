package resp

import (
	"bufio"
	"errors"
	"strconv"
)

// ReadReply appends one complete reply read from r, in its raw form, to buf.
// A follower relays the leader's replies with it without decoding them. It
// reads RESP2 and RESP3 (not streamed aggregates, which servers do not send
// to ordinary commands).
func ReadReply(r *bufio.Reader, buf []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return buf, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return buf, errors.New("malformed reply line")
	}
	buf = append(buf, line...)
	head := line[1 : len(line)-2]
	var elems int64
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return buf, nil
	case '$', '!', '=':
		n, err := strconv.ParseInt(string(head), 10, 64)
		if err != nil {
			return buf, errors.New("malformed bulk length")
		}
		if n < 0 {
			return buf, nil
		}
		start := len(buf)
		buf = append(buf, make([]byte, n+2)...)
		if _, err := readFull(r, buf[start:]); err != nil {
			return buf, err
		}
		return buf, nil
	case '*', '~', '>':
		elems, err = strconv.ParseInt(string(head), 10, 64)
	case '%', '|':
		elems, err = strconv.ParseInt(string(head), 10, 64)
		elems *= 2
	default:
		return buf, errors.New("unknown reply type " + strconv.Quote(string(line[:1])))
	}
	if err != nil {
		return buf, errors.New("malformed aggregate length")
	}
	for i := int64(0); i < elems; i++ {
		if buf, err = ReadReply(r, buf); err != nil {
			return buf, err
		}
	}
	if line[0] == '|' { // an attribute precedes the reply it describes
		return ReadReply(r, buf)
	}
	return buf, nil
}

func readFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReplyLen is the length of the complete reply b starts with, 0 if b does
// not start with one (EXEC's replies are told apart with it).
func ReplyLen(b []byte) int {
	end := 0
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			end = i + 2
			break
		}
	}
	if end < 3 {
		return 0
	}
	head := b[1 : end-2]
	var elems int64
	switch b[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return end
	case '$', '!', '=':
		n, err := strconv.ParseInt(string(head), 10, 64)
		if err != nil {
			return 0
		}
		if n < 0 {
			return end
		}
		if int64(len(b)-end) < n+2 {
			return 0
		}
		return end + int(n) + 2
	case '*', '~', '>':
		n, err := strconv.ParseInt(string(head), 10, 64)
		if err != nil {
			return 0
		}
		elems = n
	case '%', '|':
		n, err := strconv.ParseInt(string(head), 10, 64)
		if err != nil {
			return 0
		}
		elems = 2 * n
	default:
		return 0
	}
	if b[0] == '|' {
		elems++ // the reply an attribute precedes
	}
	at := end
	for i := int64(0); i < elems; i++ {
		n := ReplyLen(b[at:])
		if n == 0 {
			return 0
		}
		at += n
	}
	return at
}
