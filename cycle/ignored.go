package cycle

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/revert"
)

// IgnoredRef keeps the ignored files a cycle found as it started: a
// commit with no parent whose tree holds them at their paths, their bytes
// as they were (no filter applied). A regressed or aborted cycle puts back
// those it removed or changed; it is deleted when the cycle closes, unless
// the cycle changed some that were not put back (an improved or unchanged
// cycle puts back none).
func IgnoredRef(id string) string { return CyclesPrefix + id + "/ignored" }

// DefaultIgnoredBudget is how many bytes of ignored files a cycle's start
// keeps, unless git config evolve.ignoredBudget says otherwise.
const DefaultIgnoredBudget int64 = 64 << 20

// maxIgnoredFiles bounds how many ignored files a start keeps, whatever
// the budget: the smallest first.
const maxIgnoredFiles = 10000

// Regenerable are the names of the directories whose trees tools make
// again (installed dependencies, build outputs, caches): a start keeps
// none of the ignored files in them, whatever the budget, and says so.
var Regenerable = []string{"node_modules", "target", ".venv", "venv", "__pycache__", ".pytest_cache", "dist", "build"}

func isRegenerable(dir string) bool {
	base := path.Base(dir)
	for _, r := range Regenerable {
		if base == r {
			return true
		}
	}
	return false
}

// IgnoredKept is what a cycle's start kept of the working tree's ignored
// files (outside .agents/**, which a revert leaves as the cycle left it),
// and what it left out.
type IgnoredKept struct {
	// Commit is the commit IgnoredRef keeps ("" when none was kept).
	Commit string `json:"commit,omitempty"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
	Budget int64  `json:"budget"`
	// LeftTrees are directories left out whole (regenerable ones and
	// repositories of their own, each ending in "/"), at most 8; LeftMore
	// how many more.
	LeftTrees []string `json:"left_trees,omitempty"`
	LeftMore  int      `json:"left_more,omitempty"`
	// OverFiles are the files left out past the budget (or the most files
	// a start keeps), OverBytes their size.
	OverFiles int   `json:"over_files,omitempty"`
	OverBytes int64 `json:"over_bytes,omitempty"`
}

// Line says in one line what the start kept and what it left unprotected
// ("" when the working tree has no ignored file).
func (k *IgnoredKept) Line() string {
	if k == nil {
		return ""
	}
	if k.Budget == 0 {
		return "ignored files: none kept (evolve.ignoredBudget is 0)"
	}
	var left []string
	names, more := k.LeftTrees, k.LeftMore
	if len(names) > 3 {
		names, more = names[:3], more+len(names)-3
	}
	left = append(left, names...)
	if more > 0 {
		left = append(left, plural(more, "more directory", "more directories"))
	}
	if k.OverFiles > 0 {
		left = append(left, plural(k.OverFiles, "file", "files")+" over the budget")
	}
	if k.Files == 0 && len(left) == 0 {
		return ""
	}
	line := fmt.Sprintf("ignored files: %d kept (%s)", k.Files, Size(k.Bytes))
	if len(left) > 0 {
		line += "; " + joinAnd(left) + " not kept"
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// joinAnd joins words as a sentence lists them: "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Size says a number of bytes for a person: 29 B, 1.5 KiB, 3.4 MiB.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// ignoredBudget is git config evolve.ignoredBudget: a number of bytes,
// with git's k, m or g (KiB, MiB, GiB); 0 keeps none.
func (l *Ledger) ignoredBudget() (int64, error) {
	v, set, err := l.repo.Config("evolve.ignoredbudget")
	if err != nil || !set {
		return DefaultIgnoredBudget, err
	}
	n, ok := parseSize(v)
	if !ok {
		return 0, &Refusal{fmt.Sprintf("evolve.ignoredBudget is %q: not a size", v),
			"set it to a number of bytes, with k, m or g for KiB, MiB or GiB (git config evolve.ignoredBudget 64m), or 0 to keep no ignored file"}
	}
	return n, nil
}

// parseSize reads a size as git reads an integer setting: digits with an
// optional k, m or g (any case) for 1024, 1024² or 1024³.
func parseSize(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	mul := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mul = 1 << 10
		case 'm', 'M':
			mul = 1 << 20
		case 'g', 'G':
			mul = 1 << 30
		}
		if mul > 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, false
	}
	return n * mul, true
}

// captureIgnored keeps the ignored files of the working tree, within the
// budget, as a commit (not yet under any ref): the smallest first, none
// under .agents/** or in a regenerable directory or a repository of its
// own. id names the cycle in the commit's message. It returns nil when the
// working tree has no ignored file.
func (l *Ledger) captureIgnored(id string) (*IgnoredKept, error) {
	budget, err := l.ignoredBudget()
	if err != nil {
		return nil, err
	}
	k := &IgnoredKept{Budget: budget}
	if budget == 0 {
		return k, nil
	}
	files, left, err := l.repo.ListIgnored(func(dir string) bool { return revert.IsKept(dir) || isRegenerable(dir) }, 4*maxIgnoredFiles)
	if err != nil {
		return nil, err
	}
	for _, d := range left {
		if revert.IsKept(strings.TrimSuffix(d, "/")) {
			continue // the agents' own: not the user's to lose
		}
		if len(k.LeftTrees) < 8 {
			k.LeftTrees = append(k.LeftTrees, d)
		} else {
			k.LeftMore++
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Size < files[j].Size })
	var paths []string
	for _, f := range files {
		if k.Files < maxIgnoredFiles && k.Bytes+f.Size <= budget {
			k.Files++
			k.Bytes += f.Size
			paths = append(paths, f.Path)
			continue
		}
		k.OverFiles++
		k.OverBytes += f.Size
	}
	if len(paths) == 0 {
		if len(k.LeftTrees) == 0 && k.OverFiles == 0 {
			return nil, nil // no ignored file: nothing to say
		}
		return k, nil
	}
	sort.Strings(paths)
	entries, err := l.repo.SaveFiles(paths)
	if err != nil {
		return nil, err
	}
	kept := entries[:0]
	for _, e := range entries {
		if e.Mode != 0 {
			kept = append(kept, e)
		} else {
			k.Files-- // gone meanwhile
		}
	}
	if len(kept) == 0 {
		return k, nil
	}
	tree, err := l.repo.NewTree(kept)
	if err != nil {
		return nil, err
	}
	author, committer, err := l.repo.Identity()
	if err != nil {
		return nil, err
	}
	commit, err := l.repo.WriteCommit(tree, nil, "git evolve: the ignored files as the cycle found them\n\n"+ignoredHowTo+"\nEvolve-Id: "+id+"\n", author, committer)
	if err != nil {
		return nil, err
	}
	k.Commit = commit.String()
	return k, nil
}

// ignoredHowTo is what the message of a capture of the ignored files says
// of getting them back.
const ignoredHowTo = `Its tree holds the ignored files of the working tree as the cycle started,
their bytes as they were. Get one back with
git restore --source=<this commit> -- PATH.
`

// ignoredState compares the ignored files cycle c's start kept with the
// working tree: their entries as kept, and as the working tree has them
// now (a zero Mode where there is no file). None when the start kept none.
func (l *Ledger) ignoredState(c *OpenCycle) (kept, now []gitstore.CapturedPath, err error) {
	if c.Ignored == nil || c.Ignored.Commit == "" {
		return nil, nil, nil
	}
	commit, err := gitstore.ParseHash(c.Ignored.Commit)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cycle %d's ignored files %q: %w", l.openPath(), c.Cycle, c.Ignored.Commit, err)
	}
	if kept, err = l.repo.TreeFiles(commit); err != nil {
		return nil, nil, fmt.Errorf("the ignored files cycle %d started with (%s): %w", c.Cycle, IgnoredRef(c.ID), err)
	}
	now, err = l.repo.FilesNow(kept, time.Unix(0, c.Clock))
	return kept, now, err
}

// ignoredChanges are the ignored files cycle c's start kept that the
// working tree no longer holds as they were ("- path" removed, "M path"
// changed, in path order, at most maxChanged), and of those the paths of
// the ones still there (changed: to be saved before they are put back).
func (l *Ledger) ignoredChanges(c *OpenCycle) (changes, present []string, err error) {
	kept, now, err := l.ignoredState(c)
	if err != nil {
		return nil, nil, err
	}
	for i, e := range kept {
		n := now[i]
		switch {
		case n.Mode == e.Mode && n.Blob == e.Blob:
			continue
		case n.Mode == 0:
			if len(changes) < maxChanged {
				changes = append(changes, "- "+e.Path)
			}
		default:
			if len(changes) < maxChanged {
				changes = append(changes, "M "+e.Path)
			}
			present = append(present, e.Path)
		}
	}
	return changes, present, nil
}

// putBackIgnored puts back the ignored files cycle c's start kept that the
// working tree no longer holds as they were: a removed one is written
// again, a changed one only when its version now is what save holds at its
// path (so that nothing is lost), and none where a directory or something
// else now stands. It returns the paths put back, and those not put back,
// each with why.
func (l *Ledger) putBackIgnored(c *OpenCycle, save gitstore.Hash) (put, notBack []string, err error) {
	kept, now, err := l.ignoredState(c)
	if err != nil {
		return nil, nil, err
	}
	var want []gitstore.CapturedPath
	var changed []gitstore.CapturedPath
	for i, e := range kept {
		n := now[i]
		switch {
		case n.Mode == e.Mode && n.Blob == e.Blob:
		case n.Mode == 0:
			want = append(want, e)
		default:
			changed = append(changed, e)
		}
	}
	if len(changed) > 0 {
		paths := make([]string, len(changed))
		for i, e := range changed {
			paths[i] = e.Path
		}
		cur, ok, err := l.repo.WorktreeEntries(paths)
		if err != nil {
			return nil, nil, err
		}
		for i, e := range changed {
			var blob gitstore.Hash
			in := false
			if !save.IsZero() {
				if blob, in, err = l.repo.TreeFile(save, e.Path); err != nil {
					return nil, nil, err
				}
			}
			if ok && in && cur[i].Mode != 0 && cur[i].Blob == blob {
				want = append(want, e)
			} else {
				notBack = append(notBack, e.Path+" (its version now is in no save)")
			}
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Path < want[j].Path })
	put, blocked, err := l.repo.PutFiles(want)
	for _, p := range blocked {
		notBack = append(notBack, p+" (something else is in its place)")
	}
	sort.Strings(notBack)
	return put, notBack, err
}

// keepIgnored keeps cycle c's IgnoredRef past its close (the record, or
// what the command printed, names it): it is no longer among the refs the
// cycle drops, and verify asks for it.
func (l *Ledger) keepIgnored(c *OpenCycle, refs map[string]gitstore.Hash) error {
	if c.Ignored == nil || c.Ignored.Commit == "" {
		return nil
	}
	delete(refs, IgnoredRef(c.ID))
	return l.NoteSave(IgnoredRef(c.ID), c.Ignored.Commit)
}

// withinSaveLimits is paths (files of the working tree) cut to what a save
// takes of files that are in no capture (maxAlsoFiles, maxAlsoBytes), in
// their order.
func (l *Ledger) withinSaveLimits(paths []string) []string {
	top, err := l.repo.WorkTree()
	if err != nil {
		return nil
	}
	var size int64
	for i, p := range paths {
		if fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p))); err == nil {
			size += fi.Size()
		}
		if i >= maxAlsoFiles || size > maxAlsoBytes {
			return paths[:i]
		}
	}
	return paths
}
