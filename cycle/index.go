package cycle

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// index lists the cycle number of every record in the ledger with the
// commit it is on. It is a local cache of what the notes hold, kept in the
// state directory with the notes commit it describes, and brought up to
// date by reading only the notes that changed since (the notes tree diff),
// so that recording a cycle does not read the whole ledger. It is never the
// source of truth: a missing, stale or damaged index is rebuilt.
//
// The file is read lazily: a record needs the largest cycle and the commits
// that hold it, and show the commits of one cycle, which the header and a
// binary search of the file's sorted entries answer without reading the
// others. Every other question loads the whole file once.
type index struct {
	notes gitstore.Hash
	// file is the index file as read while its entries are not loaded:
	// entries then holds only the entries added since. nil once loaded
	// (and for an index built in memory).
	file    *indexFile
	entries []indexEntry
	// saved is how many of entries the file holds as they are, or -1 when
	// the file must be written anew (for a loaded index).
	saved int
	// sorted is how many of the leading entries are in cycle order.
	sorted int
	// lookups kept up to date by set: how many entries each commit has and
	// the commit of each cycle (built once the index was asked more than
	// lookupsAfter times: a single record is cheaper with one pass), and
	// the largest cycle (while topOK), so that recording many cycles in one
	// process (import) costs each one what it changes.
	perObj  map[gitstore.Hash]int
	byCycle map[int32]gitstore.Hash
	top     int
	topOK   bool
	asked   int
	// whole reads every note, for an index made from the ledger's history
	// (indexFromHistory), which holds only the entries of the largest
	// cycle: any question but the largest cycle and its commits makes it
	// whole first, and so does a change that could lower the largest
	// cycle. nil for a whole index.
	whole func() (*index, error)
	// changed is what add and set did to an index made from the history,
	// done again on the whole one.
	changed []indexChange
	// head is the ledger's last record with an id in listing order
	// (ledger.Less), the one the next record chains to, as the index last saw it; nil when it
	// does not know (lastRecord then reads every note of the largest
	// cycle). It is kept in the file's header, so that a record on a
	// ledger whose largest cycle was copied to many commits reads one note.
	head *indexHead
}

// indexHead names the ledger's last record: the keys ledger.Less orders
// it by, its link (ledger.Link) and a commit whose note holds it.
type indexHead struct {
	Cycle     int           `json:"cycle"`
	Timestamp string        `json:"timestamp"`
	ID        string        `json:"id"`
	Link      string        `json:"link"`
	Commit    gitstore.Hash `json:"-"`
	CommitHex string        `json:"commit"`
}

func headOf(r *ledger.Record, commit gitstore.Hash) *indexHead {
	return &indexHead{Cycle: r.Cycle, Timestamp: r.Timestamp, ID: r.ID, Link: ledger.Link(r), Commit: commit}
}

// offer tells the index of a record on commit that is now in the ledger
// (written, or read from a note that changed): it becomes the head when
// it comes after the head in listing order, or, the head unknown, when
// its cycle is above every cycle the index held before (above).
func (ix *index) offer(r *ledger.Record, commit gitstore.Hash, above int) {
	if r.ID == "" {
		return // no record links to one with no id
	}
	h := ix.head
	switch {
	case h == nil && r.Cycle > above,
		h != nil && ledger.Less(&ledger.Record{Cycle: h.Cycle, Timestamp: h.Timestamp, ID: h.ID}, r):
		ix.head = headOf(r, commit)
	}
}

// forget drops the head when entries of its cycle on obj are removed.
func (ix *index) forget(e indexEntry) {
	if ix.head != nil && int(e.cycle) == ix.head.Cycle {
		ix.head = nil
	}
}

// indexChange is one add (or set, when replace) to an index.
type indexChange struct {
	obj     gitstore.Hash
	cycles  []int
	replace bool
}

// indexFile is an index file whose entries are read as they are needed.
type indexFile struct {
	f      *os.File
	count  int // entries
	sorted int // leading entries in cycle order
	top    int // the largest cycle (0 with no entries)
	nTop   int // how many entries hold it
}

// lookupsAfter is how many questions an index answers by a pass over its
// entries before it builds its maps.
const lookupsAfter = 8

type indexEntry struct {
	obj   gitstore.Hash
	cycle int32
}

// The file: a magic line; the notes commit; then, big-endian uint32s, the
// number of entries, how many of the first are sorted by cycle, the
// largest cycle and how many entries hold it; then the head (a big-endian
// uint16 length and as many bytes of JSON, none when the head is unknown,
// in a slot of headSlot bytes); then 24 bytes per entry: the commit's name
// and the cycle number (big-endian). The count catches an append that did
// not reach the disk while the header did. A rewrite sorts every entry by
// cycle; appends leave an unsorted tail, sorted again by a rewrite once it
// is long (unsortedMax).
const indexMagic = "git-evolve cycle index 5\n"

// headSlot is the room the head has in the header; a head whose JSON does
// not fit (ids and timestamps of another tool's making) is not kept.
const headSlot = 256

const indexHeader = len(indexMagic) + 36 + headSlot

// unsortedMax is how long the unsorted tail of the file may grow before a
// save rewrites the file sorted: at least 4096 entries, and an eighth of
// the file, so that rewrites cost O(1) a record over time.
func unsortedMax(count int) int { return max(unsortedMin, count/8) }

var unsortedMin = 4096 // the tests make it small

func (l *Ledger) indexPath() string { return filepath.Join(l.stateDir, "cycles.idx") }

// loadIndex returns the index for snap, updating the cached one or, when
// there is none usable, making one: from the ledger's history when there
// is no index file (indexFromHistory), else anew (rebuildIndex).
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*index, error) {
	ix, err := readIndex(l.indexPath())
	missing := err == nil && ix == nil
	if err != nil || ix == nil {
		ix = &index{saved: -1}
	}
	if ix.notes == snap.Commit() {
		return ix, nil
	}
	var changes []gitstore.NoteChange
	if !ix.notes.IsZero() {
		changes, err = l.changesSince(ix.notes, snap)
	}
	if ix.notes.IsZero() || err != nil {
		// No usable index (none yet, damaged, or its commit is gone).
		ix.close()
		// No index file at all (a fresh clone, a removed state
		// directory): the ledger's history names the largest cycle,
		// and reading the notes changed since it was recorded answers a
		// record; the rest is read when more is asked.
		if missing {
			if hx, ok := l.indexFromHistory(snap); ok {
				return hx, nil
			}
		}
		return l.rebuildIndex(snap)
	}
	// The last record among the notes that changed, when it can be the
	// ledger's (its cycle at least the head's, or above every cycle held).
	above := ix.max()
	from := above + 1
	if ix.head != nil {
		from = ix.head.Cycle
	}
	var best *ledger.Record
	var bestAt gitstore.Hash
	cycles, err := l.changedCycles(changes, from, func(i int, r *ledger.Record) {
		if r.ID != "" && (best == nil || ledger.Less(best, r)) {
			best, bestAt = r, changes[i].Object
		}
	})
	if err != nil {
		return nil, err
	}
	var edited []gitstore.Hash
	var editedCycles [][]int
	for i, c := range changes {
		if len(c.Old) == 0 {
			ix.add(c.Object, cycles[i]) // a note that was not there: no entries to drop
		} else {
			edited, editedCycles = append(edited, c.Object), append(editedCycles, cycles[i])
		}
	}
	if err := ix.setMany(edited, editedCycles); err != nil {
		return nil, err
	}
	if best != nil {
		ix.offer(best, bestAt, above)
	}
	ix.notes = snap.Commit()
	// The index only saves time: failing to write it is not an error.
	_ = ix.save(l.indexPath())
	return ix, nil
}

// rebuildIndex builds the index of snap anew and saves it: from the saved
// view when it is of snap (it holds every record's cycle and commit: one
// file read instead of every note), else from every note.
func (l *Ledger) rebuildIndex(snap *gitstore.Notes) (*index, error) {
	if h, ok := viewNotes(l.viewPath()); ok && h == snap.Commit() && !h.IsZero() {
		if v, err := readView(l.viewPath()); err == nil && v != nil && v.notes == snap.Commit() {
			ix := &index{saved: -1, notes: snap.Commit(), entries: make([]indexEntry, 0, len(v.lines))}
			for _, ln := range v.lines {
				ix.entries = append(ix.entries, indexEntry{ln.commit, int32(ln.Summary.Cycle)})
			}
			Unmap(v.mapped)            // nothing was taken from it that points there
			_ = ix.save(l.indexPath()) // only saves time
			return ix, nil
		}
	}
	ix, err := l.wholeIndex(snap)
	if err != nil {
		return nil, err
	}
	_ = ix.save(l.indexPath())
	return ix, nil
}

// wholeIndex builds the index of snap from every note, in one stream.
func (l *Ledger) wholeIndex(snap *gitstore.Notes) (*index, error) {
	ix := &index{saved: -1, notes: snap.Commit()}
	// The head: the last record of the notes that hold a cycle at least
	// the largest seen so far (a note like the one read before, a copy,
	// is not read again).
	var best *ledger.Record
	var bestAt gitstore.Hash
	var last []byte
	err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		top := 0
		for _, c := range ledger.Cycles(data) {
			ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
			top = max(top, c)
		}
		if best != nil && (top < best.Cycle || bytes.Equal(data, last)) {
			return nil
		}
		rs, _ := ledger.ParseLines(data)
		for i := range rs {
			if rs[i].ID != "" && (best == nil || ledger.Less(best, &rs[i])) {
				best, bestAt = &rs[i], obj
			}
		}
		last = append(last[:0], data...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if best != nil {
		ix.head = headOf(best, bestAt)
	}
	return ix, nil
}

// historyWalk is how many notes commits indexFromHistory looks at, newest
// first, for one that names the ledger's largest cycle.
const historyWalk = 64

// historyNotes is the most notes added since that commit indexFromHistory
// reads, and how many changedCycles reads in one exchange.
var historyNotes = 4096 // the tests make it small

// recordSubject is the subject of the notes commit a record writes.
const recordSubject = "git evolve: record cycle %d (%s)"

// largestTrailer names, in the message of every notes commit this package
// writes (update), the largest cycle number the ledger holds once it is
// written.
const largestTrailer = "Evolve-Largest-Cycle"

// indexFromHistory makes an index for snap without reading every note,
// for a clone with no index file (a fresh clone, a state directory
// removed): it knows the largest cycle and the commits that hold it, which
// is what a record and a cycle start ask. The newest notes commit (among
// the first historyWalk, by first parents) with a largestTrailer names the
// largest cycle then; the notes that commit changed are read (none may
// hold a larger one, and they give the commits that hold it), and so are
// the notes changed from it to snap. ok is false, and the caller reads
// every note, when there is no such commit, the notes it changed hold a
// larger cycle, the largest is on a note that commit did not change, or a
// note was changed or removed since (only added notes are read here, at
// most historyNotes of them).
//
// The trailer is only as true as the ledger it is in: a history edited to
// name a smaller cycle than the notes hold can make two records share a
// number, which verify reports; nothing is lost.
func (l *Ledger) indexFromHistory(snap *gitstore.Notes) (*index, bool) {
	h := snap.Commit()
	var named int
	var at gitstore.CommitInfo
	for i := 0; ; i++ {
		if h.IsZero() || i == historyWalk {
			return nil, false
		}
		ci, err := l.repo.Commit(h)
		if err != nil {
			return nil, false
		}
		if n, ok := largestCycle(ci.Message); ok {
			named, at = n, ci
			break
		}
		if len(ci.Parents) == 0 {
			return nil, false
		}
		h = ci.Parents[0]
	}
	ix := &index{saved: -1, notes: snap.Commit()}
	// What that commit changed, which must hold no larger cycle.
	then := l.repo.NotesOf(at)
	before := l.repo.EmptyNotes()
	if len(at.Parents) > 0 {
		var err error
		if before, err = l.repo.NotesAt(at.Parents[0]); err != nil {
			return nil, false
		}
	}
	changed, err := then.DiffNotes(before)
	if err != nil || !l.indexChanges(ix, changed) || ix.max() > named {
		return nil, false
	}
	// What changed since: added notes only.
	since, err := snap.DiffNotes(then)
	if err != nil {
		return nil, false
	}
	for _, c := range since {
		if len(c.Old) > 0 {
			return nil, false
		}
	}
	// Notes are read here one at a time: past a few thousand (another
	// clone's import), the stream of every note is the faster read.
	if len(since) > historyNotes || !l.indexChanges(ix, since) {
		return nil, false
	}
	// Only the entries of the largest cycle are kept: the others answer
	// nothing this index is asked without becoming whole. When that is
	// the named cycle, a note read here must hold it.
	top := max(ix.max(), named)
	ix.entries = slices.DeleteFunc(ix.entries, func(e indexEntry) bool { return int(e.cycle) != top })
	if len(ix.entries) == 0 {
		return nil, false
	}
	ix.topOK = false
	ix.whole = func() (*index, error) { return l.rebuildIndex(snap) }
	return ix, true
}

// largestCycle is the cycle a notes commit's message names in its
// largestTrailer, if it names one: the last such line.
func largestCycle(message string) (int, bool) {
	n, ok := 0, false
	for _, line := range strings.Split(message, "\n") {
		digits, found := strings.CutPrefix(line, largestTrailer+": ")
		if !found {
			continue
		}
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 9 || strings.Trim(digits, "0123456789") != "" || digits[0] == '0' || v < 1 {
			n, ok = 0, false
			continue
		}
		n, ok = v, true
	}
	return n, ok
}

// indexChanges adds the cycles of the notes in changes to ix; false when
// a note cannot be read.
func (l *Ledger) indexChanges(ix *index, changes []gitstore.NoteChange) bool {
	cycles, err := l.changedCycles(changes, 0, nil)
	if err != nil {
		return false
	}
	for i, c := range changes {
		ix.add(c.Object, cycles[i])
	}
	return true
}

// complete makes an index from the ledger's history whole.
func (ix *index) complete() error {
	if ix.whole == nil {
		return nil
	}
	whole, err := ix.whole()
	if err != nil {
		return err
	}
	// What changed since it was made (a record) is not in snap's notes.
	for _, c := range ix.changed {
		if !c.replace {
			whole.add(c.obj, c.cycles)
		} else if err := whole.set(c.obj, c.cycles); err != nil {
			return err
		}
	}
	whole.notes = ix.notes
	if len(ix.changed) > 0 {
		whole.head = ix.head // what was offered since, or not known
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
// nor every note in memory at once; a blob many notes share, once). When
// found is not nil, it is given each record of cycle from or above and the
// change whose note holds it (each blob parsed once).
func (l *Ledger) changedCycles(changes []gitstore.NoteChange, from int, found func(change int, r *ledger.Record)) ([][]int, error) {
	out := make([][]int, len(changes))
	parsed := map[gitstore.Hash][]ledger.Record{}
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
				d := data[at[b]]
				cs := ledger.Cycles(d)
				out[i] = append(out[i], cs...)
				if found == nil || len(cs) == 0 || slices.Max(cs) < from {
					continue
				}
				rs, ok := parsed[b]
				if !ok {
					rs, _ = ledger.ParseLines(d)
					parsed[b] = rs
				}
				for j := range rs {
					if rs[j].Cycle >= from {
						found(i, &rs[j])
					}
				}
			}
		}
		start = end
	}
	return out, nil
}

// load reads every entry of the file, before the ones added since it was
// read.
func (ix *index) load() error {
	if ix.file == nil {
		return nil
	}
	f := ix.file
	body := make([]byte, 24*f.count)
	if _, err := f.f.ReadAt(body, int64(indexHeader)); err != nil {
		return fmt.Errorf("%s: %w", f.f.Name(), err)
	}
	all := make([]indexEntry, f.count, f.count+len(ix.entries))
	for i := range all {
		all[i] = entryAt(body[24*i:])
	}
	ix.entries = append(all, ix.entries...)
	ix.saved, ix.sorted = f.count, f.sorted
	ix.close()
	return nil
}

func (ix *index) close() {
	if ix.file != nil {
		ix.file.f.Close()
		ix.file = nil
	}
}

func entryAt(b []byte) indexEntry {
	var e indexEntry
	copy(e.obj[:], b[:20])
	e.cycle = int32(binary.BigEndian.Uint32(b[20:24]))
	return e
}

// add records the cycles on obj, a commit the index has no entry for.
func (ix *index) add(obj gitstore.Hash, cycles []int) {
	if ix.whole != nil {
		ix.changed = append(ix.changed, indexChange{obj, cycles, false})
	}
	for _, c := range cycles {
		ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
		if ix.perObj != nil {
			ix.perObj[obj]++
		}
		if ix.byCycle != nil {
			if _, ok := ix.byCycle[int32(c)]; !ok {
				ix.byCycle[int32(c)] = obj
			}
		}
		if ix.topOK {
			ix.top = max(ix.top, c)
		}
	}
}

// set replaces the cycles recorded on obj.
func (ix *index) set(obj gitstore.Hash, cycles []int) error {
	if ix.whole != nil {
		// Made from the history, it holds the entries of the largest
		// cycle only: it stays so unless obj held that and no longer does.
		top := ix.max()
		if !slices.Contains(cycles, top) && slices.ContainsFunc(ix.entries, func(e indexEntry) bool { return e.obj == obj }) {
			if err := ix.complete(); err != nil {
				return err
			}
		} else {
			ix.entries = slices.DeleteFunc(ix.entries, func(e indexEntry) bool {
				if e.obj == obj {
					ix.forget(e)
				}
				return e.obj == obj
			})
			ix.topOK = false
			ix.add(obj, cycles)
			ix.changed[len(ix.changed)-1].replace = true
			return nil
		}
	}
	if err := ix.load(); err != nil {
		return err
	}
	ix.ask()
	has := false
	if ix.perObj != nil {
		has = ix.perObj[obj] > 0
	} else {
		for _, e := range ix.entries {
			if has = e.obj == obj; has {
				break
			}
		}
	}
	if has {
		kept := ix.entries[:0]
		for _, e := range ix.entries {
			if e.obj != obj {
				kept = append(kept, e)
			} else {
				ix.forget(e)
			}
		}
		ix.saved = -1 // entries were removed: the file is written anew
		ix.entries = kept
		ix.byCycle, ix.topOK = nil, false // rebuilt when next asked
		if ix.perObj != nil {
			delete(ix.perObj, obj)
		}
	}
	ix.add(obj, cycles)
	return nil
}

// setMany replaces the cycles recorded on each of objs (set for many) in
// one pass over the entries: set passes over them all for each commit, and
// a fetch can edit thousands of notes.
func (ix *index) setMany(objs []gitstore.Hash, cycles [][]int) error {
	if len(objs) <= 1 {
		for i, obj := range objs {
			return ix.set(obj, cycles[i])
		}
		return nil
	}
	if err := ix.complete(); err != nil {
		return err
	}
	if err := ix.load(); err != nil {
		return err
	}
	drop := make(map[gitstore.Hash]bool, len(objs))
	for _, obj := range objs {
		drop[obj] = true
	}
	kept := ix.entries[:0]
	for _, e := range ix.entries {
		if !drop[e.obj] {
			kept = append(kept, e)
		} else {
			ix.forget(e)
		}
	}
	if len(kept) != len(ix.entries) {
		ix.saved = -1 // entries were removed: the file is written anew
	}
	ix.entries = kept
	ix.perObj, ix.byCycle, ix.topOK = nil, nil, false // rebuilt when next asked
	for i, obj := range objs {
		ix.add(obj, cycles[i])
	}
	return nil
}

// ask counts a question, and builds the maps once there were enough.
func (ix *index) ask() {
	if ix.asked++; ix.asked <= lookupsAfter || ix.load() != nil {
		return
	}
	if ix.perObj == nil {
		ix.perObj = make(map[gitstore.Hash]int, len(ix.entries))
		for _, e := range ix.entries {
			ix.perObj[e.obj]++
		}
	}
	if ix.byCycle == nil {
		ix.byCycle = make(map[int32]gitstore.Hash, len(ix.entries))
		for _, e := range ix.entries {
			if _, ok := ix.byCycle[e.cycle]; !ok {
				ix.byCycle[e.cycle] = e.obj
			}
		}
	}
}

// find returns a commit holding cycle n.
func (ix *index) find(n int) (gitstore.Hash, bool, error) {
	if err := ix.complete(); err != nil {
		return gitstore.ZeroHash, false, err
	}
	ix.ask()
	if ix.byCycle != nil {
		obj, ok := ix.byCycle[int32(n)]
		return obj, ok, nil
	}
	objs, err := ix.holders(n)
	if err != nil || len(objs) == 0 {
		return gitstore.ZeroHash, false, err
	}
	return objs[0], true, nil
}

// holders lists the commits that hold cycle n, each once: from the file,
// by a binary search of its sorted entries and a pass over the unsorted
// tail, and from the entries added since it was read.
func (ix *index) holders(n int) ([]gitstore.Hash, error) {
	if ix.whole != nil && n != ix.max() {
		if err := ix.complete(); err != nil {
			return nil, err
		}
	}
	// A cycle copied to many commits has as many entries: each is kept
	// once by a set, and the file's run of them read in one read, so that
	// the cost is linear in the copies.
	var out []gitstore.Hash
	seen := map[gitstore.Hash]bool{}
	keep := func(e indexEntry) {
		if int(e.cycle) == n && !seen[e.obj] {
			seen[e.obj] = true
			out = append(out, e.obj)
		}
	}
	if f := ix.file; f != nil {
		var b [24]byte
		var err error
		// The first of the sorted entries whose cycle is at least c.
		search := func(c int) int {
			return sort.Search(f.sorted, func(i int) bool {
				_, rerr := f.f.ReadAt(b[:], int64(indexHeader+24*i))
				err = cmp.Or(err, rerr)
				return int(entryAt(b[:]).cycle) >= c
			})
		}
		lo := search(n)
		hi := search(n + 1)
		run := make([]byte, 24*(hi-lo)+24*(f.count-f.sorted))
		if err == nil {
			// The run of cycle n, then the unsorted tail, in one read
			// when they meet (the run ends the sorted part).
			if hi == f.sorted {
				_, err = f.f.ReadAt(run, int64(indexHeader+24*lo))
			} else {
				_, err = f.f.ReadAt(run[:24*(hi-lo)], int64(indexHeader+24*lo))
				if err == nil {
					_, err = f.f.ReadAt(run[24*(hi-lo):], int64(indexHeader+24*f.sorted))
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.f.Name(), err)
		}
		for ; len(run) > 0; run = run[24:] {
			keep(entryAt(run))
		}
	}
	for _, e := range ix.entries {
		keep(e)
	}
	return out, nil
}

// max returns the largest cycle number in the index (0 when empty).
func (ix *index) max() int {
	if !ix.topOK {
		ix.top = 0
		if ix.file != nil && ix.file.count > 0 {
			ix.top = ix.file.top
		}
		for _, e := range ix.entries {
			ix.top = max(ix.top, int(e.cycle))
		}
		ix.topOK = true
	}
	return ix.top
}

// readIndex opens the index file and reads its header; nil when there is
// none. The entries are read as they are needed.
func readIndex(path string) (*index, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		f, err = os.Open(path) // a repository this user cannot write: read it
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ix, err := readIndexHeader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a cycle index, or a damaged one", path)
	}
	return ix, nil
}

func readIndexHeader(f *os.File) (*index, error) {
	var h [indexHeader]byte
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, err
	}
	body, ok := bytes.CutPrefix(h[:], []byte(indexMagic))
	if !ok {
		return nil, errors.New("no magic")
	}
	word := func(i int) int { return int(binary.BigEndian.Uint32(body[20+4*i:])) }
	file := &indexFile{f: f, count: word(0), sorted: word(1), top: int(int32(word(2))), nTop: word(3)}
	if fi.Size() != int64(indexHeader)+24*int64(file.count) || file.sorted > file.count ||
		file.nTop > file.count || (file.count > 0) != (file.nTop > 0) {
		return nil, errors.New("the header does not match the entries")
	}
	ix := &index{file: file, sorted: file.sorted}
	copy(ix.notes[:], body[:20])
	if n := int(binary.BigEndian.Uint16(body[36:])); n > 0 {
		var h indexHead
		if n > headSlot-2 || json.Unmarshal(body[38:38+n], &h) != nil {
			return nil, errors.New("the head is not one")
		}
		if h.Commit, err = gitstore.ParseHash(h.CommitHex); err != nil {
			return nil, errors.New("the head names no commit")
		}
		ix.head = &h
	}
	return ix, nil
}

// save writes the index. When the file already holds every entry but the
// new ones (a record on a commit without one), it appends them and then
// rewrites the header: a crash in between leaves a header naming an older
// notes commit, which the next load brings up to date from the notes diff,
// or a count the file's length does not match, which makes the file
// unreadable and so rebuilt. Otherwise, or once the unsorted tail is long,
// the file is written anew, sorted, atomically.
func (ix *index) save(path string) error {
	if ix.whole != nil {
		return nil // not every note's: the next reader starts again
	}
	if f := ix.file; f != nil {
		if f.count-f.sorted+len(ix.entries) <= unsortedMax(f.count) {
			return ix.appendTo(f.f, f.count, f.sorted)
		}
		if err := ix.load(); err != nil {
			return err
		}
		return ix.rewrite(path)
	}
	if ix.saved >= 0 && ix.saved <= len(ix.entries) && len(ix.entries)-ix.sorted <= unsortedMax(len(ix.entries)) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err == nil {
			err = ix.appendTo(f, ix.saved, ix.sorted)
			f.Close()
			if err == nil {
				return nil
			}
		}
	}
	return ix.rewrite(path)
}

// appendTo appends the entries the file f does not hold (it holds the first
// saved of a loaded index, none of a lazy one's) and writes the header.
// Appenders take turns (a reader that brought the index up to date saves
// it too): one that finds the file locked or longer than it read leaves it.
func (ix *index) appendTo(f *os.File, saved, sorted int) error {
	unlock, ok, err := filelock.TryLock(f.Name())
	if err != nil || !ok {
		return cmp.Or(err, errors.New("another process is writing the index"))
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != int64(indexHeader+24*saved) {
		return errors.New("the index file is not what was read")
	}
	add := ix.entries
	if ix.file == nil {
		add = ix.entries[saved:]
	}
	var buf []byte
	for _, e := range add {
		buf = append(buf, e.obj[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.cycle))
	}
	if _, err := f.WriteAt(buf, fi.Size()); err != nil {
		return err
	}
	count, top, nTop := saved+len(add), 0, 0
	if ix.file != nil {
		top, nTop = ix.file.top, ix.file.nTop
		if nTop == 0 {
			top = math.MinInt32
		}
		for _, e := range add {
			top, nTop = countTop(top, nTop, int(e.cycle))
		}
		if nTop == 0 {
			top = 0
		}
	} else {
		top, nTop = topOf(ix.entries)
	}
	if _, err := f.WriteAt(ix.header(count, sorted, top, nTop)[len(indexMagic):], int64(len(indexMagic))); err != nil {
		return err
	}
	if ix.file != nil {
		ix.file.count, ix.file.top, ix.file.nTop = count, top, nTop
		ix.entries = nil
	} else {
		ix.saved = count
	}
	return nil
}

func countTop(top, nTop, c int) (int, int) {
	switch {
	case c > top:
		return c, 1
	case c == top:
		return top, nTop + 1
	}
	return top, nTop
}

func topOf(entries []indexEntry) (top, nTop int) {
	top = math.MinInt32
	for _, e := range entries {
		top, nTop = countTop(top, nTop, int(e.cycle))
	}
	if nTop == 0 {
		top = 0
	}
	return top, nTop
}

func (ix *index) header(count, sorted, top, nTop int) []byte {
	buf := make([]byte, 0, indexHeader+24*count)
	buf = append(buf, indexMagic...)
	buf = append(buf, ix.notes[:]...)
	for _, w := range []int{count, sorted, top, nTop} {
		buf = binary.BigEndian.AppendUint32(buf, uint32(w))
	}
	var head []byte
	if h := ix.head; h != nil {
		c := *h
		c.CommitHex = h.Commit.String()
		if data, err := json.Marshal(c); err == nil && len(data) <= headSlot-2 {
			head = data
		}
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(head)))
	buf = append(buf, head...)
	return append(buf, make([]byte, headSlot-2-len(head))...)
}

// rewrite writes the index sorted by cycle, atomically (a temporary file
// renamed over it).
func (ix *index) rewrite(path string) error {
	slices.SortFunc(ix.entries, func(a, b indexEntry) int {
		return cmp.Or(cmp.Compare(a.cycle, b.cycle), bytes.Compare(a.obj[:], b.obj[:]))
	})
	ix.byCycle = nil // the first listed may have changed: rebuilt when next asked
	top, nTop := topOf(ix.entries)
	buf := ix.header(len(ix.entries), len(ix.entries), top, nTop)
	for _, e := range ix.entries {
		buf = append(buf, e.obj[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.cycle))
	}
	if err := writeFileAtomic(path, buf); err != nil {
		return err
	}
	ix.saved, ix.sorted = len(ix.entries), len(ix.entries)
	return nil
}
