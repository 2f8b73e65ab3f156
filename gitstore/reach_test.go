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
}
