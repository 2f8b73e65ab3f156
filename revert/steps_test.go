package revert

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// stepsRepo is a repository with a start commit and a cycle's commit on
// it (code changed, a learning added), and the two commits.
func stepsRepo(t *testing.T) (dir string, repo *gitstore.Repo, start, head gitstore.Hash) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	git(t, "", "init", "-q", dir)
	write(t, dir, "a.txt", "one\ntwo\nthree\nfour\nfive\n")
	write(t, dir, ".agents/learnings.md", "before\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "start")
	write(t, dir, "a.txt", "one\nTWO\nthree\nfour\nfive\n")
	write(t, dir, ".agents/learnings.md", "before\nafter\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "cycle")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	start, _ = gitstore.ParseHash(git(t, dir, "rev-parse", "HEAD~"))
	head, _ = gitstore.ParseHash(git(t, dir, "rev-parse", "HEAD"))
	return dir, repo, start, head
}

// Save keeps the work as judged (a tree and the index given) or, with
// none given, the working tree as it is, as a commit on head that git
// stash apply --index puts back.
func TestSave(t *testing.T) {
	dir, repo, _, head := stepsRepo(t)
	write(t, dir, "a.txt", "uncommitted\n")
	write(t, dir, "new.txt", "untracked\n")
	saved, err := Save(repo, head, gitstore.ZeroHash, gitstore.ZeroHash, "the work\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "show", saved.String()+":a.txt"); got != "uncommitted" {
		t.Errorf("the save holds a.txt %q, want the working tree's", got)
	}
	if got := git(t, dir, "show", saved.String()+":new.txt"); got != "untracked" {
		t.Errorf("the save holds new.txt %q, want the working tree's", got)
	}
	if got := git(t, dir, "rev-parse", saved.String()+"^1"); got != head.String() {
		t.Errorf("the save is on %s, want %s", got, head)
	}
	// as judged: the trees given, not the working tree
	hc, err := repo.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	judged, err := Save(repo, head, hc.Tree, hc.Tree, "as judged\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "show", judged.String()+":a.txt"); got != "one\nTWO\nthree\nfour\nfive" {
		t.Errorf("the judged save holds a.txt %q, want the commit's", got)
	}
	if got := git(t, dir, "show", judged.String()+"^2:a.txt"); got != "one\nTWO\nthree\nfour\nfive" {
		t.Errorf("the judged save's index holds a.txt %q", got)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}

// Range commits, on head, the start's tree with the learnings as the work
// given has them, with git's identity.
func TestRange(t *testing.T) {
	dir, repo, start, head := stepsRepo(t)
	hc, err := repo.Commit(head)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := Range(repo, start, head, hc.Tree, "revert\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "diff", "--name-only", start.String(), commit.String()); got != ".agents/learnings.md" {
		t.Errorf("the revert differs from the start in %q, want the learnings alone", got)
	}
	if got := git(t, dir, "log", "-1", "--format=%P %an <%ae> %s", commit.String()); got != head.String()+" "+os.Getenv("GIT_AUTHOR_NAME")+" <"+os.Getenv("GIT_AUTHOR_EMAIL")+"> revert" {
		t.Errorf("the revert commit: %s", got)
	}
}

// Later undoes a range finished before, keeping the work since: merged
// three ways, or refused with the paths where they conflict.
func TestLater(t *testing.T) {
	dir, repo, start, head := stepsRepo(t)
	if tree, err := Later(repo, start, head, head); err != nil {
		t.Fatal(err)
	} else if want, _ := RangeTree(repo, start, head); tree != want {
		t.Errorf("on the range's end: %s, want the range tree %s", tree, want)
	}
	// later work on other lines stays
	write(t, dir, "a.txt", "one\nTWO\nthree\nfour\nFIVE\n")
	git(t, dir, "commit", "-qam", "later")
	onto, _ := gitstore.ParseHash(git(t, dir, "rev-parse", "HEAD"))
	tree, err := Later(repo, start, head, onto)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "show", tree.String()+":a.txt"); got != "one\ntwo\nthree\nfour\nFIVE" {
		t.Errorf("after a later revert a.txt is %q, want the range undone and the later work kept", got)
	}
	// later work on the same line conflicts
	write(t, dir, "a.txt", "one\nTWO!\nthree\nfour\nFIVE\n")
	git(t, dir, "commit", "-qam", "conflicting")
	onto, _ = gitstore.ParseHash(git(t, dir, "rev-parse", "HEAD"))
	var conflict *ConflictError
	if _, err := Later(repo, start, head, onto); !errors.As(err, &conflict) || strings.Join(conflict.Paths, ",") != "a.txt" {
		t.Errorf("a conflicting later revert: %v, want a conflict in a.txt", err)
	}
}
