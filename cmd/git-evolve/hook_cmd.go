package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"git-evolve/cycle"
)

type hookCmd struct {
	CommitMsg hookCommitMsgCmd `cmd:"" name:"commit-msg" help:"Add the open cycle's trailers to a commit message (run by the commit-msg hook)."`
}

func (hookCmd) Help() string {
	return `The logic of the hooks git evolve init installs; the hook files only call it.`
}

type hookCommitMsgCmd struct {
	File string `arg:"" help:"The commit message file git gives the hook." placeholder:"FILE"`
}

func (hookCommitMsgCmd) Help() string {
	return `While a cycle is open in this worktree, sets the trailers Evolve-Cycle,
Evolve-Id and Evolve-Target in the message (git interpret-trailers rules).
Without an open cycle it changes nothing. It never stops a commit: a problem is
reported as a warning.`
}

func (c *hookCommitMsgCmd) Run(e *env) error {
	warn := func(err error) error {
		fmt.Fprintf(e.stderr, "git-evolve: warning: commit-msg hook: %v (the commit goes on without trailers)\n", err)
		return nil
	}
	l, err := e.Ledger()
	if err != nil {
		return warn(err)
	}
	open, err := l.Current()
	if errors.Is(err, cycle.ErrNoOpenCycle) {
		return nil
	}
	if err != nil {
		return warn(err)
	}
	msg, err := os.ReadFile(e.path(c.File))
	if err != nil {
		return warn(err)
	}
	if !worthTrailers(string(msg), open.ID) {
		return nil
	}
	err = l.Repo().AddTrailers(e.path(c.File), [][2]string{
		{"Evolve-Cycle", strconv.Itoa(open.Cycle)}, {"Evolve-Id", open.ID}, {"Evolve-Target", open.Target}})
	if err != nil {
		return warn(err)
	}
	return nil
}

var (
	idTrailer     = regexp.MustCompile(`(?m)^Evolve-Id:\s*(\S+)`)
	resultTrailer = regexp.MustCompile(`(?m)^Evolve-Result:`)
)

// worthTrailers reports whether the open cycle's trailers belong in msg:
// not in an empty message (git aborts the commit on it, and must go on
// doing so), nor in a message that already names another cycle or a
// result (an amend or a rebase of a cycle's delivered commit).
func worthTrailers(msg, id string) bool {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	text := strings.Join(lines, "\n")
	if strings.TrimSpace(text) == "" || resultTrailer.MatchString(text) {
		return false
	}
	if m := idTrailer.FindStringSubmatch(text); m != nil && m[1] != id {
		return false
	}
	return true
}
