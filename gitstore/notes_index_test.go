package gitstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// testIndex lists each object under the keys its note names on lines
// "k <key>".
var testIndex = &NotesIndex{Name: "test-index", Keys: func(note []byte) []string {
	var keys []string
	for _, l := range strings.Split(string(note), "\n") {
		if k, ok := strings.CutPrefix(l, "k "); ok {
			keys = append(keys, k)
		}
	}
	return keys
}}

// writeIndexed applies edits (content "" removes) with testIndex kept and
// commits the result.
func writeIndexed(t *testing.T, repo *Repo, snap *Notes, edits map[Hash]string) *Notes {
	t.Helper()
	tree, err := snap.ApplyNotesIndexed(noteEdits(t, repo, edits), nil, testIndex)
	if err != nil {
		t.Fatalf("ApplyNotesIndexed: %v", err)
	}
	a, c := testIdentity(t, repo)
	next, err := snap.CommitNotes(testNotesRef, tree, "indexed write\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// lookup is IndexLookup of testIndex, failing the test on an error.
func lookup(t *testing.T, snap *Notes, key string) ([]Hash, bool) {
	t.Helper()
	objs, ok, err := snap.IndexLookup(testIndex, key)
	if err != nil {
		t.Fatalf("IndexLookup(%q): %v", key, err)
	}
	return objs, ok
}

// indexDir is the tree the index directory of snap is.
func indexDir(t *testing.T, snap *Notes) Hash {
	t.Helper()
	dir, _, err := snap.indexOf(testIndex.Name)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestNotesIndexLookup(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(4)
	setEnv(t)
	repo := r.open()
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{
		cs[0]: "k 1/12/120\nk 1/12/121\n",
		cs[1]: "k 1/12/120\n",
		cs[2]: "no key\n",
	})
	objs, ok := lookup(t, snap, "1/12/120")
	want := []Hash{cs[0], cs[1]}
	slices.SortFunc(want, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
	if !ok || !slices.Equal(objs, want) {
		t.Fatalf("1/12/120: %v %v, want %v", objs, ok, want)
	}
	if objs, ok := lookup(t, snap, "1/12/121"); !ok || !slices.Equal(objs, []Hash{cs[0]}) {
		t.Fatalf("1/12/121: %v %v", objs, ok)
	}
	if objs, ok := lookup(t, snap, "2/20/200"); !ok || len(objs) != 0 {
		t.Fatalf("a key no note names: %v %v", objs, ok)
	}
	// C git sees the notes, and only them; the tree is sound.
	if got := strings.Fields(r.git("notes", "--ref=evolve", "list")); len(got) != 6 {
		t.Errorf("git notes list: %v", got)
	}
	r.fsckClean()
	// Every reader of the notes passes the index by.
	seen := 0
	if err := snap.ForEachNote(func(Hash, []byte) error { seen++; return nil }); err != nil || seen != 3 {
		t.Errorf("ForEachNote saw %d notes (%v), want 3", seen, err)
	}
	seen = 0
	if err := snap.walkListed(context.Background(), func(Hash, Hash) error { seen++; return nil }); err != nil || seen != 3 {
		t.Errorf("the listing saw %d notes (%v), want 3", seen, err)
	}
	if paths, excluded, none, err := snap.rootLimits(mustTree(t, snap)); err != nil || none || len(paths) != 3 || !strings.HasPrefix(paths[0], ":(literal,top)") || !slices.Equal(excluded, []string{testIndex.Name}) {
		t.Errorf("the listing names %v and leaves out %v (none %v, %v), want the 3 notes and the index", paths, excluded, none, err)
	}
}

func mustTree(t *testing.T, snap *Notes) Hash {
	t.Helper()
	h, err := snap.Tree()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Under notes commits git notes made (which keep the index as it is, so
// that it describes other notes), a lookup brings forward the index of the
// nearest commit whose index describes its own notes by the notes changed
// since, and so does the next indexed write; past indexLookBack such
// commits, there is none to bring forward: a lookup is refused, and the
// next write builds the index again from every note.
func TestNotesIndexBroughtForwardOverGitNotes(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(5 + indexLookBack)
	setEnv(t)
	repo := r.open()
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[0]: "k a/1\n", cs[1]: "k a/1\n"})
	r.git("notes", "--ref=evolve", "add", "-m", "k a/1", cs[2].String())
	r.git("notes", "--ref=evolve", "remove", cs[0].String())
	r.git("notes", "--ref=evolve", "add", "-f", "-m", "k b/2", cs[1].String())
	repo = r.open()
	snap = mustReadNotes(t, repo, testNotesRef)
	if _, valid, err := snap.indexOf(testIndex.Name); err != nil || valid {
		t.Fatalf("premise: the tip's own index describes its notes (%v)", err)
	}
	if objs, ok := lookup(t, snap, "a/1"); !ok || !slices.Equal(objs, []Hash{cs[2]}) {
		t.Fatalf("a/1 brought forward: %v %v, want %v", objs, ok, cs[2])
	}
	if objs, ok := lookup(t, snap, "b/2"); !ok || !slices.Equal(objs, []Hash{cs[1]}) {
		t.Fatalf("b/2 brought forward: %v %v, want %v", objs, ok, cs[1])
	}
	if got := problems(t, snap, nil); got != "described true" {
		t.Errorf("the index brought forward: %s", got)
	}
	// the next write brings it forward too: its tree is the one built again
	snap = writeIndexed(t, repo, snap, map[Hash]string{cs[3]: "k a/1\n"})
	if objs, ok := lookup(t, snap, "a/1"); !ok || len(objs) != 2 {
		t.Fatalf("a/1 after a write: %v %v, want 2", objs, ok)
	}
	checkRebuilt(t, repo, snap)
	// past indexLookBack commits git made, nothing is brought forward
	for i := 0; i <= indexLookBack; i++ {
		r.git("notes", "--ref=evolve", "add", "-m", "k a/1", cs[4+i].String())
	}
	repo = r.open()
	snap = mustReadNotes(t, repo, testNotesRef)
	if objs, ok := lookup(t, snap, "a/1"); ok {
		t.Fatalf("an index %d commits back answered: %v", indexLookBack+1, objs)
	}
	snap = writeIndexed(t, repo, snap, map[Hash]string{cs[0]: "k c/3\n"})
	if objs, ok := lookup(t, snap, "a/1"); !ok || len(objs) != 3+indexLookBack {
		t.Fatalf("a/1 after the rebuild: %v %v, want %d", objs, ok, 3+indexLookBack)
	}
	checkRebuilt(t, repo, snap)
	r.fsckClean()
}

// checkRebuilt fails the test when snap's tree is not the one the index
// built again from every note makes.
func checkRebuilt(t *testing.T, repo *Repo, snap *Notes) {
	t.Helper()
	tree := mustTree(t, snap)
	rootEntries, err := repo.readTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	var others []treeEntry
	for _, e := range rootEntries {
		if e.name != testIndex.Name {
			others = append(others, e)
		}
	}
	bare, err := repo.writeTree(others)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := (&Notes{r: repo, tree: bare}).ApplyNotesIndexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt != tree {
		t.Fatalf("the index brought forward (tree %s) is not the one built again (%s)", tree, rebuilt)
	}
}

func TestNotesIndexStampRefusesAnother(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[0]: "k a/1\n"})
	// An index with a second stamp (one of them right) is not taken: the
	// one it was written on is, and its false entry is not.
	dir := indexDir(t, snap)
	entries, err := repo.readTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := repo.WriteBlob(nil)
	entries = append(slices.Clone(entries), treeEntry{name: indexStampPrefix + strings.Repeat("0", 40), hash: empty},
		treeEntry{name: "a", dir: true, hash: mustTreeOf(t, repo, treeEntry{name: "9-" + cs[1].String(), hash: empty})})
	snap = withIndexDir(t, repo, snap, snap, func([]treeEntry) Hash { return mustTreeOf(t, repo, entries...) })
	if objs, ok := lookup(t, snap, "a/9"); !ok || len(objs) != 0 {
		t.Fatalf("an index with two stamps answered: %v %v", objs, ok)
	}
	if objs, ok := lookup(t, snap, "a/1"); !ok || !slices.Equal(objs, []Hash{cs[0]}) {
		t.Fatalf("a/1 from the index before: %v %v", objs, ok)
	}
}

func mustTreeOf(t *testing.T, repo *Repo, entries ...treeEntry) Hash {
	t.Helper()
	h, err := repo.writeTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestNotesIndexBroughtForward writes random edits one commit at a time
// and checks that the index brought forward is the one built from every
// note, tree for tree, and answers as the notes do.
func TestNotesIndexBroughtForward(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(40)
	setEnv(t)
	repo := r.open()
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"0/0/1", "0/0/2", "0/1/10", "1/10/100", "1/11/110", "x/bad"}
	snap := mustReadNotes(t, repo, testNotesRef)
	notes := map[Hash]string{}
	var pairs []NotesPair
	for round := 0; round < 30; round++ {
		edits := map[Hash]string{}
		for i := rng.IntN(6); i >= 0; i-- {
			obj := cs[rng.IntN(len(cs))]
			var b strings.Builder
			for j := rng.IntN(3); j > 0; j-- {
				fmt.Fprintf(&b, "k %s\n", keys[rng.IntN(len(keys))])
			}
			if rng.IntN(4) == 0 {
				b.WriteString("free text\n")
			}
			edits[obj] = b.String()
		}
		before := snap
		snap = writeIndexed(t, repo, snap, edits)
		pairs = append(pairs, NotesPair{Old: before, New: snap})
		for obj, c := range edits {
			if c == "" {
				delete(notes, obj)
			} else {
				notes[obj] = c
			}
		}
		// the same index built from nothing
		checkRebuilt(t, repo, snap)
		for _, k := range keys {
			var want []Hash
			for obj, c := range notes {
				if strings.Contains(c, "k "+k+"\n") {
					want = append(want, obj)
				}
			}
			slices.SortFunc(want, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
			got, ok := lookup(t, snap, k)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("round %d, key %s: %v %v, want %v", round, k, got, ok, want)
			}
		}
	}
	r.fsckClean()
	// the history's diffs, with git told to pass the index by, are the
	// notes' alone
	checkDiffer(t, repo, pairs, testIndex.Name)
}

// forgeIndex commits snap's tree with its index changed as changes say
// (paths below the index directory: true adds, false removes), the stamp
// kept: what another writer could push.
func forgeIndex(t *testing.T, repo *Repo, snap *Notes, changes map[string]bool) *Notes {
	t.Helper()
	empty := blobOf(t, repo, "")
	return withIndexDir(t, repo, snap, snap, func(top []treeEntry) Hash {
		h, err := repo.editIndexDir(top, changes, empty)
		if err != nil {
			t.Fatal(err)
		}
		return h
	})
}

// withIndexDir commits, on the snapshot on, the tree of from with its index
// directory the one dir makes of its entries, the stamp as dir leaves it.
func withIndexDir(t *testing.T, repo *Repo, on, from *Notes, dir func(top []treeEntry) Hash) *Notes {
	t.Helper()
	entries, err := repo.readTree(mustTree(t, from))
	if err != nil {
		t.Fatal(err)
	}
	var out []treeEntry
	for _, e := range entries {
		if e.name == testIndex.Name {
			top, err := repo.readTree(e.hash)
			if err != nil {
				t.Fatal(err)
			}
			e.hash = dir(slices.Clone(top))
		}
		out = append(out, e)
	}
	a, c := testIdentity(t, repo)
	next, err := on.CommitNotes(testNotesRef, mustTreeOf(t, repo, out...), "another writer\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// problems is IndexProblems as text.
func problems(t *testing.T, snap, since *Notes) string {
	t.Helper()
	missing, extra, of, err := snap.IndexProblems(testIndex, since)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "described %v", !of.IsZero())
	for _, e := range missing {
		fmt.Fprintf(&b, "; missing %s %s", e.Key, e.Object.Short())
	}
	for _, e := range extra {
		if e.OddDirectory {
			fmt.Fprintf(&b, "; extra %s (a directory with a name twice or out of order) %s", e.Key, e.Object.Short())
			continue
		}
		fmt.Fprintf(&b, "; extra %s %s", e.Key, e.Object.Short())
	}
	return b.String()
}

func TestNotesIndexProblems(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(6)
	setEnv(t)
	repo := r.open()
	s1 := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[0]: "k a/1\n", cs[1]: "k a/2\n"})
	s2 := writeIndexed(t, repo, s1, map[Hash]string{cs[2]: "k a/3\n", cs[0]: "k a/4\n"})
	for _, since := range []*Notes{nil, s1} {
		if got := problems(t, s2, since); got != "described true" {
			t.Errorf("a right index (since %v): %s", since != nil, got)
		}
	}
	// listed under a key its note does not name, and a key left out
	forged := forgeIndex(t, repo, s2, map[string]bool{
		"a/9-" + cs[1].String(): true,
		"a/3-" + cs[2].String(): false,
	})
	want := fmt.Sprintf("described true; missing a/3 %s; extra a/9 %s", cs[2].Short(), cs[1].Short())
	for _, since := range []*Notes{nil, s2, s1} {
		if got := problems(t, forged, since); got != want {
			t.Errorf("a forged index (since %v):\n got %s\nwant %s", since != nil, got, want)
		}
	}
	// a record after the forgery carries it forward; the check still sees it
	s3 := writeIndexed(t, repo, forged, map[Hash]string{cs[3]: "k a/5\n"})
	if got := problems(t, s3, nil); got != want {
		t.Errorf("the forged index carried forward:\n got %s\nwant %s", got, want)
	}
	// built again, it is right
	tree, err := s3.ApplyNotesReindexed(nil, nil, testIndex)
	if err != nil {
		t.Fatal(err)
	}
	a, c := testIdentity(t, repo)
	s4, err := s3.CommitNotes(testNotesRef, tree, "rebuilt\n", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(t, s4, nil); got != "described true" {
		t.Errorf("the index built again: %s", got)
	}
	// under a commit git notes made, the index it is brought forward from
	// is compared: the one built again, right
	r.git("notes", "--ref=evolve", "add", "-m", "k a/7", cs[5].String())
	repo = r.open()
	if got := problems(t, mustReadNotes(t, repo, testNotesRef), nil); got != "described true" {
		t.Errorf("under a commit of git notes: %s", got)
	}
	// and under one on a forged index, the forged one
	valid := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[4]: "k a/6\n"})
	forgeIndex(t, repo, valid, map[string]bool{"a/8-" + cs[4].String(): true})
	r.git("notes", "--ref=evolve", "add", "-f", "-m", "k a/9", cs[5].String())
	repo = r.open()
	if got, want := problems(t, mustReadNotes(t, repo, testNotesRef), nil), "described true; extra a/8 "+cs[4].Short(); got != want {
		t.Errorf("under a commit of git notes, on a forged index:\n got %s\nwant %s", got, want)
	}
}

// The readers that ask git for every note at once (the listing, the
// export) name the index to git as what not to read, and give the notes
// the tree walk gives.
func TestNotesIndexNotRead(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(70)
	setEnv(t)
	repo := r.open()
	edits := map[Hash]string{}
	for i, c := range cs {
		edits[c] = fmt.Sprintf("k %d/%d\n", i%7, i)
	}
	snap := writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), edits)
	walked := notesOf(t, func(fn func(Hash, []byte) error) error {
		return snap.walk(func(obj, blob Hash) error {
			data, err := repo.ReadBlob(blob)
			if err != nil {
				return err
			}
			return fn(obj, data)
		}, false)
	})
	if len(walked) != 70 {
		t.Fatalf("the walk gave %d notes, want 70", len(walked))
	}
	fresh, err := r.open().NotesAt(snap.Commit())
	if err != nil {
		t.Fatal(err)
	}
	if exported := exportedNotes(t, fresh); !slices.Equal(exported, walked) {
		t.Errorf("the export gave\n %q\nthe walk\n %q", exported, walked)
	}
	if streamed := notesOf(t, fresh.streamNotes); !slices.Equal(streamed, walked) {
		t.Errorf("the stream gave\n %q\nthe walk\n %q", streamed, walked)
	}

}

// Dir lists each directory of the index as the notes give it, under
// indexed writes and under the commits of git notes that a reader brings
// the index forward over: each leaf with exactly the objects whose notes
// name its key, and each directory that holds such a leaf.
func TestNotesIndexDirBroughtForward(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(24)
	setEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"0/0/1", "0/0/2", "0/1/10", "1/10/100", "1/11/110", "x/bad"}
	dirs := []string{"", "0", "0/0", "0/1", "1", "1/10", "1/11", "x", "2"}
	notes := map[Hash]string{}
	plain := 0 // git notes commits since the last indexed write
	for round := 0; round < 24; round++ {
		edits := map[Hash]string{}
		for i := rng.IntN(3); i >= 0; i-- {
			var b strings.Builder
			for j := rng.IntN(3); j > 0; j-- {
				fmt.Fprintf(&b, "k %s\n", keys[rng.IntN(len(keys))])
			}
			edits[cs[rng.IntN(len(cs))]] = b.String()
		}
		if plain < indexLookBack-2 && rng.IntN(2) == 0 {
			for obj, c := range edits {
				if c == "" {
					if _, ok := notes[obj]; ok {
						r.git("notes", "--ref=evolve", "remove", obj.String())
						plain++
					}
					continue
				}
				r.git("notes", "--ref=evolve", "add", "-f", "-m", strings.TrimSuffix(c, "\n"), obj.String())
				plain++
			}
		} else {
			repo := r.open()
			writeIndexed(t, repo, mustReadNotes(t, repo, testNotesRef), edits)
			plain = 0
		}
		for obj, c := range edits {
			if c == "" {
				delete(notes, obj)
			} else {
				notes[obj] = c
			}
		}
		repo := r.open()
		x, ok, err := mustReadNotes(t, repo, testNotesRef).OpenIndex(testIndex)
		if err != nil || !ok {
			t.Fatalf("round %d: no index to read (%v)", round, err)
		}
		for _, d := range dirs {
			gotDirs, leaves, ok, err := x.Dir(d)
			if err != nil || !ok {
				t.Fatalf("round %d: Dir(%q): %v %v", round, d, ok, err)
			}
			delete(leaves, "of") // the stamp
			want := map[string][]Hash{}
			wantDirs := map[string]bool{}
			for obj, c := range notes {
				for _, k := range keys {
					if !strings.Contains(c, "k "+k+"\n") {
						continue
					}
					rest, found := strings.CutPrefix(k, d+"/")
					if d == "" {
						rest, found = k, true
					}
					if !found {
						continue
					}
					if sub, _, deeper := strings.Cut(rest, "/"); deeper {
						wantDirs[sub] = true
					} else if !slices.Contains(want[rest], obj) {
						want[rest] = append(want[rest], obj)
					}
				}
			}
			for leaf := range want {
				slices.SortFunc(want[leaf], func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
			}
			if fmt.Sprint(leaves) != fmt.Sprint(want) {
				t.Fatalf("round %d (%d commits of git notes on top): Dir(%q) leaves %v, want %v", round, plain, d, leaves, want)
			}
			for sub := range wantDirs {
				if !slices.Contains(gotDirs, sub) {
					t.Fatalf("round %d: Dir(%q) lists %v, without %q", round, d, gotDirs, sub)
				}
			}
		}
	}
}
