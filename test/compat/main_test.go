package compat

import (
	"os"
	"strings"
	"testing"

	"basalt/internal/command"
	"basalt/internal/testutil"
)

// TestMain: in the pass under Redis Cluster's rules (BASALT_SHARDS), every
// key the tests send gets the hash tag {t} (testutil.KeyTag), so a
// scenario's keys share one slot on both servers.
func TestMain(m *testing.M) {
	if testutil.ShardMode() > 0 {
		testutil.KeyTag = tagKeys
	}
	os.Exit(m.Run())
}

// tagKeys prefixes {t} to each key argument of a command (as COMMAND
// GETKEYS finds them) that has no hash tag of its own.
func tagKeys(args []string) []string {
	if len(args) == 0 {
		return args
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	cmd := command.Lookup(argv[0])
	if cmd == nil {
		return args
	}
	kind := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if sub := cmd.Subcommand(argv[1]); sub != nil {
			kind = sub
		}
	}
	var out []string
	for _, k := range kind.SlotKeys(argv) {
		for i, a := range argv {
			// The keys are argv's own elements: find each by its bytes' address.
			if len(k) == 0 || len(a) != len(k) || &a[0] != &k[0] || hasTag(args[i]) {
				continue
			}
			if out == nil {
				out = append([]string(nil), args...)
			}
			out[i] = "{t}" + args[i]
		}
	}
	if out == nil {
		return args
	}
	return out
}

// hasTag reports whether key has a hash tag: a non-empty {...}.
func hasTag(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}
