package abuse

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// smallDisk mounts a tmpfs of size bytes for the test (root only: CI runs
// as root) and fills all of it but free bytes with a ballast file, which
// the test may remove to give the space back.
func smallDisk(t *testing.T, size, free int64) (dir, ballast string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	// Registered before the server's cleanup, so it runs after the server
	// is stopped.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	ballast = filepath.Join(mnt, "ballast")
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	fill(t, ballast, int64(st.Bavail)*st.Bsize-free)
	data := filepath.Join(mnt, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	return data, ballast
}

// fill writes n bytes to path, or until the disk is full when n < 0.
func fill(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for written := int64(0); n < 0 || written < n; {
		k := int64(len(chunk))
		if n >= 0 {
			k = min(k, n-written)
		}
		m, err := f.Write(chunk[:k])
		written += int64(m)
		if errors.Is(err, syscall.ENOSPC) && n < 0 {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A full disk refuses writes at once with MISCONF, serves reads, shows in
// INFO, logs it a few times only, takes writes again once space is freed,
// and loses nothing it acknowledged.
func TestDiskFull(t *testing.T) {
	dir, ballast := smallDisk(t, 256<<20, 100<<20)
	b := testutil.StartBasalt(t, dir)
	c := testutil.Dial(t, b.Addr)
	value := strings.Repeat("v", 100<<10)
	acked := 0
	set := func() testutil.Reply {
		start := time.Now()
		r := c.Do("SET", "k"+strconv.Itoa(acked), value)
		if r.Str == "OK" {
			acked++
		} else if took := time.Since(start); took > time.Second {
			t.Errorf("a refused write took %v", took)
		}
		return r
	}
	const misconf = "MISCONF Errors writing to the data directory: No space left on device"
	var r testutil.Reply
	for range 2000 { // 200 MB: more than the disk has
		if r = set(); r.Str != "OK" {
			break
		}
	}
	if !strings.HasPrefix(r.Str, misconf) {
		t.Fatalf("after %d writes of 100 KB on a 100 MB disk: %v", acked, r)
	}
	t.Logf("%d writes acknowledged before the disk was full", acked)
	check := func(when string) {
		t.Helper()
		if r := c.Do("GET", "k0"); r.Str != value {
			t.Errorf("%s: GET k0 answered %.40v", when, r)
		}
		if r := c.Do("PING"); r.Str != "PONG" {
			t.Errorf("%s: PING answered %v", when, r)
		}
		if info := c.Do("INFO", "persistence").Str; !strings.Contains(info, "aof_last_write_status:err") {
			t.Errorf("%s: INFO says\n%s", when, info)
		}
		if r := set(); !strings.HasPrefix(r.Str, misconf) {
			t.Errorf("%s: SET answered %v", when, r)
		}
	}
	check("disk almost full")
	// Not a byte left: the writes in flight, if any, wait for space.
	fill(t, ballast+"2", -1)
	time.Sleep(500 * time.Millisecond)
	check("disk full")

	os.Remove(ballast)
	os.Remove(ballast + "2")
	deadline := time.Now().Add(10 * time.Second)
	for set().Str != "OK" {
		if time.Now().After(deadline) {
			t.Fatal("writes did not resume within 10 s of freeing the disk")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if info := c.Do("INFO", "persistence").Str; !strings.Contains(info, "aof_last_write_status:ok") {
		t.Errorf("after space came back, INFO says\n%s", info)
	}
	for range 10 {
		if r := set(); r.Str != "OK" {
			t.Fatalf("SET after space came back: %v", r)
		}
	}

	// Everything acknowledged is there after a restart.
	if err := b.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	b.Restart(t)
	c = testutil.Dial(t, b.Addr)
	for i := range acked {
		if r := c.Do("STRLEN", "k"+strconv.Itoa(i)); r.Int != int64(len(value)) {
			t.Fatalf("acknowledged k%d has length %v after the restart", i, r)
		}
	}
	log, _ := os.ReadFile(b.Log)
	if n := strings.Count(string(log), "no space left"); n > 20 {
		t.Errorf("the log has %d lines about the full disk", n)
	}
}
