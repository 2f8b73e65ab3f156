package cycle

import (
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// index lists the cycle number of every record in the ledger with the
// commit it is on, for one notes commit: what a record and a cycle start
// ask (the largest cycle, the record the next one links to, whether a
// number is taken). It lives in memory only. It is made from the newest
// notes commits (indexFromHistory: the notes commit a record writes names
// the largest cycle, so that a record reads the notes it added and no
// others), and, when the history does not answer, from the ledger's saved
// view (loadView, which brings itself forward from git or is rebuilt):
// there is no file of its own to fall out of step with the notes.
type index struct {
	notes   gitstore.Hash
	entries []indexEntry
	// byCycle is a commit holding each cycle, built by the first find.
	byCycle map[int32]gitstore.Hash
	top     int
	topOK   bool
	// whole makes the index whole, for one made from the ledger's history
	// (indexFromHistory), which holds only the entries of the largest
	// cycle: any question but the largest cycle and its commits makes it
	// whole first. nil for a whole index.
	whole func() (*index, error)
	// head is the ledger's last record with an id in listing order
	// (ledger.Less), the one the next record chains to, and a commit
	// whose note holds it, for an index made from the view; nil when it
	// is not known (lastRecord then reads the notes of the largest
	// cycles) or, for a whole index, when there is none.
	head   *ledger.Record
	headAt gitstore.Hash
}

type indexEntry struct {
	obj   gitstore.Hash
	cycle int32
}

// loadIndex returns the index for snap: from the ledger's history when it
// names the largest cycle (indexFromHistory), else from the saved view.
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*index, error) {
	if hx, ok := l.indexFromHistory(snap); ok {
		return hx, nil
	}
	return l.viewIndex(snap)
}

// viewIndex is the whole index of snap, from the ledger's view (the saved
// one when it is of snap, else brought forward or rebuilt, and saved), with
// its head: the last line in the view's order (listing order) that has an
// id, among the lastRecordDepth largest cycles.
func (l *Ledger) viewIndex(snap *gitstore.Notes) (*index, error) {
	v, err := l.loadView(snap)
	if err != nil {
		return nil, err
	}
	defer Unmap(v.mapped) // what is kept from it is copied out
	ix := &index{notes: snap.Commit(), entries: make([]indexEntry, 0, len(v.lines))}
	for _, ln := range v.lines {
		ix.entries = append(ix.entries, indexEntry{ln.commit, int32(ln.Summary.Cycle)})
	}
	top := ix.max()
	for i := len(v.lines) - 1; i >= 0; i-- {
		ln := &v.lines[i]
		if top-ln.Summary.Cycle >= lastRecordDepth {
			break
		}
		if len(ln.Summary.ID) == 0 {
			continue
		}
		if r, err := ledger.Parse(ln.Text); err == nil && r.ID != "" {
			ix.head, ix.headAt = &r, ln.commit
			break
		}
	}
	return ix, nil
}

// wholeIndex builds the index of snap from every note, in one stream (a
// remote-tracking copy's, which has no view).
func (l *Ledger) wholeIndex(snap *gitstore.Notes) (*index, error) {
	ix := &index{notes: snap.Commit()}
	err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		for _, c := range ledger.Cycles(data) {
			ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// historyWalk is how many notes commits indexFromHistory looks at, newest
// first, for one that names the ledger's largest cycle.
const historyWalk = 64

// historyNotes is the most notes added since that commit indexFromHistory
// reads, and how many changedCycles reads in one exchange.
var historyNotes = 4096 // the tests make it small

// recordSubject is the subject of the notes commit a record writes.
const recordSubject = "git evolve: record cycle %d (%s)"

// indexFromHistory makes an index for snap without reading every note: it
// knows the largest cycle and the commits that hold it, which
// is what a record and a cycle start ask. The newest notes commit (among
// the first historyWalk, by first parents) with a ledger.LargestTrailer names the
// largest cycle then; the notes that commit changed are read (none may
// hold a larger one, and they give the commits that hold it), and so are
// the notes changed from it to snap. ok is false, and the caller reads
// every note, when there is no such commit, the notes it changed hold a
// larger cycle, the largest is on a note that commit did not change, or a
// note was changed or removed since (only added notes are read here, at
// most historyNotes of them).
//
// The trailer is only as true as the ledger it is in: a history edited to
// name a smaller cycle than the notes hold can make two records share a
// number; verify reports the trailer (a breach: understated) and the
// number taken twice, and nothing is lost.
func (l *Ledger) indexFromHistory(snap *gitstore.Notes) (*index, bool) {
	h := snap.Commit()
	var named int
	var at gitstore.CommitInfo
	for i := 0; ; i++ {
		if h.IsZero() || i == historyWalk {
			return nil, false
		}
		ci, err := l.repo.Commit(h)
		if err != nil {
			return nil, false
		}
		if n, ok := ledger.LargestCycle(ci.Message); ok {
			named, at = n, ci
			break
		}
		if len(ci.Parents) == 0 {
			return nil, false
		}
		h = ci.Parents[0]
	}
	ix := &index{notes: snap.Commit()}
	// What that commit changed, which must hold no larger cycle.
	then := l.repo.NotesOf(at)
	before := l.repo.EmptyNotes()
	if len(at.Parents) > 0 {
		var err error
		if before, err = l.repo.NotesAt(at.Parents[0]); err != nil {
			return nil, false
		}
	}
	changed, err := then.DiffNotes(before)
	if err != nil || !l.indexChanges(ix, changed) || ix.max() > named {
		return nil, false
	}
	// What changed since: added notes only.
	since, err := snap.DiffNotes(then)
	if err != nil {
		return nil, false
	}
	for _, c := range since {
		if len(c.Old) > 0 {
			return nil, false
		}
	}
	// Notes are read here one at a time: past a few thousand (another
	// clone's import), the stream of every note is the faster read.
	if len(since) > historyNotes || !l.indexChanges(ix, since) {
		return nil, false
	}
	// Only the entries of the largest cycle are kept: the others answer
	// nothing this index is asked without becoming whole. When that is
	// the named cycle, a note read here must hold it.
	top := max(ix.max(), named)
	ix.entries = slices.DeleteFunc(ix.entries, func(e indexEntry) bool { return int(e.cycle) != top })
	if len(ix.entries) == 0 {
		return nil, false
	}
	ix.topOK = false
	ix.whole = func() (*index, error) { return l.viewIndex(snap) }
	return ix, true
}

// indexChanges adds the cycles of the notes in changes to ix; false when
// a note cannot be read.
func (l *Ledger) indexChanges(ix *index, changes []gitstore.NoteChange) bool {
	cycles, err := l.changedCycles(changes, 0, nil)
	if err != nil {
		return false
	}
	for i, c := range changes {
		ix.add(c.Object, cycles[i])
	}
	return true
}

// complete makes an index from the ledger's history whole.
func (ix *index) complete() error {
	if ix.whole == nil {
		return nil
	}
	whole, err := ix.whole()
	if err != nil {
		return err
	}
	*ix = *whole
	return nil
}

func (l *Ledger) changesSince(old gitstore.Hash, snap *gitstore.Notes) ([]gitstore.NoteChange, error) {
	base := l.repo.EmptyNotes()
	if !old.IsZero() {
		var err error
		if base, err = l.repo.NotesAt(old); err != nil {
			return nil, err
		}
	}
	return snap.DiffNotes(base)
}

// changedCycles is the cycles each changed note now holds, their blobs
// read a few thousand to an exchange with git (not one round trip a note,
// nor every note in memory at once; a blob many notes share, once). When
// found is not nil, it is given each record of cycle from or above and the
// change whose note holds it (each blob parsed once).
func (l *Ledger) changedCycles(changes []gitstore.NoteChange, from int, found func(change int, r *ledger.Record)) ([][]int, error) {
	out := make([][]int, len(changes))
	parsed := map[gitstore.Hash][]ledger.Record{}
	for start := 0; start < len(changes); {
		end, n := start, 0
		var blobs []gitstore.Hash
		at := map[gitstore.Hash]int{}
		for ; end < len(changes) && (n == 0 || n+len(changes[end].New) <= historyNotes); end++ {
			for _, b := range changes[end].New {
				if _, ok := at[b]; !ok {
					at[b] = len(blobs)
					blobs = append(blobs, b)
					n++
				}
			}
		}
		data, err := l.repo.ReadBlobs(blobs)
		if err != nil {
			return nil, err
		}
		for i := start; i < end; i++ {
			for _, b := range changes[i].New {
				d := data[at[b]]
				cs := ledger.Cycles(d)
				out[i] = append(out[i], cs...)
				if found == nil || len(cs) == 0 || slices.Max(cs) < from {
					continue
				}
				rs, ok := parsed[b]
				if !ok {
					rs, _ = ledger.ParseLines(d)
					parsed[b] = rs
				}
				for j := range rs {
					if rs[j].Cycle >= from {
						found(i, &rs[j])
					}
				}
			}
		}
		start = end
	}
	return out, nil
}

// add records the cycles on obj.
func (ix *index) add(obj gitstore.Hash, cycles []int) {
	for _, c := range cycles {
		ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
		if ix.topOK {
			ix.top = max(ix.top, c)
		}
	}
	ix.byCycle = nil
}

// find returns a commit holding cycle n.
func (ix *index) find(n int) (gitstore.Hash, bool, error) {
	if err := ix.complete(); err != nil {
		return gitstore.ZeroHash, false, err
	}
	if ix.byCycle == nil {
		ix.byCycle = make(map[int32]gitstore.Hash, len(ix.entries))
		for _, e := range ix.entries {
			if _, ok := ix.byCycle[e.cycle]; !ok {
				ix.byCycle[e.cycle] = e.obj
			}
		}
	}
	obj, ok := ix.byCycle[int32(n)]
	return obj, ok, nil
}

// holders lists the commits that hold cycle n, each once.
func (ix *index) holders(n int) ([]gitstore.Hash, error) {
	if ix.whole != nil && n != ix.max() {
		if err := ix.complete(); err != nil {
			return nil, err
		}
	}
	var out []gitstore.Hash
	seen := map[gitstore.Hash]bool{}
	for _, e := range ix.entries {
		if int(e.cycle) == n && !seen[e.obj] {
			seen[e.obj] = true
			out = append(out, e.obj)
		}
	}
	return out, nil
}

// max returns the largest cycle number in the index (0 when empty).
func (ix *index) max() int {
	if !ix.topOK {
		ix.top = 0
		for _, e := range ix.entries {
			ix.top = max(ix.top, int(e.cycle))
		}
		ix.topOK = true
	}
	return ix.top
}
