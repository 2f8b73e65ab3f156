package setup

import (
	"bytes"
	_ "embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"git-evolve/gitstore"
)

// commitMsgHook is the shim init installs: it runs git evolve hook
// commit-msg when git-evolve is on PATH, and never fails a commit. The same
// text is in .githooks/commit-msg; a test keeps them equal.
//
//go:embed commit-msg.sh
var commitMsgHook []byte

// hookMarker identifies git-evolve's shim.
var hookMarker = []byte("git-evolve commit-msg hook")

// HookChange is what InstallHooks did.
type HookChange struct {
	Path string // the hook installed, or the user's hook left alone
	// Advice, when set, says what the user may add themselves: git-evolve
	// does not write into a hook of the user's, nor into a hooks directory
	// that is shared (core.hooksPath outside the git directory) or tracked.
	Advice string
}

// HookLine is what a commit-msg hook of the user's can run to get the
// trailers of an open cycle.
const HookLine = `command -v git-evolve >/dev/null 2>&1 && git evolve hook commit-msg "$1"`

// InstallHooks installs the commit-msg shim in the repository's own hooks
// directory (the git directory's hooks/). It never overwrites, renames or
// edits a hook the user already has, and never writes into a hooks
// directory core.hooksPath names (it may be shared by other repositories,
// tracked, or run by a hook manager): in both cases it returns the advice
// instead. Installing again changes nothing.
func InstallHooks(repo *gitstore.Repo) ([]HookChange, error) {
	dir, err := repo.GitPath("hooks")
	if err != nil {
		return nil, err
	}
	own := filepath.Join(repo.CommonDir(), "hooks")
	path := filepath.Join(dir, "commit-msg")
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, commitMsgHook):
		return nil, nil
	case err == nil && bytes.Contains(old, hookMarker) && sameDir(dir, own):
		// An older shim of ours, in our own directory: bring it up to date.
	case err == nil:
		return []HookChange{{Path: path, Advice: "to get the trailers of open cycles, add this line to your commit-msg hook: " + HookLine}}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case !sameDir(dir, own):
		return []HookChange{{Path: path, Advice: "core.hooksPath names " + dir + ", which git-evolve leaves alone: to get the trailers of open cycles, put a commit-msg hook there that runs: " + HookLine}}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, commitMsgHook, 0o755); err != nil {
		return nil, err
	}
	return []HookChange{{Path: path}}, nil
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
