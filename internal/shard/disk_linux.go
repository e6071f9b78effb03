package shard

import "syscall"

// freeSpace returns the bytes an unprivileged writer may still use on
// dir's file system.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}
