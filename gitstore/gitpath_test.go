package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The hooks directory GitPath gives without running git is the one git
// rev-parse --git-path gives: in a repository, a linked worktree, a bare
// repository and a subdirectory, and, through git, wherever core.hooksPath
// is set (absolute, relative, empty).
func TestGitPathHooksAsGit(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.makeCommits(1)
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "--detach", wt)
	sub := filepath.Join(r.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := newRepo(t, "--bare")
	check := func(what, dir string) {
		t.Helper()
		want, werr := runGitCmd(dir, "", nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
		got, err := openDir(t, dir).GitPath("hooks")
		if werr != nil || err != nil {
			if werr == nil || err == nil {
				t.Errorf("%s: GitPath(hooks) = %q, %v; git says %q, %v", what, got, err, want, werr)
			}
			return
		}
		if got != strings.TrimSpace(want) {
			t.Errorf("%s: GitPath(hooks) = %q, git says %q", what, got, strings.TrimSpace(want))
		}
	}
	for _, where := range []struct{ what, dir string }{{"repository", r.dir}, {"worktree", wt}, {"subdirectory", sub}, {"bare", bare.dir}} {
		check(where.what, where.dir)
	}
	for _, hooksPath := range []string{filepath.Join(t.TempDir(), "hooks"), "my-hooks", "../elsewhere", ""} {
		r.git("config", "core.hooksPath", hooksPath)
		for _, where := range []struct{ what, dir string }{{"repository", r.dir}, {"worktree", wt}, {"subdirectory", sub}} {
			check(where.what+" with core.hooksPath="+hooksPath, where.dir)
		}
	}
	// GIT_DIR and GIT_WORK_TREE given relative, from the subdirectory
	r.git("config", "core.hooksPath", "my-hooks")
	want, err := runGitCmd(sub, "", gitEnv("GIT_DIR=../.git", "GIT_WORK_TREE=.."), "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", "../.git")
	t.Setenv("GIT_WORK_TREE", "..")
	if got, err := openDir(t, sub).GitPath("hooks"); err != nil || got != strings.TrimSpace(want) {
		t.Errorf("with GIT_DIR and GIT_WORK_TREE relative: GitPath(hooks) = %q, %v; git says %q", got, err, strings.TrimSpace(want))
	}
}

// Remotes asks git once a process; a remote added through the Repo's own
// config writes is listed after.
func TestRemotesAfterAConfigWrite(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	repo := r.open()
	if got, err := repo.Remotes(); err != nil || len(got) != 0 {
		t.Fatalf("Remotes() = %v, %v; want none", got, err)
	}
	if err := repo.ConfigSet("remote.up.url", "../up.git"); err != nil {
		t.Fatal(err)
	}
	got, err := repo.Remotes()
	if err != nil || !slices.Equal(got, []string{"up"}) {
		t.Fatalf("Remotes() after the remote was added = %v, %v; want [up]", got, err)
	}
	got[0] = "changed"
	if again, _ := repo.Remotes(); !slices.Equal(again, []string{"up"}) {
		t.Fatalf("a caller's change to the list changed the next answer: %v", again)
	}
}
