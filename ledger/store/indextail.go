package store

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/git-evolve/git-evolve/gitstore"
)

// indexTailNotes is the most notes a read of the last lines takes from the
// index of cycles before it leaves them to the history's walk or to a read
// of the whole ledger.
var indexTailNotes = 4096

// indexTail is notesWalk's tail from the index of cycles in the notes tree
// (ledger.IndexName), for a clone with no saved view: the lines of the
// largest m cycles, read from the notes the index lists under those cycles
// alone (each cycle's lines are one record or more: a record and its
// copies on other commits are one). Every note that holds a record of a cycle is
// listed under it, so the lines of the cycles taken are all there are of
// them; the lines of smaller cycles that those notes hold are left out
// (the notes not read may hold more of them). The errors are those of the
// notes read, which hold the records listed: a listing of the last few
// names those alone (entriesFrom). partial is always true: smaller cycles, or records
// with no cycle the index lists, may come before the lines given. Nil when
// the tree has no index that describes its notes, when it lists fewer than
// m cycles or the m cycles' notes are more than indexTailNotes, or when a note it lists
// under a cycle holds no record of that cycle (an index another writer
// made wrong): the caller reads the history or the notes themselves.
func (l *Ledger) indexTail(snap *gitstore.Notes, m int) (v *view, partial bool) {
	l.repo.ReadsMany()
	x, ok, err := snap.OpenIndex(CycleIndex)
	if err != nil || !ok {
		return nil, false
	}
	listed := map[int][]gitstore.Hash{} // the cycles taken, with their notes
	notes := 0
	// The cycles from the largest down: each level's names are numbers
	// (ledger.CycleKey), in git's order in the tree, not in theirs.
	var descend func(path string, depth int) bool // false: stop
	failed := false
	descend = func(path string, depth int) bool {
		dirs, leaves, ok, err := x.Dir(path)
		if err != nil || !ok {
			failed = true
			return false
		}
		if depth < 2 {
			for _, d := range numbersDown(dirs) {
				sub := strconv.Itoa(d)
				if path != "" {
					sub = path + "/" + sub
				}
				if !descend(sub, depth+1) {
					return false
				}
			}
			return true
		}
		names := make([]string, 0, len(leaves))
		for name := range leaves {
			names = append(names, name)
		}
		for _, c := range numbersDown(names) {
			objs := leaves[strconv.Itoa(c)]
			listed[c] = objs
			notes += len(objs)
			if len(listed) >= m || notes > indexTailNotes {
				return false
			}
		}
		return true
	}
	descend("", 0)
	if failed || len(listed) < m || notes > indexTailNotes {
		return nil, false // not enough listed (a small ledger: it is read whole), or too many
	}
	return l.indexedLines(snap, listed, nil, func(c int) bool { return len(listed[c]) > 0 }), true
}

// numbersDown is the names that are numbers as ledger.CycleKey writes
// them (decimal, no sign, no leading zero), largest first.
func numbersDown(names []string) []int {
	var out []int
	for _, s := range names {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && strconv.Itoa(n) == s {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// indexedLines is the view of the notes the index lists: the lines of the
// cycles kept, of the notes listed under them (listed) and under
// ledger.BadKey (bad), and the errors of all those notes. Nil when they
// cannot be read, or when a note listed under a cycle holds no record of
// it: an index another writer made wrong, which the caller passes by.
func (l *Ledger) indexedLines(snap *gitstore.Notes, listed map[int][]gitstore.Hash, bad []gitstore.Hash, keep func(cycle int) bool) *view {
	objs := slices.Clone(bad)
	for _, os := range listed {
		objs = append(objs, os...)
	}
	slices.SortFunc(objs, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) })
	objs = slices.Compact(objs)
	found, err := snap.FindMany(objs)
	if err != nil {
		return nil
	}
	var commits, blobs []gitstore.Hash
	for _, c := range objs {
		for _, b := range found[c] {
			commits, blobs = append(commits, c), append(blobs, b)
		}
	}
	data, err := l.repo.ReadBlobsKept(blobs)
	if err != nil {
		return nil
	}
	all := &view{notes: snap.Commit()}
	for i, c := range commits {
		all.add(c, data[i])
	}
	v := &view{notes: snap.Commit(), errors: all.errors}
	has := map[int]map[gitstore.Hash]bool{}
	for _, ln := range all.lines {
		if c := ln.Summary.Cycle; keep(c) {
			v.lines = append(v.lines, ln)
			if has[c] == nil {
				has[c] = map[gitstore.Hash]bool{}
			}
			has[c][ln.commit] = true
		}
	}
	for c, os := range listed {
		for _, o := range os {
			if !has[c][o] {
				return nil
			}
		}
	}
	v.sort()
	return v
}
