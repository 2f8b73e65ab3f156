package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// An index of cycles in the layout before (evolve-cycles.v1, which listed
// no quarantine record) is passed by: a clone with no saved view reads the
// quarantine records from the notes; the next record takes the old
// directory out of the tree and writes the index in the current layout,
// which lists them.
func TestQuarantinesPassAnOlderIndexBy(t *testing.T) {
	dir, commits := testRepo(t, 6)
	name, keys := CycleIndex.Name, CycleIndex.Keys
	CycleIndex.Name = ledger.OldIndexNames[0]
	CycleIndex.Keys = func(note []byte) []string {
		var out []string
		for _, k := range ledger.IndexKeys(note) {
			if k != ledger.QuarantineKey {
				out = append(out, k)
			}
		}
		return out
	}
	l := openLedger(t, dir)
	record(t, l, commits[0], 0)
	if _, err := recordWith(l, quarantineOn(commits[1])); err != nil {
		t.Fatal(err)
	}
	record(t, l, commits[2], 0)
	CycleIndex.Name, CycleIndex.Keys = name, keys
	if got := git(t, dir, "ls-tree", "--name-only", "refs/notes/evolve"); !strings.Contains(got, ledger.OldIndexNames[0]) || strings.Contains(got, ledger.IndexName) {
		t.Fatalf("premise: the tree holds the older layout's index alone:\n%s", got)
	}
	view := filepath.Join(dir, ".git", "evolve", "ledger.view")
	answer := func() (got, want string) {
		got, want, _ = withAndWithoutView(t, dir, func(l *Ledger) string { return quarantinesAnswer(t, l) })
		return got, want
	}
	if got, want := answer(); got != want || !strings.Contains(got, `"result":"quarantined"`) {
		t.Errorf("the quarantines beside an older index:\n%s\nfrom every note:\n%s", got, want)
	}
	record(t, openLedger(t, dir), commits[3], 0)
	if got := git(t, dir, "ls-tree", "--name-only", "refs/notes/evolve"); strings.Contains(got, ledger.OldIndexNames[0]) || !strings.Contains(got, ledger.IndexName) {
		t.Fatalf("after a record, the tree holds:\n%s", got)
	}
	os.Remove(view)
	got := quarantinesAnswer(t, openLedger(t, dir))
	if _, err := os.Stat(view); err == nil {
		t.Error("the quarantines read every note after the index was written anew")
	}
	if _, want := answer(); got != want {
		t.Errorf("the quarantines from the index written anew:\n%s\nfrom every note:\n%s", got, want)
	}
}

// A cycle listed in a directory that cannot hold it ("0/9/1": cycle 1 is
// under "0/0"), whose note does hold a record of it, shows the index wrong:
// it is not taken for one of the largest cycles, and the last records are
// those of every note.
func TestLastMisplacedCycleEntry(t *testing.T) {
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 5; i++ {
		record(t, l, commits[i], 0) // cycles 1..5
	}
	record(t, l, commits[5], 150)
	// a second record of cycle 150, on another commit, listed under 0/0
	// (which holds cycles 0 to 99) and not under 0/1: taken for 0/1's, it
	// would stand in for the first
	git(t, dir, "notes", "--ref=evolve", "add", "-m",
		`{"v":1,"cycle":150,"target":"u","result":"harvested","goals_passing":1,"goals_total":1,"sha":"`+commits[6]+`","canonical_sha":"`+commits[6]+`","timestamp":"2026-01-02T03:04:06Z"}`, commits[6])
	record(t, openLedger(t, dir), commits[7], 0) // the index brought forward: 150 on both
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	root = treeWithEntry(t, dir, root, []string{ledger.IndexName, "0", "0"}, "150-"+commits[6])
	root = treeWithoutEntry(t, dir, root, []string{ledger.IndexName, "0", "1"}, "150-"+commits[6])
	commitNotesTree(t, dir, root, "another writer")
	got, want, _ := withAndWithoutView(t, dir, func(l *Ledger) string { return lastAnswer(t, l, 3) })
	if got != want || strings.Count(got, `"cycle":150`) != 2 {
		t.Errorf("the last 3 from an index with a misplaced entry:\n%s\nfrom every note:\n%s", got, want)
	}
}

// A note the index lists under one of the largest cycles that also holds a
// record of a larger cycle it is not listed under (an entry missing, the
// stamp made anew) shows the index wrong: the last records are those of
// every note, not the index's with that record thrown away.
func TestLastIndexWrongByWhatItRead(t *testing.T) {
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 6; i++ {
		record(t, l, commits[i], 0) // cycles 1..6
	}
	// cycle 7 appended to the note of cycle 6, and a record of cycle 7 on
	// another commit, by a writer that kept the index as it was (the stamp
	// made anew): 7 is listed nowhere, and only the first is read
	tip := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve"))
	indexDir := strings.TrimSpace(git(t, dir, "rev-parse", tip+":"+ledger.IndexName))
	git(t, dir, "notes", "--ref=evolve", "append", "-m",
		`{"v":1,"cycle":7,"target":"t","result":"harvested","goals_passing":1,"goals_total":1,"sha":"`+commits[5]+`","canonical_sha":"`+commits[5]+`","timestamp":"2026-01-02T03:04:05Z"}`, commits[5])
	git(t, dir, "notes", "--ref=evolve", "add", "-m",
		`{"v":1,"cycle":7,"target":"u","result":"harvested","goals_passing":1,"goals_total":1,"sha":"`+commits[6]+`","canonical_sha":"`+commits[6]+`","timestamp":"2026-01-02T03:04:06Z"}`, commits[6])
	var others []string
	for _, ln := range strings.Split(strings.TrimRight(git(t, dir, "ls-tree", "refs/notes/evolve^{tree}"), "\n"), "\n") {
		if !strings.HasSuffix(ln, "\t"+ledger.IndexName) {
			others = append(others, ln)
		}
	}
	stamp := strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(others, "\n")+"\n", "mktree", "--missing"))
	var idx []string
	for _, ln := range strings.Split(strings.TrimRight(git(t, dir, "ls-tree", indexDir), "\n"), "\n") {
		if !strings.Contains(ln, "\tof-") {
			idx = append(idx, ln)
		}
	}
	empty := strings.TrimSpace(testenv.GitIn(t, dir, "", "hash-object", "-w", "--stdin"))
	idx = append(idx, "100644 blob "+empty+"\tof-"+stamp)
	newIndex := strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(idx, "\n")+"\n", "mktree"))
	root := strings.TrimSpace(testenv.GitIn(t, dir, strings.Join(append(others, "040000 tree "+newIndex+"\t"+ledger.IndexName), "\n")+"\n", "mktree"))
	commitNotesTree(t, dir, root, "another writer")
	if got, want, _ := withAndWithoutView(t, dir, func(l *Ledger) string { return lastAnswer(t, l, 2) }); got != want {
		t.Errorf("the last 2, cycle 7 read and dropped:\n%s\nfrom every note:\n%s", got, want)
	}
}

// The last records and the quarantines with no saved view, over ledgers
// that git-evolve and plain git (add, append, remove, within the 8
// commits an index is brought forward over) write in turn: notes with
// several cycles, negative and huge cycles, one cycle twice, copies, lines
// that are no record, the journal; narrowed by keep as log narrows them.
// Each answer is the one a read of every note gives.
func TestLastAndQuarantinesAgainstEveryNote(t *testing.T) {
	testenv.Slow(t)
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 16)
	rng := rand.New(rand.NewPCG(42, 7))
	line := func(cycle int, result, commit string) string {
		extra := `,"goals_passing":1,"goals_total":1`
		if result == "quarantined" {
			extra = ""
		}
		return fmt.Sprintf(`{"v":1,"cycle":%d,"target":"t%d","result":"%s"%s,"sha":"%s","canonical_sha":"%s","timestamp":"2026-01-02T03:04:%02dZ"}`,
			cycle, cycle%3, result, extra, commit, commit, rng.IntN(60))
	}
	cycles := []int{1, 2, 3, 5, 8, 13, 99, 100, 101, 9999, 10000, 10001, 123456, -3, 1 << 40}
	plain := 0
	fromIndex := 0
	keeps := []struct {
		name string
		keep func(*ledger.Summary) bool
	}{
		{"all", nil},
		{"t1", func(s *ledger.Summary) bool { return string(s.Target) == "t1" }},
		{"quarantined", func(s *ledger.Summary) bool { return string(s.Result) == ledger.Quarantined }},
	}
	for round := 0; round < 25; round++ {
		commit := commits[rng.IntN(len(commits))]
		if plain < 6 && rng.IntN(3) > 0 {
			switch op := rng.IntN(5); op {
			case 0, 1:
				res := []string{"harvested", "quarantined"}[rng.IntN(2)]
				git(t, dir, "notes", "--ref=evolve", "add", "-f", "-m", line(cycles[rng.IntN(len(cycles))], res, commit), commit)
			case 2:
				res := []string{"harvested", "quarantined"}[rng.IntN(2)]
				git(t, dir, "notes", "--ref=evolve", "append", "-m", line(cycles[rng.IntN(len(cycles))], res, commit), commit)
			case 3:
				git(t, dir, "notes", "--ref=evolve", "append", "-m", "not a record", commit)
			case 4:
				git(t, dir, "notes", "--ref=evolve", "remove", "--ignore-missing", commit)
			}
			plain++
		} else {
			l := openLedger(t, dir)
			switch rng.IntN(4) {
			case 0:
				record(t, l, commit, 0)
			case 3:
				// a cycle of the journal
				if _, err := recordWith(l, ledger.Record{Target: "t1", Result: ledger.Unchanged}); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := recordWith(l, quarantineOn(commit)); err != nil {
					t.Fatal(err)
				}
			case 2:
				// a copy of the last record on another commit
				list, err := l.Entries(ListOptions{}, nil, 1)
				if err != nil || len(list.Entries) == 0 {
					record(t, l, commit, 0)
					break
				}
				c, _ := gitstore.ParseHash(commit)
				l.Attach(map[gitstore.Hash][]ledger.Record{c: {list.Entries[0].Record}})
			}
			plain = 0
		}
		for _, limit := range []int{1, 2, 3, 5} {
			for _, k := range keeps {
				for _, copies := range []bool{false, true} {
					opts := ListOptions{Journal: true, Presence: true, Copies: copies}
					got, want, saved := withAndWithoutView(t, dir, func(l *Ledger) string {
						list, err := l.Entries(opts, k.keep, limit)
						return fmt.Sprint(describe(list), err)
					})
					if !saved {
						fromIndex++ // not every note was read
					}
					if got != want {
						t.Fatalf("round %d (%d plain commits on top), last %d of %s, copies %v:\n%s\nfrom every note:\n%s", round, plain, limit, k.name, copies, got, want)
					}
				}
			}
		}
		if got, want, _ := withAndWithoutView(t, dir, func(l *Ledger) string { return quarantinesAnswer(t, l) }); got != want {
			t.Fatalf("round %d: quarantines:\n%s\nfrom every note:\n%s", round, got, want)
		}
	}
	t.Logf("%d reads answered without reading every note", fromIndex)
}

// describe is a listing as text: each entry, then each error.
func describe(l *Listing) string {
	if l == nil {
		return ""
	}
	var b strings.Builder
	for _, e := range l.Entries {
		fmt.Fprintf(&b, "  %s %s %v %v\n", e.Record.Marshal(), e.Commit, e.Absent, e.Journal)
	}
	for _, e := range l.Errors {
		fmt.Fprintf(&b, "  error %s\n", e.Error())
	}
	return b.String()
}

// Names that are not cycles as ledger.CycleKey writes them ("007", "+8",
// "-1", "00", a word) are passed by, wherever they are; the answer is that
// of every note. A smaller indexTailNotes leaves the read to the whole
// ledger, with the same answer.
func TestLastNonCanonicalNames(t *testing.T) {
	withoutHistoryWalk(t)
	dir, commits := testRepo(t, 8)
	l := openLedger(t, dir)
	for i := 0; i < 6; i++ {
		record(t, l, commits[i], 0) // cycles 1..6
	}
	root := strings.TrimSpace(git(t, dir, "rev-parse", "refs/notes/evolve^{tree}"))
	for _, e := range []struct {
		dirs []string
		name string
	}{
		{[]string{"0", "0"}, "007-" + commits[0]},
		{[]string{"0", "0"}, "+8-" + commits[1]},
		{[]string{"0", "0"}, "-1-" + commits[2]},
		{[]string{"0", "00"}, "9-" + commits[3]},
		{[]string{"+1", "1"}, "9-" + commits[3]},
		{[]string{"x", "y"}, "9-" + commits[3]},
		{[]string{"0", "0"}, "nine-" + commits[3]},
	} {
		root = treeWithEntry(t, dir, root, append([]string{ledger.IndexName}, e.dirs...), e.name)
	}
	commitNotesTree(t, dir, root, "another writer")
	for _, bound := range []int{4096, 2} {
		defer func(n int) { indexTailNotes = n }(indexTailNotes)
		indexTailNotes = bound
		for limit := 1; limit <= 4; limit++ {
			got, want, saved := withAndWithoutView(t, dir, func(l *Ledger) string { return lastAnswer(t, l, limit) })
			if fromIndex := !saved; fromIndex != (limit+1 <= bound) {
				t.Errorf("bound %d, last %d: read from the index %v", bound, limit, fromIndex)
			}
			if got != want {
				t.Errorf("bound %d, the last %d:\n%s\nfrom every note:\n%s", bound, limit, got, want)
			}
		}
	}
}
