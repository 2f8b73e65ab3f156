package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
)

// runHold is what git evolve run holds while it drives a worktree: an
// exclusive lock on run.lock (what other platforms, and older versions,
// ask), and on Linux an abstract unix socket named for the worktree's git
// directory. No file operation removes the socket's name: it is gone only
// with the driver's process, so deleting or replacing run.lock does not
// make the worktree look free (RunOwns asks for both).
type runHold struct {
	gitDir string
	lock   *filelock.File
	name   holdSocket // nil where there is none
}

// holdSocket is the socket of a run's hold.
type holdSocket interface {
	io.Closer
	// drain returns the messages queued for the holder (refusals).
	drain() [][]byte
}

// received are the refusals sent to the hold since the last call.
func (h *runHold) received() [][]byte {
	if h.name == nil {
		return nil
	}
	return h.name.drain()
}

// holdName is the abstract socket name of the run driving the worktree
// whose git directory is gitDir: derived from the directory's absolute
// path, symbolic links resolved, so that every process asking about the
// same directory names the same socket.
func holdName(gitDir string) string {
	p, err := filepath.Abs(gitDir)
	if err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
	} else {
		p = gitDir
	}
	sum := sha256.Sum256([]byte(p))
	return "@git-evolve-run-" + hex.EncodeToString(sum[:16])
}

// errHeld is a hold another process has.
var errHeld = errors.New("held")

// takeHold takes the run's hold on the worktree whose git directory is
// gitDir. It returns a *RunError when another run holds it; warning says
// what of the hold could not be taken (the socket, where the system
// refuses it: the lock file is then the hold, as on other platforms).
func takeHold(gitDir string) (h *runHold, warning string, err error) {
	// A command asking whether a run drives the worktree holds the lock
	// shared for an instant: a few tries tell that from a run.
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		lock, ok, err := filelock.TryLockFile(runLock(gitDir))
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		name, err := bindHold(holdName(gitDir))
		if errors.Is(err, errHeld) {
			// A run whose run.lock was deleted or replaced still drives
			// the worktree.
			lock.Unlock()
			continue
		}
		if err != nil {
			warning = fmt.Sprintf("the run's hold on the worktree is its lock file alone: %v", err)
		}
		return &runHold{gitDir: gitDir, lock: lock, name: name}, warning, nil
	}
	return nil, "", &RunError{Msg: "another git evolve run is driving this worktree",
		Hint: "wait for it to end, or stop it: Ctrl-C in its terminal (or git evolve stop, which halts it before its next cycle)"}
}

// release lets the hold go.
func (h *runHold) release() {
	if h.name != nil {
		h.name.Close()
	}
	h.lock.Unlock()
}

// check is the hold after the agent's turn: when run.lock is no longer
// the file the driver locked (deleted, or replaced), it is made and locked
// again, and mark says so for the cycle's record. It returns a *RunError
// when another run holds the new file.
func (h *runHold) check() (mark string, err error) {
	intact, err := h.lock.Intact()
	if err != nil || intact {
		return "", err
	}
	path := runLock(h.gitDir)
	what := "deleted"
	if _, err := os.Lstat(path); err == nil {
		what = "replaced"
	}
	held, err := filelock.Held(path)
	if err != nil {
		return "", err
	}
	if held {
		return "", &RunError{Msg: fmt.Sprintf("%s was %s while the agent worked, and another process holds the new one: another git evolve run may drive this worktree", path, what),
			Hint: "stop the other run, then continue this one: git evolve run --resume"}
	}
	if what == "replaced" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s was replaced while the agent worked and cannot be made again: %w", path, err)
		}
	}
	h.lock.Unlock()
	lock, ok, err := filelock.TryLockFile(path)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &RunError{Msg: fmt.Sprintf("%s was %s while the agent worked, and another process took the new one: another git evolve run may drive this worktree", path, what),
			Hint: "stop the other run, then continue this one: git evolve run --resume"}
	}
	h.lock = lock
	return fmt.Sprintf("run.lock: %s during the agent's turn; the driver made it again", what), nil
}
