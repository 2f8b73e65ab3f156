package cycle

import (
	"fmt"
	"strings"

	"git-evolve/gitstore"
	"git-evolve/revert"
)

// RestoreStart brings HEAD, the index and the working tree of an aborted
// cycle back to the tree the cycle started from, except .agents/**, which
// is kept as the cycle left it (as a regressed cycle's revert keeps it).
// The loop driver does this after an agent crashed or timed out, so that
// the next cycle does not build on work no gate judged. saved is the
// abort's save of the working tree (AbortCycle): its parent is the HEAD
// the abort found, and it keeps everything the cycle did.
//
// When HEAD moved past the cycle's start, or the working tree holds
// changes, one commit on top of HEAD reverts the range (trailers
// Evolve-Cycle, Evolve-Id and Evolve-Reverts, no Evolve-Result: it is no
// cycle's delivery); when only uncommitted work differs, the working tree
// and index are reset to HEAD and nothing is committed. It returns the
// commit HEAD is on afterwards.
//
// It can be run again after an interruption: a HEAD that is already on
// the revert it makes is left there; a HEAD that moved elsewhere is
// refused.
func (l *Ledger) RestoreStart(c *OpenCycle, saved gitstore.Hash) (gitstore.Hash, error) {
	unlock, err := l.lockWorktree()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	defer unlock()
	sc, err := l.repo.Commit(saved)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if len(sc.Parents) != 1 {
		return gitstore.ZeroHash, fmt.Errorf("the saved work of cycle %d (%s) is not a save of the working tree", c.Cycle, saved.Short())
	}
	head := sc.Parents[0]
	start, err := gitstore.ParseHash(c.Start)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("cycle %d's start %q: %w", c.Cycle, c.Start, err)
	}
	tree, err := revert.RangeTree(l.repo, start, saved)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	hc, err := l.repo.Commit(head)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	cur, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if cur[0] != head {
		// Done before, up to moving HEAD: HEAD is a revert of this cycle on
		// the head it found.
		if ci, err := l.repo.Commit(cur[0]); err == nil && len(ci.Parents) == 1 && ci.Parents[0] == head && ci.Tree == tree &&
			strings.Contains(ci.Message, "\nEvolve-Id: "+c.ID+"\n") {
			return cur[0], nil
		}
		return gitstore.ZeroHash, &Refusal{fmt.Sprintf("HEAD moved after cycle %d was aborted: it was %s, it is %s now; the working tree is left as it is", c.Cycle, head.Short(), cur[0].Short()),
			fmt.Sprintf("the cycle's work is saved in %s (git show %s)", SavedRef(c.ID), saved.Short())}
	}
	target := head
	if tree != hc.Tree {
		msg := fmt.Sprintf("evolve: cycle %d -- aborted, its work reverted\n\nThe work of cycle %d (target %s) was never judged by the gate; it is saved\nin %s (%s).\n\nEvolve-Cycle: %d\nEvolve-Id: %s\nEvolve-Reverts: %s..%s\n",
			c.Cycle, c.Cycle, c.Target, SavedRef(c.ID), saved.Short(), c.Cycle, c.ID, start, head)
		if target, err = l.commitTree(tree, head, msg); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	if err := l.repo.SwitchWorktree(nil, saved, target, gitstore.SwitchForce); err != nil {
		return gitstore.ZeroHash, err
	}
	// The index as the target has it: the switch set the entries of the
	// files it wrote, not those of files (.agents/**) the cycle left
	// untracked that the revert commits.
	if err := l.repo.ResetIndex(target); err != nil {
		return gitstore.ZeroHash, err
	}
	if target != head {
		if err := l.repo.MoveHead(target, head, fmt.Sprintf("git evolve: cycle %d aborted, its work reverted", c.Cycle)); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	return target, nil
}
