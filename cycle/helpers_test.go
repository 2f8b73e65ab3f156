package cycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
)

// testRepo makes a repository with n commits, with git configured from the
// environment of the test only.
func testRepo(t *testing.T, n int) (dir string, commits []string) {
	t.Helper()
	scrubGitEnv(t)
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C",
		"GIT_COMMITTER_EMAIL": "c@example.com", "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
		"GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"} {
		t.Setenv(k, v)
	}
	dir = filepath.Join(t.TempDir(), "repo")
	git(t, "", "init", "-q", dir)
	for i := 0; i < n; i++ {
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "c"+strings.Repeat("i", i%3)+string(rune('a'+i%26)))
	}
	commits = strings.Fields(git(t, dir, "rev-list", "--reverse", "HEAD"))
	return dir, commits
}

// scrubGitEnv removes the GIT_* variables the test inherited (a hook sets
// GIT_DIR, for one), so that tests never touch another repository.
func scrubGitEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, args...)
}

func openLedger(t *testing.T, dir string) *Ledger {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return Open(repo, func() time.Time { return now })
}
