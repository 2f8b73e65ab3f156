package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/cycletext"
	"github.com/git-evolve/git-evolve/internal/rulerdiff"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/redact"
)

type showCmd struct {
	Query       string `complete:"cycles" arg:"" name:"cycle|commit" help:"A cycle number, or a revision naming a commit."`
	JSON        bool   `name:"json" help:"One JSON object per record: {commit, journal, present, record}, and ruler_diff when the cycle changed ruler files."`
	Transcript  bool   `help:"Print the transcript of the cycle's agent (what it printed, kept by git evolve run) instead of the record."`
	NoRulerDiff bool   `name:"no-ruler-diff" help:"Leave out the diffs of the ruler files the cycle changed."`
}

func (showCmd) Help() string {
	return `A number is a cycle number when the ledger or the journal has that cycle;
anything else (or a number that is no cycle) is read as a revision. Shows every
field of each matching record, the trace included, and the commit it sits on.

A cycle that git evolve cycle finish judged lists the files it changed ("+"
added, "-" removed, "M" changed), apart from them the files of its ruler it
changed (the tests, test configuration, check scripts and goals file that
judge it), each a person accepted with who and why, and the tests that passed
at its start and at its finish. Then the diff of each ruler file, from the
cycle's start to its work as judged: the delivered commit of an improved
cycle, the saved work of a regressed one (which stays in the clone that
judged it). A binary file is said by its sizes, and so is one over 1 MiB; a
file's diff stops after 200 lines, all of them after 1000. --no-ruler-diff
leaves the diffs out; --json gives them as ruler_diff: {from, to, saved,
missing, files: [{change, accepted, summary, lines, more}]}.

--transcript prints what the agent of the cycle printed, as git evolve run
kept it (refs/evolve/transcripts/<cycle id>: the end of its output, terminal
escapes removed, secrets replaced by [REDACTED]), from this clone or, when
evolve.shareTranscripts brought it, from a remote's copy. What show prints
of a failure's output and of a transcript is redacted again, for a record
an older git-evolve wrote.`
}

func (c *showCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	defer e.page()()
	list, err := l.Show(c.Query)
	if err != nil {
		if list != nil && len(list.Errors) > 0 {
			// The cycle may be in a line that does not parse: say so.
			noteErrors(e, list.Errors)
			return &integrityError{fmt.Sprintf("%s; %d ledger line(s) do not parse and may hold it",
				strings.TrimPrefix(err.Error(), store.ErrNotFound.Error()+": "), len(list.Errors))}
		}
		noLedgerHint(e, l.Repo())
		return notFound(err)
	}
	if c.Transcript {
		return showTranscripts(e, l.Repo(), list.Entries)
	}
	w := bufio.NewWriter(e.stdout)
	for i, en := range list.Entries {
		var rd *rulerdiff.Diffs
		if !c.NoRulerDiff && !en.Journal {
			rd = rulerdiff.Read(l.Repo(), &en.Record)
		}
		if c.JSON {
			writeShowJSON(w, en, rd)
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeShow(w, l.Repo(), en, rd); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return noteErrors(e, list.Errors)
}

// showTranscripts prints the transcripts the records name.
func showTranscripts(e *env, repo *gitstore.Repo, entries []store.Entry) error {
	w := bufio.NewWriter(e.stdout)
	found := 0
	for _, en := range entries {
		r := &en.Record
		name := r.ExtraString("transcript")
		if name == "" {
			continue
		}
		data, err := readTranscript(repo, r.ID, name)
		if err != nil {
			fmt.Fprintf(e.stderr, "git-evolve: warning: cycle %d's transcript %s: %v\n", r.Cycle, termSafe(name), err)
			continue
		}
		found++
		if len(entries) > 1 {
			fmt.Fprintf(w, "== cycle %d (%s) ==\n", r.Cycle, termSafe(r.Result))
		}
		// From a ref another clone (or an older git-evolve) may have
		// written: cleaned and redacted again.
		w.WriteString(redact.String(goals.CleanText(string(data))))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			w.WriteString("\n")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if found == 0 {
		return withHint(errors.New("no transcript of this cycle is here"),
			"git evolve run keeps the transcripts of the cycles it drives; another clone's come with sync when evolve.shareTranscripts is true")
	}
	return nil
}

// readTranscript reads the transcript blob a record names: the one this
// clone keeps, else any remote's copy of it (under the same id).
func readTranscript(repo *gitstore.Repo, id, name string) ([]byte, error) {
	want, err := gitstore.ParseHash(name)
	if err != nil {
		return nil, fmt.Errorf("not an object name")
	}
	refs, err := repo.ListRefsUnder(cycle.TranscriptsPrefix, "refs/evolve/remotes/")
	if err != nil {
		return nil, err
	}
	for ref, h := range refs {
		if h == want && strings.HasSuffix(ref, "/transcripts/"+id) {
			return repo.ReadBlob(h)
		}
	}
	return nil, fmt.Errorf("not in this clone (sync brings it when evolve.shareTranscripts is true)")
}

func writeShowJSON(w io.Writer, en store.Entry, rd *rulerdiff.Diffs) {
	commit := ""
	if !en.Journal {
		commit = en.Commit.String()
	}
	diffs := ""
	if rd != nil {
		diffs = `,"ruler_diff":` + string(mustJSON(rd))
	}
	fmt.Fprintf(w, `{"commit":%s,"journal":%t,"present":%t,"record":%s%s}`+"\n",
		mustJSON(commit), en.Journal, !en.Journal && !en.Absent, en.Record.Marshal(), diffs)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func writeShow(w io.Writer, repo *gitstore.Repo, en store.Entry, rd *rulerdiff.Diffs) error {
	r := &en.Record
	fmt.Fprintf(w, "cycle %d  %s  %s\n", r.Cycle, termLine(cycletext.Listed(r)), termLine(cycletext.Dash(r.Target)))
	where := "commit"
	if anchored(r) {
		where = "anchored to" // imported: the commit it names is not here (its sha below)
	}
	switch {
	case en.Journal:
		fmt.Fprintf(w, "%-16s %s\n", "stored", "local journal (not shared)")
	case en.Absent:
		fmt.Fprintf(w, "%-16s %s (not fetched into this clone)\n", where, en.Commit)
	default:
		ci, err := repo.Commit(en.Commit)
		switch {
		case err == nil:
			fmt.Fprintf(w, "%-16s %s %s\n", where, en.Commit, termLine(ci.Subject()))
		case errors.Is(err, gitstore.ErrObjectNotFound):
			fmt.Fprintf(w, "%-16s %s (not fetched into this clone)\n", where, en.Commit)
		case errors.Is(err, gitstore.ErrWrongType):
			fmt.Fprintf(w, "%-16s %s (not a commit: see git evolve verify)\n", where, en.Commit)
		default:
			return err
		}
	}
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-16s %s\n", k, v)
		}
	}
	field := func(prefix string, width int, k, v string) {
		if v == "" {
			fmt.Fprintf(w, "%s%s\n", prefix, k)
			return
		}
		fmt.Fprintf(w, "%s%-*s %s\n", prefix, width, k, indent(v, len(prefix)+width+1))
	}
	kv("id", r.ID)
	kv("timestamp", r.Timestamp)
	if r.GoalsPassing != nil && r.GoalsTotal != nil {
		kv("goals", fmt.Sprintf("%d/%d passing", *r.GoalsPassing, *r.GoalsTotal))
	}
	kv("canonical_sha", r.CanonicalSHA)
	if r.SHA != r.CanonicalSHA {
		kv("sha", r.SHA)
	}
	kv("cycle_start_sha", r.CycleStartSHA)
	kv("log_sha", r.LogSHA)
	if r.QualityScore != nil {
		kv("quality_score", fmt.Sprint(*r.QualityScore))
	}
	if r.IdleStreak != nil {
		kv("idle_streak", fmt.Sprint(*r.IdleStreak))
	}
	if r.Parallel {
		kv("parallel", "true")
	}
	kv("goal_ids", strings.Join(r.GoalIDs, ", "))
	kv("gate", termLine(r.GateText()))
	kv("schema", fmt.Sprintf("v%d", r.V))
	var failures []gate.Failure
	if json.Unmarshal(r.Extra["failures"], &failures) != nil {
		failures = nil // not in this shape: shown as it is, below
	}
	disclosed := disclosedFields(r)
	for _, k := range sortedKeys(r.Extra) {
		if k == "failures" && failures != nil || disclosed[k] {
			continue
		}
		field("", 16, k, termSafe(string(r.Extra[k])))
	}
	if saved, err := gitstore.ParseHash(r.ExtraString("saved")); err == nil && !en.Journal {
		kv("get it back", saveHowTo(repo, saved))
	}
	writeDisclosure(w, r, disclosed)
	// Why the gate failed, in the failure's own words.
	for _, f := range failures {
		what := "goal " + f.Name
		switch f.What {
		case "gate":
			what = "gate `" + f.Name + "`"
		case "hook":
			what = "the " + f.Name + " hook"
		case "hypothesis", "scope":
			what = f.Name
		}
		fmt.Fprintf(w, "%-16s %s: %s\n", "failure", termLine(what), termLine(f.Reason))
		writeExcerpt(w, f.Excerpt)
	}
	if r.Trace != nil {
		fmt.Fprintln(w, "trace:")
		for _, k := range ledger.TraceFields {
			if v, ok := r.Trace.Fields[k]; ok {
				field("  ", 20, k, v)
			}
		}
		for _, k := range sortedKeys(r.Trace.Extra) {
			field("  ", 20, k, string(r.Trace.Extra[k]))
		}
		if missing := r.Trace.Missing(); len(missing) > 0 {
			fmt.Fprintf(w, "  incomplete: no %s\n", strings.Join(missing, ", "))
		}
	}
	if rd != nil {
		writeRulerDiffs(w, rd, r.ID)
	}
	return nil
}

// disclosedFields are the fields of what a cycle changed (ledger.Disclose)
// that a record holds in the shape cycle finish writes: show lists them
// in words; a field in another shape is shown as it is.
func disclosedFields(r *ledger.Record) map[string]bool {
	out := map[string]bool{}
	for _, k := range []string{"changed", "ruler_changed"} {
		var list []string
		if raw := r.Extra[k]; string(raw) == "null" || json.Unmarshal(raw, &list) != nil {
			continue
		}
		out[k] = true
		for _, c := range list {
			if _, _, ok := ledger.ParseChange(c); !ok {
				out[k] = false
			}
		}
	}
	var accepted []ledger.Accepted
	if raw := r.Extra["ruler_accepted"]; string(raw) != "null" && json.Unmarshal(raw, &accepted) == nil {
		out["ruler_accepted"] = true
		for _, a := range accepted {
			if a.Path == "" {
				out["ruler_accepted"] = false
			}
		}
	}
	var tests ledger.CensusCount
	if raw := r.Extra["tests_passed"]; string(raw) != "null" && json.Unmarshal(raw, &tests) == nil {
		out["tests_passed"] = true
	}
	return out
}

// writeDisclosure lists what a finished cycle changed: the tests counted,
// the files, the ruler files apart, each accepted one with who and why.
func writeDisclosure(w io.Writer, r *ledger.Record, disclosed map[string]bool) {
	if !disclosed["changed"] && !disclosed["ruler_changed"] && !disclosed["ruler_accepted"] && !disclosed["tests_passed"] {
		return
	}
	d := ledger.Disclose(r)
	list := func(k string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(w, "%-16s %s\n", k, strings.Join(items, "\n"+strings.Repeat(" ", 17)))
		}
	}
	if t := d.Tests; t != nil && disclosed["tests_passed"] {
		fmt.Fprintf(w, "%-16s %d → %d passed (counted by %s)\n", "tests", t.Before, t.After, termLine(t.Runner))
	}
	if disclosed["changed"] {
		items := make([]string, len(d.Changed))
		for i, c := range d.Changed {
			items[i] = termLine(c)
		}
		if len(items) >= ledger.MaxChanged {
			items = append(items, fmt.Sprintf("(the record lists the first %d)", ledger.MaxChanged))
		}
		list("changed", items)
	}
	var ruler, accepted []string
	for _, f := range d.Ruler {
		if a := f.Accepted; a != nil {
			accepted = append(accepted, termLine(f.String())+", by "+termLine(a.By)+": "+termLine(a.Why))
		} else {
			ruler = append(ruler, termLine(f.String()))
		}
	}
	list("ruler changed", ruler)
	list("ruler accepted", accepted)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// indent makes continuation lines of a multi-line value line up.
func indent(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}
