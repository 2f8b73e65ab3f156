package main

import (
	"fmt"
	"io"
	"os"
)

type importCmd struct {
	File string `arg:"" help:"The cycle-history.jsonl to import, or - for standard input." placeholder:"FILE"`
	JSON bool   `name:"json" help:"Print the summary as one JSON object."`
}

func (importCmd) Help() string {
	return `Reads both shapes found in the wild: the script's (cycle, target, result, sha,
canonical_sha, goals_passing, goals_total, timestamp, …) and the second writer's
(cycle, mode, result, commit, milestone, started_at, title, trace), with the
legacy names goal_id and commit_sha. Each record is stored on the commit it
names, all in one notes commit (improved, regressed, harvested, quarantined);
every other result goes to the local journal, never to the shared notes.
Importing the same file again adds nothing. Lines that do not parse, have a
cycle below 1, or are productive but name no commit this repository has are
listed with their line numbers and skipped; the rest is still stored, and the
exit code is 10.`
}

func (c *importCmd) Run(e *env) error {
	var data []byte
	var err error
	if c.File == "-" {
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = os.ReadFile(e.path(c.File))
	}
	if err != nil {
		return usagef("cannot read %s: %v", c.File, err)
	}
	l, err := e.WritableLedger("git evolve import")
	if err != nil {
		return err
	}
	rep, err := l.Import(data)
	if err != nil {
		return err
	}
	for _, p := range rep.Skipped {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s:%d: skipped: %s\n", c.File, p.Line, p.Reason)
	}
	for _, p := range rep.Warnings {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s:%d: %s\n", c.File, p.Line, p.Reason)
	}
	if c.JSON {
		skipped := make([]map[string]any, 0, len(rep.Skipped))
		for _, p := range rep.Skipped {
			skipped = append(skipped, map[string]any{"line": p.Line, "reason": p.Reason})
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(map[string]any{
			"stored": rep.Stored, "journaled": rep.Journaled, "present": rep.Present, "skipped": skipped,
		}))
		return skippedError(c.File, len(rep.Skipped))
	}
	fmt.Fprintf(e.stdout, "imported %d record(s) into the ledger and %d into the local journal; %d already present; %d line(s) skipped\n",
		rep.Stored, rep.Journaled, rep.Present, len(rep.Skipped))
	return skippedError(c.File, len(rep.Skipped))
}

// skippedError makes an import that skipped lines exit 10 once the rest is
// stored, so that scripts can tell.
func skippedError(file string, n int) error {
	if n == 0 {
		return nil
	}
	return &usageError{msg: fmt.Sprintf("%s: %d line(s) skipped (listed above); the other records were imported", file, n)}
}
