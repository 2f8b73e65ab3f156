package cycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Disclosure is what a finished cycle's record says it changed (cycle
// finish writes it): the files, the files of its ruler apart (those a
// person accepted among them), and the tests that passed at its start and
// at its finish. A field of another shape (a record written by hand, or by
// another tool) reads as absent.
type Disclosure struct {
	// Changed are the files the cycle changed, as the record lists them:
	// "+ path", "- path" or "M path", at most MaxChanged.
	Changed []string
	// Ruler are the ruler files it changed, in path order: those of
	// ruler_changed, and those of ruler_accepted.
	Ruler []DisclosedRuler
	// Tests is the count of the tests that passed, when the runner could
	// tell (tests_passed).
	Tests *CensusCount
}

// MaxChanged is the most files a record lists as changed.
const MaxChanged = maxChanged

// DisclosedRuler is a ruler file a cycle changed, as its record says.
type DisclosedRuler struct {
	// Status is "+" (the cycle added it), "-" (removed it), "M" (changed
	// it), or "" when the record does not say (an accepted change of a
	// file past the changed list's bound).
	Status string
	Path   string
	// Accepted is who accepted the change and why; nil when no one did.
	Accepted *Accepted
}

// String is the change as the record lists it: "M add_test.go" (the path
// alone when the record does not say how it changed).
func (d DisclosedRuler) String() string {
	if d.Status == "" {
		return d.Path
	}
	return d.Status + " " + d.Path
}

// Disclose reads a record's changed, ruler_changed, ruler_accepted and
// tests_passed.
func Disclose(r *ledger.Record) Disclosure {
	var d Disclosure
	var changed, ruler []string
	if json.Unmarshal(r.Extra["changed"], &changed) == nil {
		d.Changed = changed
	}
	status := map[string]string{}
	for _, c := range d.Changed {
		if st, p, ok := ParseChange(c); ok {
			status[p] = st
		}
	}
	seen := map[string]int{}
	if json.Unmarshal(r.Extra["ruler_changed"], &ruler) == nil {
		for _, c := range ruler {
			if st, p, ok := ParseChange(c); ok {
				if _, dup := seen[p]; !dup {
					seen[p] = len(d.Ruler)
					d.Ruler = append(d.Ruler, DisclosedRuler{Status: st, Path: p})
				}
			}
		}
	}
	var accepted []Accepted
	if json.Unmarshal(r.Extra["ruler_accepted"], &accepted) == nil {
		for _, a := range accepted {
			if a.Path == "" {
				continue
			}
			a := a
			if i, dup := seen[a.Path]; dup {
				d.Ruler[i].Accepted = &a
				continue
			}
			seen[a.Path] = len(d.Ruler)
			d.Ruler = append(d.Ruler, DisclosedRuler{Status: status[a.Path], Path: a.Path, Accepted: &a})
		}
	}
	sort.SliceStable(d.Ruler, func(i, j int) bool { return d.Ruler[i].Path < d.Ruler[j].Path })
	var tests CensusCount
	if raw := r.Extra["tests_passed"]; raw != nil && json.Unmarshal(raw, &tests) == nil {
		d.Tests = &tests
	}
	return d
}

// parseChange reads an entry of a record's list of changes: "M path".
func ParseChange(s string) (status, path string, ok bool) {
	st, p, ok := strings.Cut(s, " ")
	if !ok || p == "" || (st != "+" && st != "-" && st != "M") {
		return "", "", false
	}
	return st, p, true
}

// Judged names what a finished cycle's changes are read between: the
// commit it started from, and its work as it was judged.
type Judged struct {
	Start, Work gitstore.Hash
	// Saved says Work is the saved work of a regressed cycle (kept under
	// RegressedRef in the clone that judged it), not a delivered commit.
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
	DisclosedRuler
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
func (l *Ledger) RulerFiles(j Judged, ruler []DisclosedRuler) ([]RulerFile, error) {
	if len(ruler) == 0 {
		return nil, nil
	}
	changes, err := l.repo.ChangedFiles(j.Start, j.Work)
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
	sizes, err := l.repo.ObjectSizes(blobs)
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
