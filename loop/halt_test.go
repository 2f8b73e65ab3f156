package loop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/ledger"
)

func checkHalt(t *testing.T, s *State, o HaltOptions) *Halt {
	t.Helper()
	h, err := s.CheckHalt(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHaltPriority(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	m := MarkersFor(f.dir, f.getenv)
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Halt || h.Reason != "" {
		t.Fatalf("nothing in the way: halt %v %q", h.Halt, h.Reason)
	}
	// A breaker-free ledger, a governor that says burned, STOP and KILL:
	// each layer above the next.
	f.env["EVOLVE_GOVERNOR_CMD"] = "exit 3"
	if h := checkHalt(t, f.load(now), HaltOptions{}); !h.Halt || h.Reason != HaltBudget {
		t.Errorf("governor exit 3: %v %q, want budget", h.Halt, h.Reason)
	}
	f.env["EVOLVE_GOVERNOR_CMD"] = "exit 0"
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Halt {
		t.Errorf("governor exit 0: halted %q", h.Reason)
	}
	f.env["EVOLVE_GOVERNOR_CMD"] = "exit 3"
	if _, err := m.Write(Stop, "lunch", 0, "op", now); err != nil {
		t.Fatal(err)
	}
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Reason != HaltUser || h.Detail == "" {
		t.Errorf("STOP and a burned budget: %q %q, want user_halt with the reason", h.Reason, h.Detail)
	}
	if _, err := m.Write(Kill, "", 0, "op", now); err != nil {
		t.Fatal(err)
	}
	h := checkHalt(t, f.load(now), HaltOptions{})
	if h.Reason != HaltKill || len(h.Markers) != 2 {
		t.Errorf("KILL and STOP: %q with %d markers, want kill with both", h.Reason, len(h.Markers))
	}
	// A KILL older than the TTL is stale: reported, ignored.
	fxAge(t, m.Path(Kill), now, 8*24*time.Hour)
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Reason != HaltUser || len(h.StaleMarkers) != 1 || h.StaleMarkers[0].Name != Kill {
		t.Errorf("stale KILL: %q, stale %+v; want user_halt and KILL stale", h.Reason, h.StaleMarkers)
	}
	f.env["EVOLVE_KILL_TTL_DAYS"] = "10"
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Reason != HaltKill {
		t.Errorf("KILL of 8 days with a TTL of 10: %q, want kill", h.Reason)
	}
	f.env["EVOLVE_KILL_TTL_DAYS"] = "soon"
	if _, err := f.load(now).CheckHalt(context.Background(), HaltOptions{}); err == nil {
		t.Error("a TTL that is not a number was taken")
	}
}

func TestHandoffIsNeverSticky(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	p := f.write(".agents/evolve/HANDOFF", "reason: over to you\n")
	h := checkHalt(t, f.load(now), HaltOptions{DryRun: true})
	if h.Handoff == nil || h.Handoff.Reason != "over to you" || !fxExists(p) {
		t.Fatalf("dry run: handoff %+v, exists %v; want it reported and kept", h.Handoff, fxExists(p))
	}
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Halt || h.Handoff == nil || fxExists(p) {
		t.Errorf("handoff: halt %v, reported %v, still there %v; want reported, removed, no halt", h.Halt, h.Handoff != nil, fxExists(p))
	}
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Handoff != nil {
		t.Error("a removed handoff was reported again")
	}
}

func TestDormantClearedByReadyWork(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	p := f.write(".agents/evolve/DORMANT", "reason: nothing to do\n")
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Reason != HaltDormant || !fxExists(p) {
		t.Fatalf("no work: %q, marker there %v; want dormant", h.Reason, fxExists(p))
	}
	f.write(".agents/rpi/next-work.jsonl", `{"items":[{"title":"fix the parser","severity":"high"}]}`+"\n")
	h := checkHalt(t, f.load(now), HaltOptions{DryRun: true})
	if h.Halt || !h.DormantCleared || !fxExists(p) {
		t.Errorf("dry run with work: halt %v cleared %v kept %v", h.Halt, h.DormantCleared, fxExists(p))
	}
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Halt || !h.DormantCleared || fxExists(p) || h.ReadyWork != 1 {
		t.Errorf("work queued: halt %v cleared %v still there %v ready %d", h.Halt, h.DormantCleared, fxExists(p), h.ReadyWork)
	}
}

func TestDormancyWrittenWhenIdle(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	for i := 0; i < 2; i++ {
		f.record(fxRec{result: ledger.Unchanged, rung: RungTesting, target: "idle"})
	}
	h := checkHalt(t, f.load(now), HaltOptions{DryRun: true})
	if h.Reason != HaltDormant || fxExists(MarkersFor(f.dir, f.getenv).Path(Dormant)) {
		t.Fatalf("dry run after two empty generator passes: %q (streaks %d/%d), marker written %v", h.Reason, h.IdleStreak, h.GeneratorEmptyStreak,
			fxExists(MarkersFor(f.dir, f.getenv).Path(Dormant)))
	}
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Reason != HaltDormant || !fxExists(MarkersFor(f.dir, f.getenv).Path(Dormant)) {
		t.Errorf("after two empty generator passes: %q, want dormant and the marker written", h.Reason)
	}
}

func TestPriorCycleFailIsRestorative(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.record(fxRec{result: ledger.Improved, gate: "PASS"})
	f.record(fxRec{result: ledger.Regressed, gate: "FAIL: regressed parser", passing: 1, total: 2})
	h := checkHalt(t, f.load(now), HaltOptions{})
	if h.Halt || !h.Restorative || h.Reason != PriorCycleFail {
		t.Fatalf("after a failed gate: halt %v restorative %v reason %q; want no halt, restorative, prior_cycle_fail", h.Halt, h.Restorative, h.Reason)
	}
	f.record(fxRec{result: ledger.Improved, gate: "PASS"})
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Restorative {
		t.Error("a passing gate after the failure left the loop restorative")
	}
}

func TestGoalRegressionHalts(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.record(fxRec{result: ledger.Improved, gate: "PASS", passing: 1, total: 3, before: &fxBefore{passing: 2, total: 3}})
	h := checkHalt(t, f.load(now), HaltOptions{})
	if !h.Halt || h.Reason != HaltGoalRegression {
		t.Fatalf("a productive cycle that left fewer goals passing: %v %q, want goal_regression", h.Halt, h.Reason)
	}
	// The same counts under another goals file (a different total) are
	// not a regression.
	f.record(fxRec{result: ledger.Improved, gate: "PASS", passing: 1, total: 4, before: &fxBefore{passing: 2, total: 3}})
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Halt {
		t.Errorf("a changed total: halted %q", h.Reason)
	}
}

// Records made by git evolve record carry no "before": the record before
// is what they are compared with, whoever wrote it; a regressed record
// between them (its work reverted) does not count.
func TestGoalRegressionFromConsecutiveRecords(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.record(fxRec{result: ledger.Improved, gate: "PASS", passing: 3, total: 3})
	f.record(fxRec{result: ledger.Regressed, gate: "FAIL: x", passing: 1, total: 3})
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Reason == HaltGoalRegression {
		t.Fatalf("a regressed record (reverted) halted: %q", h.Detail)
	}
	f.record(fxRec{result: ledger.Improved, gate: "PASS", passing: 2, total: 3})
	h := checkHalt(t, f.load(now), HaltOptions{})
	if !h.Halt || h.Reason != HaltGoalRegression || !strings.Contains(h.Detail, "left 2 of 3 goals passing, 3 after cycle 1 before it") {
		t.Fatalf("2 of 3 after 3 of 3: %v %q %q, want goal_regression", h.Halt, h.Reason, h.Detail)
	}
	f.record(fxRec{result: ledger.Harvested, gate: "PASS", passing: 2, total: 3})
	if h := checkHalt(t, f.load(now), HaltOptions{}); h.Halt {
		t.Errorf("2 of 3 after 2 of 3: halted %q", h.Reason)
	}
}

func TestBreakerStaysTrippedUntilResume(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	fxGit(t, f.dir, "config", "evolve.breaker.failures", "2")
	f.record(fxRec{result: ledger.Unchanged})
	f.record(fxRec{result: ledger.Unchanged})
	h := checkHalt(t, f.load(now), HaltOptions{DryRun: true})
	if !h.Halt || h.Reason != HaltBreaker || len(h.Tripped) != 1 {
		t.Fatalf("dry run: %v %q tripped %d", h.Halt, h.Reason, len(h.Tripped))
	}
	if c, _ := Controls(f.repo); len(c) != 0 {
		t.Fatalf("a dry run recorded %d control event(s)", len(c))
	}
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Reason != HaltBreaker || len(h.Tripped) != 1 || h.Tripped[0].Breaker != BreakerFailures {
		t.Fatalf("two idle cycles, threshold 2: %q %+v", h.Reason, h.Tripped)
	}
	// Tripped is recorded: a later check with a larger threshold still halts.
	fxGit(t, f.dir, "config", "evolve.breaker.failures", "9")
	h = checkHalt(t, f.load(now), HaltOptions{})
	if h.Reason != HaltBreaker || len(h.Tripped) != 0 || len(h.Breakers) != 1 {
		t.Fatalf("recorded trip: %q, new %d, standing %d; want the recorded breaker to stand", h.Reason, len(h.Tripped), len(h.Breakers))
	}
	if err := RecordControl(f.repo, ControlEvent{Kind: KindResume, At: now.Add(time.Second).Format(time.RFC3339), Cleared: []string{BreakerFailures}}); err != nil {
		t.Fatal(err)
	}
	if h := checkHalt(t, f.load(now.Add(2*time.Second)), HaltOptions{}); h.Halt {
		t.Errorf("after resume: halted %q %q", h.Reason, h.Detail)
	}
}

func TestNoProgressSuspendedWhileRoadmapLeft(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.record(fxRec{result: ledger.Improved, at: now})
	f.record(fxRec{result: ledger.Unchanged, at: now.Add(2 * time.Hour)})
	later := now.Add(2*time.Hour + time.Minute)
	h := checkHalt(t, f.load(later), HaltOptions{DryRun: true})
	if !h.Halt || len(h.Tripped) != 1 || h.Tripped[0].Breaker != BreakerNoProgress {
		t.Fatalf("two hours without progress: %v %+v", h.Halt, h.Tripped)
	}
	// A pinned roadmap with items left: the time breaker waits (seed 004).
	f.write("ROADMAP.md", "1. `one` the first step\n")
	s := f.load(later)
	r, err := loadRoadmap(f.dir, "ROADMAP.md", later)
	if err != nil || r == nil {
		t.Fatal(err)
	}
	s.Roadmap = r
	if h := checkHalt(t, s, HaltOptions{DryRun: true}); h.Halt {
		t.Errorf("with the roadmap's items left: halted %q %q", h.Reason, h.Detail)
	}
	r.State.Done(r.Items, "one")
	if h := checkHalt(t, s, HaltOptions{DryRun: true}); !h.Halt || h.Tripped[0].Breaker != BreakerNoProgress {
		t.Errorf("the roadmap done: %v %+v", h.Halt, h.Tripped)
	}
}
