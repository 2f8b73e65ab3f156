package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-evolve/git-evolve/goals"
)

// Holdout is what a cycle's holdout checks found: goals kept outside the
// agent's tree, which the judge runs and the agent is never told of. It
// holds counts only, never a goal's id or output: the record, which the
// next agent's brief quotes, says that holdout checks failed, not which,
// so that they keep catching what was fitted to the checks the agent sees
// (an answer hard-coded for them).
type Holdout struct {
	Total int `json:"total"`
	// Before and After are how many passed at the start and at the finish;
	// Regressed how many passed at the start and do not now, measured
	// twice (a regression of a goal, as Compare says).
	Before    int `json:"passing_before"`
	After     int `json:"passing_after"`
	Regressed int `json:"regressed"`
	// Unmet is how many checks held out for the cycle's target (their
	// holdout_for) do not pass though the cycle made the target pass: its
	// answer fits the target's check alone.
	Unmet int `json:"unmet,omitempty"`
}

// JudgeHoldout measures the holdout checks f with opts, and compares them
// with before (their measure at the cycle's start) as Judge compares the
// goals: a check that looks regressed is measured once more before it
// counts. fixed, when not "", is the goal the cycle made pass (its target,
// failing at the start): the checks held out for it that do not pass are
// Unmet.
func JudgeHoldout(ctx context.Context, f *goals.File, before *goals.Snapshot, opts goals.Options, fixed string) *Holdout {
	opts.Only, opts.OnCheck = nil, nil // nothing of them is said
	after := goals.Measure(ctx, f, opts)
	changes := Compare(f, before, after)
	var again []string
	for _, c := range changes {
		if c.Regressed {
			again = append(again, c.GoalID)
		}
	}
	if len(again) > 0 && ctx.Err() == nil {
		opts.Only = again
		rerun := goals.Measure(ctx, f, opts)
		byID := map[string]goals.Result{}
		for _, r := range rerun.Goals {
			byID[r.GoalID] = r
		}
		for i, r := range after.Goals {
			if nr, ok := byID[r.GoalID]; ok {
				after.Goals[i] = nr
			}
		}
		changes = Compare(f, before, after)
	}
	h := &Holdout{Total: len(f.Goals)}
	if before != nil {
		h.Before = goals.Summarize(before.Goals).Passing
	}
	h.After = goals.Summarize(after.Goals).Passing
	for _, c := range changes {
		if c.Regressed {
			h.Regressed++
		}
	}
	if fixed != "" {
		for _, g := range f.Goals {
			if g.HoldoutFor == fixed && ResultOf(after, g.ID) != goals.Pass {
				h.Unmet++
			}
		}
	}
	return h
}

// Failed says whether the holdout checks count against the cycle.
func (h *Holdout) Failed() bool { return h != nil && (h.Regressed > 0 || h.Unmet > 0) }

// text says what failed, without naming any check.
func (h *Holdout) text() string {
	var parts []string
	if h.Regressed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d holdout check(s) no longer pass", h.Regressed, h.Total))
	}
	if h.Unmet > 0 {
		parts = append(parts, fmt.Sprintf("the target passes, and %d holdout check(s) held out for it do not", h.Unmet))
	}
	return strings.Join(parts, "; ")
}
