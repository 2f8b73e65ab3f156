//go:build !unix

package store

// ReadStateFile returns the bytes of the state file at path (a regular file
// of at most max bytes), read: a file mapped here could not be replaced
// while it is.
func ReadStateFile(path string, max int64) ([]byte, error) {
	return readStateFile(path, max, 0)
}

// readStateFile is ReadStateFile: nothing is locked here.
func readStateFile(path string, max int64, tries int) ([]byte, error) {
	f, size, err := openStateFile(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, size)
}

// Unmap lets data go: it was read, not mapped.
func Unmap(data []byte) {}

// MapEvery does nothing here: no file is mapped.
func MapEvery() (restore func()) { return func() {} }

// How many times a reader and a writer try for another's lock: nothing
// is locked here.
const readerTries = 0

var writerTries = 0
