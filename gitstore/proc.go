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
	// started is closed once the process started (or failed to), for one
	// started in the background (startGitAsync); nil otherwise.
	started chan struct{}
}

// startGitAsync is startGit in the background: starting a process waits
// for its exec, about 2 ms here, which the caller need not wait for until
// it finishes the process (a writer starts three at Open).
func startGitAsync(dir string, env []string, input bool, args ...string) *proc {
	p := newGitProc(dir, env, input, true, args...)
	p.started = make(chan struct{})
	go func() {
		defer close(p.started)
		p.start()
	}()
	return p
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
	p := newGitProc(dir, env, input, machine, args...)
	p.start()
	return p
}

// newGitProc prepares the process startGitIn starts.
func newGitProc(dir string, env []string, input, machine bool, args ...string) *proc {
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
		p.stdin, p.err = p.cmd.StdinPipe()
	}
	return p
}

func (p *proc) start() {
	if p.err != nil {
		return
	}
	if err := p.cmd.Start(); err != nil {
		p.err = fmt.Errorf("running git: %w", err)
	}
}

// wait waits for a process started in the background to have started.
func (p *proc) wait() {
	if p.started != nil {
		<-p.started
	}
}

// finish writes input (when the process takes input), waits for git and
// returns what it printed, or a *GitError.
func (p *proc) finish(input []byte) ([]byte, error) {
	p.wait()
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
	if p == nil {
		return
	}
	p.wait()
	if p.err != nil || p.done {
		return
	}
	p.done = true
	if p.stdin != nil {
		p.stdin.Close()
	}
	go p.cmd.Wait()
}

// pipedGit is a git command whose output is read as git writes it (and
// whose input, when there is one, is written as it goes): for answers too
// large to hold at once, or read while they come.
type pipedGit struct {
	cmd    *exec.Cmd
	args   []string
	t0     time.Time
	stdin  io.WriteCloser // nil without input
	stdout io.ReadCloser
	stderr bytes.Buffer
}

// startPiped starts git with args in the repository, with LC_ALL=C; ctx
// ends it.
func (r *Repo) startPiped(ctx context.Context, input bool, args ...string) (*pipedGit, error) {
	p := &pipedGit{args: args, t0: time.Now()}
	p.cmd = exec.CommandContext(ctx, "git", args...)
	p.cmd.Dir = r.dir
	p.cmd.Env = append(r.env[:len(r.env):len(r.env)], "LC_ALL=C")
	p.cmd.Stderr = &p.stderr
	var err error
	if input {
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("running git %s: %w", firstArg(args), err)
	}
	return p, nil
}

// wait waits for git to end, and says how it failed, with what it said.
func (p *pipedGit) wait() error {
	err := p.cmd.Wait()
	trace("git %s (%.3fms)", strings.Join(p.args, " "), float64(time.Since(p.t0).Microseconds())/1000)
	if err != nil {
		return fmt.Errorf("git %s: %v: %s", firstArg(p.args), err, p.said())
	}
	return nil
}

// kill ends git before its output was all read, and waits for it.
func (p *pipedGit) kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	_ = p.wait()
}

// said is what git wrote on its standard error.
func (p *pipedGit) said() []byte { return bytes.TrimSpace(p.stderr.Bytes()) }
