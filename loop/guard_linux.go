package loop

import (
	"io/fs"
	"syscall"
)

// changeTime is when a file's inode last changed, which no one can set
// back: a file changed in place and given its old modification time again
// still shows.
func changeTime(fi fs.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
