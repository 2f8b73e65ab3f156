// Package cycle keeps the record of evolve cycles and runs them. It
// appends records under the seeds' rules (known result, required fields
// for productive cycles, shas that name commits, unique cycle numbers that
// skip those open cycles reserved, the substantive-delta downgrade),
// taking cycle numbers under the ledger's lock; the ledger itself, its
// notes and the local journal, is the store package's.
//
// It is the cycle's state machine (start, finish, abort, revert), and the
// judge's hand: a cycle's work is judged in a checkout of its own
// (JudgeAt), first with the ruler files it changed put back as they were
// at its start, then with its own; the holdout checks and the census of
// its tests judge beside its goals (the rules are the gate package's).
//
// Nothing of the user's is lost to a cycle: what the working tree held of
// its own at the start (BaseRef) and its ignored files, within a budget
// (IgnoredRef), are kept as the cycle starts; a cycle's work is saved,
// index and working tree, before a revert or an abort; and a regressed or
// aborted cycle puts back what it removed or changed of them.
package cycle

import (
	"path/filepath"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/journal"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// Ledger is the cycle ledger of one repository with the cycles that write
// to it: the store's reads and writes, and the state machine's steps.
type Ledger struct {
	*store.Ledger
	repo     *gitstore.Repo
	journal  *journal.Journal
	stateDir string
	now      func() time.Time
	dieAt    string // DieAt
}

// Open returns the ledger of repo. now is the clock records are stamped with.
func Open(repo *gitstore.Repo, now func() time.Time) *Ledger {
	dir := filepath.Join(repo.CommonDir(), "evolve")
	return &Ledger{Ledger: store.Open(repo), repo: repo, journal: journal.At(dir), stateDir: dir, now: now}
}
