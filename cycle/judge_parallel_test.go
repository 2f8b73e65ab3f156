package cycle

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
)

// Runs in several worktrees of one repository judge at once, each making
// its judging checkout (git worktree add) the first time. git's worktree
// add reads the entries of the repository's other worktrees, and fails on
// one another add is still writing ("failed to read .../commondir"): the
// checkouts of a repository are made one at a time.
func TestJudgeCheckoutsMadeAtOnce(t *testing.T) {
	testenv.Slow(t)
	dir, commits := testRepo(t, 2)
	const n = 6
	var ledgers []*Ledger
	for i := range n {
		wt := filepath.Join(filepath.Dir(dir), fmt.Sprintf("wt%d", i))
		git(t, dir, "worktree", "add", "-q", "--detach", wt, commits[1])
		ledgers = append(ledgers, openLedger(t, wt))
	}
	commit, err := gitstore.ParseHash(commits[0])
	if err != nil {
		t.Fatal(err)
	}
	for round := range 30 {
		// made anew each round: the checkouts removed, their entries pruned
		for _, l := range ledgers {
			d, err := l.judgeDir()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
		}
		git(t, dir, "worktree", "prune")
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, l := range ledgers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j, err := l.JudgeAt(commit)
				if err != nil {
					errs[i] = err
					return
				}
				j.Release()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, worktree %d: %v", round, i, err)
			}
		}
	}
}
