package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseHash(t *testing.T) {
	lower := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		in   string
		ok   bool
		want string
	}{
		{lower, true, lower},
		{strings.ToUpper(lower), true, lower},
		{"", false, ""},
		{lower[:39], false, ""},
		{lower + "8", false, ""},
		{"g" + lower[1:], false, ""},
		{" " + lower[1:], false, ""},
	} {
		h, err := ParseHash(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseHash(%q) error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (h.String() != tc.want || h.Short() != tc.want[:7] || h.IsZero()) {
			t.Errorf("ParseHash(%q) = %s (%s)", tc.in, h, h.Short())
		}
	}
	if !ZeroHash.IsZero() || ZeroHash.String() != strings.Repeat("0", 40) {
		t.Errorf("ZeroHash = %s", ZeroHash)
	}
}

func TestBlobs(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 1<<16)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"text", []byte("a note\n")},
		{"binary", []byte{0, 1, 2, 255, '\n', 0}},
		{"large", big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := repo.WriteBlob(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(r.gitIn(string(tc.data), "hash-object", "--stdin")); h.String() != want {
				t.Errorf("WriteBlob = %s, git hash-object = %s", h, want)
			}
			if typ := strings.TrimSpace(r.git("cat-file", "-t", h.String())); typ != "blob" {
				t.Errorf("git cat-file -t = %s", typ)
			}
			if got := r.git("cat-file", "blob", h.String()); got != string(tc.data) {
				t.Errorf("git reads %d bytes back, want %d", len(got), len(tc.data))
			}
			if ok, err := repo.HasObject(h); !ok || err != nil {
				t.Errorf("HasObject = %v, %v after WriteBlob", ok, err)
			}
			// And gitstore reads what git wrote.
			gh := mustHash(t, strings.TrimSpace(r.gitIn(string(tc.data)+"git", "hash-object", "-w", "--stdin")))
			got, err := repo.ReadBlob(gh)
			if err != nil || string(got) != string(tc.data)+"git" {
				t.Errorf("ReadBlob of git's blob: %d bytes, %v", len(got), err)
			}
		})
	}
	if _, err := repo.ReadBlob(fakeObj(1)); !errors.Is(err, ErrObjectNotFound) {
		t.Errorf("ReadBlob of a missing blob = %v, want ErrObjectNotFound", err)
	}
	if ok, err := repo.HasObject(fakeObj(1)); ok || err != nil {
		t.Errorf("HasObject of a missing object = %v, %v", ok, err)
	}
	r.fsckClean()
}

func TestCommits(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(2)
	// A merge commit with a multi-line message and zoned dates, by C git.
	env := gitEnv("GIT_AUTHOR_DATE=@1700000100 +0200", "GIT_COMMITTER_DATE=@1700000200 -0330")
	out, err := runGitCmd(r.dir, "", env, "commit-tree", "-p", cs[0].String(), "-p", cs[1].String(),
		"-m", "Merge subject", "-m", "Body line.", cs[1].String()+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	merge := mustHash(t, strings.TrimSpace(out))
	setEnv(t)
	repo := r.open()

	t.Run("read", func(t *testing.T) {
		for _, h := range []Hash{cs[0], cs[1], merge} {
			c, err := repo.Commit(h)
			if err != nil {
				t.Fatalf("Commit(%s): %v", h, err)
			}
			f := strings.Split(r.git("log", "-1", "--format=%T%x00%P%x00%an%x00%ae%x00%at%x00%ai%x00%cn%x00%ce%x00%ct%x00%ci%x00%B", h.String()), "\x00")
			var parents []string
			for _, p := range c.Parents {
				parents = append(parents, p.String())
			}
			got := []string{c.Tree.String(), strings.Join(parents, " "), c.Author.Name, c.Author.Email,
				fmt.Sprint(c.Author.When.Unix()), c.Author.When.Format("2006-01-02 15:04:05 -0700"),
				c.Committer.Name, c.Committer.Email, fmt.Sprint(c.Committer.When.Unix()),
				c.Committer.When.Format("2006-01-02 15:04:05 -0700"), c.Message + "\n"}
			if strings.Join(got, "|") != strings.Join(f, "|") {
				t.Errorf("Commit(%s):\n%q\ngit log:\n%q", h.Short(), got, f)
			}
			if c.Hash != h {
				t.Errorf("Commit(%s).Hash = %s", h, c.Hash)
			}
			if subj := strings.TrimSpace(r.git("log", "-1", "--format=%s", h.String())); c.Subject() != subj {
				t.Errorf("Subject = %q, git %q", c.Subject(), subj)
			}
		}
		if _, err := repo.Commit(fakeObj(3)); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("Commit of a missing object = %v, want ErrObjectNotFound", err)
		}
	})
	t.Run("write", func(t *testing.T) {
		tree := r.hash("rev-parse", cs[1].String()+"^{tree}")
		a := Signature{"Ann Ü", "ann@example.com", time.Unix(1700000000, 0).In(time.FixedZone("", 2*3600))}
		c := Signature{"Cal", "cal@example.com", time.Unix(1700000300, 0).In(time.FixedZone("", -(3*3600 + 30*60)))}
		h, err := repo.WriteCommit(tree, []Hash{cs[0], cs[1]}, "subject\n\nbody\n", a, c)
		if err != nil {
			t.Fatal(err)
		}
		got := r.git("log", "-1", "--format=%T %P|%an <%ae> %ad|%cn <%ce> %cd|%B", "--date=raw", h.String())
		want := fmt.Sprintf("%s %s %s|Ann Ü <ann@example.com> 1700000000 +0200|Cal <cal@example.com> 1700000300 -0330|subject\n\nbody\n\n", tree, cs[0], cs[1])
		if got != want {
			t.Errorf("git reads the written commit as\n%q\nwant\n%q", got, want)
		}
		back, err := repo.Commit(h)
		if err != nil || back.Subject() != "subject" || len(back.Parents) != 2 {
			t.Errorf("Commit of the written commit = %+v, %v", back, err)
		}
		r.git("update-ref", "refs/heads/written", h.String())
		r.fsckClean()
	})
}

// A Repo keeps reading after C git packs objects behind it (git gc --auto
// run by a concurrent git command does this).
func TestReadObjectsPackedAfterOpen(t *testing.T) {
	// packedRepo returns an open Repo that has already read from a pack.
	packedRepo := func(t *testing.T) (*testRepo, *Repo, []Hash) {
		r := newRepo(t)
		cs := r.makeCommits(2)
		r.git("repack", "-a", "-d", "-q")
		setEnv(t)
		repo := r.open()
		if _, err := repo.Commit(cs[0]); err != nil {
			t.Fatal(err)
		}
		return r, repo, cs
	}
	t.Run("C git's notes, repacked", func(t *testing.T) {
		r, repo, cs := packedRepo(t)
		r.git("notes", "--ref=evolve", "add", "-m", "by git", cs[1].String())
		r.git("repack", "-d", "-q")
		r.git("prune-packed")
		snap, err := repo.ReadNotes(testNotesRef)
		if err != nil {
			t.Fatalf("ReadNotes after git packed the ledger: %v", err)
		}
		bs, err := snap.Find(cs[1])
		if err != nil || len(bs) != 1 || blobText(t, repo, bs[0]) != "by git\n" {
			t.Errorf("Find = %v, %v", bs, err)
		}
	})
	t.Run("gitstore's own objects, repacked", func(t *testing.T) {
		r, repo, cs := packedRepo(t)
		s := mustWriteNotes(t, repo, testNotesRef, repo.EmptyNotes(), map[Hash]string{cs[0]: "loose\n"}, nil)
		r.git("repack", "-d", "-q")
		r.git("prune-packed")
		if _, err := repo.NotesAt(s.Commit()); err != nil {
			t.Fatalf("NotesAt after git packed the ledger: %v", err)
		}
		if got := singleNotes(t, walkNotes(t, mustReadNotes(t, repo, testNotesRef))); len(got) != 1 {
			t.Errorf("Walk after the repack found %d notes", len(got))
		}
	})
}

// A Repo sees refs that C git moves after it was opened.
func TestReadsSeeMovedRefs(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(1)
	setEnv(t)
	repo := r.open()
	for round := 0; round < 3; round++ {
		hs, errs, err := repo.LookupCommits("HEAD", "main")
		if err != nil || errs[0] != nil || errs[1] != nil || hs[0] != cs[len(cs)-1] || hs[1] != cs[len(cs)-1] {
			t.Fatalf("round %d: LookupCommits = %v, %v, %v; want %s", round, hs, errs, err, cs[len(cs)-1])
		}
		if h, ok, err := repo.RefHash("refs/heads/main"); err != nil || !ok || h != cs[len(cs)-1] {
			t.Fatalf("round %d: RefHash = %s, %v, %v", round, h, ok, err)
		}
		cs = append(cs, r.makeCommits(1)...)
		if round == 1 {
			r.git("pack-refs", "--all")
		}
	}
}

// Reads may run concurrently (Repo's documentation), here on a packed
// ledger.
func TestConcurrentReads(t *testing.T) {
	fx := gitNotesFixture(t)
	r := copyRepo(t, fx.dir)
	r.git("repack", "-a", "-d", "-q")
	setEnv(t)
	repo := r.open()
	snap := mustReadNotes(t, repo, testNotesRef)
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	counts := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = snap.Walk(func(obj, blob Hash) error {
				data, err := repo.ReadBlob(blob)
				if err != nil {
					return err
				}
				if !strings.HasPrefix(string(data), "note ") {
					return fmt.Errorf("note on %s reads %q", obj.Short(), data)
				}
				counts[w]++
				return nil
			})
		}(w)
	}
	wg.Wait()
	for w := 0; w < workers; w++ {
		if errs[w] != nil || counts[w] != fixtureNotes {
			t.Errorf("reader %d: %d notes, %v; want %d", w, counts[w], errs[w], fixtureNotes)
		}
	}
}

// Commits that other tools wrote: extra and multi-line headers, and idents
// that git itself reads although they are not in today's format.
func TestCommitOddHeaders(t *testing.T) {
	r := newRepo(t)
	cs := r.makeCommits(1)
	tree := strings.TrimSpace(r.git("rev-parse", cs[0].String()+"^{tree}"))
	for _, tc := range []struct {
		name, headers string
		bug           string
	}{
		{"signed, with encoding", "author A U Thor <a@example.com> 1700000000 +0200\ncommitter C O Mitter <c@example.com> 1700000001 -0100\n" +
			"encoding ISO-8859-1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n wsBcBAABCAAQBQJ=\n -----END PGP SIGNATURE-----\n", ""},
		{"no time zone", "author A U Thor <a@example.com> 1700000000\ncommitter C O Mitter <c@example.com> 1700000001\n",
			"parseCommit (commit.go) fails the whole commit on an ident without a time zone, which git log reads"},
		{"no date", "author A U Thor <a@example.com>\ncommitter C O Mitter <c@example.com>\n",
			"parseCommit (commit.go) fails the whole commit on an ident without a date, which git log reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := fmt.Sprintf("tree %s\nparent %s\n%s\nSubject line\n\nBody.\n", tree, cs[0], tc.headers)
			h := mustHash(t, strings.TrimSpace(r.gitIn(raw, "hash-object", "-t", "commit", "--literally", "-w", "--stdin")))
			want := strings.Split(r.git("log", "-1", "--format=%T%x00%P%x00%an%x00%ae%x00%cn%x00%ce%x00%s", h.String()), "\x00")
			setEnv(t)
			c, err := r.open().Commit(h)
			if err != nil {
				t.Fatalf("Commit: %v (git log reads it as %q)", err, want)
			}
			if len(c.Parents) != 1 {
				t.Fatalf("Parents = %v, want [%s]", c.Parents, cs[0])
			}
			got := []string{c.Tree.String(), c.Parents[0].String(), c.Author.Name, c.Author.Email, c.Committer.Name, c.Committer.Email, c.Subject() + "\n"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("Commit = %q, git log %q", got, want)
			}
			if c.Message != "Subject line\n\nBody.\n" {
				t.Errorf("Message = %q", c.Message)
			}
		})
	}
}

// A commit's subject is the one git log's %s gives, whatever the shape of
// its message (commits written raw, as another tool may write them).
func TestSubjectAsGitLog(t *testing.T) {
	r := newRepo(t)
	tree := strings.TrimSpace(r.git("hash-object", "-t", "tree", "-w", "--stdin", "--literally"))
	messages := []string{
		"one line\n", "no newline", "first line\nsecond line\n\nbody\n", "\n\n  \nafter blank lines\n",
		"trailing spaces  \t\nand tabs\t\n", "crlf line\r\nnext\r\n\r\nbody\r\n", "", "\n\n", "   \n\t\n",
		"ünïcödé subject\n", "a\n \nb\n", "tab\tinside\n", "form\ffeed\vvertical\n", "line\f\nnext\n",
		"with\x00nul after\nmore\n", "\x00", "  leading spaces kept\n", "x\n\n\ny\n",
	}
	repo := r.open()
	var hs []Hash
	var wants []string
	for _, msg := range messages {
		raw := "tree " + tree + "\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n" + msg
		h := mustHash(t, strings.TrimSpace(r.gitIn(raw, "hash-object", "-t", "commit", "-w", "--stdin", "--literally")))
		want := strings.TrimSuffix(r.git("log", "-1", "--format=%s", h.String()), "\n")
		ci, err := repo.Commit(h)
		if err != nil {
			t.Fatalf("%q: %v", msg, err)
		}
		if got := ci.Subject(); got != want {
			t.Errorf("message %q: Subject() = %q, git log %%s gives %q", msg, got, want)
		}
		hs, wants = append(hs, h), append(wants, want)
	}
	// CommitSubjects gives the same, and says why a name has none as
	// Commits does.
	blob := mustHash(t, strings.TrimSpace(r.gitIn("x", "hash-object", "-w", "--stdin")))
	noTree := mustHash(t, strings.TrimSpace(r.gitIn("author A <a@b> 1 +0000\n\nno tree\n", "hash-object", "-t", "commit", "-w", "--stdin", "--literally")))
	missing := mustHash(t, strings.Repeat("ab", 20))
	hs = append(hs, blob, noTree, missing)
	subjects, errs, err := repo.CommitSubjects(hs)
	if err != nil {
		t.Fatal(err)
	}
	_, cerrs, err := repo.Commits(hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if i < len(wants) && (subjects[i] != wants[i] || errs[i] != nil) {
			t.Errorf("CommitSubjects of %q: %q, %v; want %q", messages[i], subjects[i], errs[i], wants[i])
		}
		if fmt.Sprint(errs[i]) != fmt.Sprint(cerrs[i]) {
			t.Errorf("%s: CommitSubjects says %v, Commits %v", h.Short(), errs[i], cerrs[i])
		}
	}
	for _, i := range []int{len(wants), len(wants) + 1, len(wants) + 2} {
		if errs[i] == nil {
			t.Errorf("%s: no error", hs[i].Short())
		}
	}
}
