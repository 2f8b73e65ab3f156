package cycle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// An abort interrupted after its record is completed by the next abort,
// which keeps the save the record names and records nothing twice.
func TestAbortResumes(t *testing.T) {
	dir, _ := testRepo(t, 2)
	l := openLedger(t, dir)
	if _, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "work.txt"), []byte("one\n"), 0o644)
	// The first abort stops after its record: the open cycle stays.
	open, saved, err := l.AbortCycle("", AbortNotes{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(open)
	os.WriteFile(l.openPath(), data, 0o644)
	os.WriteFile(filepath.Join(dir, "work.txt"), []byte("two\n"), 0o644)
	_, again, err := l.AbortCycle("", AbortNotes{})
	if err != nil {
		t.Fatal(err)
	}
	if again != saved {
		t.Errorf("the resumed abort saved %s, the record names %s", again, saved)
	}
	if got := strings.TrimSpace(git(t, dir, "rev-parse", SavedRef(open.ID))); got != saved.String() {
		t.Errorf("the saved ref is at %s, the record names %s", got, saved)
	}
	list, err := l.List(store.ListOptions{Journal: true, Copies: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, en := range list.Entries {
		if en.Record.ID == open.ID {
			n++
			if en.Journal || en.Commit.String() != open.Start {
				t.Errorf("the abort's record is on %s (journal %v), want the note on its start %s", en.Commit, en.Journal, open.Start)
			}
		}
	}
	if n != 1 {
		t.Errorf("the ledger has %d records of the abort, want 1", n)
	}
	notes := git(t, dir, "notes", "--ref=evolve", "show", open.Start)
	if !strings.Contains(notes, `"aborted":true`) || !strings.Contains(notes, `"result":"unchanged"`) {
		t.Errorf("git notes show %s: %s, want the aborted record", open.Start, notes)
	}
}

// A cycle whose abort an older git-evolve journaled before it was
// interrupted is not recorded again in the notes.
func TestAbortJournaledBefore(t *testing.T) {
	dir, _ := testRepo(t, 2)
	l := openLedger(t, dir)
	c, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.journal.Append(ledger.Record{V: ledger.SchemaMajor, ID: c.ID, Cycle: c.Cycle, Result: ledger.Unchanged,
		CycleStartSHA: c.Start, Timestamp: "2026-01-01T00:00:00Z", Extra: map[string]json.RawMessage{"aborted": json.RawMessage("true")}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.AbortCycle("gone", AbortNotes{}); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "for-each-ref", "refs/notes/evolve"); out != "" {
		t.Errorf("the notes were written: %s", out)
	}
	if recs, _, _ := l.journal.Read(); len(recs) != 1 || recs[0].ID != c.ID {
		t.Errorf("the journal has %d records, want the one of cycle %s", len(recs), c.ID)
	}
	if _, err := l.Current(); err != ErrNoOpenCycle {
		t.Errorf("the cycle is still open (%v)", err)
	}
}

// The save an abort keeps is this clone's own: a note on the cycle's start
// that names the cycle's id and another commit (a remote's ledger can bring
// one) does not choose it.
func TestAbortSaveIsOwn(t *testing.T) {
	dir, commits := testRepo(t, 2)
	l := openLedger(t, dir)
	c, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	forged := `{"v":1,"id":"` + c.ID + `","cycle":` + strconv.Itoa(c.Cycle) + `,"result":"unchanged","aborted":true,"saved":"` + commits[0] + `"}`
	git(t, dir, "notes", "--ref=evolve", "add", "-m", forged, c.Start)
	os.WriteFile(filepath.Join(dir, "work.txt"), []byte("mine\n"), 0o644)
	_, saved, err := l.AbortCycle("", AbortNotes{})
	if err != nil {
		t.Fatal(err)
	}
	if saved.String() == commits[0] {
		t.Fatalf("the abort kept %s, which a note named, as its save", saved)
	}
	if got := git(t, dir, "show", saved.String()+":work.txt"); got != "mine\n" {
		t.Errorf("the save holds %q, want the working tree's work.txt", got)
	}
}

// An aborted cycle's record carries what its caller saw during the cycle
// (the driver: commands refused, the guard's marks, the operator's
// markers), as a finished one's does; an abort resumed from its saved
// state, given nothing, carries what the first was given.
func TestAbortRecordCarriesNotes(t *testing.T) {
	dir, _ := testRepo(t, 2)
	l := openLedger(t, dir)
	notes := AbortNotes{Tampering: []string{"stop: refused, run at 12:00 while the driver owned the worktree"},
		Markers: []string{"STOP: removed during the agent's turn; put back"}}
	record := func(open *OpenCycle) string {
		t.Helper()
		return git(t, dir, "notes", "--ref=evolve", "show", open.Start)
	}
	// given to the abort
	if _, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")}); err != nil {
		t.Fatal(err)
	}
	open, _, err := l.AbortCycle("the agent exited 1", notes)
	if err != nil {
		t.Fatal(err)
	}
	got := record(open)
	for _, want := range []string{`"tampering":["stop: refused, run at 12:00 while the driver owned the worktree"]`, `"markers":["STOP: removed during the agent's turn; put back"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("the aborted record lacks %s:\n%s", want, got)
		}
	}
	// kept with the abort's state: an abort resumed from it carries them
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "next")
	second, err := l.StartCycle(StartOptions{Target: "u", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	second.Aborting = &Aborting{Reason: "the agent timed out", Tampering: notes.Tampering, Markers: notes.Markers}
	data, _ := json.Marshal(second)
	if err := os.WriteFile(l.openPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	resumed, _, err := l.AbortCycle(second.Aborting.Reason, AbortNotes{})
	if err != nil {
		t.Fatal(err)
	}
	if got := record(resumed); !strings.Contains(got, `"markers":["STOP: removed during the agent's turn; put back"]`) || !strings.Contains(got, `"tampering":[`) {
		t.Errorf("the resumed abort's record lacks the notes it was first given:\n%s", got)
	}
}
