package cycle

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

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
// shape, and their legacy names) on the commits they name, in one notes
// commit. Records that name no commit go to the journal. Records the ledger
// already holds (same id; a record without an id gets one derived from its
// content) are not added again, so importing a file twice adds nothing.
// Lines that do not parse, or name a commit this repository does not have,
// are skipped and reported; the rest are still stored.
func (l *Ledger) Import(data []byte) (*ImportReport, error) {
	rep := &ImportReport{}
	type pending struct {
		line int
		rec  ledger.Record
	}
	var withCommit, withoutCommit []pending
	var revs []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, err := ledger.Parse(line)
		if err != nil {
			rep.Skipped = append(rep.Skipped, ImportProblem{i + 1, err.Error()})
			continue
		}
		if rec.Commit() == "" {
			withoutCommit = append(withoutCommit, pending{i + 1, rec})
			continue
		}
		withCommit = append(withCommit, pending{i + 1, rec})
		revs = append(revs, rec.Commit())
	}
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

	unlock, err := lockFile(filepath.Join(l.stateDir, "ledger.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	var ix *index
	for attempt := 1; ; attempt++ {
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			return nil, err
		}
		if ix, err = l.loadIndex(snap); err != nil {
			return nil, err
		}
		n := 0
		for _, rs := range add {
			n += len(rs)
		}
		next, err := l.writeNotes(snap, add, func(added int) string {
			return fmt.Sprintf("git evolve: import %d records", added)
		})
		if errors.Is(err, gitstore.ErrRefChanged) && attempt < maxAttempts {
			time.Sleep(time.Duration(1+rand.IntN(5*attempt)) * time.Millisecond)
			continue
		}
		if err != nil {
			return nil, err
		}
		rep.Stored = next.added
		rep.Present = n - next.added
		// Warn about cycle numbers the ledger already had on other records.
		for commit, rs := range add {
			for _, r := range rs {
				if obj, ok := ix.find(r.Cycle); ok && obj != commit {
					rep.Warnings = append(rep.Warnings, ImportProblem{lineOf[r.ID],
						fmt.Sprintf("cycle %d is also recorded on commit %s; both records are kept", r.Cycle, obj.Short())})
				}
			}
		}
		ix.notes = next.snap.Commit()
		for obj, cycles := range next.cycles {
			ix.set(obj, cycles)
		}
		_ = ix.save(l.indexPath())
		break
	}

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
