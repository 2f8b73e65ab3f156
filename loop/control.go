package loop

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// ControlRef holds the loop's control events, shared with the ledger by
// sync: breakers that tripped, and the operator's resumes that acknowledge
// them. A JSON line each, in the note on the commit HEAD was on.
const ControlRef = "refs/notes/evolve-control"

// The kinds of control event.
const (
	KindTrip   = "trip"
	KindResume = "resume"
)

// ControlEvent is one control event.
type ControlEvent struct {
	Kind    string   `json:"kind"`
	Breaker string   `json:"breaker,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Cycle   int      `json:"cycle,omitempty"`
	At      string   `json:"at"`
	By      string   `json:"by,omitempty"`
	Host    string   `json:"host,omitempty"`
	Cleared []string `json:"cleared,omitempty"`
}

// Time is when the event happened.
func (e ControlEvent) Time() time.Time {
	t, _ := time.Parse(time.RFC3339, e.At)
	return t
}

// Controls reads every control event, oldest first.
func Controls(repo *gitstore.Repo) ([]ControlEvent, error) {
	snap, err := repo.ReadNotes(ControlRef)
	if err != nil {
		return nil, err
	}
	var out []ControlEvent
	err = snap.ForEachLine(func(_ gitstore.Hash, l []byte) error {
		var e ControlEvent
		if json.Unmarshal(l, &e) == nil && e.Kind != "" {
			out = append(out, e)
		}
		return nil
	})
	// By time; in one second (the clock's resolution) a trip comes before
	// the resume that acknowledges it.
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i].Time(), out[j].Time()
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return out[i].Kind == KindTrip && out[j].Kind != KindTrip
	})
	return out, err
}

// RecordControl adds a control event in the note on HEAD.
func RecordControl(repo *gitstore.Repo, e ControlEvent) error {
	head, err := repo.ResolveCommits("HEAD")
	if err != nil {
		return fmt.Errorf("recording the %s: %w", e.Kind, err)
	}
	if e.By == "" {
		if _, committer, err := repo.Identity(); err == nil {
			e.By = committer.Name + " <" + committer.Email + ">"
		}
	}
	if e.Host == "" {
		e.Host = store.Host()
	}
	line, _ := json.Marshal(e)
	what := e.Kind
	if e.Breaker != "" {
		what += " " + e.Breaker
	}
	return repo.AddNoteLines(ControlRef, head[0], [][]byte{line}, "git evolve: "+what+"\n")
}

// Tripped returns the breakers tripped since the last resume, by name (the
// first trip of each).
func Tripped(events []ControlEvent) []ControlEvent {
	var out []ControlEvent
	seen := map[string]bool{}
	for _, e := range events {
		switch e.Kind {
		case KindResume:
			out, seen = nil, map[string]bool{}
		case KindTrip:
			if !seen[e.Breaker] {
				seen[e.Breaker] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// LastResume is when the operator last resumed (zero when never).
func LastResume(events []ControlEvent) time.Time {
	var t time.Time
	for _, e := range events {
		if e.Kind == KindResume {
			t = e.Time()
		}
	}
	return t
}
