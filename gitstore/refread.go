package gitstore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Refs are read here as git's files backend stores them (a reftable
// repository is refused at Open): a ref's loose file, else its line in
// packed-refs. This was go-git's storer; reading refs was all it did for
// us, and its packages (their configuration parser, encoding/gob, URL
// patterns compiled at start) cost every process about 2 ms before it
// read anything (docs/benchmarks.md). TestReadRefAsGit holds it to git's
// answers.

// maxSymrefDepth is how many refs are read to resolve one, as git does
// (refs.c: SYMREF_MAXDEPTH): at most four symbolic refs in a row.
const maxSymrefDepth = 5

// RefHash returns the object a ref points at, following symbolic refs. ok is
// false when the ref does not exist.
func (r *Repo) RefHash(name string) (h Hash, ok bool, err error) {
	at := name
	for i := 0; i < maxSymrefDepth; i++ {
		h, target, found, err := r.readRef(at)
		if err != nil || !found {
			return ZeroHash, false, err
		}
		if target == "" {
			return h, true, nil
		}
		at = target
	}
	return ZeroHash, false, fmt.Errorf("reading %s: more than %d symbolic refs in a row (a loop?)", name, maxSymrefDepth-1)
}

// readRef reads one ref without following it: its object, or the ref it
// names (target) when it is symbolic. Names git could not store (see
// storableRef) are not there.
func (r *Repo) readRef(name string) (h Hash, target string, ok bool, err error) {
	worktree, storable := storableRef(name)
	if !storable {
		return ZeroHash, "", false, nil
	}
	dir := r.commonDir
	if worktree {
		dir = r.gitDir
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A symbolic ref git wrote as a symbolic link (core.preferSymlinkRefs)
		// names its target; any other link is read through.
		if link, err := os.Readlink(path); err == nil && strings.HasPrefix(link, "refs/") {
			if _, ok := storableRef(link); ok {
				return ZeroHash, link, true, nil
			}
		}
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return parseLooseRef(name, data)
	case !absentRef(err):
		return ZeroHash, "", false, fmt.Errorf("reading %s: %w", name, err)
	case worktree:
		return ZeroHash, "", false, nil // never packed
	}
	h, ok, err = r.packedRef(name)
	return h, "", ok, err
}

// absentRef says whether err, from reading a loose ref's file, means there
// is none: no file, a directory there (refs/notes when refs/notes/evolve
// is asked for the other way round), or a file where a directory would be.
func absentRef(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// storableRef says whether git's files backend could hold name, and
// whether in the worktree's own git dir (HEAD and the other all-capital
// root refs; refs/bisect/, refs/worktree/ and refs/rewritten/) rather than
// the common one. It refuses what git check-ref-format refuses, and the
// names of another worktree's refs (main-worktree/, worktrees/), which
// nothing here reads.
func storableRef(name string) (worktree, ok bool) {
	if !strings.Contains(name, "/") {
		if name == "" {
			return false, false
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
				return false, false
			}
		}
		return true, true
	}
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//") {
		return false, false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false, false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false, false
		}
	}
	for _, p := range []string{"refs/bisect/", "refs/worktree/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true, true
		}
	}
	return false, true
}

// parseLooseRef reads a loose ref's file as git does: "ref: <name>" for a
// symbolic ref, else a full object name followed by nothing or by space.
func parseLooseRef(name string, data []byte) (Hash, string, bool, error) {
	if rest, ok := bytes.CutPrefix(data, []byte("ref:")); ok {
		target := string(bytes.TrimSpace(rest))
		if target == "" {
			return ZeroHash, "", false, fmt.Errorf("reading %s: a symbolic ref that names nothing", name)
		}
		return ZeroHash, target, true, nil
	}
	var h Hash
	if len(data) < 40 || (len(data) > 40 && !isSpace(data[40])) {
		return ZeroHash, "", false, fmt.Errorf("reading %s: not a ref: %q", name, bytes.TrimSpace(data[:min(len(data), 60)]))
	}
	if _, err := hex.Decode(h[:], data[:40]); err != nil {
		return ZeroHash, "", false, fmt.Errorf("reading %s: not a ref: %q", name, bytes.TrimSpace(data[:min(len(data), 60)]))
	}
	return h, "", true, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// packedRef finds name's line in packed-refs: "<name of the object>
// <ref>", the peeled lines ("^…") and the header ("# …") aside.
func (r *Repo) packedRef(name string) (Hash, bool, error) {
	data, err := r.packedRefs()
	if err != nil {
		return ZeroHash, false, err
	}
	key := []byte(" " + name + "\n")
	for at := 0; ; {
		i := bytes.Index(data[at:], key)
		if i < 0 {
			return ZeroHash, false, nil
		}
		i += at
		at = i + 1
		if i < 40 || (i > 40 && data[i-41] != '\n') {
			continue
		}
		var h Hash
		if _, err := hex.Decode(h[:], data[i-40:i]); err != nil {
			return ZeroHash, false, fmt.Errorf("reading packed-refs: a damaged line for %s", name)
		}
		return h, true, nil
	}
}

// packedCache is packed-refs as last read, with what the file was then.
type packedCache struct {
	mu   sync.Mutex
	fi   fs.FileInfo // nil: not read, or not there
	data []byte
}

// packedRefs is the packed-refs file, every line ended by a newline (nil
// when there is none). It is read again only when the file is another or
// has changed (its identity, size or time), as git keeps a snapshot of it:
// a command looks refs up there tens of times, and the file of a
// repository with many tags is megabytes.
func (r *Repo) packedRefs() ([]byte, error) {
	path := filepath.Join(r.commonDir, "packed-refs")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading packed-refs: %w", err)
	}
	c := &r.packed
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fi != nil && os.SameFile(c.fi, fi) && c.fi.Size() == fi.Size() && c.fi.ModTime().Equal(fi.ModTime()) {
		return c.data, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading packed-refs: %w", err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	c.fi, c.data = fi, data
	return data, nil
}
