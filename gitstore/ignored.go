package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// WorktreeFile is a file of the working tree: its path from the top, its
// mode as a tree entry has it (0o100644, 0o100755 or 0o120000) and its size.
type WorktreeFile struct {
	Path string
	Mode uint32
	Size int64
}

// ListIgnored lists the files of the working tree that git ignores, as git
// ls-files --others --ignored --exclude-standard --directory finds them: a
// file it names is taken, a directory it names whole (ignored, with all in
// it) is walked here. leaveOut is asked of each directory (a path from the
// top, without a trailing slash) on the way to a file and in a walk; one
// it says yes to is neither walked nor taken, and is returned in left
// (with a trailing slash), as is a repository inside the working tree
// (a directory holding .git). Sockets, devices and pipes are no files.
// Past limit files (0: no limit), a directory is left out whole rather
// than walked, and so is one whose walk would go past it.
func (r *Repo) ListIgnored(leaveOut func(dir string) bool, limit int) (files []WorktreeFile, left []string, err error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, nil, err
	}
	out, err := startGit(top, r.env, false, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory").finish(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the ignored files: %w", err)
	}
	var names []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			names = append(names, string(p))
		}
	}
	sort.Strings(names)
	leftSeen := map[string]bool{}
	leave := func(dir string) {
		if !leftSeen[dir] {
			leftSeen[dir] = true
			left = append(left, dir+"/")
		}
	}
	// leftOnTheWay reports whether a directory on the way to p is left out
	// (and notes it).
	leftOnTheWay := func(p string) bool {
		var dirs []string
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
		for i := len(dirs) - 1; i >= 0; i-- { // the outermost first
			if leftSeen[dirs[i]] || leaveOut(dirs[i]) {
				leave(dirs[i])
				return true
			}
		}
		return false
	}
	for i, name := range names {
		dir, isDir := strings.CutSuffix(name, "/")
		if !isDir {
			if leftOnTheWay(name) {
				continue
			}
			if f, ok := worktreeFile(top, name); ok {
				files = append(files, f)
			}
			continue
		}
		// git names a directory that holds ignored files and others it
		// also names (a directory not ignored itself): its entries follow.
		if i+1 < len(names) && strings.HasPrefix(names[i+1], name) {
			continue
		}
		if leftOnTheWay(name) || leaveOut(dir) || limit > 0 && len(files) >= limit {
			leave(dir)
			continue
		}
		before := len(files)
		err := filepath.WalkDir(filepath.Join(top, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // gone meanwhile
				}
				return err
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != dir && leaveOut(rel) {
					leave(rel)
					return fs.SkipDir
				}
				if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
					leave(rel) // a repository of its own
					return fs.SkipDir
				}
				return nil
			}
			if f, ok := worktreeFile(top, rel); ok {
				files = append(files, f)
			}
			if limit > 0 && len(files) > limit {
				return errPastLimit
			}
			return nil
		})
		if errors.Is(err, errPastLimit) {
			files = files[:before]
			left = slicesDeleteUnder(left, leftSeen, dir)
			leave(dir)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("listing the ignored files in %s: %w", dir, err)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(left)
	return files, left, nil
}

// errPastLimit stops a walk of ListIgnored past its limit.
var errPastLimit = errors.New("past the limit")

// slicesDeleteUnder removes from left (and seen) the directories under
// dir: it is left out whole.
func slicesDeleteUnder(left []string, seen map[string]bool, dir string) []string {
	out := left[:0]
	for _, d := range left {
		if strings.HasPrefix(d, dir+"/") {
			delete(seen, strings.TrimSuffix(d, "/"))
			continue
		}
		out = append(out, d)
	}
	return out
}

// worktreeFile is the file at p (from the top), when it is a regular file
// or a symbolic link.
func worktreeFile(top, p string) (WorktreeFile, bool) {
	fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
	if err != nil {
		return WorktreeFile{}, false
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return WorktreeFile{Path: p, Mode: 0o120000, Size: fi.Size()}, true
	case fi.Mode().IsRegular() && fi.Mode()&0o100 != 0:
		return WorktreeFile{Path: p, Mode: 0o100755, Size: fi.Size()}, true
	case fi.Mode().IsRegular():
		return WorktreeFile{Path: p, Mode: 0o100644, Size: fi.Size()}, true
	}
	return WorktreeFile{}, false
}

// SaveFiles writes the files of the working tree at paths as blobs, their
// bytes as they are (no filter, no line-ending conversion: what is read
// back is what was there), and returns their entries; a path that is no
// longer a file or a link when it is read has none (a zero Mode). Regular
// files are written by git hash-object -w --no-filters (which writes no
// object git has already); links here, pending until Flush.
func (r *Repo) SaveFiles(paths []string) ([]CapturedPath, error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, err
	}
	out := make([]CapturedPath, len(paths))
	var regular []int
	for i, p := range paths {
		out[i].Path = p
		f, ok := worktreeFile(top, p)
		switch {
		case !ok:
		case f.Mode == 0o120000:
			target, err := os.Readlink(filepath.Join(top, filepath.FromSlash(p)))
			if err == nil {
				out[i].Mode, out[i].Blob = f.Mode, r.pendingBlob([]byte(target))
			}
		default:
			out[i].Mode = f.Mode
			regular = append(regular, i)
		}
	}
	if len(regular) == 0 {
		return out, nil
	}
	list := make([]string, len(regular))
	for j, i := range regular {
		list[j] = paths[i]
	}
	hashed, err := startGit(top, r.env, true, "hash-object", "-w", "--no-filters", "--stdin-paths").finish(stdinPaths(list))
	lines := strings.Fields(string(hashed))
	if err == nil && len(lines) != len(list) {
		err = fmt.Errorf("git hash-object gave %d names for %d files", len(lines), len(list))
	}
	if err != nil {
		// A file went or changed while it was read: each alone.
		return r.saveFilesOneByOne(top, out, regular)
	}
	for j, i := range regular {
		if out[i].Blob, err = ParseHash(lines[j]); err != nil {
			return nil, fmt.Errorf("git hash-object: %w", err)
		}
	}
	return out, nil
}

// saveFilesOneByOne writes the regular files among out (at the indexes
// given) one at a time, here: one that cannot be read has no entry.
func (r *Repo) saveFilesOneByOne(top string, out []CapturedPath, regular []int) ([]CapturedPath, error) {
	for _, i := range regular {
		data, err := readRegular(filepath.Join(top, filepath.FromSlash(out[i].Path)), 1<<40)
		if err != nil || data == nil {
			out[i].Mode = 0
			continue
		}
		out[i].Blob = r.pendingBlob(data)
	}
	return out, r.Flush()
}

// FilesNow gives the entries the files at the paths of saved (entries of
// files saved by SaveFiles) would have if saved now, their bytes as they
// are (a zero Mode where there is no file or link; a directory counts as
// none). A file that nothing has written, renamed or changed the mode of
// since the time given (its change time is before it, by coarseClock: the
// files were saved after it) is taken for its entry in saved, unread.
func (r *Repo) FilesNow(saved []CapturedPath, since time.Time) ([]CapturedPath, error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, err
	}
	out := make([]CapturedPath, len(saved))
	for i, e := range saved {
		out[i].Path = e.Path
		p := filepath.Join(top, filepath.FromSlash(e.Path))
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				out[i].Mode, out[i].Blob = 0o120000, objectName(plumbing.BlobObject, []byte(target))
			}
		case fi.Mode().IsRegular():
			out[i].Mode = 0o100644
			if fi.Mode()&0o100 != 0 {
				out[i].Mode = 0o100755
			}
			if out[i].Mode == e.Mode && changeTime(fi).Before(since.Add(-coarseClock)) {
				out[i].Blob = e.Blob
				continue
			}
			h, err := hashFile(p)
			if err != nil {
				out[i].Mode = 0 // gone or unreadable: not what was saved
				continue
			}
			out[i].Blob = h
		}
	}
	return out, nil
}

// coarseClock is how far a file's change time may lag the machine's clock:
// file systems stamp files with a clock that ticks every few milliseconds.
// FilesNow trusts a file's change time only when it is that much before
// the time it is given.
const coarseClock = time.Second

// hashFile is the name of the blob of the file at p, its bytes as they are.
func hashFile(p string) (Hash, error) {
	f, err := os.Open(p)
	if err != nil {
		return ZeroHash, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ZeroHash, err
	}
	sum := objectHasher(plumbing.BlobObject, int(fi.Size()))
	if n, err := io.Copy(sum, f); err != nil || n != fi.Size() {
		return ZeroHash, fmt.Errorf("%s changed while it was read", p)
	}
	var h Hash
	sum.Sum(h[:0])
	return h, nil
}

// PutFiles writes each of entries into the working tree (its blob's bytes
// as they are, its mode; a link as a link), making the directories on its
// way, through a temporary file renamed into place. An entry whose place
// is taken by a directory, or whose way goes through something that is no
// directory, is not written: it is returned in blocked. Nothing else is
// removed or overwritten: the caller has checked what stands at each path.
func (r *Repo) PutFiles(entries []CapturedPath) (put, blocked []string, err error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, nil, err
	}
	notDir := map[string]bool{}
	for _, e := range entries {
		p := filepath.Join(top, filepath.FromSlash(e.Path))
		if behindNonDir(top, e.Path, notDir) {
			blocked = append(blocked, e.Path)
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			blocked = append(blocked, e.Path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				blocked = append(blocked, e.Path)
				continue
			}
			return put, blocked, err
		}
		data, err := r.ReadBlob(e.Blob)
		if err != nil {
			return put, blocked, fmt.Errorf("putting back %s: %w", e.Path, err)
		}
		if err := writeInPlace(p, e.Mode, data); err != nil {
			return put, blocked, fmt.Errorf("putting back %s: %w", e.Path, err)
		}
		put = append(put, e.Path)
	}
	return put, blocked, nil
}

// writeInPlace writes a file (or a link, mode 0o120000, data its target)
// at p through a temporary file beside it renamed into place.
func writeInPlace(p string, mode uint32, data []byte) error {
	tmp := fmt.Sprintf("%s.evolve-%d.tmp", p, os.Getpid())
	os.Remove(tmp)
	if mode == 0o120000 {
		if err := os.Symlink(string(data), tmp); err != nil {
			return err
		}
	} else {
		perm := fs.FileMode(0o644)
		if mode == 0o100755 {
			perm = 0o755
		}
		if err := os.WriteFile(tmp, data, perm); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Chmod(tmp, perm); err != nil { // past the umask, as git checks out
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// TreeFiles lists the files of a tree (or a commit's), every level, with
// their entries.
func (r *Repo) TreeFiles(tree Hash) ([]CapturedPath, error) {
	changes, err := r.ChangedFiles(emptyTree, tree)
	if err != nil {
		return nil, err
	}
	out := make([]CapturedPath, len(changes))
	for i, ch := range changes {
		out[i] = CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New}
	}
	return out, nil
}

// NewTree names the tree that holds entries (files at their paths, the
// directories on their way made); it and its subtrees are pending until
// Flush.
func (r *Repo) NewTree(entries []CapturedPath) (Hash, error) {
	edits := make(map[string]*CapturedPath, len(entries))
	for i := range entries {
		edits[entries[i].Path] = &entries[i]
	}
	return r.editTree(emptyTree, edits)
}
