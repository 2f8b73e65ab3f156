package store

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// errStateFileSize is what ReadStateFile says of a file larger than asked.
var errStateFileSize = errors.New("larger than a state file may be")

// openStateFile opens the regular file at path and says its size, at most
// max (a FIFO or a device at a state file's path is not read).
func openStateFile(path string, max int64) (*os.File, int64, error) {
	// Asked before the open, which would wait for a FIFO's writer.
	if fi, err := os.Stat(path); err != nil {
		return nil, 0, err
	} else if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s: not a regular file", path)
	case fi.Size() > max:
		err = fmt.Errorf("%s: %w", path, errStateFileSize)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readOpened reads the size bytes of f, which a writer may have replaced
// since, never in place.
func readOpened(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}
