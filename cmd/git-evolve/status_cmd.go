package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/fitness"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/loop"
)

type statusCmd struct {
	JSON bool `name:"json" help:"Print {open_cycle, halt: {markers, breakers, quarantined}, last_cycles, failing_goals, measured_by, queue_next, ledger: {remote, fetched, not_pushed, not_merged}}."`
}

func (statusCmd) Help() string {
	return `One screen on where the loop stands: the open cycle (its number, target, age
and its work so far), the halt state (the markers that hold, with their
reasons; the breakers tripped and not acknowledged; the quarantined goals),
the last five cycles of the history HEAD reaches (whatever branch they were
made on), the goals failing as last measured there (by the newest of the last
of those cycles and the latest fitness snapshot of a commit HEAD reaches), the
work the queue holds next, and the ledger against its remote-tracking copy
(ledger commits not pushed yet, and not merged yet from the remote as last
fetched: git evolve sync does both).

It reads what exists and measures nothing: no check runs, no network is
used, nothing is written.`
}

// statusReport is git evolve status --json.
type statusReport struct {
	Open    *statusOpen   `json:"open_cycle"`
	Halt    statusHalt    `json:"halt"`
	Last    []statusCycle `json:"last_cycles"`
	Failing []string      `json:"failing_goals"`
	// MeasuredBy is the measurement failing_goals is read from: the
	// newest of the last cycle HEAD reaches and the latest fitness
	// snapshot of a commit HEAD reaches (none: never measured).
	MeasuredBy *statusMeasured `json:"measured_by"`
	Queue      *statusQueue    `json:"queue_next"`
	Ledger     statusLedger    `json:"ledger"`
	Warnings   []string        `json:"warnings,omitempty"`
	breakers   []loop.ControlEvent
	// elsewhere says where the cycles are when HEAD reaches none: "notes"
	// (the ledger's, on other branches or on commits a squash or a rebase
	// left behind), "journal" (this clone's journal alone), or "".
	elsewhere string
}

type statusOpen struct {
	Cycle       int     `json:"cycle"`
	ID          string  `json:"id"`
	Target      string  `json:"target"`
	Start       string  `json:"start"`
	StartedAt   string  `json:"started_at"`
	AgeSeconds  float64 `json:"age_s"`
	Files       int     `json:"files"`
	Substantive int     `json:"substantive"`
	Insertions  int     `json:"insertions"`
	Deletions   int     `json:"deletions"`
	Finishing   bool    `json:"finishing"`
}

type statusHalt struct {
	Markers     []statusMarker  `json:"markers"`
	Breakers    []statusBreaker `json:"breakers"`
	Quarantined []string        `json:"quarantined"`
}

type statusMarker struct {
	Marker  string  `json:"marker"`
	Path    string  `json:"path"`
	Reason  string  `json:"reason,omitempty"`
	AgeDays float64 `json:"age_days"`
}

type statusBreaker struct {
	Breaker string `json:"breaker"`
	Reason  string `json:"reason"`
	At      string `json:"at,omitempty"`
}

type statusCycle struct {
	Cycle     int    `json:"cycle"`
	Result    string `json:"result"`
	Target    string `json:"target"`
	Commit    string `json:"commit,omitempty"`
	Timestamp string `json:"timestamp"`
	Gate      string `json:"gate,omitempty"`
	Aborted   bool   `json:"aborted,omitempty"`
}

type statusMeasured struct {
	Kind      string `json:"kind"` // "cycle" or "snapshot"
	Cycle     int    `json:"cycle,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Timestamp string `json:"timestamp"`
}

type statusQueue struct {
	Rung  string `json:"rung"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

type statusLedger struct {
	Remote    string `json:"remote,omitempty"`
	Fetched   bool   `json:"fetched"`
	NotPushed int    `json:"not_pushed"`
	NotMerged int    `json:"not_merged"`
	// Refused: the remote's copy is not read, as it would bring a breach
	// (its notes commits are among NotMerged, and sync keeps them out).
	Refused bool `json:"refused,omitempty"`
	// Unread: the remote's copy is not read, as a partial clone's filter
	// left out some of its notes (refused too).
	Unread bool `json:"unread,omitempty"`
}

func (c *statusCmd) Run(e *env) error {
	l, err := e.Cycles()
	if err != nil {
		return err
	}
	warnMissingHooks(e, l.Repo(), nil)
	// The last cycles and the quarantines, not the whole history: what
	// status shows costs what it is (docs/benchmarks.md).
	s, err := loop.Load(l, loop.LoadOptions{Now: e.now(), Getenv: e.getenv, Recent: 50})
	if err != nil {
		return err
	}
	if len(s.Events) < 5 && len(s.All) >= 50 {
		// A ledger busy on other branches: the last cycles HEAD reaches
		// are further back.
		if s, err = loop.Load(l, loop.LoadOptions{Now: e.now(), Getenv: e.getenv}); err != nil {
			return err
		}
	}
	r := &statusReport{Halt: statusHalt{Markers: []statusMarker{}, Breakers: []statusBreaker{}, Quarantined: nonNil(s.Quarantined())},
		Last: []statusCycle{}, Failing: []string{}}
	// The open cycle and its work so far.
	switch open, err := l.Current(); {
	case errors.Is(err, cycle.ErrNoOpenCycle):
	case err != nil:
		return err
	default:
		o := &statusOpen{Cycle: open.Cycle, ID: open.ID, Target: open.Target, Start: open.Start, StartedAt: open.StartedAt, Finishing: open.Finish != nil}
		if t, err := time.Parse(time.RFC3339, open.StartedAt); err == nil {
			o.AgeSeconds = e.now().Sub(t).Round(time.Second).Seconds()
		}
		if d, err := openDelta(l, open); err == nil {
			o.Files, o.Substantive, o.Insertions, o.Deletions = len(d.changed), len(d.substantive), d.ins, d.del
		} else {
			r.Warnings = append(r.Warnings, "the open cycle's work could not be read: "+err.Error())
		}
		r.Open = o
	}
	// The halt state, as it stands (no marker removed, no breaker
	// recorded, no budget command run).
	for _, name := range []string{loop.Kill, loop.Stop, loop.Dormant} {
		m, ok, err := s.Markers.Read(name, e.now())
		if err != nil {
			return err
		}
		if ok {
			r.Halt.Markers = append(r.Halt.Markers, statusMarker{Marker: m.Name, Path: loop.TopPath(s.Top, m.Path), Reason: m.Reason, AgeDays: m.AgeDays})
		}
	}
	r.breakers = loop.Tripped(s.Controls)
	for _, b := range r.breakers {
		r.Halt.Breakers = append(r.Halt.Breakers, statusBreaker{Breaker: b.Breaker, Reason: b.Reason, At: b.At})
	}
	// The last five cycles, and the goals failing as the last one saw them.
	events := s.Events
	for _, ev := range events[max(0, len(events)-5):] {
		sc := statusCycle{Cycle: ev.Cycle, Result: ev.Result, Target: ev.Target, Timestamp: ev.Record.Timestamp, Gate: ev.Gate, Aborted: ev.Aborted}
		switch h := ev.Record.Commit(); {
		case !ev.Journal && !ev.Commit.IsZero():
			sc.Commit = ev.Commit.String() // where the record is now (after a rebase, the rebased commit)
		case len(h) >= 7:
			sc.Commit = h
		}
		r.Last = append(r.Last, sc)
	}
	if len(r.Last) == 0 {
		for _, ev := range s.All {
			switch {
			case ev.Result == ledger.Quarantined:
			case !ev.Journal:
				r.elsewhere = "notes"
			case r.elsewhere == "":
				r.elsewhere = "journal"
			}
		}
	}
	if failing, ok := s.LastFailing(); ok {
		r.Failing = nonNil(failing)
		for i := len(events) - 1; i >= 0; i-- {
			if ev := events[i]; ev.HasBefore {
				r.MeasuredBy = &statusMeasured{Kind: "cycle", Cycle: ev.Cycle, Timestamp: ev.Record.Timestamp}
				if !ev.Journal && !ev.Commit.IsZero() {
					r.MeasuredBy.Commit = ev.Commit.String()
				}
				break
			}
		}
	}
	if snap, err := latestSnapshot(s.Repo); err != nil {
		r.Warnings = append(r.Warnings, "the fitness snapshots could not be read: "+err.Error())
	} else if snap != nil && (r.MeasuredBy == nil || snapshotNewer(s.Repo, snap, r.MeasuredBy)) {
		r.Failing = []string{}
		for _, g := range snap.Goals {
			if goals.Failing(g.Result) {
				r.Failing = append(r.Failing, g.GoalID)
			}
		}
		r.MeasuredBy = &statusMeasured{Kind: "snapshot", Commit: snap.Commit.String(), Timestamp: snap.Timestamp}
	}
	// The queue's next item: the pinned roadmap's, else the harvested
	// queue's first.
	if rm := s.Roadmap; rm != nil {
		if it, _, _, ok := rm.State.Next(rm.Items); ok {
			r.Queue = &statusQueue{Rung: loop.RungPinned, ID: it.ID, Title: it.Line}
		}
	}
	if r.Queue == nil {
		if h := s.Harvested(); len(h) > 0 {
			r.Queue = &statusQueue{Rung: loop.RungHarvested, ID: h[0].ID, Title: h[0].Title}
		}
	}
	// The ledger against the remote's copy as last fetched.
	upstream, _ := s.Repo.UpstreamRemoteOf(s.Branch) // the branch Load read
	if upstream == "" {
		upstream = "origin" // as pickRemote takes it
	}
	if remote, err := pickRemote(s.Repo, upstream); err == nil {
		r.Ledger.Remote = remote
		tracking := "refs/notes/remotes/" + remote + "/evolve"
		if _, ok, err := s.Repo.RefHash(tracking); err == nil && ok {
			r.Ledger.Fetched = true
			if _, ok, err := s.Repo.RefHash(store.NotesRef); err == nil && ok {
				if ahead, behind, err := s.Repo.AheadBehind(store.NotesRef, tracking); err == nil {
					r.Ledger.NotPushed, r.Ledger.NotMerged = ahead, behind
				}
			}
			if _, err := l.Sources(); err != nil { // (the copies checked)
				return err
			}
			for _, refused := range l.Refused() {
				if refused.Ref == tracking {
					r.Ledger.Refused, r.Ledger.Unread = true, r.Ledger.Unread || refused.Unread
				}
			}
		} else if _, ok, err := s.Repo.RefHash(store.NotesRef); err == nil && ok {
			r.Ledger.NotPushed = -1 // never fetched: unknown
		}
	}
	if c.JSON {
		_, err := fmt.Fprintf(e.stdout, "%s\n", mustJSON(r))
		return err
	}
	return r.print(e)
}

func (r *statusReport) print(e *env) error {
	w := bufio.NewWriter(e.stdout)
	if o := r.Open; o != nil {
		state := "open"
		if o.Finishing {
			state = "finishing (git evolve cycle finish completes it)"
		}
		fmt.Fprintf(w, "cycle %d %s: target %s, started %s ago on %s; %d file(s) changed, %d substantive (+%d -%d)\n",
			o.Cycle, state, termSafe(o.Target), time.Duration(o.AgeSeconds*float64(time.Second)), short7(o.Start), o.Files, o.Substantive, o.Insertions, o.Deletions)
	} else {
		fmt.Fprintf(w, "no cycle is open in this worktree\n")
	}
	switch {
	case len(r.Halt.Markers) == 0 && len(r.breakers) == 0:
		fmt.Fprintf(w, "halt: none\n")
	default:
		for _, m := range r.Halt.Markers {
			line := "halt: " + m.Marker + " (" + termSafe(m.Path)
			if m.Reason != "" {
				line += ": " + termSafe(m.Reason)
			}
			fmt.Fprintf(w, "%s; %.1f day(s) old)\n", line, m.AgeDays)
		}
		for _, b := range r.breakers {
			fmt.Fprintf(w, "halt: breaker %s tripped: %s (git evolve resume acknowledges it)\n", termSafe(b.Breaker), termSafe(b.Reason))
		}
	}
	if len(r.Halt.Quarantined) > 0 {
		fmt.Fprintf(w, "quarantined: %s\n", termSafe(strings.Join(r.Halt.Quarantined, ", ")))
	}
	switch {
	case len(r.Last) == 0 && r.elsewhere == "notes":
		fmt.Fprintf(w, "no cycles yet on the history HEAD reaches; the ledger has others (git evolve log lists them; git evolve relink attaches those a squash or a rebase carried here)\n")
	case len(r.Last) == 0 && r.elsewhere == "journal":
		fmt.Fprintf(w, "no cycles yet on the history HEAD reaches; this clone's journal has others (git evolve log --all lists them)\n")
	case len(r.Last) == 0:
		fmt.Fprintf(w, "no cycles yet\n")
	default:
		fmt.Fprintf(w, "last cycles:\n")
		for _, c := range r.Last {
			result := c.Result
			if c.Aborted {
				result = "aborted"
			}
			fmt.Fprintf(w, "  %-5d %-11s %-20s %-7s %s\n", c.Cycle, termSafe(result), termSafe(c.Target), short7(c.Commit), age(c.Timestamp, e.now()))
		}
	}
	by := ""
	switch m := r.MeasuredBy; {
	case m == nil:
		by = " (never measured here)"
	case m.Kind == "cycle":
		by = fmt.Sprintf(" (as cycle %d measured them, %s)", m.Cycle, age(m.Timestamp, e.now()))
	default:
		by = fmt.Sprintf(" (as measured on %s, %s)", short7(m.Commit), age(m.Timestamp, e.now()))
	}
	if len(r.Failing) > 0 {
		fmt.Fprintf(w, "failing goals: %s%s\n", termSafe(strings.Join(r.Failing, ", ")), by)
	} else {
		fmt.Fprintf(w, "failing goals: none%s\n", by)
	}
	if q := r.Queue; q != nil {
		fmt.Fprintf(w, "next in the queue: %s (%s): %s\n", termSafe(q.ID), q.Rung, termSafe(q.Title))
	}
	switch l := r.Ledger; {
	case l.Remote == "":
		fmt.Fprintf(w, "ledger: no remote\n")
	case !l.Fetched:
		fmt.Fprintf(w, "ledger: %s's copy never fetched (git evolve sync fetches, merges and pushes it)\n", l.Remote)
	case l.Unread:
		fmt.Fprintf(w, "ledger: %d commit(s) not pushed to %s; %s's is not read: it was fetched without its notes' contents (git evolve sync %s fetches them whole)\n", l.NotPushed, l.Remote, l.Remote, l.Remote)
	case l.Refused:
		fmt.Fprintf(w, "ledger: %d commit(s) not pushed to %s; %s's is not read: it brings a breach (the notice says which)\n", l.NotPushed, l.Remote, l.Remote)
	case l.NotPushed == 0 && l.NotMerged == 0:
		fmt.Fprintf(w, "ledger: up to date with %s (as last fetched)\n", l.Remote)
	default:
		fmt.Fprintf(w, "ledger: %d commit(s) not pushed to %s, %d not merged from it (as last fetched; git evolve sync does both)\n", l.NotPushed, l.Remote, l.NotMerged)
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s\n", termSafe(m))
	}
	return w.Flush()
}

func short7(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// latestSnapshot is the latest fitness snapshot (or baseline) measured on
// a commit HEAD reaches with a clean working tree: the one on the commit
// nearest HEAD; nil when there is none.
func latestSnapshot(repo *gitstore.Repo) (*fitness.Found, error) {
	all, err := fitness.All(repo)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var commits []gitstore.Hash
	for _, f := range all {
		commits = append(commits, f.Commit)
	}
	reach, err := repo.Reachable("HEAD", commits)
	if err != nil {
		return nil, err
	}
	// The one on the commit nearest HEAD; of those on one commit, the last
	// measured (All is in the order they were measured).
	var best *fitness.Found
	at := 0
	for i := range all {
		f := &all[i]
		if n, ok := reach[f.Commit]; ok && !f.Dirty && (best == nil || n <= at) {
			best, at = f, n
		}
	}
	return best, nil
}

// snapshotNewer reports whether the snapshot is a later measurement than
// the cycle's: by history first (one measured on a commit that descends
// from the cycle's is later, one on an ancestor of it earlier), else, on
// the same commit or on two lines of history, by time (a tie to the
// cycle: a run keeps a snapshot of what its cycle measured).
func snapshotNewer(repo *gitstore.Repo, snap *fitness.Found, c *statusMeasured) bool {
	if cc, err := gitstore.ParseHash(c.Commit); err == nil && cc != snap.Commit {
		if in, err := repo.IsAncestor(cc, snap.Commit); err == nil && in {
			return true
		}
		if in, err := repo.IsAncestor(snap.Commit, cc); err == nil && in {
			return false
		}
	}
	ts, errS := time.Parse(time.RFC3339, snap.Timestamp)
	tc, errC := time.Parse(time.RFC3339, c.Timestamp)
	return errS == nil && (errC != nil || ts.After(tc))
}
