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
// cut at a character's end), the length again and a CRC-32 of all that. Entries are
// appended; a reader from the start stops at the first entry whose CRC does
// not match (a torn append), and the next writer writes the file anew. The
// length at the end lets a reader walk back from the file's end: a
// question about a few commits (log -n 20, the newest cycles) reads only
// the last subjectTail bytes, where what was last asked is.
// Format 3: subjects as git log's %s gives them (a first paragraph of
// several lines joined); the first line alone in format 2.
const subjectsMagic = "git-evolve subjects 4\n" // 4: subjects of commits in another encoding re-encoded

// subjectMax is the longest subject kept: the table shows 60 characters,
// each at most 4 bytes.
const subjectMax = 240

// subjectsCacheFrom is the fewest commits asked for at once for which the
// whole file is read; fewer are looked for in its last subjectTail bytes.
const subjectsCacheFrom = 64

// subjectTail is how much of the file's end a question about fewer than
// subjectsCacheFrom commits reads: about a thousand subjects.
const subjectTail = 64 << 10

func (l *Ledger) subjectsPath() string { return filepath.Join(l.stateDir, "subjects") }

// Subjects returns the subject of each commit (cut to subjectMax bytes),
// or in errs[i] why there is none (gitstore.ErrObjectNotFound,
// gitstore.ErrWrongType), as Repo.Commits does.
func (l *Ledger) Subjects(hs []gitstore.Hash) (subjects []string, errs []error, err error) {
	subjects, errs = make([]string, len(hs)), make([]error, len(hs))
	// git answers with the replacement of a commit git replace names: no
	// file then
	replaced, err := l.repo.HasRefsUnder("refs/replace/")
	if err != nil {
		return nil, nil, err
	}
	var kept map[gitstore.Hash]string
	intact, whole := false, len(hs) >= subjectsCacheFrom
	switch {
	case replaced:
	case whole:
		kept, intact = readSubjects(l.subjectsPath())
	default:
		var torn bool
		if kept, intact, torn = readSubjectsTail(l.subjectsPath(), hs); torn {
			// an append that did not end: read it all, and write it anew
			whole = true
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
		if whole && !intact && !replaced {
			_ = saveSubjects(l.subjectsPath(), kept, nil, false) // past a torn append, for the next reader
		}
		return subjects, errs, nil
	}
	told, found, err := l.repo.CommitSubjects(ask)
	if err != nil {
		return nil, nil, err
	}
	size := 0 // the entries' bytes, so that they are written from one buffer
	for j := range at {
		size += 28 + min(len(told[j]), subjectMax)
	}
	add := make([]byte, 0, size)
	seen := make(map[gitstore.Hash]bool, len(at))
	for j, i := range at {
		if errs[i] = found[j]; errs[i] != nil {
			continue
		}
		subjects[i] = cutSubject(told[j])
		if !replaced && !seen[ask[j]] {
			seen[ask[j]] = true
			add = appendSubject(add, ask[j], subjects[i])
		}
	}
	if len(add) > 0 {
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
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
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
		if len(body) < 28 {
			return out, false
		}
		n := int(binary.BigEndian.Uint16(body[20:22]))
		if n > subjectMax || len(body) < 28+n || !subjectEntryOK(body[:28+n]) {
			return out, false
		}
		var h gitstore.Hash
		copy(h[:], body)
		out[h] = string(body[22 : 22+n])
		body = body[28+n:]
	}
	return out, true
}

// subjectEntryOK checks an entry: both lengths and its CRC.
func subjectEntryOK(e []byte) bool {
	n := len(e) - 28
	return n >= 0 && int(binary.BigEndian.Uint16(e[20:22])) == n && int(binary.BigEndian.Uint16(e[22+n:])) == n &&
		crc32.ChecksumIEEE(e[:24+n]) == binary.BigEndian.Uint32(e[24+n:])
}

// readSubjectsTail looks for the subjects of hs in the last subjectTail
// bytes of the file, walking back from its end until every one is found
// or an entry does not check. ok is false when the file is not one this
// reads (another format): the next writer writes it anew. torn is true
// when its last entry does not check (an append that did not end), which
// only a read from the start gets past.
func readSubjectsTail(path string, hs []gitstore.Hash) (found map[gitstore.Hash]string, ok, torn bool) {
	found = map[gitstore.Hash]string{}
	f, err := os.Open(path)
	if err != nil {
		return found, errors.Is(err, fs.ErrNotExist), false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return found, false, false
	}
	size := fi.Size() - int64(len(subjectsMagic))
	magic := make([]byte, len(subjectsMagic))
	if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != subjectsMagic {
		return found, false, false
	}
	buf := make([]byte, min(size, subjectTail))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		return found, true, false
	}
	want := make(map[gitstore.Hash]bool, len(hs))
	for _, h := range hs {
		want[h] = true
	}
	for end := len(buf); len(found) < len(want); {
		if end == 0 && int64(len(buf)) == size {
			break // the first entry read: the whole file was
		}
		if end < 28 {
			return found, true, end == len(buf) // a last entry too short to be one
		}
		n := int(binary.BigEndian.Uint16(buf[end-6:]))
		start := end - 28 - n
		if n > subjectMax || start < 0 || !subjectEntryOK(buf[start:end]) {
			return found, true, end == len(buf) // torn when it is the last entry
		}
		var h gitstore.Hash
		copy(h[:], buf[start:])
		if _, seen := found[h]; want[h] && !seen {
			found[h] = string(buf[start+22 : start+22+n])
		}
		end = start
	}
	return found, true, false
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
