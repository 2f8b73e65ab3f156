package rulerdiff

import (
	"errors"
	"fmt"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Judged names what a finished cycle's changes are read between: the
// commit it started from, and its work as it was judged.
type Judged struct {
	Start, Work gitstore.Hash
	// Saved says Work is the saved work of a regressed cycle (kept under
	// ledger.RegressedRef in the clone that judged it), not a delivered commit.
	Saved bool
}

// JudgedOf returns what a finished cycle's record names as its start and
// its work as judged: the delivered commit of an improved cycle, the saved
// work of a regressed one; ok is false when it names no such pair (a
// record another way, a later revert, an aborted cycle).
func JudgedOf(r *ledger.Record) (j Judged, ok bool) {
	var work string
	switch {
	case r.Result == ledger.Improved:
		work = r.Commit()
	case r.Result == ledger.Regressed && r.Extra["reverts_cycle"] == nil:
		work, j.Saved = r.ExtraString("saved"), true
	default:
		return Judged{}, false
	}
	start, err1 := gitstore.ParseHash(r.CycleStartSHA)
	w, err2 := gitstore.ParseHash(work)
	if err1 != nil || err2 != nil {
		return Judged{}, false
	}
	j.Start, j.Work = start, w
	return j, true
}

// RulerFile is a ruler file a finished cycle changed, as the commit it
// started from (Old) and its work as judged (New) hold it: a side without
// the file has a zero hash, mode 0 and size -1.
type RulerFile struct {
	ledger.DisclosedRuler
	Old, New         gitstore.Hash
	OldMode, NewMode uint32
	OldSize, NewSize int64
	// Same says the two commits hold the file alike: the record lists a
	// change they do not show.
	Same bool
}

// ErrWorkNotHere is returned by RulerFiles when the commits a record
// names are not in this clone: a ledger fetched without them (the saved
// work of a regressed cycle stays in the clone that judged it).
var ErrWorkNotHere = errors.New("the cycle's work is not in this clone")

// RulerFiles reads the ruler files of ruler, as the record of a finished
// cycle lists them, between the commits j names. It returns ErrWorkNotHere
// (wrapped) when either commit is missing.
func RulerFiles(repo *gitstore.Repo, j Judged, ruler []ledger.DisclosedRuler) ([]RulerFile, error) {
	if len(ruler) == 0 {
		return nil, nil
	}
	changes, err := repo.ChangedFiles(j.Start, j.Work)
	if err != nil {
		if errors.Is(err, gitstore.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: %v", ErrWorkNotHere, err)
		}
		return nil, err
	}
	byPath := make(map[string]*gitstore.FileChange, len(changes))
	for i := range changes {
		byPath[changes[i].Path] = &changes[i]
	}
	out := make([]RulerFile, len(ruler))
	var blobs []gitstore.Hash
	for i, d := range ruler {
		f := RulerFile{DisclosedRuler: d, OldSize: -1, NewSize: -1}
		if c, ok := byPath[d.Path]; ok {
			f.Old, f.New, f.OldMode, f.NewMode = c.Old, c.New, c.OldMode, c.NewMode
			if f.OldMode != 0 {
				blobs = append(blobs, f.Old)
			}
			if f.NewMode != 0 {
				blobs = append(blobs, f.New)
			}
		} else {
			f.Same = true
		}
		out[i] = f
	}
	sizes, err := repo.ObjectSizes(blobs)
	if err != nil {
		return nil, err
	}
	k := 0
	for i := range out {
		f := &out[i]
		if f.OldMode != 0 {
			f.OldSize, k = sizes[k], k+1
		}
		if f.NewMode != 0 {
			f.NewSize, k = sizes[k], k+1
		}
	}
	return out, nil
}
