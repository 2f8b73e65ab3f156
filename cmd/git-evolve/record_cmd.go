package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

type recordCmd struct {
	Cycle         *int     `help:"Cycle number, 1 or more (default: the next number in the ledger)." placeholder:"N"`
	Target        string   `complete:"goals" help:"Target goal id, or 'idle'." placeholder:"ID"`
	Result        string   `complete:"results" required:"" help:"One of improved, regressed, unchanged, harvested, quarantined, context-handoff." placeholder:"RESULT"`
	CanonicalSHA  string   `name:"canonical-sha" aliases:"sha" help:"The commit the cycle delivered (default HEAD for notes records); --sha, as the seeds' writer has it, is the same." placeholder:"REV"`
	CycleStartSHA string   `name:"cycle-start-sha" help:"The commit the cycle started from; enables the substantive-delta rule." placeholder:"REV"`
	LogSHA        string   `name:"log-sha" help:"The bookkeeping commit, when it differs from the canonical one." placeholder:"REV"`
	GoalsPassing  *int     `name:"goals-passing" help:"Goals passing after the cycle." placeholder:"N"`
	GoalsTotal    *int     `name:"goals-total" help:"Goals measured." placeholder:"N"`
	QualityScore  *float64 `name:"quality-score" help:"Quality score (quality mode)." placeholder:"X"`
	IdleStreak    *int     `name:"idle-streak" help:"Consecutive idle cycles." placeholder:"N"`
	GoalIDs       []string `name:"goal-ids" sep:"," help:"Goal ids worked in parallel, comma-separated." placeholder:"ID,…"`
	Parallel      bool     `help:"The cycle worked several goals in parallel."`
	TraceJSON     string   `name:"trace-json" help:"Evidence trace: a file, inline JSON, or - for standard input." placeholder:"FILE|JSON|-"`
	Gate          string   `help:"Gate outcome, e.g. PASS or 'FAIL: surface'." placeholder:"TEXT"`
	QueueItem     string   `name:"queue-item" help:"The pinned queue's item the cycle worked (kept as queue_item)." placeholder:"ITEM"`
	QueueIndex    *int     `name:"queue-index" help:"Its place in the pinned queue (queue_index)." placeholder:"N"`
	QueueTotal    *int     `name:"queue-total" help:"The pinned queue's length (queue_total)." placeholder:"N"`
	UnblockTarget string   `name:"unblock-target" help:"The blocker an unblocking sub-cycle lands (unblock_target)." placeholder:"ID"`
	UnblockDepth  *int     `name:"unblock-depth" help:"How deep the unblocking is nested (unblock_depth)." placeholder:"N"`
	RepoRoot      string   `name:"repo-root" help:"The repository, as -C names it (the seeds' writer's flag); --trace-json's file is still read where the command started." placeholder:"PATH"`

	// The seeds' writer's flags that have no place in a ledger kept in
	// git: refused with what to do instead.
	Timestamp string `hidden:"" help:"Refused: GIT_COMMITTER_DATE sets a record's time."`
	History   string `hidden:"" help:"Refused: the ledger is refs/notes/evolve."`
}

func (recordCmd) Help() string {
	return `Improved, regressed and harvested cycles (and quarantined ones) become part of
the git note on their canonical commit in refs/notes/evolve. Idle and unchanged
cycles go to the local journal under the git directory: never notes, never
committed. So does context-handoff (seed 003's Step 7: the agent's context
ran out and it wrote .agents/evolve/HANDOFF for the next turn), which counts
neither as work nor against the loop's breakers and streaks.

Rules: the result is one of the six; productive results need their target,
the canonical sha and both goal counts; every sha must name a commit (log_sha
is kept only when it differs from canonical_sha); a cycle number already
in the ledger is refused; --trace-json must be a JSON object. An improved cycle
whose diff from --cycle-start-sha touches nothing outside .agents/**,
GOALS.yaml and GOALS.md is recorded as unchanged.

Prints the stored record as one JSON line. The record's timestamp is
GIT_COMMITTER_DATE when set, the current time otherwise.

The flags are the seeds' evolve-log-cycle.sh's: --sha and --repo-root too;
its --timestamp is refused (set GIT_COMMITTER_DATE), and so is --history (the
ledger is in git, not in a file).`
}

func (c *recordCmd) Run(e *env) error {
	cycleN := 0 // the next
	if c.Cycle != nil {
		if *c.Cycle < 1 {
			return usagef("--cycle: must be 1 or more")
		}
		cycleN = *c.Cycle
	}
	rec := ledger.Record{
		Cycle:         cycleN,
		Target:        c.Target,
		Result:        c.Result,
		CanonicalSHA:  c.CanonicalSHA,
		CycleStartSHA: c.CycleStartSHA,
		LogSHA:        c.LogSHA,
		GoalsPassing:  c.GoalsPassing,
		GoalsTotal:    c.GoalsTotal,
		QualityScore:  c.QualityScore,
		IdleStreak:    c.IdleStreak,
		Parallel:      c.Parallel,
		GoalIDs:       c.GoalIDs,
	}
	if c.Timestamp != "" {
		return &usageError{msg: "--timestamp: a record is stamped with the time it is recorded, as its notes commit is",
			hint: "set GIT_COMMITTER_DATE to choose that time"}
	}
	if c.History != "" {
		return &usageError{msg: "--history: the ledger is refs/notes/evolve, not a file",
			hint: "leave --history out; git evolve import moves an existing history file into the ledger"}
	}
	if c.Gate != "" {
		rec.Gate, _ = json.Marshal(c.Gate)
	}
	// The pinned queue's fields of seed 004, kept as the seeds name them.
	for k, v := range map[string]any{"queue_item": c.QueueItem, "queue_index": c.QueueIndex, "queue_total": c.QueueTotal,
		"unblock_target": c.UnblockTarget, "unblock_depth": c.UnblockDepth} {
		if v == "" || v == (*int)(nil) {
			continue
		}
		if rec.Extra == nil {
			rec.Extra = map[string]json.RawMessage{}
		}
		rec.Extra[k], _ = json.Marshal(v)
	}
	if c.TraceJSON != "" {
		data, err := readTrace(e, c.TraceJSON)
		if err != nil {
			return err
		}
		t, err := ledger.ParseTrace(data)
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return &cycle.InputError{Field: fe.Field, Msg: fe.Reason}
		}
		if err != nil {
			return err
		}
		rec.Trace = t
	}
	if c.RepoRoot != "" {
		dir := e.path(c.RepoRoot)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("--repo-root %s: not a directory", c.RepoRoot)
		}
		e.dir = dir
	}
	l, err := e.cyclesWith(gitstore.ForWriting("git evolve record"))
	if err != nil {
		return err
	}
	// The loop's rules read every record: none is added by hand while a run
	// drives the worktree.
	if err := refuseWhileRunOwns(e, l.Repo(), "git evolve record", "the driver records the cycles it runs", true); err != nil {
		return err
	}
	res, err := l.Record(rec)
	if err != nil {
		return err
	}
	stored := res.Entry.Record
	if res.Downgraded {
		fmt.Fprintf(e.stderr, "git-evolve: downgraded cycle %d to unchanged: no substantive change outside .agents/**, GOALS.yaml, GOALS.md since %s\n",
			stored.Cycle, short(stored.CycleStartSHA))
	}
	e.stdout.Write(append(stored.Marshal(), '\n'))
	return nil
}

// readTrace reads --trace-json: standard input for "-", inline JSON when
// the value starts with "{", a file otherwise.
func readTrace(e *env, v string) ([]byte, error) {
	switch t := strings.TrimSpace(v); {
	case t == "-":
		data, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, fmt.Errorf("--trace-json: reading standard input: %w", err)
		}
		return data, nil
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
		return []byte(t), nil
	}
	data, err := os.ReadFile(e.path(v))
	if err != nil {
		return nil, usagef("--trace-json: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, usagef("--trace-json: %s is empty", v)
	}
	return data, nil
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
