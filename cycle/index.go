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
}

type indexEntry struct {
	obj   gitstore.Hash
	cycle int32
}

// The file: a magic line, the notes commit, then 24 bytes per record: the
// commit's name and the cycle number (big-endian).
const indexMagic = "git-evolve cycle index 2\n"

func (l *Ledger) indexPath() string { return filepath.Join(l.stateDir, "cycles.idx") }

// loadIndex returns the index for snap, updating the cached one or, when
// there is none usable, building it from the whole ledger.
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*index, error) {
	ix, err := readIndex(l.indexPath())
	if err != nil || ix == nil {
		ix = &index{}
	}
	if ix.notes == snap.Commit() {
		return ix, nil
	}
	changes, err := l.changesSince(ix.notes, snap)
	if err != nil {
		// The cached commit is gone or unreadable: start over.
		ix = &index{}
		if changes, err = l.changesSince(gitstore.ZeroHash, snap); err != nil {
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
	// The cache only saves time: failing to write it is not an error.
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
		recs, _ := ledger.ParseLines(data)
		for _, r := range recs {
			out = append(out, r.Cycle)
		}
	}
	return out, nil
}

// set replaces the cycles recorded on obj.
func (ix *index) set(obj gitstore.Hash, cycles []int) {
	kept := ix.entries[:0]
	for _, e := range ix.entries {
		if e.obj != obj {
			kept = append(kept, e)
		}
	}
	ix.entries = kept
	for _, c := range cycles {
		ix.entries = append(ix.entries, indexEntry{obj, int32(c)})
	}
}

// find returns a commit holding cycle n.
func (ix *index) find(n int) (gitstore.Hash, bool) {
	for _, e := range ix.entries {
		if int(e.cycle) == n {
			return e.obj, true
		}
	}
	return gitstore.ZeroHash, false
}

// max returns the largest cycle number in the index (0 when empty).
func (ix *index) max() int {
	m := 0
	for _, e := range ix.entries {
		m = max(m, int(e.cycle))
	}
	return m
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
	if !ok || len(body) < 20 || (len(body)-20)%24 != 0 {
		return nil, fmt.Errorf("%s: not a cycle index", path)
	}
	ix := &index{entries: make([]indexEntry, (len(body)-20)/24)}
	copy(ix.notes[:], body[:20])
	body = body[20:]
	for i := range ix.entries {
		e := &ix.entries[i]
		copy(e.obj[:], body[:20])
		e.cycle = int32(binary.BigEndian.Uint32(body[20:24]))
		body = body[24:]
	}
	return ix, nil
}

// save writes the index atomically (a temporary file renamed over it).
func (ix *index) save(path string) error {
	buf := make([]byte, 0, len(indexMagic)+20+24*len(ix.entries))
	buf = append(buf, indexMagic...)
	buf = append(buf, ix.notes[:]...)
	for _, e := range ix.entries {
		buf = append(buf, e.obj[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.cycle))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "cycles.idx.tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
