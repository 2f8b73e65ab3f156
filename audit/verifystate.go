package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A verify keeps what its checks read of the ledger (a summary of each
// record: see recSum) and of HEAD's history (the commits whose trailers
// name a cycle) in the state section of the view's file (kept.go), with the
// notes commit and HEAD they are of. The next verify reads the notes that
// changed since (the two notes trees' diff) and the commits HEAD gained,
// and runs every check on the summaries: it costs what changed, not the
// ledger. The file is a cache: a missing, damaged or foreign one, one of
// another git-evolve binary, one whose ledger is read from more than one
// notes commit, means a full read, whose answer is the same.

// verifyStateFormat is the layout of the state section; a section of another
// layout is read past. Format 3 ended with a CRC-32C of all before it: a
// summary changed by a damaged byte (a digest that still decodes) was
// read as the record's, and made a breach of a sound ledger. Format 4
// keeps digests in binary and each summary as it differs from the one
// before, and takes the fields of each record's first summary from
// the keys section when the verify wrote that one too (the keys repeated
// them: the two files were as large as the ledger's notes).
const verifyStateFormat = 5

// stateChecked returns data without its CRC, when the CRC holds.
func stateChecked(data []byte) ([]byte, bool) {
	if len(data) < 4 {
		return nil, false
	}
	n := len(data) - 4
	return data[:n], crc32.Checksum(data[:n], castagnoliTable()) == binary.BigEndian.Uint32(data[n:])
}

const verifyStateMagic = "git-evolve verify state\n"

// verifyState is what the state section holds.
type verifyState struct {
	Binary string        // the git-evolve that wrote it (binaryID)
	Source gitstore.Hash // the notes commit Sums are of (zero: no ledger)
	Packs  string        // the object store's packs when presence was looked up (packsID)
	// decoded is closed when the fields below are read from the file
	// (loadState reads them while verify asks git for what changed), with
	// bodyErr saying whether they could be; nil for a state made whole.
	decoded chan struct{}
	bodyErr error
	Sums    *ledgerSums
	Head    gitstore.Hash // the commit whose history Trailers are of (zero: none kept)
	History string        // what changes the history git log walks (historyKey)
	// Trailers are the commits of Head's history whose trailers name a
	// cycle, newest first.
	Trailers []trailerSum
	// Keyed says the first summary of each key is read from the keys section
	// of Token, in the order of its entries.
	Keyed bool
	Token [16]byte
}

// ledgerReads is what a verify reads before it reads the ledger, once:
// the notes commits the ledger is read from (store.Ledger.Sources), what
// changes the history git log walks (historyKey; historyOK false when it
// could not be read) and the object store's packs (packsID).
type ledgerReads struct {
	sources   []gitstore.Hash
	history   string
	historyOK bool
	packs     string
	// packNames and alternates are what packs digests: the packs, and
	// the object directories borrowed from (alternatesID), read from dirs,
	// the object directories git read as the verify began (gitstore.Repo.ObjectDirs)
	packNames  []string
	alternates string
	dirs       []string
	// listed is the notes commit whose whole history the verify listed
	// (git rev-list): every commit of it is here
	listed gitstore.Hash
}

func readLedgerReads(l *store.Ledger) (*ledgerReads, error) {
	sources, err := l.Sources()
	if err != nil {
		return nil, err
	}
	dirs := l.Repo().ObjectDirs()
	rd := &ledgerReads{sources: sources, dirs: dirs, packNames: gitstore.PackNames(dirs), alternates: alternatesID(dirs)}
	rd.packs = packsIDOf(rd.packNames, rd.alternates)
	rd.history, rd.historyOK = historyKey(l.Repo())
	return rd, nil
}

// binaryID names the running git-evolve binary: its path, size and time.
func binaryID() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%q %d %d", exe, fi.Size(), fi.ModTime().UnixNano()), true
}

// historyKey digests what changes the commits git log walks from a given
// commit: shallow, grafts, replace refs, and the environment that says
// which of those git reads.
func historyKey(repo *gitstore.Repo) (string, bool) {
	sum := sha256.New()
	for _, name := range []string{"shallow", filepath.Join("info", "grafts")} {
		if !hashFile(sum, filepath.Join(repo.CommonDir(), name)) {
			return "", false
		}
	}
	for _, env := range []string{"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE"} {
		v, set := os.LookupEnv(env)
		fmt.Fprintf(sum, "env %s %t %q\n", env, set, v)
	}
	// and what the files those name hold
	for _, env := range []string{"GIT_GRAFT_FILE", "GIT_SHALLOW_FILE"} {
		if path := os.Getenv(env); path != "" && !hashFile(sum, path) {
			return "", false
		}
	}
	// The replace refs git reads: under GIT_REPLACE_REF_BASE when it is
	// set.
	base := os.Getenv("GIT_REPLACE_REF_BASE")
	if base == "" {
		base = "refs/replace/"
	}
	if some, err := repo.HasRefsUnder(base); err != nil {
		return "", false
	} else if some {
		replace, err := repo.ListRefsUnder(base)
		if err != nil {
			return "", false
		}
		writeRefs(sum, "replace", replace)
	}
	return hex.EncodeToString(sum.Sum(nil)), true
}

// packsIDOf names the object store's packs (gitstore.PackNames) and alternates
// (alternatesID): other packs, and every commit's presence is looked up
// again.
func packsIDOf(packs []string, alternates string) string {
	sum := sha256.New()
	for _, p := range packs {
		fmt.Fprintf(sum, "%s\n", p)
	}
	sum.Write([]byte(alternates))
	return hex.EncodeToString(sum.Sum(nil))
}

// alternatesID names the object directories the repository borrows from:
// dirs (gitstore.Repo.ObjectDirs) but the first.
func alternatesID(dirs []string) string {
	return strings.Join(dirs[1:], "\n")
}

// loadState reads the state section of k when a verify with o can build
// on it. The summaries point into k, which it holds while they are read.
func loadState(k *keptFile, o VerifyOptions) *verifyState {
	if o.FullHistory || o.FromGit {
		return nil
	}
	bin, ok := binaryID()
	if !ok {
		return nil
	}
	data := k.section(secState)
	st, body, err := decodeHeader(data)
	if err != nil || st.Binary != bin || len(body) < 4 {
		return nil
	}
	k.retain()
	st.decoded = make(chan struct{})
	go func() {
		defer close(st.decoded)
		if _, ok := stateChecked(data); !ok {
			st.bodyErr = errBadState
			k.release()
			return
		}
		body = body[:len(body)-4]
		// The summaries' array is made at once, tens of megabytes at
		// 100,000 records: the collection that starts then would mark it
		// while it is filled, each string written through a write barrier
		// (a third of the decode). It waits for the decode instead.
		defer pauseGC()()
		st.bodyErr = decodeBody(st, body, func(token [16]byte) (*keysFile, bool) {
			return keysIn(k, token)
		})
		if st.bodyErr != nil {
			k.release()
		}
	}()
	return st
}

// gcPause counts the decodes that have the collector paused (pauseGC).
var gcPause struct {
	sync.Mutex
	n   int
	was int // the collector's setting before the first
}

// pauseGC pauses the garbage collector until the function it returns is
// called; pauses that overlap nest, and the last one to end puts back the
// setting the first one found.
func pauseGC() (resume func()) {
	gcPause.Lock()
	if gcPause.n == 0 {
		gcPause.was = debug.SetGCPercent(-1)
	}
	gcPause.n++
	gcPause.Unlock()
	return func() {
		gcPause.Lock()
		defer gcPause.Unlock()
		if gcPause.n--; gcPause.n == 0 {
			debug.SetGCPercent(gcPause.was)
		}
	}
}

// body waits for the summaries, the findings and the trailers of a state
// loadState read, and reports whether they could be read.
func (st *verifyState) body() bool {
	if st.decoded != nil {
		<-st.decoded
	}
	return st.bodyErr == nil
}

// ledgerSums is the ledger's summaries: those kept, brought forward to the
// notes commit the ledger is read from, when there is one such commit and
// the kept ones are of this binary; else a full read. source is the notes
// commit they are of, nil when they are not to be kept (the ledger is read
// from several).
func ledgerSumsOf(l *store.Ledger, kept *verifyState, rd *ledgerReads) (ls *ledgerSums, source *gitstore.Hash, err error) {
	repo := l.Repo()
	sources := rd.sources
	if len(sources) > 1 {
		ls, err := readSums(l, false)
		return ls, nil, err
	}
	var to gitstore.Hash
	if len(sources) == 1 {
		to = sources[0]
	}
	// Other packs: the commits are looked up again. Another history (a
	// replace ref answers for a note or a commit as another object,
	// grafts, shallow), or one that could not be read: what was kept is
	// read past (forwardSums), and the summaries are read whole.
	if kept != nil && rd.historyOK {
		if ls, err := forwardSums(repo, kept, to, kept.Packs != rd.packs, rd.history); err == nil {
			gitstore.Tracef("verify: the ledger read from the state %s kept, brought forward from %s", store.ViewPath(repo), kept.Source.Short())
			return ls, &to, nil
		}
	}
	ls, err = readSums(l, true)
	if ls != nil {
		ls.indexOf = to
	}
	return ls, &to, err
}

// forwardSums brings the kept summaries forward to the notes commit to. It
// asks git what changed before it waits for the kept ones to be decoded.
// repacked says the object store's packs changed: every commit's presence
// is looked up again.
func forwardSums(repo *gitstore.Repo, kept *verifyState, to gitstore.Hash, repacked bool, history string) (*ledgerSums, error) {
	from, err := notesAt(repo, kept.Source)
	if err != nil {
		return nil, err
	}
	next, err := notesAt(repo, to)
	if err != nil {
		return nil, err
	}
	ch, err := readChanges(repo, from, next)
	if err != nil {
		return nil, err
	}
	if !kept.body() {
		return nil, kept.bodyErr
	}
	// The history is in the body, read as the changes were.
	if kept.History != history {
		gitstore.Tracef("verify: the history git walks changed since %s was kept: the ledger is read whole", store.ViewPath(repo))
		return nil, errHistoryChanged
	}
	ls := kept.Sums
	if repacked {
		for i := range ls.Sums {
			ls.Sums[i].Absent = true // looked up again
		}
	}
	if err := ls.forward(repo, ch); err != nil {
		return nil, err
	}
	return ls, nil
}

func notesAt(repo *gitstore.Repo, h gitstore.Hash) (*gitstore.Notes, error) {
	if h.IsZero() {
		return repo.EmptyNotes(), nil
	}
	return repo.NotesAt(h)
}

// headTrailers reads the commits of revs (HEAD when none) whose trailers
// name a cycle: for HEAD, those kept and those HEAD gained since, when it
// descends from the commit they were read from and nothing changed the
// history git walks. head is HEAD's commit when the answer may be kept.
func headTrailers(repo *gitstore.Repo, revs []string, kept *verifyState, rd *ledgerReads) (out []trailerSum, head gitstore.Hash, err error) {
	if len(revs) > 0 {
		commits, err := repo.TrailerLog("Evolve-Result", trailerKeys, revs...)
		return trailerSums(commits), gitstore.ZeroHash, err
	}
	head, ok, err := repo.RefHash("HEAD")
	if err != nil || !ok {
		return nil, gitstore.ZeroHash, err
	}
	if rd.historyOK && kept != nil && kept.body() && !kept.Head.IsZero() && kept.History == rd.history {
		if kept.Head == head {
			return kept.Trailers, head, nil
		}
		// The commits gained come first, as git log lists them when they
		// are a line of commits on the kept HEAD (a merge's are listed by
		// date among the kept ones: then the whole log is read).
		if repo.Extends(kept.Head, head) {
			gained, err := repo.TrailerLog("Evolve-Result", trailerKeys, head.String(), "^"+kept.Head.String())
			if err != nil {
				return nil, gitstore.ZeroHash, err
			}
			return append(trailerSums(gained), kept.Trailers...), head, nil
		}
	}
	commits, err := repo.TrailerLog("Evolve-Result", trailerKeys)
	if !rd.historyOK {
		head = gitstore.ZeroHash // not kept: what changes history could not be read
	}
	return trailerSums(commits), head, err
}

// stateToKeep is the state section of what a verify read, for the next
// (nil when none can be kept). keys is the keys section written beside it
// (nil when none): the fields of each key's first summary are read from
// it.
func stateToKeep(rd *ledgerReads, source gitstore.Hash, ls *ledgerSums, head gitstore.Hash, trailers []trailerSum, keys *writtenKeys) func(*bufio.Writer) {
	bin, ok := binaryID()
	if !ok {
		return nil
	}
	if !rd.historyOK {
		head = gitstore.ZeroHash
	}
	st := &verifyState{Binary: bin, Source: source, Packs: rd.packs, Sums: ls, Head: head, History: rd.history, Trailers: trailers}
	var heads []bool
	if keys != nil {
		st.Keyed, st.Token, heads = true, keys.token, keys.x.head
	}
	return func(w *bufio.Writer) { encodeState(w, st, heads) }
}

// The layout: the magic line, then uvarints, hashes as 20 bytes and
// strings as a uvarint length and the bytes; the format, the binary, the
// notes commit and the packs; then whether the summaries are keyed, and
// if so the keys section's token (16 bytes); the count of notes, the
// summaries (sumWriter), the lines that are no records, HEAD, the
// history's key and the trailers; the CRC-32C of all before it (4 bytes
// big endian).

type stateWriter struct {
	w   *bufio.Writer
	tmp *writeScratch
}

// writeScratch is where a stateWriter puts a field together before it
// writes it: a varint in its first bytes, a field's binary form after
// (scratchHex), so that neither is allocated.
type writeScratch [scratchHex + sha256Hex/2]byte

const scratchHex = 16

func (s stateWriter) uint(n uint64) { s.w.Write(binary.AppendUvarint(s.tmp[:0], n)) }
func (s stateWriter) int(n int)     { s.w.Write(binary.AppendVarint(s.tmp[:0], int64(n))) }
func (s stateWriter) str(v string)  { s.uint(uint64(len(v))); s.w.WriteString(v) }
func (s stateWriter) hash(h gitstore.Hash) {
	s.w.Write(h[:])
}
func (s stateWriter) bool(b bool) {
	if b {
		s.w.WriteByte(1)
	} else {
		s.w.WriteByte(0)
	}
}

// encodeState writes st; when st.Keyed, heads says which summaries are
// their key's first (sumIndex.head), whose fields the keys section holds.
func encodeState(out *bufio.Writer, st *verifyState, heads []bool) {
	sum := crc32.New(castagnoliTable())
	w := bufio.NewWriterSize(io.MultiWriter(out, sum), 64<<10)
	defer func() {
		w.Flush()
		out.Write(binary.BigEndian.AppendUint32(nil, sum.Sum32()))
	}()
	s := stateWriter{w, new(writeScratch)}
	w.WriteString(verifyStateMagic)
	s.uint(verifyStateFormat)
	s.str(st.Binary)
	s.hash(st.Source)
	s.str(st.Packs)
	s.bool(st.Keyed)
	if st.Keyed {
		w.Write(st.Token[:])
	}
	s.uint(uint64(st.Sums.Notes))
	s.uint(uint64(len(st.Sums.Sums)))
	sw := newSumWriter(s)
	for i := range st.Sums.Sums {
		sw.sum(&st.Sums.Sums[i], st.Keyed && heads[i])
	}
	s.uint(uint64(len(st.Sums.Lines)))
	for _, f := range st.Sums.Lines {
		s.str(string(f.Severity))
		s.str(f.Kind)
		s.str(f.Message)
		s.str(f.Commit)
	}
	s.hash(st.Head)
	s.str(st.History)
	s.uint(uint64(len(st.Trailers)))
	for i := range st.Trailers {
		s.trailer(&st.Trailers[i])
	}
}

// maxStateString bounds a string read back from the state section, maxStateCount
// a count: a damaged file is refused, not allocated.
const (
	maxStateFile   = 1 << 30
	maxStateString = 1 << 20
	maxStateCount  = 1 << 26
)

// errHistoryChanged is forwardSums's when the history git walks is not the
// one the summaries were kept with.
var errHistoryChanged = errors.New("the history git walks changed")

var errBadState = errors.New("the state verify kept is damaged")

type stateReader struct {
	b   []byte // the whole file: the strings read point into it
	err error
	// strs keeps one copy of the strings many records share (see shared).
	strs map[string]string
	// copy says the strings read are copies (the file's mapping is undone
	// before they are let go); arena holds them, and the text of those
	// kept in binary (alloc).
	copy  bool
	arena []byte
}

func (s *stateReader) uint() uint64 {
	if s.err != nil {
		return 0
	}
	n, k := binary.Uvarint(s.b)
	if k <= 0 {
		s.err = errBadState
		return 0
	}
	s.b = s.b[k:]
	return n
}

func (s *stateReader) count() int {
	n := s.uint()
	if n > maxStateCount {
		s.err = errBadState
		return 0
	}
	return int(n)
}

func (s *stateReader) int() int {
	if s.err != nil {
		return 0
	}
	n, k := binary.Varint(s.b)
	if k <= 0 || n != int64(int(n)) {
		s.err = errBadState
		return 0
	}
	s.b = s.b[k:]
	return int(n)
}

// shared reads a string many records share (a result, who recorded it,
// where): one copy of each is kept.
func (s *stateReader) shared() string {
	v := s.str()
	if w, ok := s.strs[v]; ok {
		return w
	}
	v = strings.Clone(v)
	s.strs[v] = v
	return v
}

// str reads a string; it points into the file's bytes, which are never
// changed.
func (s *stateReader) str() string {
	n := s.uint()
	if s.err != nil || n > maxStateString || n > uint64(len(s.b)) {
		s.err = errBadState
		return ""
	}
	if n == 0 {
		return ""
	}
	v := unsafe.String(&s.b[0], int(n))
	s.b = s.b[n:]
	return v
}

func (s *stateReader) hash() gitstore.Hash {
	var h gitstore.Hash
	if s.err == nil {
		if len(s.b) < len(h) {
			s.err = errBadState
			return h
		}
		copy(h[:], s.b)
		s.b = s.b[len(h):]
	}
	return h
}

func (s *stateReader) bool() bool {
	if s.err != nil {
		return false
	}
	if len(s.b) == 0 || s.b[0] > 1 {
		s.err = errBadState
		return false
	}
	v := s.b[0] == 1
	s.b = s.b[1:]
	return v
}

// decodeState reads a whole state section whose summaries are not
// keyed.
func decodeState(data []byte) (*verifyState, error) {
	return decodeStateWith(data, func([16]byte) (*keysFile, bool) { return nil, false })
}

// decodeStateWith reads a whole state section, opening the keys section
// its summaries are keyed to with open.
func decodeStateWith(data []byte, open func(token [16]byte) (*keysFile, bool)) (*verifyState, error) {
	data, ok := stateChecked(data)
	if !ok {
		return nil, errBadState
	}
	st, body, err := decodeHeader(data)
	if err != nil {
		return nil, err
	}
	if err := decodeBody(st, body, open); err != nil {
		return nil, err
	}
	return st, nil
}

// decodeHeader reads what a state section says of itself (who wrote
// it, of what notes commit and packs) and returns the rest of the file.
func decodeHeader(data []byte) (*verifyState, []byte, error) {
	rest, ok := bytes.CutPrefix(data, []byte(verifyStateMagic))
	if !ok {
		return nil, nil, errBadState
	}
	s := &stateReader{b: rest}
	if s.uint() != verifyStateFormat || s.err != nil {
		return nil, nil, errBadState
	}
	st := &verifyState{}
	st.Binary = s.str()
	st.Source = s.hash()
	st.Packs = s.str()
	if s.err != nil {
		return nil, nil, s.err
	}
	return st, s.b, nil
}

// decodeBody reads the rest of the file, body, into st: the summaries, the
// findings and the trailers. Keyed summaries are read with the keys section
// open gives for the token the file names, read whole and in order: each
// of its blocks is checked first; the summaries point into it, as into
// the state, which stay mapped.
func decodeBody(st *verifyState, body []byte, open func(token [16]byte) (*keysFile, bool)) (err error) {
	s := &stateReader{b: body, strs: map[string]string{}}
	sr := &sumReader{stateReader: s}
	if st.Keyed = s.bool(); st.Keyed && s.err == nil {
		if len(s.b) < len(st.Token) {
			return errBadState
		}
		st.Token = [16]byte(s.b)
		s.b = s.b[len(st.Token):]
		keys, ok := open(st.Token)
		if !ok {
			return errBadState
		}
		// The summaries point into it: it stays mapped while they are
		// held, unless they are not read.
		defer func() {
			if err != nil {
				keys.close()
			}
		}()
		if !keys.sound(keys.entries, keys.tableStart-keys.entries) {
			return errBadState
		}
		sr.keys, sr.at = keys, keys.entries
	}
	st.Sums = &ledgerSums{}
	st.Sums.Notes = s.count()
	n := s.count()
	// Room for the records the next notes add, merged in place (mergeSums):
	// capacity that is not used is never touched.
	// A summary takes a byte of the file at least: no more room is made
	// than the bytes left can fill.
	c := min(n, 1<<20, len(s.b))
	st.Sums.Sums = make([]recSum, 0, c+c/64+256)
	for i := 0; i < n && s.err == nil; i++ {
		st.Sums.Sums = append(st.Sums.Sums, sr.sum())
	}
	if sr.keys != nil && sr.at != sr.keys.tableStart {
		return errBadState // entries no summary read
	}
	n = s.count()
	for i := 0; i < n && s.err == nil; i++ {
		f := Finding{Severity: Severity(s.str()), Kind: s.str(), Message: s.str(), Commit: s.str()}
		st.Sums.Lines = append(st.Sums.Lines, f)
	}
	st.Head = s.hash()
	st.History = s.str()
	n = s.count()
	for i := 0; i < n && s.err == nil; i++ {
		st.Trailers = append(st.Trailers, s.trailer())
	}
	if s.err != nil {
		return s.err
	}
	if len(s.b) != 0 {
		return errBadState // more than was written
	}
	return nil
}

// hashFile writes to sum the name of the file at path, whether it is
// there, and what it holds; false when it cannot be read.
func hashFile(sum io.Writer, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	fmt.Fprintf(sum, "file %q %t %d\n", filepath.Base(path), err == nil, len(data))
	sum.Write(data)
	return true
}

// writeRefs writes to sum the refs given, by name.
func writeRefs(sum io.Writer, what string, refs map[string]gitstore.Hash) {
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(sum, "%s %d\n", what, len(names))
	for _, name := range names {
		fmt.Fprintf(sum, "%q %s\n", name, refs[name])
	}
}

// replaceFile writes path anew with what write writes (store.WriteStateFile:
// a reader sees the old file or the new one, never a part).
func replaceFile(path string, write func(*bufio.Writer)) error {
	return store.WriteStateFile(path, func(w *bufio.Writer) error {
		write(w)
		return nil
	})
}
