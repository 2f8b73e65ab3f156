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
