package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
)

// What verify keeps (the summaries, the delta) stands for
// objects: the notes commits it read, their trees and notes. A kept answer
// is used only while every one of them is provably still here: an object
// in a pack stays while the pack does (a pack is never changed in place,
// and the packs are part of what each kept file was made from), and a
// loose object can be deleted on its own. So every verify that keeps what
// it read also lists, in verify-objects, the loose objects there were as
// it began (with the packs); the next one checks that each is still
// there before it uses anything kept. One that is gone (removed by hand,
// pruned, lost) sends the verify to git alone, which reads every object it
// stands for and reports one that is missing as a breach.
//
// The list only grows while the packs stay the same: a verify that finds
// every object listed still there lists, as it ends, the ones there are
// then, which include them.

const (
	objectsMagic  = "git-evolve verify objects\n"
	objectsFormat = 1
	// maxObjectsFile bounds the file read back (a repository that never
	// packs its objects lists many).
	maxObjectsFile = 64 << 20
)

func objectsPath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "verify-objects")
}

// looseObjects lists the loose objects of the repository and of its
// alternates, sorted. ok is false when a directory could not be read.
func looseObjects(repo *gitstore.Repo) (out []gitstore.Hash, ok bool) {
	for _, dir := range objectDirs(repo) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, false
		}
		for _, e := range entries {
			name := e.Name()
			if len(name) != 2 || !e.IsDir() || !isLowerHex(name) {
				continue
			}
			files, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				return nil, false
			}
			for _, f := range files {
				if h, err := gitstore.ParseHash(name + f.Name()); err == nil && len(f.Name()) == 38 {
					out = append(out, h)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(out), true
}

// objectDirs are the object directories git reads: the repository's and
// those its alternates name.
func objectDirs(repo *gitstore.Repo) []string {
	objects := filepath.Join(repo.CommonDir(), "objects")
	dirs := []string{objects}
	data, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return dirs
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		dirs = append(dirs, line)
	}
	return dirs
}

func isLowerHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// looseHere says whether loose object h is in one of dirs.
func looseHere(dirs []string, h gitstore.Hash) bool {
	name := h.String()
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, name[:2], name[2:])); err == nil {
			return true
		}
	}
	return false
}

// keptObjects is what verify-objects holds: the packs and the loose
// objects there were when a verify that kept what it read began.
type keptObjects struct {
	packs string
	loose []gitstore.Hash
}

func encodeObjects(w *bufio.Writer, k *keptObjects) {
	var b []byte
	b = append(b, objectsMagic...)
	b = binary.AppendUvarint(b, objectsFormat)
	b = binary.AppendUvarint(b, uint64(len(k.packs)))
	b = append(b, k.packs...)
	b = binary.AppendUvarint(b, uint64(len(k.loose)))
	for _, h := range k.loose {
		b = append(b, h[:]...)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	w.Write(b)
}

var errBadObjects = errors.New("verify-objects is damaged")

func decodeObjects(data []byte) (*keptObjects, error) {
	if len(data) < 4 {
		return nil, errBadObjects
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return nil, errBadObjects
	}
	rest, ok := bytes.CutPrefix(body, []byte(objectsMagic))
	if !ok {
		return nil, errBadObjects
	}
	s := &stateReader{b: rest}
	if s.uint() != objectsFormat {
		return nil, errBadObjects
	}
	k := &keptObjects{packs: s.str()}
	n := s.count()
	if s.err != nil || uint64(n)*20 != uint64(len(s.b)) {
		return nil, errBadObjects
	}
	k.loose = make([]gitstore.Hash, n)
	for i := range k.loose {
		copy(k.loose[i][:], s.b[20*i:])
	}
	return k, nil
}

// objectsHold says whether what verify kept may be used: verify-objects
// was written with the packs there are now, and every loose object it
// lists is still here.
func objectsHold(repo *gitstore.Repo, rd *ledgerReads) bool {
	data, ok := readBounded(objectsPath(repo), maxObjectsFile)
	if !ok {
		return false
	}
	k, err := decodeObjects(data)
	if err != nil || k.packs != rd.packs {
		return false
	}
	dirs := objectDirs(repo)
	if len(k.loose) <= 256 {
		for _, h := range k.loose {
			if !looseHere(dirs, h) {
				gitstore.Tracef("verify: the loose object %s is gone since verify kept what it read", h.Short())
				return false
			}
		}
		return true
	}
	// Many: one listing of the directories costs less than a look at each.
	now, ok := looseObjects(repo)
	if !ok {
		return false
	}
	for _, h := range k.loose {
		if _, found := slices.BinarySearchFunc(now, h, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) }); !found {
			gitstore.Tracef("verify: the loose object %s is gone since verify kept what it read", h.Short())
			return false
		}
	}
	return true
}

// keepObjects writes verify-objects for the files a verify kept: the
// loose objects there are now, with the packs the verify read. When an
// object the file listed is gone, or a notes commit the ledger was read
// from (it went while the verify ran), the file is removed instead: the
// next verify reads from git alone.
func keepObjects(repo *gitstore.Repo, rd *ledgerReads) {
	path := objectsPath(repo)
	now, ok := looseObjects(repo)
	if ok && packsID(repo) == rd.packs {
		types, err := repo.ObjectTypes(rd.sources)
		ok = err == nil && !slices.Contains(types, "")
	}
	if !ok {
		_ = os.Remove(path)
		return
	}
	if data, ok := readBounded(path, maxObjectsFile); ok {
		if k, err := decodeObjects(data); err == nil && k.packs == rd.packs {
			for _, h := range k.loose {
				if _, found := slices.BinarySearchFunc(now, h, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) }); !found {
					_ = os.Remove(path)
					return
				}
			}
			if slices.Equal(k.loose, now) {
				return // as it is
			}
		}
	}
	_ = replaceFile(path, func(w *bufio.Writer) { encodeObjects(w, &keptObjects{packs: rd.packs, loose: now}) })
}
