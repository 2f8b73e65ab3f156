package gitstore

import (
	"fmt"
	"strings"
	"testing"
)

func TestParsePushPorcelain(t *testing.T) {
	out := "To /somewhere/remote.git\n" +
		"!\t0123:refs/notes/evolve\t[rejected] (stale info)\n" +
		"!\t0123:refs/notes/evolve-fitness\t[rejected] (fetch first)\n" +
		"!\t0123:refs/notes/evolve-control\t[remote rejected] (pre-receive hook declined)\n" +
		"!\t0123:refs/evolve/claims/1\t[remote rejected] (cannot lock ref 'refs/evolve/claims/1': reference already exists)\n" +
		"*\t0123:refs/evolve/claims/4\t[new reference]\n" +
		"=\t0123:refs/notes/evolve-x\t[up to date]\n" +
		" \t0123:refs/notes/evolve-y\tabc..def\n" +
		"Done\n"
	var got []string
	for _, r := range parsePushPorcelain(out) {
		got = append(got, fmt.Sprintf("%s %s %v %s", r.Ref, r.Status, r.Rejected, r.Reason))
	}
	want := []string{
		"refs/notes/evolve rejected true stale info",
		"refs/notes/evolve-fitness rejected true fetch first",
		"refs/notes/evolve-control error false pre-receive hook declined",
		"refs/evolve/claims/1 rejected true cannot lock ref 'refs/evolve/claims/1': reference already exists",
		"refs/evolve/claims/4 new false ",
		"refs/notes/evolve-x up-to-date false ",
		"refs/notes/evolve-y ok false ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsePushPorcelain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
