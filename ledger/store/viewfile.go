package store

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"sort"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// The saved view's file, format 5. The lines are kept in blocks of about
// viewBlockSize bytes each, compressed with DEFLATE (RFC 1951): at 100,000
// records the file is a ninth of format 4's 47 MB, which held each line
// and its summary fields in full, beside a 48-byte head. The rest is not
// compressed, so that a reader of a few lines finds them without
// inflating the others:
//
//	the magic line (viewMagic) and the notes commit the view describes
//	the blocks, one after the other
//	the errors: each a commit, line number, the lengths then the bytes of
//	  its text and message, and a CRC-32C of all that (as in format 4)
//	the quarantine table: the index of each quarantine record's line
//	the block table: for each block, its offset and size in the file, the
//	  size it inflates to, its first line's index and number of lines, the
//	  cycles of its first and last line, and a CRC-32C of its bytes
//	the footer: the number of quarantine lines, of blocks and of lines,
//	  the errors' offset, the CRC-32C of the quarantine table, the
//	  CRC-32C of the notes commit, the block table and the footer's
//	  fields before it, and viewEnd
//
// A block inflates to its lines, each: its cycle (a varint), the length
// then the bytes of its text, its commit as the place of its hex in the
// text (a record names the commit its note is on as its sha; 0 and the 20
// bytes when it does not), then each of its summary's id, target, result
// and timestamp as the place and length of those bytes in the text (0,
// the length and the bytes when the text does not hold them as they are). A block is taken only when its CRC
// holds, it inflates to exactly the size the table says (and no more is
// inflated: a size past what DEFLATE can reach from its bytes, or past
// maxViewBlock, is refused before anything is allocated), its lines fill
// it and their cycles are those the table says; the table only when its
// CRC holds and its blocks follow each other from the head to the errors.
// So a damaged byte anywhere makes the lines section unread, never a
// record.
//
// The lines are in cycle order, so the table finds the blocks of the last
// lines (readViewTail), of one cycle (readViewCycle, a binary search on
// the blocks' cycles) or of the quarantine records (readViewQuarantined)
// and only those are read and inflated. A view brought forward by a few
// notes is saved without compressing the ledger again: a block whose lines
// are all still there, in the same order and nothing between them, is
// copied as it is (the new records land in the last blocks).
const viewMagic = "git-evolve ledger view 5\n"

const (
	viewHead       = len(viewMagic) + 20
	viewEnd        = "VIEW-END"
	viewFooter     = 6*4 + len(viewEnd) // quarantine lines, blocks, lines, errors' offset, two CRCs, the end mark
	viewBlockEntry = 8 * 4
	// maxViewBlock is the most bytes a block may inflate to: a line
	// larger than that leaves the ledger with no saved view.
	maxViewBlock = 64 << 20
	// minViewLine is the fewest bytes a line takes in a block: its cycle,
	// its text's length and one byte, its commit (0 and 20 bytes) and
	// each summary field's place and length.
	minViewLine = 1 + 1 + 1 + 21 + 4*2
	// deflateRatio bounds what n bytes of DEFLATE inflate to: 258 bytes
	// for each back-reference, at best two bits each.
	deflateRatio = 1032
)

// viewBlockSize is the bytes of lines at which a block is closed: large
// enough for DEFLATE to find the repeats between lines (the view of
// 100,000 generated records is 5.5 MB in blocks of 16 KB, 4.9 MB in 32 KB,
// 4.6 MB in 64 KB), small enough that the few lines a reader shows cost
// little to inflate. The tests make it small.
var viewBlockSize = 32 << 10

// viewBlocksPacked counts the blocks save compressed (the others it
// copied): the tests read it.
var viewBlocksPacked int

// castagnoli is the CRC-32C table of the view's checks (computed by the
// processor where it can). hash/crc32 makes it once, at the first call,
// not when the process starts (a table made at the package's start cost
// every command 0.2 ms; one that reads no view, such as version, help or
// cycle status, never uses it).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// blockEntry is a block's row in the table.
type blockEntry struct {
	off, size, inflated int
	first, n            int // its lines: first..first+n-1
	lo, hi              int // the cycles of its first and last line
	sum                 uint32
}

func (e *blockEntry) put(b []byte) []byte {
	for _, x := range [...]int{e.off, e.size, e.inflated, e.first, e.n} {
		b = binary.BigEndian.AppendUint32(b, uint32(x))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(int32(e.lo)))
	b = binary.BigEndian.AppendUint32(b, uint32(int32(e.hi)))
	return binary.BigEndian.AppendUint32(b, e.sum)
}

func getBlockEntry(b []byte) blockEntry {
	u := func(i int) int { return int(binary.BigEndian.Uint32(b[4*i:])) }
	return blockEntry{off: u(0), size: u(1), inflated: u(2), first: u(3), n: u(4),
		lo: int(int32(binary.BigEndian.Uint32(b[20:]))), hi: int(int32(binary.BigEndian.Uint32(b[24:]))),
		sum: binary.BigEndian.Uint32(b[28:])}
}

// savedBlock is a block of the file a view was read from, which save
// copies when the view still holds its lines, in order, side by side.
type savedBlock struct {
	entry blockEntry
	raw   []byte  // its bytes, in the file
	texts []*byte // where each of its lines' text starts, as read
}

// appendViewLine appends a line's record in a block to b.
func appendViewLine(b []byte, ln *viewLine) []byte {
	b = binary.AppendVarint(b, int64(ln.Summary.Cycle))
	b = binary.AppendUvarint(b, uint64(len(ln.Text)))
	b = append(b, ln.Text...)
	var name [40]byte
	hex.Encode(name[:], ln.commit[:])
	if at := bytes.Index(ln.Text, name[:]); at >= 0 {
		b = binary.AppendUvarint(b, uint64(at)+1)
	} else {
		b = binary.AppendUvarint(b, 0)
		b = append(b, ln.commit[:]...)
	}
	s := &ln.Summary
	for _, f := range [...][]byte{s.ID, s.Target, s.Result, s.Timestamp} {
		at := -1
		if len(f) > 0 {
			at = bytes.Index(ln.Text, f)
		}
		if at < 0 {
			b = binary.AppendUvarint(b, 0)
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
			continue
		}
		b = binary.AppendUvarint(b, uint64(at)+1)
		b = binary.AppendUvarint(b, uint64(len(f)))
	}
	return b
}

// save writes the view to path. The blocks of the file it was read from
// whose lines are all still there, side by side, are copied as they are
// when they are full enough (half viewBlockSize: a smaller one, such as
// the last, is compressed again with the lines that follow it).
func (v *view) save(path string) error {
	var quarantined []uint32
	for i, ln := range v.lines {
		if ln.commit.IsZero() {
			return errors.New("a ledger line without a commit")
		}
		if ln.Summary.Cycle != int(int32(ln.Summary.Cycle)) {
			return errors.New("a cycle out of the view's range")
		}
		if string(ln.Summary.Result) == ledger.Quarantined {
			quarantined = append(quarantined, uint32(i))
		}
	}
	starts := make(map[*byte]int, len(v.blocks))
	for i, b := range v.blocks {
		if len(b.texts) > 0 && b.entry.inflated >= viewBlockSize/2 {
			starts[b.texts[0]] = i
		}
	}
	// reused is the saved block that the lines from i on begin with.
	reused := func(i int) *savedBlock {
		t := v.lines[i].Text
		if len(starts) == 0 || len(t) == 0 {
			return nil
		}
		k, ok := starts[&t[0]]
		if !ok {
			return nil
		}
		b := &v.blocks[k]
		if len(b.texts) > len(v.lines)-i {
			return nil
		}
		for j, p := range b.texts {
			if t := v.lines[i+j].Text; len(t) == 0 || &t[0] != p {
				return nil
			}
		}
		return b
	}
	// The lines are compressed before the view's file is locked (those
	// of 100,000 records, made anew, take 0.42 s), then written under the
	// lock as they are.
	var made bytes.Buffer
	w := bufio.NewWriterSize(&made, 64<<10)
	err := func(w *bufio.Writer) error {
		pos := 0
		put := func(b []byte) {
			w.Write(b) // an error sticks in w: Flush returns it
			pos += len(b)
		}
		put([]byte(viewMagic))
		put(v.notes[:])
		var table []byte
		var raw []byte // the lines of the block being made
		var packed bytes.Buffer
		var fw *flate.Writer // made for the first block compressed (1 MB of tables)
		first := 0           // the block being made starts at this line
		block := func(e blockEntry, data []byte) error {
			if pos > math.MaxUint32-len(data) {
				return errors.New("the view is too large")
			}
			e.off = pos
			table = e.put(table)
			put(data)
			return nil
		}
		flush := func(to int) error {
			if first == to {
				return nil
			}
			if len(raw) > maxViewBlock {
				return errors.New("a ledger line too large for the view")
			}
			packed.Reset()
			if fw == nil {
				fw, _ = flate.NewWriter(&packed, flate.DefaultCompression)
			} else {
				fw.Reset(&packed)
			}
			fw.Write(raw)
			if err := fw.Close(); err != nil {
				return err
			}
			e := blockEntry{size: packed.Len(), inflated: len(raw), first: first, n: to - first,
				lo: v.lines[first].Summary.Cycle, hi: v.lines[to-1].Summary.Cycle,
				sum: crc32.Checksum(packed.Bytes(), castagnoli())}
			raw, first = raw[:0], to
			viewBlocksPacked++
			return block(e, packed.Bytes())
		}
		for i := 0; i < len(v.lines); {
			if b := reused(i); b != nil {
				if err := flush(i); err != nil {
					return err
				}
				e := b.entry
				e.first = i
				if err := block(e, b.raw); err != nil {
					return err
				}
				i += e.n
				first = i
				continue
			}
			raw = appendViewLine(raw, &v.lines[i])
			i++
			if len(raw) >= viewBlockSize {
				if err := flush(i); err != nil {
					return err
				}
			}
		}
		if err := flush(len(v.lines)); err != nil {
			return err
		}
		errStart := pos
		var num [4]byte
		for _, e := range v.errors {
			msg := e.Err.Error()
			rec := append(e.Commit[:0:0], e.Commit[:]...)
			for _, n := range [...]int{e.Line, len(e.Text), len(msg)} {
				rec = binary.BigEndian.AppendUint32(rec, uint32(n))
			}
			rec = append(append(rec, e.Text...), msg...)
			binary.BigEndian.PutUint32(num[:], crc32.Checksum(rec, castagnoli()))
			put(rec)
			put(num[:])
		}
		if pos > math.MaxUint32 {
			return errors.New("the view is too large")
		}
		errEnd := pos
		var q []byte
		for _, i := range quarantined {
			q = binary.BigEndian.AppendUint32(q, i)
		}
		put(q)
		put(table)
		var foot []byte
		for _, n := range [...]int{len(quarantined), len(table) / viewBlockEntry, len(v.lines), errStart} {
			foot = binary.BigEndian.AppendUint32(foot, uint32(n))
		}
		foot = binary.BigEndian.AppendUint32(foot, crc32.Checksum(q, castagnoli()))
		foot = binary.BigEndian.AppendUint32(foot, tableSum(v.notes[:], table, foot, errEnd))
		put(foot)
		put([]byte(viewEnd))
		return nil
	}(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return err
	}
	var parts [Sections]*Part
	parts[SecLines] = &Part{Bytes: made.Bytes()}
	return PutKept(path, nil, parts)
}

// tableSum is the CRC-32C that guards the notes commit, the block table,
// the footer's fields before it and where the errors end (errEnd: each
// error carries its own CRC, and this one says how many bytes they take,
// so that an error cut out whole, or one put in twice, is seen).
func tableSum(notes, table, foot []byte, errEnd int) uint32 {
	sum := crc32.Update(0, castagnoli(), notes)
	sum = crc32.Update(sum, castagnoli(), table)
	sum = crc32.Update(sum, castagnoli(), foot[:20])
	return crc32.Update(sum, castagnoli(), binary.BigEndian.AppendUint32(nil, uint32(errEnd)))
}

// viewLayout is where the parts of a view file are: the errors at
// errStart, the quarantine table (k lines) at qtable, the block table (b
// blocks) at table; n lines; qsum and tsum the footer's CRCs.
type viewLayout struct {
	n, k, b, errStart, qtable, table int
	qsum, tsum                       uint32
}

// layout checks the header and the footer of a view file of size bytes
// (head: its first viewHead bytes, foot: its last viewFooter).
func layout(head, foot []byte, size int) (viewLayout, bool) {
	if size < viewHead+viewFooter || len(head) < viewHead || len(foot) != viewFooter ||
		!bytes.HasPrefix(head, []byte(viewMagic)) || string(foot[24:]) != viewEnd {
		return viewLayout{}, false
	}
	u := func(i int) int { return int(binary.BigEndian.Uint32(foot[4*i:])) }
	lay := viewLayout{k: u(0), b: u(1), n: u(2), errStart: u(3),
		qsum: binary.BigEndian.Uint32(foot[16:]), tsum: binary.BigEndian.Uint32(foot[20:])}
	if lay.k > size/4 || lay.b > size/viewBlockEntry {
		return viewLayout{}, false
	}
	lay.table = size - viewFooter - viewBlockEntry*lay.b
	lay.qtable = lay.table - 4*lay.k
	if lay.k > lay.n || lay.b > lay.n || (lay.b == 0) != (lay.n == 0) ||
		lay.qtable < viewHead || lay.errStart < viewHead || lay.errStart > lay.qtable {
		return viewLayout{}, false
	}
	return lay, true
}

// parseTable reads the block table (tab) of a file laid out as lay whose
// notes commit is notes and footer foot, checking its CRC and that its
// blocks fill the file's blocks and hold its lines in cycle order.
func parseTable(notes, tab, foot []byte, lay viewLayout) ([]blockEntry, bool) {
	if len(tab) != viewBlockEntry*lay.b || tableSum(notes, tab, foot, lay.qtable) != lay.tsum {
		return nil, false
	}
	out := make([]blockEntry, lay.b)
	off, line := viewHead, 0
	for i := range out {
		e := getBlockEntry(tab[viewBlockEntry*i:])
		if e.off != off || e.size > lay.errStart-off || e.first != line || e.n < 1 || e.n > lay.n-line ||
			e.lo > e.hi || i > 0 && e.lo < out[i-1].hi ||
			e.inflated > maxViewBlock || e.inflated > deflateRatio*e.size+1024 || e.n > e.inflated/minViewLine {
			return nil, false
		}
		out[i] = e
		off, line = off+e.size, line+e.n
	}
	return out, off == lay.errStart && line == lay.n
}

// inflater inflates blocks, one after the other.
type inflater struct {
	src bytes.Reader
	r   io.ReadCloser
}

// inflate appends the lines of the block of entry e, whose bytes are raw,
// to lines (and where their texts start to texts), inflated into memory
// alloc gives (new memory when nil); ok is false when it is not the block
// the table says.
func (f *inflater) inflate(e *blockEntry, raw []byte, alloc func(int) []byte, lines []viewLine, texts []*byte) ([]viewLine, []*byte, bool) {
	if len(raw) != e.size || crc32.Checksum(raw, castagnoli()) != e.sum {
		return nil, nil, false
	}
	f.src.Reset(raw)
	if f.r == nil {
		f.r = flate.NewReader(&f.src)
	} else if err := f.r.(flate.Resetter).Reset(&f.src, nil); err != nil {
		return nil, nil, false
	}
	var buf []byte // within what raw can inflate to (parseTable)
	if alloc != nil {
		buf = alloc(e.inflated)
	} else {
		buf = make([]byte, e.inflated)
	}
	if _, err := io.ReadFull(f.r, buf); err != nil {
		return nil, nil, false
	}
	var one [1]byte
	if n, err := f.r.Read(one[:]); n != 0 || err != io.EOF || f.src.Len() != 0 {
		return nil, nil, false // more than it says, or bytes past its end
	}
	return parseBlock(buf, e, lines, texts)
}

// parseBlock appends the lines of the block e, inflated to d, to lines,
// and where their texts start to texts.
func parseBlock(d []byte, e *blockEntry, lines []viewLine, texts []*byte) ([]viewLine, []*byte, bool) {
	if lines == nil {
		lines = make([]viewLine, 0, min(e.n, len(d)/minViewLine))
	}
	at0 := len(lines)
	// uvarint reads a length or a place of at most max.
	uvarint := func(max int) (int, bool) {
		x, k := binary.Uvarint(d)
		if k <= 0 || max < 0 || x > uint64(max) { // (a line shorter than a commit's hex holds no place of one)
			return 0, false
		}
		d = d[k:]
		return int(x), true
	}
	for i := 0; i < e.n; i++ {
		var ln viewLine
		c, k := binary.Varint(d)
		if k <= 0 || c != int64(int32(c)) {
			return nil, nil, false
		}
		d = d[k:]
		ln.Summary.Cycle = int(c)
		tn, ok := uvarint(len(d))
		if !ok || tn == 0 {
			return nil, nil, false
		}
		ln.Text, d = d[:tn:tn], d[tn:]
		switch at, ok := uvarint(tn - 40 + 1); {
		case !ok:
			return nil, nil, false
		case at == 0:
			if len(d) < 20 {
				return nil, nil, false
			}
			copy(ln.commit[:], d)
			d = d[20:]
		default:
			if _, err := hex.Decode(ln.commit[:], ln.Text[at-1:at-1+40]); err != nil {
				return nil, nil, false
			}
		}
		if ln.commit.IsZero() {
			return nil, nil, false
		}
		s := &ln.Summary
		for _, f := range [...]*[]byte{&s.ID, &s.Target, &s.Result, &s.Timestamp} {
			at, ok := uvarint(len(ln.Text) + 1)
			if !ok {
				return nil, nil, false
			}
			if at == 0 {
				n, ok := uvarint(len(d))
				if !ok {
					return nil, nil, false
				}
				*f, d = d[:n:n], d[n:]
				continue
			}
			n, ok := uvarint(len(ln.Text) - (at - 1))
			if !ok {
				return nil, nil, false
			}
			*f = ln.Text[at-1 : at-1+n : at-1+n]
		}
		if i == 0 && s.Cycle != e.lo || i > 0 && s.Cycle < lines[at0+i-1].Summary.Cycle || i == e.n-1 && s.Cycle != e.hi {
			return nil, nil, false
		}
		lines, texts = append(lines, ln), append(texts, &ln.Text[0])
	}
	return lines, texts, len(d) == 0
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
		if crc32.Checksum(start[:32+tn+mn], castagnoli()) != binary.BigEndian.Uint32(d[tn+mn:]) {
			return nil, false
		}
		e.Line, e.Text, e.Err = line, string(d[:tn]), errors.New(string(d[tn:tn+mn]))
		d = d[tn+mn+4:]
		out = append(out, e)
	}
	return out, true
}

// parseView reads a whole view file, every block inflated; ok is false
// when it is not one that reads. The view's blocks point into data.
func parseView(data []byte) (*view, bool) {
	if len(data) < viewHead+viewFooter {
		return nil, false
	}
	foot := data[len(data)-viewFooter:]
	lay, ok := layout(data, foot, len(data))
	if !ok {
		return nil, false
	}
	notes := data[len(viewMagic):viewHead]
	entries, ok := parseTable(notes, data[lay.table:len(data)-viewFooter], foot, lay)
	if !ok || crc32.Checksum(data[lay.qtable:lay.table], castagnoli()) != lay.qsum {
		return nil, false
	}
	// (n is at most a line for each few bytes the blocks inflate to,
	// which may be a thousand times the file's: the lines are grown as
	// they are read, beyond what the file's size suggests)
	v := &view{lines: make([]viewLine, 0, min(lay.n, len(data)/4)), blocks: make([]savedBlock, 0, len(entries))}
	copy(v.notes[:], notes)
	var in inflater
	var texts []*byte
	var arena []byte
	// alloc takes the blocks' memory from chunks of a few MB: a few
	// allocations rather than one a block, never more than the blocks
	// still to inflate say they need.
	left := 0 // what the blocks not inflated yet say they inflate to
	for _, e := range entries {
		left += e.inflated
	}
	alloc := func(n int) []byte {
		if n > cap(arena)-len(arena) {
			arena = make([]byte, 0, max(n, min(4<<20, left)))
		}
		left -= n
		at := len(arena)
		arena = arena[:at+n]
		return arena[at : at+n : at+n]
	}
	for _, e := range entries {
		raw := data[e.off : e.off+e.size]
		k := len(texts)
		v.lines, texts, ok = in.inflate(&e, raw, alloc, v.lines, texts)
		if !ok {
			return nil, false
		}
		v.blocks = append(v.blocks, savedBlock{entry: e, raw: raw, texts: texts[k:len(texts):len(texts)]})
	}
	if v.errors, ok = parseViewErrors(data[lay.errStart:lay.qtable]); !ok {
		return nil, false
	}
	return v, true
}

// viewNotes is the notes commit the saved view at path says it is of,
// read from its first bytes only; ok is false when there is no view or it
// does not begin as one. readView checks the rest.
func viewNotes(path string) (h gitstore.Hash, ok bool) {
	k := OpenKept(path)
	defer k.Release()
	sec := k.Section(SecLines)
	if len(sec) < viewHead || string(sec[:len(viewMagic)]) != viewMagic {
		return h, false
	}
	copy(h[:], sec[len(viewMagic):viewHead])
	return h, true
}

// viewFile is a saved view opened to read a few of its lines: its
// layout and block table, checked, its errors, read whole, and the blocks
// inflated so far.
type viewFile struct {
	k      *Kept  // the file, held until close
	data   []byte // the lines' section
	lay    viewLayout
	blocks []blockEntry
	errors []*NoteError
	qtable []byte // the quarantine table, unchecked
	in     inflater
	read   map[int][]viewLine
}

// openView opens the view saved at path when it describes the notes
// commit notes; nil (and no error) when there is none, or it is damaged
// or of another ledger: the caller reads in full.
func openView(path string, notes gitstore.Hash) (*viewFile, error) {
	k := OpenKept(path)
	if k == nil {
		return nil, nil
	}
	vf := checkView(k.Section(SecLines), notes)
	if vf == nil {
		k.Release()
		return nil, nil
	}
	vf.k = k
	return vf, nil
}

// checkView reads the layout, the tables and the errors of the view's
// section data, when it describes the notes commit notes; nil when it does
// not, or does not read.
func checkView(data []byte, notes gitstore.Hash) *viewFile {
	size := len(data)
	if size < viewHead+viewFooter {
		return nil
	}
	head, foot := data[:viewHead], data[size-viewFooter:]
	lay, ok := layout(head, foot, size)
	if !ok || !bytes.Equal(head[len(viewMagic):], notes[:]) {
		return nil // damaged, or of another ledger
	}
	vf := &viewFile{data: data, lay: lay, read: map[int][]viewLine{}}
	if vf.blocks, ok = parseTable(notes[:], data[lay.table:size-viewFooter], foot, lay); !ok {
		return nil
	}
	vf.qtable = data[lay.qtable:lay.table]
	if vf.errors, ok = parseViewErrors(data[lay.errStart:lay.qtable]); !ok {
		return nil
	}
	return vf
}

func (vf *viewFile) close() { vf.k.Release() }

// block is the lines of block i, read and inflated once.
func (vf *viewFile) block(i int) ([]viewLine, bool) {
	if lns, ok := vf.read[i]; ok {
		return lns, true
	}
	e := &vf.blocks[i]
	raw := vf.data[e.off : e.off+e.size]
	lns, _, ok := vf.in.inflate(e, raw, nil, nil, nil) // (room for the lines made once the block is checked)
	if !ok {
		return nil, false
	}
	vf.read[i] = lns
	return lns, true
}

// blockOf is the block that holds line i.
func (vf *viewFile) blockOf(i int) int {
	return sort.Search(len(vf.blocks), func(b int) bool { return vf.blocks[b].first+vf.blocks[b].n > i })
}

// lines reads lines from to to (exclusive), from the blocks that hold
// them.
func (vf *viewFile) lines(from, to int) ([]viewLine, bool) {
	if from < 0 || to > vf.lay.n || from > to {
		return nil, false
	}
	if from == to {
		return nil, true
	}
	out := make([]viewLine, 0, min(to-from, 4096)) // (the footer's count is not yet the blocks')
	for b := vf.blockOf(from); b < len(vf.blocks) && vf.blocks[b].first < to; b++ {
		lns, ok := vf.block(b)
		if !ok {
			return nil, false
		}
		e := &vf.blocks[b]
		out = append(out, lns[max(from, e.first)-e.first:min(to, e.first+e.n)-e.first]...)
	}
	return out, len(out) == to-from
}

// readViewTail reads the last m lines of the view saved at path, and all
// its errors, when it describes the notes commit notes (else nil): the
// blocks of the other lines are not read. partial says whether lines were
// left.
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
// notes commit notes (else nil): the quarantine table names them, so that
// only their blocks are read, whatever the ledger's size.
func readViewQuarantined(path string, notes gitstore.Hash) (*view, error) {
	vf, err := openView(path, notes)
	if vf == nil {
		return nil, err
	}
	defer vf.close()
	q := vf.qtable
	if crc32.Checksum(q, castagnoli()) != vf.lay.qsum {
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
	v.release()
	records = make([]SavedRecord, 0, len(v.lines))
	for _, ln := range v.lines {
		records = append(records, SavedRecord{Commit: ln.commit, Line: bytes.Clone(ln.Text)})
	}
	return v.notes, records, true
}

// readViewCycle reads, from the view saved at path, the lines of the
// records of cycle n (with all the view's errors), when it describes the
// notes commit notes (else nil): the lines are in cycle order, so a binary
// search over the cycles of the blocks' first and last lines finds the
// blocks that hold them (one or two), and only those are inflated.
func readViewCycle(path string, notes gitstore.Hash, n int) (*view, error) {
	vf, err := openView(path, notes)
	if vf == nil {
		return nil, err
	}
	defer vf.close()
	bs := vf.blocks
	lo := sort.Search(len(bs), func(b int) bool { return bs[b].hi >= n })
	hi := lo + sort.Search(len(bs)-lo, func(b int) bool { return bs[lo+b].lo > n })
	v := &view{notes: notes, errors: vf.errors}
	for b := lo; b < hi; b++ {
		lns, ok := vf.block(b)
		if !ok {
			return nil, nil
		}
		for _, ln := range lns {
			if ln.Summary.Cycle == n {
				v.lines = append(v.lines, ln)
			}
		}
	}
	return v, nil
}
