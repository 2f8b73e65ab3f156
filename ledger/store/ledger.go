// Package store is the ledger as kept in git: the cycle records in the
// notes under refs/notes/evolve, and the local journal beside them. It
// reads the ledger back for listing, showing, importing and exporting, with
// the remote-tracking copies a fetch brought that pass the check its caller
// gives (CheckCopies); it keeps what makes those reads fast and never the
// source of an answer (the saved view, the cycle index, the history's
// tail); and it writes notes: Update adds records to the notes of their
// commits in one notes commit, stamped with the link to the last record
// (Stamp), and Attach adds copies of records to other commits.
//
// The rules of what a record may say and which number it takes are the
// cycle package's; this package stores what it is given.
//
// Writes are serialised between git-evolve processes by a lock file under
// the common git directory (LockPath) and made safe against every other
// writer by the compare-and-swap in gitstore: a write that loses the race
// is redone on the new ledger, never dropped.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/journal"
	"github.com/git-evolve/git-evolve/ledger"
)

// NotesRef is the ref that holds the ledger.
const NotesRef = "refs/notes/evolve"

// Ledger is the cycle ledger of one repository: the notes in NotesRef and
// the local journal.
type Ledger struct {
	repo     *gitstore.Repo
	journal  *journal.Journal
	stateDir string
	local    bool       // Local: the local notes ref alone
	check    CopyCheck  // CheckCopies: what a remote-tracking copy must pass to be read
	copies   *copyReads // what the reads found of the copies (shared by Local)
	index    *openedIndex
}

// Open returns the ledger of repo.
func Open(repo *gitstore.Repo) *Ledger {
	dir := filepath.Join(repo.CommonDir(), "evolve")
	return &Ledger{repo: repo, journal: journal.At(dir), stateDir: dir,
		copies: &copyReads{answers: map[[2]gitstore.Hash]*CopyRefusal{}, refused: map[string]CopyRefusal{}},
		index:  &openedIndex{}}
}

// Repo is the repository the ledger lives in.
func (l *Ledger) Repo() *gitstore.Repo { return l.repo }

// Entry is a record and where it is stored.
type Entry struct {
	Record ledger.Record
	// Commit is the commit whose note holds the record; zero for journal
	// records.
	Commit gitstore.Hash
	// Journal is true for records kept in the local journal.
	Journal bool
	// Absent is true when Commit is not in this clone (the ledger was
	// fetched, the commit was not).
	Absent bool
	// NotCommit is true when the object the record is noted on is here
	// and is no commit (a blob, a tree): no writer of the ledger does that.
	NotCommit bool
}

// NoteError is a line of a ledger note, or of the journal, that does not
// parse. The line is kept where it is; it is reported, not dropped.
type NoteError struct {
	Commit  gitstore.Hash // zero for the journal
	Journal bool
	Line    int
	Text    string
	Err     error
}

func (e *NoteError) Error() string {
	where := "the journal"
	if !e.Journal {
		where = "the note on " + e.Commit.Short()
	}
	return fmt.Sprintf("%s, line %d: %v", where, e.Line, e.Err)
}

// Listing is what a read of the ledger found.
type Listing struct {
	Entries []Entry
	Errors  []*NoteError
}

// ListOptions selects what List reads.
type ListOptions struct {
	// Commits restricts the listing to records on these commits; nil
	// means the whole ledger.
	Commits []gitstore.Hash
	// Journal adds the journal's records (only with the whole ledger).
	Journal bool
	// Presence sets Entry.Absent for records on commits this clone does
	// not have (only with the whole ledger; it costs a lookup per note).
	Presence bool
	// Copies lists a record copied to several commits (by a rewrite, or by
	// relink) once on each; by default it is listed once.
	Copies bool
	// Table reads, from the saved view, only the fields a listing shows
	// (ledger.TableRecord): the records are for showing, never writing.
	Table bool
}

// List reads the ledger and returns its records in cycle order (see
// ledger.Less). Notes that do not parse are returned in Errors; their other
// lines and all other notes are still listed.
func (l *Ledger) List(opts ListOptions) (*Listing, error) {
	out := &Listing{}
	add := func(obj gitstore.Hash, data []byte) error {
		recs, bad := ledger.ParseLines(data)
		for _, r := range recs {
			out.Entries = append(out.Entries, Entry{Record: r, Commit: obj})
		}
		for _, b := range bad {
			out.Errors = append(out.Errors, &NoteError{Commit: obj, Line: b.Line, Text: b.Text, Err: b.Err})
		}
		return nil
	}
	if err := l.eachNote(opts, add); err != nil {
		return nil, err
	}
	if opts.Presence && opts.Commits == nil {
		// Where each record sits, for all of them in one exchange with git.
		if err := l.presence(out.Entries); err != nil {
			return nil, err
		}
	}
	if opts.Journal && opts.Commits == nil {
		recs, bad, err := l.journal.Read()
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			out.Entries = append(out.Entries, Entry{Record: r, Journal: true})
		}
		for _, b := range bad {
			out.Errors = append(out.Errors, &NoteError{Journal: true, Line: b.Line, Text: b.Text, Err: b.Err})
		}
	}
	sortEntries(out.Entries)
	if opts.Copies {
		return out, nil
	}
	// A record on several commits (a note git copied when a commit was
	// amended or rebased, or relink attached) is listed once: on the commit
	// the current branch has, else on one this clone has, else on the one
	// it names.
	place := l.placer()
	kept := out.Entries[:0]
	for _, en := range out.Entries {
		if n := len(kept); n > 0 && sameRecord(&kept[n-1], &en) {
			if place(&en) > place(&kept[n-1]) {
				kept[n-1] = en
			}
			continue
		}
		kept = append(kept, en)
	}
	out.Entries = kept
	return out, nil
}

// placer scores where a copy of a record is best listed: 3 on a commit HEAD
// reaches, 2 on one this clone has, 1 on the one the record names, 0 else.
// It looks a commit up only when asked (for records that have copies).
func (l *Ledger) placer() func(*Entry) int {
	var head gitstore.Hash
	headRead := false
	return func(en *Entry) int {
		if en.Journal {
			return 0
		}
		if !headRead {
			headRead = true
			if hs, err := l.repo.ResolveCommits("HEAD"); err == nil {
				head = hs[0]
			}
		}
		if present, err := l.repo.HasObject(en.Commit); err == nil && present {
			if !head.IsZero() {
				if in, err := l.repo.IsAncestor(en.Commit, head); err == nil && in {
					return 3
				}
			}
			return 2
		}
		if names(en) {
			return 1
		}
		return 0
	}
}

func sameRecord(a, b *Entry) bool {
	// A note record with no id (the seeds' shape) is known by what it says:
	// git copies it whole when it copies the note.
	return a.Journal == b.Journal && (a.Record.ID != "" || !a.Journal) && a.Record.ID == b.Record.ID &&
		bytes.Equal(a.Record.Marshal(), b.Record.Marshal())
}

// names reports whether the entry sits on the commit its record names.
func names(en *Entry) bool {
	c := en.Record.Commit()
	return c != "" && strings.HasPrefix(en.Commit.String(), c)
}

// snapshots are the ledger as read commands read it: the local notes ref,
// and the remote-tracking copies a plain git fetch brings
// (refs/notes/remotes/<remote>/evolve, see setup) where they hold what it
// lacks and pass the check CheckCopies gave (copies.go). primary is the
// local ledger, or a copy it is behind (a fresh clone that fetched); extra
// are copies that went another way than primary, whose notes that differ
// from primary's are read too. A Ledger made Local reads the local ref
// alone. Nothing is written.
func (l *Ledger) snapshots() (primary *gitstore.Notes, extra []*gitstore.Notes, err error) {
	primary, err = l.repo.ReadNotes(NotesRef)
	if err != nil || l.local {
		return primary, nil, err
	}
	copies, err := l.repo.TrackingNotes("evolve")
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(copies))
	for name := range copies {
		names = append(names, name)
	}
	slices.Sort(names)
	local := primary.Commit()
	seen := map[gitstore.Hash]bool{local: true}
	known := l.readMerged()
	defer l.writeMerged(known)
	for _, name := range names {
		tip := copies[name]
		if seen[tip] {
			continue
		}
		seen[tip] = true
		if known.has(tip, primary.Commit()) {
			continue // merged already, as an earlier read found
		}
		snap, err := l.repo.NotesAt(tip)
		if err != nil {
			continue // a copy git cannot read: sync says why
		}
		if !primary.Commit().IsZero() {
			if in, err := l.merged(known, tip, primary.Commit()); err != nil {
				return nil, nil, err
			} else if in {
				continue // merged already
			}
		}
		if !l.admits(name, local, tip) {
			continue // it would bring a breach: Refused names it
		}
		if primary.Commit().IsZero() {
			primary = snap
			continue
		}
		if ahead, err := l.repo.IsAncestor(primary.Commit(), tip); err != nil {
			return nil, nil, err
		} else if ahead {
			primary = snap // the copy has all the local ledger has, and more
			continue
		}
		extra = append(extra, snap)
	}
	return primary, extra, nil
}

// CopiesMax is at least the highest cycle number the remote-tracking
// copies hold that the local ledger does not, and at most the highest they
// hold: numbers are taken past it (and past the local ledger's), so that a
// clone that fetched the team's ledger does not take a number again. A
// copy's largest cycle comes from its history when that gives it (a fresh
// clone, where every note of the copy differs from an empty local ledger),
// else from the notes that differ, or from every note of the copy when
// many differ.
func (l *Ledger) CopiesMax() (int, error) {
	if l.local {
		return 0, nil
	}
	local, err := l.repo.ReadNotes(NotesRef)
	if err != nil {
		return 0, err
	}
	primary, extra, err := l.snapshots()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range append([]*gitstore.Notes{primary}, extra...) {
		if s.Commit() == local.Commit() {
			continue
		}
		if hx, ok := l.indexFromHistory(s); ok {
			n = max(n, hx.Max())
			continue
		}
		changes, err := s.DiffNotes(local)
		if err != nil {
			return 0, err
		}
		if len(changes) > historyNotes {
			// Read one at a time below: the stream of every note is faster.
			whole, err := l.wholeIndex(s)
			if err != nil {
				return 0, err
			}
			n = max(n, whole.Max())
			continue
		}
		cycles, err := l.changedCycles(changes)
		if err != nil {
			return 0, err
		}
		for _, cs := range cycles {
			for _, c := range cs {
				n = max(n, c)
			}
		}
	}
	return n, nil
}

// Local is the ledger of the local notes ref alone, without the
// remote-tracking copies (what a push delivers, what writers build on).
func (l *Ledger) Local() *Ledger {
	c := *l
	c.local = true
	return &c
}

// Sources are the notes commits the ledger is read from (see snapshots):
// the primary first, then the copies read beside it. A ledger that no
// commit holds yet has none.
func (l *Ledger) Sources() ([]gitstore.Hash, error) {
	primary, extra, err := l.snapshots()
	if err != nil {
		return nil, err
	}
	var out []gitstore.Hash
	if !primary.Commit().IsZero() {
		out = append(out, primary.Commit())
	}
	for _, x := range extra {
		out = append(out, x.Commit())
	}
	return out, nil
}

// eachExtra calls fn with the notes of each extra snapshot that differ from
// primary's.
func (l *Ledger) eachExtra(primary *gitstore.Notes, extra []*gitstore.Notes, want func(gitstore.Hash) bool, fn func(obj gitstore.Hash, data []byte) error) error {
	for _, x := range extra {
		changes, err := x.DiffNotes(primary)
		if err != nil {
			return err
		}
		for _, ch := range changes {
			if want != nil && !want(ch.Object) {
				continue
			}
			for _, b := range ch.New {
				data, err := l.repo.ReadBlob(b)
				if err != nil {
					return err
				}
				if err := fn(ch.Object, data); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eachNote calls fn with each note of the ledger that opts selects, and its
// content (valid only during the call).
// EachNote calls fn with every note the ledger is read from, as List reads
// them (the local ledger, and the notes of the remote-tracking copies that
// differ from it; a note on several commits once on each), without
// building the listing: a reader that keeps less than a Record a line pays
// for less. data is only valid during the call.
func (l *Ledger) EachNote(fn func(obj gitstore.Hash, data []byte) error) error {
	return l.eachNote(ListOptions{}, fn)
}

func (l *Ledger) eachNote(opts ListOptions, fn func(obj gitstore.Hash, data []byte) error) error {
	snap, extra, err := l.snapshots()
	if err != nil {
		return err
	}
	var want func(gitstore.Hash) bool
	if opts.Commits != nil {
		set := make(map[gitstore.Hash]bool, len(opts.Commits))
		for _, c := range opts.Commits {
			set[c] = true
		}
		want = func(h gitstore.Hash) bool { return set[h] }
	}
	if err := l.eachExtra(snap, extra, want, fn); err != nil {
		return fmt.Errorf("reading the ledger's remote-tracking copies: %w", err)
	}
	if opts.Commits == nil || len(opts.Commits) > 64 {
		want := make(map[gitstore.Hash]bool, len(opts.Commits))
		for _, c := range opts.Commits {
			want[c] = true
		}
		err = snap.ForEachNote(func(obj gitstore.Hash, data []byte) error {
			if opts.Commits == nil || want[obj] {
				return fn(obj, data)
			}
			return nil
		})
	} else {
		for _, c := range opts.Commits {
			blobs, ferr := snap.Find(c)
			if ferr != nil {
				return ferr
			}
			for _, b := range blobs {
				data, rerr := l.repo.ReadBlob(b)
				if rerr != nil {
					return rerr
				}
				if err := fn(c, data); err != nil {
					return err
				}
			}
		}
	}
	if err != nil {
		return fmt.Errorf("reading the ledger: %w", err)
	}
	return nil
}

// sortEntries orders entries by ledger.Less. It sorts indices and moves each
// entry once, because entries are large.
func sortEntries(es []Entry) {
	idx := make([]int32, len(es))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		ra, rb := &es[a].Record, &es[b].Record
		switch {
		case ledger.Less(ra, rb):
			return -1
		case ledger.Less(rb, ra):
			return 1
		}
		return 0
	})
	sorted := make([]Entry, len(es))
	for i, j := range idx {
		sorted[i] = es[j]
	}
	copy(es, sorted)
}

// Show returns the records of one cycle (by number) or on one commit. A
// query made only of digits is a cycle number when the ledger or the
// journal has that cycle; otherwise it is read as a revision. It returns
// an error wrapping ErrNotFound when nothing matches, with the listing of
// the lines that did not parse when the ledger has any (the cycle may be
// among them).
func (l *Ledger) Show(query string) (*Listing, error) {
	if n, ok := cycleNumber(query); ok {
		// From the cycle index: only that cycle's notes are read.
		out, err := l.cycleEntries(n)
		if err != nil {
			return nil, err
		}
		if len(out.Entries) > 0 {
			return out, nil
		}
		if len(query) < 4 {
			return out, fmt.Errorf("%w: no cycle %d in the ledger or the journal", ErrNotFound, n)
		}
	}
	hashes, err := l.repo.ResolveCommits(query)
	if err != nil {
		var re *gitstore.RevisionError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("%w: %q is neither a cycle number in the ledger nor a commit", ErrNotFound, query)
		}
		return nil, err
	}
	out, err := l.List(ListOptions{Commits: hashes})
	if err != nil {
		return nil, err
	}
	if len(out.Entries) == 0 && len(out.Errors) == 0 {
		return nil, fmt.Errorf("%w: commit %s has no record in the ledger", ErrNotFound, hashes[0].Short())
	}
	return out, nil
}

// ErrNotFound is returned by Show when no record matches.
var ErrNotFound = errors.New("not found")

func cycleNumber(s string) (int, bool) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n, true
}

// JournalRecords are the local journal's records (idle, unchanged and
// aborted cycles), as written.
func (l *Ledger) JournalRecords() ([]ledger.Record, error) {
	recs, _, err := l.journal.Read()
	return recs, err
}
