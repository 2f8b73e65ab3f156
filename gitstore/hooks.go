package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// HookRefusal is a commit hook that refused a commit: its name, how it
// ended, and the end of what it printed.
type HookRefusal struct {
	Hook   string
	Reason string
	Output string
}

// hookOutputMax bounds what a hook's output is kept of (its end).
const hookOutputMax = 64 << 10

// RunCommitHooks runs the pre-commit and commit-msg hooks of the
// repository (core.hooksPath honoured) as git commit would run them for a
// commit of tree with message: pre-commit with an index that holds tree
// (GIT_INDEX_FILE, the real index untouched), commit-msg on a file holding
// the message, which it may edit. It returns the message as the hooks left
// it, or the refusal of the first hook that exited non-zero. A hook that is
// missing or not executable is skipped, as git skips it. err is for
// failing to run them at all.
func (r *Repo) RunCommitHooks(ctx context.Context, tree Hash, message string) (string, *HookRefusal, error) {
	top, err := r.WorkTree()
	if err != nil {
		return "", nil, err
	}
	dir, err := r.GitPath("hooks")
	if err != nil {
		return "", nil, err
	}
	hook := func(name string) string {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
		return ""
	}
	run := func(path string, env []string, args ...string) (*HookRefusal, error) {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Dir, cmd.Env = top, append(append([]string(nil), r.env...), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			b := out.Bytes()
			if len(b) > hookOutputMax {
				b = b[len(b)-hookOutputMax:]
			}
			return &HookRefusal{Hook: filepath.Base(path), Reason: exit.Error(), Output: string(b)}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("running the %s hook: %w", filepath.Base(path), err)
		}
		return nil, nil
	}
	if p := hook("pre-commit"); p != "" {
		index, err := os.CreateTemp(r.gitDir, "evolve-hook-index-*")
		if err != nil {
			return "", nil, err
		}
		index.Close()
		defer os.Remove(index.Name())
		if err := r.Flush(); err != nil {
			return "", nil, err
		}
		env := []string{"GIT_INDEX_FILE=" + index.Name()}
		if _, err := startGit(top, append(append([]string(nil), r.env...), env...), false, "read-tree", tree.String()).finish(nil); err != nil {
			return "", nil, fmt.Errorf("the index the pre-commit hook sees: %w", err)
		}
		if refused, err := run(p, append(env, "GIT_EDITOR=:")); refused != nil || err != nil {
			return "", refused, err
		}
	}
	if p := hook("commit-msg"); p != "" {
		f, err := os.CreateTemp(r.gitDir, "EVOLVE_EDITMSG-*")
		if err != nil {
			return "", nil, err
		}
		defer os.Remove(f.Name())
		_, err = f.WriteString(message)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", nil, err
		}
		if refused, err := run(p, nil, f.Name()); refused != nil || err != nil {
			return "", refused, err
		}
		edited, err := os.ReadFile(f.Name())
		if err != nil {
			return "", nil, err
		}
		message = string(edited)
	}
	return message, nil, nil
}
