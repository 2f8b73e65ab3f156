package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/loop"
)

type reportCmd struct {
	Range  string `arg:"" optional:"" help:"The commits to report on, as git rev-list takes them (default: the branch against its upstream's merge base)." placeholder:"RANGE"`
	GitHub bool   `name:"github" help:"Append the report to the file $GITHUB_STEP_SUMMARY names (a GitHub Actions job summary) instead of printing it."`
	HTML   string `name:"html" help:"Write one self-contained HTML page instead: the score over the cycles (an SVG chart, regressed cycles marked), a goal × cycle heatmap, the continuous goals' values against their thresholds, the cycle table." placeholder:"FILE"`
}

func (reportCmd) Help() string {
	return `Markdown for a pull request: the range's net fitness before → after (the
score, the goals passing, each continuous goal against its threshold), then one
row per cycle whose work is in the range, with the reason of every regressed or
aborted one, its commit linked when the remote is GitHub, GitLab, Codeberg or
Bitbucket. An aborted cycle (a crashed or hung agent, git evolve cycle abort)
is recorded on the commit it started from: it is listed when that commit is in
the range or is where the range starts.

In CI, the clone needs the whole history and the notes: actions/checkout with
fetch-depth: 0, then git fetch origin 'refs/notes/*:refs/notes/*' (see
docs/ci.md). A shallow clone is said so, with what to do.`
}

func (c *reportCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	repo := l.Repo()
	head, err := repo.HeadBranch()
	if err != nil {
		return err
	}
	u, err := repo.UpstreamOf(head)
	if err != nil {
		return err
	}
	rng, base, err := reportRange(repo, c.Range, u)
	if err != nil {
		return err
	}
	commits, boundary, err := repo.RevListBoundary(rng)
	if err != nil {
		return shallowHint(repo, fmt.Errorf("the range %s: %w", rng, err))
	}
	if len(commits) == 0 && base != "" {
		// The branch has no commit of its own yet: its cycles, all
		// aborted, started where it stands.
		h, err := gitstore.ParseHash(base)
		if err != nil {
			return err
		}
		boundary = []gitstore.Hash{h}
	}
	recs, err := reportRows(l, commits, boundary, head)
	if err != nil {
		return err
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].rec.Cycle < recs[j].rec.Cycle })
	links := forgeLinks(repo, u.Remote)
	if c.HTML != "" {
		return writeHTMLFile(e, e.path(c.HTML), rng, recs, reportGoals(e, recs), links)
	}
	var b strings.Builder
	writeReport(&b, rng, recs, links)
	if c.GitHub {
		path := e.getenv("GITHUB_STEP_SUMMARY")
		if path == "" {
			return usagef("--github: GITHUB_STEP_SUMMARY is not set (it is, in a GitHub Actions job)")
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(f, b.String()+"\n"); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	w := bufio.NewWriter(e.stdout)
	w.WriteString(b.String())
	return w.Flush()
}

// reportGoals are the goals the heatmap has a row for: the goals file's,
// in its order, then any other a record names.
func reportGoals(e *env, rows []reportRow) []string {
	var ids []string
	seen := map[string]bool{}
	if repo, err := e.Repo(); err == nil {
		if top, err := repo.WorkTree(); err == nil {
			p, _ := goals.Locate(top)
			if data, err := os.ReadFile(p); err == nil {
				if f, err := goals.Parse(filepath.Base(p), data); err == nil {
					for _, g := range f.Goals {
						ids, seen[g.ID] = append(ids, g.ID), true
					}
				}
			}
		}
	}
	for _, row := range rows {
		for _, key := range []string{"failing", "timed_out", "cannot_run"} {
			var names []string
			_ = json.Unmarshal(row.rec.Extra[key], &names)
			for _, n := range names {
				if !seen[n] {
					ids, seen[n] = append(ids, n), true
				}
			}
		}
	}
	return ids
}

func writeHTMLFile(e *env, path, rng string, rows []reportRow, ids []string, link func(string) string) error {
	var b bytes.Buffer
	if err := writeHTML(&b, rng, rows, ids, link); err != nil {
		return err
	}
	if err := loop.WriteAtomic(path, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "git-evolve: wrote %s (%d cycle(s))\n", path, len(rows))
	return nil
}

// reportRow is a cycle of the report: its record, and the commit its
// note is on ("" for a journal line).
type reportRow struct {
	rec    ledger.Record
	commit string
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
func reportRows(l *cycle.Ledger, commits, boundary []gitstore.Hash, head string) ([]reportRow, error) {
	if len(commits) == 0 && len(boundary) == 0 {
		return nil, nil
	}
	edge := map[gitstore.Hash]bool{}
	for _, h := range boundary {
		edge[h] = true
	}
	list, err := l.List(cycle.ListOptions{Commits: append(slices.Clone(commits), boundary...)})
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
	var recs []reportRow
	seen := map[string]bool{}
	for _, en := range list.Entries {
		aborted := en.Record.Aborted()
		if edge[en.Commit] && (!aborted || !ours(en.Record)) {
			continue // what the range was based on, or another line's
		}
		if en.Record.ID != "" {
			seen[en.Record.ID] = true
		}
		recs = append(recs, reportRow{rec: en.Record, commit: en.Commit.String()})
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
			recs = append(recs, reportRow{rec: r})
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
		return "", "", &usageError{msg: "the branch has no upstream to report against", hint: "name the range: git evolve report main..HEAD"}
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

// shallowHint says what to do when a range cannot be read in a shallow
// clone (a CI checkout's default).
func shallowHint(repo *gitstore.Repo, err error) error {
	if shallow, serr := repo.IsShallow(); serr == nil && shallow {
		return withHint(fmt.Errorf("this clone is shallow, so the range's history is not all here (%v)", err),
			"fetch the whole history and the notes: actions/checkout with fetch-depth: 0, or git fetch --unshallow, then git fetch origin 'refs/notes/*:refs/notes/*' (docs/ci.md)")
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
func writeReport(w io.Writer, rng string, rows []reportRow, link func(string) string) {
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
		r := &row.rec
		tally[cycletext.Result(r)]++
		if r.TargetUnmoved() {
			unmoved++
		}
		if !haveBefore && json.Unmarshal(r.Extra["before"], &before) == nil && before.Passing != nil {
			haveBefore = true
		}
		if row.rec.Aborted() || (r.Result != ledger.Improved && r.Result != ledger.Harvested) {
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
		r := &row.rec
		result, reason, goals := cycletext.Listed(r), cycletext.FailureReason(r), cycletext.Goals(r)
		ruler := rulerCell(r)
		for _, n := range cycleNotes(r) {
			notes = append(notes, fmt.Sprintf("- Cycle %d: %s", r.Cycle, escape.Markdown(cycletext.Truncate(n, noteWidth))))
		}
		commit := "-"
		if row.commit != "" {
			commit = "`" + row.commit[:7] + "`"
			if link != nil {
				commit = "[" + commit + "](" + link(row.commit) + ")"
			}
			if row.rec.Aborted() {
				commit += " (start)" // what it began from: an aborted cycle delivers nothing
			}
		} else if row.rec.Aborted() {
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
	d := cycle.Disclose(r)
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
	for _, f := range cycle.Disclose(r).Ruler {
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
