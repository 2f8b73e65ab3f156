package gate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/goals"
)

// GoalChange is one goal as it was before a cycle and after it.
type GoalChange struct {
	GoalID      string   `json:"goal_id"`
	Before      string   `json:"before"` // pass, fail, skip, timeout, error; "" when it was not measured before
	After       string   `json:"after"`
	BeforeValue *float64 `json:"before_value,omitempty"`
	AfterValue  *float64 `json:"after_value,omitempty"`
	Weight      int      `json:"weight"`
	// Regressed is true when the goal counts against the cycle: it passed
	// before and does not now (it fails, times out, skips or cannot run),
	// or its value moved the wrong way by more than its tolerance, or it
	// had a value before and has none now. All are measured twice before
	// they count.
	Regressed bool   `json:"regressed,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Excerpt is the end of the check's output after the cycle, for a goal
	// that regressed.
	Excerpt string `json:"excerpt,omitempty"`
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
	// Census is what the test runners told of the tests the gate's
	// commands ran (nil when none could tell). When the commands passed
	// and fewer tests passed than at the start (CensusBefore), Dropped is
	// set, a regression, and Vanished names the tests that passed then
	// and do not now. Hidden names the tests that failed at the start and
	// neither pass nor fail now (Census.Hidden), when the commands
	// passed: a regression too.
	Census       *Census  `json:"census,omitempty"`
	CensusBefore *Census  `json:"-"`
	Dropped      bool     `json:"dropped,omitempty"`
	Vanished     []string `json:"vanished,omitempty"`
	Hidden       []string `json:"hidden,omitempty"`
	// CensusRechecked is true when the gate's commands ran a second time
	// because the first count found a drop or a hidden test; only what
	// the second count found too counts (Census is then the second count
	// when it cleared all). CensusFlaky is true when the second count did
	// not find all the first did.
	CensusRechecked bool `json:"census_rechecked,omitempty"`
	CensusFlaky     bool `json:"census_flaky,omitempty"`
	// Holdout is what the holdout checks found, when there are some (set
	// by the caller: JudgeHoldout); one that regressed is a regression.
	Holdout *Holdout `json:"holdout,omitempty"`
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

// Failure is one reason a cycle's gate failed, with the failure's own
// words: a test command that did not pass, or a goal that regressed.
type Failure struct {
	What   string `json:"what"` // "gate" (a test command), "goal", "census" (tests vanished, or hidden), "holdout" (holdout checks regressed: never which), "hook" (a commit hook that refused), "ruler" (the cycle changed only its ruler), "hypothesis" (the cycle edited skills/evolve/SKILL.md without adding a hypothesis), or "scope" (it changed files outside its program's mutable_scope)
	Name   string `json:"name"` // the command, or the goal's id
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Excerpt is the end of the command's or the check's output (see
	// goals.Excerpt).
	Excerpt string `json:"excerpt,omitempty"`
	// OwnRuler says the failure came of the second judgment, with the
	// ruler files the cycle changed as it left them (its new tests).
	OwnRuler bool `json:"own_ruler,omitempty"`
}

// Failures are the reasons the gate failed: each test command that did not
// pass, the holdout checks, the tests that vanished (Name "tests") and
// those hidden (Name "hidden"), then each goal that regressed.
func (v *Verdict) Failures() []Failure {
	var out []Failure
	for _, c := range v.Commands {
		if !c.Passed {
			out = append(out, Failure{What: "gate", Name: c.Command, Status: c.Status, Reason: c.Reason, Excerpt: c.Excerpt})
		}
	}
	if h := v.Holdout; h.Failed() {
		out = append(out, Failure{What: "holdout", Name: "holdout", Status: goals.Fail, Reason: h.text()})
	}
	if v.Dropped {
		out = append(out, Failure{What: "census", Name: "tests", Status: goals.Fail, Reason: v.droppedText(), Excerpt: listNames(v.Vanished, 40)})
	}
	if len(v.Hidden) > 0 {
		out = append(out, Failure{What: "census", Name: "hidden", Status: goals.Fail, Reason: v.hiddenText(), Excerpt: listNames(v.Hidden, 40)})
	}
	for _, c := range v.Regressed() {
		out = append(out, Failure{What: "goal", Name: c.GoalID, Status: c.After, Reason: c.Reason, Excerpt: c.Excerpt})
	}
	return out
}

// CannotRun returns the test command that could not run (exit 126 or 127,
// or no shell), if one could not.
func (v *Verdict) CannotRun() (goals.CommandResult, bool) {
	for _, c := range v.Commands {
		if c.Status == goals.Error {
			return c, true
		}
	}
	return goals.CommandResult{}, false
}

// NoVerdict reports whether the gate stopped at a test command that could
// not run, without measuring the goals (see Judge).
func (v *Verdict) NoVerdict() bool { return v.After == nil }

// Regression reports whether the cycle must be reverted: a test command
// failed, fewer tests passed than at the start, a test that failed at the
// start is hidden, or a goal or a holdout check regressed.
func (v *Verdict) Regression() bool {
	return !v.CommandsPassed() || v.Dropped || len(v.Hidden) > 0 || len(v.Regressed()) > 0 || v.Holdout.Failed()
}

// droppedText says how many tests passed at the start and how many now.
func (v *Verdict) droppedText() string {
	return fmt.Sprintf("%d test(s) passed at the start, %d now: %d vanished", v.CensusBefore.passed(), v.Census.passed(), len(v.Vanished))
}

// hiddenText says how many tests that failed at the start are hidden now.
func (v *Verdict) hiddenText() string {
	return fmt.Sprintf("%d test(s) that failed at the start neither pass nor fail now: hidden", len(v.Hidden))
}

// listNames is the first n names, a line each, and how many more.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, "\n")
	}
	return strings.Join(names[:n], "\n") + fmt.Sprintf("\n… and %d more", len(names)-n)
}

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
	if h := v.Holdout; h.Failed() {
		parts = append(parts, h.text())
	}
	if v.Dropped {
		parts = append(parts, v.droppedText())
	}
	if len(v.Hidden) > 0 {
		parts = append(parts, v.hiddenText())
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
// are before: the gate's test commands, then every goal of f. The tests
// the commands run are counted where their runner can tell (see
// censusTap); with census, the count at the start, and when the commands
// passed, fewer tests passing now is a regression (Dropped) that names the
// tests that vanished, and so is a test that failed at the start and is
// now absent or skipped (Hidden); the commands run a second time, and
// counted again, before either counts (see recount). A goal that looks
// regressed is measured once more before it counts (flaky first runs are
// real). A goal that passed before must pass after: failing, timing out,
// skipping or not running is a regression. A check that told before
// (pass, fail, timeout) must still tell: one that skips or cannot run now
// regressed too, so a skip or an error is neutral only when the goal was
// unknown before as well.
// ctx cancels the checks; the verdict is then incomplete and must not be
// used.
//
// A test command that cannot run (exit 126 or 127) gives no verdict when
// noVerdict says so (a tool missing here): the goals are not measured
// (After is nil) and CannotRun says which command it was. Otherwise (nil
// noVerdict, or one that says the cycle broke the command) it is a failure
// like any other.
func Judge(ctx context.Context, f *goals.File, before *goals.Snapshot, opts goals.Options, noVerdict func(goals.CommandResult) bool, census *Census) *Verdict {
	v := &Verdict{}
	v.Commands, v.Census = runCounted(ctx, f.Gate, opts, false)
	if cr, ok := v.CannotRun(); ok && noVerdict != nil && noVerdict(cr) {
		return v
	}
	if census != nil && ctx.Err() == nil {
		// Counted when the commands passed: a test that failed fails its
		// command, which says so itself.
		v.CensusBefore = census
		if v.CommandsPassed() {
			if Dropped(census, v.Census) {
				v.Dropped, v.Vanished = true, census.Vanished(v.Census)
			}
			v.Hidden = census.Hidden(v.Census)
		}
		if (v.Dropped || len(v.Hidden) > 0) && ctx.Err() == nil {
			v.recount(ctx, f.Gate, opts, census)
		}
	}
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

// runCounted runs the gate's commands g with a census tap (fresh: see
// censusTap): the commands' results, and the census of the tests they ran
// (nil when no runner could tell).
func runCounted(ctx context.Context, g goals.Gate, opts goals.Options, fresh bool) ([]goals.CommandResult, *Census) {
	tap, done, err := newCensusTap(opts.Dir)
	if err != nil {
		return goals.RunGate(ctx, g, opts.Dir, opts.Env, nil), nil
	}
	defer done()
	tap.fresh = fresh
	return goals.RunGate(ctx, g, opts.Dir, opts.Env, tap), tap.Census()
}

// recount runs the gate's commands g a second time, when the first count
// found a drop or a hidden test against census, the count at the start: a
// test skipped once (a flaky skip, a test runner that lost a test) must not
// regress an honest cycle, as a goal that fails once does not. The tests
// run again, not as go test cached them. Only what
// the second count finds too counts: a drop, and the hidden tests hidden
// both times. A second run whose commands do not pass clears nothing (a
// test that fails fails its command; product code that hides a failing
// test once must not make the second run clear it by failing), nor does
// an interrupted one.
func (v *Verdict) recount(ctx context.Context, g goals.Gate, opts goals.Options, census *Census) {
	v.CensusRechecked = true
	cmds, again := runCounted(ctx, g, opts, true) // not the results go test cached
	if ctx.Err() != nil {
		return
	}
	for _, c := range cmds {
		if !c.Passed {
			return
		}
	}
	dropped := v.Dropped && Dropped(census, again)
	still := map[string]bool{}
	for _, name := range census.Hidden(again) {
		still[name] = true
	}
	var hidden []string
	for _, name := range v.Hidden {
		if still[name] {
			hidden = append(hidden, name)
		}
	}
	v.CensusFlaky = dropped != v.Dropped || len(hidden) != len(v.Hidden)
	if !dropped {
		v.Dropped, v.Vanished = false, nil
	}
	v.Hidden = hidden
	if !v.Dropped && len(v.Hidden) == 0 {
		v.Census = again // the count that holds
	}
}

// Compare sets every goal of f as measured after a cycle beside its
// measure before it, and says which regressed: passed before and fails
// now, or, for a continuous goal, a value that moved the wrong way (the
// goal's direction) by more than the goal's tolerance, or a value measured
// before that the check no longer gives (whatever its result, and whether
// or not the goal met its threshold before).
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
		case c.Before == goals.Pass && c.After != goals.Pass:
			// Pass must stay pass: a goal that fails, hangs, skips or
			// cannot run now is no longer known to hold.
			c.Regressed = true
			c.Reason = "pass → " + c.After + detail(a)
		case tells(c.Before) && !tells(c.After):
			// A check that told (it failed, or hung) must still tell: one
			// the cycle made skip or unable to run escapes its goal.
			c.Regressed = true
			c.Reason = c.Before + " → " + c.After + ": the check no longer tells" + detail(a)
		case c.Before != "" && c.After != c.Before && c.After != goals.Pass:
			c.Reason = c.Before + " → " + c.After + detail(a) // still failing: no regression
		}
		if g, ok := spec[a.GoalID]; ok && g.Continuous != nil && c.BeforeValue != nil {
			moved, worse := vanished(*c.BeforeValue), true
			if c.AfterValue != nil {
				moved, worse = wrongWay(g.Continuous, *c.BeforeValue, *c.AfterValue)
			}
			if worse {
				c.Regressed = true
				if c.Reason != "" {
					c.Reason += "; "
				}
				c.Reason += moved
			}
		}
		if c.Regressed {
			c.Excerpt = a.Excerpt
		}
		out = append(out, c)
	}
	return out
}

// tells reports whether a result says something of the goal: it passed,
// failed or hung; a skip (exit 77) or a check that cannot run says nothing.
func tells(result string) bool {
	return result == goals.Pass || result == goals.Fail || result == goals.Timeout
}

// detail is why a check ended as it did, in parentheses: its reason, else
// its exit status.
func detail(a goals.Result) string {
	switch {
	case a.Reason != "":
		return " (" + a.Reason + ")"
	case a.ExitCode > 0:
		return " (exit status " + strconv.Itoa(a.ExitCode) + ")"
	}
	return ""
}

// vanished says that a value measured before the cycle is no longer given:
// whatever the check's result, that is worse than any value (a low value
// is still a measure; none hides how far the goal moved).
func vanished(before float64) string {
	return "value " + num(before) + " → none: the check no longer gives its value"
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

// Value is a continuous goal's value before a cycle and after it, beside
// its threshold.
type Value struct {
	GoalID    string   `json:"goal_id"`
	Before    *float64 `json:"before,omitempty"`
	After     *float64 `json:"after,omitempty"`
	Threshold float64  `json:"threshold"`
	Direction string   `json:"direction"`
	// Meets says the value after is on the good side of the threshold.
	Meets bool `json:"meets"`
}

// Values are the continuous goals of f, each with its value before and
// after (nil where a snapshot has none).
func Values(f *goals.File, before, after *goals.Snapshot) []Value {
	var out []Value
	for _, g := range f.Goals {
		c := g.Continuous
		if c == nil {
			continue
		}
		v := Value{GoalID: g.ID, Threshold: c.Threshold, Direction: c.Direction}
		if r, ok := resultOf(before, g.ID); ok {
			v.Before = r.Value
		}
		if r, ok := resultOf(after, g.ID); ok {
			v.After = r.Value
		}
		v.Meets = v.After != nil && goals.Meets(*v.After, c)
		out = append(out, v)
	}
	return out
}

// ResultOf is goal id's result in a snapshot ("" when the snapshot does not
// have it).
func ResultOf(s *goals.Snapshot, id string) string {
	r, _ := resultOf(s, id)
	return r.Result
}

func resultOf(s *goals.Snapshot, id string) (goals.Result, bool) {
	if s != nil {
		for _, r := range s.Goals {
			if r.GoalID == id {
				return r, true
			}
		}
	}
	return goals.Result{}, false
}
