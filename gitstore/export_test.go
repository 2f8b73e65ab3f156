package gitstore

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"testing"
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
		var exported []string
		used, err := fresh.exportNotes(func(obj Hash, data []byte) error {
			exported = append(exported, obj.String()+" "+string(data))
			return nil
		})
		if err != nil || !used {
			t.Fatalf("%s: exportNotes: used %v, %v", commit.Short(), used, err)
		}
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

// A stream other than the one expected is refused, so that the caller
// reads the notes the other way; a blob named by object name is too.
func TestReadExportRefuses(t *testing.T) {
	for _, s := range []string{
		"blob\nmark :2\ndata 1\nx\n",             // a mark out of order
		"blob\nmark :1\ndata 5\nx\n",             // cut short
		"blob\nmark :1\ndata -1\n",               // a negative size
		"tag v1\n",                               // a command it does not read
		"commit refs/x\nM 100644 nothing path\n", // a data reference that is none
		"commit refs/x\nM 1x0644 :1 path\n",      // a mode that is none
		"commit refs/x\nsomething\n",             // a line it does not read
	} {
		if _, err := readExport(bufio.NewReader(strings.NewReader(s))); err == nil {
			t.Errorf("%q: read", s)
		}
	}
	ex, err := readExport(bufio.NewReader(strings.NewReader(
		"blob\nmark :1\ndata 2\nab\ncommit refs/x\nmark :2\ndata 0\nfrom " + strings.Repeat("1", 40) + "\ndeleteall\n" +
			"M 100644 :1 p\nM 160000 " + strings.Repeat("2", 40) + " q\nM 100644 :1 \"quoted \\\"path\"\n\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.files) != 3 || ex.files[0].mark != 1 || string(ex.blobs[1]) != "ab" || ex.files[1].mark != 0 || ex.files[2].path != "\"quoted \\\"path\"" {
		t.Errorf("read %+v", ex.files)
	}
}

// readExport never panics, and keeps only what the stream said.
func FuzzReadExport(f *testing.F) {
	f.Add("blob\nmark :1\ndata 2\nab\ncommit refs/x\ndata 0\ndeleteall\nM 100644 :1 ab/cd\n\n")
	f.Add("commit refs/x\ndata 3\nabc\nM 160000 " + strings.Repeat("2", 40) + " q\n")
	f.Fuzz(func(t *testing.T, s string) {
		ex, err := readExport(bufio.NewReader(strings.NewReader(s)))
		if err != nil {
			return
		}
		for _, b := range ex.blobs[1:] {
			if len(b) > len(s) {
				t.Fatalf("a blob of %d bytes from a stream of %d", len(b), len(s))
			}
		}
	})
}
