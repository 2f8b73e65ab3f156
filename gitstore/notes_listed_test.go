package gitstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// oddNotesTree writes, with git fast-import, a notes commit whose tree has
// more than streamThreshold root entries (so that the listed reading is
// used) and every shape a notes tree can take: notes at each fanout depth,
// hex in upper case, files and directories that are no notes, a submodule,
// a link and a directory at a note's path, a name too long or too short.
func oddNotesTree(t *testing.T, r *testRepo) Hash {
	t.Helper()
	r.git("commit", "-q", "--allow-empty", "-m", "base")
	sub := r.hash("rev-parse", "HEAD")
	hex := func(i int) string { return fmt.Sprintf("%040x", 0xabc000+i) }
	var b strings.Builder
	b.WriteString("commit refs/notes/odd\ncommitter C <c@example.com> 1700000000 +0000\ndata 4\nodd\n")
	put := func(path, text string) {
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", path, len(text), text)
	}
	for i := range 80 { // 80 fanout directories at the root
		h := fmt.Sprintf("%02x", i) + hex(i)[2:]
		put(h[:2]+"/"+h[2:], "note "+h)
	}
	h := hex(1000)
	put(h, "a note at the root, no fanout")
	h = hex(1001)
	put(h[:2]+"/"+h[2:4]+"/"+h[4:], "two levels")
	h = hex(1002)
	put(h[:2]+"/"+h[2:4]+"/"+h[4:6]+"/"+h[6:], "three levels")
	h = "ABCDEF" + hex(1003)[6:]
	put(h[:2]+"/"+h[2:], "upper case")
	h = hex(1004)
	put(strings.ToUpper(h), "upper case at the root")
	put("README", "no note")
	put("foo/"+hex(1005), "below a directory that is no fanout")
	put("a/"+hex(1006)[1:], "below a one-digit directory")
	put(hex(1007)+"/inside", "below a directory at a note's path")
	put(hex(1008)[:39], "a name one digit short")
	put(hex(1009)+"0", "a name one digit long")
	put("zz/"+hex(1010)[2:], "below a directory that is not hex")
	h = hex(1011)
	fmt.Fprintf(&b, "M 160000 %s %s\n", sub, h[:2]+"/"+h[2:])
	h = hex(1012)
	fmt.Fprintf(&b, "M 120000 inline %s\ndata 6\ntarget\n", h[:2]+"/"+h[2:])
	h = hex(1013)
	fmt.Fprintf(&b, "M 160000 %s %s\n", sub, h)
	b.WriteString("\n")
	r.gitIn(b.String(), "fast-import", "--quiet")
	return r.hash("rev-parse", "refs/notes/odd")
}

// The notes and bad notes git ls-tree lists are those the tree walk finds,
// in the same order, with the same text.
func TestListedAsWalked(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	commit := oddNotesTree(t, r)
	repo := r.open()
	snap, err := repo.NotesAt(commit)
	if err != nil {
		t.Fatal(err)
	}
	root, err := repo.readTree(snap.tree)
	if err != nil || len(root) <= streamThreshold {
		t.Fatalf("the root has %d entries (%v): the test needs more than %d", len(root), err, streamThreshold)
	}
	walked, bad := walkedAndListed(t, snap)
	if len(walked) != 80+5 { // (the link is no note, as to git)
		t.Errorf("the walk found %d notes, want 85", len(walked))
	}
	// ForEachNote (the stream, listed) gives each note's text.
	var texts []string
	if err := snap.ForEachNote(func(obj Hash, data []byte) error {
		texts = append(texts, obj.String()+" "+string(data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(texts) != len(walked) {
		t.Fatalf("ForEachNote gave %d notes, want %d", len(texts), len(walked))
	}
	for i, w := range walked {
		obj, blob, _ := strings.Cut(w, " ")
		h, _ := ParseHash(blob)
		data, err := repo.ReadBlob(h)
		if err != nil || texts[i] != obj+" "+string(data) {
			t.Errorf("note %d: ForEachNote gave %q, the blob is %q (%v)", i, texts[i], data, err)
		}
	}
	if len(bad) != 3 {
		t.Errorf("bad notes %v; want the two submodules and the link", bad)
	}
}

// What git ls-tree prints that is not a record it can print is an error,
// not a note.
func TestListedEntryMalformed(t *testing.T) {
	for _, rec := range []string{
		"100644 blob " + strings.Repeat("1", 40),
		"100644 blob\t" + strings.Repeat("a", 40),
		"1x0644 blob " + strings.Repeat("1", 40) + "\t" + strings.Repeat("a", 40),
		"100644 blob " + strings.Repeat("g", 40) + "\t" + strings.Repeat("a", 40),
	} {
		if _, _, _, err := listedEntry([]byte(rec)); err == nil {
			t.Errorf("listedEntry(%q) gave no error", rec)
		}
	}
}

// Entries whose modes git reads other than as written (a directory of
// mode 40755, a note path of mode 160644 or 644, which git takes for a
// submodule), and a name too long for one read of the listing, are read
// by the listing as by the walk.
func TestListedOddModes(t *testing.T) {
	setEnv(t)
	r := newRepo(t)
	commit := oddNotesTree(t, r)
	root := r.hash("rev-parse", commit.String()+"^{tree}")
	blob, _ := ParseHash(strings.TrimSpace(r.gitIn("a note\n", "hash-object", "-w", "--stdin")))
	type ent struct {
		mode, name string
		h          Hash
	}
	var ents []ent
	for _, line := range strings.Split(strings.TrimSpace(r.git("ls-tree", root.String())), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		h, _ := ParseHash(f[2])
		mode := f[0]
		if mode == "040000" {
			mode = "40000"
		}
		ents = append(ents, ent{mode, name, h})
	}
	note := func(i int) string { return fmt.Sprintf("%040x", 0xdd0000+i) }
	subH, _ := ParseHash(strings.TrimSpace(r.gitIn(fmt.Sprintf("100644 blob %s\t%s\n", blob, note(1)[2:]), "mktree")))
	ents = append(ents,
		ent{"40755", note(1)[:2], subH},                   // a fanout directory, as git reads it
		ent{"160644", note(2), blob},                      // a submodule, as git reads it
		ent{"644", note(3), blob},                         // the same
		ent{"100755", note(4), blob},                      // a note
		ent{"100644", strings.Repeat("x", 300<<10), blob}, // no note, and longer than a read
	)
	sortKey := func(e ent) string {
		if e.mode == "40000" || e.mode == "40755" {
			return e.name + "/"
		}
		return e.name
	}
	slices.SortFunc(ents, func(a, b ent) int { return strings.Compare(sortKey(a), sortKey(b)) })
	var raw []byte
	for _, e := range ents {
		raw = append(raw, e.mode+" "+e.name+"\x00"...)
		raw = append(raw, e.h[:]...)
	}
	treeH, _ := ParseHash(strings.TrimSpace(r.gitIn(string(raw), "hash-object", "-t", "tree", "-w", "--literally", "--stdin")))
	odd := r.hash("commit-tree", treeH.String(), "-m", "odd modes")
	repo := r.open()
	snap, err := repo.NotesAt(odd)
	if err != nil {
		t.Fatal(err)
	}
	walked, bad := walkedAndListed(t, snap)
	for _, want := range []string{note(1), note(4)} {
		if !slices.ContainsFunc(walked, func(w string) bool { return strings.HasPrefix(w, want+" ") }) {
			t.Errorf("the walk did not find the note %s", want)
		}
	}
	if len(bad) != 5 {
		t.Errorf("bad notes %v; want the two submodules, the link and the two read as submodules", bad)
	}
	// (that was kept from the listing above; a process that did not list
	// the notes lists them for it)
	fresh, err := r.open().NotesAt(odd)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := fresh.BadNotes(); err != nil || !slices.Equal(again, bad) {
		t.Errorf("bad notes listed anew: %v, %v; want %v", again, err, bad)
	}
}

// walkedAndListed reads snap's notes and bad notes both ways, the tree walk
// and the git ls-tree listing, and fails the test where they differ. It
// returns the walk's notes ("<object> <blob>") and bad notes.
func walkedAndListed(t *testing.T, snap *Notes) (walked []string, bad []Hash) {
	t.Helper()
	var listed []string
	if err := snap.walk(func(obj, blob Hash) error {
		walked = append(walked, obj.String()+" "+blob.String())
		return nil
	}, false); err != nil {
		t.Fatal(err)
	}
	if err := snap.walkListed(context.Background(), func(obj, blob Hash) error {
		listed = append(listed, obj.String()+" "+blob.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(walked, listed) {
		t.Errorf("listed notes differ from the walk's:\n walked %q\n listed %q", walked, listed)
	}
	if err := snap.badSince([]Hash{snap.tree}, []Hash{ZeroHash}, []string{""}, &bad); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(bad, func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
	listedBad, err := snap.BadNotes()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bad, listedBad) {
		t.Errorf("bad notes: walked %v, listed %v", bad, listedBad)
	}
	return walked, bad
}
