package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func realPath(t *testing.T, p string) string {
	t.Helper()
	rp, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// checkDirs compares the directories Open found with the expected ones
// (workTree "" means none).
func checkDirs(t *testing.T, repo *Repo, gitDir, commonDir, workTree string, bare bool) {
	t.Helper()
	if got := realPath(t, repo.GitDir()); got != realPath(t, gitDir) {
		t.Errorf("GitDir = %s, want %s", got, gitDir)
	}
	if got := realPath(t, repo.CommonDir()); got != realPath(t, commonDir) {
		t.Errorf("CommonDir = %s, want %s", got, commonDir)
	}
	wt, err := repo.WorkTree()
	switch {
	case workTree == "" && !errors.Is(err, ErrNoWorkTree):
		t.Errorf("WorkTree = %q, %v; want ErrNoWorkTree", wt, err)
	case workTree != "" && err != nil:
		t.Errorf("WorkTree: %v", err)
	case workTree != "" && realPath(t, wt) != realPath(t, workTree):
		t.Errorf("WorkTree = %s, want %s", wt, workTree)
	}
	if repo.Bare() != bare {
		t.Errorf("Bare = %v, want %v", repo.Bare(), bare)
	}
}

func TestOpenFromSubdirectory(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(1)
	sub := filepath.Join(r.dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	setEnv(t)
	repo := openDir(t, sub)
	gitDir := filepath.Join(r.dir, ".git")
	checkDirs(t, repo, gitDir, gitDir, r.dir, false)
	if h, ok, err := repo.RefHash("HEAD"); err != nil || !ok || h != cs[0] {
		t.Errorf("RefHash(HEAD) = %s, %v, %v", h, ok, err)
	}
	// From inside the git directory there is no working tree.
	checkDirs(t, openDir(t, gitDir), gitDir, gitDir, "", false)
}

func TestOpenWithGitDirEnvironment(t *testing.T) {
	r := newRepo(t)
	r.makeCommits(1)
	sub := filepath.Join(r.dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	setEnv(t)
	t.Setenv("GIT_DIR", filepath.Join(r.dir, ".git"))
	t.Setenv("GIT_WORK_TREE", r.dir)
	gitDir := filepath.Join(r.dir, ".git")
	checkDirs(t, openDir(t, sub), gitDir, gitDir, r.dir, false)
	// Outside the named work tree git still finds the repository.
	repo := openDir(t, elsewhere)
	if realPath(t, repo.GitDir()) != realPath(t, gitDir) {
		t.Errorf("GitDir = %s, want %s", repo.GitDir(), gitDir)
	}
}

func TestOpenLinkedWorktree(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "side", wt, cs[0].String())
	setEnv(t)

	mainRepo := r.open()
	linked := openDir(t, wt)
	common := filepath.Join(r.dir, ".git")
	checkDirs(t, linked, filepath.Join(common, "worktrees", "wt"), common, wt, false)
	checkDirs(t, mainRepo, common, common, r.dir, false)
	if linked.GitDir() == linked.CommonDir() {
		t.Errorf("a linked worktree's GitDir equals its CommonDir (%s)", linked.GitDir())
	}
	// HEAD is per worktree.
	if h, _, err := linked.RefHash("HEAD"); err != nil || h != cs[0] {
		t.Errorf("worktree HEAD = %s, %v; want %s", h, err, cs[0])
	}
	if h, _, err := mainRepo.RefHash("HEAD"); err != nil || h != cs[1] {
		t.Errorf("main HEAD = %s, %v; want %s", h, err, cs[1])
	}

	// Notes written from the worktree are the repository's.
	s := mustWriteNotes(t, linked, testNotesRef, mustReadNotes(t, linked, testNotesRef), map[Hash]string{cs[0]: "from the worktree\n"}, nil)
	fromMain := mustReadNotes(t, mainRepo, testNotesRef)
	if fromMain.Commit() != s.Commit() {
		t.Fatalf("main sees the ledger at %s, the worktree wrote %s", fromMain.Commit(), s.Commit())
	}
	if bs, err := fromMain.Find(cs[0]); err != nil || len(bs) != 1 || blobText(t, mainRepo, bs[0]) != "from the worktree\n" {
		t.Errorf("main's Find = %v, %v", bs, err)
	}
	if got := r.noteShow(cs[0]); got != "from the worktree\n" {
		t.Errorf("git notes show in main = %q", got)
	}
	if _, err := os.Stat(filepath.Join(common, "refs", "notes", "evolve")); err != nil {
		t.Errorf("the ledger ref is not in the common dir: %v", err)
	}
	// And C git's notes written in the worktree are read from mainRepo.
	if _, err := runGitCmd(wt, "", nil, "notes", "--ref=evolve", "add", "-m", "git in wt", cs[1].String()); err != nil {
		t.Fatal(err)
	}
	got := singleNotes(t, walkNotes(t, mustReadNotes(t, mainRepo, testNotesRef)))
	if want := r.notesList("evolve"); len(want) != 2 || !sameMap(got, want) {
		t.Errorf("main's Walk differs from git notes list: %s", mapDiff(got, want))
	}
}

func TestOpenBare(t *testing.T) {
	r := newRepo(t, "--bare")
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	checkDirs(t, repo, r.dir, r.dir, "", true)
	if _, err := repo.WorkTree(); !errors.Is(err, ErrNoWorkTree) {
		t.Errorf("WorkTree of a bare repository = %v, want ErrNoWorkTree", err)
	}
	mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), map[Hash]string{cs[1]: "bare\n"}, nil)
	r.checkGitSees(map[Hash]string{cs[1]: "bare\n"})
	r.fsckClean()
}

func TestOpenOutsideRepository(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "not", "a", "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	setEnv(t)
	t.Setenv("GIT_CEILING_DIRECTORIES", top)
	repo, err := Open(dir)
	if !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open outside a repository = %v, %v; want ErrNotRepository", repo, err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("the error %q does not name the directory", err)
	}
}

func TestOpenWorktreeConfig(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	r.git("config", "core.repositoryformatversion", "1")
	r.git("config", "extensions.worktreeConfig", "true")
	r.git("config", "--worktree", "evolve.where", "worktree config")
	r.git("notes", "--ref=evolve", "add", "-m", "by git", cs[0].String())
	setEnv(t)
	repo := r.open()
	got := singleNotes(t, walkNotes(t, mustReadNotes(t, repo, testNotesRef)))
	if want := r.notesList("evolve"); len(want) != 1 || !sameMap(got, want) {
		t.Errorf("Walk differs from git notes list: %s", mapDiff(got, want))
	}
	if vals, err := repo.ConfigGetAll("evolve.where"); err != nil || len(vals) != 1 || vals[0] != "worktree config" {
		t.Errorf("ConfigGetAll of a worktree setting = %q, %v", vals, err)
	}
	mustWriteNotes(t, repo, testNotesRef, mustReadNotes(t, repo, testNotesRef), map[Hash]string{cs[1]: "by gitstore\n"}, nil)
	r.checkGitSees(map[Hash]string{cs[0]: "by git\n", cs[1]: "by gitstore\n"})
}

func TestOpenUnsupported(t *testing.T) {
	t.Run("reftable", func(t *testing.T) {
		r := newRepo(t)
		r.makeCommits(1)
		if err := os.Mkdir(filepath.Join(r.dir, ".git", "reftable"), 0o755); err != nil {
			t.Fatal(err)
		}
		setEnv(t)
		repo, err := Open(r.dir)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "reftable") {
			t.Errorf("Open of a reftable repository = %v, %v; want ErrUnsupported mentioning reftable", repo, err)
		}
	})
	t.Run("sha256", func(t *testing.T) {
		r := newRepo(t, "--object-format=sha256")
		setEnv(t)
		repo, err := Open(r.dir)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "sha256") {
			t.Errorf("Open of a sha256 repository = %v, %v; want ErrUnsupported mentioning sha256", repo, err)
		}
	})
}
