package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/git-evolve/git-evolve/gitstore"
)

// page sends what the command prints to the pager git would use, as git log
// does: only when stdout is a terminal, no pager of git's reads it already
// (git -p, pager.evolve: GIT_PAGER_IN_USE) and the pager is not cat (git
// --no-pager sets GIT_PAGER=cat). The pager gets LESS=FRX and LV=-c unless
// they are set, as git gives them. The returned func waits for the pager;
// the command calls it when it is done printing.
func (e *env) page() (done func()) {
	f, ok := e.stdout.(*os.File)
	if !ok || !terminal(f) || e.getenv("GIT_PAGER_IN_USE") == "true" {
		return func() {}
	}
	pager := gitstore.Pager(e.dir)
	if pager == "" || pager == "cat" {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdout, cmd.Stderr = f, e.stderr
	cmd.Env = os.Environ()
	for _, kv := range [][2]string{{"LESS", "FRX"}, {"LV", "-c"}} {
		if _, set := os.LookupEnv(kv[0]); !set {
			cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
		}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return func() {}
	}
	if err := cmd.Start(); err != nil {
		return func() {} // no pager: the output goes to the terminal
	}
	e.stdout, e.paging = pagerWriter{in}, true
	return func() {
		in.Close()
		_ = cmd.Wait()
		e.stdout = f
	}
}

// errPagerGone is a write to a pager that has ended (the user quit it
// before the end): the command stops, and exits 0 as git log does.
var errPagerGone = errors.New("the pager has ended")

type pagerWriter struct{ w io.Writer }

func (p pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return n, errPagerGone
	}
	return n, err
}
