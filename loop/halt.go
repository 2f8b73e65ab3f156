package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/ledger"
)

// The halt reasons, in the order halt-check weighs them (the seeds' names).
const (
	HaltKill           = "kill"
	HaltUser           = "user_halt"
	HaltDormant        = "dormant"
	HaltBudget         = "budget"
	HaltBreaker        = "breaker"
	HaltGoalRegression = "goal_regression"
	// HaltRestorativeExhausted: three restorative cycles in a row did not
	// pass the gate (seed 001: "3 consecutive restorative without
	// restoration → escalate. Don't silently grind.").
	HaltRestorativeExhausted = "restorative_exhausted"
	// PriorCycleFail does not halt: the next cycle is restorative.
	PriorCycleFail = "prior_cycle_fail"
)

// Halt is what halt-check found.
type Halt struct {
	Halt bool `json:"halt"`
	// Reason is the halt's reason, or prior_cycle_fail when the loop goes
	// on in restorative mode; "" when nothing stands in the way.
	Reason      string `json:"halt_reason"`
	Detail      string `json:"detail,omitempty"`
	Restorative bool   `json:"restorative"`
	// StaleMarkers are KILL and STOP markers older than the TTL: reported
	// and ignored.
	StaleMarkers []Marker `json:"stale_markers"`
	// Markers are the markers that hold.
	Markers []Marker `json:"markers"`
	// Handoff is the HANDOFF marker found and cleared.
	Handoff        *Marker `json:"handoff_cleared,omitempty"`
	DormantCleared bool    `json:"dormant_cleared"`
	// Breakers are the tripped breakers the operator has not acknowledged
	// (git evolve resume), Tripped the ones that tripped in this check.
	Breakers []ControlEvent `json:"breakers"`
	Tripped  []Trip         `json:"tripped"`
	// IdleStreak and GeneratorEmptyStreak are the trailing runs of idle
	// cycles and of generator cycles that found nothing.
	IdleStreak           int      `json:"idle_streak"`
	GeneratorEmptyStreak int      `json:"generator_empty_streak"`
	ReadyWork            int      `json:"ready_work"`
	Warnings             []string `json:"warnings,omitempty"`
}

// HaltOptions change what CheckHalt does.
type HaltOptions struct {
	// RunStart is when the loop run began (zero outside a run): the
	// no-progress breaker measures from it.
	RunStart time.Time
	// DryRun changes nothing: no marker is written or removed, no trip
	// recorded.
	DryRun bool
}

// CheckHalt runs the loop's pre-cycle gate: the markers, the budget, the
// breakers and the last cycles decide whether the next cycle may run.
// Breakers found tripping are recorded (they stay tripped until the
// operator resumes); HANDOFF is cleared; DORMANT is cleared when there is
// work (ReadyWork, and bd's ready issues when bd is there), and written
// when the loop has found nothing for long enough.
//
// The variables it reads are GIT_EVOLVE_<name>, or the seeds' EVOLVE_<name>
// (see envAlias).
func (s *State) CheckHalt(ctx context.Context, o HaltOptions) (*Halt, error) {
	h := &Halt{StaleMarkers: []Marker{}, Markers: []Marker{}, Breakers: []ControlEvent{}, Tripped: []Trip{}}
	ttl := DefaultKillTTL
	if name, v := envAlias(s.Getenv, "KILL_TTL_DAYS"); v != "" {
		days, err := strconv.ParseFloat(v, 64)
		if err != nil || days <= 0 {
			return nil, &RunError{Msg: fmt.Sprintf("%s=%q: must be a number of days above 0", name, v), Usage: true, Hint: "for example " + name + "=7 (the default)"}
		}
		ttl = time.Duration(days * float64(24*time.Hour))
	}
	halt := func(reason, detail string) {
		if !h.Halt {
			h.Halt, h.Reason, h.Detail = true, reason, detail
		}
	}
	// HANDOFF is never sticky.
	if m, ok, err := s.Markers.Read(Handoff, s.Now); err != nil {
		return nil, err
	} else if ok {
		h.Handoff = m
		if !o.DryRun {
			if _, err := s.Markers.Remove(Handoff); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range []struct{ name, reason string }{{Kill, HaltKill}, {Stop, HaltUser}} {
		m, ok, err := s.Markers.Read(k.name, s.Now)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if s.Now.Sub(m.Time) > ttl {
			h.StaleMarkers = append(h.StaleMarkers, *m)
			continue
		}
		h.Markers = append(h.Markers, *m)
		halt(k.reason, markerDetail(m))
	}
	lastResume := s.LastResume()
	h.IdleStreak, h.GeneratorEmptyStreak = Streaks(s.Events, lastResume)
	h.ReadyWork = s.ReadyWork()
	// bd's ready issues are work too: the ladder takes one when nothing
	// comes before it.
	if beads, err := ReadyBeads(ctx, s.Top); err != nil {
		h.Warnings = append(h.Warnings, fmt.Sprintf("the ready beads are not counted: %v", err))
	} else {
		h.ReadyWork += len(beads)
	}
	// Dormancy: never while there is work.
	if m, ok, err := s.Markers.Read(Dormant, s.Now); err != nil {
		return nil, err
	} else if ok && h.ReadyWork > 0 {
		h.DormantCleared = true
		if !o.DryRun {
			if _, err := s.Markers.Remove(Dormant); err != nil {
				return nil, err
			}
		}
	} else if ok {
		h.Markers = append(h.Markers, *m)
		halt(HaltDormant, markerDetail(m))
	} else if d := s.Config.Thresholds.Dormancy; h.ReadyWork == 0 && h.IdleStreak >= d && h.GeneratorEmptyStreak >= d {
		why := fmt.Sprintf("nothing to do: %d idle cycles in a row, %d of them generator passes that found nothing, and no queued work or failing goal", h.IdleStreak, h.GeneratorEmptyStreak)
		if !o.DryRun {
			if _, err := s.Markers.Write(Dormant, why, s.MaxCycle(), "git evolve halt-check", s.Now); err != nil {
				return nil, err
			}
		}
		halt(HaltDormant, why)
	}
	// The budget.
	if !h.Halt && s.Config.Governor != "" {
		burned, detail, err := s.governor(ctx)
		switch {
		case err != nil:
			h.Warnings = append(h.Warnings, fmt.Sprintf("the budget command failed, so the budget is not enforced: %v", err))
		case burned:
			halt(HaltBudget, detail)
		}
	}
	// The breakers: those tripped before and not acknowledged, then those
	// the ledger trips now.
	h.Breakers = append(h.Breakers, Tripped(s.Controls)...)
	known := map[string]bool{}
	for _, b := range h.Breakers {
		known[b.Breaker] = true
	}
	pinnedLeft := false
	if r := s.Roadmap; r != nil {
		pinnedLeft = r.State.Left(r.Items) > 0
	}
	for _, t := range Breakers(s.Events, lastResume, s.Now, o.RunStart, s.Config.Thresholds) {
		if known[t.Breaker] {
			continue
		}
		if t.Breaker == BreakerNoProgress && pinnedLeft {
			// Seed 004: the time breaker is suspended while the pinned
			// roadmap has items left.
			continue
		}
		h.Tripped = append(h.Tripped, t)
		ev := ControlEvent{Kind: KindTrip, Breaker: t.Breaker, Reason: t.Reason, Cycle: s.MaxCycle(), At: s.Now.UTC().Format(time.RFC3339)}
		if !o.DryRun {
			if err := RecordControl(s.Repo, ev); err != nil {
				return nil, err
			}
		}
		h.Breakers = append(h.Breakers, ev)
	}
	if len(h.Breakers) > 0 {
		b := h.Breakers[0]
		halt(HaltBreaker, b.Breaker+": "+b.Reason)
	}
	// A productive cycle that left fewer goals passing than it found: its
	// record's own "before" (the goals measured as the cycle started), or,
	// for a record that has none (git evolve record, an import), the
	// delivered record before it on the line, under the same goals file.
	var last, prev *Event
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := &s.Events[i]
		if last == nil && !e.Time.After(lastResume) && !lastResume.IsZero() {
			break // the operator resumed since: what came before is dealt with
		}
		if !e.Productive() || e.Passing == nil || e.Total == nil {
			continue
		}
		if last == nil {
			last = e
			if e.HasBefore {
				break
			}
			continue
		}
		prev = e
		break
	}
	switch {
	case last == nil:
	case last.HasBefore:
		if last.BeforeTotal == *last.Total && *last.Passing < last.BeforePassing {
			halt(HaltGoalRegression, fmt.Sprintf("cycle %d (%s) left %d of %d goals passing, %d before it", last.Cycle, last.Result, *last.Passing, *last.Total, last.BeforePassing))
		}
	case prev != nil && sameEra(prev, last) && *prev.Total == *last.Total && *last.Passing < *prev.Passing:
		halt(HaltGoalRegression, fmt.Sprintf("cycle %d (%s) left %d of %d goals passing, %d after cycle %d before it", last.Cycle, last.Result, *last.Passing, *last.Total, *prev.Passing, prev.Cycle))
	}
	// Restorative cycles in a row that did not pass the gate (since the
	// operator last resumed).
	if n := restorativeStreak(since(s.Events, lastResume)); n >= RestorativeLimit && !h.Halt {
		halt(HaltRestorativeExhausted, fmt.Sprintf("%d restorative cycles in a row did not get the gate to pass; git evolve resume lets the loop try again", n))
	}
	// The last cycle's gate failed: the next one is restorative.
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := s.Events[i]
		if e.Result == ledger.Quarantined || e.Result == ledger.ContextHandoff {
			continue // no cycle of work
		}
		if e.Failed() {
			h.Restorative = true
			if !h.Halt {
				h.Reason, h.Detail = PriorCycleFail, fmt.Sprintf("cycle %d's gate: %s", e.Cycle, e.Gate)
			}
		}
		break
	}
	return h, nil
}

// sameEra reports whether two records were judged by the same goals file
// (as far as they say: one that names no era is taken to be).
func sameEra(a, b *Event) bool { return a.Era == "" || b.Era == "" || a.Era == b.Era }

func markerDetail(m *Marker) string {
	d := m.Path
	if m.Reason != "" {
		d += ": " + m.Reason
	}
	return d
}

// governor runs the budget command in the working tree: exit 0 leaves
// budget, exit 3 means it is burned (its first line of output says why);
// anything else is an error, and the budget is not enforced.
func (s *State) governor(ctx context.Context) (burned bool, detail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", s.Config.Governor)
	cmd.Dir = s.Top
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	var xe *exec.ExitError
	switch {
	case err == nil:
		return false, "", nil
	case errors.As(err, &xe) && xe.ExitCode() == 3:
		if first == "" {
			first = "the budget command says the budget is burned"
		}
		return true, first, nil
	case ctx.Err() != nil:
		return false, "", fmt.Errorf("%q ran past 30s", s.Config.Governor)
	}
	if first != "" {
		return false, "", fmt.Errorf("%q: %v: %s", s.Config.Governor, err, first)
	}
	return false, "", fmt.Errorf("%q: %v", s.Config.Governor, err)
}

// envAlias reads the variable GIT_EVOLVE_<name>, else the seeds' name for
// it, EVOLVE_<name>: which one was set, and its value ("" when neither).
func envAlias(getenv func(string) string, name string) (string, string) {
	for _, n := range []string{"GIT_EVOLVE_" + name, "EVOLVE_" + name} {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return "GIT_EVOLVE_" + name, ""
}

// RestorativeLimit is how many restorative cycles in a row may fail to
// restore before the loop halts.
const RestorativeLimit = 3

// restorativeStreak counts the trailing restorative cycles whose gate did
// not pass (quarantine records, the ladder's bookkeeping, left out).
func restorativeStreak(events []Event) int {
	n := 0
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Result == "quarantined" {
			continue
		}
		if !e.Restorative || strings.EqualFold(e.Gate, "PASS") {
			break
		}
		n++
	}
	return n
}
