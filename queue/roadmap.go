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
	"sync"

	"github.com/git-evolve/git-evolve/escape"
)

// RoadmapStatePath is where a pinned roadmap's progress is kept, relative
// to the top of the working tree (the seeds' file).
const RoadmapStatePath = ".agents/evolve/pinned-queue-state.json"

// EscalatedPath is where escalations are written for the operator to
// read, relative to the top of the working tree (the seeds' file).
const EscalatedPath = ".agents/evolve/escalated.md"

// MaxUnblockDepth is how deep a chain of blockers is followed: the item's
// own blocker is depth 0, that blocker's blocker depth 1, and so on; an
// item whose chain goes deeper than this is escalated instead (seed 004:
// "Blocker chain too deep (>2 levels)").
const MaxUnblockDepth = 2

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
	listItem   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[0-9]+\.\s`) })
	firstID    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
	blockerRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("blocker:\\s*`([^`]+)`") })
)

// ParseRoadmap reads the items of a roadmap, in order.
func ParseRoadmap(data []byte) []RoadmapItem {
	var out []RoadmapItem
	for _, l := range strings.Split(string(data), "\n") {
		if !listItem().MatchString(l) {
			continue
		}
		rest := blockerRef().ReplaceAllString(l, "")
		m := firstID().FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		it := RoadmapItem{ID: m[1], Line: strings.TrimSpace(l)}
		if b := blockerRef().FindStringSubmatch(l); b != nil {
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
	// Chain is the chain of blockers that was too deep, the item first.
	Chain []string `json:"chain,omitempty"`
}

// RoadmapState is how far a roadmap has been worked.
type RoadmapState struct {
	QueueFile string         `json:"queue_file"`
	Index     int            `json:"current_index"`
	Completed []string       `json:"completed"`
	Escalated []Escalation   `json:"escalated"`
	Failures  map[string]int `json:"failures,omitempty"`
	// InProgress is the item (or blocker) a cycle works now ("" between
	// cycles); UnblockChain the blockers being resolved for the item at
	// the current index, outermost first, and UnblockDepth how deep the
	// one worked is (0: the item's own blocker).
	InProgress   string   `json:"in_progress"`
	UnblockChain []string `json:"unblock_chain"`
	UnblockDepth int      `json:"unblock_depth"`
	// Found are the blockers read from failed cycles' output (FindBlocker):
	// an item's (or a blocker's) id, and what the failure said blocks it.
	// They count as the roadmap's own blocker: where one is, it is
	// followed as a declared one is.
	Found map[string]string `json:"found_blockers,omitempty"`
	// Digest is the SHA-256 of the roadmap's content as last read, and
	// PinnedAt when that content was first seen (RFC 3339): a new roadmap,
	// or new content, is a scope shift that resets the green streak.
	Digest   string `json:"digest,omitempty"`
	PinnedAt string `json:"pinned_at,omitempty"`
	// fresh are the escalations made since the state was read (or since
	// the last Fresh): the ones to write to EscalatedPath.
	fresh []Escalation
	// changed: Rewind changed the state, which is to be saved.
	changed bool
}

// Fresh returns the escalations made since the last call (or the state
// was read), and forgets them.
func (s *RoadmapState) Fresh() []Escalation {
	f := s.fresh
	s.fresh = nil
	return f
}

// LoadRoadmapState reads the state of the roadmap in file from path (a
// fresh state when there is none, or when it is of another roadmap file).
func LoadRoadmapState(path, file string) (*RoadmapState, error) {
	data, err := os.ReadFile(path)
	fresh := &RoadmapState{QueueFile: file, Completed: []string{}, Escalated: []Escalation{}, UnblockChain: []string{}}
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
	if s.UnblockChain == nil {
		s.UnblockChain = []string{}
	}
	return &s, nil
}

// Save writes the state atomically.
func (s *RoadmapState) Save(path string) error {
	s.changed = false
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
// closes); unblocks then names the item it unblocks. chain is the item
// whose turn it is, then the blockers from its own down to the one to
// work. A chain deeper
// than MaxUnblockDepth is not followed: the item is escalated (with the
// items that name it as their blocker) and the next one taken; Next then
// changes the state, which the caller saves. ok is false when nothing is
// left.
func (s *RoadmapState) Next(items []RoadmapItem) (work RoadmapItem, unblocks string, chain []string, ok bool) {
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
		item := it
		work, unblocks, chain = RoadmapItem{}, "", []string{it.ID}
		seen := map[string]bool{it.ID: true}
		for b := s.blockerOf(it); b != "" && !seen[b]; b = s.blockerOf(it) {
			if s.escalated(b) {
				continue next // its blocker was given up on: so is it (Failed escalates both)
			}
			if len(chain) > MaxUnblockDepth+1 {
				full := append(chain, b)
				s.escalateChain(items, Escalation{ID: item.ID, Chain: full,
					Reason: fmt.Sprintf("blocker chain deeper than %d levels: %s", MaxUnblockDepth, strings.Join(full, " → "))})
				continue next
			}
			seen[b] = true
			chain = append(chain, b)
			blocker, known := byID[b]
			if !known {
				how := "named as the blocker of "
				if it.Blocker != b {
					how = "found blocking "
				}
				blocker = RoadmapItem{ID: b, Line: "unblock " + b + " (" + how + it.ID + ")"}
			}
			work, unblocks = blocker, it.ID
			it = blocker
		}
		if unblocks == "" {
			work = it
		}
		return work, unblocks, chain, true
	}
	return RoadmapItem{}, "", nil, false
}

// blockerOf is what blocks it and is not done yet: the blocker the
// roadmap declares, else one a failed cycle on it named ("" for none).
func (s *RoadmapState) blockerOf(it RoadmapItem) string {
	if it.Blocker != "" && !s.done(it.Blocker) {
		return it.Blocker
	}
	if b := s.Found[it.ID]; b != "" && !s.done(b) {
		return b
	}
	return ""
}

// FoundBlocker notes that a failed cycle on id said blocker blocks it
// (FindBlocker): the next pick works blocker first, as for a declared
// one, down to MaxUnblockDepth levels. It reports whether that is new.
func (s *RoadmapState) FoundBlocker(id, blocker string) bool {
	if blocker == "" || blocker == id || s.done(blocker) || s.Found[id] == blocker {
		return false
	}
	if s.Found == nil {
		s.Found = map[string]string{}
	}
	s.Found[id] = blocker
	return true
}

// Rewind walks the items from the first again (past those finished), for
// a roadmap whose content changed, and marks the state as to be saved.
func (s *RoadmapState) Rewind(items []RoadmapItem) {
	s.Index = 0
	for s.Index < len(items) && (s.done(items[s.Index].ID) || s.escalated(items[s.Index].ID)) {
		s.Index++
	}
	s.changed = true
}

// Changed reports whether the state changed since it was read without
// being saved (Rewind).
func (s *RoadmapState) Changed() bool { return s.changed }

// Take notes that a cycle works on id; chain is Next's (the item, then
// the blockers being resolved).
func (s *RoadmapState) Take(id string, chain []string) {
	s.InProgress = id
	s.UnblockChain = []string{}
	if len(chain) > 1 {
		s.UnblockChain = append(s.UnblockChain, chain[1:]...)
	}
	s.UnblockDepth = max(0, len(s.UnblockChain)-1)
}

// Left counts the roadmap's items neither done nor escalated.
func (s *RoadmapState) Left(items []RoadmapItem) int {
	n := 0
	for _, it := range items {
		if !s.done(it.ID) && !s.escalated(it.ID) {
			n++
		}
	}
	return n
}

// CompletedItems counts the roadmap's own items done (blockers that are
// not items are not counted).
func (s *RoadmapState) CompletedItems(items []RoadmapItem) int {
	n := 0
	for _, it := range items {
		if s.done(it.ID) {
			n++
		}
	}
	return n
}

// Done marks a roadmap item (or a blocker) done, and moves the current
// index past the items that are finished.
func (s *RoadmapState) Done(items []RoadmapItem, id string) {
	if !s.done(id) {
		s.Completed = append(s.Completed, id)
	}
	delete(s.Failures, id)
	s.settled(id)
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
	s.settled(id)
	if s.Failures[id] < EscalateAfter {
		return false
	}
	s.escalateChain(items, Escalation{ID: id, Reason: fmt.Sprintf("%d failed cycles in a row", s.Failures[id])})
	return true
}

// settled clears what Take noted, once the cycle on id has ended.
func (s *RoadmapState) settled(id string) {
	if s.InProgress == id {
		s.InProgress, s.UnblockChain, s.UnblockDepth = "", []string{}, 0
	}
}

// escalateChain escalates e's item and every item that names an escalated
// one as its blocker, and moves the index past what is finished.
func (s *RoadmapState) escalateChain(items []RoadmapItem, e Escalation) {
	if !s.escalated(e.ID) {
		s.Escalated = append(s.Escalated, e)
		s.fresh = append(s.fresh, e)
	}
	for changed := true; changed; {
		changed = false
		for _, it := range items {
			for _, b := range []string{it.Blocker, s.Found[it.ID]} {
				if b != "" && s.escalated(b) && !s.escalated(it.ID) {
					s.escalate(it.ID, "its blocker "+b+" was escalated")
					changed = true
				}
			}
		}
	}
	for s.Index < len(items) && (s.done(items[s.Index].ID) || s.escalated(items[s.Index].ID)) {
		s.Index++
	}
}

func (s *RoadmapState) escalate(id, reason string) {
	if !s.escalated(id) {
		s.Escalated = append(s.Escalated, Escalation{ID: id, Reason: reason})
		s.fresh = append(s.fresh, Escalation{ID: id, Reason: reason})
	}
}

// AppendEscalated writes escalations to the operator's file at path
// (Markdown: a section an escalation, with its reason, cycle and chain).
func AppendEscalated(path string, es []Escalation, cycle int, at string) error {
	if len(es) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range es {
		// The ids and reasons come from the roadmap file and the agent's
		// work: escaped, so that they stay text in the operator's file.
		fmt.Fprintf(&b, "## %s escalated\n\n- reason: %s\n- cycle: %d\n- at: %s\n", escape.Markdown(e.ID), escape.Markdown(e.Reason), cycle, escape.Markdown(at))
		if len(e.Chain) > 0 {
			fmt.Fprintf(&b, "- chain: %s\n", escape.Markdown(strings.Join(e.Chain, " → ")))
		}
		b.WriteString("\n")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
