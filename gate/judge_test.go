package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/goals"
)

func val(v float64) *float64 { return &v }

func snapshot(results ...goals.Result) *goals.Snapshot {
	s := &goals.Snapshot{Goals: results}
	s.Summary = goals.Summarize(results)
	return s
}

func TestCompare(t *testing.T) {
	f := &goals.File{Goals: []goals.Goal{
		{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}, {ID: "new"}, {ID: "hangs"}, {ID: "gone"}, {ID: "still-skips"}, {ID: "was-red"}, {ID: "red-now-skips"}, {ID: "red-now-gone"}, {ID: "unknown-now-gone"},
		{ID: "cov", Continuous: &goals.Continuous{Threshold: 50, Direction: "higher", Tolerance: 1}},
		{ID: "lat", Continuous: &goals.Continuous{Threshold: 100, Direction: "lower"}},
		{ID: "lat-ok", Continuous: &goals.Continuous{Threshold: 100, Direction: "lower", Tolerance: 5}},
	}}
	before := snapshot(
		goals.Result{GoalID: "a", Result: goals.Pass}, goals.Result{GoalID: "b", Result: goals.Pass},
		goals.Result{GoalID: "c", Result: goals.Fail}, goals.Result{GoalID: "d", Result: goals.Skip},
		goals.Result{GoalID: "e", Result: goals.Pass},
		goals.Result{GoalID: "cov", Result: goals.Pass, Value: val(80)}, goals.Result{GoalID: "lat", Result: goals.Pass, Value: val(40)},
		goals.Result{GoalID: "lat-ok", Result: goals.Pass, Value: val(40)},
		goals.Result{GoalID: "hangs", Result: goals.Pass}, goals.Result{GoalID: "gone", Result: goals.Pass},
		goals.Result{GoalID: "still-skips", Result: goals.Skip}, goals.Result{GoalID: "was-red", Result: goals.Fail},
		goals.Result{GoalID: "red-now-skips", Result: goals.Fail}, goals.Result{GoalID: "red-now-gone", Result: goals.Timeout},
		goals.Result{GoalID: "unknown-now-gone", Result: goals.Skip})
	after := snapshot(
		goals.Result{GoalID: "a", Result: goals.Pass}, goals.Result{GoalID: "b", Result: goals.Fail, ExitCode: 2},
		goals.Result{GoalID: "c", Result: goals.Pass}, goals.Result{GoalID: "d", Result: goals.Fail},
		goals.Result{GoalID: "e", Result: goals.Skip}, goals.Result{GoalID: "new", Result: goals.Fail},
		goals.Result{GoalID: "cov", Result: goals.Pass, Value: val(78.5)}, goals.Result{GoalID: "lat", Result: goals.Pass, Value: val(41)},
		goals.Result{GoalID: "lat-ok", Result: goals.Pass, Value: val(44)},
		goals.Result{GoalID: "hangs", Result: goals.Timeout, Reason: "timed out after 2m0s", Excerpt: "=== RUN TestSlow"},
		goals.Result{GoalID: "gone", Result: goals.Error, Reason: "cannot run: golangci-lint is missing"},
		goals.Result{GoalID: "still-skips", Result: goals.Skip}, goals.Result{GoalID: "was-red", Result: goals.Timeout},
		goals.Result{GoalID: "red-now-skips", Result: goals.Skip}, goals.Result{GoalID: "red-now-gone", Result: goals.Error},
		goals.Result{GoalID: "unknown-now-gone", Result: goals.Error})
	got := map[string]GoalChange{}
	for _, c := range Compare(f, before, after) {
		got[c.GoalID] = c
	}
	// Pass must stay pass: fail, timeout, skip and error after a pass are
	// regressions; a skip that skipped before, and anything after a failure,
	// are not.
	for id, want := range map[string]bool{"a": false, "b": true, "c": false, "d": false, "e": true, "new": false, "cov": true, "lat": true, "lat-ok": false,
		"hangs": true, "gone": true, "still-skips": false, "was-red": false, "red-now-skips": true, "red-now-gone": true, "unknown-now-gone": false} {
		if got[id].Regressed != want {
			t.Errorf("%s: regressed %v, want %v (%+v)", id, got[id].Regressed, want, got[id])
		}
	}
	if r := got["b"].Reason; r != "pass → fail (exit status 2)" {
		t.Errorf("b: reason %q", r)
	}
	if r := got["cov"].Reason; r != "value 80 → 78.5 (higher is better, tolerance 1)" {
		t.Errorf("cov: reason %q", r)
	}
	if c := got["hangs"]; c.Reason != "pass → timeout (timed out after 2m0s)" || c.Excerpt != "=== RUN TestSlow" {
		t.Errorf("hangs: %+v", c)
	}
	if r := got["gone"].Reason; r != "pass → error (cannot run: golangci-lint is missing)" {
		t.Errorf("gone: reason %q", r)
	}
	if c := got["was-red"]; c.Reason != "fail → timeout" || c.Regressed {
		t.Errorf("was-red: %+v", c)
	}
	if c := got["red-now-skips"]; c.Reason != "fail → skip: the check no longer tells" {
		t.Errorf("red-now-skips: %+v", c)
	}
	if c := got["still-skips"]; c.Reason != "" {
		t.Errorf("still-skips: %+v", c)
	}
	if c := got["new"]; c.Before != "" || c.After != goals.Fail {
		t.Errorf("a goal not measured before: %+v", c)
	}
}

func TestJudge(t *testing.T) {
	dir := t.TempDir()
	// flaky fails on its first run only; broken always fails.
	f := &goals.File{Era: "e", Gate: goals.Gate{Commands: []string{"true"}, Timeout: 5 * time.Second}, Goals: []goals.Goal{
		{ID: "steady", Check: "true", Weight: 3, Timeout: 5 * time.Second},
		{ID: "flaky", Check: "if [ -e ran ]; then exit 0; fi; touch ran; exit 1", Weight: 2, Timeout: 5 * time.Second},
		{ID: "broken", Check: "exit 1", Weight: 1, Timeout: 5 * time.Second},
		{ID: "was-failing", Check: "exit 1", Weight: 1, Timeout: 5 * time.Second},
	}}
	before := snapshot(goals.Result{GoalID: "steady", Result: goals.Pass}, goals.Result{GoalID: "flaky", Result: goals.Pass},
		goals.Result{GoalID: "broken", Result: goals.Pass}, goals.Result{GoalID: "was-failing", Result: goals.Fail})
	v := Judge(context.Background(), f, before, goals.Options{Dir: dir}, nil, nil)
	if !v.CommandsPassed() {
		t.Fatalf("gate commands: %+v", v.Commands)
	}
	reg := v.Regressed()
	if len(reg) != 1 || reg[0].GoalID != "broken" || !reg[0].Rechecked {
		t.Errorf("regressed %+v, want broken alone, rechecked", reg)
	}
	for _, c := range v.Changes {
		if c.GoalID == "flaky" && (!c.Flaky || !c.Rechecked || c.Regressed || c.After != goals.Pass) {
			t.Errorf("flaky: %+v, want a pass on its second run", c)
		}
		if c.GoalID == "was-failing" && (c.Rechecked || c.Regressed) {
			t.Errorf("a goal that failed before is not a regression: %+v", c)
		}
	}
	if s := v.After.Summary; s.Passing != 2 || s.Failing != 2 {
		t.Errorf("after summary %+v: the re-run result must replace the first", s)
	}
	if got := v.Text(); got != "FAIL: regressed broken" {
		t.Errorf("Text() = %q", got)
	}
	if !v.Regression() {
		t.Error("Regression() is false with a regressed goal")
	}

	// A failing test command is a regression on its own, and names itself.
	f.Gate.Commands = []string{"exit 3"}
	f.Goals = f.Goals[:1]
	v = Judge(context.Background(), f, before, goals.Options{Dir: dir}, nil, nil)
	if !v.Regression() || v.Text() != "FAIL: `exit 3` exit status 3" {
		t.Errorf("failing gate command: regression %v, text %q", v.Regression(), v.Text())
	}
	f.Gate.Commands = nil
	if v := Judge(context.Background(), f, before, goals.Options{Dir: dir}, nil, nil); v.Regression() || v.Text() != "PASS" {
		t.Errorf("no commands, a passing goal: %q", v.Text())
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err != nil {
		t.Error("the flaky check never ran")
	}
}

// A continuous value the start measured and the finish cannot read is a
// regression, whatever the check's result after, and even when the goal
// missed its threshold before: a value that vanishes is worse than a low one.
func TestCompareVanishedValue(t *testing.T) {
	cont := func(dir string) *goals.Continuous {
		return &goals.Continuous{Metric: "m", Threshold: 80, Direction: dir}
	}
	f := &goals.File{Goals: []goals.Goal{
		{ID: "silent", Continuous: cont("higher")}, {ID: "exits-1", Continuous: cont("higher")},
		{ID: "was-low", Continuous: cont("higher")}, {ID: "low-skips", Continuous: cont("higher")},
		{ID: "latency", Continuous: cont("lower")}, {ID: "never-had", Continuous: cont("higher")},
		{ID: "new", Continuous: cont("higher")}, {ID: "plain"},
	}}
	before := snapshot(
		goals.Result{GoalID: "silent", Result: goals.Pass, Value: val(82.5)},
		goals.Result{GoalID: "exits-1", Result: goals.Pass, Value: val(82.5)},
		goals.Result{GoalID: "was-low", Result: goals.Fail, Value: val(60)},
		goals.Result{GoalID: "low-skips", Result: goals.Fail, Value: val(60)},
		goals.Result{GoalID: "latency", Result: goals.Fail, Value: val(140)},
		goals.Result{GoalID: "never-had", Result: goals.Fail},
		goals.Result{GoalID: "plain", Result: goals.Fail})
	after := snapshot(
		goals.Result{GoalID: "silent", Result: goals.Fail, Reason: "no value in the check's output"},
		goals.Result{GoalID: "exits-1", Result: goals.Fail, ExitCode: 1},
		goals.Result{GoalID: "was-low", Result: goals.Fail, ExitCode: 1},
		goals.Result{GoalID: "low-skips", Result: goals.Skip, Reason: "exit 77: the check cannot tell here"},
		goals.Result{GoalID: "latency", Result: goals.Fail, ExitCode: 1},
		goals.Result{GoalID: "never-had", Result: goals.Fail, ExitCode: 1},
		goals.Result{GoalID: "new", Result: goals.Fail, ExitCode: 1},
		goals.Result{GoalID: "plain", Result: goals.Fail, ExitCode: 1})
	want := map[string]string{
		"silent":    "pass → fail (no value in the check's output); value 82.5 → none: the check no longer gives its value",
		"exits-1":   "pass → fail (exit status 1); value 82.5 → none: the check no longer gives its value",
		"was-low":   "value 60 → none: the check no longer gives its value",
		"low-skips": "fail → skip: the check no longer tells (exit 77: the check cannot tell here); value 60 → none: the check no longer gives its value",
		"latency":   "value 140 → none: the check no longer gives its value",
	}
	for _, c := range Compare(f, before, after) {
		reason, regressed := want[c.GoalID]
		if c.Regressed != regressed {
			t.Errorf("%s: regressed %v, want %v (%+v)", c.GoalID, c.Regressed, regressed, c)
		}
		if regressed && c.Reason != reason {
			t.Errorf("%s: reason %q, want %q", c.GoalID, c.Reason, reason)
		}
	}
}

// A value that vanished is measured again before it counts, as any
// regression: one that comes back on the second measure is flaky.
func TestJudgeVanishedValue(t *testing.T) {
	dir := t.TempDir()
	cont := &goals.Continuous{Metric: "coverage", Threshold: 80, Direction: "higher"}
	f := &goals.File{Era: "e", Gate: goals.Gate{Timeout: 5 * time.Second}, Goals: []goals.Goal{
		{ID: "gone", Check: "echo all good", Weight: 1, Timeout: 5 * time.Second, Continuous: cont},
		{ID: "blinks", Check: "if [ -e blinked ]; then echo 'coverage: 82.5'; exit 0; fi; touch blinked", Weight: 1, Timeout: 5 * time.Second, Continuous: cont},
	}}
	before := snapshot(goals.Result{GoalID: "gone", Result: goals.Pass, Value: val(82.5)},
		goals.Result{GoalID: "blinks", Result: goals.Pass, Value: val(82.5)})
	v := Judge(context.Background(), f, before, goals.Options{Dir: dir}, nil, nil)
	for _, c := range v.Changes {
		switch c.GoalID {
		case "gone":
			if !c.Regressed || !c.Rechecked || c.Flaky || c.Reason != "pass → fail (no value in the check's output); value 82.5 → none: the check no longer gives its value" {
				t.Errorf("gone: %+v, want regressed after a second measure", c)
			}
		case "blinks":
			if c.Regressed || !c.Rechecked || !c.Flaky || c.AfterValue == nil || *c.AfterValue != 82.5 {
				t.Errorf("blinks: %+v, want flaky, its value back on the second measure", c)
			}
		}
	}
	if got := v.Text(); got != "FAIL: regressed gone" {
		t.Errorf("Text() = %q", got)
	}
}

// A test that failed at the start and that the cycle made disappear
// (absent, or skipped) is a regression when the gate's commands pass; a
// package that failed as a whole is no test, and a failing command says
// so itself.
func TestJudgeHidden(t *testing.T) {
	dir := t.TempDir()
	before := &Census{Runner: "tap", Passed: []string{"adds"}, Failed: []string{"/src/broken.test.mjs", "divides", "subtracts"},
		Groups: []string{"/src/broken.test.mjs"}}
	judge := func(command string) *Verdict {
		f := &goals.File{Era: "e", Gate: goals.Gate{Commands: []string{command}, Timeout: 5 * time.Second}}
		return Judge(context.Background(), f, snapshot(), goals.Options{Dir: dir}, nil, before)
	}
	v := judge(`printf 'ok 1 - adds\nok 2 - subtracts # SKIP not today\nok 3 - new\n'`)
	if !v.Regression() || !slices.Equal(v.Hidden, []string{"divides", "subtracts"}) || v.Dropped {
		t.Fatalf("hidden %v, dropped %v, regression %v", v.Hidden, v.Dropped, v.Regression())
	}
	if got := v.Text(); got != "FAIL: 2 test(s) that failed at the start neither pass nor fail now: hidden" {
		t.Errorf("Text() = %q", got)
	}
	if !v.CensusRechecked || v.CensusFlaky {
		t.Errorf("hidden twice: rechecked %v, flaky %v", v.CensusRechecked, v.CensusFlaky)
	}
	fs := v.Failures()
	if len(fs) != 1 || fs[0].What != "census" || fs[0].Name != "hidden" || fs[0].Excerpt != "divides\nsubtracts" {
		t.Errorf("failures %+v", fs)
	}
	// Fixed, or still failing (its command fails): nothing hidden. The
	// file that failed to load at the start loads now.
	if v := judge(`printf 'ok 1 - adds\nok 2 - subtracts\nok 3 - divides\n'`); v.Regression() || v.Hidden != nil {
		t.Errorf("fixed: hidden %v, %q", v.Hidden, v.Text())
	}
	if v := judge(`printf 'ok 1 - adds\nnot ok 2 - subtracts\nok 3 - divides\n'; exit 1`); v.Hidden != nil || v.Text() != "FAIL: `printf 'ok 1 - adds\\nnot ok 2 - subtracts\\nok 3 - divides\\n'; exit 1` exit status 1" {
		t.Errorf("still failing: hidden %v, %q", v.Hidden, v.Text())
	}
}

// A drop or a hidden test is counted a second time before it counts: what
// the second count does not find is flaky, and not a regression; a second
// run whose commands fail clears nothing; and a count that finds nothing
// runs the commands once.
func TestJudgeRecount(t *testing.T) {
	before := &Census{Runner: "tap", Passed: []string{"a", "b"}, Failed: []string{"c"}}
	judge := func(t *testing.T, command string) (*Verdict, int) {
		t.Helper()
		dir := t.TempDir()
		f := &goals.File{Era: "e", Gate: goals.Gate{Commands: []string{"echo >> runs; " + command}, Timeout: 5 * time.Second}}
		v := Judge(context.Background(), f, snapshot(), goals.Options{Dir: dir}, nil, before)
		data, err := os.ReadFile(filepath.Join(dir, "runs"))
		if err != nil {
			t.Fatal(err)
		}
		return v, len(data)
	}
	t.Run("flaky", func(t *testing.T) {
		// b is lost and c skipped on the first run only.
		v, runs := judge(t, `if [ -e ran ]; then printf 'ok 1 - a\nok 2 - b\nok 3 - c\n'; else touch ran; printf 'ok 1 - a\nok 2 - c # SKIP\n'; fi`)
		if runs != 2 || v.Regression() || !v.CensusRechecked || !v.CensusFlaky || v.Dropped || v.Hidden != nil || v.Vanished != nil {
			t.Errorf("%d runs, %q, %+v", runs, v.Text(), v)
		}
		if v.Census == nil || len(v.Census.Passed) != 3 {
			t.Errorf("the census kept is not the second count: %+v", v.Census)
		}
	})
	t.Run("one of two flaky", func(t *testing.T) {
		// b is lost on both runs; c is skipped on the first only, and
		// fails on the second (a command that lets it).
		v, runs := judge(t, `if [ -e ran ]; then printf 'ok 1 - a\nnot ok 2 - c\n'; else touch ran; printf 'ok 1 - a\nok 2 - c # SKIP\n'; fi`)
		if runs != 2 || !v.Regression() || !v.CensusFlaky || !v.Dropped || v.Hidden != nil || !slices.Equal(v.Vanished, []string{"b"}) {
			t.Errorf("%d runs, %q, %+v", runs, v.Text(), v)
		}
	})
	t.Run("the second run fails", func(t *testing.T) {
		v, runs := judge(t, `if [ -e ran ]; then exit 1; else touch ran; printf 'ok 1 - a\nok 2 - b\n'; fi`)
		if runs != 2 || !v.Regression() || !v.CensusRechecked || v.CensusFlaky || !slices.Equal(v.Hidden, []string{"c"}) || !v.CommandsPassed() {
			t.Errorf("%d runs, %q, %+v", runs, v.Text(), v)
		}
	})
	t.Run("nothing found", func(t *testing.T) {
		v, runs := judge(t, `printf 'ok 1 - a\nok 2 - b\nnot ok 3 - c # TODO\nok 4 - c\n'`)
		if runs != 1 || v.Regression() || v.CensusRechecked || v.CensusFlaky {
			t.Errorf("%d runs, %q, %+v", runs, v.Text(), v)
		}
	})
}

// A fresh count runs go test's tests again, not the results it cached;
// another count lets go cache them.
func TestCensusTapFresh(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	for _, fresh := range []bool{false, true} {
		tap := &censusTap{dir: t.TempDir(), fresh: fresh}
		cmd, env := tap.Prepare("go test ./...")
		if cmd != "go test -json ./..." {
			t.Errorf("command %q", cmd)
		}
		if got := slices.Contains(env, "GOFLAGS=-mod=mod -count=1"); got != fresh {
			t.Errorf("fresh %v: env %q", fresh, env)
		}
	}
}
