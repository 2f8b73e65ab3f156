package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// NotesDiffer diffs notes commits through one `git diff-tree --stdin -r -t
// -z` for as long as it is open: git compares the trees in C, and only the
// paths that changed cross the pipe, where DiffNotesMany reads every tree
// that differs, root and fanout levels, into this process. A history of a
// notes commit per record is diffed for about what `git log --raw` costs.
//
// Its answer is DiffNotesMany's. A note whose object is noted at another
// path too, one left as it was, is not in git's answer; such a copy can
// only be where a directory of the notes tree holds both a note and a
// fanout subtree, or a name not in lower case (git and this package write
// neither; git fast-import leaves notes beside fanout subtrees while a
// tree grows). So the differ keeps, for each directory tree it has seen,
// how many of each it holds, brought forward from the tree before by git's
// answer (a tree seen for the first time is read and counted). A
// directory that changed and holds notes and subtrees is read, and the
// pair is diffed by DiffNotesMany when it holds two ways to a note that
// changed; a pair where a name not in lower case changed is diffed by
// DiffNotesMany. Pairs diffed oldest first read the fewest trees.
type NotesDiffer struct {
	r      *Repo
	ctx    context.Context
	cancel context.CancelFunc
	git    *pipedGit
	out    *bufio.Reader
	failed bool // git failed once: every later pair is diffed by DiffNotesMany
	// shapes are the directory trees' shapes, the newest known in
	// shapes; older keeps the generation before, read from until a
	// lookup moves a shape to shapes (what a long history's diffs still
	// ask for stays, its trees' older versions go)
	shapes, older map[Hash]dirShape
	skip          []string // root entries git is not to diff (NewNotesDiffer)
	// counts for the trace: pairs git diffed, those left to
	// DiffNotesMany, trees read to learn their shape
	asked, odd, read int
}

// dirShape is what a directory of a notes tree holds that the differ must
// know of: notes, fanout subtrees, and names of either not in lower case.
type dirShape struct{ notes, fanouts, upper int32 }

// mixed says whether a directory of this shape holds notes and fanout
// subtrees both.
func (s dirShape) mixed() bool { return s.notes > 0 && s.fanouts > 0 }

func (s dirShape) plus(d dirShape) dirShape {
	return dirShape{s.notes + d.notes, s.fanouts + d.fanouts, s.upper + d.upper}
}

// NewNotesDiffer returns a differ of the repository's notes commits; git
// starts with its first pair. Close ends it.
// skip names entries at the root of the notes trees that hold no note (a
// ledger's index): git is told not to diff them, which would cost as much
// as the notes.
func (r *Repo) NewNotesDiffer(skip ...string) *NotesDiffer {
	ctx, cancel := context.WithCancel(context.Background())
	return &NotesDiffer{r: r, ctx: ctx, cancel: cancel, shapes: map[Hash]dirShape{}, skip: skip}
}

// Close ends git.
func (d *NotesDiffer) Close() {
	if d.asked > 0 {
		trace("notes differ: %d pair(s) diffed by git, %d of them again here (a directory that may hide a copy), %d tree(s) read for their shape", d.asked, d.odd, d.read)
	}
	if d.git != nil {
		d.git.stdin.Close()
		if err := d.git.wait(); err != nil && !d.failed {
			trace("notes differ: %v", err)
		}
		d.git = nil
	}
	d.cancel()
}

// Diff is DiffNotesMany(pairs), the same answer: out[i] is pairs[i]'s
// change list, sorted by object. Pairs of two notes commits go to git;
// others (an empty side) and those whose trees may hide a copy go to
// DiffNotesMany, as do all of them once git failed.
func (d *NotesDiffer) Diff(pairs []NotesPair) ([][]NoteChange, error) {
	out := make([][]NoteChange, len(pairs))
	var rest []int // pairs for DiffNotesMany
	var asked []int
	for i, p := range pairs {
		if d.failed || p.Old.commit.IsZero() || p.New.commit.IsZero() {
			rest = append(rest, i)
			continue
		}
		asked = append(asked, i)
	}
	if len(asked) > 0 {
		odd, err := d.ask(pairs, asked, out)
		if err != nil {
			trace("notes differ: %v; diffing the trees here", err)
			d.fail()
			rest = append(rest, asked...)
		} else {
			rest = append(rest, odd...)
		}
	}
	if len(rest) > 0 {
		some := make([]NotesPair, len(rest))
		for k, i := range rest {
			some[k] = pairs[i]
		}
		got, err := DiffNotesMany(some)
		if err != nil {
			return nil, err
		}
		for k, i := range rest {
			out[i] = got[k]
		}
	}
	return out, nil
}

func (d *NotesDiffer) fail() {
	d.failed = true
	if d.git != nil {
		d.git.stdin.Close()
		d.git.kill()
		d.git = nil
	}
}

// deltaBaseCache is the cache of delta bases the differ's git keeps.
const deltaBaseCache = "48m"

// packWindow and packMapped bound how much of the packs a git that reads
// the whole ledger maps at once (1 GiB windows and 8 GiB in all unless
// set): the differ's, over a long history's trees read from all over a
// large pack, and the listing's and the export's; every page a mapping
// touched stays in the process. Diffing the 100,000 notes commits of a
// ledger with its index of cycles, in the two packs bench/genrepo.sh
// writes (149 MB): 264 MB at 16 MiB windows and 96 MiB, 206 MB at these,
// in 6.63 and 6.75 s; in one pack, as a clone has it, 252 and 208 MB in
// 6.87 and 6.82 s. Its export: 268 and 172 MB.
const (
	packWindow = "4m"
	packMapped = "32m"
)

// boundedMaps is git's command line args with the packs' mappings bounded
// (packWindow, packMapped).
func boundedMaps(args ...string) []string {
	return append([]string{"-c", "core.packedGitWindowSize=" + packWindow, "-c", "core.packedGitLimit=" + packMapped}, args...)
}

func (d *NotesDiffer) start() error {
	// git's cache of delta bases is 96 MiB unless set: over a long
	// history it fills, and with the packs git maps the process would
	// hold more than the reader's bound (diffing 100,000 notes commits,
	// 285 MiB at 96, 234 at 48, for 5-10% more time)
	args := boundedMaps("-c", "core.deltaBaseCacheLimit="+deltaBaseCache, "diff-tree", "--stdin", "-r", "-t", "-z", "--always", "--no-renames", "--no-ext-diff", "--no-textconv")
	if len(d.skip) > 0 {
		args = append(args, "--")
		for _, name := range d.skip {
			if validNonNote(name) {
				args = append(args, ":(exclude,literal,top)"+name)
			}
		}
	}
	g, err := d.r.startPiped(d.ctx, true, args...)
	if err != nil {
		return err
	}
	if f, ok := g.stdout.(*os.File); ok {
		growPipe(f, 1<<20)
	}
	d.git, d.out = g, bufio.NewReaderSize(g.stdout, 256<<10)
	return nil
}

// ask sends the pairs at asked to git (each as "new old": diff-tree takes
// the second commit for the first's parent), then one line whose answer
// only marks the end, and reads the answers as git writes them. It fills
// out for the pairs whose trees hide no copy and returns the others.
func (d *NotesDiffer) ask(pairs []NotesPair, asked []int, out [][]NoteChange) (odd []int, err error) {
	if d.git == nil {
		if err := d.start(); err != nil {
			return nil, err
		}
	}
	// The trees of both sides' roots (read from the commits when the
	// snapshots do not have them yet) before anything is written: a read
	// of git cat-file is not made while git diff-tree waits.
	roots := make([][2]Hash, len(asked))
	for k, i := range asked {
		if roots[k][0], err = pairs[i].Old.root(); err != nil {
			return nil, err
		}
		if roots[k][1], err = pairs[i].New.root(); err != nil {
			return nil, err
		}
	}
	last := pairs[asked[len(asked)-1]].New.commit
	written := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(d.git.stdin, 64<<10)
		line := make([]byte, 0, 2*41)
		put := func(a, b Hash) error {
			line = line[:0]
			line = append(line, a.String()...)
			line = append(line, ' ')
			line = append(line, b.String()...)
			line = append(line, '\n')
			_, err := w.Write(line)
			return err
		}
		var err error
		for _, i := range asked {
			if err = put(pairs[i].New.commit, pairs[i].Old.commit); err != nil {
				break
			}
		}
		if err == nil {
			err = put(last, last) // the end: a header and no change
		}
		if err == nil {
			err = w.Flush()
		}
		written <- err
	}()
	var readErr error
	for k, i := range asked {
		if err := d.header(pairs[i].New.commit); err != nil {
			readErr = err
			break
		}
		changes, suspect, err := d.pair(roots[k][0], roots[k][1])
		if err != nil {
			readErr = err
			break
		}
		d.asked++
		if suspect {
			d.odd++
			odd = append(odd, i)
			continue
		}
		out[i] = changes
	}
	if readErr == nil {
		readErr = d.header(last)
	}
	if readErr != nil {
		// git may be waiting for its answers to be read, and the writer
		// for git: it ends here (and is not started again)
		d.cancel()
	}
	if werr := <-written; readErr == nil && werr != nil {
		readErr = werr
	}
	if readErr != nil {
		// git is ended and waited for first: what it said is all copied
		// then (exec copies its standard error until the wait)
		g := d.git
		d.fail()
		if said := g.said(); len(said) > 0 {
			readErr = fmt.Errorf("%v: %s", readErr, said)
		}
		return nil, readErr
	}
	return odd, nil
}

// header reads the line git starts the answer for commit c with.
func (d *NotesDiffer) header(c Hash) error {
	h, err := d.out.ReadSlice(0)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("git diff-tree ended early")
		}
		return err
	}
	got, perr := ParseHash(string(h[:len(h)-1]))
	if perr != nil || got != c {
		return fmt.Errorf("unexpected git diff-tree output %q", h)
	}
	return nil
}

// rawSide is one side of a changed path in git's raw diff.
type rawSide struct {
	mode uint32
	hash Hash
}

// dirChange is a directory that changed, its tree on each side (zero where
// it is absent), and what its own entries that changed add to its shape.
type dirChange struct {
	prefix   string // the hex digits of its path, lower case
	old, new Hash
	delta    dirShape
}

// pair reads the changes of one pair, up to the next header, and says
// whether a directory that changed (old or new) may hide a copy.
func (d *NotesDiffer) pair(oldRoot, newRoot Hash) ([]NoteChange, bool, error) {
	dirs := map[string]*dirChange{"": {old: oldRoot, new: newRoot}}
	type sides struct{ old, new []Hash }
	notes := map[Hash]*sides{}
	var order []Hash
	suspect := false
	for {
		b, err := d.out.Peek(1)
		if err != nil {
			return nil, false, err
		}
		if b[0] != ':' {
			break
		}
		meta, err := d.out.ReadSlice(0)
		if err != nil {
			return nil, false, err
		}
		oldSide, newSide, err := parseRaw(meta[:len(meta)-1])
		if err != nil {
			return nil, false, err
		}
		pathb, err := d.out.ReadSlice(0)
		if err != nil {
			return nil, false, err
		}
		path := string(pathb[:len(pathb)-1])
		parent, name := "", path
		if j := strings.LastIndexByte(path, '/'); j >= 0 {
			parent, name = path[:j], path[j+1:]
		}
		dc, ok := dirs[parent]
		if !ok {
			continue // under a directory that is no fanout level: no note
		}
		was := shapeOf(dc.prefix, name, oldSide)
		is := shapeOf(dc.prefix, name, newSide)
		dc.delta = dc.delta.plus(is).plus(dirShape{-was.notes, -was.fanouts, -was.upper})
		lower := strings.ToLower(name)
		if oldSide.mode&0o170000 == 0o040000 || newSide.mode&0o170000 == 0o040000 {
			if was.fanouts+is.fanouts > 0 {
				sub := &dirChange{prefix: dc.prefix + lower}
				if was.fanouts > 0 {
					sub.old = oldSide.hash
				}
				if is.fanouts > 0 {
					sub.new = newSide.hash
				}
				dirs[path] = sub
			}
		}
		if was.notes+is.notes == 0 {
			continue
		}
		obj, _ := noteObject(dc.prefix, lower)
		s, ok := notes[obj]
		if !ok {
			s = &sides{}
			notes[obj] = s
			order = append(order, obj)
		}
		if was.notes > 0 {
			s.old = append(s.old, oldSide.hash)
		}
		if is.notes > 0 {
			s.new = append(s.new, newSide.hash)
		}
		if len(s.old) > 1 || len(s.new) > 1 {
			suspect = true // two copies changed: the trees say which comes first
		}
	}
	// Each directory's shape on both sides: the old one known or counted,
	// the new one the old one and what changed. Where one holds notes and
	// fanout subtrees, the tree is read: a copy of a note that changed is
	// there when it holds two ways to that note's object.
	var odd []Hash // trees to read, with their prefixes
	var oddPrefix []string
	for _, dc := range dirs {
		was, err := d.shape(dc.old, dc.prefix)
		if err != nil {
			return nil, false, err
		}
		is := was.plus(dc.delta)
		if !dc.new.IsZero() {
			if _, ok := d.shapes[dc.new]; !ok {
				d.keep(dc.new, is)
			}
		}
		if was.upper > 0 || is.upper > 0 {
			// names that differ in case: DiffNotesMany may pair a subtree
			// with another of the same name in another case, and say what
			// git does not
			suspect = true
		}
		if was.mixed() {
			odd, oddPrefix = append(odd, dc.old), append(oddPrefix, dc.prefix)
		}
		if is.mixed() {
			odd, oddPrefix = append(odd, dc.new), append(oddPrefix, dc.prefix)
		}
	}
	for i := 0; i < len(odd) && !suspect; i++ {
		two, err := d.twoWays(odd[i], oddPrefix[i], order)
		if err != nil {
			return nil, false, err
		}
		suspect = two
	}
	if suspect {
		return nil, true, nil
	}
	var changes []NoteChange
	for _, obj := range order {
		s := notes[obj]
		if sameHashes(s.old, s.new) {
			continue // moved to another fanout path, the same note
		}
		changes = append(changes, NoteChange{Object: obj, Old: s.old, New: s.new})
	}
	sortChanges(changes)
	return changes, false, nil
}

// twoWays says whether directory tree h, whose notes share prefix, holds
// two ways to one of objs: its note, and a fanout subtree that notes it
// too (read to know).
func (d *NotesDiffer) twoWays(h Hash, prefix string, objs []Hash) (bool, error) {
	var want []string
	for _, obj := range objs {
		if s := obj.String(); strings.HasPrefix(s, prefix) {
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return false, nil
	}
	entries, err := d.r.readTree(h)
	if err != nil {
		return false, err
	}
	d.read++
	ways := make([]int, len(want))
	in := &Notes{r: d.r}
	for _, e := range entries {
		kind, name := classify(prefix, e)
		for i, w := range want {
			switch {
			case kind == entryNote && name == w:
			case kind == entryFanout && strings.HasPrefix(w, prefix+name):
				var found []Hash
				if err := in.find(e.hash, prefix+name, w, entryNote, &found); err != nil {
					return false, err
				}
				d.read++
				if len(found) == 0 {
					continue
				}
			default:
				continue
			}
			if ways[i]++; ways[i] > 1 {
				return true, nil
			}
		}
	}
	return false, nil
}

// shape is the shape of directory tree h (zero: absent), known or read.
func (d *NotesDiffer) shape(h Hash, prefix string) (dirShape, error) {
	if h.IsZero() {
		return dirShape{}, nil
	}
	if s, ok := d.shapes[h]; ok {
		return s, nil
	}
	if s, ok := d.older[h]; ok {
		d.keep(h, s)
		return s, nil
	}
	entries, err := d.r.readTree(h)
	if err != nil {
		return dirShape{}, err
	}
	d.read++
	var s dirShape
	for _, e := range entries {
		s = s.plus(entryShape(prefix, e))
	}
	d.keep(h, s)
	return s, nil
}

// maxShapes is how many shapes a generation of them holds: about three
// per notes commit (the root, a fanout subtree or two), 40 bytes each.
const maxShapes = 1 << 17

// keep files the shape of directory tree h.
func (d *NotesDiffer) keep(h Hash, s dirShape) {
	if len(d.shapes) >= maxShapes {
		d.older, d.shapes = d.shapes, make(map[Hash]dirShape, maxShapes)
	}
	d.shapes[h] = s
}

// shapeOf is what one side of a changed entry named name, in a directory
// whose notes share prefix, adds to that directory's shape.
func shapeOf(prefix, name string, side rawSide) dirShape {
	if side.mode == 0 {
		return dirShape{} // absent on this side
	}
	return entryShape(prefix, treeEntry{name: name, mode: side.mode, dir: side.mode&0o170000 == 0o040000})
}

// entryShape is what one tree entry adds to its directory's shape, as
// classify reads it.
func entryShape(prefix string, e treeEntry) dirShape {
	var s dirShape
	switch kind, _ := classify(prefix, e); kind {
	case entryNote:
		s.notes = 1
	case entryFanout:
		s.fanouts = 1
	default:
		return s
	}
	if !isHex(e.name) {
		s.upper = 1
	}
	return s
}

// parseRaw reads ":<mode> <mode> <hash> <hash> <status>" (git diff --raw,
// full names), with no allocation: it is read for every path of every
// notes commit of a history.
func parseRaw(b []byte) (oldSide, newSide rawSide, err error) {
	var f [5][]byte
	n := 0
	for rest := bytes.TrimPrefix(b, []byte(":")); ; {
		i := 0
		for i < len(rest) && isRawSpace(rest[i]) {
			i++
		}
		rest = rest[i:]
		if len(rest) == 0 {
			break
		}
		j := 0
		for j < len(rest) && !isRawSpace(rest[j]) {
			j++
		}
		if n == len(f) {
			n++ // more fields than a raw line has
			break
		}
		f[n], rest = rest[:j], rest[j:]
		n++
	}
	if n != len(f) {
		return oldSide, newSide, fmt.Errorf("unexpected git diff-tree output %q", b)
	}
	om, ok1 := parseMode(f[0])
	nm, ok2 := parseMode(f[1])
	oh, ok3 := parseHashBytes(f[2])
	nh, ok4 := parseHashBytes(f[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return oldSide, newSide, fmt.Errorf("unexpected git diff-tree output %q", b)
	}
	return rawSide{om, oh}, rawSide{nm, nh}, nil
}

// isRawSpace is what separates the fields of a raw diff line (as
// bytes.Fields splits ASCII).
func isRawSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseHashBytes is ParseHash of b, without making a string of it.
func parseHashBytes(b []byte) (Hash, bool) {
	var h Hash
	if len(b) != 2*len(h) {
		return h, false
	}
	_, err := hex.Decode(h[:], b)
	return h, err == nil
}

// noteObject is the object a note named name notes, in a directory whose
// notes share prefix (both lower case hex); false when they are not 40
// digits.
func noteObject(prefix, name string) (Hash, bool) {
	var buf [40]byte
	if len(prefix)+len(name) != len(buf) {
		return Hash{}, false
	}
	copy(buf[copy(buf[:], prefix):], name)
	return parseHashBytes(buf[:])
}

// sortChanges puts changes in DiffNotesMany's order: by object.
func sortChanges(cs []NoteChange) {
	slices.SortFunc(cs, func(a, b NoteChange) int { return bytes.Compare(a.Object[:], b.Object[:]) })
}
