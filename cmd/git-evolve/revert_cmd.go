package main

import (
	"encoding/json"
	"fmt"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/loop"
)

type revertCmd struct {
	Cycle   string `complete:"cycles" arg:"" help:"The cycle to revert: its number, or the commit it delivered." placeholder:"CYCLE"`
	Message string `short:"m" help:"The revert commit's message (default: one that names the cycle); the trailers are added." placeholder:"MSG"`
	JSON    bool   `name:"json" help:"Print {cycle, id, reverts_cycle, commit, record}."`
}

func (revertCmd) Help() string {
	return `Undoes a finished cycle (improved or harvested) later, with one commit on top
of HEAD: the cycle's range, from its start to the commit it delivered, is
reverted three ways, so that work done since is kept (a conflict stops it with
nothing changed), and .agents/** is kept as it is. The index and the tracked
files must not differ from HEAD.

The revert is recorded as a cycle of its own: it takes the next number, its
commit carries the trailers (Evolve-Result: regressed, Evolve-Reverts:
<start>..<end>), the goals are measured after it, and its record, a note on
the revert commit, names the cycle it reverts (reverts_cycle, reverts_id). A
cycle is reverted once. An interrupted revert is completed by running this
again, or by git evolve cycle finish.`
}

func (c *revertCmd) Run(e *env) error {
	l, err := e.CycleLedger()
	if err != nil {
		return err
	}
	res, err := l.RevertCycle(e.ctx, c.Cycle, cycle.RevertOptions{Message: c.Message, Progress: e.progress})
	if err != nil {
		return notFound(err)
	}
	if err := loop.SaveMeasured(l.Repo(), res); err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: the goals measured were not stored: %v\n", err)
	}
	keepSeedFinish(e, l.Repo(), res)
	if c.JSON {
		oc := res.Cycle
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{"cycle": oc.Cycle, "id": oc.ID, "reverts_cycle": oc.Reverts.Cycle,
			"commit": res.Commit.String(), "resumed": res.Resumed, "record": json.RawMessage(res.Record.Marshal())}))
		return nil
	}
	printRevert(e, l, res)
	return nil
}

// printRevert says what a later revert did.
func printRevert(e *env, l *cycle.Ledger, res *cycle.FinishResult) {
	oc, f := res.Cycle, res.Cycle.Finish
	subject := ""
	if ci, err := l.Repo().Commit(res.Commit); err == nil {
		subject = ci.Subject()
	}
	fmt.Fprintf(e.stdout, "reverted cycle %d (target %s) with %s %q\n", oc.Reverts.Cycle, oc.Target, res.Commit.Short(), subject)
	fmt.Fprintf(e.stdout, "  changed: %d file(s), +%d -%d lines\n", f.Delta.Files, f.Delta.Insertions, f.Delta.Deletions)
	fmt.Fprintf(e.stdout, "  goals: %d passing of %d, score %.1f\n", f.Passing, f.Total, f.Score)
	fmt.Fprintf(e.stdout, "recorded as cycle %d (regressed), a note on %s\n", oc.Cycle, res.Commit.Short())
}
