package mirror

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/journal"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// stateVersion is the version of the state file's format: a state of
// another version is not read (the file is written whole again).
const stateVersion = 1

// historyState is what the history file held when it was last written,
// and what it was built from.
type historyState struct {
	Version int    `json:"version"`
	Path    string `json:"path"` // the file it describes
	Key     key    `json:"key"`
	File    stamp  `json:"file"`   // the file as written
	Digest  string `json:"digest"` // of its content
	// Hash is the SHA-256 state after the content (encoding.BinaryMarshaler):
	// lines appended extend the digest without the content read again.
	Hash  []byte `json:"hash,omitempty"`
	Lines int    `json:"lines"`
	// Last is the order of the file's last line (its cycle, timestamp and
	// id), which lines appended must come after.
	Last *lastLine `json:"last,omitempty"`
	// Tracked says git tracked the file: it was not written.
	Tracked bool `json:"tracked,omitempty"`
	// Untracked is the index's stamp when git was last found not to track
	// the file: while the index is unchanged, it is not asked again.
	Untracked *stamp `json:"untracked,omitempty"`
}

// key is what the history file is built from: the commit HEAD names, the
// local ledger, its remote-tracking copies, and the journal (the bytes of
// it that were read, with its time then and their digest).
type key struct {
	Head          string            `json:"head"`
	Notes         string            `json:"notes"`
	Copies        map[string]string `json:"copies,omitempty"`
	Journal       stamp             `json:"journal"`
	JournalDigest string            `json:"journal_digest,omitempty"`
}

// same reports whether k and o describe the same ledger as the fresh check
// sees it (the journal by its stamp).
func (k key) same(o key) bool {
	return k.Head == o.Head && k.Notes == o.Notes && maps.Equal(k.Copies, o.Copies) && k.Journal == o.Journal
}

// stale is a key no ledger has: the next refresh writes the file whole.
var stale = key{Notes: "stale"}

// Refreshed says what Refresh did.
type Refreshed struct {
	// Wrote is true when the history file was written.
	Wrote bool
	// Appended is how many lines were added to what the file held (when
	// the ledger only grew); -1 when it was written whole.
	Appended int
	// Lines is how many records the file holds.
	Lines int
	// Kept is where the content of a file git-evolve had not written (a
	// hand edit, a seed script's own line, the seeds' own history) was
	// kept before the file was written anew; empty when there was none.
	Kept string
	// Tracked is true when git tracks the history file: it is not written
	// (a cycle would commit it).
	Tracked bool
}

// Refresh brings the history file up to date with the ledger of l: the
// records of the cycles HEAD reaches and the journal's. It writes nothing
// when the file is as it was last written and the ledger has not moved
// since; when only records were added, the new lines are appended (to a
// copy of the file renamed into place: still atomic); otherwise it is
// built anew.
func (m Mirror) Refresh(l *store.Ledger) (*Refreshed, error) {
	path := m.Path(HistoryFile)
	if fresh, err := m.fresh(l, path); err != nil || fresh {
		return &Refreshed{}, err
	}
	if err := os.MkdirAll(m.StateDir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := filelock.Lock(m.statePath() + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Again, under the lock: another process may have done it.
	if fresh, err := m.fresh(l, path); err != nil || fresh {
		return &Refreshed{}, err
	}
	st := m.loadState(path)
	cur, journalData, err := m.currentKey(l)
	if err != nil {
		return nil, err
	}
	tracked, index, err := m.tracked(l.Repo(), st)
	if err != nil {
		return nil, err
	}
	fst, err := statStamp(path)
	if err != nil {
		return nil, err
	}
	if tracked {
		return &Refreshed{Tracked: true}, m.saveState(&historyState{Version: stateVersion, Path: path, Key: cur, File: fst, Tracked: true})
	}
	exists := fst.Size >= 0 || fileExists(path)
	// The file as the tool wrote it, told by its stamp as git tells a
	// file by its stat data; read and compared only when the stamp moved.
	var old []byte
	trusted := exists && st != nil && !st.Tracked && st.File == fst && st.Digest != ""
	edited := false
	if exists && !trusted {
		if old, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		edited = st == nil || st.Tracked || digest(old) != st.Digest
	}
	out := &Refreshed{Appended: -1}
	next := &historyState{Version: stateVersion, Path: path, Untracked: index}
	written := false
	if exists && !edited {
		var last *ledger.Summary
		if trusted {
			last = st.last()
		} else if s, ok := lastSummary(old); ok {
			last = &s
		}
		add, n, ok, err := m.grow(l, st, cur, journalData, last)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := m.appendTo(path, old, add); err != nil {
				return nil, err
			}
			written = len(add) > 0
			out.Appended, out.Lines = n, st.Lines+n
			next.Digest, next.Hash = extend(st, path, old, add)
			next.Last = st.Last
			if n > 0 {
				next.Last = lastOf(add)
			}
		}
	}
	if out.Appended < 0 {
		content, err := m.build(l, cur, journalData)
		if err != nil {
			return nil, err
		}
		if edited && (bytes.Equal(old, content) || st == nil && bytes.HasPrefix(content, old)) {
			// The tool's own file, whose state was lost: what it held is
			// what the ledger says, or the start of it (records came
			// since), or nothing (an empty ledger's).
			edited = false
		}
		if edited {
			if out.Kept, err = m.keep(old); err != nil {
				return nil, err
			}
		}
		if !exists || !bytes.Equal(old, content) || trusted {
			if err := m.WriteFile(HistoryFile, content); err != nil {
				return nil, err
			}
			written = true
		}
		out.Lines = bytes.Count(content, []byte{'\n'})
		next.Digest, next.Hash = hashState(content)
		next.Last = lastOf(content)
	}
	out.Wrote = written
	// What the file was built from must still be what the ledger is: a
	// write meanwhile (another process) makes the next refresh build it
	// whole rather than add to it.
	after, _, err := m.currentKey(l)
	if err != nil {
		return nil, err
	}
	if !after.same(cur) {
		cur = stale
	}
	if next.File, err = statStamp(path); err != nil {
		return nil, err
	}
	next.Key, next.Lines = cur, out.Lines
	return out, m.saveState(next)
}

// appendTo writes the file at path with add after its content: a copy
// of the file (old, when it was read; else copied by the kernel) with add
// after it, renamed into place.
func (m Mirror) appendTo(path string, old, add []byte) error {
	if len(add) == 0 {
		return nil
	}
	if err := m.exclude(); err != nil {
		return err
	}
	return writeAtomicWith(path, func(tmp *os.File) error {
		var err error
		if old != nil {
			_, err = tmp.Write(old)
		} else {
			var src *os.File
			if src, err = os.Open(path); err == nil {
				_, err = io.Copy(tmp, src) // copy_file_range where the kernel has it
				src.Close()
			}
		}
		if err == nil {
			_, err = tmp.Write(add)
		}
		return err
	})
}

// Fresh reports whether the history file is as it was last written and
// the ledger as it was then: Refresh would do nothing. It reads the state
// file, the refs and two files' metadata; it starts no git process.
func (m Mirror) Fresh(l *store.Ledger) (bool, error) { return m.fresh(l, m.Path(HistoryFile)) }

func (m Mirror) fresh(l *store.Ledger, path string) (bool, error) {
	st := m.loadState(path)
	if st == nil || st.Key.Notes == stale.Notes {
		return false, nil
	}
	fst, err := statStamp(path)
	if err != nil {
		return false, err
	}
	if fst != st.File || fst.Size < 0 && !st.Tracked {
		return false, nil
	}
	cur, err := m.refsKey(l.Repo())
	if err != nil {
		return false, err
	}
	js, err := statStamp(m.journalPath(l.Repo()))
	if err != nil {
		return false, err
	}
	cur.Journal = js
	return cur.same(st.Key), nil
}

// refsKey is the key's refs: HEAD's commit, the ledger's and its copies'.
func (m Mirror) refsKey(repo *gitstore.Repo) (key, error) {
	var k key
	if h, ok, err := repo.RefHash("HEAD"); err != nil {
		return k, err
	} else if ok {
		k.Head = h.String()
	}
	if h, ok, err := repo.RefHash(store.NotesRef); err != nil {
		return k, err
	} else if ok {
		k.Notes = h.String()
	}
	copies, err := repo.TrackingNotes("evolve")
	if err != nil {
		return k, err
	}
	for name, h := range copies {
		if k.Copies == nil {
			k.Copies = map[string]string{}
		}
		k.Copies[name] = h.String()
	}
	return k, nil
}

// currentKey is the key of the ledger now, with the journal's bytes it
// describes.
func (m Mirror) currentKey(l *store.Ledger) (key, []byte, error) {
	k, err := m.refsKey(l.Repo())
	if err != nil {
		return k, nil, err
	}
	j := m.journalPath(l.Repo())
	js, err := statStamp(j)
	if err != nil {
		return k, nil, err
	}
	data, err := os.ReadFile(j)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return k, nil, err
	}
	if js.Size >= 0 {
		// The bytes read; their time as they were read or before (a later
		// append changes the time and the size, and is read next time).
		js.Size = int64(len(data))
	}
	k.Journal, k.JournalDigest = js, digest(data)
	return k, data, nil
}

func (m Mirror) journalPath(repo *gitstore.Repo) string {
	return journal.At(filepath.Join(repo.CommonDir(), "evolve")).Path()
}

// build lists the records of the cycles head reaches and the journal's,
// in cycle order, as the file's content.
func (m Mirror) build(l *store.Ledger, k key, journalData []byte) ([]byte, error) {
	var lines []store.Line
	if k.Head != "" {
		commits, err := l.Repo().RevList(k.Head)
		if err != nil {
			return nil, err
		}
		if lines, _, err = l.Lines(store.ListOptions{Commits: commits}, nil); err != nil {
			return nil, err
		}
	}
	jl := journalLines(journalData)
	var buf bytes.Buffer
	for len(lines) > 0 || len(jl) > 0 {
		// in order, the ledger's first on ties (as listing has it)
		var ln store.Line
		if len(jl) > 0 && (len(lines) == 0 || jl[0].Summary.Compare(&lines[0].Summary) < 0) {
			ln, jl = jl[0], jl[1:]
		} else {
			ln, lines = lines[0], lines[1:]
		}
		buf.Write(ln.Text)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// journalLines are the journal's records (those of data) as canonical
// lines in order; a record written twice is one.
func journalLines(data []byte) []store.Line {
	recs, _ := ledger.ParseLines(data)
	out := make([]store.Line, 0, len(recs))
	for i := range recs {
		out = append(out, store.Line{Summary: ledger.SummaryOf(&recs[i]), Text: recs[i].Marshal()})
	}
	sortLines(out)
	return slices.CompactFunc(out, func(a, b store.Line) bool { return bytes.Equal(a.Text, b.Text) })
}

func sortLines(ls []store.Line) {
	slices.SortStableFunc(ls, func(a, b store.Line) int { return a.Summary.Compare(&b.Summary) })
}

// growMax bounds the commits HEAD may have gained for the file to be
// added to rather than built anew.
const growMax = 256

// grow returns the lines to add to old (the file as st describes it) for
// it to describe cur, when the ledger only grew: the records added to the
// local ledger's notes and to the journal, of cycles HEAD reaches, all
// after the file's last line. ok is false when that is not so (a record
// removed or changed, remote-tracking copies moved, HEAD moved elsewhere
// than forward, a new record that sorts before the file's end): the file
// is then built whole.
func (m Mirror) grow(l *store.Ledger, st *historyState, cur key, journalData []byte, last *ledger.Summary) (add []byte, n int, ok bool, err error) {
	was := st.Key
	if !maps.Equal(was.Copies, cur.Copies) || was.Notes == stale.Notes {
		return nil, 0, false, nil
	}
	repo := l.Repo()
	var added []store.Line
	// The journal: the lines after those read last time.
	if was.Journal != cur.Journal || was.JournalDigest != cur.JournalDigest {
		size := was.Journal.Size
		switch {
		case size < 0:
			size = 0
		case size > int64(len(journalData)) || digest(journalData[:size]) != was.JournalDigest:
			return nil, 0, false, nil // rewritten, not appended to
		}
		added = append(added, journalLines(journalData[size:])...)
	}
	// HEAD: only forward, by a few commits that have no note of their own
	// in the ledger as it was.
	var gained map[gitstore.Hash]bool
	var head0 gitstore.Hash
	if was.Head != cur.Head {
		h0, err0 := gitstore.ParseHash(was.Head)
		h1, err1 := gitstore.ParseHash(cur.Head)
		if err0 != nil || err1 != nil {
			return nil, 0, false, nil
		}
		commits, ok := line(repo, h0, h1)
		if !ok {
			var descends bool
			commits, descends, err = repo.RevListSince(h0, h1)
			if err != nil || !descends || len(commits) > growMax {
				return nil, 0, false, nil
			}
		}
		// The ledger as read: the local notes and the remote-tracking
		// copies (which did not move).
		for _, h := range append([]string{was.Notes}, slices.Sorted(maps.Values(was.Copies))...) {
			notes, err := m.notesAt(repo, h)
			if err != nil {
				return nil, 0, false, err
			}
			found, err := notes.FindMany(commits)
			if err != nil {
				return nil, 0, false, err
			}
			for _, blobs := range found {
				if len(blobs) > 0 {
					return nil, 0, false, nil // records HEAD reaches now that the file does not hold
				}
			}
		}
		gained = make(map[gitstore.Hash]bool, len(commits))
		for _, c := range commits {
			gained[c] = true
		}
		head0 = h0
	} else if h, err := gitstore.ParseHash(cur.Head); err == nil {
		head0 = h
	}
	// The notes: records added, none removed or changed.
	if was.Notes != cur.Notes {
		notes0, err := m.notesAt(repo, was.Notes)
		if err != nil {
			return nil, 0, false, err
		}
		notes1, err := m.notesAt(repo, cur.Notes)
		if err != nil {
			return nil, 0, false, err
		}
		changes, err := notes1.DiffNotes(notes0)
		if err != nil {
			return nil, 0, false, err
		}
		for _, ch := range changes {
			if len(ch.New) == 0 {
				return nil, 0, false, nil // a note removed
			}
			before, err := noteLines(repo, ch.Old)
			if err != nil {
				return nil, 0, false, err
			}
			after, err := noteLines(repo, ch.New)
			if err != nil {
				return nil, 0, false, err
			}
			in := map[string]bool{}
			for _, ln := range after {
				in[string(ln.Text)] = true
			}
			for _, ln := range before {
				if !in[string(ln.Text)] {
					return nil, 0, false, nil // a record removed or changed
				}
			}
			if len(after) == len(before) {
				continue
			}
			reached := gained[ch.Object] || !head0.IsZero() && ch.Object == head0
			if !reached && !head0.IsZero() {
				if reached, err = repo.IsAncestor(ch.Object, head0); err != nil {
					return nil, 0, false, nil
				}
			}
			if !reached {
				continue
			}
			had := map[string]bool{}
			for _, ln := range before {
				had[string(ln.Text)] = true
			}
			for _, ln := range after {
				if !had[string(ln.Text)] {
					added = append(added, ln)
				}
			}
		}
	}
	sortLines(added)
	added = slices.CompactFunc(added, func(a, b store.Line) bool { return bytes.Equal(a.Text, b.Text) })
	if len(added) > 0 && last != nil && last.Compare(&added[0].Summary) >= 0 {
		return nil, 0, false, nil // it sorts before the file's end
	}
	var buf bytes.Buffer
	for _, ln := range added {
		buf.Write(ln.Text)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), len(added), true, nil
}

// notesAt is the ledger's notes at commit h (empty for "").
func (m Mirror) notesAt(repo *gitstore.Repo, h string) (*gitstore.Notes, error) {
	if h == "" {
		return repo.EmptyNotes(), nil
	}
	c, err := gitstore.ParseHash(h)
	if err != nil {
		return nil, err
	}
	return repo.NotesAt(c)
}

// noteLines are the records of the note blobs as canonical lines (a line
// that does not parse is left out, as listing leaves it).
func noteLines(repo *gitstore.Repo, blobs []gitstore.Hash) ([]store.Line, error) {
	if len(blobs) == 0 {
		return nil, nil
	}
	datas, err := repo.ReadBlobs(blobs)
	if err != nil {
		return nil, err
	}
	var out []store.Line
	for _, data := range datas {
		recs, _ := ledger.ParseLines(data)
		for i := range recs {
			out = append(out, store.Line{Summary: ledger.SummaryOf(&recs[i]), Text: recs[i].Marshal()})
		}
	}
	return out, nil
}

// lastSummary is the order of the last line of content.
func lastSummary(content []byte) (ledger.Summary, bool) {
	content = bytes.TrimRight(content, "\n")
	if len(content) == 0 {
		return ledger.Summary{}, false
	}
	line := content[bytes.LastIndexByte(content, '\n')+1:]
	if s, ok := ledger.Summarize(line); ok {
		return s, true
	}
	r, err := ledger.Parse(line)
	if err != nil {
		return ledger.Summary{}, false
	}
	return ledger.SummaryOf(&r), true
}

// tracked reports whether git tracks the history file, asking git only
// when the index changed since it last said it did not; index is the
// index's stamp to keep when it does not.
func (m Mirror) tracked(repo *gitstore.Repo, st *historyState) (bool, *stamp, error) {
	is, err := statStamp(filepath.Join(repo.GitDir(), "index"))
	if err != nil {
		return false, nil, err
	}
	if st != nil && !st.Tracked && st.Untracked != nil && *st.Untracked == is {
		return false, &is, nil
	}
	t, err := repo.Tracked(HistoryFile)
	if err != nil || t {
		return t, nil, err
	}
	return false, &is, nil
}

// keep saves the content of a file git-evolve had not written, under the
// state directory, and returns where.
func (m Mirror) keep(data []byte) (string, error) {
	f, err := os.CreateTemp(m.StateDir, "cycle-history.replaced-*.jsonl")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (m Mirror) loadState(path string) *historyState {
	data, err := os.ReadFile(m.statePath())
	if err != nil {
		return nil
	}
	var st historyState
	if json.Unmarshal(data, &st) != nil || st.Version != stateVersion || st.Path != path {
		return nil
	}
	return &st
}

func (m Mirror) saveState(st *historyState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return writeAtomic(m.statePath(), append(data, '\n'))
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// lastLine is the order of a line: what ledger.Summary compares.
type lastLine struct {
	Cycle     int    `json:"cycle"`
	Timestamp string `json:"timestamp,omitempty"`
	ID        string `json:"id,omitempty"`
}

// last is the order of the file's last line, as the state keeps it.
func (st *historyState) last() *ledger.Summary {
	if st.Last == nil {
		return nil
	}
	return &ledger.Summary{Cycle: st.Last.Cycle, Timestamp: []byte(st.Last.Timestamp), ID: []byte(st.Last.ID)}
}

// lastOf is the order of content's last line (nil when it has none).
func lastOf(content []byte) *lastLine {
	s, ok := lastSummary(content)
	if !ok {
		return nil
	}
	return &lastLine{Cycle: s.Cycle, Timestamp: string(s.Timestamp), ID: string(s.ID)}
}

// hashState is content's digest and the SHA-256 state after it.
func hashState(content []byte) (string, []byte) {
	h := sha256.New()
	h.Write(content)
	state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	return hex.EncodeToString(h.Sum(nil)), state
}

// extend is the digest and state of the file st describes (whose content
// is old, when it was read) with add after it: the state kept extended by
// add, without the content read again; the file hashed whole when no
// state was kept.
func extend(st *historyState, path string, old, add []byte) (string, []byte) {
	if old != nil {
		return hashState(append(old[:len(old):len(old)], add...))
	}
	h := sha256.New()
	if u, ok := h.(encoding.BinaryUnmarshaler); ok && len(st.Hash) > 0 && u.UnmarshalBinary(st.Hash) == nil {
		h.Write(add)
		state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
		return hex.EncodeToString(h.Sum(nil)), state
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil
	}
	return hashState(data)
}

// line is the commits h1 reaches and h0 does not when h1 reaches h0
// through commits of one parent each (commits made on h0, the common
// case): read through the cat-file pipe, without a git rev-list process.
// ok is false otherwise (a merge, a history git reads otherwise: grafts,
// replace refs), and the caller asks git.
func line(repo *gitstore.Repo, h0, h1 gitstore.Hash) ([]gitstore.Hash, bool) {
	if altered, err := repo.HistoryAltered(); err != nil || altered || !repo.Extends(h0, h1) {
		return nil, false
	}
	var out []gitstore.Hash
	for h := h1; h != h0; {
		ci, err := repo.Commit(h)
		if err != nil || len(ci.Parents) != 1 || len(out) > growMax {
			return nil, false
		}
		out = append(out, h)
		h = ci.Parents[0]
	}
	return out, true
}
