package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// InProgress names an operation git has left unfinished in this worktree
// (a merge, a rebase, a cherry-pick, a revert), or returns "".
func (r *Repo) InProgress() string {
	for _, p := range []struct{ file, what string }{
		{"MERGE_HEAD", "a merge"}, {"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase or git am"},
		{"CHERRY_PICK_HEAD", "a cherry-pick"}, {"REVERT_HEAD", "a revert"},
		{"sequencer", "a cherry-pick or revert sequence"}, {"BISECT_LOG", "a bisect"},
	} {
		if _, err := os.Stat(filepath.Join(r.gitDir, p.file)); err == nil {
			return p.what
		}
	}
	return ""
}

// ChangedSince lists the files of the working tree that differ from the
// tree of commit: committed or not, tracked or untracked (ignored files
// excepted), as git sees them, in path order.
func (r *Repo) ChangedSince(commit Hash) ([]string, error) {
	top, diff, others, err := r.diffAndUntracked(commit, "--name-only")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range bytes.Split(diff, []byte{0}) {
		if s := string(b); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	unchanged := r.untrackedAsAt(commit, top, seen, others)
	for _, b := range bytes.Split(others, []byte{0}) {
		if s := string(b); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	kept := out[:0]
	for _, p := range out {
		if !unchanged[p] {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	return kept, nil
}

// untrackedAsAt picks, among the untracked files (others) that git diff
// also listed (inDiff: a file taken out of the index is gone from it), those
// whose content and mode are as commit has them: git add -A would store them
// unchanged. Where a filter could convert a file, it is not picked.
func (r *Repo) untrackedAsAt(commit Hash, top string, inDiff map[string]bool, others []byte) map[string]bool {
	same := map[string]bool{}
	for _, b := range bytes.Split(others, []byte{0}) {
		p := string(b)
		if p == "" || !inDiff[p] || !r.noConversions(top, []string{p}) {
			continue
		}
		entry, ok, err := r.treeEntryAt(commit, p)
		if err != nil || !ok {
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		mode := uint32(0o100644)
		if fi.Mode()&0o100 != 0 {
			mode = 0o100755
		}
		data, err := readRegular(filepath.Join(top, filepath.FromSlash(p)), 64<<20)
		if err != nil || data == nil || fileMode(entry) != mode {
			continue
		}
		if objectName(plumbing.BlobObject, data) == entry.hash {
			same[p] = true
		}
	}
	return same
}

// diffAndUntracked runs git diff <format> -z against commit (tracked files,
// committed or not) beside git ls-files --others (the untracked files,
// ignored ones excepted, as core.untrackedCache and core.fsmonitor let git
// find them): the two are independent, so they run side by side. It returns
// the top of the working tree and both outputs.
func (r *Repo) diffAndUntracked(commit Hash, format string) (top string, diff, others []byte, err error) {
	if top, err = r.WorkTree(); err != nil {
		return "", nil, nil, err
	}
	diffProc := startGit(top, r.env, false, "diff", format, "-z", "--no-renames", commit.String(), "--")
	others, err = startGit(top, r.env, false, "ls-files", "-z", "--others", "--exclude-standard").finish(nil)
	diff, derr := diffProc.finish(nil)
	if err == nil {
		err = derr
	}
	if err != nil {
		return "", nil, nil, err
	}
	return top, diff, others, nil
}

// captureWithIndex writes the whole working tree (tracked and untracked
// files, not ignored ones) as a tree and returns it, with the index as a
// tree (zero when git write-tree cannot write it: an unmerged entry),
// without touching the index or the files. It uses a temporary index, as
// git stash does.
func (r *Repo) captureWithIndex() (tree, index Hash, err error) {
	top, err := r.WorkTree()
	if err != nil {
		return ZeroHash, ZeroHash, err
	}
	tmp, err := os.CreateTemp(r.gitDir, "evolve-index-*")
	if err != nil {
		return ZeroHash, ZeroHash, err
	}
	defer os.Remove(tmp.Name())
	// Start from a copy of the real index: git add then knows from its stat
	// information which files are unchanged and does not hash a large tree
	// again. The copy keeps the index's modification time, which git
	// compares with each entry's to find the entries whose stat information
	// cannot be trusted (a file changed within the second the index was
	// written: "racy git"); a copy stamped now would pass them as clean.
	// Without an index, start from HEAD.
	steps := [][]string{{"add", "-A", "--", "."}}
	indexFile := filepath.Join(r.gitDir, "index")
	fi, serr := os.Stat(indexFile)
	if data, err := os.ReadFile(indexFile); err == nil && serr == nil {
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chtimes(tmp.Name(), fi.ModTime(), fi.ModTime())
		}
		if err != nil {
			return ZeroHash, ZeroHash, err
		}
	} else {
		tmp.Close()
		os.Remove(tmp.Name()) // git creates it
		if _, ok, _ := r.RefHash("HEAD"); ok {
			steps = append([][]string{{"read-tree", "HEAD"}}, steps...)
		}
	}
	env := append(append([]string(nil), r.env...), "GIT_INDEX_FILE="+tmp.Name())
	writeTree := func() (Hash, error) {
		out, err := startGit(top, env, false, "write-tree").finish(nil)
		if err != nil {
			return ZeroHash, err
		}
		tree, err := ParseHash(strings.TrimSpace(string(out)))
		if err != nil {
			return ZeroHash, errors.New("git write-tree printed no tree")
		}
		return tree, nil
	}
	for i, args := range steps {
		if i == len(steps)-1 {
			// The index as it is, before git add: an unmerged entry
			// leaves it unwritten.
			index, _ = writeTree()
		}
		if _, err := startGit(top, env, false, args...).finish(nil); err != nil {
			return ZeroHash, ZeroHash, fmt.Errorf("saving the working tree: %w", err)
		}
	}
	if tree, err = writeTree(); err != nil {
		return ZeroHash, ZeroHash, fmt.Errorf("saving the working tree: %w", err)
	}
	return tree, index, nil
}

// SaveWorktree commits the whole working tree (see CaptureWorktree) on top
// of parent, without touching the index or the files, and returns the
// commit and the capture it was made from. The commit is shaped as git
// stash shapes one (see CommitSave): its second parent holds the index.
// The files at also are saved too, ignored or not (those a switch would
// otherwise destroy: see UnsavedError); they are not among the capture's
// paths.
func (r *Repo) SaveWorktree(parent Hash, message string, also ...string) (Hash, *Capture, error) {
	c, err := r.CaptureWorktree()
	if err != nil {
		return ZeroHash, nil, err
	}
	tree := c.Tree
	if len(also) > 0 {
		entries, ok, err := r.WorktreeEntries(also)
		if err == nil && !ok {
			err = fmt.Errorf("saving %s: it changed while it was read", also[0])
		}
		if err != nil {
			return ZeroHash, nil, err
		}
		if tree, err = r.EditTree(tree, entries); err != nil {
			return ZeroHash, nil, fmt.Errorf("saving %s: %w", also[0], err)
		}
	}
	h, err := r.CommitSave(tree, c.Index, parent, message)
	return h, c, err
}

// CommitSave commits a save of the working tree as git stash shapes one:
// the commit has tree (the working tree) and parent; when index is not
// zero, a second parent, a commit of index (the index as it was) on
// parent. So git show SAVE:PATH gives a file as the working tree had it,
// git show SAVE^2:PATH as the index had it, and git stash apply --index
// SAVE puts both back on parent. Untracked files are in tree (git stash
// keeps them in a third parent): applied, they come back untracked.
func (r *Repo) CommitSave(tree, index, parent Hash, message string) (Hash, error) {
	author, committer, err := r.Identity()
	if err != nil {
		return ZeroHash, err
	}
	parents := []Hash{parent}
	if !index.IsZero() {
		subject, _, _ := strings.Cut(message, "\n")
		ih, err := r.CommitAsGit(index, []Hash{parent}, "index of: "+subject+"\n", author, committer)
		if err != nil {
			return ZeroHash, err
		}
		parents = append(parents, ih)
	}
	return r.CommitAsGit(tree, parents, message, author, committer)
}

// WorktreeEntries are the entries the working tree's files at paths would
// have in a capture (a zero Mode where there is no file), their blobs
// pending (see Flush). ok is false when one could not be read as a file
// (it changed while it was read, or is a device or a socket).
func (r *Repo) WorktreeEntries(paths []string) ([]CapturedPath, bool, error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, false, err
	}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	_, entries, ok, err := r.hashPaths(top, want)
	return entries, ok, err
}

// UnchangedSince returns those of paths (files of the working tree, from
// its top) that nothing has written, renamed or changed the mode of since
// t: their change time is before it. A path that is not there is left out.
func (r *Repo) UnchangedSince(paths []string, t time.Time) ([]string, error) {
	top, err := r.WorkTree()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		if changeTime(fi).Before(t) {
			out = append(out, p)
		}
	}
	return out, nil
}

// EditTree names the tree that is base with each of entries set (removed
// where its Mode is 0); the new trees are pending until Flush.
func (r *Repo) EditTree(base Hash, entries []CapturedPath) (Hash, error) {
	base, err := r.treeOf(base)
	if err != nil {
		return ZeroHash, err
	}
	edits := make(map[string]*CapturedPath, len(entries))
	for i := range entries {
		edits[entries[i].Path] = &entries[i]
	}
	return r.editTree(base, edits)
}

// ancestorWalk bounds how many commits IsAncestor reads itself before it
// asks git, which has commit-graph files and generation numbers for long
// histories. Reading a commit through the cat-file pipe costs tens of
// microseconds, a git merge-base process about 12 ms: a walk of 256 costs
// less than the process, and covers a push of a few hundred records.
const ancestorWalk = 256

// graftedHistory reports whether git reads some commits' parents from
// elsewhere than their objects: a shallow clone's boundary, grafts.
func (r *Repo) graftedHistory() bool {
	for _, env := range []string{"GIT_SHALLOW_FILE", "GIT_GRAFT_FILE"} {
		if os.Getenv(env) != "" {
			return true
		}
	}
	for _, name := range []string{"shallow", filepath.Join("info", "grafts")} {
		if _, err := os.Lstat(filepath.Join(r.commonDir, name)); err == nil {
			return true
		}
	}
	return false
}

// HistoryAltered reports whether git reads some commits' parents from
// elsewhere than their objects (a shallow clone's boundary, grafts) or
// reads other objects in some objects' place (refs/replace/): there, what
// was once an ancestor need not stay one, and an answer kept from an
// earlier process is not to be trusted.
// The environment that changes which replace refs git reads counts too:
// an answer found with it set is not one without.
func (r *Repo) HistoryAltered() (bool, error) {
	if r.graftedHistory() {
		return true, nil
	}
	for _, env := range []string{"GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS"} {
		if _, set := os.LookupEnv(env); set {
			return true, nil
		}
	}
	return r.HasRefsUnder("refs/replace/")
}

// Extends reports whether b is a, or reaches a through commits of one
// parent each (a line of commits made on a, no merge), within ancestorWalk
// commits. git log b then lists those commits first, newest first, and
// then what git log a lists, in its order: a merge's commits are listed by
// date among a's. In a shallow clone a commit of the boundary has no
// parents to git, and ends the line; where grafts change parents, no line
// is known.
func (r *Repo) Extends(a, b Hash) bool {
	if os.Getenv("GIT_GRAFT_FILE") != "" {
		return false
	}
	if _, err := os.Lstat(filepath.Join(r.commonDir, "info", "grafts")); err == nil {
		return false
	}
	shallow, ok := r.shallowCommits()
	if !ok {
		return false
	}
	h := b
	for i := 0; i <= ancestorWalk; i++ {
		if h == a {
			return true
		}
		ci, err := r.Commit(h)
		if err != nil || len(ci.Parents) != 1 || shallow[h] {
			// A merge, a root (or the shallow boundary), or a commit not
			// here: not known to be such a line; the caller reads what it
			// would have built on.
			return false
		}
		h = ci.Parents[0]
	}
	return false
}

// shallowCommits are the commits of a shallow clone's boundary (none in a
// clone that is not shallow); ok is false when the file cannot be read.
func (r *Repo) shallowCommits() (map[Hash]bool, bool) {
	path := os.Getenv("GIT_SHALLOW_FILE")
	if path == "" {
		path = filepath.Join(r.commonDir, "shallow")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	out := map[Hash]bool{}
	for _, line := range strings.Fields(string(data)) {
		h, err := ParseHash(line)
		if err != nil {
			return nil, false
		}
		out[h] = true
	}
	return out, true
}

// IsAncestor reports whether commit a is an ancestor of commit b, or b
// itself.
func (r *Repo) IsAncestor(a, b Hash) (bool, error) {
	if _, err := r.Commit(a); err != nil {
		return false, err
	}
	if mb, ok := r.knownBase(a, b); ok {
		return mb.ok && mb.base == a, nil
	}
	// The common case is a handful of commits from b back to a. Not in a
	// history git cuts or grafts (shallow, info/grafts), where a commit's
	// parents are not what its object says: git is asked.
	if !r.graftedHistory() {
		seen := map[Hash]bool{b: true}
		queue := []Hash{b}
		walked := true
		for len(queue) > 0 && len(seen) <= ancestorWalk {
			h := queue[0]
			queue = queue[1:]
			if h == a {
				// a is then the merge base of the two, as git merge-base
				// says: kept for the questions a merge of them asks.
				r.keepBase(a, b, mergeBase{base: a, ok: true})
				return true, nil
			}
			ci, err := r.Commit(h)
			if err != nil {
				walked = false // a commit this clone lacks: git knows more
				break
			}
			for _, p := range ci.Parents {
				if !seen[p] {
					seen[p] = true
					queue = append(queue, p)
				}
			}
		}
		if walked && len(queue) == 0 {
			return false, nil // every ancestor of b was read
		}
	}
	// a is b's ancestor exactly when it is their merge base; asking for the
	// base (kept) answers the other questions a merge of the two asks.
	base, ok, err := r.MergeBase(a, b)
	return ok && base == a, err
}

// MoveHead moves HEAD from old to newHash with compare-and-swap: the branch
// HEAD names, or HEAD itself when it is detached. It returns an error
// wrapping ErrRefChanged when HEAD no longer names old.
func (r *Repo) MoveHead(newHash, old Hash, reason string) error {
	return r.UpdateRef("HEAD", newHash, old, reason)
}

// ResetIndex makes the index hold the tree of commit, keeping git's cached
// file information for the entries that do not change, so that git status
// does not hash the whole tree again. The working tree is not touched.
func (r *Repo) ResetIndex(commit Hash) error {
	top, err := r.WorkTree()
	if err != nil {
		return err
	}
	if _, err := startGit(top, r.env, false, "read-tree", "--reset", commit.String()).finish(nil); err != nil {
		return fmt.Errorf("updating the index: %w", err)
	}
	return nil
}

// CreateRef makes ref point at h; it must not exist yet.
func (r *Repo) CreateRef(ref string, h Hash, reason string) error {
	return r.UpdateRef(ref, h, ZeroHash, reason)
}

// DeleteRef removes ref if it holds old.
func (r *Repo) DeleteRef(ref string, old Hash) error {
	return r.DeleteRefs(map[string]Hash{ref: old})
}

// DeleteRefs removes each ref that holds the value given for it, in one
// transaction: all of them, or none when one of them moved.
func (r *Repo) DeleteRefs(refs map[string]Hash) error {
	if len(refs) == 0 {
		return nil
	}
	var b strings.Builder
	for ref, old := range refs {
		fmt.Fprintf(&b, "delete %s\x00%s\x00", ref, old)
	}
	_, err := startGit(r.dir, r.env, true, "update-ref", "-z", "--stdin").finish([]byte(b.String()))
	return err
}

// AddTrailers sets trailers (key, value pairs) in the commit message file
// the way git interpret-trailers does: in the message's last paragraph,
// replacing a trailer with the same key.
func (r *Repo) AddTrailers(file string, trailers [][2]string) error {
	_, err := startGit(r.dir, r.env, false, append(trailerArgs(trailers), "--in-place", file)...).finish(nil)
	return err
}

// WithTrailers returns message with trailers set as AddTrailers sets them.
func (r *Repo) WithTrailers(message string, trailers [][2]string) (string, error) {
	out, err := startGit(r.dir, r.env, true, trailerArgs(trailers)...).finish([]byte(message))
	return string(out), err
}

func trailerArgs(trailers [][2]string) []string {
	args := []string{"interpret-trailers", "--if-exists", "replace"}
	for _, t := range trailers {
		args = append(args, "--trailer", t[0]+": "+t[1])
	}
	return args
}

// LineDelta is how a file changed, in lines. Binary files count no lines.
type LineDelta struct {
	Path       string
	Insertions int
	Deletions  int
	Binary     bool
}

// parseNumstat reads git's --numstat -z output (without renames).
func parseNumstat(out []byte) []LineDelta {
	var deltas []LineDelta
	for _, rec := range bytes.Split(out, []byte{0}) {
		f := bytes.SplitN(rec, []byte{'\t'}, 3)
		if len(f) != 3 {
			continue
		}
		d := LineDelta{Path: string(f[2])}
		if string(f[0]) == "-" {
			d.Binary = true
		} else {
			fmt.Sscan(string(f[0]), &d.Insertions)
			fmt.Sscan(string(f[1]), &d.Deletions)
		}
		deltas = append(deltas, d)
	}
	return deltas
}

// readRegular reads a regular file of at most limit bytes; it returns nil
// for anything else (a symlink is not followed).
func readRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, err
	}
	return os.ReadFile(path)
}

// ErrMergeTreeUnsupported is returned by MergeTree when git is older than
// 2.38, whose git merge-tree cannot write a merged tree.
var ErrMergeTreeUnsupported = errors.New("three-way merges need git 2.38 or newer (git merge-tree --write-tree)")

// MergeTree merges commit theirs into commit ours, three ways from their
// merge base, as git merge would, without touching the index or the working
// tree. It returns the merged tree, or the paths that conflict (and a zero
// tree).
func (r *Repo) MergeTree(ours, theirs Hash) (Hash, []string, error) {
	out, err := r.git(context.Background(), nil, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", ours.String(), theirs.String())
	var ge *GitError
	switch {
	case errors.As(err, &ge) && ge.ExitCode == 1 && len(out) > 0:
		// Conflicts: the tree, then the conflicted paths, NUL-terminated.
		fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		var paths []string
		seen := map[string]bool{}
		for _, p := range fields[1:] {
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		return ZeroHash, paths, nil
	case errors.As(err, &ge) && (strings.Contains(ge.Stderr, "unknown option") || strings.Contains(ge.Stderr, "usage: git merge-tree")):
		return ZeroHash, nil, ErrMergeTreeUnsupported
	case err != nil:
		return ZeroHash, nil, err
	}
	tree, err := ParseHash(strings.TrimSuffix(string(out), "\x00"))
	if err != nil {
		return ZeroHash, nil, fmt.Errorf("git merge-tree printed %q", out)
	}
	return tree, nil, nil
}

// TrackedChanges reports whether the index or the tracked files of the
// working tree differ from HEAD (untracked files do not count).
func (r *Repo) TrackedChanges() (bool, error) {
	top, err := r.WorkTree()
	if err != nil {
		return false, err
	}
	worktree := startGit(top, r.env, false, "diff", "--quiet", "HEAD", "--")
	index := startGit(top, r.env, false, "diff-index", "--quiet", "--cached", "HEAD", "--")
	for _, p := range []*proc{worktree, index} {
		_, err := p.finish(nil)
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			worktree.abandon()
			index.abandon()
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// InitRepository creates a repository with a working tree in dir (git init,
// with main as its first branch).
func InitRepository(dir string) error {
	_, err := startGit(dir, nil, false, "init", "-q", "-b", "main", dir).finish(nil)
	return err
}

// CommitAll commits every change of the working tree (git add -A, then git
// commit, hooks and all, as a person would) and returns the commit.
func (r *Repo) CommitAll(message string) (Hash, error) {
	top, err := r.WorkTree()
	if err != nil {
		return ZeroHash, err
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", message}} {
		if _, err := startGit(top, r.env, false, args...).finish(nil); err != nil {
			return ZeroHash, err
		}
	}
	h, err := r.ResolveCommits("HEAD")
	if err != nil {
		return ZeroHash, err
	}
	return h[0], nil
}

// TrackedFiles are the paths of the files the index holds (git ls-files),
// with slashes, from the top of the working tree.
func (r *Repo) TrackedFiles() ([]string, error) {
	out, err := r.git(context.Background(), nil, "ls-files", "-z", "--full-name", "--", ":/")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			files = append(files, string(p))
		}
	}
	return files, nil
}

// Tracked reports whether git tracks path (relative to the top of the
// working tree) in the index.
func (r *Repo) Tracked(path string) (bool, error) {
	top, err := r.WorkTree()
	if err != nil {
		return false, err
	}
	_, err = startGit(top, r.env, false, "ls-files", "--error-unmatch", "--", path).finish(nil)
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}
