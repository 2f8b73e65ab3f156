package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// refAt is the ref's value according to git ("" when it does not exist).
func (r *testRepo) refAt(ref string) string {
	r.t.Helper()
	out, err := r.gitErr("rev-parse", "-q", "--verify", ref)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func TestUpdateRefCompareAndSwap(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(3)
	setEnv(t)
	repo := r.open()

	t.Run("create", func(t *testing.T) {
		ref := "refs/notes/create"
		if err := repo.UpdateRef(ref, cs[0], ZeroHash, "create it"); err != nil {
			t.Fatalf("UpdateRef: %v", err)
		}
		if got := r.refAt(ref); got != cs[0].String() {
			t.Errorf("ref at %q, want %s", got, cs[0])
		}
	})
	t.Run("zero old on an existing ref", func(t *testing.T) {
		ref := "refs/notes/exists"
		r.git("update-ref", ref, cs[0].String())
		err := repo.UpdateRef(ref, cs[1], ZeroHash, "must not exist")
		if !errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRef = %v, want ErrRefChanged", err)
		}
		if got := r.refAt(ref); got != cs[0].String() {
			t.Errorf("ref moved to %q, want it left at %s", got, cs[0])
		}
	})
	t.Run("wrong old", func(t *testing.T) {
		ref := "refs/notes/wrong"
		r.git("update-ref", ref, cs[0].String())
		err := repo.UpdateRef(ref, cs[2], cs[1], "stale")
		if !errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRef = %v, want ErrRefChanged", err)
		}
		if got := r.refAt(ref); got != cs[0].String() {
			t.Errorf("ref moved to %q, want it left at %s", got, cs[0])
		}
	})
	t.Run("old given, ref missing", func(t *testing.T) {
		ref := "refs/notes/missing"
		err := repo.UpdateRef(ref, cs[2], cs[1], "stale")
		if !errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRef = %v, want ErrRefChanged", err)
		}
		if got := r.refAt(ref); got != "" {
			t.Errorf("ref created at %q", got)
		}
	})
	t.Run("locked by another writer", func(t *testing.T) {
		ref := "refs/notes/locked"
		r.git("update-ref", ref, cs[0].String())
		lock := filepath.Join(r.dir, ".git", ref+".lock")
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := repo.UpdateRef(ref, cs[1], cs[0], "locked")
		os.Remove(lock)
		var locked *LockedError
		if !errors.As(err, &locked) || errors.Is(err, ErrRefChanged) || !strings.Contains(err.Error(), ".lock") {
			t.Errorf("UpdateRef = %v, want a *LockedError naming the lock, not ErrRefChanged", err)
		}
		if got := r.refAt(ref); got != cs[0].String() {
			t.Errorf("ref moved to %q", got)
		}
	})
	t.Run("correct old moves it, with a reflog", func(t *testing.T) {
		ref := testNotesRef
		if err := repo.UpdateRef(ref, cs[0], ZeroHash, "first write"); err != nil {
			t.Fatal(err)
		}
		if err := repo.UpdateRef(ref, cs[1], cs[0], "second write"); err != nil {
			t.Fatalf("UpdateRef with the right old value: %v", err)
		}
		if got := r.refAt(ref); got != cs[1].String() {
			t.Errorf("ref at %q, want %s", got, cs[1])
		}
		log := strings.Split(strings.TrimSpace(r.git("reflog", "show", "--format=%H %gs", ref)), "\n")
		want := []string{cs[1].String() + " second write", cs[0].String() + " first write"}
		if strings.Join(log, "\n") != strings.Join(want, "\n") {
			t.Errorf("reflog:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("other git failure is not a race", func(t *testing.T) {
		err := repo.UpdateRef("refs/notes/bad..name", cs[0], ZeroHash, "x")
		if err == nil || errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRef on an invalid name = %v, want a plain error", err)
		}
	})
}

// CommitNotes moves the ledger only if nobody else did first.
func TestCommitNotesLosesRace(t *testing.T) {
	t.Run("stale snapshot", func(t *testing.T) {
		r := newRepo(t)
		cs := r.makeCommits(3)
		setEnv(t)
		repo := r.open()
		s1 := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), map[Hash]string{cs[0]: "a\n"}, nil)
		r.git("notes", "--ref=evolve", "add", "-m", "other writer", cs[1].String())
		theirs := r.refAt(testNotesRef)
		tree := mustApply(t, repo, s1, map[Hash]string{cs[2]: "mine\n"}, nil)
		a, c := testIdentity(t, repo)
		if _, err := s1.CommitNotes(testNotesRef, tree, "mine", a, c); !errors.Is(err, ErrRefChanged) {
			t.Errorf("CommitNotes on a stale snapshot = %v, want ErrRefChanged", err)
		}
		if got := r.refAt(testNotesRef); got != theirs {
			t.Errorf("ledger moved to %s, want the other writer's %s", got, theirs)
		}
	})
	t.Run("empty snapshot, ledger created meanwhile", func(t *testing.T) {
		r := newRepo(t)
		cs := r.makeCommits(2)
		setEnv(t)
		repo := r.open()
		empty := mustReadNotes(t, repo, testNotesRef)
		r.git("notes", "--ref=evolve", "add", "-m", "other writer", cs[0].String())
		theirs := r.refAt(testNotesRef)
		tree := mustApply(t, repo, empty, map[Hash]string{cs[1]: "mine\n"}, nil)
		a, c := testIdentity(t, repo)
		if _, err := empty.CommitNotes(testNotesRef, tree, "mine", a, c); !errors.Is(err, ErrRefChanged) {
			t.Errorf("CommitNotes on an empty snapshot of a ledger created meanwhile = %v, want ErrRefChanged", err)
		}
		if got := r.refAt(testNotesRef); got != theirs {
			t.Errorf("ledger moved to %s, want the other writer's %s", got, theirs)
		}
	})
}

func TestRefHash(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	r.git("update-ref", testNotesRef, cs[0].String())
	r.git("symbolic-ref", "refs/notes/alias", testNotesRef)
	r.git("symbolic-ref", "refs/notes/dangling", "refs/notes/nowhere")
	setEnv(t)
	repo := r.open()
	for _, tc := range []struct {
		ref  string
		want Hash
		ok   bool
	}{
		{testNotesRef, cs[0], true},
		{"refs/notes/alias", cs[0], true},
		{"HEAD", cs[1], true},
		{"refs/heads/main", cs[1], true},
		{"refs/notes/none", ZeroHash, false},
		{"refs/notes/dangling", ZeroHash, false},
	} {
		h, ok, err := repo.RefHash(tc.ref)
		if err != nil || ok != tc.ok || h != tc.want {
			t.Errorf("RefHash(%s) = %s, %v, %v; want %s, %v", tc.ref, h, ok, err, tc.want, tc.ok)
		}
	}
	// Packed refs read the same.
	r.git("pack-refs", "--all")
	repo2 := r.open()
	if h, ok, err := repo2.RefHash(testNotesRef); err != nil || !ok || h != cs[0] {
		t.Errorf("RefHash of a packed ref = %s, %v, %v; want %s", h, ok, err, cs[0])
	}
	// packed-refs is read once, and again when another git rewrites it.
	r.git("update-ref", testNotesRef, cs[1].String())
	r.git("pack-refs", "--all")
	if h, ok, err := repo2.RefHash(testNotesRef); err != nil || !ok || h != cs[1] {
		t.Errorf("RefHash of a ref packed again = %s, %v, %v; want %s", h, ok, err, cs[1])
	}
	r.git("update-ref", "-d", testNotesRef)
	if h, ok, err := repo2.RefHash(testNotesRef); err != nil || ok {
		t.Errorf("RefHash of a packed ref deleted = %s, %v, %v; want none", h, ok, err)
	}
}

func TestLookupCommits(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(3)
	r.git("branch", "topic", cs[0].String())
	r.git("tag", "-a", "-m", "annotated", "v1", cs[1].String())
	r.git("tag", "light", cs[2].String())
	treeTag := strings.TrimSpace(r.git("rev-parse", "HEAD^{tree}"))
	r.git("tag", "-a", "-m", "tree tag", "treetag", treeTag)
	setEnv(t)
	repo := r.open()

	short := cs[1].String()[:7]
	missing := fakeObj(1).String()
	tagObj := strings.TrimSpace(r.git("rev-parse", "v1"))
	rows := []struct {
		rev     string
		ok      bool
		errWord string // in the error message when !ok
	}{
		{cs[0].String(), true, ""},
		{short, true, ""},
		{"HEAD~1", true, ""},
		{"HEAD", true, ""},
		{"main", true, ""},
		{"topic", true, ""},
		{"refs/heads/topic", true, ""},
		{"v1", true, ""},
		{"light", true, ""},
		{"main^{/commit 1}", true, ""},
		{"HEAD^{tree}", false, "names a tree, not a commit"},
		{"HEAD:file.txt", false, "names a blob, not a commit"},
		{"treetag", false, "not a commit"},
		{"nope", false, "names no commit"},
		{missing, false, "names no commit"},
		{"HEAD~10", false, "names no commit"},
		{"", false, "not a revision"},
		{"-h", false, "not a revision"},
		{"--all", false, "not a revision"},
		{"HEAD\nmain", false, "not a revision"},
		// full names that are not commits: all at once, they are more
		// than lookupInOne, and their types are asked in one exchange
		{tagObj, true, ""},
		{treeTag, false, "names a tree, not a commit"},
		{strings.ToUpper(cs[2].String()), true, ""},
	}
	// The independent answer: git rev-parse, one rev at a time.
	want := make([]Hash, len(rows))
	for i, row := range rows {
		if row.ok {
			want[i] = r.hash("rev-parse", "--verify", "-q", row.rev+"^{commit}")
		} else if row.rev != "" && !strings.HasPrefix(row.rev, "-") && !strings.Contains(row.rev, "\n") {
			if out, err := r.gitErr("rev-parse", "--verify", "-q", row.rev+"^{commit}"); err == nil {
				t.Fatalf("premise: git resolves %q to %s", row.rev, out)
			}
		}
	}

	check := func(t *testing.T, i int, h Hash, err error) {
		t.Helper()
		row := rows[i]
		if row.ok {
			if err != nil || h != want[i] {
				t.Errorf("%q: got %s, %v; want %s", row.rev, h, err, want[i])
			}
			return
		}
		var re *RevisionError
		if !errors.As(err, &re) {
			t.Errorf("%q: got %s, %v; want a *RevisionError", row.rev, h, err)
			return
		}
		if re.Rev != row.rev || !strings.Contains(err.Error(), row.errWord) {
			t.Errorf("%q: error %q (Rev %q), want one about %q", row.rev, err, re.Rev, row.errWord)
		}
		if !h.IsZero() {
			t.Errorf("%q: got hash %s with an error", row.rev, h)
		}
	}

	if len(rows) < lookupInOne {
		t.Fatalf("premise: %d rows, fewer than lookupInOne (%d)", len(rows), lookupInOne)
	}
	t.Run("all at once", func(t *testing.T) {
		revs := make([]string, len(rows))
		for i, row := range rows {
			revs[i] = row.rev
		}
		hs, errs, err := repo.LookupCommits(revs...)
		if err != nil {
			t.Fatalf("LookupCommits: %v", err)
		}
		if len(hs) != len(rows) || len(errs) != len(rows) {
			t.Fatalf("LookupCommits answered %d/%d of %d", len(hs), len(errs), len(rows))
		}
		for i := range rows {
			check(t, i, hs[i], errs[i])
		}
	})
	t.Run("one at a time", func(t *testing.T) {
		for i, row := range rows {
			hs, errs, err := repo.LookupCommits(row.rev)
			if err != nil {
				t.Fatalf("LookupCommits(%q): %v", row.rev, err)
			}
			check(t, i, hs[0], errs[0])
		}
	})
	t.Run("ResolveCommits", func(t *testing.T) {
		hs, err := repo.ResolveCommits("HEAD", "topic", short)
		if err != nil || len(hs) != 3 || hs[0] != cs[2] || hs[1] != cs[0] || hs[2] != cs[1] {
			t.Errorf("ResolveCommits = %v, %v", hs, err)
		}
		_, err = repo.ResolveCommits("HEAD", "nope", "HEAD^{tree}")
		var re *RevisionError
		if !errors.As(err, &re) || re.Rev != "nope" {
			t.Errorf("ResolveCommits with bad revs = %v, want a *RevisionError for the first bad one", err)
		}
		if hs, err := repo.ResolveCommits(); err != nil || len(hs) != 0 {
			t.Errorf("ResolveCommits() = %v, %v", hs, err)
		}
	})
}

// A missing revision with spaces in it is a *RevisionError like any other,
// and the Repo goes on reading.
func TestLookupCommitsWithSpaces(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	revs := []string{"main^{/no such message}", "no such branch", "main^{/commit 0}", "HEAD"}
	hs, errs, err := repo.LookupCommits(revs...)
	if err != nil {
		t.Fatalf("LookupCommits: %v", err)
	}
	for i := 0; i < 2; i++ {
		var re *RevisionError
		if !errors.As(errs[i], &re) || !strings.Contains(re.Error(), "names no commit") {
			t.Errorf("LookupCommits(%q) = %s, %v; want a *RevisionError", revs[i], hs[i], errs[i])
		}
	}
	if errs[2] != nil || hs[2] != cs[0] || errs[3] != nil || hs[3] != cs[1] {
		t.Errorf("LookupCommits after missing revisions = %v, %v", hs[2:], errs[2:])
	}
	if c, err := repo.Commit(cs[1]); err != nil || c.Hash != cs[1] {
		t.Errorf("Commit after missing revisions: %v", err)
	}
}

// Abbreviated names that several objects share: LookupCommits agrees with
// git rev-parse <name>^{commit}, which resolves a prefix that only one
// commit has and calls one that several commits share ambiguous.
func TestLookupCommitsShortNames(t *testing.T) {
	setEnv(t)
	fx := gitNotesFixture(t)
	r := &testRepo{t: t, dir: fx.dir}
	byPrefix := map[string][]string{}
	for _, name := range strings.Fields(r.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")) {
		byPrefix[name[:4]] = append(byPrefix[name[:4]], name)
	}
	var prefixes []string
	for p, names := range byPrefix {
		if len(names) > 1 {
			prefixes = append(prefixes, p)
		}
	}
	sort.Strings(prefixes)
	repo := r.open()
	hs, errs, err := repo.LookupCommits(append(prefixes, "HEAD")...)
	if err != nil {
		t.Fatal(err)
	}
	ambiguous, resolved := 0, 0
	for i, p := range prefixes {
		out, gerr := r.gitErr("rev-parse", "--verify", p+"^{commit}")
		var re *RevisionError
		switch {
		case gerr == nil:
			resolved++
			if want := strings.TrimSpace(out); errs[i] != nil || hs[i].String() != want {
				t.Errorf("LookupCommits(%q) = %s, %v; git resolves it to %s", p, hs[i], errs[i], want)
			}
		case !errors.As(errs[i], &re):
			t.Errorf("LookupCommits(%q) = %s, %v; git fails (%v), want a *RevisionError", p, hs[i], errs[i], gerr)
		case strings.Contains(gerr.Error(), "ambiguous"):
			ambiguous++
			if !strings.Contains(re.Error(), "ambiguous") {
				t.Errorf("LookupCommits(%q) = %v; git says it is ambiguous", p, re)
			}
		}
	}
	t.Logf("%d shared prefixes: %d ambiguous, %d resolved by git", len(prefixes), ambiguous, resolved)
	if ambiguous == 0 || resolved == 0 {
		t.Fatalf("premise: %d shared prefixes, %d ambiguous and %d resolved by git; want some of each", len(prefixes), ambiguous, resolved)
	}
	if last := len(prefixes); errs[last] != nil || hs[last] != fx.commits[len(fx.commits)-1] {
		t.Errorf("HEAD after the short names = %s, %v", hs[last], errs[last])
	}
}

func TestRevList(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(4)
	r.git("branch", "topic", cs[1].String())
	setEnv(t)
	repo := r.open()
	for _, args := range [][]string{{"main"}, {"topic..main"}, {"topic"}, {"main", "^" + cs[2].String()}} {
		got, err := repo.RevList(args...)
		if err != nil {
			t.Fatalf("RevList(%v): %v", args, err)
		}
		want := strings.Fields(r.git(append([]string{"rev-list"}, args...)...))
		if len(got) != len(want) {
			t.Fatalf("RevList(%v) = %d commits, want %d", args, len(got), len(want))
		}
		for i := range want {
			if got[i].String() != want[i] {
				t.Errorf("RevList(%v)[%d] = %s, want %s", args, i, got[i], want[i])
			}
		}
	}
	if _, err := repo.RevList("nope"); err == nil {
		t.Error("RevList(nope) succeeded")
	}
}

func TestRevListBoundary(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(4)
	r.git("branch", "topic", cs[1].String())
	setEnv(t)
	repo := r.open()
	commits, boundary, err := repo.RevListBoundary("topic..main")
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 2 || commits[0] != cs[3] || commits[1] != cs[2] {
		t.Errorf("commits = %v, want %s %s", commits, cs[3], cs[2])
	}
	if len(boundary) != 1 || boundary[0] != cs[1] {
		t.Errorf("boundary = %v, want %s (where the range starts)", boundary, cs[1])
	}
	if commits, boundary, err := repo.RevListBoundary("main..main"); err != nil || len(commits) != 0 || len(boundary) != 0 {
		t.Errorf("an empty range: %v, %v, %v", commits, boundary, err)
	}
	if _, _, err := repo.RevListBoundary("--output=x"); err == nil {
		t.Error("an option was taken as a range")
	}
	// A range whose boundary is its start says that start is the other's
	// ancestor: kept, so that IsAncestor walks nothing.
	if _, ok := repo.knownBase(cs[1], cs[3]); ok {
		t.Error("a range of names other than full ones kept a merge base")
	}
	if _, descends, err := repo.RevListSince(cs[1], cs[3]); err != nil || !descends {
		t.Fatalf("RevListSince(%s, %s): %v, %v", cs[1].Short(), cs[3].Short(), descends, err)
	}
	if mb, ok := repo.knownBase(cs[1], cs[3]); !ok || !mb.ok || mb.base != cs[1] {
		t.Errorf("after %s..%s: merge base kept %v %v, want %s", cs[1].Short(), cs[3].Short(), mb, ok, cs[1].Short())
	}
	if _, descends, err := repo.RevListSince(cs[3], cs[1]); err != nil || descends {
		t.Fatalf("RevListSince(%s, %s): %v, %v", cs[3].Short(), cs[1].Short(), descends, err)
	}
	if in, err := repo.IsAncestor(cs[3], cs[1]); err != nil || in {
		t.Errorf("IsAncestor(%s, %s) = %v, %v after an empty range; want false", cs[3].Short(), cs[1].Short(), in, err)
	}
}

func TestHasRefsUnder(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	r.git("commit", "-q", "--allow-empty", "-m", "one")
	repo := r.open()
	has := func() bool {
		t.Helper()
		ok, err := repo.HasRefsUnder("refs/replace/")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if has() {
		t.Error("a repository without replace refs has some")
	}
	head := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	r.git("commit", "-q", "--allow-empty", "-m", "two")
	other := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	r.git("update-ref", "refs/replacements/x", head)
	if has() {
		t.Error("refs/replacements/x counted as under refs/replace/")
	}
	r.git("update-ref", "refs/replace/"+head, other)
	if !has() {
		t.Error("a loose replace ref not seen")
	}
	r.git("pack-refs", "--all")
	if !has() {
		t.Error("a packed replace ref not seen")
	}
	r.git("update-ref", "-d", "refs/replace/"+head)
	if has() {
		t.Error("a deleted replace ref still seen")
	}
}

// TrailerLog lets git pass over commits whose message does not name the
// trailer at all; a trailer key written in another case is still one, as
// git's trailer parsing has it.
func TestTrailerLogCase(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	r.git("commit", "-q", "--allow-empty", "-m", "plain")
	r.git("commit", "-q", "--allow-empty", "-m", "upper\n\nEvolve-Cycle: 1\nEvolve-Result: improved")
	r.git("commit", "-q", "--allow-empty", "-m", "lower\n\nevolve-cycle: 2\nEVOLVE-RESULT: regressed")
	r.git("commit", "-q", "--allow-empty", "-m", "in the body only\n\nThe Evolve-Result: trailer is not here.\n\nSigned-off-by: A <a@x>")
	commits, err := r.open().TrailerLog("Evolve-Result", []string{"Evolve-Cycle", "Evolve-Result"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range commits {
		got = append(got, c.Subject+" "+c.Trailers["Evolve-Cycle"]+" "+c.Trailers["Evolve-Result"])
	}
	if want := []string{"lower 2 regressed", "upper 1 improved"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("TrailerLog = %q, want %q", got, want)
	}
}

// ResetRef sets the ref itself: a symbolic ref someone made is replaced or
// removed, and the ref it named is left alone; the compare-and-swap holds.
func TestResetRef(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	setEnv(t)
	repo := r.open()
	r.git("update-ref", "refs/heads/keep", cs[1].String())

	r.git("symbolic-ref", "refs/notes/sym", "refs/heads/keep")
	if err := repo.ResetRef("refs/notes/sym", cs[0], cs[0], "stale"); !errors.Is(err, ErrRefChanged) {
		t.Errorf("ResetRef with a stale old = %v, want ErrRefChanged", err)
	}
	if err := repo.ResetRef("refs/notes/sym", cs[0], cs[1], "put back"); err != nil {
		t.Fatalf("ResetRef of a symbolic ref: %v", err)
	}
	if got := r.refAt("refs/notes/sym"); got != cs[0].String() {
		t.Errorf("refs/notes/sym at %q, want %s", got, cs[0])
	}
	if out, err := r.gitErr("symbolic-ref", "-q", "refs/notes/sym"); err == nil {
		t.Errorf("refs/notes/sym is still symbolic: %s", out)
	}
	r.git("symbolic-ref", "refs/notes/gone", "refs/heads/keep")
	if err := repo.ResetRef("refs/notes/gone", ZeroHash, cs[1], "remove"); err != nil {
		t.Fatalf("ResetRef removing a symbolic ref: %v", err)
	}
	if got := r.refAt("refs/notes/gone"); got != "" {
		t.Errorf("refs/notes/gone at %q, want removed", got)
	}
	if got := r.refAt("refs/heads/keep"); got != cs[1].String() {
		t.Errorf("the ref they named moved to %q, want %s", got, cs[1])
	}
	if err := repo.ResetRef("refs/notes/new", cs[0], ZeroHash, "made again"); err != nil {
		t.Fatalf("ResetRef making a ref: %v", err)
	}
	if err := repo.ResetRef("refs/notes/new", cs[1], ZeroHash, "must not exist"); !errors.Is(err, ErrRefChanged) {
		t.Errorf("ResetRef with a zero old on an existing ref = %v, want ErrRefChanged", err)
	}
}

// CheckRevisions takes what rev-list takes (ranges, ^A, A^!) and refuses,
// as a *RevisionError in git's words, what it does not; an argument that
// looks like an option is a revision there too, never an option.
func TestCheckRevisions(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	r.makeCommits(2)
	repo := r.open()
	for _, ok := range [][]string{nil, {"HEAD"}, {"HEAD~1..HEAD"}, {"HEAD~1...HEAD"}, {"^HEAD~1", "HEAD"}, {"HEAD^!"}} {
		if err := repo.CheckRevisions(ok...); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"nosuch"}, {"nosuch..HEAD"}, {"HEAD~9..HEAD"}, {"--output=out.txt"}} {
		err := repo.CheckRevisions(bad...)
		var re *RevisionError
		if !errors.As(err, &re) {
			t.Errorf("%q: %v, want a *RevisionError", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "out.txt")); err == nil {
		t.Error("--output=out.txt was taken as an option")
	}
}
