// Package testutil starts redis-server and basalt for tests, talks raw RESP to
// them and compares their replies (differential tests). It is imported only
// from _test.go files.
package testutil

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ReadyTimeout bounds how long a started server may take to answer PING.
var ReadyTimeout = 10 * time.Second

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 10 * time.Second

// handedOut holds the ports FreePort returned in this process: a cluster's
// Raft ports are chosen before its members start, so a free port may be
// one already promised (it once became a node's client port).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that it has not returned before. Another process may grab it before we
// use it; starters retry on that.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	// Below Linux's ephemeral range (32768-60999): a port handed out by
	// ":0" can be taken meanwhile by an outgoing connection's source port,
	// and a cluster's Raft ports cannot move once its members know them.
	// Test binaries of several packages run at once: each mostly keeps to
	// its own 2,000 ports, so one rarely takes a port another promised.
	base := 20000 + os.Getpid()%6*2000
	for i := range 200 {
		port := base + rand.IntN(2000)
		if i >= 100 {
			port = 20000 + rand.IntN(12000)
		}
		if handedOut.ports[port] {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			l.Close()
			handedOut.ports[port] = true
			if claimPort(port) {
				return port
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("FreePort: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// claimPort reserves port among the test processes that run at once (the
// suite runs several packages, and test/compat passes, side by side): a
// cluster's Raft ports are promised before its nodes start, and another
// process's server once took one meanwhile. A claim is a file named after
// the port holding the claiming process's PID, made whole by a link; a
// claim whose process is gone is taken over.
func claimPort(port int) bool {
	dir := filepath.Join(os.TempDir(), "basalt-test-ports")
	if os.MkdirAll(dir, 0o777) != nil {
		return true // no registry: the listen check alone
	}
	path := filepath.Join(dir, strconv.Itoa(port))
	for range 2 {
		tmp, err := os.CreateTemp(dir, "claim-")
		if err != nil {
			return true
		}
		fmt.Fprint(tmp, os.Getpid())
		tmp.Close()
		err = os.Link(tmp.Name(), path)
		os.Remove(tmp.Name())
		if err == nil {
			return true
		}
		b, _ := os.ReadFile(path)
		if pid, _ := strconv.Atoi(string(b)); pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH {
			return false // its process runs
		}
		os.Remove(path)
	}
	return false
}

// Proc is a server process started by a test. It can be killed, stopped and
// restarted on the same port and directory; every process it starts is
// stopped, by PID, in t.Cleanup.
type Proc struct {
	Addr string      // "host:port": 127.0.0.1 but in a Netns
	Port int         //
	Dir  string      // data directory (--dir)
	Log  string      // file receiving the process's stdout and stderr
	Cmd  *exec.Cmd   // the latest process started
	Env  []string    // added to the test's environment at the next start ("NAME=value")
	TLS  *tls.Config // set for a server reached over TLS only (StartBasaltTLS)

	name string                  // for messages: "redis-server", "basalt"
	path string                  // binary
	args func(port int) []string // command-line arguments for a port
	at   place                   // where it runs

	mu        sync.Mutex
	cur       *run
	tailShown bool // the log tail is already in a failure message
}

// run is one started process.
type run struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd.Wait has returned
	err  error         // cmd.Wait's result, valid after done
}

func (r *run) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL) // ErrProcessDone if already gone
	<-r.done
}

func (r *run) stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
		return r.err
	case <-time.After(stopTimeout):
		r.kill()
		return fmt.Errorf("pid %d still running %v after SIGTERM; sent SIGKILL", r.cmd.Process.Pid, stopTimeout)
	}
}

func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (p *Proc) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Pid is the PID of the latest process started (it may have exited).
func (p *Proc) Pid() int {
	if r := p.current(); r != nil {
		return r.cmd.Process.Pid
	}
	return 0
}

// Running reports whether the latest process is still running.
func (p *Proc) Running() bool {
	r := p.current()
	return r != nil && !r.exited()
}

// Kill sends SIGKILL and waits for the process to exit. Safe to call from
// any goroutine (crash tests kill in the middle of writes).
func (p *Proc) Kill() {
	if r := p.current(); r != nil {
		r.kill()
	}
}

// Stop sends SIGTERM, waits up to 10s, then SIGKILLs. It returns the process's
// exit error: nil after a clean exit, non-nil if it had to be killed, exited
// with a non-zero status, or had already been killed.
func (p *Proc) Stop() error {
	if r := p.current(); r != nil {
		return r.stop()
	}
	return nil
}

// Restart starts the same command again, on the same port and directory,
// after Kill or Stop, and waits until it answers PING.
func (p *Proc) Restart(t testing.TB) {
	t.Helper()
	if p.Running() {
		t.Fatalf("Restart: %s pid %d is still running; Kill or Stop it first", p.name, p.Pid())
	}
	p.launch(t, false)
}

var errAddrInUse = errors.New("address already in use")

// newProc starts a server in dir, logging to dir/logName, on a fresh port.
// With tailOnFail the log's tail is shown if the test fails (for basalt; the
// oracle's log would only be noise).
func newProc(t testing.TB, name, path, dir, logName string, tailOnFail bool, tlsCfg *tls.Config, args func(port int) []string) *Proc {
	t.Helper()
	return newProcAt(t, place{host: "127.0.0.1"}, name, path, dir, logName, tailOnFail, tlsCfg, args)
}

// place is where a process runs: the host of its address, and the command
// that runs it in another network namespace (none: this one).
type place struct {
	host string
	wrap []string
}

// newProcAt is newProc at a place.
func newProcAt(t testing.TB, at place, name, path, dir, logName string, tailOnFail bool, tlsCfg *tls.Config, args func(port int) []string) *Proc {
	t.Helper()
	p := &Proc{Dir: dir, Log: filepath.Join(dir, logName), name: name, path: path, args: args, TLS: tlsCfg, at: at}
	p.setPort(FreePort(t))
	// Registered before any process cleanup, so it runs after the process is
	// stopped and shows its last words.
	t.Cleanup(func() {
		// A server built with -race (BASALT_BIN) reports races in its log
		// and carries on: make them fail the test.
		if log, err := os.ReadFile(p.Log); err == nil && bytes.Contains(log, []byte("WARNING: DATA RACE")) {
			t.Errorf("%s log %s reports a data race:\n%s", p.name, p.Log, log)
			p.tailShown = true
		}
		if tailOnFail && t.Failed() && !p.tailShown {
			t.Logf("%s log %s, tail:\n%s", p.name, p.Log, p.tail())
		}
	})
	p.launch(t, true)
	return p
}

func (p *Proc) setPort(port int) {
	p.Port = port
	p.Addr = net.JoinHostPort(p.at.host, strconv.Itoa(port))
}

// launch starts the process and waits for readiness. If the port was taken
// meanwhile it retries, on a new port if allowed, else on the same one.
func (p *Proc) launch(t testing.TB, newPort bool) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := p.start(t)
		if err == nil {
			return
		}
		if errors.Is(err, errAddrInUse) && attempt < 5 {
			if newPort {
				p.setPort(FreePort(t))
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		p.tailShown = true
		t.Fatalf("starting %s on %s: %v\n--- log %s, tail:\n%s", p.name, p.Addr, err, p.Log, p.tail())
	}
}

func (p *Proc) start(t testing.TB) error {
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	logStart, _ := f.Seek(0, io.SeekEnd)
	argv := p.args(p.Port)
	fmt.Fprintf(f, "=== testutil: starting %s %s\n", p.path, strings.Join(quoteArgs(argv), " "))

	cmd := exec.Command(p.path, argv...)
	if p.at.wrap != nil { // "ip netns exec NS" execs the server: the PID is its own
		cmd = exec.Command(p.at.wrap[0], append(append(p.at.wrap[1:len(p.at.wrap):len(p.at.wrap)], p.path), argv...)...)
	}
	cmd.Dir = p.Dir
	if p.Env != nil {
		cmd.Env = append(os.Environ(), p.Env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	f.Close() // the child has its own descriptor
	if err != nil {
		return err
	}
	r := &run{cmd: cmd, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() { _ = r.stop() })
	p.mu.Lock()
	p.cur, p.Cmd = r, cmd
	p.mu.Unlock()
	return p.waitReady(r, logStart)
}

// waitReady polls PING until +PONG, the process exits or ReadyTimeout passes.
func (p *Proc) waitReady(r *run, logStart int64) error {
	deadline := time.Now().Add(ReadyTimeout)
	for {
		if r.exited() {
			if strings.Contains(strings.ToLower(p.logSince(logStart)), "address already in use") {
				return errAddrInUse
			}
			return fmt.Errorf("pid %d exited before answering PING: %v", r.cmd.Process.Pid, r.err)
		}
		if pingOK(p.Addr, p.TLS) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pid %d does not answer PING after %v", r.cmd.Process.Pid, ReadyTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pingOK(addr string, tlsCfg *tls.Config) bool {
	d := &net.Dialer{Timeout: time.Second}
	var nc net.Conn
	var err error
	if tlsCfg != nil {
		nc, err = tls.DialWithDialer(d, "tcp", addr, tlsCfg)
	} else {
		nc, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return false
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(Command("PING")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	_, err = io.ReadFull(nc, buf)
	return err == nil && string(buf) == "+PONG\r\n"
}

func (p *Proc) logSince(off int64) string {
	b, err := os.ReadFile(p.Log)
	if err != nil || off > int64(len(b)) {
		return ""
	}
	return string(b[off:])
}

// tail returns the last lines of the log file.
func (p *Proc) tail() string {
	const maxBytes, maxLines = 16 << 10, 60
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}

// StartRedis starts Debian's redis-server on a free port with persistence off
// and a fresh directory, and waits until it answers PING.
func StartRedis(t testing.TB, extraArgs ...string) *Proc {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not in PATH (%v); install it with: apt-get install -y redis-server", err)
	}
	dir := t.TempDir()
	return newProc(t, "redis-server", path, dir, "redis.log", false, nil, func(port int) []string {
		return append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		}, extraArgs...)
	})
}

// StartBasalt starts basalt with --bind 127.0.0.1 --port P --dir dir
// --enable-debug-command yes plus args (dir "" means a fresh t.TempDir())
// and waits until it answers PING. DEBUG is on because tests use DEBUG
// DIGEST and DEBUG SLEEP; args may turn it off. Its output goes to
// dir/basalt.log, whose tail is logged if the test fails.
func StartBasalt(t testing.TB, dir string, args ...string) *Proc {
	t.Helper()
	return startBasaltAt(t, place{host: "127.0.0.1"}, dir, args...)
}

// startBasaltAt is StartBasalt at a place, bound to its host.
func startBasaltAt(t testing.TB, at place, dir string, args ...string) *Proc {
	t.Helper()
	bin := BasaltBinary(t)
	if dir == "" {
		dir = t.TempDir()
	}
	return newProcAt(t, at, "basalt", bin, dir, "basalt.log", true, nil, func(port int) []string {
		return append([]string{"--bind", at.host, "--port", strconv.Itoa(port), "--dir", dir, "--enable-debug-command", "yes"}, args...)
	})
}

// StartBasaltTLS is StartBasalt for a server reached over TLS only: port
// 0, and tls-port P; args must give its certificates, and tlsCfg is how
// the readiness PING connects.
func StartBasaltTLS(t testing.TB, tlsCfg *tls.Config, args ...string) *Proc {
	t.Helper()
	bin := BasaltBinary(t)
	dir := t.TempDir()
	return newProc(t, "basalt", bin, dir, "basalt.log", true, tlsCfg, func(port int) []string {
		return append([]string{"--bind", "127.0.0.1", "--port", "0", "--tls-port", strconv.Itoa(port), "--dir", dir}, args...)
	})
}

var basaltBuild struct {
	once sync.Once
	path string
	err  error
}

// BasaltBinary returns the path of the basalt binary: $BASALT_BIN if set,
// else ./cmd/basalt built once per test process.
func BasaltBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("BASALT_BIN"); bin != "" {
		path, err := exec.LookPath(bin)
		if err == nil {
			path, err = filepath.Abs(path) // processes run with cmd.Dir = data dir
		}
		if err != nil {
			t.Fatalf("BASALT_BIN=%q: %v", bin, err)
		}
		return path
	}
	basaltBuild.once.Do(func() { basaltBuild.path, basaltBuild.err = buildBasalt() })
	if basaltBuild.err != nil {
		t.Fatalf("building basalt: %v", basaltBuild.err)
	}
	return basaltBuild.path
}

// buildBasalt builds ./cmd/basalt into a cache directory keyed by the module
// root. The output is renamed into place, so test processes of several
// packages building at once never see a half-written binary, and nothing
// accumulates in /tmp across runs.
func buildBasalt() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "basalt-test", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "basalt")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/basalt")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/basalt in %s: %v\n%s", root, err, b)
	}
	final := filepath.Join(dir, "basalt")
	if err := os.Rename(out, final); err != nil {
		return "", err
	}
	return final, nil
}

// moduleRoot walks up from the working directory to the one holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
