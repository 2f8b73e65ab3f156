package cycle

import (
	"encoding/json"
	"os"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// stamp adds to a record about to be written what the shared ledger needs
// to stay honest: "prev", the id and digest of the last record the ledger
// holds (so that a record edited or deleted later is found by the one that
// came after it), and who recorded it and where.
func (l *Ledger) stamp(rec *ledger.Record, snap *gitstore.Notes, ix *index) error {
	if rec.Extra == nil {
		rec.Extra = map[string]json.RawMessage{}
	}
	last, err := l.lastRecord(snap, ix)
	if err != nil {
		return err
	}
	if last != nil && last.ID != rec.ID {
		rec.Extra["prev"] = mustJSON(ledger.Link(last))
	}
	_, committer, err := l.repo.Identity()
	if err != nil {
		return err
	}
	rec.Extra["recorded_by"] = mustJSON(committer.Name + " <" + committer.Email + ">")
	if host := Host(); host != "" {
		rec.Extra["host"] = mustJSON(host)
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

// lastRecord is the ledger's last record in listing order (ledger.Less),
// found through the cycle index: the highest cycle, read from its note.
// It is nil for an empty ledger.
func (l *Ledger) lastRecord(snap *gitstore.Notes, ix *index) (*ledger.Record, error) {
	n := ix.max()
	if n == 0 {
		return nil, nil
	}
	holders, err := ix.holders(n)
	if err != nil {
		return nil, err
	}
	notes, err := notesOf(snap, holders)
	if err != nil {
		return nil, err
	}
	var blobs []gitstore.Hash
	for _, obj := range holders {
		blobs = append(blobs, notes[obj]...)
	}
	var best *ledger.Record
	read := map[gitstore.Hash]bool{} // copies share one blob: read it once
	for _, b := range blobs {
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
			if r := &recs[i]; r.Cycle == n && (best == nil || ledger.Less(best, r)) {
				best = r
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
