package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
	"github.com/git-evolve/git-evolve/setup"
	"github.com/git-evolve/git-evolve/share"
)

type syncCmd struct {
	Remote       string        `complete:"remotes" arg:"" optional:"" help:"The remote (default: the current branch's upstream remote, else origin)." placeholder:"REMOTE"`
	AcceptRemote bool          `name:"accept-remote" help:"Take the remote's ledger even when it brings a breach this clone's does not have, and record an acknowledgement of it (with -m)."`
	Message      string        `short:"m" help:"With --accept-remote: why the remote's breach is accepted (kept in the acknowledgement)." placeholder:"WHY"`
	Patience     time.Duration `name:"patience" default:"2m" placeholder:"DURATION" help:"How long to go on fetching, merging and pushing again while other clones push first."`
	JSON         bool          `name:"json" help:"Print {remote, attempts, lease_losses, refs: [{ref, local, remote, result, merged, pushed, refused}]}."`
}

func (syncCmd) Help() string {
	return `Fetches the remote's ledger and every other evolve notes ref (refs/notes/evolve*:
the ledger, fitness snapshots, …) into refs/notes/remotes/<remote>/, merges
each into the local ref of the same name, and pushes the results with a lease
on what was fetched. When another clone pushed in between, it fetches, merges
and pushes again, waiting a little longer each time (jittered), for up to
--patience; when that is up it says so (exit 1), and nothing is lost.

The merge is a union: every record of either side is kept, an identical one
once; two different records on one commit are both kept; a note one side
removed stays; a record one side changed since the two last met (a repair)
comes out as that side has it. Notes git notes merge -s cat_sort_uniq or a
plain git notes left behind merge the same way. The network goes through git,
so ssh, https and credential helpers work as for git push.

A sync never spreads a breach. When the remote's ledger brings a breach this
clone's does not have (a record edited or deleted, a note that does not
parse), the local ledger is kept as it is, not merged, not pushed, and the
remote notes commit that made it is named (exit 2); --accept-remote takes it
deliberately, recording an acknowledgement. Before it pushes the ledger, sync
verifies it as the pre-push hook does, and pushes nothing while it fails
(exit 2; git evolve repair mends it).`
}

func (c *syncCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	remote, err := pickRemote(repo, c.Remote)
	if err != nil {
		return err
	}
	if c.Message != "" && !c.AcceptRemote {
		return usagef("-m goes with --accept-remote")
	}
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	if err := ensureRefspec(e, repo, remote); err != nil {
		return err
	}
	e.progress("syncing the ledger with " + remote)
	opts := ledgerGuards(e, l, remote, c.AcceptRemote, c.Message, gitstore.ZeroHash)
	opts.Patience = c.Patience
	if opts.Transcripts, _, err = repo.ConfigBool("evolve.shareTranscripts"); err != nil {
		return err
	}
	rep, err := share.Sync(repo, remote, opts)
	if err != nil {
		printSync(e, rep, remote)
		var pe *gitstore.PushError
		if errors.As(err, &pe) && rep != nil {
			for _, r := range rep.Refs {
				if r.Merged > 0 {
					// what was merged stays: say so, and how it travels on
					return withHint(err, fmt.Sprintf("what this sync merged from %s stays in this clone's ledger (git evolve log lists it): git evolve sync %s again delivers it once %s takes the push, and a sync with a remote this clone may push to delivers it there", remote, remote, remote))
				}
			}
		}
		return err
	}
	if c.JSON {
		var refs []map[string]any
		for _, r := range rep.Refs {
			refs = append(refs, map[string]any{"ref": r.Ref, "local": hashOrEmpty(r.Local), "remote": hashOrEmpty(r.Remote),
				"result": hashOrEmpty(r.Result), "merged": r.Merged, "pushed": r.Pushed})
		}
		if refs == nil {
			refs = []map[string]any{}
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"remote": remote, "attempts": rep.Attempts, "lease_losses": rep.LeaseLosses, "refs": refs, "transcripts": rep.Transcripts}))
		return nil
	}
	if len(rep.Refs) == 0 && rep.Transcripts > 0 {
		fmt.Fprintf(e.stdout, "synced with %s: no ledger on either side yet; pushed %d transcript(s) (evolve.shareTranscripts)\n", remote, rep.Transcripts)
		return nil
	}
	if len(rep.Refs) == 0 {
		fmt.Fprintf(e.stdout, "nothing to sync: neither this clone nor %s has a ledger yet\n", remote)
		return nil
	}
	fmt.Fprintf(e.stdout, "synced with %s\n", remote)
	if rep.LeaseLosses > 0 {
		fmt.Fprintf(e.stdout, "  (%d attempts: another clone pushed first %d time(s))\n", rep.Attempts, rep.LeaseLosses)
	}
	printSync(e, rep, remote)
	return nil
}

// printSync says what a sync did to each ref (nothing for a sync that did
// not get as far as the refs).
func printSync(e *env, rep *share.Report, remote string) {
	if rep == nil {
		return
	}
	width := 0
	for _, r := range rep.Refs {
		width = max(width, len(r.Ref))
	}
	for _, r := range rep.Refs {
		var what []string
		switch {
		case r.Merged > 0:
			what = append(what, fmt.Sprintf("merged %d note(s) from %s", r.Merged, remote))
		case r.Local != r.Result && !r.Result.IsZero():
			what = append(what, "brought up to "+remote+"'s")
		}
		if r.Pushed {
			what = append(what, "pushed")
		}
		if r.Refused {
			what = append(what, "kept as it is: "+remote+"'s brings a breach")
		}
		if len(what) == 0 {
			what = append(what, "up to date")
		}
		fmt.Fprintf(e.stdout, "  %-*s %s\n", width, r.Ref, strings.Join(what, ", "))
	}
	if rep.Transcripts > 0 {
		fmt.Fprintf(e.stdout, "  pushed %d transcript(s) (evolve.shareTranscripts)\n", rep.Transcripts)
	}
}

// ledgerGuards are the checks a sync (the command, or the pre-push hook's)
// makes of the ledger: the remote's is kept out when it brings a breach this
// clone's does not have (unless accept: then the acknowledgement is
// recorded, with why), and a ledger with a breach is not pushed (verified,
// when not zero, is a ledger the caller has just verified clean: pushed as
// it is, it is not verified again).
func ledgerGuards(e *env, l *store.Ledger, remote string, accept bool, why string, verified gitstore.Hash) share.Options {
	return share.Options{
		Admit: func(ref string, local, theirs gitstore.Hash) error {
			if ref != store.NotesRef || theirs.IsZero() {
				return nil
			}
			found, err := audit.CheckIncoming(l.Repo(), local, theirs)
			if err != nil || len(found) == 0 {
				return err
			}
			if accept {
				return acceptIncoming(e, l, remote, found, why)
			}
			for _, f := range found {
				fmt.Fprintf(e.stderr, "git-evolve: %s: %s\n", remote, termLine(f.Message))
			}
			return withHint(&integrityError{fmt.Sprintf("%s's ledger brings %d breach(es) this clone's does not have: this clone's ledger is kept as it is, not merged or pushed", remote, len(found))},
				fmt.Sprintf("ask whoever made that notes commit to run git evolve repair and sync; to take %s's ledger anyway: git evolve sync %s --accept-remote -m 'why'", remote, remote))
		},
		BeforePush: func(ref string, result gitstore.Hash) error {
			if ref != store.NotesRef || result == verified {
				return nil // (the ledger the caller verified just now, as it is)
			}
			rep, err := audit.VerifyWith(l.Local(), audit.VerifyOptions{BreachesOnly: true}) // what the push delivers
			if err != nil {
				return err
			}
			return breachRefusal(e, rep, fmt.Sprintf("the ledger fails verify (%d breach(es)): it is not pushed to %s, so that the breach does not spread", rep.Breaches(), remote))
		},
	}
}

// acceptIncoming records the acknowledgement of each notes commit whose
// breach a sync takes from remote deliberately.
func acceptIncoming(e *env, l *store.Ledger, remote string, found []audit.Finding, why string) error {
	if strings.TrimSpace(why) == "" {
		why = "taken from " + remote + " with git evolve sync --accept-remote"
	}
	done := map[string]bool{}
	for _, f := range found {
		if f.NotesCommit == "" || done[f.NotesCommit] {
			continue
		}
		done[f.NotesCommit] = true
		h, err := gitstore.ParseHash(f.NotesCommit)
		if err != nil {
			return err
		}
		if _, err := audit.Accept(l.Repo(), h, why, e.now()); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "git-evolve: accepted what notes commit %s of %s did: %s\n", h.Short(), remote, termLine(why))
	}
	return nil
}

// breachRefusal is nil when rep has no breach; otherwise it prints each
// breach on stderr and returns an integrity error with msg that names the
// ways out: git evolve repair, or an acknowledgement.
func breachRefusal(e *env, rep *audit.Report, msg string) error {
	if rep.Breaches() == 0 {
		return nil
	}
	notesCommit := "<notes-commit>"
	for _, f := range rep.Findings {
		if f.Severity != audit.Breach {
			continue
		}
		fmt.Fprintf(e.stderr, "git-evolve: %s\n", termLine(f.Message))
		if f.NotesCommit != "" && notesCommit == "<notes-commit>" {
			notesCommit = f.NotesCommit[:7]
		}
	}
	return withHint(&integrityError{msg},
		"git evolve repair puts back what was edited or deleted, from the ledger's history (--dry-run shows it); or acknowledge it: git evolve repair --accept "+notesCommit+" -m 'why'")
}

// pickRemote is the remote named, else the current branch's upstream
// remote, else origin; it must exist.
func pickRemote(repo *gitstore.Repo, name string) (string, error) {
	remote := name
	if remote == "" {
		var err error
		if remote, err = repo.UpstreamRemote(); err != nil {
			return "", err
		}
	}
	if remote == "" {
		remote = "origin"
	}
	known, err := repo.IsRemote(remote)
	if err != nil {
		return "", err
	}
	if !known {
		remotes, err := repo.Remotes()
		if err != nil {
			return "", err
		}
		hint := "add one with git remote add"
		if len(remotes) > 0 {
			hint = "name one of: " + strings.Join(remotes, ", ") + " (git remote -v lists them)"
		}
		return "", &usageError{msg: fmt.Sprintf("no remote %q in this repository", remote), hint: hint}
	}
	return remote, nil
}

func hashOrEmpty(h interface {
	IsZero() bool
	String() string
}) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// ensureRefspec gives remote the ledger's fetch refspec when it lacks it (a
// remote added after init), and says so.
func ensureRefspec(e *env, repo *gitstore.Repo, remote string) error {
	added, err := setup.EnsureFetchRefspec(repo, remote)
	if added {
		fmt.Fprintf(e.stderr, "git-evolve: added %s to remote.%s.fetch: a plain git fetch brings %s's ledger now\n", setup.FetchRefspec(remote), remote, remote)
	}
	return err
}

// syncLedgerWith syncs the ledger with remote as git evolve sync does,
// quietly: for a run's --sync-upstream.
func syncLedgerWith(e *env, l *store.Ledger, remote string) error {
	repo := l.Repo()
	if err := ensureRefspec(e, repo, remote); err != nil {
		return err
	}
	opts := ledgerGuards(e, l, remote, false, "", gitstore.ZeroHash)
	var err error
	if opts.Transcripts, _, err = repo.ConfigBool("evolve.shareTranscripts"); err != nil {
		return err
	}
	_, err = share.Sync(repo, remote, opts)
	return err
}
