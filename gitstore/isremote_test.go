package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIsRemote: whether a name is a remote, answered from the config when
// the config names it, is what git remote lists, for remotes set in odd
// ways (a subsection with a dot, a case, no url; an old .git/remotes file,
// which git remote may or may not list) and for names that are none.
func TestIsRemote(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	r.git("config", "remote.weird.fetch", "+refs/heads/*:refs/remotes/weird/*")
	r.git("config", "remote.a.b.url", "/x")
	r.git("config", "remote.Up.url", "/y")
	r.git("config", "remote.onlyprune.prune", "true")
	legacy := filepath.Join(r.dir, ".git", "remotes")
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(legacy, "old"), []byte("URL: /z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	listed := strings.Fields(r.git("remote"))
	if !slices.Contains(listed, "a.b") || !slices.Contains(listed, "onlyprune") {
		t.Fatalf("premise: git remote lists %v", listed)
	}
	for _, name := range []string{"weird", "a.b", "a", "b", "Up", "up", "onlyprune", "old", "/x", "nothere", "remote"} {
		repo := r.open()
		got, err := repo.IsRemote(name)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Contains(listed, name); got != want {
			t.Errorf("IsRemote(%q) = %v, git remote says %v", name, got, want)
		}
	}
}
