package main

import (
	"fmt"

	"git-evolve/setup"
)

type initCmd struct{}

func (initCmd) Help() string {
	return `Adds, where missing:
  notes.rewriteRef = refs/notes/evolve   (amend and rebase carry records along)
  notes.displayRef = refs/notes/evolve   (git log shows them)
  remote.<name>.fetch = refs/notes/evolve*:refs/notes/remotes/<name>/evolve*
                                         (for every remote: tracking copies only;
                                         a remote without a ledger still fetches)
It never writes a push refspec and never fetches straight into
refs/notes/evolve. Running it again changes nothing.`
}

func (initCmd) Run(e *env) error {
	repo, err := e.Repo()
	if err != nil {
		return err
	}
	changes, err := setup.Init(repo)
	for _, c := range changes {
		fmt.Fprintf(e.stdout, "set %s\n", c)
	}
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintln(e.stdout, "already initialised: nothing to change")
	}
	return nil
}
