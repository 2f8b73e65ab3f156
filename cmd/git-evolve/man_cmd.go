package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/internal/manpage"
)

type installManCmd struct {
	Dir string `arg:"" optional:"" placeholder:"DIR" help:"Where to write the pages (default: ~/.local/share/man/man1)."`
}

func (installManCmd) Help() string {
	return `Writes a manual page for git-evolve and one for each command (git-evolve.1,
git-evolve-log.1, git-evolve-cycle-start.1, …), made from the same
definitions as --help, so that 'git evolve --help' and 'git help evolve' (which
run man) find them. Says what to add to MANPATH when man does not look in DIR.`
}

func (c *installManCmd) Run(e *env) error {
	dir := c.Dir
	if dir != "" {
		dir = e.path(dir) // as -C has it
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return usagef("no home directory to install into (%v): name a DIR", err)
		}
		dir = filepath.Join(home, ".local", "share", "man", "man1")
	}
	root, err := fullModel()
	if err != nil {
		return err
	}
	pages := manpage.Pages(root, description, currentVersion().Version)
	found, err := manpage.Install(dir, pages)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %d manual pages to %s\n", len(pages), dir)
	if !found {
		fmt.Fprintf(e.stdout, "man does not look there yet: add it to MANPATH, e.g. in your shell's profile:\n  export MANPATH=\"%s:$MANPATH\"\n", filepath.Dir(dir))
	}
	return nil
}

// fullModel is kong's model of every command (a start builds the one it
// runs only).
func fullModel() (*kong.Node, error) {
	var c cli
	k, err := kong.New(&c, kong.Name("git-evolve"), kong.Description(description), helpVars)
	if err != nil {
		return nil, err
	}
	return k.Model.Node, nil
}
