package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/queue"
)

// Exit codes: one table, listed in the README.
const (
	exitOK          = 0  // ok
	exitRuntime     = 1  // runtime error
	exitIntegrity   = 2  // integrity breach: verify failed, ledger inconsistent
	exitRecoverable = 3  // finished with a recoverable failure (a cycle regressed and was reverted)
	exitHalted      = 4  // halted: kill switch, breaker, convergence
	exitPaused      = 5  // paused: quota, budget; resumable
	exitUsage       = 10 // usage error: bad flags, bad input, missing goal
)

// usageError is a command line or input the user must fix.
type usageError struct {
	msg  string
	hint string
	// verbatim keeps the message's first letter as it is: a phrase other
	// tools match, such as the seeds' "No goals to measure".
	verbatim bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// integrityError is a ledger that does not read cleanly. The command has
// done what it could (listed what parses) before returning it.
type integrityError struct{ msg string }

func (e *integrityError) Error() string { return e.msg }

// recoverable is a command that did its job and ended with a recoverable
// failure (a cycle regressed and was reverted): exit 3, reported without
// "error:".
type recoverable struct{ msg string }

func (e *recoverable) Error() string { return e.msg }

// hinted carries advice to print after the error.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, hint string) error { return &hinted{err: err, hint: hint} }

// childExit is a program this one ran in its place (git evolve mcp's
// server), which said what it had to say and exited with code.
type childExit struct{ code int }

func (e *childExit) Error() string { return fmt.Sprintf("exited %d", e.code) }

// exitCode maps an error to the exit-code table.
func exitCode(err error) int {
	var ce *childExit
	if errors.As(err, &ce) {
		return ce.code
	}
	var (
		pe *kong.ParseError
		ue *usageError
		ie *cycle.InputError
		ge *integrityError
		rf *cycle.Refusal
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &pe), errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &rf), errors.As(err, new(*problemsError)):
		return exitUsage
	case errors.As(err, &ge):
		return exitIntegrity
	case errors.As(err, new(*recoverable)):
		return exitRecoverable
	case errors.As(err, new(*halted)):
		return exitHalted
	case errors.As(err, new(*paused)):
		return exitPaused
	case errors.As(err, new(*loop.HypothesisError)), errors.As(err, new(*queue.Refusal)), errors.Is(err, queue.ErrNotFound):
		return exitUsage
	}
	var re *loop.RunError
	if errors.As(err, &re) && re.Usage {
		return exitUsage
	}
	if errors.As(err, &re) && re.Exhausted {
		return exitIntegrity
	}
	return exitRuntime
}

// printError prints err as `git-evolve: error: …` with any hints.
func printError(w io.Writer, err error) {
	if errors.As(err, new(*childExit)) {
		return // it spoke for itself
	}
	msg := err.Error()
	if errors.As(err, new(*recoverable)) || errors.As(err, new(*halted)) || errors.As(err, new(*paused)) {
		fmt.Fprintf(w, "git-evolve: %s\n", msg)
		return
	}
	var ie *cycle.InputError
	if errors.As(err, &ie) && ie.Field != "" {
		msg = flagFor(ie.Field) + ": " + ie.Msg
	}
	var ve *usageError
	var pe *problemsError
	if errors.As(err, &pe) {
		for _, p := range pe.ps {
			if p.Warning {
				fmt.Fprintf(w, "git-evolve: warning: %s%s\n", p, p.Suffix())
			} else {
				fmt.Fprintf(w, "git-evolve: error: %s\n", p)
			}
		}
		defer fmt.Fprintf(w, "git-evolve: hint: fix them (git evolve goals validate lists them); see git evolve goals validate -h for the schema\n")
	} else if (!errors.As(err, &ve) || !ve.verbatim) && !strings.HasPrefix(msg, "No goals to measure") {
		msg = lowerFirst(msg)
	}
	fmt.Fprintf(w, "git-evolve: error: %s\n", msg)
	var h *hinted
	if errors.As(err, &h) {
		fmt.Fprintf(w, "git-evolve: hint: %s\n", h.hint)
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.hint != "" {
		fmt.Fprintf(w, "git-evolve: hint: %s\n", ue.hint)
	}
	var re *loop.RunError
	if errors.As(err, &re) && re.Hint != "" {
		fmt.Fprintf(w, "git-evolve: hint: %s\n", re.Hint)
	}
	var rf *cycle.Refusal
	if errors.As(err, &rf) && rf.Hint != "" {
		fmt.Fprintf(w, "git-evolve: hint: %s\n", rf.Hint)
	}
	var bz *cycle.Busy
	if errors.As(err, &bz) && bz.Hint != "" {
		fmt.Fprintf(w, "git-evolve: hint: %s\n", bz.Hint)
	}
	if errors.Is(err, gitstore.ErrNotRepository) {
		fmt.Fprintf(w, "git-evolve: hint: run it inside a git repository, or name one with -C <path>\n")
	}
	if errors.Is(err, gitstore.ErrPromised) && !errors.As(err, &h) {
		// an object a partial clone's filter left out: the ledger's notes
		// are what sync fetches whole; other objects git fetches
		fmt.Fprintf(w, "git-evolve: hint: when it is the ledger's notes (a plain git fetch brings them through the clone's filter), git evolve sync fetches them whole; another object, git fetch or git checkout brings\n")
	}
}

// flagFor names the record command's flag for a record field.
func flagFor(field string) string {
	switch field {
	case "trace":
		return "--trace-json"
	case "sha":
		return "--canonical-sha"
	}
	if strings.HasPrefix(field, "trace.") {
		return "--trace-json (" + strings.TrimPrefix(field, "trace.") + ")"
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	if len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z' {
		return s // an acronym such as "HEAD"
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// checkRevisions refuses, as the usage error it is (exit 10, as log's),
// a revision or range argument git does not take; git's failing for
// another reason is returned as it is.
func checkRevisions(repo *gitstore.Repo, revs ...string) error {
	err := repo.CheckRevisions(revs...)
	if errors.As(err, new(*gitstore.RevisionError)) {
		return usagef("%v", err)
	}
	return err
}
