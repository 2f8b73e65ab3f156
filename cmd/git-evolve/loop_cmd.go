package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/mirror"
)

// The commands of loop control: halt-check, the markers, converged, next.

// loadState reads the loop's state for a command.
func loadState(e *env, roadmap string) (*loop.State, error) { return loadStateAs(e, roadmap, false) }

// loadStateAs is loadState; with dry, an inline roadmap is not written
// where a run would pin it, but to a temporary file.
func loadStateAs(e *env, roadmap string, dry bool) (*loop.State, error) {
	l, err := e.Cycles()
	if err != nil {
		return nil, err
	}
	if roadmap != "" {
		var done func()
		if roadmap, done, err = pinRoadmap(e, roadmap, dry); err != nil {
			return nil, err
		}
		defer done() // the roadmap is read by Load
	}
	return loop.Load(l, loop.LoadOptions{Now: e.now(), Getenv: e.getenv, RoadmapFile: roadmap})
}

// pinRoadmap resolves --queue: a file, or the roadmap itself, written to
// .agents/evolve/roadmap.md (said on stderr).
func pinRoadmap(e *env, value string, dry bool) (string, func(), error) {
	nothing := func() {}
	repo, err := e.Repo()
	if err != nil {
		return "", nothing, err
	}
	top, err := repo.WorkTree()
	if err != nil {
		return "", nothing, err
	}
	if dry {
		// Nothing pinned by a dry run: the list is read from a file of its
		// own (removed once read), whose state is a fresh one.
		tmp, err := os.MkdirTemp("", "git-evolve-roadmap-")
		if err != nil {
			return "", nothing, err
		}
		p, _, err := loop.PinRoadmap(tmp, e.dir, value)
		return p, func() { os.RemoveAll(tmp) }, err
	}
	p, wrote, err := loop.PinRoadmap(top, e.dir, value)
	if err == nil && wrote {
		fmt.Fprintf(e.stderr, "git-evolve: --queue is no file but a roadmap: wrote it to %s\n", loop.InlineRoadmapPath)
	}
	return p, nothing, err
}

// insideRun refuses what only the operator may do when an agent of a loop
// run asks for it (the driver sets EVOLVE_RUN_ID in the agent's
// environment).
func insideRun(e *env, what string) error {
	if id := e.getenv("EVOLVE_RUN_ID"); id != "" {
		return &usageError{msg: fmt.Sprintf("%s is refused inside loop run %s: only the operator stops or resumes the loop", what, id),
			hint: "an agent that cannot go on exits non-zero: its cycle is aborted and its work saved"}
	}
	// The variables unset: the agent's process group, session or process
	// tree still tell it (see loop.AgentInside).
	if repo, err := e.Repo(); err == nil {
		if id, group, dir, ok := loop.AgentInside(repo.CommonDir()); ok {
			if err := loop.NoteRefused(dir, what, e.now()); err != nil {
				fmt.Fprintf(e.stderr, "git-evolve: warning: the refusal was not noted for the run: %v\n", err)
			}
			return &usageError{msg: fmt.Sprintf("%s is refused: it runs inside the agent of loop run %s (process group %d), and only the operator stops or resumes the loop; the cycle's record will say this was tried", what, id, group),
				hint: "an agent that cannot go on exits non-zero: its cycle is aborted and its work saved"}
		}
	}
	return nil
}

// halted is a command that found the loop halted: exit 4, no "error:".
type halted struct{ msg string }

func (h *halted) Error() string { return h.msg }

// paused is a run paused by its budget or an interrupt: exit 5.
type paused struct{ msg string }

func (p *paused) Error() string { return p.msg }

type haltCheckCmd struct {
	JSON   bool `name:"json" help:"Print {halt, halt_reason, detail, restorative, stale_markers, markers, handoff_cleared, dormant_cleared, breakers, tripped, idle_streak, generator_empty_streak, ready_work, warnings}."`
	DryRun bool `name:"dry-run" help:"Change nothing: no marker written or removed, no breaker trip recorded."`
}

func (haltCheckCmd) Help() string {
	return `Exit 0: the next cycle may run; exit 3: it may run, restorative (the last
cycle's gate failed: prior_cycle_fail); exit 4: the loop is halted. In order:

  kill             ~/.config/evolve/KILL (or $XDG_CONFIG_HOME/evolve/KILL): every loop on this machine
  user_halt        .agents/evolve/STOP: this working tree's loop (each worktree has its own)
  dormant          .agents/evolve/DORMANT, cleared when there is work again; written when
                   the idle and generator-empty streaks reach evolve.breaker.dormancy (2)
  budget           evolve.governor or GIT_EVOLVE_GOVERNOR_CMD (EVOLVE_GOVERNOR_CMD) exits 3
  breaker          a breaker tripped and not acknowledged with git evolve resume:
                   no-progress (evolve.breaker.noProgressMinutes, 60; not while a
                   pinned roadmap has items left), failures
                   (evolve.breaker.failures, 5), same-failure (evolve.breaker.sameFailure, 3)
  goal_regression  the last productive cycle left fewer goals passing than the
                   productive cycle before it (whoever recorded them)
  restorative_exhausted  three restorative cycles in a row (since the last
                   resume) did not get the gate to pass: git evolve resume lifts it
  prior_cycle_fail the last cycle's gate failed (FAIL, FAILED or BLOCKED in it):
                   no halt, exit 3, "restorative": true; the next cycle fixes what is red

KILL and STOP older than GIT_EVOLVE_KILL_TTL_DAYS (or EVOLVE_KILL_TTL_DAYS; 7) are reported as stale and
ignored. .agents/evolve/HANDOFF is reported and removed.`
}

func (c *haltCheckCmd) Run(e *env) error {
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	h, err := s.CheckHalt(e.ctx, loop.HaltOptions{DryRun: c.DryRun})
	if err != nil {
		return err
	}
	for _, w := range h.Warnings {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s\n", w)
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(h))
	} else {
		w := bufio.NewWriter(e.stdout)
		// Details come from records, markers and control notes: printed
		// with their control characters escaped.
		switch {
		case h.Halt:
			fmt.Fprintf(w, "halt: %s: %s\n", h.Reason, termLine(h.Detail))
		case h.Restorative:
			fmt.Fprintf(w, "continue, restorative: %s\n", termLine(h.Detail))
		default:
			fmt.Fprintf(w, "continue\n")
		}
		for _, m := range h.StaleMarkers {
			fmt.Fprintf(w, "  stale, ignored: %s (%.0f days old)\n", termLine(m.Path), m.AgeDays)
		}
		for _, t := range h.Tripped {
			fmt.Fprintf(w, "  tripped now: %s: %s\n", termLine(t.Breaker), termLine(t.Reason))
		}
		for _, b := range h.Breakers {
			fmt.Fprintf(w, "  breaker %s since %s: %s\n", termLine(b.Breaker), termLine(b.At), termLine(b.Reason))
		}
		if h.Handoff != nil {
			fmt.Fprintf(w, "  handoff cleared: %s\n", markerLine(h.Handoff))
		}
		if h.DormantCleared {
			fmt.Fprintf(w, "  dormant cleared: there is work again\n")
		}
		fmt.Fprintf(w, "  idle streak %d, generator-empty streak %d, ready work %d\n", h.IdleStreak, h.GeneratorEmptyStreak, h.ReadyWork)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if h.Halt {
		if len(h.Breakers) > 0 && h.Reason == loop.HaltBreaker {
			return &halted{msg: "halted by a breaker: acknowledge it with git evolve resume once the cause is dealt with"}
		}
		return &halted{msg: "halted: " + h.Reason}
	}
	if h.Restorative {
		// Not a halt: the seeds' Step 1 branches on a non-zero exit and
		// reads halt_reason, then goes on in restorative mode.
		return &recoverable{msg: "restorative: " + termLine(h.Detail) + " (prior_cycle_fail: the next cycle fixes what is red)"}
	}
	return nil
}

func markerLine(m *loop.Marker) string {
	if m.Reason != "" {
		return termLine(m.Path + ": " + m.Reason)
	}
	return termLine(m.Path)
}

type stopCmd struct {
	Reason []string `arg:"" optional:"" help:"Why the loop stops (kept in the marker)."`
}

func (stopCmd) Help() string {
	return `Writes .agents/evolve/STOP (reason, time, cycle, who): halt-check then halts
this working tree's loop with user_halt until git evolve resume. Refused inside a
loop run: only the operator stops the loop. An agent is told by its process
group, its session or its process tree (the driver starts it as the leader of
its own), not only by the EVOLVE_ variables, which it can unset; the refusal is
kept in its cycle's record. While the agent works, the driver watches STOP and
KILL: one that appears is honoured at the next halt-check and said in the
cycle's record and the run's summary; one that was there and disappears (not
lifted by git evolve resume) is put back, and the run halts.`
}

func (c *stopCmd) Run(e *env) error { return writeMarker(e, loop.Stop, "stop", c.Reason) }

type killCmd struct {
	Reason []string `arg:"" optional:"" help:"Why every loop stops (kept in the marker)."`
}

func (killCmd) Help() string {
	return `Writes ~/.config/evolve/KILL (or $XDG_CONFIG_HOME/evolve/KILL): halt-check then
halts every loop of this user on this machine with kill until git evolve resume.
A KILL at either path halts (the seeds' scripts write ~/.config/evolve/KILL
whatever XDG_CONFIG_HOME says); resume lifts both. Refused inside a loop run,
as stop is (see git evolve stop --help).`
}

func (c *killCmd) Run(e *env) error { return writeMarker(e, loop.Kill, "kill", c.Reason) }

func writeMarker(e *env, name, what string, reason []string) error {
	if err := insideRun(e, "git evolve "+what); err != nil {
		return err
	}
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	by := "git evolve " + what
	if _, committer, err := s.Repo.Identity(); err == nil {
		by = committer.Name + " <" + committer.Email + ">"
	}
	path, err := s.Markers.Write(name, strings.Join(reason, " "), s.MaxCycle(), by, e.now())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: the loop halts at its next halt-check; git evolve resume lifts it\n", loop.TopPath(s.Top, path))
	return nil
}

type resumeCmd struct{}

func (resumeCmd) Help() string {
	return `Removes KILL, STOP and DORMANT, and acknowledges the tripped breakers: the
resume is recorded under refs/notes/evolve-control (shared by sync), and the
breakers count from it. Refused inside a loop run, as stop is (see git evolve
stop --help).`
}

func (c *resumeCmd) Run(e *env) error {
	if err := insideRun(e, "git evolve resume"); err != nil {
		return err
	}
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	// The resume is recorded (and, for KILL, which is the machine's,
	// stamped beside it) before a marker is removed: a run whose agent is
	// working sees the operator lifted them, and does not put them back.
	tripped := loop.Tripped(s.Controls)
	ev := loop.ControlEvent{Kind: loop.KindResume, Cycle: s.MaxCycle(), At: e.now().UTC().Format(time.RFC3339)}
	for _, t := range tripped {
		ev.Cleared = append(ev.Cleared, t.Breaker)
	}
	if err := loop.RecordControl(s.Repo, ev); err != nil {
		return err
	}
	if err := s.Markers.StampResume(); err != nil {
		return err
	}
	var removed []string
	for _, name := range []string{loop.Kill, loop.Stop, loop.Dormant} {
		paths, err := s.Markers.Remove(name)
		if err != nil {
			return err
		}
		for _, p := range paths {
			removed = append(removed, loop.TopPath(s.Top, p))
		}
	}
	for _, r := range removed {
		fmt.Fprintf(e.stdout, "removed %s\n", r)
	}
	for _, t := range tripped {
		fmt.Fprintf(e.stdout, "acknowledged breaker %s (%s)\n", t.Breaker, t.Reason)
	}
	fmt.Fprintf(e.stdout, "resumed: the breakers count from now\n")
	return nil
}

type convergedCmd struct {
	JSON          bool `name:"json" help:"Print {converged, ci_green_streak, unconsumed_high_medium, fitness_baseline_captured, pinned_work_left, reasons, thresholds}."`
	GreenStreak   *int `name:"green-streak" help:"The passing gates in a row needed (3); with the seeds' flags, the caller's own count, checked against the ledger's." placeholder:"N"`
	MaxHighMedium int  `name:"max-high-medium" default:"1" help:"The open high and medium queue items allowed."`
	// The seeds' ao loop converged, whose caller passes its evidence.
	UnconsumedHighMedium *int `name:"unconsumed-high-medium" help:"The seeds' form: the caller's count of open high and medium items, checked against the queue's; the answer is JSON and the exit code 0, as the seeds' ao loop converged gives it." placeholder:"N"`
	FitnessBaseline      bool `name:"fitness-baseline" help:"The seeds' form: the caller says a baseline was captured; checked against git."`
}

func (convergedCmd) Help() string {
	return `Computed from what git and the working tree hold: the trailing run of cycles
whose gate passed (the ledger), the high and medium items of
.agents/rpi/next-work.jsonl not consumed, whether a pinned roadmap (the one a
run pinned) has items left, and whether a fitness baseline of the goals file's
era was captured (git evolve goals baseline, or the first git evolve run of
the era). A scope shift resets the green streak: only cycles judged by the
goals file's present era count, and, with a pinned roadmap, only those since
it was pinned or its content last changed. The thresholds may be changed; the
evidence may not.

Exit as halt-check does: 0 the loop goes on (not converged yet), 4 it halts
(converged).

The seeds' form, ao loop converged --green-streak N --unconsumed-high-medium N
[--fitness-baseline], is answered too: there --green-streak and
--unconsumed-high-medium are the caller's counts and --fitness-baseline its
word, each checked against what git and the queue hold (a notice on stderr
says where they differ; the tool's own evidence decides), the thresholds
are the defaults, and the answer is the JSON object, with exit code 0, as the
seeds' loops read it (.converged).`
}

func (c *convergedCmd) Run(e *env) error {
	seeds := c.UnconsumedHighMedium != nil || c.FitnessBaseline
	streak := 3
	if c.GreenStreak != nil && !seeds {
		streak = *c.GreenStreak
	}
	if streak < 0 || c.MaxHighMedium < 0 || seeds && c.GreenStreak != nil && *c.GreenStreak < 0 {
		return usagef("--green-streak and --max-high-medium are 0 or more")
	}
	if c.UnconsumedHighMedium != nil && *c.UnconsumedHighMedium < 0 {
		return usagef("--unconsumed-high-medium is 0 or more")
	}
	s, err := loadState(e, "")
	if err != nil {
		return err
	}
	conv, err := s.Converged(loop.ConvergenceThresholds{GreenStreak: streak, MaxHighMedium: c.MaxHighMedium})
	if err != nil {
		return err
	}
	if m, ok := seedMirror(s.Repo); ok {
		// Seed 001 records the decision in session-convergence.json.
		if err := m.WriteFile(mirror.ConvergenceFile, append(mustJSON(conv), '\n')); err != nil {
			fmt.Fprintf(e.stderr, "git-evolve: warning: %s was not written: %v\n", mirror.ConvergenceFile, err)
		}
	}
	if seeds {
		// The caller's evidence is checked, never taken.
		if c.GreenStreak != nil && *c.GreenStreak != conv.CIGreenStreak {
			fmt.Fprintf(e.stderr, "git-evolve: notice: --green-streak %d is the caller's count; the ledger's gates give %d, which counts\n", *c.GreenStreak, conv.CIGreenStreak)
		}
		if c.UnconsumedHighMedium != nil && *c.UnconsumedHighMedium != conv.UnconsumedHighMedium {
			fmt.Fprintf(e.stderr, "git-evolve: notice: --unconsumed-high-medium %d is the caller's count; the queue holds %d, which counts\n", *c.UnconsumedHighMedium, conv.UnconsumedHighMedium)
		}
		if c.FitnessBaseline && !conv.BaselineCaptured {
			fmt.Fprintf(e.stderr, "git-evolve: notice: --fitness-baseline says a baseline was captured; git holds none of this era, which counts\n")
		}
		_, err := fmt.Fprintf(e.stdout, "%s\n", mustJSON(conv))
		return err
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(conv))
	} else {
		verdict := "not converged"
		if conv.Converged {
			verdict = "converged"
		}
		fmt.Fprintf(e.stdout, "%s: green streak %d, %d high or medium item(s) open, baseline captured %t\n", verdict, conv.CIGreenStreak, conv.UnconsumedHighMedium, conv.BaselineCaptured)
		for _, r := range conv.Reasons {
			fmt.Fprintf(e.stdout, "  %s\n", r)
		}
	}
	if conv.Converged {
		return &halted{msg: "converged: the loop halts"}
	}
	return nil
}

type nextCmd struct {
	JSON      bool   `name:"json" help:"Print {rung, target, title, why, item, pinned, goal, directive, restorative, skipped, quarantine}."`
	DryRun    bool   `name:"dry-run" help:"Change nothing: no quarantine written."`
	Queue     string `help:"A pinned roadmap to work in order (an ordered Markdown list; blocker: \x60id\x60): a file, or the list itself, written to .agents/evolve/roadmap.md." placeholder:"FILE|LIST"`
	Quality   bool   `help:"Quality mode: findings first (high, medium), then beads, directives and emergency gates (weight 5 or more)."`
	BeadsOnly bool   `name:"beads-only" help:"Take no directive or goal work: the queue, beads and generators only."`
	Strategy  string `default:"balanced" enum:"balanced,innovate,harden,repair,ultrathink,autoresearch" help:"Which generator rungs come first, and what the agent is asked to focus on: balanced, innovate, harden, repair, ultrathink, autoresearch."`
	progressFlag
}

func (nextCmd) Help() string {
	return `Walks the work ladder and says which rung chose the work, and why:

  pinned     the pinned roadmap (--queue FILE, or the one a run pinned), in order, blockers first
  harvested  .agents/rpi/next-work.jsonl: this repository's items, then "*", then unscoped; higher
             severity first; at equal severity concrete work before process work (docs, research, chores)
  beads      bd ready --json, highest priority first, when bd is on PATH (skipped silently when not)
  directive  GOALS.md's directives whose steer is not complete, the least lately worked first
  goal       the failing goals by weight (quarantined goals skipped; oscillating ones quarantined)
  generator  testing, validation and bug hunt, drift and dead code, feature suggestions

After a failed gate (halt-check's prior_cycle_fail) only what fixes red is
taken. The metronome gate: work of the mode the last 3 cycles or more all had
(the same rung and target, or the same generator) is skipped once. --quality
takes high and medium findings first, then beads, directives and emergency
gates (failing goals of weight 5 or more), then the other findings;
--beads-only takes no directive or goal work. The goals are measured (the
goals file must be trusted).`
}

func (c *nextCmd) Run(e *env) error {
	f, data, err := goalsFile{}.load(e)
	if err != nil {
		return err
	}
	if err := requireTrust(e, goals.DigestOf(f.Name(), data), f.Path); err != nil {
		return err
	}
	s, err := loadStateAs(e, c.Queue, c.DryRun)
	if err != nil {
		return err
	}
	h, err := s.CheckHalt(e.ctx, loop.HaltOptions{DryRun: true})
	if err != nil {
		return err
	}
	c.progressFlag.set(e)
	onCheck, onDone, done := e.goalProgress("measuring goals", len(f.Goals))
	measured := goals.Measure(e.ctx, f, goals.Options{Dir: s.Top, Now: e.now, OnCheck: onCheck, OnDone: onDone})
	done()
	if e.ctx.Err() != nil {
		return errInterrupted
	}
	beads, err := loop.ReadyBeads(e.ctx, s.Top)
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: the beads rung is skipped: %s\n", termSafe(err.Error()))
	}
	w := s.Select(loop.SelectOptions{Measured: measured, Restorative: h.Restorative, Strategy: c.Strategy,
		Beads: beads, BeadsOnly: c.BeadsOnly, Quality: c.Quality})
	if !c.DryRun {
		for _, q := range w.Quarantine {
			if _, err := s.WriteQuarantine(q); err != nil {
				return err
			}
		}
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(w))
		return nil
	}
	out := bufio.NewWriter(e.stdout)
	// The target, title and reasons come from files an agent or another
	// tool writes: one line each, escapes removed.
	fmt.Fprintf(out, "%s: %s\n", w.Rung, termLine(w.Target))
	if w.Title != w.Target {
		fmt.Fprintf(out, "  %s\n", termLine(w.Title))
	}
	fmt.Fprintf(out, "  why: %s\n", termLine(w.Why))
	switch {
	case w.Restorative && h.Restorative:
		fmt.Fprintf(out, "  restorative: %s\n", h.Detail)
	case w.Restorative:
		fmt.Fprintf(out, "  restorative: the repair strategy takes only what fixes red\n")
	}
	for _, q := range w.Quarantine {
		verb := "quarantined"
		if c.DryRun {
			verb = "would quarantine"
		}
		fmt.Fprintf(out, "  %s %s (%d oscillations)\n", verb, q.Goal, q.Oscillations)
	}
	for _, sk := range w.Skipped {
		fmt.Fprintf(out, "  passed over: %s\n", termLine(sk))
	}
	return out.Flush()
}
