//go:build !unix

package audit

import "os"

// readStateFile returns the bytes of the kept state at path (read: a file
// mapped here could not be replaced while it is).
func readStateFile(path string, max int64) ([]byte, bool) {
	if fi, err := os.Stat(path); err != nil || fi.Size() > max {
		return nil, false
	}
	data, err := os.ReadFile(path)
	return data, err == nil
}

// unmapStateFile lets data go: it was read, not mapped.
func unmapStateFile(data []byte) {}
