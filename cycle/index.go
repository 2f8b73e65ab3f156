package cycle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"git-evolve/gitstore"
	"git-evolve/ledger"
)

// index maps each annotated commit of the ledger to the cycle numbers of
// its records. It is a local cache of what the notes hold, kept in the state
// directory with the notes commit it describes, and brought up to date by
// reading only the notes that changed since (the notes tree diff), so that
// recording a cycle does not read the whole ledger.
type index struct {
	notes gitstore.Hash
	byObj map[gitstore.Hash][]int
}

const indexHeader = "git-evolve cycle index 1 "

func (l *Ledger) indexPath() string { return filepath.Join(l.stateDir, "cycles.idx") }

// loadIndex returns the index for snap, updating the cached one or, when
// there is none usable, building it from the whole ledger.
func (l *Ledger) loadIndex(snap *gitstore.Notes) (*index, error) {
	ix, err := readIndex(l.indexPath())
	if err != nil || ix == nil {
		ix = &index{byObj: map[gitstore.Hash][]int{}}
	}
	if ix.notes == snap.Commit() {
		return ix, nil
	}
	changes, err := l.changesSince(ix.notes, snap)
	if err != nil {
		// The cached commit is gone or unreadable: start over.
		ix = &index{byObj: map[gitstore.Hash][]int{}}
		if changes, err = l.changesSince(gitstore.ZeroHash, snap); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		delete(ix.byObj, c.Object)
		cycles, err := l.cyclesIn(c.New)
		if err != nil {
			return nil, err
		}
		if len(cycles) > 0 {
			ix.byObj[c.Object] = cycles
		}
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

// set records the cycles now on obj.
func (ix *index) set(obj gitstore.Hash, cycles []int) {
	if len(cycles) == 0 {
		delete(ix.byObj, obj)
		return
	}
	ix.byObj[obj] = cycles
}

// cycles returns every cycle number in the index and where it is.
func (ix *index) cycles() map[int]gitstore.Hash {
	m := make(map[int]gitstore.Hash, len(ix.byObj))
	for obj, cs := range ix.byObj {
		for _, c := range cs {
			m[c] = obj
		}
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
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), indexHeader) {
		return nil, fmt.Errorf("%s: not a cycle index", path)
	}
	ix := &index{byObj: map[gitstore.Hash][]int{}}
	if h := strings.TrimPrefix(sc.Text(), indexHeader); h != "" {
		if ix.notes, err = gitstore.ParseHash(h); err != nil {
			return nil, err
		}
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: malformed line", path)
		}
		obj, err := gitstore.ParseHash(f[0])
		if err != nil {
			return nil, err
		}
		for _, s := range f[1:] {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("%s: malformed line", path)
			}
			ix.byObj[obj] = append(ix.byObj[obj], n)
		}
	}
	return ix, sc.Err()
}

// save writes the index atomically (a temporary file renamed over it).
func (ix *index) save(path string) error {
	var b bytes.Buffer
	b.WriteString(indexHeader)
	if !ix.notes.IsZero() {
		b.WriteString(ix.notes.String())
	}
	b.WriteByte('\n')
	for obj, cs := range ix.byObj {
		b.WriteString(obj.String())
		for _, c := range cs {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(c))
		}
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "cycles.idx.tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
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
