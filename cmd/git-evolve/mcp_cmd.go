package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/internal/mcptools"
)

type mcpCmd struct {
	Tools bool `help:"Print the tools the server offers, one a line with its hints, and exit."`
}

func (mcpCmd) Help() string {
	return `Serves the loop to an agent over the Model Context Protocol, on standard
input and output (an MCP client starts it: git evolve mcp, or git-evolve -C
<repository> mcp). Each tool runs the git evolve command of the same name in
the repository and returns its JSON:

` + mcptools.List() + `
The ledger is a resource (evolve://ledger: every record, as git evolve
export prints them), and so is each cycle (evolve://cycle/{n}, as git evolve
show --json prints it).

stop, kill, resume and trust are not offered: an agent cannot stop or unleash
its own loop. The commands run as they do from a terminal, with their rules:
inside a git evolve run, what the run refuses to its agent is refused here.

The server is its own program, git-evolve-mcp, installed beside git-evolve
(linked into git-evolve, the protocol's SDK would slow every other
command's start): git evolve mcp runs the one beside it, else the one on
PATH.`
}

func (c *mcpCmd) Run(e *env) error {
	if c.Tools {
		for _, t := range mcptools.Tools {
			fmt.Fprintf(e.stdout, "%-19s %s\n", t.Name, t.Hints())
		}
		return nil
	}
	if _, err := e.Repo(); err != nil {
		return err
	}
	server, err := mcpServerBinary()
	if err != nil {
		return &hinted{err: err, hint: "install it beside git-evolve: in a clone of git-evolve, CGO_ENABLED=0 go install ./cmd/git-evolve-mcp (the module is not published yet: go install …@latest finds nothing), or install a release package, which has both"}
	}
	cmd := exec.CommandContext(e.ctx, server, "-C", e.dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.Env = os.Environ()
	if self := evolveBinary(); self != "" {
		cmd.Env = append(cmd.Env, "GIT_EVOLVE_BIN="+self)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return &childExit{code: exit.ExitCode()}
	}
	return err
}

// mcpServerBinary is the git-evolve-mcp to run: the one beside this
// program, else the one on PATH.
func mcpServerBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		name := "git-evolve-mcp"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		beside := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, nil
		}
	}
	p, err := exec.LookPath("git-evolve-mcp")
	if err != nil {
		return "", fmt.Errorf("the MCP server, git-evolve-mcp, is neither beside git-evolve nor on PATH")
	}
	return p, nil
}

// evolveBinary is this program as the server should run it again: the
// name it was started by, found as the shell or git found it.
func evolveBinary() string {
	arg0 := os.Args[0]
	if strings.ContainsRune(arg0, os.PathSeparator) {
		if abs, err := filepath.Abs(arg0); err == nil {
			return abs
		}
		return arg0
	}
	if p, err := exec.LookPath(arg0); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}
