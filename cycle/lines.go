package cycle

import (
	"slices"

	"git-evolve/gitstore"
	"git-evolve/ledger"
)

// Line is one record of the ledger as its canonical line, with what
// listing orders and filters it by.
type Line struct {
	Summary ledger.Summary
	Text    []byte // the canonical form, without a newline
}

// Lines returns the records List would return, as canonical lines in the
// same order, keeping those keep accepts (nil keeps all). Lines already in
// canonical form, which are all lines git-evolve writes, are copied as they
// are, without building a Record; others are parsed and written again.
// Lines that do not parse are returned as NoteErrors.
func (l *Ledger) Lines(opts ListOptions, keep func(*ledger.Summary) bool) ([]Line, []*NoteError, error) {
	var out []Line
	var errs []*NoteError
	add := func(note []byte, commit gitstore.Hash, journal bool) {
		note = append([]byte(nil), note...) // the summaries point into it
		for i, n, start := 0, 1, 0; i <= len(note); i++ {
			if i < len(note) && note[i] != '\n' {
				continue
			}
			line := trimSpace(note[start:i])
			ln := n
			start, n = i+1, n+1
			if len(line) == 0 {
				continue
			}
			if sum, ok := ledger.Summarize(line); ok {
				if keep == nil || keep(&sum) {
					out = append(out, Line{Summary: sum, Text: line})
				}
				continue
			}
			r, err := ledger.Parse(line)
			if err != nil {
				errs = append(errs, &NoteError{Commit: commit, Journal: journal, Line: ln, Text: string(line), Err: err})
				continue
			}
			sum := ledger.SummaryOf(&r)
			if keep == nil || keep(&sum) {
				out = append(out, Line{Summary: sum, Text: r.Marshal()})
			}
		}
	}
	err := l.eachNote(opts, func(obj gitstore.Hash, data []byte) error {
		add(data, obj, false)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if opts.Journal && opts.Commits == nil {
		data, err := l.journal.Bytes()
		if err != nil {
			return nil, nil, err
		}
		add(data, gitstore.ZeroHash, true)
	}
	slices.SortStableFunc(out, func(a, b Line) int { return a.Summary.Compare(&b.Summary) })
	return out, errs, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
