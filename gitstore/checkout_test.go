package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheckout: a checkout is made once, switched between commits, and
// after a switch holds exactly the commit's files: a tracked file changed
// there is written again, untracked and ignored files are removed but for
// the names kept; one whose directory was removed or replaced is made
// anew; git sees it as a worktree of the repository.
func TestCheckout(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	write := func(dir, name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(r.dir, "a.txt", "one\n")
	write(r.dir, ".gitignore", "build/\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	first := r.hash("rev-parse", "HEAD")
	write(r.dir, "a.txt", "two\n")
	write(r.dir, "sub/b.txt", "b\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "two")
	second := r.hash("rev-parse", "HEAD")
	repo := r.open()

	dir := filepath.Join(t.TempDir(), "judge", "repo")
	co, err := repo.OpenCheckout(dir, first)
	if err != nil {
		t.Fatal(err)
	}
	if err := co.Switch(first, []string{"deps"}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(data)
	}
	if got := read("a.txt"); got != "one\n" {
		t.Fatalf("a.txt after the switch to the first commit: %q", got)
	}
	// What a judgment leaves: a tracked file changed, build outputs, an
	// untracked file, a dependency directory kept.
	write(dir, "a.txt", "changed by a check\n")
	write(dir, "build/out", "cached\n")
	write(dir, "stray.txt", "x\n")
	write(dir, "deps/lib.txt", "kept\n")
	again, err := repo.OpenCheckout(dir, second)
	if err != nil {
		t.Fatal(err)
	}
	if again.admin != co.admin {
		t.Fatalf("the checkout was made anew (%s, was %s)", again.admin, co.admin)
	}
	if err := again.Switch(second, []string{"deps"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "two\n", "sub/b.txt": "b\n", "deps/lib.txt": "kept\n"} {
		if got := read(name); got != want {
			t.Errorf("%s after the switch: %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"build", "stray.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the switch (%v)", name, err)
		}
	}
	// git in the checkout sees the commit, and a clean tree.
	head, err := runGitCmd(dir, "", nil, "rev-parse", "HEAD")
	if err != nil || strings.TrimSpace(head) != second.String() {
		t.Fatalf("HEAD in the checkout: %q, %v", head, err)
	}
	if st, err := runGitCmd(dir, "", nil, "status", "--porcelain", "--untracked-files=no"); err != nil || st != "" {
		t.Fatalf("git status in the checkout: %q, %v", st, err)
	}
	if list := r.git("worktree", "list", "--porcelain"); !strings.Contains(list, dir) {
		t.Fatalf("git worktree list does not name the checkout:\n%s", list)
	}

	// A checkout removed by hand is made anew, its registration taken
	// over; a directory holding something else is replaced.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	co, err = repo.OpenCheckout(dir, first)
	if err != nil {
		t.Fatalf("after the checkout was removed: %v", err)
	}
	if err := co.Switch(first, nil); err != nil {
		t.Fatal(err)
	}
	if got := read("a.txt"); got != "one\n" {
		t.Fatalf("a.txt in the checkout made anew: %q", got)
	}
	// One whose making was interrupted: git left its entry locked.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	write(co.admin, "locked", "initializing")
	co, err = repo.OpenCheckout(dir, second)
	if err != nil {
		t.Fatalf("after the checkout's making was interrupted: %v", err)
	}
	if err := co.Switch(second, nil); err != nil {
		t.Fatal(err)
	}
	if got := read("sub/b.txt"); got != "b\n" {
		t.Fatalf("sub/b.txt in the checkout made anew: %q", got)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	write(dir, ".git", "gitdir: "+filepath.Join(t.TempDir(), "elsewhere")+"\n")
	write(dir, "junk", "x")
	co, err = repo.OpenCheckout(dir, second)
	if err != nil {
		t.Fatalf("over a directory that is no checkout: %v", err)
	}
	if err := co.Switch(second, nil); err != nil {
		t.Fatal(err)
	}
	if got := read("sub/b.txt"); got != "b\n" {
		t.Fatalf("sub/b.txt: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "junk")); !os.IsNotExist(err) {
		t.Fatalf("junk is still there (%v)", err)
	}
}

// TestCheckoutEnv: commands run in a checkout do not inherit what would
// point their git at the repository's own working tree or index.
func TestCheckoutEnv(t *testing.T) {
	setEnv(t)
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_WORK_TREE", "/elsewhere")
	t.Setenv("KEEP_ME", "yes")
	co := &Checkout{Dir: "/judge/repo"}
	env := strings.Join(co.Env(), "\n")
	for _, v := range []string{"GIT_DIR=", "GIT_INDEX_FILE=", "GIT_WORK_TREE="} {
		if strings.Contains("\n"+env, "\n"+v) {
			t.Errorf("the checkout's environment has %s", v)
		}
	}
	if !strings.Contains(env, "KEEP_ME=yes") || !strings.Contains(env, "PWD=/judge/repo") {
		t.Errorf("the checkout's environment:\n%s", env)
	}
}

// TestCheckoutNotOthers: a judging checkout's directory that leads to work
// of the user's (a symbolic link to another worktree of the repository, a
// directory reached through a link that is the working tree itself, one
// holding a repository) is never taken for the checkout, reset, cleaned or
// removed.
func TestCheckoutNotOthers(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	if err := os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	head := r.hash("rev-parse", "HEAD")
	repo := r.open()
	intact := func(dir string) {
		t.Helper()
		for name, want := range map[string]string{"a.txt": "mine\n", "untracked.txt": "keep\n"} {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != want {
				t.Fatalf("%s in %s: %q, %v, want %q", name, dir, data, err, want)
			}
		}
	}
	scribble := func(dir string) {
		t.Helper()
		for name, text := range map[string]string{"a.txt": "mine\n", "untracked.txt": "keep\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A link to another linked worktree of the repository.
	other := filepath.Join(t.TempDir(), "other")
	r.git("worktree", "add", "-q", "--detach", other, "HEAD")
	scribble(other)
	judge := filepath.Join(t.TempDir(), "judge")
	if err := os.MkdirAll(judge, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(judge, "repo")
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	co, err := repo.OpenCheckout(dir, head)
	if err != nil {
		t.Fatal(err)
	}
	if err := co.Switch(head, nil); err != nil {
		t.Fatal(err)
	}
	intact(other)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the checkout is not a directory of its own: %v, %v", fi, err)
	}

	// The parent of the checkout's directory a link to the working tree's
	// parent: the directory is the working tree.
	scribble(r.dir)
	parent := filepath.Join(t.TempDir(), "hash")
	if err := os.Symlink(filepath.Dir(r.dir), parent); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.OpenCheckout(filepath.Join(parent, filepath.Base(r.dir)), head); err == nil {
		t.Fatal("OpenCheckout took the working tree for the checkout's directory")
	}
	intact(r.dir)

	// A directory holding a repository of its own.
	another := filepath.Join(t.TempDir(), "another")
	if out, err := runGitCmd("", "", nil, "init", "-q", another); err != nil {
		t.Fatal(out, err)
	}
	scribble(another)
	if _, err := repo.OpenCheckout(another, head); err == nil {
		t.Fatal("OpenCheckout took a repository for the checkout's directory")
	}
	intact(another)
}

// TestCheckoutNotSparse: a checkout made from a worktree with a sparse
// checkout (git worktree add gives it the same) holds every file of the
// commit all the same.
func TestCheckoutNotSparse(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	for _, name := range []string{"a/x.txt", "b/y.txt"} {
		p := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "two directories")
	head := r.hash("rev-parse", "HEAD")
	if _, err := r.gitErr("sparse-checkout", "set", "a"); err != nil {
		t.Skipf("git sparse-checkout: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(r.dir, "b", "y.txt")); !os.IsNotExist(err) {
		t.Skipf("the working tree is not sparse (%v)", err)
	}
	repo := r.open()
	dir := filepath.Join(t.TempDir(), "judge", "repo")
	co, err := repo.OpenCheckout(dir, head)
	if err != nil {
		t.Fatal(err)
	}
	if err := co.Switch(head, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a/x.txt", "b/y.txt"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != name+"\n" {
			t.Errorf("%s in the checkout: %q, %v", name, data, err)
		}
	}
}

// TestCheckoutAdvance: a checkout Switch put at one commit, advanced to
// another, holds what Switch to the other gives, whatever the change: a
// file changed, added, removed, made executable, a file become a directory
// and a directory a file, a symbolic link, names a pathspec would read as
// magic or a glob, a submodule; both ways.
func TestCheckoutAdvance(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	write := func(name, text string) {
		t.Helper()
		writeFile(t, filepath.Join(r.dir, name), text)
	}
	write("kept.txt", "same\n")
	write("changed.txt", "one\n")
	write("removed.txt", "gone soon\n")
	write("script.sh", "echo hi\n")
	write("x", "a file, later a directory\n")
	write("d/e", "a directory, later a file\n")
	write("link-later-file", "was a file\n")
	write(":(glob)*", "a name that is pathspec magic\n")
	write("star*.txt", "a name that is a glob\n")
	write("starry.txt", "what the glob would match\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "start")
	start := r.hash("rev-parse", "HEAD")
	write("changed.txt", "two\n")
	write("added/deep/new.txt", "new\n")
	write("star*.txt", "the glob's own file, changed\n")
	if err := os.Remove(filepath.Join(r.dir, "removed.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(r.dir, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x", "d", "link-later-file"} {
		if err := os.RemoveAll(filepath.Join(r.dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	write("x/y", "now in a directory\n")
	write("d", "now a file\n")
	if err := os.Symlink("kept.txt", filepath.Join(r.dir, "link-later-file")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+start.String()+",sub")
	r.git("commit", "-q", "-m", "work")
	work := r.hash("rev-parse", "HEAD")
	repo := r.open()

	// snapshot is what a checkout holds: each path's kind, mode and content.
	snapshot := func(dir string) map[string]string {
		t.Helper()
		out := map[string]string{}
		err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if rel == "." || rel == ".git" {
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				out[rel] = "link " + target
			case fi.IsDir():
				out[rel] = "dir"
			default:
				data, _ := os.ReadFile(p)
				out[rel] = fmt.Sprintf("%v %q", fi.Mode().Perm()&0o100 != 0, data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, way := range [][2]Hash{{start, work}, {work, start}} {
		from, to := way[0], way[1]
		base := t.TempDir()
		advanced, err := repo.OpenCheckout(filepath.Join(base, "advanced"), from)
		if err != nil {
			t.Fatal(err)
		}
		switched, err := repo.OpenCheckout(filepath.Join(base, "switched"), to)
		if err != nil {
			t.Fatal(err)
		}
		if err := advanced.Switch(from, nil); err != nil {
			t.Fatal(err)
		}
		if err := advanced.Advance(from, to, nil); err != nil {
			t.Fatalf("%s to %s: %v", from.Short(), to.Short(), err)
		}
		if err := switched.Switch(to, nil); err != nil {
			t.Fatal(err)
		}
		got, want := snapshot(advanced.Dir), snapshot(switched.Dir)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s to %s: advanced\n%v\nswitched\n%v", from.Short(), to.Short(), got, want)
		}
		if head, err := runGitCmd(advanced.Dir, "", nil, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(head) != to.String() {
			t.Errorf("HEAD: %q, %v", head, err)
		}
		if st, err := runGitCmd(advanced.Dir, "", nil, "status", "--porcelain", "--ignored"); err != nil || st != "" {
			t.Errorf("git status after the advance: %q, %v", st, err)
		}
	}
}
