package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A ledger whose tip is missing from the object store cannot be read, and
// its history ends there. Repair builds it again when this clone still has
// what the tip held: on the newest notes commit of the reflog of
// refs/notes/evolve that is whole (itself, its notes tree and its history
// here), with every record the ledger's saved view holds (when the view
// describes the missing tip) that the older commit lacks; refs/notes/evolve
// moves from the missing tip to the commit made. When the view describes
// another notes commit, what the tip added cannot be read here, and repair
// says so (fetch it from a clone that has it).

// RebuiltTrailer names, in the message of a notes commit repair made, the
// missing tip it builds the ledger again in place of.
const RebuiltTrailer = "Evolve-Rebuilt"

// rebuildPlan is how repair would build again a ledger whose tip is
// missing.
type rebuildPlan struct {
	tip, base gitstore.Hash
	restored  []Restored
}

// planRebuild is the plan for the local ledger when its tip is missing
// (nil when the tip is here), or why there is none.
func planRebuild(l *store.Ledger) (*rebuildPlan, string, error) {
	repo := l.Repo()
	tip, ok, err := repo.RefHash(store.NotesRef)
	if err != nil || !ok {
		return nil, "", err
	}
	if there, err := repo.HasObject(tip); err != nil || there {
		return nil, "", err
	}
	notes, saved, ok := l.SavedView()
	if !ok || notes != tip {
		return nil, fmt.Sprintf("the ledger's tip %s is missing, and this clone's saved view of the ledger does not describe it: what it held cannot be read here; fetch it from a clone that has it (git evolve sync)", tip.Short()), nil
	}
	base, err := wholeReflogEntry(repo, tip)
	if err != nil {
		return nil, "", err
	}
	plan := &rebuildPlan{tip: tip, base: base}
	have := map[string]bool{}
	if !base.IsZero() {
		snap, err := repo.NotesAt(base)
		if err != nil {
			return nil, "", err
		}
		err = snap.ForEachNote(func(_ gitstore.Hash, data []byte) error {
			for k := range byKey(data) {
				have[k] = true
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
	}
	for _, s := range saved {
		r, err := ledger.Parse(s.Line)
		if err != nil {
			continue
		}
		k := r.ID
		if k == "" {
			k = noID + ledger.Digest(s.Line)
		}
		if have[k] {
			continue
		}
		have[k] = true
		plan.restored = append(plan.restored, Restored{Cycle: r.Cycle, ID: r.ID, Commit: s.Commit.String(), Was: rebuiltWas, Line: string(s.Line)})
	}
	return plan, "", nil
}

// rebuiltWas says a record was put back from the saved view.
const rebuiltWas = "missing with the ledger's tip"

// wholeReflogEntry is the newest notes commit the reflog of the ledger
// names, other than tip, that is whole here: the commit, its notes tree and
// its history (zero when none is: the ledger is built from nothing).
func wholeReflogEntry(repo *gitstore.Repo, tip gitstore.Hash) (gitstore.Hash, error) {
	entries, _, err := repo.ReflogSince(store.NotesRef, 0, gitstore.ZeroHash)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	tried := map[gitstore.Hash]bool{tip: true, gitstore.ZeroHash: true}
	for i := len(entries) - 1; i >= 0; i-- {
		for _, h := range []gitstore.Hash{entries[i].New, entries[i].Old} {
			if tried[h] {
				continue
			}
			tried[h] = true
			if ok, err := repo.HasObject(h); err != nil || !ok {
				continue
			}
			if missing, _, err := repo.MissingInTree(h); err != nil || len(missing) > 0 {
				continue
			}
			if _, err := repo.RevList(h.String()); err != nil {
				continue
			}
			return h, nil
		}
	}
	return gitstore.ZeroHash, nil
}

// rebuild writes the plan: a notes commit on its base with the records put
// back, to which refs/notes/evolve moves from the missing tip.
func (p *rebuildPlan) write(l *store.Ledger) (gitstore.Hash, error) {
	repo := l.Repo()
	author, committer, err := repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	snap := repo.EmptyNotes()
	var parents []gitstore.Hash
	if !p.base.IsZero() {
		if snap, err = repo.NotesAt(p.base); err != nil {
			return gitstore.ZeroHash, err
		}
		parents = []gitstore.Hash{p.base}
	}
	byObj := map[gitstore.Hash][]string{}
	var objs []gitstore.Hash
	for _, r := range p.restored {
		h, err := gitstore.ParseHash(r.Commit)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		if _, ok := byObj[h]; !ok {
			objs = append(objs, h)
		}
		byObj[h] = append(byObj[h], r.Line)
	}
	slices.SortFunc(objs, func(a, b gitstore.Hash) int { return strings.Compare(a.String(), b.String()) })
	var edits []gitstore.NoteEdit
	for _, obj := range objs {
		data, err := noteText(repo, snap, obj)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		recs, bad := ledger.ParseLines(data)
		for _, line := range byObj[obj] {
			rec, err := ledger.Parse([]byte(line))
			if err != nil {
				return gitstore.ZeroHash, err
			}
			recs = append(recs, rec)
		}
		note := ledger.FormatNote(recs, nil)
		for _, b := range bad {
			note = append(append(note, b.Text...), '\n')
		}
		blob, err := repo.WriteBlob(note)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		edits = append(edits, gitstore.NoteEdit{Object: obj, Blob: blob})
	}
	tree, err := snap.Tree()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	// an older layout's index of cycles, if the base has one, goes
	var old map[string]gitstore.Hash
	if !tree.IsZero() {
		if old, err = snap.TakingOut(nil, ledger.OldIndexNames...); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	if len(edits) > 0 || len(old) > 0 || tree.IsZero() {
		if tree, err = snap.ApplyNotesIndexed(edits, old, store.CycleIndex); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	var msg strings.Builder
	from := "nothing"
	if !p.base.IsZero() {
		from = p.base.Short()
	}
	fmt.Fprintf(&msg, "git evolve: repair the ledger (its tip %s was missing; built again on %s, %d record(s) put back)\n\n", p.tip.Short(), from, len(p.restored))
	for _, r := range p.restored {
		fmt.Fprintf(&msg, "- cycle %d (%s) on %s: put back as the saved view had it\n", r.Cycle, shownID(keyOrNoID(r.ID)), r.Commit[:7])
	}
	fmt.Fprintf(&msg, "\n%s: %s\n", RebuiltTrailer, p.tip)
	c, err := repo.WriteCommit(tree, parents, msg.String(), author, committer)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if err := repo.ResetRef(store.NotesRef, c, p.tip, "git evolve: repair, the missing tip built again"); err != nil {
		return gitstore.ZeroHash, err
	}
	return c, nil
}

// keyOrNoID is id, or the key prefix of a record with none (for shownID).
func keyOrNoID(id string) string {
	if id == "" {
		return noID
	}
	return id
}
