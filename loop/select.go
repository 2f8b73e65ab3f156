package loop

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/queue"
)

// The rungs of the work ladder.
const (
	RungPinned    = "pinned"
	RungHarvested = "harvested"
	RungBeads     = "beads"
	RungDirective = "directive"
	RungGoal      = "goal"
	// The generator rungs: when no queue and no goal has work, the cycle's
	// agent is asked to find some.
	RungTesting    = "generator:testing"
	RungValidation = "generator:validation"
	RungDrift      = "generator:drift"
	RungFeature    = "generator:feature"
)

// Generators say what each generator rung asks of the agent.
var Generators = map[string]string{
	RungTesting:    "testing improvements: find packages and files with thin or missing tests, missing regression tests around recent bug fixes, absent smoke tests; write the tests, or add what you find to " + queue.Path,
	RungValidation: "validation tightening and a bug hunt: missing validation gates, weak lint or contract coverage, risky areas, stale assumptions between the docs, the contracts and the code",
	RungDrift:      "drift, hotspots and dead code: complexity hotspots, stale TODO and FIXME markers, dead code, stale docs, generated files out of step with their sources",
	RungFeature:    "a feature suggestion grounded in the repository's purpose: build one specific feature, or propose it as a queue item with source feature-suggestion",
}

// The strategies of a run, and the generator rungs each tries, in order.
var Strategies = map[string][]string{
	"balanced":     {RungTesting, RungValidation, RungDrift, RungFeature},
	"innovate":     {RungFeature, RungTesting, RungValidation, RungDrift},
	"harden":       {RungTesting, RungValidation, RungDrift},
	"repair":       {RungValidation},
	"ultrathink":   {RungDrift, RungValidation, RungTesting},
	"autoresearch": {RungFeature, RungTesting, RungDrift, RungValidation},
}

// StrategyFocus says what each strategy asks of the agent (seed 002's
// table), for its brief.
var StrategyFocus = map[string]string{
	"balanced":     "broad discovery: the standard approach; medium findings and above block",
	"innovate":     "new features and gaps: additive; style is relaxed",
	"harden":       "stability and tests: defensive; strict everywhere",
	"repair":       "bugs and broken tests: fix only, the smallest diff; strict about regressions",
	"ultrathink":   "complex refactors: think the change through before making it; strict, and say how confident you are",
	"autoresearch": "hypothesis testing: fixed metrics; a falsified hypothesis is a result, not a failure (record it with git evolve hypothesis)",
}

// restorativeTypes are the queue item types a restorative cycle may take:
// work that fixes what is red.
var restorativeTypes = []string{"bug", "fix", "ci-failure", "regression"}

// Work is the work the ladder chose for the next cycle.
type Work struct {
	Rung   string `json:"rung"`
	Target string `json:"target"`
	Title  string `json:"title"`
	// Why says why this rung chose it, and what the rungs above had.
	Why string `json:"why"`
	// Item is the queue item (harvested), Pinned the roadmap item, with the
	// item it unblocks when it is a blocker.
	Item     *queue.Item        `json:"item,omitempty"`
	Pinned   *queue.RoadmapItem `json:"pinned,omitempty"`
	Unblocks string             `json:"unblocks,omitempty"`
	// Chain is the roadmap item whose turn it is, then the blockers from
	// its own down to the one worked (the roadmap state's unblock_chain).
	Chain []string `json:"unblock_chain,omitempty"`
	// Goal is the failing goal (goal rung), Directive the directive gap
	// (directive rung).
	Goal        *goals.Result    `json:"goal,omitempty"`
	Directive   *goals.Directive `json:"directive,omitempty"`
	Bead        *Bead            `json:"bead,omitempty"`
	Restorative bool             `json:"restorative"`
	// Skipped is what the ladder passed over, and why.
	Skipped []string `json:"skipped"`
	// Quarantine are goals the ladder found oscillating: they are to be
	// quarantined (a quarantined record each) and were skipped.
	Quarantine []Quarantine `json:"quarantine,omitempty"`
}

// ItemID is the queue or roadmap item the work takes ("" for none).
func (w *Work) ItemID() string {
	switch {
	case w.Item != nil:
		return w.Item.ID
	case w.Pinned != nil:
		return w.Pinned.ID
	}
	return ""
}

// Quarantine is a goal to quarantine.
type Quarantine struct {
	Goal         string `json:"goal"`
	Oscillations int    `json:"oscillations"`
	Digest       string `json:"goal_digest"`
}

// SelectOptions are what the ladder weighs besides the state.
type SelectOptions struct {
	// Measured is the goals as measured now (nil: the goal rung is
	// skipped).
	Measured    *goals.Snapshot
	Restorative bool
	Strategy    string // balanced when empty
	// Beads are bd's ready issues (ReadyBeads); BeadsOnly takes no
	// directive or goal work (seed 004's --beads-only skips Step 3.3).
	Beads     []Bead
	BeadsOnly bool
	// Quality is seed 004's quality mode: high and medium findings first,
	// then beads, directives and emergency gates (failing goals of weight
	// EmergencyWeight or more), then the other findings, then generators.
	Quality bool
}

// EmergencyWeight is the weight from which a failing goal is an emergency
// gate in quality mode.
const EmergencyWeight = 5

// Select walks the ladder: the pinned roadmap, harvested queue items,
// GOALS.md's directive gaps (the one worked least lately first, then in
// the file's order), failing goals by weight (quarantined ones skipped; oscillating ones
// quarantined), then the generator rungs. A restorative cycle takes only
// what fixes red (queue items typed bug, fix, ci-failure or regression,
// and failing goals); with nothing red, restorative mode has nothing to
// restore and the whole ladder applies.
func (s *State) Select(o SelectOptions) *Work {
	strategy := o.Strategy
	if strategy == "" {
		strategy = "balanced"
	}
	restorative := o.Restorative || strategy == "repair"
	var skipped []string
	// The metronome gate (seed 003): work that would repeat the mode of
	// the trailing cycles, MetronomeStreak of them or more, is skipped once
	// (not in a restorative cycle: fixing red comes first).
	mode, streak := s.trailingMode()
	// metronome is the rule, in words, once the gate has passed work over:
	// whatever is chosen below it is chosen because of it, and its Why
	// says so first.
	metronome := ""
	blocked := func(rung, target string) bool {
		if restorative || streak < MetronomeStreak || modeOf(rung, target) != mode {
			return false
		}
		skipped = append(skipped, fmt.Sprintf("metronome: the last %d cycles were all %s: skipped once", streak, mode))
		metronome = fmt.Sprintf("metronome: after %d cycles in a row of one mode the next takes other work once (the last %d were all %s)", MetronomeStreak, streak, mode)
		return true
	}
	// ruled is why, the rung's own reason, after the metronome's when the
	// gate passed work over on the way to it.
	ruled := func(why string) string {
		if metronome == "" {
			return why
		}
		return metronome + ": " + why
	}
	// The pinned roadmap.
	if r := s.Roadmap; r != nil {
		before := len(r.State.Escalated)
		it, unblocks, chain, ok := r.State.Next(r.Items)
		for _, e := range r.State.Escalated[before:] {
			skipped = append(skipped, fmt.Sprintf("pinned: %s escalated: %s", e.ID, e.Reason))
		}
		if ok {
			w := &Work{Rung: RungPinned, Target: it.ID, Title: it.Line, Pinned: &it, Unblocks: unblocks, Chain: chain, Restorative: restorative}
			w.Why = fmt.Sprintf("the pinned roadmap %s is worked in order: item %d of %d", r.File, r.State.Index+1, len(r.Items))
			if unblocks != "" {
				w.Why = fmt.Sprintf("the pinned roadmap %s: %s is the blocker of %s, so it comes first", r.File, it.ID, unblocks)
			}
			return w.with(skipped)
		}
		skipped = append(skipped, fmt.Sprintf("pinned: the roadmap %s has no item left (%d done, %d escalated)", r.File, len(r.State.Completed), len(r.State.Escalated)))
	}
	// Harvested queue items (in quality mode, the high and medium
	// findings here, the others after the goals).
	harvested := s.Harvested()
	takeHarvested := func(low bool) *Work {
		for _, it := range harvested {
			if o.Quality && (queue.SeverityRank(it.Severity) > 1) != low {
				continue
			}
			if blocked(RungHarvested, it.ID) {
				continue
			}
			if restorative && !contains(restorativeTypes, strings.ToLower(it.Type)) {
				skipped = append(skipped, fmt.Sprintf("harvested: %s (%s) is no fix of what is red, and the cycle is restorative", it.ID, orNone(it.Type)))
				continue
			}
			it := it
			why := fmt.Sprintf("harvested work comes before goals: %s, severity %s", it.ID, orNone(it.Severity))
			if o.Quality {
				why = fmt.Sprintf("quality mode takes findings first: %s, severity %s", it.ID, orNone(it.Severity))
				if low {
					why = fmt.Sprintf("quality mode: no high or medium finding, no emergency gate: %s, severity %s", it.ID, orNone(it.Severity))
				}
			}
			if processTypes[strings.ToLower(it.Type)] {
				why += " (process work, after any concrete work of its severity)"
			}
			switch it.TargetRepo {
			case s.Config.RepoName:
				why += ", for this repository (" + it.TargetRepo + ")"
			case "*":
				why += ", for any repository"
			}
			return (&Work{Rung: RungHarvested, Target: it.ID, Title: it.Title, Item: &it, Why: ruled(why), Restorative: restorative}).with(skipped)
		}
		return nil
	}
	if w := takeHarvested(false); w != nil {
		return w
	}
	if len(harvested) == 0 {
		skipped = append(skipped, "harvested: no selectable item in "+queue.Path)
	}
	// Ready beads (bd ready), when bd is there.
	for _, b := range o.Beads {
		if blocked(RungBeads, b.ID) {
			continue
		}
		if restorative {
			skipped = append(skipped, fmt.Sprintf("beads: %d ready, but the cycle is restorative: a bead is no known fix of what is red", len(o.Beads)))
			break
		}
		b := b
		w := &Work{Rung: RungBeads, Target: b.ID, Title: b.Title, Bead: &b}
		w.Why = ruled(fmt.Sprintf("a ready bead (bd ready), priority %d, of %d ready", b.Priority, len(o.Beads)))
		return w.with(skipped)
	}
	if o.BeadsOnly {
		skipped = append(skipped, "directive and goal: --beads-only takes no directive or goal work")
	}
	// Directive gaps, before failing goals (seed 004: "first assess
	// directives, then goals").
	// Directives and failing goals take turns: after a cycle on a
	// directive, a failing goal comes first (a directive steered increase
	// forever would starve them otherwise).
	goalsTurn := false
	if mode, _ := s.trailingMode(); strings.HasPrefix(mode, RungDirective+":") && o.Measured != nil {
		q := s.Quarantined()
		for _, g := range o.Measured.FailingByWeight() {
			if !contains(q, g.GoalID) {
				goalsTurn = true
				break
			}
		}
	}
	if gaps := s.DirectiveGaps(); len(gaps) > 0 && goalsTurn && !o.BeadsOnly {
		skipped = append(skipped, "directive: the last cycle worked a directive; a failing goal takes its turn")
	} else if len(gaps) > 0 && !o.BeadsOnly {
		if len(gaps) > 0 && blocked(RungDirective, gaps[0].ID) {
			gaps = gaps[1:]
		}
		switch {
		case len(gaps) == 0:
		case restorative:
			skipped = append(skipped, fmt.Sprintf("directive: %d directive gap(s), but the cycle is restorative: a directive is no fix of what is red", len(gaps)))
		default:
			d := gaps[0]
			w := &Work{Rung: RungDirective, Target: d.ID, Title: fmt.Sprintf("%d. %s", d.Number, d.Title), Directive: &d}
			w.Why = fmt.Sprintf("directive gaps come before failing goals: directive %d of %s (steer %s), %d gap(s) open", d.Number, s.GoalsName, orNone(d.Steer), len(gaps))
			if len(gaps) > 1 {
				w.Why += ", the one worked least lately first"
			}
			w.Why = ruled(w.Why)
			return w.with(skipped)
		}
	} else if s.Goals != nil && s.Goals.Markdown && !o.BeadsOnly {
		skipped = append(skipped, "directive: every directive is complete")
	}
	// Failing goals, by weight.
	var quarantine []Quarantine
	failingGoals := 0
	switch {
	case o.BeadsOnly:
	case o.Measured != nil:
		q := s.Quarantined()
		osc := Oscillations(s.Events)
		dig := digests(s.Goals)
		failing := o.Measured.FailingByWeight()
		failingGoals = len(failing)
		for _, g := range o.Measured.CannotRun() {
			skipped = append(skipped, fmt.Sprintf("goal: %s cannot run here, %s: no work for a cycle", g.GoalID, strings.TrimPrefix(g.Reason, "cannot run: ")))
		}
		for _, g := range failing {
			if contains(q, g.GoalID) {
				skipped = append(skipped, fmt.Sprintf("goal: %s is quarantined (it oscillates) until its definition changes", g.GoalID))
				continue
			}
			if blocked(RungGoal, g.GoalID) {
				continue
			}
			if o.Quality && g.Weight < EmergencyWeight && !restorative {
				skipped = append(skipped, fmt.Sprintf("goal: %s (weight %d) is no emergency gate (weight %d or more) in quality mode", g.GoalID, g.Weight, EmergencyWeight))
				continue
			}
			if n := osc[g.GoalID]; n >= s.Config.Thresholds.Oscillations {
				quarantine = append(quarantine, Quarantine{Goal: g.GoalID, Oscillations: n, Digest: dig[g.GoalID]})
				skipped = append(skipped, fmt.Sprintf("goal: %s passed after an improved cycle and failed again %d times: quarantined", g.GoalID, n))
				continue
			}
			g := g
			w := &Work{Rung: RungGoal, Target: g.GoalID, Title: goalTitle(s.Goals, g.GoalID), Goal: &g, Restorative: restorative, Quarantine: quarantine}
			w.Why = fmt.Sprintf("the failing goal with the highest weight (%d) of %d failing", g.Weight, len(failing))
			if passed := len(failing) - 1 - countFrom(failing, g.GoalID); passed > 0 {
				w.Why = fmt.Sprintf("the heaviest failing goal left (weight %d) of %d failing: %d before it passed over (see skipped)", g.Weight, len(failing), passed)
			}
			if restorative {
				w.Why += "; the cycle is restorative: it fixes what is red"
			}
			w.Why = ruled(w.Why)
			return w.with(skipped)
		}
		if len(failing) == 0 {
			skipped = append(skipped, "goal: every goal passes, skips or cannot run")
		}
	default:
		skipped = append(skipped, "goal: the goals were not measured")
	}
	if o.Quality {
		if w := takeHarvested(true); w != nil {
			return w
		}
	}
	if restorative && strategy != "repair" {
		o.Restorative = false
		w := s.Select(o)
		w.Skipped = append([]string{"restorative: nothing is red to fix, so the whole ladder applies"}, w.Skipped...)
		return w
	}
	// The generators, in the strategy's order: after each that found
	// nothing, the next.
	rungs := Strategies[strategy]
	_, empty := Streaks(s.Events, s.LastResume())
	rung := rungs[empty%len(rungs)]
	if len(rungs) > 1 && blocked(rung, rung) {
		rung = rungs[(empty+1)%len(rungs)]
	}
	w := &Work{Rung: rung, Target: rung, Title: Generators[rung], Quarantine: quarantine, Restorative: restorative && strategy == "repair"}
	// What left the work to the generators: nothing above had any, or
	// what it had was passed over (by the metronome, said first, or by
	// the rules the skipped list names).
	none := "no queued work and no failing goal: "
	switch {
	case failingGoals > 0 && metronome != "":
		none = ""
	case failingGoals > 0:
		none = fmt.Sprintf("no queued work, and the %d failing goal(s) passed over (see skipped): ", failingGoals)
	}
	w.Why = ruled(fmt.Sprintf("%sthe generator rungs find some (%s strategy", none, strategy))
	if empty > 0 {
		w.Why += fmt.Sprintf("; %d generator cycle(s) in a row found nothing", empty)
	}
	w.Why += ")"
	return w.with(skipped)
}

// countFrom is how many of failing come after the goal id, in order: the
// goals a chosen goal leaves to later cycles.
func countFrom(failing []goals.Result, id string) int {
	for i, g := range failing {
		if g.GoalID == id {
			return len(failing) - 1 - i
		}
	}
	return 0
}

// DirectiveGaps are the goals file's directives still to do, the one the
// line's cycles targeted least lately first (never first of all), ties in
// the file's order.
func (s *State) DirectiveGaps() []goals.Directive {
	if s.Goals == nil {
		return nil
	}
	gaps := s.Goals.Gaps()
	last := map[string]int{}
	for i, e := range s.Events {
		last[e.Target] = i + 1
	}
	sort.SliceStable(gaps, func(i, j int) bool { return last[gaps[i].ID] < last[gaps[j].ID] })
	return gaps
}

// MetronomeStreak is how many cycles in a row of one mode make the
// metronome gate skip that mode once (seed 003: a streak of 3).
const MetronomeStreak = 3

// modeOf is the mode of work: its rung and target ("goal:api-latency"),
// or the generator rung alone.
func modeOf(rung, target string) string {
	if strings.HasPrefix(rung, "generator:") || target == "" {
		return rung
	}
	return rung + ":" + target
}

// trailingMode is the mode of the line's last cycles, and how many in a
// row had it (quarantine records, the ladder's bookkeeping, left out;
// cycles with no rung, made by hand, end the streak).
func (s *State) trailingMode() (string, int) {
	mode, n := "", 0
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := s.Events[i]
		if e.Result == ledger.Quarantined || e.Result == ledger.ContextHandoff {
			continue
		}
		m := modeOf(e.Rung, e.Target)
		if e.Rung == "" || (n > 0 && m != mode) {
			break
		}
		mode = m
		n++
	}
	return mode, n
}

func (w *Work) with(skipped []string) *Work {
	if skipped == nil {
		skipped = []string{}
	}
	w.Skipped = skipped
	return w
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func goalTitle(f *goals.File, id string) string {
	if f != nil {
		for _, g := range f.Goals {
			if g.ID == id {
				return g.Description
			}
		}
	}
	return id
}
