package gitstore

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Notes is a read-only snapshot of a notes ref: the notes commit and its
// tree. The zero commit stands for a ref that does not exist yet (an empty
// ledger). The tree is read from the commit when first needed: a reader
// that only compares commits (a saved view keyed by its notes commit)
// never asks git for an object.
type Notes struct {
	r      *Repo
	commit Hash
	once   sync.Once
	tree   Hash
	err    error
}

// root is the snapshot's tree, read from its commit once.
func (n *Notes) root() (Hash, error) {
	n.once.Do(func() {
		if n.commit.IsZero() || !n.tree.IsZero() {
			return
		}
		c, err := n.r.Commit(n.commit)
		if err != nil {
			n.err = fmt.Errorf("reading notes commit %s: %w", n.commit.Short(), err)
			return
		}
		n.tree = c.Tree
	})
	return n.tree, n.err
}

// ReadNotes returns a snapshot of the notes ref (for example
// "refs/notes/evolve"). A missing ref reads as an empty snapshot.
func (r *Repo) ReadNotes(ref string) (*Notes, error) {
	h, ok, err := r.RefHash(ref)
	if err != nil {
		return nil, err
	}
	if !ok {
		return r.EmptyNotes(), nil
	}
	return &Notes{r: r, commit: h}, nil
}

// NotesOf is the snapshot of notes commit ci, read already.
func (r *Repo) NotesOf(ci CommitInfo) *Notes { return &Notes{r: r, commit: ci.Hash, tree: ci.Tree} }

// EmptyNotes is the snapshot of a notes ref that does not exist.
func (r *Repo) EmptyNotes() *Notes { return &Notes{r: r} }

// NotesAt returns a snapshot of the notes commit h.
func (r *Repo) NotesAt(h Hash) (*Notes, error) {
	c, err := r.Commit(h)
	if err != nil {
		return nil, fmt.Errorf("reading notes commit: %w", err)
	}
	return &Notes{r: r, commit: h, tree: c.Tree}, nil
}

// Commit is the notes commit of the snapshot (zero when the ref is absent).
func (n *Notes) Commit() Hash { return n.commit }

// Tree is the notes tree of the snapshot (zero when the ref is absent).
func (n *Notes) Tree() (Hash, error) { return n.root() }

// classify says what a tree entry is at a level whose notes share prefix
// (the hex digits already consumed by the path above). Note paths are hex
// (any case) and add up to 40 digits; 2-digit subtrees are fanout levels;
// everything else is a non-note that git preserves but ignores.
func classify(prefix string, e treeEntry) (kind int, name string) {
	n := e.name
	if !isHex(n) {
		if n = strings.ToLower(n); !isHex(n) {
			return entryOther, ""
		}
	}
	switch {
	case !e.dir && len(prefix)+len(n) == 40 && !isNoteMode(e.mode):
		// A submodule entry or a symbolic link at a note's path: git
		// reads no note there (a note is a file's text). Readers pass it
		// by; writers drop it when they write that object's note; verify
		// reports it (BadNotes).
		return entryBadNote, prefix + n
	case !e.dir && len(prefix)+len(n) == 40:
		return entryNote, prefix + n
	case e.dir && len(n) == 2 && len(prefix)+2 < 40:
		return entryFanout, n
	}
	return entryOther, ""
}

const (
	entryOther = iota
	entryNote
	entryFanout
	entryBadNote
)

// isNoteMode reports whether git reads a tree entry of mode at a note's
// path as a note: a file (git's canon_mode takes the type bits; a symbolic
// link, 120000, or a submodule, what is no file, link or directory, is no
// note). 0 is the mode of the entries this package writes, files.
func isNoteMode(mode uint32) bool {
	return mode == 0 || mode&0o170000 == 0o100000
}

// BadNotes returns the objects whose note path holds something no reader
// can take as a note's text (a submodule entry), in path order. Nothing
// else reads them; a ledger's verify reports them.
func (n *Notes) BadNotes() ([]Hash, error) { return n.BadNotesSince(nil) }

// BadNotesSince is BadNotes for what differs from old (nil: everything):
// a subtree old has as it is is not read, so the cost follows the change.
// The subtrees of each level are read in one exchange with git.
func (n *Notes) BadNotesSince(old *Notes) ([]Hash, error) {
	var was Hash
	if old != nil {
		var err error
		if was, err = old.root(); err != nil {
			return nil, err
		}
	}
	tree, err := n.root()
	if err != nil {
		return nil, err
	}
	var out []Hash
	if was.IsZero() && !tree.IsZero() {
		// Everything: a large tree is listed by git (walkListed), as the
		// notes stream lists it.
		if root, err := n.r.readTree(tree); err == nil && len(root) > streamThreshold {
			out, err = n.badListed()
			sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
			return out, err
		}
	}
	err = n.badSince([]Hash{tree}, []Hash{was}, []string{""}, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, err
}

// badSince reads the trees of one level (each beside the tree old had at
// its path, zero when none) and goes down where they differ.
func (n *Notes) badSince(trees, olds []Hash, prefixes []string, out *[]Hash) error {
	news, err := n.r.readTrees(trees)
	if err != nil {
		return err
	}
	oldEntries, err := n.r.readTrees(olds)
	if err != nil {
		return err
	}
	var nextTrees, nextOlds []Hash
	var nextPrefixes []string
	for i, entries := range news {
		had := make(map[string]treeEntry, len(oldEntries[i]))
		for _, e := range oldEntries[i] {
			had[e.name] = e
		}
		for _, e := range entries {
			o, ok := had[e.name]
			if ok && o.hash == e.hash && o.mode == e.mode {
				continue // as old has it
			}
			switch kind, name := classify(prefixes[i], e); kind {
			case entryBadNote:
				h, _ := ParseHash(name)
				*out = append(*out, h)
			case entryFanout:
				var oh Hash
				if ok && o.dir {
					oh = o.hash
				}
				nextTrees, nextOlds = append(nextTrees, e.hash), append(nextOlds, oh)
				nextPrefixes = append(nextPrefixes, prefixes[i]+name)
			}
		}
	}
	if len(nextTrees) == 0 {
		return nil
	}
	return n.badSince(nextTrees, nextOlds, nextPrefixes, out)
}

// HasBadNote reports whether obj's note path holds a submodule entry.
func (n *Notes) HasBadNote(obj Hash) (bool, error) {
	tree, err := n.root()
	if err != nil {
		return false, err
	}
	var out []Hash
	err = n.find(tree, "", obj.String(), entryBadNote, &out)
	return len(out) > 0, err
}

// Find returns the blobs of the notes on obj. There is normally one; a tree
// that another tool wrote with the same object at two fanouts yields both.
func (n *Notes) Find(obj Hash) ([]Hash, error) {
	tree, err := n.root()
	if err != nil {
		return nil, err
	}
	var out []Hash
	err = n.find(tree, "", obj.String(), entryNote, &out)
	return out, err
}

// FindMany is Find for many objects: the blobs of the notes on each, in
// the order Find gives them. Only the trees on the way to them are read,
// each once, those of one level in one exchange with git (an import's
// batch asks for 10,000 notes of a tree of 100,000).
func (n *Notes) FindMany(objs []Hash) (map[Hash][]Hash, error) {
	out := make(map[Hash][]Hash, len(objs))
	root, err := n.root()
	if err != nil || len(objs) == 0 {
		return out, err
	}
	want := make(map[string]Hash, len(objs))
	names := make([]string, 0, len(objs))
	for _, h := range objs {
		if s := h.String(); want[s].IsZero() {
			want[s] = h
			names = append(names, s)
		}
	}
	sort.Strings(names)
	type node struct {
		tree   Hash
		prefix string   // the fanout path's hex digits
		path   string   // the path as the tree spells it, with slashes
		want   []string // the names wanted under it, sorted
	}
	paths := map[Hash][]string{} // of the objects found at more than one path
	for level := []node{{root, "", "", names}}; len(level) > 0; {
		hs := make([]Hash, len(level))
		for i, nd := range level {
			hs[i] = nd.tree
		}
		trees, err := n.r.readTrees(hs)
		if err != nil {
			return nil, err
		}
		var next []node
		for i, nd := range level {
			for _, e := range trees[i] {
				switch kind, name := classify(nd.prefix, e); kind {
				case entryNote:
					if h, ok := want[name]; ok {
						out[h] = append(out[h], e.hash)
						paths[h] = append(paths[h], nd.path+e.name)
					}
				case entryFanout:
					p := nd.prefix + name
					lo := sort.SearchStrings(nd.want, p)
					hi := lo
					for hi < len(nd.want) && strings.HasPrefix(nd.want[hi], p) {
						hi++
					}
					if hi > lo {
						next = append(next, node{e.hash, p, nd.path + e.name + "/", nd.want[lo:hi]})
					}
				}
			}
		}
		level = next
	}
	// Find walks depth first, in tree order: the order of the paths.
	for h, ps := range paths {
		if len(ps) > 1 {
			bs := out[h]
			idx := make([]int, len(ps))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
			sorted := make([]Hash, len(bs))
			for i, j := range idx {
				sorted[i] = bs[j]
			}
			out[h] = sorted
		}
	}
	return out, nil
}

// find collects the entries of the given kind at want's note path, at any
// fanout.
func (n *Notes) find(tree Hash, prefix, want string, of int, out *[]Hash) error {
	entries, err := n.r.readTree(tree)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch kind, name := classify(prefix, e); {
		case kind == of && name == want:
			*out = append(*out, e.hash)
		case kind == entryFanout:
			if strings.HasPrefix(want, prefix+name) {
				if err := n.find(e.hash, prefix+name, want, of, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Walk calls fn for every note in the tree, in path order, whatever its
// fanout. An error from fn stops the walk and is returned. The subtrees of
// each level are read in one exchange with git.
func (n *Notes) Walk(fn func(obj, blob Hash) error) error { return n.walk(fn, false) }

// walk is Walk; keep says whether the trees read are kept (cacheTree).
func (n *Notes) walk(fn func(obj, blob Hash) error, keep bool) error {
	tree, err := n.root()
	if err != nil {
		return err
	}
	entries, err := n.r.readTree(tree)
	if err != nil {
		return err
	}
	return n.walkLevel(entries, "", fn, keep)
}

func (n *Notes) walkLevel(entries []treeEntry, prefix string, fn func(obj, blob Hash) error, keep bool) error {
	var hs []Hash
	for _, e := range entries {
		if kind, _ := classify(prefix, e); kind == entryFanout {
			hs = append(hs, e.hash)
		}
	}
	subtrees, err := n.r.fetchTrees(hs, keep)
	if err != nil {
		return err
	}
	k := 0
	for _, e := range entries {
		switch kind, name := classify(prefix, e); kind {
		case entryNote:
			obj, _ := ParseHash(name)
			if err := fn(obj, e.hash); err != nil {
				return err
			}
		case entryFanout:
			if err := n.walkLevel(subtrees[k], prefix+name, fn, keep); err != nil {
				return err
			}
			k++
		}
	}
	return nil
}

// readTrees reads several trees, those the Repo does not keep in one
// exchange with git, and keeps what it read (cacheTree); a zero hash reads
// as an empty tree.
func (r *Repo) readTrees(hs []Hash) ([][]treeEntry, error) {
	return r.fetchTrees(hs, true)
}

// fetchTrees is readTrees; keep false leaves the cache as it is (a walk of
// a whole notes tree that no later read follows), though what the cache
// holds is still read from it.
func (r *Repo) fetchTrees(hs []Hash, keep bool) ([][]treeEntry, error) {
	out := make([][]treeEntry, len(hs))
	var names []string
	var at []int
	for i, h := range hs {
		if h.IsZero() {
			continue
		}
		if e, ok := r.cachedTree(h); ok {
			out[i] = e
			continue
		}
		names = append(names, h.String())
		at = append(at, i)
	}
	if len(names) == 0 {
		return out, nil
	}
	err := r.objectsOf(names, func(i int, typ objectType, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", names[i], err)
		}
		if typ != treeType {
			return fmt.Errorf("object %s is a %s, not a tree", names[i], typ)
		}
		out[at[i]], err = parseTree(data)
		if err == nil && keep {
			r.cacheTree(hs[at[i]], out[at[i]])
		}
		return err
	})
	return out, err
}

// NonNote returns the blob of a non-note entry at the root of the tree (a
// name that is not a hex note path), such as a schema marker.
func (n *Notes) NonNote(name string) (Hash, bool, error) {
	tree, err := n.root()
	if err != nil {
		return ZeroHash, false, err
	}
	entries, err := n.r.readTree(tree)
	if err != nil {
		return ZeroHash, false, err
	}
	for _, e := range entries {
		if e.name == name && !e.dir {
			return e.hash, true, nil
		}
	}
	return ZeroHash, false, nil
}

// TakingOut is extras (the root's non-note entries a write sets, as
// ApplyNotes takes them) with each of the non-note directories names that
// the root holds set to be taken out (a zero hash); extras itself when it
// holds none of them.
func (n *Notes) TakingOut(extras map[string]Hash, names ...string) (map[string]Hash, error) {
	tree, err := n.root()
	if err != nil {
		return nil, err
	}
	entries, err := n.r.readTree(tree)
	if err != nil {
		return nil, err
	}
	out, cloned := extras, false
	for _, e := range entries {
		if e.dir && slices.Contains(names, e.name) {
			if !cloned {
				out, cloned = maps.Clone(extras), true
				if out == nil {
					out = map[string]Hash{}
				}
			}
			out[e.name] = ZeroHash
		}
	}
	return out, nil
}

// NoteChange is a note that differs between two snapshots. Old or New is
// empty when the note was added or removed.
type NoteChange struct {
	Object   Hash
	Old, New []Hash
}

// DiffNotes lists the notes that differ from old to n, reading only the
// subtrees whose names differ. It is the ledger's change feed.
func (n *Notes) DiffNotes(old *Notes) ([]NoteChange, error) {
	out, err := DiffNotesMany([]NotesPair{{Old: old, New: n}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// NotesPair is a diff to make: the notes that differ from Old to New.
type NotesPair struct{ Old, New *Notes }

// DiffNotesMany is DiffNotes of several pairs at once: the trees every diff
// needs at one level of the notes trees are read in one exchange with git,
// so that k diffs (a ledger's history, commit by commit) cost a few
// exchanges, not a few each. out[i] is pairs[i]'s change list.
func DiffNotesMany(pairs []NotesPair) ([][]NoteChange, error) {
	type side struct{ a, b map[Hash][]Hash }
	sides := make([]side, len(pairs))
	// A level's work: a subtree that differs on the two sides (diff), or
	// one that only one side has (all its notes are that side's).
	type item struct {
		pair   int
		ta, tb Hash // diff; for a one-sided walk, ta alone, onB saying whose
		onB    bool
		walk   bool
		prefix string
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	reader := pairs[0].New // the repository's reader: every pair is of one repository
	var level []item
	for i, p := range pairs {
		sides[i] = side{map[Hash][]Hash{}, map[Hash][]Hash{}}
		was, err := p.Old.root()
		if err != nil {
			return nil, err
		}
		tree, err := p.New.root()
		if err != nil {
			return nil, err
		}
		if was != tree {
			level = append(level, item{pair: i, ta: was, tb: tree})
		}
	}
	for len(level) > 0 {
		var want []Hash
		for _, it := range level {
			want = append(want, it.ta)
			if !it.walk {
				want = append(want, it.tb)
			}
		}
		trees, err := readTreesOnce(reader.r, want)
		if err != nil {
			return nil, err
		}
		var next []item
		for _, it := range level {
			a, b := sides[it.pair].a, sides[it.pair].b
			if it.walk {
				into := a
				if it.onB {
					into = b
				}
				for _, e := range trees[it.ta] {
					switch kind, name := classify(it.prefix, e); kind {
					case entryNote:
						obj, _ := ParseHash(name)
						into[obj] = append(into[obj], e.hash)
					case entryFanout:
						next = append(next, item{pair: it.pair, ta: e.hash, onB: it.onB, walk: true, prefix: it.prefix + name})
					}
				}
				continue
			}
			ea, eb := trees[it.ta], trees[it.tb]
			// Fanout subtrees are named by two hex digits: a byte each side.
			var fanA, fanB [256]Hash
			var inA, inB [256]bool
			for _, e := range eb {
				if kind, name := classify(it.prefix, e); kind == entryFanout {
					k := fanIndex(name)
					fanB[k], inB[k] = e.hash, true
				}
			}
			var flat []string // objects noted at this level, on either side
			for _, e := range ea {
				switch kind, name := classify(it.prefix, e); kind {
				case entryNote:
					obj, _ := ParseHash(name)
					a[obj] = append(a[obj], e.hash)
					flat = append(flat, name)
				case entryFanout:
					k := fanIndex(name)
					fanA[k], inA[k] = e.hash, true
					switch {
					case !inB[k]:
						next = append(next, item{pair: it.pair, ta: e.hash, walk: true, prefix: it.prefix + name})
					case fanB[k] != e.hash:
						next = append(next, item{pair: it.pair, ta: e.hash, tb: fanB[k], prefix: it.prefix + name})
					}
				}
			}
			for _, e := range eb {
				switch kind, name := classify(it.prefix, e); kind {
				case entryNote:
					obj, _ := ParseHash(name)
					b[obj] = append(b[obj], e.hash)
					flat = append(flat, name)
				case entryFanout:
					if k := fanIndex(name); !inA[k] {
						next = append(next, item{pair: it.pair, ta: e.hash, onB: true, walk: true, prefix: it.prefix + name})
					}
				}
			}
			// A tree another tool wrote may also hold a flat-noted object
			// in a bucket that is the same on both sides (and so is not
			// read): that copy is on both sides too.
			seen := map[string]bool{}
			for _, name := range flat {
				k := fanIndex(name[len(it.prefix) : len(it.prefix)+2])
				if !inA[k] || !inB[k] || fanA[k] != fanB[k] || seen[name] {
					continue
				}
				seen[name] = true
				var blobs []Hash
				if err := reader.find(fanA[k], name[:len(it.prefix)+2], name, entryNote, &blobs); err != nil {
					return nil, err
				}
				obj, _ := ParseHash(name)
				a[obj] = append(a[obj], blobs...)
				b[obj] = append(b[obj], blobs...)
			}
		}
		level = next
	}
	out := make([][]NoteChange, len(pairs))
	for i, sd := range sides {
		var changes []NoteChange
		for obj, ob := range sd.a {
			if nb := sd.b[obj]; !sameHashes(ob, nb) {
				changes = append(changes, NoteChange{Object: obj, Old: ob, New: nb})
			}
		}
		for obj, nb := range sd.b {
			if _, ok := sd.a[obj]; !ok {
				changes = append(changes, NoteChange{Object: obj, New: nb})
			}
		}
		sort.Slice(changes, func(i, j int) bool { return changes[i].Object.String() < changes[j].Object.String() })
		out[i] = changes
	}
	return out, nil
}

// fanIndex is the byte two lower-case hex digits (a fanout subtree's name,
// as classify gives it) stand for.
func fanIndex(name string) int {
	v := func(c byte) int {
		if c <= '9' {
			return int(c - '0')
		}
		return int(c-'a') + 10
	}
	return v(name[0])<<4 | v(name[1])
}

// readTreesOnce reads the distinct trees of hs, each once, the ones not
// cached in one exchange with git.
func readTreesOnce(r *Repo, hs []Hash) (map[Hash][]treeEntry, error) {
	out := make(map[Hash][]treeEntry, len(hs))
	var distinct []Hash
	for _, h := range hs {
		if _, done := out[h]; !done && !h.IsZero() {
			out[h] = nil
			distinct = append(distinct, h)
		}
	}
	read, err := r.readTrees(distinct)
	if err != nil {
		return nil, err
	}
	for i, h := range distinct {
		out[h] = read[i]
	}
	return out, nil
}

func sameHashes(a, b []Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
