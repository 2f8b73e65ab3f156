package main

import (
	"bufio"
	"fmt"

	"github.com/git-evolve/git-evolve/audit"
)

type verifyCmd struct {
	Range []string `arg:"" optional:"" name:"revision-range" help:"The commits whose Evolve-* trailers are checked against the ledger (default: HEAD)."`
	JSON  bool     `name:"json" help:"Print {records, notes, history_checked, findings: [{severity, kind, message, cycle, id, commit, notes_commit}]}."`
	Full  bool     `name:"full" help:"Read the ledger from git alone, using none of the files verify keeps to go faster; the answer is the same."`
}

func (verifyCmd) Help() string {
	return `Checks the ledger: every note parses and names a schema this git-evolve knows;
ids are unique (a record copied to several commits is one record); every
record's commit is in this clone (one that is not is reported as not fetched,
not as a breach); the Evolve-* trailers of the commits in the range agree with
the records of them; the records form a hash chain (each names the one before
it, with a digest of its line), so that a record edited or deleted later is
named by the one written after it; and no commit of the ledger's own history
removed or changed a record (the notes commit that did, who made it and when,
is named). Records written before a rule existed are notices, not breaches;
so are two records with one cycle number (two clones that numbered at once).
A record plain git appended after the records began to chain (no prev link,
not recorded by git evolve) is a breach of the notes commit that added it,
and so is an Evolve-Largest-Cycle trailer that names less than the ledger
its notes commit wrote holds (a clone that trusts it lists too few records
and can number a record with a cycle already taken).
A record that vanished when the ledger's tip was replaced by one without it
(git notes moves the ref without comparing it with what it read; a reset)
is named from the reflog of refs/notes/evolve and the tip verified before.

An object the ledger stands for that is missing from the object store (a
notes commit, a notes tree, a note) is a breach. What verify keeps to go
faster (a summary of each record, the findings after records were only
added) is used only while
every object it stands for is still here; --full uses none of it.

Exit 0 when there is no breach, 2 with the list otherwise. The history
already verified clean is not read again.

The ledger judged is this clone's, with the remote-tracking copies a fetch
brought (refs/notes/remotes/<remote>/evolve) that pass the check git evolve
sync makes before it merges one. A copy that would bring a breach is left
out, and reported as a notice (remote-refused) naming the remote and the
notes commit that brought it: it does not change the exit code.`
}

func (c *verifyCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	warnMissingHooks(e, l.Repo(), nil)
	e.progress("verifying the ledger")
	noLedgerHint(e, l.Repo())
	rep, err := audit.VerifyWith(l, audit.VerifyOptions{Revs: c.Range, FromGit: c.Full})
	if err != nil {
		if len(c.Range) > 0 {
			// A range git does not take is a usage error, as log's.
			if cerr := checkRevisions(l.Repo(), c.Range...); cerr != nil {
				return cerr
			}
		}
		return err
	}
	rep = withRefusedCopies(e, rep)
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(rep))
	} else {
		w := bufio.NewWriter(e.stdout)
		if !e.quiet { // -q: the findings alone
			fmt.Fprintf(w, "ledger: %d record(s) in %d note(s); %d commit(s) of its history read\n", rep.Records, rep.Notes, rep.History)
		}
		for _, f := range rep.Findings {
			fmt.Fprintf(w, "%-7s %-16s %s\n", f.Severity, f.Kind, termLine(f.Message))
		}
		n := rep.Breaches()
		if !e.quiet {
			fmt.Fprintf(w, "%d breach(es), %d notice(s)\n", n, len(rep.Findings)-n)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if n := rep.Breaches(); n > 0 {
		err := error(&integrityError{msg: fmt.Sprintf("the ledger fails verify: %d breach(es)", n)})
		for _, f := range rep.Findings {
			if f.Pruned && f.Severity == audit.Breach {
				// a clean-up of git's, not an attack: what to do about it
				err = withHint(err, "git notes prune removes the notes of commits the clone it runs in does not have, such as a branch's after a squash merge: git evolve repair puts the records back, and where a squash or a rebase carried their work to other commits, git evolve relink attaches them there, whose notes a prune keeps")
				break
			}
		}
		return err
	}
	return nil
}
