package server

import (
	"syscall"
	"unsafe"
)

// inputPending reports whether the subscriber's socket holds bytes its
// client has not read yet (awaitInput).
func (s *subscriber) inputPending() bool {
	if s.raw == nil {
		return false
	}
	n := 0
	_ = s.raw.Control(func(fd uintptr) {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
			n = 0
		}
	})
	return n > 0
}
