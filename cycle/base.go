package cycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/revert"
)

// BaseRef keeps the working tree as a cycle found it, when it (or the
// index) held changes of its own (untracked files, uncommitted edits,
// staged ones): a commit on the start commit, with the index as its second
// parent (gitstore.CommitSave). Those changes are not the cycle's work: an
// improved cycle does not commit them (unless it changed them again). A
// revert or a restore puts those outside .agents/** back as they were,
// staged where they were staged; those under .agents/** (what the agent of
// an earlier cycle that delivered nothing left there, its leftovers) stay
// as the working tree has them, as everything under .agents/** does.
func BaseRef(id string) string { return "refs/evolve/cycles/" + id + "/base" }

// captureBase saves the working tree and the index as the cycle finds
// them, when either differs from start, and returns the commit ("zero"
// when neither differs: nothing is written).
func (l *Ledger) captureBase(start gitstore.Hash) (gitstore.Hash, error) {
	capture, err := l.repo.CaptureWorktree()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	changes, err := l.repo.ChangedFiles(start, capture.Tree)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if len(changes) == 0 {
		staged, err := l.stagedSince(start, capture.Index)
		if err != nil || len(staged) == 0 {
			return gitstore.ZeroHash, err
		}
	}
	return l.repo.CommitSave(capture.Tree, capture.Index, start, "git evolve: the working tree as the cycle found it\n\n"+SaveHowTo)
}

// stagedSince are the index's changes (index, a tree; zero when unknown)
// from start outside .agents/**.
func (l *Ledger) stagedSince(start, index gitstore.Hash) ([]gitstore.FileChange, error) {
	if index.IsZero() {
		return nil, nil
	}
	changes, err := l.repo.ChangedFiles(start, index)
	return outsideKept(changes), err
}

// baseIndex are the entries the index held, as cycle c found it, that
// differ from its start outside .agents/** (from the base's second
// parent): what the user had staged. None without a base, or for a base
// an older git-evolve saved without the index.
func (l *Ledger) baseIndex(c *OpenCycle) ([]gitstore.CapturedPath, error) {
	if c.Base == "" {
		return nil, nil
	}
	bc, err := l.repo.Commit(mustParse(c.Base))
	if err != nil {
		return nil, fmt.Errorf("the working tree cycle %d started with (%s): %w", c.Cycle, BaseRef(c.ID), err)
	}
	if len(bc.Parents) < 2 {
		return nil, nil
	}
	staged, err := l.stagedSince(mustParse(c.Start), bc.Parents[1])
	if err != nil {
		return nil, fmt.Errorf("the index cycle %d started with (%s^2): %w", c.Cycle, BaseRef(c.ID), err)
	}
	out := make([]gitstore.CapturedPath, len(staged))
	for i, ch := range staged {
		out[i] = gitstore.CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New}
	}
	return out, nil
}

// outsideKept are the changes outside revert.Kept (.agents/**).
func outsideKept(changes []gitstore.FileChange) []gitstore.FileChange {
	var out []gitstore.FileChange
	for _, ch := range changes {
		if !revert.IsKept(ch.Path) {
			out = append(out, ch)
		}
	}
	return out
}

// preexisting are the changes the working tree held when cycle c started,
// outside .agents/**: for each path, the start commit's entry (Old) and the
// working tree's then (New). None when it held none.
func (l *Ledger) preexisting(c *OpenCycle) ([]gitstore.FileChange, error) {
	pre, _, err := l.baseChanges(c)
	return pre, err
}

// baseChanges are the changes the working tree held when cycle c started,
// read in one diff of the start commit with the cycle's base: pre those
// outside .agents/** (preexisting), kept those under it (the notes an
// earlier cycle's agent left there and no cycle committed). For each path,
// the start commit's entry (Old) and the working tree's then (New). None
// when it held none.
func (l *Ledger) baseChanges(c *OpenCycle) (pre, kept []gitstore.FileChange, err error) {
	if c.Base == "" {
		return nil, nil, nil
	}
	base, err := gitstore.ParseHash(c.Base)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cycle %d's base %q: %w", l.openPath(), c.Cycle, c.Base, err)
	}
	changes, err := l.repo.ChangedFiles(mustParse(c.Start), base)
	if err != nil {
		return nil, nil, fmt.Errorf("the working tree cycle %d started with (%s): %w", c.Cycle, BaseRef(c.ID), err)
	}
	for _, ch := range changes {
		if revert.IsKept(ch.Path) {
			kept = append(kept, ch)
		}
	}
	return outsideKept(changes), kept, nil
}

// notOwn is what a cycle's working tree holds that is not the cycle's
// work (see ownWork).
type notOwn struct {
	// left are the paths left out of the cycle's work, each with the entry
	// the work has for it (HEAD's): the changes the working tree held when
	// the cycle started and still holds as they were, and the predating
	// files.
	left []gitstore.CapturedPath
	// predating are files the start's capture did not hold (ignored then)
	// that the working tree holds now, not written since the cycle started
	// (the cycle changed the ignore rules, say): the user's, not its work.
	predating []string
	// changed are the paths the working tree held changes of its own for
	// when the cycle started, which the cycle changed or removed.
	changed []string
	// leftover are the paths under .agents/** the working tree held
	// changes for when the cycle started (see baseChanges) and still holds
	// as they were: an earlier cycle's, not this one's. One the cycle
	// changed is its work.
	leftover []string
}

// ownWork is the tree of the cycle's own work, from the working tree
// captured as tree with HEAD at head: tree with what is not the cycle's
// work (see notOwn) as head has it.
func (l *Ledger) ownWork(c *OpenCycle, tree, head gitstore.Hash) (gitstore.Hash, *notOwn, error) {
	pre, kept, err := l.baseChanges(c)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	start := mustParse(c.Start)
	from := start
	if c.Base != "" {
		from = mustParse(c.Base)
	}
	since, err := l.repo.ChangedFiles(from, tree)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	// As head has them: the start's, unless a commit of the cycle changed
	// them.
	committed := map[string]gitstore.FileChange{}
	if head != start {
		chs, err := l.repo.ChangedFiles(start, head)
		if err != nil {
			return gitstore.ZeroHash, nil, err
		}
		for _, ch := range chs {
			committed[ch.Path] = ch
		}
	}
	touched := map[string]bool{}
	for _, ch := range since {
		touched[ch.Path] = true
	}
	n := &notOwn{}
	for _, ch := range kept {
		if touched[ch.Path] {
			continue
		}
		e := gitstore.CapturedPath{Path: ch.Path, Mode: ch.OldMode, Blob: ch.Old}
		if hc, ok := committed[ch.Path]; ok {
			// A commit of the cycle's took it (git add -A): as committed.
			e.Mode, e.Blob = hc.NewMode, hc.New
			n.left = append(n.left, e)
			continue
		}
		n.left = append(n.left, e)
		n.leftover = append(n.leftover, ch.Path)
	}
	isPre := map[string]bool{}
	for _, ch := range pre {
		isPre[ch.Path] = true
		if touched[ch.Path] {
			n.changed = append(n.changed, ch.Path)
			continue
		}
		e := gitstore.CapturedPath{Path: ch.Path, Mode: ch.OldMode, Blob: ch.Old}
		if hc, ok := committed[ch.Path]; ok {
			e.Mode, e.Blob = hc.NewMode, hc.New
		}
		n.left = append(n.left, e)
	}
	// New files the cycle neither wrote nor committed: they were there,
	// ignored, when it started.
	if c.Clock != 0 {
		var candidates []string
		for _, ch := range since {
			if hc, inHead := committed[ch.Path]; ch.OldMode == 0 && ch.NewMode != 0 && !isPre[ch.Path] && !revert.IsKept(ch.Path) && !(inHead && hc.NewMode != 0) {
				candidates = append(candidates, ch.Path)
			}
		}
		if n.predating, err = l.repo.UnchangedSince(candidates, time.Unix(0, c.Clock)); err != nil {
			return gitstore.ZeroHash, nil, err
		}
		for _, p := range n.predating {
			n.left = append(n.left, gitstore.CapturedPath{Path: p}) // not in head
		}
	}
	if len(n.left) == 0 {
		return tree, n, nil
	}
	own, err := l.repo.EditTree(tree, n.left)
	return own, n, err
}

// startWorktree is what undoing cycle c leaves in the working tree: tree
// (the start's tree with .agents/** as the cycle left it) with the changes
// the working tree held when the cycle started put back, and the predating
// files and the leftovers (see notOwn) left as the working tree captured as
// saved has them (the leftovers' index entries as tree has them).
// It also returns the index entries of the paths it puts back (the
// start's, but for what the index held staged when the cycle started: as
// staged), to set once the working tree is switched: they stay
// uncommitted, untracked ones untracked, staged ones staged.
func (l *Ledger) startWorktree(c *OpenCycle, tree, saved gitstore.Hash, predating, leftover []string) (gitstore.Hash, []gitstore.CapturedPath, error) {
	pre, err := l.preexisting(c)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	staged, err := l.baseIndex(c)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	isStaged := map[string]bool{}
	for _, e := range staged {
		isStaged[e.Path] = true
	}
	var worktree, index []gitstore.CapturedPath
	for _, ch := range pre {
		worktree = append(worktree, gitstore.CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New})
		if !isStaged[ch.Path] {
			index = append(index, gitstore.CapturedPath{Path: ch.Path, Mode: ch.OldMode, Blob: ch.Old})
		}
	}
	index = append(index, staged...)
	if len(predating) > 0 || len(leftover) > 0 {
		keep, left := map[string]bool{}, map[string]bool{}
		for _, p := range predating {
			keep[p] = true
		}
		for _, p := range leftover {
			left[p] = true
		}
		chs, err := l.repo.ChangedFiles(tree, saved)
		if err != nil {
			return gitstore.ZeroHash, nil, err
		}
		for _, ch := range chs {
			switch {
			case left[ch.Path]:
				worktree = append(worktree, gitstore.CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New})
				index = append(index, gitstore.CapturedPath{Path: ch.Path, Mode: ch.OldMode, Blob: ch.Old})
			case keep[ch.Path] && ch.NewMode != 0:
				worktree = append(worktree, gitstore.CapturedPath{Path: ch.Path, Mode: ch.NewMode, Blob: ch.New})
				index = append(index, gitstore.CapturedPath{Path: ch.Path})
			}
		}
	}
	if len(worktree) == 0 {
		return tree, nil, nil
	}
	w, err := l.repo.EditTree(tree, worktree)
	return w, index, err
}

// NotOwn sorts the paths of an open cycle's changes (changed, as cycle
// status lists them) that are not the cycle's work, as the finish will:
// left are those it leaves out (what the working tree held of its own when
// the cycle started and still holds as it was, .agents/** included, and
// files there, ignored, then and not written since); preexisting are the paths the working tree
// held changes of its own for that the cycle changed or removed. A path
// that cannot be read counts as the cycle's.
func (l *Ledger) NotOwn(c *OpenCycle, changed []string) (left map[string]bool, preexisting []string, err error) {
	left = map[string]bool{}
	pre, kept, err := l.baseChanges(c)
	if err != nil {
		return nil, nil, err
	}
	isPre := map[string]bool{}
	if all := append(append([]gitstore.FileChange(nil), pre...), kept...); len(all) > 0 {
		paths := make([]string, len(all))
		for i, ch := range all {
			paths[i], isPre[ch.Path] = ch.Path, true
		}
		now, ok, err := l.repo.WorktreeEntries(paths)
		if err != nil {
			return nil, nil, err
		}
		at := map[string]gitstore.CapturedPath{}
		for _, e := range now {
			at[e.Path] = e
		}
		for i, ch := range all {
			switch e, read := at[ch.Path]; {
			case ok && read && e.Mode == ch.NewMode && (e.Mode == 0 || e.Blob == ch.New):
				left[ch.Path] = true
			case i < len(pre):
				preexisting = append(preexisting, ch.Path)
			}
		}
	}
	if c.Clock != 0 {
		var candidates []string
		for _, p := range changed {
			if !isPre[p] && !revert.IsKept(p) {
				candidates = append(candidates, p)
			}
		}
		unchanged, err := l.repo.UnchangedSince(candidates, time.Unix(0, c.Clock))
		if err != nil {
			return nil, nil, err
		}
		for _, p := range unchanged {
			if _, tracked, err := l.repo.TreeFile(mustParse(c.Start), p); err == nil && !tracked {
				left[p] = true // there, ignored, when the cycle started
			}
		}
	}
	return left, preexisting, nil
}

// InterruptedRef keeps what the working tree held when a run that was
// interrupted or killed while its agent worked resumed the cycle: the
// agent runs again on it, and may undo it.
func InterruptedRef(id string) string { return "refs/evolve/cycles/" + id + "/interrupted" }

// SaveInterrupted saves the working tree of open cycle c as its agent left
// it (committed or not, untracked files too) under InterruptedRef, on top
// of the last such save (each keeps the ones before), before the agent runs
// again. Nothing in the working tree or the index changes.
func (l *Ledger) SaveInterrupted(c *OpenCycle) (gitstore.Hash, error) {
	head, err := l.repo.ResolveCommits("HEAD")
	if err != nil {
		return gitstore.ZeroHash, err
	}
	parent, last := head[0], l.refOrZero(InterruptedRef(c.ID))
	if !last.IsZero() {
		parent = last
	}
	saved, _, err := l.repo.SaveWorktree(parent, savedMessage(c, "as an interrupted agent left it"))
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if err := l.keepSave(InterruptedRef(c.ID), saved, last, fmt.Sprintf("git evolve: cycle %d resumed", c.Cycle)); err != nil {
		return gitstore.ZeroHash, err
	}
	return saved, nil
}

// keepRuler compares the open cycle c, as its file has it, with kept, the
// cycle as its driver opened it: every field a judgment rests on (its
// number and id, target, start, base, goals file, era, "before", item, rung,
// run, branch, and whether it is a revert) is taken from kept, and one that
// differs is saved back and named in the marks returned. A finish under way that kept does not have
// is dropped, unless resuming.
func (l *Ledger) keepRuler(c, kept *OpenCycle, resuming bool) (*OpenCycle, []string, error) {
	fix := *kept
	fix.Finish = c.Finish
	var marks []string
	if c.Finish != nil && kept.Finish == nil && !resuming {
		fix.Finish = nil
		marks = append(marks, "finish: a verdict was written into the open cycle's file during the agent's turn; it was dropped and the cycle judged")
	}
	mine, _ := json.Marshal(&fix)
	theirs, _ := json.Marshal(c)
	if !bytes.Equal(mine, theirs) {
		var a, b map[string]json.RawMessage
		_ = json.Unmarshal(mine, &a)
		_ = json.Unmarshal(theirs, &b)
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		var changed []string
		for k := range keys {
			if k != "finish" && !bytes.Equal(a[k], b[k]) {
				changed = append(changed, k)
			}
		}
		sort.Strings(changed)
		for _, k := range changed {
			marks = append(marks, fmt.Sprintf("%s: changed in the open cycle's file during the agent's turn; the driver's was kept", k))
		}
		if err := l.saveOpen(&fix); err != nil {
			return nil, nil, err
		}
	}
	return &fix, marks, nil
}

// LeftoverLine says in one line what a finish left out of a cycle's commit
// as an earlier cycle's (Finishing.Leftover), for the terminal: a path that
// holds a character that does not print is quoted, as Go quotes it.
func LeftoverLine(paths []string) string {
	const most = 5
	shown := make([]string, 0, min(len(paths), most+1))
	for i, p := range paths {
		if i == most {
			shown = append(shown, fmt.Sprintf("and %d more", len(paths)-most))
			break
		}
		if strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			p = strconv.Quote(p)
		}
		shown = append(shown, p)
	}
	return "left out of its commit, there before the cycle started and not changed by it: " + strings.Join(shown, ", ") + " (it stays in the working tree, uncommitted)"
}
