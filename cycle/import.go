package cycle

import (
	"bytes"
	"fmt"
	"git-evolve/filelock"

	"git-evolve/gitstore"
	"git-evolve/ledger"
)

// ImportReport says what Import did with each line of the file.
type ImportReport struct {
	Stored    int // records added to notes
	Journaled int // records without a commit added to the journal
	Present   int // records the ledger or journal already held
	Skipped   []ImportProblem
	Warnings  []ImportProblem
}

// ImportProblem is a line Import skipped, or stored with a warning.
type ImportProblem struct {
	Line   int
	Reason string
}

// Import stores the records of a cycle-history.jsonl file (the script
// shape with target/sha/goals_*, the second writer's mode/commit/started_at
// shape, and their legacy names), routed as record routes them: improved,
// regressed, harvested and quarantined records become part of the note on
// the commit they name (all in one notes commit); every other result
// (unchanged, idle, or one this schema does not know) goes to the local
// journal, never to the shared notes. Records the ledger or the journal
// already holds (same id; a record without an id gets one derived from its
// content) are not added again, so importing a file twice adds nothing.
// Lines that do not parse, have a cycle number below 1, or are productive
// but name no commit this repository has are skipped and reported; the rest
// are still stored.
func (l *Ledger) Import(data []byte) (*ImportReport, error) {
	rep := &ImportReport{}
	type pending struct {
		line int
		rec  ledger.Record
	}
	var withCommit, withoutCommit []pending
	var revs []string
	ledger.EachLine(data, func(n int, line []byte) {
		rec, err := ledger.Parse(line)
		switch {
		case err != nil:
			rep.Skipped = append(rep.Skipped, ImportProblem{n, err.Error()})
		case rec.Cycle < 1:
			rep.Skipped = append(rep.Skipped, ImportProblem{n, fmt.Sprintf("cycle %d: cycle numbers start at 1", rec.Cycle)})
		case !ledger.Productive(rec.Result) && rec.Result != ledger.Quarantined:
			withoutCommit = append(withoutCommit, pending{n, rec})
		case rec.Commit() == "":
			rep.Skipped = append(rep.Skipped, ImportProblem{n, fmt.Sprintf("the %s record names no commit", rec.Result)})
		default:
			withCommit = append(withCommit, pending{n, rec})
			revs = append(revs, rec.Commit())
		}
	})
	hashes, errs, err := l.repo.LookupCommits(revs...)
	if err != nil {
		return nil, err
	}
	add := map[gitstore.Hash][]ledger.Record{}
	lineOf := map[string]int{}
	for k, p := range withCommit {
		if errs[k] != nil {
			rep.Skipped = append(rep.Skipped, ImportProblem{p.line, errs[k].Error()})
			continue
		}
		if p.rec.ID == "" {
			p.rec.ID = p.rec.DeriveID(hashes[k].String())
		}
		lineOf[p.rec.ID] = p.line
		add[hashes[k]] = append(add[hashes[k]], p.rec)
	}

	unlock, err := filelock.Lock(l.ledgerLock())
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := 0
	for _, rs := range add {
		n += len(rs)
	}
	next, err := l.update(func(_ *gitstore.Notes, ix *index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		// Warn about cycle numbers the ledger already has on other commits.
		rep.Warnings = rep.Warnings[:0]
		for commit, rs := range add {
			for _, r := range rs {
				if obj, ok := ix.find(r.Cycle); ok && obj != commit {
					rep.Warnings = append(rep.Warnings, ImportProblem{lineOf[r.ID],
						fmt.Sprintf("cycle %d is also recorded on commit %s; both records are kept", r.Cycle, obj.Short())})
				}
			}
		}
		return add, func(added int) string { return fmt.Sprintf("git evolve: import %d records", added) }, nil
	})
	if err != nil {
		return nil, err
	}
	rep.Stored = next.added
	rep.Present = n - next.added

	have, _, err := l.journal.Read()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, r := range have {
		ids[r.ID] = true
	}
	var fresh []ledger.Record
	for _, p := range withoutCommit {
		if p.rec.ID == "" {
			p.rec.ID = p.rec.DeriveID("")
		}
		if ids[p.rec.ID] {
			rep.Present++
			continue
		}
		ids[p.rec.ID] = true
		fresh = append(fresh, p.rec)
	}
	if err := l.journal.Append(fresh...); err != nil {
		return nil, err
	}
	rep.Journaled = len(fresh)
	return rep, nil
}

// Export returns the ledger as canonical JSON Lines in cycle order, with
// the journal's records too when journal is true. Lines that do not parse
// are returned as errors, not exported.
func (l *Ledger) Export(journal bool) ([]byte, []*NoteError, error) {
	lines, errs, err := l.Lines(ListOptions{Journal: journal}, nil)
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	for _, ln := range lines {
		b.Write(ln.Text)
		b.WriteByte('\n')
	}
	return b.Bytes(), errs, nil
}
