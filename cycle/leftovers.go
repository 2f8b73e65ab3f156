package cycle

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
)

// CyclesPrefix is where the refs of cycles live: refs/evolve/cycles/<id>/….
const CyclesPrefix = "refs/evolve/cycles/"

// StaleLockAge is how old a git lock file must be before it is called
// left behind: git holds one for a moment, never minutes.
const StaleLockAge = 10 * time.Minute

// Leftovers is what interrupted commands left: refs of cycles that no
// worktree has open and nothing keeps, and git lock files.
type Leftovers struct {
	// Removed are the refs Sweep removed.
	Removed []string
	// Stuck are the refs Sweep could not remove, each with why.
	Stuck map[string]string
	// Locks are git lock files beside the refs and the index, older than
	// StaleLockAge: a git process that held one was killed.
	Locks []string
}

// Sweep removes the start and goals refs of cycles that no worktree has
// open (a start killed before its cycle was open, a finish killed while it
// closed it, or stopped by a git lock), giving back their numbers, and
// finds git lock files left behind. Refs that hold work (a base, a save)
// are never removed here.
// It holds the ledger lock, which a start holds from its reservation until
// its cycle is open, so it never takes a cycle being started.
func (l *Ledger) Sweep() (*Leftovers, error) {
	out := &Leftovers{Stuck: map[string]string{}}
	refs, err := l.repo.ListRefs(CyclesPrefix)
	if err != nil {
		return nil, err
	}
	if len(refs) > 0 {
		unlock, err := filelock.Lock(l.LockPath())
		if err != nil {
			return nil, err
		}
		defer unlock()
		open, err := l.openIDs()
		if err != nil {
			return nil, err
		}
		saves, err := l.Saves()
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(refs))
		for ref := range refs {
			names = append(names, ref)
		}
		sort.Strings(names)
		for _, ref := range names {
			id, kind, ok := strings.Cut(strings.TrimPrefix(ref, CyclesPrefix), "/")
			if !ok || open[id] || (kind != "start" && kind != "goals") {
				continue // open; or saved work (regressed, aborted, interrupted, a base): never dropped here
			}
			if _, kept := saves[ref]; kept {
				continue
			}
			if err := l.repo.DeleteRef(ref, refs[ref]); err != nil {
				out.Stuck[ref] = stuckReason(err)
				continue
			}
			out.Removed = append(out.Removed, ref)
			if kind == "start" {
				_ = l.release(id)
			}
		}
	}
	out.Locks = l.staleLocks(time.Now())
	return out, nil
}

// openIDs are the ids of the cycles open in every worktree of the
// repository; an open cycle that does not read is an error (the sweep then
// keeps everything).
func (l *Ledger) openIDs() (map[string]bool, error) {
	open, unreadable := l.openCycles()
	if len(unreadable) > 0 {
		return nil, unreadable[0]
	}
	ids := map[string]bool{}
	for _, c := range open {
		ids[c.ID] = true
	}
	return ids, nil
}

// openCycles are the cycles open in every worktree of the repository, and
// why each open-cycle file that is there but does not read fails.
func (l *Ledger) openCycles() (open []*OpenCycle, unreadable []error) {
	common := l.repo.CommonDir()
	files := []string{filepath.Join(common, "evolve", "cycle.json"), l.openPath()}
	wts, _ := filepath.Glob(filepath.Join(common, "worktrees", "*", "evolve", "cycle.json")) // (a fixed pattern)
	seen := map[string]bool{}
	for _, f := range append(files, wts...) {
		c, err := readOpen(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			unreadable = append(unreadable, err)
		case !seen[c.ID]:
			seen[c.ID] = true
			open = append(open, c)
		}
	}
	return open, unreadable
}

// staleLocks are git's lock files, older than StaleLockAge, on the refs the
// tool writes (the notes refs, refs/evolve/), packed-refs and the index of
// this worktree.
func (l *Ledger) staleLocks(now time.Time) []string {
	common := l.repo.CommonDir()
	var found []string
	add := func(path string) {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > StaleLockAge {
			found = append(found, path)
		}
	}
	for _, dir := range []string{filepath.Join(common, "refs", "notes"), filepath.Join(common, "refs", "evolve")} {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lock") {
				add(path)
			}
			return nil
		})
	}
	add(filepath.Join(common, "packed-refs.lock"))
	add(filepath.Join(l.repo.GitDir(), "index.lock"))
	sort.Strings(found)
	return found
}

var lockFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Unable to create '([^'\n]+\.lock)': File exists`) })

// stuckReason says in one line why a ref could not be removed: the lock
// file git names, or the first line of what it said.
func stuckReason(err error) string {
	msg := err.Error()
	if m := lockFile().FindStringSubmatch(msg); m != nil {
		return "git's lock file " + m[1] + " exists"
	}
	first, _, _ := strings.Cut(msg, "\n")
	return first
}
