package gate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"git-evolve/goals"
)

// GoalChange is one goal as it was before a cycle and after it.
type GoalChange struct {
	GoalID      string   `json:"goal_id"`
	Before      string   `json:"before"` // pass, fail, skip; "" when it was not measured before
	After       string   `json:"after"`
	BeforeValue *float64 `json:"before_value,omitempty"`
	AfterValue  *float64 `json:"after_value,omitempty"`
	Weight      int      `json:"weight"`
	// Regressed is true when the goal counts against the cycle: it passed
	// before and fails now, or its value moved the wrong way by more than its
	// tolerance. Both are measured twice before they count.
	Regressed bool   `json:"regressed,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Rechecked is true when the goal was measured a second time because
	// the first measure looked like a regression; Flaky when the second
	// measure cleared it.
	Rechecked bool `json:"rechecked,omitempty"`
	Flaky     bool `json:"flaky,omitempty"`
}

// Verdict is what the regression gate found.
type Verdict struct {
	// Commands are the gate's test commands as they ran (the first that
	// failed is the last).
	Commands []goals.CommandResult `json:"commands"`
	// After is every goal measured after the cycle, re-runs included.
	After   *goals.Snapshot `json:"after"`
	Changes []GoalChange    `json:"changes"`
}

// CommandsPassed reports whether every test command passed.
func (v *Verdict) CommandsPassed() bool {
	for _, c := range v.Commands {
		if !c.Passed {
			return false
		}
	}
	return true
}

// Regressed returns the goals that count against the cycle.
func (v *Verdict) Regressed() []GoalChange {
	var out []GoalChange
	for _, c := range v.Changes {
		if c.Regressed {
			out = append(out, c)
		}
	}
	return out
}

// Regression reports whether the cycle must be reverted: a test command
// failed or a goal regressed.
func (v *Verdict) Regression() bool { return !v.CommandsPassed() || len(v.Regressed()) > 0 }

// Text is the gate outcome as the ledger records it: "PASS", or "FAIL: "
// and the failure's surface (the command that failed and how, the goals
// that regressed), stable from one cycle to the next so that repeated
// failures can be recognised.
func (v *Verdict) Text() string {
	var parts []string
	for _, c := range v.Commands {
		if !c.Passed {
			parts = append(parts, fmt.Sprintf("`%s` %s", c.Command, c.Reason))
		}
	}
	if reg := v.Regressed(); len(reg) > 0 {
		ids := make([]string, len(reg))
		for i, r := range reg {
			ids[i] = r.GoalID
		}
		parts = append(parts, "regressed "+strings.Join(ids, ", "))
	}
	if len(parts) == 0 {
		return "PASS"
	}
	return "FAIL: " + strings.Join(parts, "; ")
}

// Judge runs the regression gate of a cycle whose ruler is f (the goals
// file as it was when the cycle started) and whose goals measured before
// are before: the gate's test commands, then every goal of f. A goal that
// looks regressed is measured once more before it counts (flaky first runs
// are real). A skip is unknown: it is never a pass, and never a regression.
// ctx cancels the checks; the verdict is then incomplete and must not be
// used.
func Judge(ctx context.Context, f *goals.File, before *goals.Snapshot, opts goals.Options) *Verdict {
	v := &Verdict{Commands: goals.RunGate(ctx, f.Gate, opts.Dir)}
	opts.Only = nil
	v.After = goals.Measure(ctx, f, opts)
	changes := Compare(f, before, v.After)
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
		for i, r := range v.After.Goals {
			if nr, ok := byID[r.GoalID]; ok {
				v.After.Goals[i] = nr
			}
		}
		v.After.Summary = goals.Summarize(v.After.Goals)
		second := Compare(f, before, v.After)
		for i := range second {
			if contains(again, second[i].GoalID) {
				second[i].Rechecked = true
				second[i].Flaky = !second[i].Regressed
			}
		}
		changes = second
	}
	v.Changes = changes
	return v
}

// Compare sets every goal of f as measured after a cycle beside its
// measure before it, and says which regressed: passed before and fails
// now, or, for a continuous goal, a value that moved the wrong way (the
// goal's direction) by more than the goal's tolerance.
func Compare(f *goals.File, before, after *goals.Snapshot) []GoalChange {
	prev := map[string]goals.Result{}
	if before != nil {
		for _, r := range before.Goals {
			prev[r.GoalID] = r
		}
	}
	spec := map[string]goals.Goal{}
	for _, g := range f.Goals {
		spec[g.ID] = g
	}
	var out []GoalChange
	for _, a := range after.Goals {
		b, had := prev[a.GoalID]
		c := GoalChange{GoalID: a.GoalID, After: a.Result, AfterValue: a.Value, Weight: a.Weight}
		if had {
			c.Before, c.BeforeValue = b.Result, b.Value
		}
		switch {
		case c.Before == goals.Pass && c.After == goals.Fail:
			c.Regressed = true
			c.Reason = "pass → fail"
			if a.Reason != "" {
				c.Reason += " (" + a.Reason + ")"
			} else if a.ExitCode > 0 {
				c.Reason += " (exit status " + strconv.Itoa(a.ExitCode) + ")"
			}
		case c.Before == goals.Pass && c.After == goals.Skip:
			c.Reason = "pass → skip: unknown now"
		}
		if g, ok := spec[a.GoalID]; ok && g.Continuous != nil && c.BeforeValue != nil && c.AfterValue != nil {
			if moved, worse := wrongWay(g.Continuous, *c.BeforeValue, *c.AfterValue); worse {
				c.Regressed = true
				if c.Reason != "" {
					c.Reason += "; "
				}
				c.Reason += moved
			}
		}
		out = append(out, c)
	}
	return out
}

// wrongWay says whether a continuous value moved the wrong way by more than
// the goal's tolerance, and how.
func wrongWay(c *goals.Continuous, before, after float64) (string, bool) {
	worse := after < before-c.Tolerance
	if c.Direction == "lower" {
		worse = after > before+c.Tolerance
	}
	if !worse {
		return "", false
	}
	return fmt.Sprintf("value %s → %s (%s is better, tolerance %s)", num(before), num(after), c.Direction, num(c.Tolerance)), true
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
