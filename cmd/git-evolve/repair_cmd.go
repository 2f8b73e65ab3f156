package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/gitstore"
)

type repairCmd struct {
	DryRun  bool   `name:"dry-run" help:"Say what would be put back; write nothing."`
	Accept  string `help:"Instead of repairing, acknowledge what this notes commit did to the ledger (with -m): verify then reports it as a notice, in every clone the acknowledgement reaches. A ref under refs/evolve/ lets go of saved work that is gone." placeholder:"NOTES-COMMIT|REF"`
	Message string `short:"m" help:"Why the breach is accepted (required with --accept)." placeholder:"WHY"`
	JSON    bool   `name:"json" help:"Print {restored: [{cycle, id, commit, was, notes_commit, line, from}], unrepairable: [...], notes_commit}, or the acknowledgement."`
}

func (repairCmd) Help() string {
	return `Reads what git evolve verify finds edited, deleted or lost (from the ledger's
whole history, not only what was verified since) and puts each such record
back as the ledger's own history had it before the change, or, for a change
the history no longer shows, as the record chain names it; a record lost when
the ledger's tip was replaced by one without it (plain git notes writing at
the same time, a reset) comes back as the notes commit that added it had it,
which the reflog of refs/notes/evolve still names: one new notes commit
on refs/notes/evolve whose message lists each record put back and names the
notes commits whose changes it undoes. A ledger whose history was rewritten,
or that is gone, gets back every record of the tip this clone last verified,
and descends from that tip again. Saved work under refs/evolve/ whose ref was
deleted gets its ref back while its commit is here. verify is clean again,
pushes go through, and every clone that syncs it is clean too, with no flag.

With --accept NOTES-COMMIT -m WHY it records an acknowledgement instead (in
refs/notes/evolve-control, shared by sync): what that notes commit did stays,
and verify reports it as a notice, naming who accepted it, when and why.
With --accept refs/evolve/… it lets go of saved work that is gone.

Exit 0 when verify is clean afterwards (or, with --dry-run, would be), 2 when
breaches are left that the history cannot mend.`
}

func (c *repairCmd) Run(e *env) error {
	if c.Accept != "" {
		return c.accept(e)
	}
	if c.Message != "" {
		return usagef("-m goes with --accept")
	}
	l, err := e.WritableLedger("git evolve repair")
	if err != nil {
		return err
	}
	if err := refuseWhileRunOwns(e, l.Repo(), "git evolve repair", "the driver writes the ledger", true); err != nil {
		return err
	}
	e.progress("reading the ledger's history")
	rep, err := audit.Repair(l, c.DryRun)
	if err != nil {
		return err
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(rep))
	} else {
		w := bufio.NewWriter(e.stdout)
		verb := "put back"
		if c.DryRun {
			verb = "would put back"
		}
		for _, r := range rep.Restored {
			by := ""
			switch {
			case r.Was == "lost in a rewrite":
				by = " (as notes commit " + r.NotesCommit[:7] + " had it)"
			case r.From != "":
				by = " when notes commit " + r.NotesCommit[:7] + " replaced the ledger's tip (as notes commit " + r.From[:7] + " had it)"
			case r.NotesCommit != "":
				by = " by notes commit " + r.NotesCommit[:7]
			}
			id := "id " + r.ID
			if r.ID == "" {
				id = "no id"
			}
			fmt.Fprintf(w, "%s cycle %d (%s) on %s, %s%s\n", verb, r.Cycle, id, r.Commit[:7], r.Was, by)
		}
		for _, r := range rep.Refs {
			fmt.Fprintf(w, "%s the saved work %s on %s\n", verb, r.Ref, r.Commit[:7])
		}
		removed := "removed"
		if c.DryRun {
			removed = "would remove"
		}
		for _, obj := range rep.Removed {
			fmt.Fprintf(w, "%s the entry at the note path of %s (a submodule or a symbolic link: it is no note)\n", removed, obj[:7])
		}
		if rep.Reindexed {
			verb := "built again"
			if c.DryRun {
				verb = "would build again"
			}
			fmt.Fprintf(w, "%s the ledger's index of cycles from its notes (it listed what they do not say)\n", verb)
		}
		for _, f := range rep.Unrepairable {
			fmt.Fprintf(w, "cannot repair: %s\n", termLine(f.Message))
		}
		switch {
		case len(rep.Restored) == 0 && len(rep.Unrepairable) == 0 && len(rep.Refs) == 0 && len(rep.Removed) == 0 && !rep.Reindexed:
			fmt.Fprintln(w, "nothing to repair: verify finds no record edited or deleted")
		case rep.NotesCommit != "":
			fmt.Fprintf(w, "repaired the ledger: notes commit %s; git evolve sync (or a push) brings the repair to the other clones\n", rep.NotesCommit[:7])
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if n := len(rep.Unrepairable); n > 0 {
		return withHint(&integrityError{fmt.Sprintf("%d breach(es) cannot be repaired from the ledger's history", n)},
			"acknowledge each with git evolve repair --accept <notes-commit> -m 'why', or mend the notes by hand")
	}
	return nil
}

func (c *repairCmd) accept(e *env) error {
	if strings.TrimSpace(c.Message) == "" {
		return usagef("--accept needs -m: why the breach is accepted")
	}
	if c.DryRun {
		return usagef("--dry-run goes without --accept")
	}
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	if strings.HasPrefix(c.Accept, "refs/evolve/") { // a saved work that is gone: let it go
		l, err := e.Ledger()
		if err != nil {
			return err
		}
		if err := l.ForgetSave(c.Accept); err != nil {
			return usageErrorf(err)
		}
		fmt.Fprintf(e.stdout, "let go of the saved work %s: %s\n", c.Accept, termLine(c.Message))
		return nil
	}
	hs, err := repo.ResolveCommits(c.Accept)
	if err != nil {
		return usagef("--accept %s: no such notes commit here", c.Accept)
	}
	if err := refuseWhileRunOwns(e, repo, "git evolve repair --accept", "the driver writes the ledger", true); err != nil {
		return err
	}
	a, err := audit.Accept(repo, hs[0], c.Message, e.now())
	if err != nil {
		return err
	}
	if c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(a))
		return nil
	}
	fmt.Fprintf(e.stdout, "accepted what notes commit %s did to the ledger: %s\n", gitstore.Hash(hs[0]).Short(), termLine(c.Message))
	fmt.Fprintf(e.stdout, "verify reports it as a notice from now on; git evolve sync shares the acknowledgement\n")
	return nil
}

func usageErrorf(err error) error { return &usageError{msg: err.Error()} }
