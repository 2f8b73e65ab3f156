package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

// The last few records read from the notes history (a clone with no saved
// view) are the ones a read of every note gives, over histories made at
// random: records (whose notes commits name the largest cycle), notes plain
// git adds (any cycle, copies of a record, lines that do not parse), notes
// merged from another notes ref, and notes appended to or removed (after
// which the history bounds nothing and every note is read), for every limit
// and filter. With -short, the first 8 steps of the same history: records,
// merges and the first append, the steps read from the history.
func TestHistoryTailAgreesWithFullRead(t *testing.T) {
	dir, commits := testRepo(t, 48)
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	rng := rand.New(rand.NewPCG(5, 6))
	noted := map[string]bool{}
	var texts []string // lines written, for copies
	free := func() string {
		for _, i := range rng.Perm(len(commits)) {
			if !noted[commits[i]] {
				return commits[i]
			}
		}
		return ""
	}
	limits := []int{1, 2, 5}
	if testing.Short() {
		limits = limits[2:] // the inner loop's: one limit, every filter and option
	}
	answers := func() string {
		t.Helper()
		var b strings.Builder
		for _, limit := range limits {
			for fi, keep := range []func(*ledger.Summary) bool{nil, func(s *ledger.Summary) bool { return s.Cycle%2 == 0 }} {
				for _, opts := range []ListOptions{{Table: true}, {Presence: true, Journal: true, Copies: true}} {
					os.Remove(view)
					ls, err := openLedger(t, dir).Entries(opts, keep, limit)
					fmt.Fprintf(&b, "limit %d filter %d %+v: %v\n", limit, fi, opts, err)
					if err == nil {
						b.WriteString(entriesText(ls))
						for _, e := range ls.Errors {
							b.WriteString("error: " + e.Error() + "\n")
						}
					}
				}
			}
		}
		return b.String()
	}
	walked, steps := 0, 20
	kinds := map[string]int{}
	if testing.Short() {
		steps = 8
	}
	for step := 0; step < steps; step++ {
		var did []string
		// Notes only added for the first two thirds of the steps (read
		// from the history); then appended to and removed as well, after
		// which every note is read.
		late := step >= 2*steps/3
		noted1 := func() string {
			for _, i := range rng.Perm(len(commits)) {
				if noted[commits[i]] {
					return commits[i]
				}
			}
			return ""
		}
		for k := 1 + rng.IntN(3); k > 0; k-- {
			op := rng.IntN(10)
			if late {
				op = []int{0, 6, 8, 10, 11}[rng.IntN(5)] // record, add, merge, append, remove
			}
			switch {
			case op < 6:
				if c := free(); c != "" {
					record(t, openLedger(t, dir), c, 0)
					noted[c] = true
					did = append(did, "record")
				}
			case op < 8:
				// plain git's note on a commit with none: any cycle
				if c := free(); c != "" {
					line := plainNoteLine(rng, step, 40, texts)
					texts = append(texts, line)
					git(t, dir, "notes", "--ref=evolve", "add", "-m", line, c)
					noted[c] = true
					did = append(did, "add")
				}
			case op < 10:
				// notes another ref holds, merged by git: a merge commit
				// whose first parent is the ledger before
				c := free()
				if c == "" {
					break
				}
				git(t, dir, "notes", "--ref=other", "add", "-f", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"target":"m%d","result":"improved"}`, 1+rng.IntN(60), step), c)
				git(t, dir, "notes", "--ref=evolve", "merge", "-q", "other")
				noted[c] = true
				did = append(did, "merge")
			case op < 11:
				if c := noted1(); c != "" {
					git(t, dir, "notes", "--ref=evolve", "append", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"result":"harvested"}`, 70+step), c)
					did = append(did, "append")
				}
			default:
				if c := noted1(); c != "" {
					git(t, dir, "notes", "--ref=evolve", "remove", c)
					delete(noted, c)
					did = append(did, "remove")
				}
			}
		}
		got := answers()
		if _, err := os.Stat(view); err != nil {
			walked++ // answered without a view: from the history
			for _, d := range did {
				kinds[d+", read from the history"]++
			}
		}
		for _, d := range did {
			kinds[d]++
		}
		func() {
			defer func(n int) { historyTailCommits = n }(historyTailCommits)
			historyTailCommits = 0 // every note read
			if want := answers(); got != want {
				t.Fatalf("step %d after %s: the answers differ\ngot:\n%s\nwant, reading every note:\n%s", step, strings.Join(did, ", "), got, want)
			}
		}()
	}
	if walked < 5 {
		t.Errorf("%d of %d reads came from the history", walked, steps)
	}
	// what the histories held (the whole run: -short runs its first steps)
	want := []string{"record", "add", "merge", "append", "remove", "record, read from the history",
		"add, read from the history", "merge, read from the history"}
	for _, k := range want {
		if kinds[k] == 0 && !testing.Short() {
			t.Errorf("no step did %q: %v", k, kinds)
		}
	}
}

// A notes commit that names a smaller cycle than the notes it added hold
// bounds nothing: the whole ledger is read.
func TestHistoryTailDistrustsAWrongBound(t *testing.T) {
	dir, commits := testRepo(t, 6)
	for i := 0; i < 5; i++ {
		record(t, openLedger(t, dir), commits[i], 0)
	}
	// cycle 9 added by a commit that says the largest is 3
	tip := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve"))
	git(t, dir, "notes", "--ref=evolve", "add", "-m", `{"v":1,"cycle":9,"target":"x","result":"improved"}`, commits[5])
	tree := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	lie := strings.TrimSpace(git(t, dir, "commit-tree", tree, "-p", tip, "-m", "git evolve: record cycle 9 (improved)\n\n"+ledger.LargestTrailer+": 3"))
	git(t, dir, "update-ref", "refs/notes/evolve", lie)
	l := openLedger(t, dir)
	snap, _, err := l.snapshots()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := l.historyOf(snap).tail(2); v != nil {
		t.Fatalf("the history gave %d lines past a commit whose notes hold more than it names", len(v.lines))
	}
}

// A ledger whose notes commits name no bound (plain git's, or written
// before records named one) is read whole after a few dozen commits, not
// walked back thousands.
func TestHistoryTailGivesUpWithoutABound(t *testing.T) {
	defer func(n int) { historyTailUnbounded = n }(historyTailUnbounded)
	historyTailUnbounded = 8
	dir, commits := testRepo(t, 40)
	for i, c := range commits {
		git(t, dir, "notes", "--ref=evolve", "add", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"target":"t","result":"improved"}`, i+1), c)
	}
	l := openLedger(t, dir)
	snap, _, err := l.snapshots()
	if err != nil {
		t.Fatal(err)
	}
	w := l.historyOf(snap)
	if v, _ := w.tail(2); v != nil {
		t.Fatalf("the history gave %d lines with no bound", len(v.lines))
	}
	if w.commits > 2*historyTailUnbounded {
		t.Errorf("%d commits read before giving up", w.commits)
	}
}
