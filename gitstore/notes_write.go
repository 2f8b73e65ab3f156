package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// NoteEdit sets the note on Object to Blob, or removes it when Blob is zero.
type NoteEdit struct {
	Object Hash
	Blob   Hash
}

// splitThreshold is how many notes a flat tree level may hold before it is
// fanned out into 2-digit subtrees (git reads any fanout; 256 keeps every
// tree small enough that rewriting one bucket is cheap at 100,000 notes).
const splitThreshold = 256

// ApplyNotes writes a new notes tree: n's tree with edits applied and the
// root-level non-note entries in extras set (a zero hash removes one). Every
// existing copy of an edited note is removed, wherever its fanout put it, so
// the result never holds an object at two paths. Only the subtrees on the
// paths of the edits are rewritten. It returns the new tree's name.
func (n *Notes) ApplyNotes(edits []NoteEdit, extras map[string]Hash) (Hash, error) {
	byObj := map[string]Hash{}
	for _, e := range edits {
		byObj[e.Object.String()] = e.Blob
	}
	root, err := n.root()
	if err != nil {
		return ZeroHash, err
	}
	tree, _, err := n.applyRoot(root, byObj, extras, nil)
	return tree, err
}

// applyRoot is apply at the root; last, when set, is given the root's
// entries before they are written and returns those to write.
func (n *Notes) applyRoot(tree Hash, edits map[string]Hash, extras map[string]Hash, last func([]treeEntry) ([]treeEntry, error)) (Hash, bool, error) {
	return n.apply(tree, "", edits, extras, last)
}

// apply edits one tree level. edits maps full object names (all sharing
// prefix) to their new blob (zero: remove).
func (n *Notes) apply(tree Hash, prefix string, edits map[string]Hash, extras map[string]Hash, last func([]treeEntry) ([]treeEntry, error)) (Hash, bool, error) {
	entries, err := n.r.readTree(tree)
	if err != nil {
		return ZeroHash, false, err
	}
	fan := map[string]Hash{}  // existing fanout subtrees by 2-digit name
	kept := entries[:0:0]     // entries that stay as they are
	flat := map[string]Hash{} // notes at this level: full object name -> blob
	// Names that differ only in case (another tool's tree: git writes
	// lower case) are one name to the maps: the entry in lower case, or
	// the first, takes it, and each other stays as it is (twins), so that
	// no copy is dropped; below, a twin whose notes are all edited goes,
	// those notes written where the edits place them.
	// (A note's name and a subtree's differ in length: the name in lower
	// case says which.)
	primary := map[string]int{} // name in lower case -> the entry that takes it
	for i, e := range entries {
		kind, name := classify(prefix, e)
		if kind != entryFanout && kind != entryNote {
			continue
		}
		if p, ok := primary[name]; !ok || (e.name == strings.ToLower(e.name) && entries[p].name != strings.ToLower(entries[p].name)) {
			primary[name] = i
		}
	}
	var twins []treeEntry
	orig := map[string]string{} // the name each note and subtree taken was found under
	take := func(m map[string]Hash, name string, i int) {
		if primary[name] != i {
			twins = append(twins, entries[i])
			return
		}
		m[name] = entries[i].hash
		orig[name] = entries[i].name
	}
	for i, e := range entries {
		kind, name := classify(prefix, e)
		switch {
		case kind == entryFanout:
			take(fan, name, i)
		case kind == entryNote:
			take(flat, name, i)
		case kind == entryBadNote && isSet(edits, name):
			// the note written for that object takes the place of what no
			// reader could read there
		case prefix == "" && extras != nil && isSet(extras, e.name):
			// replaced below
		default:
			kept = append(kept, e)
		}
	}
	var joined map[string]Hash // notes of a name found twice, each joined with the first's
	for _, e := range twins {
		kind, name := classify(prefix, e)
		switch {
		case e.name == strings.ToLower(e.name):
			// the same name twice (a tree no tool but mktree writes; git
			// reads both): one entry can be written under it, which takes
			// the other's notes, each joined with its copy there as git
			// joins them
			if joined == nil {
				joined = map[string]Hash{}
			}
			if err := n.joinTwice(e, kind, prefix, name, fan, flat, edits, joined); err != nil {
				return ZeroHash, false, err
			}
			continue
		case kind == entryNote && isSet(edits, name):
			continue // the edit is the note of that object: every copy goes
		case kind == entryFanout:
			// the copies under it of the notes edited go (and what sits
			// at their paths that is no note): each edit is the note of
			// its object
			gone := map[string]Hash{}
			for obj := range edits {
				if strings.HasPrefix(obj, prefix+name) {
					gone[obj] = ZeroHash
				}
			}
			if len(gone) > 0 {
				h, empty, err := n.apply(e.hash, prefix+name, gone, nil, nil)
				if err != nil {
					return ZeroHash, false, err
				}
				if empty {
					continue // each of its notes is written where its edit places it
				}
				e.hash = h
			}
		}
		kept = append(kept, e)
	}
	if len(joined) > 0 {
		all := maps.Clone(edits)
		maps.Copy(all, joined)
		edits = all
	}
	sub := map[string]map[string]Hash{} // edits routed to subtrees
	route := func(obj string, blob Hash) {
		g := obj[len(prefix) : len(prefix)+2]
		if sub[g] == nil {
			sub[g] = map[string]Hash{}
		}
		sub[g][obj] = blob
	}
	// A note or subtree is written under its name in lower case, as git
	// writes it, but where an entry kept as it is holds that name (one
	// that is no note, a twin): there, under the name it was found under,
	// or, for a subtree not made yet, not at all (the note stays beside).
	taken := map[string]bool{}
	for _, e := range kept {
		taken[e.name] = true
	}
	nameOf := func(key, lower string) string {
		if taken[lower] && orig[key] != "" {
			return orig[key]
		}
		return lower
	}
	for obj, blob := range edits {
		delete(flat, obj)
		g := obj[len(prefix) : len(prefix)+2]
		if _, ok := fan[g]; ok {
			route(obj, blob) // removes deeper copies; places the note there
			continue
		}
		if blob.IsZero() {
			continue
		}
		if len(fan) > 0 && !taken[g] {
			// a level with subtrees keeps no note beside them (as git
			// notes leaves it): an edited note goes into the subtree of
			// its prefix, made when there is none
			route(obj, blob)
			continue
		}
		flat[obj] = blob
	}
	if len(flat) > splitThreshold && len(fan) == 0 && 40-len(prefix) > 2 {
		// Only a level without subtrees is split, so that a note another
		// tool left at two paths never loses a copy to an unrelated write.
		for obj, blob := range flat {
			route(obj, blob)
		}
		flat = map[string]Hash{}
	}
	out := kept
	for obj, blob := range flat {
		out = append(out, treeEntry{name: nameOf(obj, obj[len(prefix):]), hash: blob})
	}
	names := make([]string, 0, len(fan)+len(sub))
	for g := range fan {
		names = append(names, g)
	}
	for g := range sub {
		if _, ok := fan[g]; !ok {
			names = append(names, g)
		}
	}
	sort.Strings(names)
	for _, g := range names {
		h := fan[g]
		if e, ok := sub[g]; ok {
			nh, empty, err := n.apply(h, prefix+g, e, nil, nil)
			if err != nil {
				return ZeroHash, false, err
			}
			if empty {
				continue
			}
			h = nh
		}
		out = append(out, treeEntry{name: nameOf(g, g), dir: true, hash: h})
	}
	if prefix == "" {
		for name, h := range extras {
			if !validNonNote(name) {
				return ZeroHash, false, fmt.Errorf("invalid non-note name %q", name)
			}
			if !h.IsZero() {
				out = append(out, treeEntry{name: name, hash: h})
			}
		}
	}
	if last != nil {
		var err error
		if out, err = last(out); err != nil {
			return ZeroHash, false, err
		}
	}
	if len(out) == 0 {
		return ZeroHash, true, nil
	}
	h, err := n.r.writeTree(out)
	return h, false, err
}

// joinTwice adds to joined, for the entry e found under a name the level
// holds twice (the entry of that name that apply writes is in fan or
// flat), the notes e holds that no edit replaces: each joined with its copy
// under the other entry, as git joins two notes of one object (the first's
// text, then the second's).
func (n *Notes) joinTwice(e treeEntry, kind int, prefix, name string, fan, flat, edits, joined map[string]Hash) error {
	var objs []Hash
	if kind == entryNote {
		if h, err := ParseHash(name); err == nil {
			objs = append(objs, h)
		}
	} else if err := n.r.notesUnder(e.hash, prefix+name, &objs); err != nil {
		return err
	}
	for _, h := range objs {
		obj := h.String()
		if isSet(edits, obj) {
			continue // the edit replaces every copy
		}
		var copies []Hash // the first entry's copy, then this one's
		if kind == entryNote {
			copies = []Hash{flat[obj], e.hash}
		} else {
			if err := n.find(fan[name], prefix+name, obj, entryNote, &copies); err != nil {
				return err
			}
			if err := n.find(e.hash, prefix+name, obj, entryNote, &copies); err != nil {
				return err
			}
		}
		if j, ok := joined[obj]; ok {
			copies = append([]Hash{j}, copies[len(copies)-1:]...)
		}
		var text []byte
		for _, c := range copies {
			data, err := n.r.ReadBlob(c)
			if err != nil {
				return err
			}
			if len(text) > 0 && text[len(text)-1] != '\n' {
				text = append(text, '\n')
			}
			text = append(text, data...)
		}
		blob, err := n.r.WriteBlob(text)
		if err != nil {
			return err
		}
		joined[obj] = blob
	}
	return nil
}

func isSet(m map[string]Hash, k string) bool { _, ok := m[k]; return ok }

// CommitNotes records tree as the next commit of the notes ref, on top of
// the snapshot n, and moves the ref with compare-and-swap. It returns an
// error wrapping ErrRefChanged when the ref moved since n was read.
func (n *Notes) CommitNotes(ref string, tree Hash, message string, author, committer Signature) (*Notes, error) {
	return n.CommitNotesMerge(ref, tree, message, author, committer)
}

// CommitNotesMerge is CommitNotes for a merge: the notes commit also has
// others as parents (the notes merged in), after the snapshot's commit.
func (n *Notes) CommitNotesMerge(ref string, tree Hash, message string, author, committer Signature, others ...Hash) (*Notes, error) {
	if tree.IsZero() {
		var err error
		if tree, err = n.r.writeTree(nil); err != nil {
			return nil, err
		}
	}
	var parents []Hash
	if !n.commit.IsZero() {
		parents = []Hash{n.commit}
	}
	parents = append(parents, others...)
	c, err := n.r.WriteCommit(tree, parents, message, author, committer)
	if err != nil {
		return nil, err
	}
	if err := n.r.UpdateRef(ref, c, n.commit, message); err != nil {
		return nil, err
	}
	n.r.releasePacks() // the ref names what they hold
	return &Notes{r: n.r, commit: c, tree: tree}, nil
}

// AddNoteLines adds lines to the note of ref on commit, keeping the note's
// lines sorted and unique (as git notes merge -s cat_sort_uniq leaves
// them), in one notes commit with message; when another writer moved the
// ref first, it reads it again and retries.
func (r *Repo) AddNoteLines(ref string, commit Hash, add [][]byte, message string) error {
	author, committer, err := r.Identity()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		snap, err := r.ReadNotes(ref)
		if err != nil {
			return err
		}
		blobs, err := snap.Find(commit)
		if err != nil {
			return err
		}
		lines := append([][]byte(nil), add...)
		for _, b := range blobs {
			data, err := r.ReadBlob(b)
			if err != nil {
				return err
			}
			lines = append(lines, bytes.Split(data, []byte("\n"))...)
		}
		var kept [][]byte
		for _, l := range lines {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				kept = append(kept, l)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return bytes.Compare(kept[i], kept[j]) < 0 })
		var note []byte
		for i, l := range kept {
			if i > 0 && bytes.Equal(l, kept[i-1]) {
				continue
			}
			note = append(append(note, l...), '\n')
		}
		blob, err := r.WriteBlob(note)
		if err != nil {
			return err
		}
		tree, err := snap.ApplyNotes([]NoteEdit{{Object: commit, Blob: blob}}, nil)
		if err != nil {
			return err
		}
		_, err = snap.CommitNotes(ref, tree, message, author, committer)
		var locked *LockedError
		switch {
		case err == nil:
			return nil
		case (errors.Is(err, ErrRefChanged) || errors.As(err, &locked)) && attempt < 20:
			time.Sleep(time.Duration(1+rand.IntN(10*attempt)) * time.Millisecond)
		default:
			return err
		}
	}
}
