package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/loop"
	"github.com/git-evolve/git-evolve/mirror"
)

// What a run adds to info/exclude before the agent's turn (loop's markers)
// holds every file the mirror keeps: a pattern the mirror adds during the
// turn (the operator's git evolve stop keeps the seeds' files) would be
// taken for the agent's change of info/exclude.
func TestRunExcludesTheMirrorsFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exclude")
	if _, err := loop.ExcludeMarkers(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, p := range mirror.ExcludePatterns() {
		found := false
		for _, l := range lines {
			found = found || l == p
		}
		if !found {
			t.Errorf("%s: the mirror excludes it, a run does not before the agent's turn", p)
		}
	}
}
