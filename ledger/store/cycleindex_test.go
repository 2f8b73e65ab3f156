package store

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// showAnswer is what Show(q) answers, as text.
func showAnswer(t *testing.T, l *Ledger, q string) string {
	t.Helper()
	list, err := l.Show(q)
	var b strings.Builder
	fmt.Fprintf(&b, "show %s: %v\n", q, err)
	if list != nil {
		for _, e := range list.Entries {
			fmt.Fprintf(&b, "  %s %s %v %v\n", e.Record.Marshal(), e.Commit, e.Absent, e.Journal)
		}
		for _, e := range list.Errors {
			fmt.Fprintf(&b, "  error %s\n", e.Error())
		}
	}
	return b.String()
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
	for _, e := range list.Entries {
		fmt.Fprintf(&b, "  %s %s %v %v\n", e.Record.Marshal(), e.Commit, e.Absent, e.Journal)
	}
	for _, e := range list.Errors {
		fmt.Fprintf(&b, "  error %s\n", e.Error())
	}
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
	c := strings.TrimSpace(git(t, dir, "commit-tree", "-p", "refs/notes/evolve", "-m", "wrong index", root))
	git(t, dir, "update-ref", "refs/notes/evolve", c)
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
	var lines []string
	if tree != "" {
		for _, l := range strings.Split(strings.TrimRight(git(t, dir, "ls-tree", tree), "\n"), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	if len(path) == 0 {
		empty := strings.TrimSpace(gitIn(t, dir, "", "hash-object", "-w", "--stdin"))
		lines = append(lines, "100644 blob "+empty+"\t"+name)
	} else {
		sub := ""
		kept := lines[:0]
		for _, l := range lines {
			if strings.HasSuffix(l, "\t"+path[0]) {
				sub = strings.Fields(l)[2]
				continue
			}
			kept = append(kept, l)
		}
		lines = append(kept, "040000 tree "+treeWithEntry(t, dir, sub, path[1:], name)+"\t"+path[0])
	}
	return strings.TrimSpace(gitIn(t, dir, strings.Join(lines, "\n")+"\n", "mktree"))
}

func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
