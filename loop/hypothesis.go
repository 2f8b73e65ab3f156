package loop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
)

// HypothesesRef holds the hypothesis ledger, shared by sync like the cycle
// ledger: a JSON line an event (a hypothesis added, a verdict), in the note
// on the commit HEAD was on.
const HypothesesRef = "refs/notes/evolve-hypotheses"

// The statuses of a hypothesis.
const (
	Pending   = "PENDING"
	Verified  = "VERIFIED"
	Falsified = "FALSIFIED"
)

// Hypothesis is a change's expected effect, checked at a later cycle (the
// seeds' hypotheses.jsonl fields).
type Hypothesis struct {
	ID           string `json:"id"`
	CycleLanded  int    `json:"cycle_landed"`
	CheckAtCycle int    `json:"check_at_cycle"`
	Patch        string `json:"patch"`
	Hypothesis   string `json:"hypothesis"`
	Measure      string `json:"measure"`
	Status       string `json:"status"`
	Evidence     string `json:"evidence,omitempty"`
	AddedAt      string `json:"added_at,omitempty"`
	AddedBy      string `json:"added_by,omitempty"`
	VerdictAt    string `json:"verdict_at,omitempty"`
	VerdictBy    string `json:"verdict_by,omitempty"`
}

// hypothesisEvent is one line of the hypothesis ledger.
type hypothesisEvent struct {
	Event string `json:"event"` // add, verdict
	Hypothesis
	At string `json:"at"`
	By string `json:"by,omitempty"`
}

// HypothesisError is a request the hypothesis ledger refuses.
type HypothesisError struct{ Msg string }

func (e *HypothesisError) Error() string { return e.Msg }

// Hypotheses reads the hypothesis ledger: each hypothesis with its latest
// verdict, by check cycle and id.
func Hypotheses(repo *gitstore.Repo) ([]Hypothesis, error) {
	snap, err := repo.ReadNotes(HypothesesRef)
	if err != nil {
		return nil, err
	}
	var events []hypothesisEvent
	err = snap.ForEachLine(func(_ gitstore.Hash, l []byte) error {
		var e hypothesisEvent
		if json.Unmarshal(l, &e) == nil && e.ID != "" {
			events = append(events, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Adds before verdicts (a clock that stands still, as in tests, gives
	// both one time), each kind by time.
	sort.SliceStable(events, func(i, j int) bool {
		if a, b := events[i].Event == "add", events[j].Event == "add"; a != b {
			return a
		}
		return eventTime(events[i].At).Before(eventTime(events[j].At))
	})
	byID := map[string]*Hypothesis{}
	var order []string
	for _, e := range events {
		switch e.Event {
		case "add":
			if _, dup := byID[e.ID]; dup {
				continue // two clones added the same id: the first stands
			}
			h := e.Hypothesis
			h.Status, h.AddedAt, h.AddedBy = Pending, e.At, e.By
			byID[e.ID] = &h
			order = append(order, e.ID)
		case "verdict":
			if h, ok := byID[e.ID]; ok {
				h.Status, h.Evidence, h.VerdictAt, h.VerdictBy = e.Status, e.Evidence, e.At, e.By
			}
		}
	}
	out := make([]Hypothesis, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CheckAtCycle != out[j].CheckAtCycle {
			return out[i].CheckAtCycle < out[j].CheckAtCycle
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// AddHypothesis adds a hypothesis, PENDING. An empty or known id, an empty
// hypothesis or measure, or a check cycle before the landing cycle is
// refused.
func AddHypothesis(repo *gitstore.Repo, h Hypothesis, now time.Time) error {
	h.ID = strings.TrimSpace(h.ID)
	switch {
	case h.ID == "":
		return &HypothesisError{"--id: a hypothesis needs an id"}
	case strings.ContainsAny(h.ID, " \t\n"):
		return &HypothesisError{fmt.Sprintf("--id %q: an id has no spaces", h.ID)}
	case strings.TrimSpace(h.Hypothesis) == "":
		return &HypothesisError{"--hypothesis: say what the change is expected to do"}
	case strings.TrimSpace(h.Measure) == "":
		return &HypothesisError{"--measure: say how the effect is to be checked"}
	case h.CycleLanded < 1:
		return &HypothesisError{"--cycle-landed: the cycle the change landed in, 1 or more"}
	case h.CheckAtCycle < h.CycleLanded:
		return &HypothesisError{fmt.Sprintf("--check-at-cycle %d: before the cycle it landed in (%d)", h.CheckAtCycle, h.CycleLanded)}
	}
	known, err := Hypotheses(repo)
	if err != nil {
		return err
	}
	for _, k := range known {
		if k.ID == h.ID {
			return &HypothesisError{fmt.Sprintf("hypothesis %s exists already (added %s, %s)", h.ID, k.AddedAt, k.Status)}
		}
	}
	h.Status, h.Evidence, h.AddedAt, h.AddedBy, h.VerdictAt, h.VerdictBy = "", "", "", "", "", ""
	return writeHypothesisEvent(repo, hypothesisEvent{Event: "add", Hypothesis: h}, now)
}

// Verdict records a PENDING hypothesis's verdict, VERIFIED or FALSIFIED,
// with its evidence.
func Verdict(repo *gitstore.Repo, id, verdict, evidence string, now time.Time) (*Hypothesis, error) {
	verdict = strings.ToUpper(strings.TrimSpace(verdict))
	if verdict != Verified && verdict != Falsified {
		return nil, &HypothesisError{fmt.Sprintf("verdict %q: VERIFIED or FALSIFIED", verdict)}
	}
	if strings.TrimSpace(evidence) == "" {
		return nil, &HypothesisError{"--evidence: say what the measure found"}
	}
	known, err := Hypotheses(repo)
	if err != nil {
		return nil, err
	}
	for _, k := range known {
		if k.ID != id {
			continue
		}
		if k.Status != Pending {
			return nil, &HypothesisError{fmt.Sprintf("hypothesis %s has its verdict already: %s (%s)", id, k.Status, k.VerdictAt)}
		}
		k.Status, k.Evidence = verdict, evidence
		ev := hypothesisEvent{Event: "verdict", Hypothesis: Hypothesis{ID: id, Status: verdict, Evidence: evidence}}
		if err := writeHypothesisEvent(repo, ev, now); err != nil {
			return nil, err
		}
		return &k, nil
	}
	return nil, &HypothesisError{fmt.Sprintf("no hypothesis %s (git evolve hypothesis list shows them)", id)}
}

// Due are the PENDING hypotheses whose check cycle has come (cycle is the
// latest cycle).
func Due(hs []Hypothesis, cycle int) []Hypothesis {
	out := []Hypothesis{}
	for _, h := range hs {
		if h.Status == Pending && h.CheckAtCycle <= cycle {
			out = append(out, h)
		}
	}
	return out
}

func writeHypothesisEvent(repo *gitstore.Repo, e hypothesisEvent, now time.Time) error {
	head, err := repo.ResolveCommits("HEAD")
	if err != nil {
		return fmt.Errorf("recording hypothesis %s: %w", e.ID, err)
	}
	e.At = now.UTC().Format(time.RFC3339Nano)
	if _, committer, err := repo.Identity(); err == nil {
		e.By = committer.Name + " <" + committer.Email + ">"
	}
	line, _ := json.Marshal(e)
	return repo.AddNoteLines(HypothesesRef, head[0], [][]byte{line}, fmt.Sprintf("git evolve: hypothesis %s %s\n", e.ID, e.Event))
}

// eventTime is when an event happened; times that do not parse come first.
// (RFC 3339 text with fractions does not sort as text: .1 after .123.)
func eventTime(at string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, at)
	return t
}

// openAgentFile opens a file the agent wrote for the driver: a regular
// file only, never what a symbolic link names (the driver may read what the
// agent's sandbox could not) and never a FIFO (which would hang it).
func openAgentFile(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return nil, err
	}
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		f.Close()
		return nil, fmt.Errorf("changed while it was opened")
	}
	return f, nil
}

// maxVerdicts bounds the verdicts file an agent writes.
const maxVerdicts = 256 << 10

// recordVerdicts records the verdicts an agent wrote to VerdictsFile under
// top (a JSON object a line: {"id", "verdict": VERIFIED or FALSIFIED,
// "evidence"}) as git evolve hypothesis verdict does, and removes the file.
// It returns what it did, a sentence a verdict, for the run to say; a line
// that is no verdict is said and skipped.
func recordVerdicts(repo *gitstore.Repo, top string, now time.Time) []string {
	path := filepath.Join(top, filepath.FromSlash(VerdictsFile))
	f, err := openAgentFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		os.Remove(path)
		return []string{fmt.Sprintf("%s was not read: %v", VerdictsFile, err)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxVerdicts))
	f.Close()
	os.Remove(path)
	if err != nil {
		return []string{"the verdicts file could not be read: " + err.Error()}
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var v struct{ ID, Verdict, Evidence string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			out = append(out, fmt.Sprintf("%s line %d is no verdict: %v", VerdictsFile, i+1, err))
			continue
		}
		h, err := Verdict(repo, v.ID, strings.ToUpper(v.Verdict), v.Evidence, now)
		if err != nil {
			out = append(out, fmt.Sprintf("%s line %d: %s", VerdictsFile, i+1, goals.CleanText(err.Error())))
			continue
		}
		out = append(out, fmt.Sprintf("hypothesis %s: %s (recorded from %s)", goals.CleanText(h.ID), h.Status, VerdictsFile))
	}
	return out
}

// SkillFile is the file seed 001's Mechanism 3 watches: a cycle that edits
// it adds a hypothesis of what the edit will do.
const SkillFile = "skills/evolve/SKILL.md"

// HypothesisCheckAfter is how many cycles after it lands a hypothesis an
// agent of a run adds is checked, when it says not (seed 001: N+15).
const HypothesisCheckAfter = 15

// RequireHypothesis is seed 001's rule for cycle.FinishOptions.Require: a
// cycle whose work changes SkillFile has added a hypothesis landed in it
// (cycle_landed is its number); without one the gate fails, naming what to
// add.
func RequireHypothesis(repo *gitstore.Repo) func(c *cycle.OpenCycle, changed []string) []gate.Failure {
	return func(c *cycle.OpenCycle, changed []string) []gate.Failure {
		if !slices.Contains(changed, SkillFile) {
			return nil
		}
		hs, err := Hypotheses(repo)
		if err == nil {
			for _, h := range hs {
				if h.CycleLanded == c.Cycle {
					return nil
				}
			}
		}
		why := fmt.Sprintf("the cycle edits %s and added no hypothesis landed in cycle %d (seed 001: an edit of the skill says what it is expected to do, and how to measure it)", SkillFile, c.Cycle)
		if err != nil {
			why = fmt.Sprintf("the cycle edits %s and the hypothesis ledger cannot be read: %v", SkillFile, err)
		}
		return []gate.Failure{{What: "hypothesis", Name: "no hypothesis for " + SkillFile, Status: goals.Fail,
			Reason: why + fmt.Sprintf("; add one before the finish: git evolve hypothesis add --id H%d.1 --cycle-landed %d --check-at-cycle %d --patch '…' --hypothesis '…' --measure '…' (an agent of git evolve run: a JSON line in %s)",
				c.Cycle, c.Cycle, c.Cycle+HypothesisCheckAfter, NewHypothesesFile)}}
	}
}

// maxNewHypotheses bounds the file of hypotheses an agent writes.
const maxNewHypotheses = 256 << 10

// recordNewHypotheses adds the hypotheses an agent of a run wrote to
// NewHypothesesFile under top (a JSON object a line, the fields of git
// evolve hypothesis add: id, patch, hypothesis, measure, and cycle_landed,
// check_at_cycle, which default to the cycle and 15 cycles later) as git
// evolve hypothesis add does, and removes the file. It returns what it
// did, a sentence a line, for the run to say; a line that is no
// hypothesis, or that the ledger refuses, is said and skipped.
func recordNewHypotheses(repo *gitstore.Repo, top string, cycleNo int, now time.Time) []string {
	path := filepath.Join(top, filepath.FromSlash(NewHypothesesFile))
	f, err := openAgentFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		os.Remove(path)
		return []string{fmt.Sprintf("%s was not read: %v", NewHypothesesFile, err)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxNewHypotheses))
	f.Close()
	os.Remove(path)
	if err != nil {
		return []string{"the new hypotheses could not be read: " + err.Error()}
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var h Hypothesis
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			out = append(out, fmt.Sprintf("%s line %d is no hypothesis: %v", NewHypothesesFile, i+1, err))
			continue
		}
		if h.CycleLanded == 0 {
			h.CycleLanded = cycleNo
		}
		if h.CheckAtCycle == 0 {
			h.CheckAtCycle = h.CycleLanded + HypothesisCheckAfter
		}
		if err := AddHypothesis(repo, h, now); err != nil {
			out = append(out, fmt.Sprintf("%s line %d: %s", NewHypothesesFile, i+1, goals.CleanText(err.Error())))
			continue
		}
		out = append(out, fmt.Sprintf("hypothesis %s added (landed in cycle %d, checked at %d; from %s)", goals.CleanText(strings.TrimSpace(h.ID)), h.CycleLanded, h.CheckAtCycle, NewHypothesesFile))
	}
	return out
}
