// Package testenv gives a package's tests a git of their own, the same on
// a developer's machine, a new laptop and a CI runner: HOME and
// XDG_CONFIG_HOME in a temporary directory (no one's ~/.gitconfig: the
// only global config is GlobalConfig), no system config, no GIT_* variable
// from outside, and a committer and author identity. Go's caches and
// rustup's and cargo's homes stay where they were, so that a test that
// runs go or cargo finds them. Only tests import it.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Identity is the author and committer the tests' git uses unless a test
// names another.
const (
	Name  = "Test Person"
	Email = "test@example.com"
)

// GlobalConfig is the tests' ~/.gitconfig: git's automatic maintenance
// off, which would otherwise start after every commit a test makes (a
// process each time; no test is about it, and a test that runs
// git gc or git maintenance itself still can).
const GlobalConfig = "[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n"

// Main runs the package's tests (m) in the environment Set makes, in a
// temporary HOME removed afterwards; it returns the exit code.
func Main(m *testing.M) int {
	home, err := os.MkdirTemp("", "git-evolve-test-home-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	if err := Set(home); err != nil {
		panic(err)
	}
	return m.Run()
}

// Set makes this process's environment, and so that of every git it
// starts, a hermetic one with home as HOME.
func Set(home string) error {
	// Go's caches where go would find them with the HOME it had.
	if os.Getenv("GOCACHE") == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(dir, "go-build"))
		}
	}
	// Go's module cache, rustup's toolchains and cargo's registry where
	// the HOME it had keeps them.
	if old, err := os.UserHomeDir(); err == nil {
		for k, dir := range map[string]string{"GOPATH": "go", "RUSTUP_HOME": ".rustup", "CARGO_HOME": ".cargo"} {
			if os.Getenv(k) != "" {
				continue
			}
			if fi, err := os.Stat(filepath.Join(old, dir)); err == nil && fi.IsDir() || k == "GOPATH" {
				os.Setenv(k, filepath.Join(old, dir))
			}
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			os.Unsetenv(k)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(GlobalConfig), 0o644); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     Name,
		"GIT_AUTHOR_EMAIL":    Email,
		"GIT_COMMITTER_NAME":  Name,
		"GIT_COMMITTER_EMAIL": Email,
	} {
		os.Setenv(k, v)
	}
	return nil
}

// Slow skips a test that takes seconds with -short: go test -short ./...
// is the inner loop's suite, the rest runs in full.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: left out by -short")
	}
}

// Git runs git in dir with the tests' environment and returns what it
// printed (stdout and stderr, as a failing test shows them); a git that
// fails fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TreeEdited is the tree tree (a name git reads; "" for the empty tree)
// of the repository in dir with name added as the empty blob, or taken
// out (add false), in its directory at path, each directory on the way
// made when missing (only to add), written by git mktree, which writes
// whatever it is given: a tree another writer could push.
func TreeEdited(t testing.TB, dir, tree string, path []string, name string, add bool) string {
	t.Helper()
	var lines []string
	found := false
	if tree != "" {
		for _, l := range strings.Split(strings.TrimRight(Git(t, dir, "ls-tree", tree), "\n"), "\n") {
			if l == "" {
				continue
			}
			entry := l[strings.IndexByte(l, '\t')+1:]
			switch {
			case len(path) > 0 && entry == path[0]:
				l = "040000 tree " + TreeEdited(t, dir, strings.Fields(l)[2], path[1:], name, add) + "\t" + entry
				found = true
			case len(path) == 0 && entry == name:
				continue
			}
			lines = append(lines, l)
		}
	}
	if len(path) > 0 && !found && add {
		lines = append(lines, "040000 tree "+TreeEdited(t, dir, "", path[1:], name, add)+"\t"+path[0])
	}
	if len(path) == 0 && add {
		lines = append(lines, "100644 blob "+GitIn(t, dir, "", "hash-object", "-w", "--stdin")+"\t"+name)
	}
	return GitIn(t, dir, strings.Join(lines, "\n")+"\n", "mktree")
}

// GitIn runs git in dir with stdin, returning what it printed, trimmed.
func GitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
