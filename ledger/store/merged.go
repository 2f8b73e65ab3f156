package store

import (
	"bytes"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
)

// A read of the ledger asks, of each remote-tracking copy, whether the
// local ledger has it all (the copy's tip is an ancestor of the local tip).
// After k records made here and not yet pushed, that is a walk of k
// commits, for every read. What a read found is written down in
// the view's merged section: a copy's tip and the local tip it is an ancestor of, the
// last few. The next read, with the local ledger grown since, asks only
// whether that local tip is an ancestor of the local tip now: a walk of
// the records made since the last read. The section is a cache: a missing
// or damaged one, or a pair git no longer agrees with (a local ledger reset),
// means the question is asked whole. It is not used where git's history is
// altered (shallow, grafts, replace refs, the environment that picks the
// replace refs), where what was an ancestor need not stay one.

// maxMerged bounds the pairs kept.
const maxMerged = 8

// mergedPair says that copy is an ancestor of local, or is local.
type mergedPair struct{ copy, local gitstore.Hash }

// mergedCopies is what the merged section says, and what reads add to it.
type mergedCopies struct {
	pairs   []mergedPair
	learned bool
}

// readMerged reads the view's merged section; nil when it is not to be
// used.
func (l *Ledger) readMerged() *mergedCopies {
	if altered, err := l.repo.HistoryAltered(); err != nil || altered {
		return nil
	}
	m := &mergedCopies{}
	k := OpenKept(l.viewPath())
	defer k.Release()
	data := k.Section(SecMerged)
	data = data[:min(len(data), 4096)]
	for _, line := range bytes.Split(data, []byte("\n")) {
		a, b, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		copy, err1 := gitstore.ParseHash(string(a))
		local, err2 := gitstore.ParseHash(string(b))
		if err1 == nil && err2 == nil && len(m.pairs) < maxMerged {
			m.pairs = append(m.pairs, mergedPair{copy, local})
		}
	}
	return m
}

// has says whether the pair is kept as it is: copy is then an ancestor of
// local, and no git object need be read to know it.
func (m *mergedCopies) has(copy, local gitstore.Hash) bool {
	return m != nil && !local.IsZero() && slices.Contains(m.pairs, mergedPair{copy, local})
}

// merged says whether copy is an ancestor of local (or is it): from a
// pair kept, when local descends from the local tip it names; else asked
// of git, and a yes kept.
func (l *Ledger) merged(m *mergedCopies, copy, local gitstore.Hash) (bool, error) {
	if m == nil {
		return l.repo.IsAncestor(copy, local)
	}
	for _, p := range m.pairs {
		if p.copy != copy {
			continue
		}
		if p.local == local {
			return true, nil
		}
		// A pair whose local tip git cannot read, or no longer an
		// ancestor (the ledger reset), is passed by.
		if in, err := l.repo.IsAncestor(p.local, local); err == nil && in {
			m.keep(copy, local)
			return true, nil
		}
	}
	in, err := l.repo.IsAncestor(copy, local)
	if err == nil && in {
		m.keep(copy, local)
	}
	return in, err
}

// keep puts the pair first, in place of any pair of the same copy.
func (m *mergedCopies) keep(copy, local gitstore.Hash) {
	out := []mergedPair{{copy, local}}
	for _, p := range m.pairs {
		if p.copy != copy && len(out) < maxMerged {
			out = append(out, p)
		}
	}
	m.pairs, m.learned = out, true
}

// writeMerged writes the merged section when a read added to it. A file
// that cannot be written is let be.
func (l *Ledger) writeMerged(m *mergedCopies) {
	if m == nil || !m.learned {
		return
	}
	var buf bytes.Buffer
	for _, p := range m.pairs {
		buf.WriteString(p.copy.String() + " " + p.local.String() + "\n")
	}
	var parts [Sections]*Part
	parts[SecMerged] = &Part{Bytes: buf.Bytes()}
	if err := PutKept(l.viewPath(), nil, parts); err != nil {
		gitstore.Tracef("the copies found merged are not kept: %v", err)
	}
}
