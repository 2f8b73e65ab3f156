package store

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// testRepo makes a repository with n commits, with git configured from the
// environment of the test only.
func testRepo(t *testing.T, n int) (dir string, commits []string) {
	t.Helper()
	scrubGitEnv(t)
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C",
		"GIT_COMMITTER_EMAIL": "c@example.com", "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
		"GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"} {
		t.Setenv(k, v)
	}
	dir = filepath.Join(t.TempDir(), "repo")
	git(t, "", "init", "-q", dir)
	for i := 0; i < n; i++ {
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "c"+strings.Repeat("i", i%3)+string(rune('a'+i%26)))
	}
	commits = strings.Fields(git(t, dir, "rev-list", "--reverse", "HEAD"))
	return dir, commits
}

// scrubGitEnv removes the GIT_* variables the test inherited (a hook sets
// GIT_DIR, for one), so that tests never touch another repository.
func scrubGitEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, args...)
}

func openLedger(t *testing.T, dir string) *Ledger {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return Open(repo)
}

func record(t *testing.T, l *Ledger, commit string, cycle int) {
	t.Helper()
	if _, err := recordWith(l, recordOn(commit, cycle)); err != nil {
		t.Fatal(err)
	}
}

// recordOn is a harvested record on commit (cycle 0: the next number).
func recordOn(commit string, cycle int) ledger.Record {
	one := 1
	return ledger.Record{Cycle: cycle, Target: "t", Result: ledger.Harvested,
		GoalsPassing: &one, GoalsTotal: &one, CanonicalSHA: commit}
}

// export is the ledger as Lines gives it, one line each.
func export(t *testing.T, l *Ledger) string {
	t.Helper()
	lines, errs, err := l.Lines(ListOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ln := range lines {
		b.Write(ln.Text)
		b.WriteByte('\n')
	}
	for _, e := range errs {
		b.WriteString("error: " + e.Error() + "\n")
	}
	return b.String()
}

// fromScratch is the ledger read with no saved view.
func fromScratch(t *testing.T, dir string) string {
	t.Helper()
	os.Remove(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	return export(t, openLedger(t, dir))
}

// The saved view always gives what reading the notes from scratch gives:
// after records, after a foreign writer, after a note that does not parse,
// and when the file is damaged.
func TestViewMatchesTheNotes(t *testing.T) {
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 5; i++ {
		record(t, l, commits[i], 0)
	}
	first := export(t, l)
	if got := strings.Count(first, "\n"); got != 5 {
		t.Fatalf("listed %d lines, want 5:\n%s", got, first)
	}
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	if _, err := os.Stat(view); err != nil {
		t.Fatalf("no saved view: %v", err)
	}
	if again := export(t, openLedger(t, dir)); again != first {
		t.Errorf("the saved view gives\n%s\nwant\n%s", again, first)
	}

	steps := []struct {
		name string
		do   func()
	}{
		{"a record", func() { record(t, openLedger(t, dir), commits[5], 0) }},
		{"a foreign note", func() {
			git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", `{"cycle":40, "target":"by hand","result":"improved"}`, commits[6])
		}},
		{"a note that does not parse", func() {
			git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", "not json", commits[1])
		}},
		{"a removed note", func() { git(t, dir, "notes", "--ref=evolve", "remove", commits[2]) }},
	}
	for _, st := range steps {
		st.do()
		got := export(t, openLedger(t, dir)) // brings the saved view up to date
		if want := fromScratch(t, dir); got != want {
			t.Errorf("after %s the updated view gives\n%s\nwant\n%s", st.name, got, want)
		}
	}
	if !strings.Contains(export(t, openLedger(t, dir)), `{"v":1,"cycle":40,"target":"by hand","result":"improved"}`) {
		t.Error("the foreign note is not listed in canonical form")
	}

	// A damaged or foreign file is rebuilt, not trusted.
	want := fromScratch(t, dir)
	for _, junk := range [][]byte{nil, []byte("garbage"), append([]byte(viewMagic), bytes.Repeat([]byte{1}, 30)...)} {
		if err := os.WriteFile(view, junk, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := export(t, openLedger(t, dir)); got != want {
			t.Errorf("with a damaged view (%q…) the ledger reads\n%s\nwant\n%s", junk[:min(len(junk), 12)], got, want)
		}
	}
}

// A view saved for one ledger is never used for another: it names the
// notes commit it describes.
func TestViewNamesItsNotesCommit(t *testing.T) {
	dir, commits := testRepo(t, 3)
	l := openLedger(t, dir)
	record(t, l, commits[0], 0)
	export(t, l)
	saved, err := readView(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	if err != nil || saved == nil {
		t.Fatalf("readView: %v, %v", saved, err)
	}
	head := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve"))
	if saved.notes.String() != head {
		t.Errorf("view describes %s, the ledger is at %s", saved.notes, head)
	}
}

// Quarantines gives what Entries gives with a filter of quarantine
// records, whether it reads the lines the saved view's footer names or,
// with no view (or a damaged one), the whole ledger.
func TestQuarantines(t *testing.T) {
	dir, commits := testRepo(t, 14)
	l := openLedger(t, dir)
	later := commits[12:]
	commits = commits[:12]
	for i, c := range commits {
		rec := recordOn(c, 0)
		switch i % 4 {
		case 1:
			rec.Result, rec.GoalsPassing, rec.GoalsTotal = ledger.Quarantined, nil, nil
		case 2:
			rec.Target = "quarantined" // the word, in another field
		}
		if _, err := recordWith(l, rec); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(s *ledger.Summary) bool { return string(s.Result) == ledger.Quarantined }
	want, err := l.Entries(ListOptions{}, keep, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Entries) != 3 {
		t.Fatalf("premise: %d quarantined records, want 3", len(want.Entries))
	}
	export(t, l) // the saved view, current
	same := func(what string) {
		t.Helper()
		got, err := l.Quarantines(ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entries) != len(want.Entries) {
			t.Fatalf("%s: %d entries, want %d", what, len(got.Entries), len(want.Entries))
		}
		for i := range got.Entries {
			if got.Entries[i].Record.ID != want.Entries[i].Record.ID || got.Entries[i].Commit != want.Entries[i].Commit {
				t.Errorf("%s: entry %d is %s on %s, want %s on %s", what, i, got.Entries[i].Record.ID, got.Entries[i].Commit,
					want.Entries[i].Record.ID, want.Entries[i].Commit)
			}
		}
	}
	same("from the view")
	path := filepath.Join(dir, ".git", "evolve", "ledger.view")

	// Notes added since the view (a record, a sync): the view's quarantine
	// lines and those of the notes added, with the errors of both, and the
	// view is not written again.
	before, _ := viewNotes(path)
	rec := recordOn(later[0], 0)
	rec.Result, rec.GoalsPassing, rec.GoalsTotal = ledger.Quarantined, nil, nil
	if _, err := recordWith(l, rec); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "notes", "--ref=evolve", "add", "-m", "{not json", later[1])
	got, err := openLedger(t, dir).Quarantines(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := viewNotes(path); after != before {
		t.Errorf("the view was written again (%s, was %s): the quarantines were not read from it", after, before)
	}
	if want, err := openLedger(t, dir).Entries(ListOptions{}, keep, 0); err != nil {
		t.Fatal(err)
	} else if g, w := entriesText(got)+fmt.Sprint(got.Errors), entriesText(want)+fmt.Sprint(want.Errors); g != w || len(got.Entries) != 4 || len(got.Errors) != 1 {
		t.Errorf("after notes were added: Quarantines gives\n%s\nEntries gives\n%s", g, w)
	}
	want, err = l.Entries(ListOptions{}, keep, 0)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := gitstore.ParseHash(strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve")))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := readViewQuarantined(path, notes); err != nil || v == nil || len(v.lines) != 4 {
		t.Fatalf("the view's quarantine lines: %v, %v; want 4", v != nil, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, data[:len(data)/2], 0o644)
	same("from a damaged view")
	os.Remove(path)
	same("with no view")
}

// benchView is a view of n records shaped as bench/genrepo.sh makes them,
// each on a commit of its own that it names as its sha.
func benchView(b *testing.B, n int) *view {
	v := &view{notes: gitstore.Hash{0xbe}}
	v.lines = make([]viewLine, 0, n+1)
	for i := 1; i <= n; i++ {
		v.lines = append(v.lines, benchLine(b, i))
	}
	return v
}

func benchLine(b *testing.B, i int) viewLine {
	commit := gitstore.Hash(sha1.Sum(fmt.Appendf(nil, "%d", i)))
	text := fmt.Appendf(nil, `{"v":1,"id":"%020x","cycle":%d,"target":"goal-%d","result":"improved","sha":"%s","canonical_sha":"%s","timestamp":"2026-01-01T00:00:00Z","goals_passing":%d,"goals_total":40,"trace":{"goal_hypothesis":"raising goal-%d lifts fitness","green_evidence":"go test ./... ok"}}`,
		i, i, i%10, commit, commit, i%40, i%10)
	sum, ok := ledger.Summarize(text)
	if !ok {
		b.Fatalf("not canonical: %s", text)
	}
	return viewLine{Line: Line{Summary: sum, Text: text}, commit: commit}
}

// The save of a view read from its file and brought forward by one
// record (what a read after a record does once the view is read whole),
// at 10,000 and 100,000 records.
func BenchmarkViewSaveAfterRecord(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "ledger.view")
			if err := benchView(b, n).save(path); err != nil {
				b.Fatal(err)
			}
			one := benchLine(b, n+1)
			for range b.N {
				b.StopTimer()
				v, err := readView(path)
				if err != nil || v == nil {
					b.Fatal(err)
				}
				v.lines = append(v.lines, one)
				v.sort()
				b.StartTimer()
				packed := viewBlocksPacked
				if err := v.save(filepath.Join(dir, "next.view")); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(viewBlocksPacked-packed), "blocks-packed/op")
				b.StopTimer()
				v.release()
				b.StartTimer()
			}
		})
	}
}
