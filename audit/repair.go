package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// Restored is a record repair puts back as it was.
type Restored struct {
	Cycle  int    `json:"cycle"`
	ID     string `json:"id"`
	Commit string `json:"commit"` // the commit whose note holds it
	// Was is the change it undoes: edited or deleted, and the notes commit
	// that made it when the ledger's history shows it.
	Was         string `json:"was"`
	NotesCommit string `json:"notes_commit,omitempty"`
	Line        string `json:"line"`
	// From is, for a record lost from the ledger (Was "lost"), the notes
	// commit it is put back as: the one that added it, which the ledger no
	// longer descends from.
	From string `json:"from,omitempty"`
}

// RepairReport is what repair did, or would do.
type RepairReport struct {
	Restored []Restored `json:"restored"`
	// Unrepairable are breaches the ledger's history cannot mend (no
	// earlier version of the record is left): accept them, or mend by hand.
	Unrepairable []Finding `json:"unrepairable"`
	// NotesCommit is the notes commit repair made ("" for a dry run, or
	// when there was nothing to restore).
	NotesCommit string `json:"notes_commit,omitempty"`
	// Refs are the saved work whose deleted refs repair puts back.
	Refs []RestoredRef `json:"refs"`
	// Removed are the objects whose note path held no note (a submodule
	// entry, a symbolic link) that repair takes out of the ledger.
	Removed []string `json:"removed"`
	// Reindexed says the ledger's index of cycles was found wrong and is
	// built again from the notes (with dryRun: would be).
	Reindexed bool `json:"reindexed"`
}

// RestoredRef is a ref of saved work put back on its commit.
type RestoredRef struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// Repair puts back, as one new notes commit, every record verify finds
// edited or deleted, as the ledger's own history had it before the change
// (for a change the history no longer shows, the version the record chain
// names). The commit's message lists each record restored, and names each
// notes commit whose change it undoes (RepairTrailer), so that verify, here
// and in every clone sync brings it to, reads the ledger as clean again.
// With dryRun nothing is written.
func Repair(l *store.Ledger, dryRun bool) (out *RepairReport, err error) {
	l = l.Local() // the local ledger is what it mends
	repo := l.Repo()
	out = &RepairReport{Restored: []Restored{}, Unrepairable: []Finding{}, Refs: []RestoredRef{}, Removed: []string{}}
	// A ledger whose tip is missing is built again first (rebuild.go).
	plan, why, err := planRebuild(l)
	if err != nil {
		return nil, err
	}
	switch {
	case why != "":
		out.Unrepairable = append(out.Unrepairable, Finding{Severity: Breach, Kind: "missing", Message: why})
		return out, nil
	case plan != nil && dryRun:
		out.Restored = append(out.Restored, plan.restored...)
		return out, nil
	case plan != nil:
		c, err := plan.write(l)
		if err != nil {
			return nil, err
		}
		if verifiedTip(repo) == plan.tip {
			// What this clone verified is no longer here; what it held is
			// again, on the commit it was built on.
			writeVerified(repo, plan.base, reflogPos{}, largestMemory{}, chainMemory{}, "")
		}
		defer func(rebuilt gitstore.Hash, restored []Restored) {
			if out != nil {
				out.Restored = append(restored, out.Restored...)
				if out.NotesCommit == "" {
					out.NotesCommit = rebuilt.String()
				}
			}
		}(c, plan.restored)
	}
	// The whole history, not just what was verified since: a breach found
	// before is still to mend.
	rep, err := VerifyWith(l, VerifyOptions{FullHistory: true})
	if err != nil {
		return nil, err
	}
	// A record is known by its id, or, with none, by its line.
	type key struct{ obj, id string }
	keyOf := func(obj, id, line string) key {
		if id == "" {
			return key{obj, "\x00" + line}
		}
		return key{obj, id}
	}
	restore := map[key]Restored{}
	var order []key
	put := func(k key, r Restored) {
		if _, had := restore[k]; !had {
			order = append(order, k)
		}
		restore[k] = r // the history is read newest first: the last is the oldest version
	}
	chainOnly := map[string]Finding{}
	var parents []gitstore.Hash // ledgers this one must descend from again
	for _, f := range rep.Findings {
		if f.Severity != Breach {
			continue
		}
		switch {
		case f.Kind == "save-deleted":
			h, _ := gitstore.ParseHash(f.Commit)
			if ok, err := repo.HasObject(h); err != nil {
				return nil, err
			} else if !ok {
				out.Unrepairable = append(out.Unrepairable, f)
				continue
			}
			out.Refs = append(out.Refs, RestoredRef{Ref: f.Ref, Commit: f.Commit})
		case f.Kind == "not-a-note":
			out.Removed = append(out.Removed, f.Commit)
		case f.Kind == "index":
			out.Reindexed = true
		case f.Kind == "rewritten" || f.Kind == "gone":
			v, _ := gitstore.ParseHash(f.NotesCommit)
			if ok, err := repo.HasObject(v); err != nil {
				return nil, err
			} else if !ok {
				out.Unrepairable = append(out.Unrepairable, f)
				continue
			}
			lost, err := lostSince(repo, v, byLine(rep, l))
			if err != nil {
				return nil, err
			}
			for _, r := range lost {
				r.NotesCommit = v.String()
				put(keyOf(r.Commit, r.ID, r.Line), r)
			}
			parents = append(parents, v)
		case f.Kind == "lost" && f.Original != "":
			put(keyOf(f.Commit, f.ID, f.Original), Restored{Cycle: f.Cycle, ID: f.ID, Commit: f.Commit, Was: f.Kind, NotesCommit: f.NotesCommit, Line: f.Original, From: f.source})
		case (f.Kind == "edited" || f.Kind == "deleted") && f.Original != "":
			put(keyOf(f.Commit, f.ID, f.Original), Restored{Cycle: f.Cycle, ID: f.ID, Commit: f.Commit, Was: f.Kind, NotesCommit: f.NotesCommit, Line: f.Original})
		case (f.Kind == "edited" || f.Kind == "deleted") && f.NotesCommit == "":
			chainOnly[f.ID] = f // named by the record after it: its digest
		default:
			out.Unrepairable = append(out.Unrepairable, f)
		}
	}
	// What only the chain names: the version whose digest it gives,
	// looked for in the ledger's history.
	for id, f := range chainOnly {
		covered := false
		for _, k := range order {
			covered = covered || k.id == id
		}
		if covered {
			continue
		}
		want, err := chainDigest(l, id)
		if err != nil {
			return nil, err
		}
		var on gitstore.Hash // where the record is now, when it is (edited)
		if f.Kind == "edited" {
			on, _ = gitstore.ParseHash(f.Commit)
		}
		obj, line, found, err := findVersion(repo, on, id, want)
		if err != nil {
			return nil, err
		}
		if !found {
			out.Unrepairable = append(out.Unrepairable, f)
			continue
		}
		put(keyOf(obj.String(), id, line), Restored{Cycle: f.Cycle, ID: id, Commit: obj.String(), Was: f.Kind, Line: line})
	}
	for _, k := range order {
		out.Restored = append(out.Restored, restore[k])
	}
	sort.SliceStable(out.Restored, func(i, j int) bool { return out.Restored[i].Cycle < out.Restored[j].Cycle })
	if dryRun {
		return out, nil
	}
	for _, r := range out.Refs {
		h, _ := gitstore.ParseHash(r.Commit)
		if err := repo.CreateRef(r.Ref, h, "git evolve repair: the saved work put back"); err != nil {
			return nil, err
		}
	}
	if len(out.Restored) == 0 && len(parents) == 0 && len(out.Removed) == 0 && !out.Reindexed {
		return out, nil
	}
	c, err := writeRestored(l, out.Restored, out.Removed, parents, out.Reindexed)
	if err != nil {
		return nil, err
	}
	out.NotesCommit = c.String()
	return out, nil
}

// chainDigest is the digest the record chain gives record id: the prev
// link of the record written after it.
func chainDigest(l *store.Ledger, id string) (string, error) {
	list, err := l.List(store.ListOptions{Copies: true})
	if err != nil {
		return "", err
	}
	for _, e := range list.Entries {
		if pid, digest, ok := ledger.ParseLink(e.Record.ExtraString("prev")); ok && pid == id {
			return digest, nil
		}
	}
	return "", nil
}

// findVersion looks through the ledger's whole history for a version of
// record id whose digest is want: in the note on object on when it is not
// zero, else in every note.
func findVersion(repo *gitstore.Repo, on gitstore.Hash, id, want string) (gitstore.Hash, string, bool, error) {
	if want == "" {
		return gitstore.ZeroHash, "", false, nil
	}
	tip, ok, err := repo.RefHash(store.NotesRef)
	if err != nil || !ok {
		return gitstore.ZeroHash, "", false, err
	}
	commits, err := repo.RevList(tip.String())
	if err != nil {
		return gitstore.ZeroHash, "", false, err
	}
	for _, c := range commits {
		snap, err := repo.NotesAt(c)
		if err != nil {
			return gitstore.ZeroHash, "", false, err
		}
		if !on.IsZero() {
			data, err := noteText(repo, snap, on)
			if err != nil {
				return gitstore.ZeroHash, "", false, err
			}
			if l, ok := byID(data)[id]; ok && ledger.Digest([]byte(l)) == want {
				return on, l, true, nil
			}
			continue
		}
		var obj gitstore.Hash
		var line string
		err = snap.ForEachNote(func(o gitstore.Hash, data []byte) error {
			if !strings.Contains(string(data), id) {
				return nil
			}
			if l, ok := byID(data)[id]; ok && ledger.Digest([]byte(l)) == want {
				obj, line = o, l
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return obj, line, true, nil
		}
		if err != nil {
			return gitstore.ZeroHash, "", false, err
		}
	}
	return gitstore.ZeroHash, "", false, nil
}

var errFound = errors.New("found")

// newestOf is hs without those that are another's ancestors, nor twice.
func newestOf(repo *gitstore.Repo, hs []gitstore.Hash) ([]gitstore.Hash, error) {
	var out []gitstore.Hash
	for i, a := range hs {
		keep := !slices.Contains(out, a)
		for j, b := range hs {
			if !keep || i == j || a == b {
				continue
			}
			older, err := repo.IsAncestor(a, b)
			if err != nil {
				return nil, err
			}
			keep = !older
		}
		if keep {
			out = append(out, a)
		}
	}
	return out, nil
}

// writeRestored writes the restored records into their notes, each in place
// of the record of its id there, as one notes commit.
func writeRestored(l *store.Ledger, restored []Restored, removed []string, parents []gitstore.Hash, reindex bool) (gitstore.Hash, error) {
	repo := l.Repo()
	author, committer, err := repo.Identity()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "git evolve: repair the ledger (%d record(s) put back)\n\n", len(restored))
	undone := map[string]bool{}
	from := map[string]bool{}
	for _, r := range restored {
		id := "id " + r.ID
		if r.ID == "" {
			id = "no id"
		}
		fmt.Fprintf(&msg, "- cycle %d (%s) on %s: %s", r.Cycle, id, r.Commit[:7], r.Was)
		switch {
		case r.Was == lostWas:
			fmt.Fprintf(&msg, " (as %s had it)", r.NotesCommit[:7])
		case r.From != "":
			fmt.Fprintf(&msg, " when %s replaced the ledger's tip (as %s had it)", r.NotesCommit[:7], r.From[:7])
			from[r.From] = true
		case r.NotesCommit != "":
			fmt.Fprintf(&msg, " by %s", r.NotesCommit[:7])
			undone[r.NotesCommit] = true
		}
		msg.WriteString(", put back as it was\n")
	}
	for _, obj := range removed {
		fmt.Fprintf(&msg, "- the entry at the note path of %s removed (a submodule or a symbolic link): it was no note\n", obj[:7])
	}
	for _, p := range parents {
		fmt.Fprintf(&msg, "- the ledger descends again from %s, which this clone had verified\n", p.Short())
	}
	if reindex {
		msg.WriteString("- the index of cycles built again from the notes: it listed what they do not say\n")
	}
	// The notes commits lost records are put back from become parents too:
	// the ledger's history then shows where each came from (a record with
	// no place in the chain is their addition, not the repair's), and every
	// clone the repair reaches receives them.
	var lostFrom []gitstore.Hash
	for _, c := range slices.Sorted(maps.Keys(from)) {
		if h, err := gitstore.ParseHash(c); err == nil {
			lostFrom = append(lostFrom, h)
		}
	}
	for _, p := range lostFrom {
		fmt.Fprintf(&msg, "- the ledger descends again from %s, whose records it had lost\n", p.Short())
	}
	parents, err = newestOf(repo, append(slices.Clone(parents), lostFrom...))
	if err != nil {
		return gitstore.ZeroHash, err
	}
	msg.WriteString("\n")
	var names []string
	for c := range undone {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		fmt.Fprintf(&msg, "%s: %s\n", RepairTrailer, c)
	}
	for _, c := range slices.Sorted(maps.Keys(from)) {
		fmt.Fprintf(&msg, "%s: %s\n", RestoreTrailer, c)
	}
	for attempt := 1; ; attempt++ {
		snap, err := repo.ReadNotes(store.NotesRef)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		byObj := map[string][]Restored{}
		for _, r := range restored {
			byObj[r.Commit] = append(byObj[r.Commit], r)
		}
		var edits []gitstore.NoteEdit
		for obj, rs := range byObj {
			h, err := gitstore.ParseHash(obj)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			data, err := noteText(repo, snap, h)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			recs, bad := ledger.ParseLines(data)
			// A record put back takes the place of its id's there; one with
			// no id is added unless the note has it already.
			put, have := map[string]bool{}, map[string]bool{}
			for _, r := range rs {
				if r.ID != "" {
					put[r.ID] = true
				}
			}
			var keep []ledger.Record
			for _, r := range recs {
				if r.ID == "" || !put[r.ID] {
					keep = append(keep, r)
					have[string(r.Marshal())] = true
				}
			}
			for _, r := range rs {
				rec, err := ledger.Parse([]byte(r.Line))
				if err != nil {
					return gitstore.ZeroHash, fmt.Errorf("the record of cycle %d to put back does not parse: %w", r.Cycle, err)
				}
				if r.ID == "" && have[string(rec.Marshal())] {
					continue
				}
				keep = append(keep, rec)
			}
			note := ledger.FormatNote(keep, nil)
			for _, b := range bad { // a line that does not parse is kept, as the note had it
				note = append(append(note, b.Text...), '\n')
			}
			blob, err := repo.WriteBlob(note)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			edits = append(edits, gitstore.NoteEdit{Object: h, Blob: blob})
		}
		for _, obj := range removed {
			if _, restoring := byObj[obj]; restoring {
				continue // the note put back takes the entry's place
			}
			h, err := gitstore.ParseHash(obj)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			// The entry that is no note goes; a note the object also has (at
			// another fanout) stays, written again where the writer puts it.
			found, err := snap.Find(h)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			var blob gitstore.Hash
			switch {
			case len(found) == 1:
				blob = found[0]
			case len(found) > 1:
				data, err := blobs(repo, found)
				if err != nil {
					return gitstore.ZeroHash, err
				}
				if blob, err = repo.WriteBlob(data); err != nil {
					return gitstore.ZeroHash, err
				}
			}
			edits = append(edits, gitstore.NoteEdit{Object: h, Blob: blob})
		}
		tree, err := snap.Tree()
		if err != nil {
			return gitstore.ZeroHash, err
		}
		// an older layout's index of cycles, if there is one, goes
		old, err := snap.TakingOut(nil, ledger.OldIndexNames...)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		switch {
		case reindex:
			tree, err = snap.ApplyNotesReindexed(edits, old, store.CycleIndex)
		case len(edits) > 0 || len(old) > 0:
			tree, err = snap.ApplyNotesIndexed(edits, old, store.CycleIndex)
		}
		if err != nil {
			return gitstore.ZeroHash, err
		}
		next, err := snap.CommitNotesMerge(store.NotesRef, tree, msg.String(), author, committer, parents...)
		if errors.Is(err, gitstore.ErrRefChanged) && attempt < 10 {
			continue
		}
		if err != nil {
			return gitstore.ZeroHash, err
		}
		return next.Commit(), nil
	}
}

// Accept records an acknowledgement of what notes commit did to the ledger,
// with why, attributed to this clone's committer; verify then reports its
// edits and deletions as notices, in every clone the acknowledgement
// reaches (it is shared by sync like the loop's control events).
func Accept(repo *gitstore.Repo, notesCommit gitstore.Hash, reason string, now time.Time) (*Acceptance, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, errors.New("an acknowledgement needs a reason")
	}
	if _, err := repo.Commit(notesCommit); err != nil {
		return nil, fmt.Errorf("no notes commit %s here: %w", notesCommit.Short(), err)
	}
	head, err := repo.ResolveCommits("HEAD")
	if err != nil {
		return nil, fmt.Errorf("recording the acknowledgement: %w", err)
	}
	a := &Acceptance{Kind: KindAccept, NotesCommit: notesCommit.String(), Reason: reason, At: now.UTC().Format(time.RFC3339), Host: store.Host()}
	if _, committer, err := repo.Identity(); err == nil {
		a.By = committer.Name + " <" + committer.Email + ">"
	}
	line, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("git evolve: accept what notes commit %s did to the ledger\n\n%s\n", notesCommit.Short(), reason)
	return a, repo.AddNoteLines(ControlRef, head[0], [][]byte{line}, msg)
}

// byLine is a function telling whether the ledger as it is now holds a
// record's line (for id).
func byLine(rep *Report, l *store.Ledger) func(id, line string) (bool, error) {
	var have map[string]map[string]bool
	return func(id, line string) (bool, error) {
		if have == nil {
			list, err := l.List(store.ListOptions{Copies: true})
			if err != nil {
				return false, err
			}
			have = map[string]map[string]bool{}
			for _, e := range list.Entries {
				if have[e.Record.ID] == nil {
					have[e.Record.ID] = map[string]bool{}
				}
				have[e.Record.ID][string(e.Record.Marshal())] = true
			}
		}
		return have[id][line], nil
	}
}

// lostWas says a record was lost when the ledger's history was rewritten.
const lostWas = "lost in a rewrite"

// lostSince lists the records of the ledger at notes commit v that the
// ledger as it is now does not hold as they were.
func lostSince(repo *gitstore.Repo, v gitstore.Hash, holds func(id, line string) (bool, error)) ([]Restored, error) {
	snap, err := repo.NotesAt(v)
	if err != nil {
		return nil, err
	}
	var out []Restored
	err = snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		recs, _ := ledger.ParseLines(data)
		for i := range recs {
			line := string(recs[i].Marshal())
			ok, err := holds(recs[i].ID, line)
			if err != nil {
				return err
			}
			if !ok {
				out = append(out, Restored{Cycle: recs[i].Cycle, ID: recs[i].ID, Commit: obj.String(), Was: lostWas, Line: line})
			}
		}
		return nil
	})
	return out, err
}
