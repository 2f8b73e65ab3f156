// Package report is what git evolve report says of a range of commits:
// the cycles whose work the range holds (and the aborted cycles that
// started on it), found in the ledger, and rendered as Markdown for a pull
// request or a job summary, or as one self-contained HTML page (html.go).
// It reads git and the goals file; it prints nothing and writes no file
// but the page it is asked to write. Text read from records is escaped for
// where it goes (escape): a remote's note can say anything.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// ErrNoUpstream is returned by Build when no range is given and the branch
// has no upstream to report against.
var ErrNoUpstream = errors.New("the branch has no upstream to report against")

// ShallowError is a range that cannot be read because the clone is
// shallow (a CI checkout's default): its history is not all here.
type ShallowError struct {
	Err error // what reading the range said
}

func (e *ShallowError) Error() string {
	return fmt.Sprintf("this clone is shallow, so the range's history is not all here (%v)", e.Err)
}

// Report is the cycles of a range, in cycle order.
type Report struct {
	Range string // the range reported on: as given, or <merge base>..HEAD
	Rows  []Row
	repo  *gitstore.Repo
	link  func(sha string) string // a commit's web address on a known forge, or nil
}

// Row is a cycle of the report: its record, and the commit its note is on
// ("" for a journal line).
type Row struct {
	Record ledger.Record
	Commit string
}

// Build finds the cycles of rng in the ledger l: the commits rng names as
// git rev-list takes them, or, when rng is "", the branch against its
// upstream's merge base. It returns ErrNoUpstream when rng is "" and the
// branch has no upstream, and a *ShallowError when the range cannot be read
// in a shallow clone.
func Build(l *store.Ledger, rng string) (*Report, error) {
	repo := l.Repo()
	head, err := repo.HeadBranch()
	if err != nil {
		return nil, err
	}
	u, err := repo.UpstreamOf(head)
	if err != nil {
		return nil, err
	}
	rng, base, err := reportRange(repo, rng, u)
	if err != nil {
		return nil, err
	}
	commits, boundary, err := repo.RevListBoundary(rng)
	if err != nil {
		return nil, shallowHint(repo, fmt.Errorf("the range %s: %w", rng, err))
	}
	if len(commits) == 0 && base != "" {
		// The branch has no commit of its own yet: its cycles, all
		// aborted, started where it stands.
		h, err := gitstore.ParseHash(base)
		if err != nil {
			return nil, err
		}
		boundary = []gitstore.Hash{h}
	}
	recs, err := reportRows(l, commits, boundary, head)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Record.Cycle < recs[j].Record.Cycle })
	return &Report{Range: rng, Rows: recs, repo: repo, link: forgeLinks(repo, u.Remote)}, nil
}

// Markdown writes the report as Markdown: the net fitness, the continuous
// goals, the cycles.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	writeReport(&b, r.Range, r.Rows, r.link)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes the report as one self-contained HTML page to the file
// at path, replacing it whole (a reader never sees a part).
func (r *Report) WriteHTML(path string) error {
	var b bytes.Buffer
	if err := writeHTML(&b, r.Range, r.Rows, r.goalIDs(), r.link); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// goalIDs are the goals the heatmap has a row for: the goals file's, in
// its order, then any other a record names.
func (r *Report) goalIDs() []string {
	var ids []string
	seen := map[string]bool{}
	if top, err := r.repo.WorkTree(); err == nil {
		p, _ := goals.Locate(top)
		if data, err := os.ReadFile(p); err == nil {
			if f, err := goals.Parse(filepath.Base(p), data); err == nil {
				for _, g := range f.Goals {
					ids, seen[g.ID] = append(ids, g.ID), true
				}
			}
		}
	}
	for _, row := range r.Rows {
		for _, key := range []string{"failing", "timed_out", "cannot_run"} {
			var names []string
			_ = json.Unmarshal(row.Record.Extra[key], &names)
			for _, n := range names {
				if !seen[n] {
					ids, seen[n] = append(ids, n), true
				}
			}
		}
	}
	return ids
}

// reportRows are the records of the cycles a range holds: those on its
// commits, and the aborted cycles (a crashed or hung agent: recorded on the
// commit they started from) that started on them or on the range's
// boundary, where its first cycle started. At the boundary, which other
// lines of work share (the merge base with main), an aborted cycle is the
// range's when it started on a branch the range's cycles name, or on head
// (the branch HEAD names, "" when detached); when nothing names a branch,
// every one is. Aborted cycles an older git-evolve kept in this clone's
// journal are read from there.
func reportRows(l *store.Ledger, commits, boundary []gitstore.Hash, head string) ([]Row, error) {
	if len(commits) == 0 && len(boundary) == 0 {
		return nil, nil
	}
	edge := map[gitstore.Hash]bool{}
	for _, h := range boundary {
		edge[h] = true
	}
	list, err := l.List(store.ListOptions{Commits: append(slices.Clone(commits), boundary...)})
	if err != nil {
		return nil, err
	}
	journal, err := l.JournalRecords()
	if err != nil {
		return nil, err
	}
	branches := map[string]bool{}
	if head != "" {
		branches[head] = true
	}
	for _, en := range list.Entries {
		if !edge[en.Commit] {
			if b := en.Record.ExtraString("branch"); b != "" {
				branches[b] = true
			}
		}
	}
	ours := func(r ledger.Record) bool {
		b := r.ExtraString("branch")
		return len(branches) == 0 || b == "" || branches[b]
	}
	var recs []Row
	seen := map[string]bool{}
	for _, en := range list.Entries {
		aborted := en.Record.Aborted()
		if edge[en.Commit] && (!aborted || !ours(en.Record)) {
			continue // what the range was based on, or another line's
		}
		if en.Record.ID != "" {
			seen[en.Record.ID] = true
		}
		recs = append(recs, Row{Record: en.Record, Commit: en.Commit.String()})
	}
	in, at := map[string]bool{}, map[string]bool{}
	for _, h := range commits {
		in[h.String()] = true
	}
	for _, h := range boundary {
		at[h.String()] = true
	}
	for _, r := range journal {
		if r.Aborted() && !seen[r.ID] && (in[r.CycleStartSHA] || at[r.CycleStartSHA] && ours(r)) {
			recs = append(recs, Row{Record: r})
		}
	}
	return recs, nil
}

// reportRange is the range to report on: the one given, else the branch
// against its upstream u's merge base (base is then that commit).
func reportRange(repo *gitstore.Repo, given string, u gitstore.Upstream) (rng, base string, err error) {
	if given != "" {
		return given, "", nil
	}
	if u.Ref == "" {
		return "", "", ErrNoUpstream
	}
	hs, err := repo.ResolveCommits("HEAD", u.Ref)
	if err != nil {
		return "", "", shallowHint(repo, err)
	}
	mb, ok, err := repo.MergeBase(hs[0], hs[1])
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", shallowHint(repo, fmt.Errorf("the branch and %s have no common commit here", u.Ref))
	}
	return mb.String() + "..HEAD", mb.String(), nil
}

// shallowHint is err, or a *ShallowError with it when the clone is
// shallow.
func shallowHint(repo *gitstore.Repo, err error) error {
	if shallow, serr := repo.IsShallow(); serr == nil && shallow {
		return &ShallowError{Err: err}
	}
	return err
}

var forgeURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:https://|ssh://git@|git@)(github\.com|gitlab\.com|codeberg\.org|bitbucket\.org)[:/]([A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+?)(?:\.git)?/?$`)
})

// forgeLinks returns a commit's web address on the known forge remote
// (the upstream's; "" for origin) is on, or nil.
func forgeLinks(repo *gitstore.Repo, remote string) func(sha string) string {
	if remote == "" {
		remote = "origin"
	}
	urls, err := repo.ConfigGetAll("remote." + remote + ".url")
	if err != nil || len(urls) == 0 {
		return nil
	}
	m := forgeURL().FindStringSubmatch(urls[len(urls)-1])
	if m == nil {
		return nil
	}
	host, path := m[1], strings.TrimSuffix(m[2], ".git")
	return func(sha string) string {
		switch host {
		case "gitlab.com":
			return "https://" + host + "/" + path + "/-/commit/" + sha
		case "bitbucket.org":
			return "https://" + host + "/" + path + "/commits/" + sha
		}
		return "https://" + host + "/" + path + "/commit/" + sha
	}
}

type fitnessPoint struct {
	Passing *int     `json:"goals_passing"`
	Total   *int     `json:"goals_total"`
	Score   *float64 `json:"score"`
}

type goalValue struct {
	GoalID    string   `json:"goal_id"`
	Before    *float64 `json:"before"`
	After     *float64 `json:"after"`
	Threshold *float64 `json:"threshold"`
	Direction string   `json:"direction"`
	Meets     *bool    `json:"meets"`
}

// writeReport writes the Markdown: the net fitness, the continuous goals,
// the cycles.
func writeReport(w io.Writer, rng string, rows []Row, link func(string) string) {
	fmt.Fprintf(w, "## Evolve cycles\n\n")
	if len(rows) == 0 {
		fmt.Fprintf(w, "No cycle in %s.\n", escape.Code(rng))
		return
	}
	// Net fitness: as the first cycle found it, and after the last one
	// whose work stayed.
	var before, after fitnessPoint
	haveBefore, haveAfter := false, false
	values := map[string]*goalValue{}
	var order []string
	tally := map[string]int{}
	unmoved := 0
	for _, row := range rows {
		r := &row.Record
		tally[cycletext.Result(r)]++
		if r.TargetUnmoved() {
			unmoved++
		}
		if !haveBefore && json.Unmarshal(r.Extra["before"], &before) == nil && before.Passing != nil {
			haveBefore = true
		}
		if row.Record.Aborted() || (r.Result != ledger.Improved && r.Result != ledger.Harvested) {
			continue
		}
		if r.GoalsPassing != nil && r.GoalsTotal != nil {
			after = fitnessPoint{Passing: r.GoalsPassing, Total: r.GoalsTotal}
			var score float64
			if r.Extra["score"] != nil && json.Unmarshal(r.Extra["score"], &score) == nil {
				after.Score = &score
			}
			haveAfter = true
		}
		var vs []goalValue
		if json.Unmarshal(r.Extra["values"], &vs) == nil {
			for _, v := range vs {
				v := v
				if old, ok := values[v.GoalID]; ok {
					v.Before = old.Before // the range's start
				} else {
					order = append(order, v.GoalID)
				}
				values[v.GoalID] = &v
			}
		}
	}
	switch {
	case haveBefore && haveAfter:
		fmt.Fprintf(w, "**Fitness:** %s → %s\n\n", fitnessText(before), fitnessText(after))
	case haveBefore:
		fmt.Fprintf(w, "**Fitness:** %s; no cycle's work stayed\n\n", fitnessText(before))
	}
	var counts []string
	for _, k := range []string{"improved", "harvested", "regressed", "unchanged", "aborted", "quarantined"} {
		if n := tally[k]; n > 0 {
			c := fmt.Sprintf("%d %s", n, k)
			if k == ledger.Improved && unmoved > 0 {
				c += fmt.Sprintf(" (%d with the target unmoved)", unmoved)
			}
			counts = append(counts, c)
		}
	}
	fmt.Fprintf(w, "%d cycle(s) in %s: %s.\n\n", len(rows), escape.Code(rng), strings.Join(counts, ", "))
	if len(order) > 0 {
		fmt.Fprintf(w, "| goal | before | after | threshold | meets |\n|---|---:|---:|---:|---|\n")
		for _, id := range order {
			v := values[id]
			meets := "-"
			if v.Meets != nil {
				meets = map[bool]string{true: "yes", false: "**no**"}[*v.Meets]
			}
			thr := cycletext.Number(v.Threshold)
			if v.Direction != "" && v.Threshold != nil {
				thr += " (" + v.Direction + ")"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", cycletext.MarkdownCell(id, cycletext.TargetWidth), cycletext.Number(v.Before), cycletext.Number(v.After), cycletext.MarkdownCell(thr, cycletext.ResultWidth), meets)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| cycle | result | target | goals | commit | reason | ruler |\n|---:|---|---|---|---|---|---|\n")
	var notes []string
	for _, row := range rows {
		r := &row.Record
		result, reason, goals := cycletext.Listed(r), cycletext.FailureReason(r), cycletext.Goals(r)
		ruler := rulerCell(r)
		for _, n := range cycleNotes(r) {
			notes = append(notes, fmt.Sprintf("- Cycle %d: %s", r.Cycle, escape.Markdown(cycletext.Truncate(n, noteWidth))))
		}
		commit := "-"
		if row.Commit != "" {
			commit = "`" + row.Commit[:7] + "`"
			if link != nil {
				commit = "[" + commit + "](" + link(row.Commit) + ")"
			}
			if row.Record.Aborted() {
				commit += " (start)" // what it began from: an aborted cycle delivers nothing
			}
		} else if row.Record.Aborted() {
			commit = "(local journal)"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", r.Cycle, cycletext.MarkdownCell(result, cycletext.ResultWidth), cycletext.MarkdownCell(r.Target, cycletext.TargetWidth), goals, commit, cycletext.MarkdownCell(reason, cycletext.ReasonWidth), cycletext.MarkdownCell(ruler, cycletext.RulerWidth))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}

// noteWidth is how long a note below the report's table may be.
const noteWidth = 300

// rulerCell is the report's ruler column: how many ruler files the cycle
// changed, and the first five ("" for none). Not escaped.
func rulerCell(r *ledger.Record) string {
	d := ledger.Disclose(r)
	if len(d.Ruler) == 0 {
		return ""
	}
	return fmt.Sprintf("%d: %s", len(d.Ruler), cycletext.Ruler(d, 5))
}

// cycleNotes are what the report says of a cycle below its table: each
// ruler change a person accepted (who, why), the tests that vanished. Not
// escaped.
func cycleNotes(r *ledger.Record) []string {
	var out []string
	for _, f := range ledger.Disclose(r).Ruler {
		if a := f.Accepted; a != nil {
			out = append(out, "ruler change accepted: "+f.String()+", by "+a.By+": "+a.Why)
		}
	}
	var failures []struct{ What, Reason, Excerpt string }
	_ = json.Unmarshal(r.Extra["failures"], &failures)
	for _, f := range failures {
		if f.What == "census" {
			names := strings.Join(strings.Split(strings.TrimSpace(f.Excerpt), "\n"), ", ")
			out = append(out, "tests vanished: "+cycletext.Truncate(f.Reason+": "+names, noteWidth))
		}
	}
	return out
}

func fitnessText(p fitnessPoint) string {
	s := ""
	if p.Score != nil {
		s = "score " + strconv.FormatFloat(*p.Score, 'f', 1, 64) + ", "
	}
	if p.Passing != nil && p.Total != nil {
		s += fmt.Sprintf("%d of %d goals passing", *p.Passing, *p.Total)
	}
	return strings.TrimSuffix(s, ", ")
}
