package cycle

import (
	"errors"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

func writeFile(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func revParse(t *testing.T, dir, rev string) string {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "rev-parse", rev))
}

// abortedCycle opens a cycle in a repository with keep.txt and a
// .gitignore, lets work happen, and aborts it: it returns the cycle and the
// save.
func abortedCycle(t *testing.T, work func(dir string)) (string, *Ledger, *OpenCycle, gitstore.Hash) {
	t.Helper()
	dir, _ := testRepo(t, 1)
	git(t, dir, "checkout", "-q", "-B", "main")
	writeFile(t, dir, "keep.txt", "base\n")
	writeFile(t, dir, ".gitignore", "*.log\n")
	git(t, dir, "add", "keep.txt", ".gitignore")
	git(t, dir, "commit", "-q", "-m", "base")
	l := openLedger(t, dir)
	c, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	work(dir)
	_, saved, err := l.AbortCycle("the agent exited 1", AbortNotes{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, l, c, saved
}

// TestRestoreStart: the branch goes back to the cycle's start, the index
// and the working tree to its tree, .agents/** stays as the cycle left it
// (uncommitted), ignored files stay, and the saved work keeps the rest;
// running it again changes nothing.
func TestRestoreStart(t *testing.T) {
	testenv.Slow(t)
	dir, l, c, saved := abortedCycle(t, func(dir string) {
		writeFile(t, dir, "crash.txt", "committed\n")
		git(t, dir, "add", "crash.txt")
		git(t, dir, "commit", "-q", "-m", "half done")
		writeFile(t, dir, "half.txt", "uncommitted\n")
		writeFile(t, dir, "keep.txt", "edited\n")
		writeFile(t, dir, ".agents/learned.md", "a lesson\n")
		writeFile(t, dir, "build.log", "cache\n")
	})
	got, err := l.RestoreStart(c, saved)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != c.Start || revParse(t, dir, "HEAD") != c.Start {
		t.Fatalf("HEAD %s (said %s), want the start %s", revParse(t, dir, "HEAD"), got, c.Start)
	}
	if st := git(t, dir, "status", "--porcelain", "--ignored"); st != "?? .agents/\n!! build.log\n" {
		t.Errorf("status after the restore: %q, want only .agents/ untracked and the ignored build.log", st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "keep.txt")); string(b) != "base\n" {
		t.Errorf("keep.txt is %q, want the start's", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".agents/learned.md")); string(b) != "a lesson\n" {
		t.Errorf(".agents/learned.md is %q, want the cycle's", b)
	}
	for _, f := range []string{"crash.txt", "half.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still in the working tree", f)
		}
		if git(t, dir, "show", saved.String()+":"+f) == "" {
			t.Errorf("the saved work lacks %s", f)
		}
	}
	if revParse(t, dir, SavedRef(c.ID)) != saved.String() {
		t.Errorf("the saved ref moved though the working tree was as saved")
	}
	again, err := l.RestoreStart(c, saved)
	if err != nil || again.String() != c.Start {
		t.Errorf("again: %s, %v", again, err)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "?? .agents/\n" {
		t.Errorf("status after a second restore: %q", st)
	}
}

// TestRestoreStartSavesLaterWork: what was written after the abort is saved
// again (on top of the save) before the working tree is brought back.
func TestRestoreStartSavesLaterWork(t *testing.T) {
	dir, l, c, saved := abortedCycle(t, func(dir string) {
		writeFile(t, dir, "keep.txt", "agent\n")
	})
	writeFile(t, dir, "keep.txt", "precious\n")
	if _, err := l.RestoreStart(c, saved); err != nil {
		t.Fatal(err)
	}
	ref := revParse(t, dir, SavedRef(c.ID))
	if ref == saved.String() || revParse(t, dir, ref+"^") != saved.String() {
		t.Fatalf("the saved ref is %s; want a save on top of %s", ref, saved)
	}
	if got := git(t, dir, "show", ref+":keep.txt"); got != "precious\n" {
		t.Errorf("the second save holds keep.txt %q, want the later work", got)
	}
}

// TestRestoreStartAfterReset: an agent that reset the branch below the
// start has it set back to the start; the commits it dropped are there.
func TestRestoreStartAfterReset(t *testing.T) {
	dir, l, c, saved := abortedCycle(t, func(dir string) {
		git(t, dir, "reset", "-q", "--hard", "HEAD~1")
	})
	if _, err := l.RestoreStart(c, saved); err != nil {
		t.Fatal(err)
	}
	if revParse(t, dir, "HEAD") != c.Start {
		t.Errorf("HEAD %s, want the start %s", revParse(t, dir, "HEAD"), c.Start)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status: %q", st)
	}
}

// TestRestoreStartRefusals: another branch, a merge in progress, and a HEAD
// that moved since are refused, and nothing is touched.
func TestRestoreStartRefusals(t *testing.T) {
	dir, l, c, saved := abortedCycle(t, func(dir string) {
		git(t, dir, "checkout", "-q", "-b", "elsewhere")
		writeFile(t, dir, "x.txt", "x\n")
	})
	var rf *Refusal
	if _, err := l.RestoreStart(c, saved); !errors.As(err, &rf) || !strings.Contains(rf.Msg, "left HEAD on elsewhere") {
		t.Fatalf("another branch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err != nil {
		t.Error("the refused restore touched the working tree")
	}
	git(t, dir, "checkout", "-q", "main")
	writeFile(t, dir, "y.txt", "y\n")
	git(t, dir, "add", "y.txt")
	git(t, dir, "commit", "-q", "-m", "someone else")
	if _, err := l.RestoreStart(c, saved); !errors.Is(err, ErrMovedAfterAbort) {
		t.Fatalf("HEAD moved since: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "y.txt")); err != nil {
		t.Error("the refused restore touched the working tree")
	}
	os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte(c.Start+"\n"), 0o644)
	if _, err := l.RestoreStart(c, saved); !errors.As(err, &rf) || !strings.Contains(rf.Msg, "a merge in progress") {
		t.Fatalf("a merge in progress: %v", err)
	}
}
