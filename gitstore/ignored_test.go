package gitstore

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestListIgnoredAgreesWithGit checks ListIgnored against git ls-files
// --others --ignored (without --directory: every ignored file named),
// on ignore rules of every kind: what it lists (and walks) is exactly the
// files git calls ignored, a repository of its own apart.
func TestListIgnoredAgreesWithGit(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write(".gitignore", "bin/\n*.log\nout\n/top-only.txt\nlogs/*\n!logs/keep.txt\ndeep/**/gen/\n.env\nnested/\n")
	r.write("sub/.gitignore", "*.tmp\n")
	r.write(".git/info/exclude", "excluded.txt\n")
	r.write("src/main.go", "package main\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	for _, p := range []string{
		"bin/tool", "bin/sub/part", "bin/sub/deeper/x",
		"a.log", "src/b.log", "only-logs/c.log", "only-logs/d.log",
		"out/deep/f", "src/out",
		"top-only.txt", "src/top-only.txt",
		"logs/a.txt", "logs/keep.txt",
		"deep/x/gen/g1", "deep/gen/g2",
		".env", "sub/s.tmp", "sub/s.txt", "excluded.txt",
		"untracked/u.txt", "untracked/u.log",
	} {
		r.write(p, "content of "+p+"\n")
	}
	r.symlink("tool", "bin/link")
	os.Chmod(filepath.Join(r.dir, "bin/tool"), 0o755)
	if _, err := runGitCmd(r.dir, "", nil, "init", "-q", filepath.Join(r.dir, "nested")); err != nil {
		t.Fatal(err)
	}
	r.write("nested/n.txt", "n\n")

	var want []string
	var wantLeft []string
	for _, p := range strings.Split(strings.TrimSuffix(r.git("ls-files", "-z", "--others", "--ignored", "--exclude-standard"), "\x00"), "\x00") {
		if strings.HasSuffix(p, "/") {
			wantLeft = append(wantLeft, p) // a repository of its own
			continue
		}
		want = append(want, p)
	}
	sort.Strings(want)

	files, left, err := r.open().ListIgnored(func(string) bool { return false }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ListIgnored lists\n%s\ngit ls-files --ignored\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(left, " ") != strings.Join(wantLeft, " ") {
		t.Errorf("left %q, want %q", left, wantLeft)
	}
	for _, f := range files {
		switch f.Path {
		case "bin/tool":
			if f.Mode != 0o100755 {
				t.Errorf("bin/tool mode %o", f.Mode)
			}
		case "bin/link":
			if f.Mode != 0o120000 {
				t.Errorf("bin/link mode %o", f.Mode)
			}
		}
	}

	// Left out: a directory on the way to a file git names, and one met
	// in a walk.
	files, left, err = r.open().ListIgnored(func(d string) bool { return d == "only-logs" || d == "bin/sub" }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, "only-logs/") || strings.HasPrefix(f.Path, "bin/sub/") {
			t.Errorf("%s is in a directory left out", f.Path)
		}
	}
	if got, want := strings.Join(left, " "), "bin/sub/ nested/ only-logs/"; got != want {
		t.Errorf("left %q, want %q", got, want)
	}

	// Past the limit, a directory is left out whole rather than walked
	// (bin/ holds 5 files; the files named one by one come first).
	files, left, err = r.open().ListIgnored(func(string) bool { return false }, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, "bin/") || strings.HasPrefix(f.Path, "out/") {
			t.Errorf("%s listed past the limit", f.Path)
		}
	}
	if got := strings.Join(left, " "); !strings.Contains(got, "bin/") || strings.Contains(got, "bin/sub/") {
		t.Errorf("left %q, want bin/ whole", got)
	}
}

// TestSaveFilesPutFiles saves files as they are (no filter), tells which
// changed since, and puts them back, links and modes too.
func TestSaveFilesPutFiles(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	r.write(".gitattributes", "*.txt text eol=crlf\n")
	r.write("a", "a\n")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	r.write("bin/tool", "#!/bin/sh\n")
	os.Chmod(filepath.Join(r.dir, "bin/tool"), 0o755)
	r.write("notes.txt", "lf only\n")
	r.symlink("tool", "bin/link")
	repo := r.open()
	saved, err := repo.SaveFiles([]string{"bin/link", "bin/tool", "notes.txt", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if saved[3].Mode != 0 {
		t.Errorf("a missing file saved: %+v", saved[3])
	}
	saved = saved[:3]
	if err := repo.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := r.git("cat-file", "blob", saved[2].Blob.String()); got != "lf only\n" {
		t.Errorf("notes.txt saved as %q, not as it is", got)
	}
	since := time.Now()
	now, err := repo.FilesNow(saved, since)
	if err != nil {
		t.Fatal(err)
	}
	for i := range saved {
		if now[i] != saved[i] {
			t.Errorf("%s: now %+v, saved %+v", saved[i].Path, now[i], saved[i])
		}
	}
	r.rm("bin")
	r.write("notes.txt", "changed\n")
	now, err = repo.FilesNow(saved, since)
	if err != nil {
		t.Fatal(err)
	}
	if now[0].Mode != 0 || now[1].Mode != 0 || now[2].Blob == saved[2].Blob {
		t.Errorf("after the changes, FilesNow gives %+v", now)
	}
	// A file not changed since the time given is not read: its change
	// time says so.
	later, err := repo.FilesNow(saved[2:], time.Now().Add(3*time.Second))
	if err != nil || later[0] != saved[2] {
		t.Errorf("with a time after the change, FilesNow gives %+v %v, want the saved entry unread", later, err)
	}
	r.rm("notes.txt") // a directory in its place: not put back
	r.write("notes.txt/inside", "a directory in its place\n")
	put, blocked, err := repo.PutFiles(saved)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(put, " ") != "bin/link bin/tool" || strings.Join(blocked, " ") != "notes.txt" {
		t.Errorf("put %v, blocked %v", put, blocked)
	}
	if target, err := os.Readlink(filepath.Join(r.dir, "bin/link")); err != nil || target != "tool" {
		t.Errorf("bin/link: %q %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(r.dir, "bin/tool")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/tool: %v %v", fi, err)
	}
	now, err = repo.FilesNow(saved[:2], since)
	if err != nil || now[0] != saved[0] || now[1] != saved[1] {
		t.Errorf("put back, FilesNow gives %+v %v", now, err)
	}
}
