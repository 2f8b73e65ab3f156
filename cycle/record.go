package cycle

import (
	"errors"
	"fmt"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
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
	Entry store.Entry
	// Downgraded is true when an improved cycle was stored as unchanged
	// because its delta touched only non-substantive paths.
	Downgraded bool
}

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
	head := toNotes && rec.CanonicalSHA == ""
	if head {
		rec.CanonicalSHA = "HEAD"
	}
	if err := l.resolveShas(&rec); err != nil {
		var ie *InputError
		if head && errors.As(err, &ie) && ie.Field == "canonical_sha" {
			// Not a flag the caller gave: HEAD. Unborn (no commit yet),
			// that is said; else git's own reason is.
			if _, born, rerr := l.repo.RefHash("HEAD"); rerr == nil && !born {
				return nil, &InputError{Msg: "there is no commit to record the cycle on (HEAD names none yet): commit first, or name the cycle's commit with --canonical-sha"}
			}
		}
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

	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	copies, err := l.CopiesMax()
	if err != nil {
		return nil, err
	}
	err = l.Update(func(snap *gitstore.Notes, ix *store.Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
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
			res.Entry = store.Entry{Record: rec, Journal: true}
			return nil, nil, l.journal.Append(rec)
		}
		commit, _ := gitstore.ParseHash(rec.CanonicalSHA)
		if err := l.Stamp(&rec, snap, ix); err != nil {
			return nil, nil, err
		}
		rec.ID = rec.DeriveID(commit.String())
		res.Entry = store.Entry{Record: rec, Commit: commit}
		return map[gitstore.Hash][]ledger.Record{commit: {rec}},
			func(int) string { return fmt.Sprintf(store.RecordSubject, rec.Cycle, rec.Result) }, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
func cycleIn(ix *store.Index, journal []ledger.Record, n int) (string, bool, error) {
	if obj, ok, err := ix.Find(n); err != nil || ok {
		return "on commit " + obj.Short(), ok, err
	}
	for _, r := range journal {
		if r.Cycle == n {
			return "in the local journal", true, nil
		}
	}
	return "", false, nil
}
