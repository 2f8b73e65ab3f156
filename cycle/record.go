package cycle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// InputError is a request that breaks one of the ledger's rules. Field
// names the record field at fault (and so the flag that set it). Nothing
// was written.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

// fieldInput turns a schema rule the record breaks into an InputError.
func fieldInput(err error) error {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return &InputError{Field: fe.Field, Msg: fe.Reason}
	}
	return err
}

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// RecordResult is what Record stored.
type RecordResult struct {
	Entry Entry
	// Downgraded is true when an improved cycle was stored as unchanged
	// because its delta touched only non-substantive paths.
	Downgraded bool
}

// maxAttempts bounds how often a write is redone after losing a race with
// another writer of the notes ref.
const maxAttempts = 20

// Record stores one cycle record. The record's sha fields hold revisions
// as the user gave them (they are resolved here); Cycle 0 asks for the next
// number. Productive and quarantined records become part of the note on
// their canonical commit (HEAD when none is given); idle and unchanged
// records go to the local journal. It returns an *InputError when the
// request breaks a rule, in which case nothing is written.
func (l *Ledger) Record(rec ledger.Record) (*RecordResult, error) {
	if !ledger.ValidResult(rec.Result) {
		return nil, fieldInput(rec.Validate())
	}
	auto := rec.Cycle == 0
	toNotes := ledger.Productive(rec.Result) || rec.Result == ledger.Quarantined
	if toNotes && rec.CanonicalSHA == "" {
		rec.CanonicalSHA = "HEAD"
	}
	if err := l.resolveShas(&rec); err != nil {
		return nil, err
	}
	if rec.LogSHA == rec.CanonicalSHA {
		rec.LogSHA = "" // a log_sha is the bookkeeping commit when it is another
	}
	rec.SHA = rec.CanonicalSHA
	rec.V = ledger.SchemaMajor
	if auto {
		rec.Cycle = 1 // a placeholder for validation; the number is taken under the lock
	}
	if err := rec.Validate(); err != nil {
		return nil, fieldInput(err)
	}
	if ledger.Productive(rec.Result) && rec.Target == "" {
		return nil, inputErr("target", "a cycle whose result is %s names its target (--target: a goal id, or parallel-wave with --goal-ids)", rec.Result)
	}
	if _, err := ledger.Parse(rec.Marshal()); err != nil {
		// Never store what the ledger's own reader would reject.
		return nil, fieldInput(err)
	}
	res := &RecordResult{}
	if rec.Result == ledger.Improved && rec.CycleStartSHA != "" {
		start, _ := gitstore.ParseHash(rec.CycleStartSHA)
		end, _ := gitstore.ParseHash(rec.CanonicalSHA)
		// The non-substantive paths of the goals file the cycle delivered.
		var extra []string
		if f, _, err := l.treeGoals(end); err == nil {
			extra = f.NonSubstantive
		}
		deltas, err := l.fileDeltas(start, end, extra)
		if err != nil {
			return nil, err
		}
		if substantiveDelta(deltas).Files == 0 {
			rec.Result = ledger.Unchanged
			res.Downgraded = true
			toNotes = false
		}
	}
	rec.Timestamp = l.now().Format(time.RFC3339)

	unlock, err := filelock.Lock(l.ledgerLock())
	if err != nil {
		return nil, err
	}
	defer unlock()
	copies, err := l.copiesMax()
	if err != nil {
		return nil, err
	}
	_, err = l.update(func(snap *gitstore.Notes, ix *index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		journal, _, err := l.journal.Read()
		if err != nil {
			return nil, nil, err
		}
		reserved, err := l.reserved()
		if err != nil {
			return nil, nil, err
		}
		free := max(nextFree(ix, journal, reserved), copies+1)
		if auto {
			rec.Cycle = free
		} else if id, ok := reserved[rec.Cycle]; ok {
			return nil, nil, inputErr("cycle", "cycle %d is taken by an open cycle (id %s); omit --cycle to take the next number, %d", rec.Cycle, id, free)
		} else if where, ok, err := cycleIn(ix, journal, rec.Cycle); err != nil || ok {
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, inputErr("cycle", "cycle %d is already in the ledger (%s); omit --cycle to take the next number, %d", rec.Cycle, where, free)
		}
		if !toNotes {
			rec.ID = rec.DeriveID("")
			res.Entry = Entry{Record: rec, Journal: true}
			return nil, nil, l.journal.Append(rec)
		}
		commit, _ := gitstore.ParseHash(rec.CanonicalSHA)
		if err := l.stamp(&rec, snap, ix); err != nil {
			return nil, nil, err
		}
		rec.ID = rec.DeriveID(commit.String())
		res.Entry = Entry{Record: rec, Commit: commit}
		return map[gitstore.Hash][]ledger.Record{commit: {rec}},
			func(int) string { return fmt.Sprintf(recordSubject, rec.Cycle, rec.Result) }, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// update writes records into the ledger's notes, under the ledger lock the
// caller holds. build sees the notes and the cycle index as they are and
// returns what to add (nil: no notes to write) and the notes commit's
// message; when another writer moved the ledger first, build runs again on
// the new ledger.
func (l *Ledger) update(build func(snap *gitstore.Notes, ix *index) (map[gitstore.Hash][]ledger.Record, func(added int) string, error)) (*written, error) {
	return l.updateWith(l.loadIndex, build)
}

// updateWith is update with the index of the notes as they are given by
// load (a writer of many batches keeps the one it had).
func (l *Ledger) updateWith(load func(*gitstore.Notes) (*index, error), build func(snap *gitstore.Notes, ix *index) (map[gitstore.Hash][]ledger.Record, func(added int) string, error)) (*written, error) {
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
		top := ix.max()
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

// resolveShas turns the revisions in the sha fields into full commit names.
func (l *Ledger) resolveShas(rec *ledger.Record) error {
	fields := []struct {
		name string
		val  *string
	}{{"canonical_sha", &rec.CanonicalSHA}, {"cycle_start_sha", &rec.CycleStartSHA}, {"log_sha", &rec.LogSHA}}
	var revs []string
	var which []int
	for i, f := range fields {
		if *f.val != "" {
			revs = append(revs, *f.val)
			which = append(which, i)
		}
	}
	hashes, errs, err := l.repo.LookupCommits(revs...)
	if err != nil {
		return err
	}
	for k, i := range which {
		if errs[k] != nil {
			return inputErr(fields[i].name, "%v", errs[k])
		}
		*fields[i].val = hashes[k].String()
	}
	return nil
}

// cycleIn says where cycle n is recorded, if it is: on a commit (the index
// of the notes) or in the local journal.
func cycleIn(ix *index, journal []ledger.Record, n int) (string, bool, error) {
	if obj, ok, err := ix.find(n); err != nil || ok {
		return "on commit " + obj.Short(), ok, err
	}
	for _, r := range journal {
		if r.Cycle == n {
			return "in the local journal", true, nil
		}
	}
	return "", false, nil
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
	out := &written{}
	var edits []gitstore.NoteEdit
	commits := make([]gitstore.Hash, 0, len(add))
	for commit := range add {
		commits = append(commits, commit)
	}
	notes, err := notesOf(snap, commits)
	if err != nil {
		return nil, err
	}
	for commit, recs := range add {
		blobs := notes[commit]
		var have []ledger.Record
		var original []byte // the note as it is, when it holds text that is not a record
		foreign := false
		for _, b := range blobs {
			data, err := l.repo.ReadBlob(b)
			if err != nil {
				return nil, err
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
			continue // nothing new on this commit
		}
		out.added += len(have) - n
		content := ledger.FormatNote(have, nil)
		if foreign {
			// Text that is not a record (a person's note, a broken line)
			// is kept byte for byte; the new records follow it.
			content = append(original, ledger.FormatNote(have[n:], nil)...)
		}
		blob, err := l.repo.WriteBlob(content)
		if err != nil {
			return nil, err
		}
		edits = append(edits, gitstore.NoteEdit{Object: commit, Blob: blob})
	}
	if len(edits) == 0 {
		out.snap = snap
		return out, nil
	}
	tree, err := snap.ApplyNotes(edits, extras)
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
	unlock, err := filelock.Lock(l.ledgerLock())
	if err != nil {
		return 0, err
	}
	defer unlock()
	w, err := l.update(func(*gitstore.Notes, *index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		return copies, func(n int) string { return fmt.Sprintf("git evolve: relink %d record(s)", n) }, nil
	})
	if err != nil || w == nil {
		return 0, err
	}
	return w.added, nil
}
