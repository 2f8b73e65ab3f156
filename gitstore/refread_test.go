package gitstore

import (
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRefAsGit reads refs of every kind the files backend stores (loose,
// packed with peeled lines, loose over packed, symbolic chains, dangling,
// root refs, a linked worktree's own refs, a file in uppercase hex) and
// compares each with what git rev-parse answers; names git cannot store
// and paths that are directories are not refs.
func TestReadRefAsGit(t *testing.T) {
	testenv.Slow(t)
	r := newRepo(t)
	cs := r.makeCommits(3)
	r.git("update-ref", "refs/heads/over", cs[0].String())
	r.git("tag", "-a", "-m", "v1", "v1", cs[1].String())
	r.git("update-ref", "refs/notes/packed", cs[2].String())
	r.git("pack-refs", "--all")
	r.git("update-ref", "refs/heads/over", cs[2].String()) // loose over packed
	r.git("update-ref", testNotesRef, cs[0].String())
	r.git("symbolic-ref", "refs/notes/alias2", testNotesRef)
	r.git("symbolic-ref", "refs/notes/alias", "refs/notes/alias2")
	r.git("symbolic-ref", "refs/notes/dangling", "refs/notes/nowhere")
	// chains of four and five symbolic refs: git follows four
	for i, to := range []string{testNotesRef, "refs/notes/c1", "refs/notes/c2", "refs/notes/c3", "refs/notes/c4"} {
		r.git("symbolic-ref", fmt.Sprintf("refs/notes/c%d", i+1), to)
	}
	// a symbolic ref written as a link, as core.preferSymlinkRefs did
	if err := os.Symlink("refs/heads/main", filepath.Join(r.dir, ".git", "LINKED_HEAD")); err != nil {
		t.Fatal(err)
	}
	r.git("update-ref", "ORIG_HEAD", cs[1].String())
	upper := strings.ToUpper(cs[1].String()) + "\n"
	if err := os.WriteFile(filepath.Join(r.dir, ".git", "refs", "heads", "upper"), []byte(upper), 0o644); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "wtbranch", wt, cs[0].String())
	if _, err := runGitCmd(wt, "", nil, "update-ref", "refs/bisect/bad", cs[1].String()); err != nil {
		t.Fatal(err)
	}
	setEnv(t)

	names := []string{"HEAD", "ORIG_HEAD", "FETCH_HEAD", "refs/heads/main", "refs/heads/over", "refs/tags/v1", "refs/notes/packed",
		testNotesRef, "refs/notes/alias", "refs/notes/alias2", "refs/notes/dangling", "refs/heads/upper", "refs/heads/wtbranch",
		"refs/bisect/bad", "refs/notes/none", "refs/notes", "refs/notes/evolve/below", "refs/notes/c4", "LINKED_HEAD"}
	for _, dir := range []string{r.dir, wt} {
		repo := openDir(t, dir)
		for _, name := range names {
			out, gitErr := runGitCmd(dir, "", nil, "rev-parse", "--verify", "-q", name)
			h, ok, err := repo.RefHash(name)
			if err != nil {
				t.Errorf("%s: RefHash(%s): %v", filepath.Base(dir), name, err)
				continue
			}
			if ok != (gitErr == nil) || (ok && h.String() != strings.TrimSpace(out)) {
				t.Errorf("%s: RefHash(%s) = %s, %v; git says %q, %v", filepath.Base(dir), name, h, ok, strings.TrimSpace(out), gitErr)
			}
		}
	}
	repo := r.open()
	for _, name := range []string{"refs/heads/../heads/main", "refs/heads/main.lock", "refs/heads/.hidden", "refs/heads/main/", "refs/heads//main",
		"refs/heads/ma in", "refs/heads/m@{1}", "head", "Main/x", "main-worktree/HEAD", "", "../../etc/passwd"} {
		if h, ok, err := repo.RefHash(name); ok || err != nil {
			t.Errorf("RefHash(%q) = %s, %v, %v; want no ref", name, h, ok, err)
		}
	}
	// A loose file that holds no ref is an error, as git reports it.
	if err := os.WriteFile(filepath.Join(r.dir, ".git", "refs", "heads", "broken"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.RefHash("refs/heads/broken"); err == nil {
		t.Error("a broken loose ref read without an error")
	}
	// Past four symbolic refs in a row, git stops; so does this, saying
	// which ref was asked for.
	if _, _, err := repo.RefHash("refs/notes/c5"); err == nil || !strings.Contains(err.Error(), "refs/notes/c5") {
		t.Errorf("a chain of five symbolic refs: %v", err)
	}
	if _, err := r.gitErr("rev-parse", "--verify", "-q", "refs/notes/c5"); err == nil {
		t.Error("git resolves a chain of five symbolic refs: the test's premise is wrong")
	}
	// A loop of symbolic refs ends.
	r.git("symbolic-ref", "refs/notes/loop1", "refs/notes/loop2")
	r.git("symbolic-ref", "refs/notes/loop2", "refs/notes/loop1")
	if _, _, err := repo.RefHash("refs/notes/loop1"); err == nil {
		t.Error("a loop of symbolic refs read without an error")
	}
}

// HeadBranch is what git symbolic-ref -q HEAD prints: a branch, an unborn
// one, nothing when detached, a linked worktree's own.
func TestHeadBranchAsGit(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "side", wt, cs[0].String())
	setEnv(t)
	check := func(when, dir string) {
		t.Helper()
		out, _ := runGitCmd(dir, "", nil, "symbolic-ref", "-q", "HEAD")
		got, err := openDir(t, dir).HeadBranch()
		if err != nil || got != strings.TrimSpace(out) {
			t.Errorf("%s: HeadBranch = %q, %v; git says %q", when, got, err, strings.TrimSpace(out))
		}
	}
	check("a branch", r.dir)
	check("a linked worktree", wt)
	r.git("checkout", "-q", "--detach")
	check("detached", r.dir)
	r.git("checkout", "-q", "--orphan", "unborn")
	check("unborn", r.dir)
}
