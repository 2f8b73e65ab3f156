package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// proc is a git command that may be started ahead of need and finished
// later, so that its start-up cost overlaps other work.
type proc struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr bytes.Buffer
	args           []string
	t0             time.Time
	err            error // starting failed
	done           bool  // finished: abandon has nothing to do
}

// startGit starts git with args in dir, with env (nil: this process's).
// With input, its standard input stays open until finish.
func startGit(dir string, env []string, input bool, args ...string) *proc {
	return startGitIn(dir, env, input, true, args...)
}

// startGitIn is startGit; machine runs git with LC_ALL=C, so that what this
// reads of its output and messages does not depend on the user's language.
// Without it git speaks the user's language: for commands whose messages
// are passed on to the user and whose outcome is read from the exit code
// and porcelain output alone (fetch, push, ls-remote).
func startGitIn(dir string, env []string, input, machine bool, args ...string) *proc {
	p := &proc{args: args, t0: time.Now()}
	p.cmd = exec.CommandContext(context.Background(), "git", args...)
	p.cmd.Dir = dir
	if env == nil {
		env = os.Environ()
	}
	if machine {
		env = append(env[:len(env):len(env)], "LC_ALL=C")
	}
	p.cmd.Env = env
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	if input {
		if p.stdin, p.err = p.cmd.StdinPipe(); p.err != nil {
			return p
		}
	}
	if err := p.cmd.Start(); err != nil {
		p.err = fmt.Errorf("running git: %w", err)
	}
	return p
}

// finish writes input (when the process takes input), waits for git and
// returns what it printed, or a *GitError.
func (p *proc) finish(input []byte) ([]byte, error) {
	p.done = true
	defer func() {
		trace("git %s (%.3fms)", strings.Join(p.args, " "), float64(time.Since(p.t0).Microseconds())/1000)
	}()
	if p.err != nil {
		return nil, p.err
	}
	if p.stdin != nil {
		_, werr := p.stdin.Write(input)
		p.stdin.Close()
		if werr != nil {
			_ = p.cmd.Wait()
			return nil, fmt.Errorf("writing to git %s: %w", firstArg(p.args), werr)
		}
	}
	if err := p.cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return p.stdout.Bytes(), &GitError{Args: p.args, ExitCode: ee.ExitCode(), Stderr: p.stderr.String()}
		}
		return nil, fmt.Errorf("running git: %w", err)
	}
	return p.stdout.Bytes(), nil
}

// abandon ends a process that is no longer needed: it gets end of input
// (a ref update with no transaction does nothing) and is reaped in the
// background.
func (p *proc) abandon() {
	if p == nil || p.err != nil || p.done {
		return
	}
	p.done = true
	if p.stdin != nil {
		p.stdin.Close()
	}
	go p.cmd.Wait()
}
