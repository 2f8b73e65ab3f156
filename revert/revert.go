// Package revert undoes a cycle's work, whole: what is saved first, the
// tree, and the commit. A cycle that regressed is reverted as a whole
// range: the new tree is the tree the cycle started from, except the
// agents' own files (.agents/**), which keep what the cycle wrote so that
// its learnings survive the revert. A cycle reverted later, with work done
// on top of it since, is undone three ways, so that the later work stays.
//
// Each step is one call that names what it made (a save, a tree, a
// commit), so that the cycle that reverts keeps each name as the step
// completes and an interrupted revert resumes where it stopped; bringing
// the working tree and HEAD to the revert is the cycle's, which knows what
// else the working tree holds.
package revert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
)

// Kept are the root entries a range revert keeps as the cycle left them.
var Kept = []string{".agents"}

// IsKept reports whether path (slash-separated, from the top) is under one
// of Kept.
func IsKept(path string) bool {
	for _, k := range Kept {
		if path == k || strings.HasPrefix(path, k+"/") {
			return true
		}
	}
	return false
}

// Save keeps the work a revert is about to undo, before anything changes:
// a commit on head shaped as git stash shapes one (gitstore.CommitSave),
// of the work as it was judged (tree, and index, the index as it was, when
// not zero), or, when tree is zero (the judge's capture is not at hand: a
// resumed finish), of the working tree as it is now.
func Save(repo *gitstore.Repo, head, tree, index gitstore.Hash, message string) (gitstore.Hash, error) {
	if tree.IsZero() {
		saved, _, err := repo.SaveWorktree(head, message)
		return saved, err
	}
	return repo.CommitSave(tree, index, head, message)
}

// RangeTree returns the tree of a commit that reverts start..head in one
// step: start's tree with the Kept entries taken from head's tree (or
// removed when head has none). head may be a commit made from the working
// tree, so that uncommitted learnings are kept too.
func RangeTree(repo *gitstore.Repo, start, head gitstore.Hash) (gitstore.Hash, error) {
	h, err := repo.Commit(head)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("reading the cycle's end: %w", err)
	}
	return RangeTreeOf(repo, start, h.Tree)
}

// RangeTreeOf is RangeTree with the Kept entries taken from work, a tree
// (the cycle's own work, when the working tree also holds what is not).
func RangeTreeOf(repo *gitstore.Repo, start, work gitstore.Hash) (gitstore.Hash, error) {
	s, err := repo.Commit(start)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("reading the cycle's start: %w", err)
	}
	return repo.SpliceTree(s.Tree, work, Kept...)
}

// Range makes the commit that reverts start..head in one step, on head:
// the tree RangeTreeOf gives with the Kept entries of work (the cycle's
// own work as judged), committed with git's identity.
func Range(repo *gitstore.Repo, start, head, work gitstore.Hash, message string) (gitstore.Hash, error) {
	tree, err := RangeTreeOf(repo, start, work)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return Commit(repo, tree, head, message)
}

// Commit makes a revert's commit: tree on parent, with git's identity (the
// environment and the config, as git commit takes them).
func Commit(repo *gitstore.Repo, tree, parent gitstore.Hash, message string) (gitstore.Hash, error) {
	author, committer, err := repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return repo.CommitAsGit(tree, []gitstore.Hash{parent}, message, author, committer)
}

// ConflictError is a later revert whose undoing of the range conflicts
// with the work done on top of it since, in Paths.
type ConflictError struct{ Paths []string }

func (e *ConflictError) Error() string {
	return "the revert conflicts with later work in " + strings.Join(e.Paths, ", ")
}

// ErrUnsupported is a later revert that needs a three-way merge this git
// cannot make (gitstore.ErrMergeTreeUnsupported).
var ErrUnsupported = gitstore.ErrMergeTreeUnsupported

// Later is the tree of a commit on onto that reverts start..end, a range
// finished before onto: the tree RangeTree gives (start's, the Kept entries
// as end has them), merged three ways into onto from end, so that the work
// done since end stays. When onto is end it is that tree. It returns a
// *ConflictError when the two touch the same lines, and an error that is
// ErrUnsupported when git cannot merge trees.
func Later(repo *gitstore.Repo, start, end, onto gitstore.Hash) (gitstore.Hash, error) {
	undone, err := RangeTree(repo, start, end)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if end == onto {
		return undone, nil
	}
	// A commit whose change, from end, is the revert: merged into onto
	// from their merge base (end), it undoes the range and keeps what came
	// since.
	theirs, err := Commit(repo, undone, end, "the revert of a cycle\n")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	tree, conflicts, err := repo.MergeTree(onto, theirs)
	if err != nil {
		if errors.Is(err, gitstore.ErrMergeTreeUnsupported) {
			return gitstore.ZeroHash, err
		}
		return gitstore.ZeroHash, fmt.Errorf("merging the revert into later work: %w", err)
	}
	if len(conflicts) > 0 {
		return gitstore.ZeroHash, &ConflictError{conflicts}
	}
	return tree, nil
}
