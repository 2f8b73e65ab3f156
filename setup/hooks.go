package setup

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"git-evolve/gitstore"
)

// commitMsgHook is the shim init installs: it runs a hook that was there
// before (kept as commit-msg.pre-evolve), then git evolve hook commit-msg.
// The same text is in .githooks/commit-msg; a test keeps them equal.
//
//go:embed commit-msg.sh
var commitMsgHook []byte

// hookMarker identifies git-evolve's shim.
var hookMarker = []byte("git-evolve commit-msg hook")

// HookChange is what InstallHooks did.
type HookChange struct {
	Path    string // the hook installed
	Chained string // the user's hook, kept and run first ("" when there was none)
}

// InstallHooks installs the commit-msg shim where git runs hooks
// (core.hooksPath, else the git directory's hooks/). A hook the user already
// has is never overwritten: it is renamed commit-msg.pre-evolve and the shim
// runs it first. Installing again changes nothing.
func InstallHooks(repo *gitstore.Repo) ([]HookChange, error) {
	dir, err := hooksDir(repo)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "commit-msg")
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Contains(old, hookMarker):
		if bytes.Equal(old, commitMsgHook) {
			return nil, nil
		}
		// An older shim of ours: replace it (it holds nothing of the user's).
	case err == nil:
		pre := filepath.Join(dir, "commit-msg.pre-evolve")
		if _, serr := os.Stat(pre); serr == nil {
			return nil, fmt.Errorf("%s and %s both exist: move one away, then run init again", path, pre)
		}
		if err := os.Rename(path, pre); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, commitMsgHook, 0o755); err != nil {
			return nil, err
		}
		return []HookChange{{Path: path, Chained: pre}}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, commitMsgHook, 0o755); err != nil {
		return nil, err
	}
	return []HookChange{{Path: path}}, nil
}

// hooksDir is where git looks for hooks: core.hooksPath (relative to the
// top of the working tree, as git reads it) or <common git dir>/hooks.
func hooksDir(repo *gitstore.Repo) (string, error) {
	vals, err := repo.ConfigGetAll("core.hooksPath")
	if err != nil {
		return "", err
	}
	if len(vals) > 0 && vals[len(vals)-1] != "" {
		p := vals[len(vals)-1]
		if filepath.IsAbs(p) {
			return p, nil
		}
		top, err := repo.WorkTree()
		if err != nil {
			return "", err
		}
		return filepath.Join(top, p), nil
	}
	return filepath.Join(repo.CommonDir(), "hooks"), nil
}
