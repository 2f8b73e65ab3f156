// Package atomicfile replaces a file whole: what is written goes to a
// temporary file beside it, which is renamed over it, so that a reader (git
// running a hook, a script reading a mirror, a second git-evolve) sees the
// old file or the new one, never a part, and a crash leaves the old one.
// It is the one way git-evolve writes a file it replaces; OwnDirs makes
// the directories such a file goes in, going through no link.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write replaces path with data, with the permissions mode.
func Write(path string, data []byte, mode os.FileMode) error {
	return WriteWith(path, mode, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteWith replaces path with what fill writes to the temporary file (a
// caller that writes in small pieces wraps it in a bufio.Writer; one that
// copies a file into it gets the kernel's copy): a large file is never held
// whole in memory. The directory is made when missing.
func WriteWith(path string, mode os.FileMode, fill func(f *os.File) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = fill(tmp)
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
	RemoveStale(path, StaleAge)
	return nil
}

// StaleAge is how old a temporary file must be for RemoveStale to take it
// for one a killed writer left: a write takes seconds at most.
const StaleAge = time.Hour

// RemoveStale removes the temporary files of path older than age: a
// process killed between writing one and renaming it into place leaves it
// behind (a saved view of 100,000 records is 46 MB). A younger one may be a
// write under way, and is left. A temporary file is named as WriteWith
// names it (the file's name, ".", the digits os.CreateTemp adds, ".tmp",
// which the loop's info/exclude patterns match), or as older versions did
// (the file's name, ".tmp" or ".", the digits): nothing else, such as a
// lock, has such a name.
func RemoveStale(path string, age time.Duration) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		rest = strings.TrimSuffix(strings.TrimPrefix(rest, "tmp"), ".tmp")
		if rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// AddLines adds to the file at path the lines it lacks (a line matches when
// equal once trimmed), after the comment line header, keeping what the file
// has; the file is made when missing. It reports whether it added any. It
// is how git-evolve lists its local files in info/exclude.
func AddLines(path, header string, lines []string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range lines {
		if !have[strings.TrimSpace(l)] {
			add = append(add, l)
			have[strings.TrimSpace(l)] = true
		}
	}
	if len(add) == 0 {
		return false, nil
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	if header != "" {
		b.WriteString(header + "\n")
	}
	for _, l := range add {
		b.WriteString(l + "\n")
	}
	return true, Write(path, []byte(b.String()), 0o644)
}

// AppendLine adds line and a newline at the end of the file at path, making
// the file and its directory when missing: one write to a file opened for
// appending, so that lines appended by several processes do not mix. It is
// how a state file that is a log (the numbers open cycles reserved, the
// saved work a clone keeps) grows.
func AppendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// NotDirError says that a directory on the way is no directory of its own:
// a symbolic link (never gone through), or a file.
type NotDirError struct{ Path string }

func (e *NotDirError) Error() string {
	return e.Path + " is no directory of its own (a symbolic link, or a file)"
}

// OwnDirs makes the directories names under base, each in the one before,
// with perm (base itself as os.MkdirAll makes it), and returns the last.
// Each of names must be a directory of its own: one that is a symbolic
// link or a file is not gone through, and the error is a *NotDirError
// naming it. What is written under the last then stays under base.
func OwnDirs(base string, perm os.FileMode, names ...string) (string, error) {
	if err := os.MkdirAll(base, perm); err != nil {
		return "", err
	}
	dir := base
	for _, name := range names {
		dir = filepath.Join(dir, name)
		if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", &NotDirError{Path: dir}
		}
	}
	return dir, nil
}
