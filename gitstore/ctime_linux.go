//go:build linux

package gitstore

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is when a file was last written, renamed or had its mode
// changed (its inode's change time, which no program sets back).
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}
