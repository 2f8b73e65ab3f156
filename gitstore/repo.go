package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
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
	dir       string // where git was asked to look (absolute)
	gitDir    string // per-worktree git directory
	commonDir string // shared git directory (objects, refs, config)
	workTree  string // top of the working tree; "" when bare or unknown
	bare      bool
	st        *filesystem.Storage // writes loose objects; reads refs
	objects   *batch              // reads objects (batch.go)
	ident     identCache          // author and committer, fetched once (ident.go)
}

// objectCacheBytes bounds go-git's object cache: the ledger is read once per
// process, so a large cache only costs memory.
const objectCacheBytes = 4 << 20

// Open opens the repository that git would use when run in dir: dir itself,
// any of its parents, a linked worktree (whose objects and refs live in the
// common git directory), a bare repository, or whatever GIT_DIR and
// GIT_WORK_TREE name. Repositories with [extensions] in their config open too.
// It returns an error wrapping ErrNotRepository when git finds no repository,
// and one wrapping ErrUnsupported for reftable or SHA-256 repositories.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// git cat-file starts beside git rev-parse (it finds the same
	// repository), so that their start-up costs overlap.
	objects := startBatch(abs)
	out, err := runGit(context.Background(), abs, nil, "rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-bare-repository", "--show-object-format",
		"--is-inside-work-tree", "--show-cdup")
	if err != nil {
		objects.close()
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return nil, fmt.Errorf("%w (or any of the parent directories): %s", ErrNotRepository, abs)
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 5 {
		objects.close()
		return nil, fmt.Errorf("git rev-parse printed %q, expected five lines or more", out)
	}
	r := &Repo{dir: abs, gitDir: lines[0], commonDir: lines[1], bare: lines[2] == "true", objects: objects}
	if lines[3] != "sha1" {
		objects.close()
		return nil, fmt.Errorf("%w: the repository uses %s object names; git-evolve reads only sha1 repositories", ErrUnsupported, lines[3])
	}
	if lines[4] == "true" && len(lines) >= 6 {
		r.workTree = filepath.Clean(filepath.Join(abs, lines[5]))
	}
	if fi, err := os.Stat(filepath.Join(r.commonDir, "reftable")); err == nil && fi.IsDir() {
		objects.close()
		return nil, fmt.Errorf("%w: the repository stores its refs in reftable format (extensions.refStorage), which go-git cannot read; convert it with 'git refs migrate --ref-format=files'", ErrUnsupported)
	}
	fs := dotgit.NewRepositoryFilesystem(osfs.New(r.gitDir), osfs.New(r.commonDir))
	r.st = filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(objectCacheBytes), filesystem.Options{KeepDescriptors: true})
	return r, nil
}

// Close ends the repository's git cat-file process and releases the file
// descriptors it keeps open.
func (r *Repo) Close() error {
	r.objects.close()
	return r.st.Close()
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
	return runGit(ctx, r.dir, stdin, args...)
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

func runGit(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	t0 := time.Now()
	defer func() { trace("git %s (%.3fms)", strings.Join(args, " "), float64(time.Since(t0).Microseconds())/1000) }()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: stderr.String()}
		}
		return nil, fmt.Errorf("running git: %w", err)
	}
	return stdout.Bytes(), nil
}
