package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Checkout is a linked worktree of the repository that git-evolve keeps
// for itself: where a cycle's work is judged, apart from the working tree
// an agent works in. Its HEAD is detached; Switch brings it to a commit
// and removes everything else, so that what runs there sees exactly that
// commit's files.
type Checkout struct {
	r *Repo
	// Dir is the top of the checkout's working tree.
	Dir string
	// admin is its git directory (under the common directory's
	// worktrees/).
	admin string
}

// gitLocationEnv are the variables that point git at a repository, a work
// tree or an index other than the one it would find from its directory.
// git sets some of them for the hooks it runs (GIT_DIR, GIT_INDEX_FILE in
// a pre-commit hook), so git-evolve may inherit them; a command run in a
// checkout must not (its git would read the repository's working tree).
var gitLocationEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
	"GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}

// OpenCheckout returns the checkout at dir: the linked worktree of this
// repository that is there, or, when there is none (dir missing, or
// holding anything else), one made anew (git worktree add --detach
// --no-checkout, on commit), after removing what dir held. dir must be a
// directory git-evolve owns, with no symbolic link on its way: its content
// is not kept. A symbolic link at dir is removed, never followed nor taken
// for the checkout; a dir that holds a repository (a .git directory), or
// this repository's working tree or git directory, is refused, not
// removed.
func (r *Repo) OpenCheckout(dir string, commit Hash) (*Checkout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A link to another worktree of this repository would pass for
		// the checkout, and its files be reset and cleaned.
		if err := os.Remove(abs); err != nil {
			return nil, fmt.Errorf("the judging checkout %s is a symbolic link that cannot be removed: %w", abs, err)
		}
	} else if admin, ok := r.checkoutAdmin(abs); ok {
		return &Checkout{r: r, Dir: abs, admin: admin}, nil
	}
	if err := r.notOwnWork(abs); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(abs); err != nil {
		return nil, fmt.Errorf("the judging checkout %s cannot be made anew: %w", abs, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, err
	}
	// -f: a checkout removed by hand (a cleared cache) is still
	// registered; its entry is taken over. Twice: git locks the entry of a
	// worktree while it adds it, and a git killed then (a finish
	// interrupted) leaves the entry locked.
	if _, err := r.git(context.Background(), nil, "worktree", "add", "-f", "-f", "--detach", "--no-checkout", abs, commit.String()); err != nil {
		return nil, err
	}
	admin, ok := r.checkoutAdmin(abs)
	if !ok {
		return nil, fmt.Errorf("git worktree add made %s, but it is not a worktree of %s", abs, r.commonDir)
	}
	return &Checkout{r: r, Dir: abs, admin: admin}, nil
}

// notOwnWork refuses (an error) to take dir for a checkout to make anew
// when removing what it holds would remove work: a repository (a .git
// directory: a checkout has a .git file), or this repository's working
// tree or git directory (dir reached through a link).
func (r *Repo) notOwnWork(dir string) error {
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		return fmt.Errorf("the judging checkout %s holds a git repository: it is not removed; move it away", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil // nothing there, or nothing that resolves
	}
	for _, p := range []string{r.workTree, r.gitDir, r.commonDir} {
		if p == "" {
			continue
		}
		if rp, err := filepath.EvalSymlinks(p); err == nil && (rp == real || strings.HasPrefix(rp, real+string(filepath.Separator))) {
			return fmt.Errorf("the judging checkout %s holds this repository's %s: it is not removed; remove the symbolic link that leads there", dir, rp)
		}
	}
	return nil
}

// checkoutAdmin finds the git directory of the linked worktree at dir:
// dir/.git names it, it is under this repository's worktrees/, and it
// names dir/.git back.
func (r *Repo) checkoutAdmin(dir string) (string, bool) {
	data, err := readRegular(filepath.Join(dir, ".git"), 4096)
	if err != nil {
		return "", false
	}
	rest, ok := bytes.CutPrefix(data, []byte("gitdir: "))
	if !ok {
		return "", false
	}
	admin := filepath.Clean(strings.TrimRight(string(rest), "\r\n"))
	if !filepath.IsAbs(admin) {
		admin = filepath.Join(dir, admin)
	}
	common, err := filepath.EvalSymlinks(filepath.Join(r.commonDir, "worktrees"))
	if err != nil {
		return "", false
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(admin))
	if err != nil || parent != common {
		return "", false
	}
	back, err := readRegular(filepath.Join(admin, "gitdir"), 4096)
	if err != nil {
		return "", false
	}
	want, err1 := filepath.EvalSymlinks(filepath.Join(dir, ".git"))
	got, err2 := filepath.EvalSymlinks(strings.TrimRight(string(back), "\r\n"))
	if err1 != nil || err2 != nil || want != got {
		return "", false
	}
	return admin, true
}

// CheckoutIndex is the index of the checkout at dir, when dir is one of
// this repository's worktrees: what a guard holds, since a forged index
// (entries marked unchanged, stat data made to match) would have a switch
// leave files of another content in place.
func (r *Repo) CheckoutIndex(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if fi, err := os.Lstat(abs); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return "", false
	}
	admin, ok := r.checkoutAdmin(abs)
	if !ok {
		return "", false
	}
	return filepath.Join(admin, "index"), true
}

// git runs git on the checkout, with its git directory and work tree
// pinned, whatever the environment says.
func (c *Checkout) git(args ...string) ([]byte, error) {
	env := append(c.Env(), "GIT_DIR="+c.admin, "GIT_WORK_TREE="+c.Dir, "GIT_NO_LAZY_FETCH=1")
	return startGit(c.Dir, env, false, args...).finish(nil)
}

// Switch brings the checkout to commit: HEAD detached at it, the index and
// every tracked file as commit has them (a file changed there since is
// written again), and every other file removed, untracked and ignored
// alike (build outputs, caches), but for the top-level names in keep. It
// runs no hook, does not recurse into submodules, and leaves out no file
// for a sparse checkout's patterns.
func (c *Checkout) Switch(commit Hash, keep []string) error {
	// A git killed while it held the checkout's index lock leaves it
	// behind; the caller holds the checkout alone, so none is at work.
	if err := os.Remove(filepath.Join(c.admin, "index.lock")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Never sparse: git worktree add gives the checkout the sparse
	// checkout of the worktree it was made from, and a judgment of part of
	// the commit is no judgment of the commit. Files are written by as
	// many workers as there are cores, when there are many to write (a
	// checkout made anew: half the time, or less, on a tree of 20,000).
	if _, err := c.git("-c", "core.sparseCheckout=false", "-c", "checkout.workers=0", "reset", "--hard", "-q", "--no-recurse-submodules", commit.String()); err != nil {
		return err
	}
	args := []string{"clean", "-ffdxq"}
	for _, k := range keep {
		args = append(args, "-e", "/"+k)
	}
	_, err := c.git(args...)
	return err
}

// maxAdvance is the most paths Advance writes one by one; a switch that
// changes more is a Switch, whose walk of every file then costs less than
// git restore given that many paths.
const maxAdvance = 2000

// Advance brings to commit a checkout that Switch put at from and that
// nothing has changed since: HEAD detached at commit, and only the files
// that differ between the two commits written or removed, index and work
// tree (git restore of those paths from commit, which removes those it
// lacks), not a walk of every file as Switch does. That nothing changed
// the checkout since is the caller's to know (it held the checkout since
// the Switch); the result is then the same as Switch(commit). More than
// maxAdvance paths, it is Switch(commit, keep).
func (c *Checkout) Advance(from, commit Hash, keep []string) error {
	changes, err := c.r.ChangedFiles(from, commit)
	if err != nil {
		return err
	}
	if len(changes) > maxAdvance {
		return c.Switch(commit, keep)
	}
	// The files commit lacks are removed first: restored with the others,
	// one whose place a file of commit takes (d/e, where commit has a file
	// d) would be dropped from the index before git matched its path, and
	// git refuses a path it did not match.
	var gone, rest bytes.Buffer
	for _, ch := range changes {
		b := &rest
		if ch.NewMode == 0 {
			b = &gone
		}
		b.WriteString(ch.Path)
		b.WriteByte(0)
	}
	env := append(c.Env(), "GIT_DIR="+c.admin, "GIT_WORK_TREE="+c.Dir, "GIT_NO_LAZY_FETCH=1", "GIT_LITERAL_PATHSPECS=1")
	for _, paths := range []*bytes.Buffer{&gone, &rest} {
		if paths.Len() == 0 {
			continue
		}
		if _, err := startGit(c.Dir, env, true, "-c", "core.sparseCheckout=false", "restore", "--source="+commit.String(),
			"--staged", "--worktree", "--no-recurse-submodules", "--pathspec-from-file=-", "--pathspec-file-nul").finish(paths.Bytes()); err != nil {
			return err
		}
	}
	_, err = c.git("update-ref", "--no-deref", "HEAD", commit.String())
	return err
}

// Env is the environment for commands run in the checkout: this process's,
// without the variables that would point a git at another repository, work
// tree or index, and with PWD set to the checkout.
func (c *Checkout) Env() []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PWD" || contains(gitLocationEnv, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PWD="+c.Dir)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
