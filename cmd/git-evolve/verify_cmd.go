package main

import (
	"bufio"
	"fmt"

	"github.com/git-evolve/git-evolve/audit"
)

type verifyCmd struct {
	Range []string `arg:"" optional:"" name:"revision-range" help:"The commits whose Evolve-* trailers are checked against the ledger (default: HEAD)."`
	JSON  bool     `name:"json" help:"Print {records, notes, history_checked, findings: [{severity, kind, message, cycle, id, commit, notes_commit}]}."`
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
	e.progress("verifying the ledger")
	noLedgerHint(e, l.Repo())
	rep, err := audit.Verify(l, c.Range...)
	if err != nil {
		return err
	}
	rep = withRefusedCopies(e, rep)
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(rep))
	} else {
		w := bufio.NewWriter(e.stdout)
		fmt.Fprintf(w, "ledger: %d record(s) in %d note(s); %d commit(s) of its history read\n", rep.Records, rep.Notes, rep.History)
		for _, f := range rep.Findings {
			fmt.Fprintf(w, "%-7s %-16s %s\n", f.Severity, f.Kind, f.Message)
		}
		n := rep.Breaches()
		fmt.Fprintf(w, "%d breach(es), %d notice(s)\n", n, len(rep.Findings)-n)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if n := rep.Breaches(); n > 0 {
		return &integrityError{msg: fmt.Sprintf("the ledger fails verify: %d breach(es)", n)}
	}
	return nil
}
