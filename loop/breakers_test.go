package loop

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/ledger"
)

var fxT0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// fxRun is events of the given results, a minute apart from fxT0.
func fxRun(results ...string) []Event {
	out := make([]Event, len(results))
	for i, r := range results {
		out[i] = fxEvent(i+1, r, fxT0.Add(time.Duration(i)*time.Minute))
	}
	return out
}

func tripNames(trips []Trip) []string {
	out := []string{}
	for _, t := range trips {
		out = append(out, t.Breaker)
	}
	return out
}

func hasTrip(trips []Trip, name string) bool {
	for _, t := range trips {
		if t.Breaker == name {
			return true
		}
	}
	return false
}

func TestThresholdsFrom(t *testing.T) {
	got, err := thresholdsFrom(map[string][]string{})
	if err != nil || got != DefaultThresholds() {
		t.Fatalf("no config: %+v, %v; want the defaults", got, err)
	}
	want := Thresholds{NoProgress: 60 * time.Minute, Failures: 5, SameFailure: 3, Dormancy: 2, Oscillations: 3}
	if DefaultThresholds() != want {
		t.Errorf("defaults %+v, want the seeds' %+v", DefaultThresholds(), want)
	}
	got, err = thresholdsFrom(map[string][]string{
		"evolve.breaker.noprogressminutes": {"90"},
		"evolve.breaker.failures":          {"9", "7"}, // the last value wins, as in git
		"evolve.breaker.samefailure":       {"4"},
		"evolve.breaker.dormancy":          {"3"},
		"evolve.breaker.oscillations":      {"5"},
		"evolve.other":                     {"x"},
	})
	want = Thresholds{NoProgress: 90 * time.Minute, Failures: 7, SameFailure: 4, Dormancy: 3, Oscillations: 5}
	if err != nil || got != want {
		t.Errorf("configured: %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"0", "-2", "many", "1.5", ""} {
		_, err := thresholdsFrom(map[string][]string{"evolve.breaker.samefailure": {bad}})
		if err == nil || !strings.Contains(err.Error(), "evolve.breaker.samefailure") {
			t.Errorf("samefailure %q: %v, want an error naming the key", bad, err)
		}
	}
}

func TestNoProgressBreaker(t *testing.T) {
	th := DefaultThresholds()
	at := func(c int, result string, min int) Event {
		return fxEvent(c, result, fxT0.Add(time.Duration(min)*time.Minute))
	}
	tests := []struct {
		name     string
		events   []Event
		now      time.Time
		runStart time.Time
		trip     bool
	}{
		{"no cycles, no run", nil, fxT0.Add(5 * time.Hour), time.Time{}, false},
		{"productive then 59 minutes of nothing", []Event{at(1, ledger.Improved, 0), at(2, ledger.Unchanged, 59)}, fxT0.Add(5 * time.Hour), time.Time{}, false},
		{"productive then 60 minutes of nothing", []Event{at(1, ledger.Improved, 0), at(2, ledger.Unchanged, 60)}, fxT0.Add(5 * time.Hour), time.Time{}, true},
		{"harvested counts as productive", []Event{at(1, ledger.Unchanged, 0), at(2, ledger.Harvested, 50), at(3, ledger.Unchanged, 100)}, time.Time{}, time.Time{}, false},
		{"regressed is no progress", []Event{at(1, ledger.Improved, 0), at(2, ledger.Regressed, 30), at(3, ledger.Regressed, 61)}, time.Time{}, time.Time{}, true},
		{"nothing productive, 60 minutes of ledger", []Event{at(1, ledger.Unchanged, 0), at(2, ledger.Unchanged, 60)}, time.Time{}, time.Time{}, true},
		{"nothing productive, 59 minutes of ledger", []Event{at(1, ledger.Unchanged, 0), at(2, ledger.Unchanged, 59)}, time.Time{}, time.Time{}, false},
		{"a quarantined record is no progress", []Event{at(1, ledger.Improved, 0), at(2, ledger.Quarantined, 30), at(3, ledger.Unchanged, 60)}, time.Time{}, time.Time{}, true},
		{"a run, 59 minutes without a cycle", nil, fxT0.Add(59 * time.Minute), fxT0, false},
		{"a run, 60 minutes without a cycle", nil, fxT0.Add(60 * time.Minute), fxT0, true},
		{"a run measures from its start, not from older progress", []Event{at(1, ledger.Improved, 0)}, fxT0.Add(150 * time.Minute), fxT0.Add(100 * time.Minute), false},
		{"a run measures from its last productive cycle", []Event{at(1, ledger.Improved, 30)}, fxT0.Add(89 * time.Minute), fxT0, false},
		{"a run, 60 minutes after its last productive cycle", []Event{at(1, ledger.Improved, 30), at(2, ledger.Unchanged, 40)}, fxT0.Add(90 * time.Minute), fxT0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trips := Breakers(tt.events, time.Time{}, tt.now, tt.runStart, th)
			if got := hasTrip(trips, BreakerNoProgress); got != tt.trip {
				t.Errorf("no-progress tripped %v, want %v (%v)", got, tt.trip, trips)
			}
		})
	}
	// The limit is configurable.
	th.NoProgress = 10 * time.Minute
	if !hasTrip(Breakers([]Event{at(1, ledger.Improved, 0), at(2, ledger.Unchanged, 10)}, time.Time{}, time.Time{}, time.Time{}, th), BreakerNoProgress) {
		t.Error("a 10-minute limit does not trip after 10 minutes")
	}
}

func TestFailuresBreaker(t *testing.T) {
	th := DefaultThresholds()
	four := fxRun(ledger.Improved, ledger.Regressed, ledger.Unchanged, ledger.Unchanged, ledger.Regressed)
	if hasTrip(Breakers(four, time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("4 non-productive cycles trip the failures breaker (the limit is 5)")
	}
	five := fxRun(ledger.Improved, ledger.Regressed, ledger.Unchanged, ledger.Unchanged, ledger.Regressed, ledger.Unchanged)
	trips := Breakers(five, time.Time{}, time.Time{}, time.Time{}, th)
	if !hasTrip(trips, BreakerFailures) {
		t.Fatalf("5 non-productive cycles do not trip: %v", trips)
	}
	for _, tr := range trips {
		if tr.Breaker == BreakerFailures && !strings.Contains(tr.Reason, "5 cycles in a row") {
			t.Errorf("reason %q", tr.Reason)
		}
	}
	// An aborted cycle is recorded unchanged: it counts.
	aborted := fxRun(ledger.Unchanged, ledger.Unchanged, ledger.Unchanged, ledger.Unchanged, ledger.Unchanged)
	aborted[0].Aborted, aborted[3].Aborted = true, true
	if !hasTrip(Breakers(aborted, time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("aborted cycles do not count against the loop")
	}
	// A productive cycle ends the run.
	ended := fxRun(ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Harvested)
	if hasTrip(Breakers(ended, time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("the breaker trips after a productive cycle")
	}
	// Quarantined records are no cycles: they neither count nor break the run.
	q := fxRun(ledger.Regressed, ledger.Regressed, ledger.Quarantined, ledger.Regressed, ledger.Quarantined, ledger.Regressed)
	if hasTrip(Breakers(q, time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("quarantined records count as failures")
	}
	q = append(q, fxEvent(7, ledger.Unchanged, fxT0.Add(7*time.Minute)))
	if !hasTrip(Breakers(q, time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("quarantined records break the run of failures")
	}
	th.Failures = 2
	if !hasTrip(Breakers(fxRun(ledger.Improved, ledger.Unchanged, ledger.Unchanged), time.Time{}, time.Time{}, time.Time{}, th), BreakerFailures) {
		t.Error("evolve.breaker.failures = 2 does not trip after 2")
	}
}

func TestSameFailureBreaker(t *testing.T) {
	th := DefaultThresholds()
	gated := func(gates ...string) []Event {
		ev := fxRun(make([]string, len(gates))...)
		for i, g := range gates {
			ev[i].Gate = g
			ev[i].Result = ledger.Regressed
			if g == "" {
				ev[i].Result = ledger.Unchanged // no gate ran
			}
			if g == "PASS" {
				ev[i].Result = ledger.Improved
			}
		}
		return ev
	}
	fail := "FAIL: `go test ./...` exit 1"
	tests := []struct {
		name  string
		gates []string
		trip  bool
	}{
		{"twice", []string{"PASS", fail, fail}, false},
		{"three times", []string{"PASS", fail, fail, fail}, true},
		{"three times, unchanged cycles between", []string{fail, "", fail, "", fail, ""}, true},
		{"three failures, not the same", []string{fail, "FAIL: regressed api", fail}, false},
		{"a pass between", []string{fail, fail, "PASS", fail}, false},
		{"three passes", []string{"PASS", "PASS", "PASS"}, false},
		{"blocked", []string{"BLOCKED: lint", "BLOCKED: lint", "BLOCKED: lint"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trips := Breakers(gated(tt.gates...), time.Time{}, time.Time{}, time.Time{}, th)
			if got := hasTrip(trips, BreakerSameFailure); got != tt.trip {
				t.Errorf("same-failure tripped %v, want %v (%v)", got, tt.trip, trips)
			}
		})
	}
	th.SameFailure = 2
	if !hasTrip(Breakers(gated(fail, fail), time.Time{}, time.Time{}, time.Time{}, th), BreakerSameFailure) {
		t.Error("evolve.breaker.sameFailure = 2 does not trip after 2")
	}
}

// A resume acknowledges what came before it: the breakers read only the
// cycles after it.
func TestBreakersAfterResume(t *testing.T) {
	th := DefaultThresholds()
	fail := "FAIL: x"
	ev := fxRun(ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Regressed, ledger.Regressed)
	for i := range ev {
		ev[i].Gate = fail
	}
	ev[len(ev)-1].Time = ev[0].Time.Add(2 * time.Hour)
	all := Breakers(ev, time.Time{}, time.Time{}, time.Time{}, th)
	if got, want := tripNames(all), []string{BreakerNoProgress, BreakerFailures, BreakerSameFailure}; !reflect.DeepEqual(got, want) {
		t.Fatalf("without a resume: %v, want %v", got, want)
	}
	resume := ev[4].Time // after cycles 1-5
	if got := Breakers(ev, resume, time.Time{}, time.Time{}, th); len(got) != 0 {
		t.Errorf("after a resume that leaves 1 cycle: %v, want none", got)
	}
	if got := Breakers(ev, ev[len(ev)-1].Time, fxT0.Add(3*time.Hour), time.Time{}, th); len(got) != 0 {
		t.Errorf("after a resume that leaves no cycle: %v, want none", got)
	}
}

func TestStreaks(t *testing.T) {
	gen := func(e Event, rung string) Event { e.Rung = rung; return e }
	ev := fxRun(ledger.Improved, ledger.Unchanged, ledger.Unchanged, ledger.Unchanged, ledger.Unchanged)
	ev[1] = gen(ev[1], RungTesting)
	ev[2] = gen(ev[2], RungGoal)
	ev[3] = gen(ev[3], RungTesting)
	ev[4] = gen(ev[4], RungValidation)
	idle, empty := Streaks(ev, time.Time{})
	if idle != 4 || empty != 2 {
		t.Errorf("streaks %d, %d; want 4 idle, 2 generator-empty", idle, empty)
	}
	// An aborted cycle is not idle (it was stopped, not out of work).
	ev[3].Aborted = true
	if idle, _ := Streaks(ev, time.Time{}); idle != 1 {
		t.Errorf("idle streak over an aborted cycle: %d, want 1", idle)
	}
	ev[3].Aborted = false
	// Quarantined records are skipped; a productive cycle ends both.
	q := append(append([]Event{}, ev...), fxEvent(6, ledger.Quarantined, fxT0.Add(6*time.Minute)))
	if idle, empty := Streaks(q, time.Time{}); idle != 4 || empty != 2 {
		t.Errorf("with a quarantined record last: %d, %d; want 4, 2", idle, empty)
	}
	h := append(append([]Event{}, ev...), gen(fxEvent(6, ledger.Harvested, fxT0.Add(6*time.Minute)), RungHarvested))
	if idle, empty := Streaks(h, time.Time{}); idle != 0 || empty != 0 {
		t.Errorf("after a productive cycle: %d, %d; want 0, 0", idle, empty)
	}
	// A resume resets them.
	if idle, empty := Streaks(ev, ev[3].Time); idle != 1 || empty != 1 {
		t.Errorf("after a resume: %d, %d; want 1, 1", idle, empty)
	}
}

// fxFinished is a finished cycle on the shared ledger: the goals failing
// as it started and after it.
func fxFinished(c int, result string, before, after []string) Event {
	e := fxEvent(c, result, fxT0.Add(time.Duration(c)*time.Minute))
	e.HasBefore, e.FailingBefore, e.FailingAfter = true, before, after
	return e
}

func TestOscillations(t *testing.T) {
	// api passes after each improved cycle and fails again as the next
	// starts: 3 flips. db fails throughout: no flip.
	ev := []Event{
		fxFinished(1, ledger.Improved, []string{"api", "db"}, []string{"db"}),
		fxFinished(2, ledger.Improved, []string{"api", "db"}, []string{"db"}),
		fxFinished(3, ledger.Regressed, []string{"api", "db"}, []string{"api", "db"}),
		fxFinished(4, ledger.Improved, []string{"api", "db"}, []string{"db"}),
		fxFinished(5, ledger.Unchanged, []string{"api", "db"}, nil),
	}
	got := Oscillations(ev)
	if want := map[string]int{"api": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("oscillations %v, want %v", got, want)
	}
	// A flip after a regressed cycle does not count (its work was reverted).
	reg := []Event{
		fxFinished(1, ledger.Regressed, []string{"api"}, nil),
		fxFinished(2, ledger.Improved, []string{"api"}, []string{"api"}),
	}
	if got := Oscillations(reg); len(got) != 0 {
		t.Errorf("after a regressed cycle: %v, want none", got)
	}
	// Journal records (local to a clone) and cycles without a before
	// measurement are not read.
	j := fxFinished(2, ledger.Unchanged, []string{"api"}, nil)
	j.Journal = true
	noBefore := fxEvent(3, ledger.Unchanged, fxT0.Add(3*time.Minute))
	skipped := []Event{fxFinished(1, ledger.Improved, []string{"api"}, nil), j, noBefore, fxFinished(4, ledger.Improved, nil, nil)}
	if got := Oscillations(skipped); len(got) != 0 {
		t.Errorf("across a journal record: %v, want none (cycle 4 started with api passing)", got)
	}
	skipped[3].FailingBefore = []string{"api"}
	if got := Oscillations(skipped); got["api"] != 1 {
		t.Errorf("across a journal record: %v, want api 1", got)
	}
	// The flips before a goal's quarantine were counted by it.
	quar := fxEvent(6, ledger.Quarantined, fxT0.Add(6*time.Minute+30*time.Second))
	quar.Target = "api"
	more := append(append([]Event{}, ev...), quar,
		fxFinished(7, ledger.Improved, []string{"api"}, nil),
		fxFinished(8, ledger.Improved, []string{"api"}, nil))
	if got := Oscillations(more); got["api"] != 1 {
		t.Errorf("after a quarantine: api %d, want 1 (only the flip after it)", got["api"])
	}
}

func TestQuarantined(t *testing.T) {
	q := func(c int, goal, digest, era string) Event {
		e := fxEvent(c, ledger.Quarantined, fxT0.Add(time.Duration(c)*time.Minute))
		e.Target, e.GoalDigest, e.Era = goal, digest, era
		return e
	}
	events := []Event{
		q(1, "api", "d-api", "goals-1"),
		fxFinished(2, ledger.Improved, nil, nil),
		q(3, "db", "", "goals-1"), // an older record: no digest, an era
		q(4, "gone", "d-gone", "goals-1"),
		q(5, "lint", "d-lint-old", "goals-1"),
		q(6, "lint", "d-lint", "goals-1"), // the last record of a goal counts
		q(7, "ui", "", ""),
	}
	digests := map[string]string{"api": "d-api", "db": "d-db", "lint": "d-lint", "ui": "d-ui", "free": "d-free"}
	if got, want := Quarantined(events, digests, "goals-1"), []string{"api", "db", "lint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("quarantined %v, want %v", got, want)
	}
	// Each goal's definition changes: its quarantine lifts.
	digests["api"] = "d-api-2"
	if got, want := Quarantined(events, digests, "goals-1"), []string{"db", "lint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after api changed: %v, want %v", got, want)
	}
	// A record without a digest lifts with the era.
	if got, want := Quarantined(events, digests, "goals-2"), []string{"lint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("in another era: %v, want %v", got, want)
	}
	// An older record for a digest does not hold when a newer one names another.
	events = append(events, q(8, "lint", "d-lint-3", "goals-1"))
	if got := Quarantined(events, digests, "goals-2"); len(got) != 0 {
		t.Errorf("after lint's last quarantine named another digest: %v, want none", got)
	}
}

func TestEventClassification(t *testing.T) {
	for _, tt := range []struct {
		result              string
		productive, nonProd bool
	}{
		{ledger.Improved, true, false},
		{ledger.Harvested, true, false},
		{ledger.Regressed, false, true},
		{ledger.Unchanged, false, true},
		{ledger.Quarantined, false, false},
	} {
		e := Event{Result: tt.result}
		if e.Productive() != tt.productive || e.NonProductive() != tt.nonProd {
			t.Errorf("%s: productive %v, non-productive %v; want %v, %v", tt.result, e.Productive(), e.NonProductive(), tt.productive, tt.nonProd)
		}
	}
	for gate, want := range map[string]bool{"PASS": false, "": false, "FAIL: x": true, "fail": true, "FAILED": true, "BLOCKED by lint": true, "gate BLOCKED": true,
		"bats-tests goals-validate...FAILED": true, "PASS: 3 passed": false} {
		if got := (&Event{Gate: gate}).Failed(); got != want {
			t.Errorf("gate %q failed %v, want %v", gate, got, want)
		}
	}
}
