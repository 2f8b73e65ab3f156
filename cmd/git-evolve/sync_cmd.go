package main

import (
	"fmt"
	"strings"

	"git-evolve/gitstore"
	"git-evolve/share"
)

type syncCmd struct {
	Remote string `arg:"" optional:"" help:"The remote (default: the current branch's upstream remote, else origin)." placeholder:"REMOTE"`
	JSON   bool   `name:"json" help:"Print {remote, attempts, refs: [{ref, local, remote, result, merged, pushed}]}."`
}

func (syncCmd) Help() string {
	return `Fetches the remote's ledger and every other evolve notes ref (refs/notes/evolve*:
the ledger, fitness snapshots, …) into refs/notes/remotes/<remote>/, merges
each into the local ref of the same name, and pushes the results with a lease
on what was fetched. When another clone pushed in between, it fetches, merges
and pushes again.

The merge is a union: every record of either side is kept, an identical one
once; two different records on one commit are both kept; a note one side
removed stays. Notes git notes merge -s cat_sort_uniq or a plain git notes
left behind merge the same way. The network goes through git, so ssh, https
and credential helpers work as for git push.`
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
	e.progress("syncing the ledger with " + remote)
	rep, err := share.Sync(repo, remote)
	if err != nil {
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
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"remote": remote, "attempts": rep.Attempts, "refs": refs}))
		return nil
	}
	if len(rep.Refs) == 0 {
		fmt.Fprintf(e.stdout, "nothing to sync: neither this clone nor %s has a ledger yet\n", remote)
		return nil
	}
	fmt.Fprintf(e.stdout, "synced with %s\n", remote)
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
		if len(what) == 0 {
			what = append(what, "up to date")
		}
		fmt.Fprintf(e.stdout, "  %-*s %s\n", width, r.Ref, strings.Join(what, ", "))
	}
	return nil
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
	remotes, err := repo.Remotes()
	if err != nil {
		return "", err
	}
	if !contains(remotes, remote) {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
