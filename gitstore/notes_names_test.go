package gitstore

import (
	"fmt"
	"strings"
	"testing"
)

// dupNames lists the names tree holds more than once.
func dupNames(t *testing.T, repo *Repo, tree Hash) []string {
	t.Helper()
	entries, err := repo.readTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	var out []string
	for _, e := range entries {
		if seen[e.name]++; seen[e.name] == 2 {
			out = append(out, e.name)
		}
	}
	return out
}

// A note under an upper-case name beside a symbolic link under the
// lower-case one (no note): a write of another object on that level keeps
// the note under the name it was found under, not under the link's: no
// name twice in a tree.
func TestCaseTwinOfALinkKeepsNamesUnique(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(3)
	setEnv(t)
	x := cs[0].String()
	if strings.ToUpper(x) == x {
		t.Skip("no letter in the name")
	}
	link := strings.TrimSpace(r.gitIn("target\n", "hash-object", "-w", "--stdin"))
	note := strings.TrimSpace(r.gitIn("x's note\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n120000 blob %s\t%s\n", note, strings.ToUpper(x), link, x), "mktree"))
	r.git("update-ref", testNotesRef, strings.TrimSpace(r.git("commit-tree", "-m", "another tool", tree)))
	if got := r.git("notes", "--ref=evolve", "show", x); got != "x's note\n" {
		t.Fatalf("premise: git reads the file: %q", got)
	}
	r.fsckClean() // the input is clean
	repo := r.open()
	snap := mustReadNotes(t, repo, testNotesRef)
	tree2, err := snap.ApplyNotes([]NoteEdit{{Object: cs[1], Blob: blobOf(t, repo, "other\n")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := dupNames(t, repo, tree2); len(d) > 0 {
		t.Errorf("an unrelated write leaves names twice: %v", d)
	}
	a, c := testIdentity(t, repo)
	if _, err := snap.CommitNotes(testNotesRef, tree2, "w\n", a, c); err != nil {
		t.Fatal(err)
	}
	r.fsckClean()
}

// A fanout bucket under an upper-case name beside a non-note of its name
// in lower case (a blob "ab"): a write of another object keeps the bucket
// under the name it was found under.
func TestUpperBucketBesideABlobOfItsName(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x := "ab" + strings.Repeat("1", 38)
	y, _ := ParseHash("cd" + strings.Repeat("2", 38))
	bucket := mustTreeOf(t, repo, treeEntry{name: x[2:], hash: blobOf(t, repo, "x\n")})
	root := mustTreeOf(t, repo,
		treeEntry{name: "AB", dir: true, hash: bucket},
		treeEntry{name: "ab", hash: blobOf(t, repo, "not a note\n")})
	snap := &Notes{r: repo, tree: root}
	tree2, err := snap.ApplyNotes([]NoteEdit{{Object: y, Blob: blobOf(t, repo, "y\n")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := dupNames(t, repo, tree2); len(d) > 0 {
		t.Errorf("an unrelated write leaves names twice: %v", d)
	}
}

// A symbolic link at a note's path inside a bucket whose name is another's
// but for case goes with a write (or repair's removal) of that object's
// note, as anywhere else.
func TestLinkInATwinBucketGoesWithItsEdit(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	x := "ab" + strings.Repeat("1", 38)
	z, _ := ParseHash("ab" + strings.Repeat("2", 38))
	lower := mustTreeOf(t, repo, treeEntry{name: x[2:], hash: blobOf(t, repo, "x\n")})
	upper := mustTreeOf(t, repo, treeEntry{name: z.String()[2:], mode: 0o120000, hash: blobOf(t, repo, "target\n")})
	root := mustTreeOf(t, repo,
		treeEntry{name: "ab", dir: true, hash: lower},
		treeEntry{name: "AB", dir: true, hash: upper})
	snap := &Notes{r: repo, tree: root}
	if bad, err := snap.BadNotes(); err != nil || len(bad) != 1 || bad[0] != z {
		t.Fatalf("premise: BadNotes = %v %v", bad, err)
	}
	for _, blob := range []Hash{ZeroHash, blobOf(t, repo, "z\n")} {
		tree2, err := snap.ApplyNotes([]NoteEdit{{Object: z, Blob: blob}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bad, err := (&Notes{r: repo, tree: tree2}).BadNotes(); err != nil || len(bad) != 0 {
			t.Errorf("a write of %s (blob %s) leaves the link: BadNotes = %v %v", z.Short(), blob.Short(), bad, err)
		}
	}
}

// An entry of mode 0 at a note's path: git takes it for a submodule
// (canon_mode), so git notes lists no note there; no reader here reads
// one either.
func TestModeZeroAtANotePath(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(1)
	setEnv(t)
	note := strings.TrimSpace(r.gitIn("a note\n", "hash-object", "-w", "--stdin"))
	h, _ := ParseHash(note)
	data := "0 " + cs[0].String() + "\x00" + string(h[:])
	tree := strings.TrimSpace(r.gitIn(data, "hash-object", "-t", "tree", "-w", "--literally", "--stdin"))
	r.git("update-ref", testNotesRef, strings.TrimSpace(r.git("commit-tree", "-m", "hostile", tree)))
	gitList := strings.TrimSpace(r.git("notes", "--ref=evolve", "list"))
	repo := r.open()
	snap := mustReadNotes(t, repo, testNotesRef)
	blobs, err := snap.Find(cs[0])
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := snap.BadNotes()
	if (gitList == "") != (len(blobs) == 0) {
		t.Errorf("git notes list %q, Find %v (BadNotes %v)", gitList, blobs, bad)
	}
}

// A name a level holds twice in the same case (only git mktree writes such
// a tree; git reads the notes under both): a write that rewrites the level
// writes the name once, with the notes of both, a note found under both
// joined, first the first's text, as git joins them.
func TestNameTwiceKeepsTheNotesOfBoth(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	x, y := twoInBucket(t)
	xs, ys := x.String(), y.String()
	bx, by, by2 := blobOf(t, repo, "x\n"), blobOf(t, repo, "y\n"), blobOf(t, repo, "y again")
	z := cs[0]
	bz, bz2 := blobOf(t, repo, "z\n"), blobOf(t, repo, "z again\n")
	root := mustTreeOf(t, repo,
		treeEntry{name: xs[:2], dir: true, hash: mustTreeOf(t, repo, treeEntry{name: xs[2:], hash: bx}, treeEntry{name: ys[2:], hash: by})},
		treeEntry{name: ys[:2], dir: true, hash: mustTreeOf(t, repo, treeEntry{name: ys[2:], hash: by2})})
	snap := &Notes{r: repo, tree: root}
	if dups := dupNames(t, repo, root); len(dups) != 1 {
		t.Fatalf("premise: the root holds %v twice", dups)
	}
	tree, err := snap.ApplyNotes([]NoteEdit{{Object: cs[1], Blob: blobOf(t, repo, "other\n")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dups := dupNames(t, repo, tree); len(dups) != 0 {
		t.Errorf("the tree written holds %v twice", dups)
	}
	next := &Notes{r: repo, tree: tree}
	for h, want := range map[Hash]string{x: "x\n", y: "y\ny again"} {
		blobs, err := next.Find(h)
		if err != nil || len(blobs) != 1 {
			t.Fatalf("%s: %v %v", h.Short(), blobs, err)
		}
		if data, _ := repo.ReadBlob(blobs[0]); string(data) != want {
			t.Errorf("%s: %q, want %q", h.Short(), data, want)
		}
	}
	// a note of one object twice at one level
	root2 := mustTreeOf(t, repo, treeEntry{name: z.String(), hash: bz}, treeEntry{name: z.String(), hash: bz2})
	tree2, err := (&Notes{r: repo, tree: root2}).ApplyNotes([]NoteEdit{{Object: cs[1], Blob: blobOf(t, repo, "other\n")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := (&Notes{r: repo, tree: tree2}).Find(z)
	if err != nil || len(blobs) != 1 {
		t.Fatalf("z: %v %v", blobs, err)
	}
	if data, _ := repo.ReadBlob(blobs[0]); string(data) != "z\nz again\n" {
		t.Errorf("z: %q", data)
	}
}
