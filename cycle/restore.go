package cycle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/revert"
)

// ErrMovedAfterAbort is returned by RestoreStart when HEAD is neither where
// the abort found it nor at the cycle's start: someone has worked on since,
// and the working tree is theirs.
var ErrMovedAfterAbort = errors.New("HEAD moved after the cycle was aborted")

// RestoreStart brings HEAD, the index and the working tree of an aborted
// cycle back to where the cycle started, as if it never ran: the branch
// HEAD names is set back to the cycle's start commit, the index to its
// tree, and the working tree to its tree except .agents/**, which is kept
// as the cycle left it (uncommitted, as an unchanged cycle leaves it). The
// loop driver does this after its agent crashed or timed out, so that the
// next cycle builds only on work a gate judged.
//
// Nothing is lost: saved is the abort's save of the working tree (a commit
// on the HEAD the abort found, so on the commits the cycle made), and the
// working tree as it is now is saved again on top of the last save, under
// SavedRef, when it differs from it (with the files in the way that no
// capture holds, ignored ones). What the working tree held of its own when
// the cycle started (c.Base) is put back as it was, and what the index held
// staged then is staged again. c.Branch is the ref
// HEAD named when the cycle started ("" when it was detached).
//
// It refuses (a *Refusal, nothing changed) while git has a merge or a
// rebase in progress, or when HEAD names another branch than the cycle
// started on; it returns ErrMovedAfterAbort when HEAD is neither where the
// abort found it nor at the start. It can be run again after an interruption.
func (l *Ledger) RestoreStart(c *OpenCycle, saved gitstore.Hash) (gitstore.Hash, error) {
	unlock, err := l.lockWorktree()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	defer unlock()
	ref := SavedRef(c.ID)
	if what := l.repo.InProgress(); what != "" {
		return gitstore.ZeroHash, &Refusal{fmt.Sprintf("git has %s in progress in this worktree, left by cycle %d's agent: the working tree is not brought back to the cycle's start", what, c.Cycle),
			fmt.Sprintf("end it (git merge --abort, git rebase --abort, …; the cycle's work is saved in %s), then run git evolve run --resume", ref)}
	}
	branch := c.Branch
	if branch != "" {
		cur, err := l.repo.HeadBranch()
		if err != nil {
			return gitstore.ZeroHash, err
		}
		if cur != branch {
			on := strings.TrimPrefix(cur, "refs/heads/")
			if cur == "" {
				on = "a detached HEAD"
			}
			return gitstore.ZeroHash, &Refusal{fmt.Sprintf("cycle %d started on %s; its agent left HEAD on %s: the working tree is not brought back", c.Cycle, strings.TrimPrefix(branch, "refs/heads/"), on),
				fmt.Sprintf("check out %s again (git checkout %s; the cycle's work is saved in %s), then run git evolve run --resume", strings.TrimPrefix(branch, "refs/heads/"), strings.TrimPrefix(branch, "refs/heads/"), ref)}
		}
	}
	sc, err := l.repo.Commit(saved)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if len(sc.Parents) == 0 || len(sc.Parents) > 2 { // the commit it is on, and the index
		return gitstore.ZeroHash, fmt.Errorf("%s is no save of cycle %d's working tree", saved.Short(), c.Cycle)
	}
	head := sc.Parents[0] // where the abort found HEAD
	start, err := gitstore.ParseHash(c.Start)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("cycle %d's start %q: %w", c.Cycle, c.Start, err)
	}
	cur, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if cur[0] != head && cur[0] != start {
		if base, err := gitstore.ParseHash(c.Base); err == nil {
			_ = l.repo.DeleteRef(BaseRef(c.ID), base) // the working tree is someone else's now
		}
		return gitstore.ZeroHash, fmt.Errorf("%w (cycle %d): it was %s, it is %s now; the working tree is left as it is, the cycle's work is saved in %s",
			ErrMovedAfterAbort, c.Cycle, head.Short(), cur[0].Short(), ref)
	}
	// What the working tree holds now, saved when it is not the last save:
	// work written since the abort, or a restore half done; with the files
	// in the way that are in no save (ignored ones), once the switch has
	// named them.
	var also []string
	for attempt := 0; ; attempt++ {
		if err := l.saveable(c, also); err != nil {
			return gitstore.ZeroHash, err
		}
		last := l.refOrZero(ref)
		if last.IsZero() {
			last = saved
		}
		lc, err := l.repo.Commit(last)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		now, _, err := l.repo.SaveWorktree(last, savedMessage(c, "aborted, as it was when its working tree was brought back"), also...)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		nc, err := l.repo.Commit(now)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		if nc.Tree != lc.Tree {
			if err := l.keepSave(ref, now, l.refOrZero(ref), fmt.Sprintf("git evolve: cycle %d aborted, the working tree saved again", c.Cycle)); err != nil {
				return gitstore.ZeroHash, err
			}
		}
		// The start's tree, with .agents/** as the cycle left it and what
		// the working tree held of its own when the cycle started.
		tree, err := revert.RangeTree(l.repo, start, now)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		_, not, err := l.ownWork(c, nc.Tree, cur[0])
		if err != nil {
			return gitstore.ZeroHash, err
		}
		if tree, _, err = l.startWorktree(c, tree, now, not.predating, nil); err != nil {
			return gitstore.ZeroHash, err
		}
		err = l.repo.SwitchWorktree(nil, nc.Tree, tree, gitstore.SwitchForce)
		var ue *gitstore.UnsavedError
		switch {
		case errors.As(err, &ue) && attempt == 0:
			also = ue.Paths
			continue
		case errors.As(err, &ue):
			return gitstore.ZeroHash, unsavedRefusal(c, ue, "written while the restore ran")
		case err != nil:
			return gitstore.ZeroHash, err
		}
		break
	}
	if cur[0] != start {
		if err := l.repo.MoveHead(start, cur[0], fmt.Sprintf("git evolve: cycle %d aborted, back to its start", c.Cycle)); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	if err := l.repo.ResetIndex(start); err != nil {
		return gitstore.ZeroHash, err
	}
	// What the user had staged when the cycle started is staged again.
	staged, err := l.baseIndex(c)
	if err == nil {
		err = l.repo.SetIndex(staged)
	}
	if err != nil {
		return gitstore.ZeroHash, err
	}
	// The working tree as the cycle found it is in place again.
	if base, err := gitstore.ParseHash(c.Base); err == nil {
		_ = l.repo.DeleteRef(BaseRef(c.ID), base)
	}
	return start, nil
}
