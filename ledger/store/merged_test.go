package store

import (
	"github.com/git-evolve/git-evolve/internal/testenv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// mergedFile is what the view's merged section holds ("" when it is not
// there).
func mergedFile(t *testing.T, l *Ledger) string {
	t.Helper()
	return string(sectionAt(t, l.viewPath(), SecMerged))
}

func tipOf(t *testing.T, l *Ledger, ref string) gitstore.Hash {
	t.Helper()
	h, ok, err := l.repo.RefHash(ref)
	if err != nil || !ok {
		t.Fatalf("%s: %v, %v", ref, ok, err)
	}
	return h
}

const copyRef = "refs/notes/remotes/origin/evolve"

// A read finds the remote-tracking copy merged and writes it down with the
// local tip; after a record made here, the next read writes the new local
// tip beside it. A pair kept is trusted (the copy is not walked to); one
// whose local tip is no longer an ancestor is passed by; a damaged file,
// or one in a history replace refs alter, changes no answer.
func TestMergedCopies(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 6)
	l := openLedger(t, dir)
	record(t, l, commits[0], 0)
	record(t, l, commits[1], 0)
	git(t, dir, "update-ref", copyRef, "refs/notes/evolve")
	copy := tipOf(t, l, copyRef)
	record(t, l, commits[2], 0)
	record(t, l, commits[3], 0)
	want := export(t, l)
	local := tipOf(t, l, NotesRef)
	if got := mergedFile(t, l); got != copy.String()+" "+local.String()+"\n" {
		t.Fatalf("the merged section after a read: %q", got)
	}
	record(t, l, commits[4], 0)
	want4 := export(t, l)
	local = tipOf(t, l, NotesRef)
	if got := mergedFile(t, l); got != copy.String()+" "+local.String()+"\n" {
		t.Fatalf("the merged section after a record and a read: %q", got)
	}
	if !strings.HasPrefix(want4, want) || strings.Count(want4, "\n") != 5 {
		t.Fatalf("the ledger read: %q, after %q", want4, want)
	}

	// A pair kept is trusted: a copy written down as merged into the
	// local tip is not read, though it holds a record the ledger lacks.
	git(t, dir, "update-ref", "refs/notes/keep", NotesRef)
	side := openLedger(t, dir)
	record(t, side, commits[5], 0) // on the local ledger, then moved to the copy
	git(t, dir, "update-ref", copyRef, NotesRef)
	git(t, dir, "update-ref", NotesRef, "refs/notes/keep")
	diverged := tipOf(t, l, copyRef)
	withCopy := export(t, openLedger(t, dir))
	if !strings.Contains(withCopy, commits[5]) {
		t.Fatalf("a copy with a record the local ledger lacks is not read: %q", withCopy)
	}
	putSection(t, l.viewPath(), SecMerged, []byte(diverged.String()+" "+local.String()+"\n"))
	if got := export(t, openLedger(t, dir)); got != want4 {
		t.Errorf("with the copy written down as merged: %q, want %q", got, want4)
	}
	// A pair whose local tip is not an ancestor of the local ledger: the
	// question is asked whole.
	putSection(t, l.viewPath(), SecMerged, []byte(diverged.String()+" "+diverged.String()+"\n"))
	if got := export(t, openLedger(t, dir)); got != withCopy {
		t.Errorf("with a pair of another history: %q, want %q", got, withCopy)
	}
	// A damaged file, and a file in a history replace refs alter: the
	// same answer, and nothing written down there.
	for _, damaged := range []string{"garbage\n", strings.Repeat("0", 5000), diverged.String() + "\n"} {
		putSection(t, l.viewPath(), SecMerged, []byte(damaged))
		if got := export(t, openLedger(t, dir)); got != withCopy {
			t.Errorf("with the merged section %.20q: %q, want %q", damaged, got, withCopy)
		}
	}
	putSection(t, l.viewPath(), SecMerged, nil)
	git(t, dir, "update-ref", copyRef, NotesRef+"~1") // merged again
	git(t, dir, "replace", commits[1], commits[0])
	export(t, openLedger(t, dir))
	if got := mergedFile(t, l); got != "" {
		t.Errorf("the merged section written where replace refs alter the history: %q", got)
	}
}
