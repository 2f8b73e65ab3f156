package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
)

// Brief is what the agent of a cycle is told: the work chosen and why,
// the goals failing as the cycle started, the hypotheses whose check is
// due, and the last failure surfaces, so that each cycle reads what the
// ones before it learned.
type Brief struct {
	Run         string      `json:"run"`
	Cycle       int         `json:"cycle"`
	ID          string      `json:"id"`
	Target      string      `json:"target"`
	Start       string      `json:"start_sha"`
	Strategy    string      `json:"strategy"`
	Restorative bool        `json:"restorative"`
	Resumed     bool        `json:"resumed"`
	Work        *Work       `json:"work"`
	Failing     []BriefGoal `json:"failing_goals"`
	// CannotRun are the goals whose checks could not run here: not work
	// for the cycle, said so that it does not chase them.
	CannotRun []BriefGoal     `json:"cannot_run"`
	Due       []Hypothesis    `json:"due_hypotheses"`
	Failures  []FailureRecord `json:"recent_failures"`
	// Learnings are the lines of .agents/learnings/** that name a keyword
	// of the last failed gate (LearningKeywords), so that the cycle does not
	// derive again what an earlier one learned (seed 003).
	LearningKeywords []string   `json:"learning_keywords"`
	Learnings        []Learning `json:"learnings"`
	Rules            []string   `json:"rules"`
	// Contracts are the repository's own contracts for its loop (its
	// execution profile, its program), as the working tree holds them.
	Contracts []Contract `json:"contracts,omitempty"`
}

// BriefGoal is a failing goal as the agent sees it.
type BriefGoal struct {
	ID     string `json:"id"`
	Weight int    `json:"weight"`
	// Result is fail, timeout or error; Reason says why in words.
	Result      string `json:"result"`
	Reason      string `json:"reason,omitempty"`
	Description string `json:"description,omitempty"`
	Check       string `json:"check,omitempty"`
	// Output is the end of the check's output (see goals.Excerpt).
	Output string `json:"output,omitempty"`
}

// FailureRecord is a cycle whose gate failed: what it targeted, the gate's
// words, the goals it regressed and, for each failure, its own words.
type FailureRecord struct {
	Cycle     int            `json:"cycle"`
	Target    string         `json:"target"`
	Gate      string         `json:"gate"`
	Regressed []string       `json:"regressed_goals,omitempty"`
	Failures  []gate.Failure `json:"failures,omitempty"`
}

// briefRules are the rules the tool enforces whatever the agent does; the
// brief says them so the agent does not waste a cycle on them.
var briefRules = []string{
	"Do the work in the working tree; commit or leave it uncommitted: git evolve cycle finish takes both.",
	"Do not run git evolve cycle finish, cycle abort, stop or kill: the driver runs the cycle, only the operator stops the loop.",
	"The gate measures every goal with the goals file as it was when the cycle started: weakening GOALS.yaml or GOALS.md does not pass a cycle.",
	"The work is judged in a clean checkout of what will be committed, first with the tests, test configuration and check scripts as they were when the cycle started, then with yours: new tests must pass too, fewer tests passing is a regression, and a cycle that changes only tests is not improved.",
	"A goal that regresses reverts the whole cycle; what you write under .agents/ survives the revert.",
	"To give the cycle's commit your own message, write it to the file $EVOLVE_COMMIT_MSG names (in the working tree; the driver adds its trailers).",
	"A cycle that edits skills/evolve/SKILL.md adds a hypothesis of what the edit will do (a JSON line {\"id\", \"patch\", \"hypothesis\", \"measure\"} in the file $EVOLVE_HYPOTHESES names): without one it is not improved.",
	"Nothing here needs .git to be writable: the files the driver reads ($EVOLVE_COMMIT_MSG, $EVOLVE_VERDICTS, $EVOLVE_HYPOTHESES) are in the working tree, and commits of your own are optional.",
}

// lastFailures are the last n cycles whose gate failed, newest first.
func lastFailures(events []Event, n int) []FailureRecord {
	out := []FailureRecord{}
	for i := len(events) - 1; i >= 0 && len(out) < n; i-- {
		e := events[i]
		if !e.Failed() {
			continue
		}
		f := FailureRecord{Cycle: e.Cycle, Target: e.Target, Gate: e.Gate}
		_ = json.Unmarshal(e.Record.Extra["regressed_goals"], &f.Regressed)
		if json.Unmarshal(e.Record.Extra["failures"], &f.Failures) == nil {
			// From a note: bounded and cleaned again, whoever wrote it.
			for i := range f.Failures {
				f.Failures[i].Excerpt = goals.Excerpt(f.Failures[i].Excerpt)
			}
		}
		out = append(out, f)
	}
	return out
}

func newBrief(s *State, r *RunState, c *cycle.OpenCycle, w *Work, measured *goals.Snapshot, resumed bool) (*Brief, error) {
	b := &Brief{Run: r.ID, Cycle: c.Cycle, ID: c.ID, Target: c.Target, Start: c.Start, Strategy: r.Strategy,
		Restorative: w.Restorative, Resumed: resumed, Work: w, Failing: []BriefGoal{}, CannotRun: []BriefGoal{}, Rules: briefRules,
		Failures: lastFailures(s.Events, 3)}
	if measured != nil {
		brief := func(g goals.Result) BriefGoal {
			bg := BriefGoal{ID: g.GoalID, Weight: g.Weight, Result: g.Result, Reason: g.Reason, Output: g.Excerpt}
			if s.Goals != nil {
				for _, d := range s.Goals.Goals {
					if d.ID == g.GoalID {
						bg.Description, bg.Check = d.Description, d.Check
					}
				}
			}
			return bg
		}
		for _, g := range measured.FailingByWeight() {
			b.Failing = append(b.Failing, brief(g))
		}
		for _, g := range measured.CannotRun() {
			b.CannotRun = append(b.CannotRun, brief(g))
		}
	}
	hs, err := Hypotheses(s.Repo)
	if err != nil {
		return nil, err
	}
	b.LearningKeywords, b.Learnings = []string{}, []Learning{}
	if len(b.Failures) > 0 {
		if kw := failureKeywords(b.Failures[0]); len(kw) > 0 {
			b.LearningKeywords = kw
			if l := matchLearnings(s.Top, kw); l != nil {
				b.Learnings = l
			}
		}
	}
	b.Due = Due(hs, c.Cycle)
	if b.Due == nil {
		b.Due = []Hypothesis{}
	}
	b.Contracts = ReadContracts(s.Top)
	return b, nil
}

// Markdown is the brief as the agent's prompt can include it. Everything
// in it that came from a file, a note or a check (goal ids and texts,
// queue items, directives, hypotheses, failures, learnings) is escaped
// (package escape): it stays text, and cannot make a heading, a rule or a
// link of its own in the brief.
func (b *Brief) Markdown() []byte {
	var w bytes.Buffer
	md := escape.Markdown
	fmt.Fprintf(&w, "# Evolve cycle %d: %s\n\n", b.Cycle, md(b.Target))
	fmt.Fprintf(&w, "- run: %s, strategy %s\n- cycle id: %s, started on %s\n", md(b.Run), md(b.Strategy), md(b.ID), md(b.Start))
	if f := StrategyFocus[b.Strategy]; f != "" {
		fmt.Fprintf(&w, "- the %s strategy's focus: %s\n", md(b.Strategy), f)
	}
	if b.Restorative {
		fmt.Fprintf(&w, "- **restorative**: the last cycle's gate failed; fix what is red, nothing else\n")
	}
	if b.Resumed {
		fmt.Fprintf(&w, "- resumed: an earlier agent of this cycle was interrupted; its work is in the tree\n")
	}
	fmt.Fprintf(&w, "\n## The work\n\n%s (rung %s)\n\n%s\n", md(b.Work.Title), md(b.Work.Rung), escape.MarkdownLines(b.Work.Why))
	if it := b.Work.Item; it != nil {
		fmt.Fprintf(&w, "\nQueue item %s", md(it.ID))
		if it.Type != "" || it.Severity != "" {
			fmt.Fprintf(&w, " (%s)", md(strings.Trim(it.Type+", "+it.Severity, ", ")))
		}
		fmt.Fprintf(&w, ": %s\n", md(it.Title))
		if it.Description != "" {
			fmt.Fprintf(&w, "\n%s\n", escape.MarkdownLines(it.Description))
		}
	}
	if bd := b.Work.Bead; bd != nil {
		fmt.Fprintf(&w, "\nBead %s (priority %d): %s\n", md(bd.ID), bd.Priority, md(bd.Title))
		if bd.Description != "" {
			fmt.Fprintf(&w, "\n%s\n", md(cleanLine(bd.Description)))
		}
		fmt.Fprintf(&w, "\nWhen it is done, close it: %s\n", escape.Code("bd close "+bd.ID))
	}
	if d := b.Work.Directive; d != nil {
		fmt.Fprintf(&w, "\nDirective %d (id %s), steer %s", d.Number, md(d.ID), md(orNone(d.Steer)))
		if d.Metric != "" {
			fmt.Fprintf(&w, " (%s)", md(d.Metric))
		}
		fmt.Fprintf(&w, ": %s\n", md(d.Title))
		if d.Body != "" {
			fmt.Fprintf(&w, "\n%s\n", escape.MarkdownLines(d.Body))
		}
		fmt.Fprintf(&w, "\nWhen the directive is done, set its **Steer:** line to complete in the goals file.\n")
	}
	if b.Work.Unblocks != "" {
		fmt.Fprintf(&w, "\nIt blocks %s.\n", md(b.Work.Unblocks))
	}
	fmt.Fprintf(&w, "\n## Failing goals\n\n")
	if len(b.Failing) == 0 {
		fmt.Fprintf(&w, "None.\n")
	}
	for _, g := range b.Failing {
		fmt.Fprintf(&w, "- %s (weight %d)", md(g.ID), g.Weight)
		if g.Result == goals.Timeout {
			fmt.Fprintf(&w, " **timeout**: %s", md(g.Reason))
		}
		if g.Description != "" {
			fmt.Fprintf(&w, ": %s", md(g.Description))
		}
		if g.Check != "" {
			fmt.Fprintf(&w, "\n  check: %s", escape.Code(g.Check))
		}
		fmt.Fprintln(&w)
		if out := strings.TrimSpace(g.Output); out != "" {
			fmt.Fprintf(&w, "\n%s", escape.CodeBlock(lastLines(out, 10), "  "))
		}
	}
	if len(b.CannotRun) > 0 {
		fmt.Fprintf(&w, "\n## Goals that cannot run here\n\nNot work for this cycle: their checks lack a tool (the operator installs it).\n\n")
		for _, g := range b.CannotRun {
			fmt.Fprintf(&w, "- %s (weight %d): %s\n", md(g.ID), g.Weight, md(g.Reason))
		}
	}
	fmt.Fprintf(&w, "\n## Hypotheses due\n\n")
	if len(b.Due) == 0 {
		fmt.Fprintf(&w, "None.\n")
	}
	for _, h := range b.Due {
		line := fmt.Sprintf(`{"id": %q, "verdict": "VERIFIED" or "FALSIFIED", "evidence": "…"}`, h.ID)
		fmt.Fprintf(&w, "- %s (landed in cycle %d, due at %d): %s; measure: %s\n  record the verdict: a line %s in the file $EVOLVE_VERDICTS names (%s; the driver records it)\n",
			md(h.ID), h.CycleLanded, h.CheckAtCycle, md(h.Hypothesis), md(h.Measure), escape.Code(line), VerdictsFile)
	}
	fmt.Fprintf(&w, "\n## Recent failures\n\n")
	if len(b.Failures) == 0 {
		fmt.Fprintf(&w, "None.\n")
	}
	for _, f := range b.Failures {
		fmt.Fprintf(&w, "- cycle %d (target %s): gate %s", f.Cycle, md(f.Target), md(f.Gate))
		if len(f.Regressed) > 0 && !strings.Contains(f.Gate, "regressed") {
			fmt.Fprintf(&w, "; regressed %s", md(strings.Join(f.Regressed, ", ")))
		}
		fmt.Fprintln(&w)
		for _, x := range f.Failures {
			what := "goal " + md(x.Name)
			switch x.What {
			case "gate":
				what = escape.Code(x.Name)
			case "hook":
				what = "the " + md(x.Name) + " hook"
			case "holdout":
				what = "the holdout checks (which, and how, is not told)"
			case "census":
				what = "the tests counted"
			case "ruler":
				what = "the ruler"
			case "hypothesis", "scope":
				what = md(x.Name)
			}
			if x.OwnRuler {
				what += ", with the cycle's own ruler"
			}
			fmt.Fprintf(&w, "  - %s: %s\n", what, md(x.Reason))
			if out := strings.TrimSpace(x.Excerpt); out != "" {
				fmt.Fprintf(&w, "\n%s", escape.CodeBlock(lastLines(out, 20), "    "))
			}
		}
	}
	if len(b.Learnings) > 0 {
		fmt.Fprintf(&w, "\n## Learnings that name the last failure\n\nLines of %s that name %s:\n\n", LearningsDir, md(strings.Join(b.LearningKeywords, ", ")))
		for _, l := range b.Learnings {
			fmt.Fprintf(&w, "- %s:%d: %s\n", md(l.File), l.Line, md(l.Text))
		}
	}
	for _, c := range b.Contracts {
		fmt.Fprintf(&w, "\n## The repository's contract: %s\n\n", md(c.Path))
		for _, f := range []struct {
			name  string
			items []string
			code  bool
		}{{"Read first (startup_reads)", c.StartupReads, true}, {"Validation commands (validation_commands: run them to check the work; the judge runs GOALS.yaml's gate:)", c.ValidationCommands, true},
			{"Tracker commands (tracker_commands)", c.TrackerCommands, true}, {"Definition of done (definition_of_done)", c.DefinitionOfDone, false},
			{"Mutable scope (mutable_scope)", c.MutableScope, true}, {"Decision policy (decision_policy)", c.DecisionPolicy, false},
			{"Stop conditions (stop_conditions)", c.StopConditions, false}} {
			if len(f.items) == 0 {
				continue
			}
			fmt.Fprintf(&w, "%s:\n\n", f.name)
			if f.name == "Mutable scope (mutable_scope)" && c.Path != ProfileFile {
				fmt.Fprintf(&w, "A change outside it fails the gate (the loop's own files under .agents/ aside): the scope is the one %s had as the cycle started.\n\n", md(c.Path))
			}
			for _, it := range f.items {
				if f.code {
					fmt.Fprintf(&w, "- %s\n", escape.Code(it))
				} else {
					fmt.Fprintf(&w, "- %s\n", md(it))
				}
			}
			fmt.Fprintln(&w)
		}
	}
	fmt.Fprintf(&w, "\n## Rules\n\n")
	for _, r := range b.Rules {
		fmt.Fprintf(&w, "- %s\n", r)
	}
	return w.Bytes()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writeBrief writes the brief as Markdown and as JSON in the git
// directory, and returns their paths.
func writeBrief(dir string, b *Brief) (md, js string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	md, js = filepath.Join(dir, "brief.md"), filepath.Join(dir, "brief.json")
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return "", "", err
	}
	if err := WriteAtomic(js, append(data, '\n')); err != nil {
		return "", "", err
	}
	return md, js, WriteAtomic(md, b.Markdown())
}

// WriteAtomic replaces path with data: a temporary file beside it, renamed.
func WriteAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }
