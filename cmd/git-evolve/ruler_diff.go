package main

import (
	"fmt"
	"io"

	"github.com/git-evolve/git-evolve/internal/rulerdiff"
	"github.com/git-evolve/git-evolve/ledger"
)

// writeRulerDiffs prints the diffs, every line from a record or a blob
// escaped for the terminal.
func writeRulerDiffs(w io.Writer, rd *rulerdiff.Diffs, id string) {
	if rd.Missing != "" {
		fmt.Fprintf(w, "%-16s %s\n", "ruler diffs", termLine(rd.Missing))
		return
	}
	to := "the delivered commit " + rd.To[:7]
	if rd.Saved {
		to = "saved as " + rd.To[:7] + ", " + ledger.RegressedRef(id)
	}
	fmt.Fprintf(w, "%-16s from the cycle's start %s to the work as judged (%s)\n", "ruler diffs", rd.From[:7], termLine(to))
	for _, f := range rd.Files {
		head := termLine(f.Change)
		if f.Accepted {
			head += " (accepted)"
		}
		if f.Summary != "" {
			head += ": " + f.Summary
		}
		fmt.Fprintf(w, "%-16s %s\n", "ruler diff", head)
		for i, l := range f.Lines {
			if i < 2 {
				l = termLine(l) // the headers, with the path: one line whatever it holds
			} else {
				l = termSafe(l) // a line of the file (no newline): its tabs as they are
			}
			fmt.Fprintln(w, l)
		}
		if f.More > 0 {
			fmt.Fprintf(w, "… %d more line(s)\n", f.More)
		}
	}
	if rd.MoreFiles > 0 {
		fmt.Fprintf(w, "… %d more ruler file(s) not shown\n", rd.MoreFiles)
	}
}
