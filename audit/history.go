package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// ControlRef is where acknowledgements of breaches are kept, beside the
// loop's control events (a JSON line each, shared by sync like the ledger).
const ControlRef = "refs/notes/evolve-control"

// KindAccept is the kind of a control event that acknowledges a breach.
const KindAccept = "accept"

// Acceptance acknowledges what one notes commit did to the ledger: its
// edits and deletions are reported as notices from then on.
type Acceptance struct {
	Kind        string `json:"kind"`
	NotesCommit string `json:"notes_commit"`
	Reason      string `json:"reason"`
	At          string `json:"at"`
	By          string `json:"by,omitempty"`
	Host        string `json:"host,omitempty"`
}

// Acceptances reads the acknowledgements, by the notes commit they accept.
func Acceptances(repo *gitstore.Repo) (map[gitstore.Hash]Acceptance, error) {
	snap, err := repo.ReadNotes(ControlRef)
	if err != nil {
		return nil, err
	}
	out := map[gitstore.Hash]Acceptance{}
	err = snap.ForEachLine(func(_ gitstore.Hash, line []byte) error {
		var a Acceptance
		if json.Unmarshal(line, &a) != nil || a.Kind != KindAccept {
			return nil
		}
		if h, err := gitstore.ParseHash(a.NotesCommit); err == nil {
			if _, had := out[h]; !had {
				out[h] = a
			}
		}
		return nil
	})
	return out, err
}

// RepairTrailer names, in the message of a notes commit git evolve repair
// made, a notes commit whose changes it undid.
const RepairTrailer = "Evolve-Repair"

// RestoreTrailer names, in the message of a notes commit git evolve repair
// made, a notes commit the ledger no longer descends from whose records it
// put back.
const RestoreTrailer = "Evolve-Restore"

// repairs are the notes commits a commit message says it undid.
func repairs(message string) []gitstore.Hash {
	if !strings.Contains(message, RepairTrailer+": ") {
		return nil // most messages: no line to scan for
	}
	var out []gitstore.Hash
	sc := bufio.NewScanner(strings.NewReader(message))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), RepairTrailer+": "); ok {
			if h, err := gitstore.ParseHash(strings.TrimSpace(v)); err == nil {
				out = append(out, h)
			}
		}
	}
	return out
}

// historyCheck reads commits of a ledger's history and reports the records
// they removed or changed. A change is no breach when the ledger as it is
// now still holds the record as it was (it was undone, or the record lives
// on another commit), when the commit is a repair putting back what an
// earlier commit changed, when the commit is a merge taking the version of
// another of its parents, or when it was accepted (a notice then).
type historyCheck struct {
	repo *gitstore.Repo
	rep  *Report
	// holds reports whether the ledger now has line (a record's canonical
	// form) for id, on object or on another commit.
	holds    func(object gitstore.Hash, id, line string) (bool, error)
	accepted map[gitstore.Hash]Acceptance
	// undone caches, per notes commit, the record lines it replaced: what a
	// repair naming it may put back.
	undone map[gitstore.Hash]map[string]string
	// blobs are the notes the batch under way read (batch), by name.
	blobs map[gitstore.Hash][]byte
	// unchained, when set, looks for records added with no place in the
	// chain after it began (verify's history check; see unchainedCheck).
	unchained *unchainedCheck
	// largest, when set, checks the Evolve-Largest-Cycle trailers
	// (verify's history check; see largestCheck).
	largest *largestCheck
	// byKey files the records of a note by what verify knows them by
	// (recSum.key: a record with no id by what it says), not by id alone,
	// under which every record with no id is one.
	byKey bool
	// diff diffs the pairs of notes commits while commits runs.
	diff func([]gitstore.NotesPair) ([][]gitstore.NoteChange, error)
	// owners are, for each finding commits made, the place in the walk
	// (newest first) of the commit it is of.
	owners []int
}

// historyBatch is how many notes commits commits reads and diffs at once:
// their commits and their notes each in one exchange with git, their
// diffs in one more with git diff-tree, with what they read held in memory
// only that long.
const historyBatch = 256

// commits checks each of commits (newest first, as git rev-list lists
// them) against its parents. They are read oldest first, so that the
// differ brings what it knows of each notes tree forward from the tree
// before (gitstore.NotesDiffer); the findings are put in the order of
// commits, as a walk newest first makes them.
func (h *historyCheck) commits(commits []gitstore.Hash) error {
	var inWalk map[gitstore.Hash]bool
	if h.unchained != nil || h.largest != nil {
		inWalk = make(map[gitstore.Hash]bool, len(commits))
		for _, c := range commits {
			inWalk[c] = true
		}
		if h.unchained != nil {
			h.unchained.inWalk = inWalk
		}
		if h.largest != nil {
			h.largest.inWalk = inWalk
			h.largest.collect = treeWalk
		}
	}
	if treeWalk {
		return h.walkTrees(commits)
	}
	differ := h.repo.NewNotesDiffer(append([]string{ledger.IndexName}, ledger.OldIndexNames...)...)
	defer differ.Close()
	h.diff = differ.Diff
	if h.unchained != nil {
		h.unchained.topo = true
	}
	start := len(h.rep.Findings)
	h.owners = h.owners[:0]
	for end := len(commits); end > 0; {
		from := max(0, end-historyBatch)
		batch := slices.Clone(commits[from:end])
		slices.Reverse(batch)
		if err := h.batch(batch, end-1, -1); err != nil {
			return err
		}
		end = from
	}
	h.orderFindings(start)
	return h.finish(false)
}

// finish adds the findings of the checks that report once every commit is
// read; newestFirst says the commits were read newest first.
func (h *historyCheck) finish(newestFirst bool) error {
	if h.largest != nil {
		if err := h.largest.finish(h); err != nil {
			return err
		}
	}
	if h.unchained != nil {
		if !newestFirst {
			slices.Reverse(h.unchained.order)
		}
		return h.unchained.report(h)
	}
	return nil
}

// treeWalk, set by tests, makes the history check walk newest first and
// diff each batch's trees in this process (gitstore.DiffNotesMany), as it
// did before git diff-tree diffed them: the answer the other must equal.
var treeWalk bool

// walkTrees is commits as treeWalk makes it: the findings are made in
// the order of commits.
func (h *historyCheck) walkTrees(commits []gitstore.Hash) error {
	h.diff = gitstore.DiffNotesMany
	for k := 0; k < len(commits); k += historyBatch {
		if err := h.batch(commits[k:min(len(commits), k+historyBatch)], k, 1); err != nil {
			return err
		}
	}
	h.owners = h.owners[:0]
	return h.finish(true)
}

// orderFindings puts the findings made since start in the order of the
// commits they are of (h.owners, newest first), each commit's in the order
// they were made.
func (h *historyCheck) orderFindings(start int) {
	made := h.rep.Findings[start:]
	at := make([]int, len(made))
	for i := range at {
		at[i] = i
	}
	sort.SliceStable(at, func(i, j int) bool { return h.owners[at[i]] < h.owners[at[j]] })
	ordered := make([]Finding, len(made))
	for i, k := range at {
		ordered[i] = made[k]
	}
	copy(made, ordered)
	h.owners = h.owners[:0]
}

// batch checks commits against their parents: the commits and parents are
// read in one exchange, the diffs made by the differ, and the notes they
// changed read in one more. The first of commits is at index at of the
// walk (newest first), the next at at+step, and so on.
func (h *historyCheck) batch(commits []gitstore.Hash, at, step int) error {
	infos, errs, err := h.repo.Commits(commits)
	if err != nil {
		return err
	}
	byHash := map[gitstore.Hash]gitstore.CommitInfo{}
	for i, ci := range infos {
		if errs[i] != nil {
			return errs[i]
		}
		byHash[ci.Hash] = ci
	}
	var more []gitstore.Hash
	for _, ci := range infos {
		for _, p := range ci.Parents {
			if _, ok := byHash[p]; !ok && !slices.Contains(more, p) {
				more = append(more, p)
			}
		}
	}
	if len(more) > 0 {
		pinfos, perrs, err := h.repo.Commits(more)
		if err != nil {
			return err
		}
		for i, ci := range pinfos {
			if perrs[i] == nil { // a parent this clone lacks (a shallow history): nothing to compare
				byHash[ci.Hash] = ci
			}
		}
	}
	type job struct {
		ci       gitstore.CommitInfo
		snap     *gitstore.Notes
		parents  []*gitstore.Notes
		restores map[string]string
		first    int  // its first pair
		diffed   bool // its first pair is against its first parent
	}
	jobs := make([]job, 0, len(infos))
	pairs := make([]gitstore.NotesPair, 0, len(infos))
	for _, ci := range infos {
		jb := job{ci: ci, snap: h.repo.NotesOf(ci), first: len(pairs)}
		if len(ci.Parents) > 0 {
			_, jb.diffed = byHash[ci.Parents[0]]
		}
		for _, p := range ci.Parents {
			if pi, ok := byHash[p]; ok {
				parent := h.repo.NotesOf(pi)
				jb.parents = append(jb.parents, parent)
				pairs = append(pairs, gitstore.NotesPair{Old: parent, New: jb.snap})
			}
		}
		if jb.restores, err = h.restores(ci); err != nil {
			return err
		}
		jobs = append(jobs, jb)
	}
	diffs, err := h.diff(pairs)
	if err != nil {
		return err
	}
	// The notes the diffs name, read in one exchange.
	var want []gitstore.Hash
	for _, changes := range diffs {
		for _, ch := range changes {
			want = append(append(want, ch.Old...), ch.New...)
		}
	}
	data, err := h.repo.ReadBlobsKept(want)
	if err != nil {
		return err
	}
	h.blobs = make(map[gitstore.Hash][]byte, len(want))
	for i, b := range want {
		h.blobs[b] = data[i]
	}
	defer func() { h.blobs = nil }()
	for k, jb := range jobs {
		made := len(h.rep.Findings)
		for p, parent := range jb.parents {
			if err := h.compare(jb.ci, parent, diffs[jb.first+p], jb.parents, jb.restores); err != nil {
				return err
			}
		}
		pos := at + k*step
		for range len(h.rep.Findings) - made {
			h.owners = append(h.owners, pos)
		}
		if h.unchained != nil {
			if err := h.unchained.note(h, jb.ci, jb.parents, diffs[jb.first:jb.first+len(jb.parents)], jb.restores); err != nil {
				return err
			}
		}
		if h.largest != nil {
			var changes []gitstore.NoteChange
			if jb.diffed {
				changes = diffs[jb.first]
			}
			s, err := h.largestStep(jb.ci, pos, jb.diffed, changes)
			if err != nil {
				return err
			}
			if err := h.largest.take(h, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// restores are the record lines (by id) that commit ci, a repair, may put
// back: those the notes commits it names replaced.
func (h *historyCheck) restores(ci gitstore.CommitInfo) (map[string]string, error) {
	named := repairs(ci.Message)
	if len(named) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, x := range named {
		was, err := h.replacedBy(x)
		if err != nil {
			return nil, err
		}
		for id, line := range was {
			out[id] = line
		}
	}
	return out, nil
}

// replacedBy returns the record lines, by id, that notes commit x removed
// or changed relative to its first parent.
func (h *historyCheck) replacedBy(x gitstore.Hash) (map[string]string, error) {
	if got, ok := h.undone[x]; ok {
		return got, nil
	}
	out := map[string]string{}
	h.undone[x] = out
	ci, err := h.repo.Commit(x)
	if err != nil || len(ci.Parents) == 0 {
		return out, nil // not here: it puts nothing back
	}
	snap, err := h.repo.NotesAt(x)
	if err != nil {
		return nil, err
	}
	parent, err := h.repo.NotesAt(ci.Parents[0])
	if err != nil {
		return out, nil
	}
	changes, err := snap.DiffNotes(parent)
	if err != nil {
		return nil, err
	}
	for _, ch := range changes {
		was, is, err := h.lines(ch)
		if err != nil {
			return nil, err
		}
		for id, line := range was {
			if is[id] != line {
				out[id] = line
			}
		}
	}
	return out, nil
}

// lines reads a note change's records on each side, by id, as canonical
// lines.
func (h *historyCheck) lines(ch gitstore.NoteChange) (was, is map[string]string, err error) {
	oldData, err := h.notes(ch.Old)
	if err != nil {
		return nil, nil, err
	}
	newData, err := h.notes(ch.New)
	if err != nil {
		return nil, nil, err
	}
	if h.byKey {
		return byKey(oldData), byKey(newData), nil
	}
	return byID(oldData), byID(newData), nil
}

// byKey is byID with the records filed by key (see recSum.key).
func byKey(data []byte) map[string]string {
	recs, _ := ledger.ParseLines(data)
	out := make(map[string]string, len(recs))
	for i := range recs {
		line := recs[i].Marshal()
		k := recs[i].ID
		if k == "" {
			k = noID + ledger.Digest(line)
		}
		out[k] = string(line)
	}
	return out
}

// shownID names a record's key in a finding: its id, or that it has none.
func shownID(key string) string {
	if strings.HasPrefix(key, noID) {
		return "no id"
	}
	return "id " + key
}

// findingID is the id a finding names for a record's key ("" for one with
// no id).
func findingID(key string) string {
	if strings.HasPrefix(key, noID) {
		return ""
	}
	return key
}

// notes is the text of the notes hs, from what the batch read when it has
// them (one note's is not copied: its lines read the same without the
// newline that ends the others).
func (h *historyCheck) notes(hs []gitstore.Hash) ([]byte, error) {
	if len(hs) == 1 {
		return h.note(hs[0])
	}
	var out []byte
	for _, b := range hs {
		data, ok := h.blobs[b]
		if !ok {
			return blobs(h.repo, hs)
		}
		out = append(append(out, data...), '\n')
	}
	return out, nil
}

// note is the text of note b, from what the batch read when it has it.
func (h *historyCheck) note(b gitstore.Hash) ([]byte, error) {
	if data, ok := h.blobs[b]; ok {
		return data, nil
	}
	return h.repo.ReadBlob(b)
}

func byID(data []byte) map[string]string {
	recs, _ := ledger.ParseLines(data)
	out := make(map[string]string, len(recs))
	for i := range recs {
		out[recs[i].ID] = string(recs[i].Marshal())
	}
	return out
}

// compare reports records that notes commit ci (snap) removed or changed
// relative to one of its parents.
func (h *historyCheck) compare(ci gitstore.CommitInfo, parent *gitstore.Notes, changes []gitstore.NoteChange, parents []*gitstore.Notes, restores map[string]string) error {
	for _, ch := range changes {
		if len(ch.Old) == 0 {
			continue // added: it removed or changed nothing
		}
		was, is, err := h.lines(ch)
		if err != nil {
			return err
		}
		// By id: the findings come in the same order run after run.
		for _, id := range slices.Sorted(maps.Keys(was)) {
			line := was[id]
			now, kept := is[id]
			if kept && now == line {
				continue
			}
			if kept && restores[id] == now {
				continue // a repair putting back what a named commit changed
			}
			if kept && len(parents) > 1 {
				if other, err := h.fromAnotherParent(ch.Object, id, now, parent, parents); err != nil {
					return err
				} else if other {
					continue // a merge taking the other side's version
				}
			}
			r, perr := ledger.Parse([]byte(line))
			if perr != nil {
				continue
			}
			holds, err := h.holds(ch.Object, id, line)
			if err != nil {
				return err
			}
			verb, kind := "changed", "edited"
			if !kept {
				verb, kind = "deleted", "deleted"
			}
			who, shown := whoMade(ci), shownID(id)
			var f *Finding
			switch a, ok := h.accepted[ci.Hash]; {
			case holds && !kept:
				f = h.rep.add(Notice, "moved", "notes commit %s removed the note on %s, but its record of cycle %d (%s) lives on", ci.Hash.Short(), ch.Object.Short(), r.Cycle, shown)
			case holds:
				f = h.rep.add(Notice, "restored", "%s %s the record of cycle %d (%s) on %s; the ledger holds it as it was again", who, verb, r.Cycle, shown, ch.Object.Short())
			case ok:
				f = h.rep.add(Notice, "accepted", "%s %s the record of cycle %d (%s) on %s; accepted by %s on %s: %s", who, verb, r.Cycle, shown, ch.Object.Short(),
					acceptedBy(a), shortDate(a.At), oneLine(a.Reason))
			case !kept && ci.Subject() == PrunedSubject:
				f = h.rep.add(Breach, kind, "%s, by its subject a git notes prune, %s the record of cycle %d (%s) on %s", who, verb, r.Cycle, shown, ch.Object.Short())
				f.Original, f.Pruned = line, true
			default:
				f = h.rep.add(Breach, kind, "%s %s the record of cycle %d (%s) on %s", who, verb, r.Cycle, shown, ch.Object.Short())
				f.Original = line
			}
			f.ID, f.Cycle, f.Commit, f.NotesCommit = findingID(id), r.Cycle, ch.Object.String(), ci.Hash.String()
		}
	}
	return nil
}

// fromAnotherParent reports whether line, the version of record id on
// object that a merge kept instead of parent's, is another parent's.
func (h *historyCheck) fromAnotherParent(object gitstore.Hash, id, line string, parent *gitstore.Notes, parents []*gitstore.Notes) (bool, error) {
	for _, p := range parents {
		if p == parent {
			continue
		}
		found, err := p.Find(object)
		if err != nil {
			return false, err
		}
		data, err := blobs(h.repo, found)
		if err != nil {
			return false, err
		}
		lines := byID(data)
		if h.byKey {
			lines = byKey(data)
		}
		if lines[id] == line {
			return true, nil
		}
	}
	return false, nil
}

func acceptedBy(a Acceptance) string {
	by := a.By
	if name, _, ok := strings.Cut(by, " <"); ok {
		by = name
	}
	if by == "" {
		by = "someone"
	}
	if a.Host != "" {
		by += " on " + a.Host
	}
	return oneLine(by)
}

func shortDate(at string) string {
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return oneLine(at)
}

// oneLine is text from a note made one line, bounded.
func oneLine(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > 200 {
		r = append(r[:199], '…')
	}
	return string(r)
}

// CheckIncoming reports the breaches the notes commits of to that from
// lacks would bring (to ^from: another clone's ledger as fetched, beside
// this clone's): records they removed or changed that to no longer holds as
// they were, and notes of to that do not parse where they changed. It reads
// only those commits and the notes they touched, never the whole ledger.
// When this clone has no ledger (from is zero), or one with no history in
// common with to (a ledger of its own begun before its first sync), there
// is nothing of this clone's that to could undo: only to's notes as they
// are must parse, read in one pass, not its whole history.
func CheckIncoming(repo *gitstore.Repo, from, to gitstore.Hash) ([]Finding, error) {
	rep := &Report{Findings: []Finding{}}
	if to.IsZero() || to == from {
		return nil, nil
	}
	unrelated := from.IsZero()
	var base gitstore.Hash
	if !unrelated {
		b, ok, err := repo.MergeBase(from, to)
		if err != nil {
			return nil, err
		}
		unrelated, base = !ok, b
	}
	if base == to {
		// to is behind from: it brings nothing. (Asked of git rev-list
		// instead, a notes commit dated after its children, a clock set
		// wrong, could be listed as to's own, and the whole ledger read.)
		return nil, nil
	}
	if unrelated {
		if err := incomingBadNotes(repo, rep, from, gitstore.ZeroHash, to, []gitstore.Hash{to}); err != nil {
			return nil, err
		}
		if err := checkIndex(repo, rep, to, gitstore.ZeroHash, nil); err != nil {
			return nil, err
		}
		return checkTip(repo, rep, to)
	}
	args := []string{to.String()}
	if !from.IsZero() {
		args = append(args, "^"+from.String())
	}
	commits, err := repo.RevList(args...)
	if err != nil {
		return nil, err
	}
	if err := incomingBadNotes(repo, rep, from, base, to, commits); err != nil {
		return nil, err
	}
	tip, err := repo.NotesAt(to)
	if err != nil {
		return nil, err
	}
	accepted, err := Acceptances(repo)
	if err != nil {
		return nil, err
	}
	if !from.IsZero() {
		if ff, err := repo.IsAncestor(from, to); err != nil {
			return nil, err
		} else if !ff {
			if err := checkRewritten(repo, rep, from, base, to, tip); err != nil {
				return nil, err
			}
		}
	}
	// The lines the range added anywhere: a record a rewrite moved to
	// another commit lives on there.
	added := map[string]bool{}
	touched := map[gitstore.Hash]bool{}
	for _, c := range commits {
		ci, err := repo.Commit(c)
		if err != nil {
			return nil, err
		}
		snap, err := repo.NotesAt(c)
		if err != nil {
			return nil, err
		}
		base := repo.EmptyNotes()
		if len(ci.Parents) > 0 {
			if base, err = repo.NotesAt(ci.Parents[0]); err != nil {
				base = repo.EmptyNotes()
			}
		}
		changes, err := snap.DiffNotes(base)
		if err != nil {
			return nil, err
		}
		for _, ch := range changes {
			touched[ch.Object] = true
			data, err := blobs(repo, ch.New)
			if err != nil {
				return nil, err
			}
			for _, line := range byID(data) {
				added[line] = true
			}
		}
	}
	// The trailers the range brings are checked as verify checks them
	// (largest.go): a clone that took an understated one in would trust
	// it. The bound of a commit of this clone's the range builds on is
	// what its trailer says, or its nearest ancestor's with the notes
	// changed since (largestCheck.outside).
	h := &historyCheck{repo: repo, rep: rep, accepted: accepted, undone: map[gitstore.Hash]map[string]string{},
		largest: newLargestCheck(largestMemory{checked: true}),
		holds: func(object gitstore.Hash, id, line string) (bool, error) {
			if added[line] {
				return true, nil // the range put it (back) somewhere
			}
			found, err := tip.Find(object)
			if err != nil {
				return false, err
			}
			data, err := blobs(repo, found)
			if err != nil {
				return false, err
			}
			return byID(data)[id] == line, nil
		}}
	if err := h.commits(commits); err != nil {
		return nil, err
	}
	// The notes the range changed, as to has them, must parse.
	for obj := range touched {
		found, err := tip.Find(obj)
		if err != nil {
			return nil, err
		}
		data, err := blobs(repo, found)
		if err != nil {
			return nil, err
		}
		_, bad := ledger.ParseLines(data)
		for _, b := range bad {
			f := unreadable(rep, b.Text, "the note on %s, line %d: %v (%q)", obj.Short(), b.Line, b.Err, shorten(b.Text))
			f.Commit = obj.String()
		}
	}
	// The index of cycles it brings: what a read with no saved view of
	// its own takes as it is, compared with the notes it changed.
	if err := checkIndex(repo, rep, to, from, nil); err != nil {
		return nil, err
	}
	var out []Finding
	for _, f := range rep.Findings {
		if f.Severity == Breach {
			out = append(out, f)
		}
	}
	return out, nil
}

// PrunedSubject is the subject git notes prune gives the notes commit it
// makes (git does not translate it): it removes the notes of the objects
// the clone it ran in does not have, records of a branch squash-merged or
// deleted among them.
const PrunedSubject = "Notes removed by 'git notes prune'"

// whoMade names a notes commit as findings do: its name, who made it, when.
func whoMade(ci gitstore.CommitInfo) string {
	return fmt.Sprintf("notes commit %s (%s, %s)", ci.Hash.Short(), ci.Committer.Name, ci.Committer.When.UTC().Format("2006-01-02 15:04"))
}

// incomingBadNotes reports each submodule entry or symbolic link at a note path of the
// ledger to that neither from nor the history both share (base) has as it
// is, naming the oldest of commits (to's own, newest first) that has it:
// the notes commit that brought it. One base has and from took out (a
// repair) is not brought by to.
func incomingBadNotes(repo *gitstore.Repo, rep *Report, from, base, to gitstore.Hash, commits []gitstore.Hash) error {
	if len(commits) == 0 {
		return nil // to brings no commit of its own
	}
	tip, err := repo.NotesAt(to)
	if err != nil {
		return err
	}
	var shared *gitstore.Notes // what both sides had: not brought by to
	if !base.IsZero() {
		if shared, err = repo.NotesAt(base); err != nil {
			return err
		}
	}
	bad, err := tip.BadNotesSince(shared)
	if err != nil || len(bad) == 0 {
		return err
	}
	var mine *gitstore.Notes
	if !from.IsZero() {
		if mine, err = repo.NotesAt(from); err != nil {
			return err
		}
	}
	for _, obj := range bad {
		if mine != nil {
			if had, err := mine.HasBadNote(obj); err != nil {
				return err
			} else if had {
				continue // this clone's ledger has it: not brought in
			}
		}
		by := to
		for _, c := range commits {
			snap, err := repo.NotesAt(c)
			if err != nil {
				return err
			}
			has, err := snap.HasBadNote(obj)
			if err != nil {
				return err
			}
			if !has {
				break
			}
			by = c
		}
		who := "notes commit " + by.Short()
		if ci, err := repo.Commit(by); err == nil {
			who = whoMade(ci)
		}
		f := rep.add(Breach, "not-a-note", "%s put a submodule or a symbolic link, not a note's text, at the ledger's entry for %s", who, obj.Short())
		f.Commit, f.NotesCommit = obj.String(), by.String()
	}
	return nil
}

// checkTip reports the notes of the ledger to that do not parse, reading
// them all in one pass.
func checkTip(repo *gitstore.Repo, rep *Report, to gitstore.Hash) ([]Finding, error) {
	tip, err := repo.NotesAt(to)
	if err != nil {
		return nil, err
	}
	err = tip.ForEachNote(func(obj gitstore.Hash, data []byte) error {
		for _, b := range ledger.BadLines(data) {
			f := unreadable(rep, b.Text, "the note on %s, line %d: %v (%q)", obj.Short(), b.Line, b.Err, shorten(b.Text))
			f.Commit, f.NotesCommit = obj.String(), to.String()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, f := range rep.Findings {
		if f.Severity == Breach {
			out = append(out, f)
		}
	}
	return out, nil
}

// checkRewritten looks at a fetched ledger (to, tip) that is no
// fast-forward of this clone's (from): for each record this clone's own
// commits (from ^to) touched, a version on the fetched side other than this
// clone's, and other than the two sides' common base's (then it is this
// clone that changed it), was changed there (an amended or squashed notes
// history hides such an edit from its own commits).
func checkRewritten(repo *gitstore.Repo, rep *Report, from, base, to gitstore.Hash, tip *gitstore.Notes) error {
	ours, err := repo.NotesAt(from)
	if err != nil {
		return err
	}
	common, err := repo.NotesAt(base)
	if err != nil {
		return err
	}
	// What this clone's own commits changed since the history both share:
	// one diff of two trees, whatever those commits were (a merge that
	// brought a whole ledger in counts only for what it left different).
	changes, err := ours.DiffNotes(common)
	if err != nil {
		return err
	}
	touched := map[gitstore.Hash]bool{}
	for _, ch := range changes {
		touched[ch.Object] = true
	}
	note := func(n *gitstore.Notes, obj gitstore.Hash) (map[string]string, error) {
		found, err := n.Find(obj)
		if err != nil {
			return nil, err
		}
		data, err := blobs(repo, found)
		if err != nil {
			return nil, err
		}
		return byID(data), nil
	}
	for obj := range touched {
		mineNow, err := note(ours, obj)
		if err != nil {
			return err
		}
		theirsNow, err := note(tip, obj)
		if err != nil {
			return err
		}
		was, err := note(common, obj)
		if err != nil {
			return err
		}
		for id, line := range mineNow {
			if other, ok := theirsNow[id]; ok && other != line && other != was[id] {
				r, _ := ledger.Parse([]byte(line))
				f := rep.add(Breach, "edited", "the ledger fetched (%s) has another version of the record of cycle %d (id %s) on %s than this clone's", to.Short(), r.Cycle, id, obj.Short())
				f.ID, f.Cycle, f.Commit, f.NotesCommit = id, r.Cycle, obj.String(), to.String()
			}
		}
	}
	return nil
}
