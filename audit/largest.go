package audit

import (
	"bytes"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// A notes commit that adds records names, in its Evolve-Largest-Cycle
// trailer (ledger.LargestTrailer), the largest cycle its ledger holds. A
// clone with no cycle index trusts it as a bound on every note it does not
// read: its first log -n lists the records above it, and a record takes
// the number after it. A trailer that names less than the ledger holds (a
// history edited, a commit forged in another clone) leaves records out of
// those reads and can make a record take a number already taken: a
// breach, understated, of the notes commit that carries it. One that
// names more is harmless (a record whose number was taken, then removed by
// a repair, leaves it so) and is not reported.
//
// The history check reads each commit's changes against its first parent
// anyway; every note of a commit's ledger is its first parent's or one the
// commit added or changed. So the largest cycle of the first parent's
// ledger and of the notes the commit added or changed bound its ledger's,
// carried along the walk at no further read. The bound is exact (the
// largest cycle, with a note that holds it) unless a change took out a
// note that may have held it. A trailer is compared with the bound; only
// where the bound is above it and not exact, or not known (after a root, a
// parent not here, a commit read before its first parent), is the
// commit's ledger read whole to know.
//
// For the first parent of a commit outside the walk (a verify that reads
// what was added since the tip it verified, or the incoming check, whose
// walk starts on this clone's ledger) the bound is the one verify
// remembered for that tip (the verified file), else that parent's own
// trailer (a verify of this clone's ledger reports one that names too
// little), else the nearest first-parent ancestor's, within 64 commits,
// with the notes changed since read (at most 4,096; a repair's commit or
// plain git's names none, and one accepted as it was is passed by), else
// not known.

// largestState is what the check knows of the largest cycle of one notes
// commit's ledger.
type largestState struct {
	bound int
	// holder is a note that holds bound, when exact.
	holder gitstore.Hash
	// known: no note of the ledger holds a cycle above bound; exact: one
	// holds it (holder).
	known, exact bool
}

// largestStep is what one notes commit's changes against its first parent
// tell the check.
type largestStep struct {
	ci  gitstore.CommitInfo
	pos int // its place in the walk, newest first
	// diffed: its changes against its first parent were read.
	diffed bool
	// added is the largest cycle of the notes it added or changed, as they
	// are after it (-1: none), on addedOn; removed the largest of those it
	// removed or changed, as they were.
	added, removed int
	addedOn        gitstore.Hash
}

// largestCheck carries the bounds along the walk and reports the trailers
// that name less than their ledger holds.
type largestCheck struct {
	// states are the bounds of the commits read, newest generation first;
	// older holds the generation before (see keep).
	states, older map[gitstore.Hash]largestState
	// inWalk are the commits the history check reads.
	inWalk map[gitstore.Hash]bool
	// remembered is what the verified file says of the tip it names.
	remembered largestMemory
	// collect keeps the steps, to be taken once every commit is read
	// (the tree walk reads newest first); steps are those kept.
	collect bool
	steps   []largestStep
	// found are the findings made, with their commits' places in the walk.
	found []placedFinding
}

type placedFinding struct {
	pos int
	f   Finding
}

// largestMemory is what the verified file says of the largest cycle of the
// ledger at the tip it names: whether the verify that wrote it checked
// these trailers (checked), and the bound it had (known).
type largestMemory struct {
	tip            gitstore.Hash
	checked, known bool
	bound          int
	// holder is a note that holds bound, when known (zero: none known),
	// so that a verify that carries the bound on names the note a verify
	// of the whole history names
	holder gitstore.Hash
}

func newLargestCheck(remembered largestMemory) *largestCheck {
	return &largestCheck{states: map[gitstore.Hash]largestState{}, remembered: remembered}
}

// maxLargestStates is how many bounds a generation holds. A commit's
// bound is asked for by the commits whose first parent it is, read soon
// after it, most by the next; one read more than two generations after
// its first parent (a clone's side of the history begun long before) may
// have its ledger read whole, when it names a cycle (a bound let go is not
// known).
const maxLargestStates = 1 << 12

func (lc *largestCheck) keep(c gitstore.Hash, st largestState) {
	if len(lc.states) >= maxLargestStates {
		lc.older, lc.states = lc.states, make(map[gitstore.Hash]largestState, maxLargestStates)
	}
	lc.states[c] = st
}

func (lc *largestCheck) lookup(c gitstore.Hash) (largestState, bool) {
	if st, ok := lc.states[c]; ok {
		return st, true
	}
	if st, ok := lc.older[c]; ok {
		lc.keep(c, st)
		return st, true
	}
	return largestState{}, false
}

// largestStep reads what the changes of notes commit ci against its first
// parent (diffed: the changes are known) say of the largest cycle.
func (h *historyCheck) largestStep(ci gitstore.CommitInfo, pos int, diffed bool, changes []gitstore.NoteChange) (largestStep, error) {
	s := largestStep{ci: ci, pos: pos, diffed: diffed, added: -1, removed: -1}
	if !diffed {
		return s, nil
	}
	for _, ch := range changes {
		for _, b := range ch.New {
			data, err := h.note(b)
			if err != nil {
				return s, err
			}
			if n, ok := ledger.MaxCycle(data); ok && n > s.added {
				s.added, s.addedOn = n, ch.Object
			}
		}
		for _, b := range ch.Old {
			data, err := h.note(b)
			if err != nil {
				return s, err
			}
			if n, ok := ledger.MaxCycle(data); ok {
				s.removed = max(s.removed, n)
			}
		}
	}
	return s, nil
}

// take takes one commit's step: at once when commits are read oldest
// first, else once all are (finish).
func (lc *largestCheck) take(h *historyCheck, s largestStep) error {
	if lc.collect {
		lc.steps = append(lc.steps, s)
		return nil
	}
	return lc.apply(h, &s)
}

// finish takes the steps kept, oldest first, and adds the findings to the
// report, the newest commit's first.
func (lc *largestCheck) finish(h *historyCheck) error {
	for i := len(lc.steps) - 1; i >= 0; i-- {
		if err := lc.apply(h, &lc.steps[i]); err != nil {
			return err
		}
	}
	lc.steps = nil
	slices.SortStableFunc(lc.found, func(a, b placedFinding) int { return a.pos - b.pos })
	for _, pf := range lc.found {
		h.rep.Findings = append(h.rep.Findings, pf.f)
	}
	lc.found = nil
	return nil
}

// apply carries the bound of s's first parent to s's commit, and checks
// the commit's trailer against it.
func (lc *largestCheck) apply(h *historyCheck, s *largestStep) error {
	ci := s.ci
	var st largestState
	if s.diffed {
		p := ci.Parents[0]
		base, seen := lc.lookup(p)
		if !seen && !lc.inWalk[p] {
			base = lc.outside(h, p)
			lc.keep(p, base)
		}
		if base.known {
			st.known = true
			switch {
			case s.added >= base.bound:
				// Nothing else can hold more: a note it added holds it.
				st.bound, st.holder, st.exact = s.added, s.addedOn, true
			default:
				// The holder of the bound stays, unless a note it removed
				// or changed may have been it.
				st.bound, st.holder, st.exact = base.bound, base.holder, base.exact && s.removed < base.bound
			}
		}
	}
	if named, ok := ledger.LargestCycle(ci.Message); ok && !(st.known && st.bound <= named) {
		if !st.known || !st.exact {
			var err error
			if st, err = exactLargest(h.repo, h.repo.NotesOf(ci)); err != nil {
				return err
			}
		}
		if st.bound > named {
			lc.report(h, ci, s.pos, named, st)
		}
	}
	lc.keep(ci.Hash, st)
	return nil
}

// outside is the bound of notes commit p, which the walk does not read: an
// ancestor of the tip this clone verified, or not here.
func (lc *largestCheck) outside(h *historyCheck, p gitstore.Hash) largestState {
	m := lc.remembered
	if !m.checked {
		return largestState{} // the verify that walked it did not check trailers
	}
	if p == m.tip && m.known {
		return largestState{known: true, bound: m.bound, holder: m.holder, exact: !m.holder.IsZero()}
	}
	// p's own trailer; else (none, or accepted as it was) the nearest
	// first-parent ancestor's that bounds, with the notes changed since.
	q := p
	for i := 0; i < outsideWalk && !q.IsZero(); i++ {
		ci, err := h.repo.Commit(q)
		if err != nil {
			return largestState{}
		}
		if _, accepted := h.accepted[q]; !accepted {
			if n, ok := ledger.LargestCycle(ci.Message); ok {
				if q == p {
					return largestState{known: true, bound: n}
				}
				return lc.since(h, p, q, n)
			}
		}
		if len(ci.Parents) == 0 {
			return lc.since(h, p, gitstore.ZeroHash, -1) // the root: the notes since none
		}
		q = ci.Parents[0]
	}
	return largestState{}
}

// outsideWalk and outsideNotes bound the look back from a commit outside
// the walk that names no bound: past them its ledger is read whole when
// a commit that builds on it names a bound (apply).
const (
	outsideWalk  = 64
	outsideNotes = 4096
)

// since is the bound of notes commit p from that of its ancestor q
// (bound, -1 for none: the empty ledger before the root): every note of
// p's ledger is q's, or one changed since, read here.
func (lc *largestCheck) since(h *historyCheck, p, q gitstore.Hash, bound int) largestState {
	at, err := h.repo.NotesAt(p)
	if err != nil {
		return largestState{}
	}
	was := h.repo.EmptyNotes()
	if !q.IsZero() {
		if was, err = h.repo.NotesAt(q); err != nil {
			return largestState{}
		}
	}
	changes, err := at.DiffNotes(was)
	if err != nil || len(changes) > outsideNotes {
		return largestState{}
	}
	for _, ch := range changes {
		for _, b := range ch.New {
			data, err := h.note(b)
			if err != nil {
				return largestState{}
			}
			if n, ok := ledger.MaxCycle(data); ok {
				bound = max(bound, n)
			}
		}
	}
	return largestState{known: true, bound: max(bound, 0)}
}

// exactLargest reads every note of snap: its largest cycle, held by the
// note of the lowest object that holds it.
func exactLargest(repo *gitstore.Repo, snap *gitstore.Notes) (largestState, error) {
	st := largestState{known: true, exact: true}
	err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		for _, n := range ledger.Cycles(data) {
			if n > st.bound || n == st.bound && (st.holder.IsZero() || bytes.Compare(obj[:], st.holder[:]) < 0) {
				st.bound, st.holder = n, obj
			}
		}
		return nil
	})
	return st, err
}

// report makes the finding of commit ci, whose trailer names named while
// its ledger holds st.bound on st.holder.
func (lc *largestCheck) report(h *historyCheck, ci gitstore.CommitInfo, pos, named int, st largestState) {
	rep := &Report{}
	who := whoMade(ci)
	what := "names %d as the ledger's largest cycle in its " + ledger.LargestTrailer + " trailer, but the ledger it wrote holds cycle %d (on %s)"
	var f *Finding
	if a, ok := h.accepted[ci.Hash]; ok {
		f = rep.add(Notice, "accepted", "%s "+what+"; accepted by %s on %s: %s", who, named, st.bound, st.holder.Short(),
			acceptedBy(a), shortDate(a.At), oneLine(a.Reason))
	} else {
		f = rep.add(Breach, "understated", "%s "+what+": a clone that trusts it lists too few records in its first log -n and can number a record with a cycle already taken; git evolve repair --accept %s -m 'why' acknowledges it",
			who, named, st.bound, st.holder.Short(), ci.Hash.Short())
	}
	f.Cycle, f.Commit, f.NotesCommit = st.bound, st.holder.String(), ci.Hash.String()
	lc.found = append(lc.found, placedFinding{pos, *f})
}

// memory is what the verified file is to say of the ledger at tip, once
// the walk read it (read: it was among the commits walked).
func (lc *largestCheck) memory(tip gitstore.Hash) largestMemory {
	st, _ := lc.lookup(tip)
	m := largestMemory{tip: tip, checked: true, known: st.known, bound: st.bound}
	if st.known && st.exact {
		m.holder = st.holder
	}
	return m
}
