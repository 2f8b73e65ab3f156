package loop

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// The run's hold is seen by every asker; removing or replacing run.lock
// does not release it where the hold is a socket (Linux); the driver's
// check after the agent's turn makes and locks run.lock again and says so;
// the hold goes when the holder lets it go.
func TestRunHold(t *testing.T) {
	gitDir := t.TempDir()
	if owns, err := RunOwns(gitDir); err != nil || owns {
		t.Fatalf("RunOwns before any hold = %v, %v; want false", owns, err)
	}
	h, warning, err := takeHold(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	if warning != "" {
		t.Logf("warning: %s", warning)
	}
	if owns, err := RunOwns(gitDir); err != nil || !owns {
		t.Fatalf("RunOwns while held = %v, %v; want true", owns, err)
	}
	if mark, err := h.check(); err != nil || mark != "" {
		t.Errorf("check of an intact hold = %q, %v; want nothing", mark, err)
	}
	if err := os.Remove(runLock(gitDir)); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && warning == "" {
		if owns, err := RunOwns(gitDir); err != nil || !owns {
			t.Errorf("RunOwns with run.lock deleted = %v, %v; want true (the socket holds)", owns, err)
		}
		var re *RunError
		if _, _, err := takeHold(gitDir); !errors.As(err, &re) {
			t.Errorf("a second hold with run.lock deleted: %v; want refused", err)
		}
		os.Remove(runLock(gitDir)) // the refused hold made the file again
	}
	mark, err := h.check()
	if err != nil || mark != "run.lock: deleted during the agent's turn; the driver made it again" {
		t.Errorf("check with run.lock deleted = %q, %v", mark, err)
	}
	if owns, err := RunOwns(gitDir); err != nil || !owns {
		t.Errorf("RunOwns once checked = %v, %v; want true", owns, err)
	}
	// Replaced by another file: made and locked again.
	if err := os.Remove(runLock(gitDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runLock(gitDir), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark, err = h.check()
	if err != nil || mark != "run.lock: replaced during the agent's turn; the driver made it again" {
		t.Errorf("check with run.lock replaced = %q, %v", mark, err)
	}
	if intact, err := h.lock.Intact(); err != nil || !intact {
		t.Errorf("the lock after the check: intact %v, %v", intact, err)
	}
	h.release()
	if owns, err := RunOwns(gitDir); err != nil || owns {
		t.Errorf("RunOwns once released = %v, %v; want false", owns, err)
	}
	h2, _, err := takeHold(gitDir)
	if err != nil {
		t.Fatalf("a hold after the first was released: %v", err)
	}
	h2.release()
}

// Many asking at once, with no run and with one, get the same answer: the
// question takes nothing (a probe that bound the socket's name would make
// one asker see another as the run).
func TestRunOwnsAskedAtOnce(t *testing.T) {
	gitDir := t.TempDir()
	ask := func(want bool) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wrong := 0
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 100; i++ {
					owns, err := RunOwns(gitDir)
					if err != nil {
						t.Error(err)
						return
					}
					if owns != want {
						mu.Lock()
						wrong++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if wrong > 0 {
			t.Errorf("%d of 1600 asks said %v", wrong, !want)
		}
	}
	ask(false)
	h, _, err := takeHold(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	ask(true)
	h.release()
	ask(false)
}

// The socket's name is the git directory's, however the directory is
// named: a symbolic link to it names the same hold.
func TestHoldNameResolvesLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if holdName(real) != holdName(link) || holdName(real) != holdName(real+"/.") {
		t.Errorf("holdName differs: %s, %s", holdName(real), holdName(link))
	}
	if holdName(real) == holdName(dir) {
		t.Errorf("two directories share the name %s", holdName(dir))
	}
}

// The refusals of commands run while a run holds the worktree reach its
// driver through the hold too (Linux): deleting run-refused.jsonl does not
// hide them, and one noted both ways is named once.
func TestRefusalsReachTheHold(t *testing.T) {
	gitDir := t.TempDir()
	h, warning, err := takeHold(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.release()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, what := range []string{"git evolve trust", "git evolve trust", "git evolve record"} {
		if err := NoteRefused(gitDir, what, at); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"git evolve trust: refused, run at 2026-01-02T03:04:05Z while the driver owned the worktree",
		"git evolve trust: refused, run at 2026-01-02T03:04:05Z while the driver owned the worktree",
		"git evolve record: refused, run at 2026-01-02T03:04:05Z while the driver owned the worktree",
	}
	marks, err := takeRefused(gitDir, h.received())
	if err != nil || !slices.Equal(marks, want) {
		t.Errorf("takeRefused = %q, %v; want %q", marks, err, want)
	}
	if runtime.GOOS != "linux" || warning != "" {
		return
	}
	for _, what := range []string{"git evolve trust", "git evolve record"} {
		if err := NoteRefused(gitDir, what, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(refusedPath(gitDir)); err != nil {
		t.Fatal(err)
	}
	marks, err = takeRefused(gitDir, h.received())
	if err != nil || !slices.Equal(marks, []string{want[0], want[2]}) {
		t.Errorf("takeRefused with run-refused.jsonl deleted = %q, %v", marks, err)
	}
	if marks, err := takeRefused(gitDir, h.received()); err != nil || len(marks) != 0 {
		t.Errorf("takeRefused again = %q, %v; want none", marks, err)
	}
}
