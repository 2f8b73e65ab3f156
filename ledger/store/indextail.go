package store

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
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
	listed := map[string][]gitstore.Hash{} // the keys of the cycles taken, with their notes
	taken := map[int]bool{}
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
			listed[ledger.CycleKey(c)] = objs
			taken[c] = true
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
	return l.indexedLines(snap, listed, nil, func(s *ledger.Summary) bool { return taken[s.Cycle] }), true
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

// indexedLines is the view of the notes the index lists: the lines keep
// takes, of the notes listed under the keys of check and of the notes of
// extra, and the errors of all those notes. Nil when they cannot be read,
// or when a note listed under a key holds no record that gives it
// (ledger.SummaryKeys): an index another writer made wrong, which the
// caller passes by.
func (l *Ledger) indexedLines(snap *gitstore.Notes, check map[string][]gitstore.Hash, extra []gitstore.Hash, keep func(*ledger.Summary) bool) *view {
	objs := slices.Clone(extra)
	for _, os := range check {
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
	gives := map[string]map[gitstore.Hash]bool{} // key -> the notes whose records give it
	for _, ln := range all.lines {
		for _, k := range ledger.SummaryKeys(&ln.Summary) {
			if gives[k] == nil {
				gives[k] = map[gitstore.Hash]bool{}
			}
			gives[k][ln.commit] = true
		}
		if keep(&ln.Summary) {
			v.lines = append(v.lines, ln)
		}
	}
	for k, os := range check {
		for _, o := range os {
			if !gives[k][o] {
				return nil
			}
		}
	}
	v.sort()
	return v
}

// indexedQuarantines is readViewQuarantined from the index of cycles in
// the notes tree: the quarantine records of the notes it lists under
// ledger.QuarantineKey, and the errors of those and of the notes it lists
// under ledger.BadKey, which are what the whole ledger has of both. Nil
// when there is no index that describes the tree's notes, or when a note
// it lists holds no quarantine record.
func (l *Ledger) indexedQuarantines(snap *gitstore.Notes) *view {
	listed, ok, err := snap.IndexLookupMany(CycleIndex, ledger.QuarantineKey, ledger.BadKey)
	if err != nil || !ok {
		return nil
	}
	return l.indexedLines(snap, map[string][]gitstore.Hash{ledger.QuarantineKey: listed[ledger.QuarantineKey]}, listed[ledger.BadKey],
		func(s *ledger.Summary) bool { return string(s.Result) == ledger.Quarantined })
}
