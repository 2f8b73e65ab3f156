//go:build unix

package audit

import (
	"os"
	"syscall"
)

// readStateFile returns the bytes of the kept state at path, mapped
// read-only rather than read: the summaries' strings point into them, and
// a mapped page of a file in the page cache costs the process a fraction
// of a page read into new memory (the kernel maps its neighbours with it).
// The mapping is never undone: it lives as long as the strings, and a
// verify reads one state a process (a long-lived process reading many
// would keep each). A state is only ever replaced by a rename, which leaves
// a mapping of the old file whole; a file cut short in place while mapped
// (by hand) would fault the process, as it would git's own mapped packs.
func readStateFile(path string, max int64) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > max || !fi.Mode().IsRegular() {
		return nil, false
	}
	if fi.Size() == 0 {
		return []byte{}, true
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return data, true
}

// unmapStateFile undoes the mapping of data, which readStateFile made;
// nothing may point into it after.
func unmapStateFile(data []byte) {
	if len(data) > 0 {
		_ = syscall.Munmap(data)
	}
}
