package resp

import (
	"bufio"
	"strings"
	"testing"
)

func TestReadReply(t *testing.T) {
	replies := []string{
		"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nfoo\r\n", "$-1\r\n", "*-1\r\n", "_\r\n",
		"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", "%1\r\n+k\r\n$1\r\nv\r\n", ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n",
		"|1\r\n+key\r\n+val\r\n:5\r\n", "$4\r\na\r\nb\r\n", ",1.5\r\n", "~0\r\n",
	}
	in := strings.Join(replies, "")
	r := bufio.NewReader(strings.NewReader(in))
	for _, want := range replies {
		got, err := ReadReply(r, nil)
		if err != nil || string(got) != want {
			t.Fatalf("ReadReply = %q, %v; want %q", got, err, want)
		}
	}
	for _, bad := range []string{"?x\r\n", "$x\r\n", "*2\r\n:1\r\n", "$5\r\nab\r\n", "+OK\n"} {
		if _, err := ReadReply(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("ReadReply(%q) accepted a malformed reply", bad)
		}
	}
}

func TestReplyLen(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"+OK\r\nrest", 5},
		{"-ERR x\r\n", 8},
		{"$3\r\nfoo\r\n:1\r\n", 9},
		{"$-1\r\n", 5},
		{"*2\r\n:1\r\n-WRONGTYPE x\r\n+tail\r\n", 22},
		{"*-1\r\n", 5},
		{"%1\r\n+a\r\n:1\r\n", 12},
		{"*2\r\n:1\r\n", 0}, // incomplete
		{"$5\r\nab\r\n", 0},
		{"", 0},
	} {
		if got := ReplyLen([]byte(c.in)); got != c.want {
			t.Errorf("ReplyLen(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
