package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// exportNotes reads every note of the snapshot from one git fast-export of
// its notes commit (--full-tree: each file of its tree, after the blobs
// they hold) and calls fn with each, in path order, as streamNotes does.
// git cat-file answers each blob with two writes of its own, and a reader
// of a large ledger wakes for each; fast-export writes its stream in
// pages, and reads the tree and the blobs in one process. The stream is
// read whole before fn is called: used is false, with fn not called, when
// it cannot serve (no commit, a git that refuses the export, a stream
// other than expected), and the caller reads the notes the other way.
func (n *Notes) exportNotes(fn func(obj Hash, data []byte) error) (used bool, err error) {
	if n.commit.IsZero() {
		return false, nil
	}
	tree, err := n.root()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := n.r.startPiped(ctx, false, "fast-export", "--full-tree", "--reference-excluded-parents",
		"--end-of-options", n.commit.String()+"^!")
	if err != nil {
		return false, nil
	}
	if f, ok := p.stdout.(*os.File); ok {
		growPipe(f, 1<<20)
	}
	ex, perr := readExport(bufio.NewReaderSize(p.stdout, 256<<10))
	if perr != nil {
		p.kill()
		trace("git fast-export of %s: %v; the notes are read one by one", n.commit.Short(), perr)
		return false, nil
	}
	if err := p.wait(); err != nil {
		trace("%v; the notes are read one by one", err)
		return false, nil
	}
	// Every note's text is in the stream before any is handed on.
	bad := []Hash{}
	type note struct {
		obj  Hash
		data []byte
	}
	notes := make([]note, 0, len(ex.files))
	marks := make([]int, 0, len(ex.files)) // each note's blob
	for _, f := range ex.files {
		kind, obj := pathKind(f.mode, f.path)
		switch kind {
		case entryBadNote:
			bad = append(bad, obj)
		case entryNote:
			if f.mark <= 0 || f.mark >= len(ex.blobs) || ex.blobs[f.mark] == nil {
				// A blob named by its object name, not exported: read the
				// other way.
				return false, nil
			}
			notes = append(notes, note{obj, ex.blobs[f.mark]})
			marks = append(marks, f.mark)
		}
	}
	ex.files = nil
	// Each blob is let go once the last note that holds it was handed on,
	// so that the memory of the notes read serves what the caller makes of
	// them (a first verify's summaries), not more.
	last := make(map[int]int, len(notes))
	for i, f := range marks {
		last[f] = i
	}
	for i := range notes {
		nt := notes[i]
		notes[i].data = nil
		if last[marks[i]] == i {
			ex.blobs[marks[i]] = nil
		}
		if err := fn(nt.obj, nt.data); err != nil {
			return true, err
		}
	}
	if !tree.IsZero() {
		n.r.treeMu.Lock()
		if n.r.listedBad == nil {
			n.r.listedBad = map[Hash][]Hash{}
		}
		n.r.listedBad[tree] = bad
		n.r.treeMu.Unlock()
	}
	return true, nil
}

// exportStream is what readExport keeps of a git fast-export stream: the
// blobs by mark, and the files of its (last) commit.
type exportStream struct {
	blobs [][]byte // by mark; nil where no blob has the mark
	files []exportFile
	arena []byte
}

// exportFile is a file of the commit: "M <mode> <dataref> <path>". mark is
// 0 when the data is named by object name (a submodule's commit).
type exportFile struct {
	mode uint32
	mark int
	path string
}

// maxExportData bounds one blob or message of the stream.
const maxExportData = 1 << 30

// maxExportMark bounds the marks a stream may use beyond those it made.
const maxExportMark = 1 << 26

var errExport = errors.New("unexpected fast-export stream")

// readExport reads a git fast-export stream of blobs and one commit.
func readExport(rd *bufio.Reader) (*exportStream, error) {
	ex := &exportStream{blobs: [][]byte{nil}}
	line := func() (string, error) {
		b, err := rd.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return "", fmt.Errorf("%w: a line over %d bytes", errExport, rd.Size())
		}
		if err != nil {
			return "", err
		}
		return string(b[:len(b)-1]), nil
	}
	// data reads "data <n>", the n bytes, and the newline that may follow.
	data := func(l string, keep bool) ([]byte, error) {
		sz, ok := strings.CutPrefix(l, "data ")
		n, err := strconv.Atoi(sz)
		if !ok || err != nil || n < 0 || n > maxExportData {
			return nil, fmt.Errorf("%w: %q", errExport, l)
		}
		var out []byte
		if keep {
			out = ex.room(n)
		} else {
			out = make([]byte, 0, min(n, 64<<10))
		}
		if keep {
			if _, err := io.ReadFull(rd, out); err != nil {
				return nil, err
			}
		} else if _, err := io.CopyN(io.Discard, rd, int64(n)); err != nil {
			return nil, err
		}
		if b, err := rd.Peek(1); err == nil && b[0] == '\n' {
			rd.ReadByte()
		}
		return out, nil
	}
	inCommit := false
	for {
		l, err := line()
		if err == io.EOF {
			return ex, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case l == "":
			inCommit = false
		case l == "blob":
			ml, err := line()
			if err != nil {
				return nil, err
			}
			m, ok := mark(ml, "mark :")
			if !ok || m != len(ex.blobs) {
				return nil, fmt.Errorf("%w: %q", errExport, ml)
			}
			dl, err := line()
			if err != nil {
				return nil, err
			}
			b, err := data(dl, true)
			if err != nil {
				return nil, err
			}
			ex.blobs = append(ex.blobs, b)
		case strings.HasPrefix(l, "commit "):
			inCommit = true
			ex.files = ex.files[:0]
		case strings.HasPrefix(l, "data "):
			if _, err := data(l, false); err != nil { // a commit's message
				return nil, err
			}
		case inCommit && strings.HasPrefix(l, "M "):
			f, ok := exportModify(l)
			if !ok {
				return nil, fmt.Errorf("%w: %q", errExport, l)
			}
			if f.mark > maxExportMark {
				return nil, fmt.Errorf("%w: mark %d", errExport, f.mark)
			}
			ex.files = append(ex.files, f)
		case inCommit && (strings.HasPrefix(l, "mark ") || strings.HasPrefix(l, "author ") || strings.HasPrefix(l, "committer ") ||
			strings.HasPrefix(l, "encoding ") || strings.HasPrefix(l, "from ") || strings.HasPrefix(l, "merge ") || strings.HasPrefix(l, "gpgsig ") || l == "deleteall"):
		case strings.HasPrefix(l, "reset ") || strings.HasPrefix(l, "from ") || strings.HasPrefix(l, "progress ") ||
			strings.HasPrefix(l, "feature ") || l == "done":
		default:
			return nil, fmt.Errorf("%w: %q", errExport, l)
		}
	}
}

// room is n bytes of the arena the blobs are kept in (1 MiB blocks; a
// large blob has a block of its own), capped so that an append cannot
// reach the next blob.
func (ex *exportStream) room(n int) []byte {
	const block = 1 << 20
	if n > cap(ex.arena)-len(ex.arena) {
		if n >= block/4 {
			return make([]byte, n)
		}
		ex.arena = make([]byte, 0, block)
	}
	at := len(ex.arena)
	ex.arena = ex.arena[:at+n]
	return ex.arena[at : at+n : at+n]
}

// exportModify reads "M <mode> <dataref> <path>": a path git quoted (one
// with characters it escapes) is no note's, and is kept as it is.
func exportModify(l string) (exportFile, bool) {
	rest := l[2:]
	sp := strings.IndexByte(rest, ' ')
	if sp <= 0 {
		return exportFile{}, false
	}
	mode, ok := parseMode([]byte(rest[:sp]))
	if !ok {
		return exportFile{}, false
	}
	rest = rest[sp+1:]
	sp = strings.IndexByte(rest, ' ')
	if sp <= 0 {
		return exportFile{}, false
	}
	ref, path := rest[:sp], rest[sp+1:]
	f := exportFile{mode: mode, path: path}
	if m, ok := mark(ref, ":"); ok {
		f.mark = m
	} else if _, err := ParseHash(ref); err != nil {
		return exportFile{}, false
	}
	return f, true
}

func mark(s, prefix string) (int, bool) {
	v, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return 0, false
	}
	m, err := strconv.Atoi(v)
	return m, err == nil && m > 0
}
