// Package fitness keeps fitness snapshots in git: each is one JSON line in
// the note, under refs/notes/evolve-fitness, of the commit that was
// measured, so that snapshots reach other clones as the ledger does (the
// fetch refspec init writes, refs/notes/evolve*, carries this ref too). A
// snapshot of kind "baseline" is its era's baseline: the first measured
// while a goals file's content (its era) was current.
package fitness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"git-evolve/gitstore"
	"git-evolve/goals"
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
	author, committer, err := repo.Identity()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		snap, err := repo.ReadNotes(Ref)
		if err != nil {
			return err
		}
		blobs, err := snap.Find(commit)
		if err != nil {
			return err
		}
		lines := [][]byte{line}
		for _, b := range blobs {
			data, err := repo.ReadBlob(b)
			if err != nil {
				return err
			}
			for _, l := range bytes.Split(data, []byte("\n")) {
				if l = bytes.TrimSpace(l); len(l) > 0 {
					lines = append(lines, l)
				}
			}
		}
		// Sorted and unique, as git notes merge -s cat_sort_uniq leaves them.
		sort.Slice(lines, func(i, j int) bool { return bytes.Compare(lines[i], lines[j]) < 0 })
		var note []byte
		for i, l := range lines {
			if i > 0 && bytes.Equal(l, lines[i-1]) {
				continue
			}
			note = append(append(note, l...), '\n')
		}
		blob, err := repo.WriteBlob(note)
		if err != nil {
			return err
		}
		tree, err := snap.ApplyNotes([]gitstore.NoteEdit{{Object: commit, Blob: blob}}, nil)
		if err != nil {
			return err
		}
		_, err = snap.CommitNotes(Ref, tree, fmt.Sprintf("git evolve: %s of %s\n", kind, s.Era), author, committer)
		var locked *gitstore.LockedError
		switch {
		case err == nil:
			return nil
		case (errors.Is(err, gitstore.ErrRefChanged) || errors.As(err, &locked)) && attempt < 20:
			time.Sleep(time.Duration(1+rand.IntN(10*attempt)) * time.Millisecond)
		default:
			return err
		}
	}
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
	refs := []string{Ref}
	remotes, err := repo.Remotes()
	if err != nil {
		return nil, err
	}
	for _, r := range remotes {
		refs = append(refs, "refs/notes/remotes/"+r+"/evolve-fitness")
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
	return snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		for _, l := range bytes.Split(data, []byte("\n")) {
			var s Stored
			if len(bytes.TrimSpace(l)) == 0 || json.Unmarshal(l, &s) != nil {
				continue // not a snapshot this reads
			}
			if s.Kind == KindBaseline && s.Era == era && (*best == nil || s.Timestamp < (*best).Timestamp) {
				*best = &Found{Commit: obj, Stored: s}
			}
		}
		return nil
	})
}
