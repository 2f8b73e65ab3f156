//go:build !unix

package store

import "os"

// AppendStateFile appends nothing here, where no file is locked: the
// caller writes the file anew.
func AppendStateFile(path string, same func(f *os.File, size int64) bool, data []byte) (bool, error) {
	return false, nil
}
