package cycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/git-evolve/git-evolve/filelock"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/revert"
)

// Finishing is a finish under way, kept in the open cycle's file: the
// verdict, decided once, and how far acting on it has come. A finish that
// was interrupted resumes from here and never judges again, so a cycle is
// recorded once, with the verdict its work was given.
type Finishing struct {
	Result string `json:"result"` // improved, regressed or unchanged
	Head   string `json:"head"`   // HEAD when the work was judged
	// Tree is the cycle's work as judged: the working tree without what it
	// held, untouched, of its own when the cycle started (see BaseRef);
	// Worktree is the whole working tree, when that differs.
	Tree     string `json:"tree"`
	Worktree string `json:"worktree,omitempty"`
	// Index is the index as a tree when the working tree was captured:
	// a regressed cycle's save keeps it (its second parent).
	Index string `json:"index,omitempty"`
	// Predating are files the working tree holds that were there, ignored,
	// when the cycle started, and that it did not write: not its work, not
	// committed, left in place by a revert. Preexisting are the files the
	// working tree held changes of its own for when the cycle started that
	// the cycle changed or removed (their state then is kept by BaseRef).
	Predating   []string `json:"predating,omitempty"`
	Preexisting []string `json:"preexisting_changed,omitempty"`
	// Leftover are the files under .agents/** the working tree held, of an
	// earlier cycle's, when the cycle started, and still holds as they were:
	// not its work, not committed (nor by a revert), left where they are.
	Leftover []string `json:"leftover,omitempty"`
	JudgedAt string   `json:"judged_at"` // the record's timestamp
	Message  string   `json:"message,omitempty"`
	Gate     string   `json:"gate,omitempty"`
	Passing  int      `json:"goals_passing"`
	Total    int      `json:"goals_total"`
	Score    float64  `json:"score"`
	Delta    Delta    `json:"delta"`
	// Failing are the goals that failed after the cycle (the gate's
	// measure): the history oscillation is read from.
	Failing []string `json:"failing,omitempty"`
	// GoalsEdited says the cycle changed the goals file: it was judged by
	// the file as it was at the start all the same.
	GoalsEdited bool `json:"goals_edited,omitempty"`
	// Changed are the files the cycle changed ("+ path", "- path", "M
	// path"; at most 200), RulerChanges those of them that judge it, Held
	// the tree judged first (the work with the ruler as the cycle started,
	// when it changed some), Accepted the ruler changes a person accepted.
	Changed []string `json:"changed,omitempty"`
	// Census is the count of the tests that passed at the start and in
	// the first judgment, when the runner could tell both.
	Census *ledger.CensusCount `json:"census,omitempty"`
	// Holdout is what the holdout checks found (counts only).
	Holdout      *gate.Holdout     `json:"holdout,omitempty"`
	RulerChanges []RulerChange     `json:"ruler_changes,omitempty"`
	Held         string            `json:"held,omitempty"`
	Accepted     []ledger.Accepted `json:"accepted,omitempty"`
	Regressed    []gate.GoalChange `json:"regressed,omitempty"`
	// Failures are why the gate failed, each with the failure's own words
	// (the end of its output).
	Failures []gate.Failure `json:"failures,omitempty"`
	// TimedOut and CannotRun are the goals whose checks ran past their
	// limit, or could not run, after the cycle.
	TimedOut  []string `json:"timed_out,omitempty"`
	CannotRun []string `json:"cannot_run,omitempty"`
	// TargetBefore and TargetAfter are the target goal's results as the
	// cycle started and after it ("" when the target is no goal).
	TargetBefore string `json:"target_before,omitempty"`
	TargetAfter  string `json:"target_after,omitempty"`
	// Values are the continuous goals' values before and after, beside
	// their thresholds.
	Values []gate.Value `json:"values,omitempty"`
	// GateCommands are the test commands the gate ran, GateFrom where they
	// came from: "GOALS.yaml" (its gate key), the file they were detected
	// by, or "" (no gate key, and none detected).
	GateCommands []string `json:"gate_commands,omitempty"`
	GateFrom     string   `json:"gate_from,omitempty"`
	// Tampering are the attempts to weaken the cycle's judgment that were
	// refused: changes to its ruler in the open cycle's file, a cycle
	// finish or a trust run while the driver owned the worktree.
	Tampering []string `json:"tampering,omitempty"`
	// Markers say what happened to the operator's markers (STOP, KILL)
	// during the agent's turn: one that appeared, one the agent removed.
	Markers []string `json:"markers,omitempty"`
	// QualityScore is the record's quality_score (quality mode).
	QualityScore *float64 `json:"quality_score,omitempty"`
	// IgnoredChanged are the ignored files the cycle's start kept
	// (IgnoredRef) that the cycle removed or changed ("- path", "M path"),
	// as judged; IgnoredPut those a regressed cycle's revert put back,
	// IgnoredNotBack those it did not, each with why.
	IgnoredChanged []string `json:"ignored_changed,omitempty"`
	IgnoredPut     []string `json:"ignored_put,omitempty"`
	IgnoredNotBack []string `json:"ignored_not_back,omitempty"`
	// Delivery is how an improved cycle delivers its work when its agent
	// committed (HEAD moved on from the start): DeliverAmend, its last
	// commit rewritten to carry the trailers (and what the cycle left
	// uncommitted of its own work), or DeliverHead, its last commit as it
	// is, when another ref holds it already (it was pushed) and nothing of
	// the cycle's is left uncommitted. "" is a commit of the finish's own
	// on HEAD.
	Delivery string `json:"delivery,omitempty"`
	// Saved is the working tree of a regressed cycle, kept by RegressedRef.
	Saved string `json:"saved,omitempty"`
	// Commit is the commit the finish made: the delivered commit of an
	// improved cycle, the revert of a regressed one. It is written here
	// before HEAD moves to it.
	Commit string `json:"commit,omitempty"`
	// CheckedOut says the index (and, for a revert, the working tree) has
	// been brought to Commit.
	CheckedOut bool `json:"checked_out,omitempty"`
}

// The ways an improved cycle whose agent committed is delivered
// (Finishing.Delivery).
const (
	DeliverAmend = "amend"
	DeliverHead  = "head"
)

// Delta is the substantive part of a cycle's work: files changed outside
// the non-substantive paths, and their lines.
type Delta struct {
	Files      int      `json:"files"`
	Insertions int      `json:"insertions"`
	Deletions  int      `json:"deletions"`
	Paths      []string `json:"paths,omitempty"`
}

// State says in words how far the cycle's finish (or revert) has come, for
// cycle status; "" when it has not begun.
func (c *OpenCycle) State(head gitstore.Hash) string {
	if c.Finish == nil {
		return ""
	}
	return c.Finish.state(head, c.Reverts)
}

func (f *Finishing) state(head gitstore.Hash, r *Reverting) string {
	if r != nil {
		what := fmt.Sprintf("reverting cycle %d", r.Cycle)
		switch {
		case f.Commit == "":
			return what + ": the revert commit is not made yet"
		case !f.CheckedOut:
			return what + ": commit " + short(f.Commit) + " is made, the working tree is not updated yet"
		case head.String() != f.Commit:
			return what + ": the working tree holds commit " + short(f.Commit) + ", HEAD is not moved to it yet"
		case !r.Measured:
			return what + ": HEAD is on " + short(f.Commit) + ", the goals are not measured yet"
		}
		return what + ": HEAD is on " + short(f.Commit) + ", the record is not written yet"
	}
	switch {
	case f.Result == ledger.Unchanged:
		return "judged unchanged (no substantive change); the record is not written yet"
	case f.Result == ledger.Regressed && f.Saved == "":
		return "judged regressed; nothing is saved or reverted yet"
	case f.Commit == "":
		if f.Result == ledger.Regressed {
			return "judged regressed; the work is saved as " + short(f.Saved) + ", the revert is not made yet"
		}
		return "judged improved; the commit is not made yet"
	case f.Result == ledger.Regressed && !f.CheckedOut:
		return "judged regressed; the revert " + short(f.Commit) + " is made, the working tree is not reset to it yet"
	case head.String() != f.Commit && f.Result == ledger.Regressed:
		return "judged regressed; the working tree holds the revert " + short(f.Commit) + ", HEAD is not moved to it yet"
	case head.String() != f.Commit:
		return fmt.Sprintf("judged %s; commit %s is made, HEAD is not moved to it yet", f.Result, short(f.Commit))
	}
	return fmt.Sprintf("judged %s; HEAD is on %s, the record is not written yet", f.Result, short(f.Commit))
}

func short(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// FinishOptions change what Finish does.
type FinishOptions struct {
	// Message is the delivered commit's message (a default is written
	// when it is empty); the cycle's trailers are added to it.
	Message string
	// Progress, when set, is told what the finish is doing.
	Progress func(string)
	// OnCheck, when set, is told each goal's id as the gate starts its
	// check (see goals.Options).
	OnCheck func(id string)
	// OnDone is told each goal's id as the gate's check of it ends.
	OnDone func(id string)
	// Kept, when set, is the open cycle as whoever drives it opened it (the
	// loop's driver): the ruler it is judged by (its goals file, its
	// "before", its start and base) is taken from Kept, and any change to
	// them in the open cycle's file is refused and marked in the record.
	// Unless Resuming, a finish under way in the file is such a change too
	// (the driver has not begun one).
	Kept     *OpenCycle
	Resuming bool
	// NoVerify skips the pre-commit and commit-msg hooks of an improved
	// cycle's commit, as git commit --no-verify does.
	NoVerify bool
	// Tampering are marks the caller adds to the record: attempts it saw
	// to weaken the cycle's judgment (a cycle finish or a trust refused
	// while it drove the worktree).
	Tampering []string
	// Markers are what the caller saw of the operator's markers during the
	// agent's turn, kept in the record.
	Markers []string
	// QualityScore, when set, gives the record's quality_score once the
	// result is known (quality mode: the seeds' score of the findings left).
	QualityScore func(result string) *float64
	// AcceptRuler are ruler files the cycle changed whose change a person
	// accepts (AcceptWhy says why): the first judgment runs with the
	// cycle's version of them, and the record keeps who accepted what.
	AcceptRuler []string
	AcceptWhy   string
	// Require, when set, is a rule of the caller's the cycle's work must
	// meet, given the paths it changed: each failure it returns fails the
	// gate (the cycle regresses), as a failed test command does.
	Require func(c *OpenCycle, changed []string) []gate.Failure
}

// FinishResult is what Finish did.
type FinishResult struct {
	// Hook is the commit hook that refused an improved cycle's commit
	// (the cycle then regressed).
	Hook   *gitstore.HookRefusal
	Cycle  *OpenCycle
	Result string
	// Commit is the commit the record is on: the delivered commit
	// (improved), the revert (regressed); zero for unchanged.
	Commit gitstore.Hash
	// Saved is a regressed cycle's working tree, kept by RegressedRef.
	Saved gitstore.Hash
	// Verdict is the gate's verdict; nil for an unchanged cycle and for a
	// finish that resumed after an interruption (it was judged before).
	// With the ruler held, it is the first judgment's, with the ruler as
	// the cycle started; OwnVerdict is then the second, with the cycle's
	// own ruler (nil when the cycle changed none, or the first failed).
	Verdict, OwnVerdict *gate.Verdict
	// After is the goals measured after a later revert (RevertCycle).
	After   *goals.Snapshot
	Record  ledger.Record
	Resumed bool
	// DeltaTime is how long the substantive delta took (the working tree
	// captured, compared with the start, its lines counted); GateTime how
	// long the gate's commands and checks took.
	DeltaTime, GateTime time.Duration
	// capture is the working tree as judged, in the process that judged it
	// (nil after a resume: the index is then reset from the whole tree).
	capture *gitstore.Capture
}

// ErrInterrupted is returned by Finish when ctx was cancelled while the
// gate ran: nothing was stored and the cycle is still open.
var ErrInterrupted = errors.New("interrupted while the gate ran: nothing was stored, the cycle is still open")

// Finish closes this worktree's open cycle with the verdict of its work.
// The work is the working tree, committed or not (untracked files
// included, ignored ones not). Without a substantive change the cycle is
// unchanged: it goes to the journal and nothing is committed. Otherwise the
// gate runs with the goals file the cycle started with; without a
// regression the work is committed with the cycle's trailers and the record
// becomes a note on that commit (improved); with one the working tree is
// saved under RegressedRef, one commit on top of HEAD reverts the cycle's
// whole range (keeping .agents/**), the index and the working tree are
// brought to it, and the record becomes a note on it (regressed).
//
// The verdict is kept in the open cycle's file before anything moves, and
// every later step is redone safely, so a finish that was killed is
// completed by the next Finish. It returns a *Refusal when the cycle or the
// repository is in no state to finish, ErrNoOpenCycle, or ErrInterrupted.
func (l *Ledger) Finish(ctx context.Context, opts FinishOptions) (*FinishResult, error) {
	t0 := time.Now()
	unlock, err := l.lockWorktree()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := l.Current()
	if err != nil {
		return nil, err
	}
	if c.Aborting != nil {
		return nil, &Refusal{fmt.Sprintf("cycle %d is being aborted (an abort began and did not complete): it can no longer be finished", c.Cycle),
			"complete the abort with git evolve cycle abort"}
	}
	if what := l.repo.InProgress(); what != "" {
		return nil, &Refusal{"git has " + what + " in progress in this worktree", "finish or abort it first, then run git evolve cycle finish again"}
	}
	head, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return nil, err
	}
	tampering := opts.Tampering
	if opts.Kept != nil {
		var changed []string
		if c, changed, err = l.keepRuler(c, opts.Kept, opts.Resuming); err != nil {
			return nil, err
		}
		tampering = append(tampering, changed...)
	}
	res := &FinishResult{Cycle: c, Resumed: c.Finish != nil}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if c.Reverts != nil { // a later revert under way (RevertCycle)
		if c.Finish == nil {
			return nil, fmt.Errorf("%s holds a revert of cycle %d with no finish under way: it was not written by git evolve revert; fix or remove it", l.openPath(), c.Reverts.Cycle)
		}
		return l.completeRevert(ctx, c, progress, true)
	}
	if c.Finish == nil {
		if err := l.judge(ctx, c, head[0], opts, tampering, progress, res); err != nil {
			return nil, err
		}
	}
	f := c.Finish
	res.Result = f.Result
	switch f.Result {
	case ledger.Unchanged:
		err = l.finishUnchanged(c, res)
	case ledger.Improved:
		err = l.finishImproved(c, res)
	case ledger.Regressed:
		err = l.finishRegressed(c, res)
	default:
		err = fmt.Errorf("%s: unknown result %q in the finish under way", l.openPath(), f.Result)
	}
	if err != nil {
		return nil, err
	}
	gitstore.Tracef("finish: done (%s, of which the gate %s)", ms(time.Since(t0)), ms(res.GateTime))
	return res, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }

// judge decides the verdict of the cycle's work and keeps it in the open
// cycle's file.
func (l *Ledger) judge(ctx context.Context, c *OpenCycle, head gitstore.Hash, opts FinishOptions, tampering []string, progress func(string), res *FinishResult) error {
	start, err := gitstore.ParseHash(c.Start)
	if err != nil {
		return fmt.Errorf("%s: bad start %q", l.openPath(), c.Start)
	}
	if ok, err := l.repo.IsAncestor(start, head); err != nil {
		return err
	} else if !ok {
		return &Refusal{fmt.Sprintf("HEAD (%s) is no longer a descendant of cycle %d's start %s", head.Short(), c.Cycle, start.Short()),
			"check out the branch the cycle worked on and finish again, or close the cycle with git evolve cycle abort (its work is saved)"}
	}
	ruler, data, err := l.CycleGoals(c)
	if err != nil {
		return err
	}
	// The judging checkout is brought to the start while the working tree
	// is captured; the judgment advances it to the work.
	ready := l.readyAt(start)
	defer ready.release()
	progress("saving the working tree")
	t0 := time.Now()
	capture, err := l.repo.CaptureWorktree()
	if err != nil {
		return err
	}
	// The cycle's own work: what the working tree held when the cycle
	// started, and still holds as it was, is not part of it.
	tree, not, err := l.ownWork(c, capture.Tree, head)
	if err != nil {
		return err
	}
	res.capture = capture
	f := &Finishing{Head: head.String(), Tree: tree.String(), JudgedAt: l.now().UTC().Format(time.RFC3339), Message: opts.Message, Tampering: tampering, Markers: opts.Markers,
		Predating: not.predating, Preexisting: not.changed, Leftover: not.leftover}
	if !capture.Index.IsZero() {
		f.Index = capture.Index.String()
	}
	if f.IgnoredChanged, _, err = l.ignoredChanges(c); err != nil {
		return err
	}
	if tree != capture.Tree {
		f.Worktree = capture.Tree.String()
		res.capture = ownCapture(capture, tree, not.left)
	}
	// The files now; their lines (git's numstat, which needs the capture
	// written) are counted while the gate runs.
	deltas, err := l.changedFiles(start, tree, ruler.NonSubstantive)
	if err != nil {
		return err
	}
	f.Delta = substantiveDelta(deltas)
	res.DeltaTime = time.Since(t0)
	gitstore.Tracef("finish: the delta, the working tree captured and compared with the start (%s)", ms(res.DeltaTime))
	if c.Goals != "" { // the goals file as the working tree has it, as at the start
		blob, ok, err := l.repo.TreeFile(capture.Tree, c.goalsName())
		if err != nil {
			return err
		}
		f.GoalsEdited = !ok || blob.String() != c.Goals
		if f.GoalsEdited {
			f.Tampering = append(f.Tampering, "goals: the cycle changed "+c.goalsName()+"; it was judged by the file as the cycle started")
		}
	}
	if f.Delta.Files == 0 {
		// Nothing of the capture is kept: none of it is written, and the
		// open cycle's file does not name it.
		f.Result, f.Tree, f.Worktree, f.Index = ledger.Unchanged, "", "", ""
	} else {
		g, detected, err := l.GateAt(start, ruler)
		if err != nil {
			return err
		}
		ruler.Gate = g
		if err := l.checkTrust(c, data, detected); err != nil {
			return err
		}
		var before goals.Snapshot
		if len(c.Before) > 0 {
			if err := json.Unmarshal(c.Before, &before); err != nil {
				return fmt.Errorf("%s: the goals measured at the start do not parse: %v", l.openPath(), err)
			}
		}
		// The ruler is held as it was when the cycle started: the work is
		// judged with every ruler file the cycle changed put back first,
		// then, when it changed some, with its own. Each judgment runs in a
		// checkout of its own, never in the working tree, which another
		// process may change meanwhile; what is committed is tree, judged
		// last. The lines are counted meanwhile.
		files, err := l.repo.ChangedFiles(start, tree)
		if err != nil {
			return err
		}
		f.Changed = changedList(files)
		rr := l.rulerOf(ruler, start)
		accept := map[string]bool{}
		for _, p := range opts.AcceptRuler {
			accept[p] = true
		}
		held, changes, err := l.holdRuler(rr, files, tree, accept)
		if err != nil {
			return err
		}
		if err := l.checkAccepted(c, changes, opts, f); err != nil {
			return err
		}
		f.RulerChanges = changes
		if held != tree {
			f.Held = held.String()
		}
		counted := make(chan error, 1)
		go func() { counted <- l.countLines(start, tree, deltas) }()
		var v, own *gate.Verdict
		t1 := time.Now()
		onlyRuler := rulerOnly(f.Delta, changes)
		if !onlyRuler {
			// The holdout checks the cycle started with judge the first
			// time, beside the goals.
			hf, hdata, err := l.cycleHoldout(c)
			if err == nil && hf != nil {
				err = l.checkHoldoutTrust(hdata)
			}
			if err != nil {
				<-counted
				return err
			}
			var holdBefore goals.Snapshot
			if hf != nil && json.Unmarshal(c.HoldoutBefore, &holdBefore) != nil {
				<-counted
				return fmt.Errorf("%s: the holdout checks measured at the start do not parse", l.openPath())
			}
			judge := func(t gitstore.Hash, what string, census *gate.Census, holdout *goals.File) (*gate.Verdict, error) {
				judged, err := l.judgedCommit(c, t, head, what)
				if err != nil {
					return nil, err
				}
				j, err := l.judgeFrom(ready, judged)
				if err != nil {
					return nil, err
				}
				defer j.Release()
				v := gate.Judge(ctx, ruler, &before, goals.Options{Dir: j.Dir, Env: j.Env(), Now: l.now, OnCheck: opts.OnCheck, OnDone: opts.OnDone},
					func(cr goals.CommandResult) bool { return !l.projectCommand(cr, j.Dir, start) }, census)
				if holdout != nil && !v.NoVerdict() && ctx.Err() == nil {
					fixed := ""
					if gate.ResultOf(&before, c.Target) != goals.Pass && gate.ResultOf(v.After, c.Target) == goals.Pass {
						fixed = c.Target
					}
					v.Holdout = gate.JudgeHoldout(ctx, holdout, &holdBefore, goals.Options{Dir: j.Dir, Env: j.Env(), Now: l.now}, fixed)
				}
				if t == tree && ctx.Err() == nil && !v.NoVerdict() {
					// The next cycle starts on this tree when it is
					// committed: its count is known (or that there is
					// none to take).
					l.keepCensus(tree, ruler.Gate, v.Census)
				}
				return v, nil
			}
			what := "as judged"
			if held != tree {
				what = "judged with the ruler as the cycle started"
				progress("running the gate with the ruler as the cycle started (" + rulerList(changes) + " put back)")
			} else {
				progress("running the gate")
			}
			// The first judgment counts the tests against the start; the
			// second against the first: the cycle's own ruler runs at
			// least the tests the start's ran, but for those a person
			// accepted it removes.
			v, err = judge(held, what, c.BeforeCensus, hf)
			if err == nil && ctx.Err() == nil && held != tree && !v.NoVerdict() && !v.Regression() {
				progress("running the gate again, with the cycle's own ruler")
				own, err = judge(tree, "as judged", v.Census, nil)
			}
			if err != nil {
				<-counted
				return err
			}
		}
		res.GateTime = time.Since(t1)
		gitstore.Tracef("finish: the gate (%s)", ms(res.GateTime))
		if err := <-counted; err != nil {
			return err
		}
		f.Delta = substantiveDelta(deltas) // with the lines counted
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		for _, x := range []*gate.Verdict{v, own} {
			if x == nil {
				continue
			}
			if cr, ok := x.CannotRun(); ok && x.NoVerdict() {
				return &Refusal{fmt.Sprintf("the gate cannot run here: `%s`: %s; nothing was stored, cycle %d is still open", cr.Command, strings.TrimPrefix(cr.Reason, "cannot run: "), c.Cycle),
					"the gate runs in a checkout of the work, which holds what git tracks and the working tree's " + strings.Join(LinkedDirs, ", ") +
						": install what it needs (on PATH, or in one of those) and run git evolve cycle finish again, or close the cycle with git evolve cycle abort (its work is saved)"}
			}
		}
		if onlyRuler {
			// Nothing of the product changed: the measure before stands,
			// and the cycle is not improved whatever its tests now say.
			v = &gate.Verdict{Commands: []goals.CommandResult{}, After: &before}
		}
		res.Verdict, res.OwnVerdict = v, own
		f.Result = ledger.Improved
		f.Gate = v.Text()
		f.Failures = v.Failures()
		f.Regressed = v.Regressed()
		if own != nil && own.Regression() {
			f.Gate = "FAIL: with the cycle's own ruler: " + strings.TrimPrefix(own.Text(), "FAIL: ")
			for _, x := range own.Failures() {
				x.OwnRuler = true
				f.Failures = append(f.Failures, x)
			}
			f.Regressed = append(f.Regressed, own.Regressed()...)
		}
		moved := movedByRuler(v, own, changes)
		if len(moved) > 0 {
			// What the work does not do, the cycle's change of an existing
			// ruler file made pass: the next cycle would start from it.
			f.Gate = "FAIL: the cycle's change of its ruler moved " + strings.Join(moved, ", ")
			f.Failures = append(f.Failures, gate.Failure{What: "ruler", Name: "ruler moved", Status: goals.Fail,
				Reason: fmt.Sprintf("with the cycle's own ruler %s passes, with the ruler as the cycle started it does not: the change of %s moved it; a person accepts such a change with git evolve cycle finish --accept-ruler-change PATH -m why",
					strings.Join(moved, ", "), rulerList(changedExisting(changes)))})
		}
		links, err := l.linksOut(files)
		if err != nil {
			return err
		}
		for _, ln := range links {
			f.Failures = append(f.Failures, gate.Failure{What: "link", Name: ln[0], Status: goals.Fail,
				Reason: "a symbolic link out of the tree (to " + ln[1] + "): what it points to is not the cycle's work, and is not judged"})
		}
		if len(links) > 0 && !v.Regression() && (own == nil || !own.Regression()) {
			f.Gate = "FAIL: " + ln0(links) + " is a symbolic link out of the tree"
		}
		if onlyRuler {
			f.Gate = "FAIL: the cycle changed only its ruler"
			f.Failures = []gate.Failure{{What: "ruler", Name: "ruler only", Status: goals.Fail,
				Reason: "the cycle changed only files that judge it: " + rulerList(changes) + "; a person accepts such a change with git evolve cycle finish --accept-ruler-change PATH -m why"}}
		}
		var required []gate.Failure
		if opts.Require != nil {
			paths := make([]string, len(files))
			for i, fc := range files {
				paths[i] = fc.Path
			}
			required = opts.Require(c, paths)
			f.Failures = append(f.Failures, required...)
			if len(required) > 0 && !strings.HasPrefix(f.Gate, "FAIL") {
				f.Gate = "FAIL: " + required[0].Name
			}
		}
		if v.Regression() || (own != nil && own.Regression()) || onlyRuler || len(moved) > 0 || len(links) > 0 || len(required) > 0 {
			f.Result = ledger.Regressed
		}
		f.Holdout = v.Holdout
		if v.Census != nil && c.BeforeCensus != nil {
			f.Census = &ledger.CensusCount{Runner: v.Census.Runner, Before: len(c.BeforeCensus.Passed), After: len(v.Census.Passed)}
		}
		f.Passing, f.Total, f.Score = v.After.Summary.Passing, v.After.Summary.Total, v.After.Summary.Score
		f.Failing = failingIDs(v.After.Goals)
		f.TimedOut, f.CannotRun = idsWith(v.After.Goals, goals.Timeout), idsWith(v.After.Goals, goals.Error)
		f.TargetBefore, f.TargetAfter = gate.ResultOf(&before, c.Target), gate.ResultOf(v.After, c.Target)
		f.Values = gate.Values(ruler, &before, v.After)
		f.GateCommands = g.Commands
		switch {
		case detected != nil:
			f.GateFrom = detected.From
		case g.Set:
			f.GateFrom = goals.FileName
		}
	}
	c.Finish = f
	if f.Result == ledger.Improved && head != start {
		if err := l.delivery(f, head, ruler.NonSubstantive); err != nil {
			return err
		}
	}
	if f.Result == ledger.Improved && !opts.NoVerify && f.Delivery != DeliverHead {
		// The commit that delivers the work passes the user's commit hooks
		// as git commit would make it pass them; a refusal fails the gate.
		msg, err := l.deliveredMessage(c)
		if err != nil {
			return err
		}
		tree, _ := gitstore.ParseHash(f.Tree)
		edited, refused, err := l.repo.RunCommitHooks(ctx, tree, msg)
		if err != nil {
			return err
		}
		switch {
		case refused != nil:
			f.Result = ledger.Regressed
			f.Failures = append(f.Failures, gate.Failure{What: "hook", Name: refused.Hook, Status: "fail",
				Reason: refused.Reason, Excerpt: goals.Excerpt(refused.Output)})
			f.Gate = "FAIL: the " + refused.Hook + " hook refused the commit"
			res.Hook = refused
		case edited != msg:
			f.Message = edited // the trailers are put back as they were
		}
	}
	if opts.QualityScore != nil {
		f.QualityScore = opts.QualityScore(f.Result)
	}
	if err := l.saveOpen(c); err != nil {
		return err
	}
	l.die("judged")
	return nil
}

// judgedCommit is the commit the judging checkout holds for a cycle's
// work: tree on head, by the user's identity. It is not the commit an
// improved cycle delivers (that one's message has the verdict's trailers),
// and no ref names it but the checkout's HEAD.
func (l *Ledger) judgedCommit(c *OpenCycle, tree, head gitstore.Hash, what string) (gitstore.Hash, error) {
	author, committer, err := l.repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return l.repo.WriteCommit(tree, []gitstore.Hash{head}, fmt.Sprintf("git evolve: the work of cycle %d, %s\n", c.Cycle, what), author, committer)
}

// FileDelta is a file a cycle changed: committed, uncommitted or
// untracked, as its start and the working tree differ.
type FileDelta struct {
	Path string
	// Substantive is false for the loop's own files (.agents/**, the goals
	// files) and the goals file's non_substantive paths.
	Substantive bool
	// Insertions and Deletions count the lines of substantive files.
	Insertions, Deletions int
	Binary                bool
}

// fileDeltas lists the files that differ from one tree (or commit) to
// another, marks those outside the non-substantive paths (extra beside the
// defaults) and gives their lines as git counts them (git diff-tree
// --numstat, so that a record says what git show --numstat says). Only
// when some file counts are the objects written (a cycle that changed
// nothing substantive writes nothing).
//
// It is the one delta of a cycle: finish, abort, a revert, record's check
// of a cycle_start_sha, and cycle status all read it.
func (l *Ledger) fileDeltas(from, to gitstore.Hash, extra []string) ([]FileDelta, error) {
	out, err := l.changedFiles(from, to, extra)
	if err != nil {
		return nil, err
	}
	return out, l.countLines(from, to, out)
}

// changedFiles is fileDeltas without the lines: the files, in path order,
// and which are substantive.
func (l *Ledger) changedFiles(from, to gitstore.Hash, extra []string) ([]FileDelta, error) {
	changes, err := l.repo.ChangedFiles(from, to)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	keep := map[string]bool{}
	for _, p := range gate.Substantive(paths, extra...) {
		keep[p] = true
	}
	out := make([]FileDelta, len(changes))
	for i, c := range changes {
		out[i] = FileDelta{Path: c.Path, Substantive: keep[c.Path]}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// countLines writes what is pending (the capture) and fills in the lines
// of the substantive files among deltas (from to to) as git counts them.
// With none it writes nothing.
func (l *Ledger) countLines(from, to gitstore.Hash, deltas []FileDelta) error {
	if substantiveDelta(deltas).Files == 0 {
		return nil
	}
	if err := l.repo.Flush(); err != nil {
		return err
	}
	stats, err := l.repo.Numstat(from, to)
	if err != nil {
		return err
	}
	for i := range deltas {
		if s, ok := stats[deltas[i].Path]; ok && deltas[i].Substantive {
			deltas[i].Insertions, deltas[i].Deletions, deltas[i].Binary = s.Insertions, s.Deletions, s.Binary
		}
	}
	return nil
}

// WorktreeDelta is the delta a finish would take now: the working tree
// captured (untracked files too, ignored ones not) and compared with the
// cycle's start by fileDeltas, extra naming more non-substantive paths. The
// capture's objects are written when some file counts (git counts the
// lines), as git stash create writes them; nothing refers to them.
func (l *Ledger) WorktreeDelta(c *OpenCycle, extra []string) ([]FileDelta, error) {
	start, err := gitstore.ParseHash(c.Start)
	if err != nil {
		return nil, err
	}
	return l.DeltaSince(start, extra)
}

// DeltaSince is fileDeltas from commit to the working tree as a finish
// captures it.
func (l *Ledger) DeltaSince(commit gitstore.Hash, extra []string) ([]FileDelta, error) {
	capture, err := l.repo.CaptureWorktree()
	if err != nil {
		return nil, err
	}
	return l.fileDeltas(commit, capture.Tree, extra)
}

// substantiveDelta sums up the substantive files among deltas.
func substantiveDelta(deltas []FileDelta) Delta {
	var d Delta
	for _, x := range deltas {
		if x.Substantive {
			d.Files++
			d.Insertions += x.Insertions
			d.Deletions += x.Deletions
			d.Paths = append(d.Paths, x.Path)
		}
	}
	return d
}

// CycleGoals returns the goals file cycle c is judged by: the one it
// started with (kept by GoalsRef), or, for a cycle opened without one, the
// goals file of its start commit. The error says "No goals to measure" when
// there is none.
func (l *Ledger) CycleGoals(c *OpenCycle) (*goals.File, []byte, error) {
	var data []byte
	name := c.goalsName()
	if h, err := gitstore.ParseHash(c.Goals); err == nil {
		if data, err = l.repo.ReadBlob(h); err != nil {
			return nil, nil, &Refusal{fmt.Sprintf("No goals to measure: the goals file cycle %d started with is gone (%s): %v", c.Cycle, GoalsRef(c.ID), err),
				"close the cycle with git evolve cycle abort and start another"}
		}
	} else {
		start, _ := gitstore.ParseHash(c.Start)
		blob, n, ok, err := l.treeGoalsBlob(start)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, &Refusal{fmt.Sprintf("No goals to measure: cycle %d's start %s has no %s or %s", c.Cycle, start.Short(), goals.FileName, goals.MarkdownName),
				"close the cycle with git evolve cycle abort, add GOALS.yaml and start another"}
		}
		if data, err = l.repo.ReadBlob(blob); err != nil {
			return nil, nil, err
		}
		name = n
	}
	f, err := goals.ParseAs(name, name+" (as cycle "+fmt.Sprint(c.Cycle)+" started)", data)
	if err != nil {
		return nil, nil, err
	}
	return f, data, nil
}

// goalsName is the name of the goals file the cycle started with.
func (c *OpenCycle) goalsName() string {
	if c.GoalsName == goals.MarkdownName {
		return goals.MarkdownName
	}
	return goals.FileName
}

// treeGoalsBlob finds the goals file of a tree (or commit): GOALS.yaml,
// else GOALS.md, as in a working tree.
func (l *Ledger) treeGoalsBlob(tree gitstore.Hash) (blob gitstore.Hash, name string, ok bool, err error) {
	for _, name := range goals.Names {
		if blob, ok, err = l.repo.TreeFile(tree, name); err != nil || ok {
			return blob, name, ok, err
		}
	}
	return blob, "", false, nil
}

func (l *Ledger) finishUnchanged(c *OpenCycle, res *FinishResult) error {
	res.Record = c.record(ledger.Unchanged, "")
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return err
	}
	have, _, err := l.journal.Read()
	if err == nil && !hasID(have, c.ID) { // a finish interrupted after this step is not recorded twice
		err = l.journal.Append(res.Record)
	}
	if err == nil {
		l.die("recorded")
		err = l.release(c.ID)
	}
	unlock()
	if err != nil {
		return err
	}
	return l.closeCycle(c)
}

func (l *Ledger) finishImproved(c *OpenCycle, res *FinishResult) error {
	f := c.Finish
	head, _ := gitstore.ParseHash(f.Head)
	tree, _ := gitstore.ParseHash(f.Tree)
	if f.Commit == "" {
		var commit gitstore.Hash
		switch f.Delivery {
		case DeliverHead:
			commit = head
		default:
			msg, err := l.deliveredMessage(c)
			if err != nil {
				return err
			}
			if f.Delivery == DeliverAmend {
				commit, err = l.amendCommit(head, tree, msg)
			} else {
				commit, err = l.commitTree(tree, head, msg)
			}
			if err != nil {
				return err
			}
		}
		f.Commit = commit.String()
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("committed")
	}
	commit, _ := gitstore.ParseHash(f.Commit)
	if err := l.moveHead(c, head, commit); err != nil {
		return err
	}
	if !f.CheckedOut { // the index holds the judged tree, as committed
		if res.capture != nil {
			if err := l.repo.SyncIndex(res.capture, commit); err != nil {
				return err
			}
		} else if hc, err := l.repo.Commit(head); err != nil {
			return err
		} else if hc.Tree != tree {
			if err := l.repo.ResetIndex(commit); err != nil {
				return err
			}
		}
		f.CheckedOut = true
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("checked-out")
	}
	res.Commit = commit
	return l.recordAndClose(c, commit, res)
}

func (l *Ledger) finishRegressed(c *OpenCycle, res *FinishResult) error {
	f := c.Finish
	head, _ := gitstore.ParseHash(f.Head)
	start, _ := gitstore.ParseHash(c.Start)
	if f.Saved == "" {
		// The work as judged, when this process judged it; after a resume,
		// the working tree as it is.
		var tree, index gitstore.Hash
		if res.capture != nil {
			whole := f.Tree
			if f.Worktree != "" {
				whole = f.Worktree
			}
			tree, index = mustParse(whole), mustParse(f.Index)
		}
		saved, err := revert.Save(l.repo, head, tree, index, savedMessage(c, "regressed"))
		if err != nil {
			return err
		}
		if err := l.keepSaved(c, saved); err != nil {
			return err
		}
		f.Saved = saved.String()
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("saved")
	}
	saved, _ := gitstore.ParseHash(f.Saved)
	res.Saved = saved
	if f.Commit == "" {
		// .agents/** as the cycle's own work has it: what the working tree
		// held there of earlier cycles' is not the revert's to commit.
		commit, err := revert.Range(l.repo, start, head, mustParse(f.Tree), revertMessage(c))
		if err != nil {
			return err
		}
		f.Commit = commit.String()
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("committed")
	}
	commit, _ := gitstore.ParseHash(f.Commit)
	if !f.CheckedOut {
		// HEAD is where the cycle was judged (it moves after this step):
		// else the working tree is someone else's now, and is left alone.
		if err := l.headAt(c, head, commit); err != nil {
			return err
		}
		if err := l.revertWorktree(c, res, saved, commit); err != nil {
			return err
		}
		f.CheckedOut = true
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("checked-out")
	}
	if err := l.moveHead(c, head, commit); err != nil {
		return err
	}
	res.Commit = commit
	return l.recordAndClose(c, commit, res)
}

// revertWorktree brings the index and the working tree from the saved work
// to the revert: the working tree to what undoing the cycle leaves (the
// start's tree, .agents/** as the cycle left it, and what the working tree
// held of its own when the cycle started put back), the index to the
// revert's tree. When the working tree is not as it was judged (a check or
// a person changed it since, or this finish resumes), or files the switch
// would overwrite or remove are in no save (ignored ones), it is saved once
// more, on top of the saved work and with those files, before it is reset:
// nothing in it is lost.
func (l *Ledger) revertWorktree(c *OpenCycle, res *FinishResult, saved, revert gitstore.Hash) error {
	rc, err := l.repo.Commit(revert)
	if err != nil {
		return err
	}
	target, index, err := l.startWorktree(c, rc.Tree, saved, c.Finish.Predating, c.Finish.Leftover)
	if err != nil {
		return err
	}
	// The ignored files the start kept that the cycle changed are saved
	// before they are put back (the second save, with the files in the
	// way); those it removed are only written again.
	_, ignored, err := l.ignoredChanges(c)
	if err != nil {
		return err
	}
	ignored = l.withinSaveLimits(ignored)
	also := ignored
	if res.capture != nil && len(ignored) == 0 {
		err := l.repo.SwitchWorktree(res.capture, saved, target, gitstore.SwitchChecked)
		if err == nil {
			if err := l.repo.SetIndex(index); err != nil {
				return err
			}
			return l.putBackAfterRevert(c, saved)
		}
		if !errors.Is(err, gitstore.ErrWorktreeChanged) {
			return err
		}
		var ue *gitstore.UnsavedError
		if errors.As(err, &ue) {
			also = ue.Paths
		}
	}
	for attempt := 0; ; attempt++ {
		if err := l.saveable(c, also); err != nil {
			return err
		}
		// On top of the last save, which is the one before when a switch
		// that was interrupted saved the working tree already: each save
		// keeps the ones before it.
		last := l.refOrZero(ledger.RegressedRef(c.ID))
		if last.IsZero() {
			last = saved
		}
		again, capture, err := l.repo.SaveWorktree(last, savedMessage(c, "regressed, as it was when it was reverted"), also...)
		if err != nil {
			return err
		}
		if err := l.keepSaved(c, again); err != nil {
			return err
		}
		// The record names the last save (the first is its parent).
		c.Finish.Saved, res.Saved = again.String(), again
		if err := l.saveOpen(c); err != nil {
			return err
		}
		l.die("saved-again")
		err = l.repo.SwitchWorktree(capture, again, target, gitstore.SwitchForce)
		var ue *gitstore.UnsavedError
		switch {
		case errors.As(err, &ue) && attempt == 0:
			also = append(append([]string(nil), ignored...), ue.Paths...) // appeared since: saved with the next
			continue
		case errors.As(err, &ue):
			return unsavedRefusal(c, ue, "written while the revert ran")
		case err != nil:
			return err
		}
		if err := l.repo.SetIndex(index); err != nil {
			return err
		}
		return l.putBackAfterRevert(c, again)
	}
}

// putBackAfterRevert puts back the ignored files the start of regressed
// cycle c kept that it removed or changed (see putBackIgnored), save the
// last save of its work, and keeps what it did in the finish under way.
func (l *Ledger) putBackAfterRevert(c *OpenCycle, save gitstore.Hash) error {
	put, notBack, err := l.putBackIgnored(c, save)
	if err != nil {
		return err
	}
	f := c.Finish
	f.IgnoredPut = appendNew(f.IgnoredPut, put...)
	f.IgnoredNotBack = notBack
	return nil
}

// appendNew appends to list the items it does not hold yet.
func appendNew(list []string, items ...string) []string {
	have := map[string]bool{}
	for _, x := range list {
		have[x] = true
	}
	for _, x := range items {
		if !have[x] {
			have[x] = true
			list = append(list, x)
		}
	}
	return list
}

// The most a save takes of files that are in no capture (ignored ones in
// the way of a revert or a restore); past it the revert refuses.
const (
	maxAlsoFiles = 1000
	maxAlsoBytes = 64 << 20
)

// saveable refuses (naming them) files in the way of a switch that are too
// many or too large to save.
func (l *Ledger) saveable(c *OpenCycle, paths []string) error {
	top, err := l.repo.WorkTree()
	if err != nil {
		return err
	}
	var size int64
	for i, p := range paths {
		if fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p))); err == nil {
			size += fi.Size()
		}
		if i >= maxAlsoFiles || size > maxAlsoBytes {
			return unsavedRefusal(c, &gitstore.UnsavedError{Paths: paths}, fmt.Sprintf("too much to save: more than %d files or %d MiB", maxAlsoFiles, maxAlsoBytes>>20))
		}
	}
	return nil
}

// unsavedRefusal refuses to undo cycle c over files in no save.
func unsavedRefusal(c *OpenCycle, ue *gitstore.UnsavedError, why string) error {
	more := ""
	if n := len(ue.Paths) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return &Refusal{fmt.Sprintf("undoing cycle %d would overwrite or remove %s%s, in no save (ignored, or new) and %s: nothing was changed", c.Cycle, ue.Paths[0], more, why),
		"move it out of the way, then run git evolve cycle finish again (git evolve run --resume in a run)"}
}

// keepSaved points RegressedRef at the saved work.
func (l *Ledger) keepSaved(c *OpenCycle, saved gitstore.Hash) error {
	old := l.refOrZero(ledger.RegressedRef(c.ID))
	if old == saved {
		return nil
	}
	return l.keepSave(ledger.RegressedRef(c.ID), saved, old, fmt.Sprintf("git evolve: cycle %d regressed", c.Cycle))
}

func savedMessage(c *OpenCycle, what string) string {
	return fmt.Sprintf("git evolve: the work of cycle %d, %s\n\n%s\nEvolve-Cycle: %d\nEvolve-Id: %s\n", c.Cycle, what, SaveHowTo, c.Cycle, c.ID)
}

// SaveHowTo is what the message of a save of the working tree (see
// gitstore.CommitSave) says of getting its files back.
const SaveHowTo = `Its tree is the working tree as it was (untracked files too); its second
parent's tree, the index as it was. To get a file back as the working tree
had it: git restore --source=<this commit> -- PATH; as the index had it:
git restore --staged --source=<this commit>^2 -- PATH; both at once, on
its first parent: git stash apply --index <this commit>.
`

// commitTree writes a commit of tree on parent.
func (l *Ledger) commitTree(tree, parent gitstore.Hash, message string) (gitstore.Hash, error) {
	author, committer, err := l.repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return l.repo.CommitAsGit(tree, []gitstore.Hash{parent}, message, author, committer)
}

// delivery decides how improved work f is delivered when the cycle's
// commits took HEAD from its start to head (Finishing.Delivery). The
// agent's last commit is the delivered one, with the cycle's trailers,
// rather than a commit of the finish's on top of it: rewritten as git
// commit --amend would rewrite it, with what the cycle left uncommitted
// of its own work when that is nothing substantive (extra names more
// non-substantive paths; its notes under .agents/**, say), and the
// message given to the finish if any, else its own. A commit on top
// still delivers substantive work left uncommitted; and a commit another
// ref holds (pushed, tagged, on another branch) is not rewritten: the
// record goes on it as it is when it holds the whole work.
func (l *Ledger) delivery(f *Finishing, head gitstore.Hash, extra []string) error {
	hc, err := l.repo.Commit(head)
	if err != nil {
		return err
	}
	rest, err := l.repo.ChangedPaths(hc.Tree, mustParse(f.Tree))
	if err != nil {
		return err
	}
	shared, err := l.repo.Shared(head)
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 0 && shared:
		f.Delivery = DeliverHead
	case !shared && len(gate.Substantive(rest, extra...)) == 0:
		f.Delivery = DeliverAmend
		if strings.TrimSpace(f.Message) == "" {
			f.Message = hc.Message
		}
	}
	return nil
}

// amendCommit rewrites commit head as git commit --amend would: tree, with
// head's parents and author, and message, by the committer of now.
func (l *Ledger) amendCommit(head, tree gitstore.Hash, message string) (gitstore.Hash, error) {
	hc, err := l.repo.Commit(head)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	_, committer, err := l.repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return l.repo.CommitAsGit(tree, hc.Parents, message, hc.Author, committer)
}

// moveHead moves HEAD from the judged head to the finish's commit, unless it
// is there already (a finish that resumes).
func (l *Ledger) moveHead(c *OpenCycle, from, to gitstore.Hash) error {
	cur, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return err
	}
	switch cur[0] {
	case to:
		return nil
	case from:
		err := l.repo.MoveHead(to, from, fmt.Sprintf("git evolve: cycle %d %s", c.Cycle, c.Finish.Result))
		if errors.Is(err, gitstore.ErrRefChanged) {
			return &Busy{fmt.Sprintf("HEAD moved while cycle %d was finishing", c.Cycle), "run git evolve cycle finish again"}
		}
		if err != nil {
			return err
		}
		l.die("moved")
		return nil
	}
	return headMoved(c, from, cur[0])
}

// headAt refuses to go on unless HEAD is at from, where the cycle was
// judged, or at to, where this finish moves it.
func (l *Ledger) headAt(c *OpenCycle, from, to gitstore.Hash) error {
	cur, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return err
	}
	if cur[0] == from || cur[0] == to {
		return nil
	}
	return headMoved(c, from, cur[0])
}

// headMoved is the refusal of a finish that finds HEAD moved from where the
// cycle was judged. Its advice keeps the commits HEAD moved to on a branch
// before HEAD goes back.
func headMoved(c *OpenCycle, from, cur gitstore.Hash) error {
	return &Busy{fmt.Sprintf("HEAD moved while cycle %d was finishing: it was %s, it is %s now", c.Cycle, from.Short(), cur.Short()),
		fmt.Sprintf("keep what HEAD holds now on a branch (git branch <name> %s), put HEAD back with 'git reset --soft %s' and run git evolve cycle finish again, then bring the branch's work back (git cherry-pick); or close the cycle with git evolve cycle abort", cur.Short(), from.Short())}
}

// recordAndClose writes the cycle's record as a note on commit (once: a
// note that has the record's id already is left alone), gives back the
// cycle's number and closes it.
func (l *Ledger) recordAndClose(c *OpenCycle, commit gitstore.Hash, res *FinishResult) error {
	rec := c.record(c.Finish.Result, commit.String())
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("the record of cycle %d: %w", c.Cycle, err)
	}
	res.Record = rec
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return err
	}
	err = l.Update(func(snap *gitstore.Notes, ix *store.Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		if err := l.Stamp(&rec, snap, ix); err != nil {
			return nil, nil, err
		}
		res.Record = rec
		return map[gitstore.Hash][]ledger.Record{commit: {rec}},
			func(int) string { return fmt.Sprintf(store.RecordSubject, rec.Cycle, rec.Result) }, nil
	})
	if err == nil {
		l.die("recorded")
		err = l.release(c.ID)
	}
	unlock()
	if err != nil {
		return err
	}
	return l.closeCycle(c)
}

// closeCycle drops what kept the open cycle: its start and goals refs (the
// record names the start, and the ledger keeps the delivered commit) and
// its file.
func (l *Ledger) closeCycle(c *OpenCycle) error {
	refs := c.keptRefs()
	if l.keepsBase(c) {
		delete(refs, BaseRef(c.ID))
		if err := l.NoteSave(BaseRef(c.ID), c.Base); err != nil {
			return err
		}
	}
	if keepsIgnored(c) {
		if err := l.keepIgnored(c, refs); err != nil {
			return err
		}
	}
	_ = l.repo.DeleteRefs(refs)
	return l.removeOpen()
}

// keepsBase says the base of a closing cycle stays: the cycle changed or
// removed what the working tree held of its own, and no revert put that
// back (BaseRef keeps it as it was).
func (l *Ledger) keepsBase(c *OpenCycle) bool {
	f := c.Finish
	return f != nil && len(f.Preexisting) > 0 && f.Result != ledger.Regressed && c.Base != ""
}

// keepsIgnored says the ignored files a closing cycle's start kept stay
// kept (IgnoredRef): the cycle removed or changed some of them and no
// revert put them all back.
func keepsIgnored(c *OpenCycle) bool {
	f := c.Finish
	if f == nil || c.Ignored == nil || c.Ignored.Commit == "" || c.Reverts != nil {
		return false
	}
	if f.Result == ledger.Regressed {
		return len(f.IgnoredNotBack) > 0
	}
	return len(f.IgnoredChanged) > 0
}

// record is the ledger record of a finished cycle, on commit ("" for the
// journal).
func (c *OpenCycle) record(result, commit string) ledger.Record {
	f := c.Finish
	rec := ledger.Record{V: ledger.SchemaMajor, ID: c.ID, Cycle: c.Cycle, Target: c.Target, Result: result,
		SHA: commit, CanonicalSHA: commit, CycleStartSHA: c.Start, Timestamp: f.JudgedAt, QualityScore: f.QualityScore,
		Extra: map[string]json.RawMessage{}}
	delta := f.Delta
	delta.Paths = nil
	rec.Extra["delta"] = mustJSON(delta)
	if c.Era != "" {
		rec.Extra["era"] = mustJSON(c.Era)
	}
	if f.GoalsEdited {
		rec.Extra["goals_edited"] = json.RawMessage("true")
	}
	var before goals.Snapshot
	if json.Unmarshal(c.Before, &before) == nil && before.Summary.Total > 0 {
		b := map[string]any{"goals_passing": before.Summary.Passing, "goals_total": before.Summary.Total, "score": before.Summary.Score}
		if failing := failingIDs(before.Goals); len(failing) > 0 {
			b["failing"] = failing
		}
		rec.Extra["before"] = mustJSON(b)
	}
	for k, v := range c.Fields {
		if _, known := rec.Extra[k]; !known && len(v) > 0 {
			rec.Extra[k] = v
		}
	}
	for k, v := range map[string]string{"item": c.Item, "rung": c.Rung, "run": c.Run, "branch": c.Branch} {
		if v != "" {
			rec.Extra[k] = mustJSON(v)
		}
	}
	if len(f.Tampering) > 0 {
		rec.Extra["tampering"] = mustJSON(f.Tampering)
	}
	if result != ledger.Unchanged {
		if len(f.Changed) > 0 {
			rec.Extra["changed"] = mustJSON(f.Changed)
		}
		var ruler []string
		for _, ch := range f.RulerChanges {
			if !ch.Accepted {
				ruler = append(ruler, ch.String())
			}
		}
		if len(ruler) > 0 {
			rec.Extra["ruler_changed"] = mustJSON(ruler)
		}
		if len(f.Accepted) > 0 {
			rec.Extra["ruler_accepted"] = mustJSON(f.Accepted)
		}
		if f.Census != nil {
			rec.Extra["tests_passed"] = mustJSON(f.Census)
		}
		if f.Holdout != nil {
			rec.Extra["holdout"] = mustJSON(f.Holdout)
		}
	}
	if len(f.Markers) > 0 {
		rec.Extra["markers"] = mustJSON(f.Markers)
	}
	if len(f.Preexisting) > 0 && result != ledger.Regressed && c.Base != "" {
		rec.Extra["base"] = mustJSON(c.Base)
		rec.Extra["preexisting_changed"] = mustJSON(f.Preexisting)
	}
	if len(f.IgnoredChanged) > 0 {
		rec.Extra["ignored_changed"] = mustJSON(f.IgnoredChanged)
		if result != ledger.Regressed && c.Ignored != nil {
			rec.Extra["ignored"] = mustJSON(c.Ignored.Commit)
		}
	}
	if result == ledger.Unchanged {
		return rec
	}
	passing, total := f.Passing, f.Total
	rec.GoalsPassing, rec.GoalsTotal = &passing, &total
	rec.Gate = mustJSON(f.Gate)
	rec.Extra["score"] = mustJSON(f.Score)
	for k, ids := range map[string][]string{"failing": f.Failing, "timed_out": f.TimedOut, "cannot_run": f.CannotRun, "gate_commands": f.GateCommands} {
		if len(ids) > 0 {
			rec.Extra[k] = mustJSON(ids)
		}
	}
	for k, v := range map[string]string{"target_before": f.TargetBefore, "target_after": f.TargetAfter, "gate_from": f.GateFrom} {
		if v != "" {
			rec.Extra[k] = mustJSON(v)
		}
	}
	if len(f.Failures) > 0 {
		rec.Extra["failures"] = mustJSON(f.Failures)
	}

	if len(f.Values) > 0 {
		rec.Extra["values"] = mustJSON(f.Values)
	}
	if r := c.Reverts; r != nil {
		rec.Extra["reverts"] = mustJSON(r.Range)
		rec.Extra["reverts_cycle"] = mustJSON(r.Cycle)
		rec.Extra["reverts_id"] = mustJSON(r.ID)
	} else if result == ledger.Regressed {
		ids := make([]string, len(f.Regressed))
		for i, r := range f.Regressed {
			ids[i] = r.GoalID
		}
		rec.Extra["regressed_goals"] = mustJSON(ids)
		rec.Extra["reverts"] = mustJSON(c.Start + ".." + f.Head)
		rec.Extra["saved"] = mustJSON(f.Saved)
	}
	return rec
}

// trailers are the trailers of the commit a finish makes. Evolve-Record is
// the digest of the record the finish then writes (ledger.CommitDigest), so
// that the commit vouches for it.
func (c *OpenCycle) trailers() [][2]string {
	t := [][2]string{{"Evolve-Cycle", fmt.Sprint(c.Cycle)}, {"Evolve-Id", c.ID}, {"Evolve-Target", c.Target},
		{"Evolve-Result", c.Finish.Result}}
	if c.Reverts != nil {
		t = append(t, [2]string{"Evolve-Reverts", c.Reverts.Range})
	} else if c.Finish.Result == ledger.Regressed {
		t = append(t, [2]string{"Evolve-Reverts", c.Start + ".." + c.Finish.Head})
	}
	rec := c.record(c.Finish.Result, "")
	return append(t, [2]string{"Evolve-Record", ledger.CommitDigest(&rec)})
}

func trailerBlock(t [][2]string) string {
	var b strings.Builder
	for _, kv := range t {
		b.WriteString(kv[0] + ": " + kv[1] + "\n")
	}
	return b.String()
}

// deliveredMessage is the message of an improved cycle's commit: the
// user's, or one that says what the cycle did, with the trailers.
func (l *Ledger) deliveredMessage(c *OpenCycle) (string, error) {
	f := c.Finish
	if strings.TrimSpace(f.Message) != "" {
		return l.repo.WithTrailers(strings.TrimSpace(f.Message)+"\n", c.trailers())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "evolve: cycle %d -- %s improved\n\n", c.Cycle, c.Target)
	if s, ok := beforeSummary(c); ok {
		fmt.Fprintf(&b, "Goals passing: %d → %d of %d (score %s → %s).\n", s.Passing, f.Passing, f.Total, score(s.Score), score(f.Score))
	} else {
		fmt.Fprintf(&b, "Goals passing: %d of %d (score %s).\n", f.Passing, f.Total, score(f.Score))
	}
	fmt.Fprintf(&b, "Changed: %d file(s), +%d -%d lines.\n", f.Delta.Files, f.Delta.Insertions, f.Delta.Deletions)
	fmt.Fprintf(&b, "Gate: %s.\n\n", f.Gate)
	b.WriteString(trailerBlock(c.trailers()))
	return b.String(), nil
}

// revertMessage says which goals regressed and what the revert undoes.
func revertMessage(c *OpenCycle) string {
	f := c.Finish
	var b strings.Builder
	fmt.Fprintf(&b, "evolve: cycle %d -- %s regressed, reverted\n\n", c.Cycle, c.Target)
	if len(f.Regressed) > 0 {
		b.WriteString("Goals that regressed:\n")
		for _, r := range f.Regressed {
			fmt.Fprintf(&b, "- %s: %s\n", r.GoalID, r.Reason)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Gate: %s.\n\n", f.Gate)
	fmt.Fprintf(&b, "This commit undoes the cycle's work, %s..%s and what was left\n", short(c.Start), short(f.Head))
	b.WriteString("uncommitted, in one step; .agents/ is kept as the cycle left it. The\n")
	fmt.Fprintf(&b, "cycle's commits stay in history; its working tree is saved as %s\n(%s).\n\n", short(f.Saved), ledger.RegressedRef(c.ID))
	b.WriteString(trailerBlock(c.trailers()))
	return b.String()
}

// failingIDs are the ids of the goals that failed or timed out (the goals
// to work on), in order.
func failingIDs(rs []goals.Result) []string {
	var out []string
	for _, r := range rs {
		if goals.Failing(r.Result) {
			out = append(out, r.GoalID)
		}
	}
	return out
}

// idsWith are the ids of the goals whose result is result, in order.
func idsWith(rs []goals.Result, result string) []string {
	var out []string
	for _, r := range rs {
		if r.Result == result {
			out = append(out, r.GoalID)
		}
	}
	return out
}

func beforeSummary(c *OpenCycle) (goals.Summary, bool) {
	var s goals.Snapshot
	if json.Unmarshal(c.Before, &s) != nil || s.Summary.Total == 0 {
		return goals.Summary{}, false
	}
	return s.Summary, true
}

func score(v float64) string { return fmt.Sprintf("%.1f", v) }

// ownCapture is capture made the capture of the cycle's own work, tree:
// the paths left out of it hold the entries given (HEAD's), so that the
// index gets those, not the working tree's.
func ownCapture(capture *gitstore.Capture, tree gitstore.Hash, left []gitstore.CapturedPath) *gitstore.Capture {
	own := &gitstore.Capture{Tree: tree}
	if capture.Paths == nil {
		return own // the index is reset from the whole tree
	}
	set := map[string]gitstore.CapturedPath{}
	for _, e := range left {
		set[e.Path] = e
	}
	for _, p := range capture.Paths {
		if e, ok := set[p.Path]; ok {
			p = e
			delete(set, p.Path)
		}
		own.Paths = append(own.Paths, p)
	}
	for _, e := range left {
		if _, ok := set[e.Path]; ok {
			own.Paths = append(own.Paths, e)
		}
	}
	return own
}
