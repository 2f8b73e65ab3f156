package gitstore

import (
	"github.com/git-evolve/git-evolve/internal/testenv"
	"slices"
	"strings"
	"testing"
)

// TestObjectTypesBothWays: the types of many objects (asked of a git
// cat-file --batch-check of their own) are those the long-lived batch gives
// a few at a time, absent ones too; git cat-file -t judges.
func TestObjectTypesBothWays(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	commits := r.makeCommits(3)
	head := commits[len(commits)-1]
	tree := r.hash("rev-parse", head.String()+"^{tree}")
	blob := r.hash("hash-object", "-w", "--stdin")
	var hs []Hash
	for len(hs) <= objectTypesInBatch {
		hs = append(hs, commits[0], tree, blob, fakeObj(len(hs)), head)
	}
	repo := r.open()
	many, err := repo.ObjectTypes(hs)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(hs); i += objectTypesInBatch / 2 {
		few, err := repo.ObjectTypes(hs[i:min(i+objectTypesInBatch/2, len(hs))])
		if err != nil {
			t.Fatal(err)
		}
		for j, typ := range few {
			if many[i+j] != typ {
				t.Fatalf("%s: %q asked with many, %q with few", hs[i+j], many[i+j], typ)
			}
		}
	}
	for i, h := range hs[:5] {
		want := ""
		if out, err := r.gitErr("cat-file", "-t", h.String()); err == nil {
			want = strings.TrimSpace(out)
		}
		if many[i] != want {
			t.Errorf("%s is a %q, git cat-file -t says %q", h, many[i], want)
		}
	}
}

// A TypeQuery answers, in the order asked, what ObjectTypes answers: asked
// one at a time, past what a pipe holds before it is read, absent objects
// too; one closed without its answers ends its git.
func TestTypeQuery(t *testing.T) {
	testenv.Slow(t)
	r := newRepo(t)
	setEnv(t)
	commits := r.makeCommits(2)
	tree := r.hash("rev-parse", commits[1].String()+"^{tree}")
	blob := r.hash("hash-object", "-w", "--stdin")
	var hs []Hash
	for len(hs) < 20000 { // about 1 MB of answers
		hs = append(hs, commits[0], tree, blob, fakeObj(len(hs)), commits[1])
	}
	repo := r.open()
	var want []string // asked of the Repo's cat-file, a batch at a time
	for i := 0; i < len(hs); i += objectTypesInBatch {
		few, err := repo.ObjectTypes(hs[i:min(i+objectTypesInBatch, len(hs))])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, few...)
	}
	q := repo.NewTypeQuery()
	for _, h := range hs {
		q.Ask(h)
	}
	asked, got, err := q.Types()
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != len(hs) || len(got) != len(want) {
		t.Fatalf("%d asked, %d answers; want %d", len(asked), len(got), len(hs))
	}
	for i := range hs {
		if asked[i] != hs[i] || got[i] != want[i] {
			t.Fatalf("answer %d: %s %q, want %s %q", i, asked[i], got[i], hs[i], want[i])
		}
	}
	if q.p == nil {
		t.Error("a query of many objects did not start a git cat-file --batch-check")
	}
	// A few are asked of the Repo's cat-file: no git of their own.
	q = repo.NewTypeQuery()
	for _, h := range hs[:objectTypesInBatch] {
		q.Ask(h)
	}
	if asked, got, err := q.Types(); err != nil || q.p != nil || !slices.Equal(asked, hs[:objectTypesInBatch]) || !slices.Equal(got, want[:objectTypesInBatch]) {
		t.Errorf("a query of %d: %v (started a git: %v)", objectTypesInBatch, err, q.p != nil)
	}
	q = repo.NewTypeQuery()
	for _, h := range hs[:objectTypesInBatch+1] {
		q.Ask(h)
	}
	q.Close()
	if q.p == nil || q.p.cmd.ProcessState == nil {
		t.Error("a closed query's git is still running")
	}
}
