package cycle

import (
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

// A record chains to the ledger's last record in listing order, whatever
// brought the ledger where it is: records of this clone, copies of the last
// one on other commits (one note read, through the index's head), a record
// of the same cycle another clone wrote, the head's note removed, the
// index gone. The last record is what a listing ends with.
func TestRecordChainsToTheLastRecord(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 20)
	l := openLedger(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "cycles.idx")
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
		res, err := l.Record(recordOn(commits[next], 0))
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

	// copies of the last record on other commits: the head is read from
	// the index, and is that record
	r := check("after a record")
	for _, c := range commits[14:18] {
		notes("copy", "-f", r.CanonicalSHA, c)
	}
	if ix, err := readIndex(path); err != nil || ix == nil || ix.head == nil || ix.head.Link != ledger.Link(&r) {
		t.Fatalf("the index's head is not record %d (%v)", r.Cycle, err)
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

	// no index (a fresh clone): the ledger's history gives the largest
	// cycle; a damaged one is made again, with its head
	os.Remove(path)
	check("after the index was removed")
	os.WriteFile(path, []byte("damaged"), 0o600)
	check("after the index was damaged")
	if ix, err := readIndex(path); err != nil || ix == nil || ix.head == nil {
		t.Fatalf("the index made again has no head: %v", err)
	}
	check("after the index was made again")

	// a damaged head is a damaged index, made again
	data, _ := os.ReadFile(path)
	at := strings.Index(string(data), `"link":"`)
	if at < 0 {
		t.Fatal("no head in the index file")
	}
	data[at-1] = 'X' // no longer JSON
	os.WriteFile(path, data, 0o600)
	if _, err := readIndex(path); err == nil {
		t.Error("a damaged head read as an index")
	}
	check("after the head was damaged")
}

// A record with no id (what plain git or the seeds' scripts append) cannot
// be linked to: a record written after one chains to the last record that
// has an id, whether the index's head was brought forward by the note that
// changed, read from every note, or found through the ledger's history.
func TestRecordChainsPastRecordsWithNoID(t *testing.T) {
	dir, commits := testRepo(t, 12)
	l := openLedger(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "cycles.idx")
	next := 0
	write := func() ledger.Record {
		t.Helper()
		res, err := l.Record(recordOn(commits[next], 0))
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
	check("after two, the index gone", r)

	r = write()
	plain(r.Cycle + 1)
	os.WriteFile(path, []byte("damaged"), 0o600)
	check("after one, the index damaged", r)
}
