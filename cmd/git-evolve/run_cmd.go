package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/loop"
)

type runCmd struct {
	Agent        string        `help:"The agent command, run with sh -c in the working tree for each cycle." placeholder:"COMMAND"`
	AgentPreset  string        `name:"agent-preset" help:"Run a known agent CLI in its headless mode, given the brief: claude, codex, aider, cursor or openhands (default: evolve.agentPreset; see docs/agents.md)." placeholder:"NAME"`
	MaxCycles    int           `name:"max-cycles" help:"Stop after N cycles (default: until the loop halts or converges)." placeholder:"N"`
	Strategy     string        `enum:"balanced,innovate,harden,repair,ultrathink,autoresearch," default:"" help:"Which generator rungs come first, and what the agent is asked to focus on: balanced (default), innovate, harden, repair, ultrathink, autoresearch."`
	AgentTimeout time.Duration `name:"agent-timeout" help:"How long the agent may work on a cycle (default 1h); past it, the cycle is aborted." placeholder:"DURATION"`
	Queue        string        `help:"A pinned roadmap to work in order (an ordered Markdown list; blocker: \x60id\x60): a file, or the list itself, written to .agents/evolve/roadmap.md." placeholder:"FILE|LIST"`
	Resume       bool          `help:"Continue the run that stopped in this worktree (an interrupt, a budget): its open cycle first."`
	GreenStreak  int           `name:"green-streak" default:"3" help:"Convergence: the passing gates in a row that stop the run."`
	MaxHighMed   int           `name:"max-high-medium" default:"1" help:"Convergence: the open high and medium queue items allowed."`
	PushEvery    int           `name:"push-every" help:"Push the branch (git push, whose pre-push hook delivers the ledger) after every N productive cycles; a push that fails stops the run, the work kept." placeholder:"N"`
	Quality      bool          `help:"Quality mode (seed 004): findings first (high, medium), then beads, directives and emergency gates (weight 5 or more); each record carries quality_score (100 - 10 × high - 3 × medium findings left)."`
	BeadsOnly    bool          `name:"beads-only" help:"Take no directive or goal work: the queue, beads (bd ready) and generators only."`
	SkipBaseline bool          `name:"skip-baseline" help:"Capture no fitness baseline (by default the first run in a goals era captures one: convergence needs it)."`
	SyncUpstream bool          `name:"sync-upstream" help:"Before each cycle, fetch the branch's upstream, sync the ledger with its remote (as git evolve sync does), and fast-forward to it (a branch that diverged stops the run)."`
	JSON         bool          `name:"json" help:"Print the summary as JSON."`
	DryRun       bool          `name:"dry-run" help:"Run nothing: say whether the loop would go on and the work its next cycle would take (halt-check --dry-run, then next --dry-run)."`
}

func (runCmd) Help() string {
	return `Loops: halt-check, the work ladder (git evolve next), cycle start, the agent
command, cycle finish, settle the work's queue item, until the loop halts,
converges, runs --max-cycles cycles or is interrupted.

The agent's environment: EVOLVE_CYCLE, EVOLVE_ID, EVOLVE_TARGET,
EVOLVE_START_SHA, EVOLVE_RESTORATIVE (true after a failed gate: fix what is
red), EVOLVE_STRATEGY, EVOLVE_RUNG, EVOLVE_ITEM, EVOLVE_RUN_ID, EVOLVE_RESUMED,
EVOLVE_COMMIT_MSG (a file: the message the agent leaves there is the improved
commit's, the trailers added), EVOLVE_VERDICTS (a file: the verdicts of the
hypotheses due, a JSON line each, which the driver records), EVOLVE_HYPOTHESES
(a file: hypotheses the agent adds, a JSON line each; a cycle that edits
skills/evolve/SKILL.md needs one, or its gate fails),
and EVOLVE_BRIEF (EVOLVE_BRIEF_JSON): the selected work, the failing goals,
the hypotheses due and the last three failed gates. The agent only changes the
working tree; git evolve stop, kill, resume and the cycle commands are refused
to it. An agent that exits non-zero or runs past --agent-timeout has its
cycle aborted (its work saved under refs/evolve/) and counted as a failure.

Delivery: --push-every N runs git push after every N productive cycles (seed
004 pushes every 5); the pre-push hook git evolve init installs delivers the
ledger with the branch. A push that fails stops the run (exit 1), nothing
undone. Before each cycle, when the branch's upstream (as last fetched) has
commits the branch lacks, the run says so; --sync-upstream fetches it first,
syncs the ledger with its remote (so that the cycle is numbered after every
cycle there) and fast-forwards the branch (the seeds' stale-checkout guard); a
ledger that cannot be synced stops the run. No cycle opens on a ledger that
fails git evolve verify: the run stops with exit 2, saying how to repair it.

The first Ctrl-C stops the run after the step under way; a second (a second
or more later) stops it at once (the agent is signalled; its cycle stays
open). git evolve run --resume continues; a run resumed more times in a row
than evolve.run.maxResumes (3, seed 002's autoResumeAttempts) without a
cycle of it ending is not resumed again (exit 2). The run's state is in the git
directory's evolve/run.json. (Through git evolve, git itself dies of the
interrupt: the exit status 5 is git-evolve run's own.)

Exit: 0 every cycle ran, 3 some failed (regressed and reverted, or aborted),
4 halted (a marker, a breaker, a goal regression, convergence), 5 paused
(the budget, an interrupt), 10 a bad command line; 2 a ledger that fails
verify, or a run resumed past evolve.run.maxResumes.`
}

func (c *runCmd) Run(e *env) error {
	if err := c.preset(e); err != nil {
		return err
	}
	if c.DryRun {
		return c.dryRun(e)
	}
	if c.Agent == "" && !c.Resume {
		return &usageError{msg: "a run needs the agent command: --agent '<command>'", hint: "for example git evolve run --agent './agent.sh' --max-cycles 3"}
	}
	if c.MaxCycles < 0 {
		return usagef("--max-cycles: 0 or more")
	}
	if c.AgentTimeout < 0 {
		return usagef("--agent-timeout: a duration above 0, such as 30m")
	}
	if c.PushEvery < 0 {
		return usagef("--push-every: 0 (never) or more")
	}
	if err := insideRun(e, "git evolve run"); err != nil {
		return err
	}
	if _, _, err := (goalsFile{}).load(e); err != nil {
		return err
	}
	l, err := e.CycleLedger()
	if err != nil {
		return err
	}
	// The first interrupt stops after the step under way; the second at
	// once. The agent runs in a process group of its own: a terminal's
	// Ctrl-C reaches it only through the driver.
	soft := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		var first time.Time
		for {
			select {
			case <-sigs:
				switch {
				case first.IsZero():
					first = time.Now()
					fmt.Fprintf(e.stderr, "git-evolve: stopping after the step under way (interrupt again to stop now)\n")
					close(soft)
				case time.Since(first) < time.Second:
					// The same Ctrl-C a second time: the terminal sends it
					// to the process group, and git passes it on too.
				default:
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	roadmap := c.Queue
	if roadmap != "" {
		var err error
		if roadmap, _, err = pinRoadmap(e, roadmap, false); err != nil {
			return err
		}
	}
	opts := loop.RunOptions{
		Agent: c.Agent, MaxCycles: c.MaxCycles, PushEvery: c.PushEvery, SyncUpstream: c.SyncUpstream, Quality: c.Quality, BeadsOnly: c.BeadsOnly, SkipBaseline: c.SkipBaseline, Strategy: c.Strategy, AgentTimeout: c.AgentTimeout, RoadmapFile: roadmap,
		Resume: c.Resume, Convergence: loop.ConvergenceThresholds{GreenStreak: c.GreenStreak, MaxHighMedium: c.MaxHighMed},
		Soft: soft, AgentOut: e.stderr, Getenv: e.getenv, Now: e.now,
		Progress: func(m string) { fmt.Fprintf(e.stderr, "git-evolve: %s\n", m) },
		Trusted: func(data []byte, path string) error {
			return requireTrust(e, goals.DigestOf(path, data), path)
		},
		SyncLedger: func(remote string) error { return syncLedgerWith(e, l.Ledger, remote) },
		CheckLedger: func() error {
			rep, err := audit.VerifyWith(l.Local(), audit.VerifyOptions{BreachesOnly: true})
			if err != nil {
				return err
			}
			return breachRefusal(e, rep, fmt.Sprintf("the ledger fails verify (%d breach(es)): no cycle is opened on it", rep.Breaches()))
		},
	}
	seedRunHooks(e, l, &opts)
	sum, err := loop.Run(ctx, l, opts)
	if sum == nil {
		return err
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(sum))
	} else if perr := printRunSummary(e, sum); perr != nil && err == nil {
		return perr
	}
	if err != nil {
		return err
	}
	switch {
	case sum.Paused:
		return &paused{msg: fmt.Sprintf("run %s paused (%s): git evolve run --resume continues it", sum.ID, sum.Reason)}
	case sum.Halted:
		return &halted{msg: fmt.Sprintf("run %s halted: %s", sum.ID, sum.Reason)}
	case sum.Tally.Failures() > 0:
		return &recoverable{msg: fmt.Sprintf("run %s: %d of %d cycle(s) failed", sum.ID, sum.Tally.Failures(), sum.Tally.Cycles)}
	}
	return nil
}

// preset expands --agent-preset (or evolve.agentPreset, when neither it
// nor --agent is given) into the agent command.
func (c *runCmd) preset(e *env) error {
	name := c.AgentPreset
	if c.Agent != "" && name != "" {
		return usagef("--agent and --agent-preset: give one")
	}
	if name == "" && c.Agent == "" && !c.Resume {
		repo, err := e.Repo()
		if err != nil {
			return err
		}
		vals, err := repo.ConfigGetAll("evolve.agentPreset")
		if err != nil {
			return err
		}
		if len(vals) > 0 {
			name = vals[len(vals)-1]
		}
	}
	if name == "" {
		return nil
	}
	cmd, ok := loop.AgentPresets[name]
	if !ok {
		return &usageError{msg: fmt.Sprintf("no agent preset %q", name), hint: "one of " + loop.PresetNames() + " (docs/agents.md), or --agent '<command>'"}
	}
	c.Agent = cmd
	return nil
}

// dryRun is the seeds' --dry-run: whether the loop would go on and the work
// its next cycle would take, as halt-check --dry-run and next --dry-run say
// them (--json: their objects, a line each). No agent runs, no cycle opens,
// nothing is written; a halted loop exits 4 with no plan.
func (c *runCmd) dryRun(e *env) error {
	if c.Resume {
		return usagef("--dry-run starts nothing: not with --resume")
	}
	if err := (&haltCheckCmd{JSON: c.JSON, DryRun: true}).Run(e); err != nil {
		if _, restorative := err.(*recoverable); !restorative {
			return err
		}
	}
	strategy := c.Strategy
	if strategy == "" {
		strategy = "balanced"
	}
	return (&nextCmd{JSON: c.JSON, DryRun: true, Queue: c.Queue, Quality: c.Quality, BeadsOnly: c.BeadsOnly, Strategy: strategy}).Run(e)
}

func printRunSummary(e *env, s *loop.Summary) error {
	w := bufio.NewWriter(e.stdout)
	t := s.Tally
	fmt.Fprintf(w, "run %s: %d cycle(s): %d productive, %d regressed and reverted, %d idle, %d aborted\n",
		s.ID, t.Cycles, t.Productive, t.Regressed, t.Idle, t.Aborted)
	for _, c := range s.Cycles {
		line := fmt.Sprintf("  cycle %d %s (%s): %s", c.Cycle, c.Target, c.Rung, c.Result)
		if c.Reason != "" {
			line += ": " + c.Reason
		}
		if c.Commit != "" {
			line += " " + c.Commit[:7]
		}
		if c.Item != "" && c.Settled != "" {
			line += fmt.Sprintf(" (item %s %s)", c.Item, c.Settled)
		}
		fmt.Fprintln(w, line)
	}
	for _, m := range s.Markers {
		fmt.Fprintf(w, "  markers: %s\n", termSafe(m))
	}
	stop := s.Reason
	if s.Detail != "" {
		stop += ": " + s.Detail
	}
	fmt.Fprintf(w, "stopped: %s\n", stop)
	if q := s.Queue; q != nil {
		fmt.Fprintf(w, "Queue: %d/%d items completed | Unblocked: %d items | Escalated: %d items\n", q.Completed, q.Total, q.Unblocked, q.Escalated)
	}
	if q := s.Quality; q != nil {
		fmt.Fprintf(w, "Quality score: %g → %g (%+g)\n", q.Start, q.End, q.End-q.Start)
		fmt.Fprintf(w, "Remaining unconsumed: %d high, %d medium\n", q.High, q.Medium)
	}
	if s.Start != nil && s.End != nil {
		fmt.Fprintf(w, "fitness: score %.1f → %.1f, %d → %d of %d goals passing\n", s.Start.Score, s.End.Score, s.Start.Passing, s.End.Passing, s.End.Total)
	}
	return w.Flush()
}
