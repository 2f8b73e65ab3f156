package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ObjectsHere says whether every object asked is in the store as a git
// started now finds it: loose or packed, not one that is gone, and not one
// a replace ref answers for.
func TestObjectsHere(t *testing.T) {
	tr := newRepo(t)
	commits := tr.makeCommits(2)
	repo := tr.open()
	if here, err := repo.ObjectsHere(nil); !here || err != nil {
		t.Errorf("nothing asked: %v, %v", here, err)
	}
	if here, err := repo.ObjectsHere(commits); !here || err != nil {
		t.Errorf("two commits: %v, %v", here, err)
	}
	// packed, the loose copies removed
	tr.git("repack", "-q", "-d")
	if here, err := repo.ObjectsHere(commits); !here || err != nil {
		t.Errorf("packed: %v, %v", here, err)
	}
	// a loose object removed, a replace ref naming another in its place
	gone := tr.hash("commit-tree", "-m", "gone", commits[1].String()+"^{tree}")
	name := gone.String()
	if err := os.Remove(filepath.Join(tr.dir, ".git", "objects", name[:2], name[2:])); err != nil {
		t.Fatal(err)
	}
	tr.git("replace", "-f", name, commits[0].String())
	if strings.TrimSpace(tr.git("cat-file", "-t", name)) != "commit" {
		t.Fatal("git does not answer for the object through the replace ref")
	}
	if here, err := repo.ObjectsHere([]Hash{commits[0], gone}); here || err != nil {
		t.Errorf("an object gone, a replace ref answering for it: %v, %v", here, err)
	}
}
