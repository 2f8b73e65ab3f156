package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/completion"
	"github.com/git-evolve/git-evolve/ledger/store"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" complete:"shells" help:"The shell: bash, zsh or fish."`
}

func (completionCmd) Help() string {
	return `Prints a completion script; the candidates come from git evolve itself
(commands, flags, and values: goal ids for --target, results for --result,
remotes for sync, cycle numbers for show and revert).

  bash: add to ~/.bashrc:   eval "$(git evolve completion bash)"
        It defines _git_evolve, which git's own completion calls for
        'git evolve <TAB>', and completes git-evolve as a command too.
  zsh:  add to ~/.zshrc:    eval "$(git evolve completion zsh)"
        (after compinit). It defines _git-evolve, which zsh's git completion
        calls for 'git evolve <TAB>'.
  fish: git evolve completion fish > ~/.config/fish/completions/git-evolve.fish`
}

func (c *completionCmd) Run(e *env) error {
	_, err := fmt.Fprint(e.stdout, completion.Script(c.Shell))
	return err
}

// completeCmd is what the completion scripts run.
type completeCmd struct {
	Line  string   `name:"line" help:"The command line up to the cursor (bash)."`
	Words []string `arg:"" optional:"" passthrough:"" help:"The words before the cursor, then the word under it."`
}

func (c *completeCmd) Run(e *env) error {
	root, err := fullModel()
	if err != nil {
		return nil // completion never fails aloud
	}
	for _, cand := range completion.Complete(root, c.Line, c.Words, e.completionValues) {
		fmt.Fprintln(e.stdout, cand)
	}
	return nil
}

// completionValues lists the values of a complete tag that the repository
// holds (completion.Lookup): nothing when it cannot be read.
func (e *env) completionValues(tag string) []string {
	switch tag {
	case "remotes":
		repo, err := e.Repo()
		if err != nil {
			return nil
		}
		remotes, _ := repo.Remotes()
		return remotes
	case "goals":
		path, err := goalsFile{}.path(e)
		if err != nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		f, _ := goals.Parse(path, data)
		if f == nil {
			return nil
		}
		var out []string
		for _, g := range f.Goals {
			out = append(out, g.ID)
		}
		for _, d := range f.Gaps() {
			out = append(out, d.ID)
		}
		return out
	case "cycles":
		l, err := e.Ledger()
		if err != nil {
			return nil
		}
		ls, err := l.Entries(store.ListOptions{Journal: true}, nil, 50)
		if err != nil {
			return nil
		}
		var out []string
		for i := len(ls.Entries) - 1; i >= 0; i-- { // the latest first
			out = append(out, strconv.Itoa(ls.Entries[i].Record.Cycle))
		}
		return out
	}
	return nil
}
