package audit

import (
	"bytes"
	"errors"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// A record with no place in the chain (no prev link and no recorded_by:
// the seeds' shape, as plain git or another tool writes it) is no breach
// when it was written before git evolve began to chain the ledger's
// records: those are the ledger's own history. One that a notes commit
// added to a ledger that already held a chained record is: nothing vouches
// for it, and the chain, which links each record git evolve writes to the
// one before, cannot see it. The history check names the notes commit that
// added it, who made it and when; repair --accept keeps it.
//
// "Added" is a line of a note that none of the notes commit's parents held
// on that commit, nor on any other commit the record is known on (a copy a
// rewrite or relink made is no new record), which the ledger still holds.
// "Began" is whether the ledger a parent holds has a chained record: for
// the commits the history check reads, told by their changes (a commit
// whose changes hold a chained record, or one of whose parents began,
// began); for those it does not (the tip verified before, a root), read
// from their notes until one is found.
//
// Records a git evolve import wrote, and those a repair put back as the
// ledger's history had them, are no such addition; one a repair put back
// from a notes commit the ledger no longer descends from is that commit's
// addition.

// unchainedCheck collects, as the history check reads each notes commit,
// what it needs to find those records, and reports them once every commit
// is read.
type unchainedCheck struct {
	// look gives the ledger as it is now, once it is read.
	look func() (records, error)
	// walked are the commits read, by name; order is the order read.
	walked map[gitstore.Hash]*unchainedCommit
	order  []gitstore.Hash
	// seenOn are the commits each unchained line was on in a version
	// some commit read replaced: where a copy may have come from.
	seenOn map[string][]gitstore.Hash
	began  map[gitstore.Hash]bool
	// keys are the records reported, by key.
	keys map[string]bool
	// inWalk are the commits the history check reads; topo says that each
	// commit read so far came after every parent of it among them (they
	// are read oldest first): whether the chain had begun before a commit
	// is then known when it is read, and a record added before it began
	// (most records of a ledger older than the chain) is not kept to the
	// end.
	inWalk map[gitstore.Hash]bool
	topo   bool
	// remembered is what the verified file knew of the tip it names:
	// that commit's ledger is not read to know whether the chain began.
	remembered chainMemory
}

// unchainedCommit is what the check keeps of one notes commit read.
type unchainedCommit struct {
	parents []gitstore.Hash
	// chained says its changes hold a chained record.
	chained bool
	added   []unchainedAdd
}

// unchainedAdd is a record a notes commit added with no place in the chain.
type unchainedAdd struct {
	object          gitstore.Hash
	cycle           int
	id, key, digest string
	line            string
	parents         []*gitstore.Notes // the notes commit's parents, which lack it there
	// by is the notes commit it is reported of: the one that added it, or,
	// for a record a repair put back, the one that had added it (which the
	// ledger no longer descends from); after are by's parents, whose
	// ledgers tell whether the chain had begun.
	by    gitstore.CommitInfo
	after []gitstore.Hash
}

func newUnchainedCheck(look func() (records, error)) *unchainedCheck {
	return &unchainedCheck{look: look, walked: map[gitstore.Hash]*unchainedCommit{},
		seenOn: map[string][]gitstore.Hash{}, began: map[gitstore.Hash]bool{}, keys: map[string]bool{}}
}

// importSubject starts the message of the notes commits git evolve import
// writes.
const importSubject = "git evolve: import "

// chainedKey is the field only chained records have (with prev).
var chainedKey = []byte(`"recorded_by"`)

// isUnchained says whether r has no place in the chain.
func isUnchained(r *ledger.Record) bool {
	_, by := r.Extra["recorded_by"]
	_, prev := r.Extra["prev"]
	return !by && !prev
}

// note reads what notes commit ci changed against each of its parents
// (diffs[k] against parents[k]): whether a chained record is among its
// changes, and the unchained records it added. restores are the lines a
// repair puts back.
func (u *unchainedCheck) note(h *historyCheck, ci gitstore.CommitInfo, parents []*gitstore.Notes, diffs [][]gitstore.NoteChange, restores map[string]string) error {
	uc := &unchainedCommit{parents: ci.Parents}
	for _, p := range ci.Parents {
		if _, read := u.walked[p]; !read && u.inWalk[p] {
			u.topo = false // read before a parent: began is known at the end
		}
	}
	u.walked[ci.Hash] = uc
	u.order = append(u.order, ci.Hash)
	if len(parents) == 0 {
		return nil // a root, or its parents are not here: nothing came before it
	}
	exempt := strings.HasPrefix(ci.Subject(), importSubject)
	// Read after its parents, a commit after which the chain had not
	// begun adds no record to report (written before the chain: the
	// notice of those): its records are not parsed. Asked once it adds a
	// line that may be one. (An error here is the report's to return, if
	// it asks.)
	asked, before := false, false
	isBefore := func() bool {
		if !asked {
			asked, before = true, u.topo
			for _, p := range ci.Parents {
				if !before {
					break
				}
				if b, err := u.hasBegun(h.repo, p); err != nil || b {
					before = false
				}
			}
		}
		return before
	}
	put := map[string]bool{}
	for _, line := range restores {
		put[line] = true
	}
	for _, ch := range diffs[0] {
		// Where the unchained lines the commit replaced were: a copy of
		// one elsewhere is no new record.
		oldData, err := h.notes(ch.Old)
		if err != nil {
			return err
		}
		old := map[string]bool{}
		if hasUnchainedLine(oldData) {
			recs, _ := ledger.ParseLines(oldData)
			for i := range recs {
				if isUnchained(&recs[i]) {
					line := string(recs[i].Marshal())
					old[line] = true
					u.seenOn[line] = append(u.seenOn[line], ch.Object)
				}
			}
		}
		newData, err := h.notes(ch.New)
		if err != nil {
			return err
		}
		if !uc.chained && bytes.Contains(newData, chainedKey) {
			recs, _ := ledger.ParseLines(newData)
			for i := range recs {
				if _, by := recs[i].Extra["recorded_by"]; by {
					uc.chained = true
					break
				}
			}
		}
		if exempt || !hasUnchainedLine(newData) || isBefore() {
			continue
		}
		recs, _ := ledger.ParseLines(newData)
		for i := range recs {
			r := &recs[i]
			if !isUnchained(r) {
				continue
			}
			line := string(r.Marshal())
			if old[line] || put[line] {
				continue
			}
			fromOther, err := u.fromOtherParent(h, ch.Object, line, diffs)
			if err != nil {
				return err
			}
			if fromOther {
				continue // a merge taking what another parent has
			}
			s := sumOf(r, ch.Object)
			a := unchainedAdd{object: ch.Object, cycle: r.Cycle, id: r.ID, key: s.key(),
				digest: s.Digest, line: line, parents: parents, by: ci, after: ci.Parents}
			uc.added = append(uc.added, a)
		}
	}
	return nil
}

// hasUnchainedLine says whether a note's text has a line that is not a
// chained record's: one to parse.
func hasUnchainedLine(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) > 0 && !bytes.Contains(line, chainedKey) {
			return true
		}
	}
	return false
}

// fromOtherParent says whether a parent other than the first (a merge's)
// holds line on object: the commit took it from there.
func (u *unchainedCheck) fromOtherParent(h *historyCheck, object gitstore.Hash, line string, diffs [][]gitstore.NoteChange) (bool, error) {
	for _, changes := range diffs[1:] {
		var ch *gitstore.NoteChange
		for i := range changes {
			if changes[i].Object == object {
				ch = &changes[i]
				break
			}
		}
		if ch == nil {
			return true, nil // that parent's note is the commit's: it has it
		}
		data, err := h.notes(ch.Old)
		if err != nil {
			return false, err
		}
		recs, _ := ledger.ParseLines(data)
		for i := range recs {
			if string(recs[i].Marshal()) == line {
				return true, nil
			}
		}
	}
	return false, nil
}

// report adds a finding for each unchained record a commit read added
// after the chain began that the ledger still holds, the newest commit
// first; one accepted is a notice.
func (u *unchainedCheck) report(h *historyCheck) error {
	var all records
	for _, c := range u.order {
		for _, a := range u.walked[c].added {
			began := false
			for _, p := range a.after {
				b, err := u.hasBegun(h.repo, p)
				if err != nil {
					return err
				}
				if began = b; began {
					break
				}
			}
			if !began {
				continue // written before the chain: the notice of those
			}
			if all == nil {
				var err error
				if all, err = u.look(); err != nil {
					return err
				}
			}
			if u.keys[a.key] || !all.holds(a.key, a.digest) {
				continue // reported for a newer commit, or no longer there
			}
			copied, err := u.copied(h.repo, a, all)
			if err != nil {
				return err
			}
			if copied {
				continue
			}
			u.keys[a.key] = true
			who := whoMade(a.by)
			what := "added a record of cycle %d on %s with no place in the chain (no prev link, not recorded by git evolve) after the chain began"
			var f *Finding
			if acc, ok := h.accepted[a.by.Hash]; ok {
				f = h.rep.add(Notice, "accepted", "%s "+what+"; accepted by %s on %s: %s", who, a.cycle, a.object.Short(),
					acceptedBy(acc), shortDate(acc.At), oneLine(acc.Reason))
			} else {
				f = h.rep.add(Breach, "unchained", "%s "+what+": plain git or another tool wrote it; git evolve repair --accept %s -m 'why' keeps it",
					who, a.cycle, a.object.Short(), a.by.Hash.Short())
			}
			f.Cycle, f.ID, f.Commit, f.NotesCommit = a.cycle, a.id, a.object.String(), a.by.Hash.String()
		}
	}
	return nil
}

// copied says whether a parent of the commit that added a held the record
// on another commit already: a copy (a rewrite's, relink's), not a new
// record.
func (u *unchainedCheck) copied(repo *gitstore.Repo, a unchainedAdd, all records) (bool, error) {
	var elsewhere []gitstore.Hash
	for _, c := range append(all.commitsOf(a.key), u.seenOn[a.line]...) {
		if c != a.object {
			elsewhere = append(elsewhere, c)
		}
	}
	if len(elsewhere) == 0 {
		return false, nil
	}
	for _, p := range a.parents {
		for _, c := range elsewhere {
			found, err := p.Find(c)
			if err != nil {
				return false, err
			}
			data, err := blobs(repo, found)
			if err != nil {
				return false, err
			}
			recs, _ := ledger.ParseLines(data)
			for i := range recs {
				if string(recs[i].Marshal()) == a.line {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// hasBegun says whether the ledger at notes commit c holds a chained
// record: for a commit read, from its changes and its parents; else read
// from its notes.
func (u *unchainedCheck) hasBegun(repo *gitstore.Repo, c gitstore.Hash) (bool, error) {
	return u.begun(c, func(x gitstore.Hash) (bool, error) { return holdsChained(repo, x) })
}

// errNotKnown is what memory's reader says of a ledger it was not told of.
var errNotKnown = errors.New("not known without reading the ledger")

// memory is what the verified file is to say of whether the chain had
// begun at tip: known when it is known from what the walk read (the
// commits' changes, the ledgers read for the check, what the verified file
// said of where the walk began), without reading any ledger for it.
func (u *unchainedCheck) memory(tip gitstore.Hash) chainMemory {
	began, err := u.begun(tip, func(gitstore.Hash) (bool, error) { return false, errNotKnown })
	return chainMemory{tip: tip, known: err == nil, began: began}
}

// begun is hasBegun with read answering for a commit the walk did not read
// (or a root), whose ledger it holds nothing of.
func (u *unchainedCheck) begun(c gitstore.Hash, read func(gitstore.Hash) (bool, error)) (bool, error) {
	stack := []gitstore.Hash{c}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		if _, done := u.began[x]; done {
			stack = stack[:len(stack)-1]
			continue
		}
		uc, walked := u.walked[x]
		if !walked && u.remembered.known && x == u.remembered.tip {
			u.began[x] = u.remembered.began
			stack = stack[:len(stack)-1]
			continue
		}
		if !walked || len(uc.parents) == 0 {
			b, err := read(x)
			if err != nil {
				return false, err
			}
			u.began[x] = b
			stack = stack[:len(stack)-1]
			continue
		}
		if uc.chained {
			u.began[x] = true
			stack = stack[:len(stack)-1]
			continue
		}
		pending, any := false, false
		for _, p := range uc.parents {
			if b, done := u.began[p]; done {
				any = any || b
			} else {
				stack, pending = append(stack, p), true
			}
		}
		if !pending || any {
			u.began[x] = any
			stack = stack[:len(stack)-1]
		}
	}
	return u.began[c], nil
}

// holdsChained says whether the ledger at notes commit c holds a chained
// record, reading its notes until one is found; a commit that is not here
// holds none.
func holdsChained(repo *gitstore.Repo, c gitstore.Hash) (bool, error) {
	snap, err := repo.NotesAt(c)
	if err != nil {
		return false, nil
	}
	gitstore.Tracef("verify: the ledger at %s read to know whether its records had begun to chain", c.Short())
	found := false
	err = snap.ForEachNote(func(_ gitstore.Hash, data []byte) error {
		if !bytes.Contains(data, chainedKey) {
			return nil
		}
		recs, _ := ledger.ParseLines(data)
		for i := range recs {
			if _, by := recs[i].Extra["recorded_by"]; by {
				found = true
				return errFound
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return false, err
	}
	return found, nil
}
