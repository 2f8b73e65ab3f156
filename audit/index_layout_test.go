package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A clone that verified its ledger clean with a git-evolve of the layout
// before (which checks evolve-cycles.v1 alone) remembers that tip as
// verified. After the upgrade, readers take the tip's evolve-cycles.v2
// (its stamp right), which that verify never compared with the notes. The
// verified file says which layout it compared: the first verify after the
// upgrade compares this one whole, and names one another writer pushed
// without a quarantine record, as verify --full does.
func TestVerifyAfterUpgradeChecksTheIndexTheOlderBuildPassedBy(t *testing.T) {
	c, _ := recordedClone(t, 12, 3)
	for _, at := range []string{"HEAD~2", "HEAD~1"} {
		if err := c.put(ledger.Record{Target: "flaky", Result: ledger.Quarantined, CanonicalSHA: at}); err != nil {
			t.Fatal(err)
		}
	}
	q := c.git("rev-parse", "HEAD~1")
	// another writer: the index the new layout keeps no longer lists the
	// quarantine, its stamp kept
	c.forgeIndexKey(ledger.QuarantineKey, q, false)

	// this clone, still on the layout before, verifies the ledger it took
	name, keys := store.CycleIndex.Name, store.CycleIndex.Keys
	store.CycleIndex.Name = ledger.OldIndexNames[0]
	store.CycleIndex.Keys = func(note []byte) []string {
		return slices.DeleteFunc(ledger.IndexKeys(note), func(k string) bool { return k == ledger.QuarantineKey })
	}
	rep, err := VerifyWith(openClone(t, c.dir).l, VerifyOptions{})
	store.CycleIndex.Name, store.CycleIndex.Keys = name, keys
	if err != nil {
		t.Fatal(err)
	}
	if rep.Breaches() != 0 {
		t.Fatalf("premise: the older build's verify: %d breaches", rep.Breaches())
	}

	// upgraded: a reader with no saved view takes the index's word
	os.Remove(filepath.Join(c.dir, ".git", "evolve", "ledger.view"))
	list, err := openClone(t, c.dir).l.Quarantines(store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quarantines read with no saved view: %d of 2", len(list.Entries))
	want := "breach: the ledger's index of cycles does not list a quarantine record on " + q[:7]
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(indexFindings(rep), "\n"); !strings.Contains(got, want) {
		t.Errorf("the first verify after the upgrade: %q (%d breaches), want %q", got, rep.Breaches(), want)
	}
	rep, err = VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(indexFindings(rep), "\n"); !strings.Contains(got, want) {
		t.Errorf("verify --full after the upgrade: %q", got)
	}
}

// A record that moves notes another tool left beside a fanout subtree
// (one of them at two paths, the copy in its bucket with a line of text
// more) into their buckets is no breach to the check a sync makes of the
// ledger fetched from the tree before, to a verify since that tree, nor to
// a full one.
func TestMoveOfNotesBesideFanoutIsNoBreach(t *testing.T) {
	c, _ := recordedClone(t, 12, 4)
	noted := c.noted()
	if len(noted) < 2 || noted[0][:2] == noted[1][:2] {
		t.Skip("premise: two noted commits in two buckets")
	}
	x, y := noted[0], noted[1]
	root := c.git("rev-parse", "refs/notes/evolve^{tree}")
	nx := c.git("rev-parse", "refs/notes/evolve:"+x)
	ny := c.git("rev-parse", "refs/notes/evolve:"+y)
	cx := c.gitIn(c.git("cat-file", "-p", nx)+"\nhand-written\n", "hash-object", "-w", "--stdin")
	var lines []string
	for _, l := range strings.Split(c.git("ls-tree", root), "\n") {
		if l != "" && !strings.HasSuffix(l, "\t"+y) {
			lines = append(lines, l)
		}
	}
	lines = append(lines,
		"040000 tree "+c.gitIn("100644 blob "+ny+"\t"+y[2:]+"\n", "mktree")+"\t"+y[:2],
		"040000 tree "+c.gitIn("100644 blob "+cx+"\t"+x[2:]+"\n", "mktree")+"\t"+x[:2])
	hostile := c.git("commit-tree", "-p", "refs/notes/evolve", "-m", "another tool", c.gitIn(strings.Join(lines, "\n")+"\n", "mktree"))
	c.git("update-ref", "refs/notes/evolve", hostile)
	if rep, err := VerifyWith(openClone(t, c.dir).l, VerifyOptions{}); err != nil || rep.Breaches() != 0 {
		t.Fatalf("premise: the tree another tool wrote verifies clean: %v %+v", err, rep)
	}
	if err := c.put(ledger.Record{Target: "t", Result: ledger.Harvested, CanonicalSHA: "HEAD"}); err != nil {
		t.Fatal(err)
	}
	if got := c.git("ls-tree", "refs/notes/evolve"); strings.Contains(got, "\t"+x+"\n") || strings.Contains(got, "\t"+x) {
		t.Fatalf("premise: the note on %s is still flat:\n%s", x[:7], got)
	}
	fromH, _ := gitstore.ParseHash(hostile)
	toH, _ := gitstore.ParseHash(c.git("rev-parse", "refs/notes/evolve"))
	fs, err := CheckIncoming(c.repo, fromH, toH)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Severity == Breach {
			t.Errorf("the ledger fetched: %+v", f)
		}
	}
	for _, opts := range []VerifyOptions{{}, {FullHistory: true, FromGit: true}} {
		rep, err := VerifyWith(openClone(t, c.dir).l, opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Breaches() != 0 {
			t.Errorf("verify %+v: %+v", opts, rep.Findings)
		}
	}
}
