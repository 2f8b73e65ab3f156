package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// maxAttempts bounds how often a write is redone after losing a race with
// another writer of the notes ref.
const maxAttempts = 20

// Update writes records into the ledger's notes, under the ledger lock
// (LockPath) the caller holds. build sees the notes and the cycle index as
// they are and returns what to add to the notes of which commit (nil: no
// notes to write) and the notes commit's subject, given how many records
// were new; when another writer moved the ledger first, build runs again on
// the new ledger, so it must make what it adds from what it is given.
func (l *Ledger) Update(build func(snap *gitstore.Notes, ix *Index) (map[gitstore.Hash][]ledger.Record, func(added int) string, error)) error {
	_, err := l.update(build)
	return err
}

// update writes records into the ledger's notes, under the ledger lock the
// caller holds. build sees the notes and the cycle index as they are and
// returns what to add (nil: no notes to write) and the notes commit's
// message; when another writer moved the ledger first, build runs again on
// the new ledger.
func (l *Ledger) update(build func(snap *gitstore.Notes, ix *Index) (map[gitstore.Hash][]ledger.Record, func(added int) string, error)) (*written, error) {
	return l.updateWith(l.loadIndex, build)
}

// updateWith is update with the index of the notes as they are given by
// load (a writer of many batches keeps the one it had).
func (l *Ledger) updateWith(load func(*gitstore.Notes) (*Index, error), build func(snap *gitstore.Notes, ix *Index) (map[gitstore.Hash][]ledger.Record, func(added int) string, error)) (*written, error) {
	for attempt := 1; ; attempt++ {
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			return nil, err
		}
		ix, err := load(snap)
		if err != nil {
			return nil, err
		}
		add, message, err := build(snap, ix)
		if err != nil || add == nil {
			return nil, err
		}
		// The largest cycle once written, for the next reader of the
		// history (indexFromHistory, historyTail).
		top := ix.Max()
		for _, rs := range add {
			for _, r := range rs {
				top = max(top, r.Cycle)
			}
		}
		withTop := func(added int) string { return fmt.Sprintf("%s\n\n%s: %d", message(added), ledger.LargestTrailer, top) }
		next, err := l.writeNotes(snap, add, withTop)
		if retry(err, attempt) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// The cycle index an older git-evolve kept on disk: nothing reads
		// it now.
		_ = os.Remove(filepath.Join(l.stateDir, "cycles.idx"))
		return next, nil
	}
}

// retry reports whether a write that failed with err is worth redoing, and
// waits before it is: after losing a compare-and-swap to another writer
// (redone at once, on the new ledger), or while another git holds the ref
// locked (for up to about a second; a lock that outlives that is reported
// with git's message).
func retry(err error, attempt int) bool {
	var locked *gitstore.LockedError
	switch {
	case errors.Is(err, gitstore.ErrRefChanged) && attempt < maxAttempts:
		time.Sleep(time.Duration(1+rand.IntN(5*attempt)) * time.Millisecond)
		return true
	case errors.As(err, &locked) && attempt < 8:
		time.Sleep(time.Duration(25*attempt) * time.Millisecond)
		return true
	}
	return false
}

// written is the outcome of writeNotes.
type written struct {
	snap  *gitstore.Notes
	added int // records that were not there yet
}

// writeNotes adds records to the notes of their commits in one notes
// commit on top of snap. Records whose id a note already holds are not added
// twice. A note of records only is written in canonical form (sorted lines,
// as cat_sort_uniq leaves them); a note that also holds other text is kept
// byte for byte, with the new records after it. It
// returns an error wrapping gitstore.ErrRefChanged when the ref moved since
// snap was read, and an error when the ledger's schema is newer than ours.
func (l *Ledger) writeNotes(snap *gitstore.Notes, add map[gitstore.Hash][]ledger.Record, message func(added int) string) (*written, error) {
	extras, err := l.markerEdit(snap)
	if err != nil {
		return nil, err
	}
	// an older layout's index of cycles, if there is one, goes
	if extras, err = snap.TakingOut(extras, ledger.OldIndexNames...); err != nil {
		return nil, err
	}
	out := &written{}
	var edits []gitstore.NoteEdit
	commits := make([]gitstore.Hash, 0, len(add))
	for commit := range add {
		commits = append(commits, commit)
	}
	// Notes another tool left on the levels this write rewrites where git
	// notes leaves none (beside a fanout subtree, or under a name another
	// note's is but for case) are written again with it: into the subtree
	// of their prefix, each joined from all its copies, as a write of git
	// notes joins and moves them. Left there, one would make every later
	// write build the index of cycles again from every note; the other
	// would lose a copy to a write that keeps one name of each.
	rewrite, err := snap.NotesToRewrite(commits)
	if err != nil {
		return nil, err
	}
	notes, err := notesOf(snap, append(slices.Clone(commits), rewrite...))
	if err != nil {
		return nil, err
	}
	edited := map[gitstore.Hash]bool{}
	for commit, recs := range add {
		content, added, same, err := l.mergedNote(notes[commit], recs)
		if err != nil {
			return nil, err
		}
		if same {
			continue // nothing new on this commit
		}
		out.added += added
		blob, err := l.repo.WriteBlob(content)
		if err != nil {
			return nil, err
		}
		edits = append(edits, gitstore.NoteEdit{Object: commit, Blob: blob})
		edited[commit] = true
	}
	if len(edits) > 0 {
		for _, commit := range rewrite {
			if edited[commit] {
				continue
			}
			blob := gitstore.ZeroHash
			switch blobs := notes[commit]; len(blobs) {
			case 0:
				continue // (every copy is found: none to move)
			case 1:
				blob = blobs[0] // one note: moved as it is
			default:
				content, _, _, err := l.mergedNote(blobs, nil)
				if err != nil {
					return nil, err
				}
				if blob, err = l.repo.WriteBlob(content); err != nil {
					return nil, err
				}
			}
			edits = append(edits, gitstore.NoteEdit{Object: commit, Blob: blob})
		}
	}
	if len(edits) == 0 {
		out.snap = snap
		return out, nil
	}
	tree, err := snap.ApplyNotesIndexed(edits, extras, CycleIndex)
	if err != nil {
		return nil, err
	}
	author, committer, err := l.repo.Identity()
	if err != nil {
		return nil, err
	}
	if out.snap, err = snap.CommitNotes(NotesRef, tree, message(out.added)+"\n", author, committer); err != nil {
		return nil, err
	}
	return out, nil
}

// mergedNote is the note of a commit whose notes are blobs (one, or
// copies at several paths) with recs added: its records, and recs whose id
// it does not hold, in canonical form, or, when it holds text that is not
// a record (a person's note, a broken line), that text byte for byte with
// the new records after it. added is how many of recs were new; same says
// the note is one blob already holding them all.
func (l *Ledger) mergedNote(blobs []gitstore.Hash, recs []ledger.Record) (content []byte, added int, same bool, err error) {
	var have []ledger.Record
	var original []byte // the note as it is, when it holds text that is not a record
	foreign := false
	for _, b := range blobs {
		data, err := l.repo.ReadBlob(b)
		if err != nil {
			return nil, 0, false, err
		}
		rs, bad := ledger.ParseLines(data)
		have = append(have, rs...)
		foreign = foreign || len(bad) > 0
		original = append(original, data...)
		if len(original) > 0 && original[len(original)-1] != '\n' {
			original = append(original, '\n')
		}
	}
	ids := map[string]bool{}
	for _, r := range have {
		ids[r.ID] = true
	}
	n := len(have)
	for _, r := range recs {
		if !ids[r.ID] {
			ids[r.ID] = true
			have = append(have, r)
		}
	}
	if len(have) == n && len(blobs) == 1 {
		return nil, 0, true, nil
	}
	content = ledger.FormatNote(have, nil)
	if foreign {
		// Text that is not a record is kept byte for byte; the new
		// records follow it.
		content = append(original, ledger.FormatNote(have[n:], nil)...)
	}
	return content, len(have) - n, false, nil
}

// CycleIndex is the ledger's index of cycles in its notes tree
// (ledger.IndexName), which every writer of the ledger keeps.
var CycleIndex = &gitstore.NotesIndex{Name: ledger.IndexName, Keys: ledger.IndexKeys}

// markerEdit checks the ledger's schema marker and returns the root entry
// to write when the marker is missing or older than this binary's.
func (l *Ledger) markerEdit(snap *gitstore.Notes) (map[string]gitstore.Hash, error) {
	h, ok, err := snap.NonNote(ledger.MarkerName)
	if err != nil {
		return nil, err
	}
	want := ledger.MarkerBytes()
	if ok {
		data, err := l.repo.ReadBlob(h)
		if err != nil {
			return nil, err
		}
		if err := ledger.CheckWritable(data); err != nil {
			return nil, err
		}
		if string(data) == string(want) {
			return nil, nil
		}
	}
	mh, err := l.repo.WriteBlob(want)
	if err != nil {
		return nil, err
	}
	return map[string]gitstore.Hash{ledger.MarkerName: mh}, nil
}

// Attach adds copies of records, as they are, to the notes of other
// commits (relink: the commits that carry a cycle's work after a
// cherry-pick, a squash merge or a rebase). A note that holds the record
// already is left alone. It returns how many copies were added.
func (l *Ledger) Attach(copies map[gitstore.Hash][]ledger.Record) (int, error) {
	if len(copies) == 0 {
		return 0, nil
	}
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return 0, err
	}
	defer unlock()
	w, err := l.update(func(*gitstore.Notes, *Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		return copies, func(n int) string { return fmt.Sprintf("git evolve: relink %d record(s)", n) }, nil
	})
	if err != nil || w == nil {
		return 0, err
	}
	return w.added, nil
}
