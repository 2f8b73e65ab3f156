package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/fitness"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/queue"
)

// Claimant is who claims queue items for cycles on this machine.
func Claimant() string { return "evolve:" + store.Host() }

// Take claims the work's queue item, when it has one, before a cycle
// starts on it: two loops never take the same item. Work from a pinned
// roadmap is recorded in the roadmap's state.
func (s *State) Take(w *Work) error {
	if r := s.Roadmap; r != nil {
		// The roadmap's state names the roadmap: settling the cycle, and
		// the next run, find it there. Escalations the ladder made (a chain
		// of blockers too deep) are written for the operator.
		if w.Pinned != nil {
			r.State.Take(w.Pinned.ID, w.Chain)
		}
		fresh := r.State.Fresh()
		if w.Pinned != nil || len(fresh) > 0 || r.State.Changed() {
			if err := r.State.Save(r.StatePath); err != nil {
				return err
			}
			if err := queue.AppendEscalated(filepath.Join(s.Top, filepath.FromSlash(queue.EscalatedPath)), fresh, s.MaxCycle()+1, s.Now.UTC().Format(time.RFC3339)); err != nil {
				return err
			}
		}
		if w.Pinned != nil {
			return nil
		}
	}
	if w.Item == nil {
		return nil
	}
	it, err := s.Queue.Claim(w.Item.ID, Claimant(), s.Config.Lease)
	if err != nil {
		return err
	}
	w.Item = &it
	return nil
}

// CycleFields are the fields the record of a cycle on w carries besides
// the cycle's own: the queue's (QueueFields), restorative when the cycle
// fixes what is red, and rung_reason: why the ladder chose the work (its
// Why, naming the rule that chose it).
func (s *State) CycleFields(w *Work) map[string]json.RawMessage {
	f := s.QueueFields(w)
	if f == nil {
		f = map[string]json.RawMessage{}
	}
	if w.Restorative {
		f["restorative"] = json.RawMessage("true")
	}
	if w.Why != "" {
		f["rung_reason"], _ = json.Marshal(w.Why)
	}
	return f
}

// QueueFields are the pinned queue's fields for the record of a cycle on
// w (seed 004's --queue-item, --queue-index, --queue-total, and, for a
// blocker, --unblock-target and --unblock-depth); nil for other work.
func (s *State) QueueFields(w *Work) map[string]json.RawMessage {
	r := s.Roadmap
	if r == nil || w.Pinned == nil {
		return nil
	}
	item := w.Pinned.ID
	if len(w.Chain) > 0 {
		item = w.Chain[0]
	}
	f := map[string]json.RawMessage{}
	f["queue_item"], _ = json.Marshal(item)
	f["queue_index"], _ = json.Marshal(r.State.Index)
	f["queue_total"], _ = json.Marshal(len(r.Items))
	if w.Unblocks != "" {
		f["unblock_target"], _ = json.Marshal(w.Pinned.ID)
		f["unblock_depth"], _ = json.Marshal(max(0, len(w.Chain)-2))
	}
	return f
}

// Untake gives back the claim Take made when the cycle did not start.
func (s *State) Untake(w *Work) error {
	if w.Item == nil {
		return nil
	}
	_, err := s.Queue.Release(w.Item.ID, false)
	return err
}

// Settlement is what settling a cycle's work did.
type Settlement struct {
	Item   string `json:"item,omitempty"`
	Action string `json:"action,omitempty"` // consumed, released, released-failed, kept, gone, done, failed, escalated
	// Blocker is what the failed cycle's output said blocks its roadmap
	// item (queue.FindBlocker), worked first from now on.
	Blocker string `json:"blocker,omitempty"`
}

// Delivered reports whether a cycle that ended with result delivered work
// that stayed: improved or harvested. (A regressed cycle's commit is
// reverted; ledger.Productive counts it, as it has a note, but it delivered
// nothing.)
func Delivered(result string) bool {
	return result == ledger.Improved || result == ledger.Harvested
}

// Settle brings the queue item or the roadmap item a finished cycle took
// up to date with its result: an improved (or harvested) cycle consumes
// its queue item and completes its roadmap item; a regressed or aborted
// one releases the queue item with failed_at (unless another loop has
// claimed it since: then it is left to them) and counts a failure on the
// roadmap item (escalated after 3); an unchanged one releases the queue
// item as it was, and counts a failure on the roadmap item (nothing was
// delivered). A roadmap item's failure is read for a blocker (output: what
// the agent printed and the gate's failures, untrusted: see
// queue.FindBlocker); one it names is worked before the item, as a
// declared blocker is.
func Settle(repo *gitstore.Repo, top string, c *cycle.OpenCycle, result string, aborted bool, output string, now func() time.Time) (*Settlement, error) {
	if c.Item == "" {
		return &Settlement{}, nil
	}
	st := &Settlement{Item: c.Item}
	delivered := Delivered(result) && !aborted
	failed := result == ledger.Regressed || aborted
	switch c.Rung {
	case RungPinned:
		r, err := loadRoadmap(top, "", now())
		if err != nil || r == nil {
			return st, err
		}
		switch {
		case delivered:
			r.State.Done(r.Items, c.Item)
			st.Action = "done"
		case r.State.Failed(r.Items, c.Item):
			st.Action = "escalated"
		default:
			st.Action = "failed"
			known := func(id string) bool {
				return slices.ContainsFunc(r.Items, func(it queue.RoadmapItem) bool { return it.ID == id })
			}
			if b := queue.FindBlocker(output, c.Item, known); b != "" && r.State.FoundBlocker(c.Item, b) {
				st.Blocker = b
			}
		}
		if err := r.State.Save(r.StatePath); err != nil {
			return st, err
		}
		return st, queue.AppendEscalated(filepath.Join(top, filepath.FromSlash(queue.EscalatedPath)), r.State.Fresh(), c.Cycle, now().UTC().Format(time.RFC3339))
	default:
		q := OpenQueue(repo, top, now)
		var err error
		switch {
		case delivered:
			_, err = q.Consume(c.Item, Claimant())
			st.Action = "consumed"
		case failed:
			_, err = q.ReleaseFor(c.Item, Claimant(), true)
			st.Action = "released-failed"
		default:
			_, err = q.ReleaseFor(c.Item, Claimant(), false)
			st.Action = "released"
		}
		if errors.Is(err, queue.ErrNotFound) {
			return &Settlement{Item: c.Item, Action: "gone"}, nil // the item left the queue meanwhile
		}
		var rf *queue.Refusal
		if errors.As(err, &rf) {
			return &Settlement{Item: c.Item, Action: "kept"}, nil // another loop's now, or consumed: theirs to settle
		}
		return st, err
	}
}

// Reconcile settles the queue items still claimed for a cycle that has
// finished (a finish that died before it settled its item): the record
// names the item, and says how the cycle ended.
func (s *State) Reconcile() ([]Settlement, error) {
	open, _ := s.Ledger.Current()
	last := map[string]Event{}
	for _, e := range s.All {
		if e.Item != "" && e.Rung != RungPinned {
			last[e.Item] = e
		}
	}
	var out []Settlement
	for _, it := range s.Items {
		if it.ClaimStatus != queue.InProgress || it.ClaimedBy != Claimant() {
			continue
		}
		e, ok := last[it.ID]
		if !ok || open != nil && open.Item == it.ID {
			continue
		}
		claimed, err := time.Parse(time.RFC3339, it.ClaimedAt)
		if err != nil || e.Time.Before(claimed.Add(-time.Second)) {
			continue // the record is of an earlier claim
		}
		st, err := Settle(s.Repo, s.Top, &cycle.OpenCycle{Item: it.ID, Rung: e.Rung}, e.Result, e.Aborted, "", func() time.Time { return s.Now })
		if err != nil {
			return out, err
		}
		out = append(out, *st)
	}
	if len(out) > 0 {
		var err error
		s.Items, s.Malformed, err = s.Queue.List()
		return out, err
	}
	return out, nil
}

// WriteQuarantine writes a quarantined record for an oscillating goal (a
// note on HEAD, shared like the cycles), so that work selection skips it
// until its definition changes.
func (s *State) WriteQuarantine(q Quarantine) (*ledger.Record, error) {
	rec := ledger.Record{Target: q.Goal, Result: ledger.Quarantined, Extra: map[string]json.RawMessage{
		"oscillations": ledger.Value(q.Oscillations), "goal_digest": ledger.Value(q.Digest)}}
	if e := s.era(); e != "" {
		rec.Extra["era"] = ledger.Value(e)
	}
	res, err := s.Ledger.Record(rec)
	if err != nil {
		return nil, fmt.Errorf("quarantining goal %s: %w", q.Goal, err)
	}
	r := res.Entry.Record
	e := Event{Cycle: r.Cycle, ID: r.ID, Target: r.Target, Result: r.Result, Era: s.era(), GoalDigest: q.Digest, Oscillations: q.Oscillations, Record: r}
	e.Time, _ = time.Parse(time.RFC3339, r.Timestamp)
	s.All = append(s.All, e)
	s.Events = append(s.Events, e)
	return &r, nil
}

// SaveMeasured stores the goals a finish measured in git (fitness
// snapshots), on the commit whose tree they measured: the delivered
// commit, or the saved work of a regressed cycle.
func SaveMeasured(repo *gitstore.Repo, res *cycle.FinishResult) error {
	var on gitstore.Hash
	var s *goals.Snapshot
	switch {
	case res.Verdict != nil && res.Result == ledger.Regressed:
		on, s = res.Saved, res.Verdict.After
	case res.Verdict != nil:
		on, s = res.Commit, res.Verdict.After
	case res.After != nil:
		on, s = res.Commit, res.After
	default:
		return nil
	}
	snap := *s
	snap.GitSHA = on.String()
	return fitness.Save(repo, on, fitness.KindSnapshot, &snap)
}

// FailureText is what a failed cycle said, for Settle to read for a
// blocker: the end of its agent's output (transcript), then each gate
// failure's reason and the end of its output. Bounded to the end that
// queue.FindBlocker reads.
func FailureText(transcript string, failures []gate.Failure) string {
	var b strings.Builder
	b.WriteString(transcript)
	for _, f := range failures {
		b.WriteString("\n" + f.Reason + "\n" + f.Excerpt)
	}
	out := b.String()
	if len(out) > queue.MaxBlockerScan {
		out = out[len(out)-queue.MaxBlockerScan:]
	}
	return out
}
