package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/share"
)

type hookCmd struct {
	CommitMsg        hookCommitMsgCmd        `cmd:"" name:"commit-msg" help:"Add the open cycle's trailers to a commit message (run by the commit-msg hook)."`
	PrepareCommitMsg hookPrepareCommitMsgCmd `cmd:"" name:"prepare-commit-msg" help:"Add the open cycle's trailers to a commit message, also with --no-verify (run by the prepare-commit-msg hook)."`
	PrePush          hookPrePushCmd          `cmd:"" name:"pre-push" help:"Deliver the ledger with a push, and stop a push while the ledger fails verify (run by the pre-push hook)."`
	Agent            hookAgentCmd            `cmd:"" name:"agent" help:"Answer an agent's hook: session start, stop, pre-tool (run by the hooks git evolve init --agent installs)."`
}

func (hookCmd) Help() string {
	return `The logic of the hooks git evolve init installs (git's, and with --agent the agent's); the hook files only call it.`
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

type hookPrepareCommitMsgCmd struct {
	File   string `arg:"" help:"The commit message file git gives the hook." placeholder:"FILE"`
	Source string `arg:"" optional:"" help:"Where the message comes from (message, template, merge, squash, commit)."`
	Commit string `arg:"" optional:"" help:"The commit it comes from, for an amend or -c."`
}

func (hookPrepareCommitMsgCmd) Help() string {
	return `What commit-msg does, run by git before the message is edited: a commit made
with --no-verify (as aider's are) skips commit-msg but not this hook, so its
message gets the open cycle's trailers too. An empty message (the editor is
about to open) is left to commit-msg.`
}

func (c *hookPrepareCommitMsgCmd) Run(e *env) error {
	return (&hookCommitMsgCmd{File: c.File}).Run(e)
}

func (c *hookCommitMsgCmd) Run(e *env) error {
	warn := func(err error) error {
		fmt.Fprintf(e.stderr, "git-evolve: warning: commit-msg hook: %v (the commit goes on without trailers)\n", err)
		return nil
	}
	l, err := e.Cycles()
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
	idTrailer     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Evolve-Id:\s*(\S+)`) })
	resultTrailer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Evolve-Result:`) })
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
	if strings.TrimSpace(text) == "" || resultTrailer().MatchString(text) {
		return false
	}
	if m := idTrailer().FindStringSubmatch(text); m != nil && m[1] != id {
		return false
	}
	return true
}

type hookPrePushCmd struct {
	Remote string `arg:"" help:"The remote git pushes to (its name, or its URL when it has none)." placeholder:"REMOTE"`
	URL    string `arg:"" optional:"" help:"The remote's URL." placeholder:"URL"`
}

func (hookPrePushCmd) Help() string {
	return `Reads the refs being pushed on its input, as git gives them to the pre-push
hook. Unless only notes are pushed, it checks the ledger (git evolve verify)
and stops the push when it fails, saying why and how to push anyway (git push
--no-verify); then it delivers the ledger and the other evolve notes to the
same remote, merged with what the remote has (never forced), as git evolve
sync does, unless the remote had all of them when this clone last fetched
from or pushed to it (its remote-tracking notes refs say so: nothing is
asked of the remote then). When the ledger is ahead of the remote's as last
seen, it is pushed without a fetch first, with a lease on what was last seen: a
remote that moved since refuses it, and is then fetched and merged. A remote
given by URL alone (no remote of that name) gets no ledger: name the remote, or
run git evolve sync. The ledger goes before git pushes the branch: when git
will refuse that push unless it is forced (the remote's branch is at a commit
this clone lacks), the hook says the ledger went ahead of it.`
}

func (c *hookPrePushCmd) Run(e *env) error {
	input, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	if repo, err := e.Repo(); err == nil {
		warnMissingHooks(e, repo, []string{"pre-push"}) // this one runs
	}
	onlyNotes, any := true, false
	var unseen []string // remote refs at a commit this clone lacks
	for _, line := range strings.Split(string(input), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		any = true
		if !strings.HasPrefix(f[2], "refs/notes/") {
			onlyNotes = false
			if h, err := gitstore.ParseHash(f[3]); err == nil && !h.IsZero() {
				unseen = append(unseen, f[2]+" "+f[3])
			}
		}
	}
	if !any || onlyNotes {
		return nil // nothing but notes: a push of the ledger itself
	}
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	tip, ok, err := l.Repo().RefHash(store.NotesRef)
	if err != nil || !ok {
		return err // no ledger here: nothing to check or deliver
	}
	// What the delivery asks git (the settings, and with them the remotes)
	// is asked while the ledger is verified: every push pays for this hook.
	l.Repo().PrefetchConfig()
	// What the verify keeps for the next is written while the ledger is
	// delivered.
	defer audit.WaitSaved()
	rep, err := audit.VerifyWith(l.Local(), audit.VerifyOptions{BreachesOnly: true, SaveLater: true})
	if err != nil {
		return err
	}
	if err := breachRefusal(e, rep, fmt.Sprintf("the ledger fails verify (%d breach(es)): the push is stopped so that it does not spread", rep.Breaches())); err != nil {
		return err
	}
	remote, err := l.Repo().IsRemote(c.Remote)
	if err != nil {
		return err
	}
	if !remote {
		fmt.Fprintf(e.stderr, "git-evolve: the ledger is not pushed to %s, which is a URL, not a remote: run git evolve sync <remote>\n", c.Remote)
		return nil
	}
	if err := ensureRefspec(e, l.Repo(), c.Remote); err != nil {
		return err
	}
	transcripts, _, err := l.Repo().ConfigBool("evolve.shareTranscripts")
	if err != nil {
		return err
	}
	done, listed, err := share.Delivered(l.Repo(), c.Remote, transcripts)
	if err != nil || done {
		return err // the remote had all of it when last fetched from or pushed to
	}
	opts := ledgerGuards(e, l, c.Remote, false, "", tip)
	opts.Transcripts = transcripts
	opts.Listed = listed
	// What the remote lacks as last seen is pushed without a fetch first;
	// a remote that moved since refuses the lease, and is fetched then.
	opts.AsLastSeen = true
	rep2, err := share.Sync(l.Repo(), c.Remote, opts)
	if errors.As(err, new(*integrityError)) {
		fmt.Fprintf(e.stderr, "git-evolve: the ledger was not delivered to %s: %v (the push goes on)\n", c.Remote, err)
		return nil
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: the ledger was not delivered to %s: %v (git evolve sync %s tries again)\n", c.Remote, err, c.Remote)
		return nil
	}
	pushed := false
	for _, r := range rep2.Refs {
		if r.Pushed && !e.quiet {
			fmt.Fprintf(e.stderr, "git-evolve: delivered %s to %s\n", strings.TrimPrefix(r.Ref, "refs/notes/"), c.Remote)
		}
		pushed = pushed || r.Pushed
	}
	// The ledger goes before git's own push, which git may still refuse:
	// a remote ref at a commit this clone does not have is one git
	// rejects unless the push is forced ("fetch first").
	if pushed {
		for _, u := range unseen {
			ref, sha, _ := strings.Cut(u, " ")
			h, _ := gitstore.ParseHash(sha)
			if have, err := l.Repo().HasObject(h); err == nil && !have {
				fmt.Fprintf(e.stderr, "git-evolve: warning: the ledger went to %s before git's push, which git refuses unless it is forced: %s is at %s, which this clone lacks; the ledger there names commits %s does not have until the branch is pushed (fetch, integrate, push again)\n",
					c.Remote, termLine(ref), h.Short(), c.Remote)
			}
		}
	}
	return nil
}
