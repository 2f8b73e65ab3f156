package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cycle index always agrees with the ledger, however it is made (the
// ledger's history, the saved view current, brought forward or rebuilt),
// and is never the reason a number is refused or reused.
func TestIndexFollowsTheLedger(t *testing.T) {
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	check := func(when string, want map[int]string) {
		t.Helper()
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := l.loadIndex(snap)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if ix.notes != snap.Commit() {
			t.Errorf("%s: index is for %s, ledger at %s", when, ix.notes, snap.Commit())
		}
		top := 0
		for c := range want {
			top = max(top, c)
		}
		if ix.Max() != top {
			t.Errorf("%s: largest cycle %d, want %d", when, ix.Max(), top)
		}
		if err := ix.complete(); err != nil {
			t.Fatal(err)
		}
		got := map[int]string{}
		for _, e := range ix.entries {
			got[int(e.cycle)] = e.obj.String()
		}
		if len(got) != len(want) || len(ix.entries) != len(want) {
			t.Errorf("%s: index has %v, want %v", when, got, want)
		}
		for c, obj := range want {
			if got[c] != obj {
				t.Errorf("%s: cycle %d on %s, want %s", when, c, got[c], obj)
			}
		}
	}
	refused := func(when string, n int) {
		t.Helper()
		if _, err := recordWith(l, recordOn(commits[1], n)); err == nil || !strings.Contains(err.Error(), "is already in the ledger") {
			t.Errorf("%s: a taken number %d is not refused: %v", when, n, err)
		}
	}
	// the index file an older version kept is not read, and a record
	// removes it
	old := filepath.Join(dir, ".git", "evolve", "cycles.idx")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("git-evolve cycle index 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
		want[i+1] = commits[i]
		check("after a record", want)
		if _, err := os.Stat(old); err == nil {
			t.Errorf("after a record: %s is still there", old)
		}
	}
	// A second record on a commit that has one (a reverted cycle on the
	// commit it started from).
	record(t, l, commits[0], 0)
	want[4] = commits[0]
	check("after a second record on one commit", want)

	// Another writer (C git) moves the ledger: the next record catches up.
	git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", `{"v":1,"cycle":9,"result":"improved"}`, commits[5])
	record(t, l, commits[6], 0)
	want[9], want[10] = commits[5], commits[6]
	check("after a foreign note", want)
	refused("after a foreign note", 9)

	// C git edits a note (the history no longer answers): from the view,
	// brought forward.
	export(t, l)
	git(t, dir, "notes", "--ref=evolve", "append", "-m", `{"v":1,"cycle":11,"result":"improved"}`, commits[5])
	want[11] = commits[5]
	check("after a note edited by C git", want)
	record(t, l, commits[7], 0)
	want[12] = commits[7]
	check("after a record on an edited ledger", want)

	// A damaged view, a removed one, a view of another ledger: the same.
	os.WriteFile(view, []byte("damaged"), 0o600)
	refused("with the view damaged", 12)
	check("with the view damaged", want)
	os.Remove(view)
	refused("with no view", 3)
	check("with no view", want)
	git(t, dir, "notes", "--ref=other", "add", "-m", `{"v":1,"cycle":40,"result":"improved"}`, commits[2])
	git(t, dir, "update-ref", "refs/notes/evolve", "refs/notes/other")
	check("with the view of a replaced ledger", map[int]string{40: commits[2]})
	record(t, l, commits[3], 0)
	check("after a record on a replaced ledger", map[int]string{40: commits[2], 41: commits[3]})
}
