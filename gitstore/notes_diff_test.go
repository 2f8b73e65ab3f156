package gitstore

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
)

// change is a NoteChange with its blob lists made comparable.
type noteDelta struct{ old, new string }

func blobList(hs []Hash) string { return strings.Join(sortedHashes(hs), ",") }

// diffOf runs DiffNotes (old -> n) and checks the result is sorted by object.
func diffOf(t *testing.T, old, n *Notes) map[Hash]noteDelta {
	t.Helper()
	cs, err := n.DiffNotes(old)
	if err != nil {
		t.Fatalf("DiffNotes: %v", err)
	}
	out := map[Hash]noteDelta{}
	for i, c := range cs {
		if i > 0 && cs[i-1].Object.String() >= c.Object.String() {
			t.Errorf("DiffNotes is not sorted by object at %d", i)
		}
		out[c.Object] = noteDelta{blobList(c.Old), blobList(c.New)}
	}
	return out
}

// walkDiff is the oracle: the objects whose notes differ between two full
// walks.
func walkDiff(t *testing.T, old, n *Notes) map[Hash]noteDelta {
	t.Helper()
	a, b := walkNotes(t, old), walkNotes(t, n)
	out := map[Hash]noteDelta{}
	for obj, bs := range a {
		if blobList(bs) != blobList(b[obj]) {
			out[obj] = noteDelta{blobList(bs), blobList(b[obj])}
		}
	}
	for obj, bs := range b {
		if _, ok := a[obj]; !ok {
			out[obj] = noteDelta{"", blobList(bs)}
		}
	}
	return out
}

func describeDelta(m map[Hash]noteDelta) string {
	var lines []string
	for obj, c := range m {
		lines = append(lines, fmt.Sprintf("%s: [%s] -> [%s]", obj.Short(), c.old, c.new))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// checkDiff compares DiffNotes with the objects the test changed and with the
// walk oracle.
func checkDiff(t *testing.T, old, n *Notes, added, changed, removed []Hash) {
	t.Helper()
	got := diffOf(t, old, n)
	oracle := walkDiff(t, old, n)
	if describeDelta(got) != describeDelta(oracle) {
		t.Errorf("DiffNotes:\n%s\nwant (from full walks):\n%s", describeDelta(got), describeDelta(oracle))
	}
	kinds := map[Hash]string{}
	for _, o := range added {
		kinds[o] = "added"
	}
	for _, o := range changed {
		kinds[o] = "changed"
	}
	for _, o := range removed {
		kinds[o] = "removed"
	}
	if len(got) != len(kinds) {
		t.Errorf("DiffNotes reports %d changes, want %d:\n%s", len(got), len(kinds), describeDelta(got))
	}
	for obj, kind := range kinds {
		c, ok := got[obj]
		switch {
		case !ok:
			t.Errorf("DiffNotes misses the %s note on %s", kind, obj.Short())
		case kind == "added" && (c.old != "" || c.new == ""),
			kind == "removed" && (c.old == "" || c.new != ""),
			kind == "changed" && (c.old == "" || c.new == "" || c.old == c.new):
			t.Errorf("DiffNotes reports %s as [%s] -> [%s], want %s", obj.Short(), c.old, c.new, kind)
		}
	}
}

func TestDiffNotes(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	o := fakeObj

	empty := repo.EmptyNotes()
	s1 := mustWriteNotes(t, repo, testNotesRef, empty, map[Hash]string{o(0): "0\n", o(1): "1\n", o(2): "2\n"}, nil)
	s2 := mustWriteNotes(t, repo, testNotesRef, s1, map[Hash]string{o(0): "0 changed\n", o(1): "", o(3): "3\n"}, nil)

	t.Run("from empty", func(t *testing.T) { checkDiff(t, empty, s1, []Hash{o(0), o(1), o(2)}, nil, nil) })
	t.Run("to empty", func(t *testing.T) { checkDiff(t, s1, empty, nil, nil, []Hash{o(0), o(1), o(2)}) })
	t.Run("add change remove", func(t *testing.T) { checkDiff(t, s1, s2, []Hash{o(3)}, []Hash{o(0)}, []Hash{o(1)}) })
	t.Run("reverse", func(t *testing.T) { checkDiff(t, s2, s1, []Hash{o(1)}, []Hash{o(0)}, []Hash{o(3)}) })
	t.Run("same", func(t *testing.T) { checkDiff(t, s2, s2, nil, nil, nil) })

	// Across the split from 256 flat notes to 2-digit subtrees.
	toFlat := fakeEdits(10, 266, "f%d\n")
	toFlat[o(0)], toFlat[o(2)], toFlat[o(3)] = "", "", ""
	flat := mustWriteNotes(t, repo, testNotesRef, s2, toFlat, nil)
	if n := len(r.lsTree(treeOf(flat).String())); n != 256 {
		t.Fatalf("premise: %d root entries, want 256 flat notes", n)
	}
	split := mustWriteNotes(t, repo, testNotesRef, flat, map[Hash]string{
		o(1000): "new a\n", o(1001): "new b\n", o(20): "changed\n", o(30): "",
	}, nil)
	for _, e := range r.lsTree(treeOf(split).String()) {
		if e.typ != "tree" {
			t.Fatalf("premise: the tree did not split (%s %s)", e.typ, e.path)
		}
	}
	t.Run("across the split", func(t *testing.T) {
		checkDiff(t, flat, split, []Hash{o(1000), o(1001)}, []Hash{o(20)}, []Hash{o(30)})
	})
	t.Run("across the split, reversed", func(t *testing.T) {
		checkDiff(t, split, flat, []Hash{o(30)}, []Hash{o(20)}, []Hash{o(1000), o(1001)})
	})

	// Within the fanned-out tree, several buckets.
	grown := mustWriteNotes(t, repo, testNotesRef, split, fakeEdits(2000, 2400, "g%d\n"), nil)
	edited := mustWriteNotes(t, repo, testNotesRef, grown, map[Hash]string{
		o(2000): "", o(2001): "", o(2002): "x\n", o(40): "x\n", o(3000): "y\n",
	}, nil)
	t.Run("fanned out", func(t *testing.T) {
		checkDiff(t, grown, edited, []Hash{o(3000)}, []Hash{o(2002), o(40)}, []Hash{o(2000), o(2001)})
	})
	t.Run("many", func(t *testing.T) {
		var added []Hash
		for i := 2000; i < 2400; i++ {
			added = append(added, o(i))
		}
		checkDiff(t, split, grown, added, nil, nil)
	})
}

// DiffNotes between snapshots that git notes add wrote, including the commit
// where git itself fanned the tree out.
func TestDiffNotesGitWritten(t *testing.T) {
	testenv.Slow(t)
	setEnv(t)
	fx := gitNotesFixture(t)
	r := &testRepo{t: t, dir: fx.dir}
	repo := r.open()
	history := strings.Fields(r.git("rev-list", "--reverse", testNotesRef))
	if len(history) != fixtureNotes {
		t.Fatalf("premise: %d notes commits, want %d", len(history), fixtureNotes)
	}
	// The first commit whose root is fanned out.
	split := -1
	for i := range history {
		if es := r.lsTree(history[i]); es[0].typ == "tree" {
			split = i
			break
		}
	}
	if split <= 0 {
		t.Fatalf("premise: git never fanned out (split at %d)", split)
	}
	at := func(i int) *Notes {
		n, err := repo.NotesAt(mustHash(t, history[i]))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, p := range [][2]int{{split - 1, split}, {0, split + 5}, {split - 3, fixtureNotes - 1}, {10, 11}} {
		t.Run(fmt.Sprintf("%d to %d", p[0], p[1]), func(t *testing.T) {
			var added []Hash
			for i := p[0] + 1; i <= p[1]; i++ {
				added = append(added, fx.commits[i])
			}
			checkDiff(t, at(p[0]), at(p[1]), added, nil, nil)
			checkDiff(t, at(p[1]), at(p[0]), nil, nil, added)
		})
	}
}

// An object at two paths in one snapshot: DiffNotes must report what Find
// reports on each side.
func TestDiffNotesDuplicatePaths(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(4)
	x, y := pickTwoBuckets(t, cs)
	flat, fan, yBlob := makeMixedLedger(t, r, x, y)
	xs, ys := x.String(), y.String()
	mk := func(lines string) Hash {
		root := strings.TrimSpace(r.gitIn(lines, "mktree"))
		return mustHash(t, strings.TrimSpace(r.git("commit-tree", "-m", "t", root)))
	}
	subX := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", fan, xs[2:]), "mktree"))
	subY := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", yBlob, ys[2:]), "mktree"))
	mixed := r.hash("rev-parse", testNotesRef)
	// x only in its (unchanged) bucket; x only at its flat path.
	onlyFan := mk(fmt.Sprintf("040000 tree %s\t%s\n040000 tree %s\t%s\n", subX, xs[:2], subY, ys[:2]))
	onlyFlat := mk(fmt.Sprintf("100644 blob %s\t%s\n040000 tree %s\t%s\n", flat, xs, subY, ys[:2]))
	setEnv(t)
	repo := r.open()
	at := func(h Hash) *Notes {
		n, err := repo.NotesAt(h)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		old, new Hash
		bug      bool
	}{
		{"mixed to flat copy only", mixed, onlyFlat, false},
		{"flat copy only to mixed", onlyFlat, mixed, false},
		{"mixed to bucket copy only", mixed, onlyFan, true},
		{"bucket copy only to mixed", onlyFan, mixed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bug {
			}
			a, b := at(tc.old), at(tc.new)
			got := diffOf(t, a, b)
			fa, _ := a.Find(x)
			fb, _ := b.Find(x)
			want := map[Hash]noteDelta{x: {blobList(fa), blobList(fb)}}
			if describeDelta(got) != describeDelta(want) {
				t.Errorf("DiffNotes:\n%s\nwant (from Find on both sides):\n%s", describeDelta(got), describeDelta(want))
			}
		})
	}
}

// DiffNotesMany gives, for each pair, what DiffNotes gives alone: here the
// whole history git notes add wrote, commit by commit (the one note each
// added), across the commit where git fanned the tree out, and a pair with
// nothing to diff.
func TestDiffNotesMany(t *testing.T) {
	setEnv(t)
	fx := gitNotesFixture(t)
	r := &testRepo{t: t, dir: fx.dir}
	repo := r.open()
	history := strings.Fields(r.git("rev-list", "--reverse", testNotesRef))
	var pairs []NotesPair
	for i := 1; i < len(history); i++ {
		old, err := repo.NotesAt(mustHash(t, history[i-1]))
		if err != nil {
			t.Fatal(err)
		}
		now, err := repo.NotesAt(mustHash(t, history[i]))
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, NotesPair{Old: old, New: now})
	}
	pairs = append(pairs, NotesPair{Old: pairs[0].New, New: pairs[0].New})
	got, err := DiffNotesMany(pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		alone, err := p.New.DiffNotes(p.Old)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got[i]) != fmt.Sprint(alone) {
			t.Errorf("pair %d: %v, alone %v", i, got[i], alone)
		}
		if i < len(history)-1 && (len(got[i]) != 1 || got[i][0].Object != fx.commits[i+1] || got[i][0].Old != nil) {
			t.Errorf("pair %d: %v, want the note on %s added", i, got[i], fx.commits[i+1])
		}
	}
	if last := got[len(got)-1]; len(last) != 0 {
		t.Errorf("a snapshot against itself: %v", last)
	}
}
