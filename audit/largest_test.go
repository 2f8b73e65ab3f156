package audit

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// forge writes a notes commit on the ledger's tip with its tree and a
// message whose Evolve-Largest-Cycle trailer names n, and moves the ledger
// to it.
func (c *clone) forge(n int) gitstore.Hash {
	c.t.Helper()
	h := c.git("commit-tree", "refs/notes/evolve^{tree}", "-p", "refs/notes/evolve",
		"-m", "git evolve: record cycle 1 (improved)", "-m", fmt.Sprintf("Evolve-Largest-Cycle: %d", n))
	c.git("update-ref", "refs/notes/evolve", h)
	got, err := gitstore.ParseHash(h)
	if err != nil {
		c.t.Fatal(err)
	}
	return got
}

// understated lists the understated trailers a verify of the whole
// history finds, as "severity:notes commit:cycle:commit", after checking
// that both history walks find the same, and that a verify from the tip
// verified before finds the same breaches.
func (c *clone) understated() string {
	c.t.Helper()
	reset := c.rememberVerified()
	var answers []string
	for _, o := range []VerifyOptions{{FromGit: true, FullHistory: true}, {FromGit: true}} {
		for _, tw := range []bool{false, true} {
			treeWalk = tw
			rep, err := VerifyWith(c.l, o)
			treeWalk = false
			reset()
			if err != nil {
				c.t.Fatal(err)
			}
			var found []string
			for _, f := range rep.Findings {
				if f.Kind == "understated" || f.Kind == "accepted" && strings.Contains(f.Message, "largest cycle") {
					if o.FullHistory || f.Severity == Breach {
						found = append(found, fmt.Sprintf("%s:%s:%d:%s", f.Severity, f.NotesCommit[:7], f.Cycle, f.Commit[:7]))
					}
				}
			}
			answers = append(answers, strings.Join(found, " "))
		}
	}
	var breaches []string
	for _, f := range strings.Fields(answers[0]) {
		if strings.HasPrefix(f, "breach:") {
			breaches = append(breaches, f)
		}
	}
	if answers[1] != answers[0] || answers[3] != answers[2] || answers[2] != strings.Join(breaches, " ") {
		c.t.Fatalf("the verifies differ: %q", answers)
	}
	// one that keeps what it read, for the next
	if _, err := VerifyWith(c.l, VerifyOptions{}); err != nil {
		c.t.Fatal(err)
	}
	return answers[0]
}

// The trailers that name less than their ledger holds are found, whichever
// way the bound is known: carried along the walk, remembered for the tip
// verified before, or read whole after a record that held the largest
// cycle was removed (where a trailer may name less than the bound carried
// and still be true).
func TestLargestTrailer(t *testing.T) {
	c, rng := recordedClone(t, 8, 3)
	if got := c.understated(); got != "" {
		t.Fatalf("honest records: %s", got)
	}
	if v := readVerified(c.repo); !v.largest.known || v.largest.bound != 3 {
		t.Fatalf("the verified file remembers %+v, want a bound of 3", v.largest)
	}

	// named too small, on top of the tip verified
	f1 := c.forge(2)
	got := c.understated()
	if !strings.HasPrefix(got, "breach:"+f1.Short()+":3:") {
		t.Fatalf("a trailer naming 2 over cycle 3: %q", got)
	}
	if n := strings.Count(got, "breach:"); n != 1 {
		t.Fatalf("%d findings, want 1: %q", n, got)
	}
	// an honest trailer over it is no finding
	c.record(rng)
	if got2 := c.understated(); got2 != got {
		t.Fatalf("after an honest record: %q, want %q", got2, got)
	}
	if _, err := Accept(c.repo, f1, "a test", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if got := c.understated(); !strings.HasPrefix(got, "notice:"+f1.Short()+":3:") {
		t.Fatalf("accepted: %q", got)
	}

	// the note holding the largest cycle (4) removed, then a trailer that
	// names 3, the largest left: true, though the bound carried is 4
	// (the record alone: a note may hold another record beside it)
	var top4, rest string
	for _, line := range strings.Split(c.git("notes", "--ref=evolve", "list"), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		text := c.git("notes", "--ref=evolve", "show", f[1])
		if strings.Contains(text, `"cycle":4,`) {
			top4 = f[1]
			for _, l := range strings.Split(text, "\n") {
				if !strings.Contains(l, `"cycle":4,`) {
					rest += l + "\n"
				}
			}
		}
	}
	if top4 == "" {
		t.Fatal("no note holds cycle 4")
	}
	if rest == "" {
		c.git("notes", "--ref=evolve", "remove", top4)
	} else {
		c.git("notes", "--ref=evolve", "add", "-f", "-m", strings.TrimSuffix(rest, "\n"), top4)
	}
	removed, _ := gitstore.ParseHash(c.git("rev-parse", "refs/notes/evolve"))
	if _, err := Accept(c.repo, removed, "a test", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	c.forge(3)
	if got := c.understated(); !strings.HasPrefix(got, "notice:"+f1.Short()) || strings.Contains(got, "breach") {
		t.Fatalf("a true trailer after the largest was removed: %q", got)
	}
	// and one that names 2 there is a finding, of cycle 3
	f3 := c.forge(2)
	if got := c.understated(); !strings.HasPrefix(got, "breach:"+f3.Short()+":3:") {
		t.Fatalf("a trailer naming 2 after the largest was removed: %q", got)
	}
}

// The verified file keeps what verify knew of the largest cycle at the tip
// it names; a file of an older git-evolve (no such line) knows nothing.
func TestVerifiedLargestRoundTrip(t *testing.T) {
	c, _ := recordedClone(t, 2, 0)
	tip, other := commit(1), commit(2)
	pos := reflogPos{end: 42, after: commit(3)}
	for _, m := range []largestMemory{
		{tip: tip, checked: true, known: true, bound: 7},
		{tip: tip, checked: true},
		{},
		{tip: other, checked: true, known: true, bound: 7}, // of another tip: not written
	} {
		writeVerified(c.repo, tip, pos, m, chainMemory{}, ledger.IndexName)
		v := readVerified(c.repo)
		want := m
		if m.tip != tip {
			want = largestMemory{}
		}
		if v.tip != tip || v.pos != pos || v.largest != want {
			t.Errorf("wrote %+v, read %+v", m, v)
		}
	}
	os.WriteFile(verifiedPath(c.repo), []byte(tip.String()+"\nreflog 42 "+commit(3).String()+"\n"), 0o644)
	if v := readVerified(c.repo); v.largest.checked || v.pos != pos {
		t.Errorf("an older file: %+v", v)
	}
	os.WriteFile(verifiedPath(c.repo), []byte(tip.String()+"\nlargest x\nlargest 12345678901\n"), 0o644)
	if v := readVerified(c.repo); v.largest.checked {
		t.Errorf("a damaged line: %+v", v)
	}
}

// Where the walk starts on a commit that names no bound (plain git's, a
// repair's) or one accepted as it was, the bound is the nearest ancestor's
// that names one, with the notes changed since read: no read of the whole
// ledger, and an understated trailer brought on top of it is still found.
func TestLargestOutsideFromAnAncestor(t *testing.T) {
	c, _ := recordedClone(t, 8, 3)
	named := c.git("rev-parse", "refs/notes/evolve")
	commits := strings.Fields(c.git("rev-list", "HEAD"))
	c.git("notes", "--ref=evolve", "append", "-m", `{"v":1,"cycle":7,"target":"t","result":"improved"}`, commits[len(commits)-1])
	plain, err := gitstore.ParseHash(c.git("rev-parse", "refs/notes/evolve"))
	if err != nil {
		t.Fatal(err)
	}
	h := &historyCheck{repo: c.repo, accepted: map[gitstore.Hash]Acceptance{}}
	if st := newLargestCheck(largestMemory{checked: true}).outside(h, plain); !st.known || st.bound != 7 {
		t.Fatalf("the bound of a plain git commit over one naming 3, with cycle 7 added: %+v, want 7", st)
	}
	// the commit naming 3 accepted as it was: an older one bounds
	n, _ := gitstore.ParseHash(named)
	h.accepted[n] = Acceptance{}
	if st := newLargestCheck(largestMemory{checked: true}).outside(h, plain); !st.known || st.bound != 7 {
		t.Fatalf("past an accepted commit: %+v, want 7", st)
	}
	// brought on top of it: a commit naming 5
	forged := c.forge(5)
	found, err := CheckIncoming(c.repo, plain, forged)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Kind != "understated" || found[0].Cycle != 7 {
		t.Fatalf("a commit naming 5 over cycle 7, brought: %+v", found)
	}
}

// The verified file says whether the chain had begun at its tip when the
// verify knew it, and nothing of another tip's.
func TestVerifiedChainRoundTrip(t *testing.T) {
	c, _ := recordedClone(t, 2, 0)
	tip, other := commit(1), commit(2)
	for _, m := range []chainMemory{
		{tip: tip, known: true, began: true},
		{tip: tip, known: true},
		{tip: tip},
		{tip: other, known: true, began: true}, // of another tip: not written
	} {
		writeVerified(c.repo, tip, reflogPos{}, largestMemory{}, m, ledger.IndexName)
		v := readVerified(c.repo)
		want := m
		if m.tip != tip || !m.known {
			want = chainMemory{}
		}
		if v.tip != tip || v.chain != want {
			t.Errorf("wrote %+v, read %+v", m, v.chain)
		}
	}
}

// The verified file is read back as written, and anything else in it
// (another process of the user may write it) reads as what it says of
// itself or as nothing: never a panic, and what is read writes back to a
// file that reads the same.
func FuzzVerifiedFile(f *testing.F) {
	tip, after := commit(1), commit(3)
	for _, v := range []verified{
		{tip: tip},
		{tip: tip, pos: reflogPos{end: 42, after: after}, largest: largestMemory{tip: tip, checked: true, known: true, bound: 7},
			chain: chainMemory{tip: tip, known: true, began: true}},
		{tip: tip, largest: largestMemory{tip: tip, checked: true}, chain: chainMemory{tip: tip, known: true}},
		{tip: tip, index: ledger.IndexName},
		{tip: tip, checked: after, checkedIndex: ledger.IndexName},
		{tip: tip, checked: after, checkedIndex: ledger.IndexName, historyOnly: true},
		{tip: tip, largest: largestMemory{tip: tip, checked: true, known: true, bound: 9, holder: after}},
	} {
		f.Add(formatVerified(v))
	}
	f.Add([]byte(tip.String() + "\nlargest x\nlargest 12345678901\nreflog -1 " + after.String() + "\nchained maybe\n"))
	f.Add([]byte("not a commit\nlargest 3\n"))
	f.Add([]byte(tip.String() + "\nchecked " + after.String() + "\nchecked nothing v2\nchecked " + after.String() + " a b\n"))
	f.Add([]byte(tip.String() + "\r\nreflog 0 " + after.String() + "\n\x00chained yes"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := parseVerified(data)
		if v.tip.IsZero() && v != (verified{}) {
			t.Fatalf("a file naming no tip holds %+v", v)
		}
		if v.largest.checked && v.largest.tip != v.tip || v.chain.known && v.chain.tip != v.tip {
			t.Fatalf("a memory of another tip: %+v", v)
		}
		if again := parseVerified(formatVerified(v)); again != v {
			t.Fatalf("read %+v, written and read again %+v", v, again)
		}
	})
}

// The verified file a verify writes when it read the history clean up to
// a commit but found the ledger not clean names that commit after
// "history ": an older git-evolve, which reads the first line as a tip
// verified clean and looks only at what changed since, reads none there.
func TestHistoryCleanIsNoTipToOlderReaders(t *testing.T) {
	c, _ := recordedClone(t, 2, 0)
	x, checked := commit(1), commit(2)
	writeHistoryClean(c.repo, x, reflogPos{}, largestMemory{}, chainMemory{}, checked)
	data, err := os.ReadFile(verifiedPath(c.repo))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	if h, err := gitstore.ParseHash(strings.TrimSpace(first)); err == nil {
		t.Fatalf("the first line %q names %s, which an older reader takes for a tip verified clean", first, h)
	}
	v := readVerified(c.repo)
	if v.tip != x || !v.historyOnly || v.checked != checked || v.index != "" {
		t.Fatalf("read back %+v", v)
	}
}

// A verified file larger than what verify writes there holds nothing.
func TestVerifiedFileBounded(t *testing.T) {
	c, _ := recordedClone(t, 2, 0)
	tip := commit(1)
	writeVerified(c.repo, tip, reflogPos{}, largestMemory{}, chainMemory{}, ledger.IndexName)
	if v := readVerified(c.repo); v.tip != tip {
		t.Fatalf("read %+v", v)
	}
	big := append(formatVerified(verified{tip: tip}), bytes.Repeat([]byte("#\n"), maxVerifiedFile)...)
	if err := os.WriteFile(verifiedPath(c.repo), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if v := readVerified(c.repo); v != (verified{}) {
		t.Fatalf("a file of %d bytes read as %+v", len(big), v)
	}
}
