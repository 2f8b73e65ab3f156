package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/fitness"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/mirror"
)

type goalsCmd struct {
	Validate goalsValidateCmd `cmd:"" help:"Check GOALS.yaml (or GOALS.md) and report every problem with file, line and column."`
	Measure  goalsMeasureCmd  `cmd:"" help:"Run the goals' checks and print a fitness snapshot."`
	Baseline goalsBaselineCmd `cmd:"" help:"Capture the baseline of the goals file's era, once per era."`
	History  goalsHistoryCmd  `cmd:"" help:"Read the fitness snapshots back: each goal's result on each measured commit."`
}

// goalsFile is the goals file a command reads.
type goalsFile struct {
	File string `short:"f" help:"The goals file (default: GOALS.yaml at the top of the working tree, else GOALS.md)." placeholder:"PATH"`
}

// path returns the goals file's path.
func (g goalsFile) path(e *env) (string, error) {
	path, _, err := g.locate(e)
	return path, err
}

// locate returns the goals file's path, and whether both GOALS.yaml and
// GOALS.md are there (GOALS.yaml is read).
func (g goalsFile) locate(e *env) (string, bool, error) {
	if g.File != "" {
		return e.path(g.File), false, nil
	}
	repo, err := e.Repo()
	if err != nil {
		return "", false, err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return "", false, err
	}
	path, both := goals.Locate(top)
	return path, both, nil
}

// goalsHint says how to start a goals file.
const goalsHint = "create GOALS.yaml in the repository root with fitness goals (version, goals: id, description, check, weight), or GOALS.md with a ## Gates table; see git evolve goals validate -h"

// load reads and checks the goals file; a missing or invalid file is a
// usage error that says what to do. The keys the file has that the schema
// does not know are warned about once for each content of the file (its
// era), not on every command: goals validate always lists them.
func (g goalsFile) load(e *env) (*goals.File, []byte, error) { return g.read(e, false) }

func (g goalsFile) read(e *env, alwaysWarn bool) (*goals.File, []byte, error) {
	path, both, err := g.locate(e)
	if err != nil {
		return nil, nil, err
	}
	if both {
		fmt.Fprintf(e.stderr, "git-evolve: notice: %s\n", goals.BothNotice)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &usageError{msg: "No goals to measure: " + path + " does not exist", verbatim: true,
			hint: goalsHint}
	}
	if err != nil {
		return nil, nil, err
	}
	f, err := goals.Parse(displayPath(e, path), data)
	if f != nil && len(f.Warnings) > 0 && (alwaysWarn || firstWarning(e, f.Era)) {
		for _, w := range f.Warnings {
			fmt.Fprintf(e.stderr, "git-evolve: warning: %s%s\n", w, w.Suffix())
		}
	}
	// What is left out is not measured: said on every command that reads
	// the file (goals validate fails on it instead).
	if f != nil && len(f.LeftOut) > 0 && !alwaysWarn {
		for _, p := range f.LeftOut {
			fmt.Fprintf(e.stderr, "git-evolve: warning: %s (left out)\n", p)
		}
		fmt.Fprintf(e.stderr, "git-evolve: hint: the other %d goal(s) are measured; git evolve goals validate lists what is left out\n", len(f.Goals))
	}
	var ps goals.Problems
	if errors.As(err, &ps) {
		return nil, data, &problemsError{ps: ps}
	}
	return f, data, err
}

// firstWarning reports whether the goals file of era has not been warned
// about in this repository yet, and notes that it now is (in
// evolve/goals-warned under the git directory, the last 64 eras). Outside
// a repository, or when the note cannot be kept, it warns every time.
func firstWarning(e *env, era string) bool {
	repo, err := e.Repo()
	if err != nil {
		return true
	}
	path := filepath.Join(repo.CommonDir(), "evolve", "goals-warned")
	data, _ := os.ReadFile(path)
	eras := strings.Fields(string(data))
	if slices.Contains(eras, era) {
		return false
	}
	eras = append(eras, era)
	eras = eras[max(0, len(eras)-64):]
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = os.WriteFile(path, []byte(strings.Join(eras, "\n")+"\n"), 0o644)
	}
	return true
}

// problemsError is an invalid goals file: a usage error listing each
// problem on a line of its own. Measured, when not 0, is how many goals are
// measured nonetheless: the problems are entries of a GOALS.md left out.
type problemsError struct {
	ps       goals.Problems
	measured int
}

func (e *problemsError) Error() string {
	path := "the goals file"
	if len(e.ps) > 0 {
		path = e.ps[0].Path
	}
	if e.measured > 0 {
		return fmt.Sprintf("%s has %d problem(s): the other %d goal(s) are measured without the entries left out", path, e.ps.Errors(), e.measured)
	}
	return fmt.Sprintf("No goals to measure: %s has %d problem(s)", path, e.ps.Errors())
}

func displayPath(e *env, path string) string {
	if rel, err := filepath.Rel(e.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

type goalsValidateCmd struct {
	goalsFile
	JSON bool `name:"json" help:"Print {valid, goals, era, problems: [{file, line, column, message}]}."`
}

func (goalsValidateCmd) Help() string {
	return `The schema: version (1-3), mission, goals (each with id in kebab-case, unique;
description; check, a shell command: exit 0 pass, 77 skip, 126 or 127 error
(it cannot run here), anything else fail, past its timeout timeout; weight 1-10; type health|architecture|quality|meta; pillar;
tags; timeout such as 90s; continuous {metric, threshold, direction
higher|lower, tolerance, value: a regular expression whose first group is the
number, else the last number in the output; value_file: a file the check
writes, relative to where it runs, read for the number instead of the output:
a Go cover profile's coverage, a JUnit report's passing test cases, else
value or its last number}), and gate: the project's test
command(s) (gate: [] none; without a gate key, or with only gate: {timeout:
10m}, the test command detected from the tree); non_substantive: paths whose changes do not count as a cycle's
work, beside .agents/**, GOALS.yaml and GOALS.md ("dir/**" or a path.Match
pattern); ruler: more paths that judge a cycle, held as they were when it
started (a pattern that matches no file git tracks, or every one, is warned
about). Exit 0 when the file is valid, 10 when it is not.

GOALS.md (read when there is no GOALS.yaml) holds the goals in the table of
its "## Gates" section: | ID | Check | Weight | Description | Tags | (Type,
Pillar, Timeout and Pass When columns too), the check in backticks, \| for a
pipe inside a cell (even between backticks); its "## Directives" section holds
numbered "### N. Title" entries with prose and a **Steer:**
increase|decrease|hold|explore|complete line (and an optional **Directive
ID:**). The check is the cell's code span: text beside it is prose, warned
about and not run. A row or a directive that cannot be read is left out: the
other goals are measured, and validate names it and exits 10. See
docs/goals.md.`
}

func (c *goalsValidateCmd) Run(e *env) error {
	f, _, err := c.read(e, true)
	if err == nil && len(f.LeftOut) > 0 {
		// The file is measured without them, but it is not valid.
		err = &problemsError{ps: f.LeftOut, measured: len(f.Goals)}
	}
	var pe *problemsError
	if c.JSON {
		out := map[string]any{"valid": err == nil, "problems": []any{}}
		if f != nil {
			out["goals"], out["era"] = len(f.Goals), f.Era
			if f.Markdown {
				out["directives"], out["directive_gaps"] = len(f.Directives), len(f.Gaps())
			}
		}
		if errors.As(err, &pe) {
			var ps []any
			all := pe.ps
			if f != nil {
				all = append(slices.Clone(all), f.Warnings...)
			}
			for _, p := range all {
				ps = append(ps, map[string]any{"file": p.Path, "line": p.Line, "column": p.Col, "message": p.Msg, "warning": p.Warning})
			}
			out["problems"] = ps
			fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
			return &usageError{msg: pe.Error(), verbatim: true}
		}
		if err != nil {
			return err
		}
		if ws := rulerWarnings(e, f); len(ws) > 0 {
			out["warnings"] = ws
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
		return nil
	}
	if err != nil {
		return err
	}
	if f.Markdown {
		fmt.Fprintf(e.stdout, "%s: %d goal(s), %d directive(s) (%d not complete), era %s\n", f.Path, len(f.Goals), len(f.Directives), len(f.Gaps()), f.Era)
		return nil
	}
	for _, w := range rulerWarnings(e, f) {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s\n", termLine(w))
	}
	fmt.Fprintf(e.stdout, "%s: %d goal(s), era %s\n", f.Path, len(f.Goals), f.Era)
	return nil
}

// rulerWarnings are what is wrong with the patterns of f's ruler: key
// against the files git tracks here: one that matches none (a typo, or a
// path gone), one that matches every file (every cycle would change only
// its ruler, and none could be improved). None outside a repository.
func rulerWarnings(e *env, f *goals.File) []string {
	if len(f.Ruler) == 0 {
		return nil
	}
	repo, err := e.Repo()
	if err != nil {
		return nil
	}
	files, err := repo.TrackedFiles()
	if err != nil || len(files) == 0 {
		return nil
	}
	var out []string
	for _, pat := range f.Ruler {
		n := 0
		for _, p := range files {
			if gate.MatchRuler(pat, p) {
				n++
			}
		}
		switch n {
		case 0:
			out = append(out, fmt.Sprintf("ruler pattern %q matches no file git tracks here: a typo, or a path that is gone?", pat))
		case len(files):
			out = append(out, fmt.Sprintf("ruler pattern %q matches every file git tracks here (%d): every change would be the ruler's, and no cycle could be improved", pat, n))
		}
	}
	return out
}

type goalsMeasureCmd struct {
	goalsFile
	progressFlag
	JSON bool     `name:"json" help:"Print the snapshot as JSON: {timestamp, git_sha, era, goals: [{goal_id, result, value, threshold, weight, duration_s, …}], summary}."`
	Goal []string `name:"goal" help:"Measure only this goal (repeatable)." placeholder:"ID"`
	// The operator's view of the checks agents are never told of.
	Holdout bool `name:"holdout" help:"Measure the holdout checks instead (the git directory's evolve/holdout.yaml, or the file git config evolve.holdout names), in the working tree; refused while a run drives a worktree."`
	Save    bool `help:"Store the snapshot in git: a line in the note on HEAD in refs/notes/evolve-fitness (every goal's: not with --goal)."`
	// The seeds' ao goals measure --directives.
	Directives bool `name:"directives" help:"List GOALS.md's directive gaps (the directives whose steer is not complete), in the order the work ladder takes them; runs no check."`
	// The seeds' evolve-measure-fitness.sh.
	Output       string `name:"output" help:"Write the snapshot to FILE as JSON (the seeds' shape: goals[] with id, result, value, threshold, weight), atomically, and print its path; a measure that fails or runs out of time leaves the file as it was." placeholder:"FILE"`
	Timeout      string `name:"timeout" help:"No check runs longer than this: seconds (60) or a duration (90s, 2m); a goal's own shorter timeout stays." placeholder:"S"`
	TotalTimeout string `name:"total-timeout" help:"The whole measure's limit: seconds or a duration; past it the checks still running are stopped, nothing is written and the exit code is 1." placeholder:"S"`
}

func (goalsMeasureCmd) Help() string {
	return `Runs each goal's check from the top of the working tree (meta goals first, one
at a time; checks that run go test, or tagged exclusive, alone; the others in
parallel), each within its timeout. Each result is pass (exit 0), skip (exit
77: the check cannot tell), error (exit 126 or 127: a command, an interpreter
or a permission is missing, named in the note), timeout (stopped at its
limit) or fail. A continuous goal passes when its check exits 0 and its value
is on the good side of its threshold. The score is the passing weight over
the weight of goals that passed, failed or timed out; skips and checks that
cannot run are not counted, and a last line names the tools that are missing.

A goals file runs only once this machine trusts its content: see git evolve
trust.

A whole measure (every goal, not the holdout checks) also writes
.agents/evolve/fitness-latest.json where the working tree has the seeds'
.agents/evolve directory (or git config evolve.historyFile is true): the
seeds' loops read it. --output FILE writes the snapshot there too, in the same
shape, and prints the file's path (as the seeds' evolve-measure-fitness.sh
does); --timeout caps each check's time limit and --total-timeout the whole
measure's.

With --directives, nothing runs: the directives of GOALS.md's ## Directives
section that are not complete are listed, the one the work ladder takes next
first (the least lately worked, then in the file's order); --json prints them
as a JSON array of {number, id, title, steer, metric, body, line}.`
}

func (c *goalsMeasureCmd) Run(e *env) error {
	var f *goals.File
	var data []byte
	var err error
	if c.Holdout {
		if f, err = c.holdout(e); err != nil {
			return err
		}
	} else if f, data, err = c.load(e); err != nil {
		return err
	}
	if c.Directives {
		return c.directives(e, f)
	}
	for _, id := range c.Goal {
		if !hasGoal(f, id) {
			return usagef("--goal: no goal %q in %s", id, f.Path)
		}
	}
	if c.Save && len(c.Goal) > 0 {
		// status, next and goals history read the last snapshot as the
		// state of every goal: one of some goals would say the others pass.
		return &usageError{msg: "--save stores the state of every goal, which status, next and goals history read: it goes without --goal",
			hint: "measure every goal with --save, or some without it"}
	}
	limit, total, err := c.limits()
	if err != nil {
		return err
	}
	if limit > 0 {
		for i := range f.Goals {
			f.Goals[i].Timeout = min(f.Goals[i].Timeout, limit)
		}
	}
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	if c.Holdout {
		// trusted: c.holdout checked it
	} else if err := requireTrust(e, goals.DigestOf(f.Name(), data), f.Path); err != nil {
		return err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return err
	}
	head, headErr := repo.ResolveCommits("HEAD")
	dirty := false
	if c.Save {
		if headErr != nil {
			return withHint(fmt.Errorf("--save: no commit to store the snapshot on"), "commit first")
		}
		if dirty, err = dirtyAgainst(e, repo, head[0]); err != nil {
			return err
		}
	}
	c.progressFlag.set(e)
	n := len(f.Goals)
	if len(c.Goal) > 0 {
		n = len(c.Goal)
	}
	onCheck, onDone, done := e.goalProgress("measuring goals", n)
	ctx, cancel := e.ctx, func() {}
	if total > 0 {
		ctx, cancel = context.WithTimeout(e.ctx, total)
	}
	defer cancel()
	snap := goals.Measure(ctx, f, goals.Options{Dir: top, Only: c.Goal, Now: e.now, OnCheck: onCheck, OnDone: onDone})
	done()
	if err := e.ctx.Err(); err != nil {
		return errInterrupted
	}
	if ctx.Err() != nil {
		kept := "nothing was written"
		if c.Output != "" {
			kept = displayPath(e, e.path(c.Output)) + " is left as it was"
		}
		return withHint(fmt.Errorf("measuring the goals took longer than --total-timeout %s: the checks still running were stopped, %s", total, kept),
			"raise --total-timeout, lower --timeout, or measure fewer goals with --goal")
	}
	if headErr == nil {
		snap.GitSHA = head[0].String()
	}
	if c.Save {
		snap.Dirty = dirty
		if err := fitness.Save(repo, head[0], fitness.KindSnapshot, snap); err != nil {
			return err
		}
	}
	if !c.Holdout && len(c.Goal) == 0 {
		keepSeedFitness(e, repo, snap, 0, gitstore.ZeroHash)
	}
	if c.Output != "" && !c.Holdout {
		out := e.path(c.Output)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := mirror.WriteFitnessAt(out, mirror.Fitness{Snapshot: snap}); err != nil {
			return err
		}
		if !c.JSON {
			_, err := fmt.Fprintln(e.stdout, out)
			return err
		}
	}
	if c.JSON {
		b, err := json.Marshal(snap)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	w := bufio.NewWriter(e.stdout)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GOAL\tRESULT\tVALUE\tTHRESHOLD\tWEIGHT\tTIME\tNOTE")
	for _, r := range snap.Goals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.2fs\t%s\n", r.GoalID, r.Result, cycletext.Number(r.Value), cycletext.Number(r.Threshold), r.Weight, r.Duration, termSafe(r.Reason))
	}
	tw.Flush()
	s := snap.Summary
	fmt.Fprintf(w, "score %.1f: %s (era %s)\n", s.Score, s.Counts(), snap.Era)
	if err := w.Flush(); err != nil {
		return err
	}
	if h := snap.MissingHint(); h != "" {
		fmt.Fprintf(e.stderr, "git-evolve: hint: %s\n", termSafe(h))
	}
	return nil
}

// limits are --timeout and --total-timeout (0 when not given).
func (c *goalsMeasureCmd) limits() (limit, total time.Duration, err error) {
	if c.Holdout && c.Output != "" {
		return 0, 0, usagef("--output writes a file an agent may read: it does not go with --holdout")
	}
	if limit, err = seconds("--timeout", c.Timeout); err != nil {
		return 0, 0, err
	}
	total, err = seconds("--total-timeout", c.TotalTimeout)
	return limit, total, err
}

// seconds reads a time limit as the seeds' scripts give it: a number of
// seconds, or a duration (90s, 2m); "" and 0 are none.
func seconds(flag, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 && n <= 86400 {
		return time.Duration(n * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 && d <= 24*time.Hour {
		return d, nil
	}
	return 0, usagef("%s: %q is not a time limit (seconds, as 60, or a duration, as 90s; at most a day)", flag, v)
}

// directives prints the directive gaps in the order the ladder takes them.
func (c *goalsMeasureCmd) directives(e *env, f *goals.File) error {
	if len(c.Goal) > 0 || c.Save {
		return usagef("--directives runs no check: it goes without --goal and --save")
	}
	gaps := f.Gaps()
	if len(gaps) > 0 && c.File == "" {
		// The ladder's order: the directive the line's cycles targeted
		// least lately first.
		if s, err := loadState(e, ""); err == nil && s.Goals != nil && s.Goals.Era == f.Era {
			gaps = s.DirectiveGaps()
		}
	}
	if c.JSON {
		if gaps == nil {
			gaps = []goals.Directive{}
		}
		_, err := fmt.Fprintf(e.stdout, "%s\n", mustJSON(gaps))
		return err
	}
	w := bufio.NewWriter(e.stdout)
	if len(gaps) == 0 {
		what := "every directive is complete"
		if len(f.Directives) == 0 {
			what = "no directives (GOALS.md's ## Directives section holds them)"
		}
		fmt.Fprintf(w, "%s: %s\n", f.Path, what)
	}
	for _, d := range gaps {
		fmt.Fprintf(w, "%d. %s (%s; steer %s", d.Number, termSafe(d.Title), termSafe(d.ID), termSafe(cmp.Or(d.Steer, "none")))
		if d.Metric != "" {
			fmt.Fprintf(w, ", %s", termSafe(d.Metric))
		}
		fmt.Fprintf(w, ")\n")
	}
	return w.Flush()
}

func hasDirective(f *goals.File, id string) bool {
	for _, d := range f.Directives {
		if d.ID == id {
			return true
		}
	}
	return false
}

func hasGoal(f *goals.File, id string) bool {
	for _, g := range f.Goals {
		if g.ID == id {
			return true
		}
	}
	return false
}

// errInterrupted is a command stopped by an interrupt while checks ran.
var errInterrupted = errors.New("interrupted: the running checks were stopped, nothing was stored")

// requireTrust refuses to run the checks of a goals file this machine has
// not trusted.
func requireTrust(e *env, digest, path string) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	ok, err := goals.TrustAt(stateDir(repo.CommonDir())).Trusted(digest)
	if err != nil {
		return err
	}
	if !ok {
		return withHint(fmt.Errorf("%s (sha256 %s) is not trusted on this machine: its checks are shell commands from the repository", path, digest[:12]),
			"read it, then run 'git evolve trust' to let its checks run here")
	}
	return nil
}

func stateDir(commonDir string) string { return filepath.Join(commonDir, "evolve") }

type trustCmd struct {
	goalsFile
}

func (trustCmd) Help() string {
	return `A goals file's checks are shell commands from the repository. They run only
once this machine trusts the file's exact content: after reading it, run this.
A changed file (a pull, an edit) must be trusted again. Trust is kept under the
git directory and never shared.

Without a gate: key in the goals file, a cycle's gate runs the project's own
tests, detected from the files at the top of the tree (go.mod, a Makefile with
a test target, package.json's test script, Cargo.toml, pyproject.toml,
pytest.ini or setup.cfg): the command detected, in the working tree and in
HEAD, is trusted too. So are the repository's holdout checks, when it has
some (the git directory's evolve/holdout.yaml, or the file git config
evolve.holdout names): goals a cycle is judged by that its agent is never
told of.`
}

func (c *trustCmd) Run(e *env) error {
	path, err := c.path(e)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return usagef("%s does not exist: nothing to trust", displayPath(e, path))
	}
	if err != nil {
		return err
	}
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	if err := refuseWhileRunOwns(e, repo, "git evolve trust", "the goals file it runs with stays the one it trusted", true); err != nil {
		return err
	}
	d := goals.DigestOf(path, data)
	if err := goals.TrustAt(stateDir(repo.CommonDir())).Add(d, displayPath(e, path)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "trusted %s (sha256 %s)\n", displayPath(e, path), d[:12])
	if err := trustHoldout(e); err != nil {
		return err
	}
	if f, err := goals.Parse(displayPath(e, path), data); err == nil && !f.Gate.Set {
		return trustGates(e)
	}
	return nil
}

// holdout is the holdout checks, for the operator to measure: refused
// while a run drives a worktree (its agent is never told of them), and
// unless this machine trusts them.
func (c *goalsMeasureCmd) holdout(e *env) (*goals.File, error) {
	if c.Save || c.Directives {
		return nil, usagef("--holdout goes with neither --save nor --directives")
	}
	l, err := e.Cycles()
	if err != nil {
		return nil, err
	}
	if err := refuseWhileRunOwns(e, l.Repo(), "git evolve goals measure --holdout", "its agent is never told of the holdout checks", true); err != nil {
		return nil, err
	}
	path, ok, err := l.HoldoutPath()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &usageError{msg: "there are no holdout checks (" + displayPath(e, path) + " does not exist)",
			hint: "write them there as a goals file (version: 3, goals: ...), then git evolve trust"}
	}
	f, data, err := l.Holdout()
	var ps goals.Problems
	if errors.As(err, &ps) {
		return nil, &problemsError{ps: ps}
	}
	if err != nil {
		return nil, err
	}
	return f, requireTrust(e, cycle.HoldoutDigest(data), displayPath(e, path))
}

// trustHoldout trusts the repository's holdout checks, when it has some
// (their file must parse), and says so.
func trustHoldout(e *env) error {
	l, err := e.Cycles()
	if err != nil {
		return err
	}
	path, ok, err := l.HoldoutPath()
	if err != nil || !ok {
		return err
	}
	_, data, err := l.Holdout()
	var ps goals.Problems
	if errors.As(err, &ps) {
		return &problemsError{ps: ps}
	}
	if err != nil {
		return err
	}
	d := cycle.HoldoutDigest(data)
	if err := goals.TrustAt(stateDir(l.Repo().CommonDir())).Add(d, "holdout "+path); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "trusted the holdout checks %s (sha256 %s)\n", displayPath(e, path), d[:12])
	return nil
}

// trustGates trusts the project's test commands detected in the working
// tree and in HEAD (the gate of a goals file without a gate key), and says
// which it trusted.
func trustGates(e *env) error {
	l, err := e.Cycles()
	if err != nil {
		return err
	}
	top, err := l.Repo().WorkTree()
	if err != nil {
		return nil // bare: no tree to detect from
	}
	reads := []gate.ReadFile{func(name string) ([]byte, bool) {
		data, err := os.ReadFile(filepath.Join(top, name))
		return data, err == nil
	}}
	var readErr func() error
	if head, err := l.Repo().ResolveCommits("HEAD"); err == nil {
		var read gate.ReadFile
		read, readErr = l.TreeReader(head[0])
		reads = append(reads, read)
	}
	added, err := cycle.TrustGates(stateDir(l.Repo().CommonDir()), reads...)
	if err == nil && readErr != nil {
		err = readErr()
	}
	for _, d := range added {
		fmt.Fprintf(e.stdout, "trusted the gate %s\n", d)
	}
	return err
}

type goalsBaselineCmd struct {
	goalsFile
	Force bool `help:"Capture another baseline even when the era has one."`
	JSON  bool `name:"json" help:"Print {era, captured, commit, snapshot}."`
	// The seeds' evolve-capture-baseline.sh.
	Label   string `help:"A name for the baseline, as the seeds' capture script takes it (era-20260101T000000Z): kept in .agents/evolve/fitness-0-baseline.json." placeholder:"LABEL"`
	Timeout string `name:"timeout" help:"No check runs longer than this: seconds (60) or a duration (90s); a goal's own shorter timeout stays." placeholder:"S"`
}

func (goalsBaselineCmd) Help() string {
	return `An era is the goals file's content (its SHA-256, shortened): changing the goals
starts a new era. The first time this runs in an era it measures every goal
and stores the snapshot, marked as the era's baseline, in the note on HEAD in
refs/notes/evolve-fitness, where other clones fetch it. Later it only says
when and where the era's baseline was captured.

Where the working tree has the seeds' .agents/evolve directory (or git config
evolve.historyFile is true), the era's baseline is also written to
.agents/evolve/fitness-0-baseline.json (local, derived: the seeds' loops
capture a baseline only when it is missing), and a baseline measured now to
.agents/evolve/fitness-latest.json.`
}

func (c *goalsBaselineCmd) Run(e *env) error {
	f, data, err := c.load(e)
	if err != nil {
		return err
	}
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	head, err := repo.ResolveCommits("HEAD")
	if err != nil {
		return withHint(fmt.Errorf("no commit to capture a baseline on"), "commit first")
	}
	found, err := fitness.Baseline(repo, f.Era)
	if err != nil {
		return err
	}
	if found != nil && !c.Force {
		if m, ok := seedMirror(repo); ok && !fileExists(m.Path(mirror.BaselineFile)) {
			keepSeedBaseline(e, repo, &found.Snapshot, "") // its label, if it had one, is not kept in git
		}
		return c.print(e, f.Era, false, found.Commit, &found.Snapshot)
	}
	limit, err := seconds("--timeout", c.Timeout)
	if err != nil {
		return err
	}
	if limit > 0 {
		for i := range f.Goals {
			f.Goals[i].Timeout = min(f.Goals[i].Timeout, limit)
		}
	}
	if err := requireTrust(e, goals.DigestOf(f.Name(), data), f.Path); err != nil {
		return err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return err
	}
	dirty, err := dirtyAgainst(e, repo, head[0])
	if err != nil {
		return err
	}
	snap := goals.Measure(e.ctx, f, goals.Options{Dir: top, Now: e.now})
	if err := e.ctx.Err(); err != nil {
		return errInterrupted
	}
	snap.GitSHA = head[0].String()
	snap.Dirty = dirty
	if err := fitness.Save(repo, head[0], fitness.KindBaseline, snap); err != nil {
		return err
	}
	keepSeedFitness(e, repo, snap, 0, gitstore.ZeroHash)
	keepSeedBaseline(e, repo, snap, c.Label)
	return c.print(e, f.Era, true, head[0], snap)
}

// keepSeedBaseline writes the era's baseline to the seeds'
// fitness-0-baseline.json, whose presence their Step 0.5 checks.
func keepSeedBaseline(e *env, repo *gitstore.Repo, s *goals.Snapshot, label string) {
	m, ok := seedMirror(repo)
	if !ok {
		return
	}
	if err := m.WriteFitness(mirror.BaselineFile, mirror.Fitness{Label: label, Snapshot: s}); err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s was not written: %v\n", mirror.BaselineFile, err)
	}
}

func (c *goalsBaselineCmd) print(e *env, era string, captured bool, commit gitstore.Hash, s *goals.Snapshot) error {
	if c.JSON {
		_, err := fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"era": era, "captured": captured, "commit": commit.String(), "snapshot": s}))
		return err
	}
	sum := s.Summary
	if captured {
		fmt.Fprintf(e.stdout, "captured the baseline of era %s on %s: score %.1f, %s\n", era, commit.Short(), sum.Score, sum.Counts())
		return nil
	}
	fmt.Fprintf(e.stdout, "era %s has a baseline: captured %s on %s, score %.1f (--force captures another)\n",
		era, s.Timestamp, commit.Short(), sum.Score)
	return nil
}

// dirtyAgainst says, before measuring, whether the working tree differs from
// head (files changed, staged or untracked), and warns when it does: the
// snapshot is stored on head, but its figures include work head does not
// have, so it is marked dirty. Files the checks write come later and do not
// count.
func dirtyAgainst(e *env, repo *gitstore.Repo, head gitstore.Hash) (bool, error) {
	changed, err := repo.ChangedSince(head)
	if err != nil || len(changed) == 0 {
		return false, err
	}
	fmt.Fprintf(e.stderr, "git-evolve: warning: %d file(s) differ from %s: the snapshot stored on it is marked dirty\n", len(changed), head.Short())
	return true, nil
}

type goalsHistoryCmd struct {
	JSON bool     `name:"json" help:"One JSON object a snapshot: {commit, kind, timestamp, era, dirty, score, passing, total, goals: {id: {result, value}}}."`
	Goal []string `name:"goal" help:"Only this goal (repeatable)." placeholder:"ID"`
}

func (goalsHistoryCmd) Help() string {
	return `Reads back the fitness snapshots kept in git (refs/notes/evolve-fitness and
each remote's fetched copy): the ones goals measure --save, a run's cycles
and the baselines stored, oldest first. The table has a row a goal and a
column a snapshot (pass, FAIL, skip, TIME, err, or the value of a continuous
goal); --json has a line a snapshot. Nothing is measured.`
}

func (c *goalsHistoryCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	all, err := fitness.All(repo)
	if err != nil {
		return err
	}
	keep := func(id string) bool { return len(c.Goal) == 0 || slices.Contains(c.Goal, id) }
	w := bufio.NewWriter(e.stdout)
	if c.JSON {
		for _, f := range all {
			goalsOut := map[string]any{}
			for _, g := range f.Goals {
				if keep(g.GoalID) {
					goalsOut[g.GoalID] = map[string]any{"result": g.Result, "value": g.Value}
				}
			}
			fmt.Fprintf(w, "%s\n", mustJSON(map[string]any{"commit": f.Commit.String(), "kind": f.Kind, "timestamp": f.Timestamp, "era": f.Era,
				"dirty": f.Dirty, "score": f.Summary.Score, "passing": f.Summary.Passing, "total": f.Summary.Total, "goals": goalsOut}))
		}
		return w.Flush()
	}
	if len(all) == 0 {
		fmt.Fprintln(w, "no fitness snapshots (goals measure --save and git evolve run store them)")
		return w.Flush()
	}
	var ids []string
	seen := map[string]bool{}
	for _, f := range all {
		for _, g := range f.Goals {
			if keep(g.GoalID) && !seen[g.GoalID] {
				seen[g.GoalID] = true
				ids = append(ids, g.GoalID)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "GOAL")
	for _, f := range all {
		fmt.Fprintf(tw, "\t%s", f.Commit.Short())
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "(score)")
	for _, f := range all {
		fmt.Fprintf(tw, "\t%.1f", f.Summary.Score)
	}
	fmt.Fprintln(tw)
	for _, id := range ids {
		fmt.Fprint(tw, termSafe(id))
		for _, f := range all {
			cell := "-"
			for _, g := range f.Goals {
				if g.GoalID == id {
					cell = historyCell(g)
				}
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	return w.Flush()
}

// historyCell is a goal's result in a snapshot, in a few letters.
func historyCell(g goals.Result) string {
	if g.Value != nil {
		v := strconv.FormatFloat(*g.Value, 'g', 4, 64)
		if g.Result != goals.Pass {
			v += "!"
		}
		return v
	}
	switch g.Result {
	case goals.Pass:
		return "pass"
	case goals.Fail:
		return "FAIL"
	case goals.Timeout:
		return "TIME"
	case goals.Skip:
		return "skip"
	}
	return "err"
}
