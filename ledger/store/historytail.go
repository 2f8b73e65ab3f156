package store

import (
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// historyTailCommits is the most notes commits a notesWalk reads, and
// historyTailNotes the most notes it reads from them, before it gives up
// and the whole ledger is read; past a few thousand, the stream of every
// note is the faster read.
var (
	historyTailCommits = 4096
	historyTailNotes   = 4096
)

// historyTailUnbounded is how many notes commits a walk reads before it
// gives up when none of them names a bound: a ledger written before
// records named the largest cycle, or by plain git alone, is read whole
// at once rather than after a walk of thousands of commits.
var historyTailUnbounded = 64 // the tests make it small

// notesWalk reads the last lines of the ledger from its history, for a
// clone with no saved view to read them from (a fresh clone, a CI job, a
// state directory removed): the last few records cost what they are, not
// what the ledger is.
//
// It walks the notes commits back from the ledger's along first parents,
// reading the notes each one added (its diff from its first parent; a
// merge's holds what the other side added). A commit whose message names,
// in its ledger.LargestTrailer, the largest cycle L its ledger held bounds the
// rest: when every commit walked after it only added notes, every note not
// read is in its tree, unchanged since, and holds no cycle above L. So the
// lines read whose cycle is above L are the ledger's last lines, all of
// them, each record's copies included (a copy holds its record's cycle, so
// none is in that tree either). The notes that commit itself changed are
// read too, and must hold no cycle above the one it names, as
// indexFromHistory checks.
//
// The trailer is only as true as the ledger it is in: a history edited to
// name a smaller cycle than the notes hold would leave records out of the
// last few listed here; verify reports such a trailer (a breach:
// understated), and the cycles the edit makes two records share.
type notesWalk struct {
	l    *Ledger
	tip  gitstore.Hash
	next gitstore.Hash // the next commit to read; zero past a root
	read *view         // the lines of every note read so far
	// bound is the largest cycle a commit read names for its ledger,
	// which holds every note not read yet; boundOK once one does.
	bound   int
	boundOK bool
	commits int
	notes   int
	batch   int  // the commits the last step read
	whole   bool // every note was read: the walk reached a root
	failed  bool
}

// historyOf starts a walk of snap's history.
func (l *Ledger) historyOf(snap *gitstore.Notes) *notesWalk {
	l.repo.ReadsMany()
	return &notesWalk{l: l, tip: snap.Commit(), next: snap.Commit(), read: &view{notes: snap.Commit()}}
}

// tail is the last lines of the ledger, at least m of them when the ledger
// has that many, with the errors of the notes read; partial is true when
// lines were left before them. nil when the history cannot bound them (a
// note changed or removed, no commit naming its largest cycle, too far
// back): the caller reads the whole ledger.
func (w *notesWalk) tail(m int) (v *view, partial bool) {
	for !w.failed {
		if w.whole {
			out := &view{notes: w.tip, lines: append([]viewLine(nil), w.read.lines...), errors: w.read.errors}
			out.sort()
			return out, false
		}
		if w.boundOK {
			out := &view{notes: w.tip, errors: w.read.errors}
			for _, ln := range w.read.lines {
				if ln.Summary.Cycle > w.bound {
					out.lines = append(out.lines, ln)
				}
			}
			if len(out.lines) >= m {
				out.sort()
				return out, true
			}
		}
		w.step(m)
	}
	return nil, false
}

// step reads the next commits' added notes, and what bounds they name: a
// batch of them (the first parents listed by one git rev-list, the
// commits, the diffs of their notes trees level by level, and the notes
// added, each in one exchange with git), at least want of them, twice as
// many as the last batch.
func (w *notesWalk) step(want int) {
	if w.commits >= historyTailCommits || w.notes > historyTailNotes || !w.boundOK && w.commits >= historyTailUnbounded {
		w.failed = true // too far back, or a ledger whose commits name no bound
		return
	}
	k := min(max(want, 2*w.batch), historyTailCommits-w.commits)
	w.batch = k
	fail := func() { w.failed = true }
	repo := w.l.repo
	// the batch and the commit after it, whose notes the last one's diff
	// starts from
	hs, err := repo.FirstParents(w.next, k+1)
	if err != nil || len(hs) == 0 || hs[0] != w.next {
		fail()
		return
	}
	infos, errs, err := repo.Commits(hs)
	if err != nil {
		fail()
		return
	}
	for _, e := range errs {
		if e != nil {
			fail()
			return
		}
	}
	last := min(k, len(hs)) // the commits of this batch: hs[:last]
	pairs := make([]gitstore.NotesPair, last)
	for i := range last {
		ci := infos[i]
		before := repo.EmptyNotes()
		switch {
		case len(ci.Parents) == 0 && i == len(hs)-1:
		case len(ci.Parents) > 0 && i+1 < len(hs) && ci.Parents[0] == hs[i+1]:
			before = repo.NotesOf(infos[i+1])
		default:
			fail() // not the chain git listed
			return
		}
		pairs[i] = gitstore.NotesPair{Old: before, New: repo.NotesOf(ci)}
	}
	diffs, err := gitstore.DiffNotesMany(pairs)
	if err != nil {
		fail()
		return
	}
	var blobs []gitstore.Hash
	for _, changes := range diffs {
		for _, c := range changes {
			if len(c.Old) > 0 {
				fail() // a note changed or removed: what was read may be gone
				return
			}
			blobs = append(blobs, c.New...)
		}
	}
	w.notes += len(blobs)
	if w.notes > historyTailNotes {
		fail()
		return
	}
	data, err := repo.ReadBlobsKept(blobs)
	if err != nil {
		fail()
		return
	}
	b := 0
	for i, changes := range diffs {
		ci := infos[i]
		top := 0
		for _, c := range changes {
			for range c.New {
				n := len(w.read.lines)
				w.read.add(c.Object, data[b])
				for _, ln := range w.read.lines[n:] {
					top = max(top, ln.Summary.Cycle)
				}
				b++
			}
		}
		w.commits++
		// A commit that names the largest cycle its ledger held bounds
		// every note not read yet (they are all in its tree: the commits
		// read since only added notes), when what it changed is within the
		// cycle it names. An older commit's bound holds as well as a newer
		// one's; the smaller is kept.
		if named, ok := ledger.LargestCycle(ci.Message); ok {
			if top > named {
				fail()
				return
			}
			if !w.boundOK || named < w.bound {
				w.bound, w.boundOK = named, true
			}
		}
	}
	if last == len(hs) {
		w.whole = true // the root was read: every note was
		return
	}
	w.next = hs[last]
}
