package testutil

import "syscall"

// sysProcAttr makes the kernel kill servers if the test binary dies without
// running its cleanups (e.g. a panic on go test -timeout).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
