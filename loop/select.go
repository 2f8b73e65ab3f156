package loop

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/queue"
)

// The rungs of the work ladder.
const (
	RungPinned    = "pinned"
	RungHarvested = "harvested"
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
	"balanced": {RungTesting, RungValidation, RungDrift, RungFeature},
	"innovate": {RungFeature, RungTesting, RungValidation, RungDrift},
	"harden":   {RungTesting, RungValidation, RungDrift},
	"repair":   {RungValidation},
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
}

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
	// Harvested queue items.
	harvested := s.Harvested()
	for _, it := range harvested {
		if restorative && !contains(restorativeTypes, strings.ToLower(it.Type)) {
			skipped = append(skipped, fmt.Sprintf("harvested: %s (%s) is no fix of what is red, and the cycle is restorative", it.ID, orNone(it.Type)))
			continue
		}
		it := it
		why := fmt.Sprintf("harvested work comes before goals: %s, severity %s", it.ID, orNone(it.Severity))
		switch it.TargetRepo {
		case s.Config.RepoName:
			why += ", for this repository (" + it.TargetRepo + ")"
		case "*":
			why += ", for any repository"
		}
		return (&Work{Rung: RungHarvested, Target: it.ID, Title: it.Title, Item: &it, Why: why, Restorative: restorative}).with(skipped)
	}
	if len(harvested) == 0 {
		skipped = append(skipped, "harvested: no selectable item in "+queue.Path)
	}
	// Directive gaps, before failing goals (seed 004: "first assess
	// directives, then goals").
	if gaps := s.DirectiveGaps(); len(gaps) > 0 {
		if restorative {
			skipped = append(skipped, fmt.Sprintf("directive: %d directive gap(s), but the cycle is restorative: a directive is no fix of what is red", len(gaps)))
		} else {
			d := gaps[0]
			w := &Work{Rung: RungDirective, Target: d.ID, Title: fmt.Sprintf("%d. %s", d.Number, d.Title), Directive: &d}
			w.Why = fmt.Sprintf("directive gaps come before failing goals: directive %d of %s (steer %s), %d gap(s) open", d.Number, s.GoalsName, orNone(d.Steer), len(gaps))
			if len(gaps) > 1 {
				w.Why += ", the one worked least lately first"
			}
			return w.with(skipped)
		}
	} else if s.Goals != nil && s.Goals.Markdown {
		skipped = append(skipped, "directive: every directive is complete")
	}
	// Failing goals, by weight.
	var quarantine []Quarantine
	if o.Measured != nil {
		q := s.Quarantined()
		osc := Oscillations(s.Events)
		dig := digests(s.Goals)
		failing := o.Measured.FailingByWeight()
		for _, g := range o.Measured.CannotRun() {
			skipped = append(skipped, fmt.Sprintf("goal: %s cannot run here, %s: no work for a cycle", g.GoalID, strings.TrimPrefix(g.Reason, "cannot run: ")))
		}
		for _, g := range failing {
			if contains(q, g.GoalID) {
				skipped = append(skipped, fmt.Sprintf("goal: %s is quarantined (it oscillates) until its definition changes", g.GoalID))
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
			if restorative {
				w.Why += "; the cycle is restorative: it fixes what is red"
			}
			return w.with(skipped)
		}
		if len(failing) == 0 {
			skipped = append(skipped, "goal: every goal passes, skips or cannot run")
		}
	} else {
		skipped = append(skipped, "goal: the goals were not measured")
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
	w := &Work{Rung: rung, Target: rung, Title: Generators[rung], Quarantine: quarantine, Restorative: restorative && strategy == "repair"}
	w.Why = fmt.Sprintf("no queued work and no failing goal: the generator rungs find some (%s strategy", strategy)
	if empty > 0 {
		w.Why += fmt.Sprintf("; %d generator cycle(s) in a row found nothing", empty)
	}
	w.Why += ")"
	return w.with(skipped)
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
