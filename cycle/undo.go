package cycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/revert"
)

// Reverting is the finished cycle that a revert under way undoes.
type Reverting struct {
	Cycle int    `json:"cycle"`
	ID    string `json:"id"`
	Range string `json:"range"` // <start>..<delivered>
	// Measured says the goals were measured after the revert (the counts
	// are in the finish).
	Measured bool `json:"measured,omitempty"`
}

// RevertOptions change what RevertCycle does.
type RevertOptions struct {
	// Message is the revert commit's message (a default is written when it
	// is empty); the trailers are added to it.
	Message string
	// Progress, when set, is told what the revert is doing.
	Progress func(string)
}

// RevertCycle undoes a finished cycle later: one commit on top of HEAD that
// reverts the cycle's range (its start to the commit it delivered) three
// ways, so that work done since is kept, and .agents/** as it is now. The
// revert is a cycle of its own: it takes the next number, its commit
// carries the trailers (Evolve-Result: regressed, Evolve-Reverts), the
// goals are measured after it, and its record, a note on the revert commit,
// names the cycle it reverts (reverts_cycle, reverts_id).
//
// query names the cycle by number or by commit, as for Show. The index and
// the tracked files must not differ from HEAD. Like a finish, a revert that
// is interrupted is completed by the next RevertCycle or Finish. It returns
// a *Refusal when the cycle cannot be reverted (nothing is changed then).
func (l *Ledger) RevertCycle(ctx context.Context, query string, opts RevertOptions) (*FinishResult, error) {
	unlock, err := l.lockWorktree()
	if err != nil {
		return nil, err
	}
	defer unlock()
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if c, err := l.Current(); err == nil {
		if c.Reverts == nil {
			return nil, &Refusal{fmt.Sprintf("cycle %d is open in this worktree", c.Cycle), "finish or abort it first (git evolve cycle finish, git evolve cycle abort)"}
		}
		return l.completeRevert(ctx, c, progress, true)
	} else if !errors.Is(err, ErrNoOpenCycle) {
		return nil, err
	}
	target, err := l.revertable(query)
	if err != nil {
		return nil, err
	}
	if what := l.repo.InProgress(); what != "" {
		return nil, &Refusal{"git has " + what + " in progress in this worktree", "finish or abort it first"}
	}
	if dirty, err := l.repo.TrackedChanges(); err != nil {
		return nil, err
	} else if dirty {
		return nil, &Refusal{"the index or the tracked files differ from HEAD", "commit or stash them first: the revert is a commit of its own"}
	}
	head, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return nil, err
	}
	start, end := mustParse(target.CycleStartSHA), mustParse(target.Commit())
	if ok, err := l.repo.IsAncestor(end, head[0]); err != nil {
		return nil, err
	} else if !ok {
		return nil, &Refusal{fmt.Sprintf("cycle %d's commit %s is not in HEAD's history", target.Cycle, end.Short()),
			"check out the branch that has it"}
	}
	progress("merging the revert")
	tree, err := l.revertTree(start, end, head[0], target.Cycle)
	if err != nil {
		return nil, err
	}
	ruler, data, err := l.treeGoals(tree)
	if err != nil {
		return nil, err
	}
	if ok, err := goals.TrustAt(l.stateDir).Trusted(goals.DigestOf(ruler.Name(), data)); err != nil {
		return nil, err
	} else if !ok {
		return nil, &Refusal{fmt.Sprintf("the goals file after the revert (sha256 %s) is not trusted on this machine: the revert measures it", goals.DigestOf(ruler.Name(), data)[:12]),
			"read it, then trust it with git evolve trust"}
	}
	deltas, err := l.fileDeltas(head[0], tree, ruler.NonSubstantive)
	if err != nil {
		return nil, err
	}
	c, err := l.StartCycle(StartOptions{Target: target.Target, Era: ruler.Era, GoalsFile: data, NoIgnored: true})
	if err != nil {
		return nil, err
	}
	c.Reverts = &Reverting{Cycle: target.Cycle, ID: target.ID, Range: start.String() + ".." + end.String()}
	c.Finish = &Finishing{Result: ledger.Regressed, Head: head[0].String(), Tree: tree.String(), JudgedAt: l.now().UTC().Format(time.RFC3339),
		Message: opts.Message, Gate: fmt.Sprintf("REVERT: cycle %d", target.Cycle), Delta: substantiveDelta(deltas)}
	if err := l.saveOpen(c); err != nil {
		return nil, err
	}
	l.die("judged")
	return l.completeRevert(ctx, c, progress, false)
}

// revertable finds the record of the cycle query names and checks that it
// can be reverted: a cycle that delivered a commit and has not been
// reverted yet.
func (l *Ledger) revertable(query string) (*ledger.Record, error) {
	found, err := l.Show(query)
	if err != nil {
		return nil, err
	}
	var rec *ledger.Record
	for i := range found.Entries {
		if r := &found.Entries[i].Record; r.Result == ledger.Improved || r.Result == ledger.Harvested {
			if rec != nil && rec.ID != r.ID {
				return nil, &Refusal{fmt.Sprintf("%q names more than one cycle that delivered work", query), "name the cycle by its commit"}
			}
			rec = r
		}
	}
	if rec == nil {
		what := "no cycle that delivered work"
		if len(found.Entries) > 0 {
			r := found.Entries[0].Record
			what = fmt.Sprintf("cycle %d, which is %s", r.Cycle, r.Result)
			if r.Aborted() {
				what = fmt.Sprintf("cycle %d, which was aborted", r.Cycle)
			} else if r.Result == ledger.Regressed {
				what += " and was reverted when it finished"
			}
		}
		return nil, &Refusal{fmt.Sprintf("%q names %s: there is nothing to revert", query, what), "name an improved or harvested cycle (git evolve log lists them)"}
	}
	if rec.CycleStartSHA == "" || rec.Commit() == "" {
		return nil, &Refusal{fmt.Sprintf("cycle %d's record has no cycle_start_sha: its range is unknown", rec.Cycle), "revert its commits with git revert"}
	}
	all, err := l.List(store.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, e := range all.Entries {
		var id string
		if json.Unmarshal(e.Record.Extra["reverts_id"], &id) == nil && id == rec.ID {
			return nil, &Refusal{fmt.Sprintf("cycle %d was reverted already, by cycle %d (%s)", rec.Cycle, e.Record.Cycle, short(e.Record.Commit())), ""}
		}
	}
	return rec, nil
}

// revertTree is the tree of a commit on top of head that reverts
// start..end (revert.Later), or a refusal that says how to do it by hand.
func (l *Ledger) revertTree(start, end, head gitstore.Hash, cycleNo int) (gitstore.Hash, error) {
	tree, err := revert.Later(l.repo, start, end, head)
	var conflict *revert.ConflictError
	switch {
	case errors.Is(err, revert.ErrUnsupported):
		return gitstore.ZeroHash, &Refusal{fmt.Sprintf("work since cycle %d must be merged with its revert, and %v", cycleNo, err),
			fmt.Sprintf("upgrade git, or revert it by hand: git revert --no-commit %s..%s", start.Short(), end.Short())}
	case errors.As(err, &conflict):
		return gitstore.ZeroHash, &Refusal{fmt.Sprintf("the revert of cycle %d conflicts with later work in %s", cycleNo, strings.Join(conflict.Paths, ", ")),
			fmt.Sprintf("revert it by hand: git revert --no-commit %s..%s, then resolve and commit", start.Short(), end.Short())}
	}
	return tree, err
}

// treeGoals reads the goals file of a tree.
func (l *Ledger) treeGoals(tree gitstore.Hash) (*goals.File, []byte, error) {
	blob, name, ok, err := l.treeGoalsBlob(tree)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, &Refusal{"No goals to measure: there is no " + goals.FileName + " or " + goals.MarkdownName + " after the revert", "a revert measures the goals; add GOALS.yaml first"}
	}
	data, err := l.repo.ReadBlob(blob)
	if err != nil {
		return nil, nil, err
	}
	f, err := goals.Parse(name, data)
	if err != nil {
		return nil, nil, err
	}
	return f, data, nil
}

// completeRevert makes the revert commit, brings the index and the working
// tree to it, moves HEAD, measures the goals and records the revert; each
// step is kept in the open cycle's file as it completes.
func (l *Ledger) completeRevert(ctx context.Context, c *OpenCycle, progress func(string), resumed bool) (*FinishResult, error) {
	f := c.Finish
	res := &FinishResult{Cycle: c, Result: f.Result, Resumed: resumed}
	head, tree := mustParse(f.Head), mustParse(f.Tree)
	if f.Commit == "" {
		msg, err := l.revertCycleMessage(c)
		if err != nil {
			return nil, err
		}
		commit, err := revert.Commit(l.repo, tree, head, msg)
		if err != nil {
			return nil, err
		}
		f.Commit = commit.String()
		if err := l.saveOpen(c); err != nil {
			return nil, err
		}
		l.die("committed")
	}
	commit := mustParse(f.Commit)
	if !f.CheckedOut {
		cur, err := l.repo.ResolveCommits("HEAD")
		if err != nil {
			return nil, err
		}
		if cur[0] != commit { // HEAD has not moved to it: the files have not either, or not all
			mode := gitstore.SwitchChecked
			if resumed { // an interrupted switch left some files switched
				mode = gitstore.SwitchResume
			}
			if err := l.repo.SwitchWorktree(nil, head, commit, mode); err != nil {
				if !resumed && errors.Is(err, gitstore.ErrWorktreeChanged) { // nothing has moved: the revert is dropped
					return nil, l.dropRevert(c, err)
				}
				return nil, err // run again: the switch resumes
			}
		}
		f.CheckedOut = true
		if err := l.saveOpen(c); err != nil {
			return nil, err
		}
		l.die("checked-out")
	}
	if err := l.moveHead(c, head, commit); err != nil {
		return nil, err
	}
	if !c.Reverts.Measured {
		ruler, _, err := l.treeGoals(tree)
		if err != nil {
			return nil, err
		}
		progress("measuring the goals")
		snap, err := l.MeasureAt(ctx, commit, ruler, goals.Options{Now: l.now})
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		f.Passing, f.Total, f.Score = snap.Summary.Passing, snap.Summary.Total, snap.Summary.Score
		c.Reverts.Measured = true
		if err := l.saveOpen(c); err != nil {
			return nil, err
		}
		res.After = snap
	}
	res.Commit = commit
	if err := l.recordAndClose(c, commit, res); err != nil {
		return nil, err
	}
	return res, nil
}

// dropRevert undoes the reservation of a revert whose files could not be
// checked out (nothing else has moved), and says why.
func (l *Ledger) dropRevert(c *OpenCycle, why error) error {
	unlock, err := filelock.Lock(l.LockPath())
	if err == nil {
		err = l.release(c.ID)
		unlock()
	}
	if err == nil {
		err = l.closeCycle(c)
	}
	if err != nil {
		return err
	}
	return &Refusal{fmt.Sprintf("the revert of cycle %d cannot be checked out: %v", c.Reverts.Cycle, why), "move the files in its way, then revert again"}
}

// revertCycleMessage is the message of a later revert's commit.
func (l *Ledger) revertCycleMessage(c *OpenCycle) (string, error) {
	r := c.Reverts
	if m := strings.TrimSpace(c.Finish.Message); m != "" {
		return l.repo.WithTrailers(m+"\n", c.trailers())
	}
	from, to, _ := strings.Cut(r.Range, "..")
	var b strings.Builder
	fmt.Fprintf(&b, "evolve: revert cycle %d -- %s\n\n", r.Cycle, c.Target)
	fmt.Fprintf(&b, "This commit undoes cycle %d (id %s), %s..%s, in one step on top of\n", r.Cycle, r.ID, short(from), short(to))
	b.WriteString("the work done since; .agents/ is kept as it is.\n\n")
	b.WriteString(trailerBlock(c.trailers()))
	return b.String(), nil
}
