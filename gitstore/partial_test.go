package gitstore

import (
	"errors"
	"path/filepath"
	"testing"
)

// A partial clone whose plain git fetch brought the notes through its
// filter: the notes' blobs are promised, not here. A read of one gives up
// with ErrPromised (git may not fetch it for a read), and the reads after
// it go on; Missing and MissingAt name them; FetchObjects brings them.
func TestPartialCloneNotes(t *testing.T) {
	src := newRepo(t)
	commits := src.makeCommits(3)
	for i, c := range commits {
		src.git("notes", "--ref=evolve", "add", "-m", "note "+string(rune('a'+i)), c.String())
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	if _, err := runGitCmd(t.TempDir(), "", nil, "clone", "-q", "--mirror", src.dir, remote); err != nil {
		t.Fatal(err)
	}
	if _, err := runGitCmd(remote, "", nil, "config", "uploadpack.allowFilter", "true"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "partial")
	if _, err := runGitCmd(t.TempDir(), "", nil, "clone", "-q", "--filter=blob:none", "file://"+remote, dir); err != nil {
		t.Fatal(err)
	}
	pc := &testRepo{t: t, dir: dir}
	pc.git("fetch", "-q", "origin", "refs/notes/evolve:refs/notes/remotes/origin/evolve")
	tip := pc.hash("rev-parse", "refs/notes/remotes/origin/evolve")

	repo := pc.open()
	repo.ReadsMany() // every read is git cat-file's
	if !repo.PartialClone() {
		t.Fatal("PartialClone() = false in a clone made with --filter")
	}
	if plain := src.open(); plain.PartialClone() {
		t.Error("PartialClone() = true in a repository no remote promises objects to")
	}
	missing, err := repo.Missing([]Hash{tip}, nil)
	if err != nil || len(missing) != 3 {
		t.Fatalf("Missing = %v, %v; want the 3 notes' blobs", missing, err)
	}
	if at, err := repo.MissingAt([]Hash{tip}); err != nil || len(at) != 3 {
		t.Fatalf("MissingAt = %v, %v; want the 3 notes' blobs", at, err)
	}
	if _, err := repo.ReadBlob(missing[0]); !errors.Is(err, ErrPromised) {
		t.Fatalf("ReadBlob of a promised blob: %v, want ErrPromised", err)
	}
	// the exchange git gave up is started again for the reads after it
	if _, err := repo.Commit(tip); err != nil {
		t.Fatalf("a read after the one git gave up: %v", err)
	}
	if _, err := repo.ReadBlob(missing[0]); !errors.Is(err, ErrPromised) {
		t.Fatalf("ReadBlob of the promised blob again: %v, want ErrPromised", err)
	}

	if err := repo.FetchObjects("origin", missing); err != nil {
		t.Fatal(err)
	}
	if missing, err := repo.Missing([]Hash{tip}, nil); err != nil || len(missing) != 0 {
		t.Fatalf("after FetchObjects, Missing = %v, %v; want none", missing, err)
	}
	again := openDir(t, dir)
	n, err := again.NotesAt(tip)
	if err != nil {
		t.Fatal(err)
	}
	got := walkNotes(t, n)
	if len(got) != 3 {
		t.Fatalf("notes read after the refetch: %v", got)
	}
	for _, blobs := range got {
		if _, err := again.ReadBlob(blobs[0]); err != nil {
			t.Fatalf("ReadBlob after the refetch: %v", err)
		}
	}
}
