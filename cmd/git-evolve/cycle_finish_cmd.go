package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/redact"
)

type cycleFinishCmd struct {
	progressFlag
	Message  string   `short:"m" help:"The message of the commit that delivers the work (default: one that says what the cycle did); the cycle's trailers are added." placeholder:"MSG"`
	JSON     bool     `name:"json" help:"Print {cycle, id, target, result, commit, saved, resumed, record, verdict}."`
	NoVerify bool     `name:"no-verify" help:"Do not run the pre-commit and commit-msg hooks on the commit that delivers the work (as git commit --no-verify)."`
	Accept   []string `name:"accept-ruler-change" sep:"none" help:"Accept the cycle's change of this ruler file (a test, a check script, the test configuration), with -m saying why: the first judgment runs with the cycle's version, and the record keeps who accepted what. Repeat it for each file." placeholder:"PATH"`
}

func (cycleFinishCmd) Help() string {
	return `Takes the working tree, committed and uncommitted (untracked files too,
ignored ones not), as the cycle's work, and judges it. What the working tree
held when the cycle started and still holds as it was (untracked files,
uncommitted edits outside .agents/**) is not the cycle's work: it is not
counted, not committed, and a revert puts it back as it was.

 1. Without a change outside .agents/**, GOALS.yaml, GOALS.md and the goals
    file's non_substantive paths, the cycle is unchanged: it goes to the local
    journal and nothing is committed.
 2. Otherwise the gate runs, in a checkout of exactly the tree that will be
    committed (a linked worktree in the user's cache directory, cleaned of
    untracked and ignored files; never the working tree), with the goals
    file as it was when the cycle started: the test commands of its gate: key or, without one, the
    project's tests detected in the start commit's tree (go.mod, a Makefile's
    test target, package.json's test script, Cargo.toml, pyproject.toml,
    pytest.ini or setup.cfg), then every goal. Pass must stay pass: a goal
    that passed and now fails, times out, skips or cannot run, or a
    continuous value that moved the wrong way beyond its tolerance, or that
    the start measured and the finish cannot read, is measured once more
    before it counts. A test command that cannot run
    (exit 126 or 127) gives no verdict: nothing is stored and the cycle stays
    open. What failed is printed with the end of its output, kept in the
    record, and told to the next agent.
    The ruler is held as it was when the cycle started: the goals file, the
    files the gate and the checks name, the tests and test configuration
    (*_test.go, testdata/, test_*.py, tests/, conftest.py, pytest.ini,
    pyproject.toml, *.test.*, __tests__/, Makefiles, package.json's scripts,
    go.mod's replace directives, ...) and the goals file's ruler: patterns.
    When the cycle changed some, its work is judged first with them as they
    were at the start (changed or removed ones put back, added ones left
    out), then with its own versions: improved needs both. A cycle that
    changed only ruler files is never improved. A person accepts a change of
    the ruler with --accept-ruler-change PATH -m why.
 3. No regression: the work is committed (with -m or a default message) with
    the trailers Evolve-Cycle, Evolve-Id, Evolve-Target and Evolve-Result,
    and the record becomes a note on that commit. The result is improved.
    When the cycle's commits took HEAD on from its start, the last of them
    is the delivered commit: rewritten as git commit --amend would (its
    message kept unless -m gives one) to carry the trailers and what is
    left uncommitted of the cycle's work when that is nothing substantive;
    a commit another ref holds (pushed) is not rewritten, and the record
    goes on it as it is when it holds the whole work.
    The ignored files the cycle's start kept that the cycle removed or
    changed are left as they are, named in the record, and kept as they
    were under refs/evolve/cycles/<id>/ignored.
 4. A regression: the working tree is saved as a commit under
    refs/evolve/cycles/<id>/regressed (the index as it was its second
    parent, as git stash saves it), then one commit on top of HEAD
    reverts the cycle's whole range (its tree is the start's, with .agents/**
    as the cycle left it) with the trailers and Evolve-Reverts; the index and
    the working tree are brought to it (ignored files are left alone, and an
    ignored file the revert must remove or overwrite is saved first), the
    ignored files the cycle's start kept that the cycle removed or changed
    are put back (its versions saved first), and the record, naming the
    goals that regressed, becomes a note on it. The result is regressed and
    the exit code is 3.

The commit that delivers an improved cycle's work passes the pre-commit and
commit-msg hooks (core.hooksPath honoured) as git commit would: pre-commit sees
an index holding that commit's tree, commit-msg may edit the message (the
trailers are put back). A hook that refuses fails the gate: the cycle
regresses, with the hook's output. --no-verify skips them. The other commits a
cycle makes (the saved work, a revert) run no hooks, as git stash and git
revert --no-edit's own commits do not. Commits are signed when commit.gpgSign
says so, as git commit signs them (gpg.format, user.signingKey).

A finish that is interrupted or killed is completed by the next git evolve
cycle finish; git evolve cycle status says how far it came.`
}

func (c *cycleFinishCmd) Run(e *env) error {
	l, err := e.CycleLedger()
	if err != nil {
		return err
	}
	if err := runsCycle(e, l, "git evolve cycle finish"); err != nil {
		return err
	}
	// A run's cycle is judged by the ruler its driver kept, which a finish
	// by hand would not have: run --resume finishes it.
	if open, err := l.Current(); err == nil && open.Run != "" && open.Reverts == nil {
		return &usageError{msg: fmt.Sprintf("cycle %d was opened by git evolve run %s: its driver finishes it, by the ruler it kept", open.Cycle, open.Run),
			hint: "continue the run with git evolve run --resume, or close the cycle with git evolve cycle abort (its work is saved)"}
	}
	if open, err := l.Current(); err == nil && open.Finish != nil {
		head, _ := l.Repo().ResolveCommits("HEAD")
		var h gitstore.Hash
		if len(head) > 0 {
			h = head[0]
		}
		fmt.Fprintf(e.stderr, "git-evolve: completing the finish of cycle %d, %s\n", open.Cycle, open.State(h))
		if c.Message != "" && c.Message != open.Finish.Message {
			fmt.Fprintf(e.stderr, "git-evolve: warning: -m is ignored: the finish under way keeps the message it started with\n")
		}
	}
	c.progressFlag.set(e)
	n := 0
	if open, err := l.Current(); err == nil {
		if f, _, err := l.CycleGoals(open); err == nil {
			n = len(f.Goals)
		}
	}
	opts := cycle.FinishOptions{Message: c.Message, Progress: e.progress, NoVerify: c.NoVerify, Require: loop.Requirements(l.Repo())}
	if len(c.Accept) > 0 {
		// The ruler is the operator's: no agent a run drives accepts a
		// change of it.
		if err := refuseWhileRunOwns(e, l.Repo(), "git evolve cycle finish --accept-ruler-change", "the ruler of the cycles it runs is the one the driver holds", true); err != nil {
			return err
		}
		top, _ := l.Repo().WorkTree()
		for _, p := range c.Accept {
			opts.AcceptRuler = append(opts.AcceptRuler, repoPath(top, e.dir, p))
		}
		opts.AcceptWhy = c.Message
	}
	onCheck, onDone, done := e.goalProgress("the gate: measuring goals", n)
	opts.OnCheck, opts.OnDone = onCheck, onDone
	res, err := l.Finish(e.ctx, opts)
	done()
	switch {
	case errors.Is(err, cycle.ErrNoOpenCycle):
		return &usageError{msg: "no cycle is open in this worktree: nothing to finish", hint: "open one with git evolve cycle start"}
	case errors.Is(err, cycle.ErrInterrupted):
		return err
	case err != nil:
		return err
	}
	defer sweep(e, l)
	f := res.Cycle.Finish
	if f.GoalsEdited {
		fmt.Fprintf(e.stderr, "git-evolve: warning: the cycle changed %s: it was judged by the goals file as it was when the cycle started, and its record says so\n", goals.FileName)
	}
	if err := loop.SaveMeasured(l.Repo(), res); err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: the goals measured were not stored: %v\n", err)
	}
	keepSeedFinish(e, l.Repo(), res)
	if res.Cycle.Reverts == nil {
		settle(e, l, res.Cycle, res.Result, false)
	}
	if c.JSON {
		out := map[string]any{"cycle": res.Cycle.Cycle, "id": res.Cycle.ID, "target": res.Cycle.Target, "result": res.Result,
			"resumed": res.Resumed, "record": json.RawMessage(res.Record.Marshal())}
		if !res.Commit.IsZero() {
			out["commit"] = res.Commit.String()
		}
		if !res.Saved.IsZero() {
			out["saved"] = res.Saved.String()
		}
		if res.Verdict != nil {
			out["verdict"] = res.Verdict
		}
		if f := res.Cycle.Finish; f != nil && res.Cycle.Reverts == nil {
			if f.TargetAfter != "" {
				out["target_before"], out["target_after"], out["target_passes"] = f.TargetBefore, f.TargetAfter, f.TargetAfter == goals.Pass
			}
			if b, ok := beforeCounts(res.Cycle); ok {
				out["score_before"] = b.Score
			}
			if res.Result != ledger.Unchanged {
				out["score_after"] = f.Score
				out["failures"] = orEmpty(f.Failures)
				out["values"] = orEmpty(f.Values)
			}
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
	} else if res.Cycle.Reverts != nil { // a later revert, completed
		printRevert(e, l, res)
	} else if err := printFinish(e, l, res); err != nil {
		return err
	}
	if res.Result == ledger.Regressed && res.Cycle.Reverts == nil {
		return &recoverable{msg: fmt.Sprintf("cycle %d regressed: its work is reverted by %s and saved as %s", res.Cycle.Cycle, res.Commit.Short(), res.Saved.Short())}
	}
	return nil
}

func printFinish(e *env, l *cycle.Ledger, res *cycle.FinishResult) error {
	c, f := res.Cycle, res.Cycle.Finish
	w := bufio.NewWriter(e.stdout)
	if res.Result == ledger.Unchanged {
		fmt.Fprintf(w, "cycle %d (target %s): unchanged: nothing changed outside .agents/**, the goals files and the non_substantive paths\n", c.Cycle, c.Target)
		writeNotOwn(w, c)
		fmt.Fprintf(w, "recorded in the local journal; nothing was committed\n")
		writeIgnored(w, c, f.IgnoredChanged, f.IgnoredPut, f.IgnoredNotBack, false)
		return w.Flush()
	}
	fmt.Fprintf(w, "cycle %d (target %s): %s\n", c.Cycle, c.Target, res.Result)
	fmt.Fprintf(w, "  changed: %d file(s), +%d -%d lines\n", f.Delta.Files, f.Delta.Insertions, f.Delta.Deletions)
	writeRuler(w, f)
	if len(f.GateCommands) == 0 && res.Verdict != nil {
		why := "gate: [] in " + goals.FileName
		if f.GateFrom == "" {
			why = "none detected; set gate: in " + goals.FileName + " to run the project's tests"
		}
		fmt.Fprintf(w, "  gate: no test command (%s)\n", why)
	}
	if v := res.Verdict; v != nil {
		for _, cr := range v.Commands {
			status := "passed"
			if !cr.Passed {
				status = "failed: " + cr.Reason
			}
			from := ""
			if f.GateFrom != goals.FileName {
				from = " (detected from " + f.GateFrom + ")"
			}
			fmt.Fprintf(w, "  gate: %s%s %s (%.1fs)\n", termLine(cr.Command), from, termLine(status), cr.Duration)
			writeExcerpt(w, cr.Excerpt)
		}
		writeCensus(w, v, "")
		writeChanges(w, v, "")
	}
	if v := res.OwnVerdict; v != nil {
		fmt.Fprintf(w, "  with the cycle's own ruler:\n")
		for _, cr := range v.Commands {
			status := "passed"
			if !cr.Passed {
				status = "failed: " + cr.Reason
			}
			fmt.Fprintf(w, "    gate: %s %s (%.1fs)\n", termLine(cr.Command), termLine(status), cr.Duration)
			writeExcerpt(w, cr.Excerpt)
		}
		writeCensus(w, v, "  ")
		writeChanges(w, v, "  ")
	}
	for _, x := range f.Failures {
		switch x.What {
		case "ruler":
			fmt.Fprintf(w, "  ruler only: %s\n", termLine(x.Reason))
		case "hypothesis", "scope":
			fmt.Fprintf(w, "  %s: %s\n", termLine(x.Name), termLine(x.Reason))
		}
	}
	if h := f.Holdout; h != nil {
		what := "regressed"
		if h.Regressed == 0 {
			what = "none regressed"
		}
		fmt.Fprintf(w, "  holdout: %d → %d passing of %d, %s (see git evolve goals measure --holdout)\n", h.Before, h.After, h.Total, what)
	}
	if h := res.Hook; h != nil {
		fmt.Fprintf(w, "  hook: the %s hook refused the commit: %s\n", termLine(h.Hook), termLine(h.Reason))
		writeExcerpt(w, goals.Excerpt(h.Output))
	}
	if line := targetLine(c.Target, f.TargetBefore, f.TargetAfter); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if b, ok := beforeCounts(c); ok {
		fmt.Fprintf(w, "  goals: %d → %d passing of %d, score %.1f → %.1f\n", b.Passing, f.Passing, f.Total, b.Score, f.Score)
	} else {
		fmt.Fprintf(w, "  goals: %d passing of %d, score %.1f\n", f.Passing, f.Total, f.Score)
	}
	for _, v := range f.Values {
		fmt.Fprintf(w, "  value %s: %s\n", v.GoalID, valueLine(v))
	}
	if len(f.TimedOut) > 0 {
		fmt.Fprintf(w, "  timed out: %s\n", strings.Join(f.TimedOut, ", "))
	}
	if len(f.CannotRun) > 0 {
		fmt.Fprintf(w, "  cannot run: %s (see git evolve goals measure)\n", strings.Join(f.CannotRun, ", "))
	}
	writeNotOwn(w, c)
	subject := ""
	if ci, err := l.Repo().Commit(res.Commit); err == nil {
		subject = ci.Subject()
	}
	if res.Result == ledger.Regressed {
		fmt.Fprintf(w, "saved the working tree as %s (%s)\n", res.Saved.Short(), strings.TrimPrefix(ledger.RegressedRef(c.ID), "refs/"))
		if how := saveHowTo(l.Repo(), res.Saved); how != "" {
			fmt.Fprintf(w, "  get it back: %s\n", how)
		}
		what := c.Start[:7] + ".." + f.Head[:7] + " and the uncommitted work"
		if c.Start == f.Head {
			what = "the uncommitted work"
		}
		fmt.Fprintf(w, "reverted %s with %s %q; the record is a note on it\n", what, res.Commit.Short(), subject)
	} else {
		switch f.Delivery {
		case cycle.DeliverAmend:
			fmt.Fprintf(w, "the agent's commit %s %q carries the cycle's trailers as %s; the record is a note on it\n", f.Head[:7], subject, res.Commit.Short())
		case cycle.DeliverHead:
			fmt.Fprintf(w, "the record is a note on the agent's commit %s %q (another ref holds it: not rewritten, no trailers added)\n", res.Commit.Short(), subject)
		default:
			fmt.Fprintf(w, "committed %s %q; the record is a note on it\n", res.Commit.Short(), subject)
		}
	}
	writeIgnored(w, c, f.IgnoredChanged, f.IgnoredPut, f.IgnoredNotBack, res.Result == ledger.Regressed)
	return w.Flush()
}

// writeIgnored says what became of the ignored files cycle c's start kept
// that the cycle removed or changed (changed: "- path", "M path"): put
// back (a regressed or aborted cycle: putBack), or left as the cycle left
// them; and where they are kept as the cycle found them.
func writeIgnored(w io.Writer, c *cycle.OpenCycle, changed, put, notBack []string, putBack bool) {
	kept := strings.TrimPrefix(cycle.IgnoredRef(c.ID), "refs/")
	if !putBack {
		if len(changed) > 0 {
			paths := make([]string, len(changed))
			for i, x := range changed {
				paths[i] = x[min(2, len(x)):]
			}
			fmt.Fprintf(w, "ignored files the cycle removed or changed: %s (as the cycle found them: %s)\n", termLine(listSome(paths, 10)), kept)
		}
		return
	}
	if len(put) > 0 {
		fmt.Fprintf(w, "put back %d ignored file(s) the cycle removed or changed: %s\n", len(put), termLine(listSome(put, 10)))
	}
	for _, x := range notBack {
		fmt.Fprintf(w, "not put back: %s; as the cycle found it: %s)\n", termLine(strings.TrimSuffix(x, ")")), kept)
	}
}

// listSome joins the first n items with commas, and says how many more.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// writeChanges prints the goals a verdict found regressed, flaky or
// unknown, each line indented by indent beyond the usual.
func writeChanges(w io.Writer, v *gate.Verdict, indent string) {
	for _, ch := range v.Changes {
		switch {
		case ch.Regressed:
			fmt.Fprintf(w, "  %sregressed: %s: %s\n", indent, ch.GoalID, termLine(ch.Reason))
			writeExcerpt(w, ch.Excerpt)
		case ch.Flaky:
			fmt.Fprintf(w, "  %sflaky: %s failed, then passed when measured again\n", indent, ch.GoalID)
		case ch.Reason != "":
			fmt.Fprintf(w, "  %sunknown: %s: %s\n", indent, ch.GoalID, termLine(ch.Reason))
		}
	}
}

// writeCensus prints how many tests passed before and in a judgment, and
// those that vanished or are hidden (or were only once: flaky).
func writeCensus(w io.Writer, v *gate.Verdict, indent string) {
	if v.CensusBefore == nil || (v.Census == nil && !v.Dropped && len(v.Hidden) == 0) {
		return
	}
	after, runner := 0, v.CensusBefore.Runner
	if v.Census != nil {
		after, runner = len(v.Census.Passed), v.Census.Runner
	}
	fmt.Fprintf(w, "  %stests: %d → %d passed (counted by %s)\n", indent, len(v.CensusBefore.Passed), after, runner)
	if v.CensusFlaky {
		fmt.Fprintf(w, "  %sflaky: tests vanished or hidden in the first count and not when counted again do not count\n", indent)
	}
	for _, x := range v.Failures() {
		if x.What == "census" {
			fmt.Fprintf(w, "  %sregressed: %s\n", indent, termLine(x.Reason))
			writeExcerpt(w, x.Excerpt)
		}
	}
}

// writeRuler prints the ruler files the cycle changed, and those a person
// accepted.
func writeRuler(w io.Writer, f *cycle.Finishing) {
	for _, ch := range f.RulerChanges {
		how := "held as the cycle started for the first judgment"
		if ch.Accepted {
			how = "accepted"
		}
		fmt.Fprintf(w, "  ruler: %s %s (%s): %s\n", ch.Status, termLine(ch.Path), ch.Why, how)
	}
	for _, a := range f.Accepted {
		fmt.Fprintf(w, "  accepted: %s by %s: %s\n", termLine(a.Path), termLine(a.By), termLine(a.Why))
	}
}

func beforeCounts(c *cycle.OpenCycle) (goals.Summary, bool) {
	var s goals.Snapshot
	if err := json.Unmarshal(c.Before, &s); err != nil || s.Summary.Total == 0 {
		return goals.Summary{}, false
	}
	return s.Summary, true
}

// writeExcerpt prints the end of a failure's output under its line,
// indented, with what a terminal would act on escaped and its secrets
// redacted (again: a record an older git-evolve wrote may hold them).
func writeExcerpt(w io.Writer, excerpt string) {
	if excerpt = strings.TrimSpace(excerpt); excerpt != "" {
		fmt.Fprintln(w, indentLines(termSafe(redact.String(excerpt)), "    | "))
	}
}

// targetLine says whether the cycle's target goal passes now ("" when the
// target is no goal).
func targetLine(target, before, after string) string {
	switch {
	case after == "":
		return ""
	case after == goals.Pass && before != goals.Pass:
		return fmt.Sprintf("target now passes: %s (%s → pass)", target, orDash(before))
	case after == goals.Pass:
		return fmt.Sprintf("target passes: %s (pass → pass)", target)
	case before == goals.Pass:
		return fmt.Sprintf("target no longer passes: %s (pass → %s)", target, after)
	}
	return fmt.Sprintf("target still failing: %s (%s → %s)", target, orDash(before), after)
}

// valueLine is a continuous goal's value before and after, against its
// threshold.
func valueLine(v gate.Value) string {
	side := "meets"
	if !v.Meets {
		side = "misses"
	}
	return fmt.Sprintf("%s → %s, %s the threshold %s (%s is better)", cycletext.Number(v.Before), cycletext.Number(v.After), side, cycletext.Number(&v.Threshold), v.Direction)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orEmpty is a list that prints as [] rather than null in JSON.
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// writeNotOwn says what of the working tree the finish did not take as the
// cycle's work, and what of the user's the cycle changed.
func writeNotOwn(w io.Writer, c *cycle.OpenCycle) {
	f := c.Finish
	if len(f.Predating) > 0 {
		fmt.Fprintf(w, "  left as they are, not the cycle's work: %s (there, ignored, when it started)\n", termLine(strings.Join(f.Predating, ", ")))
	}
	if len(f.Leftover) > 0 && f.Result != ledger.Unchanged {
		fmt.Fprintf(w, "  %s\n", cycle.LeftoverLine(f.Leftover))
	}
	if len(f.Preexisting) > 0 && f.Result != ledger.Regressed {
		fmt.Fprintf(w, "  the cycle changed or removed what the working tree held of its own at its start: %s; as it was: %s\n",
			termLine(strings.Join(f.Preexisting, ", ")), strings.TrimPrefix(cycle.BaseRef(c.ID), "refs/"))
	}
}

// repoPath is the path p a user gave (from the working directory dir,
// -C's when it is given) as a path from the top of the repository, top:
// the path itself, with slashes, when it does not lead inside top from
// there.
func repoPath(top, dir, p string) string {
	if top != "" {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, p)
		}
		if rel, err := filepath.Rel(top, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return path.Clean(filepath.ToSlash(p))
}

// saveHowTo says how to get a file back from a save of the working tree
// (gitstore.CommitSave): as the working tree had it, and, when the save
// keeps the index (its second parent), as the index had it. "" when the
// save is not in this clone.
func saveHowTo(repo *gitstore.Repo, saved gitstore.Hash) string {
	ci, err := repo.Commit(saved)
	if err != nil {
		return ""
	}
	s := saved.Short()
	how := fmt.Sprintf("git restore --source=%s -- PATH (the working tree's)", s)
	if len(ci.Parents) == 2 {
		how += fmt.Sprintf(", git restore --staged --source=%s^2 -- PATH (the index's)", s)
	}
	return how
}
