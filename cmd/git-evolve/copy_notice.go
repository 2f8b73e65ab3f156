package main

import (
	"fmt"
	"slices"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// copyNotices says, once for each remote-tracking copy of the ledger that
// the command's reads left out (it would bring a breach: store.Ledger.CheckCopies),
// which remote, which notes commit brought the breach, and what to do. What
// the command printed and its exit code are this clone's ledger's.
func (e *env) copyNotices() {
	if e.ledger == nil || e.copiesTold {
		return
	}
	for _, r := range e.ledger.Refused() {
		fmt.Fprintf(e.stderr, "git-evolve: notice: %s\n", termLine(copyNotice(&r)))
	}
}

func copyNotice(r *store.CopyRefusal) string {
	remote := r.Remote()
	if r.Unread {
		return fmt.Sprintf("%s's ledger (%s) is not read, only this clone's: %s; git evolve sync %s fetches them whole", remote, r.Ref, r.Reason, remote)
	}
	what := "a breach"
	if r.Breaches > 1 {
		what = fmt.Sprintf("%d breaches, the first", r.Breaches)
	}
	who := "it brings " + what
	if !r.NotesCommit.IsZero() {
		who = fmt.Sprintf("notes commit %s (%s) brings %s", r.NotesCommit.Short(), r.By, what)
	}
	return fmt.Sprintf("%s's ledger (%s) is not read, only this clone's: %s: %s; ask whoever made it to run git evolve repair, then git evolve sync %s (git evolve sync %s --accept-remote -m 'why' takes it as it is)",
		remote, r.Ref, who, r.Reason, remote, remote)
}

// withRefusedCopies is verify's report with a notice (remote-refused) for
// each remote-tracking copy the verify left out, in place of the notice on
// stderr: a notice, so the exit code is this clone's ledger's.
func withRefusedCopies(e *env, rep *audit.Report) *audit.Report {
	refused := e.ledger.Refused()
	if len(refused) == 0 {
		return rep
	}
	e.copiesTold = true
	shown := *rep
	shown.Findings = slices.Clip(rep.Findings)
	for _, r := range refused {
		shown.Findings = append(shown.Findings, audit.Finding{Severity: audit.Notice, Kind: "remote-refused",
			Message: termLine(copyNotice(&r)), NotesCommit: hashOrEmpty(r.NotesCommit)})
	}
	return &shown
}
