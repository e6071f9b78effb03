package testutil

import (
	"slices"
	"testing"
)

// splitCommand finds the commands a Conn sent, as a server reads them.
func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		n    int
		bad  bool
	}{
		{in: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n", args: []string{"GET", "k"}, n: 20},
		{in: "*2\r\n$3\r\nGET\r\n$1\r\n"},      // not whole yet
		{in: "*2\r\n$3\r\nGET\r\n$5\r\nk\r\n"}, // the bulk's end still to come
		{in: "SET a \"b c\"\r\nPING\r\n", args: []string{"SET", "a", "b c"}, n: 13},
		{in: "\r\n", n: 2},
		{in: "*x\r\n", bad: true},
		{in: "*1\r\n:3\r\n", bad: true},
		{in: "*1\r\n$999999999999\r\n", bad: true},
	} {
		args, n, err := splitCommand([]byte(tc.in))
		if (err != nil) != tc.bad || n != tc.n || !slices.Equal(args, tc.args) {
			t.Errorf("%q: %q %d %v, want %q %d bad=%v", tc.in, args, n, err, tc.args, tc.n, tc.bad)
		}
	}
}
