package audit

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// The check of a remote-tracking copy is CheckIncoming's: a copy that only
// adds records is read, one that edits a record of this clone's or writes
// a line that does not parse is refused, naming the notes commit that did
// it. Its answer is kept, keyed by what it is made from: a kept answer is
// given back as kept, an acknowledgement recorded since (the control ref
// moved) asks again, and a damaged file is read past.
func TestCopyCheck(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@x",
		"GIT_COMMITTER_NAME=Cy", "GIT_COMMITTER_EMAIL=c@x", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z", "LC_ALL=C")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_DIR") || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" {
			env = append(env, k+"=")
		}
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	hash := func(ref string) gitstore.Hash {
		t.Helper()
		h, err := gitstore.ParseHash(git("rev-parse", ref))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	git("init", "-q", "-b", "main")
	for _, m := range []string{"one", "two", "three", "four"} {
		git("commit", "-q", "--allow-empty", "-m", m)
	}
	rec := func(id string, n int, target string) string {
		return `{"v":1,"id":"` + id + `","cycle":` + string(rune('0'+n)) + `,"target":"` + target + `","result":"improved"}`
	}
	git("notes", "--ref=evolve", "add", "-m", rec("aaaaaaaaaaaaaaaaaaaa", 1, "lint"), "HEAD~3")
	git("notes", "--ref=evolve", "add", "-m", rec("bbbbbbbbbbbbbbbbbbbb", 2, "docs"), "HEAD~2")
	local := hash("refs/notes/evolve")
	// a copy that adds a record
	git("notes", "--ref=evolve", "add", "-m", rec("cccccccccccccccccccc", 3, "tests"), "HEAD~1")
	good := hash("refs/notes/evolve")
	// a copy that edits cycle 1
	git("update-ref", "refs/notes/evolve", local.String())
	git("notes", "--ref=evolve", "add", "-f", "-m", rec("aaaaaaaaaaaaaaaaaaaa", 1, "forged"), "HEAD~3")
	forged := hash("refs/notes/evolve")
	// a copy that writes a damaged line, then a record on another commit
	git("update-ref", "refs/notes/evolve", local.String())
	git("notes", "--ref=evolve", "add", "-m", `{"v":1,"cycle":3,`, "HEAD~1")
	damager := hash("refs/notes/evolve")
	git("notes", "--ref=evolve", "add", "-m", rec("dddddddddddddddddddd", 4, "more"), "HEAD")
	damaged := hash("refs/notes/evolve")
	git("update-ref", "refs/notes/evolve", local.String())

	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	check := CopyCheck(repo)
	if r, err := check(local, good); err != nil || r != nil {
		t.Errorf("a copy that adds a record: %+v, %v; want it read", r, err)
	}
	r, err := check(local, forged)
	if err != nil || r == nil {
		t.Fatalf("a copy that edits a record: %+v, %v; want it refused", r, err)
	}
	if r.NotesCommit != forged || r.By != "Cy, 2026-01-02 03:04" || r.Breaches != 1 ||
		!strings.HasPrefix(r.Reason, "changed the record of cycle 1 (id aaaaaaaaaaaaaaaaaaaa)") {
		t.Errorf("the refusal of an edit: %+v", r)
	}
	r, err = check(local, damaged)
	if err != nil || r == nil {
		t.Fatalf("a copy with a damaged line: %+v, %v; want it refused", r, err)
	}
	if r.NotesCommit != damager || !strings.Contains(r.Reason, "line 1") {
		t.Errorf("the refusal of a damaged line: %+v, want it brought by %s", r, damager.Short())
	}

	// kept: the answer comes from the view's copies section
	path := store.ViewPath(repo)
	data := keptSectionsOf(t, path)[store.SecCopies]
	if n := strings.Count(string(data), "\n"); n != 5 {
		t.Fatalf("the copies section holds %d lines, want a header, 3 answers and a CRC:\n%s", n, data)
	}
	edited := strings.Replace(string(data), `"changed the record`, `"kept: changed the record`, 1)
	// the CRC made to hold: an answer kept is given back as it is
	edited = edited[:strings.LastIndex(edited, "crc32c ")]
	edited += fmt.Sprintf("crc32c %08x\n", crc32.Checksum([]byte(edited), crc32.MakeTable(crc32.Castagnoli)))
	putSection(t, path, store.SecCopies, []byte(edited))
	if r, err := check(local, forged); err != nil || r == nil || !strings.HasPrefix(r.Reason, "kept: ") {
		t.Errorf("a kept answer is not given back: %+v, %v", r, err)
	}
	// an acknowledgement of the edit: asked again, and read
	git("notes", "--ref=evolve-control", "add", "-m", `{"kind":"accept","notes_commit":"`+forged.String()+`","reason":"ok","at":"2026-01-02T03:04:05Z"}`, "HEAD")
	if r, err := check(local, forged); err != nil || r != nil {
		t.Errorf("an accepted edit: %+v, %v; want the copy read", r, err)
	}
	// a damaged section, and a damaged file: read past
	for _, junk := range []string{"junk", "git-evolve copies 1\nzz refused 1 - \"\" \"\"\n", strings.Repeat("x", 100<<10)} {
		putSection(t, path, store.SecCopies, []byte(junk))
		if r, err := check(local, damaged); err != nil || r == nil || r.NotesCommit != damager {
			t.Errorf("with a damaged copies section %.12q: %+v, %v", junk, r, err)
		}
		if err := os.WriteFile(path, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		if r, err := check(local, damaged); err != nil || r == nil || r.NotesCommit != damager {
			t.Errorf("with a damaged view's file %.12q: %+v, %v", junk, r, err)
		}
	}
}

// What writeKeptCopies writes, readKeptCopiesAt reads back as it was;
// a refusal of no breach is no answer, and is not read.
func FuzzKeptCopies(f *testing.F) {
	f.Add([]byte("01234567890123456789"), 1, "Cy, 2026-01-02 03:04", "changed the record of cycle 1")
	f.Add([]byte(""), 3, "", "")
	f.Add([]byte("x"), 0, "name \"quoted\"\nnewline", "\x00\xff\u2028")
	f.Fuzz(func(t *testing.T, commit []byte, n int, by, reason string) {
		path := filepath.Join(t.TempDir(), "ledger.view")
		r := &store.CopyRefusal{Breaches: n, By: by, Reason: reason}
		if len(commit) >= len(r.NotesCommit) {
			copy(r.NotesCommit[:], commit)
		}
		key := strings.Repeat("ab", 32)
		writeKeptCopies(path, []keptCopy{{key, r}, {strings.Repeat("cd", 32), nil}})
		got := readKeptCopiesAt(path)
		if n < 1 {
			if len(got) != 1 || got[0].refusal != nil {
				t.Fatalf("a refusal of %d breaches read back: %+v", n, got)
			}
			return
		}
		if len(got) != 2 || got[0].key != key || got[0].refusal == nil || *got[0].refusal != *r || got[1].refusal != nil {
			t.Fatalf("read back %+v, want %+v", got, r)
		}
	})
}

// A damaged byte of the copies section (a bit flipped in the breaches'
// count or the reason) must make the answer unread, not another answer:
// the refusal read back is what a copy's notice prints.
func TestCopiesSectionDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.view")
	key := strings.Repeat("ab", 32)
	want := &store.CopyRefusal{Breaches: 2, By: "Cy, 2026-01-02 03:04", Reason: "edits cycle 1"}
	writeKeptCopies(path, []keptCopy{{key, want}})
	k := store.OpenKept(path)
	sec := bytes.Clone(k.Section(store.SecCopies))
	k.Release()
	for _, damage := range []struct{ from, to string }{{"refused 2", "refused 3"}, {"cycle 1", "cycle 3"}} {
		bad := bytes.Replace(sec, []byte(damage.from), []byte(damage.to), 1) // one bit each
		var parts [store.Sections]*store.Part
		parts[store.SecCopies] = &store.Part{Bytes: bad}
		if err := store.PutKept(path, nil, parts); err != nil {
			t.Fatal(err)
		}
		for _, c := range readKeptCopiesAt(path) {
			if c.key == key && (c.refusal == nil || *c.refusal != *want) {
				t.Errorf("%q damaged to %q: the answer read back is %+v, not %+v nor none", damage.from, damage.to, c.refusal, want)
			}
		}
	}
}
