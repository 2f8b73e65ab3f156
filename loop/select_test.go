package loop

import (
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
)

// fxMeasured is a snapshot where each goal "id:weight" given fails, and
// "id:weight:pass" passes.
func fxMeasured(specs ...string) *goals.Snapshot {
	s := &goals.Snapshot{}
	for _, sp := range specs {
		parts := strings.Split(sp, ":")
		w := 0
		for _, c := range parts[1] {
			w = w*10 + int(c-'0')
		}
		r := goals.Fail
		if len(parts) > 2 {
			r = goals.Pass
		}
		s.Goals = append(s.Goals, goals.Result{GoalID: parts[0], Result: r, Weight: w})
	}
	return s
}

func TestSelectLadder(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	fxGit(t, f.dir, "config", "evolve.reponame", "app")
	measured := fxMeasured("light:2", "heavy:7", "green:9:pass")

	// Nothing queued: the heaviest failing goal.
	w := f.load(now).Select(SelectOptions{Measured: measured})
	if w.Rung != RungGoal || w.Target != "heavy" {
		t.Fatalf("no queue: %s %s, want goal heavy", w.Rung, w.Target)
	}
	// Harvested items come before goals: this repository's first, then
	// any repository's, then unscoped; higher severity first within each;
	// another repository's never.
	f.write(".agents/rpi/next-work.jsonl", strings.Join([]string{
		`{"items":[{"id":"low-here","title":"a","severity":"low","target_repo":"app"},{"id":"high-any","title":"b","severity":"high"}]}`,
		`{"items":[{"id":"crit-other","title":"c","severity":"critical","target_repo":"elsewhere"},{"id":"med-here","title":"d","severity":"medium","target_repo":"app","type":"bug"}]}`,
		`not json at all`,
	}, "\n")+"\n")
	s := f.load(now)
	var got []string
	for _, it := range s.Harvested() {
		got = append(got, it.ID)
	}
	if strings.Join(got, ",") != "med-here,low-here,high-any" {
		t.Errorf("harvested order %v, want med-here,low-here,high-any (exact repository first, by severity; another repository's left out)", got)
	}
	w = s.Select(SelectOptions{Measured: measured})
	if w.Rung != RungHarvested || w.ItemID() != "med-here" || !strings.Contains(w.Why, "for this repository") {
		t.Errorf("with a queue: %s %s (%s)", w.Rung, w.ItemID(), w.Why)
	}
	// Restorative: only fixes of what is red.
	f.write(".agents/rpi/next-work.jsonl", `{"items":[{"id":"feat","title":"a feature","severity":"high","type":"feature"}]}`+"\n")
	w = f.load(now).Select(SelectOptions{Measured: measured, Restorative: true})
	if w.Rung != RungGoal || w.Target != "heavy" || !w.Restorative || len(w.Skipped) == 0 || !strings.Contains(w.Skipped[0], "no fix of what is red") {
		t.Errorf("restorative with a feature queued: %s %s restorative %v skipped %v", w.Rung, w.Target, w.Restorative, w.Skipped)
	}
	// Restorative with nothing red: the whole ladder.
	w = f.load(now).Select(SelectOptions{Measured: fxMeasured("green:9:pass"), Restorative: true})
	if w.Rung != RungHarvested || w.ItemID() != "feat" || !strings.Contains(w.Skipped[0], "nothing is red") {
		t.Errorf("restorative, nothing red: %s %s skipped %v", w.Rung, w.ItemID(), w.Skipped)
	}
}

func TestSelectSkipsQuarantinedGoals(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	f.write("GOALS.yaml", "version: 3\ngoals:\n  - id: flaky\n    description: d\n    check: \"true\"\n    weight: 9\n  - id: steady\n    description: d\n    check: \"true\"\n    weight: 1\n")
	s := f.load(now)
	dig := digests(s.Goals)
	f.record(fxRec{result: ledger.Quarantined, target: "flaky", goalDigest: dig["flaky"], oscillations: 3})
	w := f.load(now).Select(SelectOptions{Measured: fxMeasured("flaky:9", "steady:1")})
	if w.Target != "steady" || len(w.Skipped) == 0 || !strings.Contains(strings.Join(w.Skipped, "\n"), "flaky is quarantined") {
		t.Fatalf("quarantined goal: chose %s, skipped %v", w.Target, w.Skipped)
	}
	// A changed definition lifts the quarantine.
	f.write("GOALS.yaml", "version: 3\ngoals:\n  - id: flaky\n    description: d\n    check: \"exit 0\"\n    weight: 9\n  - id: steady\n    description: d\n    check: \"true\"\n    weight: 1\n")
	if w := f.load(now).Select(SelectOptions{Measured: fxMeasured("flaky:9", "steady:1")}); w.Target != "flaky" {
		t.Errorf("after the definition changed: chose %s, want flaky", w.Target)
	}
}

func TestSelectGenerators(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	green := fxMeasured("g:3:pass")
	if w := f.load(now).Select(SelectOptions{Measured: green}); w.Rung != RungTesting {
		t.Errorf("balanced, nothing to do: %s, want %s", w.Rung, RungTesting)
	}
	if w := f.load(now).Select(SelectOptions{Measured: green, Strategy: "innovate"}); w.Rung != RungFeature {
		t.Errorf("innovate: %s, want %s", w.Rung, RungFeature)
	}
	// Each generator pass that found nothing moves to the next.
	f.record(fxRec{result: ledger.Unchanged, rung: RungTesting, target: RungTesting})
	w := f.load(now).Select(SelectOptions{Measured: green})
	if w.Rung != RungValidation || !strings.Contains(w.Why, "1 generator cycle(s) in a row found nothing") {
		t.Errorf("after an empty testing pass: %s (%s), want %s", w.Rung, w.Why, RungValidation)
	}
}

func TestOnLine(t *testing.T) {
	ev := []Event{{Cycle: 1, Branch: "refs/heads/main"}, {Cycle: 2, Branch: "refs/heads/side"}, {Cycle: 3},
		{Cycle: 4, Branch: "refs/heads/side", Result: ledger.Quarantined}}
	var got []int
	for _, e := range OnLine(ev, "refs/heads/main") {
		got = append(got, e.Cycle)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 4 {
		t.Errorf("main's line: cycles %v, want 1 (its own), 3 (names none), 4 (a quarantine)", got)
	}
	if n := len(OnLine(ev, "")); n != 4 {
		t.Errorf("a detached HEAD reads %d events, want all 4", n)
	}
}

func TestSelectDirectiveGaps(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	measured := fxMeasured("heavy:7")
	s := f.load(now)
	var err error
	s.Goals, err = goals.Parse("GOALS.md", []byte("## Directives\n\n### 1. One\n**Steer:** complete\n\n### 2. Two\n**Steer:** increase\n\n### 3. Three\n\n## Gates\n\n| ID | Check | Weight |\n|-|-|-|\n| heavy | `false` | 7 |\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.GoalsName = goals.MarkdownName
	// Directive gaps come before failing goals, in the file's order.
	w := s.Select(SelectOptions{Measured: measured})
	if w.Rung != RungDirective || w.Target != "directive-2" || w.Directive == nil || w.Title != "2. Two" {
		t.Fatalf("directive rung: %s %s %q", w.Rung, w.Target, w.Title)
	}
	// The one worked least lately first: directive-2 was the last cycle's.
	s.Events = []Event{{Cycle: 1, Target: "directive-3"}, {Cycle: 2, Target: "directive-2"}}
	if w := s.Select(SelectOptions{Measured: measured}); w.Target != "directive-3" {
		t.Errorf("after directive-2 was worked: %s, want directive-3", w.Target)
	}
	// After a cycle on a directive, a failing goal takes its turn.
	s.Events = []Event{{Cycle: 1, Rung: RungDirective, Target: "directive-3"}}
	if w := s.Select(SelectOptions{Measured: measured}); w.Rung != RungGoal || !strings.Contains(strings.Join(w.Skipped, "\n"), "a failing goal takes its turn") {
		t.Errorf("after a directive: %s %s %v", w.Rung, w.Target, w.Skipped)
	}
	s.Events = []Event{{Cycle: 1, Rung: RungDirective, Target: "directive-3"}, {Cycle: 2, Rung: RungGoal, Target: "heavy"}}
	if w := s.Select(SelectOptions{Measured: measured}); w.Rung != RungDirective || w.Target != "directive-2" {
		t.Errorf("after the goal's turn: %s %s", w.Rung, w.Target)
	}
	s.Events = []Event{{Cycle: 1, Target: "directive-3"}, {Cycle: 2, Target: "directive-2"}}
	// A restorative cycle fixes what is red: directives are passed over.
	w = s.Select(SelectOptions{Measured: measured, Restorative: true})
	if w.Rung != RungGoal || w.Target != "heavy" || !strings.Contains(strings.Join(w.Skipped, "\n"), "directive: 2 directive gap(s), but the cycle is restorative") {
		t.Errorf("restorative: %s %s, skipped %v", w.Rung, w.Target, w.Skipped)
	}
}

func TestSelectLadderRules(t *testing.T) {
	f := fxNew(t)
	now := fxBase()
	measured := fxMeasured("light:2", "heavy:7")
	// At equal severity, concrete work before process work.
	f.write(".agents/rpi/next-work.jsonl", `{"items":[{"id":"write-docs","title":"a","severity":"medium","type":"docs"},{"id":"fix-it","title":"b","severity":"medium","type":"bug"},{"id":"low-one","title":"c","severity":"low","type":"feature"}]}`+"\n")
	s := f.load(now)
	if w := s.Select(SelectOptions{Measured: measured}); w.Target != "fix-it" {
		t.Errorf("concrete before process: %s", w.Target)
	}
	// The metronome: three cycles in a row on fix-it skip it once.
	s.Events = []Event{{Cycle: 1, Rung: RungHarvested, Target: "fix-it"}, {Cycle: 2, Rung: RungHarvested, Target: "fix-it"}, {Cycle: 3, Rung: RungHarvested, Target: "fix-it"}}
	w := s.Select(SelectOptions{Measured: measured})
	if w.Target != "write-docs" || !strings.Contains(strings.Join(w.Skipped, "\n"), "metronome: the last 3 cycles were all harvested:fix-it: skipped once") {
		t.Errorf("metronome: %s, skipped %v", w.Target, w.Skipped)
	}
	// Not in a restorative cycle: fixing red comes first.
	if w := s.Select(SelectOptions{Measured: measured, Restorative: true}); w.Target != "fix-it" {
		t.Errorf("restorative, metronome: %s", w.Target)
	}
	s.Events = nil
	// Quality mode: high and medium findings, beads, emergency gates, then
	// the low findings.
	s.Items = s.Items[2:] // only low-one left
	w = s.Select(SelectOptions{Measured: measured, Quality: true, Beads: []Bead{{ID: "bd-1", Title: "a bead", Priority: 1}}})
	if w.Rung != RungBeads || w.Target != "bd-1" {
		t.Errorf("quality, a bead ready: %s %s", w.Rung, w.Target)
	}
	w = s.Select(SelectOptions{Measured: measured, Quality: true})
	if w.Rung != RungGoal || w.Target != "heavy" {
		t.Errorf("quality, an emergency gate: %s %s", w.Rung, w.Target)
	}
	w = s.Select(SelectOptions{Measured: fxMeasured("light:2"), Quality: true})
	if w.Rung != RungHarvested || w.Target != "low-one" || !strings.Contains(strings.Join(w.Skipped, "\n"), "goal: light (weight 2) is no emergency gate") {
		t.Errorf("quality, the low finding after the gates: %s %s %v", w.Rung, w.Target, w.Skipped)
	}
	// Without quality mode a low finding comes before beads and goals;
	// --beads-only takes no goal work.
	s.Items = nil
	w = s.Select(SelectOptions{Measured: measured, BeadsOnly: true})
	if w.Rung == RungGoal || !strings.Contains(strings.Join(w.Skipped, "\n"), "--beads-only takes no directive or goal work") {
		t.Errorf("beads only: %s %s", w.Rung, w.Target)
	}
	if q := (&State{Items: nil}).QualityScore(""); q != 100 {
		t.Errorf("quality score of nothing left: %v", q)
	}
}

func TestRecentHistory(t *testing.T) {
	f := fxNew(t)
	f.record(fxRec{result: ledger.Quarantined, target: "flaky", oscillations: 3})
	for i := 0; i < 6; i++ {
		f.record(fxRec{result: ledger.Improved, target: "g"})
	}
	all, err := History(f.ledger.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	recent, err := RecentHistory(f.ledger.Ledger, 3)
	if err != nil {
		t.Fatal(err)
	}
	var cycles []int
	for _, e := range recent {
		cycles = append(cycles, e.Cycle)
	}
	if len(all) != 7 || len(recent) != 4 || recent[0].Result != ledger.Quarantined || cycles[1] != 5 || cycles[3] != 7 {
		t.Fatalf("recent %v of %d", cycles, len(all))
	}
}
