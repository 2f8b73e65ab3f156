package store

import (
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// entriesText is a listing as text: each entry's cycle, commit, flags and
// record, then the errors.
func entriesText(ls *Listing) string {
	var b strings.Builder
	for _, e := range ls.Entries {
		fmt.Fprintf(&b, "%d %s j=%t a=%t n=%t %s\n", e.Record.Cycle, e.Commit, e.Journal, e.Absent, e.NotCommit, e.Record.Marshal())
	}
	for _, e := range ls.Errors {
		fmt.Fprintf(&b, "error: %v\n", e)
	}
	return b.String()
}

// Entries, read from the end of the saved view, gives what List gives (the
// last limit of it, after the filter) for every limit: with a record
// copied to another commit (listed once, on the commit HEAD has), a note
// that does not parse, the journal, a filter that keeps few, and a view
// whose tail is damaged (read in full instead).
func TestEntriesAsList(t *testing.T) {
	testenv.Slow(t)
	defer func(s int) { tailSlack = s }(tailSlack)
	tailSlack = 0 // the tail read in several steps, past the copies
	dir, commits := testRepo(t, 12)
	l := openLedger(t, dir)
	for i := 0; i < 9; i++ {
		record(t, l, commits[i], 0)
	}
	// a copy of cycle 3's note on a commit off HEAD's history
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "side")
	side := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	git(t, dir, "reset", "-q", "--hard", "HEAD~1")
	git(t, dir, "notes", "--ref=evolve", "copy", commits[2], side)
	git(t, dir, "notes", "--ref=evolve", "add", "-m", "{not json", commits[10])
	// a record copied between two commits HEAD has, the copy on the one
	// whose name sorts first: the copy listed must not depend on which
	// was written first
	hi, lo := commits[9], commits[11]
	if hi < lo {
		hi, lo = lo, hi
	}
	record(t, openLedger(t, dir), hi, 0)
	git(t, dir, "notes", "--ref=evolve", "copy", hi, lo)
	one := 1
	if _, err := recordWith(openLedger(t, dir), ledger.Record{Cycle: 20, Target: "idle", Result: ledger.Unchanged, IdleStreak: &one}); err != nil {
		t.Fatal(err)
	}
	// the journal's record written twice, as a retried script would
	jpath := filepath.Join(dir, ".git", "evolve", "journal.jsonl")
	jdata, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jpath, append(jdata, jdata...), 0o644); err != nil {
		t.Fatal(err)
	}

	// One cycle's records from the cycle index give what the view gives,
	// for every cycle (a copied one, the journal's, one that is not there).
	export(t, openLedger(t, dir)) // the view, current
	for n := 0; n <= 22; n++ {
		keep := func(s *ledger.Summary) bool { return s.Cycle == n }
		want, err := openLedger(t, dir).Entries(ListOptions{Journal: true, Presence: true}, keep, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := openLedger(t, dir).cycleEntries(n)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := entriesText(got), entriesText(want); g != w {
			t.Errorf("cycle %d from the index:\n%s\nfrom the view:\n%s", n, g, w)
		}
	}

	filters := map[string]func(*ledger.Summary) bool{
		"all":     nil,
		"odd":     func(s *ledger.Summary) bool { return s.Cycle%2 == 1 },
		"cycle 3": func(s *ledger.Summary) bool { return s.Cycle == 3 },
	}
	for _, journal := range []bool{false, true} {
		for name, keep := range filters {
			opts := ListOptions{Journal: journal, Presence: true}
			full, err := openLedger(t, dir).List(opts)
			if err != nil {
				t.Fatal(err)
			}
			var kept []Entry
			for _, e := range full.Entries {
				if s := ledger.SummaryOf(&e.Record); keep == nil || keep(&s) {
					kept = append(kept, e)
				}
			}
			for limit := 0; limit <= len(kept)+1; limit++ {
				want := &Listing{Entries: kept, Errors: full.Errors}
				if limit > 0 {
					if len(kept) > limit {
						want.Entries = kept[len(kept)-limit:]
					}
					// the errors of the notes listed, and the journal's
					listed := map[gitstore.Hash]bool{}
					for _, e := range want.Entries {
						if !e.Journal {
							listed[e.Commit] = true
						}
					}
					want.Errors = nil
					for _, e := range full.Errors {
						if e.Journal || listed[e.Commit] {
							want.Errors = append(want.Errors, e)
						}
					}
				}
				for _, damaged := range []bool{false, true} {
					l := openLedger(t, dir)
					if damaged {
						view := filepath.Join(dir, ".git", "evolve", "ledger.view")
						data, err := viewBytes(view)
						if err != nil {
							t.Fatal(err)
						}
						data[len(data)-20] ^= 0xff // an offset
						if err := writeView(view, data, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					got, err := l.Entries(opts, keep, limit)
					if err != nil {
						t.Fatalf("%s, journal %t, limit %d, damaged %t: %v", name, journal, limit, damaged, err)
					}
					if g, w := entriesText(got), entriesText(want); g != w {
						t.Errorf("%s, journal %t, limit %d, damaged %t: Entries gives\n%s\nList gives\n%s", name, journal, limit, damaged, g, w)
					}
				}
			}
		}
	}
}

// A view file of any content is read without a panic: as a view, or as
// damaged (then rebuilt by the caller), in full and from its end.
func FuzzReadView(f *testing.F) {
	dir := f.TempDir()
	v := &view{lines: []viewLine{{Line: Line{Summary: ledger.Summary{Cycle: 1, ID: []byte("a")}, Text: []byte(`{"v":1}`)}, commit: [20]byte{1}}},
		errors: []*NoteError{{Commit: [20]byte{2}, Line: 3, Text: "x", Err: fmt.Errorf("bad")}}}
	good := filepath.Join(dir, "seed")
	if err := v.save(good); err != nil {
		f.Fatal(err)
	}
	seed, err := viewBytes(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, 1)
	f.Add(seed[:len(seed)-3], 2)
	f.Add([]byte(viewMagic), 0)
	// a view of several blocks, and one whose table lies about a block
	// (its CRC made to hold)
	was := viewBlockSize
	viewBlockSize = 600
	defer func() { viewBlockSize = was }()
	multi := testView(40)
	if err := multi.save(good); err != nil {
		f.Fatal(err)
	}
	seed, err = viewBytes(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, 5)
	for _, lie := range []func(*blockEntry){
		func(e *blockEntry) { e.inflated-- },
		func(e *blockEntry) { e.inflated++ },
		func(e *blockEntry) { e.n++ },
		func(e *blockEntry) { e.hi++ },
	} {
		f.Add(withEntry(f, seed, 1, lie), 40)
	}
	f.Fuzz(func(t *testing.T, data []byte, m int) {
		path := filepath.Join(t.TempDir(), "view")
		if err := writeView(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		full, _ := readView(path)
		var notes [20]byte
		if len(data) >= len(viewMagic)+20 {
			copy(notes[:], data[len(viewMagic):])
		}
		tail, partial, _ := readViewTail(path, notes, max(m%64, 0))
		if c, _ := readViewCycle(path, notes, m%64); full != nil && c != nil {
			n := 0
			for _, ln := range full.lines {
				if ln.Summary.Cycle == m%64 {
					n++
				}
			}
			if len(c.lines) != n {
				t.Errorf("cycle %d has %d lines from its blocks, %d in the view", m%64, len(c.lines), n)
			}
		}
		if full != nil && tail != nil && !partial && len(tail.lines) != len(full.lines) {
			t.Errorf("the whole tail has %d lines, the view %d", len(tail.lines), len(full.lines))
		}
		// The quarantine lines the footer names are the view's.
		if q, _ := readViewQuarantined(path, notes); full != nil && q != nil {
			n := 0
			for _, ln := range full.lines {
				if string(ln.Summary.Result) == ledger.Quarantined {
					n++
				}
			}
			if len(q.lines) != n {
				t.Errorf("the footer names %d quarantine lines, the view has %d", len(q.lines), n)
			}
		}
	})
}
