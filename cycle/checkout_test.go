package cycle

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTidy: a configuration file planted in git-evolve's directories above
// a checkout (which tools looking up the tree would read) is removed; the
// checkouts, their locks and other repositories' directories stay.
func TestTidy(t *testing.T) {
	top := filepath.Join(t.TempDir(), "git-evolve")
	judge := filepath.Join(top, "judge")
	dir := filepath.Join(judge, "0123abcd")
	other := filepath.Join(judge, "fedc4321", "repo")
	for _, d := range []string{filepath.Join(dir, "repo", "src"), other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	planted := []string{filepath.Join(top, "pytest.ini"), filepath.Join(judge, "go.work"), filepath.Join(dir, "conftest.py"), filepath.Join(dir, "stray", "x")}
	kept := []string{filepath.Join(dir, "repo.lock"), filepath.Join(dir, "repo", "src", "a.go"), filepath.Join(other, "b.go")}
	for _, p := range append(planted, kept...) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tidy(top, judge, dir, "repo")
	for _, p := range planted {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
}

// TestSweepJudged: a checkout whose git directory is gone is removed, one
// whose is there stays.
func TestSweepJudged(t *testing.T) {
	judge := t.TempDir()
	live := t.TempDir()
	write := func(p, text string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(judge, "aaaa", "repo", ".git"), "gitdir: "+live+"\n")
	write(filepath.Join(judge, "bbbb", "repo", ".git"), "gitdir: "+filepath.Join(live, "gone", "worktrees", "repo")+"\n")
	write(filepath.Join(judge, "cccc", "repo", "notes.txt"), "no .git file: not a checkout")
	sweepJudged(judge)
	for name, want := range map[string]bool{"aaaa": true, "bbbb": false, "cccc": true} {
		_, err := os.Stat(filepath.Join(judge, name))
		if got := err == nil; got != want {
			t.Errorf("%s there: %v, want %v", name, got, want)
		}
	}
}
