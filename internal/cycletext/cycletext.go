// Package cycletext holds the words a cycle's record is listed with, the
// same in every listing (log's tables, its Markdown, show, the report in
// Markdown and HTML): the result as shown, why a gate failed, the ruler
// files a cycle changed, the goals passing, and the cells of a table cut to
// their widths. It prints nothing: the caller escapes what it returns for
// where it goes, unless a function says it escapes.
package cycletext

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/ledger"
)

// Dash is s, or "-" when it is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Truncate cuts s to n characters, the last of them "…" when it was
// longer; it reads no further than that (a field may be a MiB long).
func Truncate(s string, n int) string {
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
		}
		if count == n {
			return s[:cut] + "…"
		}
		count++
	}
	return s
}

// The widths, in characters, of the columns of log's tables (and the
// report's) that show text from a record or a commit: a field is cut to
// its width, so that a long one (a record's target can be a MiB) pads no
// row. show prints every field whole.
const (
	TargetWidth  = 40
	ResultWidth  = 32
	SubjectWidth = 60
	ByWidth      = 40
	ReasonWidth  = 120
	RulerWidth   = 120
)

// MarkdownCell is a field in a Markdown table: cut to width characters,
// escaped (escape.Markdown), "-" when empty.
func MarkdownCell(s string, width int) string {
	return Dash(escape.Markdown(Truncate(s, width)))
}

// Result is a record's result as listings show it: "aborted" for an
// aborted cycle (recorded as unchanged), else its result.
func Result(r *ledger.Record) string {
	if r.Result == ledger.Unchanged && r.Aborted() {
		return "aborted"
	}
	return r.Result
}

// Listed is a record's result as log, report and show list it: Result,
// with "(target unmoved)" after an improved cycle whose goal target did not
// move and whose score did not rise (ledger.Record.TargetUnmoved).
func Listed(r *ledger.Record) string {
	if r.TargetUnmoved() {
		return r.Result + " (target unmoved)"
	}
	return Result(r)
}

// Goals is a record's goals passing of the total, "-" when it does not
// say.
func Goals(r *ledger.Record) string {
	if r.GoalsPassing == nil || r.GoalsTotal == nil {
		return "-"
	}
	return strconv.Itoa(*r.GoalsPassing) + "/" + strconv.Itoa(*r.GoalsTotal)
}

// Number is a value as listings show it, "-" for none.
func Number(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// Ruler lists in a few words the ruler files a cycle changed: the first n
// ("M add_test.go", "M b_test.go (accepted)"), and how many more; "" for
// none.
func Ruler(d ledger.Disclosure, n int) string {
	var parts []string
	for i, f := range d.Ruler {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(d.Ruler)-n))
			break
		}
		s := f.String()
		if f.Accepted != nil {
			s += " (accepted)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// FailureReason says in a few words why a cycle's gate failed: its first
// failure (the command or the goal, and how), else the gate's own text;
// for an aborted cycle, why it was aborted; "" for a cycle whose gate did
// not fail.
func FailureReason(r *ledger.Record) string {
	if r.Aborted() {
		return Truncate(r.ExtraString("reason"), ReasonWidth)
	}
	gate := r.GateText()
	if r.Result != ledger.Regressed && !strings.HasPrefix(strings.ToUpper(gate), "FAIL") {
		return ""
	}
	var failures []struct{ What, Name, Reason, Excerpt string }
	if json.Unmarshal(r.Extra["failures"], &failures) == nil && len(failures) > 0 {
		f := failures[0]
		why := f.Name + ": " + f.Reason
		switch f.What {
		case "gate":
			why = "`" + f.Name + "` " + f.Reason
		case "hook":
			why = "the " + f.Name + " hook: " + f.Reason
		}
		if words := telling(f.Excerpt); words != "" {
			why += ": " + words
		}
		if len(failures) > 1 {
			why += fmt.Sprintf(" (and %d more)", len(failures)-1)
		}
		return Truncate(why, ReasonWidth)
	}
	return Truncate(strings.TrimSpace(strings.TrimPrefix(gate, "FAIL:")), ReasonWidth)
}

// telling is the line of a failure's output that says most in a few
// words: the last that is not a test runner's bare summary (FAIL, FAIL
// <package>, exit status N, make's Error line).
func telling(excerpt string) string {
	lines := strings.Split(excerpt, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "", l == "FAIL", strings.HasPrefix(l, "FAIL\t"), strings.HasPrefix(l, "exit status "),
			strings.HasPrefix(l, "make: ***"), strings.HasPrefix(l, "make["):
			continue
		}
		return l
	}
	return ""
}
