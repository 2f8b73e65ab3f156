package gitstore

import (
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"strings"
	"testing"
)

// A submodule entry at a note's path, in a fanned-out tree git wrote: no
// reader sees it as a note, BadNotes finds it wherever it is, BadNotesSince
// finds only what is not in the older tree, and a write of that object's
// note replaces it.
func TestBadNotes(t *testing.T) {
	testenv.Slow(t)
	setEnv(t)
	fx := gitNotesFixture(t)
	r := &testRepo{t: t, dir: fx.dir}
	// Two gitlinks put into the git-written tree, one at the root, one in
	// a fanout subtree, each in a commit of its own on another ref.
	root := strings.TrimRight(r.git("ls-tree", testNotesRef), "\n")
	first := strings.Repeat("ab", 20)
	second := strings.Repeat("cd", 20)
	link := fx.commits[305].String()
	withFirst := strings.TrimSpace(r.gitIn(root+fmt.Sprintf("\n160000 commit %s\t%s\n", link, first), "mktree"))
	c1 := strings.TrimSpace(r.git("commit-tree", "-m", "first", withFirst))
	// the second inside bucket "cd" (the fixture's tree is fanned out)
	bucket := strings.TrimSpace(r.git("rev-parse", testNotesRef+":cd"))
	sub := strings.TrimRight(r.git("ls-tree", bucket), "\n")
	newBucket := strings.TrimSpace(r.gitIn(sub+fmt.Sprintf("\n160000 commit %s\t%s\n", link, second[2:]), "mktree"))
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(r.git("ls-tree", withFirst), "\n"), "\n") {
		if strings.HasSuffix(l, "\tcd") {
			l = "040000 tree " + newBucket + "\tcd"
		}
		lines = append(lines, l)
	}
	withBoth := strings.TrimSpace(r.gitIn(strings.Join(lines, "\n")+"\n", "mktree"))
	c2 := strings.TrimSpace(r.git("commit-tree", "-p", c1, "-m", "second", withBoth))
	r.git("update-ref", "refs/notes/bad1", c1)
	r.git("update-ref", "refs/notes/bad2", c2)

	repo := r.open()
	one := mustReadNotes(t, repo, "refs/notes/bad1")
	both := mustReadNotes(t, repo, "refs/notes/bad2")
	plain := mustReadNotes(t, repo, testNotesRef)

	got, err := both.BadNotes()
	if err != nil || fmt.Sprint(got) != fmt.Sprintf("[%s %s]", first, second) {
		t.Errorf("BadNotes = %v, %v; want both", got, err)
	}
	if got, err := both.BadNotesSince(one); err != nil || fmt.Sprint(got) != fmt.Sprintf("[%s]", second) {
		t.Errorf("BadNotesSince(first) = %v, %v; want the second only", got, err)
	}
	if got, err := both.BadNotesSince(both); err != nil || len(got) != 0 {
		t.Errorf("BadNotesSince(itself) = %v, %v; want none", got, err)
	}
	if got, err := plain.BadNotes(); err != nil || len(got) != 0 {
		t.Errorf("the fixture's BadNotes = %v, %v; want none", got, err)
	}
	if ok, err := both.HasBadNote(mustHash(t, second)); !ok || err != nil {
		t.Errorf("HasBadNote(second) = %v, %v", ok, err)
	}
	// No reader takes them for notes.
	n := 0
	if err := both.Walk(func(obj, _ Hash) error {
		if s := obj.String(); s == first || s == second {
			t.Errorf("Walk gave the submodule entry %s as a note", s)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != fixtureNotes {
		t.Errorf("Walk gave %d notes, want %d", n, fixtureNotes)
	}
	// Writing the note of that object replaces the entry.
	blob, err := repo.WriteBlob([]byte("a note\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := both.ApplyNotes([]NoteEdit{{Object: mustHash(t, second), Blob: blob}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := r.git("ls-tree", "-r", tree.String()); strings.Contains(out, "160000 commit "+link+"\t"+second[:2]+"/") {
		t.Errorf("the submodule entry of the written object is still there:\n%s", out)
	}
	if out := r.git("ls-tree", "-r", tree.String()); !strings.Contains(out, "160000 commit "+link+"\t"+first) {
		t.Errorf("the other submodule entry is gone:\n%s", out)
	}
}

// A blob stored as a symbolic link at a note's path is no note to git
// (notes are files): no reader here takes it for one either, BadNotes
// finds it, and a write of that object's note replaces it.
func TestSymbolicLinkAtANotePath(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	link := strings.TrimSpace(r.gitIn("a link's target\n", "hash-object", "-w", "--stdin"))
	note := strings.TrimSpace(r.gitIn("a note\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n120000 blob %s\t%s\n", note, cs[0], link, cs[1]), "mktree"))
	r.git("update-ref", testNotesRef, strings.TrimSpace(r.git("commit-tree", "-m", "another tool", tree)))
	if got := strings.Fields(r.git("notes", "--ref=evolve", "list")); len(got) != 2 || got[1] != cs[0].String() {
		t.Fatalf("premise: git lists the file's note alone: %v", got)
	}
	repo := r.open()
	snap := mustReadNotes(t, repo, testNotesRef)
	if blobs, err := snap.Find(cs[1]); err != nil || len(blobs) != 0 {
		t.Errorf("Find took the link for a note: %v %v", blobs, err)
	}
	seen := 0
	if err := snap.ForEachNote(func(Hash, []byte) error { seen++; return nil }); err != nil || seen != 1 {
		t.Errorf("ForEachNote saw %d notes (%v), want 1", seen, err)
	}
	if bad, err := snap.BadNotes(); err != nil || len(bad) != 1 || bad[0] != cs[1] {
		t.Errorf("BadNotes = %v, %v", bad, err)
	}
	tree2, err := snap.ApplyNotes([]NoteEdit{{Object: cs[1], Blob: blobOf(t, repo, "written\n")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, c := testIdentity(t, repo)
	if _, err := snap.CommitNotes(testNotesRef, tree2, "written\n", a, c); err != nil {
		t.Fatal(err)
	}
	if got := r.git("notes", "--ref=evolve", "show", cs[1].String()); got != "written\n" {
		t.Errorf("git reads the note written: %q", got)
	}
}
