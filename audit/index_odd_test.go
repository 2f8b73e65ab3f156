package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// A hostile remote's ledger whose index of cycles holds its "0/0"
// directory twice (an empty tree first, the real one second; git mktree
// writes it, fetch does not fsck by default), the stamp kept. Readers would descend
// into the first "0" and find no cycle while a walk of the whole index
// found every entry: readers take no index with a directory that holds a
// name twice, and verify and the incoming check name it.
func TestVerifyIndexDirectoryTwice(t *testing.T) {
	c, _ := recordedClone(t, 12, 5)
	list, err := c.l.Show("4")
	if err != nil {
		t.Fatal(err)
	}
	on4 := list.Entries[0].Commit.String()
	root := c.git("rev-parse", "refs/notes/evolve^{tree}")
	idx := c.git("rev-parse", "refs/notes/evolve:"+ledger.IndexName)
	// the directory of cycles 0 to 99 (0/0) twice in 0/, an empty one first
	empty := c.gitIn("", "mktree")
	zero := c.git("rev-parse", idx+":0")
	forgedZero := c.gitIn("040000 tree "+empty+"\t0\n"+c.git("ls-tree", zero)+"\n", "mktree")
	if ls := c.git("ls-tree", forgedZero); !strings.HasPrefix(ls, "040000 tree "+empty+"\t0\n") {
		t.Fatalf("premise: the empty 0 first:\n%s", ls)
	}
	var topLines []string
	for _, l := range strings.Split(c.git("ls-tree", idx), "\n") {
		if strings.HasSuffix(l, "\t0") {
			l = "040000 tree " + forgedZero + "\t0"
		}
		topLines = append(topLines, l)
	}
	forgedIdx := c.gitIn(strings.Join(topLines, "\n")+"\n", "mktree")
	var lines []string
	for _, l := range strings.Split(c.git("ls-tree", root), "\n") {
		if strings.HasSuffix(l, "\t"+ledger.IndexName) {
			l = "040000 tree " + forgedIdx + "\t" + ledger.IndexName
		}
		lines = append(lines, l)
	}
	forged := c.git("commit-tree", "-p", "refs/notes/evolve", "-m", "another writer", c.gitIn(strings.Join(lines, "\n")+"\n", "mktree"))
	c.git("update-ref", "refs/notes/evolve", forged)

	rep, err := VerifyWith(openClone(t, c.dir).l, VerifyOptions{FullHistory: true, FromGit: true})
	if err != nil {
		t.Fatal(err)
	}
	forgedH, _ := gitstore.ParseHash(forged)
	fs, err := CheckIncoming(c.repo, gitstore.ZeroHash, forgedH)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(c.dir, ".git", "evolve", "ledger.view"))
	_, showErr := openClone(t, c.dir).l.Show("4")
	if showErr != nil {
		t.Errorf("show 4 (on %s) with no view: %v", on4[:7], showErr)
	}
	if len(indexFindings(rep)) == 0 {
		t.Errorf("verify does not name the index: %d breaches", rep.Breaches())
	}
	if len(indexFindings(&Report{Findings: fs})) == 0 {
		t.Errorf("the incoming check does not name the index: %v", fs)
	}
}
