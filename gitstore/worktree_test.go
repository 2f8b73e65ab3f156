package gitstore

import (
	"bytes"
	"errors"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// worktreeRepo is a repository with one commit (a.txt, b.txt, dir/c.txt and
// a .gitignore for *.log), then uncommitted work: a.txt modified and staged,
// b.txt modified, dir/c.txt deleted, new.txt untracked, build.log ignored.
func worktreeRepo(t *testing.T) (*testRepo, Hash) {
	t.Helper()
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.write("b.txt", "b\n")
	r.write("dir/c.txt", "c\n")
	r.write(".gitignore", "*.log\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	head := r.hash("rev-parse", "HEAD")
	r.write("a.txt", "a2\n")
	r.git("add", "a.txt")
	r.write("b.txt", "b2\nmore\n")
	if err := os.Remove(filepath.Join(r.dir, "dir/c.txt")); err != nil {
		t.Fatal(err)
	}
	r.write("new.txt", "new\n")
	r.write("build.log", "cache\n")
	return r, head
}

func (r *testRepo) write(path, content string) {
	r.t.Helper()
	writeFile(r.t, filepath.Join(r.dir, path), content)
}

func TestCaptureWorktree(t *testing.T) {
	setEnv(t)
	r, _ := worktreeRepo(t)
	status := r.git("status", "--porcelain")
	repo := r.open()
	capture, err := repo.CaptureWorktree()
	if err == nil {
		err = repo.Flush() // git reads the tree below
	}
	if err != nil {
		t.Fatal(err)
	}
	tree := capture.Tree
	got := r.git("ls-tree", "-r", "--name-only", tree.String())
	if want := ".gitignore\na.txt\nb.txt\nnew.txt\n"; got != want {
		t.Errorf("captured tree lists\n%s\nwant\n%s", got, want)
	}
	if got := r.git("show", tree.String()+":b.txt"); got != "b2\nmore\n" {
		t.Errorf("b.txt in the capture = %q, want the unstaged content", got)
	}
	if after := r.git("status", "--porcelain"); after != status {
		t.Errorf("the capture changed git status:\n%s\nwas\n%s", after, status)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "index.lock")); err == nil {
		t.Error("an index.lock is left behind")
	}
	leftovers, _ := filepath.Glob(filepath.Join(r.dir, ".git", "evolve-index-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary indexes left behind: %v", leftovers)
	}
}

func TestCaptureWorktreeWithoutIndex(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("x.txt", "x\n")
	repo := r.open()
	capture, err := repo.CaptureWorktree()
	if err == nil {
		err = repo.Flush() // git reads the tree below
	}
	if err != nil {
		t.Fatal(err)
	}
	tree := capture.Tree
	if got := r.git("ls-tree", "-r", "--name-only", tree.String()); got != "x.txt\n" {
		t.Errorf("capture of a repository without commits lists %q", got)
	}
}

// withSide is a repository of three commits on main and one on a branch
// side made from the first.
func withSide(t *testing.T) (r *testRepo, cs []Hash, side Hash) {
	setEnv(t)
	r = newRepo(t)
	cs = r.makeCommits(3)
	r.git("checkout", "-q", "-b", "side", cs[0].String())
	r.git("commit", "-q", "--allow-empty", "-m", "side")
	return r, cs, r.hash("rev-parse", "HEAD")
}

func TestIsAncestor(t *testing.T) {
	r, cs, side := withSide(t)
	repo := r.open()
	for _, c := range []struct {
		a, b Hash
		want bool
	}{{cs[0], cs[2], true}, {cs[2], cs[2], true}, {cs[2], cs[0], false}, {cs[1], side, false}, {cs[0], side, true}} {
		got, err := repo.IsAncestor(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", c.a.Short(), c.b.Short(), got, err, c.want)
		}
	}
	if _, err := repo.IsAncestor(fakeObj(1), cs[0]); err == nil {
		t.Error("IsAncestor of a missing commit gave no error")
	}
}

// Extends: a line of single-parent commits on a, and a itself; not a
// merge of a, not a commit that is no descendant, not a missing one.
func TestExtends(t *testing.T) {
	r, cs, side := withSide(t)
	r.git("merge", "-q", "--no-edit", "--no-ff", cs[2].String())
	merge := r.hash("rev-parse", "HEAD")
	repo := r.open()
	for _, c := range []struct {
		a, b Hash
		want bool
	}{{cs[0], cs[2], true}, {cs[2], cs[2], true}, {cs[2], cs[0], false}, {cs[1], side, false}, {cs[0], side, true},
		{cs[2], merge, false}, {side, merge, false}, {fakeObj(1), cs[2], false}, {cs[0], fakeObj(1), false}} {
		if got := repo.Extends(c.a, c.b); got != c.want {
			t.Errorf("Extends(%s, %s) = %v; want %v", c.a.Short(), c.b.Short(), got, c.want)
		}
	}
	// A shallow clone of the last two commits: the line ends at its
	// boundary, as git log's does.
	dir := filepath.Join(t.TempDir(), "shallow")
	r.git("clone", "-q", "--depth", "2", "--branch", "main", "file://"+r.dir, dir)
	shallow, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer shallow.Close()
	for _, c := range []struct {
		a, b Hash
		want bool
	}{{cs[1], cs[2], true}, {cs[2], cs[2], true}, {cs[0], cs[2], false}} {
		if got := shallow.Extends(c.a, c.b); got != c.want {
			t.Errorf("in a shallow clone, Extends(%s, %s) = %v; want %v", c.a.Short(), c.b.Short(), got, c.want)
		}
	}
	// A boundary whose parent is here all the same: git's line ends there.
	if err := os.WriteFile(filepath.Join(r.dir, ".git", "shallow"), []byte(cs[1].String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(r.git("log", "--format=%H", cs[2].String())); len(got) != 2 {
		t.Fatalf("git log past the boundary: %v", got)
	}
	if repo.Extends(cs[0], cs[2]) || !repo.Extends(cs[1], cs[2]) {
		t.Error("Extends walked past the shallow boundary, or not to it")
	}
}

// HistoryAltered: a shallow clone, replace refs, and the environment that
// says which replace refs git reads.
func TestHistoryAltered(t *testing.T) {
	r, cs, _ := withSide(t)
	repo := r.open()
	if altered, err := repo.HistoryAltered(); err != nil || altered {
		t.Fatalf("a plain repository: %v, %v", altered, err)
	}
	t.Setenv("GIT_REPLACE_REF_BASE", "refs/alt-replace/")
	if altered, _ := repo.HistoryAltered(); !altered {
		t.Error("GIT_REPLACE_REF_BASE set: not altered")
	}
	os.Unsetenv("GIT_REPLACE_REF_BASE")
	r.git("replace", cs[1].String(), cs[0].String())
	if altered, _ := repo.HistoryAltered(); !altered {
		t.Error("a replace ref: not altered")
	}
}

func TestMoveHead(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	cs := r.makeCommits(3)
	r.git("reset", "-q", "--hard", cs[1].String())
	repo := r.open()
	if err := repo.MoveHead(cs[2], cs[0], "test"); !errors.Is(err, ErrRefChanged) {
		t.Fatalf("MoveHead from a stale value: %v, want ErrRefChanged", err)
	}
	if err := repo.MoveHead(cs[2], cs[1], "test: move"); err != nil {
		t.Fatal(err)
	}
	if got := r.hash("rev-parse", "refs/heads/main"); got != cs[2] {
		t.Errorf("main is %s, want %s (HEAD's branch moves)", got.Short(), cs[2].Short())
	}
	if got := strings.TrimSpace(r.git("symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("HEAD is %s after the move, want it still on main", got)
	}
	if got := r.git("reflog", "-1", "--format=%gs", "main"); got != "test: move\n" {
		t.Errorf("the branch's reflog says %q", got)
	}
	r.git("checkout", "-q", "-f", "--detach", cs[0].String())
	if err := repo.MoveHead(cs[1], cs[0], "detached"); err != nil {
		t.Fatal(err)
	}
	if got := r.hash("rev-parse", "HEAD"); got != cs[1] {
		t.Errorf("detached HEAD is %s, want %s", got.Short(), cs[1].Short())
	}
	if got := r.hash("rev-parse", "refs/heads/main"); got != cs[2] {
		t.Errorf("moving a detached HEAD moved main to %s", got.Short())
	}
}

func TestResetIndex(t *testing.T) {
	setEnv(t)
	r, head := worktreeRepo(t)
	repo := r.open()
	capture, err := repo.CaptureWorktree()
	if err == nil {
		err = repo.Flush() // git reads the tree below
	}
	if err != nil {
		t.Fatal(err)
	}
	tree := capture.Tree
	c := r.hash("commit-tree", tree.String(), "-p", head.String(), "-m", "work")
	r.git("update-ref", "HEAD", c.String())
	if err := repo.ResetIndex(c); err != nil {
		t.Fatal(err)
	}
	if got := r.git("status", "--porcelain"); got != "" {
		t.Errorf("after ResetIndex to a commit of the working tree, git status says\n%s", got)
	}
	// The cached stat information of unchanged files is kept: git diff-files
	// (which does not refresh) sees nothing for them.
	if got := r.git("diff-files", "--name-only"); strings.Contains(got, ".gitignore") {
		t.Errorf("ResetIndex dropped the stat information of unchanged files: %q", got)
	}
}

func TestSwitchWorktree(t *testing.T) {
	setEnv(t)
	r, head := worktreeRepo(t)
	r.write(".agents/notes.md", "learned\n")
	repo := r.open()
	saved, capture, err := repo.SaveWorktree(head, "saved\n")
	if err != nil {
		t.Fatal(err)
	}
	// Checked: a file the switch would write changed since the capture.
	r.write("b.txt", "changed after the capture\n")
	if err := repo.SwitchWorktree(capture, saved, head, SwitchChecked); !errors.Is(err, ErrWorktreeChanged) {
		t.Fatalf("a changed file: %v, want ErrWorktreeChanged", err)
	}
	if got, _ := os.ReadFile(filepath.Join(r.dir, "b.txt")); string(got) != "changed after the capture\n" {
		t.Errorf("the refused switch wrote b.txt: %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "new.txt")); err != nil {
		t.Error("the refused switch removed new.txt")
	}
	r.write("b.txt", "b2\nmore\n") // as captured again
	if err := repo.SwitchWorktree(capture, saved, head, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	if got := r.git("status", "--porcelain", "--ignored"); got != "!! build.log\n" {
		t.Errorf("after the switch to HEAD, git status says\n%s\nwant only the ignored file", got)
	}
	for path, want := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n", "build.log": "cache\n"} {
		data, err := os.ReadFile(filepath.Join(r.dir, path))
		if err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want %q", path, data, err, want)
		}
	}
	for _, gone := range []string{"new.txt", ".agents/notes.md", ".agents"} {
		if _, err := os.Stat(filepath.Join(r.dir, gone)); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if got := r.git("show", saved.String()+":.agents/notes.md"); got != "learned\n" {
		t.Errorf("the save lost the untracked file: %q", got)
	}
	// Back, then half back (an interrupted switch): resume finishes it;
	// a file neither side has is refused unless forced.
	if err := repo.SwitchWorktree(nil, head, saved, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	r.write("a.txt", "a\n") // switched back to head, by hand
	if err := repo.SwitchWorktree(nil, saved, head, SwitchChecked); !errors.Is(err, ErrWorktreeChanged) {
		t.Errorf("a half-switched tree, checked: %v, want ErrWorktreeChanged", err)
	}
	if err := repo.SwitchWorktree(nil, saved, head, SwitchResume); err != nil {
		t.Errorf("a half-switched tree, resumed: %v", err)
	}
	if got := r.git("status", "--porcelain"); got != "" {
		t.Errorf("after the resumed switch, git status says\n%s", got)
	}
	if err := repo.SwitchWorktree(nil, head, saved, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	r.write("a.txt", "mine\n")
	if err := repo.SwitchWorktree(nil, saved, head, SwitchResume); !errors.Is(err, ErrWorktreeChanged) {
		t.Errorf("a file as neither side has it, resumed: %v, want ErrWorktreeChanged", err)
	}
	if err := repo.SwitchWorktree(nil, saved, head, SwitchForce); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(r.dir, "a.txt")); string(got) != "a\n" {
		t.Errorf("forced: a.txt = %q", got)
	}
}

func TestWithTrailers(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	repo := r.open()
	for _, c := range []struct{ msg, want string }{
		{"subject\n", "subject\n\nEvolve-Cycle: 3\nEvolve-Id: abc\n"},
		{"subject\n\nbody\n\nSigned-off-by: A <a@b>\n", "subject\n\nbody\n\nSigned-off-by: A <a@b>\nEvolve-Cycle: 3\nEvolve-Id: abc\n"},
		{"subject\n\nEvolve-Cycle: 2\n", "subject\n\nEvolve-Cycle: 3\nEvolve-Id: abc\n"},
	} {
		got, err := repo.WithTrailers(c.msg, [][2]string{{"Evolve-Cycle", "3"}, {"Evolve-Id", "abc"}})
		if err != nil || got != c.want {
			t.Errorf("WithTrailers(%q) = %q, %v; want %q", c.msg, got, err, c.want)
		}
	}
}

// TestCaptureWorktreeRacyChange checks a file rewritten, with the same size,
// within the second the index recorded it: git must look at its content,
// not trust its stat information, in the temporary index too.
func TestCaptureWorktreeRacyChange(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	var second int64
	for attempt := 0; ; attempt++ {
		start := time.Now().Unix()
		r.write("v.txt", "40\n")
		r.git("add", "v.txt")
		r.write("v.txt", "41\n")
		if time.Now().Unix() == start {
			second = start
			break
		}
		if attempt > 5 {
			t.Skip("could not write, add and rewrite a file within one second")
		}
	}
	for time.Now().Unix() == second {
		time.Sleep(20 * time.Millisecond) // the capture happens a second later
	}
	repo := r.open()
	capture, err := repo.CaptureWorktree()
	if err == nil {
		err = repo.Flush() // git reads the tree below
	}
	if err != nil {
		t.Fatal(err)
	}
	tree := capture.Tree
	if got := r.git("show", tree.String()+":v.txt"); got != "41\n" {
		t.Errorf("the capture holds v.txt = %q: a change within the index's second was missed", got)
	}
}

func TestTreeFile(t *testing.T) {
	setEnv(t)
	r, head := worktreeRepo(t)
	repo := r.open()
	for _, c := range []struct {
		path string
		ok   bool
	}{{"a.txt", true}, {"dir/c.txt", true}, {"dir", false}, {"dir/c.txt/x", false}, {"nope", false}, {"a.txt/b", false}} {
		blob, ok, err := repo.TreeFile(head, c.path)
		if err != nil || ok != c.ok {
			t.Errorf("TreeFile(%s) = %v, %v; want %v", c.path, ok, err, c.ok)
			continue
		}
		if ok {
			if want := r.hash("rev-parse", head.String()+":"+c.path); blob != want {
				t.Errorf("TreeFile(%s) = %s, want %s", c.path, blob.Short(), want.Short())
			}
		}
	}
	ci, _ := repo.Commit(head)
	if _, ok, err := repo.TreeFile(ci.Tree, "a.txt"); !ok || err != nil {
		t.Errorf("TreeFile on a tree: %v, %v", ok, err)
	}
}

func TestMergeTree(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("a.txt", "one\ntwo\nthree\n")
	r.write("b.txt", "b\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	base := r.hash("rev-parse", "HEAD")
	r.write("a.txt", "one\ntwo\nTHREE\n")
	r.git("commit", "-q", "-am", "ours")
	ours := r.hash("rev-parse", "HEAD")
	r.git("checkout", "-q", "-b", "theirs", base.String())
	r.write("a.txt", "ONE\ntwo\nthree\n")
	r.write("c.txt", "c\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "theirs")
	theirs := r.hash("rev-parse", "HEAD")
	repo := r.open()
	tree, conflicts, err := repo.MergeTree(ours, theirs)
	if errors.Is(err, ErrMergeTreeUnsupported) {
		t.Skip(err)
	}
	if err != nil || len(conflicts) > 0 {
		t.Fatalf("MergeTree: %v, conflicts %v", err, conflicts)
	}
	if got := r.git("show", tree.String()+":a.txt"); got != "ONE\ntwo\nTHREE\n" {
		t.Errorf("merged a.txt = %q", got)
	}
	if got := r.git("ls-tree", "--name-only", tree.String()); got != "a.txt\nb.txt\nc.txt\n" {
		t.Errorf("merged tree lists %q", got)
	}
	r.write("a.txt", "one\ntwo\nthree!\n")
	r.write("b.txt", "B\n")
	r.git("commit", "-q", "-am", "clash")
	clash := r.hash("rev-parse", "HEAD")
	r.git("checkout", "-q", "main")
	r.write("b.txt", "bb\n")
	r.git("commit", "-q", "-am", "clash too")
	tree, conflicts, err = repo.MergeTree(r.hash("rev-parse", "HEAD"), clash)
	if err != nil || !tree.IsZero() || strings.Join(conflicts, ",") != "a.txt,b.txt" {
		t.Errorf("a conflicting merge: tree %s, conflicts %v, %v; want a.txt and b.txt", tree.Short(), conflicts, err)
	}
	if got := r.git("status", "--porcelain"); got != "" {
		t.Errorf("MergeTree touched the working tree: %q", got)
	}
}

func TestTrackedChanges(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	repo := r.open()
	r.write("untracked.txt", "u\n")
	if dirty, err := repo.TrackedChanges(); err != nil || dirty {
		t.Errorf("TrackedChanges with an untracked file only = %v, %v", dirty, err)
	}
	r.write("a.txt", "changed\n")
	if dirty, err := repo.TrackedChanges(); err != nil || !dirty {
		t.Errorf("TrackedChanges with a changed file = %v, %v", dirty, err)
	}
	r.git("add", "a.txt")
	r.write("a.txt", "a\n")
	if dirty, err := repo.TrackedChanges(); err != nil || !dirty {
		t.Errorf("TrackedChanges with a staged change = %v, %v", dirty, err)
	}
}

// TestSwitchWorktreeInTheWay checks that a file where the switch would
// write one is not overwritten.
func TestSwitchWorktreeInTheWay(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	one := r.hash("rev-parse", "HEAD")
	r.write("b.txt", "b\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "two")
	two := r.hash("rev-parse", "HEAD")
	repo := r.open()
	if err := repo.SwitchWorktree(nil, two, one, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "b.txt")); err == nil {
		t.Error("the switch to one left b.txt")
	}
	r.write("b.txt", "in the way\n")
	if err := repo.SwitchWorktree(nil, one, two, SwitchChecked); !errors.Is(err, ErrWorktreeChanged) {
		t.Errorf("a file in the way: %v, want ErrWorktreeChanged", err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.dir, "b.txt")); string(data) != "in the way\n" {
		t.Errorf("b.txt = %q after the refused switch", data)
	}
}

// TestSwitchWorktreeDirectoryToFile checks that a directory the switch
// would replace by a file is replaced only when each file in it is one the
// switch knows: an untracked file in it stops the switch.
func TestSwitchWorktreeDirectoryToFile(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("x", "a file\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "file")
	file := r.hash("rev-parse", "HEAD")
	r.rm("x")
	r.write("x/a", "in a directory\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "directory")
	dir := r.hash("rev-parse", "HEAD")
	r.write("x/notes.txt", "untracked\n")
	repo := r.open()
	err := repo.SwitchWorktree(nil, dir, file, SwitchChecked)
	if !errors.Is(err, ErrWorktreeChanged) || !strings.Contains(err.Error(), "x/notes.txt") {
		t.Fatalf("an untracked file in the directory: %v, want ErrWorktreeChanged naming x/notes.txt", err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.dir, "x/notes.txt")); string(data) != "untracked\n" {
		t.Fatalf("x/notes.txt = %q after the refused switch", data)
	}
	r.rm("x/notes.txt")
	if err := repo.SwitchWorktree(nil, dir, file, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.dir, "x")); string(data) != "a file\n" {
		t.Errorf("x = %q after the switch", data)
	}
}

// TestSwitchWorktreeRemovesSubmodule checks that a switch from a tree with
// a submodule to one without leaves the submodule's files (as git checkout
// does) and finishes.
func TestSwitchWorktreeRemovesSubmodule(t *testing.T) {
	testenv.Slow(t)
	setEnv(t)
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "one")
	one := r.hash("rev-parse", "HEAD")
	sub := newRepo(t)
	sub.write("s.txt", "s\n")
	sub.git("add", "-A")
	sub.git("commit", "-q", "-m", "s")
	r.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "sub")
	r.git("commit", "-q", "-m", "two")
	two := r.hash("rev-parse", "HEAD")
	r.write("sub/mine.txt", "work in the submodule\n")
	repo := r.open()
	if err := repo.SwitchWorktree(nil, two, one, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.dir, "sub/mine.txt")); string(data) != "work in the submodule\n" {
		t.Errorf("sub/mine.txt = %q after the switch", data)
	}
	if got := r.git("ls-files", "--stage"); strings.Contains(got, "sub") {
		t.Errorf("the index still has the submodule:\n%s", got)
	}
}

// TestIsAncestorLongHistory checks the answer past the commits IsAncestor
// walks itself, where git answers.
func TestIsAncestorLongHistory(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	cs := r.makeCommits(3 * ancestorWalk)
	repo := r.open()
	for _, c := range []struct {
		a, b Hash
		want bool
	}{{cs[0], cs[len(cs)-1], true}, {cs[len(cs)-1], cs[0], false}, {cs[ancestorWalk], cs[2*ancestorWalk], true}} {
		if got, err := repo.IsAncestor(c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", c.a.Short(), c.b.Short(), got, err, c.want)
		}
	}
}

func TestReadBlobs(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	repo := r.open()
	a, _ := repo.WriteBlob([]byte("a\n"))
	b, _ := repo.WriteBlob([]byte(""))
	got, err := repo.ReadBlobs([]Hash{a, ZeroHash, b, a})
	if err != nil || len(got) != 4 || string(got[0]) != "a\n" || got[1] != nil || len(got[2]) != 0 || got[2] == nil || string(got[3]) != "a\n" {
		t.Errorf("ReadBlobs = %q, %v", got, err)
	}
	if _, err := repo.ReadBlobs([]Hash{fakeObj(1)}); err == nil {
		t.Error("ReadBlobs of a missing blob gave no error")
	}
	tree := r.hash("write-tree")
	if _, err := repo.ReadBlobs([]Hash{tree}); err == nil {
		t.Error("ReadBlobs of a tree gave no error")
	}
}

// ObjectSizes says what git cat-file -s says of each object, -1 for one
// that is absent, in one exchange.
func TestObjectSizes(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	repo := r.open()
	a, _ := repo.WriteBlob([]byte("a\n"))
	empty, _ := repo.WriteBlob(nil)
	big := mustHash(t, strings.TrimSpace(r.gitIn(strings.Repeat("b", 3<<20), "hash-object", "-w", "--stdin")))
	tree := r.hash("write-tree")
	got, err := repo.ObjectSizes([]Hash{a, fakeObj(1), empty, big, tree, a})
	if err != nil {
		t.Fatal(err)
	}
	treeSize, _ := strconv.ParseInt(strings.TrimSpace(r.git("cat-file", "-s", tree.String())), 10, 64)
	if want := []int64{2, -1, 0, 3 << 20, treeSize, 2}; !slices.Equal(got, want) {
		t.Errorf("ObjectSizes = %v, want %v", got, want)
	}
	if got, err := repo.ObjectSizes(nil); err != nil || len(got) != 0 {
		t.Errorf("ObjectSizes(nil) = %v, %v", got, err)
	}
}

// ReadBlobsKept reads as ReadBlobs does, and gives a later reader the
// blobs it read from what it kept: a blob gone from the object store since
// is still read; one past the bound is not kept.
func TestReadBlobsKept(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	repo := r.open()
	a, _ := repo.WriteBlob([]byte("a\n"))
	big, _ := repo.WriteBlob(bytes.Repeat([]byte("b"), maxKeptBlobBytes))
	got, err := repo.ReadBlobsKept([]Hash{a, ZeroHash, a, big})
	if err != nil || len(got) != 4 || string(got[0]) != "a\n" || got[1] != nil || string(got[2]) != "a\n" || len(got[3]) != maxKeptBlobBytes {
		t.Fatalf("ReadBlobsKept = %d blobs, %v", len(got), err)
	}
	for _, h := range []Hash{a, big} {
		r.rm(".git/objects/" + h.String()[:2] + "/" + h.String()[2:])
	}
	if got, err := repo.ReadBlobsKept([]Hash{a}); err != nil || string(got[0]) != "a\n" {
		t.Errorf("a kept blob read again: %q, %v", got, err)
	}
	if _, err := repo.ReadBlobsKept([]Hash{big}); err == nil {
		t.Error("a blob past the bound was kept")
	}
}

// TestSwitchWorktreeUnsaved checks that files no save holds (ignored ones)
// are never destroyed by a switch, forced or not: an ignored file where the
// switch writes one, ignored files in a directory it replaces by a file, an
// ignored file where it needs a directory. SaveWorktree's also saves them,
// and a switch from that save goes through.
func TestSwitchWorktreeUnsaved(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write(".gitignore", "*.log\nsettings\nd\n")
	r.write("x", "a file\n")
	r.write("d/in.txt", "in d\n")
	r.git("add", "-A")
	r.git("add", "-f", "d/in.txt")
	r.git("commit", "-q", "-m", "start")
	start := r.hash("rev-parse", "HEAD")
	repo := r.open()
	// The working tree moves away from start: x becomes a directory with
	// an ignored file; settings (ignored) appears where start has none; d
	// becomes an ignored file.
	r.rm("x")
	r.write("x/part.txt", "kept\n")
	r.write("x/build.log", "the build said\n")
	r.rm("d/in.txt")
	if err := os.Remove(filepath.Join(r.dir, "d")); err != nil {
		t.Fatal(err)
	}
	r.write("d", "an ignored file\n")
	r.git("rm", "-q", "--cached", "d/in.txt")
	saved, _, err := repo.SaveWorktree(start, "save\n")
	if err != nil {
		t.Fatal(err)
	}
	// settings: start never had it; make a "to" tree that has it.
	v1, err := ParseHash(strings.TrimSpace(r.gitIn("config v1\n", "hash-object", "-w", "--stdin")))
	if err != nil {
		t.Fatal(err)
	}
	to, err := repo.EditTree(start, []CapturedPath{{Path: "settings", Mode: 0o100644, Blob: v1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Flush(); err != nil {
		t.Fatal(err)
	}
	r.write("settings", "config v2, mine\n")
	for _, mode := range []SwitchMode{SwitchChecked, SwitchForce} {
		err := repo.SwitchWorktree(nil, saved, to, mode)
		var ue *UnsavedError
		if !errors.As(err, &ue) || !errors.Is(err, ErrWorktreeChanged) || strings.Join(ue.Paths, ",") != "d,settings,x/build.log" {
			t.Fatalf("mode %d: %v, want an UnsavedError for d, settings and x/build.log", mode, err)
		}
	}
	for path, want := range map[string]string{"x/build.log": "the build said\n", "settings": "config v2, mine\n", "d": "an ignored file\n"} {
		if data, _ := os.ReadFile(filepath.Join(r.dir, path)); string(data) != want {
			t.Errorf("%s = %q after the refused switch", path, data)
		}
	}
	again, capture, err := repo.SaveWorktree(saved, "again\n", "d", "settings", "x/build.log")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"x/build.log": "the build said\n", "settings": "config v2, mine\n", "d": "an ignored file\n"} {
		if got := r.git("show", again.String()+":"+path); got != want {
			t.Errorf("the save's %s = %q, want %q", path, got, want)
		}
	}
	if err := repo.SwitchWorktree(capture, again, to, SwitchForce); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"x": "a file\n", "settings": "config v1\n", "d/in.txt": "in d\n"} {
		if data, _ := os.ReadFile(filepath.Join(r.dir, path)); string(data) != want {
			t.Errorf("%s = %q after the switch", path, data)
		}
	}
}

// TestSwitchWorktreeThroughSymlink checks that a directory that became a
// symbolic link (to files outside the tree) is put back as a directory: the
// files the link leads to are not in the way, and are left alone.
func TestSwitchWorktreeThroughSymlink(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write("lib/a.txt", "a\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "start")
	start := r.hash("rev-parse", "HEAD")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "a.txt"), "outside\n")
	r.rm("lib/a.txt")
	if err := os.Remove(filepath.Join(r.dir, "lib")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.dir, "lib")); err != nil {
		t.Fatal(err)
	}
	repo := r.open()
	saved, capture, err := repo.SaveWorktree(start, "save\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.SwitchWorktree(capture, saved, start, SwitchChecked); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.dir, "lib/a.txt")); string(data) != "a\n" {
		t.Errorf("lib/a.txt = %q after the switch", data)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "a.txt")); string(data) != "outside\n" {
		t.Errorf("the file the link led to = %q", data)
	}
}

// In a shallow clone a commit's parents stop at the boundary: IsAncestor
// asks git there, and answers as git merge-base does (false for a commit
// not in the clone's history), not with an error from a parent it lacks.
func TestIsAncestorShallow(t *testing.T) {
	setEnv(t)
	src := newRepo(t)
	cs := src.makeCommits(20)
	dir := filepath.Join(t.TempDir(), "shallow")
	if _, err := runGitCmd(t.TempDir(), "", nil, "clone", "-q", "--depth", "5", "file://"+src.dir, dir); err != nil {
		t.Fatal(err)
	}
	r := &testRepo{t: t, dir: dir}
	r.git("commit", "-q", "--allow-empty", "-m", "orphan-to-be")
	r.git("checkout", "-q", "--orphan", "other")
	r.git("commit", "-q", "--allow-empty", "-m", "orphan")
	orphan := r.hash("rev-parse", "HEAD")
	repo := r.open()
	tip := cs[len(cs)-1]
	if in, err := repo.IsAncestor(orphan, tip); err != nil || in {
		t.Errorf("IsAncestor(orphan, tip) in a shallow clone = %v, %v; want false, nil", in, err)
	}
	if in, err := repo.IsAncestor(cs[len(cs)-3], tip); err != nil || !in {
		t.Errorf("IsAncestor(tip~2, tip) in a shallow clone = %v, %v; want true, nil", in, err)
	}
	if base, ok, err := repo.MergeBase(cs[len(cs)-3], tip); err != nil || !ok || base != cs[len(cs)-3] {
		t.Errorf("MergeBase(tip~2, tip) = %s, %v, %v", base.Short(), ok, err)
	}
}
