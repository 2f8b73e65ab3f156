package gitstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// looseFile reads the loose object h of repository dir as stored.
func looseFile(t *testing.T, dir string, h string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "objects", h[:2], h[2:]))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Loose objects under storedBelow are written as zlib stored blocks
// (git's core.looseCompression=0); larger ones are compressed at git's
// default level for them, with the zlib header git writes with no setting.
// git reads both back, and fsck accepts them.
func TestLooseObjectLevels(t *testing.T) {
	setEnv(t)
	ours, theirs := newRepo(t), newRepo(t)
	for i, data := range []string{
		strings.Repeat("a line of a note that compresses well\n", 200),  // 7,600 bytes: stored
		strings.Repeat("a line of a note that compresses well\n", 2000), // 76,000 bytes: compressed
	} {
		h, err := ours.open().WriteBlob([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(theirs.gitIn(data, "hash-object", "-w", "--stdin"))
		if h.String() != want {
			t.Fatalf("object %s, git names it %s", h, want)
		}
		a, b := looseFile(t, ours.dir, h.String()), looseFile(t, theirs.dir, want)
		if !bytes.Equal(a[:2], b[:2]) {
			t.Errorf("zlib header %x, git writes %x", a[:2], b[:2])
		}
		// The first deflate block's type: 00 stored, else compressed.
		stored := a[2]>>1&3 == 0
		if want := i == 0; stored != want {
			t.Errorf("%d bytes written stored: %v, want %v (%d bytes on disk)", len(data), stored, want, len(a))
		}
		if got := ours.git("cat-file", "blob", h.String()); got != data {
			t.Errorf("git reads back %d bytes, want %d", len(got), len(data))
		}
		zr, err := zlib.NewReader(bytes.NewReader(a))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || !bytes.HasSuffix(got, []byte(data)) {
			t.Errorf("inflated: %d bytes, %v", len(got), err)
		}
	}
	ours.fsckClean()
}

// With PackWrites on, blobs and trees wait for Flush, which writes many as
// one pack git reads and fsck accepts, and few as loose objects; reads see
// them before; commits are written at once.
func TestPackWrites(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	repo.PackWrites(true)
	defer repo.PackWrites(false)
	var entries []treeEntry
	var want []string
	for i := 0; i < packMin+10; i++ {
		data := []byte(fmt.Sprintf("note %d\n%s", i, strings.Repeat("x", i*37)))
		h, err := repo.WriteBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := repo.ReadBlob(h); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadBlob before Flush: %q, %v", got, err)
		}
		entries = append(entries, treeEntry{name: fmt.Sprintf("f%03d", i), hash: h})
		want = append(want, h.String())
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // a size of several bytes in the header
	hb, err := repo.WriteBlob(big)
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, treeEntry{name: "big", hash: hb})
	tree, err := repo.writeTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := r.gitErr("cat-file", "-e", tree.String()); out != "" || r.hasObject(tree) {
		t.Fatalf("the tree was written before Flush")
	}
	before := r.git("count-objects", "-v")
	who := Signature{Name: "A", Email: "a@example.com", When: time.Unix(1700000000, 0)}
	c, err := repo.WriteCommit(tree, nil, "packed\n", who, who)
	if err != nil {
		t.Fatal(err)
	}
	after := r.git("count-objects", "-v")
	if !strings.Contains(after, "packs: 1\n") || !strings.Contains(before, "packs: 0\n") {
		t.Errorf("objects before the commit:\n%s\nafter:\n%s\nwant one pack more", before, after)
	}
	keeps := func() []string {
		m, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.keep"))
		return m
	}
	if len(keeps()) != 1 {
		t.Errorf("the pack is not kept from a repack before a ref names it: %v", keeps())
	}
	if got := strings.TrimSpace(r.git("rev-parse", c.String()+"^{tree}")); got != tree.String() {
		t.Errorf("git reads the commit's tree as %s, want %s", got, tree)
	}
	if got := r.git("cat-file", "blob", hb.String()); got != string(big) {
		t.Errorf("git reads the large blob back as %d bytes", len(got))
	}
	for i, h := range want {
		if got := r.git("cat-file", "-p", tree.String()+":"+fmt.Sprintf("f%03d", i)); !strings.HasPrefix(got, fmt.Sprintf("note %d\n", i)) {
			t.Errorf("blob %s reads %q", h, got)
		}
	}
	r.git("update-ref", "refs/heads/main", c.String())
	r.fsckClean()
	repo.PackWrites(false)
	if len(keeps()) != 0 {
		t.Errorf("the pack is still kept when the writer is done: %v", keeps())
	}
	repo.PackWrites(true)

	// Few objects: loose, as before.
	h, err := repo.WriteBlob([]byte("one alone\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Flush(); err != nil {
		t.Fatal(err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(looseFile(t, r.dir, h.String())))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); string(got) != "blob 10\x00one alone\n" {
		t.Errorf("loose object reads %q", got)
	}
}

func (r *testRepo) hasObject(h Hash) bool {
	_, err := r.gitErr("cat-file", "-e", h.String())
	return err == nil
}
