package store

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// TestMain runs the tests with a git of their own (internal/testenv).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// recorded is what recordWith stored.
type recorded struct{ Entry Entry }

// recordWith stores rec as the cycle package's Record does, through the
// store's API, without its rules: the commit it names (HEAD when none),
// the next number for cycle 0 (past the local ledger, the journal and the
// copies), a number taken refused, the link to the last record; records
// that are not productive go to the journal.
func recordWith(l *Ledger, rec ledger.Record) (*recorded, error) {
	toNotes := ledger.Productive(rec.Result) || rec.Result == ledger.Quarantined
	if toNotes && rec.CanonicalSHA == "" {
		rec.CanonicalSHA = "HEAD"
	}
	var commit gitstore.Hash
	if rec.CanonicalSHA != "" {
		hs, errs, err := l.repo.LookupCommits(rec.CanonicalSHA)
		if err != nil {
			return nil, err
		}
		if errs[0] != nil {
			return nil, errs[0]
		}
		commit = hs[0]
		rec.CanonicalSHA = commit.String()
	}
	rec.SHA = rec.CanonicalSHA
	rec.V = ledger.SchemaMajor
	rec.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	copies, err := l.CopiesMax()
	if err != nil {
		return nil, err
	}
	res := &recorded{}
	err = l.Update(func(snap *gitstore.Notes, ix *Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		journal, _, err := l.journal.Read()
		if err != nil {
			return nil, nil, err
		}
		free := ix.Max()
		for _, r := range journal {
			free = max(free, r.Cycle)
		}
		free = max(free, copies) + 1
		if rec.Cycle == 0 {
			rec.Cycle = free
		} else if obj, ok, err := ix.Find(rec.Cycle); err != nil || ok {
			if err != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("cycle %d is already in the ledger (on commit %s)", rec.Cycle, obj.Short())
		}
		if !toNotes {
			rec.ID = rec.DeriveID("")
			res.Entry = Entry{Record: rec, Journal: true}
			return nil, nil, l.journal.Append(rec)
		}
		if err := l.Stamp(&rec, snap, ix); err != nil {
			return nil, nil, err
		}
		rec.ID = rec.DeriveID(commit.String())
		res.Entry = Entry{Record: rec, Commit: commit}
		return map[gitstore.Hash][]ledger.Record{commit: {rec}},
			func(int) string { return fmt.Sprintf(RecordSubject, rec.Cycle, rec.Result) }, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
