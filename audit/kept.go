package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// What verify keeps for the next verify is one file, the common git dir's
// evolve/verify-kept, written whole by one rename: a reader sees what one
// verify left, never the parts of two. It holds four sections:
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
// The layout: the magic line, the format (one byte), the sections one
// after the other, each in a layout of its own that begins with a magic
// line and carries its own checks; then the table: each section's offset
// in the file and its length (8 bytes little endian each), in the order
// above, and the CRC-32C of the magic line, the format and the table (4
// bytes little endian). A section of length 0 is absent. The container
// checks only its table: the keys are checked a block at a time, as a
// lookup reads them, never whole (a verify after a few records reads a few
// hundred of their blocks).
//
// The state and the delta name the token of the keys they were written
// with, which a reader checks; what keeps the objects with the sections
// they stand for is the one rename (a file forged whole, its table summed
// again, is no more refused than a forged file of each was: the guard of
// an agent's turn removes a cache the turn changed). A verify after a few records copies the state and the keys as
// they are and writes the delta and the objects anew; a verify that
// changes neither writes nothing. The file is a cache: a missing or damaged one,
// or a damaged section, means a full read from git, whose answer is the
// same.

const (
	keptMagic  = "git-evolve verify kept\n"
	keptFormat = 1
	// keptTail is the table and its CRC.
	keptTail = keptSections*16 + 4
	// maxKeptFile bounds the file read back.
	maxKeptFile = maxStateFile
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
	mu   sync.Mutex
	refs int
}

// openKept reads verify-kept: nil when there is none, or its table is
// damaged.
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

// parseKept reads the container's table; each section is checked by its
// reader.
func parseKept(data []byte) (*keptFile, bool) {
	head := len(keptMagic) + 1
	if len(data) < head+keptTail || string(data[:len(keptMagic)]) != keptMagic || data[len(keptMagic)] != keptFormat {
		return nil, false
	}
	end := len(data) - keptTail
	table := data[end : len(data)-4]
	if keptSum(data[:head], table) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, false
	}
	k := &keptFile{data: data}
	for i := range k.sec {
		off, n := binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])
		if off < uint64(head) || off > uint64(end) || n > uint64(end)-off {
			return nil, false
		}
		k.sec[i] = data[off : off+n : off+n]
	}
	return k, true
}

func keptSum(head, table []byte) uint32 {
	return crc32.Update(crc32.Checksum(head, castagnoliTable()), castagnoliTable(), table)
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

// writeKept replaces verify-kept with its sections: each written by
// write, else the bytes of parts (none: absent). It removes the files an
// older git-evolve kept them in. A file that cannot be written is let be:
// the one before stays whole.
func writeKept(repo *gitstore.Repo, parts [keptSections][]byte, write [keptSections]func(*bufio.Writer)) error {
	err := store.WriteStateFile(keptPath(repo), func(out *bufio.Writer) error {
		head := append([]byte(keptMagic), keptFormat)
		out.Write(head)
		c := &countWriter{w: out, n: len(head)}
		w := bufio.NewWriterSize(c, 64<<10)
		table := make([]byte, 0, keptTail)
		for i := range parts {
			off := c.n + w.Buffered()
			if write[i] != nil {
				write[i](w)
			} else {
				w.Write(parts[i])
			}
			table = binary.LittleEndian.AppendUint64(table, uint64(off))
			table = binary.LittleEndian.AppendUint64(table, uint64(c.n+w.Buffered()-off))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		out.Write(table)
		_, err := out.Write(binary.LittleEndian.AppendUint32(nil, keptSum(head, table)))
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

// keepObjects is the objects section a verify that read the ledger with
// rd leaves beside what it writes: the loose objects there are now, with
// the packs the verify read. built is the file the verify built on (nil
// when it read from git alone): when an object its objects section lists
// is gone, or a notes commit the ledger was read from (it went while the
// verify ran), or the packs changed, ok is false and nothing may be kept.
func keepObjects(repo *gitstore.Repo, rd *ledgerReads, built *keptFile) (section []byte, ok bool) {
	now, ok := looseObjects(repo)
	if ok && packsID(repo) == rd.packs {
		types, err := repo.ObjectTypes(rd.sources)
		ok = err == nil && !slices.Contains(types, "")
	}
	if !ok {
		return nil, false
	}
	if old := built.section(secObjects); len(old) > 0 {
		if k, err := decodeObjects(bytes.Clone(old)); err == nil && k.packs == rd.packs {
			for _, h := range k.loose {
				if _, found := slices.BinarySearchFunc(now, h, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) }); !found {
					return nil, false
				}
			}
		}
	}
	return appendObjects(nil, &keptObjects{packs: rd.packs, loose: now}), true
}

// keep writes what a verify leaves for the next one: the sections of parts,
// and the objects they stand for. When those objects cannot be vouched for
// (keepObjects), verify-kept is removed: the next verify reads from git
// alone. A verify that would write what built (the file it built on)
// already holds writes nothing.
func keep(repo *gitstore.Repo, rd *ledgerReads, built *keptFile, parts keptParts) {
	objects, ok := keepObjects(repo, rd, built)
	if !ok {
		gitstore.Tracef("verify: an object %s stands for is gone, or the packs changed: it is removed", keptPath(repo))
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
	if !same {
		_ = writeKept(repo, b, write)
	}
}
