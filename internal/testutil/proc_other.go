//go:build !linux

package testutil

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
