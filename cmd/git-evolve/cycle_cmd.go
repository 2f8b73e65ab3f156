package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/share"
)

type cycleCmd struct {
	Start  cycleStartCmd  `cmd:"" help:"Open a cycle: measure the goals, take the next number, name the target."`
	Status cycleStatusCmd `cmd:"" help:"Show the open cycle: its start, how long it has run, what it has changed."`
	Finish cycleFinishCmd `cmd:"" help:"Judge the open cycle's work: commit it, or revert it when a goal regressed, and record the cycle."`
	Abort  cycleAbortCmd  `cmd:"" help:"Close the open cycle without a productive record, saving its work first."`
}

type cycleStartCmd struct {
	goalsFile
	progressFlag
	Target string `complete:"goals" help:"The goal to work on (default: the failing goal with the highest weight)." placeholder:"ID"`
	Claim  bool   `help:"Reserve the cycle's number on the remote first (refs/evolve/claims/<n>, a create-only push), so that clones which claim never take the same number."`
	Remote string `complete:"remotes" help:"The remote to claim on (default: the current branch's upstream remote, else origin)." placeholder:"REMOTE"`
	Item   string `help:"Take this item of the work queue (.agents/rpi/next-work.jsonl): it is claimed first, consumed when the cycle improves, released when it does not." placeholder:"ID"`
	JSON   bool   `name:"json" help:"Print the open cycle as JSON."`
}

func (cycleStartCmd) Help() string {
	return `Refuses while another cycle is open in this worktree, or while git has a merge
or rebase in progress. Measures every goal as the cycle's "before" (the goals
file must be trusted: see git evolve trust) in the judging checkout of HEAD,
where the finish will measure the cycle's work, with the holdout checks, if
any; counts the tests the gate runs there, where their runner can tell (go
test, pytest, cargo test, TAP), unless the last finish judged that same tree;
takes the next cycle number (reserved, so that no other worktree or record
takes it), keeps the start commit from gc with refs/evolve/cycles/<id>/start,
and prints the cycle, its target and the failing goals by weight.

It keeps the working tree's ignored files, within git config
evolve.ignoredBudget (64m by default; 0 keeps none), under
refs/evolve/cycles/<id>/ignored, and says in one line what it kept and what
it left out (trees tools make again, such as node_modules/, and the files
past the budget): a regressed or aborted cycle puts back those it removed or
changed.`
}

func (c *cycleStartCmd) Run(e *env) error {
	f, data, err := c.load(e)
	if err != nil {
		return err
	}
	if c.Target != "" && !hasGoal(f, c.Target) && !hasDirective(f, c.Target) {
		what := "goal"
		if f.Markdown {
			what = "goal or directive"
		}
		return usagef("--target: no %s %q in %s", what, c.Target, f.Path)
	}
	l, err := e.Cycles()
	if err != nil {
		return err
	}
	if open, err := l.Current(); err == nil {
		return &usageError{msg: fmt.Sprintf("cycle %d (target %s) is already open in this worktree, since %s", open.Cycle, open.Target, open.StartedAt),
			hint: "see it with 'git evolve cycle status'; drop it with 'git evolve cycle abort'"}
	}
	if err := requireTrust(e, goals.DigestOf(f.Name(), data), f.Path); err != nil {
		return err
	}
	if _, err := l.Repo().WorkTree(); err != nil {
		return err
	}
	head, err := l.Repo().ResolveCommits("HEAD")
	if err != nil {
		return &usageError{msg: "there is no commit to start a cycle from", hint: "commit first"}
	}
	// A cycle ends in a commit and a record (its finish, or its abort):
	// who makes them is known before one is opened, not after its work.
	if err := l.Repo().CheckIdentity(); err != nil {
		return err
	}
	g, detected, err := l.StartGate(head[0], f)
	if err != nil {
		return err
	}
	c.progressFlag.set(e)
	onCheck, onDone, done := e.goalProgress("measuring goals", len(f.Goals))
	started, err := l.MeasureStart(e.ctx, head[0], f, g, goals.Options{Now: e.now, OnCheck: onCheck, OnDone: onDone})
	done()
	if err != nil {
		return err
	}
	before, census := started.Goals, started.Census
	if err := e.ctx.Err(); err != nil {
		return errInterrupted
	}
	failing := before.FailingByWeight()
	target := c.Target
	if target == "" && c.Item != "" {
		target = c.Item
	}
	if target == "" {
		if len(failing) == 0 {
			return &usageError{msg: "every goal passes, skips or cannot run here: there is no failing goal to target",
				hint: "give --target ID to work on a goal anyway"}
		}
		target = failing[0].GoalID
	}
	var claim func(int) (int, error)
	if c.Claim {
		remote, err := pickRemote(l.Repo(), c.Remote)
		if err != nil {
			return err
		}
		claim = func(next int) (int, error) {
			_, committer, err := l.Repo().Identity()
			if err != nil {
				return 0, err
			}
			n, err := share.Claim(l.Repo(), remote, next, fmt.Sprintf("git evolve: cycle claimed by %s (target %s)", committer.Name, target))
			if err == nil {
				fmt.Fprintf(e.stderr, "git-evolve: claimed cycle %d on %s (%s%d)\n", n, remote, share.ClaimsPrefix, n)
			}
			return n, err
		}
	} else if c.Remote != "" {
		return usagef("--remote goes with --claim")
	}
	so, err := started.StartOptions(cycle.StartOptions{Target: target, Era: f.Era, GoalsFile: data, GoalsName: f.Name(), Claim: claim})
	if err != nil {
		return err
	}
	var st *loop.State
	if c.Item != "" {
		if st, err = loadState(e, ""); err != nil {
			return err
		}
		if _, err := st.Queue.Claim(c.Item, loop.Claimant(), st.Config.Lease); err != nil {
			return err
		}
		so.Item, so.Rung = c.Item, loop.RungHarvested
	}
	open, err := l.StartCycle(so)
	if err != nil {
		if st != nil {
			if _, rerr := st.Queue.Release(c.Item, false); rerr != nil {
				fmt.Fprintf(e.stderr, "git-evolve: warning: the claim on %s stays: %v\n", c.Item, rerr)
			}
		}
		return err
	}
	start, _ := gitstore.ParseHash(open.Start)
	keepSeedFitness(e, l.Repo(), before, open.Cycle, start)
	if c.JSON {
		defer sweep(e, l)
		b, _ := json.Marshal(open)
		_, err := fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	defer sweep(e, l)
	fmt.Fprintf(e.stdout, "cycle %d started on %s: target %s\n", open.Cycle, open.Start[:7], open.Target)
	fmt.Fprintf(e.stdout, "gate: %s\n", gateLine(f, g, detected))
	fmt.Fprintf(e.stdout, "goals: score %.1f, %s\n", before.Summary.Score, before.Summary.Counts())
	for _, r := range failing {
		status := "failing"
		if r.Result == goals.Timeout {
			status = "timeout"
		}
		fmt.Fprintf(e.stdout, "  %-8s %-24s weight %d\n", status, r.GoalID, r.Weight)
	}
	for _, r := range before.CannotRun() {
		fmt.Fprintf(e.stdout, "  error    %-24s weight %d  %s (not a target)\n", r.GoalID, r.Weight, termSafe(r.Reason))
	}
	if census != nil {
		fmt.Fprintf(e.stdout, "tests: %s (counted by %s)\n", census.Summary(), census.Runner)
	}
	if h := started.Holdout; h != nil {
		fmt.Fprintf(e.stdout, "holdout: %d check(s), %d passing (never told to an agent)\n", len(h.Goals), started.HoldoutBefore.Summary.Passing)
	}
	if line := open.Ignored.Line(); line != "" {
		fmt.Fprintf(e.stdout, "%s\n", termLine(line))
	}
	for _, w := range rulerWarnings(e, f) {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s\n", termLine(w))
	}
	if h := before.MissingHint(); h != "" {
		fmt.Fprintf(e.stderr, "git-evolve: hint: %s\n", termSafe(h))
	}
	return nil
}

// cycleDelta is an open cycle's work so far: the paths it changed (those
// the working tree held of its own at the start, unchanged since, left
// out), the substantive ones and their lines, as the finish would take it.
type cycleDelta struct {
	changed, substantive, preexisting []string
	ins, del                          int
	byPath                            map[string]cycle.FileDelta
}

func openDelta(l *cycle.Ledger, open *cycle.OpenCycle) (*cycleDelta, error) {
	var extra []string
	if f, _, err := l.CycleGoals(open); err == nil {
		extra = f.NonSubstantive // the ruler the cycle is judged by
	}
	// The delta the finish would take now, counted as git counts it.
	deltas, err := l.WorktreeDelta(open, extra)
	if err != nil {
		return nil, err
	}
	// What the working tree held of its own when the cycle started, and
	// still holds as it was, is not the cycle's work.
	var all []string
	for _, d := range deltas {
		all = append(all, d.Path)
	}
	left, preexisting, err := l.NotOwn(open, all)
	if err != nil {
		return nil, err
	}
	d := &cycleDelta{preexisting: preexisting, byPath: map[string]cycle.FileDelta{}}
	byPath := d.byPath
	for _, x := range deltas {
		if !left[x.Path] {
			d.changed = append(d.changed, x.Path)
			byPath[x.Path] = x
		}
	}
	d.substantive = gate.Substantive(d.changed, extra...)
	for _, p := range d.substantive {
		d.ins += byPath[p].Insertions
		d.del += byPath[p].Deletions
	}
	return d, nil
}

type cycleStatusCmd struct {
	JSON bool `name:"json" help:"Print {open, cycle, id, target, start, started_at, elapsed_s, changed, substantive}."`
}

func (c *cycleStatusCmd) Run(e *env) error {
	l, err := e.Cycles()
	if err != nil {
		return err
	}
	open, err := l.Current()
	if errors.Is(err, cycle.ErrNoOpenCycle) {
		if c.JSON {
			fmt.Fprintln(e.stdout, `{"open":false}`)
			return nil
		}
		fmt.Fprintln(e.stdout, "no cycle is open in this worktree")
		return nil
	}
	if err != nil {
		return err
	}
	d, err := openDelta(l, open)
	if err != nil {
		return err
	}
	changed, substantive, preexisting, ins, del, byPath := d.changed, d.substantive, d.preexisting, d.ins, d.del, d.byPath
	var finishing string
	if open.Finish != nil {
		head, _ := l.Repo().ResolveCommits("HEAD")
		var h gitstore.Hash
		if len(head) > 0 {
			h = head[0]
		}
		finishing = open.State(h)
	}
	elapsed := 0.0
	if t, err := time.Parse(time.RFC3339, open.StartedAt); err == nil {
		elapsed = e.now().Sub(t).Seconds()
	}
	if c.JSON {
		out := map[string]any{"open": true, "cycle": open.Cycle, "id": open.ID,
			"target": open.Target, "start": open.Start, "started_at": open.StartedAt, "elapsed_s": elapsed,
			"changed": nonNil(changed), "substantive": nonNil(substantive), "insertions": ins, "deletions": del,
			"preexisting_changed": nonNil(preexisting)}
		if open.Finish != nil {
			out["finishing"] = map[string]any{"state": finishing, "result": open.Finish.Result, "commit": open.Finish.Commit, "saved": open.Finish.Saved}
		}
		if open.Aborting != nil {
			out["aborting"] = map[string]any{"reason": open.Aborting.Reason}
		}
		_, err := fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
		return err
	}
	fmt.Fprintf(e.stdout, "cycle %d (id %s): target %s\n", open.Cycle, open.ID, open.Target)
	fmt.Fprintf(e.stdout, "started %s on %s, %s ago\n", open.StartedAt, open.Start[:7], time.Duration(elapsed*float64(time.Second)).Round(time.Second))
	if open.Finish != nil {
		fmt.Fprintf(e.stdout, "finishing: %s\n", finishing)
		fmt.Fprintf(e.stdout, "  (git evolve cycle finish completes it)\n")
	}
	if open.Aborting != nil {
		fmt.Fprintf(e.stdout, "aborting: an abort began and did not complete (reason: %s)\n", termLine(cycletext.Dash(open.Aborting.Reason)))
		fmt.Fprintf(e.stdout, "  (git evolve cycle abort completes it)\n")
	}
	fmt.Fprintf(e.stdout, "changed since the start: %d file(s), %d substantive (+%d -%d lines)\n", len(changed), len(substantive), ins, del)
	for _, p := range substantive {
		if d := byPath[p]; d.Binary {
			fmt.Fprintf(e.stdout, "  %s (binary)\n", p)
		} else {
			fmt.Fprintf(e.stdout, "  %s +%d -%d\n", p, d.Insertions, d.Deletions)
		}
	}
	if len(substantive) < len(changed) {
		fmt.Fprintf(e.stdout, "  (and %d in .agents/**, the goals files or non_substantive paths)\n", len(changed)-len(substantive))
	}
	if len(preexisting) > 0 {
		fmt.Fprintf(e.stdout, "changed or removed of what the working tree held of its own at the start (kept as it was in %s): %s\n",
			strings.TrimPrefix(cycle.BaseRef(open.ID), "refs/"), termLine(strings.Join(preexisting, ", ")))
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type cycleAbortCmd struct {
	Reason string `help:"Why the cycle is aborted (kept in the record)." placeholder:"TEXT"`
	JSON   bool   `name:"json" help:"Print what was done as one JSON object: {cycle, id, saved, saved_ref, ignored_put, ignored_not_put_back}."`
}

func (cycleAbortCmd) Help() string {
	return `The working tree, committed or not (untracked files too, ignored ones not), is
first saved as a commit under refs/evolve/cycles/<id>/aborted; the cycle is
then recorded as unchanged and aborted (with --reason), in the note on the
commit it started from: a shared record, so that reviewers see it (listings
show it as aborted). Nothing in the working tree or the index changes, but
for the ignored files the cycle's start kept (refs/evolve/cycles/<id>/ignored)
that the cycle removed or changed: they are put back as the start found them,
the cycle's versions saved with its work.`
}

func (c *cycleAbortCmd) Run(e *env) error {
	l, err := e.CycleLedger()
	if err != nil {
		return err
	}
	if err := runsCycle(e, l, "git evolve cycle abort"); err != nil {
		return err
	}
	open, saved, err := l.AbortCycle(c.Reason, cycle.AbortNotes{})
	if errors.Is(err, cycle.ErrNoOpenCycle) {
		return &usageError{msg: "no cycle is open in this worktree: nothing to abort"}
	}
	if err != nil {
		return err
	}
	if c.JSON {
		out := struct {
			Cycle    int      `json:"cycle"`
			ID       string   `json:"id"`
			Saved    string   `json:"saved"`
			SavedRef string   `json:"saved_ref"`
			Put      []string `json:"ignored_put"`
			NotBack  []string `json:"ignored_not_put_back"`
		}{Cycle: open.Cycle, ID: open.ID, Saved: saved.String(), SavedRef: cycle.SavedRef(open.ID), Put: []string{}, NotBack: []string{}}
		if a := open.Aborting; a != nil {
			out.Put = append(out.Put, a.IgnoredPut...)
			out.NotBack = append(out.NotBack, a.IgnoredNotBack...)
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
	} else {
		fmt.Fprintf(e.stdout, "aborted cycle %d: its work is saved as %s (%s); the working tree is as it was\n",
			open.Cycle, saved.Short(), strings.TrimPrefix(cycle.SavedRef(open.ID), "refs/"))
		if a := open.Aborting; a != nil {
			writeIgnored(e.stdout, open, a.IgnoredChanged, a.IgnoredPut, a.IgnoredNotBack, true)
		}
	}
	settle(e, l, open, ledger.Unchanged, true)
	return nil
}

// runsCycle refuses to let the agent of a loop run finish or abort the
// cycle the run opened: the driver does. A run owns the worktree while it
// holds run.lock, whatever the caller's environment says: a refusal then is
// noted for the driver, which marks it in the cycle's record.
func runsCycle(e *env, l *cycle.Ledger, what string) error {
	if err := refuseWhileRunOwns(e, l.Repo(), what, "its driver finishes or aborts the cycle it opened", false); err != nil {
		return err
	}
	id := e.getenv("EVOLVE_RUN_ID")
	if id == "" {
		return nil
	}
	if open, err := l.Current(); err == nil && open.Run == id {
		return &usageError{msg: fmt.Sprintf("%s is refused inside loop run %s: the driver finishes the cycle it opened", what, id),
			hint: "end the agent: the driver then finishes the cycle (exit 0) or aborts it (a non-zero exit)"}
	}
	return nil
}

// refuseWhileRunOwns refuses command what while a git evolve run drives
// the worktree (any worktree of the repository, when shared: the command
// changes what they share), and notes the refusal for each such driver.
func refuseWhileRunOwns(e *env, repo *gitstore.Repo, what, why string, shared bool) error {
	owning := []string{}
	if shared {
		var err error
		if owning, err = loop.RunsOwning(repo.CommonDir()); err != nil {
			return err
		}
	} else if owns, err := loop.RunOwns(repo.GitDir()); err != nil {
		return err
	} else if owns {
		owning = append(owning, repo.GitDir())
	}
	if len(owning) == 0 {
		return nil
	}
	for _, dir := range owning {
		if err := loop.NoteRefused(dir, what, e.now()); err != nil {
			fmt.Fprintf(e.stderr, "git-evolve: warning: the refusal was not noted for the run: %v\n", err)
		}
	}
	where := "this worktree"
	if shared {
		where = "a worktree of this repository"
	}
	return &cycle.Busy{Msg: fmt.Sprintf("%s is refused: a git evolve run drives %s (%s); the cycle's record will say this was tried", what, where, why),
		Hint: "stop the run first (Ctrl-C in its terminal, or git evolve stop, which halts it before its next cycle)"}
}

// settle brings the cycle's queue or roadmap item up to date with how it
// ended. A failure is a warning: the cycle is recorded, and the driver
// reconciles claims whose cycle has ended.
func settle(e *env, l *cycle.Ledger, c *cycle.OpenCycle, result string, aborted bool) {
	if c.Item == "" {
		return
	}
	top, err := l.Repo().WorkTree()
	if err == nil {
		var st *loop.Settlement
		output := ""
		if f := c.Finish; f != nil {
			output = loop.FailureText("", f.Failures)
		}
		st, err = loop.Settle(l.Repo(), top, c, result, aborted, output, e.now)
		if err == nil && st.Action != "" {
			fmt.Fprintf(e.stderr, "git-evolve: item %s: %s\n", st.Item, st.Action)
		}
		if err == nil && st.Blocker != "" {
			fmt.Fprintf(e.stderr, "git-evolve: item %s: blocked by %s, as its failure says: the roadmap works %s first\n", termSafe(st.Item), termSafe(st.Blocker), termSafe(st.Blocker))
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: item %s was not settled: %v\n", c.Item, err)
	}
}

// gateLine says what a cycle's gate runs and where that comes from.
func gateLine(f *goals.File, g goals.Gate, detected *gate.Detected) string {
	switch {
	case detected != nil:
		return detected.Command + " (detected from " + detected.From + "; set gate: in " + goals.FileName + " to change it, gate: [] for none)"
	case f.Gate.Set && len(g.Commands) == 0:
		return "none (gate: [] in " + goals.FileName + ")"
	case f.Gate.Set:
		return termLine(strings.Join(g.Commands, "; ")) + " (from " + goals.FileName + ")"
	}
	if f.Markdown {
		return "none: no test command detected (" + goals.MarkdownName + " names no gate; a " + goals.FileName + " with a gate: key does)"
	}
	return "none: no test command detected (set gate: in " + goals.FileName + " to run the project's tests)"
}

// sweep removes the cycle refs interrupted commands left and says so, and
// names git lock files left by a git that was killed (see cycle.Sweep).
func sweep(e *env, l *cycle.Ledger) {
	left, err := l.Sweep()
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: looking for what interrupted commands left: %v\n", err)
		return
	}
	for _, ref := range left.Removed {
		fmt.Fprintf(e.stderr, "git-evolve: removed %s, left by an interrupted git evolve\n", ref)
	}
	stuck := make([]string, 0, len(left.Stuck))
	for ref := range left.Stuck {
		stuck = append(stuck, ref)
	}
	sort.Strings(stuck)
	for _, ref := range stuck {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s is left behind: %s\n", ref, termLine(left.Stuck[ref]))
	}
	if len(stuck) > 0 {
		fmt.Fprintf(e.stderr, "git-evolve: hint: if no git process is running, remove the .lock file git names (a git that was killed left it); the next cycle start or finish removes what is left\n")
	}
	for _, lock := range left.Locks {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s is more than %s old: a git lock file left by a git process that was killed; if no git process is running, remove it\n", lock, cycle.StaleLockAge)
	}
}
