// Package setup makes a repository ready for git-evolve: the git config
// that carries ledger notes through rewrites and shows them in git log, and
// fetch refspecs that bring each remote's ledger into a tracking ref. It
// only ever adds config values, never replaces or removes the user's, and
// it never writes a push refspec or a fetch refspec into refs/notes/evolve
// itself (either would break or silently overwrite a user's fetch and push).
package setup

import (
	"fmt"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
)

// NotesRef is the ledger's notes ref.
const NotesRef = "refs/notes/evolve"

// NotesGlob names the ledger for notes.rewriteRef and notes.displayRef as a
// glob that matches it alone: git warns about a missing exact ref on every
// git log and git commit --amend until the first record, but not about a
// glob that matches nothing. (A wider glob, refs/notes/evolve*, would also
// show the fitness snapshots in git log and carry them through rewrites,
// where they no longer describe the tree.)
const NotesGlob = "refs/notes/evolv[e]"

// TrackingRef is where the ledger of remote is fetched to.
func TrackingRef(remote string) string { return "refs/notes/remotes/" + remote + "/evolve" }

// FetchRefspec is the tracking fetch refspec for remote. It is not forced:
// a remote's ledger only moves forward (git-evolve pushes merges, with a
// lease), so its tracking copy always fast-forwards, and a ledger rewritten
// by force on the remote is reported by git fetch instead of silently
// replacing the copy. It is a glob (refs/notes/evolve* matches
// refs/notes/evolve itself) because git refuses to fetch at all when the
// source of a configured refspec without a glob is missing on the remote:
// a remote without a ledger would break the user's git fetch and git pull.
// The glob also carries the ledger's sibling refs (refs/notes/evolve-…).
func FetchRefspec(remote string) string {
	return NotesRef + "*:" + TrackingRef(remote) + "*"
}

// Change is one config value Init added.
type Change struct {
	Key, Value string
}

func (c Change) String() string { return fmt.Sprintf("%s = %s", c.Key, c.Value) }

// Init adds what is missing of: notes.rewriteRef and notes.displayRef for
// the ledger (NotesGlob), and a tracking fetch refspec for every remote. It returns
// what it added; a second run adds nothing.
func Init(repo *gitstore.Repo) ([]Change, error) {
	want := []Change{
		{"notes.rewriteRef", NotesGlob},
		{"notes.displayRef", NotesGlob},
	}
	remotes, err := repo.Remotes()
	if err != nil {
		return nil, err
	}
	for _, r := range remotes {
		want = append(want, Change{"remote." + r + ".fetch", FetchRefspec(r)})
	}
	var done []Change
	for _, c := range want {
		have, err := repo.ConfigGetAll(c.Key)
		if err != nil {
			return done, err
		}
		if slices.Contains(have, c.Value) {
			continue
		}
		if err := repo.ConfigAdd(c.Key, c.Value); err != nil {
			return done, err
		}
		done = append(done, c)
	}
	return done, nil
}

// EnsureFetchRefspec adds remote's tracking fetch refspec when its config
// lacks it (a remote added after init), and says whether it did: from then
// on a plain git fetch brings the remote's ledger.
func EnsureFetchRefspec(repo *gitstore.Repo, remote string) (bool, error) {
	key := "remote." + remote + ".fetch"
	have, err := repo.ConfigValues(key) // from the config read once a process
	if err != nil || slices.Contains(have, FetchRefspec(remote)) {
		return false, err
	}
	return true, repo.ConfigAdd(key, FetchRefspec(remote))
}
