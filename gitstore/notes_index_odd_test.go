package gitstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// twoInBucket returns two fake objects whose names share their first two
// hex digits and differ in the next two.
func twoInBucket(t *testing.T) (Hash, Hash) {
	t.Helper()
	seen := map[string]Hash{}
	for i := 0; i < 100000; i++ {
		h := fakeObj(i)
		s := h.String()
		if s[0] < 'a' {
			continue
		}
		if o, ok := seen[s[:2]]; ok && o.String()[2:4] != s[2:4] {
			return o, h
		}
		seen[s[:2]] = h
	}
	t.Fatal("no pair")
	return ZeroHash, ZeroHash
}

func blobOf(t *testing.T, repo *Repo, s string) Hash {
	t.Helper()
	h, err := repo.WriteBlob([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A notes tree another tool wrote holds X at two paths: its 2/2/36 path
// (unchanged since the indexed commit) and a flat copy at the root; another
// note in X's bucket changed too. DiffNotes misses the deep copy (the
// bucket differs, its sub-bucket does not), so an index brought forward
// over that change would drop X from the key the deep copy names, while
// every reader of the notes finds it. It is not brought forward over a
// directory that holds notes beside fanout subtrees: readers read the
// notes, and the next indexed write builds the index from them.
func TestNotesIndexNotBroughtForwardOverACopy(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t)
	xs, ys := x.String(), y.String()
	b5, b6 := blobOf(t, repo, "k a/5\n"), blobOf(t, repo, "k a/6\n")
	y7, y8 := blobOf(t, repo, "k a/7\n"), blobOf(t, repo, "k a/8\n")
	sub := mustTreeOf(t, repo, treeEntry{name: xs[4:], hash: b5})
	bucket := mustTreeOf(t, repo, treeEntry{name: xs[2:4], dir: true, hash: sub}, treeEntry{name: ys[2:], hash: y7})
	root := mustTreeOf(t, repo, treeEntry{name: xs[:2], dir: true, hash: bucket})
	a, c := testIdentity(t, repo)
	s0, err := repo.EmptyNotes().CommitNotes(testNotesRef, root, "crafted\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s0.ApplyNotesReindexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	base, err := s0.CommitNotes(testNotesRef, tree, "indexed\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if objs, ok := lookup(t, base, "a/5"); !ok || !slices.Equal(objs, []Hash{x}) {
		t.Fatalf("premise: a/5 at base: %v %v", objs, ok)
	}
	// another tool: X also flat at the root, Y changed; the index kept as it is
	entries, _ := repo.readTree(tree)
	var out []treeEntry
	for _, e := range entries {
		if e.name == xs[:2] {
			e.hash = mustTreeOf(t, repo, treeEntry{name: xs[2:4], dir: true, hash: sub}, treeEntry{name: ys[2:], hash: y8})
		}
		out = append(out, e)
	}
	out = append(out, treeEntry{name: xs, hash: b6})
	tip, err := base.CommitNotes(testNotesRef, mustTreeOf(t, repo, out...), "other tool\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	// every reader of the notes: X holds a/5 (deep copy) and a/6 (flat)
	var keys []string
	if err := tip.ForEachNote(func(obj Hash, data []byte) error {
		if obj == x {
			keys = append(keys, testIndex.Keys(data)...)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(keys, "a/5") || !slices.Contains(keys, "a/6") {
		t.Fatalf("premise: X's keys %v", keys)
	}
	if objs, ok := lookup(t, tip, "a/5"); ok && !slices.Equal(objs, []Hash{x}) {
		t.Errorf("a/5 brought forward: %v, want [%s] as the notes say (or no answer)", objs, x)
	}
	// the next indexed write builds it from the notes
	next := writeIndexed(t, repo, tip, map[Hash]string{fakeObj(1 << 20): "k z/1\n"})
	for _, since := range []*Notes{nil, tip, base} {
		if got := problems(t, next, since); got != "described true" {
			t.Errorf("after the write (since %v): %s", since != nil, got)
		}
	}
	checkRebuilt(t, repo, next)
}

// X noted at the root twice, under its name in upper and in lower case
// (both are X's note to git and to every reader here). An unrelated
// indexed write keeps one of the two (apply's flat map) and leaves the
// index listing X under the lost copy's key.
func TestNotesIndexAfterCaseCopiesMerge(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x := fakeObj(7)
	up := []byte(x.String())
	for i, ch := range up {
		if ch >= 'a' && ch <= 'f' {
			up[i] = ch - 'a' + 'A'
		}
	}
	root := mustTreeOf(t, repo, treeEntry{name: string(up), hash: blobOf(t, repo, "k a/1\n")}, treeEntry{name: x.String(), hash: blobOf(t, repo, "k a/2\n")})
	a, c := testIdentity(t, repo)
	s0, err := repo.EmptyNotes().CommitNotes(testNotesRef, root, "crafted\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	s1 := writeIndexed(t, repo, s0, map[Hash]string{fakeObj(8): "k b/1\n"})
	before := 0
	s0.ForEachNote(func(obj Hash, _ []byte) error {
		if obj == x {
			before++
		}
		return nil
	})
	after := 0
	s1.ForEachNote(func(obj Hash, _ []byte) error {
		if obj == x {
			after++
		}
		return nil
	})
	t.Logf("X's notes: %d before the write, %d after", before, after)
	if got := problems(t, s1, nil); got != "described true" {
		t.Errorf("the index our own write made: %s", got)
	}
}

// An index dir holding two entries named "a" (both trees; git fsck calls
// it duplicateEntries, but fetch and push do not fsck by default): readers
// descend into the first, the whole-index check walks both. With X's entry
// only in the second, IndexProblems finds nothing and readers miss X.
func TestNotesIndexDirectoryTwice(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[0]: "k a/5\n"})
	tip := withIndexDir(t, repo, snap, snap, func(top []treeEntry) Hash {
		var forged []treeEntry
		for _, te := range top {
			if te.name == "a" {
				forged = append(forged, treeEntry{name: "a", dir: true, hash: mustTreeOf(t, repo)})
			}
			forged = append(forged, te)
		}
		h := mustTreeOf(t, repo, forged...)
		if got, _ := repo.readTree(h); len(got) != len(top)+1 || got[0].hash == got[1].hash {
			t.Fatalf("premise: the forged index dir: %v", got)
		}
		return h
	})
	p := problems(t, tip, nil)
	objs, ok := lookup(t, tip, "a/5")
	if ok && !slices.Equal(objs, []Hash{cs[0]}) {
		t.Errorf("a/5 from an index with a directory twice: %v", objs)
	}
	// not taken (it describes no notes); the one before is brought forward
	if p != "described true" {
		t.Errorf("the check of the index readers take: %s", p)
	}
	// one deeper: a directory the index's own is well formed around holds
	// an entry twice; readers refuse the index there, the check names it
	emptyBlob := blobOf(t, repo, "")
	entry := treeEntry{name: "5-" + cs[0].String(), hash: emptyBlob}
	twice := mustTreeOf(t, repo, entry, entry)
	tip2 := withIndexDir(t, repo, tip, snap, func(top []treeEntry) Hash {
		for i := range top {
			if top[i].name == "a" {
				top[i].hash = twice
			}
		}
		return mustTreeOf(t, repo, top...)
	})
	if objs, ok := lookup(t, tip2, "a/5"); ok {
		t.Errorf("a/5 from an index with an entry twice: %v", objs)
	}
	if p := problems(t, tip2, nil); p != "described true; extra a (a directory with a name twice or out of order) 0000000" {
		t.Errorf("the check of an index with an entry twice: %s", p)
	}
}

// A bucket twice, as "ab" and "AB" (both fanout levels to every reader):
// DiffNotes keeps one per byte, so a note added under the upper-case one
// is no change to it, and the index brought forward does not list it.
func TestNotesIndexNotBroughtForwardOverCaseBuckets(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t)
	xs, ys := x.String(), y.String()
	bucket := mustTreeOf(t, repo, treeEntry{name: ys[2:], hash: blobOf(t, repo, "k a/7\n")})
	a, c := testIdentity(t, repo)
	s0, err := repo.EmptyNotes().CommitNotes(testNotesRef, mustTreeOf(t, repo, treeEntry{name: ys[:2], dir: true, hash: bucket}), "crafted\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s0.ApplyNotesReindexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	base, err := s0.CommitNotes(testNotesRef, tree, "indexed\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	up := []byte(xs[:2])
	for i, ch := range up {
		if ch >= 'a' && ch <= 'f' {
			up[i] = ch - 'a' + 'A'
		}
	}
	if string(up) == xs[:2] {
		t.Skip("bucket has no letter")
	}
	entries, _ := repo.readTree(tree)
	entries = append(slices.Clone(entries), treeEntry{name: string(up), dir: true, hash: mustTreeOf(t, repo, treeEntry{name: xs[2:], hash: blobOf(t, repo, "k a/5\n")})})
	tip, err := base.CommitNotes(testNotesRef, mustTreeOf(t, repo, entries...), "other tool\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	tip.ForEachNote(func(obj Hash, _ []byte) error { found = found || obj == x; return nil })
	objs, ok := lookup(t, tip, "a/5")
	t.Logf("readers of the notes find X: %v; a/5 from the index: %v %v; problems: %s", found, objs, ok, problems(t, tip, nil))
	if found && ok && len(objs) == 0 {
		t.Errorf("the index brought forward hides %s", x.Short())
	}
	next := writeIndexed(t, repo, tip, map[Hash]string{fakeObj(1 << 21): "k z/1\n"})
	n := 0
	next.ForEachNote(func(obj Hash, _ []byte) error { n++; return nil })
	t.Logf("notes before an unrelated write: 2 (+0), after: %d (one added)", n)
}

// Two edits of one object: ApplyNotes keeps the last; the rebuild lists
// the object under the keys of both.
func TestNotesIndexRebuildTakesTheLastEdit(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x := fakeObj(3)
	es := []NoteEdit{{Object: x, Blob: blobOf(t, repo, "k a/1\n")}, {Object: x, Blob: blobOf(t, repo, "k a/2\n")}}
	tree, err := repo.EmptyNotes().ApplyNotesReindexed(es, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	a, c := testIdentity(t, repo)
	snap, err := repo.EmptyNotes().CommitNotes(testNotesRef, tree, "w\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(t, snap, nil); got != "described true" {
		t.Errorf("rebuilt with two edits of one object: %s", got)
	}
}

// A notes commit that changes the index alone (repair's rebuild, an
// evolve merge whose tree is ours) is TREESAME under the export's
// exclude pathspec: git fast-export prunes it and gives nothing, and the
// whole-ledger read falls back to cat-file.
func TestNotesIndexOnlyCommitExported(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(3)
	setEnv(t)
	repo := r.open()
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[0]: "k a/1\n", cs[1]: "k a/2\n"})
	snap = forgeIndex(t, repo, snap, map[string]bool{"a/9-" + cs[2].String(): true})
	fresh, err := r.open().NotesAt(snap.Commit())
	if err != nil {
		t.Fatal(err)
	}
	used, err := fresh.exportNotes(func(Hash, []byte) error { return nil })
	if err != nil || !used {
		t.Errorf("the export of a commit that changed only the index: used %v, %v", used, err)
	}
}

// An index that describes its own notes, at a tip whose tree differs from
// the verified one where DiffNotes does not name every change (a note at
// two depths), is compared whole, not by what changed since: the check
// since the verified tip finds what the whole one does.
func TestNotesIndexCheckedWholeOverACopy(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t)
	xs, ys := x.String(), y.String()
	b5, b6 := blobOf(t, repo, "k a/5\n"), blobOf(t, repo, "k a/6\n")
	y7, y8 := blobOf(t, repo, "k a/7\n"), blobOf(t, repo, "k a/8\n")
	sub := mustTreeOf(t, repo, treeEntry{name: xs[4:], hash: b5})
	bucket := mustTreeOf(t, repo, treeEntry{name: xs[2:4], dir: true, hash: sub}, treeEntry{name: ys[2:], hash: y7})
	a, c := testIdentity(t, repo)
	s0, err := repo.EmptyNotes().CommitNotes(testNotesRef, mustTreeOf(t, repo, treeEntry{name: xs[:2], dir: true, hash: bucket}), "crafted\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s0.ApplyNotesReindexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	verified, err := s0.CommitNotes(testNotesRef, tree, "indexed\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if p := problems(t, verified, nil); p != "described true" {
		t.Fatalf("premise: %s", p)
	}
	// the remote's tip: X also flat at the root, Y changed, an index of
	// its own with a valid stamp that omits a/5-X
	bucket2 := mustTreeOf(t, repo, treeEntry{name: xs[2:4], dir: true, hash: sub}, treeEntry{name: ys[2:], hash: y8})
	t0, err := verified.CommitNotes(testNotesRef, mustTreeOf(t, repo,
		treeEntry{name: xs[:2], dir: true, hash: bucket2}, treeEntry{name: xs, hash: b6}), "other tool\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	tree, err = t0.ApplyNotesReindexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := t0.CommitNotes(testNotesRef, tree, "indexed\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	tip := forgeIndex(t, repo, t1, map[string]bool{"a/5-" + xs: false})

	// every reader of the notes: X holds a/5
	has5 := false
	tip.ForEachNote(func(obj Hash, data []byte) error {
		has5 = has5 || (obj == x && slices.Contains(testIndex.Keys(data), "a/5"))
		return nil
	})
	objs, ok := lookup(t, tip, "a/5")
	if !has5 || !ok || slices.Contains(objs, x) {
		t.Fatalf("premise: notes hold a/5 on X %v; index answers %v %v", has5, objs, ok)
	}
	full := problems(t, tip, nil)
	incr := problems(t, tip, verified)
	t.Logf("full: %s; since the verified tip: %s", full, incr)
	if full == "described true" {
		t.Fatalf("premise: the full check finds nothing")
	}
	if incr != full {
		t.Errorf("since the verified tip the check says %q; readers at the tip miss X under a/5 (the full check: %q)", incr, full)
	}
}

// compareKeys orders entries as their sort keys do.
func TestCompareKeysAsSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("ab/-.0")
	name := func() string {
		b := make([]byte, 1+rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return strings.ReplaceAll(string(b), "/", "")
	}
	for i := 0; i < 20000; i++ {
		a := treeEntry{name: name(), dir: rng.IntN(2) == 0}
		b := treeEntry{name: name(), dir: rng.IntN(2) == 0}
		if a.name == "" || b.name == "" {
			continue
		}
		want := strings.Compare(sortKey(a), sortKey(b))
		got := compareKeys(a, b)
		if (got < 0) != (want < 0) || (got == 0) != (want == 0) {
			t.Fatalf("compareKeys(%q dir %v, %q dir %v) = %d, sort keys say %d", a.name, a.dir, b.name, b.dir, got, want)
		}
	}
}

// A note beside a fanout subtree, on a level a write rewrites, is named by
// NotesToRewrite; written again, it goes into the subtree of its prefix
// (made when there is none) and the level is plain again, as git notes
// leaves it. A note beside subtrees on a level the write does not rewrite
// is not named.
func TestNotesToRewriteMoved(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(6)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t)
	xs, ys := x.String(), y.String()
	bx, by := blobOf(t, repo, "x\n"), blobOf(t, repo, "y\n")
	var root []treeEntry
	for i, c := range cs[:3] {
		root = append(root, treeEntry{name: c.String(), hash: blobOf(t, repo, fmt.Sprintf("n%d\n", i))})
	}
	// x's bucket: y beside a subtree that holds x (a level of its own)
	bucket := mustTreeOf(t, repo, treeEntry{name: xs[2:4], dir: true, hash: mustTreeOf(t, repo, treeEntry{name: xs[4:], hash: bx})},
		treeEntry{name: ys[2:], hash: by})
	root = append(root, treeEntry{name: xs[:2], dir: true, hash: bucket})
	a, c := testIdentity(t, repo)
	snap, err := repo.EmptyNotes().CommitNotes(testNotesRef, mustTreeOf(t, repo, root...), "crafted\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	beside := func(objs ...Hash) []Hash {
		t.Helper()
		got, err := snap.NotesToRewrite(objs)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := slices.Clone(cs[:3])
	slices.SortFunc(want, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
	if got := beside(cs[4]); !slices.Equal(got, want) {
		t.Fatalf("a write of another note: %v, want the three at the root %v", got, want)
	}
	withY := append(slices.Clone(want), y)
	slices.SortFunc(withY, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
	if got := beside(x); !slices.Equal(got, withY) {
		t.Fatalf("a write of x: %v, want those and y, beside x's subtree", got)
	}
	// written again as they are, with a new note: every level plain
	var edits []NoteEdit
	for _, h := range append(beside(x), cs[5]) {
		blobs, err := snap.Find(h)
		if err != nil {
			t.Fatal(err)
		}
		b := blobOf(t, repo, "new\n")
		if len(blobs) == 1 {
			b = blobs[0]
		}
		edits = append(edits, NoteEdit{Object: h, Blob: b})
	}
	tree, err := snap.ApplyNotes(edits, nil)
	if err != nil {
		t.Fatal(err)
	}
	next, err := snap.CommitNotes(testNotesRef, tree, "moved\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := next.plainOnPaths(append(slices.Clone(cs), x, y)); err != nil || !plain {
		t.Fatalf("the levels written are not plain (%v)", err)
	}
	if got, err := next.NotesToRewrite(append(slices.Clone(cs), x, y)); err != nil || len(got) != 0 {
		t.Fatalf("notes still beside a subtree: %v (%v)", got, err)
	}
	// every note reads as it did
	for i, h := range cs[:3] {
		if got := r.git("notes", "--ref=evolve", "show", h.String()); got != fmt.Sprintf("n%d\n", i) {
			t.Errorf("note on %s: %q", h, got)
		}
	}
	for h, want := range map[Hash]string{x: "x\n", y: "y\n"} {
		if blobs, err := next.Find(h); err != nil || len(blobs) != 1 || blobs[0] != blobOf(t, repo, want) {
			t.Errorf("note on %s: %v %v", h, blobs, err)
		}
	}
	r.fsckClean()
}

// A level with names that differ only in case (a bucket "AB" beside "ab",
// a note under both cases: another tool's tree, which git reads whole) loses
// no copy to a write that rewrites it: an unrelated edit keeps every note
// as git read it; an edit of a note in such a bucket, or of a note under
// both cases, leaves that edit as the object's one note, the other notes
// kept; a bucket whose notes are all edited goes.
func TestApplyNotesKeepsNamesThatDifferInCase(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t) // x and y share their first two digits, a letter first
	xs, ys := x.String(), y.String()
	up := strings.ToUpper
	bx, by := blobOf(t, repo, "x\n"), blobOf(t, repo, "y\n")
	z := cs[0]
	zs := z.String()
	bz, bZ := blobOf(t, repo, "z lower\n"), blobOf(t, repo, "z upper\n")
	root := []treeEntry{
		{name: up(xs[:2]), dir: true, hash: mustTreeOf(t, repo, treeEntry{name: xs[2:], hash: bx})},
		{name: ys[:2], dir: true, hash: mustTreeOf(t, repo, treeEntry{name: ys[2:], hash: by})},
	}
	if up(zs) != zs {
		root = append(root, treeEntry{name: zs, hash: bz}, treeEntry{name: up(zs), hash: bZ})
	}
	a, c := testIdentity(t, repo)
	snap, err := repo.EmptyNotes().CommitNotes(testNotesRef, mustTreeOf(t, repo, root...), "another tool\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	notesOf := func(s *Notes) string {
		t.Helper()
		var b strings.Builder
		for _, h := range []Hash{x, y, z} {
			blobs, err := s.Find(h)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, bl := range blobs {
				data, err := repo.ReadBlob(bl)
				if err != nil {
					t.Fatal(err)
				}
				texts = append(texts, string(data))
			}
			slices.Sort(texts)
			fmt.Fprintf(&b, "%s %q\n", h.Short(), texts)
		}
		return b.String()
	}
	write := func(edits ...NoteEdit) *Notes {
		t.Helper()
		tree, err := snap.ApplyNotes(edits, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &Notes{r: repo, tree: tree}
	}
	before := notesOf(snap)
	if got := notesOf(write(NoteEdit{Object: cs[1], Blob: blobOf(t, repo, "other\n")})); got != before {
		t.Errorf("an unrelated edit:\n%s\nbefore it:\n%s", got, before)
	}
	// x edited: its one note is the edit; y's and z's as they were
	bx2 := blobOf(t, repo, "x again\n")
	next := write(NoteEdit{Object: x, Blob: bx2})
	if blobs, err := next.Find(x); err != nil || !slices.Equal(blobs, []Hash{bx2}) {
		t.Errorf("x after its edit: %v %v", blobs, err)
	}
	want := strings.SplitN(before, "\n", 2)[1] // y's and z's lines
	if got := notesOf(next); !strings.HasSuffix(got, want) {
		t.Errorf("after x's edit:\n%s\nwant y and z as:\n%s", got, want)
	}
	// the upper-case bucket held x alone: it goes
	entries, err := repo.readTree(mustTree(t, next))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.name == up(xs[:2]) && up(xs[:2]) != xs[:2] {
			t.Errorf("the bucket %s stays with no note of its own", e.name)
		}
	}
	if up(zs) != zs {
		bz2 := blobOf(t, repo, "z again\n")
		if blobs, err := write(NoteEdit{Object: z, Blob: bz2}).Find(z); err != nil || !slices.Equal(blobs, []Hash{bz2}) {
			t.Errorf("z after its edit: %v %v", blobs, err)
		}
	}
	r.fsckClean()
}

// TakingOut sets each directory named that the root holds to be taken out,
// leaving the map given as it was, and gives that map back when the root
// holds none of them.
func TestNotesTakingOut(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	sub := mustTreeOf(t, repo, treeEntry{name: "x", hash: blobOf(t, repo, "")})
	snap := &Notes{r: repo, tree: mustTreeOf(t, repo, treeEntry{name: "old.v1", dir: true, hash: sub}, treeEntry{name: "marker", hash: blobOf(t, repo, "m\n")})}
	given := map[string]Hash{"marker": blobOf(t, repo, "n\n")}
	got, err := snap.TakingOut(given, "old.v1", "old.v0", "marker")
	if err != nil {
		t.Fatal(err)
	}
	if len(given) != 1 || len(got) != 2 || !got["old.v1"].IsZero() || got["marker"] != given["marker"] {
		t.Errorf("TakingOut: %v (given %v)", got, given)
	}
	if got, err := snap.TakingOut(nil, "old.v0"); err != nil || got != nil {
		t.Errorf("none held: %v %v", got, err)
	}
	tree, err := snap.ApplyNotes(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := repo.readTree(tree)
	if len(entries) != 1 || entries[0].name != "marker" {
		t.Errorf("written: %v", entries)
	}
}
