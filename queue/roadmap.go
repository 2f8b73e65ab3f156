package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// RoadmapStatePath is where a pinned roadmap's progress is kept, relative
// to the top of the working tree (the seeds' file).
const RoadmapStatePath = ".agents/evolve/pinned-queue-state.json"

// EscalateAfter is how many failed cycles on one roadmap item escalate it:
// it is skipped, and so is every item that names it as its blocker.
const EscalateAfter = 3

// RoadmapItem is one item of a pinned roadmap: a line of an ordered
// Markdown list whose first `backquoted` word is its id; `blocker: `id“
// names an item that must be done first.
type RoadmapItem struct {
	ID      string `json:"id"`
	Line    string `json:"line"`
	Blocker string `json:"blocker,omitempty"`
}

var (
	listItem   = regexp.MustCompile(`^\s*[0-9]+\.\s`)
	firstID    = regexp.MustCompile("`([^`]+)`")
	blockerRef = regexp.MustCompile("blocker:\\s*`([^`]+)`")
)

// ParseRoadmap reads the items of a roadmap, in order.
func ParseRoadmap(data []byte) []RoadmapItem {
	var out []RoadmapItem
	for _, l := range strings.Split(string(data), "\n") {
		if !listItem.MatchString(l) {
			continue
		}
		rest := blockerRef.ReplaceAllString(l, "")
		m := firstID.FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		it := RoadmapItem{ID: m[1], Line: strings.TrimSpace(l)}
		if b := blockerRef.FindStringSubmatch(l); b != nil {
			it.Blocker = b[1]
		}
		out = append(out, it)
	}
	return out
}

// Escalation is a roadmap item given up on, and why.
type Escalation struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// RoadmapState is how far a roadmap has been worked.
type RoadmapState struct {
	QueueFile string         `json:"queue_file"`
	Index     int            `json:"current_index"`
	Completed []string       `json:"completed"`
	Escalated []Escalation   `json:"escalated"`
	Failures  map[string]int `json:"failures,omitempty"`
}

// LoadRoadmapState reads the state of the roadmap in file from path (a
// fresh state when there is none, or when it is of another roadmap file).
func LoadRoadmapState(path, file string) (*RoadmapState, error) {
	data, err := os.ReadFile(path)
	fresh := &RoadmapState{QueueFile: file, Completed: []string{}, Escalated: []Escalation{}}
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, err
	}
	var s RoadmapState
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s does not parse: %v (remove it to start the roadmap over)", path, err)
	}
	if s.QueueFile != file {
		return fresh, nil
	}
	if s.Completed == nil {
		s.Completed = []string{}
	}
	if s.Escalated == nil {
		s.Escalated = []Escalation{}
	}
	return &s, nil
}

// Save writes the state atomically.
func (s *RoadmapState) Save(path string) error {
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (s *RoadmapState) done(id string) bool { return slices.Contains(s.Completed, id) }

func (s *RoadmapState) escalated(id string) bool {
	for _, e := range s.Escalated {
		if e.ID == id {
			return true
		}
	}
	return false
}

// Next returns the roadmap work to do next: the first item, from the
// current one on, that is neither done nor escalated, or, when its blocker
// is not done yet, that blocker (followed down a chain of blockers to the
// first that is not blocked itself; a cycle of blockers stops where it
// closes); unblocks then names the item it unblocks. ok is false when
// nothing is left.
func (s *RoadmapState) Next(items []RoadmapItem) (work RoadmapItem, unblocks string, ok bool) {
	byID := map[string]RoadmapItem{}
	for _, it := range items {
		if _, dup := byID[it.ID]; !dup {
			byID[it.ID] = it
		}
	}
next:
	for i := max(0, s.Index); i < len(items); i++ {
		it := items[i]
		if s.done(it.ID) || s.escalated(it.ID) {
			continue
		}
		work, unblocks = RoadmapItem{}, ""
		seen := map[string]bool{it.ID: true}
		for it.Blocker != "" && !s.done(it.Blocker) && !seen[it.Blocker] {
			b := it.Blocker
			if s.escalated(b) {
				continue next // its blocker was given up on: so is it (Failed escalates both)
			}
			seen[b] = true
			blocker, known := byID[b]
			if !known {
				blocker = RoadmapItem{ID: b, Line: "unblock " + b + " (named as the blocker of " + it.ID + ")"}
			}
			work, unblocks = blocker, it.ID
			it = blocker
		}
		if unblocks == "" {
			work = it
		}
		return work, unblocks, true
	}
	return RoadmapItem{}, "", false
}

// Done marks a roadmap item (or a blocker) done, and moves the current
// index past the items that are finished.
func (s *RoadmapState) Done(items []RoadmapItem, id string) {
	if !s.done(id) {
		s.Completed = append(s.Completed, id)
	}
	delete(s.Failures, id)
	for s.Index < len(items) && (s.done(items[s.Index].ID) || s.escalated(items[s.Index].ID)) {
		s.Index++
	}
}

// Failed counts a failed cycle on a roadmap item; at EscalateAfter it is
// escalated, with every item that names it as its blocker. It reports
// whether it escalated.
func (s *RoadmapState) Failed(items []RoadmapItem, id string) bool {
	if s.Failures == nil {
		s.Failures = map[string]int{}
	}
	s.Failures[id]++
	if s.Failures[id] < EscalateAfter {
		return false
	}
	s.escalate(id, fmt.Sprintf("%d failed cycles in a row", s.Failures[id]))
	for changed := true; changed; {
		changed = false
		for _, it := range items {
			if it.Blocker != "" && s.escalated(it.Blocker) && !s.escalated(it.ID) {
				s.escalate(it.ID, "its blocker "+it.Blocker+" was escalated")
				changed = true
			}
		}
	}
	for s.Index < len(items) && (s.done(items[s.Index].ID) || s.escalated(items[s.Index].ID)) {
		s.Index++
	}
	return true
}

func (s *RoadmapState) escalate(id, reason string) {
	if !s.escalated(id) {
		s.Escalated = append(s.Escalated, Escalation{ID: id, Reason: reason})
	}
}
