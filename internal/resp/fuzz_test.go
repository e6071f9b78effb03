package resp

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
	"testing/iotest"
)

// encode writes args as a RESP multibulk command.
func encode(args [][]byte) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n", len(a))
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// FuzzReadCommand: any input decodes to commands or an error, never a
// panic; the decoded arguments never hold more bytes than the input; a
// decoded command encoded again reads back the same.
func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"PING\r\nSET a \"b c\"\r\n",
		"*1\r\n$500000000\r\nabc",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n",
		"*-1\r\n*0\r\nPING\n",
		"SET 'a\\'b' \"\\x41\\n\"\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		r.MaxBulk = 1 << 20 // keep the fuzzer's memory in check
		// The same input arriving a byte at a time must read the same:
		// every buffer refill lands somewhere else.
		slow := NewReader(iotest.OneByteReader(bytes.NewReader(data)))
		slow.MaxBulk = r.MaxBulk
		total := 0
		for range 1000 {
			args, err := r.ReadCommand()
			slowArgs, slowErr := slow.ReadCommand()
			if !slices.EqualFunc(args, slowArgs, bytes.Equal) || (err == nil) != (slowErr == nil) {
				t.Fatalf("byte-at-a-time read %q, %v; whole read %q, %v", slowArgs, slowErr, args, err)
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !IsProtocolError(err) {
					t.Fatalf("unexpected error type %T: %v", err, err)
				}
				break
			}
			for _, a := range args {
				total += len(a)
			}
			if total > len(data) {
				t.Fatalf("decoded %d argument bytes from %d input bytes", total, len(data))
			}
			if args == nil {
				continue
			}
			again, err := NewReader(bytes.NewReader(encode(args))).ReadCommand()
			if err != nil || !slices.EqualFunc(args, again, bytes.Equal) {
				t.Fatalf("re-encoded %q read back as %q, %v", args, again, err)
			}
		}
	})
}

// quote writes an argument in double quotes with every byte hex-escaped,
// which SplitArgs must read back exactly.
func quote(a []byte) []byte {
	b := []byte{'"'}
	for _, c := range a {
		b = fmt.Appendf(b, `\x%02x`, c)
	}
	return append(b, '"')
}

// FuzzSplitArgs: never panics; what it splits, quoted again, splits the
// same; no argument is longer than the line.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{
		`SET a b`, `SET "a b" 'c d'`, `"\x41\x4g\n\"" '\''`, `"a"b`, `'a`, "a\x00b", "\t a \v\f b\r\n", `""`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		args, ok := SplitArgs(line)
		if !ok {
			return
		}
		var requoted []byte
		n := 0
		for i, a := range args {
			if a == nil {
				t.Fatalf("argument %d is nil, want empty", i)
			}
			n += len(a)
			if i > 0 {
				requoted = append(requoted, ' ')
			}
			requoted = append(requoted, quote(a)...)
		}
		if n > len(line) {
			t.Fatalf("%q split into %d bytes of arguments", line, n)
		}
		again, ok := SplitArgs(requoted)
		if !ok || !slices.EqualFunc(args, again, bytes.Equal) {
			t.Fatalf("%q split as %q; requoted %q split as %q (ok %v)", line, args, requoted, again, ok)
		}
	})
}
