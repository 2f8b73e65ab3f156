package loop

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/fitness"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
)

// The phases of a run's cycle, kept in the run state so that a resumed run
// knows where it stopped.
const (
	PhaseAgent  = "agent"  // the agent command runs (or was interrupted)
	PhaseFinish = "finish" // the agent ended; the cycle is to be finished
	// PhaseJudge: the driver has begun the cycle's finish (a finish under
	// way in the open cycle's file is its own).
	PhaseJudge = "judge"
	// PhaseRestore: the agent failed, its cycle was aborted, and the
	// working tree is to be brought back to the cycle's start (Restore).
	PhaseRestore = "restore"
)

// Why a run stopped, besides the halt reasons of halt-check.
const (
	StopMaxCycles   = "max_cycles"
	StopConverged   = "converged"
	StopInterrupted = "interrupted"
	// StopError: an error stopped the run (Run returns it with the summary).
	StopError = "error"
)

// PendingRestore is an aborted cycle the driver brings the working tree
// back from: what cycle.RestoreStart needs.
type PendingRestore struct {
	Cycle  int    `json:"cycle"`
	ID     string `json:"id"`
	Target string `json:"target"`
	Start  string `json:"start"`
	Saved  string `json:"saved"`
	// Branch is the ref HEAD named when the cycle started ("" detached).
	Branch string `json:"branch,omitempty"`
	// Base is the working tree as the cycle found it, when it held changes
	// of its own (cycle.BaseRef): the restore puts them back. Clock is the
	// machine's clock as it started (cycle.OpenCycle.Clock).
	Base  string `json:"base,omitempty"`
	Clock int64  `json:"clock,omitempty"`
}

// DefaultAgentTimeout is how long an agent command may run by default.
const DefaultAgentTimeout = time.Hour

// RunState is a run, kept in the git directory's evolve/run.json while it
// goes on and after it stops, so that run --resume continues it.
type RunState struct {
	ID           string `json:"id"`
	StartedAt    string `json:"started_at"`
	Agent        string `json:"agent"`
	Strategy     string `json:"strategy"`
	MaxCycles    int    `json:"max_cycles,omitempty"`
	AgentTimeout string `json:"agent_timeout"`
	// PushEvery pushes the branch after every so many productive cycles
	// (0: never); SyncUpstream fetches the branch's upstream before each
	// cycle and fast-forwards to it.
	PushEvery    int  `json:"push_every,omitempty"`
	SyncUpstream bool `json:"sync_upstream,omitempty"`
	// Quality and BeadsOnly are seed 004's --quality and --beads-only.
	Quality   bool `json:"quality,omitempty"`
	BeadsOnly bool `json:"beads_only,omitempty"`
	// SkipBaseline is the seeds' --skip-baseline: the run captures no
	// fitness baseline.
	SkipBaseline bool `json:"skip_baseline,omitempty"`
	// QualityStart is the quality score (seed 004) of the findings open
	// as a quality run's first cycle started.
	QualityStart *float64 `json:"quality_start,omitempty"`
	// Pushes counts the pushes the run made.
	Pushes  int    `json:"pushes,omitempty"`
	Roadmap string `json:"roadmap,omitempty"`
	// Phase and CycleID are the open cycle's step, while one is open.
	Phase   string `json:"phase,omitempty"`
	CycleID string `json:"cycle_id,omitempty"`
	// Restorative is the open cycle's mode (a resumed agent keeps it).
	Restorative bool `json:"restorative,omitempty"`
	// AgentGroup is the process group of the agent while it runs: a run
	// killed outright leaves it, and the next run refuses to start a second
	// agent in the same tree while it lives.
	AgentGroup int `json:"agent_group,omitempty"`
	// AgentStarted is when the agent's process started, as the system
	// counts it (Linux: /proc/<pid>/stat), to tell it from a process that
	// later got its number.
	AgentStarted string `json:"agent_started,omitempty"`
	// Restore is the aborted cycle whose working tree is to be brought
	// back to its start (PhaseRestore).
	Restore *PendingRestore `json:"restore,omitempty"`
	// Kept is the open cycle as the driver opened it: the ruler it is
	// judged by, whatever the agent does to the open cycle's file (see
	// cycle.FinishOptions.Kept).
	Kept *cycle.OpenCycle `json:"kept,omitempty"`
	// Stopped is why the run last stopped ("" while it runs).
	Stopped string  `json:"stopped,omitempty"`
	Tally   Tally   `json:"tally"`
	Start   *Score  `json:"fitness_start,omitempty"`
	End     *Score  `json:"fitness_end,omitempty"`
	Cycles  []Ended `json:"cycles"`
	// Markers say what happened to the operator's markers during the
	// agents' turns: a STOP that appeared, one an agent removed (put
	// back), each with its cycle.
	Markers []string `json:"markers,omitempty"`
	// PendingTampering are the open cycle's tampering marks the driver has
	// not yet handed to a finish that recorded them: a run stopped after
	// the agent's turn names them when it resumes.
	PendingTampering []string `json:"pending_tampering,omitempty"`
	// PendingMarkers are, the same way, what the open cycle's agent turn
	// did to the operator's markers (the record's markers).
	PendingMarkers []string `json:"pending_markers,omitempty"`
	// TurnHead is HEAD as the open cycle's agent left it: the work a
	// resumed finish judges. A branch that moved since while the run stood
	// stopped holds commits that are not the cycle's.
	TurnHead string `json:"turn_head,omitempty"`
	// Resumes counts the run --resume of this run since a cycle of it
	// last ended: past evolve.run.maxResumes (3, seed 002's
	// autoResumeAttempts) it is not resumed again.
	Resumes int `json:"resumes,omitempty"`
	// written is what save last wrote, for the guard of the agent's turn
	// to compare the file with.
	written []byte
}

// Tally counts a run's cycles by how they ended.
type Tally struct {
	Cycles     int `json:"cycles"`
	Productive int `json:"productive"`
	Regressed  int `json:"regressed"` // each one reverted
	Idle       int `json:"idle"`      // unchanged
	Aborted    int `json:"aborted"`   // the agent crashed or timed out
}

// Failures are the cycles that ended in a recoverable failure.
func (t Tally) Failures() int { return t.Regressed + t.Aborted }

// Score is the goals' fitness at a point of the run.
type Score struct {
	Score   float64 `json:"score"`
	Passing int     `json:"passing"`
	Total   int     `json:"total"`
}

func scoreOf(s *goals.Snapshot) *Score {
	return &Score{Score: s.Summary.Score, Passing: s.Summary.Passing, Total: s.Summary.Total}
}

// Ended is one cycle of a run, as the summary lists it.
type Ended struct {
	Cycle  int    `json:"cycle"`
	ID     string `json:"id"`
	Target string `json:"target"`
	Rung   string `json:"rung,omitempty"`
	Result string `json:"result"`
	// Reason says why an aborted cycle was aborted.
	Reason string `json:"reason,omitempty"`
	Commit string `json:"commit,omitempty"`
	Item   string `json:"item,omitempty"`
	// Settled is what happened to its queue or roadmap item.
	Settled string `json:"settled,omitempty"`
	// Tampering are the attempts to weaken its judgment that were refused
	// (see cycle.FinishOptions.Tampering).
	Tampering []string `json:"tampering,omitempty"`
}

// RunStatePath is where the run state of the repository's worktree is kept.
func RunStatePath(gitDir string) string { return filepath.Join(gitDir, "evolve", "run.json") }

// LoadRunState reads the run state (nil when no run was ever made here).
func LoadRunState(gitDir string) (*RunState, error) {
	data, err := os.ReadFile(RunStatePath(gitDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r RunState
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", RunStatePath(gitDir), err)
	}
	return &r, nil
}

func (r *RunState) save(gitDir string) error {
	if err := os.MkdirAll(filepath.Dir(RunStatePath(gitDir)), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := WriteAtomic(RunStatePath(gitDir), data); err != nil {
		return err
	}
	r.written = data
	return nil
}

// RunOptions are a run's settings and where it reports.
type RunOptions struct {
	Agent        string
	MaxCycles    int // 0: until something halts the loop
	PushEvery    int // push the branch after every N productive cycles (0: never)
	SyncUpstream bool
	Quality      bool
	BeadsOnly    bool
	SkipBaseline bool
	Strategy     string
	AgentTimeout time.Duration
	RoadmapFile  string
	Resume       bool
	Convergence  ConvergenceThresholds
	// Soft is closed to stop the run after the step under way (the first
	// Ctrl-C); the run's ctx ends it at once (the second).
	Soft <-chan struct{}
	// AgentOut receives the agent's output (stdout and stderr).
	AgentOut io.Writer
	// Progress is told what the run is doing.
	Progress func(string)
	Getenv   func(string) string
	Now      func() time.Time
	// Trusted refuses a goals file this machine has not trusted.
	Trusted func(data []byte, path string) error
	// SyncLedger syncs the ledger with a remote (git evolve sync): with
	// SyncUpstream, the upstream's remote, before each cycle, so that the
	// cycle is numbered after every cycle the remote holds.
	SyncLedger func(remote string) error
	// CheckLedger verifies the ledger before each cycle opens: an error
	// (a breach) stops the run with it.
	CheckLedger func() error
	// OnStart, when set, is told each cycle the run starts (its number,
	// its start commit, the goals measured there) before the agent's
	// turn; OnFinish each finish's result. The seeds' local files follow
	// them.
	OnStart  func(n int, start gitstore.Hash, measured *goals.Snapshot)
	OnFinish func(res *cycle.FinishResult)
}

// RunError is a run that could not start or go on, with what to do.
type RunError struct {
	Msg, Hint string
	// Usage marks a refusal of the command line or the repository's state
	// (exit 10), not a failure while running.
	Usage bool
	// Exhausted marks a run resumed more times in a row than
	// evolve.run.maxResumes allows without a cycle ending: the operator's
	// to look at (exit 2, as seed 002's dispatcher exits once its
	// autoResumeAttempts are spent).
	Exhausted bool
	// Lost marks a run stopped because a git directory of the worktree is
	// no longer where the run found it (the main worktree's .git, or a
	// linked worktree's git directories, moved or replaced during the
	// agent's turn and not put back): nothing more is read or written
	// through that path, the run's state included.
	Lost bool
}

// DefaultMaxResumes is how many times in a row a run is resumed without
// a cycle of it ending (seed 002's autoResumeAttempts cap).
const DefaultMaxResumes = 3

// maxResumes reads evolve.run.maxResumes (0: no limit).
func maxResumes(repo *gitstore.Repo) (int, error) {
	cfg, err := repo.ConfigSection("evolve")
	if err != nil {
		return 0, err
	}
	vals := cfg["evolve.run.maxresumes"]
	if len(vals) == 0 {
		return DefaultMaxResumes, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(vals[len(vals)-1]))
	if err != nil || n < 0 {
		return 0, &RunError{Msg: fmt.Sprintf("git config evolve.run.maxResumes = %q: must be a whole number, 0 (no limit) or more", vals[len(vals)-1]), Usage: true,
			Hint: "set it to a number, or remove it to use the default (3): git config --unset evolve.run.maxResumes"}
	}
	return n, nil
}

func (e *RunError) Error() string { return e.Msg }

// Summary is how a run ended.
type Summary struct {
	*RunState
	Reason string `json:"stop_reason"`
	Detail string `json:"stop_detail,omitempty"`
	// Halted says a halt (or convergence) stopped the loop, Paused a budget
	// or an interrupt that run --resume continues.
	Halted bool `json:"halted"`
	Paused bool `json:"paused"`
	// Queue is the pinned roadmap's progress, when one is pinned (the
	// seeds' "Queue: X/Y items completed" line).
	Queue *QueueTally `json:"queue,omitempty"`
	// Quality is a quality run's score of the findings left at its start
	// and end, and the high and medium findings still open (the seeds'
	// "Quality score" and "Remaining unconsumed" lines).
	Quality *QualityTally `json:"quality,omitempty"`
}

// QualityTally is a quality run's score before and after, and what is left.
type QualityTally struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	High   int     `json:"high"`
	Medium int     `json:"medium"`
}

// QueueTally is how far the pinned roadmap was worked: its items completed
// of all, the blockers landed, the items escalated.
type QueueTally struct {
	Completed int `json:"completed"`
	Total     int `json:"total"`
	Unblocked int `json:"unblocked"`
	Escalated int `json:"escalated"`
}

// queueTally reads the pinned roadmap's progress (nil without one).
func queueTally(top string) *QueueTally {
	r, err := loadRoadmap(top, "", time.Time{})
	if err != nil || r == nil {
		return nil
	}
	t := &QueueTally{Completed: r.State.CompletedItems(r.Items), Total: len(r.Items), Escalated: len(r.State.Escalated)}
	blockers := map[string]bool{}
	for _, it := range r.Items {
		if it.Blocker != "" {
			blockers[it.Blocker] = true
		}
	}
	for _, b := range r.State.Found {
		blockers[b] = true // read from a failure's output
	}
	for _, id := range r.State.Completed {
		if blockers[id] {
			t.Unblocked++
		}
	}
	return t
}

// Run drives the loop: halt-check, the work ladder, a cycle started on the
// work, the agent command, the cycle finished, again, until something halts
// the loop, it converges, the cycles run out or the operator interrupts.
// Every step is from the tool: the agent only changes the working tree.
// An error that stops a run under way is returned with the run's summary
// (its reason StopError); one that refuses the run, with none.
func Run(ctx context.Context, l *cycle.Ledger, o RunOptions) (*Summary, error) {
	repo := l.Repo()
	gitDir := repo.GitDir()
	now := o.Now
	if now == nil {
		now = time.Now
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if o.AgentOut == nil {
		o.AgentOut = io.Discard
	}
	// One run drives a worktree at a time: a second would take the first's
	// cycles and overwrite its run state.
	hold, warning, err := takeHold(gitDir)
	if err != nil {
		return nil, err
	}
	defer hold.release()
	if warning != "" {
		progress("warning: " + warning)
	}
	prior, err := LoadRunState(gitDir)
	if err != nil {
		return nil, err
	}
	if prior != nil && agentAlive(prior) {
		return nil, &RunError{Msg: fmt.Sprintf("the agent of run %s still runs (process group %d): its run was killed without stopping it", prior.ID, prior.AgentGroup),
			Hint: fmt.Sprintf("wait for it to end, or end it (kill -TERM -%d), then run again", prior.AgentGroup)}
	}
	open, err := l.Current()
	if err != nil && !errors.Is(err, cycle.ErrNoOpenCycle) {
		return nil, err
	}
	if open != nil && open.Aborting != nil {
		// An abort that was interrupted is completed, never finished: its
		// record may be written already.
		if _, _, err := l.AbortCycle(open.Aborting.Reason, cycle.AbortNotes{}); err != nil {
			return nil, err
		}
		open = nil
	}
	if prior != nil && open == nil && prior.Phase != PhaseRestore {
		// The cycle the last run was in has closed: an abort it did not
		// get to note (it stopped between the abort and its run state)
		// still has its working tree to restore.
		if err := recoverAborted(l, prior); err != nil {
			return nil, err
		}
	}
	var r *RunState
	// killed: the last run was killed while its agent worked (it stopped
	// without saying why); r, the prior run's state when it resumes, is
	// told it no longer stopped below.
	killed := prior != nil && prior.Stopped == "" && prior.Phase == PhaseAgent
	if o.Resume {
		if prior == nil {
			return nil, &RunError{Msg: "there is no run to resume in this worktree", Hint: "start one with git evolve run --agent '<command>'", Usage: true}
		}
		limit, err := maxResumes(repo)
		if err != nil {
			return nil, err
		}
		if limit > 0 && prior.Resumes >= limit {
			why := prior.Stopped
			if why == "" {
				why = "killed"
			}
			return nil, &RunError{Exhausted: true,
				Msg:  fmt.Sprintf("run %s was resumed %d times in a row and no cycle of it ended (evolve.run.maxResumes is %d; it last stopped: %s): it is not resumed again", prior.ID, prior.Resumes, limit, why),
				Hint: "find out why it keeps stopping (git evolve status, git evolve halt-check); then resume it once more with a higher limit (git -c evolve.run.maxResumes=" + strconv.Itoa(limit+1) + " evolve run --resume), or close its open cycle (git evolve cycle abort saves its work) and start a new run"}
		}
		r = prior
		r.Resumes++
		if o.Agent != "" {
			r.Agent = o.Agent
		}
		if o.Strategy != "" {
			r.Strategy = o.Strategy
		}
		if o.MaxCycles > 0 {
			r.MaxCycles = o.MaxCycles
		}
		if o.PushEvery > 0 {
			r.PushEvery = o.PushEvery
		}
		r.SyncUpstream = r.SyncUpstream || o.SyncUpstream
		r.Quality = r.Quality || o.Quality
		r.BeadsOnly = r.BeadsOnly || o.BeadsOnly
		r.SkipBaseline = r.SkipBaseline || o.SkipBaseline
		if o.AgentTimeout > 0 {
			r.AgentTimeout = o.AgentTimeout.String()
		}
		if o.RoadmapFile != "" {
			r.Roadmap = o.RoadmapFile
		}
		if open != nil && open.Run != r.ID {
			return nil, &RunError{Msg: fmt.Sprintf("cycle %d is open in this worktree and is not of run %s", open.Cycle, r.ID),
				Hint: "finish it (git evolve cycle finish) or abort it (git evolve cycle abort) first", Usage: true}
		}
		r.Stopped = ""
	} else {
		if o.Agent == "" {
			return nil, &RunError{Msg: "a run needs the agent command: --agent '<command>'", Usage: true}
		}
		if open != nil {
			hint := "finish it (git evolve cycle finish) or abort it (git evolve cycle abort) first"
			if prior != nil && open.Run == prior.ID {
				hint = "it is run " + prior.ID + "'s: continue that run with git evolve run --resume, or abort the cycle first"
			}
			return nil, &RunError{Msg: fmt.Sprintf("cycle %d (target %s) is open in this worktree", open.Cycle, open.Target), Hint: hint, Usage: true}
		}
		timeout := o.AgentTimeout
		if timeout <= 0 {
			timeout = DefaultAgentTimeout
		}
		strategy := o.Strategy
		if strategy == "" {
			strategy = "balanced"
		}
		if o.RoadmapFile != "" {
			top, err := repo.WorkTree()
			if err != nil {
				return nil, err
			}
			if _, err := loadRoadmap(top, o.RoadmapFile, now()); err != nil {
				return nil, err // before the last run's state is replaced
			}
		}
		r = &RunState{ID: newRunID(now()), StartedAt: now().UTC().Format(time.RFC3339), Agent: o.Agent, Strategy: strategy,
			MaxCycles: o.MaxCycles, AgentTimeout: timeout.String(), Roadmap: o.RoadmapFile, Cycles: []Ended{},
			PushEvery: o.PushEvery, SyncUpstream: o.SyncUpstream, Quality: o.Quality, BeadsOnly: o.BeadsOnly,
			SkipBaseline: o.SkipBaseline}
		if prior != nil && prior.Phase == PhaseRestore && prior.Restore != nil {
			// The last run stopped before it restored an aborted cycle's
			// working tree: this one does it first.
			r.Phase, r.Restore = PhaseRestore, prior.Restore
		}
	}
	if _, ok := Strategies[r.Strategy]; !ok {
		return nil, &RunError{Msg: fmt.Sprintf("--strategy %s: not one of balanced, innovate, harden, repair, ultrathink, autoresearch", r.Strategy), Usage: true}
	}
	timeout, err := time.ParseDuration(r.AgentTimeout)
	if err != nil || timeout <= 0 {
		timeout = DefaultAgentTimeout
	}
	if err := r.save(gitDir); err != nil {
		return nil, err
	}
	d := &driver{l: l, o: o, r: r, gitDir: gitDir, hold: hold, now: now, progress: progress, timeout: timeout}
	if top, err := repo.WorkTree(); err == nil {
		// Seed 004: a profile that lacks a field it requires is said
		// before the first cycle; the run goes on without it.
		for _, c := range ReadContracts(top) {
			if miss := c.Missing(ProfileRequired); c.Path == ProfileFile && len(miss) > 0 {
				d.say("warning: %s gives no %s: the agent's brief goes without", ProfileFile, strings.Join(miss, ", "))
			}
		}
	}
	if o.Resume && killed && open != nil && open.Run == prior.ID {
		// The last run was killed while its agent worked: the agent may
		// have gone on alone, with run.json in reach.
		d.readBack = open.ID
	}
	if open != nil && r.CycleID == open.ID {
		d.marks = slices.Clone(r.PendingTampering)
		d.markerNotes = slices.Clone(r.PendingMarkers)
	}
	// The no-progress breaker counts the time this invocation works: the
	// time a run stood stopped before --resume is no time without progress.
	d.runStart = now().UTC().Truncate(time.Second)
	sum, err := d.loop(ctx, open)
	if err != nil && sum == nil {
		// The run stops on the error: its state and summary say so, and
		// what it did so far.
		sum = &Summary{RunState: d.r, Reason: StopError, Detail: err.Error()}
	}
	var re *RunError
	if errors.As(err, &re) && re.Lost {
		return sum, err // its state is not written where another repository may be
	}
	if sum != nil {
		r.Stopped = sum.Reason
		if top, err := repo.WorkTree(); err == nil {
			sum.Queue = queueTally(top)
		}
		if r.Quality && r.QualityStart != nil {
			if s, err := Load(d.l, LoadOptions{Now: now(), Getenv: o.Getenv}); err == nil {
				high, medium := s.openFindings("")
				sum.Quality = &QualityTally{Start: *r.QualityStart, End: s.QualityScore(""), High: high, Medium: medium}
			}
		}
	}
	if serr := r.save(gitDir); err == nil && serr != nil {
		err = serr
	}
	return sum, err
}

type driver struct {
	l        *cycle.Ledger
	o        RunOptions
	r        *RunState
	gitDir   string
	hold     *runHold
	now      func() time.Time
	progress func(string)
	timeout  time.Duration
	runStart time.Time
	// ranCycle: this invocation has started a cycle (checkClean is strict
	// before the first).
	ranCycle bool
	// noticed: the notice that both goals files exist was said.
	noticed bool
	// readBack is the cycle whose ruler was read back from run.json after
	// the run driving it was killed during the agent's turn.
	readBack string
	// marks are what the driver saw the agent try during its turn, for the
	// cycle's record.
	marks []string
	// markerNotes are what the watch saw of the markers during the agent's
	// turn, for the cycle's record.
	markerNotes []string
	// tail is the end of the last agent's output.
	tail *tail
	// haltNext stops the run before its next cycle, and says why.
	haltNext string
	// lost: the repository's git directory is no longer where the run
	// found it (RunError.Lost); nothing more is read through its path.
	lost bool
}

func (d *driver) stop(reason, detail string) *Summary {
	s := &Summary{RunState: d.r, Reason: reason, Detail: detail}
	switch reason {
	case StopMaxCycles:
	case HaltBudget, StopInterrupted:
		s.Paused = true
	default:
		s.Halted = true
	}
	return s
}

func (d *driver) soft() bool {
	if d.o.Soft == nil {
		return false
	}
	select {
	case <-d.o.Soft:
		return true
	default:
		return false
	}
}

func (d *driver) say(format string, args ...any) {
	d.progress(fmt.Sprintf("run %s: ", d.r.ID) + fmt.Sprintf(format, args...))
}

func (d *driver) loop(ctx context.Context, open *cycle.OpenCycle) (*Summary, error) {
	// A run stopped while it brought an aborted cycle's working tree back
	// first completes that.
	if d.r.Phase == PhaseRestore && d.r.Restore != nil && open == nil {
		if err := d.restore(); err != nil {
			return nil, err
		}
	}
	// A resumed run first completes the cycle it left open.
	if open != nil {
		d.ranCycle = true
		s, err := Load(d.l, LoadOptions{Now: d.now(), Getenv: d.o.Getenv, RoadmapFile: d.r.Roadmap})
		if err != nil {
			return nil, err
		}
		if d.r.Phase != PhaseFinish && d.r.Phase != PhaseJudge && open.Finish == nil {
			w := &Work{Rung: open.Rung, Target: open.Target, Title: goalTitle(s.Goals, open.Target), Restorative: d.r.Restorative, Skipped: []string{},
				Why: "the run was interrupted while the agent worked on this cycle: it goes on"}
			if g, ok := Generators[open.Rung]; ok {
				w.Title = g
			}
			var before goals.Snapshot
			var measured *goals.Snapshot
			if json.Unmarshal(open.Before, &before) == nil {
				measured = &before
			}
			// What the interrupted agent left is saved before another runs
			// on it.
			saved, err := d.l.SaveInterrupted(open)
			if err != nil {
				return nil, err
			}
			d.say("cycle %d: saved the working tree the interrupted agent left as %s (%s)", open.Cycle, saved.Short(), strings.TrimPrefix(cycle.InterruptedRef(open.ID), "refs/"))
			sum, closed, err := d.agentStep(ctx, s, open, w, measured, true)
			if sum != nil || err != nil {
				return sum, err
			}
			if closed {
				open = nil
			}
		}
		if open != nil {
			if err := d.sameTurnHead(open); err != nil {
				return nil, err
			}
			// A finish the last run began itself is completed; one it did
			// not begin is the agent's, and is dropped.
			resuming := d.r.Phase == PhaseJudge && open.Finish != nil
			if sum, err := d.finishStep(ctx, open, resuming); sum != nil || err != nil {
				return sum, err
			}
		}
	}
	for {
		if ctx.Err() != nil || d.soft() {
			return d.stop(StopInterrupted, "interrupted between cycles"), nil
		}
		if d.r.MaxCycles > 0 && d.r.Tally.Cycles >= d.r.MaxCycles {
			return d.stop(StopMaxCycles, fmt.Sprintf("%d cycle(s) ran", d.r.Tally.Cycles)), nil
		}
		if d.haltNext != "" {
			return d.stop(HaltUser, d.haltNext), nil
		}
		if err := d.upstreamGuard(); err != nil {
			return nil, err
		}
		// No cycle opens on a ledger that fails verify: its number, and
		// what it is judged against, would build on the breach.
		if d.o.CheckLedger != nil {
			if err := d.o.CheckLedger(); err != nil {
				return nil, err
			}
		}
		s, err := Load(d.l, LoadOptions{Now: d.now(), Getenv: d.o.Getenv, RoadmapFile: d.r.Roadmap})
		if err != nil {
			return nil, err
		}
		if _, err := s.Reconcile(); err != nil {
			return nil, err
		}
		d.say("halt-check")
		h, err := s.CheckHalt(ctx, HaltOptions{RunStart: d.runStart})
		if err != nil {
			return nil, err
		}
		for _, w := range h.Warnings {
			d.say("warning: %s", w)
		}
		for _, m := range h.StaleMarkers {
			d.say("ignored a stale marker: %s (written %s)", m.Path, m.Time.Format(time.RFC3339))
		}
		if h.Halt {
			return d.stop(h.Reason, h.Detail), nil
		}
		conv, err := s.Converged(d.o.Convergence)
		if err != nil {
			return nil, err
		}
		if conv.Converged {
			return d.stop(StopConverged, fmt.Sprintf("a green streak of %d, %d high or medium item(s) open, a baseline captured", conv.CIGreenStreak, conv.UnconsumedHighMedium)), nil
		}
		if s.Goals == nil {
			return nil, &RunError{Msg: "No goals to measure: " + s.GoalsErr.Error(), Usage: true,
				Hint: "create GOALS.yaml in the repository root with fitness goals (version, goals: id, description, check, weight), or GOALS.md with a ## Gates table; see git evolve goals validate -h"}
		}
		if s.GoalsNotice != "" && !d.noticed {
			d.say("notice: %s", s.GoalsNotice)
			d.noticed = true
		}
		data := s.GoalsData
		if d.o.Trusted != nil {
			if err := d.o.Trusted(data, s.GoalsName); err != nil {
				return nil, err
			}
		}
		if err := d.checkClean(s); err != nil {
			return nil, err
		}
		head, err := d.l.Repo().ResolveCommits("HEAD")
		if err != nil {
			return nil, err
		}
		g, _, err := d.l.StartGate(head[0], s.Goals)
		if err != nil {
			return nil, err // a cycle its gate cannot judge does not start
		}
		d.ranCycle = true
		n := s.MaxCycle() + 1
		d.say("cycle %d: measuring the goals", n)
		// In the judging checkout of HEAD, where the cycle's work will be
		// measured too.
		started, err := d.l.MeasureStart(ctx, head[0], s.Goals, g, goals.Options{Now: d.now, OnCheck: func(id string) { d.say("cycle %d: measuring %s", n, id) }})
		if err != nil {
			return nil, err
		}
		measured := started.Goals
		if c := started.Census; c != nil {
			d.say("cycle %d: tests: %s (counted by %s)", n, c.Summary(), c.Runner)
		}
		if h := started.Holdout; h != nil {
			d.say("cycle %d: holdout: %d check(s), %d passing", n, len(h.Goals), started.HoldoutBefore.Summary.Passing)
		}
		if ctx.Err() != nil {
			return d.stop(StopInterrupted, "interrupted while the goals were measured"), nil
		}
		if d.r.Start == nil {
			d.r.Start = scoreOf(measured)
		}
		if d.r.Quality && d.r.QualityStart == nil {
			q := s.QualityScore("")
			d.r.QualityStart = &q
		}
		// The seeds: on the first eligible run, capture the fitness
		// baseline (once per goals era; convergence needs it), unless
		// told to skip it.
		if !d.r.SkipBaseline {
			if err := d.captureBaseline(s, measured); err != nil {
				return nil, err
			}
		}
		d.r.End = scoreOf(measured)
		beads, err := ReadyBeads(ctx, s.Top)
		if err != nil {
			d.say("warning: the beads rung is skipped: %v", err)
		}
		w := s.Select(SelectOptions{Measured: measured, Restorative: h.Restorative, Strategy: d.r.Strategy,
			Beads: beads, BeadsOnly: d.r.BeadsOnly, Quality: d.r.Quality})
		for _, q := range w.Quarantine {
			if _, err := s.WriteQuarantine(q); err != nil {
				return nil, err
			}
			d.say("quarantined goal %s: it passed after an improved cycle and failed again %d times", q.Goal, q.Oscillations)
		}
		if d.soft() {
			return d.stop(StopInterrupted, "interrupted before cycle "+strconv.Itoa(n)+" started"), nil
		}
		// The claim outlasts the agent's time, so that no other loop takes
		// the item while this one works on it.
		s.Config.Lease = max(s.Config.Lease, d.timeout+10*time.Minute)
		if err := s.Take(w); err != nil {
			return nil, err
		}
		so, err := started.StartOptions(cycle.StartOptions{Target: w.Target, Era: s.Goals.Era, GoalsFile: data, GoalsName: s.GoalsName,
			Item: w.ItemID(), Rung: w.Rung, Run: d.r.ID, Fields: s.CycleFields(w)})
		var c *cycle.OpenCycle
		if err == nil {
			c, err = d.l.StartCycle(so)
		}
		if err != nil {
			if uerr := s.Untake(w); uerr != nil {
				err = fmt.Errorf("%w (and the claim on %s stays: %v)", err, w.ItemID(), uerr)
			}
			return nil, err
		}
		d.r.Phase, d.r.CycleID, d.r.Restorative = PhaseAgent, c.ID, w.Restorative
		if d.r.Kept, err = keptCopy(c); err != nil {
			return nil, err
		}
		if _, err := takeRefused(d.gitDir, d.hold.received()); err != nil { // none of this cycle's
			return nil, err
		}
		if err := d.r.save(d.gitDir); err != nil {
			return nil, err
		}
		d.say("cycle %d started: %s (%s), %s", c.Cycle, c.Target, w.Rung, w.Why)
		if line := c.Ignored.Line(); line != "" {
			d.say("%s", line)
		}
		if d.o.OnStart != nil {
			d.o.OnStart(c.Cycle, head[0], measured)
		}
		sum, closed, err := d.agentStep(ctx, s, c, w, measured, false)
		if sum != nil || err != nil {
			return sum, err
		}
		if closed {
			continue
		}
		if sum, err := d.finishStep(ctx, c, false); sum != nil || err != nil {
			return sum, err
		}
	}
}

// captureBaseline stores the goals measured as the era's baseline when the
// era has none yet (a clone's baseline, fetched, counts), on HEAD, and says
// so.
func (d *driver) captureBaseline(s *State, measured *goals.Snapshot) error {
	repo := d.l.Repo()
	found, err := fitness.Baseline(repo, s.Goals.Era)
	if err != nil || found != nil {
		return err
	}
	head, err := repo.ResolveCommits("HEAD")
	if err != nil {
		return err
	}
	snap := *measured
	snap.GitSHA = head[0].String()
	changed, err := repo.ChangedSince(head[0])
	if err != nil {
		return err
	}
	snap.Dirty = len(changed) > 0
	if err := fitness.Save(repo, head[0], fitness.KindBaseline, &snap); err != nil {
		return err
	}
	d.say("captured the baseline of era %s on %s: score %.1f, %s", s.Goals.Era, head[0].Short(), snap.Summary.Score, snap.Summary.Counts())
	return nil
}

// keptCopy is a copy of the open cycle c, for the driver to keep.
func keptCopy(c *cycle.OpenCycle) (*cycle.OpenCycle, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var kept cycle.OpenCycle
	return &kept, json.Unmarshal(data, &kept)
}

// agentStep runs the agent on the open cycle c. An agent that fails or
// times out has the cycle aborted (its work saved) and counted (closed is
// then true); it returns a summary when the run stops here.
func (d *driver) agentStep(ctx context.Context, s *State, c *cycle.OpenCycle, w *Work, measured *goals.Snapshot, resumed bool) (sum *Summary, closed bool, err error) {
	b, err := newBrief(s, d.r, c, w, measured, resumed)
	if err != nil {
		return nil, false, err
	}
	md, js, err := writeBrief(filepath.Join(d.gitDir, "evolve"), b)
	if err != nil {
		return nil, false, err
	}
	env := map[string]string{
		"EVOLVE_CYCLE": strconv.Itoa(c.Cycle), "EVOLVE_ID": c.ID, "EVOLVE_TARGET": c.Target, "EVOLVE_START_SHA": c.Start,
		"EVOLVE_RESTORATIVE": strconv.FormatBool(w.Restorative), "EVOLVE_STRATEGY": d.r.Strategy,
		"EVOLVE_BRIEF": md, "EVOLVE_BRIEF_JSON": js, "EVOLVE_RUN_ID": d.r.ID, "EVOLVE_RUNG": w.Rung, "EVOLVE_ITEM": c.Item,
		"EVOLVE_RESUMED": strconv.FormatBool(resumed), "EVOLVE_COMMIT_MSG": filepath.Join(s.Top, filepath.FromSlash(CommitMsgFile)),
		"EVOLVE_VERDICTS":   filepath.Join(s.Top, filepath.FromSlash(VerdictsFile)),
		"EVOLVE_HYPOTHESES": filepath.Join(s.Top, filepath.FromSlash(NewHypothesesFile)),
	}
	// What the agent writes for the driver is in the working tree (its
	// sandbox may keep .git read-only), out of git, and never left over
	// from an earlier cycle.
	if s.Markers.Exclude != "" {
		if _, err := ExcludeMarkers(s.Markers.Exclude); err != nil {
			return nil, false, err
		}
	}
	for _, f := range []string{CommitMsgFile, VerdictsFile, NewHypothesesFile} {
		if err := os.Remove(filepath.Join(s.Top, filepath.FromSlash(f))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	if err := os.MkdirAll(filepath.Join(s.Top, ".agents", "evolve"), 0o755); err != nil {
		return nil, false, err
	}
	d.say("cycle %d: the agent works (timeout %s)", c.Cycle, d.timeout)
	// The trust this machine gives goals files is the operator's: what the
	// agent writes into it during its turn is undone.
	trust := goals.TrustAt(filepath.Join(d.l.Repo().CommonDir(), "evolve"))
	trusted, err := trust.Snapshot()
	if err != nil {
		return nil, false, err
	}
	// What the agent's turn changes under the git directory is put back
	// after it, before the driver writes anything of its own.
	guard, err := guardTurn(d.l.Repo(), c.ID, func() []byte { return d.r.written })
	if err != nil {
		return nil, false, err
	}
	outside := watchOutside(d.l, s.Top)
	watch := watchMarkers(s.Markers, d.resumed(s.Markers), 200*time.Millisecond)
	failure, err := d.runAgent(ctx, s.Top, env)
	notes, removed, herr := d.endTurn(guard, outside, watch, s.Top)
	if err == nil {
		err = herr
	}
	if err != nil {
		// Saved as the run stops: the cycle's record names them when it
		// resumes.
		d.r.PendingTampering = d.marks
	}
	if removed {
		// Put back (or said that it could not be), and halting whatever
		// its age: the operator's to lift.
		d.haltNext = "the agent removed a marker the operator had written during its turn; it was put back"
		if len(watch.NotBack) > 0 {
			d.haltNext = "the agent removed a marker the operator had written during its turn; it could not be put back"
		}
	}
	if err == nil {
		if terr := d.keepTranscript(c); terr != nil {
			d.say("warning: cycle %d: the agent's transcript was not kept: %v", c.Cycle, terr)
		}
		for _, m := range recordVerdicts(d.l.Repo(), s.Top, d.now()) {
			d.say("cycle %d: %s", c.Cycle, m)
		}
		for _, m := range recordNewHypotheses(d.l.Repo(), s.Top, c.Cycle, d.now()) {
			d.say("cycle %d: %s", c.Cycle, m)
		}
	}
	for _, n := range notes {
		d.say("cycle %d: %s", c.Cycle, n)
		d.r.Markers = append(d.r.Markers, fmt.Sprintf("cycle %d: %s", c.Cycle, n))
	}
	d.markerNotes = append(d.markerNotes, notes...)
	d.r.PendingMarkers = d.markerNotes // saved with the run's state, until a finish records them
	if err != nil {
		return nil, false, err
	}
	if now, err := trust.Snapshot(); err != nil {
		return nil, false, err
	} else if !bytes.Equal(now, trusted) || (now == nil) != (trusted == nil) {
		if err := trust.Restore(trusted); err != nil {
			return nil, false, err
		}
		d.marks = append(d.marks, "trust: the goals files trusted on this machine were changed during the agent's turn; the driver put them back")
	}
	if ctx.Err() != nil {
		for _, m := range d.marks {
			d.say("warning: cycle %d: %s", c.Cycle, m)
		}
		d.r.PendingTampering = d.marks // saved as the run stops
		return d.stop(StopInterrupted, fmt.Sprintf("interrupted while the agent worked on cycle %d; run --resume runs it again", c.Cycle)), false, nil
	}
	if failure != "" {
		d.say("cycle %d: the agent %s: the cycle is aborted, its work saved", c.Cycle, failure)
		for _, m := range d.marks {
			d.say("warning: cycle %d: %s", c.Cycle, m)
		}
		// The record carries what the turn did, as a finish's does: the
		// commands refused and the marks, kept with the run's state until
		// the abort keeps them (an abort resumed has them from there).
		refused, err := takeRefused(d.gitDir, d.hold.received())
		if err != nil {
			return nil, false, err
		}
		notes := cycle.AbortNotes{Tampering: append(refused, d.marks...), Markers: d.markerNotes}
		d.r.PendingTampering, d.r.PendingMarkers = notes.Tampering, notes.Markers
		if err := d.r.save(d.gitDir); err != nil {
			return nil, false, err
		}
		d.marks, d.markerNotes = nil, nil
		aborted, saved, err := d.l.AbortCycle("the agent "+failure, notes)
		if err != nil {
			return nil, false, err
		}
		d.r.PendingTampering, d.r.PendingMarkers = nil, nil
		if a := aborted.Aborting; a != nil && len(a.IgnoredPut) > 0 {
			d.say("cycle %d: put back %d ignored file(s) the agent removed or changed", c.Cycle, len(a.IgnoredPut))
		}
		if a := aborted.Aborting; a != nil && len(a.IgnoredNotBack) > 0 {
			d.say("warning: cycle %d: %d ignored file(s) the agent changed were not put back: the start's versions stay in %s", c.Cycle, len(a.IgnoredNotBack), cycle.IgnoredRef(c.ID))
		}
		// The restore to do is kept before anything else can fail: a run
		// that stops here completes it when it resumes.
		e := Ended{Cycle: c.Cycle, ID: c.ID, Target: c.Target, Rung: c.Rung, Result: "aborted", Reason: "the agent " + failure, Commit: saved.String(), Item: c.Item}
		d.r.Tally.Cycles++
		d.r.Resumes = 0
		d.r.Tally.Aborted++
		d.r.Cycles = append(d.r.Cycles, e)
		d.r.Phase, d.r.CycleID, d.r.Restorative, d.r.Kept, d.r.TurnHead = PhaseRestore, "", false, nil, ""
		d.r.Restore = &PendingRestore{Cycle: c.Cycle, ID: c.ID, Target: c.Target, Start: c.Start, Saved: saved.String(), Branch: c.Branch, Base: c.Base, Clock: c.Clock}
		if err := d.r.save(d.gitDir); err != nil {
			return nil, false, err
		}
		st, err := Settle(d.l.Repo(), s.Top, c, ledger.Unchanged, true, FailureText(d.transcript(), nil), d.now)
		if err != nil {
			return nil, false, err
		}
		d.r.Cycles[len(d.r.Cycles)-1].Settled = st.Action
		d.sayBlocker(c, st)
		if err := d.restore(); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	d.r.Phase, d.r.PendingTampering = PhaseFinish, d.marks
	d.r.TurnHead = ""
	if head, err := d.l.Repo().ResolveCommits("HEAD"); err == nil {
		d.r.TurnHead = head[0].String()
	}
	if err := d.r.save(d.gitDir); err != nil {
		return nil, false, err
	}
	if d.soft() {
		for _, m := range d.marks {
			d.say("warning: cycle %d: %s", c.Cycle, m)
		}
		return d.stop(StopInterrupted, fmt.Sprintf("stopped after the agent of cycle %d; run --resume finishes the cycle", c.Cycle)), false, nil
	}
	return nil, false, nil
}

// endTurn is what the driver does as the agent's turn ends: afterTurn,
// then the marker watch's last look (notes and removed, as watch.end). The
// watch stops looking first: a marker gone has it ask the repository
// whether the operator resumed, which it does not until the guard has put
// back where the repository is, and not at all when the guard could not
// (a resume is then told by the stamp alone; a working tree moved or
// replaced has nothing put back in what is there now).
func (d *driver) endTurn(guard *turnGuard, outside *outsideTurn, watch *markerWatch, top string) (notes []string, removed bool, err error) {
	watch.halt()
	err = d.afterTurn(guard, outside)
	var re *RunError
	if errors.As(err, &re) && re.Lost {
		d.lost = true
		if guard.topLost {
			watch.leave(top)
		}
	}
	notes, removed = watch.end(top)
	return notes, removed, err
}

// afterTurn checks, as the agent's turn ends, that the driver still holds
// the worktree, and puts back what the turn changed under the git
// directory (guard): each is marked for the cycle's record. Where the
// repository is comes first (restoreLinks): in the main worktree the
// hold's lock is found through it.
func (d *driver) afterTurn(guard *turnGuard, outside *outsideTurn) error {
	defer guard.close()
	marks, lerr := guard.restoreLinks()
	d.marks = append(d.marks, marks...)
	var re *RunError
	if errors.As(lerr, &re) && re.Lost {
		// What else the turn changed in the repository is put back
		// where the directory is now, when it is found there, and the
		// run's state written there: once the operator has moved it
		// back, it is as the turn found it, and the resumed cycle's
		// record names all of it.
		marks, gitDir, err := guard.restoreWhereFound()
		if err != nil {
			d.marks = append(d.marks, "the rest of the git directory was not compared: "+err.Error())
			return lerr
		}
		d.marks = append(d.marks, marks...)
		d.r.Stopped, d.r.PendingTampering = StopError, d.marks
		if err := d.r.save(gitDir); err != nil {
			return lerr
		}
		re.Msg += "; what else the turn changed in it was put back there, and the run's state written there"
		return lerr
	}
	mark, err := d.hold.check()
	if mark != "" {
		d.marks = append(d.marks, mark)
	}
	marks, gerr := guard.restore()
	d.marks = append(d.marks, marks...)
	d.marks = append(d.marks, outside.check()...)
	return cmp.Or(err, lerr, gerr)
}

// finishStep finishes the open cycle c and settles its work. The ruler is
// the one the driver kept when it opened the cycle; resuming says a finish
// the last run began may be under way.
func (d *driver) finishStep(ctx context.Context, c *cycle.OpenCycle, resuming bool) (*Summary, error) {
	d.say("cycle %d: finishing: the gate runs", c.Cycle)
	refused, err := takeRefused(d.gitDir, d.hold.received())
	if err != nil {
		return nil, err
	}
	var quality func(string) *float64
	if d.r.Quality {
		// Seed 004: the score of the findings left, the cycle's own item
		// not counted when it delivered.
		quality = func(result string) *float64 {
			s, err := Load(d.l, LoadOptions{Now: d.now(), Getenv: d.o.Getenv})
			if err != nil {
				return nil
			}
			done := ""
			if Delivered(result) {
				done = c.Item
			}
			q := s.QualityScore(done)
			return &q
		}
	}
	top, err := d.l.Repo().WorkTree()
	if err != nil {
		return nil, err
	}
	msg, err := agentMessage(top)
	if err != nil {
		d.say("warning: cycle %d: %v", c.Cycle, err)
		msg = ""
	}
	opts := cycle.FinishOptions{Message: msg, QualityScore: quality, Progress: func(m string) { d.say("cycle %d: %s", c.Cycle, m) },
		OnCheck:   func(id string) { d.say("cycle %d: gate: measuring %s", c.Cycle, id) },
		Resuming:  resuming,
		Tampering: refused,
		Require:   Requirements(d.l.Repo())}
	if k := d.r.Kept; k != nil && k.ID == c.ID {
		opts.Kept = k
	}
	opts.Tampering = append(opts.Tampering, d.marks...)
	d.marks = nil
	opts.Markers, d.markerNotes = d.markerNotes, nil
	if d.readBack == c.ID {
		opts.Tampering = append(opts.Tampering, "the run driving the cycle was killed during the agent's turn: its ruler was read back from run.json, which the agent could have changed")
	}
	// What the finish is to name is kept until it has: a finish that
	// stops before its record names it when the run resumes.
	d.r.Phase, d.r.PendingTampering, d.r.PendingMarkers = PhaseJudge, opts.Tampering, opts.Markers
	if err := d.r.save(d.gitDir); err != nil {
		return nil, err
	}
	res, err := d.l.Finish(ctx, opts)
	if errors.Is(err, cycle.ErrInterrupted) {
		return d.stop(StopInterrupted, fmt.Sprintf("interrupted while the gate of cycle %d ran; run --resume finishes it", c.Cycle)), nil
	}
	var rf *cycle.Refusal
	var bz *cycle.Busy
	if errors.As(err, &rf) || errors.As(err, &bz) {
		// What the agent left in the way (a merge), or what another process
		// did meanwhile (a HEAD moved): the run continues once the operator
		// has dealt with it.
		msg, hint := "", ""
		if rf != nil {
			msg, hint = rf.Msg, rf.Hint
		} else {
			msg, hint = bz.Msg, bz.Hint
		}
		hint = strings.ReplaceAll(hint, "run git evolve cycle finish", "run git evolve run --resume")
		if !strings.Contains(hint, "git evolve run --resume") {
			hint = strings.TrimSuffix(strings.TrimSpace(hint+"; then continue the run: git evolve run --resume"), ";")
			hint = strings.TrimPrefix(hint, "; ")
		}
		return nil, &RunError{Msg: fmt.Sprintf("cycle %d cannot be finished: %s", c.Cycle, msg), Hint: hint, Usage: rf != nil}
	}
	if err != nil {
		return nil, err
	}
	repo := d.l.Repo()
	e := Ended{Cycle: res.Cycle.Cycle, ID: res.Cycle.ID, Target: res.Cycle.Target, Rung: res.Cycle.Rung, Result: res.Result, Item: res.Cycle.Item}
	if f := res.Cycle.Finish; f != nil {
		e.Tampering = f.Tampering
		for _, t := range f.Tampering {
			d.say("warning: cycle %d: %s", e.Cycle, t)
		}
	}
	if !res.Commit.IsZero() {
		e.Commit = res.Commit.String()
	}
	if f := res.Cycle.Finish; f != nil && len(f.Leftover) > 0 && res.Result != ledger.Unchanged {
		d.say("cycle %d: %s", e.Cycle, cycle.LeftoverLine(f.Leftover))
	}
	var failures []gate.Failure
	if f := res.Cycle.Finish; f != nil {
		failures = f.Failures
	}
	st, err := Settle(repo, top, res.Cycle, res.Result, false, FailureText(d.transcript(), failures), d.now)
	if err != nil {
		return nil, err
	}
	e.Settled = st.Action
	d.sayBlocker(res.Cycle, st)
	if err := SaveMeasured(repo, res); err != nil {
		d.say("warning: the goals measured were not stored: %v", err)
	}
	if d.o.OnFinish != nil {
		d.o.OnFinish(res)
	}
	d.r.Tally.Cycles++
	d.r.Resumes = 0
	switch {
	case Delivered(res.Result):
		d.r.Tally.Productive++
		if res.Verdict != nil && res.Verdict.After != nil {
			d.r.End = scoreOf(res.Verdict.After)
		}
	case res.Result == ledger.Regressed:
		d.r.Tally.Regressed++
	default:
		d.r.Tally.Idle++
	}
	d.r.Cycles = append(d.r.Cycles, e)
	d.r.Phase, d.r.CycleID, d.r.Restorative, d.r.Kept, d.r.PendingTampering, d.r.PendingMarkers, d.r.TurnHead = "", "", false, nil, nil, nil, ""
	if err := d.r.save(d.gitDir); err != nil {
		return nil, err
	}
	d.say("cycle %d: %s", e.Cycle, e.Result)
	if d.r.PushEvery > 0 && Delivered(res.Result) && d.r.Tally.Productive%d.r.PushEvery == 0 {
		// Seed 004 pushes every 5 productive cycles; the pre-push hook
		// delivers the ledger with the branch.
		d.say("pushing the branch after %d productive cycle(s)", d.r.Tally.Productive)
		if err := repo.PushBranch(); err != nil {
			return nil, &RunError{Msg: fmt.Sprintf("the push after cycle %d failed: %v", e.Cycle, err),
				Hint: "the work is committed here and nothing was undone: push it once the remote takes it (git push), then git evolve run again"}
		}
		d.r.Pushes++
		if err := d.r.save(d.gitDir); err != nil {
			return nil, err
		}
	}
	if d.soft() {
		return d.stop(StopInterrupted, fmt.Sprintf("stopped after cycle %d", e.Cycle)), nil
	}
	return nil, nil
}

// recoverAborted looks at the cycle run r was in (its phase agent or
// finish, the cycle closed since): when the cycle's record says it was
// aborted, the run is set to restore its working tree (PhaseRestore);
// otherwise the phase is cleared.
func recoverAborted(l *cycle.Ledger, r *RunState) error {
	id := r.CycleID
	r.Phase, r.CycleID = "", ""
	if id == "" {
		return nil
	}
	events, err := History(l.Ledger)
	if err != nil {
		return err
	}
	for _, e := range events {
		var run, reason, saved, base string
		var clock int64
		_ = json.Unmarshal(e.Record.Extra["clock"], &clock)
		_ = json.Unmarshal(e.Record.Extra["run"], &run)
		_ = json.Unmarshal(e.Record.Extra["reason"], &reason)
		_ = json.Unmarshal(e.Record.Extra["saved"], &saved)
		_ = json.Unmarshal(e.Record.Extra["base"], &base)
		// Only this run's own abort of a failed agent: an operator's
		// git evolve cycle abort leaves the working tree as it is.
		if e.ID != id || !e.Aborted || run != r.ID || !strings.HasPrefix(reason, "the agent ") {
			continue
		}
		if saved == "" || e.Record.CycleStartSHA == "" {
			return nil
		}
		r.Phase = PhaseRestore
		r.Restore = &PendingRestore{Cycle: e.Cycle, ID: e.ID, Target: e.Target, Start: e.Record.CycleStartSHA, Saved: saved, Branch: e.Branch, Base: base, Clock: clock}
		if !slices.ContainsFunc(r.Cycles, func(c Ended) bool { return c.ID == id }) {
			r.Tally.Cycles++
			r.Tally.Aborted++
			r.Cycles = append(r.Cycles, Ended{Cycle: e.Cycle, ID: e.ID, Target: e.Target, Rung: e.Rung, Result: "aborted", Reason: reason, Commit: saved, Item: e.Item})
		}
		return nil
	}
	return nil
}

// checkClean refuses to start a cycle on a working tree with changes that
// no cycle judged: the cycle would take them as its work. Before this
// invocation's first cycle that is any change outside .agents/** (what the
// operator left); after a cycle of this run, any substantive change (an
// unchanged cycle leaves its edits of the goals files and non_substantive
// paths to the next).
func (d *driver) checkClean(s *State) error {
	strict := !d.ranCycle
	head, err := d.l.Repo().ResolveCommits("HEAD")
	if err != nil {
		return err
	}
	var extra []string
	if s.Goals != nil {
		extra = s.Goals.NonSubstantive
	}
	// The delta a cycle started now would take as its own: the one of
	// finish and cycle status.
	deltas, err := d.l.DeltaSince(head[0], extra)
	if err != nil {
		return err
	}
	var dirty []string
	for _, x := range deltas {
		if strict && !gate.Match(".agents/**", x.Path) || !strict && x.Substantive {
			dirty = append(dirty, x.Path)
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	shown := dirty
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(dirty)-3))
	}
	return &RunError{Msg: fmt.Sprintf("the working tree has changes no cycle judged: %s", strings.Join(shown, ", ")), Usage: true,
		Hint: "commit them, or put them aside (git stash -u), then run again: a cycle takes the whole working tree as its work"}
}

// restore brings the working tree of the aborted cycle d.r.Restore back to
// the cycle's start (.agents/** kept), so that the next cycle starts from
// work a gate judged; the aborted work stays saved.
func (d *driver) restore() error {
	p := d.r.Restore
	saved, err := gitstore.ParseHash(p.Saved)
	if err != nil {
		return fmt.Errorf("run.json: the saved work of cycle %d: %w", p.Cycle, err)
	}
	d.say("cycle %d: bringing HEAD and the working tree back to the cycle's start (its work is saved)", p.Cycle)
	at, err := d.l.RestoreStart(&cycle.OpenCycle{Cycle: p.Cycle, ID: p.ID, Target: p.Target, Start: p.Start, Branch: p.Branch, Base: p.Base, Clock: p.Clock}, saved)
	switch {
	case errors.Is(err, cycle.ErrMovedAfterAbort):
		// Someone worked on since: their tree is left alone, and the run
		// goes on from it (the cycle's work is saved).
		d.say("warning: %v", err)
	case err != nil:
		var rf *cycle.Refusal
		if errors.As(err, &rf) {
			return &RunError{Msg: rf.Msg, Hint: rf.Hint, Usage: true}
		}
		return err
	default:
		d.say("cycle %d: HEAD is on %s, the cycle's start", p.Cycle, at.Short())
	}
	d.r.Phase, d.r.Restore = "", nil
	return d.r.save(d.gitDir)
}

// sameTurnHead refuses to finish the open cycle c of a resumed run when
// the branch moved after the agent's turn ended (TurnHead): the commits
// made meanwhile (by hand, while the run stood stopped) are not the
// cycle's, and a finish would judge them as its work, and revert them
// with it on a regression.
func (d *driver) sameTurnHead(c *cycle.OpenCycle) error {
	// (Once the finish began, PhaseJudge, it may have moved HEAD itself.)
	if d.r.TurnHead == "" || d.r.Phase != PhaseFinish {
		return nil
	}
	turn, err := gitstore.ParseHash(d.r.TurnHead)
	if err != nil {
		return nil
	}
	repo := d.l.Repo()
	head, err := repo.ResolveCommits("HEAD")
	if err != nil || head[0] == turn {
		return err
	}
	hint := fmt.Sprintf("keep them on a branch of their own and put this one back where the agent left it (git branch my-work && git reset --hard %s), then git evolve run --resume; or close the cycle with git evolve cycle abort, which saves and takes back everything since the cycle's start %s, these commits too", turn.Short(), shortHash(c.Start))
	commits, descends, err := repo.RevListSince(turn, head[0])
	if err != nil {
		return err
	}
	if !descends {
		return &RunError{Msg: fmt.Sprintf("the branch was rewritten while run %s stood stopped: HEAD is %s, not a descendant of %s, where cycle %d's agent left it; the cycle is not finished on it", d.r.ID, head[0].Short(), turn.Short(), c.Cycle), Hint: hint}
	}
	subjects, _, _ := repo.CommitSubjects(commits)
	var list []string
	for i, h := range commits {
		if i == 5 {
			list = append(list, fmt.Sprintf("and %d more", len(commits)-5))
			break
		}
		sub := ""
		if i < len(subjects) {
			sub = " " + cleanLine(subjects[i])
		}
		list = append(list, h.Short()+sub)
	}
	return &RunError{Msg: fmt.Sprintf("the branch moved while run %s stood stopped: %d commit(s) since cycle %d's agent left it at %s (%s); they are not the cycle's work, and the cycle is not finished on them", d.r.ID, len(commits), c.Cycle, turn.Short(), strings.Join(list, "; ")), Hint: hint}
}

// shortHash is the first 7 characters of a hash given as text.
func shortHash(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// upstreamGuard is the seeds' stale-checkout guard, before each cycle:
// when the branch's upstream has commits the branch lacks, the run says so;
// with SyncUpstream the upstream is fetched first, the ledger synced with
// its remote (SyncLedger), and the branch fast-forwarded to it (a branch
// that diverged stops the run: only a fast-forward is the driver's to
// make).
func (d *driver) upstreamGuard() error {
	repo := d.l.Repo()
	u, err := repo.BranchUpstream()
	if err != nil || u.Ref == "" {
		return err
	}
	if d.r.SyncUpstream {
		if err := repo.FetchUpstream(u); err != nil {
			return &RunError{Msg: "--sync-upstream: " + err.Error(), Hint: "check the remote (git fetch), or run without --sync-upstream"}
		}
		if d.o.SyncLedger != nil && u.Remote != "" && u.Remote != "." {
			if err := d.o.SyncLedger(u.Remote); err != nil {
				return &RunError{Msg: fmt.Sprintf("--sync-upstream: the ledger was not synced with %s: %v", u.Remote, err),
					Hint: "git evolve sync " + u.Remote + " says why; run again once it succeeds, or run without --sync-upstream"}
			}
		}
	}
	if _, err := repo.ResolveCommits(u.Ref); err != nil {
		return nil // never fetched: nothing to compare with
	}
	ahead, behind, err := repo.AheadBehind("HEAD", u.Ref)
	if err != nil || behind == 0 {
		return err
	}
	name := strings.TrimPrefix(strings.TrimPrefix(u.Ref, "refs/remotes/"), "refs/heads/")
	switch {
	case !d.r.SyncUpstream:
		d.say("warning: %s has %d commit(s) this branch lacks (as last fetched): the cycle works on a stale checkout; run --sync-upstream fast-forwards first", name, behind)
	case ahead > 0:
		return &RunError{Msg: fmt.Sprintf("--sync-upstream: the branch and %s have diverged (%d and %d commits of their own); the driver only fast-forwards", name, ahead, behind),
			Hint: "merge or rebase onto it yourself, then git evolve run again"}
	default:
		if err := repo.FastForward(u.Ref); err != nil {
			return &RunError{Msg: "--sync-upstream: " + err.Error(), Hint: "commit or stash what is in the way, then git evolve run again"}
		}
		d.say("fast-forwarded to %s: %d commit(s) from upstream", name, behind)
	}
	return nil
}

// keepTranscript keeps the end of the agent's output as cycle c's
// transcript (a blob under cycle.TranscriptRef, kept after the cycle) and
// names it in the cycle's record, in the open cycle's file and in the
// driver's own copy of it alike.
func (d *driver) keepTranscript(c *cycle.OpenCycle) error {
	if d.tail == nil {
		return nil
	}
	repo := d.l.Repo()
	blob, err := repo.WriteBlob(d.tail.Transcript())
	if err != nil {
		return err
	}
	ref := cycle.TranscriptRef(c.ID)
	old, _, err := repo.RefHash(ref) // a resumed cycle's agent ran before
	if err != nil {
		return err
	}
	if err := repo.UpdateRef(ref, blob, old, fmt.Sprintf("git evolve: cycle %d's transcript", c.Cycle)); err != nil {
		return err
	}
	fields := map[string]json.RawMessage{"transcript": json.RawMessage(strconv.Quote(blob.String()))}
	if err := d.l.SetFields(fields); err != nil {
		return err
	}
	if k := d.r.Kept; k != nil && k.ID == c.ID {
		if k.Fields == nil {
			k.Fields = map[string]json.RawMessage{}
		}
		for key, v := range fields {
			k.Fields[key] = v
		}
		return d.r.save(d.gitDir)
	}
	return nil
}

// transcript is the end of the last agent's output, as its transcript
// keeps it ("" when no agent ran in this invocation).
func (d *driver) transcript() string {
	if d.tail == nil {
		return ""
	}
	return string(d.tail.Transcript())
}

// sayBlocker says the blocker a failed cycle's output named for its
// roadmap item, which the roadmap now works first.
func (d *driver) sayBlocker(c *cycle.OpenCycle, st *Settlement) {
	if st.Blocker != "" {
		d.say("cycle %d: item %s is blocked by %s, as its failure says: %s is worked first", c.Cycle, goals.CleanText(st.Item), goals.CleanText(st.Blocker), goals.CleanText(st.Blocker))
	}
}

// maxCommitMsg bounds the agent's message.
const maxCommitMsg = 64 << 10

// agentMessage reads the message the agent left ("" for none): the
// agent's to write, so bounded, valid UTF-8, without control characters
// other than newlines and tabs. The finish adds the trailers.
func agentMessage(top string) (string, error) {
	f, err := openAgentFile(filepath.Join(top, filepath.FromSlash(CommitMsgFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w (the agent's message is not used)", CommitMsgFile, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCommitMsg))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(goals.CleanText(string(data))), nil
}

// resumed returns whether git evolve resume ran since it was made, in this
// repository (a resume recorded) or anywhere on this machine (the stamp
// beside KILL touched): the operator lifting a marker while the agent
// works, which the marker watch then does not undo.
func (d *driver) resumed(m Markers) func() bool {
	since := time.Now()
	recorded := d.resumeCounter()
	return func() bool {
		if fi, err := os.Stat(m.ResumeStamp()); err == nil && !fi.ModTime().Before(since) {
			return true
		}
		return !d.lost && recorded() // not asked of a repository the driver lost
	}
}

// resumeCounter returns whether git evolve resume was recorded since it
// was made.
func (d *driver) resumeCounter() func() bool {
	count := func() int {
		evs, err := Controls(d.l.Repo())
		if err != nil {
			return -1
		}
		n := 0
		for _, e := range evs {
			if e.Kind == KindResume {
				n++
			}
		}
		return n
	}
	before := count()
	return func() bool { n := count(); return before >= 0 && n > before }
}

// runAgent runs the agent command in the working tree, in a process group
// of its own, with the cycle's environment. It returns why the agent
// failed ("" when it exited 0). An interrupt (ctx) or the timeout ends the
// whole group: SIGTERM, then SIGKILL after a grace period.
func (d *driver) runAgent(ctx context.Context, top string, env map[string]string) (string, error) {
	cmd := exec.Command("sh", "-c", d.r.Agent)
	cmd.Dir = top
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The agent's output goes on to the operator, and its end is kept for
	// the cycle's transcript.
	d.tail = newTail(MaxTranscript)
	out := io.MultiWriter(d.o.AgentOut, d.tail)
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	// The agent runs once its process group is written down (gateStart).
	started, open, gerr := gateStart(cmd)
	if gerr != nil {
		return "", fmt.Errorf("starting the agent: %w", gerr)
	}
	serr := cmd.Start()
	started()
	if serr != nil {
		open(false)
		return "", fmt.Errorf("starting the agent: %w", serr)
	}
	d.r.AgentGroup, d.r.AgentStarted = cmd.Process.Pid, procStarted(cmd.Process.Pid)
	if err := d.r.save(d.gitDir); err != nil {
		open(false) // the agent's script does not run
		_ = killGroup(cmd.Process.Pid)
		_ = cmd.Wait()
		return "", err
	}
	open(true)
	defer func() {
		d.r.AgentGroup, d.r.AgentStarted = 0, "" // saved with the phase that follows
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(d.timeout)
	defer timer.Stop()
	timedOut := false
	// end asks the group to stop, and kills it after a grace period.
	end := func() error {
		termGroup(cmd.Process.Pid)
		grace := time.NewTimer(5 * time.Second)
		defer grace.Stop()
		select {
		case err := <-done:
			return err
		case <-grace.C:
			_ = killGroup(cmd.Process.Pid)
			return <-done
		}
	}
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		timedOut = true
		err = end()
	case <-ctx.Done():
		err = end()
	}
	// Whatever the agent left running in its group goes with it.
	_ = killGroup(cmd.Process.Pid)
	switch {
	case timedOut:
		return "ran past its timeout of " + d.timeout.String(), nil
	case ctx.Err() != nil:
		return "interrupted", nil
	case err == nil:
		return "", nil
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by " + ws.Signal().String(), nil
		}
		return fmt.Sprintf("exited %d", xe.ExitCode()), nil
	}
	return "failed: " + strings.TrimSpace(err.Error()), nil
}

// agentAlive reports whether the agent of run r still runs: its process
// group is there, and its leader, when the system says when it started, is
// the process the run started (a number can be taken again once the group
// is gone; not while it lives).
func agentAlive(r *RunState) bool {
	if !groupAlive(r.AgentGroup) {
		return false
	}
	if started := procStarted(r.AgentGroup); started != "" && r.AgentStarted != "" && started != r.AgentStarted {
		return false
	}
	return true
}

// procStarted is when process pid started, from /proc/<pid>/stat (its 22nd
// field, after the command name in parentheses); "" where there is none.
func procStarted(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19] // field 22 of the line; fields here start at field 3
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}
