package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	_, diff, others, err := r.diffAndUntracked(commit, "--name-only")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range bytes.Split(append(append(diff, 0), others...), []byte{0}) {
		if s := string(b); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

// diffAndUntracked runs git diff <format> -z against commit (tracked files,
// committed or not) beside git ls-files --others (untracked files, ignored
// ones excepted): the two are independent, so they run side by side. It
// returns the top of the working tree and both outputs.
func (r *Repo) diffAndUntracked(commit Hash, format string) (top string, diff, others []byte, err error) {
	if top, err = r.WorkTree(); err != nil {
		return "", nil, nil, err
	}
	diffProc := startGit(top, r.env, false, "diff", format, "-z", "--no-renames", commit.String(), "--")
	othersProc := startGit(top, r.env, false, "ls-files", "-z", "--others", "--exclude-standard")
	diff, err = diffProc.finish(nil)
	others, oerr := othersProc.finish(nil)
	if err == nil {
		err = oerr
	}
	if err != nil {
		return "", nil, nil, err
	}
	return top, diff, others, nil
}

// SaveWorktree commits the whole working tree (tracked and untracked files,
// not ignored ones) on top of parent, without touching the index or the
// files, and returns the commit. It uses a temporary index, as git stash
// does.
func (r *Repo) SaveWorktree(parent Hash, message string) (Hash, error) {
	top, err := r.WorkTree()
	if err != nil {
		return ZeroHash, err
	}
	tmp, err := os.CreateTemp(r.gitDir, "evolve-index-*")
	if err != nil {
		return ZeroHash, err
	}
	defer os.Remove(tmp.Name())
	// Start from a copy of the real index, as git stash does: git add then
	// knows from its stat information which files are unchanged and does
	// not hash a large tree again. Without an index, start from parent.
	steps := [][]string{{"add", "-A", "--", "."}}
	if data, err := os.ReadFile(filepath.Join(r.gitDir, "index")); err == nil {
		_, err = tmp.Write(data)
		tmp.Close()
		if err != nil {
			return ZeroHash, err
		}
	} else {
		tmp.Close()
		os.Remove(tmp.Name()) // git creates it
		steps = append([][]string{{"read-tree", parent.String()}}, steps...)
	}
	env := append(append([]string(nil), r.env...), "GIT_INDEX_FILE="+tmp.Name())
	for _, args := range steps {
		if _, err := startGit(top, env, false, args...).finish(nil); err != nil {
			return ZeroHash, fmt.Errorf("saving the working tree: %w", err)
		}
	}
	out, err := startGit(top, env, false, "write-tree").finish(nil)
	if err != nil {
		return ZeroHash, fmt.Errorf("saving the working tree: %w", err)
	}
	tree, err := ParseHash(strings.TrimSpace(string(out)))
	if err != nil {
		return ZeroHash, errors.New("git write-tree printed no tree")
	}
	author, committer, err := r.Identity()
	if err != nil {
		return ZeroHash, err
	}
	return r.WriteCommit(tree, []Hash{parent}, message, author, committer)
}

// CreateRef makes ref point at h; it must not exist yet.
func (r *Repo) CreateRef(ref string, h Hash, reason string) error {
	return r.UpdateRef(ref, h, ZeroHash, reason)
}

// DeleteRef removes ref if it holds old.
func (r *Repo) DeleteRef(ref string, old Hash) error {
	input := fmt.Sprintf("delete %s\x00%s\x00", ref, old)
	_, err := startGit(r.dir, r.env, true, "update-ref", "-z", "--stdin").finish([]byte(input))
	return err
}

// AddTrailers sets trailers (key, value pairs) in the commit message file
// the way git interpret-trailers does: in the message's last paragraph,
// replacing a trailer with the same key.
func (r *Repo) AddTrailers(file string, trailers [][2]string) error {
	args := []string{"interpret-trailers", "--in-place", "--if-exists", "replace"}
	for _, t := range trailers {
		args = append(args, "--trailer", t[0]+": "+t[1])
	}
	_, err := startGit(r.dir, r.env, false, append(args, file)...).finish(nil)
	return err
}

// LineDelta is how a file changed, in lines. Binary files count no lines.
type LineDelta struct {
	Path       string
	Insertions int
	Deletions  int
	Binary     bool
}

// DiffStat lists the files of the working tree that differ from commit
// (as ChangedSince) with their inserted and deleted lines: git diff
// --numstat for tracked files, and every line of an untracked text file as
// inserted.
func (r *Repo) DiffStat(commit Hash) ([]LineDelta, error) {
	top, out, others, err := r.diffAndUntracked(commit, "--numstat")
	if err != nil {
		return nil, err
	}
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
	for _, p := range bytes.Split(others, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		d := LineDelta{Path: string(p)}
		data, err := readRegular(filepath.Join(top, string(p)), 8<<20)
		switch {
		case err != nil || data == nil:
			d.Binary = true // a symlink, a device, or too big to count: no lines
		case bytes.IndexByte(data, 0) >= 0:
			d.Binary = true
		default:
			d.Insertions = bytes.Count(data, []byte{'\n'})
			if len(data) > 0 && data[len(data)-1] != '\n' {
				d.Insertions++
			}
		}
		deltas = append(deltas, d)
	}
	sort.Slice(deltas, func(i, j int) bool { return deltas[i].Path < deltas[j].Path })
	return deltas, nil
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
