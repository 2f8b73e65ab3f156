package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", ".*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
