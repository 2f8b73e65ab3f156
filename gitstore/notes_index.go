package gitstore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// NotesIndex is an index kept in a notes tree beside its notes: a non-note
// directory at the root, named Name, that lists each noted object under the
// keys its note's text gives (Keys), so that a reader finds the notes of a
// key by reading a few trees, not every note. Each key is a path of
// directories and a leaf, "a/b/leaf"; the object is listed as the entry
// "leaf-<object>" (the empty blob) in the directory "a/b".
//
// The index says which notes it describes: its directory holds the entry
// "of-<tree>", where <tree> is the name of the notes tree without the
// index (the root's other entries, as a tree; not written). A reader uses
// the index only when that is the tree it reads (IndexLookup), so that a
// write by another tool (git notes, which keeps a non-note as it is) leaves
// an index that readers pass by, never one that answers for other notes.
// A writer that keeps the index (ApplyNotesIndexed) brings it forward by
// the notes it changes when it describes the tree written on, and builds
// it again from every note when it does not.
type NotesIndex struct {
	Name string
	Keys func(note []byte) []string
}

const indexStampPrefix = "of-"

// errOddIndex is an index whose trees no writer of it makes: a name twice
// in one directory, or names out of git's order (git mktree writes those;
// a fetch without fsck takes them). Readers and checkers could walk such a
// tree differently, so none uses it: a reader reads the notes, a writer
// builds the index again, and the check names it.
var errOddIndex = errors.New("the index holds a directory with a name twice or out of order")

// wellFormed says whether entries are in git's order with no name twice
// in a row, as every tree git itself writes is. (A file and a directory of
// one name with another name sorting between them pass: readers take only
// directories on a key's path and files at its end, and the check lists
// such a file as an entry of no known form.)
func wellFormed(entries []treeEntry) bool {
	for i := 1; i < len(entries); i++ {
		if compareKeys(entries[i-1], entries[i]) >= 0 || entries[i-1].name == entries[i].name {
			return false
		}
	}
	return true
}

// compareKeys compares two entries in git's order (sortKey's), without
// making the keys.
func compareKeys(a, b treeEntry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	// one name is the other's start: the next byte of each key
	next := func(e treeEntry) int {
		switch {
		case len(e.name) > n:
			return int(e.name[n])
		case e.dir:
			return '/'
		}
		return -1 // the key ends
	}
	return next(a) - next(b)
}

// ApplyNotesIndexed is ApplyNotes that also keeps ix in the tree written.
func (n *Notes) ApplyNotesIndexed(edits []NoteEdit, extras map[string]Hash, ix *NotesIndex) (Hash, error) {
	if ix == nil {
		return n.ApplyNotes(edits, extras)
	}
	return n.applyIndexed(edits, extras, ix, false)
}

// ApplyNotesReindexed is ApplyNotesIndexed with the index built again
// from every note, whatever the index the tree has (one found wrong).
func (n *Notes) ApplyNotesReindexed(edits []NoteEdit, extras map[string]Hash, ix *NotesIndex) (Hash, error) {
	return n.applyIndexed(edits, extras, ix, true)
}

func (n *Notes) applyIndexed(edits []NoteEdit, extras map[string]Hash, ix *NotesIndex, rebuild bool) (Hash, error) {
	if !validNonNote(ix.Name) {
		return ZeroHash, fmt.Errorf("invalid index name %q", ix.Name)
	}
	root, err := n.root()
	if err != nil {
		return ZeroHash, err
	}
	objs := make([]Hash, 0, len(edits))
	for _, e := range edits {
		objs = append(objs, e.Object)
	}
	if plain, err := n.plainOnPaths(objs); err != nil {
		return ZeroHash, err
	} else if !plain {
		// The write merges what it finds under names that differ only in
		// case, or beside a fanout subtree: the notes are written first,
		// and the index built from what they are then.
		all := map[string]Hash{ix.Name: ZeroHash}
		for k, v := range extras {
			all[k] = v
		}
		tree, err := n.ApplyNotes(edits, all)
		if err != nil {
			return ZeroHash, err
		}
		return (&Notes{r: n.r, tree: tree}).applyIndexed(nil, nil, ix, true)
	}
	base, oldIndex, err := n.indexBase(ix.Name)
	if err != nil {
		// an index that cannot be read (an object missing) is built
		// again: it must not stop a write of the notes
		base, rebuild = nil, true
	}
	var changes map[string]bool
	if base != nil && !rebuild {
		if changes, err = n.indexChanges(base, edits, ix); err != nil {
			return ZeroHash, err
		}
	} else {
		oldIndex = ZeroHash
		if changes, err = n.indexAll(edits, ix); err != nil {
			return ZeroHash, err
		}
		// the costly case (about 1.3 s at 100,000 notes), said in the
		// trace: a ledger an older writer, or more than indexLookBack
		// commits of another tool, left with no index to bring forward
		Tracef("notes index %s: built again from every note (%d entries)", ix.Name, len(changes))
	}
	byObj := map[string]Hash{}
	for _, e := range edits {
		byObj[e.Object.String()] = e.Blob
	}
	all := map[string]Hash{ix.Name: ZeroHash}
	for k, v := range extras {
		all[k] = v
	}
	empty, err := n.r.WriteBlob(nil)
	if err != nil {
		return ZeroHash, err
	}
	tree, _, err := n.applyRoot(root, byObj, all, func(out []treeEntry) ([]treeEntry, error) {
		stamp := treeName(out)
		top, err := n.r.readTree(oldIndex)
		if err != nil {
			return nil, &indexWriteError{err}
		}
		kept := top[:0:0]
		for _, e := range top {
			if !strings.HasPrefix(e.name, indexStampPrefix) {
				kept = append(kept, e)
			}
		}
		kept = append(kept, treeEntry{name: indexStampPrefix + stamp.String(), hash: empty})
		sortEntries(kept)
		h, err := n.r.editIndexDir(kept, changes, empty)
		if err != nil {
			return nil, &indexWriteError{err}
		}
		return append(out, treeEntry{name: ix.Name, dir: true, hash: h}), nil
	})
	var iw *indexWriteError
	if errors.As(err, &iw) && !rebuild {
		// the index brought forward could not be read or is one no
		// writer makes: built again from every note
		return n.applyIndexed(edits, extras, ix, true)
	}
	if iw != nil {
		err = iw.err
	}
	return tree, err
}

// indexWriteError is what went wrong with the index a write brings
// forward (not with its notes).
type indexWriteError struct{ err error }

func (e *indexWriteError) Error() string { return e.err.Error() }
func (e *indexWriteError) Unwrap() error { return e.err }

// validNonNote says whether name may be a non-note entry at the root of a
// notes tree: one path component that no reader takes for a note.
func validNonNote(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/\x00") && !isHex(strings.ToLower(name))
}

// treeName is the name of the tree that entries make, not written.
func treeName(entries []treeEntry) Hash {
	es := append([]treeEntry(nil), entries...)
	sortEntries(es)
	return objectName(plumbing.TreeObject, encodeTreeEntries(es))
}

// indexOf is the index directory at the root of the snapshot's tree, and
// whether it describes the tree's notes (its stamp names the root's other
// entries).
func (n *Notes) indexOf(name string) (Hash, bool, error) {
	root, err := n.root()
	if err != nil || root.IsZero() {
		return ZeroHash, false, err
	}
	entries, err := n.r.readTree(root)
	if err != nil {
		return ZeroHash, false, err
	}
	var dir Hash
	found := 0
	others := make([]treeEntry, 0, len(entries))
	for _, e := range entries {
		if e.name == name && e.dir {
			dir = e.hash
			found++
			continue
		}
		others = append(others, e)
	}
	if found != 1 {
		return ZeroHash, false, nil // none, or one named twice: no index
	}
	top, err := n.r.readTree(dir)
	if err != nil {
		return ZeroHash, false, err
	}
	if !wellFormed(top) {
		return ZeroHash, false, nil
	}
	want := indexStampPrefix + treeName(others).String()
	stamps := 0
	ok := false
	for _, e := range top {
		if strings.HasPrefix(e.name, indexStampPrefix) {
			stamps++
			ok = ok || (e.name == want && !e.dir)
		}
	}
	return dir, ok && stamps == 1, nil
}

// indexLookBack is how many notes commits back, first parent after first
// parent, a tree whose index describes other notes looks for one whose
// index describes its own: a notes commit git-evolve wrote, under those
// that git notes, a rewrite's copies of notes or a git notes merge added.
const indexLookBack = 8

// indexBase is the snapshot whose index n's is brought forward from, with
// its index directory: n when its index describes its notes, else the
// nearest of its first-parent ancestors (up to indexLookBack) whose index
// describes its own; nil when there is none.
func (n *Notes) indexBase(name string) (*Notes, Hash, error) {
	snap := n
	for i := 0; ; i++ {
		dir, valid, err := snap.indexOf(name)
		if err != nil {
			return nil, ZeroHash, err
		}
		if valid {
			if snap != n {
				// brought forward only where DiffNotes names every note
				// that changed
				if plain, err := n.plainSince(snap); err != nil || !plain {
					return nil, ZeroHash, err
				}
			}
			return snap, dir, nil
		}
		if i == indexLookBack || snap.commit.IsZero() {
			return nil, ZeroHash, nil
		}
		c, err := n.r.Commit(snap.commit)
		if err != nil || len(c.Parents) == 0 {
			return nil, ZeroHash, nil // a history cut short: no base
		}
		if snap, err = n.r.NotesAt(c.Parents[0]); err != nil {
			return nil, ZeroHash, nil
		}
	}
}

// IndexLookup returns the objects the index ix lists under key, in the
// order of their names. An index that describes other notes (see
// NotesIndex) is brought forward from the nearest notes commit whose index
// describes its own (indexBase): what it lists, less the objects whose
// notes changed since, with those whose notes now give key. ok is false
// when there is no such index: the caller must read the notes themselves.
func (n *Notes) IndexLookup(ix *NotesIndex, key string) (objs []Hash, ok bool, err error) {
	x, ok, err := n.OpenIndex(ix)
	if err != nil || !ok {
		return nil, false, err
	}
	return x.Lookup(key)
}

// IndexReader reads a snapshot's index as IndexLookup does: the index of
// its base (indexBase), less the objects whose notes changed since, with
// the keys those notes give now.
type IndexReader struct {
	r       *Repo
	dir     Hash              // the base's index directory
	changed map[Hash]bool     // the objects whose notes changed since the base
	now     map[string][]Hash // the keys their notes give now, with them
}

// OpenIndex finds the index ix that describes n's notes, or that the
// nearest notes commit before it whose index describes its own brings
// forward (IndexLookup). ok is false when there is none: the caller reads
// the notes themselves.
func (n *Notes) OpenIndex(ix *NotesIndex) (*IndexReader, bool, error) {
	base, dir, err := n.indexBase(ix.Name)
	if err != nil || base == nil {
		return nil, false, err
	}
	x := &IndexReader{r: n.r, dir: dir}
	if base == n {
		return x, true, nil
	}
	diff, err := n.DiffNotes(base)
	if err != nil {
		return nil, false, err
	}
	x.changed = make(map[Hash]bool, len(diff))
	x.now = map[string][]Hash{}
	var blobs []Hash // the notes changed as they are now, read in one exchange
	for _, c := range diff {
		x.changed[c.Object] = true
		blobs = append(blobs, c.New...)
	}
	data, err := n.r.ReadBlobs(blobs)
	if err != nil {
		return nil, false, err
	}
	for _, c := range diff {
		keys := map[string]bool{}
		for range c.New {
			for _, k := range ix.Keys(data[0]) {
				keys[k] = true
			}
			data = data[1:]
		}
		for k := range keys {
			x.now[k] = append(x.now[k], c.Object)
		}
	}
	return x, true, nil
}

// Dir lists the directory path of the index ("" for its top; "a/b" for
// the keys "a/b/<leaf>"): the names of its subdirectories, sorted, and
// each leaf with the objects listed under it, in the order of their names. A
// directory that is not there is empty. ok is false when a tree on the
// way is one no writer of the index makes (errOddIndex): the caller reads
// the notes themselves.
func (x *IndexReader) Dir(path string) (dirs []string, leaves map[string][]Hash, ok bool, err error) {
	leaves = map[string][]Hash{}
	entries, err := x.r.indexDir(x.dir, path)
	if errors.Is(err, errOddIndex) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	for _, e := range entries {
		if e.dir {
			dirs = append(dirs, e.name)
			continue
		}
		i := strings.LastIndexByte(e.name, '-')
		if i < 0 {
			continue
		}
		if h, perr := ParseHash(e.name[i+1:]); perr == nil && !x.changed[h] {
			leaves[e.name[:i]] = append(leaves[e.name[:i]], h)
		}
	}
	prefix := path + "/"
	if path == "" {
		prefix = ""
	}
	for k, objs := range x.now {
		rest, found := strings.CutPrefix(k, prefix)
		if !found {
			continue
		}
		if sub, _, deeper := strings.Cut(rest, "/"); deeper {
			if !slices.Contains(dirs, sub) {
				dirs = append(dirs, sub)
			}
			continue
		}
		leaves[rest] = append(leaves[rest], objs...)
	}
	slices.Sort(dirs)
	for leaf, objs := range leaves {
		if len(objs) == 0 {
			delete(leaves, leaf)
			continue
		}
		slices.SortFunc(objs, Hash.Compare)
		leaves[leaf] = slices.Compact(objs)
	}
	return dirs, leaves, true, nil
}

// Lookup is what the index lists under key (IndexLookup); ok is false
// when a tree on the way is one no writer of the index makes.
func (x *IndexReader) Lookup(key string) (objs []Hash, ok bool, err error) {
	dir, leaf := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir, leaf = key[:i], key[i+1:]
	}
	_, leaves, ok, err := x.Dir(dir)
	if err != nil || !ok {
		return nil, false, err
	}
	return leaves[leaf], true, nil
}

// indexDir is the entries of the directory path ("" for dir itself)
// under the index directory dir; none when it is not there.
func (r *Repo) indexDir(dir Hash, path string) ([]treeEntry, error) {
	var parts []string
	if path != "" {
		parts = strings.Split(path, "/")
	}
	for _, p := range parts {
		entries, err := r.readTree(dir)
		if err != nil {
			return nil, err
		}
		if !wellFormed(entries) {
			return nil, errOddIndex
		}
		dir = ZeroHash
		for _, e := range entries {
			if e.name == p && e.dir {
				dir = e.hash
				break
			}
		}
		if dir.IsZero() {
			return nil, nil
		}
	}
	entries, err := r.readTree(dir)
	if err != nil {
		return nil, err
	}
	if !wellFormed(entries) {
		return nil, errOddIndex
	}
	return entries, nil
}

// indexChanges are the index entries ("key-<object>" paths) to add (true)
// and remove (false) in the index of base, whose index describes its
// notes, for it to describe n's notes with edits applied: from the keys
// of each object's notes in base and as they end, for the objects whose
// notes differ from base's (base is n, or an ancestor of n; see
// indexBase) and those edits change.
func (n *Notes) indexChanges(base *Notes, edits []NoteEdit, ix *NotesIndex) (map[string]bool, error) {
	final := map[Hash][]Hash{} // each object's note blobs as they end
	var objs []Hash
	if base != n {
		diff, err := n.DiffNotes(base)
		if err != nil {
			return nil, err
		}
		for _, c := range diff {
			final[c.Object] = c.New
			objs = append(objs, c.Object)
		}
	}
	for _, e := range edits { // as ApplyNotes takes them: the last edit of an object
		if _, ok := final[e.Object]; !ok {
			objs = append(objs, e.Object)
		}
		final[e.Object] = nil
		if !e.Blob.IsZero() {
			final[e.Object] = []Hash{e.Blob}
		}
	}
	old, err := base.FindMany(objs)
	if err != nil {
		return nil, err
	}
	keysOf := func(blobs []Hash) (map[string]bool, error) {
		keys := map[string]bool{}
		for _, b := range blobs {
			data, err := n.r.ReadBlob(b)
			if err != nil {
				return nil, err
			}
			for _, k := range ix.Keys(data) {
				keys[k] = true
			}
		}
		return keys, nil
	}
	changes := map[string]bool{}
	for _, obj := range objs {
		was, err := keysOf(old[obj])
		if err != nil {
			return nil, err
		}
		is, err := keysOf(final[obj])
		if err != nil {
			return nil, err
		}
		s := obj.String()
		for k := range was {
			if !is[k] {
				changes[k+"-"+s] = false
			}
		}
		for k := range is {
			if !was[k] {
				changes[k+"-"+s] = true
			}
		}
	}
	return changes, nil
}

// indexAll are the index entries of every note of the tree once edits are
// applied, all to add: the index built again.
func (n *Notes) indexAll(edits []NoteEdit, ix *NotesIndex) (map[string]bool, error) {
	edited := make(map[Hash]Hash, len(edits)) // as ApplyNotes takes them: the last edit of an object
	for _, e := range edits {
		edited[e.Object] = e.Blob
	}
	changes := map[string]bool{}
	add := func(obj Hash, data []byte) {
		s := obj.String()
		for _, k := range ix.Keys(data) {
			changes[k+"-"+s] = true
		}
	}
	err := n.ForEachNote(func(obj Hash, data []byte) error {
		if _, ok := edited[obj]; !ok {
			add(obj, data)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for obj, blob := range edited {
		if blob.IsZero() {
			continue
		}
		data, err := n.r.ReadBlob(blob)
		if err != nil {
			return nil, err
		}
		add(obj, data)
	}
	return changes, nil
}

// editIndexDir writes the directory whose entries are entries with changes
// applied (paths relative to it: true adds the empty blob there, false
// removes the entry), each subdirectory on a changed path written again
// and one left empty dropped; it returns the directory's name.
func (r *Repo) editIndexDir(entries []treeEntry, changes map[string]bool, empty Hash) (Hash, error) {
	if !wellFormed(entries) {
		return ZeroHash, errOddIndex
	}
	byName := make(map[string]int, len(entries))
	out := append([]treeEntry(nil), entries...)
	for i, e := range out {
		byName[e.name] = i
	}
	sub := map[string]map[string]bool{}
	for p, add := range changes {
		if j := strings.IndexByte(p, '/'); j >= 0 {
			d := p[:j]
			if sub[d] == nil {
				sub[d] = map[string]bool{}
			}
			sub[d][p[j+1:]] = add
			continue
		}
		i, ok := byName[p]
		switch {
		case add && !ok:
			byName[p] = len(out)
			out = append(out, treeEntry{name: p, hash: empty})
		case !add && ok:
			out[i].name = "" // dropped below
		}
	}
	names := make([]string, 0, len(sub))
	for d := range sub {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		var below []treeEntry
		i, ok := byName[d]
		if ok && out[i].dir {
			var err error
			if below, err = r.readTree(out[i].hash); err != nil {
				return ZeroHash, err
			}
		}
		h, err := r.editIndexDir(below, sub[d], empty)
		if err != nil {
			return ZeroHash, err
		}
		switch {
		case h.IsZero() && ok:
			out[i].name = ""
		case h.IsZero():
		case ok:
			out[i] = treeEntry{name: d, dir: true, hash: h}
		default:
			byName[d] = len(out)
			out = append(out, treeEntry{name: d, dir: true, hash: h})
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e.name != "" {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return ZeroHash, nil
	}
	return r.writeTree(kept)
}

// IndexEntry is an entry of a notes tree's index: Object listed under Key.
// With OddDirectory, Key is a directory of the index ("." for its own)
// that holds a name twice or out of order, and Object is zero.
type IndexEntry struct {
	Key          string
	Object       Hash
	OddDirectory bool
}

// IndexProblems compares the index (ix) readers of the snapshot take
// (the snapshot's own, or the one it is brought forward from: see
// indexBase) with what the notes of the tree it describes say: Missing
// are the entries the notes call for and the index lacks, Extra those it
// lists and no note calls for, each in path order. Of is the notes commit
// whose index was compared (zero when there is none: readers read the
// notes, and nothing is compared). With since, whose index (or the one it
// is brought forward from) was found right, only what changed from there
// is compared: the entries of the notes that changed, and every entry the
// index changed. Without, every note is read and the whole index.
func (n *Notes) IndexProblems(ix *NotesIndex, since *Notes) (missing, extra []IndexEntry, of Hash, err error) {
	return n.indexProblems(ix, since, nil)
}

// IndexProblemsAgainst is IndexProblems of the whole index, with the
// entries the snapshot's notes call for ("key-<object>") given: a caller
// that read every note already (with ix.Keys) need not have them read
// again. want is used up.
func (n *Notes) IndexProblemsAgainst(ix *NotesIndex, want map[string]bool) (missing, extra []IndexEntry, of Hash, err error) {
	if want == nil {
		want = map[string]bool{}
	}
	return n.indexProblems(ix, nil, want)
}

func (n *Notes) indexProblems(ix *NotesIndex, since *Notes, given map[string]bool) (missing, extra []IndexEntry, of Hash, err error) {
	base, dir, err := n.indexBase(ix.Name)
	if err != nil || base == nil {
		return nil, nil, ZeroHash, err
	}
	of = base.commit
	if base != n {
		given = nil // what n's notes call for, not base's
	}
	var want, have map[string]bool
	if given != nil {
		want = given
	} else if since != nil {
		// only what changed since, where DiffNotes names every note that
		// did (plainSince); else the whole index
		if sb, was, err := since.indexBase(ix.Name); err == nil && sb != nil {
			if plain, err := base.plainSince(sb); err == nil && plain {
				want, have, err = base.indexSince(ix, sb, was, dir)
				if err != nil {
					return nil, nil, of, err
				}
			}
		}
	}
	if have == nil {
		// The whole index, against every note: each entry listed is
		// taken out of want as it is met (a large ledger's index is not
		// held a second time), and what is left of want is missing.
		if want == nil {
			if want, err = base.indexAll(nil, ix); err != nil {
				return nil, nil, of, err
			}
		}
		var listed []string // listed, and called for by no note
		if err := n.r.eachIndexEntry(dir, "", func(p string) {
			if want[p] {
				delete(want, p)
			} else {
				listed = append(listed, p)
			}
		}, func(p string) {
			if p == "" {
				p = "."
			}
			extra = append(extra, IndexEntry{Key: p, OddDirectory: true})
		}); err != nil {
			return nil, nil, of, err
		}
		have = make(map[string]bool, len(listed))
		for _, p := range listed {
			have[p] = true
		}
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		w, h := want[p], have[p]
		if w == h {
			continue
		}
		e, ok := indexEntryOf(p)
		if !ok {
			if h {
				extra = append(extra, IndexEntry{Key: p})
			}
			continue
		}
		if w {
			missing = append(missing, e)
		} else {
			extra = append(extra, e)
		}
	}
	return missing, extra, of, nil
}

// indexEntryOf reads an index path "key-<object>".
func indexEntryOf(p string) (IndexEntry, bool) {
	i := strings.LastIndexByte(p, '-')
	if i < 0 {
		return IndexEntry{}, false
	}
	h, err := ParseHash(p[i+1:])
	if err != nil || h.String() != p[i+1:] {
		return IndexEntry{}, false
	}
	return IndexEntry{Key: p[:i], Object: h}, true
}

// indexSince is what IndexProblems compares when only what changed from
// since is: for each path the notes' changes or the index's touch, whether
// the notes call for it (want) and whether the index lists it (have).
func (n *Notes) indexSince(ix *NotesIndex, since *Notes, was, is Hash) (want, have map[string]bool, err error) {
	changes, err := n.DiffNotes(since)
	if err != nil {
		return nil, nil, err
	}
	want = map[string]bool{}
	changed := map[Hash]bool{}
	for _, c := range changes {
		changed[c.Object] = true
		s := c.Object.String()
		for _, b := range c.Old {
			data, err := n.r.ReadBlob(b)
			if err != nil {
				return nil, nil, err
			}
			for _, k := range ix.Keys(data) {
				if _, ok := want[k+"-"+s]; !ok {
					want[k+"-"+s] = false
				}
			}
		}
		for _, b := range c.New {
			data, err := n.r.ReadBlob(b)
			if err != nil {
				return nil, nil, err
			}
			for _, k := range ix.Keys(data) {
				want[k+"-"+s] = true
			}
		}
	}
	// the index's own changes: each path it added or removed
	touched := map[string]bool{} // path -> listed now
	var files []FileChange
	if err := n.r.diffTrees("", was, is, &files); err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if (f.OldMode != 0) != (f.NewMode != 0) && !(strings.HasPrefix(f.Path, indexStampPrefix) && !strings.Contains(f.Path, "/")) {
			touched[f.Path] = f.NewMode != 0 // the stamps are no entries
		}
	}
	for p, now := range touched {
		if _, ok := want[p]; ok {
			continue
		}
		e, ok := indexEntryOf(p)
		if ok && changed[e.Object] {
			want[p] = false // a changed note that does not call for it
			continue
		}
		want[p] = !now // the note did not change: the entry should not have
	}
	have = map[string]bool{}
	for p := range want {
		listed, err := n.r.indexListed(is, p)
		if err != nil {
			return nil, nil, err
		}
		have[p] = listed
	}
	return want, have, nil
}

// indexListed says whether the index directory dir lists path p (a file).
func (r *Repo) indexListed(dir Hash, p string) (bool, error) {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		entries, err := r.readTree(dir)
		if err != nil {
			return false, err
		}
		dir = ZeroHash
		for _, e := range entries {
			if e.name != part {
				continue
			}
			if i == len(parts)-1 {
				return !e.dir, nil
			}
			if e.dir {
				dir = e.hash
			}
			break
		}
		if dir.IsZero() {
			return false, nil
		}
	}
	return false, nil
}

// eachIndexEntry calls fn with the path of each file below the index
// directory dir but its stamps.
func (r *Repo) eachIndexEntry(dir Hash, prefix string, fn func(string), odd func(string)) error {
	entries, err := r.readTree(dir)
	if err != nil {
		return err
	}
	var once map[string]bool // in a directory that holds a name twice, each name once
	if !wellFormed(entries) {
		odd(strings.TrimSuffix(prefix, "/"))
		once = map[string]bool{}
	}
	var subs []Hash
	var names []string
	for _, e := range entries {
		if once != nil {
			if once[e.name] {
				continue
			}
			once[e.name] = true
		}
		switch {
		case e.dir:
			subs, names = append(subs, e.hash), append(names, e.name)
		case prefix == "" && strings.HasPrefix(e.name, indexStampPrefix):
		default:
			fn(prefix + e.name)
		}
	}
	if err := r.prefetchTrees(subs); err != nil {
		return err
	}
	for i, h := range subs {
		if err := r.eachIndexEntry(h, prefix+names[i]+"/", fn, odd); err != nil {
			return err
		}
	}
	return nil
}

// plainLevel says whether a directory of a notes tree, whose notes share
// prefix, is one every reader and every diff reads the same way: in git's
// order, each name once, note and fanout names in lower case, and notes
// beside no fanout subtree (a copy of a note can hide only in a directory
// that holds both, or under a name in another case). git notes writes no
// other; git fast-import, hand-made trees and hostile ones may.
func plainLevel(entries []treeEntry, prefix string) bool {
	if !wellFormed(entries) {
		return false
	}
	notes, fans := 0, 0
	for _, e := range entries {
		kind, _ := classify(prefix, e)
		switch kind {
		case entryNote:
			notes++
		case entryFanout:
			fans++
		default:
			// a submodule entry at a note's path is no note to any
			// reader, to a diff or to git: it hides no copy
			continue
		}
		if strings.ToLower(e.name) != e.name {
			return false
		}
	}
	return notes == 0 || fans == 0
}

// plainSince says whether every directory that differs between base's
// notes tree and n's is plain (plainLevel) on both sides: then each note
// that changed has one path on each side, and DiffNotes names every one.
// An index is brought forward from base only then.
func (n *Notes) plainSince(base *Notes) (bool, error) {
	a, err := base.root()
	if err != nil {
		return false, err
	}
	b, err := n.root()
	if err != nil {
		return false, err
	}
	return n.r.plainDiff(a, b, "")
}

func (r *Repo) plainDiff(a, b Hash, prefix string) (bool, error) {
	if a == b {
		return true, nil
	}
	ea, err := r.readTree(a)
	if err != nil {
		return false, err
	}
	eb, err := r.readTree(b)
	if err != nil {
		return false, err
	}
	if !plainLevel(ea, prefix) || !plainLevel(eb, prefix) {
		return false, nil
	}
	subs := map[string][2]Hash{}
	for side, es := range [][]treeEntry{ea, eb} {
		for _, e := range es {
			if kind, name := classify(prefix, e); kind == entryFanout {
				s := subs[name]
				s[side] = e.hash
				subs[name] = s
			}
		}
	}
	for name, s := range subs {
		if s[0] == s[1] {
			continue
		}
		if ok, err := r.plainDiff(s[0], s[1], prefix+name); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// NotesToRewrite are the objects whose notes a write of objs is to write
// again with its own, on the levels it rewrites (the root, and the
// directories on the paths of their notes), for those levels to be plain
// (plainLevel) and nothing of them lost:
//   - a note beside a fanout subtree: a level git notes never leaves so
//     (a write of git notes moves such a note into the subtree of its
//     prefix, joined with any copy there), on which every later write
//     would build its index again from every note;
//   - a note whose name another note's on its level is but for case, and
//     every note under fanout subtrees whose names are so: git reads both
//     copies, and a write that keeps one name of each (apply) would drop
//     the other's.
//
// A writer that writes their notes too, each joined from all its copies
// (ApplyNotes places an edited note in the subtree of its prefix and
// removes its every copy), leaves those levels plain. Each level is read
// once, whatever the number of objs.
func (n *Notes) NotesToRewrite(objs []Hash) ([]Hash, error) {
	root, err := n.root()
	if err != nil {
		return nil, err
	}
	var out []Hash
	next := map[string]map[string]Hash{} // each level read, by its prefix: its fanout subtrees with no twin
	level := func(dir Hash, prefix string) (map[string]Hash, error) {
		if fans, ok := next[prefix]; ok {
			return fans, nil
		}
		entries, err := n.r.readTree(dir)
		if err != nil {
			return nil, err
		}
		names := map[string]int{}
		hasFans := false
		for _, e := range entries {
			switch kind, name := classify(prefix, e); kind {
			case entryNote:
				names[name]++
			case entryFanout:
				names[name]++
				hasFans = true
			}
		}
		fans := map[string]Hash{}
		for _, e := range entries {
			switch kind, name := classify(prefix, e); kind {
			case entryNote:
				if hasFans || names[name] > 1 {
					if h, err := ParseHash(name); err == nil {
						out = append(out, h)
					}
				}
			case entryFanout:
				if names[name] > 1 {
					if err := n.r.notesUnder(e.hash, prefix+name, &out); err != nil {
						return nil, err
					}
					continue
				}
				fans[name] = e.hash
			}
		}
		next[prefix] = fans
		return fans, nil
	}
	for _, obj := range objs {
		hex := obj.String()
		dir, prefix := root, ""
		for !dir.IsZero() && len(prefix)+2 < len(hex) {
			fans, err := level(dir, prefix)
			if err != nil {
				return nil, err
			}
			g := hex[len(prefix) : len(prefix)+2]
			dir, prefix = fans[g], prefix+g
		}
	}
	slices.SortFunc(out, Hash.Compare)
	return slices.Compact(out), nil
}

// notesUnder appends the objects noted anywhere under the tree dir, whose
// notes share prefix.
func (r *Repo) notesUnder(dir Hash, prefix string, out *[]Hash) error {
	entries, err := r.readTree(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch kind, name := classify(prefix, e); kind {
		case entryNote:
			if h, err := ParseHash(name); err == nil {
				*out = append(*out, h)
			}
		case entryFanout:
			if err := r.notesUnder(e.hash, prefix+name, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// plainOnPaths says whether the levels a write of objs rewrites (the
// root, and the fanout directories on each object's path) are plain: a
// write merges names that differ only in case at a level it rewrites, so
// the notes it leaves are not then the notes it was given.
func (n *Notes) plainOnPaths(objs []Hash) (bool, error) {
	root, err := n.root()
	if err != nil {
		return false, err
	}
	for _, obj := range objs {
		hex := obj.String()
		dir, prefix := root, ""
		for !dir.IsZero() {
			entries, err := n.r.readTree(dir)
			if err != nil {
				return false, err
			}
			if !plainLevel(entries, prefix) {
				return false, nil
			}
			next := ZeroHash
			if len(prefix)+2 < len(hex) {
				for _, e := range entries {
					if kind, name := classify(prefix, e); kind == entryFanout && name == hex[len(prefix):len(prefix)+2] {
						next = e.hash
						break
					}
				}
			}
			dir, prefix = next, prefix+hex[len(prefix):min(len(prefix)+2, len(hex))]
		}
	}
	return true, nil
}
