package store

import (
	"bytes"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// Line is one record of the ledger as its canonical line, with what
// listing orders and filters it by.
type Line struct {
	Summary ledger.Summary
	Text    []byte // the canonical form, without a newline
	// Commit is, in what Lines returns, the commit whose note holds the
	// line now (for a record on several commits, the one Entries lists it
	// on); zero for the journal's lines, and in the view, which keeps each
	// line's commit beside it.
	Commit gitstore.Hash
}

// Lines returns the records List would return, as canonical lines in the
// same order, keeping those keep accepts (nil keeps all). It reads the
// ledger's saved view (view.go), which holds every record already in
// canonical form, so listing a ledger builds no Record. Lines that do not
// parse are returned as NoteErrors.
func (l *Ledger) Lines(opts ListOptions, keep func(*ledger.Summary) bool) ([]Line, []*NoteError, error) {
	v, err := l.currentView()
	if err != nil {
		return nil, nil, err
	}
	var want map[gitstore.Hash]bool
	if opts.Commits != nil {
		want = make(map[gitstore.Hash]bool, len(opts.Commits))
		for _, c := range opts.Commits {
			want[c] = true
		}
	}
	out := make([]Line, 0, len(v.lines))
	var place func(*Entry) int
	for j := 0; j < len(v.lines); {
		// A record on several commits (a note git copied when a commit was
		// amended or rebased) is listed once: the view sorts copies
		// together. It is listed on the copy Entries lists it on: the
		// commit the current branch has, else one this clone has.
		ln := v.lines[j]
		i := j + 1
		for i < len(v.lines) && bytes.Equal(v.lines[i].Text, ln.Text) {
			i++
		}
		var best *Entry
		parsed := false
		for _, c := range v.lines[j:i] {
			if want != nil && !want[c.commit] {
				continue
			}
			en := &Entry{Commit: c.commit}
			if best == nil {
				best = en
				continue
			}
			if place == nil {
				place = l.placer()
			}
			if !parsed { // once, for the commit the record names, which placer reads
				best.Record, _ = ledger.Parse(ln.Text)
				parsed = true
			}
			en.Record = best.Record
			if place(en) > place(best) {
				best = en
			}
		}
		j = i
		if best != nil && (keep == nil || keep(&ln.Summary)) {
			out = append(out, Line{Summary: ln.Summary, Text: ln.Text, Commit: best.Commit})
		}
	}
	var errs []*NoteError
	for _, e := range v.errors {
		if want == nil || want[e.Commit] {
			errs = append(errs, e)
		}
	}
	if opts.Journal && opts.Commits == nil {
		jl, je, err := l.journalLines(keep)
		if err != nil {
			return nil, nil, err
		}
		out = mergeLines(out, jl)
		errs = append(errs, je...)
	}
	return out, errs, nil
}

// currentView is the view of the ledger as readers read it: the saved view
// of the local ledger (brought up to date), with the notes of the
// remote-tracking copies that differ from it.
func (l *Ledger) currentView() (*view, error) {
	snap, extra, err := l.snapshots()
	if err != nil {
		return nil, err
	}
	v, err := l.loadView(snap)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		// The remote-tracking copies' notes that differ, in a copy of the
		// view (the saved one describes snap alone).
		u := &view{notes: v.notes, lines: append([]viewLine(nil), v.lines...), errors: append([]*NoteError(nil), v.errors...)}
		if err := l.eachExtra(snap, extra, nil, func(obj gitstore.Hash, data []byte) error {
			u.add(obj, data)
			return nil
		}); err != nil {
			return nil, err
		}
		u.sort()
		v = u
	}
	return v, nil
}

// journalLines are the journal's records that keep accepts, as canonical
// lines in listing order; a record written twice (the same id, the same
// text) is one, as List has it.
func (l *Ledger) journalLines(keep func(*ledger.Summary) bool) ([]Line, []*NoteError, error) {
	data, err := l.journal.Bytes()
	if err != nil {
		return nil, nil, err
	}
	jl, je := noteLines(data, gitstore.ZeroHash, true, keep)
	sortLines(jl)
	jl = slices.CompactFunc(jl, func(a, b Line) bool { return len(a.Summary.ID) > 0 && bytes.Equal(a.Text, b.Text) })
	return jl, je, nil
}

// noteLines reads the records of a note (or of the journal) as canonical
// lines. Lines already in canonical form are kept as they are; others are
// parsed and written again; lines that do not parse become NoteErrors.
func noteLines(note []byte, commit gitstore.Hash, journal bool, keep func(*ledger.Summary) bool) ([]Line, []*NoteError) {
	var out []Line
	var errs []*NoteError
	note = append([]byte(nil), note...) // the summaries point into it
	eachNoteLine(note, commit, journal, func(ln Line) {
		if keep == nil || keep(&ln.Summary) {
			out = append(out, ln)
		}
	}, func(e *NoteError) { errs = append(errs, e) })
	return out, errs
}

// eachNoteLine calls line with each record of note as a canonical line
// (its summary points into note), and bad with each line that is no
// record.
func eachNoteLine(note []byte, commit gitstore.Hash, journal bool, line func(Line), bad func(*NoteError)) {
	ledger.EachLine(note, func(n int, text []byte) {
		if sum, ok := ledger.Summarize(text); ok {
			line(Line{Summary: sum, Text: text})
			return
		}
		r, err := ledger.Parse(text)
		if err != nil {
			bad(&NoteError{Commit: commit, Journal: journal, Line: n, Text: string(text), Err: err})
			return
		}
		line(Line{Summary: ledger.SummaryOf(&r), Text: r.Marshal()})
	})
}

// textArena keeps copies of note text in large blocks: a view of 100,000
// notes is then a few dozen allocations, not 100,000 (each small one
// costs the allocator and the collector more than its copy).
type textArena struct{ block []byte }

const arenaBlock = 1 << 20

// copy returns a copy of b, capped so that an append to it cannot reach
// the next copy.
func (a *textArena) copy(b []byte) []byte {
	if len(b) > cap(a.block)-len(a.block) {
		if len(b) >= arenaBlock/4 {
			return append([]byte(nil), b...) // large: a block of its own
		}
		a.block = make([]byte, 0, arenaBlock)
	}
	at := len(a.block)
	a.block = append(a.block, b...)
	return a.block[at:len(a.block):len(a.block)]
}

func sortLines(ls []Line) {
	slices.SortStableFunc(ls, func(a, b Line) int { return a.Summary.Compare(&b.Summary) })
}

// mergeLines merges two sorted lists of lines, a's first on ties.
func mergeLines(a, b []Line) []Line {
	if len(b) == 0 {
		return a
	}
	out := make([]Line, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].Summary.Compare(&a[0].Summary) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}
