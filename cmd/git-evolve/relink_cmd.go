package main

import (
	"bufio"
	"fmt"

	"github.com/git-evolve/git-evolve/audit"
)

type relinkCmd struct {
	Range  []string `arg:"" optional:"" name:"revision-range" help:"The commits to look at (default: HEAD and its history)."`
	DryRun bool     `name:"dry-run" help:"Say what would be linked; write nothing."`
	JSON   bool     `name:"json" help:"Print {linked: [{cycle, id, commit, from, by}], missing: [...], ambiguous: [...], dry_run}."`
}

func (relinkCmd) Help() string {
	return `A cherry-pick, a squash merge or a rebase done by a server makes new commits
that carry a cycle's work without its note. This finds them and attaches the
records there: a commit whose trailers name a cycle (Evolve-Id with
Evolve-Result) gets a copy of that cycle's record; a commit whose message
names cycles anywhere (git merge --squash indents the branch's messages, a
forge's squash and merge lists them) gets a copy of each, unless it was made
inside the cycle; a commit without any note whose tree is the tree of exactly
one record's delivered commit gets a copy of that record. Copies are the records as they are: the ledger still counts each
once. It reports what it linked, and the cycles trailers name that the ledger
has no record of.`
}

func (c *relinkCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	rep, err := audit.Relink(l, c.DryRun, c.Range...)
	if err != nil {
		return err
	}
	if c.JSON {
		links := func(ls []audit.Link) []map[string]any {
			out := []map[string]any{}
			for _, x := range ls {
				m := map[string]any{"cycle": x.Cycle, "id": x.ID, "commit": x.Commit.String(), "by": x.By}
				if !x.From.IsZero() {
					m["from"] = x.From.String()
				}
				out = append(out, m)
			}
			return out
		}
		amb := []string{}
		for _, h := range rep.Ambiguous {
			amb = append(amb, h.String())
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"linked": links(rep.Linked), "missing": links(rep.Missing), "ambiguous": amb, "dry_run": rep.DryRun}))
		return nil
	}
	w := bufio.NewWriter(e.stdout)
	verb := "linked"
	if c.DryRun {
		verb = "would link"
	}
	for _, x := range rep.Linked {
		how := "its trailers name the cycle"
		switch x.By {
		case "tree":
			how = "its tree is that of " + x.From.Short()
		case "message":
			how = "its message names the cycle (a squash)"
		}
		fmt.Fprintf(w, "%s cycle %d (id %s) to %s: %s; the record is on %s\n", verb, x.Cycle, x.ID, x.Commit.Short(), how, x.From.Short())
	}
	for _, x := range rep.Missing {
		fmt.Fprintf(w, "no record of cycle %d (id %s), which %s's trailers name: sync the ledger from where it was recorded\n", x.Cycle, x.ID, x.Commit.Short())
	}
	for _, h := range rep.Ambiguous {
		fmt.Fprintf(w, "left %s alone: its tree is that of several cycles' commits\n", h.Short())
	}
	if len(rep.Linked)+len(rep.Missing)+len(rep.Ambiguous) == 0 {
		fmt.Fprintln(w, "nothing to relink: every commit that carries a cycle's work has its record")
	}
	return w.Flush()
}
