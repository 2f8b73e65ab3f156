package loop

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// The guard of the git directory: what the agent's turn may not change
// there. Before the turn the driver takes a snapshot (guardTurn); after it,
// before the driver writes anything of its own, everything that changed is
// put back and named for the cycle's record (turnGuard.restore):
//
//   - where the repository is, first: the git directories (the common one
//     and the worktree's, held open by their identity, put back only in
//     the directory they were in), the worktree's .git, and a linked
//     worktree's commondir and gitdir (restoreLinks); a git directory or a
//     .git that cannot be put back stops the run, and so does a working
//     tree that is no longer the directory it was;
//   - the config files (the common config, the worktree's config.worktree):
//     written back, and the settings that differ named;
//   - the files of the hooks and info directories: files added removed,
//     files changed or removed put back;
//   - refs under refs/notes/, refs/evolve/ and refs/replace/ (not
//     refs/evolve/tampered/): each set back to what it held, the agent's
//     tip kept under refs/evolve/tampered/<cycle id>/ so that nothing is
//     lost; for the ledger, the records it gained are counted;
//   - git-evolve's state files that are not derived: the journal, the
//     reserved numbers, the saves list and verified (shared), the run state
//     and the brief (the worktree's); the derived caches that changed are
//     removed, to be built again from git, and not named.
//
// Files are compared by lstat, never followed (a symbolic link's target is
// what is compared and put back), and held up to guardFileMax each and
// guardHeldMax in all: a file past that is compared by size and time, and
// named, not put back.
//
// Nothing tells who wrote what: the agent runs as the same user as
// everyone. What another worktree's cycle or run writes during the turn is
// told by what was fixed before the turn began: the cycles open in other
// worktrees and the runs driving them then. Their records, their refs and
// their lines are left; so are the moves of other shared notes refs while
// they work (named: the driver cannot tell those from the agent's).

const (
	guardFileMax  = 16 << 20
	guardHeldMax  = 64 << 20
	guardMarksMax = 12
	// guardNotesMax bounds the notes a ledger's change is read for.
	guardNotesMax = 4096
)

// tamperedPrefix is where the guard keeps the tips of refs it put back.
const tamperedPrefix = "refs/evolve/tampered/"

// guardedRefs are the prefixes of the refs the guard holds.
var guardedRefs = []string{"refs/notes/", "refs/evolve/", "refs/replace/"}

// ledgerRef is the ledger's notes ref.
const ledgerRef = "refs/notes/evolve"

// derivedCaches are the files under the common git directory's evolve/
// that reads write (derived; safe to delete): the view's one file, and
// the files older versions kept (cycles.idx, verify-report, merged,
// copies, verify-kept and the four files of its sections).
var derivedCaches = []string{"ledger.view", "cycles.idx", "merged", "copies", "verify-kept", "verify-state", "verify-keys", "verify-delta", "verify-objects", "verify-report", "goals-warned"}

// worktreeCaches are the derived files under the worktree's evolve/: what
// the seeds' history file was last written from (a forged one would have
// the mirror add to a history file the agent wrote; a missing one has it
// kept aside and written anew).
var worktreeCaches = []string{"history-mirror.json"}

// lineFiles are the shared state files of one line per entry, with how to
// tell the cycle (or run) an entry is of.
var lineFiles = map[string]func(line string) (cycle, run string){
	"journal.jsonl": func(line string) (string, string) {
		var r struct{ ID, Run string }
		_ = json.Unmarshal([]byte(line), &r)
		return r.ID, r.Run
	},
	"reserved": func(line string) (string, string) {
		_, id, _ := strings.Cut(line, " ")
		return strings.TrimSpace(id), ""
	},
	"saves": func(line string) (string, string) {
		ref, _, _ := strings.Cut(line, " ")
		return cycleOfRef(ref), ""
	},
}

// worktreeLinks are the files of a linked worktree's git directory that
// say where the repository is: commondir (the common git directory: its
// refs, objects and config) and gitdir (the worktree). One pointed
// elsewhere would have every git the driver starts after the turn read
// and write another repository, the guard's own first: they are put back
// before anything else is compared, after the worktree's .git.
var worktreeLinks = []string{"commondir", "gitdir"}

// sharedFiles are the shared state files that are no lines of entries,
// held whole and named when the turn changed them: the holdout checks.
var sharedFiles = []string{"holdout.yaml"}

// driverFiles are the worktree's files the driver writes before the turn
// (the brief; the census of the tests at the start, which the next cycle's
// start may read), put back silently.
var driverFiles = []string{"brief.md", "brief.json", "census.json"}

// fileState is a file (or a symbolic link) as the guard holds it.
type fileState struct {
	exists bool
	mode   fs.FileMode
	data   []byte // the content, or the link's target
	held   bool   // data is all of it
	size   int64
	mtime  time.Time
	info   fs.FileInfo
}

// same reports whether two states of a path are the same file content.
func (a fileState) same(b fileState) bool {
	switch {
	case a.exists != b.exists:
		return false
	case !a.exists:
		return true
	case a.mode != b.mode:
		return false
	case a.held && b.held:
		return bytes.Equal(a.data, b.data)
	}
	return a.size == b.size && a.mtime.Equal(b.mtime)
}

// readState reads path, not following a link, holding its content within
// budget (which it lowers).
func readState(path string, budget *int64) (fileState, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	st := fileState{exists: true, mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime(), info: fi}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return st, err
		}
		st.data, st.held = []byte(target), true
	case fi.Mode().IsRegular() && fi.Size() <= guardFileMax && (budget == nil || fi.Size() <= *budget):
		// A file that cannot be read (its mode says so) is compared by
		// its size and time, as one too large to hold.
		f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow, 0)
		if err != nil {
			return st, nil
		}
		data, err := readAllMax(f, guardFileMax+1)
		f.Close()
		if err != nil {
			return st, nil
		}
		if int64(len(data)) <= guardFileMax {
			st.data, st.held, st.size = data, true, int64(len(data))
			if budget != nil {
				*budget -= int64(len(data))
			}
		}
	}
	return st, nil
}

func readAllMax(f *os.File, n int64) ([]byte, error) { return io.ReadAll(io.LimitReader(f, n)) }

// putBack makes path what st says: removed when st does not exist, else
// written anew (a link made again) and renamed into place, so that no one
// sees half a file and a link at the path is replaced, never followed.
func putBack(path string, st fileState) error {
	if !st.exists {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if !st.held {
		return fmt.Errorf("it was not held (over %d MiB, or not readable)", guardFileMax>>20)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var tmp string
	if st.mode&fs.ModeSymlink != 0 {
		tmp = fmt.Sprintf("%s.guard-%d", path, time.Now().UnixNano())
		if err := os.Symlink(string(st.data), tmp); err != nil {
			return err
		}
	} else {
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".guard-*")
		if err != nil {
			return err
		}
		tmp = f.Name()
		_, err = f.Write(st.data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp, st.mode.Perm())
		}
		if err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		if fi, lerr := os.Lstat(path); lerr == nil && fi.IsDir() {
			return fmt.Errorf("a directory is in its place")
		}
		return err
	}
	return nil
}

// guardedDir is a directory whose every file the guard holds (hooks/,
// info/).
type guardedDir struct {
	name    string // as the marks name it
	path    string
	dir     fileState
	entries map[string]fileState
}

// others is what other worktrees of the repository had under way when the
// agent's turn began: the cycles open there and the runs driving them.
type others struct {
	cycles  map[string]bool
	runs    map[string]bool
	runDirs map[string]string // a driven worktree's git directory -> its run's id
}

func (o others) any() bool { return len(o.cycles) > 0 || len(o.runs) > 0 }

// turnGuard is the snapshot of the git directory the agent's turn is
// checked against.
type turnGuard struct {
	repo              *gitstore.Repo
	gitDir, commonDir string
	cycleID           string
	// runJSON is what the driver last wrote to run.json.
	runJSON func() []byte
	budget  int64
	files   map[string]fileState // the config files, the state files, the driver's files
	dirs    []*guardedDir
	stateDs map[string]fileState // the evolve directories themselves
	caches  map[string]fileState
	// viewSums are the sums of the view's sections before the turn (nil
	// when there was no view that read): a section the turn left as it
	// was is kept, the others dropped.
	viewSums *[store.Sections][32]byte
	refs     map[string]gitstore.Hash
	others   others
	// dotGit is the worktree's .git ("" without a working tree) and what
	// it was before the turn.
	dotGit   string
	dotGitSt fileState
	// top is the working tree's top as it was before the turn (nil without
	// a working tree): what the worktree's .git is put back in.
	top fs.FileInfo
	// gitDirs are the directories held open by their identity: the common
	// git directory, the worktree's and its .git when that is a directory
	// (in the main worktree, one).
	gitDirs []*heldDir
	// topLost: the working tree's top was no longer the directory it was
	// after the turn (checkTop).
	topLost bool
	// linksDone: restoreLinks has run (the driver runs it before it checks
	// its hold), and restore does not run it again.
	linksDone bool
}

// guardTurn takes the snapshot of what the agent's turn may not change
// under the git directory of repo, for the cycle cycleID; runJSON gives
// what the driver last wrote to run.json.
func guardTurn(repo *gitstore.Repo, cycleID string, runJSON func() []byte) (_ *turnGuard, err error) {
	g := &turnGuard{repo: repo, gitDir: repo.GitDir(), commonDir: repo.CommonDir(), cycleID: cycleID, runJSON: runJSON,
		budget: guardHeldMax, files: map[string]fileState{}, stateDs: map[string]fileState{}, caches: map[string]fileState{}}
	defer func() {
		if err != nil {
			g.close()
		}
	}()
	if err := g.holdDotGit(); err != nil {
		return nil, err
	}
	for _, p := range g.heldFiles() {
		st, err := readState(p, &g.budget)
		if err != nil {
			return nil, fmt.Errorf("reading %s before the agent's turn: %w", p, err)
		}
		g.files[p] = st
	}
	for _, name := range []string{"hooks", "info"} {
		d := &guardedDir{name: name, path: filepath.Join(g.commonDir, name)}
		var err error
		if d.dir, d.entries, err = readDir(d.path, &g.budget); err != nil {
			return nil, fmt.Errorf("reading %s before the agent's turn: %w", d.path, err)
		}
		g.dirs = append(g.dirs, d)
	}
	for _, p := range g.stateDirs() {
		st, err := readState(p, nil)
		if err != nil {
			return nil, err
		}
		g.stateDs[p] = st
	}
	caches := make([]string, 0, len(derivedCaches)+len(worktreeCaches))
	for _, name := range derivedCaches {
		caches = append(caches, filepath.Join(g.commonDir, "evolve", name))
	}
	for _, name := range worktreeCaches {
		caches = append(caches, filepath.Join(g.gitDir, "evolve", name))
	}
	for _, p := range caches {
		st, err := readState(p, new(int64)) // compared by identity, size and time
		if err != nil {
			return nil, err
		}
		g.caches[p] = st
	}
	if sums, ok := store.SectionSums(g.viewPath()); ok {
		g.viewSums = &sums
	}
	refs, err := g.listRefs()
	if err != nil {
		return nil, fmt.Errorf("listing the refs before the agent's turn: %w", err)
	}
	g.refs = refs
	g.others = g.otherWork()
	return g, nil
}

// heldFiles are the files the guard holds whole: the config files, the
// shared state files, the run state and the brief.
func (g *turnGuard) heldFiles() []string {
	files := []string{filepath.Join(g.commonDir, "config"), filepath.Join(g.gitDir, "config.worktree")}
	shared := filepath.Join(g.commonDir, "evolve")
	for name := range lineFiles {
		files = append(files, filepath.Join(shared, name))
	}
	files = append(files, filepath.Join(shared, "verified"))
	for _, name := range sharedFiles {
		files = append(files, filepath.Join(shared, name))
	}
	files = append(files, g.linkFiles()...)
	for _, name := range driverFiles {
		files = append(files, filepath.Join(g.gitDir, "evolve", name))
	}
	files = append(files, g.openCyclePath())
	slices.Sort(files)
	return slices.Compact(files)
}

// linkFiles are the worktreeLinks of the worktree, when it is a linked
// one (none in the main worktree, whose git directory is the common one).
func (g *turnGuard) linkFiles() []string {
	if resolved(g.gitDir) == resolved(g.commonDir) {
		return nil
	}
	var files []string
	for _, name := range worktreeLinks {
		files = append(files, filepath.Join(g.gitDir, name))
	}
	return files
}

// heldDir is a directory the guard holds by its identity, and open.
type heldDir struct {
	path string
	name string // as the marks name it
	what string // as the error names it
	st   fileState
	f    *os.File
	// in is the directory it is in, as its path led there before the
	// turn: the only one it is put back in.
	in fs.FileInfo
}

// holdDotGit holds the worktree's .git and the git directories. At the top
// of the working tree the agent edits, .git is the other end of the links:
// where git finds the repository from the worktree. In a linked worktree
// it is a file (gitdir: <its git directory>), read by every git started in
// the worktree without GIT_DIR (the agent's next turn, the operator's, the
// next git evolve): held as the other files are, and put back right after
// the git directories. Those are where every git the driver starts works:
// its GIT_DIR (the worktree's git directory) and the common one. In
// the main worktree both are .git itself; a linked worktree's are outside
// its working tree, and within the agent's reach all the same. Each is
// held by its identity, and open, so that it is found wherever the turn
// moves it and renamed back, what the agent left in its place exchanged
// with it (nothing is removed: it may be a repository). One that cannot be
// put back stops the run (restoreLinks).
func (g *turnGuard) holdDotGit() error {
	if top, err := g.repo.WorkTree(); err == nil {
		if g.top, err = os.Stat(top); err != nil {
			return fmt.Errorf("reading %s before the agent's turn: %w", top, err)
		}
		g.dotGit = filepath.Join(top, ".git")
		if g.dotGitSt, err = readState(g.dotGit, nil); err != nil {
			return fmt.Errorf("reading %s before the agent's turn: %w", g.dotGit, err)
		}
	}
	// The outermost first: the worktree's git directory is under the
	// common one, and is put back after it.
	dirs := []struct{ path, name, what string }{
		{g.commonDir, "the repository's git directory", "the repository's git directory"},
		{g.gitDir, "the worktree's git directory", "the worktree's git directory"},
	}
	if g.dotGitSt.exists && g.dotGitSt.mode.IsDir() {
		dirs = append(dirs, struct{ path, name, what string }{g.dotGit, ".git", "the repository's git directory"})
	}
	for _, d := range dirs {
		if d.path == "" {
			continue
		}
		var h *heldDir
		for _, o := range g.gitDirs {
			if resolved(o.path) == resolved(d.path) {
				h = o
			}
		}
		if h != nil {
			if d.path == g.dotGit {
				h.path, h.name = d.path, d.name // named as the worktree sees it
			}
			continue
		}
		st, err := readState(d.path, nil)
		if err != nil {
			return fmt.Errorf("reading %s before the agent's turn: %w", d.path, err)
		}
		if !st.exists || !st.mode.IsDir() {
			continue
		}
		in, err := os.Stat(filepath.Dir(d.path))
		if err != nil {
			return fmt.Errorf("reading %s before the agent's turn: %w", filepath.Dir(d.path), err)
		}
		f, err := os.OpenFile(d.path, os.O_RDONLY|syscallNoFollow, 0)
		if err != nil {
			return fmt.Errorf("opening %s before the agent's turn: %w", d.path, err)
		}
		if fi, err := f.Stat(); err != nil || !os.SameFile(fi, st.info) {
			f.Close()
			return fmt.Errorf("%s changed as the agent's turn began: run again", d.path)
		}
		g.gitDirs = append(g.gitDirs, &heldDir{path: d.path, name: d.name, what: d.what, st: st, f: f, in: in})
	}
	return nil
}

// close lets go of the directories the guard held open.
func (g *turnGuard) close() {
	for _, h := range g.gitDirs {
		if h.f != nil {
			h.f.Close()
			h.f = nil
		}
	}
}

// restoreLinks puts back where the repository is: the git directories
// first, then the worktree's .git, then a linked worktree's commondir and
// gitdir. It returns a *RunError when one could not be put back (the run
// stops on it), Lost when that is a git directory, or when the working
// tree is no longer the directory it was (checkTop): then nothing else was
// compared, since every path under it leads elsewhere.
func (g *turnGuard) restoreLinks() ([]string, error) {
	g.linksDone = true
	var marks []string
	if mark, err := g.checkTop(); err != nil {
		return []string{mark}, err
	}
	for _, h := range g.gitDirs {
		mark, err := g.restoreGitDir(h)
		if mark != "" {
			marks = append(marks, mark)
		}
		if err != nil {
			return marks, err
		}
	}
	mark, err := g.restoreDotGit()
	if mark != "" {
		marks = append(marks, mark)
	}
	for _, p := range g.linkFiles() {
		before := g.files[p]
		after, err := readState(p, nil)
		if err == nil && before.same(after) && (!after.exists || after.mode.IsRegular()) {
			continue
		}
		done := "put back"
		if err := putBack(p, before); err != nil {
			done = "could not be put back: " + err.Error()
		}
		marks = append(marks, fmt.Sprintf("%s: changed during the agent's turn; %s", filepath.Base(p), done))
	}
	return marks, err
}

// checkTop stops the run (Lost) when the working tree's top is no longer
// the directory it was: moved away, a link to another working tree (and
// its repository) in its place. Nothing is put back there, nor read or
// written through it: what is there is not the guard's.
func (g *turnGuard) checkTop() (string, error) {
	if g.top == nil {
		return "", nil
	}
	top := filepath.Dir(g.dotGit)
	if fi, err := os.Stat(top); err == nil && os.SameFile(fi, g.top) {
		return "", nil
	}
	g.topLost = true
	return "the working tree: moved or replaced during the agent's turn; nothing was put back in what is there now",
		&RunError{Lost: true, Msg: fmt.Sprintf("%s, the working tree, was moved or replaced during the agent's turn (what is there now may be another repository's): the run stops, before a git it starts reads or writes another repository", top),
			Hint: fmt.Sprintf("move what is at %s aside (not removed) and the working tree back there, then continue the run: git evolve run --resume", top)}
}

// restoreDotGit puts back the worktree's .git (held by holdDotGit), and
// says so; the error is a *RunError when it could not be.
func (g *turnGuard) restoreDotGit() (string, error) {
	before := g.dotGitSt
	if g.dotGit == "" || !before.exists || before.mode.IsDir() {
		return "", nil // a directory is held with the git directories
	}
	after, err := readState(g.dotGit, nil)
	if err == nil && before.same(after) {
		return "", nil
	}
	if err = putBack(g.dotGit, before); err != nil {
		mark := ".git: changed during the agent's turn; could not be put back: " + err.Error()
		return mark, &RunError{Msg: fmt.Sprintf("%s, which says where the worktree's repository is, was changed during the agent's turn and could not be put back (%v): the run stops, before the gits started in the worktree work in another repository", g.dotGit, err),
			Hint: fmt.Sprintf("move what is at %s aside and make it again as it was (%q), then continue the run: git evolve run --resume", g.dotGit, strings.TrimSpace(string(before.data)))}
	}
	return ".git: changed during the agent's turn; put back", nil
}

// restoreGitDir puts a git directory the guard held (h) back at its path
// when the turn moved it or put something in its place: it is found where
// it is now, through the guard's hold on it, and renamed back, what the
// agent left at its path going where the directory was found (the two
// exchanged).
func (g *turnGuard) restoreGitDir(h *heldDir) (string, error) {
	before := h.st
	after, err := readState(h.path, new(int64))
	if err == nil && after.exists && after.mode.IsDir() && os.SameFile(before.info, after.info) {
		return "", nil
	}
	var left, moved string // what is at the path now, as the mark names it
	switch {
	case err != nil || !after.exists:
	case after.mode.IsDir():
		left, moved = "a directory", "the directory"
	case after.mode&fs.ModeSymlink != 0:
		left, moved = "a symbolic link", "the link"
	case after.mode.IsRegular():
		left, moved = "a file", "the file"
	default:
		left, moved = "what is not a file", "what was in its place"
	}
	what, where := "moved or removed", ""
	if h.f != nil {
		where = heldPath(h.f)
	}
	if where != "" {
		what = "moved to " + g.nearTop(where)
	}
	if left != "" {
		what += " and replaced by " + left
	}
	if fi, serr := os.Stat(filepath.Dir(h.path)); where != "" && (serr != nil || !os.SameFile(fi, h.in)) {
		// Its path leads elsewhere (a directory above it moved, a link
		// in its place): what is there is not the guard's to move.
		err = errors.New("the directory it was in is no longer there")
	} else if where == "" {
		err = errors.New("it is not found")
	} else {
		err = putDirBack(where, h.path, left != "")
	}
	if err == nil {
		if fi, lerr := os.Lstat(h.path); lerr != nil || !os.SameFile(fi, before.info) {
			err = errors.New("another is in its place")
		}
	}
	if err != nil {
		hint := fmt.Sprintf("put %s back at %s (what is there moved aside, not removed), then continue the run: git evolve run --resume", h.what, h.path)
		if where != "" {
			hint = fmt.Sprintf("move what is at %s aside (not removed: it may be a repository) and %s back there from %s, then continue the run: git evolve run --resume", h.path, h.what, where)
		}
		return h.name + ": " + what + " during the agent's turn; could not be put back: " + pathless(err).Error(),
			&RunError{Lost: true, Msg: fmt.Sprintf("%s, %s, was %s during the agent's turn and could not be put back (%v): the run stops, before a git it starts reads or writes another repository", h.path, h.what, what, err), Hint: hint}
	}
	done := "put back"
	if left != "" {
		done += ", " + moved + " moved to " + g.nearTop(where)
	}
	return h.name + ": " + what + " during the agent's turn; " + done, nil
}

// restoreWhereFound is the put-back of a turn whose git directory could
// not be put back at its path (restoreLinks' Lost): what else the turn
// changed in the git directories is put back where they are now, found
// through the guard's hold on them, so that the repository the operator
// moves back is as the turn found it. It returns the marks and the
// worktree's git directory where it is now (for the run's state), or an
// error when a directory is not found or the repository there is not the
// one held: then nothing was done.
func (g *turnGuard) restoreWhereFound() ([]string, string, error) {
	moves := map[string]string{}
	for _, h := range g.gitDirs {
		if h.f == nil {
			return nil, "", errors.New("it is not held")
		}
		where := heldPath(h.f)
		if where == "" {
			return nil, "", fmt.Errorf("%s is not found", h.what)
		}
		moves[h.path] = where
	}
	sub := func(p string) string {
		best := ""
		for from := range moves {
			if (p == from || strings.HasPrefix(p, from+string(filepath.Separator))) && len(from) > len(best) {
				best = from
			}
		}
		if best == "" {
			return p
		}
		return moves[best] + strings.TrimPrefix(p, best)
	}
	gitDir, commonDir := sub(g.gitDir), sub(g.commonDir)
	repo, err := gitstore.Open(gitDir)
	if err != nil {
		return nil, "", err
	}
	defer repo.Close()
	// The repository found there is the one held, its common directory
	// too (a worktree's git directory names it relatively).
	for _, h := range g.gitDirs {
		p := sub(h.path)
		if fi, err := os.Lstat(p); err != nil || !os.SameFile(fi, h.st.info) {
			return nil, "", fmt.Errorf("%s is not at %s", h.what, p)
		}
	}
	for _, pair := range [][2]string{{repo.GitDir(), gitDir}, {repo.CommonDir(), commonDir}} {
		a, err1 := os.Stat(pair[0])
		b, err2 := os.Stat(pair[1])
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return nil, "", fmt.Errorf("the repository at %s is not the one held", gitDir)
		}
	}
	rekey := func(m map[string]fileState) map[string]fileState {
		out := make(map[string]fileState, len(m))
		for p, st := range m {
			out[sub(p)] = st
		}
		return out
	}
	ng := *g
	ng.repo, ng.gitDir, ng.commonDir = repo, gitDir, commonDir
	ng.files, ng.stateDs, ng.caches = rekey(g.files), rekey(g.stateDs), rekey(g.caches)
	ng.dirs = nil
	for _, d := range g.dirs {
		nd := *d
		nd.path = sub(d.path)
		ng.dirs = append(ng.dirs, &nd)
	}
	ng.others.runDirs = map[string]string{}
	for dir, id := range g.others.runDirs {
		ng.others.runDirs[sub(dir)] = id
	}
	ng.gitDirs, ng.linksDone = nil, true // the holds stay g's
	marks, err := ng.restore()
	return marks, gitDir, err
}

// pathless is err without the paths a file operation's error names (the
// machine's, for a record that others read).
func pathless(err error) error {
	var le *os.LinkError
	var pe *fs.PathError
	var se *os.SyscallError
	switch {
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &se):
		return se.Err
	}
	return err
}

// nearTop is path as the worktree's top sees it (relative to it).
func (g *turnGuard) nearTop(path string) string {
	if g.dotGit == "" {
		return path
	}
	if rel, err := filepath.Rel(filepath.Dir(g.dotGit), path); err == nil {
		return rel
	}
	return path
}

// openCyclePath is the open cycle's file (cycle.json) of the worktree.
func (g *turnGuard) openCyclePath() string { return filepath.Join(g.gitDir, "evolve", "cycle.json") }

// stateDirs are the evolve directories (the shared one and the worktree's,
// one directory in the main worktree).
func (g *turnGuard) stateDirs() []string {
	return slices.Compact([]string{filepath.Join(g.commonDir, "evolve"), filepath.Join(g.gitDir, "evolve")})
}

// readDir reads a guarded directory: itself, and each file or link in it
// (subdirectories are not held), within budget.
func readDir(path string, budget *int64) (fileState, map[string]fileState, error) {
	dir, err := readState(path, nil)
	if err != nil || !dir.exists || !dir.mode.IsDir() {
		return dir, map[string]fileState{}, err
	}
	des, err := os.ReadDir(path)
	if err != nil {
		return dir, nil, err
	}
	entries := map[string]fileState{}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		st, err := readState(filepath.Join(path, de.Name()), budget)
		if err != nil {
			return dir, nil, err
		}
		entries[de.Name()] = st
	}
	return dir, entries, nil
}

// listRefs are the guarded refs and their values (refs/evolve/tampered/
// left out).
func (g *turnGuard) listRefs() (map[string]gitstore.Hash, error) {
	refs, err := g.repo.ListRefsUnder(guardedRefs...)
	if err != nil {
		return nil, err
	}
	for ref := range refs {
		if strings.HasPrefix(ref, tamperedPrefix) {
			delete(refs, ref)
		}
	}
	return refs, nil
}

// otherWork is what the other worktrees of the repository have under way:
// the cycles open there, the runs driving them and those runs' cycles.
func (g *turnGuard) otherWork() others {
	o := others{cycles: map[string]bool{}, runs: map[string]bool{}, runDirs: map[string]string{}}
	self := resolved(g.gitDir)
	for _, dir := range worktreeGitDirs(g.commonDir) {
		if resolved(dir) == self {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(dir, "evolve", "cycle.json")); err == nil {
			var c struct{ ID string }
			if json.Unmarshal(data, &c) == nil && c.ID != "" {
				o.cycles[c.ID] = true
			}
		}
		if owns, err := RunOwns(dir); err != nil || !owns {
			continue
		}
		if r, err := LoadRunState(dir); err == nil && r != nil && r.ID != "" {
			o.runs[r.ID] = true
			o.runDirs[dir] = r.ID
			addRunCycles(o.cycles, r)
		}
	}
	return o
}

// addRunCycles adds the cycles run r opened to set.
func addRunCycles(set map[string]bool, r *RunState) {
	if r.CycleID != "" {
		set[r.CycleID] = true
	}
	for _, c := range r.Cycles {
		if c.ID != "" {
			set[c.ID] = true
		}
	}
}

// resolved is path absolute, its links resolved (as far as they resolve).
func resolved(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// cycleOfRef is the cycle a ref under refs/evolve/cycles/<id>/ or
// refs/evolve/transcripts/<id> is of ("" for other refs).
func cycleOfRef(ref string) string {
	for _, prefix := range []string{"refs/evolve/cycles/", "refs/evolve/transcripts/"} {
		if rest, ok := strings.CutPrefix(ref, prefix); ok {
			id, _, _ := strings.Cut(rest, "/")
			return id
		}
	}
	return ""
}

// restore compares the git directory with the snapshot, puts back what the
// agent's turn changed, and returns the marks for the cycle's record.
// What could not be put back is named so; only the worktree's .git stops
// the run (restoreLinks' error).
func (g *turnGuard) restore() ([]string, error) {
	defer g.close()
	// Where the repository is, first: every git started below reads it.
	var marks []string
	var err error
	if !g.linksDone {
		marks, err = g.restoreLinks()
		var re *RunError
		if errors.As(err, &re) && re.Lost {
			return marks, err
		}
	}
	// What other worktrees' runs opened since, by the runs' own account.
	theirs := maps(g.others.cycles)
	for dir, id := range g.others.runDirs {
		if r, err := LoadRunState(dir); err == nil && r != nil && r.ID == id {
			addRunCycles(theirs, r)
		}
	}
	for _, p := range g.stateDirs() {
		marks = append(marks, g.restoreDir(p, g.stateDs[p], "evolve/")...)
	}
	for _, d := range g.dirs {
		marks = append(marks, g.restoreDirFiles(d)...)
	}
	marks = append(marks, g.restoreConfig()...)
	marks = append(marks, g.restoreRefs(theirs)...)
	marks = append(marks, g.restoreState(theirs)...)
	g.dropCaches()
	return marks, err
}

func maps(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// restoreDir makes path a directory again when the turn replaced it (by a
// link or a file): what was there is removed, never followed.
func (g *turnGuard) restoreDir(path string, before fileState, name string) []string {
	if !before.exists || !before.mode.IsDir() {
		return nil
	}
	now, err := readState(path, new(int64))
	if err != nil {
		return []string{fmt.Sprintf("%s: could not be read after the agent's turn: %v", name, err)}
	}
	if now.exists && now.mode.IsDir() {
		return nil
	}
	what := "removed"
	if now.exists {
		what = "replaced by a file"
		if now.mode&fs.ModeSymlink != 0 {
			what = "replaced by a symbolic link"
		}
		if err := os.Remove(path); err != nil {
			return []string{fmt.Sprintf("%s: %s during the agent's turn, and could not be removed: %v", name, what, err)}
		}
	}
	if err := os.MkdirAll(path, before.mode.Perm()|0o700); err != nil {
		return []string{fmt.Sprintf("%s: %s during the agent's turn, and could not be made again: %v", name, what, err)}
	}
	return []string{fmt.Sprintf("%s: %s during the agent's turn; made a directory again, its files put back", name, what)}
}

// restoreDirFiles puts back the files of a guarded directory.
func (g *turnGuard) restoreDirFiles(d *guardedDir) []string {
	marks := g.restoreDir(d.path, d.dir, d.name+"/")
	// A directory made again has its files put back under its own mark.
	whole := len(marks) > 0
	budget := int64(guardHeldMax)
	_, now, err := readDir(d.path, &budget)
	if err != nil {
		return append(marks, fmt.Sprintf("%s/: could not be read after the agent's turn: %v", d.name, err))
	}
	names := map[string]bool{}
	for n := range d.entries {
		names[n] = true
	}
	for n := range now {
		names[n] = true
	}
	var list []string
	for n := range names {
		list = append(list, n)
	}
	slices.Sort(list)
	var named []string
	for _, n := range list {
		before, after := d.entries[n], now[n]
		if before.same(after) {
			continue
		}
		what, done := "changed", "put back"
		switch {
		case !before.exists:
			what, done = "added", "removed"
		case !after.exists:
			what = "removed"
		}
		err := putBack(filepath.Join(d.path, n), before)
		if err != nil {
			done = "could not be put back: " + err.Error()
		} else if whole {
			continue
		}
		named = append(named, fmt.Sprintf("%s: %s %s during the agent's turn; %s", d.name, oneLine(n, 80), what, done))
	}
	return append(marks, bounded(named)...)
}

// bounded keeps the first guardMarksMax marks, and says how many more.
func bounded(marks []string) []string {
	if len(marks) <= guardMarksMax {
		return marks
	}
	return append(marks[:guardMarksMax:guardMarksMax], fmt.Sprintf("and %d more changes of the same kind", len(marks)-guardMarksMax))
}

// restoreConfig puts the config files back, naming the settings that
// differ.
func (g *turnGuard) restoreConfig() []string {
	var marks []string
	for _, p := range []string{filepath.Join(g.commonDir, "config"), filepath.Join(g.gitDir, "config.worktree")} {
		before, ok := g.files[p]
		if !ok {
			continue
		}
		after, err := readState(p, nil)
		name := filepath.Base(p)
		if err != nil {
			marks = append(marks, fmt.Sprintf("%s: could not be read after the agent's turn: %v", name, err))
			continue
		}
		if before.same(after) {
			continue
		}
		what := g.configChanges(before, after)
		done := "put back"
		if err := putBack(p, before); err != nil {
			done = "could not be put back: " + err.Error()
		}
		marks = append(marks, fmt.Sprintf("%s: %s during the agent's turn; %s", name, what, done))
	}
	return marks
}

// configChanges says which settings differ between two versions of a
// config file.
func (g *turnGuard) configChanges(before, after fileState) string {
	if !after.exists {
		return "removed"
	}
	if !before.exists && (!after.mode.IsRegular() || !after.held) {
		return "made"
	}
	if !before.held || !after.held || !after.mode.IsRegular() || !before.mode.IsRegular() {
		return "replaced"
	}
	old, err := g.repo.ParseConfigFile(before.data)
	if err != nil {
		return "changed"
	}
	cur, err := g.repo.ParseConfigFile(after.data)
	if err != nil {
		return "changed (it no longer reads as a config file)"
	}
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var list []string
	for k := range keys {
		if !slices.Equal(old[k], cur[k]) {
			list = append(list, k)
		}
	}
	if len(list) == 0 {
		return "changed (no setting differs)"
	}
	slices.Sort(list)
	var parts []string
	for i, k := range list {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more settings", len(list)-5))
			break
		}
		key := configKeyName(k, after.data, before.data)
		switch {
		case len(old[k]) == 0:
			parts = append(parts, fmt.Sprintf("%s set to %s", key, configValues(cur[k])))
		case len(cur[k]) == 0:
			parts = append(parts, fmt.Sprintf("%s (%s) removed", key, configValues(old[k])))
		default:
			parts = append(parts, fmt.Sprintf("%s changed from %s to %s", key, configValues(old[k]), configValues(cur[k])))
		}
	}
	return strings.Join(parts, ", ")
}

// configKeyName is key as a config file spells it (core.hooksPath, not
// core.hookspath) when one of the files has it so, else key.
func configKeyName(key string, files ...[]byte) string {
	section, name, ok := strings.Cut(key, ".")
	if !ok {
		return oneLine(key, 80)
	}
	if i := strings.LastIndexByte(key, '.'); i > len(section) {
		name = key[i+1:]
	}
	for _, data := range files {
		for _, line := range strings.Split(string(data), "\n") {
			field, _, _ := strings.Cut(strings.TrimSpace(line), "=")
			field = strings.TrimSpace(field)
			if strings.EqualFold(field, name) {
				return oneLine(strings.TrimSuffix(key, name)+field, 80)
			}
		}
	}
	return oneLine(key, 80)
}

func configValues(vs []string) string {
	var out []string
	for _, v := range vs {
		out = append(out, oneLine(v, 80))
	}
	return strings.Join(out, ", ")
}

// restoreRefs sets every guarded ref back to what it held before the turn.
// A ref of a cycle another worktree had under way is left; so is a move of
// another shared ref while another worktree worked (named). The tip a ref
// is taken from is kept under refs/evolve/tampered/<cycle id>/ first.
func (g *turnGuard) restoreRefs(theirs map[string]bool) []string {
	now, err := g.listRefs()
	if err != nil {
		return []string{fmt.Sprintf("refs: could not be listed after the agent's turn: %v", err)}
	}
	names := map[string]bool{}
	for r := range g.refs {
		names[r] = true
	}
	for r := range now {
		names[r] = true
	}
	type change struct {
		ref         string
		before, now gitstore.Hash
	}
	var replaced, made, moved, gone []change
	for r := range names {
		b, n := g.refs[r], now[r]
		if b == n {
			continue
		}
		if id := cycleOfRef(r); id != "" && id != g.cycleID && theirs[id] {
			continue // the ref of another worktree's cycle
		}
		if n.IsZero() {
			// Listed by none: it may still be there, broken.
			if h, ok, err := g.repo.RefHash(r); err == nil && ok {
				n = h
			}
			if n == b {
				continue
			}
		}
		c := change{ref: r, before: b, now: n}
		switch {
		case strings.HasPrefix(r, "refs/replace/"):
			replaced = append(replaced, c)
		case b.IsZero():
			made = append(made, c)
		case n.IsZero():
			gone = append(gone, c)
		default:
			moved = append(moved, c)
		}
	}
	// Replace refs first (they change what git reads of every object);
	// then refs made are removed: one may be in the way of one put back
	// (refs/notes/x/y where refs/notes/x was).
	var marks []string
	for _, list := range [][]change{replaced, made, moved, gone} {
		slices.SortFunc(list, func(a, b change) int { return strings.Compare(a.ref, b.ref) })
		var named []string
		for _, c := range list {
			if m := g.restoreRef(c.ref, c.before, c.now, theirs); m != "" {
				named = append(named, m)
			}
		}
		marks = append(marks, bounded(named)...)
	}
	return marks
}

// restoreRef puts ref back from now to before, and says so.
func (g *turnGuard) restoreRef(ref string, before, now gitstore.Hash, theirs map[string]bool) string {
	what := ref
	var how string
	switch {
	case before.IsZero():
		how = "created during the agent's turn"
	case now.IsZero():
		how = "deleted during the agent's turn"
	default:
		how = fmt.Sprintf("moved during the agent's turn (%s → %s)", before.Short(), now.Short())
	}
	ledger := ref == ledgerRef || strings.HasPrefix(ref, "refs/notes/remotes/") && strings.HasSuffix(ref, "/evolve")
	if ledger && !now.IsZero() {
		base := before
		if ref != ledgerRef && base.IsZero() {
			base = g.refs[ledgerRef] // a copy adds to what readers show of the ledger
		}
		lc := g.ledgerChange(base, now, theirs)
		if ref == ledgerRef && lc.complete && len(lc.removed) == 0 && lc.added > 0 && lc.theirs == lc.added {
			return "" // records of cycles other worktrees had under way
		}
		what = "ledger"
		if ref != ledgerRef {
			what = "ledger copy " + ref
		}
		how = lc.describe(how, now)
	} else if g.others.any() && !now.IsZero() && cycleOfRef(ref) == "" && (before.IsZero() || g.descends(before, now)) &&
		!strings.HasPrefix(ref, "refs/replace/") {
		// Another worktree's cycle or run may have written it.
		return fmt.Sprintf("%s: %s while another worktree had a cycle or a run under way; left as it is, the driver cannot tell its writes from the agent's", ref, how)
	}
	kept := ""
	if !now.IsZero() {
		keep, err := g.keepTip(ref, now)
		if err != nil {
			return fmt.Sprintf("%s: %s; left as it is, its tip could not be kept: %v", what, how, err)
		}
		kept = ", kept under " + keep
	}
	if err := g.repo.ResetRef(ref, before, now, "git evolve: put back after the agent's turn"); err != nil {
		return fmt.Sprintf("%s: %s; could not be put back: %v%s", what, how, err, kept)
	}
	switch {
	case before.IsZero():
		return fmt.Sprintf("%s: %s; removed%s", what, how, kept)
	default:
		return fmt.Sprintf("%s: %s; put back%s", what, how, kept)
	}
}

// keepTip keeps tip, taken from ref, under refs/evolve/tampered/<cycle
// id>/<ref without refs/>; when that name cannot be had (a ref in the
// way, which the agent could have made), under a name no one can guess.
func (g *turnGuard) keepTip(ref string, tip gitstore.Hash) (string, error) {
	rest := strings.TrimPrefix(ref, "refs/")
	keep := tamperedPrefix + g.cycleID + "/" + rest
	old, _, err := g.repo.RefHash(keep)
	if err == nil {
		err = g.repo.ResetRef(keep, tip, old, "git evolve: kept what the agent's turn left in "+ref)
	}
	if err == nil {
		return keep, nil
	}
	b := make([]byte, 8)
	rand.Read(b)
	keep = tamperedPrefix + g.cycleID + "-" + hex.EncodeToString(b) + "/" + rest
	if err := g.repo.ResetRef(keep, tip, gitstore.ZeroHash, "git evolve: kept what the agent's turn left in "+ref); err != nil {
		return "", err
	}
	return keep, nil
}

// descends reports whether now descends from before (false when that
// cannot be told).
func (g *turnGuard) descends(before, now gitstore.Hash) bool {
	ok, err := g.repo.IsAncestor(before, now)
	return err == nil && ok
}

// ledgerChange is what a notes ref of the ledger gained from one notes
// commit to another: the records (lines) added and removed.
type ledgerChange struct {
	complete bool // every note that changed was read
	added    int
	theirs   int // of the added, records of other worktrees' cycles or runs
	removed  []string
}

func (g *turnGuard) ledgerChange(from, to gitstore.Hash, theirs map[string]bool) ledgerChange {
	var lc ledgerChange
	newer, err := g.repo.NotesAt(to)
	if err != nil {
		return lc
	}
	older := g.repo.EmptyNotes()
	if !from.IsZero() {
		if older, err = g.repo.NotesAt(from); err != nil {
			return lc
		}
	}
	changes, err := newer.DiffNotes(older)
	if err != nil || len(changes) > guardNotesMax {
		return lc
	}
	var blobs []gitstore.Hash
	for _, c := range changes {
		blobs = append(append(blobs, c.Old...), c.New...)
	}
	datas, err := g.repo.ReadBlobs(blobs)
	if err != nil {
		return lc
	}
	i := 0
	for _, c := range changes {
		count := map[string]int{}
		for range c.Old {
			for _, l := range noteLines(datas[i]) {
				count[l]++
			}
			i++
		}
		for range c.New {
			for _, l := range noteLines(datas[i]) {
				if count[l] > 0 {
					count[l]--
					continue
				}
				lc.added++
				var r struct{ ID, Run string }
				if json.Unmarshal([]byte(l), &r) == nil && (r.ID != "" && r.ID != g.cycleID && theirs[r.ID] || r.Run != "" && g.others.runs[r.Run]) {
					lc.theirs++
				}
			}
			i++
		}
		for l, n := range count {
			for ; n > 0; n-- {
				lc.removed = append(lc.removed, l)
			}
		}
	}
	lc.complete = true
	return lc
}

// noteLines are the lines of a note that hold something.
func noteLines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// describe says what a ledger ref's change was.
func (lc ledgerChange) describe(how string, now gitstore.Hash) string {
	if !lc.complete {
		return how + " (more notes changed than are read, or they could not be read)"
	}
	var parts []string
	if lc.added > 0 {
		parts = append(parts, fmt.Sprintf("%d %s written", lc.added, plural(lc.added, "record", "records")))
	}
	if len(lc.removed) > 0 {
		parts = append(parts, fmt.Sprintf("%d %s removed", len(lc.removed), plural(len(lc.removed), "record", "records")))
	}
	if len(parts) == 0 {
		return how + " (no record differs)"
	}
	s := strings.Join(parts, " and ") + " during the agent's turn, not by the driver (notes commit " + now.Short() + ")"
	if lc.theirs > 0 {
		s += fmt.Sprintf("; %d of them of other worktrees' cycles, in the tip kept too", lc.theirs)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// restoreState puts back the shared state files and the driver's files.
func (g *turnGuard) restoreState(theirs map[string]bool) []string {
	var marks []string
	shared := filepath.Join(g.commonDir, "evolve")
	names := make([]string, 0, len(lineFiles))
	for name := range lineFiles {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if m := g.restoreLines(filepath.Join(shared, name), name, theirs); m != "" {
			marks = append(marks, m)
		}
	}
	if m := g.restoreVerified(filepath.Join(shared, "verified")); m != "" {
		marks = append(marks, m)
	}
	for _, name := range sharedFiles {
		p := filepath.Join(shared, name)
		if after, err := readState(p, nil); err == nil && !g.files[p].same(after) {
			done := "put back"
			if err := putBack(p, g.files[p]); err != nil {
				done = "could not be put back: " + err.Error()
			}
			marks = append(marks, fmt.Sprintf("%s: changed during the agent's turn; %s", name, done))
		}
	}
	for _, name := range driverFiles {
		p := filepath.Join(g.gitDir, "evolve", name)
		if after, err := readState(p, nil); err == nil && !g.files[p].same(after) {
			if err := putBack(p, g.files[p]); err != nil {
				marks = append(marks, fmt.Sprintf("%s: changed during the agent's turn; could not be put back: %v", name, err))
			}
		}
	}
	if m := g.restoreOpenCycle(); m != "" {
		marks = append(marks, m)
	}
	if g.runJSON != nil {
		p := RunStatePath(g.gitDir)
		want := g.runJSON()
		after, err := readState(p, nil)
		if want != nil && (err != nil || !after.exists || !after.held || after.mode&fs.ModeSymlink != 0 || !bytes.Equal(after.data, want)) {
			what := "changed"
			if err == nil && !after.exists {
				what = "deleted"
			}
			done := "the driver wrote it again"
			if err := WriteAtomic(p, want); err != nil {
				done = "could not be written again: " + err.Error()
			}
			marks = append(marks, fmt.Sprintf("run.json: %s during the agent's turn; %s", what, done))
		}
	}
	return marks
}

// restoreOpenCycle puts back the open cycle's file when the turn left it
// unreadable as one: removed, replaced by something other than a file, or
// holding what does not parse as an open cycle. (A file that still reads
// is the finish's to judge: it takes every field a judgment rests on from
// the cycle as the driver opened it, and names each one the turn changed.)
func (g *turnGuard) restoreOpenCycle() string {
	p := g.openCyclePath()
	before := g.files[p]
	if !before.exists || !before.held || !before.mode.IsRegular() {
		return ""
	}
	after, err := readState(p, nil)
	what := ""
	var c cycle.OpenCycle
	switch {
	case err != nil:
		what = "could not be read after the agent's turn (" + err.Error() + ")"
	case !after.exists:
		what = "removed during the agent's turn"
	case !after.mode.IsRegular():
		what = "replaced during the agent's turn by what is not a file"
	case after.held && json.Unmarshal(after.data, &c) == nil:
		return ""
	default:
		what = "changed during the agent's turn into what does not read as an open cycle"
	}
	done := "the driver's was put back"
	if err := putBack(p, before); err != nil {
		done = "could not be put back: " + err.Error()
	}
	return "cycle.json: " + what + "; " + done
}

// restoreLines puts back a shared file of one entry a line: lines added or
// removed that are of cycles (or runs) other worktrees had under way are
// theirs and stay so; the others are undone.
func (g *turnGuard) restoreLines(path, name string, theirs map[string]bool) string {
	before := g.files[path]
	after, err := readState(path, nil)
	if err != nil {
		return fmt.Sprintf("%s: could not be read after the agent's turn: %v", name, err)
	}
	if before.same(after) {
		return ""
	}
	if before.exists && (!before.held || !before.mode.IsRegular()) || after.exists && (!after.held || !after.mode.IsRegular()) {
		done := "put back"
		if err := putBack(path, before); err != nil {
			done = "could not be put back: " + err.Error()
		}
		return fmt.Sprintf("%s: replaced during the agent's turn; %s", name, done)
	}
	idOf := lineFiles[name]
	isTheirs := func(line string) bool {
		id, run := idOf(line)
		return id != "" && id != g.cycleID && theirs[id] || run != "" && g.others.runs[run]
	}
	old, cur := fileLines(before.data), fileLines(after.data)
	count := map[string]int{}
	for _, l := range cur {
		count[l]++
	}
	var kept []string
	removed, added := 0, 0
	for _, l := range old {
		if count[l] > 0 {
			count[l]--
			kept = append(kept, l)
			continue
		}
		if !isTheirs(l) { // removed by the agent: put back
			kept = append(kept, l)
			removed++
		}
	}
	for _, l := range cur {
		if count[l] == 0 {
			continue
		}
		count[l]--
		if isTheirs(l) {
			kept = append(kept, l)
		} else {
			added++
		}
	}
	if added == 0 && removed == 0 {
		return "" // every difference is another worktree's
	}
	st := before
	st.exists, st.held = len(kept) > 0 || before.exists, true
	st.data = nil
	for _, l := range kept {
		st.data = append(append(st.data, l...), '\n')
	}
	if !before.exists {
		st.mode = 0o644
	}
	var what []string
	if added > 0 {
		what = append(what, fmt.Sprintf("%d %s added", added, plural(added, "line", "lines")))
	}
	if removed > 0 {
		what = append(what, fmt.Sprintf("%d %s removed", removed, plural(removed, "line", "lines")))
	}
	done := "put back"
	if removed == 0 {
		done = "removed"
	}
	if err := putBack(path, st); err != nil {
		done = "could not be put back: " + err.Error()
	}
	return fmt.Sprintf("%s: %s during the agent's turn; %s", name, strings.Join(what, " and "), done)
}

// fileLines are the lines of a file, each without its newline.
func fileLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// restoreVerified puts back verified unless it names the ledger's tip (as
// put back) or one of its ancestors: what a verify the agent ran writes.
func (g *turnGuard) restoreVerified(path string) string {
	before := g.files[path]
	after, err := readState(path, nil)
	if err != nil {
		return fmt.Sprintf("verified: could not be read after the agent's turn: %v", err)
	}
	if before.same(after) {
		return ""
	}
	if after.exists && after.held && after.mode.IsRegular() {
		first, _, _ := strings.Cut(string(after.data), "\n") // then where verify read the reflog to
		if h, err := gitstore.ParseHash(strings.TrimSpace(first)); err == nil {
			if tip, ok, err := g.repo.RefHash(ledgerRef); err == nil && ok && (h == tip || g.descends(h, tip)) {
				// A verify run in the turn is taken for its tip alone:
				// what the file says beyond it (how far the ledger's
				// reflog was read, what was known of the largest cycle
				// and of the chain there) the next verify would trust
				// without reading, so it is left out, to be read again.
				if strings.TrimSpace(string(after.data)) != strings.TrimSpace(first) {
					if err := WriteAtomic(path, []byte(strings.TrimSpace(first)+"\n")); err != nil {
						return "verified: could not be cut to its tip after the agent's turn: " + err.Error()
					}
				}
				return ""
			}
		}
	}
	done := "put back"
	if !before.exists {
		done = "removed"
	}
	if err := putBack(path, before); err != nil {
		done = "could not be put back: " + err.Error()
	}
	return "verified: set during the agent's turn to a tip the ledger does not descend from; " + done
}

// dropCaches removes the derived caches that changed during the turn: they
// are built again from git at the next read. Of the view's file, which
// every read may write a section of, only the sections that changed go,
// when it is still the file it was (appended to) and has no other name:
// one put in its place, or linked from elsewhere (where what is written
// to it would land), is removed.
func (g *turnGuard) dropCaches() {
	for p, before := range g.caches {
		after, err := readState(p, new(int64))
		if err != nil || !after.exists {
			continue
		}
		if !before.exists || !os.SameFile(before.info, after.info) || !before.same(after) || changeTime(before.info) != changeTime(after.info) {
			if p == g.viewPath() && g.viewSums != nil && after.mode.IsRegular() && before.exists && os.SameFile(before.info, after.info) && !linkedElsewhere(after.info) {
				store.KeepUnchanged(p, *g.viewSums)
				continue
			}
			os.Remove(p)
		}
	}
}

// viewPath is where the view's file is.
func (g *turnGuard) viewPath() string { return store.ViewPath(g.repo) }
