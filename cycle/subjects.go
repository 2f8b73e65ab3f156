package cycle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
)

// The subjects of the commits the ledger's records are on, for the log
// table: a commit's subject never changes (its name is its content), so
// each is read from git once and kept in the state directory. Derived
// state: a missing or damaged file costs the reads again, never a wrong
// subject.
//
// The file: a magic line, then one entry per commit: its name, the length
// of the subject (big-endian uint16), the subject (at most subjectMax bytes,
// cut at a character's end) and a CRC-32 of the three. Entries are
// appended; a reader stops at the first entry whose CRC does not match (a
// torn append), and the next writer writes the file anew.
const subjectsMagic = "git-evolve subjects 1\n"

// subjectMax is the longest subject kept: the table shows 60 characters,
// each at most 4 bytes.
const subjectMax = 240

// subjectsCacheFrom is the fewest commits asked for at once that go through
// the file: for fewer, git answers faster than the file is read.
const subjectsCacheFrom = 64

func (l *Ledger) subjectsPath() string { return filepath.Join(l.stateDir, "subjects") }

// Subjects returns the subject of each commit (cut to subjectMax bytes),
// or in errs[i] why there is none (gitstore.ErrObjectNotFound,
// gitstore.ErrWrongType), as Repo.Commits does.
func (l *Ledger) Subjects(hs []gitstore.Hash) (subjects []string, errs []error, err error) {
	subjects, errs = make([]string, len(hs)), make([]error, len(hs))
	var kept map[gitstore.Hash]string
	intact := false
	if len(hs) >= subjectsCacheFrom {
		// git answers with the replacement of a commit git replace
		// names: no file then
		replaced, err := l.repo.HasRefsUnder("refs/replace/")
		if err != nil {
			return nil, nil, err
		}
		if !replaced {
			kept, intact = readSubjects(l.subjectsPath())
		}
	}
	var ask []gitstore.Hash
	var at []int
	for i, h := range hs {
		if s, ok := kept[h]; ok {
			subjects[i] = s
			continue
		}
		ask = append(ask, h)
		at = append(at, i)
	}
	if len(ask) == 0 {
		return subjects, errs, nil
	}
	infos, found, err := l.repo.Commits(ask)
	if err != nil {
		return nil, nil, err
	}
	var add []byte
	seen := map[gitstore.Hash]bool{}
	for j, i := range at {
		if errs[i] = found[j]; errs[i] != nil {
			continue
		}
		subjects[i] = cutSubject(infos[j].Subject())
		if kept != nil && !seen[ask[j]] {
			seen[ask[j]] = true
			add = appendSubject(add, ask[j], subjects[i])
		}
	}
	if kept != nil && len(add) > 0 {
		// The file only saves time: failing to write it is not an error.
		_ = saveSubjects(l.subjectsPath(), kept, add, intact)
	}
	return subjects, errs, nil
}

func cutSubject(s string) string {
	if len(s) <= subjectMax {
		return s
	}
	n := subjectMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func appendSubject(buf []byte, h gitstore.Hash, s string) []byte {
	start := len(buf)
	buf = append(buf, h[:]...)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
	buf = append(buf, s...)
	return binary.BigEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf[start:]))
}

// readSubjects reads the file: the subjects of its intact entries (an empty
// map when there is none), and whether every entry was intact.
func readSubjects(path string) (map[gitstore.Hash]string, bool) {
	data, err := os.ReadFile(path)
	body, ok := bytes.CutPrefix(data, []byte(subjectsMagic))
	if err != nil || !ok {
		return map[gitstore.Hash]string{}, errors.Is(err, fs.ErrNotExist)
	}
	out := make(map[gitstore.Hash]string, len(body)/64)
	for len(body) > 0 {
		if len(body) < 26 {
			return out, false
		}
		n := int(binary.BigEndian.Uint16(body[20:22]))
		if n > subjectMax || len(body) < 26+n {
			return out, false
		}
		entry := body[:22+n]
		if crc32.ChecksumIEEE(entry) != binary.BigEndian.Uint32(body[22+n:]) {
			return out, false
		}
		var h gitstore.Hash
		copy(h[:], entry)
		out[h] = string(entry[22:])
		body = body[26+n:]
	}
	return out, true
}

// saveSubjects appends the entries add to the file, or, when the file was
// not intact (or is missing), writes it anew with kept and add; writers
// take turns on a lock of the file, and one that finds it taken leaves it.
func saveSubjects(path string, kept map[gitstore.Hash]string, add []byte, intact bool) error {
	if intact {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			defer f.Close()
			unlock, ok, err := filelock.TryLock(path)
			if err != nil || !ok {
				return err
			}
			defer unlock()
			_, err = f.Write(add)
			return err
		}
	}
	buf := []byte(subjectsMagic)
	for h, s := range kept {
		buf = appendSubject(buf, h, s)
	}
	return writeFileAtomic(path, append(buf, add...))
}
