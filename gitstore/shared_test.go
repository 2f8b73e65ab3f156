package gitstore

import "testing"

// A commit only the branch HEAD names holds can be rewritten; one a
// remote-tracking branch, a tag or another branch holds is shared, as git
// for-each-ref --contains tells.
func TestShared(t *testing.T) {
	r := newRepo(t)
	r.git("commit", "-q", "--allow-empty", "-m", "one")
	one := r.hash("rev-parse", "HEAD")
	r.git("commit", "-q", "--allow-empty", "-m", "two")
	two := r.hash("rev-parse", "HEAD")
	repo := r.open()
	shared := func(h Hash) bool {
		t.Helper()
		ok, err := repo.Shared(h)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if shared(two) || shared(one) {
		t.Fatal("commits only main holds are shared")
	}
	r.git("update-ref", "refs/remotes/origin/main", one.String())
	if !shared(one) || shared(two) {
		t.Fatalf("with origin/main at one: shared(one) %v, shared(two) %v; want true, false", shared(one), shared(two))
	}
	r.git("tag", "v1", two.String())
	if !shared(two) {
		t.Fatal("a tagged commit is not shared")
	}
	r.git("tag", "-d", "v1")
	r.git("branch", "other", two.String())
	if !shared(two) {
		t.Fatal("a commit another branch holds is not shared")
	}
	r.git("checkout", "-q", "--detach", "HEAD")
	r.git("branch", "-D", "other")
	if !shared(two) { // main holds it, and a detached HEAD names no branch
		t.Fatal("with HEAD detached, a commit main holds is not shared")
	}
}
