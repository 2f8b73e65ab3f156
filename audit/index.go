package audit

import (
	"path"
	"strconv"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// checkIndex compares the ledger's index of cycles (ledger.IndexName) that
// readers take at the tip (its own, or, under notes commits another tool
// added, the nearest one's it is brought forward from) with what the notes
// say. A reader with no saved view of its own (a fresh clone, a CI job)
// takes the index's word for which notes hold a cycle: an entry missing
// hides a record from it where the notes it reads do not show the gap; one
// too many makes it read the notes instead (a note listed under a cycle it
// holds no record of, a cycle in a directory that cannot hold it) but was
// written by no writer that kept the index. Both are
// breaches of the notes commit that holds that index, which git evolve
// repair mends by building the index again. A ledger with no such index is
// no finding: readers read its notes. since, the tip this clone verified
// clean, limits the comparison to what changed after it; want, when set,
// is what the index is to list, read from tip's notes.
func checkIndex(repo *gitstore.Repo, rep *Report, tip, since gitstore.Hash, want map[string]bool) error {
	if tip.IsZero() || tip == since {
		return nil // no ledger, or none changed since it was found right
	}
	snap, err := repo.NotesAt(tip)
	if err != nil {
		return err
	}
	var was *gitstore.Notes
	if !since.IsZero() {
		if was, err = repo.NotesAt(since); err != nil {
			was = nil
		}
	}
	var missing, extra []gitstore.IndexEntry
	var of gitstore.Hash // the notes commit whose index readers take
	if want != nil {
		missing, extra, of, err = snap.IndexProblemsAgainst(store.CycleIndex, want)
	} else {
		missing, extra, of, err = snap.IndexProblems(store.CycleIndex, was)
	}
	if err != nil {
		return err
	}
	for _, e := range missing {
		f := rep.add(Breach, "index", "the ledger's index of cycles does not list %s on %s: a clone with no saved view does not show it; git evolve repair builds the index again", indexWhat(e.Key), e.Object.Short())
		f.Commit, f.NotesCommit = e.Object.String(), of.String()
	}
	for _, e := range extra {
		if e.OddDirectory {
			f := rep.add(Breach, "index", "the ledger's index of cycles holds a directory (%s) with a name twice or out of order: readers take no answer from it; git evolve repair builds the index again", e.Key)
			f.NotesCommit = of.String()
			continue
		}
		f := rep.add(Breach, "index", "the ledger's index of cycles lists %s on %s, which its note does not hold; git evolve repair builds the index again", indexWhat(e.Key), objectOrEntry(e))
		f.Commit, f.NotesCommit = objectOrNone(e), of.String()
	}
	return nil
}

// indexWhat says what an index key stands for.
func indexWhat(key string) string {
	switch key {
	case ledger.BadKey:
		return "a line that is no record"
	case ledger.QuarantineKey:
		return "a quarantine record"
	}
	if n, err := strconv.Atoi(path.Base(key)); err == nil && ledger.CycleKey(n) == key {
		return "cycle " + path.Base(key)
	}
	return "the entry " + key
}

func objectOrEntry(e gitstore.IndexEntry) string {
	if e.Object.IsZero() {
		return "no commit (an entry of no known form)"
	}
	return e.Object.Short()
}

func objectOrNone(e gitstore.IndexEntry) string {
	if e.Object.IsZero() {
		return ""
	}
	return e.Object.String()
}
