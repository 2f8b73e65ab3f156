package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/git-evolve/git-evolve/ledger/store"
)

type importCmd struct {
	File   string `arg:"" help:"The cycle-history.jsonl to import, or - for standard input." placeholder:"FILE"`
	Anchor string `name:"anchor" default:"HEAD" placeholder:"REV" help:"The commit that records naming no commit, or one this repository does not have, are stored on (marked anchored)."`
	JSON   bool   `name:"json" help:"Print the summary as one JSON object."`
}

func (importCmd) Help() string {
	return `Reads the shapes found in the wild: the script's (cycle, target, result, sha,
canonical_sha, goals_passing, goals_total, timestamp, …), the second writer's
(cycle, mode, result, commit, milestone, started_at, title, trace), with the
legacy names goal_id and commit_sha, and AgentOps' (cycle, date, run, type,
commit, fitness_before, fitness_after, goals_flipped, notes, and no result).

Each record is stored on the commit it names (improved, regressed, harvested,
quarantined), in one notes commit for every 10,000 lines of the file; every
other result goes to the local journal, never to the shared notes. A record that names no commit, or a
commit this repository does not have (squashed away, rewritten), is stored on
the --anchor commit instead, marked "anchored": true, its sha fields as
written; log lists it with that sha. A record with no result gets one
inferred, and "inferred" lists what was: its type when that is a result; else
improved when it has a commit (regressed when fitness_after is below
fitness_before), unchanged when it has none; timestamp from date.

Importing the same file again adds nothing, and an import that stopped part
way (a full disk, an interrupt) adds the rest when it is run again. The summary counts the records
imported (and anchored), journaled, already present and skipped, and accounts
for every line of the file: each is in the ledger, in the journal (by its
result), already present, skipped or blank. Lines that do
not parse or have a cycle below 1 are listed with their line numbers and
skipped; the rest is still stored, and the exit code is 10. With nothing
skipped it is 0.`
}

func (c *importCmd) Run(e *env) error {
	in := e.stdin
	if c.File != "-" {
		f, err := os.Open(e.path(c.File))
		if err != nil {
			return usagef("cannot read %s: %v", c.File, err)
		}
		defer f.Close()
		in = f
	}
	l, err := e.WritableLedger("git evolve import")
	if err != nil {
		return err
	}
	rep, err := l.Import(in, store.ImportOptions{Anchor: c.Anchor})
	var rerr *store.ImportReadError
	if errors.As(err, &rerr) {
		// What was read is stored: say so before the error.
		_ = c.report(e, rep)
		return fmt.Errorf("cannot read %s: %w", c.File, err)
	}
	if err != nil {
		return err
	}
	return c.report(e, rep)
}

// report prints what Import did, and exits 10 when it skipped lines.
func (c *importCmd) report(e *env, rep *store.ImportReport) error {
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
		journaledAs := rep.JournaledAs
		if journaledAs == nil {
			journaledAs = map[string]int{}
		}
		out := map[string]any{"lines": rep.Lines, "stored": rep.Stored, "anchored": rep.Anchored, "inferred": rep.Inferred,
			"journaled": rep.Journaled, "journaled_as": journaledAs, "present": rep.Present, "skipped": skipped, "blank": rep.Blank}
		if !rep.Anchor.IsZero() {
			out["anchor"] = rep.Anchor.String()
		}
		fmt.Fprintf(e.stdout, "%s\n", mustJSON(out))
		return skippedError(c.File, len(rep.Skipped))
	}
	anchor, inferred := "", ""
	if rep.Anchored > 0 {
		anchor = fmt.Sprintf(" (%d anchored to %s)", rep.Anchored, rep.Anchor.Short())
	}
	if rep.Inferred > 0 {
		inferred = fmt.Sprintf("; %d result(s) inferred", rep.Inferred)
	}
	fmt.Fprintf(e.stdout, "imported %d record(s) into the ledger%s and %d into the local journal; %d already present; %d line(s) skipped%s\n",
		rep.Stored, anchor, rep.Journaled, rep.Present, len(rep.Skipped), inferred)
	// Where every line went.
	fmt.Fprintf(e.stdout, "  %d line(s): %d in the ledger, %d in the journal, %d already present, %d skipped, %d blank\n",
		rep.Lines, rep.Stored, rep.Journaled, rep.Present, len(rep.Skipped), rep.Blank)
	if rep.Journaled > 0 {
		var as []string
		for _, r := range slices.Sorted(maps.Keys(rep.JournaledAs)) {
			as = append(as, fmt.Sprintf("%d %s", rep.JournaledAs[r], termLine(r)))
		}
		fmt.Fprintf(e.stdout, "  the journal's: %s (the shared ledger holds improved, regressed, harvested and quarantined cycles, and aborted ones with their start; the rest stays in this clone: git evolve log --all lists it)\n", strings.Join(as, ", "))
	}
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
