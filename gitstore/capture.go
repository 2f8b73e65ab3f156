package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// Capture is a working tree written as a tree: tracked and untracked files,
// not ignored ones, as git add -A would stage them.
type Capture struct {
	// Tree, and the blobs of files hashed here, read back at once but are
	// written to disk by the repository's Flush (WriteCommit flushes): a
	// capture that is not committed writes nothing.
	Tree Hash
	// Paths are the paths whose entry in Tree may differ from HEAD's (and
	// from the index's), each with its entry in Tree (a zero Blob: none),
	// when the capture knows them; nil when it does not.
	Paths []CapturedPath
	// Index is the index as a tree, as it was when the working tree was
	// captured (what git write-tree would write; pending like Tree); zero
	// when it could not be told (an unmerged entry).
	Index Hash
}

// CapturedPath is one path of a capture and its entry.
type CapturedPath struct {
	Path string
	Mode uint32 // 0o100644, 0o100755 or 0o120000; 0 when the path is absent
	Blob Hash
}

// CaptureWorktree writes the whole working tree (tracked and untracked
// files, not ignored ones) as a tree, without touching the index or the
// files.
//
// In the common case it asks git which paths differ from HEAD (git
// diff-index, beside git ls-files --others: the files themselves are read
// only for those paths), hashes those paths (here, or with git's filters through git
// hash-object where an attribute or core.autocrlf could convert them) and
// writes only the trees on their way. Whatever that does
// not cover exactly (no HEAD, submodules, nested repositories, unmerged
// entries, sparse checkouts, core.fileMode or core.symlinks off, a file that
// changes while it is read) is captured the way git stash does it, through
// a temporary index and git add -A.
func (r *Repo) CaptureWorktree() (*Capture, error) {
	c, ok, err := r.captureChanged()
	if err != nil || !ok {
		tree, index, err := r.captureWithIndex()
		if err != nil {
			return nil, err
		}
		return &Capture{Tree: tree, Index: index}, nil
	}
	return c, nil
}

// captureChanged is the common case of CaptureWorktree; ok is false when it
// does not apply.
func (r *Repo) captureChanged() (*Capture, bool, error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, false, err
	}
	head, ok, err := r.RefHash("HEAD")
	if err != nil || !ok {
		return nil, false, err
	}
	// The working tree against HEAD (a path whose stat information does not
	// match the index is listed: only its content can tell), beside the
	// untracked files (git ls-files --others). The files of the index that
	// are gone from the working tree are listed too: one added to the index
	// since HEAD is in neither list, yet its entry must go. The three run
	// side by side.
	diffP := startGit(top, r.env, false, "diff-index", "-z", "--raw", "HEAD", "--")
	othersP := startGit(top, r.env, false, "ls-files", "-z", "--others", "--exclude-standard")
	// The index against HEAD, as git write-tree sees it (an entry git add
	// -N made is in no tree): the entries added, and the index as a tree.
	cachedP := startGit(top, r.env, false, "diff-index", "-z", "--cached", "--raw", "--no-renames", "--ita-invisible-in-index", "HEAD", "--")
	others, oerr := othersP.finish(nil)
	cached, aerr := cachedP.finish(nil)
	hc, cerr := r.Commit(head)
	diff, derr := diffP.finish(nil)
	if err := errors.Join(cerr, derr, oerr, aerr); err != nil {
		return nil, false, err
	}
	if !r.captureSettingsPlain() {
		return nil, false, nil
	}
	// paths maps each path that may differ from HEAD to whether the
	// working tree's file is to be read: a path diff-index finds deleted
	// is not in the index, so a file there is untracked and is captured
	// only when git ls-files --others lists it (it is not ignored).
	paths := map[string]bool{}
	fields := bytes.Split(diff, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(string(fields[i]))
		if len(meta) != 5 {
			return nil, false, nil
		}
		if meta[0] == ":160000" || meta[1] == "160000" || meta[4] == "U" {
			return nil, false, nil // a submodule, an unmerged entry
		}
		paths[string(fields[i+1])] = meta[4] != "D"
	}
	staged, ok := parseCachedDiff(cached)
	if !ok {
		return nil, false, nil
	}
	for _, e := range staged {
		if _, ok := paths[e.Path]; !ok && e.Mode != 0 {
			paths[e.Path] = true // added since HEAD, or changed in the index
		}
	}
	for _, p := range bytes.Split(others, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		if p[len(p)-1] == '/' {
			return nil, false, nil // a nested repository: git add -A makes it a gitlink
		}
		paths[string(p)] = true
	}
	edits, captured, ok, err := r.hashPaths(top, paths)
	if err != nil || !ok {
		return nil, false, err
	}
	tree, err := r.editTree(hc.Tree, edits)
	if errors.Is(err, errTreeShape) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	index := hc.Tree
	if len(staged) > 0 {
		sedits := make(map[string]*CapturedPath, len(staged))
		for i := range staged {
			sedits[staged[i].Path] = &staged[i]
		}
		if index, err = r.editTree(hc.Tree, sedits); errors.Is(err, errTreeShape) {
			return nil, false, nil
		} else if err != nil {
			return nil, false, err
		}
	}
	return &Capture{Tree: tree, Paths: captured, Index: index}, true, nil
}

// parseCachedDiff reads git diff-index -z --cached --raw: each path whose
// index entry differs from HEAD's, with the index's entry (a zero Mode when
// the index has none). ok is false for an unmerged entry or a line it does
// not read.
func parseCachedDiff(out []byte) ([]CapturedPath, bool) {
	var staged []CapturedPath
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(string(fields[i]))
		if len(meta) != 5 || meta[4] == "U" {
			return nil, false
		}
		mode, err := strconv.ParseUint(meta[1], 8, 32)
		if err != nil {
			return nil, false
		}
		e := CapturedPath{Path: string(fields[i+1])}
		if meta[4] != "D" {
			if e.Blob, err = ParseHash(meta[3]); err != nil {
				return nil, false
			}
			e.Mode = uint32(mode)
		}
		staged = append(staged, e)
	}
	return staged, true
}

// hashPaths reads each path of the working tree and writes its content as
// a blob: regular files through git hash-object (so that git's filters and
// line-ending conversions apply as git add applies them), symbolic links
// here. A path that is not in the working tree is absent.
func (r *Repo) hashPaths(top string, paths map[string]bool) (map[string]*CapturedPath, []CapturedPath, bool, error) {
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	edits := map[string]*CapturedPath{}
	var regular []string
	for _, p := range sorted {
		cp := &CapturedPath{Path: p}
		edits[p] = cp
		if !paths[p] {
			continue // absent from the capture (see captureChanged)
		}
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && fi.IsDir():
			// absent (a file where its directory was; a directory in its
			// place, which holds files of its own)
		case err != nil:
			return nil, nil, false, err
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(top, filepath.FromSlash(p)))
			if err != nil {
				return nil, nil, false, nil
			}
			cp.Blob, cp.Mode = r.pendingBlob([]byte(target)), 0o120000
		case fi.Mode().IsRegular():
			cp.Mode = 0o100644
			if fi.Mode()&0o100 != 0 {
				cp.Mode = 0o100755
			}
			regular = append(regular, p)
		default:
			return nil, nil, false, nil // a device, a socket: let git add decide
		}
	}
	if len(regular) > 0 && r.noConversions(top, regular) {
		// Nothing converts these files on their way in: their blobs are
		// their bytes, hashed here.
		for _, p := range regular {
			data, err := readRegular(filepath.Join(top, filepath.FromSlash(p)), 64<<20)
			if err != nil || data == nil {
				return nil, nil, false, nil // changed, gone or large: let git add decide
			}
			edits[p].Blob = r.pendingBlob(data)
		}
	} else if len(regular) > 0 {
		hashP := startGit(top, r.env, true, "hash-object", "-w", "--stdin-paths")
		out, err := hashP.finish(stdinPaths(regular))
		if err != nil {
			return nil, nil, false, nil // a file changed or went while it was read
		}
		lines := strings.Fields(string(out))
		if len(lines) != len(regular) {
			return nil, nil, false, nil
		}
		for i, p := range regular {
			h, err := ParseHash(lines[i])
			if err != nil {
				return nil, nil, false, nil
			}
			edits[p].Blob = h
		}
	}
	captured := make([]CapturedPath, 0, len(sorted))
	for _, p := range sorted {
		captured = append(captured, *edits[p])
	}
	return edits, captured, true, nil
}

// captureSettingsPlain reports whether the settings the common case of
// CaptureWorktree relies on hold: core.fileMode and core.symlinks on (their
// default), core.sparseCheckout and core.ignoreCase off, as git's config
// says.
func (r *Repo) captureSettingsPlain() bool {
	is := func(key string, unset bool) (bool, bool) {
		v, set, err := r.Config(key)
		if err != nil {
			return false, false
		}
		if !set {
			return unset, true
		}
		return configBool(v)
	}
	fm, ok1 := is("core.filemode", true)
	sl, ok2 := is("core.symlinks", true)
	sc, ok3 := is("core.sparsecheckout", false)
	ic, ok4 := is("core.ignorecase", false)
	return ok1 && ok2 && ok3 && ok4 && fm && sl && !sc && !ic
}

// noConversions reports whether git add would store the files at paths as
// they are: no attributes file could apply to them (.gitattributes in their
// directories or above, info/attributes, core.attributesFile or its default,
// the system's) and core.autocrlf is off. Then no filter, line-ending or
// encoding conversion runs.
func (r *Repo) noConversions(top string, paths []string) bool {
	autocrlf, _, err1 := r.Config("core.autocrlf")
	attributesFile, _, err2 := r.Config("core.attributesfile")
	if err1 != nil || err2 != nil || os.Getenv("GIT_ATTR_SOURCE") != "" {
		return false
	}
	if on, ok := configBool(autocrlf); !ok || on {
		return false // true or input (git reads "input" as neither)
	}
	files := []string{filepath.Join(r.commonDir, "info", "attributes"), "/etc/gitattributes"}
	if f := attributesFile; f != "" {
		if strings.HasPrefix(f, "~/") {
			f = filepath.Join(os.Getenv("HOME"), f[2:])
		}
		files = append(files, f)
	} else if f := xdgGitFile("attributes"); f != "" {
		files = append(files, f)
	}
	if !systemFilesInEtc() {
		return false // a git elsewhere may read another system attributes file
	}
	dirs := map[string]bool{"": true}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		files = append(files, filepath.Join(top, filepath.FromSlash(d), ".gitattributes"))
	}
	for _, f := range files {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}

// errTreeShape is an edit that does not fit the tree (a path that is both a
// file and a directory).
var errTreeShape = errors.New("the edits do not fit the tree")

// editTree names the tree that is base with edits applied: each path set
// to its entry, or removed when it has none. Directories left empty are
// removed; only the trees on the edited paths are new (pending, see Flush).
func (r *Repo) editTree(base Hash, edits map[string]*CapturedPath) (Hash, error) {
	entries, err := r.readTree(base)
	if err != nil {
		return ZeroHash, err
	}
	files := map[string]*CapturedPath{}
	subs := map[string]map[string]*CapturedPath{}
	for p, e := range edits {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if subs[dir] == nil {
				subs[dir] = map[string]*CapturedPath{}
			}
			subs[dir][rest] = e
		} else {
			files[p] = e
		}
	}
	byName := make(map[string]treeEntry, len(entries))
	for _, e := range entries {
		byName[e.name] = e
	}
	for name, e := range files {
		old, had := byName[name]
		switch {
		case e.Mode != 0:
			byName[name] = treeEntry{name: name, mode: e.Mode, hash: e.Blob}
		case had && !old.dir:
			delete(byName, name)
		}
	}
	from := map[string]Hash{} // each directory as base had it
	var prefetch []Hash
	for _, e := range entries {
		if _, ok := subs[e.name]; ok && e.dir {
			from[e.name] = e.hash
			prefetch = append(prefetch, e.hash)
		}
	}
	if err := r.prefetchTrees(prefetch); err != nil {
		return ZeroHash, err
	}
	for name, sub := range subs {
		tree, err := r.editTree(from[name], sub)
		if err != nil {
			return ZeroHash, err
		}
		cur, had := byName[name]
		switch {
		case tree == emptyTree && had && cur.dir:
			delete(byName, name)
		case tree == emptyTree:
			// nothing left under it (a file may have taken its name)
		case had && !cur.dir:
			return ZeroHash, fmt.Errorf("%w: %s is a file and has files in it", errTreeShape, name)
		default:
			byName[name] = treeEntry{name: name, dir: true, hash: tree}
		}
	}
	out := make([]treeEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	return r.pendingTree(out), nil // the empty tree too: a commit may name it
}

// emptyTree is the name of the tree with no entries.
var emptyTree = Hash{0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60, 0xe5, 0x4b, 0xf8, 0xd6, 0x92, 0x88, 0xfb, 0xee, 0x49, 0x04}

// SyncIndex makes the index hold a capture's tree, committed as commit:
// with the paths the capture knows, only their entries are set (the others
// hold HEAD's already, with their cached stat information); otherwise the
// index is reset from commit's whole tree. The working tree is not touched.
func (r *Repo) SyncIndex(c *Capture, commit Hash) error {
	if c.Paths == nil {
		return r.ResetIndex(commit)
	}
	top, err := r.WorkTree()
	if err != nil {
		return err
	}
	return r.setIndex(top, c.Paths)
}

// SetIndex sets the index entries of the paths given (a zero Mode removes
// one), leaving the others and the working tree alone.
func (r *Repo) SetIndex(entries []CapturedPath) error {
	top, err := r.WorkTree()
	if err != nil {
		return err
	}
	return r.setIndex(top, entries)
}

func (r *Repo) setIndex(top string, entries []CapturedPath) error {
	// Removals first: a path may go from a file to a directory.
	var b strings.Builder
	for _, p := range entries {
		if p.Mode == 0 {
			fmt.Fprintf(&b, "0 %s\t%s\x00", ZeroHash, p.Path)
		}
	}
	for _, p := range entries {
		if p.Mode != 0 {
			fmt.Fprintf(&b, "%o %s\t%s\x00", p.Mode, p.Blob, p.Path)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	if _, err := startGit(top, r.env, true, "update-index", "-z", "--index-info").finish([]byte(b.String())); err != nil {
		return fmt.Errorf("updating the index: %w", err)
	}
	return nil
}

// ErrWorktreeChanged is returned by SwitchWorktree when the working tree is
// not as the switch expects it where the switch would write.
var ErrWorktreeChanged = errors.New("the working tree changed since it was captured")

// UnsavedError is returned by SwitchWorktree, before it changes anything,
// when the switch would overwrite or remove files that from does not hold
// (ignored files, above all: in no capture): a file where to writes one, in
// a directory to replaces by a file, or in the place of a directory to
// writes into. Save them first (SaveWorktree's also), then switch from
// that save.
type UnsavedError struct{ Paths []string }

func (e *UnsavedError) Error() string {
	more := ""
	if len(e.Paths) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Paths)-1)
	}
	return fmt.Sprintf("%s is in the way and in no save%s", e.Paths[0], more)
}

// Unwrap makes an UnsavedError an ErrWorktreeChanged: the working tree is
// not as the switch expects it.
func (e *UnsavedError) Unwrap() error { return ErrWorktreeChanged }

// unsavedInTheWay lists the files a switch by changes (from → to) would
// overwrite or remove that from does not hold: a file at a path from lacks
// and to writes (unless it is what to has), the files under a directory
// where to has a file (but from's), and a file where to needs a directory.
func unsavedInTheWay(top string, changes []FileChange) ([]string, error) {
	inFrom := map[string]bool{}
	for _, ch := range changes {
		if ch.OldMode != 0 {
			inFrom[ch.Path] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	notDir := map[string]bool{} // directories on the way: true when something else is there
	for _, ch := range changes {
		if ch.NewMode == 0 || ch.NewMode == 0o160000 || ch.OldMode == 0o160000 {
			continue // a submodule's files are its own (see SwitchWorktree)
		}
		// A file (or a symbolic link) where to needs a directory on the way
		// to ch.Path is in the way, unless from holds it (the switch removes
		// it first); what lies beyond it (through a link, outside the tree)
		// is not.
		if behindNonDir(top, ch.Path, notDir) {
			for d := path.Dir(ch.Path); d != "."; d = path.Dir(d) {
				if notDir[d] && !inFrom[d] {
					add(d)
				}
			}
			continue
		}
		p := filepath.Join(top, filepath.FromSlash(ch.Path))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		case err != nil:
			return nil, err
		case fi.IsDir():
			err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && d.Name() == ".git" {
					return fs.SkipDir // a repository: SwitchWorktree refuses to remove it
				}
				if d.IsDir() {
					return nil
				}
				rel, err := filepath.Rel(top, q)
				if err != nil {
					return err
				}
				if rel = filepath.ToSlash(rel); !inFrom[rel] {
					add(rel)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		case ch.OldMode == 0 && !sameContent(p, fi, ch.NewMode, ch.New):
			add(ch.Path)
		}
	}
	sort.Strings(out)
	return out, nil
}

// behindNonDir reports whether a directory on the way to p (a path from
// the top) is not one on disk: a file or a symbolic link (whose target may
// be outside the tree). notDir caches the answer per directory.
func behindNonDir(top, p string, notDir map[string]bool) bool {
	blocked := false
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		nd, seen := notDir[d]
		if !seen {
			fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(d)))
			nd = err == nil && !fi.IsDir()
			notDir[d] = nd
		}
		blocked = blocked || nd
	}
	return blocked
}

// sameContent reports whether the file at p (fi its Lstat) is the entry
// mode/blob, byte for byte.
func sameContent(p string, fi fs.FileInfo, mode uint32, blob Hash) bool {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return err == nil && mode == 0o120000 && objectName(plumbing.BlobObject, []byte(target)) == blob
	case !fi.Mode().IsRegular() || mode == 0o120000:
		return false
	}
	data, err := readRegular(p, 64<<20)
	return err == nil && data != nil && objectName(plumbing.BlobObject, data) == blob
}

// SwitchMode says what SwitchWorktree checks before it writes.
type SwitchMode int

const (
	// SwitchChecked: each file to be written or removed must be as from
	// has it.
	SwitchChecked SwitchMode = iota
	// SwitchResume: as from or as to has it (a switch that was interrupted
	// left some files switched).
	SwitchResume
	// SwitchForce: nothing is checked (the caller saved the working tree).
	SwitchForce
)

// SwitchWorktree brings the index and the working tree from from (a commit
// or tree the working tree held when c captured it; c may be nil) to to.
// Only the files that differ between the two are written (by git
// checkout-index, with git's filters) or removed; the index entries of
// those, and of the paths c knows, are set to to's. Files in neither
// (ignored ones, build caches, files written since the capture that from
// and to agree on) are left alone. Unless mode is SwitchForce, each file to
// be written or removed is first checked: when one is not as expected (a
// check or a person changed it since the capture, or put a file where to
// has one), it returns an error wrapping ErrWorktreeChanged and nothing
// has changed. In every mode, files the switch would destroy that from
// does not hold (ignored ones) are refused first: an *UnsavedError.
func (r *Repo) SwitchWorktree(c *Capture, from, to Hash, mode SwitchMode) error {
	top, err := r.WorkTree()
	if err != nil {
		return err
	}
	changes, err := r.ChangedFiles(from, to)
	if err != nil {
		return err
	}
	if unsaved, err := unsavedInTheWay(top, changes); err != nil || len(unsaved) > 0 {
		if err == nil {
			err = &UnsavedError{Paths: unsaved}
		}
		return err
	}
	if mode != SwitchForce {
		if err := r.checkWorktree(top, changes, mode == SwitchResume); err != nil {
			return err
		}
	}
	// The index: to's entries for the files that change, and for the paths
	// whose index entry may differ from HEAD's (those from and to agree on
	// keep their entry in from, which is to's). Removals first: a path may
	// go from a file to a directory.
	entries := map[string]CapturedPath{}
	if c != nil {
		for _, p := range c.Paths {
			entries[p.Path] = p
		}
	}
	for _, ch := range changes {
		entries[ch.Path] = CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New}
	}
	list := make([]CapturedPath, 0, len(entries))
	for _, p := range entries {
		list = append(list, p)
	}
	if err := r.setIndex(top, list); err != nil {
		return err
	}
	// The working tree: what to lacks goes, then what to has is written.
	var write strings.Builder
	for _, ch := range changes {
		p := filepath.Join(top, filepath.FromSlash(ch.Path))
		if ch.NewMode == 0 {
			err := os.Remove(p)
			if ch.OldMode == 0o160000 && err != nil && !errors.Is(err, os.ErrNotExist) {
				continue // a submodule's files stay, as git checkout leaves them
			}
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("updating the working tree: %w", err)
			}
			removeEmptyParents(top, filepath.Dir(p))
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && ch.NewMode != 0o160000 {
			// A directory where to has a file: from's files in it went
			// above (and were checked); what else is in it goes too, as
			// git checkout removes it, unless it is a repository.
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return fmt.Errorf("updating the working tree: %s holds a git repository where %s is to be a file; move it away and run again", ch.Path, ch.Path)
			}
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("updating the working tree: %w", err)
			}
		}
		write.WriteString(ch.Path + "\x00")
	}
	if write.Len() > 0 {
		if _, err := startGit(top, r.env, true, "checkout-index", "-f", "-u", "-z", "--stdin").finish([]byte(write.String())); err != nil {
			return fmt.Errorf("updating the working tree: %w", err)
		}
	}
	return nil
}

// checkWorktree checks that each file the changes would touch is as their
// old side has it (absent where it has none), or, with orNew, as their new
// side has it.
func (r *Repo) checkWorktree(top string, changes []FileChange, orNew bool) error {
	// The files the switch may remove with a directory that is to become a
	// file: those the changes name.
	known := map[string]bool{}
	for _, ch := range changes {
		if ch.OldMode != 0 || orNew && ch.NewMode != 0 {
			known[ch.Path] = true
		}
	}
	var regular []string
	var want []FileChange
	notDir := map[string]bool{}
	for _, ch := range changes {
		p := filepath.Join(top, filepath.FromSlash(ch.Path))
		fi, err := os.Lstat(p)
		absent := errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		if err != nil && !absent {
			return err
		}
		if !absent && behindNonDir(top, ch.Path, notDir) {
			// Reached through a link or past a file the switch removes
			// first: not in the tree.
			absent, fi = true, nil
		}
		is := func(mode uint32, blob Hash) bool {
			switch {
			case mode == 0:
				// nothing there, or a directory holding only files the
				// changes name (and check)
				return absent || fi.IsDir() && onlyKnown(top, ch.Path, known) == ""
			case absent:
				return false
			case mode == 0o120000:
				target, err := os.Readlink(p)
				return err == nil && objectName(plumbing.BlobObject, []byte(target)) == blob
			case mode == 0o160000:
				return fi.IsDir() // a submodule: its files are its own
			}
			return fi.Mode().IsRegular() && (fi.Mode()&0o100 != 0) == (mode == 0o100755)
		}
		old, new := is(ch.OldMode, ch.Old), orNew && is(ch.NewMode, ch.New)
		switch {
		case !old && !new && err == nil && fi.IsDir() && (ch.OldMode == 0 || orNew && ch.NewMode == 0):
			return fmt.Errorf("%w: %s is in the way of %s", ErrWorktreeChanged, onlyKnown(top, ch.Path, known), ch.Path)
		case !old && !new:
			return fmt.Errorf("%w: %s", ErrWorktreeChanged, ch.Path)
		case !absent && fi.Mode().IsRegular():
			regular = append(regular, ch.Path) // its content decides
			want = append(want, ch)
		}
	}
	if len(regular) == 0 {
		return nil
	}
	hashes := make([]Hash, len(regular))
	if r.noConversions(top, regular) {
		for i, p := range regular {
			data, err := readRegular(filepath.Join(top, filepath.FromSlash(p)), 64<<20)
			if err != nil || data == nil {
				return fmt.Errorf("%w: %s", ErrWorktreeChanged, p)
			}
			hashes[i] = objectName(plumbing.BlobObject, data)
		}
	} else {
		out, err := startGit(top, r.env, true, "hash-object", "--stdin-paths").finish(stdinPaths(regular))
		lines := strings.Fields(string(out))
		if err != nil || len(lines) != len(regular) {
			return fmt.Errorf("%w: %v", ErrWorktreeChanged, err)
		}
		for i := range regular {
			if hashes[i], err = ParseHash(lines[i]); err != nil {
				return fmt.Errorf("%w: %v", ErrWorktreeChanged, err)
			}
		}
	}
	for i, ch := range want {
		if hashes[i] != ch.Old && !(orNew && hashes[i] == ch.New) {
			return fmt.Errorf("%w: %s", ErrWorktreeChanged, ch.Path)
		}
	}
	return nil
}

// onlyKnown returns "" when each file under the directory dir (a path in
// the working tree top) is a path known names, else the first one that is
// not (dir itself when it cannot be read).
func onlyKnown(top, dir string, known map[string]bool) string {
	stray := ""
	root := filepath.Join(top, filepath.FromSlash(dir))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !known[rel] {
			stray = rel
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return dir
	}
	return stray
}

// removeEmptyParents removes dir and its parents while they are empty, up
// to (not including) top, as git does when it removes a file.
func removeEmptyParents(top, dir string) {
	for dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// stdinPaths is paths as git's --stdin-paths reads them, a line each: a
// path that starts with a double quote or holds a newline is given quoted,
// as git C-unquotes a line that starts with one.
func stdinPaths(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		if strings.HasPrefix(p, "\"") || strings.ContainsAny(p, "\n") {
			b.WriteString(cQuote(p))
		} else {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// cQuote quotes s as git quotes a path (quote_c_style): in double quotes,
// with backslash escapes for the quote, the backslash and control bytes.
func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
