package store

import (
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Index lists the cycle number of every record in the ledger with the
// commit it is on, for one notes commit: what a record and a cycle start
// ask (the largest cycle, the record the next one links to, whether a
// number is taken). It lives in memory only. It is made from the newest
// notes commits (indexFromHistory: the notes commit a record writes names
// the largest cycle, so that a record reads the notes it added and no
// others), and, when the history does not answer, from the ledger's saved
// view (loadView, which brings itself forward from git or is rebuilt):
// there is no file of its own to fall out of step with the notes.
type Index struct {
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
	whole func() (*Index, error)
	// head is the ledger's last record with an id in listing order
	// (ledger.Less), the one the next record chains to, when headKnown
	// (an index made from the view; nil when there is none). Else
	// lastRecord reads the notes of the largest cycles.
	head      *ledger.Record
	headKnown bool
}

type indexEntry struct {
	obj   gitstore.Hash
	cycle int32
}

// Index is the cycle index of the local ledger as it is now (see Update
// for the index of the notes a write builds on).
func (l *Ledger) Index() (*Index, error) {
	snap, err := l.repo.ReadNotes(NotesRef)
	if err != nil {
		return nil, err
	}
	return l.loadIndex(snap)
}

// loadIndex returns the index for snap: from the ledger's history when it
// names the largest cycle (indexFromHistory), else from the saved view.
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*Index, error) {
	if hx, ok := l.indexFromHistory(snap); ok {
		return hx, nil
	}
	return l.viewIndex(snap)
}

// viewIndex is the whole index of snap, from the ledger's view (the saved
// one when it is of snap, else brought forward or rebuilt, and saved), with
// its head: the last line in the view's order (listing order) that has an
// id, among the lastRecordDepth largest cycles.
func (l *Ledger) viewIndex(snap *gitstore.Notes) (*Index, error) {
	v, err := l.loadView(snap)
	if err != nil {
		return nil, err
	}
	ix := &Index{notes: snap.Commit(), entries: make([]indexEntry, 0, len(v.lines))}
	for _, ln := range v.lines {
		ix.entries = append(ix.entries, indexEntry{ln.commit, int32(ln.Summary.Cycle)})
	}
	top := ix.Max()
	ix.headKnown = true
	for i := len(v.lines) - 1; i >= 0; i-- {
		ln := &v.lines[i]
		if top-ln.Summary.Cycle >= lastRecordDepth {
			break
		}
		if len(ln.Summary.ID) == 0 {
			continue
		}
		if r, err := ledger.Parse(ln.Text); err == nil && r.ID != "" {
			ix.head = &r
			break
		}
	}
	return ix, nil
}

// wholeIndex builds the index of snap from every note, in one stream (a
// remote-tracking copy's, which has no view).
func (l *Ledger) wholeIndex(snap *gitstore.Notes) (*Index, error) {
	ix := &Index{notes: snap.Commit()}
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

// RecordSubject is the subject of the notes commit that records one
// cycle, formatted with its number and result; the history's index reads
// the notes commits that carry it.
const RecordSubject = "git evolve: record cycle %d (%s)"

// indexFromHistory makes an index for snap without reading every note: it
// knows the largest cycle and every commit that holds it, which is what a
// record and a cycle start ask. Along first parents from snap, among the
// newest historyWalk notes commits, the newest whose
// ledger.LargestTrailer names a cycle names N; the newest older one that
// names less than N, P, bounds what the notes held then: no note held N
// or more. So every note that holds N or more now was changed since P,
// and the tree diff from P to snap lists it: those notes are read as they
// are now (at most historyNotes of them), and the largest cycle they hold
// is the ledger's when it is above what P names. ok is false, and the
// caller reads every note, when there is no such N or P (a ledger whose
// root is within the walk is bounded by nothing: its notes are all read
// here, when they are few), when too many notes changed since P, or when
// none of them holds more than P names (the records above it removed).
//
// The trailers are only as true as the ledger they are in: a history
// edited to name a smaller cycle than the notes hold can make two records
// share a number, or a record link past another; verify reports the
// trailer (a breach: understated) and the number taken twice, and nothing
// is lost.
func (l *Ledger) indexFromHistory(snap *gitstore.Notes) (*Index, bool) {
	h := snap.Commit()
	named, bound := 0, 0
	from := gitstore.ZeroHash // P; zero: the empty ledger before the root
	for i := 0; ; i++ {
		if h.IsZero() {
			break // the root: nothing before it
		}
		if i == historyWalk {
			return nil, false
		}
		ci, err := l.repo.Commit(h)
		if err != nil {
			return nil, false
		}
		if n, ok := ledger.LargestCycle(ci.Message); ok {
			if named == 0 {
				named = n
			} else if n < named {
				from, bound = h, n
				break
			}
		}
		if len(ci.Parents) == 0 {
			h = gitstore.ZeroHash
		} else {
			h = ci.Parents[0]
		}
	}
	if named == 0 {
		return nil, false // no trailer: an old ledger, or plain git's
	}
	then := l.repo.EmptyNotes()
	if !from.IsZero() {
		var err error
		if then, err = l.repo.NotesAt(from); err != nil {
			return nil, false
		}
	}
	// Notes are read here one at a time: past a few thousand (another
	// clone's import), the stream of every note is the faster read.
	since, err := snap.DiffNotes(then)
	if err != nil || len(since) > historyNotes {
		return nil, false
	}
	ix := &Index{notes: snap.Commit()}
	if !l.indexChanges(ix, since) {
		return nil, false
	}
	// Only the entries of the largest cycle are kept: the others answer
	// nothing this index is asked without becoming whole. It must be above
	// the bound: the notes not read hold cycles up to it.
	top := ix.Max()
	if top <= bound {
		return nil, false
	}
	ix.entries = slices.DeleteFunc(ix.entries, func(e indexEntry) bool { return int(e.cycle) != top })
	ix.topOK = false
	ix.whole = func() (*Index, error) { return l.viewIndex(snap) }
	return ix, true
}

// indexChanges adds the cycles of the notes in changes to ix; false when
// a note cannot be read.
func (l *Ledger) indexChanges(ix *Index, changes []gitstore.NoteChange) bool {
	cycles, err := l.changedCycles(changes)
	if err != nil {
		return false
	}
	for i, c := range changes {
		ix.add(c.Object, cycles[i])
	}
	return true
}

// complete makes an index from the ledger's history whole.
func (ix *Index) complete() error {
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
// nor every note in memory at once; a blob many notes share, once).
func (l *Ledger) changedCycles(changes []gitstore.NoteChange) ([][]int, error) {
	out := make([][]int, len(changes))
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
				out[i] = append(out[i], ledger.Cycles(data[at[b]])...)
			}
		}
		start = end
	}
	return out, nil
}

// add records the cycles on obj.
func (ix *Index) add(obj gitstore.Hash, cycles []int) {
	for _, c := range cycles {
		ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
		if ix.topOK {
			ix.top = max(ix.top, c)
		}
	}
	ix.byCycle = nil
	ix.head, ix.headKnown = nil, false
}

// Find returns a commit holding cycle n, and whether one does.
func (ix *Index) Find(n int) (gitstore.Hash, bool, error) {
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
func (ix *Index) holders(n int) ([]gitstore.Hash, error) {
	if ix.whole != nil && n != ix.Max() {
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

// Max returns the largest cycle number in the index (0 when empty).
func (ix *Index) Max() int {
	if !ix.topOK {
		ix.top = 0
		for _, e := range ix.entries {
			ix.top = max(ix.top, int(e.cycle))
		}
		ix.topOK = true
	}
	return ix.top
}
