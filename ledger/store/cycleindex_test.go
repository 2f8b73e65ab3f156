package store

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// showAnswer is what Show(q) answers, as text.
func showAnswer(t *testing.T, l *Ledger, q string) string {
	t.Helper()
	list, err := l.Show(q)
	return fmt.Sprintf("show %s: %v\n", q, err) + describe(list)
}

// fullAnswer is what the whole ledger read note by note gives for cycle n.
func fullAnswer(t *testing.T, l *Ledger, n int) string {
	t.Helper()
	list, err := l.Entries(ListOptions{Journal: true, Presence: true}, func(s *ledger.Summary) bool { return s.Cycle == n }, 0)
	var b strings.Builder
	if err == nil && len(list.Entries) == 0 {
		err = fmt.Errorf("%w: no cycle %d in the ledger or the journal", ErrNotFound, n)
	}
	fmt.Fprintf(&b, "show %d: %v\n", n, err)
	b.WriteString(describe(list))
	return b.String()
}

// A first show of a cycle (no saved view: a fresh clone) reads the notes
// the tree's index lists, and answers what a read of every note answers:
// a cycle on several commits, a note with a line that is no record, a
// journal's cycle, a cycle no record has.
func TestShowFromTheCycleIndex(t *testing.T) {
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 5; i++ {
		record(t, l, commits[i], 0)
	}
	// cycle 2 copied to another commit (relink's copies)
	list, err := l.Show("2")
	if err != nil {
		t.Fatal(err)
	}
	c6, _ := gitstore.ParseHash(commits[6])
	if n, err := l.Attach(map[gitstore.Hash][]ledger.Record{c6: {list.Entries[0].Record}}); err != nil || n != 1 {
		t.Fatalf("Attach: %d, %v", n, err)
	}
	// a line that is no record, by plain git, then a record: the write
	// brings the index forward by the note plain git changed
	git(t, dir, "notes", "--ref=evolve", "append", "-m", "not a record", commits[3])
	record(t, openLedger(t, dir), commits[5], 0)
	// a cycle of the journal only
	if _, err := recordWith(openLedger(t, dir), ledger.Record{Cycle: 0, Target: "t", Result: ledger.Unchanged}); err != nil {
		t.Fatal(err)
	}
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	for _, n := range []int{1, 2, 3, 6, 7, 40} {
		os.Remove(view)
		got := showAnswer(t, openLedger(t, dir), fmt.Sprint(n))
		if _, err := os.Stat(view); err == nil {
			t.Fatalf("show %d read every note (it saved a view)", n)
		}
		want := fullAnswer(t, openLedger(t, dir), n)
		if got != want {
			t.Errorf("show %d from the index:\n%s\nfrom every note:\n%s", n, got, want)
		}
	}
	if got := showAnswer(t, openLedger(t, dir), "2"); strings.Count(got, `"cycle":2`) != 1 || !strings.Contains(got, "error") {
		t.Errorf("show 2 lists the record (once, as List lists copies) and the line that is no record:\n%s", got)
	}
}

// An index that lists a note under a cycle its note has no record of
// (another writer's, made wrong with the stamp kept) is passed by: the
// notes are read.
func TestShowPassesAWrongIndexBy(t *testing.T) {
	dir, commits := testRepo(t, 4)
	l := openLedger(t, dir)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	// list commits[2] under cycle 1 as well
	entry := "1-" + commits[2]
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	root = treeWithEntry(t, dir, root, strings.Split(ledger.IndexName+"/"+path.Dir(ledger.CycleKey(1)), "/"), entry)
	commitNotesTree(t, dir, root, "wrong index")
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	os.Remove(view)
	got := showAnswer(t, openLedger(t, dir), "1")
	if _, err := os.Stat(view); err != nil {
		t.Fatalf("show 1 took the wrong index's word (no view saved: %v)", err)
	}
	if want := fullAnswer(t, openLedger(t, dir), 1); got != want || strings.Count(got, `"cycle"`) != 1 {
		t.Errorf("show 1:\n%s\nwant:\n%s", got, want)
	}
}

// treeWithEntry is tree with the empty blob added as name in the directory at
// path (made when missing), written by git mktree; it returns the new
// tree's name.
func treeWithEntry(t *testing.T, dir, tree string, path []string, name string) string {
	t.Helper()
	return testenv.TreeEdited(t, dir, tree, path, name, true)
}

// treeWithoutEntry is tree with name taken out of the directory at path.
func treeWithoutEntry(t *testing.T, dir, tree string, path []string, name string) string {
	t.Helper()
	return testenv.TreeEdited(t, dir, tree, path, name, false)
}

// withAndWithoutView is what read answers with no saved view (saved says
// that it saved one: it read every note), then what it answers from the
// saved view of every note.
func withAndWithoutView(t *testing.T, dir string, read func(*Ledger) string) (got, want string, saved bool) {
	t.Helper()
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	os.Remove(view)
	got = read(openLedger(t, dir))
	_, err := os.Stat(view)
	if _, err := openLedger(t, dir).currentView(); err != nil {
		t.Fatal(err)
	}
	return got, read(openLedger(t, dir)), err == nil
}

// lastAnswer is what Entries gives for the last limit records, as text.
func lastAnswer(t *testing.T, l *Ledger, limit int) string {
	t.Helper()
	list, err := l.Entries(ListOptions{Journal: true, Presence: true}, nil, limit)
	return fmt.Sprintf("last %d: %v\n", limit, err) + describe(list)
}

// withoutHistoryWalk makes a read of the last records that the index of
// cycles does not answer read the whole ledger (and save a view), not the
// notes history.
func withoutHistoryWalk(t *testing.T) {
	t.Helper()
	defer func(n int) { t.Cleanup(func() { historyTailCommits = n }) }(historyTailCommits)
	historyTailCommits = 0
}

// A first read of the last records (log -n: no saved view, as in a fresh
// clone) reads the notes the tree's index lists under the largest cycles,
// and answers what a read of every note answers: a note that also holds a
// smaller cycle, a record on two commits, a line that is no record, a
// record plain git added, the journal's records.
func TestLastFromTheCycleIndex(t *testing.T) {
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 12)
	l := openLedger(t, dir)
	for i := 0; i < 8; i++ {
		record(t, l, commits[i], 0)
	}
	record(t, l, commits[0], 0) // cycle 9, beside cycle 1
	record(t, l, commits[1], 0) // cycle 10, beside cycle 2
	list, err := l.Show("7")
	if err != nil {
		t.Fatal(err)
	}
	c9, _ := gitstore.ParseHash(commits[9])
	if n, err := l.Attach(map[gitstore.Hash][]ledger.Record{c9: {list.Entries[0].Record}}); err != nil || n != 1 {
		t.Fatalf("Attach: %d, %v", n, err)
	}
	git(t, dir, "notes", "--ref=evolve", "append", "-m", "not a record", commits[4])
	record(t, openLedger(t, dir), commits[10], 0)
	// a record plain git adds, of a cycle above the rest, after the index
	// was last kept: brought forward
	git(t, dir, "notes", "--ref=evolve", "add", "-m",
		`{"v":1,"cycle":40,"target":"t","result":"harvested","goals_passing":1,"goals_total":1,"sha":"`+commits[11]+`","canonical_sha":"`+commits[11]+`","timestamp":"2026-01-02T03:04:05Z"}`, commits[11])
	if _, err := recordWith(openLedger(t, dir), ledger.Record{Cycle: 0, Target: "t", Result: ledger.Unchanged}); err != nil {
		t.Fatal(err)
	}
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	for limit := 1; limit <= 14; limit++ {
		got, want, saved := withAndWithoutView(t, dir, func(l *Ledger) string { return lastAnswer(t, l, limit) })
		if saved && limit <= 6 {
			t.Fatalf("the last %d read every note (a view was saved)", limit)
		}
		if got != want {
			t.Errorf("the last %d from the index:\n%s\nfrom the view of every note:\n%s", limit, got, want)
		}
	}
	os.Remove(view)
	if got := lastAnswer(t, openLedger(t, dir), 9); !strings.Contains(got, `"cycle":5,`) || !strings.Contains(got, "error the note on "+commits[4][:7]) {
		t.Errorf("the last 9 list cycle 5 and the line beside it that is no record:\n%s", got)
	}
	// narrowed to cycles 2 and 3: the last is 3, though the notes of the
	// largest cycles hold 1 and 2 beside them
	os.Remove(view)
	last, err := openLedger(t, dir).Entries(ListOptions{}, func(s *ledger.Summary) bool { return s.Cycle == 2 || s.Cycle == 3 }, 1)
	if err != nil || len(last.Entries) != 1 || last.Entries[0].Record.Cycle != 3 {
		t.Errorf("the last of cycles 2 and 3: %+v, %v", last, err)
	}
}

// An index that lists a note under one of the largest cycles that its note
// has no record of is passed by: the last records are those of every note.
func TestLastPassesAWrongIndexBy(t *testing.T) {
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 6)
	l := openLedger(t, dir)
	for i := 0; i < 5; i++ {
		record(t, l, commits[i], 0)
	}
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	root = treeWithEntry(t, dir, root, strings.Split(ledger.IndexName+"/"+path.Dir(ledger.CycleKey(5)), "/"), "5-"+commits[1])
	commitNotesTree(t, dir, root, "wrong index")
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	os.Remove(view)
	got := lastAnswer(t, openLedger(t, dir), 2)
	if _, err := os.Stat(view); err != nil {
		t.Fatalf("the last 2 took the wrong index's word (no view saved: %v)", err)
	}
	if strings.Count(got, `"cycle"`) != 2 || !strings.Contains(got, `"cycle":5`) || !strings.Contains(got, `"cycle":4`) {
		t.Errorf("the last 2:\n%s", got)
	}
}

// quarantinesAnswer is what Quarantines gives, as text.
func quarantinesAnswer(t *testing.T, l *Ledger) string {
	t.Helper()
	list, err := l.Quarantines(ListOptions{Journal: true, Presence: true})
	return fmt.Sprintf("quarantines: %v\n", err) + describe(list)
}

// quarantineOn is a quarantine record on commit (cycle 0: the next number).
func quarantineOn(commit string) ledger.Record {
	return ledger.Record{Target: "g", Result: ledger.Quarantined, CanonicalSHA: commit}
}

// A first read of the quarantine records (status, the loop's rules: no
// saved view, as in a fresh clone) reads the notes the tree's index lists
// as holding them, and answers what a read of every note answers: a
// quarantine beside another record, one on two commits, one plain git
// added, a line that is no record.
func TestQuarantinesFromTheCycleIndex(t *testing.T) {
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 4; i++ {
		record(t, l, commits[i], 0)
	}
	for _, c := range []string{commits[1], commits[4]} {
		if _, err := recordWith(l, quarantineOn(c)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := l.Show("6")
	if err != nil {
		t.Fatal(err)
	}
	c5, _ := gitstore.ParseHash(commits[5])
	if n, err := l.Attach(map[gitstore.Hash][]ledger.Record{c5: {list.Entries[0].Record}}); err != nil || n != 1 {
		t.Fatalf("Attach: %d, %v", n, err)
	}
	git(t, dir, "notes", "--ref=evolve", "append", "-m", "not a record", commits[2])
	record(t, openLedger(t, dir), commits[6], 0)
	git(t, dir, "notes", "--ref=evolve", "add", "-m",
		`{"v":1,"cycle":30,"target":"h","result":"quarantined","sha":"`+commits[7]+`","canonical_sha":"`+commits[7]+`","timestamp":"2026-01-02T03:04:05Z"}`, commits[7])
	got, want, saved := withAndWithoutView(t, dir, func(l *Ledger) string { return quarantinesAnswer(t, l) })
	if saved {
		t.Fatal("the quarantines read every note (a view was saved)")
	}
	if got != want {
		t.Errorf("the quarantines from the index:\n%s\nfrom the view of every note:\n%s", got, want)
	}
	if strings.Count(got, `"result":"quarantined"`) != 3 || !strings.Contains(got, "error the note on "+commits[2][:7]) {
		t.Errorf("the quarantines: cycles 5, 6 (listed once) and 30, and the line that is no record:\n%s", got)
	}
}

// An index that lists a note as holding a quarantine record it does not
// hold is passed by: the quarantines are those of every note.
func TestQuarantinesPassAWrongIndexBy(t *testing.T) {
	dir, commits := testRepo(t, 3)
	l := openLedger(t, dir)
	record(t, l, commits[0], 0)
	if _, err := recordWith(l, quarantineOn(commits[1])); err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	root = treeWithEntry(t, dir, root, strings.Split(ledger.IndexName+"/"+path.Dir(ledger.QuarantineKey), "/"), path.Base(ledger.QuarantineKey)+"-"+commits[0])
	commitNotesTree(t, dir, root, "wrong index")
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	os.Remove(view)
	got := quarantinesAnswer(t, openLedger(t, dir))
	if _, err := os.Stat(view); err != nil {
		t.Fatalf("the quarantines took the wrong index's word (no view saved: %v)", err)
	}
	if strings.Count(got, `"result":"quarantined"`) != 1 || strings.Count(got, `"cycle"`) != 1 {
		t.Errorf("the quarantines:\n%s", got)
	}
}
