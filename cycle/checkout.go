package cycle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/internal/atomicfile"
)

// LinkedDirs are the directories of installed dependencies a judging
// checkout borrows from the working tree, when the working tree has one at
// its top that the judged commit does not track: a checkout of the commit
// alone has no node_modules, and the project's tests could not run there.
// They are linked, not copied, and are the only thing of the working tree
// a judgment reads.
var LinkedDirs = []string{"node_modules", ".venv", "venv"}

// judgeDir is where this worktree's judging checkout lives: in the user's
// cache directory (the system's temporary directory when there is none),
// under a name made from the worktree's git directory. It is outside the
// repository on purpose: tools look for their files up the directory tree
// (node_modules, go.work, pytest.ini, conftest.py), and from a checkout
// inside the repository they would find the working tree's. The
// directories git-evolve makes there are its own: one that is a symbolic
// link is refused, since what is under it is removed and reset (a link
// could lead to the working tree itself).
func (l *Ledger) judgeDir() (string, error) {
	gitDir, err := filepath.Abs(l.repo.GitDir())
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(gitDir); err == nil {
		gitDir = real
	}
	sum := sha256.Sum256([]byte(gitDir))
	name := hex.EncodeToString(sum[:8])
	top := "checkout"
	if wt, err := l.repo.WorkTree(); err == nil && filepath.Base(wt) != "" {
		top = filepath.Base(wt)
	}
	var last error
	for _, base := range cacheBases() {
		dir, err := ownDirs(base, "git-evolve", "judge", name)
		if err == nil {
			tidy(filepath.Dir(filepath.Dir(dir)), filepath.Dir(dir), dir, top)
			return filepath.Join(dir, top), nil
		}
		last = err
	}
	return "", fmt.Errorf("no directory to judge cycles in, in the user's cache directory or %s: %w", os.TempDir(), last)
}

// tidy removes what no judgment put in git-evolve's own directories
// above a checkout: tools look up the directory tree from the checkout
// for their configuration (pytest.ini, conftest.py, go.work), and a file
// left there would configure every judgment. top, the git-evolve and
// judge directories keep their directories (other repositories'
// checkouts); dir, the checkout's own, keeps the checkout and its lock.
func tidy(top, judge, dir, name string) {
	for _, d := range []string{top, judge} {
		des, _ := os.ReadDir(d)
		for _, de := range des {
			if !de.IsDir() {
				_ = os.Remove(filepath.Join(d, de.Name()))
			}
		}
	}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if n := de.Name(); n != name && n != name+".lock" {
			_ = os.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// JudgeIndex is the index of this worktree's judging checkout, when it has
// been made: the driver's guard holds it through an agent's turn.
func (l *Ledger) JudgeIndex() (string, bool) {
	dir, err := l.judgeDir()
	if err != nil {
		return "", false
	}
	return l.repo.CheckoutIndex(dir)
}

// sweepJudged removes the judging checkouts in judge (the directory of
// every repository's) whose repository is gone: a checkout's .git file
// names its git directory, and nothing else removes them.
func sweepJudged(judge string) {
	des, _ := os.ReadDir(judge)
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		d := filepath.Join(judge, de.Name())
		subs, _ := os.ReadDir(d)
		for _, sub := range subs {
			data, err := os.ReadFile(filepath.Join(d, sub.Name(), ".git"))
			rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if err != nil || !ok || !filepath.IsAbs(rest) {
				continue
			}
			if _, err := os.Stat(rest); errors.Is(err, fs.ErrNotExist) {
				_ = os.RemoveAll(d)
				break
			}
		}
	}
}

// ownDirs makes the directories names under base, each in the one before,
// and returns the last: each must be a directory, not a symbolic link
// (atomicfile.OwnDirs).
func ownDirs(base string, names ...string) (string, error) {
	dir, err := atomicfile.OwnDirs(base, 0o700, names...)
	var nd *atomicfile.NotDirError
	if errors.As(err, &nd) {
		return "", fmt.Errorf("%s is not a directory (a symbolic link, or a file): git-evolve judges cycles under it, and removes what it holds; remove it", nd.Path)
	}
	return dir, err
}

func cacheBases() []string {
	var out []string
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		out = append(out, d)
	}
	return append(out, os.TempDir())
}

// Judging is the judging checkout, brought to a commit and held by this
// process until Release.
type Judging struct {
	*gitstore.Checkout
	Release func()
}

// JudgeAt brings this worktree's judging checkout to commit (HEAD
// detached there, every file as the commit has it and nothing else, the
// LinkedDirs of the working tree linked in) and holds it until Release: a
// second judge in this worktree waits. The checkout is made the first time
// (a git worktree add), and after that reused: switching it costs what
// changed between the two commits and a walk of its files.
func (l *Ledger) JudgeAt(commit gitstore.Hash) (*Judging, error) {
	return l.judgeAt(commit, "judge: the checkout at")
}

// judgeAt is JudgeAt, its time traced after what.
func (l *Ledger) judgeAt(commit gitstore.Hash, what string) (*Judging, error) {
	dir, err := l.judgeDir()
	if err != nil {
		return nil, err
	}
	unlock, err := filelock.Lock(dir + ".lock")
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if _, err := os.Lstat(dir); err != nil {
		// A checkout is made: those of repositories that are gone go.
		sweepJudged(filepath.Dir(filepath.Dir(dir)))
	}
	// The checkouts of a repository are made one at a time: git worktree
	// add reads the entries of the repository's other worktrees, and fails
	// on one that another add is still writing ("failed to read
	// .../commondir"), as the runs in several worktrees of a repository
	// make theirs at once.
	addUnlock, err := filelock.Lock(filepath.Join(l.repo.CommonDir(), "evolve", "worktree-add.lock"))
	if err != nil {
		unlock()
		return nil, err
	}
	co, err := l.repo.OpenCheckout(dir, commit)
	addUnlock()
	if err == nil {
		err = co.Switch(commit, LinkedDirs)
	}
	if err == nil {
		err = l.linkDeps(co, commit)
	}
	if err != nil {
		unlock()
		return nil, fmt.Errorf("the judging checkout (%s): %w", dir, err)
	}
	gitstore.Tracef("%s %s (%s)", what, commit.Short(), ms(time.Since(t0)))
	return &Judging{Checkout: co, Release: unlock}, nil
}

// readyJudge is the judging checkout brought to a cycle's start in the
// background (readyAt), to be advanced to the work once the work is
// known: the walk of every file that a switch costs is then made while
// the finish captures the working tree, and the judgment waits only for
// the files the cycle changed.
type readyJudge struct {
	at    gitstore.Hash
	done  chan struct{}
	j     *Judging
	err   error
	taken bool
}

// readyAt starts bringing this worktree's judging checkout to commit in
// the background (JudgeAt, which holds it), when the checkout exists (one
// made anew is made when a judgment needs it: a cycle that changed
// nothing waits for none). The caller takes it with judgeFrom, and calls
// release when done.
func (l *Ledger) readyAt(commit gitstore.Hash) *readyJudge {
	r := &readyJudge{at: commit, done: make(chan struct{})}
	dir, err := l.judgeDir()
	if err == nil {
		_, err = os.Lstat(dir)
	}
	if err != nil {
		r.err = err
		close(r.done)
		return r
	}
	go func() {
		defer close(r.done)
		r.j, r.err = l.judgeAt(commit, "judge: the checkout made ready at")
	}()
	return r
}

// judgeFrom is the judging checkout at commit (as JudgeAt gives it): the
// checkout r made ready, advanced to commit (gitstore.Checkout.Advance),
// the first time it is asked and when r could make it ready; else
// JudgeAt. Nothing but this process changes the checkout between the two:
// it is held throughout.
func (l *Ledger) judgeFrom(r *readyJudge, commit gitstore.Hash) (*Judging, error) {
	if r == nil || r.taken {
		return l.JudgeAt(commit)
	}
	<-r.done
	r.taken = true
	if r.err != nil {
		return l.JudgeAt(commit)
	}
	t0 := time.Now()
	j := r.j
	err := j.Advance(r.at, commit, LinkedDirs)
	if err == nil {
		err = l.linkDeps(j.Checkout, commit)
	}
	if err != nil {
		j.Release()
		return nil, fmt.Errorf("the judging checkout (%s): %w", j.Dir, err)
	}
	gitstore.Tracef("judge: the checkout advanced to %s (%s)", commit.Short(), ms(time.Since(t0)))
	return j, nil
}

// release lets go of the checkout r made ready, when judgeFrom did not
// take it, once it is ready.
func (r *readyJudge) release() {
	<-r.done
	if !r.taken && r.j != nil {
		r.j.Release()
	}
	r.taken = true
}

// linkDeps links the working tree's LinkedDirs into the checkout (those
// commit does not track), and removes what the checkout holds in their
// place when the working tree has none: a link whose directory is gone,
// or a directory a judgment made there (npm ci in the gate), which Switch
// keeps and which must not carry into the next judgment.
func (l *Ledger) linkDeps(co *gitstore.Checkout, commit gitstore.Hash) error {
	top, err := l.repo.WorkTree()
	if err != nil {
		return nil // no working tree: nothing to borrow
	}
	for _, name := range LinkedDirs {
		link := filepath.Join(co.Dir, name)
		if _, tracked, err := l.repo.TreeFile(commit, name); err != nil {
			return err
		} else if tracked {
			continue // the commit's own, as the switch wrote it
		}
		live := filepath.Join(top, name)
		fi, err := os.Stat(live)
		if err != nil || !fi.IsDir() {
			if err := os.RemoveAll(link); err != nil {
				return err
			}
			continue
		}
		if have, err := os.Readlink(link); err == nil && have == live {
			continue
		}
		if err := os.RemoveAll(link); err != nil {
			return err
		}
		if err := os.Symlink(live, link); err != nil {
			return err
		}
	}
	return nil
}

// MeasureAt measures the goals of f in the judging checkout of commit:
// what a later revert is compared with.
func (l *Ledger) MeasureAt(ctx context.Context, commit gitstore.Hash, f *goals.File, opts goals.Options) (*goals.Snapshot, error) {
	j, err := l.JudgeAt(commit)
	if err != nil {
		return nil, err
	}
	defer j.Release()
	opts.Dir, opts.Env = j.Dir, j.Env()
	return goals.Measure(ctx, f, opts), nil
}

// Started is what a cycle that starts on a commit is compared with
// (MeasureStart).
type Started struct {
	// Goals are the goals measured.
	Goals *goals.Snapshot
	// Census is the count of the tests the gate ran (nil when no runner
	// could tell, or the gate runs nothing).
	Census *gate.Census
	// Holdout are the holdout checks (nil when there are none), HoldoutData
	// their content and HoldoutBefore their measure: never told to an
	// agent.
	Holdout       *goals.File
	HoldoutData   []byte
	HoldoutBefore *goals.Snapshot
}

// StartOptions are the start's measure as StartCycle keeps it.
func (s *Started) StartOptions(o StartOptions) (StartOptions, error) {
	before, err := json.Marshal(s.Goals)
	if err != nil {
		return o, err
	}
	o.Before, o.BeforeCensus = before, s.Census
	if s.Holdout != nil {
		if o.HoldoutBefore, err = json.Marshal(s.HoldoutBefore); err != nil {
			return o, err
		}
		o.HoldoutFile = s.HoldoutData
	}
	return o, nil
}

// MeasureStart measures what a cycle that starts on commit is compared
// with, in the judging checkout of commit: the goals of f, the holdout
// checks (refused, a *Refusal, when this machine has not trusted them),
// and the census of the tests the gate g runs. The census of the tree the
// last finish judged, by the same gate, is taken from the census file
// instead of running the tests again: a cycle that follows an improved
// one runs its tests once.
func (l *Ledger) MeasureStart(ctx context.Context, commit gitstore.Hash, f *goals.File, g goals.Gate, opts goals.Options) (*Started, error) {
	hf, hdata, err := l.Holdout()
	if err != nil {
		return nil, err
	}
	if hf != nil {
		if err := l.checkHoldoutTrust(hdata); err != nil {
			return nil, err
		}
	}
	j, err := l.JudgeAt(commit)
	if err != nil {
		return nil, err
	}
	defer j.Release()
	opts.Dir, opts.Env = j.Dir, j.Env()
	s := &Started{Goals: goals.Measure(ctx, f, opts)}
	if hf != nil && ctx.Err() == nil {
		hopts := opts
		hopts.OnCheck, hopts.OnDone = nil, nil // nothing of them is said
		s.Holdout, s.HoldoutData, s.HoldoutBefore = hf, hdata, goals.Measure(ctx, hf, hopts)
	}
	if len(g.Commands) == 0 || ctx.Err() != nil {
		return s, nil // an interrupt is the caller's to see
	}
	ci, err := l.repo.Commit(commit)
	if err != nil {
		return nil, err
	}
	kept := l.keptCensus(g)
	for _, k := range kept {
		if k.Tree == ci.Tree.String() && k.Census != nil {
			s.Census = k.Census
			return s, nil
		}
	}
	if len(kept) > 0 && kept[0].Silent {
		// The last time these commands ran, no runner told anything:
		// they are not run again only to count nothing.
		return s, nil
	}
	c, _, err := gate.Count(ctx, g, j.Dir, j.Env())
	if err != nil || ctx.Err() != nil {
		return s, err // nil on an interrupt: the caller's to see
	}
	l.keepCensus(ci.Tree, g, c)
	s.Census = c
	return s, nil
}

// censusPath is where the census of the last trees judged is kept, per
// worktree.
func (l *Ledger) censusPath() string { return filepath.Join(l.repo.GitDir(), "evolve", "census.json") }

// keptFile is an entry of the census file: the census the gate's commands
// gave of a tree, or that they gave none (Silent: no runner could tell),
// in the census's version (keptVersion). The file holds the last
// keptEntries, the newest first: the start of a cycle and the work it
// judged, so that the start after a regression (on the tree the one before
// started on) runs no tests either.
type keptFile struct {
	Version  int          `json:"version,omitempty"`
	Tree     string       `json:"tree"`
	Commands []string     `json:"commands"`
	Census   *gate.Census `json:"census,omitempty"`
	Silent   bool         `json:"silent,omitempty"`
}

// keptVersion is the version of the census file: 2 since a census names
// its groups (gate.Census.Groups), which a census kept before cannot say
// apart from its tests.
const keptVersion = 2

// keptEntries is how many censuses the file keeps.
const keptEntries = 4

// keptCensus is what the census file keeps of the gate g's commands, in
// this version, the newest first.
func (l *Ledger) keptCensus(g goals.Gate) []keptFile {
	var out []keptFile
	for _, k := range l.readKept() {
		if k.Version == keptVersion && slices.Equal(k.Commands, g.Commands) {
			out = append(out, k)
		}
	}
	return out
}

// readKept reads the census file: a JSON line an entry (nothing when it
// is missing, too large or damaged: the tests run again).
func (l *Ledger) readKept() []keptFile {
	data, err := os.ReadFile(l.censusPath())
	if err != nil || len(data) > 64<<20 {
		return nil
	}
	var out []keptFile
	for _, line := range strings.Split(string(data), "\n") {
		var k keptFile
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &k) != nil {
			continue
		}
		out = append(out, k)
	}
	return out
}

// keepCensus keeps the census gate g gave of tree (nil: none could tell),
// for the cycle that starts there next; a failure to keep it only costs
// that cycle a run of its tests.
func (l *Ledger) keepCensus(tree gitstore.Hash, g goals.Gate, c *gate.Census) {
	entries := []keptFile{{Version: keptVersion, Tree: tree.String(), Commands: g.Commands, Census: c, Silent: c == nil}}
	for _, k := range l.readKept() {
		if len(entries) == keptEntries {
			break
		}
		if k.Tree != tree.String() || !slices.Equal(k.Commands, g.Commands) {
			entries = append(entries, k)
		}
	}
	var b bytes.Buffer
	for _, k := range entries {
		line, err := json.Marshal(k)
		if err != nil {
			return
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	_ = writeFileAtomic(l.censusPath(), b.Bytes())
}
