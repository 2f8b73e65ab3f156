package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// The last few records and one cycle's records (show), read from a saved
// view of an older notes commit and the notes added since, are the ones a
// read with no view gives, over
// histories made at random: records, notes plain git adds (of any cycle,
// small or large, copies of a record, lines that do not parse), notes
// appended to, edited and removed (after which the view is brought up to
// date whole), for every limit and filter.
func TestTailForwardAgreesWithFullRead(t *testing.T) {
	testenv.Slow(t)
	defer func(s int) { tailSlack = s }(tailSlack)
	defer func(n int) { historyTailCommits = n }(historyTailCommits)
	tailSlack = 0 // tails of a few lines: the boundary is met often
	dir, commits := testRepo(t, 40)
	state := filepath.Join(dir, ".git", "evolve", "ledger.view")
	rng := rand.New(rand.NewPCG(3, 4))
	noted := map[string]bool{}
	var texts []string // lines written, for copies
	for i := 0; i < 6; i++ {
		record(t, openLedger(t, dir), commits[i], 0)
		noted[commits[i]] = true
	}
	free := func() string {
		for _, i := range rng.Perm(len(commits)) {
			if !noted[commits[i]] {
				return commits[i]
			}
		}
		return ""
	}
	answers := func() string {
		t.Helper()
		var b strings.Builder
		for _, limit := range []int{1, 3, 8} {
			for fi, keep := range []func(*ledger.Summary) bool{nil, func(s *ledger.Summary) bool { return s.Cycle%2 == 0 }} {
				for _, opts := range []ListOptions{{Table: true}, {Presence: true, Journal: true, Copies: true}} {
					ls, err := openLedger(t, dir).Entries(opts, keep, limit)
					fmt.Fprintf(&b, "limit %d filter %d %+v: %v\n", limit, fi, opts, err)
					if err == nil {
						b.WriteString(entriesText(ls))
					}
				}
			}
		}
		for _, n := range []int{0, 1, 3, 6, 9, 12, 20, 29, 50, 55, 60} {
			ls, err := openLedger(t, dir).cycleEntries(n)
			fmt.Fprintf(&b, "cycle %d: %v\n", n, err)
			if err == nil {
				b.WriteString(entriesText(ls))
			}
		}
		return b.String()
	}
	forwarded := 0
	for step := 0; step < 24; step++ {
		export(t, openLedger(t, dir)) // the view, current
		var did []string
		for k := 1 + rng.IntN(3); k > 0; k-- {
			switch op := rng.IntN(10); {
			case op < 4:
				if c := free(); c != "" {
					record(t, openLedger(t, dir), c, 0)
					noted[c] = true
					did = append(did, "record")
				}
			case op < 7:
				// plain git's note on a commit with none: any cycle
				if c := free(); c != "" {
					line := plainNoteLine(rng, step, 30, texts)
					texts = append(texts, line)
					git(t, dir, "notes", "--ref=evolve", "add", "-m", line, c)
					noted[c] = true
					did = append(did, "add")
				}
			case op < 8:
				c := commits[rng.IntN(6)]
				git(t, dir, "notes", "--ref=evolve", "append", "-m", fmt.Sprintf(`{"v":1,"cycle":%d,"result":"harvested"}`, 50+step), c)
				did = append(did, "append")
			case op < 9:
				if c := commits[6+rng.IntN(len(commits)-6)]; noted[c] {
					git(t, dir, "notes", "--ref=evolve", "remove", c)
					delete(noted, c)
					did = append(did, "remove")
				}
			default:
				// nothing changed since the view
				did = append(did, "nothing")
			}
		}
		before, _ := viewNotes(state)
		tip := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve"))
		got := answers()
		if after, _ := viewNotes(state); after == before && before.String() != tip {
			forwarded++ // answered from the older view and what was added
		}
		if err := os.Remove(state); err != nil {
			t.Fatal(err)
		}
		saved := historyTailCommits
		historyTailCommits = 0 // every note read, not the newest from the history
		want := answers()
		historyTailCommits = saved
		if got != want {
			t.Fatalf("step %d after %s: the answers differ\ngot:\n%s\nwant, with no view:\n%s", step, strings.Join(did, ", "), got, want)
		}
	}
	if forwarded < 3 {
		t.Errorf("%d reads took the view forward", forwarded)
	}
}

// plainNoteLine is a line plain git adds to the ledger in the random
// histories: a record of any cycle below max, a line that does not parse,
// or a copy of one of texts (a line written before).
func plainNoteLine(rng *rand.Rand, step, max int, texts []string) string {
	line := fmt.Sprintf(`{"v":1,"cycle":%d,"target":"p%d","result":"improved"}`, rng.IntN(max), step)
	switch rng.IntN(4) {
	case 0:
		line = "{not json " + fmt.Sprint(step)
	case 1:
		if len(texts) > 0 {
			line = texts[rng.IntN(len(texts))] // a copy of a record
		}
	}
	return line
}
