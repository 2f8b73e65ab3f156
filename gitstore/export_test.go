package gitstore

import (
	"bufio"
	"context"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// notesOf is what f gives of a snapshot: each note and its text, in order.
func notesOf(t *testing.T, f func(fn func(obj Hash, data []byte) error) error) []string {
	t.Helper()
	var out []string
	if err := f(func(obj Hash, data []byte) error {
		out = append(out, obj.String()+" "+string(data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// exportedNotes is what exportNotes gives of snap: each note and its
// text, in order. The export must serve.
func exportedNotes(t *testing.T, snap *Notes) []string {
	t.Helper()
	var out []string
	used, err := snap.exportNotes(func(obj Hash, data []byte) error {
		out = append(out, obj.String()+" "+string(data))
		return nil
	})
	if err != nil || !used {
		t.Fatalf("exportNotes: used %v, %v", used, err)
	}
	return out
}

// The notes git fast-export gives are those the cat-file stream reads, in
// the same order, with the same text, and the bad notes it keeps are the
// listing's: on every shape a notes tree takes, on notes that share one
// blob, and on a notes commit whose message looks like a stream.
func TestExportAsStreamed(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	odd := oddNotesTree(t, r)
	// Notes sharing a blob, under a message that holds stream commands.
	var b strings.Builder
	msg := "blob\nmark :9\nM 100644 :1 " + strings.Repeat("0", 40) + "\n\ndata 3\n"
	fmt.Fprintf(&b, "commit refs/notes/same\ncommitter C <c@example.com> 1700000000 +0000\ndata %d\n%s\nfrom %s\n", len(msg), msg, odd)
	for i := range 70 {
		h := fmt.Sprintf("%02x%038x", i, 0xdef000+i)
		fmt.Fprintf(&b, "M 100644 inline %s\ndata 12\nsame text %02d\n", h[:2]+"/"+h[2:], i%3)
	}
	b.WriteString("\n")
	r.gitIn(b.String(), "fast-import", "--quiet")
	same := r.hash("rev-parse", "refs/notes/same")
	repo := r.open()
	for _, commit := range []Hash{odd, same} {
		snap, err := repo.NotesAt(commit)
		if err != nil {
			t.Fatal(err)
		}
		streamed := notesOf(t, snap.streamNotes)
		listedBad, err := snap.BadNotes()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := r.open().NotesAt(commit) // nothing kept of the listing
		if err != nil {
			t.Fatal(err)
		}
		exported := exportedNotes(t, fresh)
		if !slices.Equal(streamed, exported) {
			t.Errorf("%s: exported notes differ from the stream's:\n streamed %q\n exported %q", commit.Short(), streamed, exported)
		}
		if len(streamed) < 70 {
			t.Errorf("%s: %d notes; the test wants more", commit.Short(), len(streamed))
		}
		exportedBad, err := fresh.BadNotes()
		if err != nil || !slices.Equal(exportedBad, listedBad) {
			t.Errorf("%s: bad notes after the export %v (%v), listed %v", commit.Short(), exportedBad, err, listedBad)
		}
	}
}

// An export whose blobs are not those the listing names changes no note:
// each is read through cat-file from the first blob that is not the one
// expected. One that gives no blob, or that git refuses, is not used, and
// ForEachNote reads through the cat-file stream: the same notes.
func TestExportOutOfOrder(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	odd := oddNotesTree(t, r)
	r.git("commit", "-q", "--allow-empty", "-m", "empty")
	empty := r.hash("rev-parse", "HEAD")
	repo := r.open()
	snap, err := repo.NotesAt(odd)
	if err != nil {
		t.Fatal(err)
	}
	want := notesOf(t, snap.streamNotes)
	// Another ledger's export: one blob, not the first the listing names.
	r.git("notes", "--ref=other", "add", "-m", "a note of its own", empty.String())
	other := r.hash("rev-parse", "refs/notes/other")
	defer func(f func(*Notes) string) { exportRange = f }(exportRange)
	exportRange = func(*Notes) string { return other.String() + "^!" }
	fresh, err := r.open().NotesAt(odd)
	if err != nil {
		t.Fatal(err)
	}
	if got := exportedNotes(t, fresh); !slices.Equal(got, want) {
		t.Errorf("another tree's blobs: notes differ from the stream's:\n want %q\n got  %q", want, got)
	}
	for name, rng := range map[string]string{
		"no blobs":         empty.String() + "^!",
		"a refused export": "--no-such-option",
	} {
		exportRange = func(*Notes) string { return rng }
		fresh, err := r.open().NotesAt(odd)
		if err != nil {
			t.Fatal(err)
		}
		called := false
		used, err := fresh.exportNotes(func(Hash, []byte) error { called = true; return nil })
		if used || err != nil || called {
			t.Errorf("%s: used %v, %v, fn called %v; want unused", name, used, err, called)
		}
		if got := notesOf(t, fresh.ForEachNote); !slices.Equal(got, want) {
			t.Errorf("%s: notes differ from the stream's:\n want %q\n got  %q", name, want, got)
		}
	}
}

// exportBlobs sends the blobs of a stream with their object names, up
// to its first commit; a stream other than expected ends it with an error.
func TestExportBlobs(t *testing.T) {
	read := func(s string) ([]exportedBlob, error) {
		out := make(chan []exportedBlob, 16)
		err := exportBlobs(context.Background(), bufio.NewReader(strings.NewReader(s)), out)
		close(out)
		var got []exportedBlob
		for b := range out {
			got = append(got, b...)
		}
		return got, err
	}
	got, err := read("feature done\nblob\nmark :1\ndata 2\nab\nblob\nmark :2\ndata 0\n\ncommit refs/x\nblob\nmark :9\n")
	if err != nil || len(got) != 2 || string(got[0].data) != "ab" || got[0].oid != objectName(plumbing.BlobObject, []byte("ab")) || len(got[1].data) != 0 {
		t.Fatalf("read %v, %v", got, err)
	}
	// A blob over maxExportKept is named, not kept.
	large := strings.Repeat("x", maxExportKept+1)
	got, err = read("blob\nmark :1\ndata " + fmt.Sprint(len(large)) + "\n" + large + "\n")
	if err != nil || len(got) != 1 || got[0].data != nil || got[0].size != len(large) || got[0].oid != objectName(plumbing.BlobObject, []byte(large)) {
		t.Fatalf("a large blob: %d blobs, %v", len(got), err)
	}
	// git's own name for the blob "ab" (printf ab | git hash-object --stdin)
	if want := "9ae9e86b7bd6cb1472d9373702d8249973da0832"; objectName(plumbing.BlobObject, []byte("ab")).String() != want {
		t.Errorf("the blob ab is named %s, want %s", objectName(plumbing.BlobObject, []byte("ab")), want)
	}
	for _, s := range []string{
		"blob\nmark :2\ndata 1\nx\n", // a mark out of order
		"blob\nmark :1\ndata 5\nx\n", // cut short
		"blob\nmark :1\ndata -1\n",   // a negative size
		"blob\nmark :1\ndata 1x\n",   // a size that is none
		"tag v1\n",                   // a command it does not read
		"blob\nmark :1",              // a line cut short
	} {
		if _, err := read(s); err == nil {
			t.Errorf("%q: read", s)
		}
	}
}

// exportBlobs never panics, and sends only what the stream holds.
func FuzzExportBlobs(f *testing.F) {
	f.Add("blob\nmark :1\ndata 2\nab\ncommit refs/x\n")
	f.Add("blob\nmark :1\ndata 3\nabc\nblob\nmark :2\ndata 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := make(chan []exportedBlob, 1<<10)
		done := make(chan struct{})
		total := 0
		go func() {
			for bs := range out {
				for _, b := range bs {
					total += len(b.data)
				}
			}
			close(done)
		}()
		_ = exportBlobs(context.Background(), bufio.NewReader(strings.NewReader(s)), out)
		close(out)
		<-done
		if total > len(s) {
			t.Fatalf("%d bytes of blobs from a stream of %d", total, len(s))
		}
	})
}

// A file that is no note is never read but through the export: one whose
// object is missing (a partial clone, a tree from elsewhere), or that is a
// tree under a file's mode, changes no note, fails nothing, and leaves the
// Repo's cat-file whole.
func TestExportUnreadableNonNote(t *testing.T) {
	testenv.Slow(t)
	setEnv(t)
	r := newRepo(t)
	// 70 notes at the root and a README, in a tree git's own tools would
	// not write (hash-object --literally).
	type ent struct {
		mode, name string
		h          Hash
	}
	blob := func(s string) Hash {
		h, err := ParseHash(strings.TrimSpace(r.gitIn(s, "hash-object", "-w", "--stdin")))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := func(ents []ent) Hash {
		slices.SortFunc(ents, func(a, b ent) int { return strings.Compare(a.name, b.name) })
		var raw []byte
		for _, e := range ents {
			raw = append(append(raw, e.mode+" "+e.name+"\x00"...), e.h[:]...)
		}
		h, err := ParseHash(strings.TrimSpace(r.gitIn(string(raw), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var notes []ent
	for i := range 70 {
		notes = append(notes, ent{"100644", fmt.Sprintf("%040x", 0x77000+i), blob(fmt.Sprintf("note %d\n", i))})
	}
	missing, _ := ParseHash(strings.Repeat("ab", 20))
	sub := tree([]ent{{"100644", "f", blob("f\n")}})
	big := blob(strings.Repeat("large\n", maxExportKept/6+1))
	notes = append(notes, ent{"100644", fmt.Sprintf("%040x", 0x78000), big}) // a note too large to keep
	for name, readme := range map[string]Hash{"a missing object": missing, "a tree": sub, "a large file": big} {
		commit := r.hash("commit-tree", tree(append(slices.Clone(notes), ent{"100644", "README", readme})).String(), "-m", "x")
		snap, err := r.open().NotesAt(commit)
		if err != nil {
			t.Fatal(err)
		}
		want := notesOf(t, snap.streamNotes)
		repo := r.open()
		fresh, err := repo.NotesAt(commit)
		if err != nil {
			t.Fatal(err)
		}
		if got := exportedNotes(t, fresh); !slices.Equal(got, want) || len(want) != 71 {
			t.Errorf("README %s: %d notes, want the stream's %d", name, len(got), len(want))
		}
		if _, err := repo.Commit(commit); err != nil {
			t.Errorf("README %s: the Repo's cat-file after the export: %v", name, err)
		}
	}
}
