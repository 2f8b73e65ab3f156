package audit

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// forgeIndex commits, on the ledger, its tree with the index of cycles
// changed: listing obj under cycle n (add) or no longer (remove), the
// stamp kept, as another writer could push it. It returns the commit.
func (c *clone) forgeIndex(n int, obj string, add bool) string {
	c.t.Helper()
	return c.forgeIndexKey(ledger.CycleKey(n), obj, add)
}

// forgeIndexKey is forgeIndex of any key.
func (c *clone) forgeIndexKey(key, obj string, add bool) string {
	c.t.Helper()
	dirs := strings.Split(ledger.IndexName+"/"+path.Dir(key), "/")
	name := path.Base(key) + "-" + obj
	root := c.editTree(c.git("rev-parse", "refs/notes/evolve^{tree}"), dirs, name, add)
	commit := c.git("commit-tree", "-p", "refs/notes/evolve", "-m", "another writer", root)
	c.git("update-ref", "refs/notes/evolve", commit)
	return commit
}

// editTree is testenv.TreeEdited in the clone.
func (c *clone) editTree(tree string, dirs []string, name string, add bool) string {
	c.t.Helper()
	return testenv.TreeEdited(c.t, c.dir, tree, dirs, name, add)
}

// indexFindings are the messages of a report's index findings.
func indexFindings(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Kind == "index" {
			out = append(out, string(f.Severity)+": "+f.Message)
		}
	}
	return out
}

// A wrong index of cycles (the stamp kept, so readers take its word) is a
// breach to the first verify, to one that builds on a verify before, and
// to the check of a fetched ledger; repair builds the index again.
func TestVerifyIndexOfCycles(t *testing.T) {
	c, _ := recordedClone(t, 12, 5)
	rep, err := VerifyWith(c.l, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexFindings(rep); len(got) != 0 || rep.Breaches() != 0 {
		t.Fatalf("a ledger git-evolve wrote: %v (%d breaches)", got, rep.Breaches())
	}
	clean := c.git("rev-parse", "refs/notes/evolve")
	list, err := c.l.Show("4")
	if err != nil {
		t.Fatal(err)
	}
	on4 := list.Entries[0].Commit.String()
	c.forgeIndex(2, on4, true) // cycle 2 on the commit of cycle 4
	forged := c.forgeIndex(4, on4, false)
	want := []string{
		"breach: the ledger's index of cycles does not list cycle 4 on " + on4[:7] + ": a clone with no saved view does not show it; git evolve repair builds the index again",
		"breach: the ledger's index of cycles lists cycle 2 on " + on4[:7] + ", which its note does not hold; git evolve repair builds the index again",
	}
	check := func(name string, rep *Report) {
		t.Helper()
		if got := indexFindings(rep); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	// built on the verify before (what changed since the tip verified)
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("a verify after one", rep)
	// from git alone
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	check("a full verify", rep)
	// what a sync checks before it takes the ledger in
	cleanH, _ := gitstore.ParseHash(clean)
	forgedH, _ := gitstore.ParseHash(forged)
	for _, from := range []gitstore.Hash{cleanH, gitstore.ZeroHash} {
		fs, err := CheckIncoming(c.repo, from, forgedH)
		if err != nil {
			t.Fatal(err)
		}
		check("the ledger fetched", &Report{Findings: fs})
	}
	// under a notes commit plain git made on top, the index readers bring
	// forward is the forged one: still named
	c.git("notes", "--ref=evolve", "add", "-m", "a person's note", "HEAD~11")
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	check("under a commit of plain git", rep)
	for _, f := range rep.Findings {
		if f.Kind == "index" && f.NotesCommit != forged {
			t.Errorf("the finding names notes commit %s, not the one whose index lies (%s)", f.NotesCommit, forged)
		}
	}
	// repair builds it again; verify then finds it right
	out, err := Repair(openClone(t, c.dir).l, false)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Reindexed || out.NotesCommit == "" {
		t.Fatalf("repair: %+v", out)
	}
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexFindings(rep); len(got) != 0 {
		t.Errorf("after the repair: %v", got)
	}
	snap, err := c.repo.ReadNotes(store.NotesRef)
	if err != nil {
		t.Fatal(err)
	}
	if objs, ok, err := snap.IndexLookup(store.CycleIndex, ledger.CycleKey(4)); err != nil || !ok || len(objs) != 1 || objs[0].String() != on4 {
		t.Errorf("cycle 4 after the repair: %v %v %v", objs, ok, err)
	}
}

// An index that lists a note as holding a quarantine record (which status
// and the loop's rules then read) that it does not hold is a breach, named
// by a verify after a clean one and by a full one.
func TestVerifyIndexQuarantineForged(t *testing.T) {
	c, _ := recordedClone(t, 12, 5)
	if _, err := VerifyWith(c.l, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := c.l.Show("2")
	if err != nil {
		t.Fatal(err)
	}
	on2 := list.Entries[0].Commit.String()
	c.forgeIndexKey(ledger.QuarantineKey, on2, true)
	want := "breach: the ledger's index of cycles lists a quarantine record on " + on2[:7] + ", which its note does not hold; git evolve repair builds the index again"
	for _, opts := range []VerifyOptions{{}, {FullHistory: true, FromGit: true}} {
		rep, err := VerifyWith(openClone(t, c.dir).l, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := indexFindings(rep); strings.Join(got, "\n") != want {
			t.Errorf("verify %+v:\n got %q\nwant %q", opts, got, want)
		}
	}
}

// A ledger a git-evolve of the layout before wrote (its index in
// evolve-cycles.v1, which lists no quarantine record) is no breach: not
// to the check of a fetched ledger (a teammate who has not upgraded), not
// to verify; readers pass that index by, and the next record writes the
// current one, which lists the quarantine.
func TestIndexOfAnOlderLayoutIsNoBreach(t *testing.T) {
	c, _ := recordedClone(t, 12, 3)
	from := c.git("rev-parse", "refs/notes/evolve")
	name, keys := store.CycleIndex.Name, store.CycleIndex.Keys
	store.CycleIndex.Name = ledger.OldIndexNames[0]
	store.CycleIndex.Keys = func(note []byte) []string {
		return slices.DeleteFunc(ledger.IndexKeys(note), func(k string) bool { return k == ledger.QuarantineKey })
	}
	err := c.put(ledger.Record{Target: "flaky", Result: ledger.Quarantined, CanonicalSHA: "HEAD~1"})
	store.CycleIndex.Name, store.CycleIndex.Keys = name, keys
	if err != nil {
		t.Fatal(err)
	}
	to := c.git("rev-parse", "refs/notes/evolve")
	fromH, _ := gitstore.ParseHash(from)
	toH, _ := gitstore.ParseHash(to)
	for _, f := range []gitstore.Hash{fromH, gitstore.ZeroHash} {
		fs, err := CheckIncoming(c.repo, f, toH)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 0 {
			t.Errorf("the ledger fetched, from %s: %+v", f.Short(), fs)
		}
	}
	for _, opts := range []VerifyOptions{{}, {FullHistory: true, FromGit: true}} {
		rep, err := VerifyWith(openClone(t, c.dir).l, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := indexFindings(rep); len(got) != 0 || rep.Breaches() != 0 {
			t.Errorf("verify %+v: %q (%d breaches)", opts, got, rep.Breaches())
		}
	}
	if err := c.put(ledger.Record{Target: "lint", Result: ledger.Harvested, CanonicalSHA: "HEAD"}); err != nil {
		t.Fatal(err)
	}
	tree := c.git("ls-tree", "-r", "--name-only", "refs/notes/evolve")
	if strings.Contains(tree, ledger.OldIndexNames[0]+"/") || !strings.Contains(tree, ledger.IndexName+"/"+ledger.QuarantineKey+"-") {
		t.Errorf("after a record, the tree lists:\n%s", tree)
	}
	rep, err := VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexFindings(rep); len(got) != 0 || rep.Breaches() != 0 {
		t.Errorf("verify after the record: %q (%d breaches)", got, rep.Breaches())
	}
}
