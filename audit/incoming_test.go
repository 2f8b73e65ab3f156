package audit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// A remote's ledger that is behind this clone's brings nothing, even when
// a notes commit is dated after its children (a clock set wrong), which
// makes git rev-list list it as the remote's own: its notes were read as
// incoming and a line of them that is no record reported as a breach the
// remote brings, refusing the sync.
func TestCheckIncomingBehindWithAWrongClock(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x",
		"GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@x", "LC_ALL=C")
	git := func(extra []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(env[:len(env):len(env)], extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(nil, "init", "-q", "-b", "main")
	git(nil, "commit", "-q", "--allow-empty", "-m", "one")
	git(nil, "commit", "-q", "--allow-empty", "-m", "two")
	future := []string{"GIT_COMMITTER_DATE=2030-03-17T17:46:40Z"}
	// The remote's ledger: one notes commit from a clock years ahead, with
	// a damaged line on a commit.
	git(future, "notes", "--ref=evolve", "add", "-m", `{"v":1,"cycle":1,"result":"improved"`, "HEAD~1")
	theirs := git(nil, "rev-parse", "refs/notes/evolve")
	// This clone's: that, and the records added since (dated now), more
	// than git rev-list walks past the remote's before it stops.
	for i := 2; i <= 12; i++ {
		git(nil, "notes", "--ref=evolve", "append", "-m", fmt.Sprintf(`{"v":1,"id":"x%d","cycle":%d,"target":"t","result":"improved","timestamp":"2026-01-01T00:00:00Z"}`, i, i), "HEAD")
	}
	ours := git(nil, "rev-parse", "refs/notes/evolve")
	if listed := git(nil, "rev-list", theirs, "^"+ours); listed == "" {
		t.Skip("this git lists nothing of a ledger behind, whatever its dates: nothing to check here")
	}
	repo, err := gitstore.Open(filepath.Join(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	from, _ := gitstore.ParseHash(ours)
	to, _ := gitstore.ParseHash(theirs)
	found, err := CheckIncoming(repo, from, to)
	if err != nil || len(found) != 0 {
		t.Errorf("a remote ledger behind this one brings %v, %v; want nothing", found, err)
	}
}
