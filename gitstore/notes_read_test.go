package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// A tree that `git notes add` grew one note at a time: git chose the fanout.
func TestReadNotesWrittenByGitNotesAdd(t *testing.T) {
	setEnv(t)
	fx := gitNotesFixture(t)
	r := &testRepo{t: t, dir: fx.dir}

	// Premise: git fanned the tree out by itself as it grew.
	for _, e := range r.lsTree(testNotesRef) {
		if e.typ != "tree" || len(e.path) != 2 {
			t.Fatalf("premise: expected git to fan the root out into 2-digit subtrees, found %s %s", e.typ, e.path)
		}
	}

	repo := r.open()
	snap := mustReadNotes(t, repo, testNotesRef)
	if want := r.hash("rev-parse", testNotesRef); snap.Commit() != want {
		t.Errorf("Commit() = %s, want %s", snap.Commit(), want)
	}
	if want := r.hash("rev-parse", testNotesRef+"^{tree}"); treeOf(snap) != want {
		t.Errorf("Tree() = %s, want %s", treeOf(snap), want)
	}

	want := r.notesList("evolve")
	if len(want) != fixtureNotes {
		t.Fatalf("premise: git notes list has %d notes, want %d", len(want), fixtureNotes)
	}
	got := singleNotes(t, walkNotes(t, snap))
	if !sameMap(got, want) {
		t.Fatalf("Walk differs from git notes list: %s", mapDiff(got, want))
	}

	// Walk goes in path order, which for a uniform fanout is name order.
	var order []string
	if err := snap.Walk(func(obj, _ Hash) error { order = append(order, obj.String()); return nil }); err != nil {
		t.Fatal(err)
	}
	if !sort.StringsAreSorted(order) {
		t.Errorf("Walk did not visit the notes in path order")
	}

	for obj, blob := range want {
		bs, err := snap.Find(obj)
		if err != nil {
			t.Fatalf("Find(%s): %v", obj, err)
		}
		if len(bs) != 1 || bs[0] != blob {
			t.Errorf("Find(%s) = %v, want [%s]", obj, bs, blob)
		}
	}
	for _, i := range []int{0, 1, 150, fixtureNotes - 1} {
		bs, err := snap.Find(fx.commits[i])
		if err != nil || len(bs) != 1 {
			t.Fatalf("Find(commit %d) = %v, %v", i, bs, err)
		}
		if got, want := blobText(t, repo, bs[0]), fixtureNote(i)+"\n"; got != want {
			t.Errorf("note on commit %d reads %q, want %q", i, got, want)
		}
	}
	for i := fixtureNotes; i < fixtureCommits; i++ {
		bs, err := snap.Find(fx.commits[i])
		if err != nil || len(bs) != 0 {
			t.Errorf("Find(unannotated commit %d) = %v, %v; want nothing", i, bs, err)
		}
	}

	// An error from the callback stops the walk.
	stop := errors.New("stop")
	calls := 0
	err := snap.Walk(func(_, _ Hash) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk with a failing callback: err %v after %d calls, want stop after 1", err, calls)
	}
}

// notePath lays out an object name in a fanout: "flat", "2/38" or "2/2/36".
func notePath(obj Hash, layout string) string {
	s := obj.String()
	switch layout {
	case "flat":
		return s
	case "2/38":
		return s[:2] + "/" + s[2:]
	case "2/2/36":
		return s[:2] + "/" + s[2:4] + "/" + s[4:]
	}
	panic(layout)
}

// Trees written by git fast-import with explicit paths, in every fanout.
func TestReadNotesFanoutsFromFastImport(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(8)
	setEnv(t)

	layouts := map[string][]string{
		"flat":   {"flat"},
		"2-38":   {"2/38"},
		"2-2-36": {"2/2/36"},
		"mixed":  {"flat", "2/38", "2/2/36"},
	}
	var stream strings.Builder
	content := func(name string, i int) string { return fmt.Sprintf("%s note %d\n", name, i) }
	for name, ls := range layouts {
		msg := "fast-import " + name + "\n"
		fmt.Fprintf(&stream, "commit refs/notes/fi-%s\ncommitter %s <%s> 1700000000 +0000\ndata %d\n%s",
			name, testCommitterName, testCommitterEmail, len(msg), msg)
		for i, c := range cs {
			data := content(name, i)
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", notePath(c, ls[i%len(ls)]), len(data), data)
		}
	}
	r.gitIn(stream.String(), "fast-import", "--quiet")

	repo := r.open()
	for name := range layouts {
		t.Run(name, func(t *testing.T) {
			ref := "refs/notes/fi-" + name
			want := r.notesList("fi-" + name)
			if len(want) != len(cs) {
				t.Fatalf("premise: git lists %d notes, want %d", len(want), len(cs))
			}
			snap := mustReadNotes(t, repo, ref)
			got := singleNotes(t, walkNotes(t, snap))
			if !sameMap(got, want) {
				t.Fatalf("Walk differs from git notes list: %s", mapDiff(got, want))
			}
			many, err := snap.FindMany(append(cs[:len(cs):len(cs)], fakeObj(3)))
			if err != nil || len(many) != len(cs) {
				t.Fatalf("FindMany = %v, %v; want the %d notes", many, err, len(cs))
			}
			for i, c := range cs {
				bs, err := snap.Find(c)
				if err != nil || len(bs) != 1 || bs[0] != want[c] {
					t.Fatalf("Find(commit %d) = %v, %v; want [%s]", i, bs, err, want[c])
				}
				if fmt.Sprint(many[c]) != fmt.Sprint(bs) {
					t.Errorf("FindMany(commit %d) = %v, Find gives %v", i, many[c], bs)
				}
				if got := blobText(t, repo, bs[0]); got != content(name, i) {
					t.Errorf("note %d reads %q, want %q", i, got, content(name, i))
				}
			}
		})
	}
}

// The same object at a flat path and at a 2/38 path: readers return both.
func TestReadMixedFanoutDuplicate(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(4)
	x, y := pickTwoBuckets(t, cs)
	flat, fan, yBlob := makeMixedLedger(t, r, x, y)
	setEnv(t)

	snap := mustReadNotes(t, r.open(), testNotesRef)
	bs, err := snap.Find(x)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedHashes(bs), sortedHashes([]Hash{flat, fan}); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Find(x) = %v, want both %v", got, want)
	}
	if bs, err := snap.Find(y); err != nil || len(bs) != 1 || bs[0] != yBlob {
		t.Errorf("Find(y) = %v, %v; want [%s]", bs, err, yBlob)
	}
	all := walkNotes(t, snap)
	if len(all) != 2 {
		t.Errorf("Walk found %d objects, want 2", len(all))
	}
	if got, want := sortedHashes(all[x]), sortedHashes([]Hash{flat, fan}); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Walk yields %v for x, want both %v", got, want)
	}
	if len(all[y]) != 1 || all[y][0] != yBlob {
		t.Errorf("Walk yields %v for y, want [%s]", all[y], yBlob)
	}
	// FindMany gives what Find gives, in Find's order.
	many, err := snap.FindMany([]Hash{y, x, x, fakeObj(9)})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(many[x]) != fmt.Sprint(bs0(t, snap, x)) || fmt.Sprint(many[y]) != fmt.Sprint([]Hash{yBlob}) || len(many[fakeObj(9)]) != 0 {
		t.Errorf("FindMany = %v; Find gives %v for x, [%s] for y", many, bs0(t, snap, x), yBlob)
	}
}

// bs0 is Find, failing the test on an error.
func bs0(t *testing.T, snap *Notes, obj Hash) []Hash {
	t.Helper()
	bs, err := snap.Find(obj)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// A missing ref reads as an empty ledger.
func TestReadMissingRef(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(1)
	setEnv(t)
	snap := mustReadNotes(t, r.open(), testNotesRef)
	if !snap.Commit().IsZero() || !treeOf(snap).IsZero() {
		t.Errorf("empty ledger has commit %s tree %s, want zero", snap.Commit(), treeOf(snap))
	}
	if n := len(walkNotes(t, snap)); n != 0 {
		t.Errorf("Walk of an empty ledger found %d notes", n)
	}
	if bs, err := snap.Find(cs[0]); err != nil || len(bs) != 0 {
		t.Errorf("Find on an empty ledger = %v, %v", bs, err)
	}
	if _, ok, err := snap.NonNote("evolve-ledger.json"); ok || err != nil {
		t.Errorf("NonNote on an empty ledger = %v, %v", ok, err)
	}
}

// ForEachLine gives every line of every note that is not blank, with the
// object its note is on, as git notes show has them.
func TestForEachLine(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	c := r.makeCommits(2)
	r.git("notes", "--ref", testNotesRef, "add", "-m", "{\"a\":1}\n\n{\"a\":2}", c[0].String())
	r.git("notes", "--ref", testNotesRef, "add", "-m", "  \n{\"b\":3}", c[1].String())
	snap := mustReadNotes(t, r.open(), testNotesRef)
	got := map[string]Hash{}
	if err := snap.ForEachLine(func(obj Hash, line []byte) error { got[string(line)] = obj; return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]Hash{`{"a":1}`: c[0], `{"a":2}`: c[0], `{"b":3}`: c[1]}
	if len(got) != len(want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	for l, obj := range want {
		if got[l] != obj {
			t.Errorf("line %s on %s, want %s", l, got[l], obj)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := snap.ForEachLine(func(Hash, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("an error from fn: %v after %d lines, want it back after 1", err, n)
	}
}

// treeOf is the snapshot's tree, for tests that know it reads.
func treeOf(n *Notes) Hash {
	h, err := n.Tree()
	if err != nil {
		panic(err)
	}
	return h
}
