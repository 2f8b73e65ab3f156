// Package loop is what keeps an evolve loop honest between cycles, all of
// it computed from what git and the working tree hold, never taken on an
// agent's word: the stop markers and halt-check, the circuit breakers
// (tripped ones stay tripped until the operator resumes, which the shared
// ledger records), oscillating goals and their quarantine, convergence,
// the hypothesis ledger, the work ladder that picks the next cycle's work,
// and the driver that runs cycles with an agent command: its hold on the
// worktree (on Linux an abstract socket no file operation removes), the
// guard that puts back what an agent's turn changed under the git
// directory, and what it names of the turn's changes outside it.
package loop

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// Event is one cycle of the ledger or the journal, as the loop's rules
// read it, in cycle order.
type Event struct {
	Cycle  int
	ID     string
	Target string
	Result string
	Gate   string
	// Branch is the ref HEAD named when the cycle started ("" for records
	// that do not say: made by hand, imported, older).
	Branch  string
	Time    time.Time
	Aborted bool
	Rung    string
	Item    string
	Era     string
	Journal bool
	// Restorative says the run took the cycle in restorative mode (the
	// gate before it failed).
	Restorative bool
	Passing     *int
	Total       *int
	HasBefore   bool
	// BeforePassing and BeforeTotal are the goals counted as the cycle
	// started (when HasBefore).
	BeforePassing, BeforeTotal int
	// Oscillations and GoalDigest are a quarantined record's: how often
	// the goal flipped, and the digest of the goal's definition then.
	Oscillations int
	GoalDigest   string
	// FailingBefore and FailingAfter are the goals that failed as the cycle
	// started and after it (finished cycles record them).
	FailingBefore, FailingAfter []string
	Record                      ledger.Record
	// Commit is the commit whose note holds the record now (zero for the
	// journal's: for those, the commit the record names); Absent says this
	// clone does not have it.
	Commit gitstore.Hash
	Absent bool
}

// Productive reports whether the cycle delivered work that stayed.
func (e *Event) Productive() bool { return Delivered(e.Result) }

// NonProductive reports whether the cycle counts against a loop: regressed,
// unchanged or aborted (an aborted cycle is recorded unchanged). A
// quarantined record is no cycle of work: it counts neither way.
func (e *Event) NonProductive() bool {
	return e.Result == ledger.Regressed || e.Result == ledger.Unchanged
}

// Failed reports whether the cycle's gate failed (its work was reverted),
// the seeds' "gate has FAIL".
func (e *Event) Failed() bool { return failing(e.Gate) }

// History reads the ledger and the journal as events, in cycle order.
func History(l *store.Ledger) ([]Event, error) {
	list, err := l.List(store.ListOptions{Journal: true})
	if err != nil {
		return nil, err
	}
	return events(list.Entries), nil
}

// RecentHistory reads the last n records of the ledger and the journal,
// and every quarantine record, as events in cycle order: what a one-screen
// answer needs, read from the saved view (store.Ledger.Entries) at the cost
// of those records, not of the ledger.
func RecentHistory(l *store.Ledger, n int) ([]Event, error) {
	last, err := l.Entries(store.ListOptions{Journal: true}, nil, n)
	if err != nil {
		return nil, err
	}
	quarantines, err := l.Quarantines(store.ListOptions{Journal: true})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var all []store.Entry
	for _, en := range append(quarantines.Entries, last.Entries...) {
		key := en.Record.ID + "\x00" + en.Commit.String()
		if en.Record.ID != "" && seen[key] {
			continue
		}
		seen[key] = true
		all = append(all, en)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Record.Cycle < all[j].Record.Cycle })
	return events(all), nil
}

func events(entries []store.Entry) []Event {
	out := make([]Event, 0, len(entries))
	for _, en := range entries {
		r := en.Record
		e := Event{Cycle: r.Cycle, ID: r.ID, Target: r.Target, Result: r.Result, Gate: r.GateText(), Journal: en.Journal,
			Passing: r.GoalsPassing, Total: r.GoalsTotal, Record: r, Commit: en.Commit, Absent: en.Absent}
		if en.Journal {
			e.Commit, _ = gitstore.ParseHash(r.Commit())
		}
		e.Time, _ = time.Parse(time.RFC3339, r.Timestamp)
		_ = json.Unmarshal(r.Extra["aborted"], &e.Aborted)
		_ = json.Unmarshal(r.Extra["rung"], &e.Rung)
		_ = json.Unmarshal(r.Extra["branch"], &e.Branch)
		_ = json.Unmarshal(r.Extra["item"], &e.Item)
		_ = json.Unmarshal(r.Extra["era"], &e.Era)
		_ = json.Unmarshal(r.Extra["failing"], &e.FailingAfter)
		_ = json.Unmarshal(r.Extra["oscillations"], &e.Oscillations)
		_ = json.Unmarshal(r.Extra["goal_digest"], &e.GoalDigest)
		_ = json.Unmarshal(r.Extra["restorative"], &e.Restorative)
		var before struct {
			Failing []string `json:"failing"`
			Passing int      `json:"goals_passing"`
			Total   int      `json:"goals_total"`
		}
		if b := r.Extra["before"]; b != nil && json.Unmarshal(b, &before) == nil {
			e.HasBefore, e.FailingBefore = true, before.Failing
			e.BeforePassing, e.BeforeTotal = before.Passing, before.Total
		}
		out = append(out, e)
	}
	return out
}

// since returns the events after t (all of them for a zero t).
func since(events []Event, t time.Time) []Event {
	if t.IsZero() {
		return events
	}
	for i, e := range events {
		if e.Time.After(t) {
			return events[i:]
		}
	}
	return nil
}

// failing reports whether gate text is a failure: FAIL, FAILED or BLOCKED
// anywhere in it, as the seeds test it (test("FAIL|FAILED|BLOCKED")), or a
// gate that starts with fail in any case.
func failing(gate string) bool {
	return strings.Contains(gate, "FAIL") || strings.Contains(gate, "BLOCKED") || strings.HasPrefix(strings.ToUpper(gate), "FAIL")
}
