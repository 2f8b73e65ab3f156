package cycle

import (
	"errors"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// The subjects the log table shows come from git, once: then from the
// file, which a torn append, a damaged file or a replace ref cannot make
// say anything git would not.
func TestSubjectsAreGitsOnce(t *testing.T) {
	testenv.Slow(t)
	dir, commits, l, hs, want := subjectsRepo(t, subjectsCacheFrom+2)
	missing, _ := gitstore.ParseHash(strings.Repeat("ab", 20))
	hs = append(hs, missing)
	check := func(when string, lie map[gitstore.Hash]string) {
		t.Helper()
		got, errs, err := l.Subjects(hs)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			w := want[h]
			if s, ok := lie[h]; ok {
				w = s
			}
			if h == missing {
				if !errors.Is(errs[i], gitstore.ErrObjectNotFound) {
					t.Errorf("%s: a missing commit gives %q, %v", when, got[i], errs[i])
				}
				continue
			}
			if errs[i] != nil || got[i] != w {
				t.Errorf("%s: %s has subject %q (%v), want %q", when, h.Short(), got[i], errs[i], w)
			}
		}
	}
	check("first", nil)
	kept, intact := readSubjects(l.subjectsPath())
	if !intact || len(kept) != len(commits) {
		t.Fatalf("the file keeps %d subjects (intact %v), want %d", len(kept), intact, len(commits))
	}
	// An entry written with its CRC is believed: the file is read.
	data, _ := os.ReadFile(l.subjectsPath())
	os.WriteFile(l.subjectsPath(), appendSubject(data, hs[0], "kept, not read"), 0o600)
	check("from the file", map[gitstore.Hash]string{hs[0]: "kept, not read"})

	// A torn append: the entries before it are read, git answers the rest,
	// and the file is written anew.
	os.WriteFile(l.subjectsPath(), append([]byte(subjectsMagic), appendSubject(nil, hs[1], want[hs[1]])[:30]...), 0o600)
	check("after a torn append", nil)
	if kept, intact := readSubjects(l.subjectsPath()); !intact || len(kept) != len(commits) {
		t.Errorf("after a torn append the file keeps %d (intact %v)", len(kept), intact)
	}
	// A flipped byte fails its CRC.
	data, _ = os.ReadFile(l.subjectsPath())
	data[len(subjectsMagic)+25] ^= 1
	os.WriteFile(l.subjectsPath(), data, 0o600)
	check("after a flipped byte", nil)

	// A file of the earlier format (subjects cut at their first line) is
	// not believed.
	os.WriteFile(l.subjectsPath(), append([]byte("git-evolve subjects 2\n"), appendSubject(nil, hs[0], "an earlier format's")...), 0o600)
	check("after a file of the earlier format", nil)

	// With a replace ref, git's answer is the replacement's: the file is
	// not used.
	data, _ = os.ReadFile(l.subjectsPath())
	os.WriteFile(l.subjectsPath(), appendSubject(data, hs[0], "kept, not read"), 0o600)
	git(t, dir, "replace", "--graft", commits[1])
	check("with a replace ref", nil)
}

// A question about a few commits (log -n 20) reads the file's end only:
// what git answered once is read back from there, a torn or foreign file
// is not believed, and a replace ref still means git answers.
func TestSubjectsFromTheTail(t *testing.T) {
	dir, commits, l, hs, want := subjectsRepo(t, 4)
	check := func(when string, lie map[gitstore.Hash]string) {
		t.Helper()
		got, errs, err := l.Subjects(hs[:2])
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hs[:2] {
			w := want[h]
			if s, ok := lie[h]; ok {
				w = s
			}
			if errs[i] != nil || got[i] != w {
				t.Errorf("%s: %s has subject %q (%v), want %q", when, h.Short(), got[i], errs[i], w)
			}
		}
	}
	check("first", nil) // from git, then appended
	if kept, intact := readSubjects(l.subjectsPath()); !intact || len(kept) != 2 {
		t.Fatalf("the file keeps %d subjects (intact %v), want 2", len(kept), intact)
	}
	// What the file says is believed: it was read, not git.
	data, _ := os.ReadFile(l.subjectsPath())
	lied := appendSubject(data, hs[0], "kept, not read")
	os.WriteFile(l.subjectsPath(), lied, 0o600)
	check("from the tail", map[gitstore.Hash]string{hs[0]: "kept, not read"})
	// Far from the end (more than subjectTail bytes of other entries
	// since), an entry is not looked for: git answers.
	far := lied
	for i := 0; len(far) < len(lied)+subjectTail; i++ {
		far = appendSubject(far, fakeHash(i), strings.Repeat("x", 200))
	}
	os.WriteFile(l.subjectsPath(), far, 0o600)
	check("far from the end", nil)
	// A torn last entry: the file is read from the start instead (the lie
	// before the tear is believed) and written anew without the tear.
	os.WriteFile(l.subjectsPath(), append(lied, appendSubject(nil, hs[1], "torn")[:30]...), 0o600)
	check("after a torn append", map[gitstore.Hash]string{hs[0]: "kept, not read"})
	if _, intact := readSubjects(l.subjectsPath()); !intact {
		t.Error("after a torn append the file is not written anew")
	}
	os.WriteFile(l.subjectsPath(), append(lied, 1, 2, 3), 0o600) // shorter than an entry
	check("after a short torn append", map[gitstore.Hash]string{hs[0]: "kept, not read"})
	if _, intact := readSubjects(l.subjectsPath()); !intact {
		t.Error("after a short torn append the file is not written anew")
	}
	// A file of another format is not read, and is written anew.
	os.WriteFile(l.subjectsPath(), append([]byte("git-evolve subjects 1\n"), lied[len(subjectsMagic):]...), 0o600)
	check("another format", nil)
	if kept, intact := readSubjects(l.subjectsPath()); !intact || len(kept) != 2 {
		t.Errorf("another format: rewritten with %d subjects (intact %v), want 2", len(kept), intact)
	}
	// A replace ref: git's answer.
	os.WriteFile(l.subjectsPath(), lied, 0o600)
	git(t, dir, "replace", "--graft", commits[1])
	check("with a replace ref", nil)
}

func fakeHash(i int) gitstore.Hash {
	var h gitstore.Hash
	h[0], h[1], h[2], h[19] = byte(i>>16), byte(i>>8), byte(i), 0xee
	return h
}

// subjectsRepo is a repository of n commits, its ledger, the commits' names
// and their subjects as git gives them.
func subjectsRepo(t *testing.T, n int) (string, []string, *Ledger, []gitstore.Hash, map[gitstore.Hash]string) {
	t.Helper()
	dir, commits := testRepo(t, n)
	// one whose first paragraph is two lines: git log's %s joins them
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "a subject\non two lines\n\nand a body")
	commits = append(commits, strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")))
	l := openLedger(t, dir)
	var hs []gitstore.Hash
	want := map[gitstore.Hash]string{}
	for _, c := range commits {
		h, _ := gitstore.ParseHash(c)
		hs = append(hs, h)
		want[h] = strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s", c))
	}
	return dir, commits, l, hs, want
}
