package store

import (
	"encoding/json"
	"os"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Stamp adds to a record about to be written what the shared ledger needs
// to stay honest: "prev", the id and digest of the last record the ledger
// holds (so that a record edited or deleted later is found by the one that
// came after it), and who recorded it and where. A write redone on a
// ledger that moved is stamped again: the link is the new ledger's.
func (l *Ledger) Stamp(rec *ledger.Record, snap *gitstore.Notes, ix *Index) error {
	if rec.Extra == nil {
		rec.Extra = map[string]json.RawMessage{}
	}
	delete(rec.Extra, "prev")
	last, err := l.lastRecord(snap, ix)
	if err != nil {
		return err
	}
	if last != nil && last.ID != rec.ID {
		rec.Extra["prev"] = ledger.Value(ledger.Link(last))
	}
	_, committer, err := l.repo.Identity()
	if err != nil {
		return err
	}
	rec.Extra["recorded_by"] = ledger.Value(committer.Name + " <" + committer.Email + ">")
	if host := Host(); host != "" {
		rec.Extra["host"] = ledger.Value(host)
	}
	return nil
}

// Host is the machine records (and the loop's events) are made on:
// GIT_EVOLVE_HOST when it is set (tests, or a name the team prefers), else
// the host name.
func Host() string {
	if h := os.Getenv("GIT_EVOLVE_HOST"); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}

// lastRecord is the ledger's last record with an id in listing order
// (ledger.Less), found through the cycle index: its head when it knows it
// (an index made from the view), else the last of the largest cycle, read
// from the notes that hold it (each blob once: copies share one). A record
// with no id (plain git's, the seeds') cannot be linked to: the cycles
// below are read, at most lastRecordDepth of them (an index made from the
// history is made whole for them, and knows its head then). It is nil for
// a ledger with no such record.
func (l *Ledger) lastRecord(snap *gitstore.Notes, ix *Index) (*ledger.Record, error) {
	top := ix.Max()
	for n, depth := top, 0; n > 0 && depth < lastRecordDepth; n, depth = n-1, depth+1 {
		if ix.headKnown {
			return ix.head, nil
		}
		if n != top && ix.whole != nil {
			if err := ix.complete(); err != nil {
				return nil, err
			}
			if ix.headKnown {
				return ix.head, nil
			}
		}
		best, err := l.lastOfCycle(snap, ix, n)
		if err != nil || best != nil {
			return best, err
		}
	}
	return nil, nil
}

// lastRecordDepth bounds the cycles lastRecord reads past records with no
// id: a ledger whose last ones are all plain git's starts its chain anew.
const lastRecordDepth = 64

// lastOfCycle is the last record with an id of cycle n (nil when there is
// none).
func (l *Ledger) lastOfCycle(snap *gitstore.Notes, ix *Index, n int) (*ledger.Record, error) {
	holders, err := ix.holders(n)
	if err != nil || len(holders) == 0 {
		return nil, err
	}
	notes, err := notesOf(snap, holders)
	if err != nil {
		return nil, err
	}
	var best *ledger.Record
	read := map[gitstore.Hash]bool{} // copies share one blob: read it once
	for _, obj := range holders {
		for _, b := range notes[obj] {
			if read[b] {
				continue
			}
			read[b] = true
			data, err := l.repo.ReadBlob(b)
			if err != nil {
				return nil, err
			}
			recs, _ := ledger.ParseLines(data)
			for i := range recs {
				if r := &recs[i]; r.Cycle == n && r.ID != "" && (best == nil || ledger.Less(best, r)) {
					best = r
				}
			}
		}
	}
	return best, nil
}

// notesOf finds the notes of commits in snap: one lookup when they are
// few, else one descent of the notes tree that reads each tree on the way
// to them once (a ledger that copied one record to many commits, or an
// import's batch, must not make each lookup read the trees again).
func notesOf(snap *gitstore.Notes, commits []gitstore.Hash) (map[gitstore.Hash][]gitstore.Hash, error) {
	if len(commits) != 1 {
		return snap.FindMany(commits)
	}
	found, err := snap.Find(commits[0])
	return map[gitstore.Hash][]gitstore.Hash{commits[0]: found}, err
}
