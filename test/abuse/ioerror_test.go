package abuse

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"basalt/internal/testutil"
)

// ext4Shutdown is EXT4_IOC_SHUTDOWN (XFS's GOINGDOWN, what xfs_io's
// "shutdown" sends): every later read, write and sync on the file system
// fails with EIO. noLogFlush shuts it down without writing its journal
// first, as a dying disk would.
const (
	ext4Shutdown = 0x8004587d
	noLogFlush   = 2
)

// ioErrorDisk mounts a 300 MB ext4 file system on a loop device for the
// test and returns a directory on it and a function that makes every later
// I/O on it fail with EIO, and one that brings it back (unmount, mount:
// the journal replays what was synced). Device-mapper's error and flakey
// targets would fail writes only, but containers often lack the
// device-mapper driver (this one: "/dev/mapper/control: open failed: No
// such device"); loop devices and ext4 are there more often. It skips,
// saying why, where they are not.
func ioErrorDisk(t *testing.T) (dir string, fail, repair func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a loop device and a mount need root")
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(300 << 20) // sparse
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device: losetup: %v: %s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	mnt := t.TempDir()
	// Registered before the server's cleanup, so it runs after the server
	// is stopped.
	t.Cleanup(func() {
		exec.Command("umount", mnt).Run() // already unmounted after a repair that failed
		if out, err := exec.Command("losetup", "--detach", loop).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", loop, err, out)
		}
	})
	if out, err := exec.Command("mkfs.ext4", "-q", loop).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4 %s: %v: %s", loop, err, out)
	}
	mount := func() {
		if out, err := exec.Command("mount", "-t", "ext4", loop, mnt).CombinedOutput(); err != nil {
			t.Skipf("mount %s: %v: %s", loop, err, out)
		}
	}
	mount()
	dir = filepath.Join(mnt, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fail = func() {
		fd, err := syscall.Open(mnt, syscall.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		flags := uint32(noLogFlush)
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), ext4Shutdown, uintptr(unsafe.Pointer(&flags))); errno != 0 {
			t.Skipf("ext4 shutdown ioctl on %s: %v", mnt, errno)
		}
	}
	repair = func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount %s: %v: %s", mnt, err, out)
		}
		mount()
	}
	return dir, fail, repair
}

// When the data directory's disk starts failing every I/O with EIO, a
// write gets a clear error and never hangs. Pebble cannot go on after a
// failed log write ("fatal commit error"), so basalt exits: with status 1
// and a log line naming the cause, never with a panic. Once the disk is
// back, every write it acknowledged is there.
func TestIOError(t *testing.T) {
	dir, fail, repair := ioErrorDisk(t)
	// The log stays off the failing disk (testutil puts it in the first
	// --dir; the last one given is the data directory).
	b := testutil.StartBasalt(t, "", "--dir", dir)
	c := testutil.Dial(t, b.Addr)
	const acked = 50
	for i := range acked {
		if r := c.Do("SET", fmt.Sprint("k", i), fmt.Sprint("v", i)); r.Str != "OK" {
			t.Fatalf("SET before the fault: %v", r)
		}
	}
	fail()
	start := time.Now()
	r, err := c.DoErr("SET", "after", "the fault")
	switch {
	case err == nil && !r.IsError():
		t.Errorf("SET on a disk failing with EIO answered %v", r)
	case err == nil && !strings.HasPrefix(r.Str, "MISCONF"):
		t.Errorf("SET on a disk failing with EIO: %q, want MISCONF naming the cause", r.Str)
	case err == nil && b.Running(): // it stayed up: reads go on
		if p := c.Do("PING"); p.Str != "PONG" {
			t.Errorf("PING after the fault: %v", p)
		}
	}
	t.Logf("SET after the fault: %v %v in %v", r, err, time.Since(start).Round(time.Millisecond))
	deadline := time.Now().Add(10 * time.Second)
	for b.Running() && time.Now().Before(deadline) && err != nil {
		time.Sleep(50 * time.Millisecond) // the connection closed: the process is exiting
	}
	log, _ := os.ReadFile(b.Log)
	cause := ""
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "input/output error") && cause == "" {
			cause = line
		}
	}
	if cause == "" {
		t.Errorf("the log does not name the cause (input/output error)")
	}
	t.Logf("the log: %s", cause)
	if strings.Contains(string(log), "panic:") || strings.Contains(string(log), "goroutine ") {
		t.Errorf("the log shows a panic")
	}
	if b.Running() {
		t.Logf("still running after the fault; stopping it")
		b.Stop()
	} else if code := b.Cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit status %d after the I/O error, want 1", code)
	} else {
		t.Logf("exited with status 1")
	}
	repair()
	b.Restart(t)
	c = testutil.Dial(t, b.Addr)
	for i := range acked {
		if r := c.Do("GET", fmt.Sprint("k", i)); r.Str != fmt.Sprint("v", i) {
			t.Errorf("GET k%d after the repair: %v", i, r)
		}
	}
}
