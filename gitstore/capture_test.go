package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captureCase is a working tree to capture: a committed tree, then changes.
type captureCase struct {
	name   string
	base   func(r *testRepo)
	change func(r *testRepo)
	fast   bool // the common case applies (no fallback to a temporary index)
}

func (r *testRepo) rm(path string) {
	r.t.Helper()
	if err := os.RemoveAll(filepath.Join(r.dir, path)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) symlink(target, path string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(target, p); err != nil {
		r.t.Fatal(err)
	}
}

func baseTree(r *testRepo) {
	r.write("a.txt", "a\n")
	r.write("b.txt", "b\n")
	r.write("dir/c.txt", "c\n")
	r.write("dir/sub/d.txt", "d\n")
	r.write("run.sh", "#!/bin/sh\n")
	r.write("file-to-dir", "f\n")
	r.write("dir-to-file/x.txt", "x\n")
	r.write("with space/é.txt", "e\n")
	r.symlink("a.txt", "link")
	r.write(".gitignore", "*.log\nbuild/\n")
}

var captureCases = []captureCase{
	{name: "clean", base: baseTree, change: func(r *testRepo) {}, fast: true},
	{name: "every kind of change", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("a.txt", "a2\n")
		r.git("add", "a.txt")                          // staged
		r.write("b.txt", "b2\n")                       // unstaged
		r.rm("dir/c.txt")                              // deleted
		r.git("rm", "-q", "--cached", "dir/sub/d.txt") // untracked again, still there
		r.write("new/deep/n.txt", "n\n")               // untracked, in new directories
		r.write("x.log", "ignored\n")
		r.write("build/out.bin", "ignored\n")
		os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
		r.rm("link")
		r.symlink("b.txt", "link")
		r.symlink("dir", "newlink")
		r.rm("file-to-dir")
		r.write("file-to-dir/inside.txt", "i\n")
		r.rm("dir-to-file")
		r.write("dir-to-file", "now a file\n")
		r.write("with space/é.txt", "e2\n")
	}},
	{name: "staged then reverted", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("a.txt", "staged\n")
		r.git("add", "a.txt")
		r.write("a.txt", "a\n")
		r.write("b.txt", "bb\n")
		r.git("add", "b.txt")
	}},
	{name: "a directory emptied", base: baseTree, fast: true, change: func(r *testRepo) {
		r.rm("dir")
		r.rm("with space")
	}},
	{name: "filters and line endings", fast: true, base: func(r *testRepo) {
		r.write(".gitattributes", "*.txt text eol=lf\n*.up filter=upper\n")
		r.git("config", "filter.upper.clean", "tr a-z A-Z")
		r.git("config", "filter.upper.smudge", "cat")
		r.write("a.txt", "a\n")
	}, change: func(r *testRepo) {
		r.write("a.txt", "crlf\r\nline\r\n")
		r.write("shout.up", "quiet words\n")
	}},
	{name: "core.autocrlf without attributes", fast: true, base: func(r *testRepo) {
		r.git("config", "core.autocrlf", "input")
		r.write("a.txt", "a\n")
	}, change: func(r *testRepo) {
		r.write("a.txt", "crlf\r\nline\r\n")
		r.write("new.txt", "new\r\n")
	}},
	{name: "info/attributes", fast: true, base: func(r *testRepo) {
		r.write(".git/info/attributes", "*.up filter=upper\n")
		r.git("config", "filter.upper.clean", "tr a-z A-Z")
		r.write("a.txt", "a\n")
	}, change: func(r *testRepo) {
		r.write("sub/shout.up", "quiet words\n")
		r.write("a.txt", "b\n")
	}},
	{name: "attributes in a parent directory", fast: true, base: func(r *testRepo) {
		r.write("deep/.gitattributes", "*.txt filter=upper\n")
		r.git("config", "filter.upper.clean", "tr a-z A-Z")
		r.write("deep/er/a.txt", "a\n")
	}, change: func(r *testRepo) {
		r.write("deep/er/a.txt", "quiet\n")
		r.write("deep/er/est/b.txt", "also quiet\n")
	}},
	{name: "nested repository", base: baseTree, change: func(r *testRepo) {
		nested := filepath.Join(r.dir, "nested")
		if _, err := runGitCmd(r.dir, "", nil, "init", "-q", nested); err != nil {
			r.t.Fatal(err)
		}
		r.write("nested/n.txt", "n\n")
		if _, err := runGitCmd(nested, "", nil, "add", "n.txt"); err != nil {
			r.t.Fatal(err)
		}
		if _, err := runGitCmd(nested, "", nil, "commit", "-q", "-m", "nested"); err != nil {
			r.t.Fatal(err)
		}
		r.write("b.txt", "b2\n")
	}},
	{name: "names git would unquote, with attributes", fast: true, base: func(r *testRepo) {
		r.write(".gitattributes", "*.sh text eol=lf\n")
		r.write("abc", "plain\n")
	}, change: func(r *testRepo) {
		r.write(`"abc"`, "quoted name\n")
		r.write("two\nlines", "newline in the name\n")
		r.write(`back\slash`, "backslash\n")
	}},
	{name: "untracked again and now ignored", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("secret.env", "token\n")
		r.git("add", "secret.env")
		r.git("commit", "-q", "-m", "oops")
		r.git("rm", "-q", "--cached", "secret.env")
		r.write(".gitignore", "*.log\nbuild/\n*.env\n")
	}},
	{name: "staged, then deleted", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("gone.txt", "g\n")
		r.git("add", "gone.txt")
		r.rm("gone.txt")
		r.write("b.txt", "b2\n")
	}},
	{name: "everything deleted", base: baseTree, fast: true, change: func(r *testRepo) {
		for _, p := range []string{"a.txt", "b.txt", "dir", "run.sh", "file-to-dir", "dir-to-file", "with space", "link", ".gitignore"} {
			r.rm(p)
		}
	}},
	{name: "staged, then edited again", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("a.txt", "staged\n")
		r.write("added.txt", "staged\n")
		os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
		r.git("add", "a.txt", "added.txt", "run.sh")
		r.write("a.txt", "working\n")
		r.write("added.txt", "working\n")
		r.git("rm", "-q", "dir/c.txt")
		r.write("dir/c.txt", "back, untracked\n")
	}},
	{name: "intent to add", base: baseTree, fast: true, change: func(r *testRepo) {
		r.write("later.txt", "l\n")
		r.write("empty.txt", "")
		r.git("add", "-N", "later.txt")
		r.git("add", "empty.txt")
		r.write("b.txt", "b2\n")
	}},
	{name: "core.fileMode off", base: baseTree, change: func(r *testRepo) {
		r.git("config", "core.fileMode", "false")
		os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
		r.write("b.txt", "b2\n")
	}},
}

// TestCaptureAgreesWithGitAdd checks CaptureWorktree against git itself:
// git add -A and git write-tree on a copy of the repository.
func TestCaptureAgreesWithGitAdd(t *testing.T) {
	setEnv(t)
	for _, c := range captureCases {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t)
			c.base(r)
			r.git("add", "-A")
			r.git("commit", "-q", "-m", "base")
			c.change(r)
			status := r.git("status", "--porcelain", "--ignored")
			copyDir := filepath.Join(t.TempDir(), "copy")
			if out, err := runGitCmd(r.dir, "", nil, "rev-parse", "--git-dir"); err != nil || strings.TrimSpace(out) != ".git" {
				t.Fatalf("git dir: %q %v", out, err)
			}
			if err := copyTree(r.dir, copyDir); err != nil {
				t.Fatal(err)
			}
			cp := &testRepo{t: t, dir: copyDir}
			wantIndex := cp.hash("write-tree")
			cp.git("add", "-A")
			want := cp.hash("write-tree")

			repo := r.open()
			capture, err := repo.CaptureWorktree()
			if err != nil {
				t.Fatal(err)
			}
			if capture.Tree != want {
				t.Errorf("capture %s, git add -A gives %s:\n%s\nwant\n%s", capture.Tree.Short(), want.Short(),
					r.git("ls-tree", "-r", capture.Tree.String()), r.git("ls-tree", "-r", want.String()))
			}
			if fast := capture.Paths != nil; fast != c.fast {
				t.Errorf("common case used: %v, want %v", fast, c.fast)
			}
			if got := r.git("status", "--porcelain", "--ignored"); got != status {
				t.Errorf("the capture changed git status:\n%s\nwas\n%s", got, status)
			}
			// Committed, with the index brought to it, the working tree is clean.
			if err := repo.Flush(); err != nil { // git reads the tree below
				t.Fatal(err)
			}
			// The index, as git write-tree writes it.
			if capture.Index != wantIndex {
				t.Errorf("the index captured %s, git write-tree gives %s:\n%s\nwant\n%s", capture.Index.Short(), wantIndex.Short(),
					r.git("ls-tree", "-r", capture.Index.String()), r.git("ls-tree", "-r", wantIndex.String()))
			}
			head := r.hash("rev-parse", "HEAD")
			commit := r.hash("commit-tree", capture.Tree.String(), "-p", head.String(), "-m", "captured")
			r.git("update-ref", "HEAD", commit.String())
			if out, err := runGitCmd(r.dir, "", nil, "fsck", "--no-dangling", "--connectivity-only"); err != nil || strings.Contains(out, "missing") {
				t.Errorf("git fsck after the commit of the capture: %v\n%s", err, out)
			}
			if err := repo.SyncIndex(capture, commit); err != nil {
				t.Fatal(err)
			}
			if got := r.git("status", "--porcelain"); got != "" {
				t.Errorf("after SyncIndex to the commit of the capture, git status says\n%s", got)
			}
			if got := r.git("diff", "--cached", "--name-only", commit.String()); got != "" {
				t.Errorf("the index differs from the commit in\n%s", got)
			}
		})
	}
}

// copyTree copies a directory, symbolic links as links and modes kept.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case fi.IsDir():
			return os.MkdirAll(to, fi.Mode().Perm()|0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, fi.Mode().Perm())
	})
}
