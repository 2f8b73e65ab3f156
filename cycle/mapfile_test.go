package cycle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A state file reads back as written (mapped where it can be), an empty
// file as empty, and a missing, too large or irregular one not at all; a
// file replaced by a rename after it was read leaves what was read whole.
func TestReadStateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verify-state")
	want := bytes.Repeat([]byte("state\x00"), 3000)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateFile(path, 1<<20)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadStateFile: %d bytes, %v; want %d", len(got), err, len(want))
	}
	other := filepath.Join(dir, "next")
	if err := os.WriteFile(other, []byte("another"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("what was read changed when the file was replaced")
	}
	Unmap(got)
	if _, err := ReadStateFile(path, 3); err == nil {
		t.Errorf("a file over the bound was read")
	}
	if _, err := ReadStateFile(filepath.Join(dir, "none"), 1<<20); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want that it does not exist", err)
	}
	if _, err := ReadStateFile(dir, 1<<20); err == nil {
		t.Errorf("a directory was read")
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadStateFile(path, 1<<20); err != nil || len(got) != 0 {
		t.Errorf("an empty file: %q, %v", got, err)
	}
}
