package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

type logCmd struct {
	Range    []string `arg:"" optional:"" name:"revision-range" help:"Show only records on these commits (anything git rev-list accepts, e.g. main..topic)."`
	JSON     bool     `name:"json" help:"One record per line in the seeds' schema, in cycle order, with noted_on where its note is now on another commit than it names."`
	Target   string   `complete:"goals" help:"Only cycles with this target." placeholder:"ID"`
	Result   string   `complete:"results" help:"Only cycles with this result." placeholder:"RESULT"`
	Since    string   `help:"Only cycles recorded since DATE (2026-01-31, RFC 3339, or an age such as 36h, 7d, 2w)." placeholder:"DATE"`
	Limit    *int     `short:"n" aliases:"max-count" help:"Only the last N cycles (after the other filters); -n and --max-count as git log spells them; 0 lists none, as git log's." placeholder:"N"`
	All      bool     `help:"Include the local journal (idle and unchanged cycles)."`
	Markdown bool     `name:"markdown" help:"A Markdown table to paste into a pull request (cycle, target, result, the ruler files it changed, goals before → after, delta, reason, commit, who), with the fitness trajectory."`
	// FromTrailers reads commits instead of notes.
	FromTrailers bool `name:"from-trailers" help:"Rebuild the productive cycles from commit trailers alone (Evolve-Cycle, Evolve-Id, Evolve-Target, Evolve-Result), for clones without the notes; the range defaults to HEAD."`
}

func (logCmd) Help() string {
	return `Without a revision range, lists the whole ledger, including records on commits
this clone has not fetched (marked "not fetched"). With one, lists the records
on those commits. The table shows cycle, result, target, goals passing/total,
the commit, its subject and the record's age; --json prints the records
themselves; one whose note is now on another commit than it names (after a
rebase or an amend, git copied the note to the new commit; canonical_sha still
names the one it was made on) has "noted_on", that commit: a script finds a
record's commit as (.noted_on // .canonical_sha). A note that does not parse is reported on stderr with its commit,
the rest are still listed, and the exit code is 2; with -n, only the notes of
the records listed are reported so (git evolve verify checks every note).

The result column says more than the stored result where a bare one would
mislead: "improved (target unmoved)" is an improved cycle whose target goal
did not move (it still does not pass, or has the result it had) and whose
score did not rise: it passed the gate without doing what it set out to do.
An R after the result marks a cycle that changed files of its ruler (the
tests, test configuration, check scripts or goals file that judge it),
whether a person accepted the change or not: git evolve show N lists them,
with their diffs. --result and --json read the stored result; --markdown
has a ruler column naming the files.

A field longer than its column (a target over 40 characters, a subject
over 60, who recorded it, a reason) is cut, its last character "…":
git evolve show N prints the record whole.`
}

// limit is how many of the last cycles -n asks for, 0 for every one (-n
// not given). -n 0 lists none, as git log's: Run and fromTrailers return
// before they list, once they have read the range.
func (c *logCmd) limit() int {
	if c.Limit == nil {
		return 0
	}
	return max(*c.Limit, 0)
}

// none says -n 0 was given: no cycle is listed.
func (c *logCmd) none() bool { return c.Limit != nil && *c.Limit == 0 }

func (c *logCmd) Run(e *env) error {
	if c.Result != "" && !ledger.ValidResult(c.Result) {
		return usagef("--result: %q is not one of %s", c.Result, strings.Join(ledger.Results, ", "))
	}
	if c.Limit != nil && *c.Limit < 0 {
		return usagef("--limit: must not be negative")
	}
	limit := c.limit()
	defer e.page()()
	now := e.now()
	var since time.Time
	if c.Since != "" {
		t, ok := parseSince(c.Since, now)
		if !ok {
			return usagef("--since: cannot read %q as a date or an age", c.Since)
		}
		since = t
	}
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	if c.FromTrailers {
		if c.All {
			return usagef("--all reads the journal: it cannot be combined with --from-trailers")
		}
		return c.fromTrailers(e, l.Repo(), now, since)
	}
	// No presence lookup: the table and the markdown read each row's commit
	// for its subject, which says when it is not here.
	opts := store.ListOptions{Journal: c.All}
	if len(c.Range) > 0 {
		if c.All {
			return usagef("--all lists the whole ledger: it cannot be combined with a revision range")
		}
		commits, err := l.Repo().RevList(c.Range...)
		if err != nil {
			return usagef("%v", err)
		}
		opts.Commits = commits
		if opts.Commits == nil {
			opts.Commits = []gitstore.Hash{}
		}
	}
	if c.none() {
		return nil // as git log -n 0, once the range is read: nothing
	}
	keep := func(s *ledger.Summary) bool {
		if c.Target != "" && string(s.Target) != c.Target || c.Result != "" && string(s.Result) != c.Result {
			return false
		}
		if !since.IsZero() {
			t, err := time.Parse(time.RFC3339, string(s.Timestamp))
			if err != nil || t.Before(since) {
				return false
			}
		}
		return true
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	var errs []*store.NoteError
	if c.JSON && limit > 0 {
		// The last few, from the end of the saved view.
		list, err := l.Entries(store.ListOptions{Journal: opts.Journal, Commits: opts.Commits}, keep, limit)
		if err != nil {
			return err
		}
		for _, en := range list.Entries {
			writeNotedOn(w, en.Record.Marshal(), en.Commit)
		}
		errs = list.Errors
	} else if c.JSON {
		lines, lerrs, err := l.Lines(opts, keep)
		if err != nil {
			return err
		}
		if limit > 0 && len(lines) > limit {
			lines = lines[len(lines)-limit:]
		}
		for _, ln := range lines {
			writeNotedOn(w, ln.Text, ln.Commit)
		}
		errs = lerrs
	} else {
		// From the saved view: only the rows shown are parsed and looked up;
		// the table reads only the fields it shows.
		opts.Table = !c.Markdown
		if limit == 0 {
			// A whole ledger's rows are many small allocations on top of
			// the view: collected more often, its peak memory is about 30%
			// lower at 100,000 records, and the time the same, since fewer
			// fresh pages are faulted in (docs/benchmarks.md).
			debug.SetGCPercent(25)
		}
		list, err := l.Entries(opts, keep, limit)
		if err != nil {
			return err
		}
		entries := list.Entries
		if c.Markdown {
			err = printMarkdown(w, l.Repo(), entries)
		} else {
			err = printTable(w, l.Repo(), entries, now, e.color())
		}
		if err != nil {
			return err
		}
		errs = list.Errors
	}
	if err := w.Flush(); err != nil {
		return err
	}
	noLedgerHint(e, l.Repo())
	return noteErrors(e, errs)
}

// noLedgerHint says, once, how to get the team's ledger into a clone that
// has none (no local ledger, no remote-tracking copy) but has a remote.
func noLedgerHint(e *env, repo *gitstore.Repo) {
	if _, ok, err := repo.RefHash(store.NotesRef); err != nil || ok {
		return
	}
	if copies, err := repo.TrackingNotes("evolve"); err != nil || len(copies) > 0 {
		return
	}
	remote, err := pickRemote(repo, "")
	if err != nil {
		return // no remote: nobody to fetch a ledger from
	}
	fmt.Fprintf(e.stderr, "git-evolve: hint: no ledger here yet: git evolve init && git evolve sync fetches %s's\n", remote)
}

// noteErrors reports ledger lines that do not parse and returns the
// integrity error that sets the exit code.
func noteErrors(e *env, errs []*store.NoteError) error {
	if len(errs) == 0 {
		return nil
	}
	for _, ne := range errs {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %v\n", ne)
	}
	return withHint(&integrityError{fmt.Sprintf("%d ledger line(s) do not parse; they were skipped, the rest is listed", len(errs))},
		"see a note with 'git notes --ref=evolve show <commit>'")
}

var resultColor = map[string]string{
	ledger.Improved:       "32",
	ledger.Regressed:      "31",
	ledger.Harvested:      "36",
	ledger.Unchanged:      "2",
	ledger.Quarantined:    "33",
	ledger.ContextHandoff: "2",
	"aborted":             "35",
}

func printTable(out io.Writer, repo *gitstore.Repo, entries []store.Entry, now time.Time, color bool) error {
	subjects, err := subjectsOf(repo, entries)
	if err != nil {
		return err
	}
	// Each column as wide as its widest cell (in characters) and two
	// spaces, as text/tabwriter lays them out: the cells are made once to
	// measure the columns and again to be written, so that no copy of the
	// table is kept (at 100,000 cycles it would be most of the memory).
	header := [8]string{"CYCLE", "RESULT", "TARGET", "GOALS", "COMMIT", "SUBJECT", "AGE", "BY"}
	row := func(i int) [8]string {
		en := &entries[i]
		r := &en.Record
		goals := cycletext.Goals(r)
		commit, subject := "-", ""
		switch {
		case en.Journal:
			subject = "(local journal)"
		case anchored(r):
			commit, subject = cycletext.Dash(shortSHA(r.Commit())), "(imported, anchored to "+en.Commit.Short()+")"
		case en.Absent:
			commit, subject = en.Commit.Short(), "(not fetched)"
		case r.Aborted():
			commit, subject = en.Commit.Short(), "(its start) "+subjects[i] // an aborted cycle delivers nothing
		default:
			commit, subject = en.Commit.Short(), subjects[i]
		}
		target := r.Target
		if target == "" && len(r.GoalIDs) > 0 {
			target = strings.Join(r.GoalIDs, ",")
		}
		// Every field may come from a remote's note or a commit message:
		// escaped, so that none of them moves the cursor or breaks a row,
		// and cut to its column's width, so that none pads every row.
		result := termCell(cycletext.Listed(r), cycletext.ResultWidth)
		if changedRuler(r) {
			result += " R"
		}
		return [8]string{strconv.Itoa(r.Cycle), result, cycletext.Dash(termCell(target, cycletext.TargetWidth)), goals, commit,
			termCell(subject, cycletext.SubjectWidth), age(r.Timestamp, now), cycletext.Dash(termCell(recordedBy(r), cycletext.ByWidth))}
	}
	var width [7]int
	measure := func(cells *[8]string) {
		for c := range width {
			width[c] = max(width[c], utf8.RuneCountInString(cells[c]))
		}
	}
	measure(&header)
	for i := range entries {
		cells := row(i)
		measure(&cells)
	}
	w := bufio.NewWriter(out)
	spaces := strings.Repeat(" ", slices.Max(width[:])+2)
	write := func(cells *[8]string, colored bool) {
		for c := range width {
			cell := cells[c]
			word, rest, _ := strings.Cut(cell, " ") // the result, then what is said of it
			if code, ok := resultColor[word]; ok && c == 1 && colored {
				w.WriteString("\x1b[" + code + "m" + word + "\x1b[0m")
				if rest != "" {
					w.WriteString(" " + rest)
				}
			} else {
				w.WriteString(cell)
			}
			w.WriteString(spaces[:width[c]+2-utf8.RuneCountInString(cell)])
		}
		w.WriteString(cells[7])
		w.WriteByte('\n')
	}
	write(&header, false)
	for i := range entries {
		cells := row(i)
		write(&cells, color)
	}
	return w.Flush()
}

// subjectsOf reads the subject of the commit of each entry listed on its
// commit (not journaled, anchored or absent) from git, in one exchange, or
// says why there is none. Nothing is kept: a page asks for what it shows.
func subjectsOf(repo *gitstore.Repo, entries []store.Entry) ([]string, error) {
	out := make([]string, len(entries))
	var hs []gitstore.Hash
	var at []int
	for i, en := range entries {
		if !en.Journal && !anchored(&en.Record) && !en.Absent {
			hs = append(hs, en.Commit)
			at = append(at, i)
		}
	}
	subjects, errs, err := repo.CommitSubjects(hs)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		switch {
		case errs[j] == nil:
			out[i] = subjects[j]
		case errors.Is(errs[j], gitstore.ErrObjectNotFound):
			out[i] = "(not fetched)"
		case errors.Is(errs[j], gitstore.ErrWrongType):
			out[i] = "(not a commit: see git evolve verify)"
		default:
			return nil, errs[j]
		}
	}
	return out, nil
}

// anchored reports whether an imported record is stored on an anchor, not
// on the commit it names (see git evolve import).
func anchored(r *ledger.Record) bool { return string(r.Extra[store.Anchored]) == "true" }

// shortSHA is a record's sha as log lists it: seven digits, escaped (the
// sha of an anchored record is as it was imported).
func shortSHA(s string) string {
	if len(s) > 7 {
		s = s[:7]
	}
	return termLine(s)
}

// termCell is a field in a terminal table: cut to width characters, as
// its escapes show it (termLine).
func termCell(s string, width int) string {
	return cycletext.Truncate(termLine(cycletext.Truncate(s, width)), width)
}

// age is how long before now the timestamp was, in the largest whole unit.
func age(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 14*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dw ago", int(d.Hours()/24/7))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(d.Hours()/24/30))
	}
	return fmt.Sprintf("%dy ago", int(d.Hours()/24/365))
}

// parseSince reads a date (2026-01-31, RFC 3339) or an age (90m, 36h, 7d, 2w).
func parseSince(s string, now time.Time) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		return t, true
	}
	if len(s) >= 2 {
		unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
		if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && unit != 0 && n >= 0 {
			return now.Add(-time.Duration(n) * unit), true
		}
	}
	return time.Time{}, false
}

// fromTrailers lists the cycles the delivered commits (those with an
// Evolve-Result trailer) name in their trailers.
func (c *logCmd) fromTrailers(e *env, repo *gitstore.Repo, now, since time.Time) error {
	limit := c.limit()
	commits, err := repo.TrailerLog("Evolve-Result", []string{"Evolve-Cycle", "Evolve-Id", "Evolve-Target", "Evolve-Result"}, c.Range...)
	if err != nil {
		return usagef("%v", err)
	}
	if c.none() {
		return nil
	}
	var entries []store.Entry
	for _, tc := range commits {
		n, err := strconv.Atoi(tc.Trailers["Evolve-Cycle"])
		if err != nil {
			fmt.Fprintf(e.stderr, "git-evolve: warning: commit %s: Evolve-Cycle %q is not a number\n", tc.Hash.Short(), tc.Trailers["Evolve-Cycle"])
			continue
		}
		r := ledger.Record{V: ledger.SchemaMajor, ID: tc.Trailers["Evolve-Id"], Cycle: n, Target: tc.Trailers["Evolve-Target"],
			Result: tc.Trailers["Evolve-Result"], SHA: tc.Hash.String(), CanonicalSHA: tc.Hash.String()}
		if c.Target != "" && r.Target != c.Target || c.Result != "" && r.Result != c.Result {
			continue
		}
		if !since.IsZero() {
			ci, err := repo.Commit(tc.Hash)
			if err != nil || ci.Committer.When.Before(since) {
				continue
			}
		}
		entries = append(entries, store.Entry{Record: r, Commit: tc.Hash})
	}
	sort.SliceStable(entries, func(i, j int) bool { return ledger.Less(&entries[i].Record, &entries[j].Record) })
	if limit > 0 && len(entries) > limit {
		entries = entries[len(entries)-limit:]
	}
	w := bufio.NewWriter(e.stdout)
	if c.JSON {
		for i := range entries {
			writeNotedOn(w, entries[i].Record.Marshal(), entries[i].Commit)
		}
	} else if err := printTable(w, repo, entries, now, e.color()); err != nil {
		return err
	}
	return w.Flush()
}

// recordedBy says who recorded a record and on which machine ("" when the
// record does not say: imported, journal, older git-evolve).
func recordedBy(r *ledger.Record) string {
	by, host := r.ExtraString("recorded_by"), r.ExtraString("host")
	if name, _, ok := strings.Cut(by, " <"); ok {
		by = name
	}
	switch {
	case by != "" && host != "":
		return by + " (" + host + ")"
	case by != "":
		return by
	}
	return host
}

// printMarkdown writes the cycles as a Markdown table for a pull request,
// and the fitness trajectory after it.
func printMarkdown(w io.Writer, repo *gitstore.Repo, entries []store.Entry) error {
	fmt.Fprintln(w, "| cycle | target | result | ruler | goals | delta | reason | commit | by |")
	fmt.Fprintln(w, "|---:|---|---|---|---|---|---|---|---|")
	var trajectory []string
	subjects, err := subjectsOf(repo, entries)
	if err != nil {
		return err
	}
	for i, en := range entries {
		var before struct {
			Score *float64 `json:"score"`
		}
		if i == 0 && json.Unmarshal(en.Record.Extra["before"], &before) == nil && before.Score != nil {
			trajectory = append(trajectory, strconv.FormatFloat(*before.Score, 'f', 1, 64)) // where it started
		}
		r := &en.Record
		goals, after := "-", ""
		if r.GoalsPassing != nil && r.GoalsTotal != nil {
			goals = fmt.Sprintf("%d/%d", *r.GoalsPassing, *r.GoalsTotal)
			after = goals
			var before struct {
				Passing *int `json:"goals_passing"`
				Total   *int `json:"goals_total"`
			}
			if json.Unmarshal(r.Extra["before"], &before) == nil && before.Passing != nil {
				goals = fmt.Sprintf("%d → %d of %d", *before.Passing, *r.GoalsPassing, *r.GoalsTotal)
			}
		}
		var score float64
		if json.Unmarshal(r.Extra["score"], &score) == nil && r.Extra["score"] != nil {
			after = strconv.FormatFloat(score, 'f', 1, 64)
		}
		if after != "" {
			trajectory = append(trajectory, after)
		}
		delta := "-"
		var d struct{ Files, Insertions, Deletions int }
		if json.Unmarshal(r.Extra["delta"], &d) == nil && r.Extra["delta"] != nil {
			delta = fmt.Sprintf("%d file(s), +%d −%d", d.Files, d.Insertions, d.Deletions)
		}
		// Every field may come from a remote's note or a commit message:
		// escaped, so that it stays text in a pull request.
		commit := "-"
		switch {
		case en.Journal:
			commit = "(local journal)"
		case anchored(r):
			commit = "(imported, anchored to `" + en.Commit.Short() + "`)"
			if c := r.Commit(); c != "" {
				commit = mdSHA(shortSHA(c)) + " " + commit
			}
		case en.Absent:
			commit = "`" + en.Commit.Short() + "` (not fetched)"
		case r.Aborted():
			commit = "`" + en.Commit.Short() + "` (its start) " + escape.Markdown(cycletext.Truncate(subjects[i], cycletext.SubjectWidth))
		default:
			commit = "`" + en.Commit.Short() + "` " + escape.Markdown(cycletext.Truncate(subjects[i], cycletext.SubjectWidth))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Cycle, cycletext.MarkdownCell(r.Target, cycletext.TargetWidth), cycletext.MarkdownCell(cycletext.Listed(r), cycletext.ResultWidth),
			cycletext.MarkdownCell(cycletext.Ruler(ledger.Disclose(r), 3), cycletext.RulerWidth), goals, delta, cycletext.MarkdownCell(cycletext.FailureReason(r), cycletext.ReasonWidth), commit, cycletext.MarkdownCell(recordedBy(r), cycletext.ByWidth))
	}
	if len(trajectory) > 0 {
		fmt.Fprintf(w, "\nFitness after each cycle (score, or goals passing): %s\n", strings.Join(trajectory, " → "))
	}
	return nil
}

// changedRuler says whether a finished cycle changed files of its ruler
// (its record's ruler_changed or ruler_accepted lists one): the table marks
// it with an R.
func changedRuler(r *ledger.Record) bool {
	if r.Extra["ruler_changed"] == nil && r.Extra["ruler_accepted"] == nil {
		return false // most records: nothing decoded on a listing's path
	}
	return len(ledger.Disclose(r).Ruler) > 0
}

// mdSHA is a record's sha as the Markdown table shows it: a code span
// when it is hexadecimal, escaped text otherwise (it is as imported).
func mdSHA(s string) string {
	if s != "" && strings.Trim(s, "0123456789abcdef") == "" {
		return "`" + s + "`"
	}
	return escape.Markdown(s)
}

// writeNotedOn writes a record's canonical line and a newline, with, for a
// record of the ledger whose note is not on the commit it names (after a
// rebase or an amend git copied the note to the new commit; canonical_sha
// still names the one it was made on), "noted_on": the commit whose note
// holds it now. A script finds the commit as (.noted_on // .canonical_sha).
// A line that has a member of that name already (written by another tool)
// has it replaced, or taken out where the record is on its own commit.
func writeNotedOn(w *bufio.Writer, line []byte, commit gitstore.Hash) {
	if bytes.Contains(line, []byte(`"noted_on"`)) {
		if rec, err := ledger.Parse(line); err == nil {
			delete(rec.Extra, "noted_on")
			line = rec.Marshal()
		}
	}
	if commit.IsZero() || len(line) < 2 || line[len(line)-1] != '}' || onItsCommit(line, commit) {
		w.Write(line)
		w.WriteByte('\n')
		return
	}
	w.Write(line[:len(line)-1])
	if len(line) > 2 {
		w.WriteByte(',')
	}
	w.WriteString(`"noted_on":"`)
	w.WriteString(commit.String())
	w.WriteString("\"}\n")
}

// onItsCommit reports whether the record of the canonical line names
// commit: its canonical_sha, else its sha, is commit or an abbreviation of
// it. A canonical line has the record's own members before any other
// tool's, so the first of each name is the record's; no line is parsed.
func onItsCommit(line []byte, commit gitstore.Hash) bool {
	for _, key := range []string{`,"canonical_sha":"`, `,"sha":"`} {
		i := bytes.Index(line, []byte(key))
		if i < 0 {
			continue
		}
		v := line[i+len(key):]
		if j := bytes.IndexByte(v, '"'); j >= 4 {
			return strings.HasPrefix(commit.String(), strings.ToLower(string(v[:j])))
		}
		return false
	}
	return false
}
