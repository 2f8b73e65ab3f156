package gitstore

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkDiffer diffs pairs with a NotesDiffer and with DiffNotesMany and
// fails where they differ. It returns how many pairs the differ left to
// DiffNotesMany.
func checkDiffer(t *testing.T, repo *Repo, pairs []NotesPair, skip ...string) int {
	t.Helper()
	d := repo.NewNotesDiffer(skip...)
	defer d.Close()
	got, err := d.Diff(pairs)
	if err != nil {
		t.Fatalf("NotesDiffer: %v", err)
	}
	want, err := DiffNotesMany(pairs)
	if err != nil {
		t.Fatalf("DiffNotesMany: %v", err)
	}
	for i := range pairs {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("pair %d (%s to %s): the differ says\n  %v\nDiffNotesMany says\n  %v", i, pairs[i].Old.commit.Short(), pairs[i].New.commit.Short(), got[i], want[i])
		}
	}
	if d.failed {
		t.Errorf("git diff-tree failed: %s", d.r.dir)
	}
	return d.odd
}

// The history git notes add wrote, commit by commit, across the commit
// where git fanned the tree out, oldest first and newest first: what git
// diff-tree answers is what DiffNotesMany does, and no pair is diffed
// twice (git writes no directory that could hide a copy).
func TestNotesDifferGitWritten(t *testing.T) {
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
	pairs = append(pairs, NotesPair{Old: pairs[0].New, New: pairs[0].New}, NotesPair{Old: pairs[len(pairs)-1].New, New: pairs[0].Old})
	if odd := checkDiffer(t, repo, pairs); odd != 0 {
		t.Errorf("%d pair(s) of git's own trees diffed again", odd)
	}
	backwards := make([]NotesPair, len(pairs))
	for i, p := range pairs {
		backwards[len(pairs)-1-i] = NotesPair{Old: p.New, New: p.Old}
	}
	checkDiffer(t, repo, backwards)
}

// A history of notes trees no tool would write, made at random: notes flat
// and in fanout subtrees of one and two levels in one directory, an object
// noted at two paths or at two names that differ in case, names in upper
// case, submodule entries at a note's path, files and directories that are
// no notes. Each pair of it, in the order made and at random, is diffed as
// DiffNotesMany diffs it.
func TestNotesDifferOddTrees(t *testing.T) {
	r := newRepo(t)
	objs := r.makeCommits(12)
	setEnv(t)
	rng := rand.New(rand.NewSource(7))
	steps := 60
	if testing.Short() {
		steps = 15
	}
	// A tree is a set of paths (directories by "/") to blobs or gitlinks.
	type entry struct {
		mode, hash string
	}
	tree := map[string]entry{}
	blob := func() string {
		return strings.TrimSpace(r.gitIn(fmt.Sprintf("note %d\n", rng.Intn(5)), "hash-object", "-w", "--stdin"))
	}
	pathOf := func(obj string, kind int) string {
		switch kind {
		case 1:
			return obj[:2] + "/" + obj[2:]
		case 2:
			return obj[:2] + "/" + obj[2:4] + "/" + obj[4:]
		case 3:
			return strings.ToUpper(obj)
		case 4:
			return strings.ToUpper(obj[:2]) + "/" + obj[2:]
		case 5:
			return obj[:3] + "/" + obj[3:] // no fanout: no note
		}
		return obj
	}
	var write func(prefix string) string
	write = func(prefix string) string {
		var lines []string
		subdirs := map[string]bool{}
		for p, e := range tree {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			if dir, _, sub := strings.Cut(rest, "/"); sub {
				subdirs[dir] = true
				continue
			}
			typ := "blob"
			if e.mode == "160000" {
				typ = "commit"
			}
			lines = append(lines, fmt.Sprintf("%s %s %s\t%s", e.mode, typ, e.hash, rest))
		}
		for dir := range subdirs {
			lines = append(lines, fmt.Sprintf("040000 tree %s\t%s", write(prefix+dir+"/"), dir))
		}
		sort.Strings(lines)
		return strings.TrimSpace(r.gitIn(strings.Join(lines, "\n")+"\n", "mktree"))
	}
	var commits []Hash
	var parent string
	for step := 0; step < steps; step++ {
		for k := rng.Intn(3); k >= 0; k-- {
			obj := objs[rng.Intn(len(objs))].String()
			p := pathOf(obj, rng.Intn(6))
			switch op := rng.Intn(10); {
			case op < 5:
				tree[p] = entry{"100644", blob()}
			case op < 7:
				delete(tree, p)
			case op == 7:
				tree[p] = entry{"160000", objs[rng.Intn(len(objs))].String()}
			case op == 8:
				tree["README"] = entry{"100644", blob()}
			default:
				// every note moved to one fanout, as git does when it
				// fans a tree out
				kind := rng.Intn(3)
				moved := map[string]entry{}
				for _, o := range objs {
					for k := 0; k < 5; k++ {
						if e, ok := tree[pathOf(o.String(), k)]; ok && e.mode != "160000" {
							moved[pathOf(o.String(), kind)] = e
							delete(tree, pathOf(o.String(), k))
						}
					}
				}
				for p, e := range moved {
					tree[p] = e
				}
			}
		}
		// mktree refuses a name that is both a file and a directory
		for p := range tree {
			for q := range tree {
				if strings.HasPrefix(q, p+"/") {
					delete(tree, p)
				}
			}
		}
		args := []string{"commit-tree", "-m", fmt.Sprint(step)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = strings.TrimSpace(r.git(append(args, write(""))...))
		commits = append(commits, mustHash(t, parent))
	}
	repo := r.open()
	at := func(h Hash) *Notes {
		n, err := repo.NotesAt(h)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var pairs []NotesPair
	for i := 1; i < len(commits); i++ {
		pairs = append(pairs, NotesPair{Old: at(commits[i-1]), New: at(commits[i])})
	}
	odd := checkDiffer(t, repo, pairs)
	if odd == 0 || odd == len(pairs) {
		t.Errorf("premise: %d of %d pairs diffed again; want some, not all", odd, len(pairs))
	}
	var random []NotesPair
	for range 40 {
		random = append(random, NotesPair{Old: at(commits[rng.Intn(len(commits))]), New: at(commits[rng.Intn(len(commits))])})
	}
	checkDiffer(t, repo, random)
}

// A tree git cannot read, in the middle of a batch: git diff-tree dies
// there, the differ ends it and diffs the batch as DiffNotesMany does,
// which fails on the same tree. An error, not a wait for git.
func TestNotesDifferGitFails(t *testing.T) {
	r := newRepo(t)
	objs := r.makeCommits(3)
	setEnv(t)
	var commits []Hash
	parent := ""
	for i, obj := range objs {
		blob := strings.TrimSpace(r.gitIn(fmt.Sprintf("note %d\n", i), "hash-object", "-w", "--stdin"))
		sub := strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", blob, obj.String()[2:]), "mktree"))
		root := strings.TrimSpace(r.gitIn(fmt.Sprintf("040000 tree %s\t%s\n", sub, obj.String()[:2]), "mktree"))
		args := []string{"commit-tree", "-m", "n"}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = strings.TrimSpace(r.git(append(args, root)...))
		commits = append(commits, mustHash(t, parent))
		if i == 1 {
			if err := os.Remove(filepath.Join(r.dir, ".git", "objects", sub[:2], sub[2:])); err != nil {
				t.Fatal(err)
			}
		}
	}
	repo := r.open()
	var pairs []NotesPair
	for i := 1; i < len(commits); i++ {
		old, err := repo.NotesAt(commits[i-1])
		if err != nil {
			t.Fatal(err)
		}
		now, err := repo.NotesAt(commits[i])
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, NotesPair{Old: old, New: now})
	}
	d := repo.NewNotesDiffer()
	defer d.Close()
	if _, err := d.Diff(pairs); err == nil {
		t.Fatal("a tree that is not here was diffed")
	}
	if !d.failed {
		t.Error("git diff-tree's failure was not seen")
	}
}

// parseRawFields is parseRaw as it was written first, with bytes.Fields
// and strings: what parseRaw must answer.
func parseRawFields(b []byte) (oldSide, newSide rawSide, err error) {
	f := bytes.Fields(bytes.TrimPrefix(b, []byte(":")))
	if len(f) != 5 {
		return oldSide, newSide, fmt.Errorf("unexpected git diff-tree output %q", b)
	}
	om, ok1 := parseMode(f[0])
	nm, ok2 := parseMode(f[1])
	oh, err1 := ParseHash(string(f[2]))
	nh, err2 := ParseHash(string(f[3]))
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return oldSide, newSide, fmt.Errorf("unexpected git diff-tree output %q", b)
	}
	return rawSide{om, oh}, rawSide{nm, nh}, nil
}

// FuzzParseRaw: a raw diff line reads as it did with bytes.Fields.
func FuzzParseRaw(f *testing.F) {
	f.Add(":040000 040000 ae46f0f51896fbf056170cace048385ca542d42c f6e71a9f9877e04226f3f1119ea4120882cbbfde M")
	f.Add(":000000 100644 0000000000000000000000000000000000000000 e6ef460b0f88199e30c91d7caf5f7766891fda4a A")
	f.Add(":100644 000000 E6EF460B0F88199E30C91D7CAF5F7766891FDA4A 0000000000000000000000000000000000000000 D")
	f.Add("040000  040000\tae46f0f51896fbf056170cace048385ca542d42c f6e71a9f9877e04226f3f1119ea4120882cbbfde M ")
	f.Add(":040000 040000 ae46f0f51896fbf056170cace048385ca542d42c f6e71a9f9877e04226f3f1119ea4120882cbbfde M x")
	f.Add(":040000 040000 ae46f0f51896fbf056170cace048385ca542d42 f6e71a9f9877e04226f3f1119ea4120882cbbfde M")
	f.Add(":08 0 0000000000000000000000000000000000000000 0000000000000000000000000000000000000000 M")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f }) {
			return // bytes.Fields splits at Unicode spaces too; git's lines are ASCII
		}
		o1, n1, err1 := parseRaw([]byte(s))
		o2, n2, err2 := parseRawFields([]byte(s))
		if (err1 == nil) != (err2 == nil) || o1 != o2 || n1 != n2 {
			t.Fatalf("parseRaw(%q) = %v %v %v; with bytes.Fields %v %v %v", s, o1, n1, err1, o2, n2, err2)
		}
	})
}
