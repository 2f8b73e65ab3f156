package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// ImportReport says what Import did with each line of the file.
type ImportReport struct {
	Stored    int // records added to notes (the anchored ones among them)
	Anchored  int // of Stored, records stored on the anchor: their commit is missing or gone
	Inferred  int // records whose result was inferred (the AgentOps shape, with no result)
	Journaled int // records without a commit added to the journal
	// JournaledAs counts the records added to the journal by their result.
	JournaledAs map[string]int
	Present     int // records the ledger or journal already held
	// Lines are the lines read, Blank those of them with nothing on them:
	// every other line is stored, journaled, present or skipped.
	Lines, Blank int
	// Anchor is the commit anchored records were stored on (zero when none were).
	Anchor   gitstore.Hash
	Skipped  []ImportProblem
	Warnings []ImportProblem
}

// ImportProblem is a line Import skipped, or stored with a warning.
type ImportProblem struct {
	Line   int
	Reason string
}

// ImportOptions are Import's choices.
type ImportOptions struct {
	// Anchor is the revision that records naming no commit, or a commit
	// this repository does not have, are stored on ("" is HEAD).
	Anchor string
}

// Anchored is the field that marks a record stored on an anchor, not on the
// commit it names (it names none, or one this repository does not have):
// its sha fields stay as they were written.
const Anchored = "anchored"

// Inferred is the field that lists the fields of a record Import inferred
// (from the AgentOps shape: date, commit, fitness_before, fitness_after).
const Inferred = "inferred"

// importBatch is how many lines of the file Import holds at once, and
// importBatchBytes how much of their text: each batch is parsed, stored in
// one notes commit and let go before the next is read, so that memory is
// bounded by the batch, not the file. importLineMax bounds one line: a
// longer one is skipped (read past, not held).
var (
	importBatch      = 10000
	importBatchBytes = 16 << 20
	importLineMax    = 16 << 20
)

// importer is the state of one Import that outlives a batch.
type importer struct {
	l    *Ledger
	opts ImportOptions
	rep  *ImportReport
	// existing holds every record's id once an anchored record needs it
	// (it may be on another anchor); journal the journal's ids once a
	// record goes there.
	existing map[string]bool
	journal  map[string]bool
	// ix is the whole cycle index of the ledger: made by the first batch,
	// then kept by the batches stored after it (made again when another
	// writer moved the ledger), so that a batch reads no note.
	ix *Index
}

// ImportReadError is a file Import could not read to its end: the lines
// before Line were imported, and Import's report says how.
type ImportReadError struct {
	Line int
	Err  error
}

func (e *ImportReadError) Error() string {
	return fmt.Sprintf("line %d: %v (the lines before it were imported; importing the file again adds only the rest)", e.Line, e.Err)
}

func (e *ImportReadError) Unwrap() error { return e.Err }

// importLine is one line of the file: its number and text.
type importLine struct {
	n    int
	text []byte
}

// Import stores the records of a cycle-history.jsonl file (the script
// shape with target/sha/goals_*, the second writer's mode/commit/started_at
// shape, their legacy names, and the AgentOps shape with date, run, type,
// commit, fitness_before, fitness_after, goals_flipped and notes but no
// result), routed as record routes them: improved, regressed, harvested and
// quarantined records become part of the note on the commit they name;
// every other result (unchanged, idle, or one this schema does not know)
// goes to the local journal, never to the shared notes. A record that names
// no commit, or one this repository does not have (squashed away, never
// fetched), is stored on the anchor instead, marked anchored, its sha
// fields as written. A record with no result has one inferred (see
// inferResult) and is marked so. Records the ledger or the journal already
// holds (same id; a record without an id gets one derived from its
// content) are not added again, so importing a file twice adds nothing, and
// an import that stopped part way can be run again. Lines that do not
// parse, have a cycle number below 1 or are longer than 16 MiB are skipped
// and reported; the rest are still stored.
//
// The file is read in batches (importBatch lines, importBatchBytes of
// text), each stored in one notes commit before the next is read.
func (l *Ledger) Import(r io.Reader, opts ImportOptions) (*ImportReport, error) {
	im := &importer{l: l, opts: opts, rep: &ImportReport{}}
	// A batch's blobs and trees are written as one pack.
	l.repo.PackWrites(true)
	defer l.repo.PackWrites(false)
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	var readErr error
	for done := false; !done; {
		var batch []importLine
		size := 0
		for len(batch) < importBatch && size < importBatchBytes {
			line, long, err := readImportLine(br)
			if err != nil && err != io.EOF {
				// What was read is still stored: a run again adds the rest.
				readErr = &ImportReadError{Line: n + 1, Err: err}
				done = true
				break
			}
			// A line: the empty text after the last newline is none.
			isLine := len(line) > 0 || long || err == nil
			if isLine {
				n++
			}
			switch line = bytes.Trim(line, " \t\r"); {
			case long:
				im.rep.Skipped = append(im.rep.Skipped, ImportProblem{n, fmt.Sprintf("the line is longer than %d MiB", importLineMax>>20)})
			case len(line) > 0:
				batch = append(batch, importLine{n, line})
				size += len(line)
			case isLine:
				im.rep.Blank++
			}
			if err == io.EOF {
				done = true
				break
			}
		}
		if err := im.batch(batch); err != nil {
			return nil, err
		}
	}
	im.rep.Lines = n
	sort.SliceStable(im.rep.Skipped, func(i, j int) bool { return im.rep.Skipped[i].Line < im.rep.Skipped[j].Line })
	sort.SliceStable(im.rep.Warnings, func(i, j int) bool { return im.rep.Warnings[i].Line < im.rep.Warnings[j].Line })
	return im.rep, readErr // with a read error, the report of what was read
}

// readImportLine reads one line without its newline. A line longer than
// importLineMax is read past and reported as long, its text not kept. At
// the end of the input it returns io.EOF with the last line (if any).
func readImportLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > importLineMax+1 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return bytes.TrimSuffix(line, []byte("\n")), long, nil
		default:
			if len(line) > importLineMax { // a last line, with no newline
				line, long = nil, true
			}
			return line, long, err
		}
	}
}

// batch stores the records of one batch of lines: those for the notes in
// one notes commit, then the others in the journal.
func (im *importer) batch(lines []importLine) error {
	if len(lines) == 0 {
		return nil
	}
	l, rep := im.l, im.rep
	type pending struct {
		line int
		rec  ledger.Record
	}
	var withCommit, withoutCommit []pending
	var revs []string
	for _, ln := range lines {
		rec, err := ledger.Parse(ln.text)
		if err != nil {
			rep.Skipped = append(rep.Skipped, ImportProblem{ln.n, err.Error()})
			continue
		}
		if rec.Cycle < 1 {
			rep.Skipped = append(rep.Skipped, ImportProblem{ln.n, fmt.Sprintf("cycle %d: cycle numbers start at 1", rec.Cycle)})
			continue
		}
		if rec.Result == "" {
			inferResult(&rec)
			rep.Inferred++
		}
		shared := ledger.Productive(rec.Result) || rec.Result == ledger.Quarantined ||
			rec.Result == ledger.Unchanged && rec.Aborted() && rec.Commit() != "" // on its start
		switch {
		case !shared:
			if !ledger.ValidResult(rec.Result) && rec.Result != "idle" {
				rep.Warnings = append(rep.Warnings, ImportProblem{ln.n, fmt.Sprintf("result %q is not one the ledger knows (%s): kept in the local journal",
					rec.Result, strings.Join(ledger.Results, ", "))})
			}
			withoutCommit = append(withoutCommit, pending{line: ln.n, rec: rec})
		default:
			withCommit = append(withCommit, pending{line: ln.n, rec: rec})
			revs = append(revs, rec.Commit())
		}
	}
	hashes, errs, err := l.repo.LookupCommits(revs...)
	if err != nil {
		return err
	}
	anchorFor := func(line int, why string) bool {
		if rep.Anchor.IsZero() {
			rev := im.opts.Anchor
			if rev == "" {
				rev = "HEAD"
			}
			hs, errs, err := l.repo.LookupCommits(rev)
			if err == nil && errs[0] != nil {
				err = errs[0]
			}
			if err != nil {
				rep.Skipped = append(rep.Skipped, ImportProblem{line, fmt.Sprintf("%s, and there is no commit to anchor it to (%v): give one with --anchor REV", why, err)})
				return false
			}
			rep.Anchor = hs[0]
		}
		return true
	}
	add := map[gitstore.Hash][]ledger.Record{}
	var order []stored
	for k, p := range withCommit {
		target := hashes[k]
		if errs[k] != nil {
			var re *gitstore.RevisionError
			why := "it names no commit"
			switch {
			case p.rec.Commit() == "":
			case errors.As(errs[k], &re) && re.Missing:
				why = fmt.Sprintf("its commit %s is not in this repository", p.rec.Commit())
			default:
				rep.Skipped = append(rep.Skipped, ImportProblem{p.line, errs[k].Error()})
				continue
			}
			if !anchorFor(p.line, why) {
				continue
			}
			if im.existing == nil {
				if im.existing, err = l.allIDs(); err != nil {
					return err
				}
			}
			if p.rec.ID == "" {
				p.rec.ID = p.rec.DeriveID(p.rec.Commit()) // not the anchor's: the same record on any anchor is one
			}
			if im.existing[p.rec.ID] {
				rep.Present++
				continue
			}
			im.existing[p.rec.ID] = true
			if p.rec.Extra == nil {
				p.rec.Extra = map[string]json.RawMessage{}
			}
			p.rec.Extra[Anchored] = json.RawMessage("true")
			target = rep.Anchor
			rep.Anchored++
		} else if p.rec.ID == "" {
			p.rec.ID = p.rec.DeriveID(target.String())
		}
		order = append(order, stored{p.line, p.rec.Cycle, target})
		add[target] = append(add[target], p.rec)
	}
	if len(add) > 0 {
		if err := im.store(add, order); err != nil {
			return err
		}
	}

	if len(withoutCommit) == 0 {
		return nil
	}
	// The journal is appended to under the ledger lock, as record does.
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return err
	}
	defer unlock()
	var fresh []ledger.Record
	for _, p := range withoutCommit {
		if im.journal == nil {
			have, _, err := l.journal.Read()
			if err != nil {
				return err
			}
			im.journal = map[string]bool{}
			for _, r := range have {
				im.journal[r.ID] = true
			}
		}
		if p.rec.ID == "" {
			p.rec.ID = p.rec.DeriveID("")
		}
		if im.journal[p.rec.ID] {
			rep.Present++
			continue
		}
		im.journal[p.rec.ID] = true
		fresh = append(fresh, p.rec)
	}
	if err := l.journal.Append(fresh...); err != nil {
		return err
	}
	rep.Journaled += len(fresh)
	for _, r := range fresh {
		if rep.JournaledAs == nil {
			rep.JournaledAs = map[string]int{}
		}
		rep.JournaledAs[r.Result]++
	}
	return nil
}

// stored is where a line's record is stored: its cycle and commit.
type stored struct {
	line, cycle int
	commit      gitstore.Hash
}

// store adds one batch's records to the notes, in one notes commit, and
// warns about each cycle number the ledger (or an earlier line) already has
// on another commit.
func (im *importer) store(add map[gitstore.Hash][]ledger.Record, order []stored) error {
	l, rep := im.l, im.rep
	unlock, err := filelock.Lock(l.LockPath())
	if err != nil {
		return err
	}
	defer unlock()
	n := 0
	for _, rs := range add {
		n += len(rs)
	}
	warned := len(rep.Warnings)
	load := func(snap *gitstore.Notes) (*Index, error) {
		if im.ix != nil && im.ix.notes == snap.Commit() {
			return im.ix, nil
		}
		ix, err := l.loadIndex(snap)
		if err == nil {
			err = ix.complete()
		}
		if err != nil {
			return nil, err
		}
		im.ix = ix
		return ix, nil
	}
	next, err := l.updateWith(load, func(snap *gitstore.Notes, ix *Index) (map[gitstore.Hash][]ledger.Record, func(int) string, error) {
		rep.Warnings = rep.Warnings[:warned] // anew on a retry
		earlier := map[int]gitstore.Hash{}
		for _, s := range order {
			obj, ok, err := ix.Find(s.cycle)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				obj, ok = earlier[s.cycle]
			}
			if ok && obj != s.commit {
				rep.Warnings = append(rep.Warnings, ImportProblem{s.line,
					fmt.Sprintf("cycle %d is also recorded on commit %s; both records are kept", s.cycle, obj.Short())})
			}
			if _, seen := earlier[s.cycle]; !seen {
				earlier[s.cycle] = s.commit
			}
		}
		return add, func(added int) string { return fmt.Sprintf("git evolve: import %d records", added) }, nil
	})
	if err != nil {
		im.ix = nil
		return err
	}
	// What this batch stored, for the next one (while no one else writes
	// in between).
	if im.ix != nil {
		for _, s := range order {
			im.ix.add(s.commit, []int{s.cycle})
		}
		im.ix.notes = next.snap.Commit()
	}
	rep.Stored += next.added
	rep.Present += n - next.added
	return nil
}

// allIDs are the ids of every record of the ledger, in every copy it reads.
func (l *Ledger) allIDs() (map[string]bool, error) {
	list, err := l.List(ListOptions{})
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{"": true} // never empty: the caller reads once
	for _, en := range list.Entries {
		ids[en.Record.ID] = true
	}
	return ids, nil
}

// inferResult gives a record with no result one, from what the AgentOps
// shape says of the cycle, and marks the fields it inferred. Its type, when
// it is a result (or harvest, or idle), is the result; else a cycle with a
// commit improved, or regressed when its fitness fell (fitness_after below
// fitness_before: numbers, "passing/total", or objects with score or
// passing and total); a cycle without one is unchanged. It also takes the
// timestamp from date, and the goal counts from a fitness_after that has
// them, where the record has none.
func inferResult(r *ledger.Record) {
	var inferred []string
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(r.Extra[k], &s)
		return s
	}
	switch t := str("type"); {
	case ledger.ValidResult(t):
		r.Result = t
	case t == "harvest":
		r.Result = ledger.Harvested
	case t == "idle":
		r.Result = ledger.Unchanged
	case r.Commit() == "":
		r.Result = ledger.Unchanged
	default:
		r.Result = ledger.Improved
		before, okB := fitnessOf(r.Extra["fitness_before"])
		after, okA := fitnessOf(r.Extra["fitness_after"])
		if okB && okA && after.score < before.score {
			r.Result = ledger.Regressed
		}
	}
	inferred = append(inferred, "result")
	if r.Timestamp == "" {
		if d := str("date"); d != "" {
			r.Timestamp = d
			inferred = append(inferred, "timestamp")
		}
	}
	if after, ok := fitnessOf(r.Extra["fitness_after"]); ok && after.total != nil && r.GoalsPassing == nil && r.GoalsTotal == nil {
		r.GoalsPassing, r.GoalsTotal = after.passing, after.total
		inferred = append(inferred, "goals_passing", "goals_total")
	}
	if r.Extra == nil {
		r.Extra = map[string]json.RawMessage{}
	}
	r.Extra[Inferred] = ledger.Value(inferred)
}

// fitness is a fitness value as a cycle history gives it.
type fitness struct {
	score          float64
	passing, total *int
}

// fitnessOf reads a fitness value: a number, a number or "passing/total"
// in a string, or an object with score (or value, or fitness), or with
// passing and total (or goals_passing and goals_total).
func fitnessOf(v json.RawMessage) (fitness, bool) {
	var f fitness
	if len(v) == 0 || len(v) > 4096 || string(v) == "null" {
		return f, false
	}
	var num float64
	if json.Unmarshal(v, &num) == nil {
		return fitness{score: num}, finite(num)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		s = strings.TrimSpace(s)
		if a, b, ok := strings.Cut(s, "/"); ok {
			p, err1 := strconv.Atoi(strings.TrimSpace(a))
			t, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 != nil || err2 != nil || t <= 0 || p < 0 || p > t {
				return f, false
			}
			return fitness{score: float64(p) / float64(t), passing: &p, total: &t}, true
		}
		num, err := strconv.ParseFloat(s, 64)
		return fitness{score: num}, err == nil && finite(num)
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(v, &o) != nil {
		return f, false
	}
	for _, k := range []string{"score", "value", "fitness"} {
		if json.Unmarshal(o[k], &num) == nil && o[k] != nil && finite(num) {
			return fitness{score: num}, true
		}
	}
	var p, t int
	for _, k := range [][2]string{{"passing", "total"}, {"goals_passing", "goals_total"}} {
		if json.Unmarshal(o[k[0]], &p) == nil && json.Unmarshal(o[k[1]], &t) == nil && o[k[0]] != nil && o[k[1]] != nil && t > 0 && p >= 0 && p <= t {
			return fitness{score: float64(p) / float64(t), passing: &p, total: &t}, true
		}
	}
	return f, false
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Export returns the ledger as canonical JSON Lines in cycle order, with
// the journal's records too when journal is true. Lines that do not parse
// are returned as errors, not exported.
func (l *Ledger) Export(journal bool) ([]byte, []*NoteError, error) {
	lines, errs, err := l.Lines(ListOptions{Journal: journal}, nil)
	if err != nil {
		return nil, nil, err
	}
	// sized once: grown as it is written, the buffer of 100,000 records
	// (36 MB) is allocated and cleared again and again
	n := 0
	for _, ln := range lines {
		n += len(ln.Text) + 1
	}
	b := make([]byte, 0, n)
	for _, ln := range lines {
		b = append(append(b, ln.Text...), '\n')
	}
	return b, errs, nil
}
