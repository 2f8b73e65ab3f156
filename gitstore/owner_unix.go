//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// ownedByUs reports whether dir belongs to the user running git-evolve,
// which is when git trusts a repository without safe.directory.
func ownedByUs(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// deviceOf returns the file system a directory is on.
func deviceOf(dir string) (uint64, bool) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Dev), ok
}
