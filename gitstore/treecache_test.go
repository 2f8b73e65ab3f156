package gitstore

import "testing"

// TestTreeCache: the trees a diff reads are kept, so that a second diff of
// the same notes (verify diffs them for its summaries and again for what is
// no note) reads nothing again and answers the same; a walk of a whole
// notes tree keeps none of its subtrees; and the cache stops at its bound.
func TestTreeCache(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	writer := r.open()
	base := mustWriteNotes(t, writer, testNotesRef, writer.EmptyNotes(), fakeEdits(0, 600, "n%d\n"), nil)
	next := mustWriteNotes(t, writer, testNotesRef, base, map[Hash]string{fakeObj(3): "changed\n", fakeObj(700): "new\n"}, nil)

	repo := r.open()
	cached := func() int {
		repo.treeMu.Lock()
		defer repo.treeMu.Unlock()
		return len(repo.trees)
	}
	from, err := repo.NotesAt(base.Commit())
	if err != nil {
		t.Fatal(err)
	}
	to, err := repo.NotesAt(next.Commit())
	if err != nil {
		t.Fatal(err)
	}
	if err := from.Walk(func(Hash, Hash) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := cached(); n > 1 {
		t.Errorf("a walk of the whole tree left %d trees cached, want the root at most", n)
	}
	first := diffOf(t, from, to)
	n := cached()
	if n < 4 {
		t.Fatalf("after a diff %d trees are cached, want both roots and the buckets that differ", n)
	}
	repo.objects.close() // a read that is not served from the cache fails now
	if again := diffOf(t, from, to); describeDelta(again) != describeDelta(first) || len(first) != 2 {
		t.Errorf("the second diff gave\n%s\nthe first\n%s", describeDelta(again), describeDelta(first))
	}
	if cached() != n {
		t.Errorf("the second diff changed the cache: %d trees, then %d", n, cached())
	}

	// The bound: trees past it are read, not kept.
	big := make([]treeEntry, maxCachedTreeEntries/4)
	for i := range 6 {
		repo.cacheTree(fakeObj(10000+i), big)
	}
	repo.treeMu.Lock()
	entries, trees := repo.treeEntries, len(repo.trees)
	repo.treeMu.Unlock()
	if entries > maxCachedTreeEntries || trees != n+3 {
		t.Errorf("%d entries in %d trees cached, want at most %d entries and %d trees", entries, trees, maxCachedTreeEntries, n+3)
	}
}
