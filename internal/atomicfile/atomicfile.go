// Package atomicfile replaces a file whole: what is written goes to a
// temporary file beside it, which is renamed over it, so that a reader (git
// running a hook, a script reading a mirror, a second git-evolve) sees the
// old file or the new one, never a part, and a crash leaves the old one.
// It is the one way git-evolve writes a file it replaces.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, with the permissions mode.
func Write(path string, data []byte, mode os.FileMode) error {
	return WriteWith(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith replaces path with what fill writes, through a buffer: a large
// file is never held whole in memory. The directory is made when missing.
func WriteWith(path string, mode os.FileMode, fill func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	w := bufio.NewWriterSize(tmp, 256<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, mode)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
