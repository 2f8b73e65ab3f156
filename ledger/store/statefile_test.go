package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A state file written anew removes its temporary files that a killed
// writer left, and leaves a young one (a write under way) and other files.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.view")
	old := time.Now().Add(-2 * staleTemp)
	for name, age := range map[string]time.Time{"ledger.view.tmp123": old, "ledger.view.tmp456": time.Now(),
		"ledger.viewer.tmp1": old, "subjects.tmp9": old, "ledger.view.lock": old, "ledger.view.tmpx": old} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, age, age); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteStateFile(path, func(w *bufio.Writer) error { _, err := w.WriteString("view"); return err }); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"ledger.view", "ledger.view.lock", "ledger.view.tmp456", "ledger.view.tmpx", "ledger.viewer.tmp1", "subjects.tmp9"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left %v, want %v", left, want)
	}
}
