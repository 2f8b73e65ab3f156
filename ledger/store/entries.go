package store

import (
	"bytes"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Entries returns what List returns for opts, narrowed by keep (nil keeps
// all) and to the last limit records (0: all), read from the ledger's
// saved view (view.go) rather than from every note: only the records kept
// are parsed, and only their commits are looked up (Presence, the copy a
// record is listed on), in one exchange with git. So the last few cycles
// cost what they are, not what the ledger is, once the view is current.
func (l *Ledger) Entries(opts ListOptions, keep func(*ledger.Summary) bool, limit int) (*Listing, error) {
	if limit > 0 && limit <= maxTail {
		// The last few: from the end of the saved view when it is current
		// and no remote-tracking copy adds to it, reading more of it only
		// when the filters leave too few.
		snap, extra, err := l.snapshots()
		if err != nil {
			return nil, err
		}
		var fwd *forward
		var walk *notesWalk
		// the history is read from limit+1 lines on (one more than the
		// listing: the first line read must not be part of a record
		// listed), the index of cycles from limit+1 cycles (each is one
		// record or more), the view from 4×limit: a line of the view
		// costs less than a note read from git
		mw := limit + 1
		for m := 4*limit + tailSlack; len(extra) == 0 && m <= 4*maxTail; m, mw = 4*m, 4*mw {
			v, partial, err := readViewTail(l.viewPath(), snap.Commit(), m)
			if err == nil && v == nil && !snap.Commit().IsZero() {
				// a view of an older notes commit: its tail and the notes
				// added since, when only notes were added
				if fwd == nil {
					fwd = l.forwardOf(snap)
				}
				v, partial, err = fwd.tail(m)
				if err == nil && v == nil {
					// no view to bring forward (a fresh clone): the
					// notes the tree's index of cycles lists under the
					// largest cycles, or the newest notes, bounded by
					// the history
					v, partial = l.indexTail(snap, mw)
					if v == nil {
						if walk == nil {
							walk = l.historyOf(snap)
						}
						v, partial = walk.tail(mw)
					}
				}
			}
			if err != nil || v == nil {
				break // read in full below
			}
			if out, ok, err := l.entriesFrom(v, partial, opts, keep, limit); err != nil || ok {
				return out, err
			}
		}
	}
	v, err := l.currentView()
	if err != nil {
		return nil, err
	}
	out, _, err := l.entriesFrom(v, false, opts, keep, limit)
	return out, err
}

// Quarantines are the quarantine records of the ledger (and the journal,
// with opts.Journal), as Entries gives them: from the saved view, only
// their lines are read (its footer names them), so that the quarantined
// goals of a large ledger cost what they are, not a pass over the ledger.
func (l *Ledger) Quarantines(opts ListOptions) (*Listing, error) {
	keep := func(s *ledger.Summary) bool { return string(s.Result) == ledger.Quarantined }
	snap, extra, err := l.snapshots()
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		v, err := readViewQuarantined(l.viewPath(), snap.Commit())
		if err == nil && v == nil && !snap.Commit().IsZero() {
			// a view of an older notes commit, with only notes added
			// since (a record, a sync): its quarantines and theirs
			if v = l.forwardOf(snap).quarantined(); v == nil {
				// no view to bring forward (a fresh clone): the notes
				// the tree's index lists as holding them
				v = l.indexedQuarantines(snap)
			}
		}
		if err == nil && v != nil {
			out, _, err := l.entriesFrom(v, false, opts, keep, 0)
			return out, err
		}
	}
	return l.Entries(opts, keep, 0)
}

// quarantined is readViewQuarantined for the ledger as it is now: the
// view's quarantine lines and those of the notes added since, and the
// errors of both.
func (f *forward) quarantined() *view {
	if f == nil {
		return nil
	}
	v, err := readViewQuarantined(f.path, f.old)
	return f.with(v, err, func(ln *viewLine) bool { return string(ln.Summary.Result) == ledger.Quarantined })
}

// with is v, lines of the view of the older notes commit, with the lines
// of the notes added that keep accepts, and the errors of both; nil when v
// is.
func (f *forward) with(v *view, err error, keep func(*viewLine) bool) *view {
	if err != nil || v == nil {
		return nil
	}
	out := &view{notes: f.added.notes, errors: append(v.errors, f.added.errors...), lines: v.lines}
	for i := range f.added.lines {
		if keep(&f.added.lines[i]) {
			out.lines = append(out.lines, f.added.lines[i])
		}
	}
	out.sort()
	return out
}

// forwardMax is the most notes added since the saved view's notes commit
// that a read of the last few records takes from git beside the view's
// tail (forward); past it, or after any other change, the view is brought
// up to date and written again, which costs the ledger.
const forwardMax = 256

// forward is the saved view of an older notes commit and the lines of the
// notes added since (nil when the view cannot be brought forward so: no
// view, a note changed or removed since, more than forwardMax added).
type forward struct {
	path  string
	old   gitstore.Hash
	added *view // the lines of the notes added, sorted
}

// forwardOf reads what the notes added since the saved view's notes
// commit hold; nil when that is not all that changed.
func (l *Ledger) forwardOf(snap *gitstore.Notes) *forward {
	old, ok := viewNotes(l.viewPath())
	if !ok || old.IsZero() || old == snap.Commit() {
		return nil
	}
	changes, err := l.changesSince(old, snap)
	if err != nil || len(changes) > forwardMax {
		return nil
	}
	var blobs []gitstore.Hash
	for _, c := range changes {
		if len(c.Old) > 0 {
			return nil // a note changed or removed: lines of the view go
		}
		blobs = append(blobs, c.New...)
	}
	data, err := l.repo.ReadBlobsKept(blobs)
	if err != nil {
		return nil
	}
	added := &view{notes: snap.Commit()}
	k := 0
	for _, c := range changes {
		for range c.New {
			added.add(c.Object, data[k])
			k++
		}
	}
	added.sort()
	return &forward{path: l.viewPath(), old: old, added: added}
}

// tail is what readViewTail gives for the ledger as it is now: the view's
// last m lines with the added lines that sort after the first of them (or
// all of them, when the view's every line was read), and the errors of
// both. The ledger's lines from that first line on are exactly those, so
// the lines before it are left (partial) as readViewTail leaves them.
func (f *forward) tail(m int) (*view, bool, error) {
	if f == nil {
		return nil, false, nil
	}
	v, partial, err := readViewTail(f.path, f.old, m)
	if err != nil || v == nil {
		return nil, false, err
	}
	out := &view{notes: f.added.notes, errors: append(v.errors, f.added.errors...)}
	out.lines = make([]viewLine, 0, len(v.lines)+len(f.added.lines))
	for _, ln := range f.added.lines {
		if partial && (len(v.lines) == 0 || compareViewLines(ln, v.lines[0]) <= 0) {
			continue // before the lines read: among those left
		}
		out.lines = append(out.lines, ln)
	}
	out.lines = append(out.lines, v.lines...)
	out.sort()
	return out, partial, nil
}

// maxTail is the largest limit read from the end of the view; a larger one
// reads the whole view (and its growing reads never overflow).
const maxTail = 1 << 20

// tailSlack is how many lines past 4×limit Entries reads first from the
// end of the view (the tests make it 0, to read the tail in several steps).
var tailSlack = 16

// entriesFrom is Entries from the view v, which holds the last lines of the
// ledger's view only when partial; ok is false when those were too few.
func (l *Ledger) entriesFrom(v *view, partial bool, opts ListOptions, keep func(*ledger.Summary) bool, limit int) (*Listing, bool, error) {
	var want map[gitstore.Hash]bool
	if opts.Commits != nil {
		want = make(map[gitstore.Hash]bool, len(opts.Commits))
		for _, c := range opts.Commits {
			want[c] = true
		}
	}
	// A record and its copies (the same canonical line on several commits,
	// a note git copied on a rewrite) are side by side in the view.
	type group struct {
		line    *Line // in the view or the journal's lines, not copied
		commits []gitstore.Hash
		journal bool
	}
	// From the end back, so that the last few are found without a pass
	// over the rest (the last limit of the listing are among the last
	// limit of the ledger's and the last limit of the journal's).
	size := len(v.lines)
	if limit > 0 {
		size = min(size, limit)
	}
	groups := make([]group, 0, size)
	for j := len(v.lines); j > 0 && (limit <= 0 || len(groups) < limit); {
		i := j - 1
		for i > 0 && bytes.Equal(v.lines[i-1].Text, v.lines[j-1].Text) {
			i--
		}
		var commits []gitstore.Hash
		for _, ln := range v.lines[i:j] {
			if want == nil || want[ln.commit] {
				commits = append(commits, ln.commit)
			}
		}
		if partial && i == 0 {
			return nil, false, nil // this record, or the rest, may go on before these lines
		}
		if len(commits) > 0 && (keep == nil || keep(&v.lines[i].Summary)) {
			groups = append(groups, group{line: &v.lines[i].Line, commits: commits})
		}
		j = i
	}
	slices.Reverse(groups)
	out := &Listing{}
	for _, e := range v.errors {
		if want == nil || want[e.Commit] {
			out.Errors = append(out.Errors, e)
		}
	}
	if opts.Journal && opts.Commits == nil {
		jl, je, err := l.journalLines(keep)
		if err != nil {
			return nil, false, err
		}
		// merged in order, the ledger's first on ties (as mergeLines)
		merged := make([]group, 0, len(groups)+len(jl))
		for len(groups) > 0 && len(jl) > 0 {
			if jl[0].Summary.Compare(&groups[0].line.Summary) < 0 {
				merged, jl = append(merged, group{line: &jl[0], journal: true}), jl[1:]
			} else {
				merged, groups = append(merged, groups[0]), groups[1:]
			}
		}
		merged = append(merged, groups...)
		for i := range jl {
			merged = append(merged, group{line: &jl[i], journal: true})
		}
		groups = merged
		out.Errors = append(out.Errors, je...)
	}
	if limit > 0 && len(groups) > limit {
		groups = groups[len(groups)-limit:]
	}
	place := l.placer()
	n := len(groups)
	if opts.Copies {
		n = 0
		for _, g := range groups {
			n += max(1, len(g.commits))
		}
	}
	out.Entries = make([]Entry, 0, n)
	parse := ledger.Parse
	if opts.Table {
		parse = ledger.TableRecord
	}
	for _, g := range groups {
		r, err := parse(g.line.Text)
		if err != nil {
			return nil, false, err // a line of the view is canonical: it parses
		}
		if g.journal {
			out.Entries = append(out.Entries, Entry{Record: r, Journal: true})
			continue
		}
		if opts.Copies || len(g.commits) == 1 {
			for _, c := range g.commits {
				out.Entries = append(out.Entries, Entry{Record: r, Commit: c})
			}
			continue
		}
		// Listed once: on the commit the current branch has, else one
		// this clone has, else the one it names (as List does).
		best := Entry{Record: r, Commit: g.commits[0]}
		for _, c := range g.commits[1:] {
			if en := (Entry{Record: r, Commit: c}); place(&en) > place(&best) {
				best = en
			}
		}
		out.Entries = append(out.Entries, best)
	}
	if limit > 0 {
		// The notes' lines that do not parse: all of them for the whole
		// ledger; for the last few, those in the notes of the records
		// listed (a line that does not parse holds no cycle to place it
		// among the last few; log and verify read every note). So the
		// answer is the same whether the last few came from a saved view
		// or from the notes history (historyTail), which reads only the
		// newest notes.
		listed := map[gitstore.Hash]bool{}
		for _, e := range out.Entries {
			if !e.Journal {
				listed[e.Commit] = true
			}
		}
		out.Errors = slices.DeleteFunc(out.Errors, func(e *NoteError) bool { return !e.Journal && !listed[e.Commit] })
	}
	if opts.Presence {
		if err := l.presence(out.Entries); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// presence sets Absent and NotCommit of entries on notes, looking their
// commits up in one exchange with git.
func (l *Ledger) presence(entries []Entry) error {
	at := map[gitstore.Hash]int{}
	var objs []gitstore.Hash
	for _, e := range entries {
		if e.Journal {
			continue
		}
		if _, ok := at[e.Commit]; !ok {
			at[e.Commit] = len(objs)
			objs = append(objs, e.Commit)
		}
	}
	types, err := l.repo.ObjectTypes(objs)
	if err != nil {
		return err
	}
	for i := range entries {
		e := &entries[i]
		if e.Journal {
			continue
		}
		typ := types[at[e.Commit]]
		e.Absent, e.NotCommit = typ == "", typ != "" && typ != "commit"
	}
	return nil
}

// cycleEntries is Entries for the records of cycle n, with the journal and
// presence: from the saved view's lines of that cycle alone (found by a
// binary search, readViewCycle) when it describes the ledger as readers
// read it, or did before notes were only added (with the lines of those);
// otherwise from the whole view.
func (l *Ledger) cycleEntries(n int) (*Listing, error) {
	keep := func(s *ledger.Summary) bool { return s.Cycle == n }
	opts := ListOptions{Journal: true, Presence: true}
	snap, extra, err := l.snapshots()
	if err != nil {
		return nil, err
	}
	var v *view
	if len(extra) == 0 && !snap.Commit().IsZero() {
		if v, err = readViewCycle(l.viewPath(), snap.Commit(), n); err != nil {
			v = nil
		}
		if v == nil && err == nil {
			// a view of an older notes commit, with only notes added
			// since: its lines and theirs, its errors and theirs
			v = l.forwardOf(snap).cycle(n)
		}
		if v == nil {
			// no view to read (a fresh clone): the notes the tree's index
			// lists under the cycle, and those with a line that is no
			// record
			v = l.indexedCycle(snap, n)
		}
	}
	if v == nil {
		return l.Entries(opts, keep, 0)
	}
	out, _, err := l.entriesFrom(v, false, opts, keep, 0)
	return out, err
}

// indexedCycle is readViewCycle from the index of cycles in the notes
// tree (ledger.IndexName): the lines of cycle n of the notes it lists
// under n, and the errors of those it lists under ledger.BadKey, which are
// what the whole ledger has of both. Nil when the tree has no index that
// describes its notes, or when a note it lists under n holds no record of
// n (an index another writer made wrong: the notes are read instead).
func (l *Ledger) indexedCycle(snap *gitstore.Notes, n int) *view {
	listed, bad, ok := l.indexLookup(snap, ledger.CycleKey(n))
	if !ok {
		return nil
	}
	return l.indexedLines(snap, map[string][]gitstore.Hash{ledger.CycleKey(n): listed}, bad,
		func(s *ledger.Summary) (string, bool) { return ledger.CycleKey(n), s.Cycle == n })
}

// cycle is readViewCycle for the ledger as it is now: the view's lines of
// cycle n and those of the notes added since, and the errors of both.
func (f *forward) cycle(n int) *view {
	if f == nil {
		return nil
	}
	v, err := readViewCycle(f.path, f.old, n)
	return f.with(v, err, func(ln *viewLine) bool { return ln.Summary.Cycle == n })
}
