package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A record vanishes without a notes commit that removes it when the
// ledger's tip is replaced by one that does not descend from it: plain
// git notes moves the ref without comparing it with what it read (a
// record git evolve wrote meanwhile is dropped), a reset or a rewrite
// does it on purpose. The ledger's own history then shows nothing; the
// reflog of refs/notes/evolve still names the notes commit dropped, and
// so does this clone's memory of the tip it verified.
//
// Verify compares those with the ledger as it is now: the reflog's
// entries past where it last read them finding no record lost (the memory
// keeps the offset), each whose new tip does not descend from the old one, and the tip
// verified before when the ledger no longer descends from it. Every
// record the dropped notes commits added (the ledger's history from them
// that the tip lacks) whose key the ledger no longer holds is named, with
// the notes commit that added it and the one that dropped it. Repair puts
// each back from the dropped commit.

// reflogPos is how far a verify read the ledger's reflog: the offset past
// the last entry read, and that entry's new tip.
type reflogPos struct {
	end   int64
	after gitstore.Hash
}

// verified is what the verified file holds: the ledger's tip when this
// clone last verified it clean, how far it read the ledger's reflog, and
// what it knew of the largest cycle of the ledger at that tip.
type verified struct {
	tip     gitstore.Hash
	pos     reflogPos
	largest largestMemory
	chain   chainMemory
	// index is the layout of the index of cycles (its directory's name)
	// the verify that found tip clean compared with the notes: one of
	// another layout (an older git-evolve's) was never compared, and the
	// next verify compares it whole.
	index string
	// checked is, when tip is where the history was read clean up to but
	// the ledger was not (historyCleanTo), the later tip at which the
	// index of cycles (of layout checkedIndex) and what sits at the notes'
	// paths were found sound: the next verify checks them from there when
	// the ledger descends from it, else whole.
	checked      gitstore.Hash
	checkedIndex string
	// historyOnly says tip is where the history was read clean up to, not
	// a tip verified clean: the file's first line is "history <tip>",
	// which an older git-evolve reads as no file (it would take the tip
	// for one verified clean, and look only at what changed since).
	historyOnly bool
}

// chainMemory is whether the ledger at tip holds a chained record (the
// chain had begun there), when the verify that wrote the verified file
// knew it: the next verify's unchained check then reads none of that
// ledger's notes to know it.
type chainMemory struct {
	tip          gitstore.Hash
	known, began bool
}

// maxVerifiedFile bounds the verified file read back: what verify writes
// there is at most seven short lines. A larger file is none (the next verify reads
// the history whole, as in a new clone).
const maxVerifiedFile = 4096

// readVerified reads the verified file (parseVerified); a file that cannot
// be read, or larger than maxVerifiedFile, holds nothing.
func readVerified(repo *gitstore.Repo) verified {
	data, ok := readBounded(verifiedPath(repo), maxVerifiedFile)
	if !ok {
		return verified{}
	}
	return parseVerified(data)
}

// parseVerified reads what the verified file holds: its first line names
// the tip (after "history ", one the history was read clean up to); then,
// each optional, "reflog <offset> <commit>", "largest <n>" (or "largest
// -", when the verify that wrote it checked the history's
// Evolve-Largest-Cycle trailers but knew no bound at the tip) and "holder
// <object>" (a note that holds it), "chained yes" or "chained no"
// (chainMemory), "index <name>" (the layout of the index of cycles
// compared) and "checked <commit> <name>" (verified.checked). A line that does not
// read is read past; a file whose first line names no commit (or the
// zero name) holds nothing.
func parseVerified(data []byte) verified {
	var v verified
	first, rest, _ := strings.Cut(string(data), "\n")
	first, v.historyOnly = strings.CutPrefix(strings.TrimSpace(first), "history ")
	tip, err := gitstore.ParseHash(strings.TrimSpace(first))
	if err != nil || tip.IsZero() {
		return verified{}
	}
	v.tip = tip
	for _, line := range strings.Split(rest, "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 3 && f[0] == "reflog":
			end, err1 := strconv.ParseInt(f[1], 10, 64)
			after, err2 := gitstore.ParseHash(f[2])
			if err1 == nil && err2 == nil && end > 0 {
				v.pos = reflogPos{end, after}
			}
		case len(f) == 2 && f[0] == "index":
			v.index = f[1]
		case len(f) == 3 && f[0] == "checked":
			if c, err := gitstore.ParseHash(f[1]); err == nil && !c.IsZero() {
				v.checked, v.checkedIndex = c, f[2]
			}
		case len(f) == 2 && f[0] == "chained" && (f[1] == "yes" || f[1] == "no"):
			v.chain = chainMemory{tip: v.tip, known: true, began: f[1] == "yes"}
		case len(f) == 2 && f[0] == "largest" && f[1] == "-":
			v.largest = largestMemory{tip: v.tip, checked: true}
		case len(f) == 2 && f[0] == "largest":
			if n, err := strconv.Atoi(f[1]); err == nil && n >= 0 && len(f[1]) <= 10 {
				v.largest = largestMemory{tip: v.tip, checked: true, known: true, bound: n, holder: v.largest.holder}
			}
		case len(f) == 2 && f[0] == "holder":
			if h, err := gitstore.ParseHash(f[1]); err == nil && !h.IsZero() {
				v.largest.holder = h
			}
		}
	}
	if !v.largest.known {
		v.largest.holder = gitstore.ZeroHash // a holder of no bound
	}
	return v
}

// writeVerified remembers tip as verified clean, with the reflog read up
// to pos and what the verify knew of the largest cycle at tip (nothing,
// when largest is of another tip or was not checked), whether the chain
// had begun at tip (when chain is of tip and known), and the layout of the
// index of cycles compared at tip ("" when none was).
func writeVerified(repo *gitstore.Repo, tip gitstore.Hash, pos reflogPos, largest largestMemory, chain chainMemory, index string) {
	rewriteVerified(repo, verified{tip: tip, pos: pos, largest: largest, chain: chain, index: index})
}

// formatVerified is the verified file that holds v, as parseVerified reads
// it.
func formatVerified(v verified) []byte {
	var b bytes.Buffer
	if v.historyOnly {
		b.WriteString("history ")
	}
	b.WriteString(v.tip.String() + "\n")
	if v.pos.end > 0 {
		fmt.Fprintf(&b, "reflog %d %s\n", v.pos.end, v.pos.after)
	}
	switch largest := v.largest; {
	case !largest.checked || largest.tip != v.tip:
	case largest.known:
		fmt.Fprintf(&b, "largest %d\n", largest.bound)
		if !largest.holder.IsZero() {
			fmt.Fprintf(&b, "holder %s\n", largest.holder)
		}
	default:
		b.WriteString("largest -\n")
	}
	switch chain := v.chain; {
	case !chain.known || chain.tip != v.tip:
	case chain.began:
		b.WriteString("chained yes\n")
	default:
		b.WriteString("chained no\n")
	}
	if v.index != "" {
		fmt.Fprintf(&b, "index %s\n", v.index)
	}
	if !v.checked.IsZero() {
		fmt.Fprintf(&b, "checked %s %s\n", v.checked, v.checkedIndex)
	}
	return b.Bytes()
}

// rewriteVerified writes the verified file that holds v.
func rewriteVerified(repo *gitstore.Repo, v verified) {
	_ = replaceFile(verifiedPath(repo), func(w *bufio.Writer) { w.Write(formatVerified(v)) })
}

// writeHistoryClean remembers x as the commit the ledger's history was
// read clean up to, though the ledger was not (historyCleanTo), with the
// reflog read up to pos and what the verify knew at x; no index is
// remembered compared at x, and checked is the tip at which the index and
// what sits at the notes' paths were found sound. Its first line,
// "history <x>", is none to an older git-evolve, which reads it as no
// file: a verify of the whole ledger.
func writeHistoryClean(repo *gitstore.Repo, x gitstore.Hash, pos reflogPos, largest largestMemory, chain chainMemory, checked gitstore.Hash) {
	rewriteVerified(repo, verified{tip: x, pos: pos, largest: largest, chain: chain, checked: checked, checkedIndex: store.CycleIndex.Name, historyOnly: true})
}

// guardPutBack starts the reflog message of a ledger ref the run driver
// put back after an agent's turn: it keeps what it dropped under
// refs/evolve/tampered/, and the cycle's record names it.
const guardPutBack = "git evolve: put back after the agent's turn"

// dropped is a notes commit the ledger's tip no longer descends from.
type dropped struct {
	tip gitstore.Hash
	// by is the notes commit that replaced it (the reflog's entry); zero
	// when it is the tip verified before, which a rewrite left.
	by gitstore.Hash
}

// checkLost reports the records that vanished as the comment above says.
// It returns how far it read the reflog, and whether every record the
// entries read dropped is still held (or accepted): then a verify that
// finds other breaches may still remember that it read them.
func checkLost(l *store.Ledger, rep *Report, nh *notesHistory, look func() (records, error), accepted map[gitstore.Hash]Acceptance) (reflogPos, bool, error) {
	next, err := readLost(l, rep, nh, look, accepted)
	for _, f := range rep.Findings {
		if f.Kind == "lost" && f.Severity == Breach {
			return next, false, err
		}
	}
	return next, true, err
}

func readLost(l *store.Ledger, rep *Report, nh *notesHistory, look func() (records, error), accepted map[gitstore.Hash]Acceptance) (reflogPos, error) {
	repo := l.Repo()
	pos := nh.was.pos
	entries, end, err := repo.ReflogSince(store.NotesRef, pos.end, pos.after)
	if err != nil {
		return pos, err
	}
	// The entries up to the last that left the tip read (the ledger may
	// have moved since: the next verify reads those).
	last := -1
	for i, e := range entries {
		if e.New == nh.tip {
			last = i
		}
	}
	if last >= 0 {
		entries = entries[:last+1]
	}
	next := reflogPos{end: end, after: pos.after}
	if len(entries) > 0 {
		next = reflogPos{end: entries[len(entries)-1].End, after: entries[len(entries)-1].New}
	} else if pos.end == 0 {
		next = reflogPos{}
	}
	var drops []dropped
	if !nh.done.IsZero() && nh.present && !nh.descends {
		drops = append(drops, dropped{tip: nh.done})
	}
	more, err := droppedTips(repo, entries)
	if err != nil {
		return next, err
	}
	drops = append(drops, more...)
	if len(drops) == 0 {
		return next, nil
	}
	all, err := look()
	if err != nil {
		return next, err
	}
	reported := map[string]bool{}
	read := map[gitstore.Hash]bool{}
	for _, d := range drops {
		args := []string{d.tip.String()}
		if !nh.tip.IsZero() {
			args = append(args, "^"+nh.tip.String())
		}
		commits, err := repo.RevList(args...)
		if err != nil {
			continue // its history is not all here: nothing to read back
		}
		for _, c := range commits {
			if read[c] {
				continue
			}
			read[c] = true
			added, err := addedBy(repo, c)
			if err != nil {
				return next, err
			}
			for _, a := range added {
				if reported[a.key] {
					continue
				}
				if _, held := all.firstOf(a.key); held {
					continue
				}
				reported[a.key] = true
				lostFinding(repo, rep, d, c, a, accepted)
			}
		}
	}
	return next, nil
}

// droppedTips reads the reflog's entries: each whose new tip does not
// descend from the old one dropped the old one.
func droppedTips(repo *gitstore.Repo, entries []gitstore.ReflogEntry) ([]dropped, error) {
	var news []gitstore.Hash
	for _, e := range entries {
		if !e.Old.IsZero() && !e.New.IsZero() && e.Old != e.New && !strings.HasPrefix(e.Message, guardPutBack) {
			news = append(news, e.New)
		}
	}
	if len(news) == 0 {
		return nil, nil
	}
	infos, errs, err := repo.Commits(news)
	if err != nil {
		return nil, err
	}
	parents := map[gitstore.Hash][]gitstore.Hash{}
	for i, ci := range infos {
		if errs[i] == nil {
			parents[news[i]] = ci.Parents
		}
	}
	var out []dropped
	seen := map[gitstore.Hash]bool{}
	for _, e := range entries {
		ps, ok := parents[e.New]
		if !ok || containsHash(ps, e.Old) || seen[e.Old] {
			continue // a write on the old tip (or one not here to read)
		}
		if there, err := repo.HasObject(e.Old); err != nil {
			return nil, err
		} else if !there {
			continue // nothing to read back
		}
		if in, err := repo.IsAncestor(e.Old, e.New); err != nil {
			return nil, err
		} else if in {
			continue
		}
		seen[e.Old] = true
		out = append(out, dropped{tip: e.Old, by: e.New})
	}
	return out, nil
}

// lostRecord is a record a notes commit added.
type lostRecord struct {
	object  gitstore.Hash
	cycle   int
	id, key string
	line    string
}

// addedBy lists the records notes commit c added: those of the notes it
// changed against its first parent whose keys that parent's note on the
// same commit did not hold.
func addedBy(repo *gitstore.Repo, c gitstore.Hash) ([]lostRecord, error) {
	ci, err := repo.Commit(c)
	if err != nil {
		return nil, nil
	}
	snap := repo.NotesOf(ci)
	parent := repo.EmptyNotes()
	if len(ci.Parents) > 0 {
		if parent, err = repo.NotesAt(ci.Parents[0]); err != nil {
			parent = repo.EmptyNotes()
		}
	}
	changes, err := snap.DiffNotes(parent)
	if err != nil {
		return nil, err
	}
	var out []lostRecord
	for _, ch := range changes {
		if len(ch.New) == 0 {
			continue
		}
		oldData, err := blobs(repo, ch.Old)
		if err != nil {
			return nil, err
		}
		newData, err := blobs(repo, ch.New)
		if err != nil {
			return nil, err
		}
		had := map[string]bool{}
		olds, _ := ledger.ParseLines(oldData)
		for i := range olds {
			s := sumOf(&olds[i], ch.Object)
			had[s.key()] = true
		}
		recs, _ := ledger.ParseLines(newData)
		for i := range recs {
			s := sumOf(&recs[i], ch.Object)
			if had[s.key()] {
				continue
			}
			out = append(out, lostRecord{object: ch.Object, cycle: recs[i].Cycle, id: recs[i].ID, key: s.key(), line: string(recs[i].Marshal())})
		}
	}
	return out, nil
}

// lostFinding reports record a, which notes commit c added and dropping d
// left out of the ledger.
func lostFinding(repo *gitstore.Repo, rep *Report, d dropped, c gitstore.Hash, a lostRecord, accepted map[gitstore.Hash]Acceptance) {
	id := "no id"
	if a.id != "" {
		id = "id " + a.id
	}
	var how string
	blame := d.by
	if d.by.IsZero() {
		blame = d.tip
		how = fmt.Sprintf("the ledger's history was rewritten since this clone verified it at %s", d.tip.Short())
	} else {
		who := "notes commit " + d.by.Short()
		if ci, err := repo.Commit(d.by); err == nil {
			who = whoMade(ci)
		}
		how = fmt.Sprintf("%s replaced the ledger's tip %s with one that does not have it (a write that does not compare and swap, such as git notes, or a reset); the reflog of %s still has it", who, d.tip.Short(), store.NotesRef)
	}
	msg := fmt.Sprintf("the record of cycle %d (%s) on %s, which notes commit %s added, is gone from the ledger: %s", a.cycle, id, a.object.Short(), c.Short(), how)
	var f *Finding
	if acc, ok := accepted[blame]; ok {
		f = rep.add(Notice, "accepted", "%s; accepted by %s on %s: %s", msg, acceptedBy(acc), shortDate(acc.At), oneLine(acc.Reason))
	} else {
		f = rep.add(Breach, "lost", "%s; git evolve repair puts it back", msg)
		f.Original, f.source = a.line, c.String()
	}
	f.Cycle, f.ID, f.Commit, f.NotesCommit = a.cycle, a.id, a.object.String(), blame.String()
}
