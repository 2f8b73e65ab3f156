package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

// The saved view is a cache: cut
// short, written by a newer git-evolve, or describing a ledger that was
// reset, replaced or edited by plain git behind its back, it changes no
// answer: every read gives what a read with none gives.
func TestCachesChangeNoAnswer(t *testing.T) {
	testenv.Slow(t)
	smallBlocks(t, 600) // the view's lines in several blocks
	dir, commits := testRepo(t, 12)
	for i := 0; i < 8; i++ {
		record(t, openLedger(t, dir), commits[i], 0)
	}
	state := filepath.Join(dir, ".git", "evolve")
	caches := []string{"ledger.view"}
	var hs []gitstore.Hash
	for _, c := range commits {
		h, _ := gitstore.ParseHash(c)
		hs = append(hs, h)
	}
	// What a reader asks: the listing, the table's last few, each cycle
	// and each commit as show asks them, the subjects, the largest cycle and its
	// commits and the record the next one links to (the index: what a
	// record and a cycle start read).
	answers := func() string {
		t.Helper()
		l := openLedger(t, dir)
		var b strings.Builder
		b.WriteString(export(t, l))
		last, err := l.Entries(ListOptions{Presence: true, Table: true}, nil, 3)
		fmt.Fprintf(&b, "last 3: %v\n", err)
		if err == nil {
			for _, e := range last.Entries {
				fmt.Fprintf(&b, "  %d %s %v\n", e.Record.Cycle, e.Commit, e.Absent)
			}
		}
		for _, q := range append([]string{"1", "5", "8", "9", "40"}, commits[:9]...) {
			list, err := l.Show(q)
			fmt.Fprintf(&b, "show %s: %v\n", q, err)
			if list != nil {
				for _, e := range list.Entries {
					fmt.Fprintf(&b, "  %s\n", e.Record.Marshal())
				}
			}
		}
		// what a record and a cycle start ask the index (the largest
		// cycle and the commits that hold it), and the commits of others
		snap, err := l.repo.ReadNotes(NotesRef)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := l.loadIndex(snap)
		fmt.Fprintf(&b, "index: %v\n", err)
		if err == nil {
			top := ix.Max()
			for _, n := range []int{top, 1, 5, 8, 9, 40} {
				holders, err := ix.holders(n)
				slices.SortFunc(holders, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) })
				fmt.Fprintf(&b, "  cycle %d (largest %d) on %v: %v\n", n, top, holders, err)
			}
			last, err := l.lastRecord(snap, ix)
			fmt.Fprintf(&b, "  links to %v: %v\n", last != nil && last.ID != "", err)
			if last != nil {
				fmt.Fprintf(&b, "  %s\n", ledger.Link(last))
			}
		}
		return b.String()
	}
	fromScratch := func() string {
		t.Helper()
		for _, c := range caches {
			os.RemoveAll(filepath.Join(state, c))
		}
		return answers()
	}
	edit := func(name string, change func([]byte) []byte) func() {
		return func() {
			path := filepath.Join(state, name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := os.WriteFile(path, change(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// editLines changes the view's lines section alone, in a file whose
	// table holds.
	editLines := func(change func([]byte) []byte) func() {
		return func() {
			path := filepath.Join(state, "ledger.view")
			data, err := viewBytes(path)
			if err != nil {
				t.Fatal(err)
			}
			putSection(t, path, SecLines, change(data))
		}
	}
	// newer makes a file's format number (the end of its first line) one
	// more than this version's.
	newer := func(data []byte) []byte {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		i := bytes.LastIndexByte(line, ' ')
		n, err := strconv.Atoi(string(line[i+1:]))
		if err != nil {
			t.Fatalf("no format number in %q", line)
		}
		return append(fmt.Appendf(nil, "%s %d\n", line[:i], n+1), rest...)
	}
	half := func(data []byte) []byte { return data[:len(data)/2] }
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(data []byte) []byte {
		out := make([]byte, len(data))
		for i := range out {
			out[i] = byte(rng.Uint32())
		}
		return out
	}
	// middle keeps the file's first line (its format) and its last 64
	// bytes, and puts random bytes in between: what a torn write, a bad
	// disk block or another program's write would leave.
	middle := func(data []byte) []byte {
		out := bytes.Clone(data)
		from := bytes.IndexByte(out, '\n') + 1
		for i := from; i < len(out)-64; i++ {
			out[i] = byte(rng.Uint32())
		}
		return out
	}
	// flip changes one byte in each 512 past the first line.
	flip := func(data []byte) []byte {
		out := bytes.Clone(data)
		for i := bytes.IndexByte(out, '\n') + 1 + rng.IntN(512); i < len(out); i += 512 {
			out[i] ^= 1 << rng.IntN(8)
		}
		return out
	}
	empty := func([]byte) []byte { return nil }
	// block changes a byte in the middle of the view's second block.
	block := func(data []byte) []byte {
		_, entries := viewTable(t, data)
		if len(entries) < 3 {
			t.Fatalf("premise: %d blocks in the view, want several", len(entries))
		}
		out := bytes.Clone(data)
		out[entries[1].off+entries[1].size/2] ^= 0x10
		return out
	}
	// inflatedLie makes the table say that the view's second block
	// inflates to a byte more than it does, its CRC made to hold.
	inflatedLie := func(data []byte) []byte {
		return withEntry(t, data, 1, func(e *blockEntry) { e.inflated++ })
	}
	directory := func(name string) func() {
		return func() {
			path := filepath.Join(state, name)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"the view cut short", edit("ledger.view", half)},
		{"the view of a newer version", edit("ledger.view", newer)},
		{"the view empty", edit("ledger.view", empty)},
		{"the view of random bytes", edit("ledger.view", noise)},
		{"the view random past its first line", edit("ledger.view", middle)},
		{"the view with bits flipped", edit("ledger.view", flip)},
		{"a block of the view damaged", editLines(block)},
		{"a block of the view whose inflated size lies", editLines(inflatedLie)},
		{"the lines of the view of random bytes", editLines(noise)},
		{"the lines of the view cut short", editLines(half)},
		{"the view a directory", directory("ledger.view")},
		{"the ledger reset to an older commit", func() { git(t, dir, "update-ref", "refs/notes/evolve", "refs/notes/evolve~3") }},
		{"the ledger moved on again", func() { record(t, openLedger(t, dir), commits[9], 0) }},
		{"the ledger replaced by another one", func() {
			git(t, dir, "notes", "--ref=other", "add", "-m", `{"v":1,"cycle":40,"target":"x","result":"improved"}`, commits[10])
			git(t, dir, "notes", "--ref=other", "add", "-m", `{"v":1,"cycle":5,"target":"y","result":"improved"}`, commits[2])
			git(t, dir, "update-ref", "refs/notes/evolve", "refs/notes/other")
		}},
		{"a note edited by plain git", func() {
			git(t, dir, "notes", "--ref=evolve", "append", "-m", `{"v":1,"cycle":9,"target":"z","result":"improved"}`, commits[10])
		}},
		{"a note removed by plain git", func() { git(t, dir, "notes", "--ref=evolve", "remove", commits[2]) }},
	}
	for _, st := range steps {
		answers() // the caches, written for the ledger as it was
		for _, c := range caches {
			if _, err := os.Stat(filepath.Join(state, c)); err != nil {
				t.Fatalf("before %s: no %s: %v", st.name, c, err)
			}
		}
		st.do()
		got := answers()
		if want := fromScratch(); got != want {
			t.Errorf("after %s:\n%s\nwant, as with no cache:\n%s", st.name, got, want)
		}
	}
}
