package gitstore

import (
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// discoverNative either leaves a repository to git rev-parse or finds
// exactly what git rev-parse finds.
func TestDiscoverNativeAgreesWithGit(t *testing.T) {
	testenv.Slow(t)
	setEnv(t)
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	g := func(dir string, args ...string) string {
		t.Helper()
		out, err := runGitCmd(dir, "", nil, args...)
		if err != nil {
			t.Fatalf("git %v in %s: %v", args, dir, err)
		}
		return strings.TrimSpace(out)
	}
	main := filepath.Join(root, "main")
	g(root, "init", "-q", main)
	g(main, "commit", "-q", "--allow-empty", "-m", "one")
	deep := filepath.Join(main, "a", "b", "c")
	os.MkdirAll(deep, 0o755)
	g(main, "worktree", "add", "-q", filepath.Join(root, "wt"), "-b", "side")
	os.MkdirAll(filepath.Join(root, "wt", "sub"), 0o755)
	sep := filepath.Join(root, "sep")
	g(root, "init", "-q", "--separate-git-dir", filepath.Join(root, "sep.git"), sep)
	ext := filepath.Join(root, "ext")
	g(root, "init", "-q", ext)
	g(ext, "config", "extensions.worktreeConfig", "true")
	inner := filepath.Join(main, "a", "inner")
	g(root, "init", "-q", inner)
	os.Symlink(main, filepath.Join(root, "link"))

	bare := filepath.Join(root, "bare.git")
	g(root, "init", "-q", "--bare", bare)
	cwt := filepath.Join(root, "cwt")
	g(root, "init", "-q", cwt)
	g(cwt, "config", "core.worktree", root)
	isBare := filepath.Join(root, "isbare")
	g(root, "init", "-q", isBare)
	g(isBare, "config", "core.bare", "true")
	inc := filepath.Join(root, "inc")
	g(root, "init", "-q", inc)
	g(inc, "config", "include.path", "../extra")
	sha256 := filepath.Join(root, "sha256")
	g(root, "init", "-q", "--object-format=sha256", sha256)
	// A repository inside another whose HEAD is broken: git skips it and
	// finds the outer one.
	broken := filepath.Join(main, "a", "broken")
	g(root, "init", "-q", broken)
	os.WriteFile(filepath.Join(broken, ".git", "HEAD"), []byte("garbage\n"), 0o644)

	agree := []string{main, deep, filepath.Join(root, "wt"), filepath.Join(root, "wt", "sub"), sep, ext, inner,
		filepath.Join(root, "link", "a")}
	for _, dir := range agree {
		d, ok := discoverNative(dir)
		if !ok {
			t.Errorf("%s: left to git; want it found natively", dir)
			continue
		}
		lines := strings.Split(g(dir, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel"), "\n")
		if d.gitDir != lines[0] || d.commonDir != lines[1] || d.workTree != lines[2] {
			t.Errorf("%s: native %q %q %q, git %q", dir, d.gitDir, d.commonDir, d.workTree, lines)
		}
	}
	leave := []string{filepath.Join(main, ".git"), filepath.Join(main, ".git", "refs"), bare, cwt, isBare, inc, sha256, root, broken}
	for _, dir := range leave {
		if d, ok := discoverNative(dir); ok {
			t.Errorf("%s: found natively (%+v); want it left to git rev-parse", dir, d)
		}
	}
	// Open agrees with git on the broken one too: it is the outer repository.
	repo, err := Open(broken)
	if err != nil {
		t.Fatal(err)
	}
	if repo.GitDir() != filepath.Join(main, ".git") {
		t.Errorf("Open(%s) found %s, git finds %s", broken, repo.GitDir(), filepath.Join(main, ".git"))
	}
	repo.Close()
	t.Setenv("GIT_DIR", filepath.Join(main, ".git"))
	if _, ok := discoverNative(deep); ok {
		t.Error("with GIT_DIR set: found natively; want it left to git rev-parse")
	}
}
