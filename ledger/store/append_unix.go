//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// AppendStateFile appends data to the state file at path, under an
// exclusive lock on the file that it waits for a little at most, when same, given
// the file as it is under the lock and its size, says it is the one the
// caller read and built data on. It reports whether it appended: not when
// there is no such file, when same says no (another process replaced or
// appended to it since), or when another holds the lock; the caller then
// writes the file anew. What an append that fails part way leaves is never
// cut off again (a reader may have mapped it): the file's format must
// make a part of an append read as no file at all.
//
// ReadStateFile reads under a shared lock, so that it reads no part of an
// append (one that cannot have the lock within about 20 ms, or on a file
// system that locks nothing, reads without it: the file's format must
// refuse a part of an append); the rename that writes a state file anew leaves a mapping of
// the old one whole, and an append changes no byte a reader mapped.
func AppendStateFile(path string, same func(f *os.File, size int64) bool, data []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	if !flockWait(f, syscall.LOCK_EX) {
		return false, nil // held by another, or a file system that locks nothing
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !same(f, fi.Size()) {
		return false, err
	}
	if _, err := f.WriteAt(data, fi.Size()); err != nil {
		return false, err
	}
	return true, nil
}
