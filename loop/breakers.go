package loop

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/ledger"
)

// The breakers.
const (
	BreakerNoProgress  = "no-progress"  // no productive cycle for a while
	BreakerFailures    = "failures"     // cycles in a row that delivered nothing
	BreakerSameFailure = "same-failure" // one gate failure, again and again
)

// Thresholds are the breakers' limits. Each is a git config value
// (evolve.breaker.<name>), else the seeds' default.
type Thresholds struct {
	NoProgress   time.Duration // evolve.breaker.noProgressMinutes, 60
	Failures     int           // evolve.breaker.failures: non-productive cycles in a row, 5
	SameFailure  int           // evolve.breaker.sameFailure: one gate failure in a row, 3
	Dormancy     int           // evolve.breaker.dormancy: idle and generator-empty streaks, 2
	Oscillations int           // evolve.breaker.oscillations: flips of a goal that quarantine it, 3
}

// DefaultThresholds are the seeds' limits.
func DefaultThresholds() Thresholds {
	return Thresholds{NoProgress: 60 * time.Minute, Failures: 5, SameFailure: 3, Dormancy: 2, Oscillations: 3}
}

// thresholdsFrom reads the thresholds from the evolve section of the git
// config (keys lower case, as ConfigSection gives them).
func thresholdsFrom(cfg map[string][]string) (Thresholds, error) {
	t := DefaultThresholds()
	for _, k := range []struct {
		key string
		set func(int)
	}{
		{"evolve.breaker.noprogressminutes", func(n int) { t.NoProgress = time.Duration(n) * time.Minute }},
		{"evolve.breaker.failures", func(n int) { t.Failures = n }},
		{"evolve.breaker.samefailure", func(n int) { t.SameFailure = n }},
		{"evolve.breaker.dormancy", func(n int) { t.Dormancy = n }},
		{"evolve.breaker.oscillations", func(n int) { t.Oscillations = n }},
	} {
		vals := cfg[k.key]
		if len(vals) == 0 {
			continue
		}
		n, err := strconv.Atoi(vals[len(vals)-1])
		if err != nil || n < 1 {
			return t, &RunError{Msg: fmt.Sprintf("git config %s = %q: must be a whole number, 1 or more", k.key, vals[len(vals)-1]), Usage: true,
				Hint: "set it to a number, or remove it to use the default: git config --unset " + k.key}
		}
		k.set(n)
	}
	return t, nil
}

// Trip is a breaker found tripping, and why.
type Trip struct {
	Breaker string `json:"breaker"`
	Reason  string `json:"reason"`
}

// Breakers evaluates the breakers over the cycles since the operator last
// resumed. now is the time to measure "no progress" against, and runStart
// the start of this invocation of the loop run (zero outside one; a run
// resumed counts from its resumption): outside a run, the time
// without progress is the span the ledger shows, from the last productive
// cycle to the last cycle.
func Breakers(events []Event, lastResume, now, runStart time.Time, t Thresholds) []Trip {
	recent := work(since(events, lastResume))
	var trips []Trip
	// No progress.
	if len(recent) > 0 || !runStart.IsZero() {
		var from time.Time
		for _, e := range recent {
			if e.Productive() {
				from = e.Time
			}
		}
		var until time.Time
		if len(recent) > 0 {
			until = recent[len(recent)-1].Time
		}
		if !runStart.IsZero() {
			until = now
			if runStart.After(from) {
				from = runStart
			}
			if lastResume.After(from) {
				from = lastResume
			}
		}
		if from.IsZero() && len(recent) > 0 {
			from = recent[0].Time
		}
		if d := until.Sub(from); !from.IsZero() && d >= t.NoProgress {
			trips = append(trips, Trip{BreakerNoProgress, fmt.Sprintf("no productive cycle for %s (the limit is %s)", d.Round(time.Minute), t.NoProgress)})
		}
	}
	// Cycles in a row that delivered nothing.
	n := 0
	for i := len(recent) - 1; i >= 0 && recent[i].NonProductive(); i-- {
		n++
	}
	if n >= t.Failures {
		trips = append(trips, Trip{BreakerFailures, fmt.Sprintf("%d cycles in a row delivered nothing (regressed, unchanged or aborted; the limit is %d)", n, t.Failures)})
	}
	// One gate failure, again and again.
	var gated []Event
	for _, e := range recent {
		if e.Gate != "" {
			gated = append(gated, e)
		}
	}
	if k := len(gated); k >= t.SameFailure {
		last := gated[k-t.SameFailure:]
		same := failing(last[0].Gate)
		for _, e := range last {
			same = same && e.Gate == last[0].Gate
		}
		if same {
			trips = append(trips, Trip{BreakerSameFailure, fmt.Sprintf("the gate failed the same way %d times in a row: %s", t.SameFailure, last[0].Gate)})
		}
	}
	return trips
}

// work drops the records that are no cycle of work (quarantined ones, and
// context handoffs: the agent's context ran out, its turn told nothing).
func work(events []Event) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Result != ledger.Quarantined && e.Result != ledger.ContextHandoff {
			out = append(out, e)
		}
	}
	return out
}

// Streaks are the trailing runs of idle cycles (unchanged, not aborted)
// and of cycles whose work a generator rung chose and that found nothing.
func Streaks(events []Event, lastResume time.Time) (idle, generatorEmpty int) {
	recent := work(since(events, lastResume))
	for i := len(recent) - 1; i >= 0 && recent[i].Result == ledger.Unchanged && !recent[i].Aborted; i-- {
		idle++
	}
	for i := len(recent) - 1; i >= 0 && recent[i].Result == ledger.Unchanged && isGenerator(recent[i].Rung); i-- {
		generatorEmpty++
	}
	return idle, generatorEmpty
}

// Oscillations counts, for each goal, how often it passed after an
// improved cycle and failed again as the next cycle started (the goal
// flips, whatever the cycles do), since the goal's last quarantine: the
// flips before it were counted by that one.
func Oscillations(events []Event) map[string]int {
	var finished []Event
	for _, e := range events {
		if e.HasBefore && !e.Journal && e.Result != ledger.Quarantined {
			finished = append(finished, e)
		}
	}
	lastQuarantine := map[string]time.Time{}
	for _, e := range events {
		if e.Result == ledger.Quarantined {
			lastQuarantine[e.Target] = e.Time
		}
	}
	out := map[string]int{}
	for i := 0; i+1 < len(finished); i++ {
		a, b := finished[i], finished[i+1]
		if a.Result != ledger.Improved {
			continue
		}
		for _, g := range b.FailingBefore {
			if q, ok := lastQuarantine[g]; ok && !a.Time.After(q) {
				continue
			}
			if !slices.Contains(a.FailingAfter, g) {
				out[g]++ // passed after a, failed as b started
			}
		}
	}
	return out
}

// Quarantined are the goals held in quarantine: those whose last
// quarantined record was written for the goal's definition as it is now
// (digests has each goal's GoalDigest). A record without a digest holds
// while the goals file's era is the one it names.
func Quarantined(events []Event, digests map[string]string, era string) []string {
	last := map[string]Event{}
	for _, e := range events {
		if e.Result == ledger.Quarantined {
			last[e.Target] = e
		}
	}
	var out []string
	for goal, e := range last {
		d, ok := digests[goal]
		if !ok {
			continue // no such goal any more
		}
		if e.GoalDigest != "" && e.GoalDigest == d || e.GoalDigest == "" && e.Era != "" && e.Era == era {
			out = append(out, goal)
		}
	}
	sort.Strings(out)
	return out
}

func isGenerator(rung string) bool { return strings.HasPrefix(rung, "generator") }
