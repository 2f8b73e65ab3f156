package gitstore

import (
	"testing"
)

func TestReachable(t *testing.T) {
	tr := newRepo(t)
	commit := func(msg string) Hash {
		tr.git("commit", "-q", "--allow-empty", "-m", msg)
		return tr.hash("rev-parse", "HEAD")
	}
	r := tr.open()
	// An unborn HEAD reaches nothing.
	got, err := r.Reachable("HEAD", []Hash{ZeroHash})
	if err != nil || len(got) != 0 {
		t.Fatalf("unborn: %v, %v", got, err)
	}
	a := commit("a")
	b := commit("b")
	tr.git("checkout", "-q", "-b", "side")
	s := commit("side")
	tr.git("checkout", "-q", "main")
	c := commit("c")
	r = tr.open()
	got, err = r.Reachable("HEAD", []Hash{a, b, s, c, ZeroHash})
	if err != nil {
		t.Fatal(err)
	}
	if got[c] != 0 || got[b] != 1 || got[a] != 2 || len(got) != 3 {
		t.Fatalf("from main: %v", got)
	}
	got, err = r.Reachable("side", []Hash{a, c, s})
	if _, in := got[c]; err != nil || got[s] != 0 || got[a] != 2 || in {
		t.Fatalf("from side: %v, %v", got, err)
	}
	// Only the tip asked: no walk.
	got, err = r.Reachable("HEAD", []Hash{c})
	if _, in := got[c]; err != nil || !in {
		t.Fatalf("tip: %v, %v", got, err)
	}
	// The answer does not depend on the order the walk meets them.
	tr.git("merge", "-q", "--no-edit", "side")
	r = tr.open()
	got, err = r.Reachable("HEAD", []Hash{s, a})
	if _, in := got[s]; err != nil || !in || got[a] != 4 {
		t.Fatalf("after the merge: %v, %v", got, err)
	}
	// A commit HEAD does not reach is left out, after the walk of HEAD's
	// history asks git (git lists it from the side line alone), without a
	// walk of all of it; beside an object that is no commit (a tree), every
	// candidate is looked for in the walk, with the same answers.
	tr.git("checkout", "-q", "-b", "other", a.String())
	o := commit("other")
	tr.git("checkout", "-q", "main")
	tree := tr.hash("rev-parse", "HEAD^{tree}")
	r = tr.open()
	defer func(n int) { reachPrune = n }(reachPrune)
	for _, prune := range []int{0, 1, 1000} { // git asked at once, after a commit, never
		reachPrune = prune
		for _, cands := range [][]Hash{{o, b, s}, {o, b, s, tree}, {o}} {
			got, err = r.Reachable("HEAD", cands)
			_, inO := got[o]
			_, inS := got[s]
			if err != nil || inO || len(cands) > 1 && (!inS || got[b] == 0 || len(got) != 2) || len(cands) == 1 && len(got) != 0 {
				t.Fatalf("prune %d, with %d candidates: %v, %v", prune, len(cands), got, err)
			}
		}
	}
	unreached, err := r.notReachedFrom(tr.hash("rev-parse", "HEAD"), map[Hash]bool{o: true, b: true, s: true})
	if err != nil || !unreached[o] || len(unreached) != 1 {
		t.Fatalf("not reached: %v, %v", unreached, err)
	}
}
