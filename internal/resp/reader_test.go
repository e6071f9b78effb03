package resp

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads commands until an error and returns them and the error
// (io.EOF at a clean end). Empty inline lines give nil and are skipped, as
// the server does.
func readAll(in string) ([][]string, error) {
	r := NewReader(strings.NewReader(in))
	var cmds [][]string
	for {
		args, err := r.ReadCommand()
		if err != nil {
			return cmds, err
		}
		if args == nil {
			continue
		}
		var c []string
		for _, a := range args {
			c = append(c, string(a))
		}
		cmds = append(cmds, c)
	}
}

func TestReadCommand(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     [][]string
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", [][]string{{"GET", "k"}}},
		{"pipelined", "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$0\r\n\r\nPING\r\n", [][]string{{"PING"}, {"SET", "a", ""}, {"PING"}}},
		{"binary bulk", "*2\r\n$4\r\nECHO\r\n$4\r\n\r\n\x00\xff\r\n", [][]string{{"ECHO", "\r\n\x00\xff"}}},
		{"inline CRLF", "SET a b\r\n", [][]string{{"SET", "a", "b"}}},
		{"inline LF", "SET a b\nGET a\n", [][]string{{"SET", "a", "b"}, {"GET", "a"}}},
		{"inline spaces", "  SET \t a   b  \r\n", [][]string{{"SET", "a", "b"}}},
		{"empty lines", "\r\n\n   \r\nPING\r\n", [][]string{{"PING"}}},
		{"double quotes", `SET "a b" "x\x41\n\"y"` + "\r\n", [][]string{{"SET", "a b", "xA\n\"y"}}},
		{"single quotes", `SET 'a "b' 'it\'s'` + "\r\n", [][]string{{"SET", `a "b`, "it's"}}},
		{"empty quoted", `SET "" ''` + "\r\n", [][]string{{"SET", "", ""}}},
		{"bad hex escape", `ECHO "\x4g"` + "\r\n", [][]string{{"ECHO", "x4g"}}},
		{"vertical tab inside word", "ECHO a\vb\r\n", [][]string{{"ECHO", "a\vb"}}},
		{"NUL ends inline", "ECHO a\x00b\r\nPING\r\n", [][]string{{"ECHO", "a"}, {"PING"}}},
		{"zero multibulk", "*0\r\n*-1\r\n*-5\r\nPING\r\n", [][]string{{"PING"}}},
		// Redis skips the two bytes after bulk data without checking them.
		{"bulk terminator unchecked", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}, {"PING"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(c.in)
			if err != io.EOF {
				t.Fatalf("error %v after %q", err, got)
			}
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestReadCommandErrors(t *testing.T) {
	long := strings.Repeat("x", MaxInlineSize+10)
	for _, c := range []struct {
		name, in, want string
	}{
		{"multibulk not a number", "*x\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk empty", "*\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk plus", "*+1\r\n$4\r\nPING\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk leading zero", "*01\r\n$4\r\nPING\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk minus zero", "*-0\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk over INT_MAX", "*2147483648\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk LF only", "*1\n$4\r\nPING\r\n", "Protocol error: invalid multibulk length"},
		{"multibulk trailing space", "*1 \r\n", "Protocol error: invalid multibulk length"},
		{"expected dollar", "*1\r\nx\r\n", "Protocol error: expected '$', got 'x'"},
		{"expected dollar star", "*2\r\n$1\r\na\r\n*1\r\n", "Protocol error: expected '$', got '*'"},
		{"bulk negative", "*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
		{"bulk empty", "*1\r\n$\r\n", "Protocol error: invalid bulk length"},
		{"bulk leading zero", "*1\r\n$04\r\nPING\r\n", "Protocol error: invalid bulk length"},
		{"bulk LF only", "*1\r\n$4\nPING\r\n", "Protocol error: invalid bulk length"},
		{"bulk over max", "*1\r\n$536870913\r\n", "Protocol error: invalid bulk length"},
		{"bulk huge", "*1\r\n$99999999999999999999\r\n", "Protocol error: invalid bulk length"},
		{"unbalanced double", "SET \"a b\r\n", "Protocol error: unbalanced quotes in request"},
		{"unbalanced single", "SET 'a\r\n", "Protocol error: unbalanced quotes in request"},
		{"quote then letter", "SET \"a\"b c\r\n", "Protocol error: unbalanced quotes in request"},
		{"too big inline", long, "Protocol error: too big inline request"},
		{"too big mbulk count", "*" + long, "Protocol error: too big mbulk count string"},
		{"too big bulk count", "*1\r\n$" + long, "Protocol error: too big bulk count string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(c.in)
			if !IsProtocolError(err) {
				t.Fatalf("got %v, want protocol error %q", err, c.want)
			}
			if err.Error() != c.want {
				t.Errorf("got %q, want %q", err.Error(), c.want)
			}
		})
	}
}

// TestReadCommandIncomplete: input ending in the middle of a command is an
// unexpected EOF, never a command.
func TestReadCommandIncomplete(t *testing.T) {
	for _, in := range []string{"*1", "*1\r\n", "*1\r\n$4\r\nPI", "*1\r\n$4\r\nPING", "*2\r\n$4\r\nPING\r\n", "PING"} {
		cmds, err := readAll(in)
		if len(cmds) != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: got %q, %v; want io.ErrUnexpectedEOF", in, cmds, err)
		}
	}
}

func TestUnauthenticatedLimits(t *testing.T) {
	r := NewReader(strings.NewReader("*11\r\n"))
	r.Authenticated = false
	if _, err := r.ReadCommand(); err == nil || err.Error() != "Protocol error: unauthenticated multibulk length" {
		t.Errorf("got %v", err)
	}
	r = NewReader(strings.NewReader("*1\r\n$16385\r\n"))
	r.Authenticated = false
	if _, err := r.ReadCommand(); err == nil || err.Error() != "Protocol error: unauthenticated bulk length" {
		t.Errorf("got %v", err)
	}
}

// TestHugeBulkDoesNotAllocate: a client announcing a 500 MB argument and
// sending a few bytes must not make the reader allocate anything near it.
func TestHugeBulkDoesNotAllocate(t *testing.T) {
	in := "*1\r\n$500000000\r\nabc"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readAll(in)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want unexpected EOF", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("reading a 500 MB announcement with 3 bytes of data allocated %d bytes", n)
	}
	// Many announced arguments cost nothing up front either.
	runtime.ReadMemStats(&before)
	_, _ = readAll("*2000000000\r\n")
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("a 2e9-argument announcement allocated %d bytes", n)
	}
}

// TestBigBulk reads an argument larger than the chunk size in pieces.
func TestBigBulk(t *testing.T) {
	val := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB
	in := "*2\r\n$4\r\nECHO\r\n$" + itoa(len(val)) + "\r\n" + string(val) + "\r\n"
	cmds, err := readAll(in)
	if err != io.EOF || len(cmds) != 1 || cmds[0][1] != string(val) {
		t.Fatalf("big bulk not read back: %v, %d commands", err, len(cmds))
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// A command made of many small arguments is bounded like a big one.
func TestQueryLimit(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("*100\r\n")
	for range 100 {
		in.WriteString("$20\r\n01234567890123456789\r\n")
	}
	r := NewReader(&in)
	r.MaxQuery = 1000
	if _, err := r.ReadCommand(); err != ErrQueryLimit {
		t.Fatalf("got %v, want ErrQueryLimit", err)
	}
	in.Reset()
	in.WriteString("*10\r\n")
	for range 10 {
		in.WriteString("$20\r\n01234567890123456789\r\n")
	}
	if args, err := NewReader(&in).ReadCommand(); err != nil || len(args) != 10 {
		t.Fatalf("got %d args, %v", len(args), err)
	}
}

// A header whose CR is the last buffered byte must survive the refill that
// reading its LF triggers (input arriving a byte at a time hits every case).
func TestHeaderAcrossRefill(t *testing.T) {
	in := "*3\r\n$4\r\nHSET\r\n$12\r\nkey-12345678\r\n$10\r\n0123456789\r\n"
	r := NewReader(iotest.OneByteReader(strings.NewReader(strings.Repeat(in, 3))))
	for i := range 3 {
		args, err := r.ReadCommand()
		if err != nil || len(args) != 3 || string(args[1]) != "key-12345678" {
			t.Fatalf("command %d: %q, %v", i, args, err)
		}
	}
}

// BenchmarkReadCommand reads a pipeline of ZRANGEBYSCORE commands.
func BenchmarkReadCommand(b *testing.B) {
	cmd := "*4\r\n$13\r\nZRANGEBYSCORE\r\n$7\r\nbench:z\r\n$3\r\n100\r\n$3\r\n200\r\n"
	in := []byte(strings.Repeat(cmd, 1000))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in))
		for range 1000 {
			if _, err := r.ReadCommand(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestShortArgsShareNothingVisible: short arguments share a block, but
// appending to one never changes another, and "" is not nil.
func TestShortArgsShareNothingVisible(t *testing.T) {
	r := NewReader(strings.NewReader("*4\r\n$3\r\nset\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\nvv\r\n"))
	args, err := r.ReadCommand()
	if err != nil || len(args) != 4 {
		t.Fatalf("%q, %v", args, err)
	}
	if args[2] == nil {
		t.Error("empty argument is nil")
	}
	_ = append(args[1], "xx"...)
	_ = append(args[2], "yy"...)
	if string(args[0]) != "set" || string(args[1]) != "k" || string(args[2]) != "" || string(args[3]) != "vv" {
		t.Errorf("args changed: %q", args)
	}
}
