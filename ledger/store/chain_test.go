package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// A record chains to the ledger's last record in listing order, whatever
// brought the ledger where it is: records of this clone, copies of the last
// one on other commits, a record of the same cycle another clone wrote,
// the head's note removed, the saved view gone or damaged. The last record
// is what a listing ends with.
func TestRecordChainsToTheLastRecord(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 20)
	l := openLedger(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "ledger.view")
	last := func() ledger.Record {
		t.Helper()
		lines, _, err := l.Lines(ListOptions{}, nil)
		if err != nil || len(lines) == 0 {
			t.Fatalf("%d lines, %v", len(lines), err)
		}
		r, err := ledger.Parse(lines[len(lines)-1].Text)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	next := 0
	check := func(when string) ledger.Record {
		t.Helper()
		want := last()
		res, err := recordWith(l, recordOn(commits[next], 0))
		next++
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Entry.Record.ExtraString("prev"); got != ledger.Link(&want) {
			t.Errorf("%s: prev %s, want %s (cycle %d, id %s)", when, got, ledger.Link(&want), want.Cycle, want.ID)
		}
		return res.Entry.Record
	}
	notes := func(args ...string) { git(t, dir, append([]string{"notes", "--ref=evolve"}, args...)...) }

	record(t, l, commits[next], 0)
	next++
	check("after a record")

	// copies of the last record on other commits: the head the view
	// gives is that record
	r := check("after a record")
	for _, c := range commits[14:18] {
		notes("copy", "-f", r.CanonicalSHA, c)
	}
	snap, err := l.repo.ReadNotes(NotesRef)
	if err != nil {
		t.Fatal(err)
	}
	if ix, err := l.viewIndex(snap); err != nil || ix.head == nil || ledger.Link(ix.head) != ledger.Link(&r) {
		t.Fatalf("the view's head is not record %d (%v)", r.Cycle, err)
	}
	r = check("after copies of the last record")

	// another clone's record of the same cycle, later in listing order
	// (same time, a larger id), on another commit
	other := r
	other.ID = "zzzz" + r.ID
	other.Extra = nil
	notes("add", "-f", "-m", string(other.Marshal()), commits[15])
	check("after another clone's record of the same cycle")

	// the note of the head removed, a copy left: the copy is read
	r = check("after a record")
	notes("copy", "-f", r.CanonicalSHA, commits[19])
	notes("remove", r.CanonicalSHA)
	check("after the head's note was removed")

	// the largest cycle removed altogether: the one before is the last
	r = check("after a record")
	notes("remove", r.CanonicalSHA)
	check("after the largest cycle was removed")

	// no view (a fresh clone), a damaged one, one of an older ledger
	os.Remove(path)
	check("after the view was removed")
	os.WriteFile(path, []byte("damaged"), 0o600)
	check("after the view was damaged")
	export(t, l)
	check("with the view a record behind")
	notes("append", "-m", `{"v":1,"cycle":1,"target":"t","result":"improved","timestamp":"2026-01-03T00:00:00Z"}`, commits[0])
	check("after a note plain git edited, the view a record behind")
}

// A record with no id (what plain git or the seeds' scripts append) cannot
// be linked to: a record written after one chains to the last record that
// has an id, whether it was found through the ledger's history or the
// saved view (current, brought forward, rebuilt).
func TestRecordChainsPastRecordsWithNoID(t *testing.T) {
	dir, commits := testRepo(t, 16)
	l := openLedger(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "ledger.view")
	next := 0
	write := func() ledger.Record {
		t.Helper()
		res, err := recordWith(l, recordOn(commits[next], 0))
		next++
		if err != nil {
			t.Fatal(err)
		}
		return res.Entry.Record
	}
	plain := func(cycle int) {
		t.Helper()
		line := `{"cycle":` + strconv.Itoa(cycle) + `,"target":"t","result":"improved","timestamp":"2026-01-03T00:00:00Z"}`
		git(t, dir, "notes", "--ref=evolve", "append", "-m", line, commits[next])
		next++
	}
	check := func(when string, want ledger.Record) {
		t.Helper()
		got := write()
		if p := got.ExtraString("prev"); p != ledger.Link(&want) {
			t.Errorf("%s: prev %q, want %q (cycle %d)", when, p, ledger.Link(&want), want.Cycle)
		}
	}

	r := write()
	plain(r.Cycle + 1)
	check("after one record with no id", r)

	r = write()
	plain(r.Cycle + 1)
	plain(r.Cycle + 2)
	os.Remove(path)
	check("after two, the view gone", r)

	r = write()
	plain(r.Cycle + 1)
	os.WriteFile(path, []byte("damaged"), 0o600)
	check("after one, the view damaged", r)

	r = write()
	export(t, l)
	plain(r.Cycle + 1)
	check("after one, the view a note behind", r)
}

// A record after an import that stored a second record of the largest
// cycle (on another commit, earlier in listing order) links to the last
// record in listing order, whichever way the index was made: the import's
// commit names the largest cycle too, and the history is read back to the
// commit that named less.
func TestRecordChainsPastAnImportOfTheLargest(t *testing.T) {
	dir, commits := testRepo(t, 6)
	l := openLedger(t, dir)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	line := fmt.Sprintf(`{"cycle":3,"target":"t","result":"improved","sha":%q,"timestamp":"2025-01-01T00:00:00Z","goals_passing":1,"goals_total":1}`, commits[3])
	if _, err := l.Import(strings.NewReader(line+"\n"), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	lines, _, err := l.Lines(ListOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, err := ledger.Parse(lines[len(lines)-1].Text)
	if err != nil || last.Timestamp == "2025-01-01T00:00:00Z" {
		t.Fatalf("the listing ends with %+v, %v: not the record", last, err)
	}
	want := ledger.Link(&last)
	snap, err := l.repo.ReadNotes(NotesRef)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	for _, how := range []string{"history", "view"} {
		ix, err := l.loadIndex(snap)
		if how == "view" {
			ix, err = l.viewIndex(snap)
		} else if ix.whole == nil {
			t.Errorf("the index was not made from the history")
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.lastRecord(snap, ix)
		if err != nil || got == nil || ledger.Link(got) != want {
			t.Errorf("from the %s: links to %v (%v), want %s", how, got, err, want)
		}
	}
	res, err := recordWith(l, recordOn(commits[4], 0))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Entry.Record.ExtraString("prev"); p != want {
		t.Errorf("record %d: prev %s, want %s (the last record listed)", res.Entry.Record.Cycle, p, want)
	}
}
