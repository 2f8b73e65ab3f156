package cycle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestRestoreStart: an aborted cycle's committed and uncommitted work is
// reverted in one commit (its .agents/** kept), the tree is clean after,
// the saved work keeps everything, and running it again changes nothing.
func TestRestoreStart(t *testing.T) {
	dir, _ := testRepo(t, 1)
	writeFile(t, dir, "keep.txt", "base\n")
	writeFile(t, dir, ".gitignore", "*.log\n")
	git(t, dir, "add", "keep.txt", ".gitignore")
	git(t, dir, "commit", "-q", "-m", "base")
	l := openLedger(t, dir)
	c, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "crash.txt", "committed\n")
	git(t, dir, "add", "crash.txt")
	git(t, dir, "commit", "-q", "-m", "half done")
	head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	writeFile(t, dir, "half.txt", "uncommitted\n")
	writeFile(t, dir, "keep.txt", "edited\n")
	writeFile(t, dir, ".agents/learned.md", "a lesson\n")
	writeFile(t, dir, "more.txt", "more\n")
	git(t, dir, "add", "more.txt")
	git(t, dir, "commit", "-q", "-m", "more")
	head = strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	writeFile(t, dir, "build.log", "cache\n")
	_, saved, err := l.AbortCycle("the agent exited 1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.RestoreStart(c, saved)
	if err != nil {
		t.Fatal(err)
	}
	if parent := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^")); parent != head {
		t.Fatalf("the revert's parent is %s, want the HEAD the abort found %s", parent, head)
	}
	if cur := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")); cur != got.String() {
		t.Fatalf("HEAD %s, RestoreStart said %s", cur, got)
	}
	if diff := git(t, dir, "diff", "--name-only", c.Start, "HEAD"); strings.TrimSpace(diff) != ".agents/learned.md" {
		t.Errorf("the revert differs from the start in %q, want only .agents/learned.md", diff)
	}
	if st := git(t, dir, "status", "--porcelain", "--ignored"); strings.TrimSpace(st) != "!! build.log" {
		t.Errorf("status after the restore: %q, want only the ignored build.log", st)
	}
	msg := git(t, dir, "log", "-1", "--format=%B")
	for _, want := range []string{"aborted, its work reverted", "Evolve-Id: " + c.ID, "Evolve-Reverts: " + c.Start + ".." + head} {
		if !strings.Contains(msg, want) {
			t.Errorf("the revert's message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Evolve-Result") {
		t.Errorf("the revert claims a result:\n%s", msg)
	}
	for _, f := range []string{"crash.txt", "half.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still in the working tree", f)
		}
		if out := git(t, dir, "show", saved.String()+":"+f); out == "" {
			t.Errorf("the saved work lacks %s", f)
		}
	}
	// Again (a run that resumes): HEAD stays.
	again, err := l.RestoreStart(c, saved)
	if err != nil || again != got {
		t.Errorf("again: %s, %v; want %s", again, err, got)
	}
	// HEAD moved elsewhere: refused, nothing touched.
	writeFile(t, dir, "other.txt", "x\n")
	git(t, dir, "add", "other.txt")
	git(t, dir, "commit", "-q", "-m", "someone else")
	if _, err := l.RestoreStart(c, saved); err == nil {
		t.Error("a HEAD that moved elsewhere was restored over")
	}
	if _, err := os.Stat(filepath.Join(dir, "other.txt")); err != nil {
		t.Error("the refused restore touched the working tree")
	}
}

// TestRestoreStartUncommittedOnly: with no commit made and nothing under
// .agents/, the working tree is reset to HEAD and nothing is committed.
func TestRestoreStartUncommittedOnly(t *testing.T) {
	dir, _ := testRepo(t, 2)
	l := openLedger(t, dir)
	c, err := l.StartCycle(StartOptions{Target: "t", Era: "goals-x", GoalsFile: []byte("version: 3\n")})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "half.txt", "uncommitted\n")
	git(t, dir, "add", "half.txt")
	_, saved, err := l.AbortCycle("")
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.RestoreStart(c, saved)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != c.Start {
		t.Errorf("HEAD %s, want the start %s (nothing to commit)", got, c.Start)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after the restore: %q", st)
	}
}
