package loop

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/fitness"
	"github.com/git-evolve/git-evolve/queue"
)

// ConvergenceThresholds are the criteria's limits (the seeds' defaults:
// a green streak of 3, at most 1 open high or medium item).
type ConvergenceThresholds struct {
	GreenStreak   int `json:"green_streak"`
	MaxHighMedium int `json:"max_high_medium"`
}

// DefaultConvergence are the seeds' criteria.
var DefaultConvergence = ConvergenceThresholds{GreenStreak: 3, MaxHighMedium: 1}

// Convergence is whether the loop has converged, and the evidence: all of
// it read from the ledger, the queue and the fitness snapshots.
type Convergence struct {
	Converged            bool `json:"converged"`
	CIGreenStreak        int  `json:"ci_green_streak"`
	UnconsumedHighMedium int  `json:"unconsumed_high_medium"`
	BaselineCaptured     bool `json:"fitness_baseline_captured"`
	// PinnedWorkLeft says the pinned roadmap has items to work: a loop
	// with a roadmap to finish has not converged.
	PinnedWorkLeft bool `json:"pinned_work_left"`
	// Reasons names every criterion that is not met.
	Reasons    []string              `json:"reasons"`
	Thresholds ConvergenceThresholds `json:"thresholds"`
	Era        string                `json:"era,omitempty"`
}

// Converged evaluates the convergence criteria: the last cycles' gates
// passed (a green streak: the trailing gated cycles whose gate is PASS),
// the queue holds few high and medium items not consumed (for this
// repository, or any: another repository's are no work of this loop), the
// pinned roadmap (when there is one) has no item left to work, and a
// fitness baseline of the goals file's era has been captured.
func (s *State) Converged(t ConvergenceThresholds) (*Convergence, error) {
	c := &Convergence{Thresholds: t, Era: s.era(), Reasons: []string{}}
	// A scope shift resets the streak (seed 001): only the cycles judged
	// by the goals file's present era count, and, with a pinned roadmap,
	// only those since it was pinned (or its content last changed).
	var pinnedAt time.Time
	if r := s.Roadmap; r != nil {
		pinnedAt, _ = time.Parse(time.RFC3339, r.State.PinnedAt)
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := s.Events[i]
		if (c.Era != "" && e.Era != "" && e.Era != c.Era) || (!pinnedAt.IsZero() && e.Time.Before(pinnedAt)) {
			break
		}
		if e.Gate == "" {
			continue // no gate ran: unchanged, aborted, quarantined
		}
		if !strings.EqualFold(e.Gate, "PASS") {
			break
		}
		c.CIGreenStreak++
	}
	for _, it := range s.Items {
		if it.Consumed || it.ClaimStatus == queue.Consumed || s.scope(it) < 0 {
			continue // done, or another repository's: no work of this loop
		}
		if r := queue.SeverityRank(it.Severity); r <= 1 {
			c.UnconsumedHighMedium++
		}
	}
	if r := s.Roadmap; r != nil {
		_, _, _, c.PinnedWorkLeft = r.State.Next(r.Items)
	}
	if s.Goals != nil {
		found, err := fitness.Baseline(s.Repo, s.Goals.Era)
		if err != nil {
			return nil, err
		}
		c.BaselineCaptured = found != nil
	}
	if c.CIGreenStreak < t.GreenStreak {
		c.Reasons = append(c.Reasons, fmt.Sprintf("ci_green_streak %d < %d: the last %d gated cycles did not all pass", c.CIGreenStreak, t.GreenStreak, t.GreenStreak))
	}
	if c.UnconsumedHighMedium > t.MaxHighMedium {
		c.Reasons = append(c.Reasons, fmt.Sprintf("unconsumed_high_medium %d > %d: high and medium items are open in %s", c.UnconsumedHighMedium, t.MaxHighMedium, queue.Path))
	}
	if c.PinnedWorkLeft {
		c.Reasons = append(c.Reasons, "pinned_work_left: the pinned roadmap "+s.Roadmap.File+" has items to work")
	}
	if !c.BaselineCaptured {
		if s.Goals == nil {
			c.Reasons = append(c.Reasons, "fitness_baseline_captured false: there is no goals file to measure")
		} else {
			c.Reasons = append(c.Reasons, "fitness_baseline_captured false: no baseline of era "+s.Goals.Era+" (git evolve goals baseline captures one)")
		}
	}
	c.Converged = len(c.Reasons) == 0
	return c, nil
}
