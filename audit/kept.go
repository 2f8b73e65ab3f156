package audit

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// What verify keeps for the next verify is one file, the common git dir's
// evolve/verify-kept. It holds four sections:
//
//   - the state: a summary of each record and the commits of HEAD's
//     history whose trailers name a cycle (verifystate.go);
//   - the keys: each record's summaries filed by key in a hash table, read
//     where the file is mapped (delta.go);
//   - the delta: the findings of the checks, and the summaries added since
//     the keys were written (delta.go);
//   - the objects: the loose objects there were, with the packs, which the
//     other sections stand for (verifyobjects.go).
//
// The layout: the magic line, the format (one byte) and a secret (16
// random bytes), then one generation or more. A generation is the sections
// it writes, each in a layout of its own that begins with a magic line and
// carries its own checks, then its table: each section's offset in the
// file and its length (8 bytes little endian each), in the order above,
// the length of the file up to the table's end (8 bytes), and a seal, the
// first 16 bytes of the SHA-256 of the magic line, the format, the secret,
// the table and the length. A reader takes the last generation's table,
// whose length must be the file's and whose seal must hold; a section of
// length 0 is absent. The container checks only its table: the keys are
// checked a block at a time, as a lookup reads them, never whole (a
// verify after a few records reads a few hundred of their blocks).
//
// A verify that read every summary writes the file anew, with a new
// secret, by one rename. A verify after a few records appends a
// generation of the delta and the objects, whose table names the state
// and the keys where an earlier one wrote them: it writes the findings and
// the summaries added since the keys were written, and the objects' names,
// not the ledger's summaries. It appends under a lock on the file, and
// only to the file it read (its size and its secret as it read them);
// else, or when what generations before left behind would be more than
// what the last one names and keptSlack, it writes the file anew. A reader reads under a shared lock
// (store.ReadStateFile), so that it reads no part of an append; an append
// changes no byte before the file's end. A reader that could not have the
// lock and finds the file part way through an append finds a length that
// is not the file's, or a seal that does not hold: bytes in the sections
// that a note from another clone brought cannot make a seal without this
// file's secret (what can read the git directory can read the secret, and
// write the file besides: that is the guard's to answer). A verify that
// would write what is there writes nothing.
//
// The state and the delta name the token of the keys they were written
// with, which a reader checks; what keeps the objects with the sections
// they stand for is the table that names them all (a file forged whole is
// no more refused than a forged file of each was: the guard of an agent's
// turn removes a cache the turn changed). The file is a cache: a missing
// or damaged one, or a damaged section, means a full read from git, whose
// answer is the same.

const (
	keptMagic  = "git-evolve verify kept\n"
	keptFormat = 2
	// keptHead is the magic line, the format and the secret.
	keptHead = len(keptMagic) + 1 + 16
	// keptTail is a generation's table, the file's length and the seal.
	keptTail = keptSections*16 + 8 + 16
	// maxKeptFile bounds the file read back.
	maxKeptFile = maxStateFile
	// keptSlack is how many bytes the generations before the last may
	// leave behind beyond what the last one names, before a verify writes
	// the file anew rather than append to it.
	keptSlack = 1 << 20
)

// The sections, in the table's order.
const (
	secState = iota
	secKeys
	secDelta
	secObjects
	keptSections
)

// olderKept are the files an older git-evolve kept the sections in: a
// write of verify-kept removes them.
var olderKept = []string{"verify-state", "verify-keys", "verify-delta", "verify-objects"}

func keptPath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "verify-kept")
}

// keptFile is verify-kept as read: mapped (or read, when small) until the
// last of those that hold it lets it go (release). The summaries a verify
// reads from the state and the keys point into it.
type keptFile struct {
	data []byte
	sec  [keptSections][]byte
	off  [keptSections]uint64 // where each section starts in the file
	head [keptHead]byte       // the magic line, the format and the secret
	mu   sync.Mutex
	refs int

	objsOnce sync.Once
	objs     *keptObjects // the objects section, decoded (objects)
}

// objects is the objects section decoded (once: it is read at the start
// of a verify and again as it keeps what it read), nil when k is nil, or
// the section is absent, too large or damaged.
func (k *keptFile) objects() *keptObjects {
	if k == nil {
		return nil
	}
	k.objsOnce.Do(func() {
		if sec := k.sec[secObjects]; len(sec) > 0 && len(sec) <= maxObjectsFile {
			// a copy: what it decodes outlives the mapping
			k.objs, _ = decodeObjects(bytes.Clone(sec))
		}
	})
	return k.objs
}

// openKept reads verify-kept: nil when there is none, or its last table
// is damaged.
func openKept(repo *gitstore.Repo) *keptFile {
	data, err := store.ReadStateFile(keptPath(repo), maxKeptFile)
	if err != nil {
		return nil
	}
	k, ok := parseKept(data)
	if !ok {
		gitstore.Tracef("verify: %s is damaged: the ledger is read from git", keptPath(repo))
		store.Unmap(data)
		return nil
	}
	k.refs = 1
	return k
}

// parseKept reads the last generation's table; each section is checked by
// its reader.
func parseKept(data []byte) (*keptFile, bool) {
	if len(data) < keptHead+keptTail || string(data[:len(keptMagic)]) != keptMagic || data[len(keptMagic)] != keptFormat {
		return nil, false
	}
	end := len(data) - keptTail
	table := data[end : end+keptSections*16+8]
	if binary.LittleEndian.Uint64(table[keptSections*16:]) != uint64(len(data)) ||
		keptSeal(data[:keptHead], table) != [16]byte(data[len(data)-16:]) {
		return nil, false
	}
	k := &keptFile{data: data, head: [keptHead]byte(data[:keptHead])}
	for i := range k.sec {
		off, n := binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])
		if off < uint64(keptHead) || off > uint64(end) || n > uint64(end)-off {
			return nil, false
		}
		k.sec[i], k.off[i] = data[off:off+n:off+n], off
	}
	return k, true
}

// keptSeal seals a generation's table (with the file's length) to the
// file's head.
func keptSeal(head, table []byte) [16]byte {
	h := sha256.New()
	h.Write(head)
	h.Write(table)
	return [16]byte(h.Sum(nil))
}

// keptTable is a generation's table of sections at offs of lengths ns,
// ending the file at end, sealed to head.
func keptTable(head []byte, offs [keptSections]uint64, ns [keptSections]int, end int) []byte {
	table := make([]byte, 0, keptTail)
	for i := range offs {
		table = binary.LittleEndian.AppendUint64(table, offs[i])
		table = binary.LittleEndian.AppendUint64(table, uint64(ns[i]))
	}
	table = binary.LittleEndian.AppendUint64(table, uint64(end))
	seal := keptSeal(head, table)
	return append(table, seal[:]...)
}

// section is the bytes of section i: empty when it is absent, or k is nil.
func (k *keptFile) section(i int) []byte {
	if k == nil {
		return nil
	}
	return k.sec[i]
}

// retain takes another hold of k, for a reader that outlives the one that
// opened it.
func (k *keptFile) retain() *keptFile {
	if k != nil {
		k.mu.Lock()
		k.refs++
		k.mu.Unlock()
	}
	return k
}

// release lets go of a hold of k: the last one undoes the mapping, once
// nothing read from it points there.
func (k *keptFile) release() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.refs--; k.refs == 0 {
		store.Unmap(k.data)
		k.data, k.sec = nil, [keptSections][]byte{}
	}
}

// keptPart is a section of a new verify-kept: written anew by write, or
// made in memory (b; nil is absent), or copied as it is from the file the
// verify built on.
type keptPart struct {
	write  func(*bufio.Writer)
	b      []byte
	copied bool
}

// keptParts are the sections of a new verify-kept, in the table's order.
type keptParts [keptSections]keptPart

// countWriter counts what passes through it.
type countWriter struct {
	w *bufio.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// writeKept replaces verify-kept, by one rename, with a file of a new
// secret and one generation of its sections: each written by write, else
// the bytes of parts (none: absent). It removes the files an older
// git-evolve kept them in. A file that cannot be written is let be: the
// one before stays whole.
func writeKept(repo *gitstore.Repo, parts [keptSections][]byte, write [keptSections]func(*bufio.Writer)) error {
	head := append([]byte(keptMagic), keptFormat)
	head = append(head, make([]byte, 16)...)
	if _, err := rand.Read(head[len(head)-16:]); err != nil {
		return err
	}
	err := store.WriteStateFile(keptPath(repo), func(out *bufio.Writer) error {
		out.Write(head)
		c := &countWriter{w: out, n: len(head)}
		w := bufio.NewWriterSize(c, 64<<10)
		var (
			offs [keptSections]uint64
			ns   [keptSections]int
		)
		for i := range parts {
			off := c.n + w.Buffered()
			if write[i] != nil {
				write[i](w)
			} else {
				w.Write(parts[i])
			}
			offs[i], ns[i] = uint64(off), c.n+w.Buffered()-off
		}
		if err := w.Flush(); err != nil {
			return err
		}
		_, err := out.Write(keptTable(head, offs, ns, c.n+keptTail))
		return err
	})
	if err != nil {
		return err
	}
	dir := filepath.Dir(keptPath(repo))
	for _, name := range olderKept {
		_ = os.Remove(filepath.Join(dir, name))
	}
	return nil
}

// appendKept appends to built, the file as a verify read it, a generation
// of the sections parts holds (nil: absent), whose table names built's
// own where copied says so. It reports whether it did: not when the file
// is no longer the one read (replaced, or appended to, since), another
// process holds its lock, or what the generations leave behind would
// outgrow the slack (keptSlack, and as much as the sections named).
func appendKept(repo *gitstore.Repo, built *keptFile, parts [keptSections][]byte, copied [keptSections]bool) bool {
	size := len(built.data)
	var (
		gen  []byte
		offs [keptSections]uint64
		ns   [keptSections]int
	)
	live := 0
	for i := range parts {
		if copied[i] {
			offs[i], ns[i] = built.off[i], len(built.sec[i])
		} else {
			offs[i], ns[i] = uint64(size+len(gen)), len(parts[i])
			gen = append(gen, parts[i]...)
		}
		live += ns[i]
	}
	end := size + len(gen) + keptTail
	if end-keptHead-keptTail-live > keptSlack+live {
		return false
	}
	gen = append(gen, keptTable(built.head[:], offs, ns, end)...)
	ok, err := store.AppendStateFile(keptPath(repo), func(f *os.File, now int64) bool {
		var head [keptHead]byte
		_, err := f.ReadAt(head[:], 0)
		return now == int64(size) && err == nil && head == built.head
	}, gen)
	return ok && err == nil
}

// keepObjects is the objects section a verify that read the ledger with
// rd leaves beside what it writes: the loose objects there are now, with
// the packs the verify read. built is the file the verify built on (nil
// when it read from git alone): when an object its objects section lists
// is gone (a pack, or a loose one not packed since), or a pack the verify
// read, or a notes commit the ledger was read from (it went while the
// verify ran), or the alternates changed, ok is false and nothing may be
// kept.
func keepObjects(repo *gitstore.Repo, rd *ledgerReads, built *keptFile) (section []byte, ok bool) {
	dirs := objectDirs(repo)
	now, ok := looseObjects(dirs)
	packs := packNames(dirs)
	if ok && alternatesID(dirs) == rd.alternates && allIn(rd.packNames, packs) {
		types, err := repo.ObjectTypes(rd.sources)
		ok = err == nil && !slices.Contains(types, "")
	}
	if !ok {
		return nil, false
	}
	if len(built.section(secObjects)) > 0 {
		k := built.objects()
		if k == nil || !allIn(k.packs, packs) || !packedSince(repo, rd, notIn(k.loose, now)) {
			return nil, false
		}
	}
	// Every pack there is now: those the verify read, any a loose object
	// it listed went into since, and any a fetch added meanwhile.
	return appendObjects(nil, &keptObjects{packs: packs, alternates: rd.alternates, loose: now}), true
}

// keep writes what a verify leaves for the next one: the sections of parts,
// and the objects they stand for. When those objects cannot be vouched for
// (keepObjects), verify-kept is removed: the next verify reads from git
// alone. A verify that would write what built (the file it built on)
// already holds writes nothing.
func keep(repo *gitstore.Repo, rd *ledgerReads, built *keptFile, parts keptParts) {
	objects, ok := keepObjects(repo, rd, built)
	if !ok {
		gitstore.Tracef("verify: an object or a pack %s stands for is gone, or the alternates changed: it is removed", keptPath(repo))
		_ = os.Remove(keptPath(repo))
		return
	}
	parts[secObjects] = keptPart{b: objects}
	var (
		b     [keptSections][]byte
		write [keptSections]func(*bufio.Writer)
	)
	same := true
	for i, p := range parts {
		switch {
		case p.write != nil:
			write[i], same = p.write, false
		case p.copied:
			b[i] = built.section(i)
		default:
			b[i] = p.b
			same = same && bytes.Equal(p.b, built.section(i))
		}
	}
	if same {
		return
	}
	// After a few records: a generation of what changed, appended.
	var copied [keptSections]bool
	fresh := false
	for i, p := range parts {
		copied[i] = p.copied
		fresh = fresh || p.write != nil
	}
	if !fresh && built != nil && appendKept(repo, built, b, copied) {
		return
	}
	_ = writeKept(repo, b, write)
}
