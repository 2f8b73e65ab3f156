//go:build linux

package gitstore

import (
	"io/fs"
	"syscall"
)

// statKeysAvailable says whether statKey can read a directory's key here.
const statKeysAvailable = true

// statKey is the key of a directory (see dirKey).
func statKey(fi fs.FileInfo) (dirKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirKey{}, false
	}
	return dirKey{
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
		ino:   st.Ino,
		dev:   uint64(st.Dev),
	}, true
}
