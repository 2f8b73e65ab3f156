package cycle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"git-evolve/gitstore"
	"git-evolve/ledger"
)

// index lists the cycle number of every record in the ledger with the
// commit it is on. It is a local cache of what the notes hold, kept in the
// state directory with the notes commit it describes, and brought up to
// date by reading only the notes that changed since (the notes tree diff),
// so that recording a cycle does not read the whole ledger. It is never the
// source of truth: a missing, stale or damaged index is rebuilt.
type index struct {
	notes   gitstore.Hash
	entries []indexEntry
	// saved is how many of entries the file holds as they are, or -1 when
	// the file must be written anew.
	saved int
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
}

// lookupsAfter is how many questions an index answers by a pass over its
// entries before it builds its maps.
const lookupsAfter = 8

type indexEntry struct {
	obj   gitstore.Hash
	cycle int32
}

// The file: a magic line, the notes commit, the number of entries
// (big-endian uint32), then 24 bytes per entry: the commit's name and the
// cycle number (big-endian). The count catches an append that did not reach
// the disk while the header did.
const indexMagic = "git-evolve cycle index 3\n"

const indexHeader = len(indexMagic) + 24

func (l *Ledger) indexPath() string { return filepath.Join(l.stateDir, "cycles.idx") }

// loadIndex returns the index for snap, updating the cached one or, when
// there is none usable, building it from the whole ledger.
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*index, error) {
	ix, err := readIndex(l.indexPath())
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
		// No usable index (none yet, or its commit is gone): read the
		// whole ledger in one stream.
		ix = &index{saved: -1}
		changes = nil
		// The saved view of this ledger holds every record's cycle and
		// commit: one file read instead of every note.
		if v, err := readView(l.viewPath()); err == nil && v != nil && v.notes == snap.Commit() && !v.notes.IsZero() {
			for _, ln := range v.lines {
				ix.entries = append(ix.entries, indexEntry{ln.commit, int32(ln.Summary.Cycle)})
			}
			ix.notes = snap.Commit()
			_ = ix.save(l.indexPath())
			return ix, nil
		}
		err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
			for _, c := range ledger.Cycles(data) {
				ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		cycles, err := l.cyclesIn(c.New)
		if err != nil {
			return nil, err
		}
		ix.set(c.Object, cycles)
	}
	ix.notes = snap.Commit()
	// The index only saves time: failing to write it is not an error.
	_ = ix.save(l.indexPath())
	return ix, nil
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

func (l *Ledger) cyclesIn(blobs []gitstore.Hash) ([]int, error) {
	var out []int
	for _, b := range blobs {
		data, err := l.repo.ReadBlob(b)
		if err != nil {
			return nil, err
		}
		out = append(out, ledger.Cycles(data)...)
	}
	return out, nil
}

// set replaces the cycles recorded on obj.
func (ix *index) set(obj gitstore.Hash, cycles []int) {
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
			}
		}
		ix.saved = -1 // entries were removed: the file is written anew
		ix.entries = kept
		ix.byCycle, ix.topOK = nil, false // rebuilt when next asked
		if ix.perObj != nil {
			delete(ix.perObj, obj)
		}
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

// ask counts a question, and builds the maps once there were enough.
func (ix *index) ask() {
	if ix.asked++; ix.asked <= lookupsAfter {
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

// find returns a commit holding cycle n (the first the index lists).
func (ix *index) find(n int) (gitstore.Hash, bool) {
	ix.ask()
	if ix.byCycle != nil {
		obj, ok := ix.byCycle[int32(n)]
		return obj, ok
	}
	for _, e := range ix.entries {
		if int(e.cycle) == n {
			return e.obj, true
		}
	}
	return gitstore.ZeroHash, false
}

// max returns the largest cycle number in the index (0 when empty).
func (ix *index) max() int {
	if !ix.topOK {
		ix.top = 0
		for _, e := range ix.entries {
			ix.top = max(ix.top, int(e.cycle))
		}
		ix.topOK = true
	}
	return ix.top
}

func readIndex(path string) (*index, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	body, ok := bytes.CutPrefix(data, []byte(indexMagic))
	if !ok || len(body) < 24 || (len(body)-24)%24 != 0 || int(binary.BigEndian.Uint32(body[20:24])) != (len(body)-24)/24 {
		return nil, fmt.Errorf("%s: not a cycle index, or a damaged one", path)
	}
	ix := &index{entries: make([]indexEntry, (len(body)-24)/24)}
	ix.saved = len(ix.entries)
	copy(ix.notes[:], body[:20])
	body = body[24:]
	for i := range ix.entries {
		e := &ix.entries[i]
		copy(e.obj[:], body[:20])
		e.cycle = int32(binary.BigEndian.Uint32(body[20:24]))
		body = body[24:]
	}
	return ix, nil
}

// save writes the index. When the file already holds every entry but the
// new ones (a record on a commit without one), it appends them and then
// rewrites the notes commit in the header: a crash in between leaves a
// header naming an older notes commit, which the next load brings up to
// date from the notes diff, or a torn entry, which makes the file unreadable
// and so rebuilt. Otherwise the file is written anew, atomically.
func (ix *index) save(path string) error {
	if ix.saved >= 0 && ix.saved <= len(ix.entries) {
		if err := ix.appendTo(path); err == nil {
			return nil
		}
	}
	return ix.rewrite(path)
}

func (ix *index) appendTo(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != int64(indexHeader+24*ix.saved) {
		return errors.New("the index file is not what was read")
	}
	var buf []byte
	for _, e := range ix.entries[ix.saved:] {
		buf = append(buf, e.obj[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.cycle))
	}
	if _, err := f.WriteAt(buf, fi.Size()); err != nil {
		return err
	}
	header := binary.BigEndian.AppendUint32(append([]byte(nil), ix.notes[:]...), uint32(len(ix.entries)))
	if _, err := f.WriteAt(header, int64(len(indexMagic))); err != nil {
		return err
	}
	ix.saved = len(ix.entries)
	return nil
}

// rewrite writes the index atomically (a temporary file renamed over it).
func (ix *index) rewrite(path string) error {
	buf := make([]byte, 0, indexHeader+24*len(ix.entries))
	buf = append(buf, indexMagic...)
	buf = append(buf, ix.notes[:]...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(ix.entries)))
	for _, e := range ix.entries {
		buf = append(buf, e.obj[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.cycle))
	}
	if err := writeFileAtomic(path, buf); err != nil {
		return err
	}
	ix.saved = len(ix.entries)
	return nil
}
