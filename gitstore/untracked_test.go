package gitstore

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestParseIndexAgreesWithGit reads indexes of versions 2, 3 and 4 and
// checks the paths against git ls-files.
func TestParseIndexAgreesWithGit(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	for _, p := range []string{"a", "b c", "dir/é", "dir/sub/x", "dir-x", "dir0/y", strings.Repeat("long/", 40) + "z"} {
		writeFile(t, filepath.Join(r.dir, p), "content of "+p)
	}
	writeFile(t, filepath.Join(r.dir, "link"), "")
	os.Remove(filepath.Join(r.dir, "link"))
	if err := os.Symlink("a", filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "files")
	writeFile(t, filepath.Join(r.dir, "intent"), "i")
	r.git("add", "-N", "intent") // an extended flag: version 3
	for _, version := range []string{"2", "3", "4"} {
		if version == "2" {
			r.git("rm", "-q", "--cached", "intent")
		} else {
			r.git("add", "-N", "intent")
		}
		r.git("update-index", "--index-version", version)
		data, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := parseIndex(data)
		if err != nil {
			t.Fatalf("version %s: %v", version, err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, fmt.Sprintf("%o %s", e.mode, e.path))
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(r.git("ls-files", "-s", "-z"), "\x00"), "\x00") {
			meta, path, _ := strings.Cut(l, "\t")
			want = append(want, strings.Fields(meta)[0]+" "+path)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("version %s:\n got %q\nwant %q", version, got, want)
		}
	}
	r.git("update-index", "--split-index")
	data, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseIndex(data); !errors.Is(err, errIndexUnsupported) {
		t.Errorf("split index: got %v, want errIndexUnsupported", err)
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add(emptyIndex)
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01" + strings.Repeat("\x00", 60) + "\x00\x01\x00a\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseIndex(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.path == "" {
				t.Fatal("an entry with no path")
			}
		}
	})
}

func FuzzUntrackedCache(f *testing.F) {
	c := &untrackedCache{
		dirs: map[string]*ucDir{
			"":  {key: dirKey{mtime: 1, ctime: -2, ino: 3, dev: 4}, ihash: 5, cands: []ucName{{name: "x", dir: true}}, gone: []string{"y"}},
			"a": {},
		},
		decisions: map[string]ucDecision{"x": {dir: true, ignored: true}, "a/b": {}},
	}
	f.Add(c.encode())
	f.Add([]byte(untrackedCacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeUntrackedCache(data)
		if err != nil {
			return
		}
		again, err := decodeUntrackedCache(c.encode())
		if err != nil {
			t.Fatalf("a cache read back does not decode: %v", err)
		}
		if !reflect.DeepEqual(normalCache(c), normalCache(again)) {
			t.Fatal("a cache read back differs")
		}
	})
}

// normalCache makes empty slices nil, for comparisons.
func normalCache(c *untrackedCache) *untrackedCache {
	for _, l := range c.dirs {
		if len(l.cands) == 0 {
			l.cands = nil
		}
		if len(l.gone) == 0 {
			l.gone = nil
		}
	}
	return c
}

// scanTree is a working tree the untracked scan is checked on against git.
type scanTree struct {
	*testRepo
}

// newScanTree makes a repository whose directories' keys the scan trusts
// at once (step makes sure they move).
func newScanTree(t *testing.T) *scanTree {
	setEnv(t)
	r := newRepo(t)
	old := untrackedRacySlack
	untrackedRacySlack = -time.Hour
	t.Cleanup(func() { untrackedRacySlack = old })
	return &scanTree{testRepo: r}
}

// step runs change, makes sure each directory whose listing it changed has
// a new key (on a file system whose clock ticks coarsely, two changes can
// share one: the scan's slack covers that in use, and here a name is added
// and removed until the key moves), then scans and compares with git.
func (s *scanTree) step(what string, change func()) *untrackedScan {
	s.t.Helper()
	before := s.listings()
	change()
	for d, names := range s.listings() {
		if old, ok := before[d]; ok && old.names != names.names && old.key == names.key {
			for i := 0; ; i++ {
				time.Sleep(time.Millisecond)
				nudge := filepath.Join(s.dir, filepath.FromSlash(d), ".nudge")
				writeFile(s.t, nudge, "")
				os.Remove(nudge)
				if k := s.keyOf(d); k != old.key {
					break
				}
				if i > 5000 {
					s.t.Fatalf("%s: the key of %q does not change", what, d)
				}
			}
		}
	}
	return s.check(what)
}

type listing struct {
	names string
	key   dirKey
}

func (s *scanTree) keyOf(d string) dirKey {
	fi, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(d)))
	if err != nil {
		return dirKey{}
	}
	k, _ := statKey(fi)
	return k
}

// listings lists every directory of the working tree but .git.
func (s *scanTree) listings() map[string]listing {
	out := map[string]listing{}
	filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(s.dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		ents, _ := os.ReadDir(p)
		var names []string
		for _, e := range ents {
			names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.IsDir()))
		}
		out[rel] = listing{names: strings.Join(names, "/"), key: s.keyOf(rel)}
		return nil
	})
	return out
}

// check scans and compares with git ls-files --others --exclude-standard
// and git ls-files --deleted.
func (s *scanTree) check(what string) *untrackedScan {
	s.t.Helper()
	repo, err := Open(s.dir)
	if err != nil {
		s.t.Fatal(err)
	}
	defer repo.Close()
	got, ok, err := repo.scanUntracked(s.dir)
	if err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	if !ok {
		return nil
	}
	split := func(out string) []string {
		var l []string
		seen := map[string]bool{}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" && !seen[p] {
				seen[p] = true
				l = append(l, p)
			}
		}
		sort.Strings(l)
		return l
	}
	wantU := split(s.git("ls-files", "-z", "--others", "--exclude-standard"))
	wantM := split(s.git("ls-files", "-z", "--deleted"))
	s.t.Logf("%s: read %d asked %d untracked %q", what, got.Read, got.Asked, got.Untracked)
	if !reflect.DeepEqual(got.Untracked, wantU) {
		s.t.Errorf("%s: untracked\n got %q\nwant %q", what, got.Untracked, wantU)
	}
	if !reflect.DeepEqual(got.Missing, wantM) {
		s.t.Errorf("%s: missing\n got %q\nwant %q", what, got.Missing, wantM)
	}
	return got
}

func (s *scanTree) remove(p string) {
	if err := os.RemoveAll(filepath.Join(s.dir, p)); err != nil {
		s.t.Fatal(err)
	}
}

// TestUntrackedScanAgreesWithGit walks a working tree through the changes
// that move names between untracked, ignored, tracked and gone, and checks
// each scan against git, and that an unchanged tree is answered from the
// cache alone.
func TestUntrackedScanAgreesWithGit(t *testing.T) {
	s := newScanTree(t)
	s.write("src/a.go", "a")
	s.write("src/deep/b.go", "b")
	s.write("docs/readme", "r")
	s.write(".gitignore", "*.log\nbuild/\n/top-only\n")
	s.write("build/keep", "forced")
	s.git("add", "-A")
	s.git("add", "-f", "build/keep")
	s.git("commit", "-qm", "base")

	s.step("clean", func() {})
	if got := s.step("unchanged", func() {}); got == nil || got.Read != 0 || got.Asked != 0 {
		t.Fatalf("an unchanged tree: %+v, want no directory read and nothing asked", got)
	}
	s.step("untracked files", func() {
		s.write("new.txt", "n")
		s.write("src/deep/new.go", "n")
		s.write("src/x.log", "ignored")
		s.write("top-only", "ignored at the top")
		s.write("src/top-only", "not ignored below it")
	})
	if got := s.step("unchanged again", func() {}); got == nil || got.Asked != 0 {
		t.Fatalf("decisions not kept: %+v", got)
	}
	s.step("in an ignored tracked directory", func() {
		s.write("build/new", "n")
		s.write("build/.gitignore", "!new\n")
		s.write("build/sub/deeper", "d")
	})
	s.step("untracked directories", func() {
		s.write("gen/one", "1")
		s.write("gen/two/three", "3")
		s.write("gen/skip.log", "l")
		s.write("logs/a.log", "only ignored files")
		if err := os.MkdirAll(filepath.Join(s.dir, "empty/inner"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	s.step("a rule that takes a name back", func() {
		s.write("src/.gitignore", "!keep.log\n")
		s.write("src/keep.log", "k")
	})
	s.step("a file in a directory that held only ignored files", func() { s.write("logs/b.txt", "b") })
	s.step("a .gitignore in an untracked directory", func() { s.write("gen/.gitignore", "one\n") })
	s.step("the same .gitignore, same size, other rule", func() { s.write("gen/.gitignore", "two\n") })
	s.step("a tracked .gitignore changed", func() { s.write(".gitignore", "*.log\nbuild/\n/top-only\nnew.txt\n") })
	s.step("info/exclude", func() { s.write(".git/info/exclude", "gen/\n") })
	s.step("core.excludesFile's default", func() {
		writeFile(t, filepath.Join(testRoot, "home", ".config", "git", "ignore"), "docs/\n*.go\n")
	})
	os.Remove(filepath.Join(testRoot, "home", ".config", "git", "ignore"))
	s.step("core.excludesFile gone", func() {})
	s.step("git add and git rm --cached", func() {
		s.git("add", "new.txt", "-f")
		s.git("rm", "-q", "--cached", "src/a.go")
	})
	s.step("deleted files and directories", func() {
		s.remove("src/deep")
		s.remove("docs/readme")
	})
	s.step("a tracked directory untracked", func() { s.git("rm", "-rq", "--cached", "docs") })
	s.step("a commit", func() { s.git("add", "-A"); s.git("commit", "-qm", "more") })
	s.step("names git quotes", func() {
		s.write("with space", "s")
		s.write("tab\there", "t")
		s.write("new\nline", "n")
		s.write("ünï/çödé", "u")
	})
	s.step("a symbolic link to a directory", func() {
		if err := os.Symlink("src", filepath.Join(s.dir, "srclink")); err != nil {
			t.Fatal(err)
		}
	})
	s.step("the cache damaged", func() {
		writeFile(t, filepath.Join(s.dir, ".git", "evolve", "untracked.cache"), "garbage")
	})
	s.step("names git check-ignore reads as pathspecs", func() {
		s.write("keep.tmp", "k")
		s.write(".gitignore", "*.log\nbuild/\n*.tmp\nx\n")
		s.git("add", "-f", "keep.tmp")
		for _, n := range []string{"*.tmp", ":x", ":!y", "a\\b", "[ab]"} {
			s.write(n, "odd")
		}
	})
	s.step("odd names gone", func() {
		for _, n := range []string{"*.tmp", ":x", ":!y", "a\\b", "[ab]"} {
			s.remove(n)
		}
	})
	blob := strings.TrimSpace(s.gitIn("gitlink", "hash-object", "-w", "--stdin"))
	head := strings.TrimSpace(s.git("rev-parse", "HEAD"))
	s.step("a gitlink with files in its directory", func() {
		s.write("sub/inner", "i")
		s.git("update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	})
	s.step("the gitlink a file in the index", func() {
		s.git("update-index", "--cacheinfo", "100644,"+blob+",sub")
	})
	s.step("the gitlink gone", func() { s.git("rm", "-q", "--cached", "sub") })
	s.step("config.worktree without extensions.worktreeConfig", func() {
		s.write("foo.bar", "f")
		s.write(".git/config.worktree", "[core]\n\texcludesFile = /nonexistent/elsewhere\n")
	})
	s.step("the ignore file git reads", func() {
		writeFile(t, filepath.Join(testRoot, "home", ".config", "git", "ignore"), "*.bar\n")
	})
	os.Remove(filepath.Join(testRoot, "home", ".config", "git", "ignore"))
	s.step("that file gone", func() {})
	s.git("config", "core.ignorecase", "2")
	if got := s.step("core.ignoreCase as a number", func() {}); got != nil {
		t.Errorf("core.ignoreCase=2: the scan answered, want it to decline")
	}
	s.git("config", "--unset", "core.ignorecase")
	if got := s.step("a nested repository", func() { s.git("init", "-q", "inner") }); got != nil {
		t.Errorf("a nested repository: the scan answered, want it to decline")
	}
}

// TestUntrackedScanTopThroughLink scans a working tree whose top was
// found through a symbolic link.
func TestUntrackedScanTopThroughLink(t *testing.T) {
	s := newScanTree(t)
	s.write("tracked", "t")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")
	s.write("untracked.txt", "u")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(s.dir, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", filepath.Join(s.dir, ".git"))
	repo := openDir(t, link)
	top, err := repo.WorkTree()
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := repo.scanUntracked(top)
	if err != nil {
		t.Fatal(err)
	}
	if ok && (!reflect.DeepEqual(got.Untracked, []string{"untracked.txt"}) || len(got.Missing) != 0) {
		t.Errorf("through a link: untracked %q, missing %q; want [untracked.txt] and none", got.Untracked, got.Missing)
	}
}

// TestUntrackedScanUnreadable declines a directory it cannot read (git
// warns and goes on).
func TestUntrackedScanUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	s := newScanTree(t)
	s.write("tracked", "t")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")
	s.write("locked/f", "f")
	if err := os.Chmod(filepath.Join(s.dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(s.dir, "locked"), 0o755)
	if got := s.check("unreadable"); got != nil {
		t.Errorf("an unreadable directory: the scan answered %+v, want it to decline", got)
	}
}

// TestUntrackedScanRandom checks the scan against git after each of many
// random changes to a small tree.
func TestUntrackedScanRandom(t *testing.T) {
	s := newScanTree(t)
	s.write("a/f", "f")
	s.write(".gitignore", "*.o\n")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dirs := []string{"", "a/", "a/b/", "c/", "c/d/", "e/"}
	names := []string{"x", "y.o", "z", "build", ".gitignore"}
	rules := []string{"*.o\n", "z\n", "b/\n", "!y.o\n*.o\n", "*.o\n!y.o\n", "/x\n", "c\n", "z\n!b/\n", ""}
	pick := func(l []string) string { return l[rng.Intn(len(l))] }
	declined := 0
	steps := 150
	if testing.Short() {
		steps = 40
	}
	for i := 0; i < steps; i++ {
		d, n := pick(dirs), pick(names)
		var what string
		change := func() {}
		switch op := rng.Intn(8); op {
		case 0, 1:
			what = "write " + d + n
			content := fmt.Sprint(rng.Intn(3))
			if n == ".gitignore" {
				content = pick(rules)
			}
			change = func() {
				if fi, err := os.Stat(filepath.Join(s.dir, d+n)); err == nil && fi.IsDir() {
					return
				}
				s.write(d+n, content)
			}
		case 2:
			what = "remove " + d + n
			change = func() { s.remove(d + n) }
		case 3:
			what = "remove " + d
			if d == "" {
				continue
			}
			change = func() { s.remove(d) }
		case 4:
			what = "add " + d
			change = func() { s.gitErr("add", "-A", "--", "./"+d) }
		case 5:
			what = "rm --cached " + d + n
			change = func() { s.gitErr("rm", "-rq", "--cached", "--ignore-unmatch", "--", d+n) }
		case 6:
			what = "commit"
			change = func() { s.gitErr("commit", "-qam", "c") }
		case 7:
			what = "info/exclude"
			rule := pick(rules)
			change = func() { s.write(".git/info/exclude", rule) }
		}
		if s.step(fmt.Sprintf("step %d: %s", i, what), change) == nil {
			declined++
		}
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
	t.Logf("declined %d of %d", declined, steps)
	if declined > steps/2 {
		t.Errorf("the scan declined %d of %d steps", declined, steps)
	}
}

// TestUntrackedScanRacy keeps no listing of a directory changed too
// recently to trust its key.
func TestUntrackedScanRacy(t *testing.T) {
	s := newScanTree(t)
	s.write("old/f", "f")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")
	past := time.Now().Add(-time.Hour)
	for _, d := range []string{".", "old"} {
		if err := os.Chtimes(filepath.Join(s.dir, d), past, past); err != nil {
			t.Fatal(err)
		}
	}
	// Chtimes sets the change time to now: the key is recent.
	untrackedRacySlack = 2 * time.Second
	s.check("fresh")
	c := readUntrackedCache(filepath.Join(s.dir, ".git", filepath.FromSlash(untrackedCacheFile)))
	if len(c.dirs) != 0 {
		t.Errorf("listings kept for directories changed just now: %v", c.dirs)
	}
	untrackedRacySlack = -time.Hour
	s.check("trusted")
	c = readUntrackedCache(filepath.Join(s.dir, ".git", filepath.FromSlash(untrackedCacheFile)))
	if len(c.dirs) != 2 {
		t.Errorf("kept %d listings, want 2", len(c.dirs))
	}
}
