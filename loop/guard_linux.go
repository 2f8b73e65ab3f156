package loop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
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

// linkedElsewhere says whether the file has another name than the one it
// was found by (a hard link made to it, or it to another).
func linkedElsewhere(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink != 1
}

// heldPath is where the directory f holds is now ("" when it is not
// found: removed, or out of this process's reach), as the kernel names the
// open file, checked to be the one held.
func heldPath(f *os.File) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil || !filepath.IsAbs(p) {
		return ""
	}
	held, err1 := f.Stat()
	now, err2 := os.Lstat(p)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		return ""
	}
	return p
}

// putDirBack renames the directory at from to to; exchange: what is at to
// goes to from in the same step (renameat2 RENAME_EXCHANGE), never
// removed. A plain rename of a directory replaces nothing but an empty
// directory.
func putDirBack(from, to string, exchange bool) error {
	if !exchange {
		return os.Rename(from, to)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "renameat2 RENAME_EXCHANGE", Old: from, New: to, Err: err}
	}
	return nil
}
