// Package audit checks the shared ledger and mends what rewrites break.
//
// Verify reads the ledger as it is and as it was: every note parses and
// names a schema this binary knows; ids are unique (a record copied to
// several commits is one record); every record's commit is here (or is
// reported as not fetched); the commits' Evolve-* trailers agree with the
// records on them; the records form a hash chain (each names the one
// before it, with a digest of its line), so a record edited or deleted
// later is named by the one that came after it; and no commit of the
// ledger's own history removed or changed a record, which pinpoints the
// notes commit (who, when) that did, nor named in its Evolve-Largest-Cycle
// trailer less than its ledger holds (largest.go). Records written before
// a rule existed are reported as such, never as breaches.
//
// Relink attaches records to the commits that carry their work after a
// cherry-pick, a squash merge or a server-side rebase, none of which carry
// notes.
package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// Severity says whether a finding fails verify.
type Severity string

const (
	// Breach: the ledger is not what its writers wrote, or cannot be read.
	Breach Severity = "breach"
	// Notice: worth knowing, not wrong (a commit not fetched, records from
	// before the chain, two clones that took one cycle number).
	Notice Severity = "notice"
)

// Finding is one thing verify found.
type Finding struct {
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`
	Message  string   `json:"message"`
	Cycle    int      `json:"cycle,omitempty"`
	ID       string   `json:"id,omitempty"`
	Commit   string   `json:"commit,omitempty"`
	// NotesCommit is the commit of the ledger's history that made the
	// change found.
	NotesCommit string `json:"notes_commit,omitempty"`
	// Original is the record as it was before that change: what
	// git evolve repair puts back.
	Original string `json:"original,omitempty"`
	// Ref is the saved work a save-deleted finding is about.
	Ref string `json:"ref,omitempty"`
	// Pruned says that git notes prune made the change (PrunedSubject).
	Pruned bool `json:"pruned,omitempty"`
	// Commits are, for a duplicate-id finding, every commit whose note
	// holds a record of the id.
	Commits []string `json:"commits,omitempty"`
	// source is, for a record lost from the ledger, the notes commit the
	// version Original is read from (what a repair names).
	source string
	// at is, for a finding of the checks of the summaries, the cycle of
	// the record whose place in the summaries' order it takes: a verify
	// that builds on the delta puts new findings among the kept ones by it.
	at int
}

// Report is what verify found.
type Report struct {
	Records  int       `json:"records"`
	Notes    int       `json:"notes"`
	Findings []Finding `json:"findings"`
	// History is how many commits of the ledger's history were read (the
	// others were verified by an earlier run).
	History int `json:"history_checked"`
	// sinceVerified counts the findings made from what changed since the
	// tip this clone verified before (the history read, the entries that
	// are no notes): a verify after this one, from the tip it verifies,
	// does not make them again.
	sinceVerified int
	// unchained counts the records with no place in the chain the history
	// check reported (added after the chain began): the notice of those
	// before the chain leaves them out.
	unchained int
	// largest is what the history check knew of the largest cycle of the
	// ledger at its tip (see largestCheck), for the verified file.
	largest largestMemory
	// memoryAt is, for a commit the history check read, what it knew
	// there (largest and chain), for the verified file.
	memoryAt func(gitstore.Hash) (largestMemory, chainMemory)
	// chain is whether the chain had begun at that tip, when the history
	// check knew it without reading the ledger (unchainedCheck.memory).
	chain chainMemory
}

// Breaches counts the findings that fail verify.
func (r *Report) Breaches() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Breach {
			n++
		}
	}
	return n
}

func (r *Report) add(s Severity, kind, format string, args ...any) *Finding {
	r.Findings = append(r.Findings, Finding{Severity: s, Kind: kind, Message: fmt.Sprintf(format, args...)})
	return &r.Findings[len(r.Findings)-1]
}

// Verify checks the ledger of l (see the package comment). The commits whose
// trailers are checked are those git log revs selects (HEAD when empty).
func Verify(l *store.Ledger, revs ...string) (*Report, error) {
	return VerifyWith(l, VerifyOptions{Revs: revs})
}

// VerifyOptions change what VerifyWith reads.
type VerifyOptions struct {
	// Revs select the commits whose trailers are checked (HEAD when empty).
	Revs []string
	// FullHistory reads the ledger's whole history, not only what was not
	// verified before.
	FullHistory bool
	// SaveLater writes what the verify read for the next one (the
	// view's file) in the background: the caller goes on with its
	// work and calls WaitSaved before it exits.
	SaveLater bool
	// BreachesOnly leaves out of the report the findings of the checks
	// that can only give notices (the commits not fetched, cycle numbers
	// two records took): what a push guard needs to know. Every check still
	// runs, so that the summaries kept serve any verify.
	BreachesOnly bool

	// FromGit reads the ledger from git alone: none of the files verify
	// keeps to build on (the summaries, the delta) is read. It
	// answers what a verify that builds on them answers; what this clone
	// remembers (the tip it verified, the saved work) is read as always.
	// The files are written anew.
	FromGit bool

	// noDelta makes the verify read every summary: the delta's keys section
	// was found damaged where it read.
	noDelta bool
}

// VerifyWith is Verify with options.
func VerifyWith(l *store.Ledger, o VerifyOptions) (*Report, error) {
	rd, err := readLedgerReads(l)
	if err != nil {
		return nil, err
	}
	// What an earlier verify of this process is keeping is read once
	// written: it is the latest, and this verify's own is not then renamed
	// over by the older one.
	saving.Wait()
	var kept *keptFile
	if !o.FromGit {
		kept = openKept(l.Repo())
		// What verify kept stands for objects; it is used only while
		// each of them is still here (verifyobjects.go).
		if !objectsHold(l.Repo(), rd, kept) {
			if kept != nil {
				gitstore.Tracef("verify: not every object %s lists is here: the ledger is read from git alone", store.ViewPath(l.Repo()))
			}
			kept.release()
			kept, o.FromGit = nil, true
		}
	}
	rep, parts, err := verify(l, o, rd, kept)
	if errors.Is(err, errKeysDamaged) {
		gitstore.Tracef("verify: the keys section of %s is damaged where it was read; reading every summary", store.ViewPath(l.Repo()))
		o.noDelta = true
		rep, parts, err = verify(l, o, rd, kept)
	}
	if err == nil && o.FromGit {
		// The history this clone verified before is not read again, but it
		// is still there: every commit of it (one walk by git).
		err = historyHere(l.Repo(), rd)
	}
	if err != nil {
		kept.release()
		// An object the ledger stands for that is missing is a breach,
		// never an error that a caller might read past.
		if mr := missingReport(l, rd); mr != nil {
			return mr, nil
		}
		return nil, err
	}
	// What the verify leaves for the next one is written with the objects
	// it stands for, in the background when the caller asked for it.
	save := func() {
		defer kept.release()
		if parts != nil {
			keep(l.Repo(), rd, kept, *parts)
		} else if kept != nil {
			if _, ok := keepObjects(l.Repo(), rd, kept); !ok {
				dropKept(l.Repo())
			}
		}
		// The report an older git-evolve kept: nothing reads it now.
		_ = os.Remove(filepath.Join(l.Repo().CommonDir(), "evolve", "verify-report"))
	}
	if o.SaveLater {
		saving.Add(1)
		go func() {
			defer saving.Done()
			save()
		}()
	} else {
		save()
	}
	if o.BreachesOnly {
		return breachesOnly(rep), nil
	}
	return rep, nil
}

// anchoredCopies makes a notice of a duplicate-id breach whose records
// differ only in "anchored": an import stored a record whose commit this
// clone lacked on its anchor (same id, by design: docs/data-model.md),
// and the record as it was made came later, with the ledger of the clone
// that made it. They are one record. It is judged before the verify
// decides whether the ledger is clean, on the notes verify read (rd's
// notes commits, from git: never from what a reader kept), over every
// record of the id on every commit the finding names: all alike but for
// "anchored": true, one anchored and one not, and every anchor a commit
// (or one not here). Anything else (a field, the cycle, a note on a
// blob) is still the breach.
func anchoredCopies(repo *gitstore.Repo, rd *ledgerReads, rep *Report) error {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Severity != Breach || f.Kind != "duplicate-id" || f.ID == "" || len(f.Commits) < 2 {
			continue
		}
		ok, recorded, anchored, err := oneRecord(repo, rd, f.ID, f.Commits)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		f.Severity, f.Kind = Notice, "anchored-copy"
		f.Message = fmt.Sprintf("cycle %d (id %s) is in the ledger as it was recorded, on %s, and as an import stored it on its anchor, on %s: one record",
			f.Cycle, f.ID, strings.Join(recorded, ", "), strings.Join(anchored, ", "))
	}
	return nil
}

// oneRecord reads, at each notes commit verify read, the notes of commits
// and says whether their records of id are one record and its anchored
// copies (anchoredCopies), with the commits of each, short.
func oneRecord(repo *gitstore.Repo, rd *ledgerReads, id string, commits []string) (ok bool, recorded, anchored []string, err error) {
	var objs []gitstore.Hash
	for _, c := range commits {
		h, err := gitstore.ParseHash(c)
		if err != nil {
			return false, nil, nil, nil
		}
		objs = append(objs, h)
	}
	// An anchor is a commit, or one this clone does not have: never a blob,
	// a tree or a tag.
	types, err := repo.ObjectTypes(objs)
	if err != nil {
		return false, nil, nil, err
	}
	for _, t := range types {
		if t != "" && t != "commit" {
			return false, nil, nil, nil
		}
	}
	var same []byte
	seen := map[string]bool{}
	for _, tip := range rd.sources {
		snap, err := repo.NotesAt(tip)
		if err != nil {
			return false, nil, nil, err
		}
		for _, obj := range objs {
			data, err := noteText(repo, snap, obj) // every copy of its note
			if err != nil {
				return false, nil, nil, err
			}
			recs, _ := ledger.ParseLines(data)
			for _, r := range recs {
				key := obj.String() + " " + string(r.Marshal())
				if r.ID != id || seen[key] {
					continue
				}
				seen[key] = true
				if v, has := r.Extra[store.Anchored]; has {
					if string(v) != "true" {
						return false, nil, nil, nil
					}
					anchored = append(anchored, obj.Short())
					r.Extra = maps.Clone(r.Extra)
					delete(r.Extra, store.Anchored)
				} else {
					recorded = append(recorded, obj.Short())
				}
				line := r.Marshal()
				if same == nil {
					same = line
				}
				if !bytes.Equal(line, same) {
					return false, nil, nil, nil
				}
			}
		}
	}
	return len(anchored) > 0 && len(recorded) > 0, slices.Compact(recorded), slices.Compact(anchored), nil
}

// historyHere fails when a commit of the history of a notes commit the
// ledger is read from is not here.
func historyHere(repo *gitstore.Repo, rd *ledgerReads) error {
	for _, tip := range rd.sources {
		if tip == rd.listed {
			continue // its history check listed it whole
		}
		if _, err := repo.RevList(tip.String()); err != nil {
			return err
		}
	}
	return nil
}

// verify is what VerifyWith answers, built on what verify kept (k, nil
// when none), with what it leaves for the next verify (nil: nothing new).
func verify(l *store.Ledger, o VerifyOptions, rd *ledgerReads, k *keptFile) (*Report, *keptParts, error) {
	repo := l.Repo()
	rep := &Report{Findings: []Finding{}}
	accepted, err := Acceptances(repo)
	if err != nil {
		return nil, nil, err
	}
	// The records whose change an acknowledgement accepted (what makes
	// some findings notices).
	ids, err := acceptedIDs(repo, accepted)
	if err != nil {
		return nil, nil, err
	}
	// The ledger's history since this clone verified it (one git rev-list)
	// is read, each commit diffed and compared, while the summaries are read
	// and checked; a line it looks up in the ledger waits for them. A verify
	// that fails first ends it.
	var all records
	indexed, quit := make(chan struct{}), make(chan struct{})
	holds := func(_ gitstore.Hash, id, line string) (bool, error) {
		select {
		case <-indexed:
		case <-quit:
			return false, errVerifyEnded
		}
		return all.holds(id, ledger.Digest([]byte(line))), nil
	}
	look := func() (records, error) {
		select {
		case <-indexed:
		case <-quit:
			return nil, errVerifyEnded
		}
		return all, nil
	}
	type checked struct {
		rep *Report
		tip gitstore.Hash
		pos reflogPos
		// read: the reflog's entries up to pos named no record lost
		read bool
		// lostBreaches are the breaches of the reflog's read, beside the
		// history's
		lostBreaches int
		err          error
	}
	historyRead := make(chan *notesHistory, 1) // nil when it could not be read
	historyChecked := make(chan checked, 1)
	var running sync.WaitGroup
	running.Add(1)
	go func() {
		defer running.Done()
		nh, err := readHistory(repo, o.FullHistory)
		if err != nil {
			historyRead <- nil
			historyChecked <- checked{err: err}
			return
		}
		if nh.whole {
			rd.listed = nh.tip
		}
		historyRead <- nh
		hrep := &Report{}
		tip, err := checkHistory(l, hrep, holds, look, accepted, nh)
		var pos reflogPos
		read, lostBreaches := false, 0
		if err == nil {
			// What vanished with no notes commit removing it.
			lost := &Report{}
			pos, read, err = checkLost(l, lost, nh, look, accepted)
			hrep.Findings = append(hrep.Findings, lost.Findings...)
			lostBreaches = lost.Breaches()
		}
		historyChecked <- checked{hrep, tip, pos, read, lostBreaches, err}
	}()
	var d *deltaRun
	defer func() {
		close(quit)
		running.Wait()
		if d != nil {
			d.close() // once nothing looks a line up in it
		}
	}()
	// After a few records were added, the checks read what the last verify
	// kept of its findings, and look the records they name up in the keys
	// file (delta.go); else they read every summary.
	d, err = readDelta(l, o, rd, ids, k)
	if err != nil {
		return nil, nil, err
	}
	var kept *verifyState
	if d == nil {
		kept = loadState(k, o)
		if kept != nil {
			defer kept.body() // its decode does not outlive this verify
		}
	}
	// git reads the trailers of HEAD's history while the ledger is read.
	type trailers struct {
		commits []trailerSum
		head    gitstore.Hash
		err     error
	}
	logged := make(chan trailers, 1)
	go func() {
		var tl trailers
		if d != nil {
			tl.commits, tl.head, tl.err = d.gainedTrailers(repo)
		} else {
			tl.commits, tl.head, tl.err = headTrailers(repo, o.Revs, kept, rd)
		}
		logged <- tl
	}()
	nh := <-historyRead
	if nh == nil {
		<-logged
		return nil, nil, (<-historyChecked).err
	}
	// What sits at a note's path and is no note: what changed since the
	// verified tip is read while the kept summaries are decoded; a look at
	// every tree waits for the summaries, whose read keeps the trees it
	// walks as far as the tree cache has room (the history check, reading
	// beside it, may fill the cache first: then trees are read twice).
	bad := &Report{}
	since := nh.incremental(o.FullHistory)
	// The index of cycles is compared with the notes beside the rest:
	// what changed since the verified tip, or all of it.
	indexRep := &Report{}
	indexChecked := make(chan error, 1)
	checkIndexNow := func(from gitstore.Hash, want map[string]bool) {
		running.Add(1)
		go func() {
			defer running.Done()
			indexChecked <- checkIndex(repo, indexRep, nh.tip, from, want)
		}()
	}
	if since {
		// the verify that found that tip clean compared an index of
		// another layout (an older git-evolve's), or none: this layout's
		// is compared whole, once; or it read the history clean up to
		// there and compared the index at a later tip (checkedFrom)
		checkIndexNow(nh.checkedFrom(repo), nil)
	}
	if since {
		if err := checkBadNotes(l, bad, nh, o.FullHistory); err != nil {
			<-logged
			return nil, nil, err
		}
	}
	var (
		ls     *ledgerSums
		byID   *sumIndex
		source *gitstore.Hash
		found  *sumFindings
	)
	if d != nil {
		if !since {
			checkIndexNow(gitstore.ZeroHash, nil)
		}
		all, found = d.look, d.found
		rep.Records, rep.Notes = d.next.Records, d.next.Notes
	} else {
		ls, source, err = ledgerSumsOf(l, kept, rd)
		if err != nil {
			<-logged
			return nil, nil, err
		}
		if !since {
			// what the index is to list, from the notes just read
			var want map[string]bool
			if ls.indexOf == nh.tip {
				want = ls.index
			}
			checkIndexNow(gitstore.ZeroHash, want)
		}
		byID = ls.byKey()
		all = byID
		found = &sumFindings{Lines: ls.Lines}
		found.check(ls.Sums, byID)
		rep.Records, rep.Notes = byID.keys(), ls.Notes
	}
	close(indexed)
	if !since {
		if err := checkBadNotes(l, bad, nh, o.FullHistory); err != nil {
			<-logged
			return nil, nil, err
		}
	}
	if err := <-indexChecked; err != nil {
		<-logged
		return nil, nil, err
	}
	bad.Findings = append(bad.Findings, indexRep.Findings...)
	rep.sinceVerified += len(bad.Findings)
	marker := &Report{}
	checkMarker(repo, marker)
	saves := &Report{}
	if err := checkSaves(l, saves); err != nil {
		<-logged
		return nil, nil, err
	}
	hc := <-historyChecked
	if hc.err != nil {
		<-logged
		return nil, nil, hc.err
	}
	rep.History = hc.rep.History
	rep.sinceVerified += len(hc.rep.Findings)
	tip := hc.tip
	tl := <-logged
	if tl.err != nil {
		return nil, nil, tl.err
	}
	if d != nil {
		d.checkChainAndTrailers(tl.commits, ids)
		if d.keys.damaged() {
			// Something the checks looked up was read from a damaged
			// block: nothing of this verify is kept, and it is made again.
			return nil, nil, errKeysDamaged
		}
	} else {
		found.Chain = collect(func(r *Report) { found.Unchained = checkChain(r, byID, byID, ids) })
		found.Trailers = checkTrailers(tl.commits, byID, ids)
	}
	rep.Findings = found.report(bad.Findings, marker.Findings, saves.Findings, hc.rep.Findings, hc.rep.unchained)
	if err := anchoredCopies(repo, rd, rep); err != nil {
		return nil, nil, err
	}
	if rep.Breaches() == 0 && !tip.IsZero() {
		// This clone has seen the ledger clean up to here: a later ledger
		// that does not descend from it had its history rewritten.
		writeVerified(repo, tip, hc.pos, hc.rep.largest, hc.rep.chain, store.CycleIndex.Name)
	} else if x, ok := historyCleanTo(repo, nh, hc.rep, bad.Breaches() == 0 && hc.lostBreaches == 0 && hc.read); ok {
		// Not clean, but the history is, up to x, the parent of the
		// notes commit that brought the oldest breach: the next verify
		// reads it on from there, and finds that breach again (a ledger
		// never found clean is not read whole at each verify).
		largest, chain := hc.rep.memoryAt(x)
		gitstore.Tracef("verify: the ledger's history is clean up to %s; the next verify reads it on from there", x.Short())
		// The index and what sits at a note's path were checked at the
		// tip, not at x: the next verify checks them from the tip, when
		// the ledger still descends from it, else whole.
		writeHistoryClean(repo, x, hc.pos, largest, chain, tip)
	} else if was := nh.was; hc.read && hc.pos != was.pos {
		// Not clean, but the reflog read so far lost nothing: the next
		// verify reads on from here.
		was.tip, was.pos = nh.done, hc.pos
		rewriteVerified(repo, was)
	}
	var parts *keptParts
	switch {
	case d != nil:
		p := d.toKeep()
		parts = &p
	case source != nil:
		// The state reads the fields of each key's first summary from the
		// keys written beside it; the delta state names them.
		keys := keysToKeep(rd, ids, *source, ls, byID, tl.head, found)
		if state := stateToKeep(rd, *source, ls, tl.head, tl.commits, keys); state != nil {
			parts = &keptParts{secState: written(state)}
			if keys != nil {
				parts[secKeys] = written(func(w *bufio.Writer) { encodeKeys(w, keys.token, keys.x) })
				parts[secDelta] = written(func(w *bufio.Writer) { encodeDelta(w, keys.delta) })
			}
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		return rep.Findings[i].Severity == Breach && rep.Findings[j].Severity != Breach
	})
	return rep, parts, nil
}

// collect is what check adds to a report.
func collect(check func(*Report)) []Finding {
	rep := &Report{}
	check(rep)
	return rep.Findings
}

// sumFindings are the findings of the checks verify runs on the records'
// summaries, each check's apart: the report puts them among the others in
// a fixed order (report), and the delta state keeps them for the next
// verify, which adds those of the records added since.
type sumFindings struct {
	// Lines are those of the lines that are no records, by commit.
	Lines                                          []Finding
	Schema, IDs, NotCommit, Absent, Numbers, Chain []Finding
	// Unchained counts the records with no place in the chain.
	Unchained int
	// Trailers are those of HEAD's commits, newest first.
	Trailers []trailerFinding
}

// check runs the checks of each record's own summaries (all of them,
// filed in x) and adds their findings.
func (fs *sumFindings) check(sums []recSum, x *sumIndex) {
	fs.Schema = append(fs.Schema, collect(func(r *Report) { checkSchema(r, sums) })...)
	fs.IDs = append(fs.IDs, collect(func(r *Report) { checkIDs(r, x) })...)
	fs.NotCommit = append(fs.NotCommit, collect(func(r *Report) { checkNotCommits(r, sums) })...)
	fs.Absent = append(fs.Absent, collect(func(r *Report) { checkAbsent(r, sums) })...)
	fs.Numbers = append(fs.Numbers, collect(func(r *Report) { checkNumbers(r, sums, x) })...)
}

// report is the report's findings: those of the summaries, with those of
// the entries that are no notes (bad), the ledger's marker, the saved work
// and the ledger's history in their places. unchained records with no
// place in the chain were reported by the history (added after it began).
func (fs *sumFindings) report(bad, marker, saves, history []Finding, unchained int) []Finding {
	out := []Finding{}
	for _, part := range [][]Finding{fs.Lines, bad, fs.Schema, marker, fs.IDs, fs.NotCommit, fs.Absent, fs.Numbers,
		saves, history, fs.Chain, beforeChain(max(0, fs.Unchained-unchained))} {
		out = append(out, part...)
	}
	for _, t := range fs.Trailers {
		out = append(out, t.Finding)
	}
	return out
}

// saving counts the verify sections being written in the background
// (VerifyOptions.SaveLater).
var saving sync.WaitGroup

// WaitSaved waits for the verify sections being written in the
// background to be written.
func WaitSaved() { saving.Wait() }

// fullOnlyKinds are the findings only a verify of every check makes (the
// presence of the records' commits, cycle numbers taken twice).
var fullOnlyKinds = map[string]bool{"not-fetched": true, "not-a-commit": true, "number-collision": true}

// breachesOnly is rep without the findings only a verify of every check
// makes.
func breachesOnly(rep *Report) *Report {
	out := *rep
	out.Findings = []Finding{}
	for _, f := range rep.Findings {
		if !fullOnlyKinds[f.Kind] {
			out.Findings = append(out.Findings, f)
		}
	}
	return &out
}

// checkBadNotes reports what sits at a note's path of the local ledger and
// is no note (a submodule entry, a symbolic link): every reader passes
// it by, so only verify says it is there. The next record on that commit
// replaces it.
func checkBadNotes(l *store.Ledger, rep *Report, nh *notesHistory, full bool) error {
	repo := l.Repo()
	snap, err := notesAt(repo, nh.tip) // the tip the history was read at: one reading of the ref
	if err != nil {
		return err
	}
	// A tip this clone verified clean held none: only what changed since
	// is read, from where the last verify found them sound (checkedFrom:
	// the tip it verified, or the later tip a verify that read the history
	// clean only up to there checked). A tip remembered with no layout of
	// the index compared (an older git-evolve's) is looked at whole, once.
	var since *gitstore.Notes
	if from := nh.checkedFrom(repo); nh.incremental(full) && !from.IsZero() {
		if since, err = repo.NotesAt(from); err != nil {
			since = nil
		}
	}
	bad, err := snap.BadNotesSince(since)
	if err != nil {
		return err
	}
	for _, obj := range bad {
		f := rep.add(Breach, "not-a-note", "the ledger's entry for %s is a submodule or a symbolic link, not a note's text: readers skip it, as git does; git evolve repair removes it", obj.Short())
		f.Commit = obj.String()
	}
	return nil
}

// unreadable reports a line of a ledger note that is no record: a breach
// when it reads as a damaged one (a JSON object that does not parse, or
// names no known shape), a notice when it is text (a person's note on the
// commit: the records themselves are checked by the chain and the history).
func unreadable(rep *Report, line, format string, args ...any) *Finding {
	rep.Findings = append(rep.Findings, unreadableFinding(line, fmt.Sprintf(format, args...)))
	return &rep.Findings[len(rep.Findings)-1]
}

// unreadableFinding is unreadable's finding, saying msg.
func unreadableFinding(line, msg string) Finding {
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return Finding{Severity: Breach, Kind: "unreadable", Message: msg}
	}
	return Finding{Severity: Notice, Kind: "not-a-record", Message: msg + ": a line that is no record (a person's note?), kept as it is"}
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

func where(e *recSum) string {
	return fmt.Sprintf("cycle %d on %s", e.Cycle, e.Commit.Short())
}

// checkSchema: every record names a schema this binary reads.
func checkSchema(rep *Report, entries []recSum) {
	for i := range entries {
		e := &entries[i]
		if e.V > ledger.SchemaMajor {
			f := rep.add(Breach, "schema", "%s is a record of schema v%d; this git-evolve reads v%d: upgrade it", where(e), e.V, ledger.SchemaMajor)
			f.Cycle, f.ID, f.Commit, f.at = e.Cycle, e.ID, e.Commit.String(), e.Cycle
		}
	}
}

// checkMarker: the ledger's marker, when it has one, allows this binary
// to write.
func checkMarker(repo *gitstore.Repo, rep *Report) {
	snap, err := repo.ReadNotes(store.NotesRef)
	if err != nil {
		return
	}
	if h, ok, err := snap.NonNote(ledger.MarkerName); err == nil && ok {
		if data, err := repo.ReadBlob(h); err == nil {
			if err := ledger.CheckWritable(data); err != nil {
				rep.add(Breach, "schema", "%v", err)
			}
		}
	}
}

// noID starts the key verify files a record with no id under: no id
// starts with it.
const noID = "\x00no id "

// checkIDs: one id, one record (copies of it on several commits are fine).
func checkIDs(rep *Report, byID *sumIndex) {
	byID.each(func(es []*recSum) {
		id := es[0].key()
		first := es[0].Digest
		for _, e := range es[1:] {
			if e.Digest != first {
				f := rep.add(Breach, "duplicate-id", "id %s names two different records: %s and %s", id, where(es[0]), where(e))
				f.ID, f.Cycle, f.Commit, f.at = id, e.Cycle, e.Commit.String(), es[0].Cycle
				for _, o := range es {
					if c := o.Commit.String(); !slices.Contains(f.Commits, c) {
						f.Commits = append(f.Commits, c)
					}
				}
				break
			}
		}
	})
}

// checkNotCommits: each record is noted on a commit, not on another
// object.
func checkNotCommits(rep *Report, entries []recSum) {
	for i := range entries {
		e := &entries[i]
		if e.NotCommit {
			f := rep.add(Breach, "not-a-commit", "cycle %d is noted on %s, which is no commit: records are notes on the commits cycles delivered", e.Cycle, e.Commit.Short())
			f.Cycle, f.ID, f.Commit, f.at = e.Cycle, e.ID, e.Commit.String(), e.Cycle
		}
	}
}

// checkAbsent: each record's commit is here; one that is not is reported
// once, with its records' cycles, in the order of its first record.
func checkAbsent(rep *Report, entries []recSum) {
	absent := map[gitstore.Hash][]int{}
	var order []gitstore.Hash
	for i := range entries {
		e := &entries[i]
		if !e.Absent {
			continue
		}
		if _, seen := absent[e.Commit]; !seen {
			order = append(order, e.Commit)
		}
		absent[e.Commit] = append(absent[e.Commit], e.Cycle)
	}
	for _, c := range order {
		f := rep.add(Notice, "not-fetched", "commit %s (cycle %s) is not in this clone: not fetched, or gone", c.Short(), joinInts(absent[c]))
		f.Commit, f.at = c.String(), absent[c][0] // its first record's (the lowest)
	}
}

// checkNumbers reports cycle numbers two records took (two clones that
// numbered at once): both stay, listed in a fixed order.
func checkNumbers(rep *Report, sums []recSum, byID *sumIndex) {
	// Each record counts once, by its first summary (a copy on another
	// commit is the same record); sums are in cycle order, so the records
	// of one cycle are one run of them.
	var run []*recSum
	report := func() {
		if len(run) < 2 {
			return
		}
		who := make([]string, len(run))
		for i, e := range run {
			who[i] = fmt.Sprintf("%s (%s)", e.ID, provenance(e))
		}
		sort.Strings(who)
		n := run[0].Cycle
		f := rep.add(Notice, "number-collision", "cycle %d was taken by %d records: %s; git evolve cycle start --claim reserves numbers on the remote", n, len(run), strings.Join(who, ", "))
		f.Cycle, f.at = n, n
	}
	for i := range sums {
		s := &sums[i]
		if len(run) > 0 && run[0].Cycle != s.Cycle {
			report()
			run = run[:0]
		}
		if byID.isFirst(i) {
			run = append(run, s)
		}
	}
	report()
}

func provenance(r *recSum) string {
	by, host := r.By, r.Host
	if name, _, ok := strings.Cut(by, " <"); ok {
		by = name
	}
	switch {
	case by != "" && host != "":
		return by + " on " + host
	case by != "":
		return by
	case host != "":
		return host
	}
	return "unknown author"
}

// acceptedIDs are the records whose change an acknowledgement accepted:
// those the accepted notes commits changed or removed.
func acceptedIDs(repo *gitstore.Repo, accepted map[gitstore.Hash]Acceptance) (map[string]bool, error) {
	out := map[string]bool{}
	h := &historyCheck{repo: repo, undone: map[gitstore.Hash]map[string]string{}}
	for c := range accepted {
		was, err := h.replacedBy(c)
		if err != nil {
			return nil, err
		}
		for id := range was {
			out[id] = true
		}
	}
	return out, nil
}

// records answers what the chain and trailer checks ask of the whole
// ledger: a record's first summary (in sum order), whether one of its
// summaries is on a commit, whether one has a digest. A sumIndex answers
// from the summaries in memory; a verify that builds on the keys section
// (deltaState) answers from it and from what was added since.
type records interface {
	firstOf(key string) (*recSum, bool)
	on(key string, c gitstore.Hash) bool
	holds(key, digest string) bool
	// commitsOf lists the commits key's summaries are on.
	commitsOf(key string) []gitstore.Hash
}

// checkChain: each record's prev names a record the ledger has, with the
// digest it had then. A record whose change was accepted is a notice. The
// records checked are those of keys; the records they name are looked up
// in all. It returns how many records have no place in the chain.
func checkChain(rep *Report, keys *sumIndex, all records, accepted map[string]bool) (unchained int) {
	keys.each(func(es []*recSum) {
		r := es[0]
		link := r.Prev
		if link == "" {
			if !r.Chained {
				unchained++ // written before the chain existed, or imported
			}
			return
		}
		id, digest, ok := ledger.ParseLink(link)
		if !ok {
			if d, noIDOK := noIDLink(link); noIDOK {
				// An older git-evolve linked to a record with no id by its
				// digest alone: that record is known by what it says.
				if _, there := all.firstOf(noID + d); !there {
					f := rep.add(Breach, "deleted", "%s was written after a record with no id (digest %s), which the ledger no longer has as it was: it was edited or deleted", where(es[0]), d)
					f.Cycle, f.Commit, f.at = r.Cycle, es[0].Commit.String(), r.Cycle
				}
				return
			}
			f := rep.add(Breach, "chain", "%s has a prev that is not one (%q)", where(es[0]), link)
			f.ID, f.Cycle, f.Commit, f.at = r.ID, r.Cycle, es[0].Commit.String(), r.Cycle
			return
		}
		severity := Breach
		if accepted[id] {
			severity = Notice // the change that did it was accepted
		}
		prev, there := all.firstOf(id)
		if !there {
			f := rep.add(severity, "deleted", "%s was written after record %s, which the ledger no longer has: it was deleted", where(es[0]), id)
			f.ID, f.Cycle, f.Commit, f.at = id, r.Cycle, es[0].Commit.String(), r.Cycle
			return
		}
		// The record as linked may be on another commit: a copy (an
		// anchored one among them: a duplicate-id finding says whether the
		// copies of an id are one record).
		if got := prev.Digest; got != digest && !all.holds(id, digest) {
			f := rep.add(severity, "edited", "%s is not what it was when %s was written after it: it was edited", where(prev), where(es[0]))
			f.ID, f.Cycle, f.Commit, f.at = id, prev.Cycle, prev.Commit.String(), r.Cycle
		}
	})
	return unchained
}

// noIDLink reads a prev link an older git-evolve wrote after a record with
// no id: ":<digest>".
func noIDLink(link string) (digest string, ok bool) {
	d, ok := strings.CutPrefix(link, ":")
	return d, ok && len(d) == 32 && strings.Trim(d, "0123456789abcdef") == ""
}

// beforeChain is the notice of the records that have no place in the
// chain.
func beforeChain(unchained int) []Finding {
	if unchained == 0 {
		return nil
	}
	rep := &Report{}
	rep.add(Notice, "before-chain", "%d record(s) have no place in the chain: written before git-evolve chained records, imported, or accepted", unchained)
	return rep.Findings
}

// trailerKeys are the trailers checkTrailers reads.
var trailerKeys = []string{"Evolve-Cycle", "Evolve-Id", "Evolve-Result", "Evolve-Record"}

// trailerFinding is what checkTrailers found of one commit.
type trailerFinding struct {
	Trailer trailerSum
	Finding Finding
}

// checkTrailers: a commit whose trailers name a cycle (commits, from git
// log) agrees with the ledger's record of it.
func checkTrailers(commits []trailerSum, all records, accepted map[string]bool) []trailerFinding {
	var out []trailerFinding
	for _, tc := range commits {
		if f, ok := checkTrailer(tc, all, accepted); ok {
			out = append(out, trailerFinding{tc, f})
		}
	}
	return out
}

// checkTrailer checks one commit's trailers against the ledger.
func checkTrailer(tc trailerSum, all records, accepted map[string]bool) (Finding, bool) {
	rep := &Report{}
	id, result := tc.ID, tc.Result
	n, _ := strconv.Atoi(tc.Cycle)
	if id == "" {
		return Finding{}, false
	}
	r, known := all.firstOf(id)
	switch {
	case !known:
		f := rep.add(Notice, "unrecorded", "commit %s says it delivered cycle %d (id %s, %s), but the ledger has no record of it: not synced yet, or lost (git evolve relink finds copies)", tc.Hash.Short(), n, id, result)
		f.ID, f.Cycle, f.Commit = id, n, tc.Hash.String()
	case tc.Record != "" && !r.commitDigestIs(tc.Record):
		severity := Breach
		if accepted[id] {
			severity = Notice
		}
		f := rep.add(severity, "edited", "the record of cycle %d (id %s) is not what commit %s, which delivered it, says it was: it was edited", r.Cycle, id, tc.Hash.Short())
		f.ID, f.Cycle, f.Commit = id, r.Cycle, r.Commit.String()
	case r.Cycle != n || r.Result != result:
		f := rep.add(Breach, "trailers", "commit %s's trailers say cycle %d %s; the ledger's record %s says cycle %d %s", tc.Hash.Short(), n, result, id, r.Cycle, r.Result)
		f.ID, f.Cycle, f.Commit = id, r.Cycle, tc.Hash.String()
	case !all.on(id, tc.Hash):
		f := rep.add(Notice, "unlinked", "commit %s delivered cycle %d (id %s), whose record is on %s: git evolve relink attaches it here", tc.Hash.Short(), n, id, r.Commit.Short())
		f.ID, f.Cycle, f.Commit = id, n, tc.Hash.String()
	default:
		return Finding{}, false
	}
	return rep.Findings[0], true
}

// checkSaves: the saved work this clone made under refs/evolve/ (the work
// of regressed and aborted cycles, …) is still there.
func checkSaves(l *store.Ledger, rep *Report) error {
	saves, err := l.Saves()
	if err != nil {
		return err
	}
	for _, ref := range sortedRefs(saves) {
		h := saves[ref]
		if _, ok, err := l.Repo().RefHash(ref); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		present, err := l.Repo().HasObject(h)
		if err != nil {
			return err
		}
		how := "its commit " + h.Short() + " is still here: git evolve repair puts the ref back"
		if !present {
			how = "its commit " + h.Short() + " is gone too; git evolve repair --accept " + ref + " -m 'why' lets it go"
		}
		f := rep.add(Breach, "save-deleted", "the saved work %s is gone: the ref was deleted (%s)", ref, how)
		f.Commit = h.String()
		f.Ref = ref
	}
	return nil
}

func sortedRefs(m map[string]gitstore.Hash) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// verifiedPath keeps the last notes commit whose history verify read
// without finding a breach: its ancestors need not be read again.
func verifiedPath(repo *gitstore.Repo) string {
	return filepath.Join(repo.CommonDir(), "evolve", "verified")
}

// verifiedTip is the ledger's tip when this clone last verified it clean
// (zero when it never did).
func verifiedTip(repo *gitstore.Repo) gitstore.Hash {
	return readVerified(repo).tip
}

// errKeysDamaged is what a verify built on the delta returns when a block
// of the keys section it read was damaged: VerifyWith makes it again as a
// full read.
var errKeysDamaged = errors.New("the keys verify kept are damaged")

// errVerifyEnded is what a check running beside the others gets when the
// verify failed before it finished.
var errVerifyEnded = errors.New("the verify ended")

// notesHistory is the ledger's notes history against the tip this clone
// verified: the commits a verify reads, and whether the ledger still
// descends from that tip.
type notesHistory struct {
	tip      gitstore.Hash // the ledger's notes commit (zero: no ledger)
	done     gitstore.Hash // where this clone verified it (zero: never)
	was      verified      // what the verified file held as the verify began
	present  bool          // done is in the object store
	descends bool          // tip is done or descends from it
	commits  []gitstore.Hash
	whole    bool // commits are tip's whole history
}

// incremental says whether a verify reads only what changed since the
// verified tip: there is one, the ledger descends from it, and full is not
// asked for.
func (nh *notesHistory) incremental(full bool) bool {
	return !full && !nh.done.IsZero() && nh.descends
}

// checkedFrom is the notes commit at which the index of cycles and what
// sits at the notes' paths were last found sound, for a verify that reads
// the history since the tip verified: that tip, when its verify compared
// an index of this layout; the later tip its verify checked them at, when
// it read only the history clean up to there (verified.checked) and the
// ledger descends from that tip; else none (zero: they are checked whole).
func (nh *notesHistory) checkedFrom(repo *gitstore.Repo) gitstore.Hash {
	was := nh.was
	switch {
	case was.index == store.CycleIndex.Name:
		return nh.done
	case was.checked.IsZero() || was.checkedIndex != store.CycleIndex.Name || nh.tip.IsZero():
		return gitstore.ZeroHash
	case was.checked == nh.tip:
		return was.checked
	}
	if in, err := repo.IsAncestor(was.checked, nh.tip); err == nil && in {
		return was.checked
	}
	return gitstore.ZeroHash
}

// readHistory reads the ledger's notes history: the commits since the tip
// this clone verified when the ledger descends from it (and full is not
// asked for), else all of them. One git rev-list answers both questions:
// done is tip's ancestor exactly when it is on the boundary of done..tip.
func readHistory(repo *gitstore.Repo, full bool) (*notesHistory, error) {
	tip, ok, err := repo.RefHash(store.NotesRef)
	if err != nil || !ok {
		was := readVerified(repo)
		return &notesHistory{done: was.tip, was: was}, err
	}
	was := readVerified(repo)
	nh := &notesHistory{tip: tip, done: was.tip, was: was}
	done := nh.done
	switch {
	case done.IsZero():
	case done == tip:
		nh.present, nh.descends = true, true
		if !full {
			return nh, nil // nothing since
		}
	default:
		if nh.present, err = repo.HasObject(done); err != nil || !nh.present {
			break
		}
		if full {
			nh.descends, err = repo.IsAncestor(done, tip)
			break
		}
		commits, descends, err := repo.RevListSince(done, tip)
		if err != nil {
			return nil, err
		}
		if nh.descends = descends; descends {
			nh.commits = commits
			return nh, nil
		}
	}
	if err != nil {
		return nil, err
	}
	nh.commits, err = repo.RevList(tip.String())
	nh.whole = err == nil
	return nh, err
}

// checkHistory reads the commits of the ledger's history not yet verified:
// none may remove a record or change one (see historyCheck). A merge must
// keep what its parents had, or take another parent's version. The ledger
// must still descend from the tip this clone last verified, and be there:
// one that does not had its history rewritten (squashed, amended, reset) or
// was deleted. It returns the ledger's tip (zero when there is none).
func checkHistory(l *store.Ledger, rep *Report, holds func(object gitstore.Hash, id, line string) (bool, error), look func() (records, error), accepted map[gitstore.Hash]Acceptance, nh *notesHistory) (gitstore.Hash, error) {
	repo := l.Repo()
	tip, done := nh.tip, nh.done
	severity := func(v gitstore.Hash) (Severity, string) {
		if a, ok := accepted[v]; ok {
			return Notice, fmt.Sprintf("; accepted by %s on %s: %s", acceptedBy(a), shortDate(a.At), oneLine(a.Reason))
		}
		return Breach, ""
	}
	if tip.IsZero() {
		if !done.IsZero() {
			sev, acc := severity(done)
			f := rep.add(sev, "gone", "the ledger is gone: %s does not exist, and this clone verified it at %s%s", store.NotesRef, done.Short(), acc)
			f.NotesCommit = done.String()
		}
		return gitstore.ZeroHash, nil
	}
	if !done.IsZero() && done != tip {
		sev, acc := severity(done)
		switch {
		case !nh.present:
			f := rep.add(sev, "rewritten", "the ledger this clone verified at %s is no longer here: its history was rewritten and the old one pruned%s", done.Short(), acc)
			f.NotesCommit = done.String()
		case !nh.descends:
			f := rep.add(sev, "rewritten", "the ledger no longer descends from %s, where this clone verified it: its history was rewritten (squashed, amended or reset)%s", done.Short(), acc)
			f.NotesCommit = done.String()
		}
	}
	commits := nh.commits
	rep.History = len(commits)
	was := nh.was
	remembered := was.largest
	unchained := newUnchainedCheck(look)
	unchained.remembered = was.chain
	h := &historyCheck{repo: repo, rep: rep, accepted: accepted, undone: map[gitstore.Hash]map[string]string{}, holds: holds,
		unchained: unchained, largest: newLargestCheck(remembered), byKey: true}
	if err := h.commits(commits); err != nil {
		return gitstore.ZeroHash, err
	}
	rep.unchained = len(h.unchained.keys)
	rep.largest, rep.chain = remembered, was.chain
	if len(commits) > 0 {
		rep.largest = h.largest.memory(tip)
		rep.chain = h.unchained.memory(tip)
	}
	rep.memoryAt = func(c gitstore.Hash) (largestMemory, chainMemory) {
		return h.largest.memory(c), h.unchained.memory(c)
	}
	return tip, nil
}

// historyCleanTo is, for a verify that found breaches, the notes commit
// the history was read clean up to: the first parent of the oldest notes
// commit a breach of the history check names, on the first-parent line
// of the commits read, when no commit that brought a breach is it or one
// of its ancestors, and it is not the tip verified before. ok is false
// when there is none, or when a breach may depend on where the next
// verify starts reading: others is false (a breach of the index, of what
// sits at a note's path, or of the reflog), or a breach of the history
// names a commit it did not read.
func historyCleanTo(repo *gitstore.Repo, nh *notesHistory, hrep *Report, others bool) (gitstore.Hash, bool) {
	if !others || hrep.memoryAt == nil || len(nh.commits) == 0 {
		return gitstore.ZeroHash, false
	}
	read := make(map[gitstore.Hash]bool, len(nh.commits))
	for _, c := range nh.commits {
		read[c] = true
	}
	brought := map[gitstore.Hash]bool{}
	for _, f := range hrep.Findings {
		if f.Severity != Breach {
			continue
		}
		c, err := gitstore.ParseHash(f.NotesCommit)
		if err != nil || !read[c] {
			return gitstore.ZeroHash, false
		}
		brought[c] = true
	}
	if len(brought) == 0 {
		return gitstore.ZeroHash, false
	}
	// the oldest of them on the first-parent line from the tip
	var oldest, x gitstore.Hash
	for c := nh.tip; read[c]; {
		ci, err := repo.Commit(c)
		if err != nil {
			return gitstore.ZeroHash, false
		}
		if len(ci.Parents) == 0 {
			if brought[c] {
				oldest, x = c, gitstore.ZeroHash // a root: nothing before it
			}
			break
		}
		if brought[c] {
			oldest, x = c, ci.Parents[0]
		}
		c = ci.Parents[0]
	}
	if oldest.IsZero() || x.IsZero() || x == nh.done || !read[x] {
		return gitstore.ZeroHash, false
	}
	// no commit that brought a breach is x or behind it
	var since []gitstore.Hash
	var err error
	if nh.done.IsZero() {
		since, err = repo.RevList(x.String())
	} else {
		since, err = repo.RevList(x.String(), "^"+nh.done.String())
	}
	if err != nil {
		return gitstore.ZeroHash, false
	}
	for _, c := range since {
		if brought[c] {
			return gitstore.ZeroHash, false
		}
	}
	return x, true
}

// noteText is the text of the notes on obj in snap (an object noted at
// two fanout paths has both, joined).
func noteText(repo *gitstore.Repo, snap *gitstore.Notes, obj gitstore.Hash) ([]byte, error) {
	found, err := snap.Find(obj)
	if err != nil {
		return nil, err
	}
	return blobs(repo, found)
}

func blobs(repo *gitstore.Repo, hs []gitstore.Hash) ([]byte, error) {
	var out []byte
	for _, h := range hs {
		data, err := repo.ReadBlob(h)
		if err != nil {
			return nil, err
		}
		out = append(append(out, data...), '\n')
	}
	return out, nil
}

func joinInts(ns []int) string {
	sort.Ints(ns)
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
