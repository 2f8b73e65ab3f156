package cycle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"git-evolve/gitstore"
)

// view is the ledger as Lines returns it (canonical lines in cycle order,
// each with its commit, and the lines that do not parse), for one notes
// commit. It is kept in the state directory so that reading the ledger
// again costs one file read, and brought up to date from the notes tree
// diff when the ledger moves. Like the cycle index it is derived state: a
// missing, stale or damaged view is rebuilt, never trusted over the notes.
type view struct {
	notes  gitstore.Hash
	lines  []viewLine
	errors []*NoteError
}

type viewLine struct {
	Line
	commit gitstore.Hash
}

const viewMagic = "git-evolve ledger view 1\n"

func (l *Ledger) viewPath() string { return filepath.Join(l.stateDir, "ledger.view") }

// loadView returns the view of snap: the saved one when it describes snap,
// the saved one brought up to date when the notes moved since, or one built
// from the whole ledger.
func (l *Ledger) loadView(snap *gitstore.Notes) (*view, error) {
	v, err := readView(l.viewPath())
	if err == nil && v != nil && v.notes == snap.Commit() {
		return v, nil
	}
	var changes []gitstore.NoteChange
	if err == nil && v != nil && !v.notes.IsZero() {
		if changes, err = l.changesSince(v.notes, snap); err == nil && len(changes) > 1000 {
			err = errors.New("too many changes: rebuild")
		}
	}
	if err != nil || v == nil || v.notes.IsZero() {
		v = &view{}
		err := snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
			v.add(obj, data)
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		changed := make(map[gitstore.Hash]bool, len(changes))
		for _, c := range changes {
			changed[c.Object] = true
		}
		v.lines = slices.DeleteFunc(v.lines, func(ln viewLine) bool { return changed[ln.commit] })
		v.errors = slices.DeleteFunc(v.errors, func(e *NoteError) bool { return changed[e.Commit] })
		for _, c := range changes {
			for _, b := range c.New {
				data, err := l.repo.ReadBlob(b)
				if err != nil {
					return nil, err
				}
				v.add(c.Object, data)
			}
		}
	}
	v.notes = snap.Commit()
	v.sort()
	_ = v.save(l.viewPath()) // the view only saves time
	return v, nil
}

// sort puts the view's lines in a total order, so that equal summaries
// still sort the same way (and copies of one record come together).
func (v *view) sort() {
	slices.SortFunc(v.lines, func(a, b viewLine) int {
		if c := a.Summary.Compare(&b.Summary); c != 0 {
			return c
		}
		if c := bytes.Compare(a.Text, b.Text); c != 0 {
			return c
		}
		return bytes.Compare(a.commit[:], b.commit[:])
	})
}

// add reads a note's lines into the view.
func (v *view) add(obj gitstore.Hash, data []byte) {
	lines, errs := noteLines(data, obj, false, nil)
	for _, ln := range lines {
		v.lines = append(v.lines, viewLine{ln, obj})
	}
	v.errors = append(v.errors, errs...)
}

// The file: the magic line and the notes commit, then each line in order
// (its commit, cycle, and the lengths then the bytes of its text, id,
// target, result and timestamp), a zero commit as the end mark, then each
// error (its commit, line number, and the lengths then the bytes of its
// text and message). Reading it copies nothing: the lines point into it.
func (v *view) save(path string) error {
	size := len(viewMagic) + 40
	for _, ln := range v.lines {
		size += 44 + len(ln.Text) + len(ln.Summary.ID) + len(ln.Summary.Target) +
			len(ln.Summary.Result) + len(ln.Summary.Timestamp)
	}
	b := make([]byte, 0, size)
	b = append(b, viewMagic...)
	b = append(b, v.notes[:]...)
	for _, ln := range v.lines {
		if ln.commit.IsZero() {
			return errors.New("a ledger line without a commit")
		}
		s := &ln.Summary
		b = append(b, ln.commit[:]...)
		for _, n := range [...]int{s.Cycle, len(ln.Text), len(s.ID), len(s.Target), len(s.Result), len(s.Timestamp)} {
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		b = append(append(append(append(append(b, ln.Text...), s.ID...), s.Target...), s.Result...), s.Timestamp...)
	}
	b = append(b, gitstore.ZeroHash[:]...)
	for _, e := range v.errors {
		msg := e.Err.Error()
		b = append(b, e.Commit[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(e.Line))
		b = binary.BigEndian.AppendUint32(b, uint32(len(e.Text)))
		b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
		b = append(append(b, e.Text...), msg...)
	}
	return writeFileAtomic(path, b)
}

func readView(path string) (*view, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("%s: not a ledger view", path)
	d, ok := bytes.CutPrefix(data, []byte(viewMagic))
	if !ok || len(d) < 20 {
		return nil, bad
	}
	v := &view{}
	copy(v.notes[:], d)
	d = d[20:]
	take := func(n int) ([]byte, bool) {
		if n < 0 || n > len(d) {
			return nil, false
		}
		b := d[:n:n]
		d = d[n:]
		return b, true
	}
	u32 := func() (int, bool) {
		b, ok := take(4)
		if !ok {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(b)), true
	}
	for {
		c, ok := take(20)
		if !ok {
			return nil, bad
		}
		var ln viewLine
		if copy(ln.commit[:], c); ln.commit.IsZero() {
			break
		}
		cycle, ok := u32()
		if !ok {
			return nil, bad
		}
		ln.Summary.Cycle = int(int32(cycle))
		var lens [5]int
		for i := range lens {
			if lens[i], ok = u32(); !ok {
				return nil, bad
			}
		}
		dst := []*[]byte{&ln.Text, &ln.Summary.ID, &ln.Summary.Target, &ln.Summary.Result, &ln.Summary.Timestamp}
		for i, p := range dst {
			if *p, ok = take(lens[i]); !ok {
				return nil, bad
			}
		}
		v.lines = append(v.lines, ln)
	}
	for len(d) > 0 {
		c, ok := take(20)
		e := &NoteError{}
		copy(e.Commit[:], c)
		line, ok1 := u32()
		tn, ok2 := u32()
		mn, ok3 := u32()
		text, ok4 := take(tn)
		msg, ok5 := take(mn)
		if !ok || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, bad
		}
		e.Line, e.Text, e.Err = line, string(text), errors.New(string(msg))
		v.errors = append(v.errors, e)
	}
	return v, nil
}
