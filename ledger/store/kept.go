package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
)

// What reads derive from the ledger is kept in one file, the common git
// dir's evolve/ledger.view: the one view. It holds seven sections, each
// written by the code that reads it, in a layout of its own, checked by
// that code as it reads it (each but merged begins with a magic line and
// carries a CRC; merged is pairs of hashes, each asked of git or
// compared with one it was given):
//
//   - lines: the ledger's lines and where they are, in blocks, keyed by
//     the notes commit they describe (viewfile.go);
//   - merged: the remote-tracking copies the local ledger was found to
//     hold (merged.go);
//   - copies: the answers of the check a copy must pass to be read
//     (audit/copies.go);
//   - state, keys, delta, objects: what verify keeps for the next verify
//     (audit/kept.go).
//
// The layout: the magic line (which ends in the format's number) and a
// secret (16 random bytes), then one generation or more. A generation is the sections
// it writes, then its table: each section's offset in the file and its
// length (8 bytes little endian each), in the order above, the length of
// the file up to the table's end (8 bytes), and a seal, the first 16 bytes
// of the SHA-256 of the magic line, the secret, the table and the
// length. A reader takes the last generation's table, whose length
// must be the file's and whose seal must hold; a section of length 0 is
// absent. The container checks only its table: each section is checked by
// its reader, as it reads it (the keys a block at a time, never whole).
//
// A writer puts the sections it owns (PutKept): it appends, under an
// exclusive lock on the file, a generation of those it changed, whose
// table names every other section where the file has it then. A section
// the writer kept as it read it is named where it is when the file still
// has it there (same secret, same place), else written again from what
// the writer read: so a writer's sections always come from one read,
// whatever other writers did since, and no writer builds on another's. When
// the generations before would leave behind more than the last one names
// and keptSlack, the writer writes it anew, with a new secret, by one
// rename (still under the lock): its own sections and everyone else's as
// the file has them; a file that does not read, with its own alone. Readers read under a shared
// lock (ReadStateFile), so that they read no part of an append; one that
// could not have the lock and finds the file part way through an append
// finds a length that is not the file's, or a seal that does not hold:
// bytes in the sections (a note's text that another clone wrote) cannot
// make a seal without this file's secret (what can read the git directory
// can read the secret, and write the file besides: that is the guard's to
// answer). The file is a cache: a missing or damaged one, or a damaged
// section, means a read from git, whose answer is the same.

// The sections, in the table's order.
const (
	SecLines = iota
	SecMerged
	SecCopies
	SecState
	SecKeys
	SecDelta
	SecObjects
	Sections
)

// SectionNames name the sections, in the table's order.
var SectionNames = [Sections]string{"lines", "merged", "copies", "state", "keys", "delta", "objects"}

const (
	// keptMagic is the magic line, which ends in the format's number.
	keptMagic = "git-evolve view 1\n"
	// keptHead is the magic line and the secret.
	keptHead = len(keptMagic) + 16
	// keptTail is a generation's table, the file's length and the seal.
	keptTail = Sections*16 + 8 + 16
)

// keptSlack is how many bytes the generations before the last may leave
// behind beyond what the last one names, before a writer writes the file
// anew rather than append to it. The tests make it small.
var keptSlack = 1 << 20

// olderFiles are the files older versions kept the sections in: a write
// of the view anew removes them.
var olderFiles = []string{"verify-kept", "verify-state", "verify-keys", "verify-delta", "verify-objects", "merged", "copies"}

// ViewPath is where the view of repo's ledger is kept.
func ViewPath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "ledger.view")
}

// Kept is the view's file as read: mapped (or read, when small) until the
// last of those that hold it lets it go (Release). What a reader takes
// from a section points into it: a slice of a section is not to be read
// after the last Release (a mapping let go faults; copy what outlives it).
type Kept struct {
	data []byte
	sec  [Sections][]byte
	off  [Sections]uint64 // where each section starts in the file
	head [keptHead]byte   // the magic line and the secret
	mu   sync.Mutex
	refs int
}

// OpenKept reads the view's file at path: nil when there is none, or its
// last table is damaged.
func OpenKept(path string) *Kept {
	data, err := ReadStateFile(path, math.MaxInt)
	if err != nil {
		return nil
	}
	k, ok := parseKept(data)
	if !ok {
		// Read part way through a long append, perhaps, its writer's
		// lock not had: read again, waiting for it as a writer does.
		Unmap(data)
		if keptRetry != nil {
			keptRetry()
		}
		if data, err = readStateFile(path, math.MaxInt, writerTries); err != nil {
			return nil
		}
		k, ok = parseKept(data)
	}
	if !ok {
		gitstore.Tracef("%s is damaged: the ledger is read from git", path)
		Unmap(data)
		return nil
	}
	k.refs = 1
	return k
}

// keptRetry, when set, is called by OpenKept before it reads a file that
// did not read again: for the tests of a read part way through an append.
var keptRetry func()

// KeptOf is a Kept of sections made in memory, for the tests of a
// section's reader.
func KeptOf(sections [Sections][]byte) *Kept {
	return &Kept{sec: sections, refs: 1}
}

// parseKept reads the last generation's table; each section is checked by
// its reader.
func parseKept(data []byte) (*Kept, bool) {
	t, ok := tableIn(data)
	if !ok {
		return nil, false
	}
	k := &Kept{data: data, head: t.head}
	for i := range k.sec {
		k.sec[i], k.off[i] = data[t.off[i]:t.off[i]+t.n[i]:t.off[i]+t.n[i]], t.off[i]
	}
	return k, true
}

// tableIn is the last table of the file data, whole in memory.
func tableIn(data []byte) (*keptTable, bool) {
	return parseKeptTable(data[:min(len(data), keptHead)], data[max(0, len(data)-keptTail):], int64(len(data)))
}

// keptTable is a generation's table as read.
type keptTable struct {
	head [keptHead]byte
	off  [Sections]uint64
	n    [Sections]uint64
	size int64 // the file's length
}

// parseKeptTable reads the table of a file of size bytes from its head and its
// last keptTail bytes: false when the head is not the view's, the length
// is not the file's, the seal does not hold or a section is out of the
// file's range.
func parseKeptTable(head, tail []byte, size int64) (*keptTable, bool) {
	if size < int64(keptHead+keptTail) || len(head) != keptHead || len(tail) != keptTail ||
		string(head[:len(keptMagic)]) != keptMagic {
		return nil, false
	}
	table := tail[:Sections*16+8]
	if binary.LittleEndian.Uint64(table[Sections*16:]) != uint64(size) || keptSeal(head, table) != [16]byte(tail[keptTail-16:]) {
		return nil, false
	}
	t := &keptTable{head: [keptHead]byte(head), size: size}
	end := uint64(size) - keptTail
	for i := range t.off {
		off, n := binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])
		if off < uint64(keptHead) || off > end || n > end-off {
			return nil, false
		}
		t.off[i], t.n[i] = off, n
	}
	return t, true
}

// keptSeal seals a generation's table (with the file's length) to the
// file's head.
func keptSeal(head, table []byte) [16]byte {
	h := sha256.New()
	h.Write(head)
	h.Write(table)
	return [16]byte(h.Sum(nil))
}

// sealedTable is the table of sections at offs of lengths ns, ending the
// file at end, sealed to head.
func sealedTable(head []byte, offs, ns [Sections]uint64, end int64) []byte {
	table := make([]byte, 0, keptTail)
	for i := range offs {
		table = binary.LittleEndian.AppendUint64(table, offs[i])
		table = binary.LittleEndian.AppendUint64(table, ns[i])
	}
	table = binary.LittleEndian.AppendUint64(table, uint64(end))
	seal := keptSeal(head, table)
	return append(table, seal[:]...)
}

// Section is the bytes of section i: empty when it is absent, or k is nil.
func (k *Kept) Section(i int) []byte {
	if k == nil {
		return nil
	}
	return k.sec[i]
}

// held says whether k is still held (not let go by its last Release).
func (k *Kept) held() bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.refs > 0
}

// Retain takes another hold of k, for a reader that outlives the one that
// opened it.
func (k *Kept) Retain() *Kept {
	if k != nil {
		k.mu.Lock()
		k.refs++
		k.mu.Unlock()
	}
	return k
}

// Release lets go of a hold of k: the last one undoes the mapping, once
// nothing read from it points there.
func (k *Kept) Release() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.refs--; k.refs == 0 {
		Unmap(k.data)
		k.data, k.sec = nil, [Sections][]byte{}
	}
}

// Part is what a writer puts in a section it owns: written by Write as the
// file is written, or the bytes of Bytes (none: the section absent), or,
// Kept, the section as the file the writer read (built) holds it. One of
// the three: PutKept refuses a part of Write and Bytes, or Kept with no
// built. A nil part in PutKept's parts is another writer's section, left
// as the file has it; a Part of nothing empties the section.
//
// Write runs while the file's lock is held, and other writers wait for it
// (writerTries): it writes what is made already, not what takes long to
// make (the view's lines are compressed before, into Bytes).
type Part struct {
	Write func(*bufio.Writer) error
	Bytes []byte
	Kept  bool
}

// errKeptBusy is what PutKept says when another process held the file's
// lock longer than it waits: nothing is written.
var errKeptBusy = errors.New("the view is being written by another process")

// PutKept writes the sections parts holds (a nil part is another
// writer's, named where the file has it) to the view's file at path,
// built being the file as the writer read it (nil when none). A file
// that cannot be written is let be; the caller may pass the error by.
// Where nothing is locked (another system, or a file system that locks
// nothing), every write writes the file anew, with the others' sections
// as it read them.
func PutKept(path string, built *Kept, parts [Sections]*Part) error {
	for i, p := range parts {
		if p != nil && (p.Write != nil && p.Bytes != nil || p.Kept && !built.held() || p.Kept && (p.Write != nil || p.Bytes != nil)) {
			return fmt.Errorf("the view's %s section: a part of more than one kind, or kept from no file read", SectionNames[i])
		}
	}
	for try := 0; try < 4; try++ {
		if !canAppend {
			return putUnlocked(path, built, parts)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			// The first write: two at once are two renames, the last one
			// the file.
			return writeKeptAnew(path, nil, nil, built, parts)
		}
		if err != nil {
			return err
		}
		if keptOpened != nil {
			keptOpened()
		}
		done, err := putLocked(path, f, built, parts)
		f.Close()
		if done {
			return err
		}
	}
	return errKeptBusy
}

// keptOpened, when set, is called by PutKept once it has opened the file,
// before it takes its lock: for the tests of a file replaced meanwhile.
var keptOpened func()

// putUnlocked writes the file anew from what it holds, read whole and let
// go before the rename (a file open where it is renamed over is refused
// on some systems).
func putUnlocked(path string, built *Kept, parts [Sections]*Part) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return writeKeptAnew(path, nil, nil, built, parts)
	}
	if err != nil {
		return err
	}
	cur, _ := tableIn(data)
	return writeKeptAnew(path, bytes.NewReader(data), cur, built, parts)
}

// putLocked writes parts to the file f opened at path, under its lock; done
// is false when path names another file by the time the lock is had.
func putLocked(path string, f *os.File, built *Kept, parts [Sections]*Part) (done bool, err error) {
	locked, held := lockFile(f)
	if held {
		return true, errKeptBusy
	}
	if !locked {
		// a file system that locks nothing
		return true, putUnlocked(path, built, parts)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return true, err
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(fi, now) {
		return false, nil // replaced since it was opened: open it again
	}
	if !fi.Mode().IsRegular() {
		return true, errors.New(path + ": not a regular file")
	}
	cur := readTableOf(f, fi.Size())
	if cur == nil {
		return true, writeKeptAnew(path, f, cur, built, parts)
	}
	// Where each section will be: named where the file has it, or written
	// in this generation (new).
	var (
		offs, ns [Sections]uint64
		new      [Sections]bool
	)
	live, replaced := uint64(0), uint64(0)
	for i, p := range parts {
		switch {
		case p == nil:
			offs[i], ns[i] = cur.off[i], cur.n[i]
		case p.Kept && built != nil && built.head == cur.head && built.off[i] == cur.off[i] && uint64(len(built.sec[i])) == cur.n[i]:
			offs[i], ns[i] = cur.off[i], cur.n[i]
		default:
			new[i] = true
			replaced += cur.n[i]
		}
		live += cur.n[i]
	}
	// What the generations leave behind once the new sections replace
	// theirs (about as large, as far as can be told before they are
	// written): past the slack, the file is written anew.
	dead := uint64(cur.size) - uint64(keptHead+keptTail) - live + replaced
	if dead > live+uint64(keptSlack) {
		return true, writeKeptAnew(path, f, cur, built, parts)
	}
	w := &counter{w: io.NewOffsetWriter(f, cur.size), n: cur.size}
	bw := bufio.NewWriterSize(w, 256<<10)
	var werr error
	for i, p := range parts {
		if !new[i] {
			continue
		}
		at := w.n + int64(bw.Buffered())
		if err := writePart(bw, p, built, i); err != nil && werr == nil {
			werr = err
		}
		offs[i], ns[i] = uint64(at), uint64(w.n+int64(bw.Buffered())-at)
	}
	if werr != nil {
		// A section that could not be made: the file keeps its sections
		// as they were, under a table of this length.
		offs, ns = cur.off, cur.n
	}
	end := w.n + int64(bw.Buffered()) + keptTail
	bw.Write(sealedTable(cur.head[:], offs, ns, end))
	if err := bw.Flush(); err != nil {
		return true, err
	}
	return true, werr
}

// writePart writes part p of section i: by its Write, its Bytes, or
// built's section.
func writePart(w *bufio.Writer, p *Part, built *Kept, i int) error {
	switch {
	case p.Write != nil:
		return p.Write(w)
	case p.Kept:
		_, err := w.Write(built.Section(i))
		return err
	default:
		_, err := w.Write(p.Bytes)
		return err
	}
}

// readTableOf reads the last table of f, of size bytes: nil when it does
// not read.
func readTableOf(f *os.File, size int64) *keptTable {
	if size < int64(keptHead+keptTail) {
		return nil
	}
	var head [keptHead]byte
	var tail [keptTail]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil
	}
	if _, err := f.ReadAt(tail[:], size-keptTail); err != nil {
		return nil
	}
	t, _ := parseKeptTable(head[:], tail[:], size)
	return t
}

// counter counts what passes through it to w.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeKeptAnew replaces the view's file, by one rename, with one of a new
// secret and one generation: the sections of parts, and the others as
// cur, the table of src, names them (none when cur is nil: a file that does
// not read keeps nothing of another's). It removes the files older
// versions kept the sections in.
func writeKeptAnew(path string, src io.ReaderAt, cur *keptTable, built *Kept, parts [Sections]*Part) error {
	head := append([]byte(keptMagic), make([]byte, 16)...)
	if _, err := rand.Read(head[len(head)-16:]); err != nil {
		return err
	}
	err := WriteStateFile(path, func(out *bufio.Writer) error {
		c := &counter{w: out}
		w := bufio.NewWriterSize(c, 64<<10)
		w.Write(head)
		var offs, ns [Sections]uint64
		for i, p := range parts {
			at := c.n + int64(w.Buffered())
			switch {
			case p != nil:
				if err := writePart(w, p, built, i); err != nil {
					return err
				}
			case cur != nil:
				if _, err := io.Copy(w, io.NewSectionReader(src, int64(cur.off[i]), int64(cur.n[i]))); err != nil {
					return err
				}
			}
			offs[i], ns[i] = uint64(at), uint64(c.n+int64(w.Buffered())-at)
		}
		end := c.n + int64(w.Buffered()) + keptTail
		w.Write(sealedTable(head, offs, ns, end))
		return w.Flush()
	})
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	for _, name := range olderFiles {
		_ = os.Remove(filepath.Join(dir, name))
	}
	return nil
}

// SectionSums are the SHA-256 of each section of the view's file at path;
// ok is false when there is no file that reads.
func SectionSums(path string) (sums [Sections][32]byte, ok bool) {
	k := OpenKept(path)
	if k == nil {
		return sums, false
	}
	defer k.Release()
	for i := range sums {
		sums[i] = sha256.Sum256(k.Section(i))
	}
	return sums, true
}

// KeepUnchanged empties each section of the view's file at path whose
// bytes are no longer those whose sums were taken (SectionSums) before
// another process could write it, and removes the file when it does not
// read: what that process wrote is read by nobody, and the sections it
// left as they were stay.
func KeepUnchanged(path string, was [Sections][32]byte) {
	now, ok := SectionSums(path)
	if !ok {
		_ = os.Remove(path)
		return
	}
	var parts [Sections]*Part
	changed := false
	for i := range now {
		if now[i] != was[i] {
			parts[i], changed = &Part{}, true
		}
	}
	if changed && PutKept(path, nil, parts) != nil {
		_ = os.Remove(path)
	}
}
