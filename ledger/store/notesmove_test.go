package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// lsTree is the lines of git ls-tree of tree, one entry each.
func lsTree(t *testing.T, dir, tree string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(git(t, dir, "ls-tree", tree), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// commitNotesTree makes tree the next commit of refs/notes/evolve, as
// another writer pushing it would.
func commitNotesTree(t *testing.T, dir, tree, msg string) {
	t.Helper()
	c := strings.TrimSpace(git(t, dir, "commit-tree", "-p", "refs/notes/evolve", "-m", msg, tree))
	git(t, dir, "update-ref", "refs/notes/evolve", c)
}

// inBucket is the notes tree root with the note of commit taken from the
// root into a fanout subtree of its prefix (a tree git notes never
// leaves: the other notes stay beside that subtree).
func inBucket(t *testing.T, dir, root, commit string) string {
	t.Helper()
	var kept []string
	blob := ""
	for _, l := range lsTree(t, dir, root) {
		if strings.HasSuffix(l, "\t"+commit) {
			blob = strings.Fields(l)[2]
			continue
		}
		kept = append(kept, l)
	}
	if blob == "" {
		t.Fatalf("premise: no flat note on %s", commit)
	}
	sub := strings.TrimSpace(testenv.GitIn(t, dir, "100644 blob "+blob+"\t"+commit[2:]+"\n", "mktree"))
	kept = append(kept, "040000 tree "+sub+"\t"+commit[:2])
	return strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(kept, "\n")+"\n", "mktree"))
}

// A record moves the notes another tool left beside a fanout subtree, and
// the next one finds the levels plain and brings the index of cycles
// forward, also when a submodule entry sits at a note's path beside the
// subtrees (git notes keeps one as any non-note, and git reads none
// there; no write moves it): it is no note, and hides none.
//
// Which way a write kept the index shows in an entry planted in it (the
// stamp left right, so readers take the index as it is): a write that
// brings the index forward keeps what it lists of the notes it does not
// touch, one that builds it again from every note drops the entry. Without
// the submodule entry the write brings it forward (the control).
func TestRecordAfterASubmoduleBesideFanoutBringsTheIndexForward(t *testing.T) {
	for _, gitlink := range []bool{false, true} {
		t.Run(fmt.Sprintf("gitlink=%v", gitlink), func(t *testing.T) {
			dir, commits := testRepo(t, 8)
			l := openLedger(t, dir)
			for i := 0; i < 3; i++ {
				record(t, l, commits[i], 0)
			}
			// another tool's tree: commits[0]'s note in a subtree, the
			// other notes beside it; and a submodule entry at the path
			// of commits[7]'s note
			root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
			root = inBucket(t, dir, root, commits[0])
			if gitlink {
				lines := append(lsTree(t, dir, root), "160000 commit "+commits[7]+"\t"+commits[7])
				root = strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(lines, "\n")+"\n", "mktree"))
			}
			commitNotesTree(t, dir, root, "another tool")

			// the first record moves the notes beside the subtree
			record(t, openLedger(t, dir), commits[3], 0)
			tip := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
			for _, l := range lsTree(t, dir, tip) {
				if f := strings.Fields(l); f[1] == "blob" && len(strings.Split(l, "\t")[1]) == 40 {
					t.Fatalf("premise: a note still beside the subtrees: %s", l)
				}
			}

			// planted: commits[5] (no note) listed under cycle 77
			planted := "77-" + commits[5]
			tip = treeWithEntry(t, dir, tip, strings.Split(ledger.IndexName+"/0/0", "/"), planted)
			commitNotesTree(t, dir, tip, "planted")

			record(t, openLedger(t, dir), commits[4], 0)
			listed := git(t, dir, "ls-tree", "-r", "--name-only", "refs/notes/evolve:"+ledger.IndexName)
			if !strings.Contains(listed, "0/0/"+planted) {
				t.Errorf("the record after the notes were moved built the index of cycles again from every note (the planted entry is gone), where it brings it forward; the root:\n%s",
					git(t, dir, "ls-tree", "refs/notes/evolve"))
			}
		})
	}
}

// upper is s with its hex letters in upper case.
func upper(s string) string { return strings.ToUpper(s) }

// A note under its name in upper case is the object's note to git (git
// notes list/show read it: hex digits in either case) and to every reader
// here. A record on another commit, which rewrites the level it sits on,
// keeps it: a copy at the root under both cases, and a whole bucket "AB"
// beside "ab", are joined into the names in lower case, as git reads
// them, nothing lost.
func TestRecordKeepsNotesUnderUpperCaseNames(t *testing.T) {
	other := func(commit string) string {
		return `{"v":1,"cycle":9,"target":"u","result":"harvested","goals_passing":1,"goals_total":1,"sha":"` + commit + `","canonical_sha":"` + commit + `","timestamp":"2026-01-02T03:04:06Z"}` + "\n"
	}
	t.Run("copies at the root", func(t *testing.T) {
		dir, commits := testRepo(t, 4)
		l := openLedger(t, dir)
		record(t, l, commits[0], 0)
		record(t, l, commits[1], 0)
		x := commits[0]
		if upper(x) == x {
			t.Skip("no letter")
		}
		blob := strings.TrimSpace(testenv.GitIn(t, dir, other(x), "hash-object", "-w", "--stdin"))
		root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
		lines := append(lsTree(t, dir, root), "100644 blob "+blob+"\t"+upper(x))
		commitNotesTree(t, dir, strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(lines, "\n")+"\n", "mktree")), "another tool")
		before := git(t, dir, "notes", "--ref=evolve", "show", x)
		if !strings.Contains(before, `"target":"u"`) || !strings.Contains(before, `"cycle":1,`) {
			t.Fatalf("premise: git reads both copies:\n%s", before)
		}
		record(t, openLedger(t, dir), commits[2], 0)
		after := git(t, dir, "notes", "--ref=evolve", "show", x)
		if !strings.Contains(after, `"target":"u"`) || !strings.Contains(after, `"cycle":1,`) {
			t.Errorf("a record on another commit lost a copy of %s's note:\nbefore:\n%safter:\n%s", x[:7], before, after)
		}
	})
	t.Run("buckets", func(t *testing.T) {
		dir, commits := testRepo(t, 2)
		// two commits whose names share their first two digits, a letter
		// among them
		var x, y string
		seen := map[string]string{}
		head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
		for i := 0; x == ""; i++ {
			if i > 2000 {
				t.Fatal("no pair")
			}
			c := strings.TrimSpace(git(t, dir, "commit-tree", "-m", fmt.Sprint("c", i), head))
			if upper(c[:2]) == c[:2] {
				continue
			}
			if o, ok := seen[c[:2]]; ok {
				x, y = o, c
			}
			seen[c[:2]] = c
		}
		l := openLedger(t, dir)
		record(t, l, x, 0)
		record(t, l, y, 0)
		// x's note in a bucket named in upper case, y's in one in lower
		// case, the rest as it was
		root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
		var kept []string
		blobs := map[string]string{}
		for _, l := range lsTree(t, dir, root) {
			name := strings.Split(l, "\t")[1]
			if name == x || name == y {
				blobs[name] = strings.Fields(l)[2]
				continue
			}
			kept = append(kept, l)
		}
		bx := strings.TrimSpace(testenv.GitIn(t, dir, "100644 blob "+blobs[x]+"\t"+x[2:]+"\n", "mktree"))
		by := strings.TrimSpace(testenv.GitIn(t, dir, "100644 blob "+blobs[y]+"\t"+y[2:]+"\n", "mktree"))
		kept = append(kept, "040000 tree "+bx+"\t"+upper(x[:2]), "040000 tree "+by+"\t"+y[:2])
		commitNotesTree(t, dir, strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(kept, "\n")+"\n", "mktree")), "another tool")
		count := func() int {
			return len(strings.Fields(git(t, dir, "notes", "--ref=evolve", "list"))) / 2
		}
		if n := count(); n != 2 {
			t.Fatalf("premise: git lists %d notes", n)
		}
		record(t, openLedger(t, dir), commits[1], 0)
		if n := count(); n != 3 {
			t.Errorf("after a record on another commit git lists %d notes, want 3 (the note on %s, in bucket %s, lost):\n%s", n, x[:7], upper(x[:2]),
				git(t, dir, "notes", "--ref=evolve", "list"))
		}
	})
}

// A saved view made on a tree with a note at two paths (flat, and in the
// bucket of its prefix, each with records of its own) is brought forward
// over the record that joins the two copies: what it lists is what a read
// of every note lists, and what C git shows.
func TestViewBroughtForwardOverAMove(t *testing.T) {
	dir, commits := testRepo(t, 6)
	l := openLedger(t, dir)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	x := commits[1]
	copyNote := `{"v":1,"cycle":9,"target":"u","result":"harvested","goals_passing":1,"goals_total":1,"sha":"` + x + `","canonical_sha":"` + x + `","timestamp":"2026-01-02T03:04:06Z"}` + "\nhand-written\n"
	blob := strings.TrimSpace(testenv.GitIn(t, dir, copyNote, "hash-object", "-w", "--stdin"))
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	root = inBucket(t, dir, root, commits[2])
	sub := strings.TrimSpace(testenv.GitIn(t, dir, "100644 blob "+blob+"\t"+x[2:]+"\n", "mktree"))
	lines := lsTree(t, dir, root)
	if x[:2] == commits[2][:2] {
		t.Skip("one bucket")
	}
	lines = append(lines, "040000 tree "+sub+"\t"+x[:2])
	commitNotesTree(t, dir, strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(lines, "\n")+"\n", "mktree")), "another tool")
	before := export(t, openLedger(t, dir)) // saves the view
	if !strings.Contains(before, `"cycle":9,`) {
		t.Fatalf("premise: both copies read:\n%s", before)
	}
	record(t, openLedger(t, dir), commits[4], 0)
	viaView := export(t, openLedger(t, dir))
	os.Remove(filepath.Join(dir, ".git", "evolve", "ledger.view"))
	fresh := export(t, openLedger(t, dir))
	if viaView != fresh {
		t.Errorf("the view brought forward:\n%s\nevery note read:\n%s", viaView, fresh)
	}
	if !strings.Contains(fresh, `"cycle":9,`) || !strings.Contains(git(t, dir, "notes", "--ref=evolve", "show", x), "hand-written") {
		t.Errorf("a copy lost:\n%s", fresh)
	}
	git(t, dir, "fsck", "--strict", "--no-dangling")
}

// A write whose records on a commit are all in its note already still
// moves that note when it sits beside a fanout subtree: the level is left
// plain for the next write.
func TestUnchangedNoteBesideFanoutMoved(t *testing.T) {
	dir, commits := testRepo(t, 6)
	l := openLedger(t, dir)
	for i := 0; i < 3; i++ {
		record(t, l, commits[i], 0)
	}
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	commitNotesTree(t, dir, inBucket(t, dir, root, commits[0]), "another tool")
	l = openLedger(t, dir)
	list, err := l.Show("2")
	if err != nil || len(list.Entries) != 1 {
		t.Fatal(err)
	}
	x := list.Entries[0].Commit // cycle 2's commit, its note beside the subtree
	y, _ := gitstore.ParseHash(commits[4])
	// relink: the record again on its own commit (there already), and a
	// copy on another
	if _, err := l.Attach(map[gitstore.Hash][]ledger.Record{x: {list.Entries[0].Record}, y: {list.Entries[0].Record}}); err != nil {
		t.Fatal(err)
	}
	for _, l := range lsTree(t, dir, "refs/notes/evolve^{tree}") {
		if strings.HasSuffix(l, "\t"+x.String()) {
			t.Errorf("the note on %s is still beside the subtrees after the write:\n%s", x.Short(), git(t, dir, "ls-tree", "refs/notes/evolve"))
		}
	}
}
