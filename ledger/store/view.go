package store

import (
	"bytes"
	"errors"
	"os"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
)

// view is the ledger as Lines returns it (canonical lines in cycle order,
// each with its commit, and the lines that do not parse), for one notes
// commit. It is kept in the state directory so that reading the ledger
// again costs one file read, and brought up to date from the notes tree
// diff when the ledger moves. Like the cycle index it is derived state: a
// missing, stale or damaged view is rebuilt, never trusted over the notes.
// The file's format is in viewfile.go.
type view struct {
	notes  gitstore.Hash
	lines  []viewLine
	errors []*NoteError
	text   textArena // the notes read by add
	// The file readView read (mapped) and its blocks, which save copies
	// as they are where their lines did not change; the lines point into
	// the blocks inflated, not into the file. release lets them go.
	kept   *Kept
	blocks []savedBlock
}

type viewLine struct {
	Line
	commit gitstore.Hash
}

// release lets the file the view was read from go: its lines do not
// point into it, only the blocks save would copy.
func (v *view) release() {
	v.kept.Release()
	v.kept, v.blocks = nil, nil
}

func (l *Ledger) viewPath() string { return ViewPath(l.repo) }

// loadView returns the view of snap: the saved one when it describes snap,
// the saved one brought up to date when the notes moved since, or one built
// from the whole ledger.
func (l *Ledger) loadView(snap *gitstore.Notes) (*view, error) {
	v, err := readView(l.viewPath())
	if err == nil && v != nil && v.notes == snap.Commit() {
		v.release()
		return v, nil
	}
	// The saved view's file is let go once the view is saved (the blocks
	// whose lines did not change are copied from it).
	if v != nil {
		defer v.release()
	}
	var changes []gitstore.NoteChange
	if err == nil && v != nil && !v.notes.IsZero() {
		if changes, err = l.changesSince(v.notes, snap); err == nil && len(changes) > 1000 {
			err = errors.New("too many changes: rebuild")
		}
	}
	if err != nil || v == nil || v.notes.IsZero() {
		v = &view{}
		err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
			v.add(obj, data)
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		changed := make(map[gitstore.Hash]bool, len(changes))
		for _, c := range changes {
			changed[c.Object] = true
		}
		v.lines = slices.DeleteFunc(v.lines, func(ln viewLine) bool { return changed[ln.commit] })
		v.errors = slices.DeleteFunc(v.errors, func(e *NoteError) bool { return changed[e.Commit] })
		for _, c := range changes {
			for _, b := range c.New {
				data, err := l.repo.ReadBlob(b)
				if err != nil {
					return nil, err
				}
				v.add(c.Object, data)
			}
		}
	}
	v.notes = snap.Commit()
	v.sort()
	if err := v.save(l.viewPath()); err != nil { // the view only saves time
		gitstore.Tracef("the view is not saved: %v", err)
	}
	return v, nil
}

// sort puts the view's lines in a total order, so that equal summaries
// still sort the same way (and copies of one record come together), and
// its errors in the order of the notes.
func (v *view) sort() {
	slices.SortFunc(v.lines, compareViewLines)
	// the notes' errors in the order a read of every note meets them (by
	// the commit noted, then the line), however the view was brought
	// forward
	slices.SortStableFunc(v.errors, func(a, b *NoteError) int {
		if c := bytes.Compare(a.Commit[:], b.Commit[:]); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
}

// compareViewLines is the view's order: by summary, then text, then commit.
func compareViewLines(a, b viewLine) int {
	if c := a.Summary.Compare(&b.Summary); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Text, b.Text); c != 0 {
		return c
	}
	return bytes.Compare(a.commit[:], b.commit[:])
}

// add reads a note's lines into the view.
func (v *view) add(obj gitstore.Hash, data []byte) {
	// (the lines point into the copy)
	eachNoteLine(v.text.copy(data), obj, false, func(ln Line) {
		if len(v.lines) == cap(v.lines) {
			// Doubled, not grown by a quarter as append grows a large
			// slice: a view of 100,000 lines is 20 MB, and each growth
			// copies it.
			v.lines = slices.Grow(v.lines, max(1, len(v.lines)))
		}
		v.lines = append(v.lines, viewLine{ln, obj})
	}, func(e *NoteError) { v.errors = append(v.errors, e) })
}

// readView reads the whole view saved at path: nil (and no error) when
// there is none, or the file holds no lines, an error when it is not one
// that reads (damaged, of another format, or not read: busy past what a
// reader waits, or not readable).
func readView(path string) (*view, error) {
	k := OpenKept(path)
	if len(k.Section(SecLines)) == 0 {
		k.Release()
		if _, err := os.Lstat(path); err == nil && k == nil {
			return nil, &notAView{path}
		}
		return nil, nil
	}
	v, ok := parseView(k.Section(SecLines))
	if !ok {
		k.Release()
		return nil, &notAView{path}
	}
	v.kept = k
	return v, nil
}

type notAView struct{ path string }

func (e *notAView) Error() string { return e.path + ": not a ledger view" }
