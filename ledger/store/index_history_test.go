package store

import (
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// fromHistory is the index loadIndex gives with no saved view, and
// whether it was made from the ledger's history (not every note).
func fromHistory(t *testing.T, l *Ledger, dir string) (*Index, bool) {
	t.Helper()
	os.Remove(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	ix, err := l.loadIndex(ledgerNow(t, l))
	if err != nil {
		t.Fatal(err)
	}
	return ix, ix.whole != nil
}

// ledgerNow is the local ledger's notes as they are.
func ledgerNow(t *testing.T, l *Ledger) *gitstore.Notes {
	t.Helper()
	snap, err := l.repo.ReadNotes(NotesRef)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// largestOf is the largest cycle of an index and the commits that hold it.
func largestOf(t *testing.T, ix *Index) string {
	t.Helper()
	n := ix.Max()
	hs, err := ix.holders(n)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hs {
		names = append(names, h.String())
	}
	slices.Sort(names)
	return fmt.Sprint(n, names)
}

// With no index and no view, the largest cycle and its commits come from
// the ledger's history when it gives them, and always agree with a read of
// every note: after records, C git adding a note, an import, a note edited
// or removed by C git, and a trailer that names less than the notes hold.
func TestIndexFromHistory(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	check := func(when string, fromHist bool) {
		t.Helper()
		ix, got := fromHistory(t, l, dir)
		whole, err := l.wholeIndex(ledgerNow(t, l))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := largestOf(t, ix), largestOf(t, whole); a != b {
			t.Errorf("%s: largest cycle and commits %s, every note gives %s", when, a, b)
		}
		if got != fromHist {
			t.Errorf("%s: made from the history: %v, want %v", when, got, fromHist)
		}
	}
	check("an empty ledger", false)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	check("after records", true)
	record(t, l, commits[0], 0) // a second record on a commit with a note
	check("after a second record on one commit", true)
	git(t, dir, "notes", "--ref=evolve", "add", "-m", `{"v":1,"cycle":9,"result":"improved"}`, commits[5])
	check("after C git added a note with a larger cycle", true)
	git(t, dir, "notes", "--ref=evolve", "add", "-m", `{"v":1,"cycle":2,"result":"improved"}`, commits[6])
	check("after C git added a note with a smaller cycle", true)

	// A record in an index made from the history takes the next number,
	// and links to the last record.
	os.Remove(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	res, err := recordWith(l, recordOn(commits[7], 0))
	if err != nil || res.Entry.Record.Cycle != 10 {
		t.Fatalf("record with no index: %+v, %v; want cycle 10", res, err)
	}
	check("after a record made from the history", true)

	// A cycle recorded by number below the largest (a finish of a number
	// reserved before others finished, an abort, a gap filled): its commit
	// names the same largest cycle as the one before, and the notes
	// changed since the one before that are read.
	record(t, l, commits[1], 7)
	check("after a record of a smaller number", true)
	res, err = recordWith(l, recordOn(commits[2], 0))
	if err != nil || res.Entry.Record.Cycle != 11 {
		t.Fatalf("record after a smaller number: %+v, %v; want cycle 11", res, err)
	}
	check("after the next number", true)

	// An import names the largest too.
	text := fmt.Sprintf(`{"cycle":40,"target":"t","result":"improved","sha":%q}`+"\n", commits[4])
	if _, err := l.Import(strings.NewReader(text), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("after an import", true)

	// A note changed or removed since the record: read as it is now.
	git(t, dir, "notes", "--ref=evolve", "append", "-m", `{"v":1,"cycle":41,"result":"improved"}`, commits[5])
	check("after C git appended to a note", true)
	record(t, l, commits[3], 0)
	check("after a record past the append", true)
	git(t, dir, "notes", "--ref=evolve", "remove", commits[3])
	check("after C git removed the largest cycle's note", true)
	// every record above the older bound removed: every note is read
	git(t, dir, "notes", "--ref=evolve", "remove", commits[5])
	check("after C git removed every note above the bound", false)

	// A trailer naming less than the notes hold: the bound below it is
	// looked for, and what changed since read.
	record(t, l, commits[3], 0)
	snap := ledgerNow(t, l)
	ci, err := l.repo.Commit(snap.Commit())
	if err != nil {
		t.Fatal(err)
	}
	lie := strings.TrimSpace(git(t, dir, "commit-tree", ci.Tree.String(), "-p", snap.Commit().String(), "-m", fmt.Sprintf(RecordSubject, 7, "improved")+"\n\n"+ledger.LargestTrailer+": 7"))
	git(t, dir, "update-ref", "refs/notes/evolve", lie)
	check("after a trailer that names too little", true)

	// No trailer among the newest historyWalk notes commits.
	head := lie
	for i := 0; i < historyWalk; i++ {
		head = strings.TrimSpace(git(t, dir, "commit-tree", ci.Tree.String(), "-p", head, "-m", "Notes added by 'git notes add'"))
	}
	git(t, dir, "update-ref", "refs/notes/evolve", head)
	check("after a long history of other writers", false)
}

// A clone with no state at all records the next number, as the clone it
// came from would, without writing a whole index.
func TestIndexFromHistoryInAClone(t *testing.T) {
	dir, commits := testRepo(t, 4)
	l := openLedger(t, dir)
	for i := 0; i < 4; i++ {
		record(t, l, commits[i], 0)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, "", "clone", "-q", dir, clone)
	git(t, clone, "fetch", "-q", "origin", "refs/notes/evolve:refs/notes/evolve")
	lc := openLedger(t, clone)
	res, err := recordWith(lc, recordOn(commits[1], 0))
	if err != nil || res.Entry.Record.Cycle != 5 {
		t.Fatalf("first record in a clone: %+v, %v; want cycle 5", res, err)
	}
	if _, err := os.Stat(filepath.Join(clone, ".git", "evolve", "ledger.view")); err == nil {
		t.Errorf("the first record in a clone read every note into a view")
	}
	// It links to the last record, as a record in the first clone would.
	lines, _, err := l.Lines(ListOptions{}, nil)
	if err != nil || len(lines) != 4 {
		t.Fatalf("the first clone: %d lines, %v", len(lines), err)
	}
	last, err := ledger.Parse(lines[3].Text)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Entry.Record.Extra["prev"]), string(ledger.Value(ledger.Link(&last))); got != want {
		t.Errorf("prev %s, want %s", got, want)
	}
}

// An index made from the history becomes whole when asked about a cycle
// but the largest, and then holds what the index made from the view holds.
func TestIndexFromHistoryMadeWhole(t *testing.T) {
	dir, commits := testRepo(t, 4)
	l := openLedger(t, dir)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	record(t, l, commits[0], 0) // a second record on one commit
	ix, ok := fromHistory(t, l, dir)
	if !ok || ix.Max() != 4 {
		t.Fatalf("not made from the history (%v), or largest %d; want 4", ok, ix.Max())
	}
	if obj, ok, err := ix.Find(2); err != nil || !ok || obj.String() != commits[1] {
		t.Fatalf("cycle 2 on %v, %v, %v; want %s", obj, ok, err, commits[1])
	}
	if ix.whole != nil {
		t.Fatal("a question about another cycle left the index made from the history")
	}
	entries := func(ix *Index) string {
		var out []string
		for _, e := range ix.entries {
			out = append(out, fmt.Sprint(e.cycle, " ", e.obj.String()[:7]))
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	whole, err := l.viewIndex(ledgerNow(t, l))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("1 %s, 2 %s, 3 %s, 4 %s", commits[0][:7], commits[1][:7], commits[2][:7], commits[0][:7])
	if got := entries(ix); got != want || entries(whole) != want {
		t.Errorf("made whole: %s; from the view: %s; want %s", got, entries(whole), want)
	}
}

// A clone that fetched the ledger only into its remote-tracking copy (a
// plain git fetch, no local ledger yet) takes the next number from the
// copy's history, and so does a cycle start.
func TestCopyFromHistoryInAClone(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 4)
	l := openLedger(t, dir)
	for i := 0; i < 4; i++ {
		record(t, l, commits[i], 0)
	}
	record(t, l, commits[0], 9) // a number past a gap
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, "", "clone", "-q", dir, clone)
	git(t, clone, "fetch", "-q", "origin", "refs/notes/evolve:refs/notes/remotes/origin/evolve")
	lc := openLedger(t, clone)
	snap, err := lc.repo.ReadNotes("refs/notes/remotes/origin/evolve")
	if err != nil {
		t.Fatal(err)
	}
	if hx, ok := lc.indexFromHistory(snap); !ok || hx.Max() != 9 {
		t.Fatalf("the copy's history gives %v, %v; want 9", hx, ok)
	}
	res, err := recordWith(lc, recordOn(commits[1], 0))
	if err != nil || res.Entry.Record.Cycle != 10 {
		t.Fatalf("first record in a clone with only the copy: %+v, %v; want cycle 10", res, err)
	}
}

// The cycles of changed notes read in exchanges of a few blobs each are
// those each note holds, note by note.
func TestChangedCycles(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 7)
	l := openLedger(t, dir)
	for i, c := range commits {
		record(t, l, c, 0)
		if i%3 == 0 {
			record(t, l, c, 0) // two records on one note
		}
	}
	changes, err := ledgerNow(t, l).DiffNotes(l.repo.EmptyNotes())
	if err != nil || len(changes) != len(commits) {
		t.Fatalf("diff: %d changes, %v", len(changes), err)
	}
	defer func(n int) { historyNotes = n }(historyNotes)
	for _, per := range []int{1, 2, 3, 100} {
		historyNotes = per
		got, err := l.changedCycles(changes)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range changes {
			data, err := l.repo.ReadBlob(c.New[0])
			if err != nil {
				t.Fatal(err)
			}
			if want := ledger.Cycles(data); fmt.Sprint(got[i]) != fmt.Sprint(want) {
				t.Errorf("%d an exchange: note %d holds %v, read %v", per, i, want, got[i])
			}
		}
	}
}
