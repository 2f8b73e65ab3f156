package revert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(testenv.Git(t, dir, args...))
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The revert tree is the start tree, except .agents, which is as the cycle
// left it; C git reads it and sees exactly that.
func TestRangeTree(t *testing.T) {
	for _, kv := range os.Environ() { // a hook's GIT_DIR must not reach these tests
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "A",
		"GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com"} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	git(t, "", "init", "-q", dir)
	write(t, dir, "src/a.go", "package a // start\n")
	write(t, dir, "GOALS.yaml", "version: 1\n")
	write(t, dir, ".agents/evolve/learnings.md", "before\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "start")
	start := git(t, dir, "rev-parse", "HEAD")
	startTree := git(t, dir, "rev-parse", "HEAD^{tree}")

	// The cycle changes code, adds a file, edits goals and learns.
	write(t, dir, "src/a.go", "package a // broken\n")
	write(t, dir, "src/b.go", "package a\n")
	write(t, dir, "GOALS.yaml", "version: 2\n")
	write(t, dir, ".agents/evolve/learnings.md", "before\nafter: do not do that\n")
	write(t, dir, ".agents/new.md", "new\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "cycle")
	head := git(t, dir, "rev-parse", "HEAD")

	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	s, _ := gitstore.ParseHash(start)
	h, _ := gitstore.ParseHash(head)
	tree, err := RangeTree(repo, s, h)
	if err != nil {
		t.Fatal(err)
	}
	got := git(t, dir, "ls-tree", "-r", "--format=%(path) %(objectname)", tree.String())
	want := git(t, dir, "ls-tree", "-r", "--format=%(path) %(objectname)", startTree)
	wantAgents := git(t, dir, "ls-tree", "-r", "--format=%(path) %(objectname)", head, ".agents")
	var wantLines []string
	for _, l := range strings.Split(want, "\n") {
		if !strings.HasPrefix(l, ".agents/") {
			wantLines = append(wantLines, l)
		}
	}
	wantLines = append(wantLines, strings.Split(wantAgents, "\n")...)
	if g, w := sortedLines(got), sortedLines(strings.Join(wantLines, "\n")); g != w {
		t.Errorf("revert tree:\n%s\nwant:\n%s", g, w)
	}
	if out := git(t, dir, "diff", "--name-only", startTree, tree.String()); out != ".agents/evolve/learnings.md\n.agents/new.md" {
		t.Errorf("revert tree differs from the start in %q, want only .agents", out)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")

	// Without .agents at the end, the revert has none either.
	git(t, dir, "rm", "-rq", ".agents")
	git(t, dir, "commit", "-q", "-m", "forget")
	h2, _ := gitstore.ParseHash(git(t, dir, "rev-parse", "HEAD"))
	tree2, err := RangeTree(repo, s, h2)
	if err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "ls-tree", "--name-only", tree2.String()); strings.Contains(out, ".agents") {
		t.Errorf("revert tree keeps .agents that the cycle removed: %s", out)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n")
}
