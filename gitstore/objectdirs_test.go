package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ObjectDirs follows the alternates as git does: relative to the directory
// that names them, comments and blank lines passed by, each directory
// once, with GIT_ALTERNATE_OBJECT_DIRECTORIES's; LooseObjects lists what
// git lists as loose objects in them, PackNames the packs whose index is
// there.
func TestObjectDirs(t *testing.T) {
	tr := newRepo(t)
	commits := tr.makeCommits(2)
	repo := tr.open()
	objects := filepath.Join(tr.dir, ".git", "objects")
	lender, second, extra := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(objects, "info", "alternates"), "# borrowed\n\n"+lender+"\n"+lender+"/\n")
	rel, err := filepath.Rel(lender, second)
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(lender, "info", "alternates"), rel+"\n")
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", extra)
	want := []string{filepath.Clean(objects), extra, filepath.Clean(lender), filepath.Clean(second)}
	if got := repo.ObjectDirs(); !slices.Equal(got, want) {
		t.Errorf("object directories %q, want %q", got, want)
	}

	// loose objects: what git counts, and no file of another name
	write(filepath.Join(objects, "ab", "not-an-object"), "x")
	write(filepath.Join(objects, "zz", strings.Repeat("0", 38)), "x")
	loose, ok := LooseObjects(repo.ObjectDirs())
	if !ok || !slices.Contains(loose, commits[0]) || !slices.Contains(loose, commits[1]) {
		t.Fatalf("loose objects %v (%v), want both commits among them", loose, ok)
	}
	count := strings.TrimSpace(tr.git("count-objects"))
	if n, _, _ := strings.Cut(count, " "); n != strconv.Itoa(len(loose)) {
		t.Errorf("%d loose objects listed, git counts %q", len(loose), count)
	}
	if !LooseHere(repo.ObjectDirs(), commits[1]) {
		t.Error("a loose commit is not here")
	}

	// packs: those with their index
	tr.git("repack", "-q", "-d")
	packs := PackNames(repo.ObjectDirs())
	if len(packs) != 1 || !strings.HasPrefix(packs[0], "pack-") || !strings.HasSuffix(packs[0], ".pack") {
		t.Fatalf("packs %q, want the one repack made", packs)
	}
	if LooseHere(repo.ObjectDirs(), commits[1]) {
		t.Error("a packed commit is still taken for loose")
	}
	idx := filepath.Join(objects, "pack", strings.TrimSuffix(packs[0], ".pack")+".idx")
	if err := os.Rename(idx, idx+".gone"); err != nil {
		t.Fatal(err)
	}
	if packs := PackNames(repo.ObjectDirs()); len(packs) != 0 {
		t.Errorf("a pack whose index is gone is listed: %q", packs)
	}
}
