// Package revert computes what undoing a cycle's work leaves behind. A
// cycle that regressed is reverted as a whole range: the new tree is the
// tree the cycle started from, except the agents' own files (.agents/**),
// which keep what the cycle wrote so that its learnings survive the revert.
//
// It returns trees; making the revert commit, and saving uncommitted work
// first, belong to the cycle that calls it.
package revert

import (
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

// RangeTree returns the tree of a commit that reverts start..head in one
// step: start's tree with the Kept entries taken from head's tree (or
// removed when head has none). head may be a commit made from the working
// tree, so that uncommitted learnings are kept too.
func RangeTree(repo *gitstore.Repo, start, head gitstore.Hash) (gitstore.Hash, error) {
	s, err := repo.Commit(start)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("reading the cycle's start: %w", err)
	}
	h, err := repo.Commit(head)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("reading the cycle's end: %w", err)
	}
	return repo.SpliceTree(s.Tree, h.Tree, Kept...)
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
