package gitstore

import (
	"github.com/git-evolve/git-evolve/internal/testenv"
	"testing"
)

// Two ledgers written by gitstore from a common base merge with
// `git notes merge -s cat_sort_uniq`, and gitstore reads the result.
func TestGitNotesMergeInterop(t *testing.T) {
	testenv.Slow(t)
	for _, tc := range []struct {
		name  string
		fakes int // extra notes in the base, to make it flat or fanned out
	}{
		{"flat base", 0},
		{"fanned-out base", 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			cs := r.makeCommits(4)
			setEnv(t)
			repo := r.open()
			marker, err := repo.WriteBlob([]byte(`{"schema":"1.0.0"}` + "\n"))
			if err != nil {
				t.Fatal(err)
			}

			baseNotes := mergeEdits(fakeEdits(0, tc.fakes, "f%d\n"), map[Hash]string{
				cs[0]: "base0\n",
				cs[1]: "a\n",
			})
			base := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), baseNotes, map[string]Hash{testMarker: marker})
			if err := repo.UpdateRef("refs/notes/other", base.Commit(), ZeroHash, "branch"); err != nil {
				t.Fatal(err)
			}
			ours := mustWriteNotes(t, repo, testNotesRef, base, map[Hash]string{cs[1]: "a\nb\n", cs[2]: "ours2\n"}, nil)
			theirs := mustWriteNotes(t, repo, "refs/notes/other", base, map[Hash]string{cs[1]: "a\nc\n", cs[3]: "theirs3\n"}, nil)

			r.git("notes", "--ref=evolve", "merge", "-q", "-s", "cat_sort_uniq", "refs/notes/other")

			if got := r.hash("rev-parse", testNotesRef+"^1"); got != ours.Commit() {
				t.Errorf("merge's first parent %s, want ours %s", got, ours.Commit())
			}
			if got := r.hash("rev-parse", testNotesRef+"^2"); got != theirs.Commit() {
				t.Errorf("merge's second parent %s, want theirs %s", got, theirs.Commit())
			}

			merged := mustReadNotes(t, openDir(t, r.dir), testNotesRef)
			if merged.Commit() == ours.Commit() {
				t.Fatal("the ledger did not move")
			}
			want := mergeEdits(baseNotes, map[Hash]string{
				cs[1]: "a\nb\nc\n",
				cs[2]: "ours2\n",
				cs[3]: "theirs3\n",
			})
			got := singleNotes(t, walkNotes(t, merged))
			if len(got) != len(want) {
				t.Fatalf("Walk finds %d notes after the merge, want %d", len(got), len(want))
			}
			for obj, content := range want {
				if _, ok := got[obj]; !ok {
					t.Fatalf("Walk misses %s after the merge", obj)
				}
				if text := blobText(t, repo, got[obj]); text != content {
					t.Errorf("note on %s reads %q after the merge, want %q", obj.Short(), text, content)
				}
			}
			if list := r.notesList("evolve"); !sameMap(got, list) {
				t.Errorf("Walk differs from git notes list: %s", mapDiff(got, list))
			}
			if h, ok, err := merged.NonNote(testMarker); err != nil || !ok || h != marker {
				t.Errorf("the marker did not survive the merge: %s, %v, %v", h, ok, err)
			}
			r.fsckClean()

			// gitstore writes on top of git's merge.
			next := mustWriteNotes(t, repo, testNotesRef, merged, map[Hash]string{cs[0]: "after\n"}, nil)
			r.checkOnePath(treeOf(next))
			r.checkGitSees(mergeEdits(want, map[Hash]string{cs[0]: "after\n"}))
		})
	}
}
