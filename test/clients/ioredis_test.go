package clients

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// nodeDir holds the ioredis script, its package.json and package-lock.json.
const nodeDir = "node"

// TestIORedis runs node/test.js, which drives basalt with the Node.js client
// ioredis (the version pinned in node/package-lock.json) and checks every
// reply: strings, a 1000-command pipeline, MULTI/EXEC, WATCH from 10
// connections, binary values, error replies, scanStream and pub/sub.
func TestIORedis(t *testing.T) {
	node := nodeReady(t)

	p := testutil.StartBasalt(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.js")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "BASALT_HOST=127.0.0.1", "BASALT_PORT="+strconv.Itoa(p.Port))
	cmd.WaitDelay = 5 * time.Second // don't wait forever on a child holding the pipes
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("node test.js did not finish within 60s:\n%s", out)
	}
	if err != nil {
		t.Fatalf("node test.js: %v\n%s", err, out)
	}
	t.Logf("node test.js:\n%s", strings.TrimSpace(string(out)))
}

// nodeReady returns the path of node once node/'s pinned packages are
// installed, or skips the test where node or npm is missing.
func nodeReady(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test.sh installs nodejs)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed (scripts/test.sh installs npm)")
	}
	installNodeModules(t, npm)
	return node
}

// installNodeModules runs npm ci when node_modules is missing or older than
// package-lock.json (the pinned version changed since the last install).
func installNodeModules(t *testing.T, npm string) {
	t.Helper()
	lock, err := os.Stat(filepath.Join(nodeDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	// npm writes node_modules/.package-lock.json at the end of an install,
	// so its presence also tells a finished install from an interrupted one.
	installed, err := os.Stat(filepath.Join(nodeDir, "node_modules", ".package-lock.json"))
	if err == nil && !installed.ModTime().Before(lock.ModTime()) {
		return
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = nodeDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", nodeDir, err, out)
	}
}
