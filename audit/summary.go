package audit

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// recSum is what verify's checks read of one record on one commit: its
// identity and digests, the fields the checks compare, and where it is. A
// verify reads them from the notes (a full read), or from the summaries an
// earlier verify kept, brought forward by the notes that changed since.
type recSum struct {
	Commit gitstore.Hash
	// Chained: it has recorded_by (written since records chain). Absent,
	// NotCommit: its commit is not here, is not a commit. (Beside Commit,
	// they take no room of their own: 100,000 summaries are held at once.)
	// CommitBin: CommitDigest holds the 32 bytes of the SHA-256 that
	// ledger.CommitDigest names in hex, not the text (see setCommitDigest).
	Chained, Absent, NotCommit, CommitBin bool
	Cycle                                 int
	V                                     int
	ID                                    string
	Digest                                string // ledger.Digest of the record's line
	Result                                string
	Timestamp                             string
	Prev                                  string // the prev link ("" when none)
	By, Host                              string // who recorded it, on what machine
	// CommitDigest is what the commit that delivered it carries in its
	// Evolve-Record trailer (ledger.CommitDigest): its SHA-256's 32 bytes
	// when CommitBin (the kept summaries point into the kept files' bytes
	// for them, where the text would be made anew for each), else the text.
	CommitDigest string
}

// setCommitDigest sets s's commit digest from its text.
func (s *recSum) setCommitDigest(text string) {
	var buf [sha256Hex / 2]byte
	if rest, ok := strings.CutPrefix(text, sha256Pref); ok && fromHex(buf[:], rest, sha256Hex) {
		s.CommitDigest, s.CommitBin = string(buf[:]), true
		return
	}
	s.CommitDigest, s.CommitBin = text, false
}

// commitDigestIs says whether s's commit digest is text.
func (s *recSum) commitDigestIs(text string) bool {
	if !s.CommitBin {
		return s.CommitDigest == text
	}
	var buf [sha256Hex / 2]byte
	rest, ok := strings.CutPrefix(text, sha256Pref)
	return ok && fromHex(buf[:], rest, sha256Hex) && string(buf[:]) == s.CommitDigest
}

// key is what a record is known by: its id, or for a record with no id
// (the seeds' shape, as plain git or their scripts write it) what it says:
// its copies on several commits are one record, two such records are two.
func (s *recSum) key() string {
	if s.ID != "" {
		return s.ID
	}
	return noID + s.Digest
}

func sumOf(r *ledger.Record, commit gitstore.Hash) recSum {
	s := recSum{Commit: commit, ID: r.ID, Digest: ledger.Digest(r.Marshal()), Cycle: r.Cycle, V: r.V,
		Result: string(r.Result), Timestamp: r.Timestamp, Prev: r.ExtraString("prev"),
		By: r.ExtraString("recorded_by"), Host: r.ExtraString("host")}
	s.setCommitDigest(ledger.CommitDigest(r))
	_, s.Chained = r.Extra["recorded_by"]
	return s
}

// sumOrder is the order of the summaries, the same however they were
// read: by cycle, timestamp and id (ledger.Less), then commit.
func sumOrder(a, b recSum) int { return sumCmp(&a, &b) }

// sumCmp is sumOrder of two summaries in place: a summary is large, and
// sorting and merging 100,000 of them compares them a million times.
func sumCmp(a, b *recSum) int {
	switch {
	case a.Cycle != b.Cycle:
		return cmpInt(a.Cycle, b.Cycle)
	case a.Timestamp != b.Timestamp:
		return strings.Compare(a.Timestamp, b.Timestamp)
	case a.ID != b.ID:
		return strings.Compare(a.ID, b.ID)
	}
	return bytes.Compare(a.Commit[:], b.Commit[:])
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lineFinding is the finding for a line of a ledger note that is no record.
func lineFinding(e *store.NoteError) Finding {
	f := unreadableFinding(e.Text, fmt.Sprintf("%v (%q)", e, shorten(e.Text)))
	f.Commit = e.Commit.String()
	return f
}

// noteSums reads the records of one note's text, and the findings of its
// lines that are no records.
func noteSums(commit gitstore.Hash, data []byte) ([]recSum, []Finding) {
	recs, bad := ledger.ParseLines(data)
	sums := make([]recSum, 0, len(recs))
	for i := range recs {
		sums = append(sums, sumOf(&recs[i], commit))
	}
	var fs []Finding
	for _, b := range bad {
		fs = append(fs, lineFinding(&store.NoteError{Commit: commit, Line: b.Line, Text: b.Text, Err: b.Err}))
	}
	return sums, fs
}

// ledgerSums is the ledger as verify's checks read it: each record on each
// commit it is noted on (copies too), in sumOrder, with the commits'
// presence, and the findings of the lines that are no records, by commit
// and line.
type ledgerSums struct {
	Sums  []recSum
	Lines []Finding
	// Notes counts the notes that hold records.
	Notes int
	// index is what the ledger's index of cycles is to list (see
	// checkIndex), when the read was of the local ledger alone; nil
	// otherwise; indexOf is the notes commit it was read from. Neither is
	// kept.
	index   map[string]bool
	indexOf gitstore.Hash
}

func (ls *ledgerSums) sort() {
	sortSums(ls.Sums)
	slices.SortStableFunc(ls.Lines, func(a, b Finding) int { return strings.Compare(a.Commit, b.Commit) })
}

// readSums reads every note of the ledger l reads, and the presence of the
// commits they are on.
func readSums(l *store.Ledger, index bool) (*ledgerSums, error) {
	ls := &ledgerSums{}
	if index {
		ls.index = map[string]bool{}
	}
	noted := map[gitstore.Hash]bool{}
	// Whether each record's commit is here, asked as each note is read (a
	// large ledger's answers come while the ledger is read).
	query := l.Repo().NewTypeQuery()
	err := eachNoteSums(l, index, func(obj gitstore.Hash, sums []recSum, fs []Finding, keys []string) {
		if len(keys) > 0 {
			s := obj.String()
			for _, k := range keys {
				ls.index[k+"-"+s] = true
			}
		}
		if len(sums) > 0 && !noted[obj] {
			noted[obj] = true // a tree another tool wrote may note it at two paths
			ls.Notes++
			query.Ask(obj)
		}
		if len(ls.Sums)+len(sums) > cap(ls.Sums) {
			// Doubled: append grows a large slice by a quarter, and each
			// growth copies 100,000 summaries.
			ls.Sums = slices.Grow(ls.Sums, max(len(sums), len(ls.Sums)))
		}
		ls.Sums = append(ls.Sums, sums...)
		ls.Lines = append(ls.Lines, fs...)
	})
	if err != nil {
		query.Close()
		return nil, err
	}
	objs, types, err := query.Types()
	if err != nil {
		return nil, err
	}
	at := make(map[gitstore.Hash]int, len(objs))
	for i, h := range objs {
		at[h] = i
	}
	for i := range ls.Sums {
		s := &ls.Sums[i]
		typ := types[at[s.Commit]]
		s.Absent, s.NotCommit = typ == "", typ != "" && typ != "commit"
	}
	ls.sort()
	return ls, nil
}

// noteChanges are the notes that differ between two notes trees, read:
// the summaries of the records they hold now and the findings of their
// lines that are no records.
type noteChanges struct {
	changed map[gitstore.Hash]bool // the commits whose notes differ
	added   []recSum
	lines   []Finding
}

// readChanges reads the notes that differ from the notes tree of from to
// that of to: the trees' diff, then the notes that changed in one
// exchange.
func readChanges(repo *gitstore.Repo, from, to *gitstore.Notes) (*noteChanges, error) {
	changes, err := to.DiffNotes(from)
	if err != nil {
		return nil, err
	}
	ch := &noteChanges{changed: map[gitstore.Hash]bool{}}
	var want, of []gitstore.Hash
	for _, c := range changes {
		if len(c.Old) > 1 || len(c.New) > 1 {
			// A tree another tool wrote notes the object at two paths:
			// which copy comes first is the tree walk's to say.
			return nil, errTwoPaths
		}
		ch.changed[c.Object] = true
		for _, b := range c.New {
			want, of = append(want, b), append(of, c.Object)
		}
	}
	data, err := repo.ReadBlobs(want)
	if err != nil {
		return nil, err
	}
	for i := range want {
		sums, fs := noteSums(of[i], data[i])
		ch.added = append(ch.added, sums...)
		ch.lines = append(ch.lines, fs...)
	}
	return ch, nil
}

// errTwoPaths sends a verify to the full read: an object noted at two
// paths of a notes tree.
var errTwoPaths = errors.New("an object noted at two paths")

// forward brings ls, the summaries of one notes tree, to those of another,
// given the notes that differ (readChanges): those are replaced, the others
// kept; the commits that were absent are looked up again.
func (ls *ledgerSums) forward(repo *gitstore.Repo, ch *noteChanges) error {
	changed, added := ch.changed, ch.added
	if len(changed) > 0 {
		keep := ls.Sums[:0]
		had := map[gitstore.Hash]bool{} // the notes with records that changed
		for _, s := range ls.Sums {
			if !changed[s.Commit] {
				keep = append(keep, s)
			} else {
				had[s.Commit] = true
			}
		}
		ls.Sums = keep
		ls.Notes -= len(had)
		lines := ls.Lines[:0]
		for _, f := range ls.Lines {
			if h, err := gitstore.ParseHash(f.Commit); err != nil || !changed[h] {
				lines = append(lines, f)
			}
		}
		ls.Lines = lines
	}
	ls.Lines = append(ls.Lines, ch.lines...)
	now := map[gitstore.Hash]bool{}
	for _, s := range added {
		now[s.Commit] = true
	}
	ls.Notes += len(now)
	// Where the new records sit, and whether the commits missing before
	// are here now: one exchange with git.
	at := map[gitstore.Hash]int{}
	var objs []gitstore.Hash
	for _, s := range append(ls.absent(), added...) {
		if _, ok := at[s.Commit]; !ok {
			at[s.Commit] = len(objs)
			objs = append(objs, s.Commit)
		}
	}
	if len(objs) > 0 {
		types, err := repo.ObjectTypes(objs)
		if err != nil {
			return err
		}
		set := func(s *recSum) {
			if j, ok := at[s.Commit]; ok {
				s.Absent, s.NotCommit = types[j] == "", types[j] != "" && types[j] != "commit"
			}
		}
		for i := range ls.Sums {
			if ls.Sums[i].Absent {
				set(&ls.Sums[i])
			}
		}
		for i := range added {
			set(&added[i])
		}
	}
	// The kept ones are in order still; the new ones are sorted and
	// merged in.
	ls.Sums = mergeSums(ls.Sums, added)
	slices.SortStableFunc(ls.Lines, func(a, b Finding) int { return strings.Compare(a.Commit, b.Commit) })
	return nil
}

// mergeSums merges b into a, both in sumOrder (b is sorted here). It
// merges in place, from the back, when a has the room (decodeBody leaves
// some), so that the kept summaries that sort before every new one (most:
// new records take new cycle numbers) are not moved; else into a new
// slice.
func mergeSums(a, b []recSum) []recSum {
	if len(b) == 0 {
		return a
	}
	slices.SortStableFunc(b, sumOrder)
	n := len(a)
	if cap(a) < n+len(b) {
		grown := make([]recSum, n, n+len(b)+n/64)
		copy(grown, a)
		a = grown
	}
	a = a[:n+len(b)]
	i, j := n-1, len(b)-1
	for k := len(a) - 1; j >= 0; k-- {
		// An equal pair keeps a's first, as a stable sort of both would.
		if i >= 0 && sumCmp(&b[j], &a[i]) < 0 {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
	}
	return a
}

// sortSums sorts s stably in sumOrder. It sorts the summaries' places and
// then moves each summary once: a summary is large, and a sort that swaps
// them moves each many times.
func sortSums(s []recSum) {
	at := make([]int32, len(s))
	for i := range at {
		at[i] = int32(i)
	}
	slices.SortStableFunc(at, func(a, b int32) int { return sumCmp(&s[a], &s[b]) })
	// s[i] is to hold what s[at[i]] holds: follow each cycle of the
	// permutation, marking each place filled with -1.
	for i := range s {
		if at[i] < 0 || int(at[i]) == i {
			continue
		}
		held := s[i]
		j := i
		for {
			k := int(at[j])
			at[j] = -1
			if k == i {
				s[j] = held
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}

// absent are the kept summaries of records on commits that were missing.
func (ls *ledgerSums) absent() []recSum {
	var out []recSum
	for _, s := range ls.Sums {
		if s.Absent {
			out = append(out, s)
		}
	}
	return out
}

// sumIndex files the summaries by what each record is known by (see key):
// each key's summaries, in sum order. It holds places in the summaries, not
// a list for each key: a ledger of 100,000 records has 100,000 keys, and
// all but a few have one summary.
type sumIndex struct {
	sums  []recSum
	first map[string]int32 // where each key's first summary is
	next  []int32          // where the next summary of sums[i]'s key is; -1 when none
	head  []bool           // sums[i] is its key's first
}

// byKey files the summaries by key.
func (ls *ledgerSums) byKey() *sumIndex {
	n := len(ls.Sums)
	x := &sumIndex{sums: ls.Sums, first: make(map[string]int32, n), next: make([]int32, n), head: make([]bool, n)}
	var last map[string]int32 // the last summary so far of each key seen twice
	for i := range ls.Sums {
		x.next[i] = -1
		k := ls.Sums[i].key()
		f, seen := x.first[k]
		if !seen {
			x.first[k], x.head[i] = int32(i), true
			continue
		}
		if last == nil {
			last = map[string]int32{}
		}
		j, ok := last[k]
		if !ok {
			j = f
		}
		x.next[j], last[k] = int32(i), int32(i)
	}
	return x
}

// keys counts the keys: the records.
func (x *sumIndex) keys() int { return len(x.first) }

// firstOf is the first summary of key, if there is one.
func (x *sumIndex) firstOf(key string) (*recSum, bool) {
	i, ok := x.first[key]
	if !ok {
		return nil, false
	}
	return &x.sums[i], true
}

// on says whether a summary of key is on commit c.
func (x *sumIndex) on(key string, c gitstore.Hash) bool {
	i, ok := x.first[key]
	for ; ok && i >= 0; i = x.next[i] {
		if x.sums[i].Commit == c {
			return true
		}
	}
	return false
}

// holds says whether a summary of key has digest.
func (x *sumIndex) holds(key, digest string) bool {
	i, ok := x.first[key]
	for ; ok && i >= 0; i = x.next[i] {
		if x.sums[i].Digest == digest {
			return true
		}
	}
	return false
}

// commitsOf lists the commits key's summaries are on.
func (x *sumIndex) commitsOf(key string) []gitstore.Hash {
	var out []gitstore.Hash
	i, ok := x.first[key]
	for ; ok && i >= 0; i = x.next[i] {
		out = append(out, x.sums[i].Commit)
	}
	return out
}

// isFirst says whether sums[i] is its key's first.
func (x *sumIndex) isFirst(i int) bool { return x.head[i] }

// of lists the summaries of key (nil when none). It reads the index
// only, so that checks running at once may call it.
func (x *sumIndex) of(key string) []*recSum {
	i, ok := x.first[key]
	if !ok {
		return nil
	}
	return x.list(nil, i)
}

func (x *sumIndex) list(buf []*recSum, i int32) []*recSum {
	for ; i >= 0; i = x.next[i] {
		buf = append(buf, &x.sums[i])
	}
	return buf
}

// each calls fn with each key's summaries, keys in the order of their
// first summaries. The list is good during the call.
func (x *sumIndex) each(fn func(es []*recSum)) {
	var buf []*recSum
	for i := range x.sums {
		if x.head[i] {
			buf = x.list(buf[:0], int32(i))
			fn(buf)
		}
	}
}

// trailerSum is a commit of HEAD's history whose trailers name a cycle.
type trailerSum struct {
	Hash                      gitstore.Hash
	ID, Cycle, Result, Record string
}

func trailerSums(commits []gitstore.TrailerCommit) []trailerSum {
	var out []trailerSum
	for _, c := range commits {
		if c.Trailers["Evolve-Id"] == "" {
			continue
		}
		out = append(out, trailerSum{Hash: c.Hash, ID: c.Trailers["Evolve-Id"], Cycle: c.Trailers["Evolve-Cycle"],
			Result: c.Trailers["Evolve-Result"], Record: c.Trailers["Evolve-Record"]})
	}
	return out
}

// eachNoteSums calls add with the summaries and the findings of each note
// of the ledger, in the ledger's order. The notes are summarised (each
// record parsed, encoded again and digested: most of a first verify's own
// work) on as many goroutines as there are processors, a batch of notes
// at a time, while the ledger is read.
func eachNoteSums(l *store.Ledger, keys bool, add func(obj gitstore.Hash, sums []recSum, fs []Finding, keys []string)) error {
	keysOf := func(data []byte) []string {
		if !keys {
			return nil
		}
		return ledger.IndexKeys(data)
	}
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return l.EachNote(func(obj gitstore.Hash, data []byte) error {
			sums, fs := noteSums(obj, data)
			add(obj, sums, fs, keysOf(data))
			return nil
		})
	}
	// A batch holds its notes' text (the ledger's reader may reuse its own
	// after each call), and once summarised, what they hold.
	type noteBatch struct {
		objs []gitstore.Hash
		ends []int
		data []byte
		sums [][]recSum
		fs   [][]Finding
		keys [][]string
		done chan struct{}
	}
	todo := make(chan *noteBatch, workers)
	ordered := make(chan *noteBatch, 4*workers)
	var summarising sync.WaitGroup
	for range workers {
		summarising.Add(1)
		go func() {
			defer summarising.Done()
			for b := range todo {
				start := 0
				for i, obj := range b.objs {
					b.sums[i], b.fs[i] = noteSums(obj, b.data[start:b.ends[i]])
					b.keys[i] = keysOf(b.data[start:b.ends[i]])
					start = b.ends[i]
				}
				close(b.done)
			}
		}()
	}
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for b := range ordered {
			<-b.done
			for i, obj := range b.objs {
				add(obj, b.sums[i], b.fs[i], b.keys[i])
			}
		}
	}()
	newBatch := func() *noteBatch { return &noteBatch{data: make([]byte, 0, noteBatchSize), done: make(chan struct{})} }
	cur := newBatch()
	send := func() {
		cur.sums, cur.fs, cur.keys = make([][]recSum, len(cur.objs)), make([][]Finding, len(cur.objs)), make([][]string, len(cur.objs))
		todo <- cur
		ordered <- cur
		cur = newBatch()
	}
	err := l.EachNote(func(obj gitstore.Hash, data []byte) error {
		cur.objs = append(cur.objs, obj)
		cur.data = append(cur.data, data...)
		cur.ends = append(cur.ends, len(cur.data))
		if len(cur.data) >= noteBatchSize {
			send()
		}
		return nil
	})
	if len(cur.objs) > 0 {
		send()
	}
	close(todo)
	close(ordered)
	summarising.Wait()
	<-collected
	return err
}

// noteBatchSize is how much note text a batch of eachNoteSums holds.
const noteBatchSize = 64 << 10
