// Package fitness keeps fitness snapshots in git: each is one JSON line in
// the note, under refs/notes/evolve-fitness, of the commit that was
// measured, so that snapshots reach other clones as the ledger does (the
// fetch refspec init writes, refs/notes/evolve*, carries this ref too). A
// snapshot of kind "baseline" is its era's baseline: the first measured
// while a goals file's content (its era) was current.
package fitness

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
)

// Ref is the notes ref that holds the snapshots.
const Ref = "refs/notes/evolve-fitness"

// The kinds of snapshot.
const (
	KindSnapshot = "snapshot"
	KindBaseline = "baseline"
)

// Stored is a snapshot as kept in a note.
type Stored struct {
	Kind string `json:"kind"`
	goals.Snapshot
}

// Save adds a snapshot of kind to the note on commit, redoing the write when
// another writer moved the ref first.
func Save(repo *gitstore.Repo, commit gitstore.Hash, kind string, s *goals.Snapshot) error {
	line, err := json.Marshal(Stored{Kind: kind, Snapshot: *s})
	if err != nil {
		return err
	}
	return repo.AddNoteLines(Ref, commit, [][]byte{line}, fmt.Sprintf("git evolve: %s of %s\n", kind, s.Era))
}

// Found is a stored snapshot and the commit it was measured on.
type Found struct {
	Commit gitstore.Hash
	Stored
}

// Baseline returns the baseline of era (the earliest, if there are
// several: two clones may each have captured one), or nil. It looks in the
// local snapshots and in each remote's fetched copy of them.
func Baseline(repo *gitstore.Repo, era string) (*Found, error) {
	refs, err := snapshotRefs(repo)
	if err != nil {
		return nil, err
	}
	var best *Found
	for _, ref := range refs {
		if err := baselineIn(repo, ref, era, &best); err != nil {
			return nil, err
		}
	}
	return best, nil
}

func baselineIn(repo *gitstore.Repo, ref, era string, best **Found) error {
	snap, err := repo.ReadNotes(ref)
	if err != nil {
		return err
	}
	return snap.ForEachLine(func(obj gitstore.Hash, l []byte) error {
		var s Stored
		if json.Unmarshal(l, &s) != nil {
			return nil // not a snapshot this reads
		}
		if s.Kind == KindBaseline && s.Era == era && (*best == nil || s.Timestamp < (*best).Timestamp) {
			*best = &Found{Commit: obj, Stored: s}
		}
		return nil
	})
}

// All returns every stored snapshot, the local ones and each remote's
// fetched copy (one measured on a commit in two places is listed once), in
// the order they were measured.
func All(repo *gitstore.Repo) ([]Found, error) {
	refs, err := snapshotRefs(repo)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Found
	for _, ref := range refs {
		snap, err := repo.ReadNotes(ref)
		if err != nil {
			return nil, err
		}
		err = snap.ForEachLine(func(obj gitstore.Hash, l []byte) error {
			var s Stored
			if json.Unmarshal(l, &s) != nil || s.Kind == "" {
				return nil // not a snapshot this reads
			}
			key := obj.String() + "\x00" + string(l)
			if !seen[key] {
				seen[key] = true
				out = append(out, Found{Commit: obj, Stored: s})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp < out[j].Timestamp })
	return out, nil
}

// snapshotRefs are the refs snapshots are read from: the local one, and
// each remote's fetched copy (refs/notes/remotes/<remote>/evolve-fitness,
// as the ledger's copies are found: from the refs, with no git process).
func snapshotRefs(repo *gitstore.Repo) ([]string, error) {
	copies, err := repo.TrackingNotes(strings.TrimPrefix(Ref, "refs/notes/"))
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(copies))
	return append([]string{Ref}, names...), nil
}
