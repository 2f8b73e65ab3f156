package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotRepository is returned by Open when the directory is not inside a git
// repository.
var ErrNotRepository = errors.New("not a git repository")

// ErrUnsupported is wrapped by errors that describe a repository format this
// package cannot read or write (reftable refs, SHA-256 object names).
var ErrUnsupported = errors.New("unsupported repository format")

// ErrNoWorkTree is returned by operations that need a working tree when the
// repository is bare or was opened from inside its git directory.
var ErrNoWorkTree = errors.New("this operation needs a working tree")

// Repo is an open repository. It is safe for use by one goroutine at a time
// for writes; reads may run concurrently.
type Repo struct {
	dir         string // where git was asked to look (absolute)
	gitDir      string // per-worktree git directory
	commonDir   string // shared git directory (objects, refs, config)
	workTree    string // top of the working tree; "" when bare or unknown
	bare        bool
	objects     *batch      // reads objects (batch.go), from the first read on
	objectsOnce sync.Once   // starts objects
	objectsMu   sync.Mutex  // guards objects and closed, for a batch started again
	closed      bool        // Close ran: no batch starts
	native      odb         // reads a few objects without git (odb.go)
	ident       identCache  // author and committer, fetched once (ident.go)
	config      configCache // git's config, read once (config.go)
	packed      packedCache // packed-refs, read again when it changes (refread.go)
	refUpdate   *proc       // a git update-ref started for ForWriting
	writeReason string      // ForWriting's reflog message ("": not for writing)
	env         []string    // the environment of every git this runs: GIT_DIR pinned
	treeMu      sync.Mutex
	trees       map[Hash][]treeEntry // trees read, by name (objects.go)
	// listedBad is, for the notes trees a listing read whole (walkListed),
	// what sits at a note's path and is no note (BadNotes), by tree.
	listedBad   map[Hash][]Hash
	treeEntries int             // the entries of trees, for its bound
	blobs       map[Hash][]byte // blobs read by ReadBlobsKept (objects.go)
	blobBytes   int             // their size, for its bound
	packWrites  atomic.Bool     // objects wait for Flush, which packs many (PackWrites)
	keepMu      sync.Mutex
	keeps       []string // .keep files of packs no ref names yet (releasePacks)
	pendingMu   sync.Mutex
	pending     map[Hash]pendingObject // named, not written yet (Flush)
	flushMu     sync.Mutex
	sharedOnce  sync.Once
	sharedDir   os.FileMode // core.sharedRepository's bits for new object directories (0: the umask's)
	basesMu     sync.Mutex
	bases       map[[2]Hash]mergeBase // merge bases asked of git, by the pair in order (remote.go)
	logsMu      sync.Mutex
	logs        map[string][]TrailerCommit // HEAD's trailer logs read, by HEAD's commit and format (refs.go)
}

// Option changes what Open prepares.
type Option func(*Repo)

// ForWriting makes Open prepare a write: a ref update waiting for its
// transaction starts beside the repository's discovery (its reflog message
// is reason), and so does what resolving the identity needs (git config or
// git var, see PrefetchIdentity), so that neither costs time on the way to
// the write. Unused, they end with Close.
func ForWriting(reason string) Option {
	return func(r *Repo) { r.writeReason = reason }
}

// Open opens the repository that git would use when run in dir: dir itself,
// any of its parents, a linked worktree (whose objects and refs live in the
// common git directory), a bare repository, or whatever GIT_DIR and
// GIT_WORK_TREE name. Repositories with [extensions] in their config open too.
// It returns an error wrapping ErrNotRepository when git finds no repository,
// and one wrapping ErrUnsupported for reftable or SHA-256 repositories.
func Open(dir string, opts ...Option) (_ *Repo, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The common case is found without running git (discover.go); anything
	// else is left to git rev-parse. The git processes the repository keeps
	// start when they are needed: cat-file at the first object read, and
	// for a write, update-ref and git var once the repository is found.
	r := &Repo{dir: abs}
	for _, o := range opts {
		o(r)
	}
	if d, ok := discoverNative(abs); ok {
		r.gitDir, r.commonDir, r.workTree = d.gitDir, d.commonDir, d.workTree
	} else if err := r.readDiscovery(startGit(abs, nil, false, "rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-bare-repository", "--show-object-format",
		"--is-inside-work-tree", "--show-cdup")); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(r.commonDir, "reftable")); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%w: the repository stores its refs in reftable format (extensions.refStorage), which git-evolve does not read; convert it with 'git refs migrate --ref-format=files'", ErrUnsupported)
	}
	// Every git this runs works on the repository found here, whatever it
	// would find on its own from the directory (GIT_DIR pins it). Lazy
	// fetches of a partial clone are not wanted either: a commit this clone
	// has not fetched is reported as such.
	r.env = append(os.Environ(), "GIT_DIR="+r.gitDir, "GIT_NO_LAZY_FETCH=1")
	// git cat-file starts at the first object read that is not read
	// in-process (odb.go): a reader answered by the saved view, the cycle
	// index and the verify state reads none, a record reads a few objects
	// in-process, and starting one costs a process about 10 ms of CPU
	// (docs/benchmarks.md).
	if r.writeReason != "" {
		// Both start in the background, each waiting for its exec.
		r.refUpdate = startGitAsync(abs, r.env, true, "update-ref", "-z", "--stdin", "-m", r.writeReason)
		r.PrefetchIdentity() // git config (or git var) starts now, if needed
	}
	return r, nil
}

// Close ends the repository's git cat-file process and releases the file
// descriptors it keeps open.
func (r *Repo) Close() error {
	r.objectsOnce.Do(func() {}) // none starts after this
	r.closeNative()
	r.objectsMu.Lock()
	r.closed = true
	if r.objects != nil {
		r.objects.close()
	}
	r.objectsMu.Unlock()
	for _, p := range r.ident.procs {
		p.abandon()
	}
	r.config.proc.abandon()
	r.refUpdate.abandon()
	return nil
}

// GitDir is the per-worktree git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git directory shared by all worktrees: objects, refs,
// config, and git-evolve's shared local state live here.
func (r *Repo) CommonDir() string { return r.commonDir }

// WorkTree is the top of the working tree. It returns ErrNoWorkTree for a bare
// repository or when git was run from inside the git directory.
func (r *Repo) WorkTree() (string, error) {
	if r.workTree == "" {
		return "", ErrNoWorkTree
	}
	return r.workTree, nil
}

// Bare reports whether the repository is bare.
func (r *Repo) Bare() bool { return r.bare }

// GitError is a git command that failed. Stderr holds what git said.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	msg = strings.TrimPrefix(msg, "fatal: ")
	msg = strings.TrimPrefix(msg, "error: ")
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	return fmt.Sprintf("git %s: %s", firstArg(e.Args), msg)
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// git runs a git command in the repository's directory.
func (r *Repo) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return startGit(r.dir, r.env, stdin != nil, args...).finish(stdin)
}

// gitUser is git in the user's language: for the network commands, whose
// messages are the user's to read and whose outcome is read from the exit
// code and porcelain output (see startGitIn).
func (r *Repo) gitUser(stdin []byte, args ...string) ([]byte, error) {
	return startGitIn(r.dir, r.env, stdin != nil, false, args...).finish(stdin)
}

// traceStart is when this process started, for GIT_EVOLVE_TRACE.
var traceStart = time.Now()

// trace writes one line to stderr when GIT_EVOLVE_TRACE is set: what git
// runs and how long it takes, like git's own GIT_TRACE.
func trace(format string, args ...any) {
	if os.Getenv("GIT_EVOLVE_TRACE") == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "git-evolve: trace: %8.3fms "+format+"\n",
		append([]any{float64(time.Since(traceStart).Microseconds()) / 1000}, args...)...)
}

// Tracef writes a line of GIT_EVOLVE_TRACE output (nothing when it is not
// set), for callers that time their own steps.
func Tracef(format string, args ...any) { trace(format, args...) }

// readDiscovery reads what git rev-parse (started by Open) says of the
// repository.
func (r *Repo) readDiscovery(discover *proc) error {
	out, err := discover.finish(nil)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return fmt.Errorf("%w (or any of the parent directories): %s", ErrNotRepository, r.dir)
		}
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 5 {
		return fmt.Errorf("git rev-parse printed %q, expected five lines or more", out)
	}
	r.gitDir, r.commonDir, r.bare = lines[0], lines[1], lines[2] == "true"
	if lines[3] != "sha1" {
		return fmt.Errorf("%w: the repository uses %s object names; git-evolve reads only sha1 repositories", ErrUnsupported, lines[3])
	}
	if lines[4] == "true" && len(lines) >= 6 {
		r.workTree = filepath.Clean(filepath.Join(r.dir, lines[5]))
	} else if !r.bare {
		// Outside the working tree, which GIT_WORK_TREE or core.worktree
		// names (as git status finds it from anywhere): git says where it is.
		if out, err := startGit(r.dir, nil, false, "rev-parse", "--show-toplevel").finish(nil); err == nil {
			r.workTree = filepath.Clean(strings.TrimSpace(string(out)))
		}
	}
	return nil
}
