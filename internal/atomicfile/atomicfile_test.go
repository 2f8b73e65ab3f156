package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f")
	if err := Write(path, []byte("one"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(data) != "two" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%q %v %v", data, err, fi.Mode())
	}
	// A fill that fails leaves the file as it was, and no temporary file.
	boom := errors.New("boom")
	if err := WriteWith(path, 0o644, func(f *os.File) error { f.Write([]byte("half")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "two" {
		t.Fatalf("after a failed write: %q", data)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sub")); len(entries) != 1 || entries[0].Name() != "f" {
		t.Fatalf("left behind: %v", entries)
	}
}

// A temporary file a killed writer left is removed by the next write once
// it is an hour old; a young one (a write under way) is left. Its name ends
// in .tmp, which the loop's info/exclude patterns match.
func TestStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cycle-history.jsonl")
	old := time.Now().Add(-2 * StaleAge)
	for name, when := range map[string]time.Time{"cycle-history.jsonl.123.tmp": old, "cycle-history.jsonl.456.tmp": time.Now(), "other.789.tmp": old} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, when, when)
	}
	if err := WriteWith(path, 0o644, func(f *os.File) error {
		if m, _ := filepath.Glob(filepath.Join(dir, "cycle-history.jsonl.*.tmp")); len(m) != 3 {
			t.Errorf("the temporary file is not named <file>.<digits>.tmp: %v", m)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := "cycle-history.jsonl cycle-history.jsonl.456.tmp other.789.tmp"; strings.Join(left, " ") != want {
		t.Errorf("left %v, want %s", left, want)
	}
}

// AppendLine makes the file and its directory, then adds each line after
// what is there; lines appended side by side come out whole.
func TestAppendLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "log")
	for _, l := range []string{"1 a", "2 b"} {
		if err := AppendLine(path, l); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() { done <- AppendLine(path, strings.Repeat("x", 1000)) }()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "1 a" || lines[1] != "2 b" {
		t.Fatalf("the file holds %d lines, first %q", len(lines), lines[:2])
	}
	for _, l := range lines[2:] {
		if l != strings.Repeat("x", 1000) {
			t.Fatalf("a line appended side by side came out as %d bytes", len(l))
		}
	}
}

// OwnDirs makes each directory on its way, and goes through no link nor
// file: what would be written under a link stays out of where it leads.
func TestOwnDirs(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	dir, err := OwnDirs(base, 0o755, "a", "b")
	if err != nil || dir != filepath.Join(base, "a", "b") {
		t.Fatalf("made %q, %v", dir, err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(base, "l")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	var nd *NotDirError
	if _, err := OwnDirs(base, 0o755, "l", "c"); !errors.As(err, &nd) || nd.Path != filepath.Join(base, "l") {
		t.Errorf("through a link: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("made where the link leads: %v", entries)
	}
	if err := os.WriteFile(filepath.Join(base, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OwnDirs(base, 0o755, "f"); !errors.As(err, &nd) {
		t.Errorf("a file on the way: %v", err)
	}
}
