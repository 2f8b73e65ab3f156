package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
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
	text   textArena // the notes read by add
	mapped []byte    // the file readView read, which lines point into
}

type viewLine struct {
	Line
	commit gitstore.Hash
}

// Format 4: each line and each error carries a CRC-32C, and each line its
// index (format 3 had neither, and a flipped bit in it was read as a
// record).
const viewMagic = "git-evolve ledger view 4\n"

// castagnoli is the CRC-32C table of the view's checks (computed by the
// processor where it can).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (l *Ledger) viewPath() string { return filepath.Join(l.stateDir, "ledger.view") }

// loadView returns the view of snap: the saved one when it describes snap,
// the saved one brought up to date when the notes moved since, or one built
// from the whole ledger.
func (l *Ledger) loadView(snap *gitstore.Notes) (*view, error) {
	v, err := readView(l.viewPath())
	if err == nil && v != nil && v.notes == snap.Commit() {
		return v, nil
	}
	// The saved view's file is let go unless the view returned is it,
	// brought up to date (its lines still point there).
	old, kept := v, false
	defer func() {
		if old != nil && !kept {
			Unmap(old.mapped)
		}
	}()
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
	kept = v == old
	return v, nil
}

// sort puts the view's lines in a total order, so that equal summaries
// still sort the same way (and copies of one record come together), and
// its errors in the order of the notes.
func (v *view) sort() {
	slices.SortFunc(v.lines, compareViewLines)
	// the notes' errors in the order a read of every note meets them (by
	// the commit noted, then the line), however the view was brought
	// forward
	slices.SortStableFunc(v.errors, func(a, b *NoteError) int {
		if c := bytes.Compare(a.Commit[:], b.Commit[:]); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
}

// compareViewLines is the view's order: by summary, then text, then commit.
func compareViewLines(a, b viewLine) int {
	if c := a.Summary.Compare(&b.Summary); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Text, b.Text); c != 0 {
		return c
	}
	return bytes.Compare(a.commit[:], b.commit[:])
}

// add reads a note's lines into the view.
func (v *view) add(obj gitstore.Hash, data []byte) {
	// (the lines point into the copy)
	eachNoteLine(v.text.copy(data), obj, false, func(ln Line) {
		if len(v.lines) == cap(v.lines) {
			// Doubled, not grown by a quarter as append grows a large
			// slice: a view of 100,000 lines is 20 MB, and each growth
			// copies it.
			v.lines = slices.Grow(v.lines, max(1, len(v.lines)))
		}
		v.lines = append(v.lines, viewLine{ln, obj})
	}, func(e *NoteError) { v.errors = append(v.errors, e) })
}

// The file: the magic line and the notes commit, then each line in order
// (its commit, its index, cycle, and the lengths then the bytes of its
// text, id, target, result and timestamp, then a CRC-32C of all that), a
// zero commit as the end mark, then each error (its commit, line number,
// and the lengths then the bytes of its text and message, then a CRC-32C),
// then the offset of each line in the file, and the footer: the number of
// lines, the offset of the errors and viewEnd. The offsets let a reader
// take the last lines without reading the others (readViewTail); a line is
// taken only when its CRC holds and its index is the one the reader looked
// for, so that a damaged byte anywhere makes the file unread, never a
// record. Reading it copies nothing: the lines point into it.
func (v *view) save(path string) error {
	// The lines of quarantine records, by index: the few a listing of
	// the quarantined goals reads (Quarantines), without the rest.
	var quarantined []uint32
	for i, ln := range v.lines {
		if ln.commit.IsZero() {
			return errors.New("a ledger line without a commit")
		}
		if string(ln.Summary.Result) == ledger.Quarantined {
			quarantined = append(quarantined, uint32(i))
		}
	}
	// Written as it is made (a view of 100,000 records is 46 MB): pos
	// counts the bytes, for the offsets.
	return WriteStateFile(path, func(w *bufio.Writer) error {
		pos := 0
		var sum uint32 // the CRC-32C of what was put since the last check
		put := func(b []byte) {
			w.Write(b) // an error sticks in w: Flush returns it
			pos += len(b)
			sum = crc32.Update(sum, castagnoli, b)
		}
		var num [4]byte
		put32 := func(n int) {
			binary.BigEndian.PutUint32(num[:], uint32(n))
			put(num[:])
		}
		check := func() {
			binary.BigEndian.PutUint32(num[:], sum)
			w.Write(num[:])
			pos += 4
			sum = 0
		}
		put([]byte(viewMagic))
		put(v.notes[:])
		offsets := make([]uint32, 0, len(v.lines))
		for i, ln := range v.lines {
			if pos > math.MaxUint32 {
				return errors.New("the view is too large")
			}
			offsets = append(offsets, uint32(pos))
			s := &ln.Summary
			sum = 0
			put(ln.commit[:])
			for _, n := range [...]int{i, s.Cycle, len(ln.Text), len(s.ID), len(s.Target), len(s.Result), len(s.Timestamp)} {
				put32(n)
			}
			for _, b := range [][]byte{ln.Text, s.ID, s.Target, s.Result, s.Timestamp} {
				put(b)
			}
			check()
		}
		put(gitstore.ZeroHash[:])
		errStart := pos
		for _, e := range v.errors {
			msg := e.Err.Error()
			sum = 0
			put(e.Commit[:])
			put32(e.Line)
			put32(len(e.Text))
			put32(len(msg))
			put([]byte(e.Text))
			put([]byte(msg))
			check()
		}
		if pos > math.MaxUint32 {
			return errors.New("the view is too large")
		}
		for _, q := range quarantined {
			put32(int(q))
		}
		for _, o := range offsets {
			put32(int(o))
		}
		put32(len(quarantined))
		put32(len(offsets))
		put32(errStart)
		put([]byte(viewEnd))
		return nil
	})
}

const (
	viewEnd    = "VIEW-END"
	viewFooter = 12 + len(viewEnd) // quarantine lines, lines, errors' offset, the end mark
)

// viewLayout is where the parts of a view file are: the lines' offsets
// start at table, the indexes of the quarantine records' lines at qtable
// (k of them), the errors at errStart; n lines.
type viewLayout struct {
	n, k, errStart, table, qtable int
}

// layout checks the header and the footer of a view file of size bytes
// (head: its start, foot: its last viewFooter bytes).
func layout(head, foot []byte, size int) (viewLayout, bool) {
	if size < len(viewMagic)+40+viewFooter || !bytes.HasPrefix(head, []byte(viewMagic)) || string(foot[12:]) != viewEnd {
		return viewLayout{}, false
	}
	k := int(binary.BigEndian.Uint32(foot))
	n := int(binary.BigEndian.Uint32(foot[4:]))
	errStart := int(binary.BigEndian.Uint32(foot[8:]))
	table := size - viewFooter - 4*n
	qtable := table - 4*k
	if n < 0 || k < 0 || k > n || qtable < len(viewMagic)+40 || errStart < len(viewMagic)+40 || errStart > qtable {
		return viewLayout{}, false
	}
	return viewLayout{n: n, k: k, errStart: errStart, table: table, qtable: qtable}, true
}

// viewLineHead is the size of a line record before its text: its commit,
// index, cycle and five lengths.
const viewLineHead = 20 + 4 + 4 + 5*4

// parseViewLine reads one line record at the start of d, which must be the
// line of index want and hold its CRC.
func parseViewLine(d []byte, want int) (ln viewLine, rest []byte, ok bool) {
	if len(d) < viewLineHead+4 {
		return ln, nil, false
	}
	start := d
	copy(ln.commit[:], d)
	if int(binary.BigEndian.Uint32(d[20:])) != want {
		return ln, nil, false
	}
	ln.Summary.Cycle = int(int32(binary.BigEndian.Uint32(d[24:])))
	var lens [5]int
	for i := range lens {
		lens[i] = int(binary.BigEndian.Uint32(d[28+4*i:]))
	}
	d = d[viewLineHead:]
	dst := []*[]byte{&ln.Text, &ln.Summary.ID, &ln.Summary.Target, &ln.Summary.Result, &ln.Summary.Timestamp}
	for i, p := range dst {
		if lens[i] > len(d) {
			return ln, nil, false
		}
		*p, d = d[:lens[i]:lens[i]], d[lens[i]:]
	}
	if len(d) < 4 {
		return ln, nil, false
	}
	n := len(start) - len(d)
	if crc32.Checksum(start[:n], castagnoli) != binary.BigEndian.Uint32(d) {
		return ln, nil, false
	}
	return ln, d[4:], !ln.commit.IsZero()
}

// parseViewErrors reads the errors' records, which fill d.
func parseViewErrors(d []byte) ([]*NoteError, bool) {
	var out []*NoteError
	for len(d) > 0 {
		if len(d) < 36 {
			return nil, false
		}
		start := d
		e := &NoteError{}
		copy(e.Commit[:], d)
		line := int(binary.BigEndian.Uint32(d[20:]))
		tn, mn := int(binary.BigEndian.Uint32(d[24:])), int(binary.BigEndian.Uint32(d[28:]))
		d = d[32:]
		if tn > len(d) || mn > len(d)-tn || len(d)-tn-mn < 4 {
			return nil, false
		}
		if crc32.Checksum(start[:32+tn+mn], castagnoli) != binary.BigEndian.Uint32(d[tn+mn:]) {
			return nil, false
		}
		e.Line, e.Text, e.Err = line, string(d[:tn]), errors.New(string(d[tn:tn+mn]))
		d = d[tn+mn+4:]
		out = append(out, e)
	}
	return out, true
}

// viewNotes is the notes commit the saved view at path says it is of,
// read from its first bytes only; ok is false when there is no view or it
// does not begin as one. readView checks the rest.
func viewNotes(path string) (h gitstore.Hash, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return h, false
	}
	defer f.Close()
	var head [len(viewMagic) + 20]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:len(viewMagic)]) != viewMagic {
		return h, false
	}
	copy(h[:], head[len(viewMagic):])
	return h, true
}

func readView(path string) (*view, error) {
	data, err := ReadStateFile(path, math.MaxInt)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The lines of a view read point into data; one that is not let go.
	kept := false
	defer func() {
		if !kept {
			Unmap(data)
		}
	}()
	bad := fmt.Errorf("%s: not a ledger view", path)
	if len(data) < viewFooter {
		return nil, bad
	}
	lay, ok := layout(data, data[len(data)-viewFooter:], len(data))
	if !ok {
		return nil, bad
	}
	v := &view{lines: make([]viewLine, 0, lay.n)}
	copy(v.notes[:], data[len(viewMagic):])
	d := data[len(viewMagic)+20 : lay.errStart]
	for len(d) > 20 {
		ln, rest, ok := parseViewLine(d, len(v.lines))
		if !ok {
			return nil, bad
		}
		v.lines, d = append(v.lines, ln), rest
	}
	if len(d) != 20 || !bytes.Equal(d, gitstore.ZeroHash[:]) || len(v.lines) != lay.n {
		return nil, bad
	}
	if v.errors, ok = parseViewErrors(data[lay.errStart:lay.qtable]); !ok {
		return nil, bad
	}
	kept = true
	v.mapped = data
	return v, nil
}

// viewFile is a saved view opened to read a few of its lines: its
// layout, checked, and its errors, read whole.
type viewFile struct {
	f      *os.File
	lay    viewLayout
	errors []*NoteError
}

// openView opens the view saved at path when it describes the notes
// commit notes; nil (and no error) when there is none, or it is damaged
// or of another ledger: the caller reads in full.
func openView(path string, notes gitstore.Hash) (*viewFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vf, err := checkView(f, notes)
	if vf == nil {
		f.Close()
	}
	return vf, err
}

func checkView(f *os.File, notes gitstore.Hash) (*viewFile, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := int(fi.Size())
	head := make([]byte, len(viewMagic)+20)
	foot := make([]byte, viewFooter)
	if size < len(head)+viewFooter {
		return nil, nil
	}
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, nil
	}
	if _, err := f.ReadAt(foot, int64(size-viewFooter)); err != nil {
		return nil, nil
	}
	lay, ok := layout(head, foot, size)
	if !ok || !bytes.Equal(head[len(viewMagic):], notes[:]) {
		return nil, nil // damaged, or of another ledger
	}
	errs := make([]byte, lay.qtable-lay.errStart)
	if _, err := f.ReadAt(errs, int64(lay.errStart)); err != nil {
		return nil, nil
	}
	vf := &viewFile{f: f, lay: lay}
	if vf.errors, ok = parseViewErrors(errs); !ok {
		return nil, nil
	}
	return vf, nil
}

func (vf *viewFile) close() { vf.f.Close() }

// read is the bytes of the file from from to to, when they are in its
// lines.
func (vf *viewFile) read(from, to int) ([]byte, bool) {
	if from < len(viewMagic)+20 || to < from || to > vf.lay.errStart-20 {
		return nil, false
	}
	d := make([]byte, to-from)
	if _, err := vf.f.ReadAt(d, int64(from)); err != nil {
		return nil, false
	}
	return d, true
}

// span is where line i's record is in the file, from the offsets at its
// end.
func (vf *viewFile) span(i int) (from, to int, ok bool) {
	var at [8]byte // this line's offset, and the next's
	k := 8
	if i == vf.lay.n-1 {
		k = 4
	}
	if _, err := vf.f.ReadAt(at[:k], int64(vf.lay.table+4*i)); err != nil {
		return 0, 0, false
	}
	from, to = int(binary.BigEndian.Uint32(at[:])), vf.lay.errStart-20
	if k == 8 {
		to = int(binary.BigEndian.Uint32(at[4:]))
	}
	return from, to, from >= len(viewMagic)+20 && to > from && to <= vf.lay.errStart-20
}

// lines reads lines from to to (exclusive), each checked (its CRC, its
// index).
func (vf *viewFile) lines(from, to int) ([]viewLine, bool) {
	if from == to {
		return nil, true
	}
	start, _, ok1 := vf.span(from)
	_, end, ok2 := vf.span(to - 1)
	if !ok1 || !ok2 {
		return nil, false
	}
	d, ok := vf.read(start, end)
	if !ok {
		return nil, false
	}
	out := make([]viewLine, 0, to-from)
	for i := from; i < to; i++ {
		ln, rest, ok := parseViewLine(d, i)
		if !ok {
			return nil, false
		}
		out, d = append(out, ln), rest
	}
	return out, len(d) == 0
}

// readViewTail reads the last m lines of the view saved at path, and all
// its errors, when it describes the notes commit notes (else nil): the
// file's other lines are not read. partial says whether lines were left.
func readViewTail(path string, notes gitstore.Hash, m int) (v *view, partial bool, err error) {
	vf, err := openView(path, notes)
	if vf == nil {
		return nil, false, err
	}
	defer vf.close()
	n := vf.lay.n
	if m < 0 || m > n {
		m = n
	}
	v = &view{notes: notes, errors: vf.errors}
	var ok bool
	if v.lines, ok = vf.lines(n-m, n); !ok {
		return nil, false, nil
	}
	return v, m < n, nil
}

// readViewQuarantined reads, from the view saved at path, the lines of
// quarantine records (with all the view's errors), when it describes the
// notes commit notes (else nil): the footer's index names them, so that
// only they are read, whatever the ledger's size.
func readViewQuarantined(path string, notes gitstore.Hash) (*view, error) {
	vf, err := openView(path, notes)
	if vf == nil {
		return nil, err
	}
	defer vf.close()
	q := make([]byte, vf.lay.table-vf.lay.qtable) // the index
	if _, err := vf.f.ReadAt(q, int64(vf.lay.qtable)); err != nil {
		return nil, nil
	}
	v := &view{notes: notes, errors: vf.errors}
	last := -1
	for ; len(q) >= 4; q = q[4:] {
		i := int(binary.BigEndian.Uint32(q))
		if i <= last || i >= vf.lay.n {
			return nil, nil
		}
		last = i
		lns, ok := vf.lines(i, i+1)
		if !ok || string(lns[0].Summary.Result) != ledger.Quarantined {
			return nil, nil
		}
		v.lines = append(v.lines, lns[0])
	}
	return v, nil
}

// SavedRecord is a record as the ledger's saved view holds it: its
// canonical line and the commit whose note holds it.
type SavedRecord struct {
	Commit gitstore.Hash
	Line   []byte
}

// SavedView reads the ledger's saved view as it is, without bringing it up
// to date: the notes commit it describes and its records. ok is false when
// there is none that reads. It is what repair puts back from when that
// notes commit is no longer in the object store.
func (l *Ledger) SavedView() (notes gitstore.Hash, records []SavedRecord, ok bool) {
	v, err := readView(l.viewPath())
	if err != nil || v == nil {
		return gitstore.ZeroHash, nil, false
	}
	defer Unmap(v.mapped)
	records = make([]SavedRecord, 0, len(v.lines))
	for _, ln := range v.lines {
		records = append(records, SavedRecord{Commit: ln.commit, Line: bytes.Clone(ln.Text)})
	}
	return v.notes, records, true
}

// readViewCycle reads, from the view saved at path, the lines of the
// records of cycle n (with all the view's errors), when it describes the
// notes commit notes (else nil): the lines are in cycle order, so a binary
// search over the offsets at the file's end finds them, reading a few
// dozen lines whatever the ledger's size.
func readViewCycle(path string, notes gitstore.Hash, n int) (*view, error) {
	vf, err := openView(path, notes)
	if vf == nil {
		return nil, err
	}
	defer vf.close()
	bad := false
	cycleAt := func(i int) int {
		lns, ok := vf.lines(i, i+1)
		if !ok {
			bad = true
			return 0
		}
		return lns[0].Summary.Cycle
	}
	lo := sort.Search(vf.lay.n, func(i int) bool { return !bad && cycleAt(i) >= n })
	hi := lo + sort.Search(vf.lay.n-lo, func(i int) bool { return !bad && cycleAt(lo+i) > n })
	if bad {
		return nil, nil
	}
	lns, ok := vf.lines(lo, hi)
	if !ok {
		return nil, nil
	}
	for _, ln := range lns {
		if ln.Summary.Cycle != n {
			return nil, nil
		}
	}
	return &view{notes: notes, errors: vf.errors, lines: lns}, nil
}
