package cycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cycle index always agrees with the ledger: appended to after a
// record, rebuilt when missing or damaged, brought up to date after other
// writers, and never the reason a number is refused or reused.
func TestIndexFollowsTheLedger(t *testing.T) {
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	path := filepath.Join(dir, ".git", "evolve", "cycles.idx")
	check := func(when string, want map[int]string) {
		t.Helper()
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := readIndex(path)
		if err != nil || ix == nil {
			t.Fatalf("%s: index %v, %v", when, ix, err)
		}
		if err := ix.load(); err != nil {
			t.Fatal(err)
		}
		if ix.notes != snap.Commit() {
			t.Errorf("%s: index is for %s, ledger at %s", when, ix.notes, snap.Commit())
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
	want := map[int]string{}
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
		want[i+1] = commits[i]
		check("after a record", want)
	}
	// A second record on a commit that has one (a reverted cycle on the
	// commit it started from): appended to, as a record on a new commit
	// is, not read whole and written anew (which would sort it).
	record(t, l, commits[0], 0)
	want[4] = commits[0]
	check("after a second record on one commit", want)
	if ix, err := readIndex(path); err != nil || ix.file.count != 4 || ix.file.sorted != 1 {
		t.Errorf("after a second record on one commit: %d entries, %d sorted (%v); want 4 and 1 (appended after the first)", ix.file.count, ix.file.sorted, err)
	} else {
		ix.close()
	}

	// Another writer (C git) moves the ledger: the next record catches up.
	git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", `{"v":1,"cycle":9,"result":"improved"}`, commits[5])
	record(t, l, commits[6], 0)
	want[9], want[10] = commits[5], commits[6]
	check("after a foreign note", want)

	// A torn append (a partial entry) and a missing file are rebuilt.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("torn"))
	f.Close()
	record(t, l, commits[7], 0)
	want[11] = commits[7]
	check("after a torn index", want)
	os.Remove(path)
	if _, err := l.Record(recordOn(commits[1], 11)); err == nil || !strings.Contains(err.Error(), "cycle 11 is already in the ledger") {
		t.Errorf("with no index, a taken number is not refused: %v", err)
	}
	check("after a rebuild", want)

	// A header naming an older notes commit (a crash after the append) is
	// brought up to date, and the appended entry is not counted twice.
	ix, _ := readIndex(path)
	old := ix.notes
	record(t, l, commits[2], 0)
	want[12] = commits[2]
	data, _ := os.ReadFile(path)
	copy(data[len(indexMagic):], old[:])
	os.WriteFile(path, data, 0o644)
	record(t, l, commits[4], 0)
	want[13] = commits[4]
	check("after a stale header", want)

	// An append that did not reach the disk while the header did: the
	// count no longer matches, and the index is rebuilt.
	data, _ = os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-24], 0o644)
	record(t, l, commits[3], 0)
	want[14] = commits[3]
	check("after a lost append", want)

	// With no index, a current saved view gives it (no note read), and a
	// view of another ledger is not used.
	export(t, l) // the view, current
	os.Remove(path)
	if _, err := l.Record(recordOn(commits[1], 14)); err == nil || !strings.Contains(err.Error(), "cycle 14 is already in the ledger") {
		t.Errorf("with the index from the view, a taken number is not refused: %v", err)
	}
	check("after a rebuild from the view", want)
	record(t, l, commits[5], 0) // the view is a ledger behind now
	want[15] = commits[5]
	os.Remove(path)
	record(t, l, commits[6], 0)
	want[16] = commits[6]
	// The number came from the ledger's history (TestIndexFromHistory),
	// which writes no index; a question only every note answers does.
	if _, err := l.Record(recordOn(commits[1], 16)); err == nil || !strings.Contains(err.Error(), "cycle 16 is already in the ledger") {
		t.Errorf("with the index from the history, a taken number is not refused: %v", err)
	}
	check("after a rebuild with a stale view", want)
}
