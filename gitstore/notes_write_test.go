package gitstore

import (
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func TestWriteOnEmptyLedger(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(5)
	setEnv(t)
	repo := r.open()

	snap := mustReadNotes(t, repo, testNotesRef)
	marker, err := repo.WriteBlob([]byte(`{"schema":"1.0.0"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	edits := map[Hash]string{
		cs[0]: `{"a":1}` + "\n",
		cs[2]: "line 1\nline 2\n",
		cs[4]: "x\n",
	}
	s1 := mustWriteNotes(t, repo, testNotesRef, snap, edits, map[string]Hash{testMarker: marker})

	if got := r.hash("rev-parse", testNotesRef); got != s1.Commit() {
		t.Fatalf("ref is at %s, CommitNotes returned %s", got, s1.Commit())
	}
	if got := r.hash("rev-parse", testNotesRef+"^{tree}"); got != treeOf(s1) {
		t.Errorf("ref's tree is %s, snapshot's %s", got, treeOf(s1))
	}
	if parents := strings.Fields(r.git("rev-list", "--parents", "-n1", testNotesRef)); len(parents) != 1 {
		t.Errorf("the first notes commit has parents %v, want none", parents[1:])
	}
	for obj, content := range edits {
		if got := r.noteShow(obj); got != content {
			t.Errorf("git notes show %s = %q, want %q", obj.Short(), got, content)
		}
	}
	r.checkGitSees(edits)
	r.fsckClean()

	// git log shows the notes on their commits, and none on the others.
	out := r.git("log", "--notes=evolve", "--format=%H%x00%N%x01", "main")
	seen := 0
	for _, rec := range strings.Split(out, "\x01") {
		rec = strings.TrimLeft(rec, "\n")
		if rec == "" {
			continue
		}
		h, note, ok := strings.Cut(rec, "\x00")
		if !ok {
			t.Fatalf("git log printed %q", rec)
		}
		obj := mustHash(t, h)
		if want := edits[obj]; note != want {
			t.Errorf("git log shows %q on %s, want %q", note, obj.Short(), want)
		}
		seen++
	}
	if seen != len(cs) {
		t.Errorf("git log listed %d commits, want %d", seen, len(cs))
	}

	// The commit records the identity it was given.
	meta := strings.TrimSpace(r.git("log", "-1", "--format=%an|%ae|%at|%cn|%ce|%ct|%s", testNotesRef))
	if want := fmt.Sprintf("%s|%s|1700000000|%s|%s|1700000000|test write", testAuthorName, testAuthorEmail, testCommitterName, testCommitterEmail); meta != want {
		t.Errorf("notes commit metadata %q, want %q", meta, want)
	}

	// A second write is a child of the first and keeps the marker.
	s2 := mustWriteNotes(t, repo, testNotesRef, s1, map[Hash]string{cs[1]: "y\n"}, nil)
	if got := r.hash("rev-parse", testNotesRef+"^"); got != s1.Commit() {
		t.Errorf("second notes commit's parent is %s, want %s", got, s1.Commit())
	}
	edits[cs[1]] = "y\n"
	r.checkGitSees(edits)
	if h, ok, err := s2.NonNote(testMarker); err != nil || !ok || h != marker {
		t.Errorf("NonNote(%s) = %s, %v, %v; want %s", testMarker, h, ok, err, marker)
	}
	// A fresh reader sees the same snapshot.
	again := mustReadNotes(t, openDir(t, r.dir), testNotesRef)
	if again.Commit() != s2.Commit() || treeOf(again) != treeOf(s2) {
		t.Errorf("reopened snapshot %s/%s, want %s/%s", again.Commit(), treeOf(again), s2.Commit(), treeOf(s2))
	}
	r.fsckClean()
}

// Writing on the tree that `git notes add` grew.
func TestWriteOnGitWrittenTree(t *testing.T) {
	testenv.Slow(t)
	fx := gitNotesFixture(t)
	r := copyRepo(t, fx.dir)
	setEnv(t)
	repo := r.open()
	cs := fx.commits

	want := map[Hash]string{}
	for i := 0; i < fixtureNotes; i++ {
		want[cs[i]] = fixtureNote(i) + "\n"
	}
	snap := mustReadNotes(t, repo, testNotesRef)
	edits := map[Hash]string{
		cs[5]:   "changed 5\n",
		cs[6]:   "", // removed
		cs[305]: "new 305\n",
	}
	next := mustWriteNotes(t, repo, testNotesRef, snap, edits, nil)
	want[cs[5]] = edits[cs[5]]
	delete(want, cs[6])
	want[cs[305]] = edits[cs[305]]

	r.checkGitSees(want)
	if got := r.noteShow(cs[5]); got != want[cs[5]] {
		t.Errorf("git notes show = %q, want %q", got, want[cs[5]])
	}
	if out, err := r.gitErr("notes", "--ref=evolve", "show", cs[6].String()); err == nil {
		t.Errorf("the removed note still shows: %q", out)
	}
	r.fsckClean()

	// The new note goes where git put its neighbours (2/38), and nothing is at
	// two paths.
	paths := r.checkOnePath(treeOf(next))
	s := cs[305].String()
	if got := paths[cs[305]]; len(got) != 1 || got[0] != s[:2]+"/"+s[2:] {
		t.Errorf("new note at %v, want %s/%s", got, s[:2], s[2:])
	}

	// Only the root and the buckets of the edited notes are new trees.
	allowed := map[string]bool{"": true, cs[5].String()[:2]: true, cs[6].String()[:2]: true, s[:2]: true}
	before := r.treeSet(treeOf(snap))
	for h, p := range r.treeSet(treeOf(next)) {
		if _, old := before[h]; !old && !allowed[p] {
			t.Errorf("the write rewrote the untouched subtree %q", p)
		}
	}
}

// The same object at a flat and a 2/38 path: a write leaves it at one path.
func TestWriteMergesDuplicatePaths(t *testing.T) {
	testenv.Slow(t)
	for _, tc := range []struct {
		name    string
		content string // "" removes the note
	}{
		{"set", "merged\n"},
		{"remove", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			cs := r.makeCommits(4)
			x, y := pickTwoBuckets(t, cs)
			_, _, yBlob := makeMixedLedger(t, r, x, y)
			setEnv(t)
			repo := r.open()
			snap := mustReadNotes(t, repo, testNotesRef)
			next := mustWriteNotes(t, repo, testNotesRef, snap, map[Hash]string{x: tc.content}, nil)

			paths := r.checkOnePath(treeOf(next))
			bs, err := next.Find(x)
			if err != nil {
				t.Fatal(err)
			}
			want := map[Hash]string{y: "y note\n"}
			if tc.content == "" {
				if len(paths[x]) != 0 || len(bs) != 0 {
					t.Errorf("removed note still at %v (Find: %v)", paths[x], bs)
				}
			} else {
				want[x] = tc.content
				if len(paths[x]) != 1 {
					t.Errorf("x is at %v, want one path", paths[x])
				}
				if len(bs) != 1 || blobText(t, repo, bs[0]) != tc.content {
					t.Errorf("Find(x) = %v, want one note %q", bs, tc.content)
				}
				if got := r.noteShow(x); got != tc.content {
					t.Errorf("git notes show x = %q, want %q", got, tc.content)
				}
			}
			if bs, err := next.Find(y); err != nil || len(bs) != 1 || bs[0] != yBlob {
				t.Errorf("Find(y) = %v, %v; want the untouched [%s]", bs, err, yBlob)
			}
			r.checkGitSees(want)
			r.fsckClean()
		})
	}
}

var fanned238 = regexp.MustCompile(`^[0-9a-f]{2}/[0-9a-f]{38}$`)

// A flat level holds up to 256 notes; the 257th splits it into 2-digit
// subtrees, and from then on a single edit rewrites the root and one bucket.
func TestWriteSplitsPast256(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()

	flat := fakeEdits(0, 256, "n%d\n")
	s1 := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), flat, nil)
	root := r.lsTree(treeOf(s1).String())
	if len(root) != 256 {
		t.Fatalf("root has %d entries, want 256 flat notes", len(root))
	}
	for _, e := range root {
		if e.typ != "blob" || len(e.path) != 40 {
			t.Fatalf("256 notes should stay flat, root has %s %s", e.typ, e.path)
		}
	}

	// Removing one and adding one keeps 256: still flat.
	swap := map[Hash]string{fakeObj(0): "", fakeObj(900): "n900\n"}
	if tree := mustApply(t, repo, s1, swap, nil); len(r.lsTree(tree.String())) != 256 {
		t.Errorf("256 notes after a swap should stay flat")
	} else if es := r.lsTree(tree.String()); es[0].typ != "blob" {
		t.Errorf("256 notes after a swap were split")
	}

	s2 := mustWriteNotes(t, repo, testNotesRef, s1, map[Hash]string{fakeObj(256): "n256\n"}, nil)
	want := mergeEdits(flat, map[Hash]string{fakeObj(256): "n256\n"})
	for _, e := range r.lsTree(treeOf(s2).String()) {
		if e.typ != "tree" || len(e.path) != 2 {
			t.Fatalf("257 notes: root still has %s %s, want only 2-digit subtrees", e.typ, e.path)
		}
	}
	paths := r.checkOnePath(treeOf(s2))
	for obj, ps := range paths {
		if !fanned238.MatchString(ps[0]) || !strings.HasPrefix(obj.String(), ps[0][:2]) {
			t.Errorf("note %s at %s, want 2/38", obj.Short(), ps[0])
		}
	}
	r.checkGitSees(want)
	if got := singleNotes(t, walkNotes(t, s2)); len(got) != 257 {
		t.Errorf("Walk finds %d notes after the split, want 257", len(got))
	}
	r.fsckClean()

	// Grow to 600 so that buckets hold several notes.
	more := fakeEdits(257, 600, "n%d\n")
	s3 := mustWriteNotes(t, repo, testNotesRef, s2, more, nil)
	want = mergeEdits(want, more)
	r.checkGitSees(want)
	for obj, ps := range r.checkOnePath(treeOf(s3)) {
		if !fanned238.MatchString(ps[0]) || !strings.HasPrefix(obj.String(), ps[0][:2]) {
			t.Errorf("note %s at %s, want 2/38", obj.Short(), ps[0])
		}
	}

	// Buckets by size, to pick edits in shared and lone buckets.
	buckets := map[string][]Hash{}
	for obj := range want {
		buckets[obj.String()[:2]] = append(buckets[obj.String()[:2]], obj)
	}
	var shared, newInShared Hash
	for _, objs := range buckets {
		if len(objs) >= 3 {
			shared = objs[0]
			break
		}
	}
	for i := 1000; ; i++ {
		if o := fakeObj(i); len(buckets[o.String()[:2]]) >= 2 {
			newInShared = o
			break
		}
	}
	before := r.treeSet(treeOf(s3))
	for _, tc := range []struct {
		name    string
		obj     Hash
		content string
	}{
		{"change", shared, "changed\n"},
		{"add", newInShared, "added\n"},
		{"remove", shared, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := mustApply(t, repo, s3, map[Hash]string{tc.obj: tc.content}, nil)
			var fresh []string
			for h, p := range r.treeSet(tree) {
				if _, ok := before[h]; !ok {
					fresh = append(fresh, p)
				}
			}
			sort.Strings(fresh)
			if want := []string{"", tc.obj.String()[:2]}; strings.Join(fresh, ",") != strings.Join(want, ",") {
				t.Errorf("new trees at %q, want only the root and bucket %s", fresh, want[1])
			}
			got := singleNotes(t, walkNotes(t, &Notes{r: repo, tree: tree}))
			w := mergeEdits(want, map[Hash]string{tc.obj: tc.content})
			if len(got) != len(w) {
				t.Errorf("Walk finds %d notes, want %d", len(got), len(w))
			}
			if tc.content != "" && blobText(t, repo, got[tc.obj]) != tc.content {
				t.Errorf("edited note reads %q", blobText(t, repo, got[tc.obj]))
			}
		})
	}
}

// Removing notes: from flat and fanned-out trees, down to nothing; buckets
// that empty are dropped, and removing an absent note changes nothing.
func TestWriteRemovesNotes(t *testing.T) {
	t.Run("flat", func(t *testing.T) {
		r := newRepo(t)
		cs := r.makeCommits(3)
		setEnv(t)
		repo := r.open()
		notes := map[Hash]string{cs[0]: "a\n", cs[1]: "b\n", cs[2]: "c\n"}
		s1 := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), notes, nil)

		if tree := mustApply(t, repo, s1, map[Hash]string{fakeObj(1): ""}, nil); tree != treeOf(s1) {
			t.Errorf("removing an absent note changed the tree")
		}
		s2 := mustWriteNotes(t, repo, testNotesRef, s1, map[Hash]string{cs[1]: ""}, nil)
		r.checkGitSees(map[Hash]string{cs[0]: "a\n", cs[2]: "c\n"})
		s3 := mustWriteNotes(t, repo, testNotesRef, s2, map[Hash]string{cs[0]: "", cs[2]: ""}, nil)
		if es := r.lsTree(testNotesRef); len(es) != 0 {
			t.Errorf("the emptied ledger's tree has %d entries", len(es))
		}
		if n := len(walkNotes(t, s3)); n != 0 {
			t.Errorf("Walk finds %d notes in the emptied ledger", n)
		}
		r.checkGitSees(map[Hash]string{})
		r.fsckClean()
	})

	t.Run("fanned-out", func(t *testing.T) {
		r := newRepo(t)
		setEnv(t)
		repo := r.open()
		all := fakeEdits(0, 600, "n%d\n")
		s1 := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), all, nil)
		buckets := map[string][]Hash{}
		for obj := range all {
			buckets[obj.String()[:2]] = append(buckets[obj.String()[:2]], obj)
		}
		var drop, thin string
		for g, objs := range buckets {
			if len(objs) >= 2 && drop == "" {
				drop = g
			} else if len(objs) >= 2 && thin == "" {
				thin = g
			}
		}
		edits := map[Hash]string{buckets[thin][0]: ""}
		for _, obj := range buckets[drop] {
			edits[obj] = ""
		}
		// An absent object in an absent and in an existing bucket.
		for i := 5000; ; i++ {
			if g := fakeObj(i).String()[:2]; buckets[g] == nil {
				if tree := mustApply(t, repo, s1, map[Hash]string{fakeObj(i): ""}, nil); tree != treeOf(s1) {
					t.Errorf("removing an absent note (no bucket) changed the tree")
				}
				break
			}
		}
		for i := 5000; ; i++ {
			if g := fakeObj(i).String()[:2]; buckets[g] != nil {
				if tree := mustApply(t, repo, s1, map[Hash]string{fakeObj(i): ""}, nil); tree != treeOf(s1) {
					t.Errorf("removing an absent note (existing bucket) changed the tree")
				}
				break
			}
		}

		s2 := mustWriteNotes(t, repo, testNotesRef, s1, edits, nil)
		oldRoot := map[string]Hash{}
		for _, e := range r.lsTree(treeOf(s1).String()) {
			oldRoot[e.path] = e.hash
		}
		newRoot := map[string]Hash{}
		for _, e := range r.lsTree(treeOf(s2).String()) {
			newRoot[e.path] = e.hash
		}
		if _, ok := newRoot[drop]; ok {
			t.Errorf("bucket %s emptied but kept", drop)
		}
		if h, ok := newRoot[thin]; !ok || h == oldRoot[thin] {
			t.Errorf("bucket %s lost a note but was not rewritten", thin)
		}
		if len(newRoot) != len(oldRoot)-1 {
			t.Errorf("root has %d buckets, want %d", len(newRoot), len(oldRoot)-1)
		}
		for g, h := range oldRoot {
			if g != drop && g != thin && newRoot[g] != h {
				t.Errorf("untouched bucket %s was rewritten", g)
			}
		}
		r.checkGitSees(mergeEdits(all, edits))
		r.fsckClean()

		// Removing everything leaves an empty tree.
		rest := map[Hash]string{}
		for obj := range mergeEdits(all, edits) {
			rest[obj] = ""
		}
		mustWriteNotes(t, repo, testNotesRef, s2, rest, nil)
		if es := r.lsTree(testNotesRef); len(es) != 0 {
			t.Errorf("the emptied ledger's tree has %d entries", len(es))
		}
		r.fsckClean()
	})
}

// The non-note root entry: written, kept by later writes (gitstore's and C
// git's), replaced and removed through extras.
func TestWriteNonNoteEntry(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(3)
	setEnv(t)
	repo := r.open()
	marker, err := repo.WriteBlob([]byte(`{"schema":"1.0.0"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkMarker := func(snap *Notes, want Hash) {
		t.Helper()
		h, ok, err := snap.NonNote(testMarker)
		if err != nil || ok != !want.IsZero() || h != want {
			t.Errorf("NonNote = %s, %v, %v; want %s", h, ok, err, want)
		}
		var found []lsEntry
		for _, e := range r.lsTree(treeOf(snap).String()) {
			if e.path == testMarker {
				found = append(found, e)
			}
		}
		switch {
		case want.IsZero() && len(found) != 0:
			t.Errorf("git ls-tree still lists %s", testMarker)
		case !want.IsZero() && (len(found) != 1 || found[0].hash != want || found[0].mode != "100644"):
			t.Errorf("git ls-tree lists %+v for %s, want one 100644 blob %s", found, testMarker, want)
		}
	}

	s1 := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), map[Hash]string{cs[0]: "a\n"}, map[string]Hash{testMarker: marker})
	checkMarker(s1, marker)
	s2 := mustWriteNotes(t, repo, testNotesRef, s1, map[Hash]string{cs[1]: "b\n"}, nil)
	checkMarker(s2, marker)
	s3 := mustWriteNotes(t, repo, testNotesRef, s2, map[Hash]string{cs[1]: "b2\n"}, map[string]Hash{})
	checkMarker(s3, marker)

	// C git keeps it.
	r.git("notes", "--ref=evolve", "add", "-m", "x", cs[2].String())
	s4 := mustReadNotes(t, openDir(t, r.dir), testNotesRef)
	checkMarker(s4, marker)
	if bs, err := s4.Find(cs[2]); err != nil || len(bs) != 1 || blobText(t, repo, bs[0]) != "x\n" {
		t.Errorf("C git's note not found: %v, %v", bs, err)
	}
	r.checkGitSees(map[Hash]string{cs[0]: "a\n", cs[1]: "b2\n", cs[2]: "x\n"})

	// Kept across a split too.
	s5 := mustWriteNotes(t, repo, testNotesRef, s4, fakeEdits(0, 300, "f%d\n"), nil)
	checkMarker(s5, marker)

	// Replaced, then removed.
	marker2, err := repo.WriteBlob([]byte(`{"schema":"1.1.0"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	s6 := mustWriteNotes(t, repo, testNotesRef, s5, nil, map[string]Hash{testMarker: marker2})
	checkMarker(s6, marker2)
	s7 := mustWriteNotes(t, repo, testNotesRef, s6, nil, map[string]Hash{testMarker: ZeroHash})
	checkMarker(s7, ZeroHash)
	if n := len(walkNotes(t, s7)); n != 303 {
		t.Errorf("removing the marker lost notes: %d left, want 303", n)
	}
	r.fsckClean()

	// Names that are not non-note names are refused.
	for _, name := range []string{"", "a/b", "abc", "ABCDEF", "0123456789abcdef0123456789abcdef01234567", "x\x00y"} {
		if _, err := s7.ApplyNotes(nil, map[string]Hash{name: marker}); err == nil {
			t.Errorf("ApplyNotes accepted the non-note name %q", name)
		}
	}
}

// Root entries that gitstore does not own keep their name, mode and content.
func TestWriteKeepsForeignEntries(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	blob := func(s string) string { return strings.TrimSpace(r.gitIn(s, "hash-object", "-w", "--stdin")) }
	note := blob("old note\n")
	readme := blob("readme\n")
	script := blob("#!/bin/sh\n")
	link := blob("README")
	sub := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\tinside.txt\n", readme), "mktree"))
	root := strings.TrimSpace(r.gitIn(fmt.Sprintf(
		"100644 blob %s\t%s\n100644 blob %s\tREADME\n100755 blob %s\ttool.sh\n120000 blob %s\tlink\n040000 tree %s\tdocs\n",
		note, cs[0], readme, script, link, sub), "mktree"))
	r.git("update-ref", testNotesRef, strings.TrimSpace(r.git("commit-tree", "-m", "foreign", root)))
	foreign := map[string]lsEntry{}
	for _, e := range r.lsTree(testNotesRef) {
		if e.path != cs[0].String() {
			foreign[e.path] = e
		}
	}
	setEnv(t)
	repo := r.open()
	next := mustWriteNotes(t, repo, testNotesRef, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[1]: "new\n"}, nil)
	after := map[string]lsEntry{}
	for _, e := range r.lsTree(treeOf(next).String()) {
		after[e.path] = e
	}
	for _, name := range []string{"README", "docs", "tool.sh", "link"} {
		t.Run(name, func(t *testing.T) {
			if name == "tool.sh" || name == "link" {
			}
			want, got := foreign[name], after[name]
			if got != want {
				t.Errorf("after a write %s is %+v, want %+v", name, got, want)
			}
		})
	}
	r.checkGitSees(map[Hash]string{cs[0]: "old note\n", cs[1]: "new\n"})
}
