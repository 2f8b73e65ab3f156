package store

import (
	"slices"
	"strconv"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// indexTailNotes is the most notes a read of the last lines, or of the
// quarantine records, takes from the index of cycles before it leaves
// them to the history's walk or to a read of the whole ledger.
var indexTailNotes = 4096

// openedIndex is the index of cycles of one notes commit, opened once for
// the reads of a process: a status takes the last records, and the
// quarantine records, from it.
type openedIndex struct {
	mu    sync.Mutex
	notes gitstore.Hash
	x     *gitstore.IndexReader // nil: none to take
	done  bool
}

// cycleIndexOf is the index of cycles of snap's tree (gitstore.OpenIndex:
// its own, or one before it brought forward), opened at the first read of
// that notes commit; nil when there is none to take.
func (l *Ledger) cycleIndexOf(snap *gitstore.Notes) *gitstore.IndexReader {
	o := l.index
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done || o.notes != snap.Commit() {
		o.notes, o.x, o.done = snap.Commit(), nil, true
		if x, ok, err := snap.OpenIndex(CycleIndex); err == nil && ok {
			o.x = x
		}
	}
	return o.x
}

// indexLookup is what the index of cycles of snap's tree lists under key,
// and under ledger.BadKey (the notes whose lines that are no record a
// listing of what key stands for reports); ok is false when there is no
// index to take.
func (l *Ledger) indexLookup(snap *gitstore.Notes, key string) (listed, bad []gitstore.Hash, ok bool) {
	x := l.cycleIndexOf(snap)
	if x == nil {
		return nil, nil, false
	}
	if listed, ok, err := x.Lookup(key); err == nil && ok {
		if bad, ok, err := x.Lookup(ledger.BadKey); err == nil && ok {
			return listed, bad, true
		}
	}
	return nil, nil, false
}

// indexTail is the last lines of the ledger read from the index of cycles
// in its notes tree (ledger.IndexName), for a clone with no saved view: a
// tail of the notes history's (notesWalk) at the cost of the notes it
// shows. They are the lines of the m largest cycles the index lists, read from
// the notes it lists under those cycles alone (each cycle's lines are one
// record or more: a record and its copies on other commits are one), and
// the errors of those notes, which hold the records listed: a listing of
// the last few names those alone (entriesFrom). Every note that holds a
// record of a cycle is listed under it, so the lines of the cycles taken
// are all there are of them; the lines of smaller cycles that those notes
// hold are left out (the notes not read may hold more of them). partial
// is always true: smaller cycles, or records of no cycle the index lists,
// may come before the lines given. Nil when there is no index to take
// (none that describes the tree's notes or that one before it brings
// forward), when it lists fewer than m cycles or more than indexTailNotes
// notes under them, or when it shows itself wrong: a cycle in a directory
// that cannot hold it, a note listed under a cycle that holds no record of
// it, a note read that holds a record of a cycle taken, or larger, that it
// is not listed under. The caller then reads the history, or every note.
func (l *Ledger) indexTail(snap *gitstore.Notes, m int) (v *view, partial bool) {
	l.repo.ReadsMany() // the trees of the index and the notes: git's to read
	x := l.cycleIndexOf(snap)
	if x == nil {
		return nil, false
	}
	listed := map[string][]gitstore.Hash{} // the keys of the cycles taken, with their notes
	cutoff := -1                           // the smallest cycle taken
	notes := 0
	wrong := false
	// The cycles from the largest down: each level's names are numbers
	// (ledger.CycleKey: n/10000, n/100, n), in git's order in the tree,
	// not in theirs. A cycle listed where ledger.CycleKey does not put it
	// (in a directory that cannot hold it) shows the index wrong.
	var descend func(path string, depth int) bool // false: stop
	descend = func(path string, depth int) bool {
		dirs, leaves, ok, err := x.Dir(path)
		if err != nil || !ok {
			wrong = true
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
			key := ledger.CycleKey(c)
			if key != path+"/"+strconv.Itoa(c) {
				wrong = true
				return false
			}
			objs := leaves[strconv.Itoa(c)]
			listed[key] = objs
			cutoff = c
			notes += len(objs)
			if len(listed) >= m || notes > indexTailNotes {
				return false
			}
		}
		return true
	}
	descend("", 0)
	if wrong || len(listed) < m || notes > indexTailNotes {
		return nil, false // not enough listed (a small ledger: it is read whole), or too many
	}
	v = l.indexedLines(snap, listed, nil, func(s *ledger.Summary) (string, bool) {
		return ledger.CycleKey(s.Cycle), s.Cycle >= cutoff
	})
	return v, v != nil
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

// indexedLines is the view of the notes the index lists: the lines need
// asks for, of the notes listed under the keys of check and of the notes
// of extra, and the errors of all those notes. need says whether a line
// is one asked for, and the key whose notes hold every such line. Nil when
// the notes cannot be read, or when the index shows itself wrong: a note
// listed under a key of check that holds no record giving it
// (ledger.SummaryKeys), or a line asked for on a note not listed under
// its key. The caller then passes the index by.
func (l *Ledger) indexedLines(snap *gitstore.Notes, check map[string][]gitstore.Hash, extra []gitstore.Hash, need func(*ledger.Summary) (string, bool)) *view {
	objs := slices.Clone(extra)
	listedUnder := map[string]map[gitstore.Hash]bool{}
	for k, os := range check {
		objs = append(objs, os...)
		listedUnder[k] = map[gitstore.Hash]bool{}
		for _, o := range os {
			listedUnder[k][o] = true
		}
	}
	slices.SortFunc(objs, gitstore.Hash.Compare)
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
		if key, ok := need(&ln.Summary); ok {
			if !listedUnder[key][ln.commit] {
				return nil // a line asked for, on a note not listed where it belongs
			}
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
// when there is no index to take, when it lists more than indexTailNotes
// notes, or when it shows itself wrong (indexedLines).
func (l *Ledger) indexedQuarantines(snap *gitstore.Notes) *view {
	quarantines, bad, ok := l.indexLookup(snap, ledger.QuarantineKey)
	if !ok || len(quarantines)+len(bad) > indexTailNotes {
		return nil
	}
	return l.indexedLines(snap, map[string][]gitstore.Hash{ledger.QuarantineKey: quarantines}, bad,
		func(s *ledger.Summary) (string, bool) {
			return ledger.QuarantineKey, string(s.Result) == ledger.Quarantined
		})
}
