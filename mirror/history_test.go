package mirror

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(testenv.Git(t, dir, args...))
}

// fixture is a repository with the seeds' layout; each step opens it anew,
// as each git-evolve process does.
type fixture struct {
	t   *testing.T
	dir string
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
		"GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com", "GIT_EVOLVE_HOST": "box"} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "evolve"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// ledger opens the repository's ledger, for writing.
func (f *fixture) ledger() *cycle.Ledger {
	f.t.Helper()
	repo, err := gitstore.Open(f.dir, gitstore.ForWriting("test"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { repo.Close() })
	return cycle.Open(repo, func() time.Time { f.now = f.now.Add(time.Minute); return f.now })
}

func (f *fixture) mirror() Mirror {
	return Mirror{Top: f.dir, StateDir: filepath.Join(f.dir, ".git", "evolve"), Exclude: filepath.Join(f.dir, ".git", "info", "exclude")}
}

// commit makes a commit with a file of its own.
func (f *fixture) commit(name string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(name+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
	git(f.t, f.dir, "add", name)
	git(f.t, f.dir, "commit", "-q", "-m", name)
}

// record records a cycle on HEAD (productive) or in the journal (idle).
func (f *fixture) record(target, result string) ledger.Record {
	f.t.Helper()
	two := 2
	r := ledger.Record{Target: target, Result: result}
	if ledger.Productive(result) {
		r.GoalsPassing, r.GoalsTotal = &two, &two
	}
	res, err := f.ledger().Record(r)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Entry.Record
}

func (f *fixture) refresh() *Refreshed {
	f.t.Helper()
	res, err := f.mirror().Refresh(f.ledger().Ledger)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *fixture) history() string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, HistoryFile))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

// built is the history file as a refresh with no state builds it whole.
func (f *fixture) built() string {
	f.t.Helper()
	m := f.mirror()
	m.Top = f.t.TempDir()
	m.StateDir = f.t.TempDir()
	m.Exclude = ""
	if _, err := m.Refresh(f.ledger().Ledger); err != nil {
		f.t.Fatal(err)
	}
	data, err := os.ReadFile(m.Path(HistoryFile))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

func cycles(t *testing.T, content string) []string {
	t.Helper()
	recs, bad := ledger.ParseLines([]byte(content))
	if len(bad) > 0 {
		t.Fatalf("the file has lines that do not parse: %v", bad[0])
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Target+":"+r.Result)
	}
	return out
}

func TestHistoryIsTheBranchAndTheJournal(t *testing.T) {
	f := newFixture(t)
	f.commit("a")
	f.record("g1", ledger.Improved)
	f.record("idle", ledger.Unchanged)
	// a cycle on another branch, which HEAD does not reach
	git(t, f.dir, "checkout", "-q", "-b", "side")
	f.commit("s")
	f.record("side", ledger.Improved)
	git(t, f.dir, "checkout", "-q", "main")
	f.commit("b")
	f.record("g2", ledger.Improved)

	res := f.refresh()
	if !res.Wrote || res.Lines != 3 {
		t.Fatalf("refresh: %+v, want 3 lines written", res)
	}
	got := strings.Join(cycles(t, f.history()), " ")
	if want := "g1:improved idle:unchanged g2:improved"; got != want {
		t.Errorf("the file holds %s, want %s", got, want)
	}
	// each line is the record as the ledger lists it
	l := f.ledger()
	list, err := l.List(store.ListOptions{Journal: true})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, en := range list.Entries {
		if en.Record.Target != "side" {
			want.Write(en.Record.Marshal())
			want.WriteByte('\n')
		}
	}
	if f.history() != want.String() {
		t.Errorf("the file:\n%s\nwant the ledger's lines:\n%s", f.history(), want.String())
	}

	// on the side branch, its records and not main's later ones
	git(t, f.dir, "checkout", "-q", "side")
	f.refresh()
	if got, want := strings.Join(cycles(t, f.history()), " "), "g1:improved idle:unchanged side:improved"; got != want {
		t.Errorf("on side the file holds %s, want %s", got, want)
	}
}

func TestHistoryUnchangedWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	f.refresh()
	path := filepath.Join(f.dir, HistoryFile)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if res := f.refresh(); res.Wrote {
		t.Errorf("a refresh with nothing new wrote the file: %+v", res)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Errorf("the file was replaced")
	}
	// HEAD moved by a commit that has no record: the same lines, not written
	f.commit("plain")
	if res := f.refresh(); res.Wrote {
		t.Errorf("a commit without a record wrote the file: %+v", res)
	}
}

func TestHistoryGrowsByAppending(t *testing.T) {
	testenv.Slow(t)
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	f.refresh()
	steps := []func(){
		func() { f.commit("a"); f.record("g2", ledger.Improved) },                // a record on HEAD, HEAD moved
		func() { f.record("idle", ledger.Unchanged) },                            // the journal grew
		func() { f.commit("b"); f.commit("c"); f.record("g3", ledger.Improved) }, // HEAD two commits on
		func() { f.record("g4", ledger.Regressed); f.record("idle", ledger.Unchanged) },
	}
	for i, step := range steps {
		step()
		res := f.refresh()
		if !res.Wrote || res.Appended < 1 {
			t.Errorf("step %d: %+v, want lines appended", i, res)
		}
		if got, want := f.history(), f.built(); got != want {
			t.Errorf("step %d: appended:\n%s\nbuilt whole:\n%s", i, got, want)
		}
	}
	if got := strings.Join(cycles(t, f.history()), " "); got != "g1:improved g2:improved idle:unchanged g3:improved g4:regressed idle:unchanged" {
		t.Errorf("the file holds %s", got)
	}
}

func TestHistoryBuiltWholeWhenNotOnlyGrown(t *testing.T) {
	f := newFixture(t)
	f.commit("a")
	f.record("g1", ledger.Improved)
	f.commit("b")
	f.record("g2", ledger.Improved)
	f.refresh()
	// HEAD back before g2's commit: not forward, the file is built whole
	git(t, f.dir, "reset", "-q", "--hard", "HEAD~1")
	res := f.refresh()
	if !res.Wrote || res.Appended != -1 {
		t.Errorf("after a reset: %+v, want the file built whole", res)
	}
	if got := strings.Join(cycles(t, f.history()), " "); got != "g1:improved" {
		t.Errorf("after a reset the file holds %s, want g1 alone", got)
	}
	// a note removed by hand: built whole
	git(t, f.dir, "notes", "--ref=evolve", "remove", "HEAD")
	if res := f.refresh(); !res.Wrote || res.Appended != -1 || f.history() != "" {
		t.Errorf("after a note was removed: %+v, %q", res, f.history())
	}
}

func TestHistoryAtomic(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	f.refresh()
	path := filepath.Join(f.dir, HistoryFile)
	// a reader that opened the file before the write reads it whole, as it was
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	was := f.history()
	f.commit("a")
	f.record("g2", ledger.Improved)
	f.refresh()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(old); err != nil {
		t.Fatal(err)
	}
	if buf.String() != was {
		t.Errorf("the open file changed under its reader: %q, was %q", buf.String(), was)
	}
	if f.history() == was {
		t.Errorf("the file was not written")
	}
	// nothing left behind but the file
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != filepath.Base(HistoryFile) {
			t.Errorf("left in %s: %s", Dir, e.Name())
		}
	}
	// it is excluded from git, the temporary files too
	exclude, err := os.ReadFile(filepath.Join(f.dir, ".git", "info", "exclude"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/" + HistoryFile, "/" + FitnessFile, "/.agents/evolve/*.tmp"} {
		if !strings.Contains(string(exclude), "\n"+p+"\n") {
			t.Errorf("info/exclude lacks %s:\n%s", p, exclude)
		}
	}
	if st := git(t, f.dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status sees:\n%s", st)
	}
}

func TestHistoryHandEditIsKeptAndReplaced(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	f.refresh()
	path := filepath.Join(f.dir, HistoryFile)
	ours := f.history()
	// seed 004's quarantine: a line appended with >>
	hand := `{"cycle":2,"target":"g1","result":"quarantined","oscillations":3,"timestamp":"2026-01-01T00:00:00Z"}` + "\n"
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(hand)
	fh.Close()

	res := f.refresh()
	if res.Kept == "" || !res.Wrote {
		t.Fatalf("a hand edit: %+v, want it kept and the file written", res)
	}
	if f.history() != ours {
		t.Errorf("the file after a hand edit:\n%s\nwant the ledger's:\n%s", f.history(), ours)
	}
	kept, err := os.ReadFile(res.Kept)
	if err != nil {
		t.Fatal(err)
	}
	if string(kept) != ours+hand {
		t.Errorf("kept %q, want the edited file", kept)
	}
	if !strings.HasPrefix(res.Kept, f.mirror().StateDir) {
		t.Errorf("kept in %s, want under the git directory", res.Kept)
	}
	// the ledger did not take the line
	if list, _ := f.ledger().List(store.ListOptions{Journal: true}); len(list.Entries) != 1 {
		t.Errorf("the ledger has %d records, want 1: a hand edit is never imported", len(list.Entries))
	}
	// an edit of the same size, in the same second: still told by its digest
	os.WriteFile(path, bytes.Replace([]byte(ours), []byte("g1"), []byte("g9"), 1), 0o644)
	if res := f.refresh(); res.Kept == "" || f.history() != ours {
		t.Errorf("an edit of the same size: %+v", res)
	}
	// touched, not changed: nothing kept
	now := time.Now().Add(time.Hour)
	os.Chtimes(path, now, now)
	if res := f.refresh(); res.Kept != "" {
		t.Errorf("a touched file was kept as edited: %+v", res)
	}
}

func TestHistoryFirstWriteKeepsTheSeedsFile(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	path := filepath.Join(f.dir, HistoryFile)
	seeds := `{"cycle":1,"target":"old","result":"improved","sha":"abc1234","canonical_sha":"abc1234","goals_passing":1,"goals_total":2,"timestamp":"2026-02-11T21:00:00Z"}` + "\n"
	os.WriteFile(path, []byte(seeds), 0o644)
	res := f.refresh()
	if res.Kept == "" {
		t.Fatalf("the seeds' own file was replaced without being kept: %+v", res)
	}
	if kept, _ := os.ReadFile(res.Kept); string(kept) != seeds {
		t.Errorf("kept %q", kept)
	}
	// a file that already says what the ledger says is the tool's own
	ours := f.history()
	os.Remove(filepath.Join(f.mirror().StateDir, "history-mirror.json"))
	if res := f.refresh(); res.Kept != "" || res.Wrote || f.history() != ours {
		t.Errorf("the tool's own file, its state lost: %+v", res)
	}
	// and with records come since: what it held is the start of the ledger's
	os.Remove(filepath.Join(f.mirror().StateDir, "history-mirror.json"))
	f.commit("a")
	f.record("g2", ledger.Improved)
	if res := f.refresh(); res.Kept != "" || !res.Wrote || !strings.HasPrefix(f.history(), ours) || res.Lines != 2 {
		t.Errorf("the tool's own file behind the ledger, its state lost: %+v", res)
	}
}

// The empty file an empty ledger's mirror wrote, its state lost (the run's
// guard drops a state written during the agent's turn), is the tool's
// own: nothing of it is kept aside once records come.
func TestHistoryEmptyFileStateLost(t *testing.T) {
	f := newFixture(t)
	f.refresh()
	if f.history() != "" {
		t.Fatalf("an empty ledger's file: %q", f.history())
	}
	os.Remove(filepath.Join(f.mirror().StateDir, "history-mirror.json"))
	f.record("g1", ledger.Improved)
	if res := f.refresh(); res.Kept != "" || !res.Wrote || res.Lines != 1 {
		t.Errorf("the empty file, its state lost, then a record: %+v", res)
	}
}

func TestHistoryTrackedIsNotWritten(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.dir, HistoryFile)
	os.WriteFile(path, []byte("committed by someone\n"), 0o644)
	git(t, f.dir, "add", "-f", HistoryFile)
	git(t, f.dir, "commit", "-q", "-m", "the history, committed")
	f.record("g1", ledger.Improved)
	res := f.refresh()
	if !res.Tracked || res.Wrote {
		t.Errorf("a tracked file: %+v, want it left alone", res)
	}
	if f.history() != "committed by someone\n" {
		t.Errorf("the tracked file was changed: %q", f.history())
	}
	// untracked again: the content is not the tool's, so it is kept
	git(t, f.dir, "rm", "-q", "--cached", HistoryFile)
	git(t, f.dir, "commit", "-q", "-m", "untrack it")
	if res := f.refresh(); res.Tracked || !res.Wrote || res.Kept == "" {
		t.Errorf("untracked again: %+v", res)
	}
}

func TestHistoryRefreshedAtOnce(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	f.refresh()
	f.commit("a")
	f.record("g2", ledger.Improved)
	ls := make([]*cycle.Ledger, 6)
	for i := range ls {
		ls[i] = f.ledger()
	}
	out := make(chan *Refreshed, len(ls))
	for _, l := range ls {
		go func() {
			res, err := f.mirror().Refresh(l.Ledger)
			if err != nil {
				t.Error(err)
			}
			out <- res
		}()
	}
	wrote := 0
	for range ls {
		res := <-out
		if res == nil {
			continue
		}
		if res.Kept != "" {
			t.Errorf("a refresh took another's write for a hand edit: %+v", res)
		}
		if res.Wrote {
			wrote++
		}
	}
	if wrote != 1 {
		t.Errorf("%d refreshes wrote the file, want 1", wrote)
	}
	if got, want := f.history(), f.built(); got != want {
		t.Errorf("the file:\n%s\nwant:\n%s", got, want)
	}
}

// TestHistoryReadsTheFetchedCopy: records a fetch brought (in the
// remote-tracking copy) are in the file, also once HEAD moves onto their
// commits without the copy moving.
func TestHistoryReadsTheFetchedCopy(t *testing.T) {
	f := newFixture(t)
	f.record("g1", ledger.Improved)
	local := git(t, f.dir, "rev-parse", "refs/notes/evolve")
	f.refresh()
	// a teammate's cycle on a commit of a branch, as a fetch brings it
	git(t, f.dir, "checkout", "-q", "-b", "topic")
	f.commit("t")
	f.record("theirs", ledger.Improved)
	git(t, f.dir, "update-ref", "refs/notes/remotes/origin/evolve", "refs/notes/evolve")
	git(t, f.dir, "update-ref", "refs/notes/evolve", local)
	git(t, f.dir, "checkout", "-q", "main")
	f.refresh()
	if got := strings.Join(cycles(t, f.history()), " "); got != "g1:improved" {
		t.Errorf("on main the file holds %s", got)
	}
	git(t, f.dir, "merge", "-q", "--ff-only", "topic")
	f.refresh()
	if got, want := strings.Join(cycles(t, f.history()), " "), "g1:improved theirs:improved"; got != want {
		t.Errorf("merged, the file holds %s, want %s", got, want)
	}
	if got, want := f.history(), f.built(); got != want {
		t.Errorf("the file:\n%s\nbuilt whole:\n%s", got, want)
	}
}
