package loop

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
)

// runLock is the lock git evolve run holds while it drives a worktree.
func runLock(gitDir string) string { return filepath.Join(gitDir, "evolve", "run.lock") }

// RunOwns reports whether a git evolve run drives the worktree whose git
// directory is gitDir now: it holds its socket (Linux), or run.lock. Whoever
// asks, an agent with its EVOLVE_* variables unset included, gets the same
// answer, and removing or replacing run.lock does not change it where the
// socket is.
func RunOwns(gitDir string) (bool, error) {
	if holdBound(holdName(gitDir)) {
		return true, nil
	}
	// Asked with a shared lock: commands asking at once (records written
	// side by side) do not see each other as the run.
	return filelock.Held(runLock(gitDir))
}

// RunsOwning are the git directories of the worktrees of the repository
// whose common git directory is commonDir that a git evolve run drives now:
// what is shared by all worktrees (trust, the ledger) is theirs too.
func RunsOwning(commonDir string) ([]string, error) {
	var out []string
	for _, d := range worktreeGitDirs(commonDir) {
		owns, err := RunOwns(d)
		if err != nil {
			return nil, err
		}
		if owns {
			out = append(out, d)
		}
	}
	return out, nil
}

// worktreeGitDirs are the git directories of the worktrees of the
// repository whose common git directory is commonDir: its own, then each
// linked worktree's.
func worktreeGitDirs(commonDir string) []string {
	dirs := []string{commonDir}
	wts, _ := filepath.Glob(filepath.Join(commonDir, "worktrees", "*")) // a fixed pattern
	return append(dirs, wts...)
}

// refusedPath lists the commands refused while a run owned the worktree,
// for its driver to mark in the cycle's record.
func refusedPath(gitDir string) string { return filepath.Join(gitDir, "evolve", "run-refused.jsonl") }

// maxRefused bounds the refusals a cycle's record names.
const maxRefused = 100

// NoteRefused records that command what was refused because a run owned
// the worktree: the driver names it in the record of the cycle it
// finishes. It is written to run-refused.jsonl and, where the run's hold
// is a socket, sent to it as well: the agent can delete the file, not what
// the socket has queued.
func NoteRefused(gitDir, what string, now time.Time) error {
	nonce := make([]byte, 6)
	rand.Read(nonce)
	line, _ := json.Marshal(map[string]string{"what": what, "at": now.UTC().Format(time.RFC3339), "n": hex.EncodeToString(nonce)})
	noteHold(holdName(gitDir), line)
	f, err := os.OpenFile(refusedPath(gitDir), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// takeRefused returns the marks of the commands refused since the last
// call, from run-refused.jsonl and from also (what the hold received; a
// refusal in both is named once), and forgets them.
func takeRefused(gitDir string, also [][]byte) ([]string, error) {
	var lines [][]byte
	p := refusedPath(gitDir)
	f, err := os.Open(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var scanErr error
	if f != nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() && len(lines) < maxRefused {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		scanErr = sc.Err()
		f.Close()
	}
	lines = append(lines, also...)
	var marks []string
	seen := map[string]bool{}
	for _, l := range lines {
		l = bytes.TrimSpace(l)
		var e struct{ What, At string }
		if seen[string(l)] || json.Unmarshal(l, &e) != nil || e.What == "" {
			continue
		}
		seen[string(l)] = true
		if len(marks) < maxRefused {
			marks = append(marks, fmt.Sprintf("%s: refused, run at %s while the driver owned the worktree", oneLine(e.What, 80), oneLine(e.At, 40)))
		}
	}
	if f != nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return marks, err
		}
	}
	return marks, scanErr
}

// oneLine is s on one line, at most n runes: it comes from a file the
// agent can write.
func oneLine(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c < 0x20 || c == 0x7f {
			r[i] = ' '
		}
	}
	if len(r) > n {
		r = append(r[:n-1], '…')
	}
	return string(r)
}
